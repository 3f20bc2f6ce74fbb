// Results stored before results were identified by their observation carry the identifier
// <MSH-4>|<order>|<OBR-1>|<OBX-1>|<OBX-4>. Migration 0510 gives them the new identity, so that
// the next report of their order updates them: none is duplicated, none takes another's code.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Observation, Patient } from '@medplum/fhirtypes';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { ingestHl7v2 } from '../../../src/hl7v2/intake/intake.ts';
import { loadMigrations } from '../../../src/storage/migrations.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { message } from '../support.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const legacySystem = 'urn:clinical-gateway:hl7v2:result';
const send = (site: SiteContext, raw: Buffer) => ingestHl7v2(db.database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http', remoteAddress: '127.0.0.1' } });

/** An Observation as the service stored an OBX before (src/hl7v2/mapping/observation.ts then). */
function legacyResult(patientId: string, key: string, code: { code: string; display: string; system?: string }, value: string): Observation {
  return {
    resourceType: 'Observation',
    status: 'preliminary',
    category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory', display: 'Laboratory' }] }],
    code: { coding: [code], text: code.display },
    identifier: [{ system: legacySystem, value: key }],
    valueString: value,
    effectiveDateTime: '2024-03-07T08:00:00Z',
    subject: { reference: `Patient/${patientId}` },
  };
}

async function runMigration0510(): Promise<void> {
  const migration = (await loadMigrations()).find((one) => one.version === 510)!;
  await db.database.transaction((tx) => tx.query(migration.sql));
}

test('results stored under position keys are found by their observation after migration 0510', async () => {
  const site = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  const patient = await store.create<Patient>({ resourceType: 'Patient', identifier: [{ value: 'UPG1' }] });
  const loinc = 'http://loinc.org';
  const dapto = await store.create(legacyResult(patient.id!, 'HOSP|FL-600^LAB|1|1|1', { system: loinc, code: '35789-1', display: 'Daptomycin' }, 'S'));
  const vanco = await store.create(legacyResult(patient.id!, 'HOSP|FL-600^LAB|1|2|1', { system: loinc, code: '19000-9', display: 'Vancomycin' }, 'S'));
  // A local coding system (OBX-3.3 "L") had no URI, so the stored code has none.
  const comment = await store.create(legacyResult(patient.id!, 'HOSP|FL-600^LAB|1|3|', { code: 'MICROCMT', display: 'Micro comment' }, 'see note'));

  await runMigration0510();
  const migrated = (await store.read<Observation>('Observation', dapto.id!))!;
  assert.deepEqual(migrated.identifier, [{ system: 'urn:clinical-gateway:hl7v2:order-result', value: 'HOSP|FL-600^LAB|http://loinc.org^35789-1|1' }]);
  assert.equal(migrated.meta?.versionId, '2');
  assert.equal(migrated.valueString, 'S');
  assert.deepEqual((await store.vread<Observation>('Observation', dapto.id!, '2'))!.identifier, migrated.identifier);
  assert.deepEqual(await store.findByIdentifier('Observation', { system: legacySystem, value: 'HOSP|FL-600^LAB|1|1|1' }), []);
  // Run again, it changes nothing.
  await runMigration0510();
  assert.equal((await store.read<Observation>('Observation', dapto.id!))!.meta?.versionId, '2');

  // The final report puts Ciprofloxacin first.
  const outcome = await send(
    site,
    message(
      [
        'PID|1||UPG1^^^H^MR',
        'OBR|1|PL-600|FL-600^LAB|29576-6^Susceptibility^LN|||20240307080000+0000',
        'OBX|1|ST|7016-3^Ciprofloxacin^LN|1|R||||||F',
        'OBX|2|ST|35789-1^Daptomycin^LN|1|S||||||F',
        'OBX|3|ST|19000-9^Vancomycin^LN|1|R||||||C',
        'OBX|4|ST|MICROCMT^Micro comment^L||see note||||||F',
      ],
      { type: 'ORU^R01^ORU_R01' },
    ),
  );
  assert.equal(outcome.ackCode, 'AA');
  const results = (await store.listPatientCompartment(patient.id!)) as Observation[];
  assert.deepEqual(
    results.map((o) => [o.id, o.code.coding![0]!.code, o.valueString, o.status]),
    [
      [dapto.id, '35789-1', 'S', 'final'],
      [vanco.id, '19000-9', 'R', 'corrected'],
      [comment.id, 'MICROCMT', 'see note', 'final'],
      [results[3]!.id, '7016-3', 'R', 'final'],
    ],
  );
  // The local code's result took the identity with its coding system.
  assert.deepEqual(results[2]!.identifier, [{ system: 'urn:clinical-gateway:hl7v2:order-result', value: 'HOSP|FL-600^LAB|L^MICROCMT|' }]);
});
