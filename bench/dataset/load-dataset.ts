import pg from 'pg';
import { progress } from '../lib/log.ts';
import { genderSystem, identifierSystem, loinc, observationCodes, syllables } from './synthetic.ts';

/**
 * Bulk loader of the synthetic data set. It writes the rows the record store writes for a
 * create (src/domain/records/write.ts: the current row, the version row and the token rows of
 * migration 0100), but with INSERT … SELECT generate_series in large statements, because going
 * through the store one resource per transaction would take hours for 1.1 million resources.
 */

/** Bumped whenever what the loader writes changes, so a cached data set is rebuilt. */
const loaderVersion = 1;
const patientBatch = 50_000;
const observationBatch = 100_000;

export interface SiteLoad {
  siteId: string;
  patients: number;
  observationsPerPatient: number;
}

const text = (value: string) => `'${value.replace(/'/g, "''")}'`;
const sqlSyllables = `ARRAY[${syllables.map(text).join(',')}]::text[]`;
const codes = `ARRAY[${observationCodes.map((c) => text(c.code)).join(',')}]::text[]`;
const displays = `ARRAY[${observationCodes.map((c) => text(c.display)).join(',')}]::text[]`;
const units = `ARRAY[${observationCodes.map((c) => text(c.unit)).join(',')}]::text[]`;
const nowIso = `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const patientSql = `
WITH gen AS MATERIALIZED (
  SELECT md5('bench-patient|' || $1::text || '|' || i)::uuid AS id,
         'MRN' || lpad(i::text, 8, '0') AS mrn,
         initcap(s[1 + i % 20] || s[1 + (i / 20) % 20] || s[1 + (i / 400) % 20]) AS family,
         initcap(s[1 + (i / 7) % 20] || s[1 + (i / 3) % 20] || 'n') AS given,
         CASE WHEN i % 2 = 0 THEN 'female' ELSE 'male' END AS gender,
         date '1940-01-01' + ((i::bigint * 37) % 25000)::int AS birth,
         ${nowIso} AS updated
    FROM generate_series($2::int, $3::int) AS i, (SELECT ${sqlSyllables} AS s) AS syl
), doc AS MATERIALIZED (
  SELECT gen.*, jsonb_build_object(
           'resourceType', 'Patient', 'id', id::text,
           'meta', jsonb_build_object('versionId', '1', 'lastUpdated', updated),
           'identifier', jsonb_build_array(jsonb_build_object('system', ${text(identifierSystem)}, 'value', mrn)),
           'name', jsonb_build_array(jsonb_build_object('family', family, 'given', jsonb_build_array(given))),
           'gender', gender, 'birthDate', to_char(birth, 'YYYY-MM-DD')) AS content
    FROM gen
), current_rows AS (
  INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, patient_id,
                                 business_identifier, active, name_search, birth_date_start, birth_date_end)
  SELECT $1::uuid, 'Patient', id, 1, updated::timestamptz, content, NULL, mrn, true,
         lower(family) || chr(31) || lower(given), birth, birth
    FROM doc
), version_rows AS (
  INSERT INTO clinical_resource_version (site_id, resource_type, id, version_id, last_updated, content)
  SELECT $1::uuid, 'Patient', id, 1, updated::timestamptz, content FROM doc
)
INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id)
SELECT $1::uuid, 'Patient', 'identifier', mrn, ${text(identifierSystem)}, id FROM doc
UNION ALL
SELECT $1::uuid, 'Patient', 'gender', gender, ${text(genderSystem)}, id FROM doc`;

const observationSql = `
WITH gen AS MATERIALIZED (
  SELECT md5('bench-observation|' || $1::text || '|' || k)::uuid AS id,
         md5('bench-patient|' || $1::text || '|' || ((k - 1) / $4::int + 1))::uuid AS patient,
         1 + (k - 1) % $4::int AS n,
         k,
         (timestamp '2025-01-01' + (k % 100000) * interval '1 minute') AT TIME ZONE 'UTC' AS effective,
         ${nowIso} AS updated
    FROM generate_series($2::int, $3::int) AS k
), doc AS MATERIALIZED (
  SELECT gen.id, gen.patient, gen.updated, gen.effective, c.codes[1 + (n - 1) % 10] AS code, jsonb_build_object(
           'resourceType', 'Observation', 'id', id::text,
           'meta', jsonb_build_object('versionId', '1', 'lastUpdated', updated),
           'status', 'final',
           'code', jsonb_build_object('coding', jsonb_build_array(jsonb_build_object(
               'system', ${text(loinc)}, 'code', c.codes[1 + (n - 1) % 10], 'display', c.displays[1 + (n - 1) % 10]))),
           'subject', jsonb_build_object('reference', 'Patient/' || patient::text),
           'effectiveDateTime', to_char(effective AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           'valueQuantity', jsonb_build_object('value', round((k % 1000) / 10.0, 1), 'unit', c.units[1 + (n - 1) % 10],
               'system', 'http://unitsofmeasure.org', 'code', c.units[1 + (n - 1) % 10])) AS content
    FROM gen, (SELECT ${codes} AS codes, ${displays} AS displays, ${units} AS units) AS c
), current_rows AS (
  INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, patient_id,
                                 clinical_date_start, clinical_date_end)
  SELECT $1::uuid, 'Observation', id, 1, updated::timestamptz, content, patient, effective, effective + interval '1 second' FROM doc
), version_rows AS (
  INSERT INTO clinical_resource_version (site_id, resource_type, id, version_id, last_updated, content)
  SELECT $1::uuid, 'Observation', id, 1, updated::timestamptz, content FROM doc
)
INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id)
SELECT $1::uuid, 'Observation', 'code', code, ${text(loinc)}, id FROM doc`;

/** The bench's own schema: the dataset marker and baseline (b)'s table. Never the product's tables. */
export async function ensureBenchSchema(client: pg.ClientBase): Promise<void> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS bench;
    CREATE TABLE IF NOT EXISTS bench.dataset (site_id uuid PRIMARY KEY, description text NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now());
    CREATE TABLE IF NOT EXISTS bench.baseline_resource (id uuid PRIMARY KEY, content jsonb NOT NULL);
    CREATE TABLE IF NOT EXISTS bench.baseline_message (id uuid PRIMARY KEY, raw bytea NOT NULL);`);
}

/** Removes every clinical row of a bench site (bench sites only: used to reset scratch and write sites). */
export async function clearSite(client: pg.ClientBase, siteId: string): Promise<void> {
  await client.query('DELETE FROM clinical_resource_token WHERE site_id = $1', [siteId]);
  await client.query('DELETE FROM clinical_resource_version WHERE site_id = $1', [siteId]);
  await client.query('DELETE FROM clinical_resource WHERE site_id = $1', [siteId]);
  await client.query('DELETE FROM bench.dataset WHERE site_id = $1', [siteId]);
}

/** Loads each site unless the same data is already there (a cached data directory). */
export async function loadSites(connectionString: string, sites: SiteLoad[]): Promise<{ loaded: number; seconds: number }> {
  const client = new pg.Client({ connectionString, application_name: 'clinical-gateway-bench-loader' });
  await client.connect();
  const started = performance.now();
  let loaded = 0;
  try {
    await ensureBenchSchema(client);
    // Only this session's commits are asynchronous: a crash mid-load just means reloading.
    await client.query('SET synchronous_commit = off');
    for (const site of sites) {
      const description = `v${loaderVersion} patients=${site.patients} observations/patient=${site.observationsPerPatient}`;
      const marker = await client.query<{ description: string }>('SELECT description FROM bench.dataset WHERE site_id = $1', [site.siteId]);
      if (marker.rows[0]?.description === description) continue;
      await clearSite(client, site.siteId);
      for (let from = 1; from <= site.patients; from += patientBatch) {
        await client.query(patientSql, [site.siteId, from, Math.min(site.patients, from + patientBatch - 1)]);
      }
      const observations = site.patients * site.observationsPerPatient;
      for (let from = 1; from <= observations; from += observationBatch) {
        await client.query(observationSql, [site.siteId, from, Math.min(observations, from + observationBatch - 1), site.observationsPerPatient]);
        if (observations > observationBatch) progress(`  site ${site.siteId.slice(0, 8)}: ${Math.min(observations, from + observationBatch - 1)} of ${observations} observations`);
      }
      await client.query('INSERT INTO bench.dataset (site_id, description) VALUES ($1, $2)', [site.siteId, description]);
      loaded += site.patients + observations;
    }
    if (loaded > 0) {
      // Fresh statistics and visibility maps, as autovacuum would leave them on a settled system.
      await client.query('VACUUM (ANALYZE) clinical_resource, clinical_resource_version, clinical_resource_token');
    }
  } finally {
    await client.end();
  }
  return { loaded, seconds: (performance.now() - started) / 1000 };
}
