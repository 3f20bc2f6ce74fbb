import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type pg from 'pg';
import { progress } from '../lib/log.ts';
import { benchHost } from '../lib/ports.ts';
import { monitored, type Watched } from '../lib/process-monitor.ts';
import { percentile } from '../lib/stats.ts';
import { Series } from '../report/series.ts';
import type { BenchContext } from './context.ts';

const run = promisify(execFile);

/**
 * C-FIND at study level (issue 23 point 6): one site indexed with `studies` studies (100,000 in a
 * full run, each of one series and two instances), queried by findscu one query after another
 * with the keys a PACS sends (PatientID exact, PatientName prefix, a StudyDate range,
 * ModalitiesInStudy, AccessionNumber), each answered with the study count keys. The baseline, in
 * the same run, is echoscu's C-ECHO: the same process start and association, without the query,
 * so the ratio is what the query itself costs.
 */
export interface DicomQueryTargets {
  /**
   * The service's process tree with its PostgreSQL measured apart: the embedded server is a child
   * of the service, and its backends' shared buffers, counted once per backend in summed RSS, were
   * once reported as the service's memory (923 MB over 100,000 studies, C-ECHO alone 794 MB).
   */
  gateway: Watched;
  dicomPort: number;
  pool: pg.Pool;
  site: { id: string; aeTitle: string };
}

const modalities = ['CT', 'MR', 'US', 'CR', 'NM', 'PT', 'DX', 'MG'];

export async function runDicomQueryScenario(context: BenchContext, targets: DicomQueryTargets): Promise<void> {
  const studies = context.options.dicom.queryStudies;
  const queries = context.options.quick ? 30 : 200;
  progress(`dicom.find: indexing ${studies} studies`);
  await fill(targets.pool, targets.site.id, studies);
  const keysFor = (i: number): string[] => {
    const n = 1 + ((i * 7919) % studies);
    switch (i % 5) {
      case 0: return [`PatientID=QP${n}`];
      case 1: return [`PatientName=QNAME${n % 1000}^*`];
      case 2: return [`StudyDate=2024${String(1 + (n % 12)).padStart(2, '0')}01-2024${String(1 + (n % 12)).padStart(2, '0')}07`, `ModalitiesInStudy=${modalities[n % modalities.length]}`];
      case 3: return [`AccessionNumber=QA${n}`];
      default: return [`PatientName=qname${n % 1000}^given*`, 'StudyDate=20240101-'];
    }
  };
  const common = ['-S', '-aec', targets.site.aeTitle, '-aet', 'BENCHFIND', '-k', 'QueryRetrieveLevel=STUDY', '-k', 'StudyInstanceUID', '-k', 'PatientID', '-k', 'NumberOfStudyRelatedInstances'];
  for (let attempt = 0; attempt < context.options.runs; attempt++) {
    for (const system of ['gateway', 'c-echo'] as const) {
      const series = context.series.find((s) => s.scenario === 'dicom.find' && s.system === system) ?? new Series('dicom.find', system, 1, 'queries/s');
      if (!context.series.includes(series)) {
        series.note(`${studies} studies in the site; findscu, one query at a time; C-ECHO: the same process and association without a query`);
        context.series.push(series);
      }
      const latencies: number[] = [];
      let failed = 0;
      const started = performance.now();
      const { usage } = await monitored(targets.gateway, async () => {
        for (let i = 0; i < queries; i++) {
          const begin = performance.now();
          const args = system === 'gateway' ? [...common, ...keysFor(i).flatMap((key) => ['-k', key]), benchHost, String(targets.dicomPort)] : ['-aec', targets.site.aeTitle, benchHost, String(targets.dicomPort)];
          await run(system === 'gateway' ? 'findscu' : 'echoscu', args, { env: { ...process.env, TCP_NODELAY: '1' } }).catch(() => failed++);
          latencies.push(performance.now() - begin);
        }
      });
      const seconds = (performance.now() - started) / 1000;
      series.add({ throughput: queries / seconds, p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), failed }, usage);
    }
  }
}

/** One site's studies, series and instances written directly (the index as intake leaves it). */
async function fill(pool: pg.Pool, siteId: string, studies: number): Promise<void> {
  const batch = 20_000;
  for (let from = 1; from <= studies; from += batch) {
    const to = Math.min(from + batch - 1, studies);
    await pool.query(
      `INSERT INTO imaging_study (site_id, study_instance_uid, dicom_patient_id, patient_name, study_date, study_time, accession_number, study_description, modalities)
       SELECT $1, '2.25.9' || n, 'QP' || n, 'QNAME' || (n % 1000) || '^GIVEN' || n, date '2024-01-01' + (n % 365), time '08:00' + (n % 600) * interval '1 minute',
              'QA' || n, 'Bench study ' || n, ARRAY[($4::text[])[1 + n % 8]]
       FROM generate_series($2::int, $3::int) AS n`,
      [siteId, from, to, modalities],
    );
    await pool.query(
      `INSERT INTO imaging_series (site_id, series_instance_uid, study_instance_uid, modality, series_number)
       SELECT $1, '2.25.8' || n, '2.25.9' || n, ($4::text[])[1 + n % 8], 1 FROM generate_series($2::int, $3::int) AS n`,
      [siteId, from, to, modalities],
    );
    await pool.query(
      `INSERT INTO imaging_instance (site_id, sop_instance_uid, id, study_instance_uid, series_instance_uid, sop_class_uid, transfer_syntax_uid, instance_number, storage_path, size_bytes, sha256)
       SELECT $1, '2.25.7' || n || k, gen_random_uuid(), '2.25.9' || n, '2.25.8' || n, '1.2.840.10008.5.1.4.1.1.2', '1.2.840.10008.1.2.1', k,
              'dicom/none/' || n || '-' || k || '.dcm', 0, repeat('0', 64)
       FROM generate_series($2::int, $3::int) AS n, generate_series(1, 2) AS k`,
      [siteId, from, to],
    );
  }
  await pool.query('ANALYZE imaging_study, imaging_series, imaging_instance');
}
