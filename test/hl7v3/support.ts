import { fixturePath, readFixture } from '../support/fixtures.ts';
import { attribute, childNamed, childrenNamed, descend, textOf } from '../../src/hl7v3/xml/element.ts';
import { parseXml } from '../../src/hl7v3/xml/parse.ts';

/** The IHE PIX feed samples (HL7 v3, and their HL7 v2 equivalents under v2/) in test/fixtures. */
export const v3FixtureDir = fixturePath('hl7v3/ipf');

export function v3Fixture(name: string): Buffer {
  return readFixture(`hl7v3/ipf/${name}`);
}

/** A minimal PRPA_IN201301UV02 with the given patient content. */
export function minimalAdd(patientContent: string, person = '<name><given>A</given><family>B</family></name>'): string {
  return `<PRPA_IN201301UV02 xmlns="urn:hl7-org:v3" ITSVersion="XML_1.0">
  <id root="1.2.3.4" extension="m1"/><interactionId root="2.16.840.1.113883.1.6" extension="PRPA_IN201301UV02"/><processingCode code="P"/>
  <controlActProcess classCode="CACT" moodCode="EVN"><subject typeCode="SUBJ"><registrationEvent classCode="REG" moodCode="EVN">
  <subject1 typeCode="SBJ"><patient classCode="PAT">${patientContent}<patientPerson>${person}</patientPerson></patient></subject1>
  </registrationEvent></subject></controlActProcess></PRPA_IN201301UV02>`;
}

export interface ReadAck {
  typeCode: string | undefined;
  target: { root: string; extension?: string } | undefined;
  senderIds: string[];
  receiverIds: string[];
  details: { typeCode: string; code: string; codeSystem: string; text: string; location?: string }[];
}

/** Reads an MCCI_IN000002UV01 back with the same safe parser. */
export function readAck(xml: string): ReadAck {
  const root = parseXml(Buffer.from(xml));
  if (root.name !== 'MCCI_IN000002UV01') throw new Error(`not an acknowledgement: ${xml.slice(0, 200)}`);
  const acknowledgement = childNamed(root, 'acknowledgement');
  const targetId = descend(acknowledgement, 'targetMessage', 'id');
  const ids = (device: string) => childrenNamed(descend(root, device, 'device'), 'id').map((id) => attribute(id, 'root') ?? attribute(id, 'nullFlavor') ?? '');
  return {
    typeCode: attribute(childNamed(acknowledgement, 'typeCode'), 'code'),
    target: targetId
      ? { root: attribute(targetId, 'root')!, ...(attribute(targetId, 'extension') ? { extension: attribute(targetId, 'extension')! } : {}) }
      : undefined,
    senderIds: ids('sender'),
    receiverIds: ids('receiver'),
    details: childrenNamed(acknowledgement, 'acknowledgementDetail').map((detail) => {
      const location = textOf(childNamed(detail, 'location'));
      return {
        typeCode: attribute(detail, 'typeCode') ?? '',
        code: attribute(childNamed(detail, 'code'), 'code') ?? '',
        codeSystem: attribute(childNamed(detail, 'code'), 'codeSystem') ?? '',
        text: textOf(childNamed(detail, 'text')) ?? '',
        ...(location ? { location } : {}),
      };
    }),
  };
}
