import type { Measurement, Target } from './model.ts';

/**
 * The targets of issue 8 point 3, computed from the measurements of the same run. Ratios are of
 * medians. A target whose figures are missing is not met, and says why.
 */
function find(measurements: Measurement[], scenario: string, system: string, concurrency: number): Measurement | undefined {
  return measurements.find((m) => m.scenario === scenario && m.system === system && m.concurrency === concurrency && m.throughput.runs.length > 0);
}

function ratioTarget(
  name: string,
  value: number | undefined,
  baseline: number | undefined,
  minimum: number,
  baselineName: string,
  unit: string,
): Target {
  const known = value !== undefined && baseline !== undefined && Number.isFinite(value) && Number.isFinite(baseline) && baseline > 0;
  const ratio = known ? value / baseline : null;
  return {
    name,
    value: value !== undefined && Number.isFinite(value) ? round(value) : null,
    baseline: baseline !== undefined && Number.isFinite(baseline) ? round(baseline) : null,
    ratio: ratio === null ? null : Math.round(ratio * 1000) / 1000,
    target: `>= ${minimum}x ${baselineName}`,
    met: ratio !== null && ratio >= minimum,
    unit,
    ...(known ? {} : { explanation: 'not measured in this run (see skipped)' }),
  };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

export function computeTargets(measurements: Measurement[], options: { fullDataset: boolean }): Target[] {
  const targets: Target[] = [];
  const median = (m: Measurement | undefined) => m?.throughput.median;
  targets.push(
    ratioTarget('FHIR read by id, 16 connections', median(find(measurements, 'fhir.read', 'gateway', 16)), median(find(measurements, 'fhir.read', 'baseline-a', 16)), 0.6, 'baseline (a): Fastify + node-postgres primary-key select', 'req/s'),
    ratioTarget('FHIR create, 16 connections', median(find(measurements, 'fhir.create', 'gateway', 16)), median(find(measurements, 'fhir.create', 'baseline-b', 16)), 0.5, 'baseline (b): Fastify + node-postgres single-row insert', 'req/s'),
  );
  for (const connections of [1, 16]) {
    targets.push(
      ratioTarget(
        `FHIR 100-entry transaction Bundle, resources/s, ${connections} connection(s)`,
        median(find(measurements, 'fhir.transaction-100', 'gateway', connections)),
        median(find(measurements, 'fhir.transaction-100', 'one-by-one', connections)),
        1.0,
        'the same resources posted one by one',
        'resources/s',
      ),
    );
  }
  targets.push(
    ratioTarget(
      `FHIR $export of the main site's Observations${options.fullDataset ? '' : ' (quick data set)'}`,
      median(find(measurements, 'fhir.export', 'gateway', 1)),
      median(find(measurements, 'fhir.export', 'copy-baseline', 1)),
      0.3,
      'COPY (SELECT content ...) TO STDOUT of the same rows into a file',
      'resources/s',
    ),
  );
  for (const search of ['search-identifier', 'search-name', 'search-patient-code']) {
    const m = find(measurements, `fhir.${search}`, 'gateway', 1);
    const p95 = m?.latencyMs?.p95.median;
    const known = p95 !== undefined && Number.isFinite(p95);
    targets.push({
      name: `FHIR ${search.replace('search-', 'search by ')} p95, 1 connection${options.fullDataset ? '' : ' (quick data set: not the target data set)'}`,
      value: known ? Math.round(p95 * 100) / 100 : null,
      baseline: null,
      ratio: null,
      target: '< 20 ms on 100,000 patients / 1,000,000 observations',
      met: known && p95 < 20 && options.fullDataset,
      unit: 'ms',
      ...(known ? {} : { explanation: 'not measured in this run (see skipped)' }),
    });
  }
  targets.push(ratioTarget('MLLP ADT^A01, 8 connections, ACK after commit', median(find(measurements, 'mllp.adt', 'gateway', 8)), median(find(measurements, 'mllp.adt', 'mllp-baseline', 8)), 0.5, 'frame-and-ACK MLLP server', 'msg/s'));
  for (const associations of [1, 4]) {
    targets.push(
      ratioTarget(`DICOM small set instances/s, ${associations} association(s), fsync before success`, median(find(measurements, 'dicom.small', 'gateway', associations)), median(find(measurements, 'dicom.small', 'orthanc', associations)), 1.0, 'Orthanc', 'inst/s'),
    );
    const large = (system: string) => find(measurements, 'dicom.large', system, associations)?.mbPerSecond?.median;
    targets.push(ratioTarget(`DICOM large set MB/s, ${associations} association(s), fsync before success`, large('gateway'), large('orthanc'), 1.0, 'Orthanc', 'MB/s'));
  }
  const gatewayFigures = measurements.filter((m) => m.system === 'gateway' && m.throughput.runs.length > 0);
  const peaks = (list: Measurement[]) => list.reduce<{ value: number; scenario: string } | undefined>((worst, m) => {
    const peak = m.peakRssMb.max;
    return Number.isFinite(peak) && (!worst || peak > worst.value) ? { value: peak, scenario: `${m.scenario} c=${m.concurrency}` } : worst;
  }, undefined);
  for (const [name, list] of [
    ['Peak resident memory of the service, every scenario', gatewayFigures],
    ['Peak resident memory of the service during one ~300 MB C-STORE', gatewayFigures.filter((m) => m.scenario === 'dicom.huge')],
  ] as const) {
    const worst = peaks([...list]);
    targets.push({
      name,
      value: worst ? round(worst.value) : null,
      baseline: null,
      ratio: null,
      target: '< 250 MB',
      met: worst !== undefined && worst.value < 250,
      unit: 'MB',
      explanation: worst ? `highest in ${worst.scenario} (max over runs)` : 'not measured in this run (see skipped)',
    });
  }
  return targets;
}
