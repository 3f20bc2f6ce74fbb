import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { SearchCondition, SearchRequest } from '../../../src/domain/records/resource-store.ts';
import { searchSql } from '../../../src/domain/records/search.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

// Every search parameter must be servable by an index (issue 3 point 4). With sequential scans
// priced out, PostgreSQL still picks one when no index applies, so a Seq Scan in any plan below
// means a parameter that would scan a whole table at 1M resources per site.
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function scans(node: PlanNode, into: string[] = []): string[] {
  if (node['Relation Name']) into.push(`${node['Node Type']} on ${node['Relation Name']}`);
  for (const child of node.Plans ?? []) scans(child, into);
  return into;
}

const patientId = '00000000-0000-4000-8000-000000000001';
const cases: [string, SearchRequest['type'], SearchCondition[]][] = [
  ['no parameters', 'Patient', []],
  ['_id', 'Patient', [{ kind: 'id', ids: [patientId] }]],
  ['identifier system|value', 'Patient', [{ kind: 'token', param: 'identifier', values: [{ system: 'urn:mrn', code: 'A1' }] }]],
  ['identifier system|', 'Patient', [{ kind: 'token', param: 'identifier', values: [{ system: 'urn:mrn' }] }]],
  ['gender', 'Patient', [{ kind: 'token', param: 'gender', values: [{ code: 'female' }, { code: 'male' }] }]],
  ['name', 'Patient', [{ kind: 'name', values: ['smith'] }]],
  ['family', 'Patient', [{ kind: 'name-part', part: 'family', values: ['smith'] }]],
  ['given', 'Patient', [{ kind: 'name-part', part: 'given', values: ['anne', 'marie'] }]],
  ['birthdate eq', 'Patient', [{ kind: 'birthdate', values: [{ prefix: 'eq', start: '1980-01-01', end: '1980-12-31' }] }]],
  ['birthdate lt', 'Patient', [{ kind: 'birthdate', values: [{ prefix: 'lt', start: '1980-01-01', end: '1980-01-01' }] }]],
  ['_lastUpdated ge', 'Patient', [{ kind: 'last-updated', values: [{ prefix: 'ge', start: new Date('2026-01-01'), end: new Date('2026-01-02') }] }]],
  ['patient', 'Observation', [{ kind: 'patient', ids: [patientId] }]],
  ['code', 'Observation', [{ kind: 'token', param: 'code', values: [{ system: 'http://loinc.org', code: '718-7' }] }]],
  ['clinical-status', 'Condition', [{ kind: 'token', param: 'clinical-status', values: [{ code: 'active' }] }]],
  ['type', 'DocumentReference', [{ kind: 'token', param: 'type', values: [{ code: '34133-9' }] }]],
  ...(['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const).map((prefix): [string, SearchRequest['type'], SearchCondition[]] => [
    `date ${prefix}`,
    'Observation',
    [{ kind: 'clinical-date', values: [{ prefix, start: new Date('2026-01-01'), end: new Date('2026-01-02') }] }],
  ]),
];

test('every search parameter, sort and paging position is served by an index', async () => {
  const site = await createTestSite(db.database);
  await db.database.transaction(async (tx) => {
    await tx.query('SET LOCAL enable_seqscan = off');
    for (const [name, type, conditions] of cases) {
      const sorts: SearchRequest['sort'][] = [[], [{ key: '_lastUpdated', descending: false }], [{ key: '_lastUpdated', descending: true }]];
      for (const sort of sorts) {
        const request: SearchRequest = {
          type,
          conditions,
          sort,
          count: 20,
          total: 'accurate',
          after: { seq: '100', lastUpdated: '2026-01-01T00:00:00.000Z', asOf: '2026-02-01T00:00:00.000Z' },
        };
        const sql = searchSql(site, request);
        for (const query of [sql.page, sql.count]) {
          const { rows } = await tx.query(`EXPLAIN (FORMAT JSON) ${query.text}`, query.values);
          const plan = (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan;
          const found = scans(plan);
          assert.ok(found.length > 0, name);
          for (const scan of found) assert.doesNotMatch(scan, /^Seq Scan/, `${name} (${JSON.stringify(sort)}): ${found.join(', ')}`);
        }
      }
    }
  });
});
