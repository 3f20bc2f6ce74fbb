/**
 * Who is acting, resolved at the edge from a credential (API key, MLLP client, called AE title,
 * session, or the operator's CLI). Domain functions take a SiteContext; they never take a site
 * id from a request body.
 */
export type Actor =
  | { kind: 'api-key'; keyId: string; userId: string }
  | { kind: 'integration-client'; clientId: string; remoteAddress: string }
  | { kind: 'dicom'; callingAeTitle: string; remoteAddress: string }
  | { kind: 'user'; userId: string }
  /** Someone not yet signed in (a sign-in attempt), known only by address. */
  | { kind: 'anonymous'; remoteAddress: string }
  | { kind: 'operator' }
  /** A service-administrator automation token on the admin JSON API. */
  | { kind: 'automation-token'; tokenId: string; prefix: string };

export interface SitePolicies {
  /** PUT /fhir/Patient/{id} with a body without id creates a patient. */
  patientPutCreates: boolean;
  /** Integration clients may list "*" as an allowed IP. */
  mllpAllowAnyIp: boolean;
}

export interface SiteContext {
  readonly siteId: string;
  readonly siteName: string;
  readonly aeTitle: string;
  readonly policies: SitePolicies;
  /**
   * IANA zone in which the site's senders write times without a UTC offset; null when none is
   * configured (such times are then read as UTC, with a warning). An integration client's own
   * zone overrides it for that client's messages.
   */
  readonly timeZone: string | null;
  readonly actor: Actor;
}

/** A short, log-safe description of the actor (never a credential). */
export function describeActor(actor: Actor): string {
  switch (actor.kind) {
    case 'api-key':
      return `api-key:${actor.keyId}`;
    case 'integration-client':
      return `integration-client:${actor.clientId}`;
    case 'dicom':
      return `dicom:${actor.callingAeTitle}@${actor.remoteAddress}`;
    case 'user':
      return `user:${actor.userId}`;
    case 'anonymous':
      return `anonymous@${actor.remoteAddress}`;
    case 'operator':
      return 'operator';
    case 'automation-token':
      return `automation-token:${actor.tokenId}/${actor.prefix}`;
  }
}
