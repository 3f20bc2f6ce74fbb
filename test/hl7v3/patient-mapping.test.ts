import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readEnvelope } from '../../src/hl7v3/message/envelope.ts';
import { readPatientCommand, type SupportedInteraction } from '../../src/hl7v3/message/interactions.ts';
import { birthDateOf } from '../../src/hl7v3/mapping/patient.ts';
import { parseXml } from '../../src/hl7v3/xml/parse.ts';
import { minimalAdd, v3Fixture } from './support.ts';

function command(xml: string | Buffer) {
  const root = parseXml(typeof xml === 'string' ? Buffer.from(xml) : xml);
  return readPatientCommand(root, root.name as SupportedInteraction);
}

test('the maximal add maps every field the v2 path maps', () => {
  const { command: cmd, problems } = command(v3Fixture('PIX_FEED_REG_Maximal_Request.xml'));
  assert.equal(cmd?.kind, 'upsert');
  assert.deepEqual(cmd!.patient, {
    resourceType: 'Patient',
    identifier: [
      { system: 'urn:oid:1.3.6.1.4.1.21367.2005.1.1', value: 'PIX10515W3' },
      { system: 'urn:oid:1.2.3.4.5.1000', value: 'PIX10515W4' },
      { value: 'PIX10515W5', assigner: { display: 'domain2' } },
    ],
    name: [
      { use: 'official', family: 'WASHINGTON', given: ['MARY', 'ROSE'], prefix: ['Dr.'], suffix: ['II'], text: 'Dr. MARY ROSE WASHINGTON II' },
      { family: 'DEAN', given: ['ANNE'], text: 'ANNE DEAN' },
    ],
    telecom: [
      { system: 'phone', value: '012-0001', use: 'home' },
      { system: 'phone', value: '012-0002', use: 'work' },
      { system: 'phone', value: '012-0003', use: 'mobile' },
      { system: 'fax', value: '012-0004', use: 'home' },
      { system: 'email', value: 'marywash@gmx.de' },
    ],
    address: [
      { line: ['100 JORIE BLVD 5'], city: 'CHICAGO', state: 'IL', postalCode: '60523', country: 'US', text: '100 JORIE BLVD 5, CHICAGO, IL 60523, US' },
      { line: ['1 SECOND ADDRESS'], city: 'CHICAGO', state: 'IL', postalCode: '60555', text: '1 SECOND ADDRESS, CHICAGO, IL 60555' },
    ],
    gender: 'female',
    birthDate: '1977-12-08',
    // <deceasedInd value="false"/>, as PID-30 "N".
    deceasedBoolean: false,
  });
  // The id without a root is kept, with a warning that says so.
  assert.deepEqual(
    problems.map((p) => [p.typeCode, p.code, p.location]),
    [['W', 'SYN101', '/PRPA_IN201301UV02/controlActProcess[1]/subject[1]/registrationEvent[1]/subject1[1]/patient[1]/id[3]']],
  );
});

test('the maximal revise: unknown gender from a null flavor, new family name and addresses', () => {
  const { command: cmd } = command(v3Fixture('PIX_FEED_REV_Maximal_Request.xml'));
  assert.equal(cmd?.kind, 'upsert');
  assert.equal(cmd!.interaction, 'PRPA_IN201302UV02');
  assert.equal(cmd!.patient.gender, 'unknown');
  assert.equal(cmd!.patient.name?.[0]?.family, 'WASHINGTON-UPDATE');
  assert.deepEqual(cmd!.patient.address?.map((a) => a.line), [['1 UPDATE ADDRESS'], ['100 JORIE BLVD']]);
  assert.equal(cmd!.patient.identifier?.[0]?.value, 'PIX10515W3');
});

test('the merge reads the surviving id and the prior (obsolete) id', () => {
  const { command: cmd, problems } = command(v3Fixture('PIX_FEED_MERGE_Maximal_Request.xml'));
  assert.deepEqual(problems, []);
  assert.equal(cmd?.kind, 'merge');
  assert.deepEqual(cmd!.patient.identifier, [{ system: 'urn:oid:1.2.3.4.5.1000', value: '120-01' }]);
  assert.deepEqual(cmd!.kind === 'merge' && cmd!.priorIdentifiers, [{ system: 'urn:oid:1.2.3.4.666', value: '120-02' }]);
});

test('a merge without a prior id is an error that names where it belongs', () => {
  const xml = v3Fixture('PIX_FEED_MERGE_Maximal_Request.xml').toString().replace(/<replacementOf[\s\S]*<\/replacementOf>/, '');
  const { problems } = command(xml);
  assert.deepEqual(problems.map((p) => [p.typeCode, p.code]), [['E', 'SYN105']]);
  assert.match(problems[0]!.location!, /registrationEvent\[1\]\/replacementOf$/);
});

test('a patient without any id with a root is an error (SYN105)', () => {
  const { problems } = command(minimalAdd('<id nullFlavor="NI"/><id extension="x"/>'));
  assert.deepEqual(problems.map((p) => [p.typeCode, p.code]), [['W', 'SYN101'], ['E', 'SYN105']]);
});

test('a message without a registration event patient is an error (SYN100)', () => {
  const xml = '<PRPA_IN201301UV02 xmlns="urn:hl7-org:v3"><id root="1.2" extension="3"/><controlActProcess/></PRPA_IN201301UV02>';
  const { command: cmd, problems } = command(xml);
  assert.equal(cmd, undefined);
  assert.deepEqual(problems.map((p) => [p.typeCode, p.code, p.location]), [['E', 'SYN100', '/PRPA_IN201301UV02/controlActProcess[1]/subject/registrationEvent/subject1/patient']]);
});

test('an unknown gender code and an invalid birth time are errors with locations', () => {
  const { problems } = command(
    minimalAdd('<id root="1.2.3" extension="p"/>', '<administrativeGenderCode code="X"/><birthTime value="19771332"/>'),
  );
  assert.deepEqual(problems.map((p) => [p.code, p.location?.replace(/.*\//, '')]), [['SYN103', 'administrativeGenderCode[1]'], ['SYN102', 'birthTime[1]']]);
});

test('an id with only a root is the identifier itself (urn:ietf:rfc:3986)', () => {
  const { command: cmd } = command(minimalAdd('<id root="2.16.840.1.113883.19.5.99999.1"/>'));
  assert.deepEqual(cmd!.patient.identifier, [{ system: 'urn:ietf:rfc:3986', value: 'urn:oid:2.16.840.1.113883.19.5.99999.1' }]);
});

test('UUID roots become urn:uuid systems; an OID root stays an OID', () => {
  const { command: cmd } = command(minimalAdd('<id root="A1B2C3D4-0000-4000-8000-00000000000A" extension="1"/><id root="1.2.3" extension="2"/>'));
  assert.deepEqual(cmd!.patient.identifier?.map((i) => i.system), ['urn:uuid:a1b2c3d4-0000-4000-8000-00000000000a', 'urn:oid:1.2.3']);
});

test('telecom schemes and uses; a pager; a name given only as text', () => {
  const { command: cmd } = command(
    minimalAdd(
      '<id root="1.2.3" extension="p"/>',
      '<name>John Q Public</name><telecom value="tel:+1-555-0100" use="PG"/><telecom value="https://example.org" use="WP"/><telecom value="mailto:a%40b.org" use="H"/>',
    ),
  );
  assert.deepEqual(cmd!.patient.name, [{ text: 'John Q Public' }]);
  assert.deepEqual(cmd!.patient.telecom, [
    { system: 'pager', value: '+1-555-0100' },
    { system: 'url', value: 'https://example.org', use: 'work' },
    { system: 'email', value: 'a@b.org', use: 'home' },
  ]);
});

test('birth times at every precision', () => {
  assert.equal(birthDateOf('1977'), '1977');
  assert.equal(birthDateOf('197712'), '1977-12');
  assert.equal(birthDateOf('19771208'), '1977-12-08');
  assert.equal(birthDateOf('197712081530+0100'), '1977-12-08');
  assert.equal(birthDateOf('20000229'), '2000-02-29');
  assert.equal(birthDateOf('19000229'), undefined);
  assert.equal(birthDateOf('1977-12-08'), undefined);
  assert.equal(birthDateOf('19771300'), undefined);
});

test('the envelope: ids, devices, and an interactionId that contradicts the root element', () => {
  const envelope = readEnvelope(parseXml(v3Fixture('PIX_FEED_REG_Maximal_Request.xml')));
  assert.deepEqual(envelope.id, { root: '21acf7be-007c-41e6-b176-d0969794983b', extension: '345' });
  assert.deepEqual(envelope.sender, { ids: [{ root: '1.2.840.114350.1.13.99998.8734' }], organizationIds: [{ root: '1.2.840.114350.1.13.99998' }] });
  assert.deepEqual(envelope.problems, []);

  const contradicting = readEnvelope(
    parseXml(Buffer.from('<PRPA_IN201301UV02 xmlns="urn:hl7-org:v3"><interactionId root="2.16.840.1.113883.1.6" extension="PRPA_IN201302UV02"/></PRPA_IN201301UV02>')),
  );
  assert.deepEqual(contradicting.problems.map((p) => [p.typeCode, p.code]), [['E', 'SYN105'], ['E', 'SYN113'], ['W', 'SYN105']]);

  const training = readEnvelope(parseXml(Buffer.from('<PRPA_IN201301UV02 xmlns="urn:hl7-org:v3"><id root="1.2"/><processingCode code="X"/></PRPA_IN201301UV02>')));
  assert.deepEqual(training.problems.map((p) => [p.typeCode, p.code, p.location]), [['E', 'NS202', '/PRPA_IN201301UV02/processingCode[1]']]);
});

test('an id root that is not an OID, UUID or RUID is a data type error', () => {
  const { problems } = command(minimalAdd('<id root="1.2.3" extension="ok"/><id root="not an oid" extension="x"/>'));
  assert.deepEqual(problems.map((p) => [p.typeCode, p.code, p.location?.replace(/.*\//, '')]), [['E', 'SYN102', 'id[2]']]);
  const merge = v3Fixture('PIX_FEED_MERGE_Maximal_Request.xml').toString().replace('root="1.2.3.4.666"', 'root="1..2"');
  assert.deepEqual(command(merge).problems.map((p) => [p.code, p.location?.replace(/.*\//, '')]), [['SYN102', 'id[1]']]);
});

test('a null-flavored message id, a patient without patientPerson, a prior id without root', () => {
  const nullId = readEnvelope(parseXml(Buffer.from('<PRPA_IN201301UV02 xmlns="urn:hl7-org:v3"><id nullFlavor="NI"/><processingCode code="P"/></PRPA_IN201301UV02>')));
  assert.deepEqual(nullId.problems.map((p) => [p.code, p.location]), [['SYN109', '/PRPA_IN201301UV02/id[1]']]);

  const noPerson = minimalAdd('<id root="1.2.3" extension="p"/>').replace(/<patientPerson>.*<\/patientPerson>/, '');
  assert.deepEqual(command(noPerson).problems.map((p) => [p.code, p.location?.replace(/.*\//, '')]), [['SYN100', 'patientPerson']]);

  const rootless = v3Fixture('PIX_FEED_MERGE_Maximal_Request.xml').toString().replace('root="1.2.3.4.666" ', '');
  assert.deepEqual(command(rootless).problems.map((p) => [p.typeCode, p.code]), [['E', 'SYN101']]);
});

test('deceasedTime and deceasedInd map as PID-29 and PID-30 do; a false indicator with a death time is refused', () => {
  const death = (content: string) => command(minimalAdd('<id root="1.2.3" extension="D1"/>', `<name><given>A</given><family>B</family></name>${content}`));
  assert.equal(death('<deceasedInd value="true"/><deceasedTime value="20241004120000-0500"/>').command!.patient.deceasedDateTime, '2024-10-04T12:00:00-05:00');
  assert.equal(death('<deceasedInd value="true"/><deceasedTime nullFlavor="UNK"/>').command!.patient.deceasedBoolean, true);
  assert.deepEqual(
    death('<deceasedInd value="false"/><deceasedTime value="20241004"/>').problems.map((p) => [p.typeCode, p.code]),
    [['E', 'SYN113']],
  );
  assert.deepEqual(death('<deceasedTime value="2024-10-04"/>').problems.map((p) => [p.typeCode, p.code]), [['E', 'SYN102']]);
});
