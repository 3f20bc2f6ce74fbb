import { XMLBuilder } from 'fast-xml-parser';
import {
  acknowledgementDetailCodes,
  type AcknowledgementDetail,
  type AcknowledgementType,
  type DeviceReference,
  type InstanceIdentifier,
} from './acknowledgement.ts';

export interface McciAcknowledgement {
  /** This acknowledgement's own message id. */
  id: InstanceIdentifier;
  creationTime: Date;
  /** Copied from the inbound message (P production, D debugging, T training); P when unknown. */
  processingCode: string;
  /** The device that sent the acknowledgement: the inbound message's receiver. */
  sender: DeviceReference | undefined;
  /** The device the acknowledgement goes to: the inbound message's sender. */
  receiver: DeviceReference | undefined;
  typeCode: AcknowledgementType;
  /** The inbound message's id; absent only when the body could not be read at all. */
  targetMessage: InstanceIdentifier | undefined;
  details: AcknowledgementDetail[];
}

const interactionIdRoot = '2.16.840.1.113883.1.6';

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  textNodeName: '#text',
  format: true,
  indentBy: '  ',
  suppressEmptyNode: true,
  suppressBooleanAttributes: false,
});

/**
 * Renders MCCI_IN000002UV01, the HL7 v3 application acknowledgement that IHE ITI-44 (PIX/PIXv3
 * Patient Identity Feed, section 3.44.4.2.3) returns for PRPA_IN201301/2/4UV02. Element order
 * follows the MCCI_MT000200UV01 schema: wrapper attributes, receiver, sender, acknowledgement
 * (typeCode, targetMessage, acknowledgementDetail*).
 */
export function buildMcciAcknowledgement(ack: McciAcknowledgement): string {
  const document = {
    '?xml': { '@version': '1.0', '@encoding': 'UTF-8' },
    MCCI_IN000002UV01: {
      '@xmlns': 'urn:hl7-org:v3',
      '@ITSVersion': 'XML_1.0',
      id: ii(ack.id),
      creationTime: { '@value': formatTimestamp(ack.creationTime) },
      interactionId: { '@root': interactionIdRoot, '@extension': 'MCCI_IN000002UV01' },
      processingCode: { '@code': /^[PDT]$/.test(ack.processingCode) ? ack.processingCode : 'P' },
      processingModeCode: { '@code': 'T' },
      // An acknowledgement is never itself acknowledged.
      acceptAckCode: { '@code': 'NE' },
      receiver: { '@typeCode': 'RCV', device: device(ack.receiver) },
      sender: { '@typeCode': 'SND', device: device(ack.sender) },
      acknowledgement: {
        typeCode: { '@code': ack.typeCode },
        ...(ack.targetMessage ? { targetMessage: { id: ii(ack.targetMessage) } } : {}),
        ...(ack.details.length > 0 ? { acknowledgementDetail: ack.details.map(detail) } : {}),
      },
    },
  };
  return builder.build(document);
}

function detail(item: AcknowledgementDetail): object {
  return {
    '@typeCode': item.typeCode,
    code: {
      '@code': item.code,
      '@codeSystem': acknowledgementDetailCodes[item.code].system,
      '@displayName': acknowledgementDetailCodes[item.code].display,
    },
    text: xmlSafe(item.text),
    ...(item.location ? { location: xmlSafe(item.location) } : {}),
  };
}

function device(reference: DeviceReference | undefined): object {
  const ids = reference?.ids.length ? reference.ids.map(ii) : [{ '@nullFlavor': 'UNK' }];
  return {
    '@classCode': 'DEV',
    '@determinerCode': 'INSTANCE',
    id: ids,
    ...(reference?.organizationIds.length
      ? {
          asAgent: {
            '@classCode': 'AGNT',
            representedOrganization: {
              '@classCode': 'ORG',
              '@determinerCode': 'INSTANCE',
              id: reference.organizationIds.map(ii),
            },
          },
        }
      : {}),
  };
}

function ii(id: InstanceIdentifier): object {
  return { '@root': xmlSafe(id.root), ...(id.extension !== undefined ? { '@extension': xmlSafe(id.extension) } : {}) };
}

/** TS in the form YYYYMMDDHHMMSS+ZZZZ (HL7 v3 Data Types R1, TS literal), in UTC. */
export function formatTimestamp(date: Date): string {
  const iso = date.toISOString(); // 2026-11-22T06:01:02.345Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}+0000`;
}

/** Removes characters XML 1.0 cannot carry (section 2.2), so any text can go into the ack. */
function xmlSafe(value: string): string {
  return value.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '');
}
