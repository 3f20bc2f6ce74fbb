// Measures the query plans of FHIR search on a large site (not part of the test run):
//   CG_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//     node_modules/.bin/node test/domain/records/measure-search-plans.ts [patients]
// Fills one site with N patients and N observations (default 300,000 each) and a second site
// with a tenth of that, then prints the plan and the execution time of every search shape.
// Rows are written with SQL in bulk (the store's per-resource path would take minutes); the
// index rows are those the store writes.
import type { SearchCondition, SearchRequest } from '../../../src/domain/records/resource-store.ts';
import { searchSql } from '../../../src/domain/records/search.ts';
import type { Database } from '../../../src/storage/database.ts';
import { createTestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

const size = Number(process.argv[2] ?? 300_000);
const db = await createTestDatabase();
try {
  const big = await createTestSite(db.database);
  const small = await createTestSite(db.database);
  const started = Date.now();
  await fill(db.database, big.siteId, size);
  await fill(db.database, small.siteId, Math.round(size / 10));
  // Steady state: autovacuum would have set the visibility map and statistics by now.
  await db.database.query('VACUUM ANALYZE');
  console.log(`filled ${size} patients + ${size} observations (and a tenth in a second site) in ${Date.now() - started} ms`);

  const { rows } = await db.database.query<{ id: string }>(
    `SELECT id FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient' ORDER BY seq OFFSET 1000 LIMIT 1`,
    [big.siteId],
  );
  const patientId = rows[0]!.id;
  const cases: [string, SearchRequest['type'], SearchCondition[], SearchRequest['sort']][] = [
    ['Patient (no parameters)', 'Patient', [], []],
    ['Patient -_lastUpdated', 'Patient', [], [{ key: '_lastUpdated', descending: true }]],
    ['Patient _id', 'Patient', [{ kind: 'id', ids: [patientId] }], []],
    ['Patient identifier=urn:mrn|MRN-4242', 'Patient', [{ kind: 'token', param: 'identifier', values: [{ system: 'urn:mrn', code: 'MRN-4242' }] }], []],
    ['Patient gender=female', 'Patient', [{ kind: 'token', param: 'gender', values: [{ code: 'female' }] }], []],
    ['Patient name=smit (common)', 'Patient', [{ kind: 'name', values: ['smit'] }], []],
    ['Patient name=qzx (no match)', 'Patient', [{ kind: 'name', values: ['qzx'] }], []],
    ['Patient name=family-4242 (rare)', 'Patient', [{ kind: 'name', values: ['family-4242'] }], []],
    ['Patient family=smit (common)', 'Patient', [{ kind: 'name-part', part: 'family', values: ['smit'] }], []],
    ['Patient family=family-4242 (rare)', 'Patient', [{ kind: 'name-part', part: 'family', values: ['family-4242'] }], []],
    ['Patient given=given-42 (1 in 100)', 'Patient', [{ kind: 'name-part', part: 'given', values: ['given-42'] }], []],
    ['Patient birthdate=1980-05-17', 'Patient', [{ kind: 'birthdate', values: [{ prefix: 'eq', start: '1980-05-17', end: '1980-05-17' }] }], []],
    ['Patient birthdate=lt1931', 'Patient', [{ kind: 'birthdate', values: [{ prefix: 'lt', start: '1931-01-01', end: '1931-12-31' }] }], []],
    ['Observation patient', 'Observation', [{ kind: 'patient', ids: [patientId] }], []],
    ['Observation code (1 in 50)', 'Observation', [{ kind: 'token', param: 'code', values: [{ system: 'http://loinc.org', code: 'L-7' }] }], []],
    ['Observation patient + code', 'Observation', [{ kind: 'patient', ids: [patientId] }, { kind: 'token', param: 'code', values: [{ code: 'L-7' }] }], []],
    ['Observation _lastUpdated=ge(now-1h)', 'Observation', [{ kind: 'last-updated', values: [{ prefix: 'ge', start: new Date(Date.now() - 3_600_000), end: new Date() }] }], []],
    ['Observation date=ge(now-1d)', 'Observation', [{ kind: 'clinical-date', values: [{ prefix: 'ge', start: new Date(Date.now() - 86_400_000), end: new Date(Date.now() - 86_399_000) }] }], []],
    ['Observation date=(one day, 30 days ago)', 'Observation', [{ kind: 'clinical-date', values: [{ prefix: 'eq', start: new Date(Date.now() - 30 * 86_400_000), end: new Date(Date.now() - 29 * 86_400_000) }] }], []],
    ['Observation patient + date=ge(a year ago), -date', 'Observation', [{ kind: 'patient', ids: [patientId] }, { kind: 'clinical-date', values: [{ prefix: 'ge', start: new Date(Date.now() - 365 * 86_400_000), end: new Date(Date.now() - 364 * 86_400_000) }] }], [{ key: 'date', descending: true }]],
  ];
  for (const [name, type, conditions, sort] of cases) {
    for (const paged of [false, true]) {
      const request: SearchRequest = { type, conditions, sort, count: 20, total: 'accurate', ...(paged ? { after: { seq: '150000', lastUpdated: new Date().toISOString() } } : {}) };
      const sql = searchSql(big, request);
      for (const [label, query] of [['page', sql.page], ['total', sql.count]] as const) {
        if (paged && label === 'total') continue;
        const { rows: plan } = await db.database.query(`EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF) ${query.text}`, query.values);
        const lines = plan.map((row: Record<string, string>) => row['QUERY PLAN']!);
        const time = lines.find((line) => line.startsWith('Execution Time'));
        const scans = lines.filter((line) => /Scan/.test(line)).map((line) => line.trim().replace(/\s+\(.*\)$/, ''));
        console.log(`${name}${paged ? ' (later page)' : ''} [${label}]: ${time}\n    ${scans.join('\n    ')}`);
      }
    }
  }
} finally {
  await db.drop();
}

async function fill(database: Database, siteId: string, n: number): Promise<void> {
  // Patients: 1,000 family names (one in ten "Smith…"), birth dates over 90 years, two genders.
  await database.query(
    `INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, business_identifier, name_search, birth_date_start, birth_date_end)
     SELECT $1, 'Patient', gen_random_uuid(), 1, now() - (i || ' seconds')::interval,
            jsonb_build_object('resourceType', 'Patient', 'identifier', jsonb_build_array(jsonb_build_object('system', 'urn:mrn', 'value', 'MRN-' || i)),
              'name', jsonb_build_array(jsonb_build_object('family', CASE WHEN i % 10 = 0 THEN 'Smith' ELSE 'Family-' || (i % 100000) END, 'given', jsonb_build_array('Given-' || (i % 997))))),
            'MRN-' || i,
            CASE WHEN i % 10 = 0 THEN 'smith' ELSE 'family-' || (i % 100000) END || chr(31) || 'given-' || (i % 997),
            DATE '1930-01-01' + (i % 32850), DATE '1930-01-01' + (i % 32850)
       FROM generate_series(1, $2::int) AS i`,
    [siteId, n],
  );
  await database.query(
    `INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id)
     SELECT site_id, 'Patient', 'identifier', business_identifier, 'urn:mrn', id FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient'
     UNION ALL
     SELECT site_id, 'Patient', 'gender', CASE WHEN seq % 2 = 0 THEN 'female' ELSE 'male' END, 'http://hl7.org/fhir/administrative-gender', id
       FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient'`,
    [siteId],
  );
  // Observations: one per patient on average, 50 codes.
  await database.query(
    `WITH patients AS (SELECT id, row_number() OVER () AS k FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient')
     INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, patient_id, clinical_date_start, clinical_date_end)
     SELECT $1, 'Observation', gen_random_uuid(), 1, now() - (i || ' seconds')::interval,
            jsonb_build_object('resourceType', 'Observation', 'status', 'final', 'code', jsonb_build_object('coding', jsonb_build_array(jsonb_build_object('system', 'http://loinc.org', 'code', 'L-' || (i % 50))))),
            p.id, now() - (i || ' minutes')::interval, now() - (i || ' minutes')::interval + interval '1 second'
       FROM generate_series(1, $2::int) AS i JOIN patients p ON p.k = 1 + (i::bigint * 7919) % $2::int`,
    [siteId, n],
  );
  await database.query(
    `INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id)
     SELECT site_id, 'Observation', 'code', content->'code'->'coding'->0->>'code', 'http://loinc.org', id
       FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Observation'`,
    [siteId],
  );
}
