import type { ContextResult } from '../upper-layer/pdu-encode.ts';
import type { ProposedContext, RoleSelection } from '../upper-layer/associate-rq.ts';
import {
  isStorageSopClass,
  mppsSopClass,
  plainTransferSyntaxes,
  queryRetrieveModel,
  queryTransferSyntaxes,
  storageTransferSyntaxes,
  transferSyntax,
  verificationSopClass,
  type QueryRetrieveOperation,
} from '../../storage/dicom/uids.ts';

/** What this service prefers to send C-GET sub-operations in (see negotiate). */
const sendingPreference = [transferSyntax.explicitLittle, transferSyntax.implicitLittle];

export type ServiceKind = 'verification' | 'storage' | 'mpps' | QueryRetrieveOperation;

/** An accepted presentation context: what its PDVs carry and how they are encoded. */
export interface AcceptedContext {
  id: number;
  abstractSyntax: string;
  transferSyntax: string;
  service: ServiceKind;
  /** The requestor took the SCP role for this storage SOP class (role selection): C-GET may send on it. */
  requestorIsScp: boolean;
}

export interface Negotiation {
  results: ContextResult[];
  accepted: Map<number, AcceptedContext>;
  /** The role selections answered: each storage SOP class the requestor proposed to receive. */
  roleSelections: RoleSelection[];
}

function serviceOf(abstractSyntax: string): ServiceKind | undefined {
  if (abstractSyntax === verificationSopClass) return 'verification';
  if (abstractSyntax === mppsSopClass) return 'mpps';
  if (isStorageSopClass(abstractSyntax)) return 'storage';
  return queryRetrieveModel(abstractSyntax)?.operation;
}

/**
 * PS3.8 9.3.3.2: one answer per proposed context. The first proposed transfer syntax the service
 * supports is chosen, in the requestor's order of preference, so the SCU never has to convert:
 * whatever it proposes first for a compressed image is what is stored.
 *
 * A storage context on which the requestor is only the SCP (it receives C-GET sub-operations and
 * never sends) is the other way round: this service sends on it, and chooses what it can send
 * most of. Explicit VR Little Endian, else Implicit, when proposed: every instance stored
 * uncompressed in little endian goes on either, converted if need be (src/storage/dicom/converted-dataset.ts), where a
 * compressed syntax carries only the instances stored in it. getscu proposes one context per SOP
 * class with its preferred syntax first (`+xs`: JPEG Lossless), which took every uncompressed
 * instance out of reach; dcmtk's own Q/R SCP likewise accepts by its preference, not the peer's.
 */
export function negotiate(proposed: ProposedContext[], proposedRoles: RoleSelection[] = []): Negotiation {
  // PS3.7 D.3.3.4: the requestor of a C-GET asks to be the SCP of the storage SOP classes it
  // wants to receive; the roles are accepted as proposed.
  const roleSelections = proposedRoles.filter((role) => isStorageSopClass(role.sopClassUid));
  const receivesAs = new Set(roleSelections.filter((role) => role.scpRole).map((role) => role.sopClassUid));
  const onlyReceives = new Set(roleSelections.filter((role) => role.scpRole && !role.scuRole).map((role) => role.sopClassUid));
  const results: ContextResult[] = [];
  const accepted = new Map<number, AcceptedContext>();
  for (const context of proposed) {
    const service = serviceOf(context.abstractSyntax);
    const fallback = context.transferSyntaxes[0] ?? '';
    // PS3.8 7.1.1.13: context ids are odd integers; a repeated id cannot be answered twice.
    if (context.id % 2 === 0 || accepted.has(context.id) || results.some((result) => result.id === context.id)) {
      continue;
    }
    if (!service) {
      results.push({ id: context.id, result: 3, transferSyntax: fallback });
      continue;
    }
    const supported = service === 'storage' ? storageTransferSyntaxes : service === 'verification' || service === 'mpps' ? plainTransferSyntaxes : queryTransferSyntaxes;
    const preferred = service === 'storage' && onlyReceives.has(context.abstractSyntax) ? sendingPreference.find((uid) => context.transferSyntaxes.includes(uid)) : undefined;
    const chosen = preferred ?? context.transferSyntaxes.find((uid) => supported.has(uid));
    if (!chosen) {
      results.push({ id: context.id, result: 4, transferSyntax: fallback });
      continue;
    }
    results.push({ id: context.id, result: 0, transferSyntax: chosen });
    const requestorIsScp = service === 'storage' && receivesAs.has(context.abstractSyntax);
    accepted.set(context.id, { id: context.id, abstractSyntax: context.abstractSyntax, transferSyntax: chosen, service, requestorIsScp });
  }
  return { results, accepted, roleSelections };
}
