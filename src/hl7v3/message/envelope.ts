import type { AcknowledgementDetail, DeviceReference, InstanceIdentifier } from '../ack/acknowledgement.ts';
import { attribute, childNamed, childrenNamed, descend, hl7v3Namespace, type XmlElement } from '../xml/element.ts';

/**
 * The transmission wrapper of an HL7 v3 message (MCCI_MT000100UV01): who sent it to whom, its id
 * and its interaction. Read before anything else so that every answer, even an error, can be
 * addressed back to the sender and name the message it answers.
 */
export interface Envelope {
  /** The root element's local name, which names the interaction in the XML ITS. */
  rootName: string;
  id: InstanceIdentifier | undefined;
  /** interactionId/@extension, or the root element name when it is absent. */
  interactionId: string;
  creationTime: string | undefined;
  processingCode: string | undefined;
  sender: DeviceReference | undefined;
  /** The first receiver (the wrapper allows several; this service is one of them). */
  receiver: DeviceReference | undefined;
  /** Problems with the wrapper itself; each makes the message an application error. */
  problems: AcknowledgementDetail[];
}

/** True when the document is an HL7 v3 message at all: its root element is in urn:hl7-org:v3. */
export function isHl7v3Message(root: XmlElement): boolean {
  return root.namespace === hl7v3Namespace;
}

export function readEnvelope(root: XmlElement): Envelope {
  const problems: AcknowledgementDetail[] = [];
  const idElement = childNamed(root, 'id');
  const id = instanceIdentifier(idElement);
  if (!id) {
    problems.push({
      typeCode: 'E',
      code: idElement ? 'SYN109' : 'SYN105',
      text: 'the message has no id (an id with a root is required to acknowledge it and to recognise a re-sent copy)',
      location: idElement?.path ?? `${root.path}/id`,
    });
  }
  const interactionElement = childNamed(root, 'interactionId');
  const declared = attribute(interactionElement, 'extension');
  if (declared !== undefined && declared !== root.name) {
    problems.push({
      typeCode: 'E',
      code: 'SYN113',
      text: `interactionId ${declared} does not match the root element ${root.name}`,
      location: interactionElement!.path,
    });
  }
  // ProcessingID (2.16.840.1.113883.5.101): P production, D debugging, T training; the HL7 v2
  // path accepts the same three (MSH-11) and treats an absent one as production.
  const processingElement = childNamed(root, 'processingCode');
  const processingCode = attribute(processingElement, 'code');
  if (processingCode === undefined) {
    problems.push({ typeCode: 'W', code: 'SYN105', text: 'the message has no processingCode; processed as P (production)', location: processingElement?.path ?? `${root.path}/processingCode` });
  } else if (!['P', 'D', 'T'].includes(processingCode)) {
    problems.push({ typeCode: 'E', code: 'NS202', text: `processingCode "${processingCode}" is not P, D or T`, location: processingElement!.path });
  }
  return {
    rootName: root.name,
    id,
    interactionId: declared ?? root.name,
    creationTime: attribute(childNamed(root, 'creationTime'), 'value'),
    processingCode,
    sender: deviceOf(descend(root, 'sender', 'device')),
    receiver: deviceOf(descend(root, 'receiver', 'device')),
    problems,
  };
}

/** An II with a root (and optional extension); undefined for a null flavor or no root. */
export function instanceIdentifier(element: XmlElement | undefined): InstanceIdentifier | undefined {
  if (!element || attribute(element, 'nullFlavor') !== undefined) return undefined;
  const root = attribute(element, 'root');
  if (!root) return undefined;
  const extension = attribute(element, 'extension');
  return extension === undefined ? { root } : { root, extension };
}

function deviceOf(device: XmlElement | undefined): DeviceReference | undefined {
  if (!device) return undefined;
  const ids = childrenNamed(device, 'id').map(instanceIdentifier).filter((id) => id !== undefined);
  const organization = descend(device, 'asAgent', 'representedOrganization');
  const organizationIds = childrenNamed(organization, 'id').map(instanceIdentifier).filter((id) => id !== undefined);
  return { ids, organizationIds };
}

/** The sender as one stable string, for the message log's idempotency key. */
export function senderKey(sender: DeviceReference | undefined): string {
  const id = sender?.ids[0];
  if (!id) return '';
  return id.extension === undefined ? id.root : `${id.root}^${id.extension}`;
}

/** The message id as one stable string: root, or root^extension. */
export function messageIdKey(id: InstanceIdentifier): string {
  return id.extension === undefined ? id.root : `${id.root}^${id.extension}`;
}
