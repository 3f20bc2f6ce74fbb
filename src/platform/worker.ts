import cluster from 'node:cluster';

/**
 * Which worker process of a node this is (1..CG_WORKERS), when `serve` runs several; undefined
 * in a single-process service and in the CLI. The supervisor gives each worker a number that a
 * replacement keeps, so a worker's own files (its DICOM temporary folder) are found again by the
 * process that takes its place, and never touched by the others.
 */
export function workerNumber(): number | undefined {
  if (!cluster.isWorker) return undefined;
  const number = Number(process.env.CG_WORKER_NUMBER);
  return Number.isInteger(number) && number > 0 ? number : undefined;
}
