/** The MSH fields the gateway acts on (HL7 v2.5.1 section 2.14.9). */
import { fieldText, firstSegment, valueOf, type Hl7Message, type Segment } from './message.ts';

export interface MessageHeader {
  /** MSH-3 and MSH-4 as ER7 text (HD: namespace^universal id^type). */
  sendingApplication: string;
  sendingFacility: string;
  receivingApplication: string;
  receivingFacility: string;
  /** MSH-9.1, MSH-9.2, MSH-9.3 */
  messageCode: string;
  triggerEvent: string;
  messageStructure: string;
  /** MSH-10 */
  controlId: string;
  /** MSH-11 as ER7 text (processing id ^ processing mode) */
  processingId: string;
  /** MSH-12.1 */
  version: string;
  /** MSH-12 as ER7 text, copied into the ACK */
  versionField: string;
}

export function readHeader(message: Hl7Message): MessageHeader {
  const msh = firstSegment(message, 'MSH') as Segment;
  const d = message.delimiters;
  return {
    sendingApplication: fieldText(msh, 3, d),
    sendingFacility: fieldText(msh, 4, d),
    receivingApplication: fieldText(msh, 5, d),
    receivingFacility: fieldText(msh, 6, d),
    messageCode: valueOf(msh, 9, 1).trim(),
    triggerEvent: valueOf(msh, 9, 2).trim() || eventTypeCode(message),
    messageStructure: valueOf(msh, 9, 3).trim(),
    controlId: valueOf(msh, 10).trim(),
    processingId: fieldText(msh, 11, d),
    version: valueOf(msh, 12).trim(),
    versionField: fieldText(msh, 12, d),
  };
}

/**
 * EVN-1, where HL7 v2.1 put the trigger event (its MSH-9 held the message type alone); kept in later
 * versions "for backward compatibility only", and still what older ADT feeds rely on.
 */
function eventTypeCode(message: Hl7Message): string {
  const evn = firstSegment(message, 'EVN');
  return evn ? valueOf(evn, 1).trim() : '';
}

/** "ADT^A01" for logs and answers. */
export function messageTypeText(header: MessageHeader): string {
  return header.triggerEvent ? `${header.messageCode}^${header.triggerEvent}` : header.messageCode;
}
