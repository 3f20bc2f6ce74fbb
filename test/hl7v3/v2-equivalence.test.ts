import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ContactPoint, Patient } from '@medplum/fhirtypes';
import { firstSegment } from '../../src/hl7v2/er7/message.ts';
import { parseEr7 } from '../../src/hl7v2/er7/parse.ts';
import { ingestHl7v2 } from '../../src/hl7v2/intake/intake.ts';
import { mapPid } from '../../src/hl7v2/mapping/patient.ts';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { processHl7v3Message } from '../../src/hl7v3/intake/process-message.ts';
import { createTestDatabase } from '../support/database.ts';
import { createTestSite } from '../support/sites.ts';
import { readPatientCommand, type SupportedInteraction } from '../../src/hl7v3/message/interactions.ts';
import { parseXml } from '../../src/hl7v3/xml/parse.ts';
import { v3Fixture, v3FixtureDir } from './support.ts';

/**
 * The IHE PIX feed fixtures come in pairs: the same patient event as HL7 v3 XML and as HL7 v2
 * (translated by IPF). Both intake paths must make the same Patient. These tests compare the
 * two mappings field by field; where the v2 translation itself adds or reshapes data, the test
 * names the difference and asserts exactly it.
 */
function viaV2(name: string): Patient {
  const parsed = parseEr7(readFileSync(join(v3FixtureDir, 'v2', `${name}.hl7`)), { defaultCharset: 'UNICODE UTF-8', maxBytes: 1024 * 1024 });
  assert.ok(parsed.message);
  const { patient, problems } = mapPid(firstSegment(parsed.message, 'PID')!);
  assert.deepEqual(problems.filter((p) => p.severity === 'E'), []);
  return patient;
}

function viaV3(name: string): Patient {
  const root = parseXml(v3Fixture(`${name}.xml`));
  const { command, problems } = readPatientCommand(root, root.name as SupportedInteraction);
  assert.deepEqual(problems.filter((p) => p.typeCode === 'E'), []);
  return command!.patient;
}

const telecomKey = (c: ContactPoint) => `${c.system}|${c.value}|${c.use ?? ''}`;

function assertSameCore(v2: Patient, v3: Patient): void {
  assert.deepEqual(v3.identifier, v2.identifier, 'identifiers (system from the OID root / CX.4, value)');
  assert.deepEqual(v3.name?.[0], v2.name?.[0], 'the legal name, with its display text');
  assert.equal(v3.gender, v2.gender);
  assert.equal(v3.birthDate, v2.birthDate);
  assert.deepEqual(v3.address, v2.address, 'addresses, lines, display text');
}

for (const [name, interaction] of [
  ['PIX_FEED_REG_Maximal_Request', 'add (PRPA_IN201301UV02 / ADT^A01)'],
  ['PIX_FEED_REV_Maximal_Request', 'revise (PRPA_IN201302UV02 / ADT^A08)'],
] as const) {
  test(`${interaction}: v2 and v3 give the same patient`, () => {
    const v2 = viaV2(name);
    const v3 = viaV3(name);
    assertSameCore(v2, v3);

    // Telecom: the same numbers and addresses (order carries no meaning in FHIR). One known
    // difference: an e-mail sent in PID-13 (the home telecom field) is "home" in v2, while the v3
    // message gives the mailto: no use, so none is invented.
    const v2Telecom = v2.telecom!.map(telecomKey).sort();
    const v3Telecom = v3.telecom!.map(telecomKey).sort();
    assert.deepEqual(
      v3Telecom,
      v2Telecom.map((key) => (key === 'email|marywash@gmx.de|home' ? 'email|marywash@gmx.de|' : key)),
    );

    // Names after the legal one: the v3 message has one name "ANNE" + family "DEAN" qualified BR
    // (birth); IPF's v2 translation split it into two names (given-only L and family-only B). The
    // v3 path keeps the name as the message gives it.
    assert.deepEqual(v3.name?.slice(1), [{ family: 'DEAN', given: ['ANNE'], text: 'ANNE DEAN' }]);
    assert.deepEqual(
      v2.name?.slice(1).map((n) => [n.given, n.family]),
      [
        [['ANNE'], undefined],
        [undefined, 'DEAN'],
      ],
    );
  });
}

test('merge (PRPA_IN201304UV02 / ADT^A40): the same surviving patient identifier', () => {
  const v2 = viaV2('PIX_FEED_MERGE_Maximal_Request');
  const v3 = viaV3('PIX_FEED_MERGE_Maximal_Request');
  assert.deepEqual(v3.identifier, v2.identifier);
  // The v3 schema requires a name, and the sample carries the placeholder "Unknown" as text; the
  // merge applies only structured names, so the survivor's name is left alone on both paths
  // (the v2 PID-5 is empty). See ingest-route.test.ts for the stored result.
  assert.equal(v2.name, undefined);
  assert.deepEqual(v3.name, [{ text: 'Unknown' }]);
});

test('stored through both intakes, in order add, revise, merge: the same patients in two sites', async (t) => {
  const db = await createTestDatabase();
  t.after(() => db.drop());
  const v2Site = await createTestSite(db.database);
  const v3Site = await createTestSite(db.database);
  for (const name of ['PIX_FEED_REG_Maximal_Request', 'PIX_FEED_REV_Maximal_Request', 'PIX_FEED_MERGE_Maximal_Request']) {
    const v2 = await ingestHl7v2(db.database, {
      raw: readFileSync(join(v3FixtureDir, 'v2', `${name}.hl7`)),
      site: v2Site,
      defaultCharset: 'UNICODE UTF-8',
      origin: { transport: 'http' },
    });
    assert.equal(v2.ackCode, 'AA', JSON.stringify(v2.errors));
    const v3 = await processHl7v3Message(db.database, v3Site, v3Fixture(`${name}.xml`));
    assert.equal(v3.typeCode, 'AA', v3.ackXml);
  }
  const read = async (site: SiteContext, value: string) => {
    const patient = await resourceStore(db.database, site).findPatientByBusinessIdentifier(value);
    assert.ok(patient, `${value} is stored`);
    const { id: _id, meta: _meta, ...content } = patient;
    return content as Patient;
  };
  const v2Patient = await read(v2Site, 'PIX10515W3');
  const v3Patient = await read(v3Site, 'PIX10515W3');
  assertSameCore(v2Patient, v3Patient);
  assert.equal(v3Patient.name?.[0]?.family, 'WASHINGTON-UPDATE');
  assert.deepEqual(v3Patient.telecom!.map(telecomKey).sort(), v2Patient.telecom!.map(telecomKey).sort().map((k) => k.replace('email|marywash@gmx.de|home', 'email|marywash@gmx.de|')));
  // The merge's survivor: identical resources (the placeholder name is not applied).
  assert.deepEqual(await read(v3Site, '120-01'), await read(v2Site, '120-01'));
});
