/**
 * With CG_WORKERS > 1 each worker process has its own registry, and a scrape reaches whichever
 * worker the supervisor hands the connection to. That worker asks the supervisor, which gathers
 * every worker's registry through prom-client's AggregatorRegistry (over the cluster's IPC
 * channel) and answers the aggregate: counters and histograms summed over the workers, gauges
 * as each metric's aggregator says (default metrics carry their own). A single process answers
 * from its own registry.
 */
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type Registry } from 'prom-client';

const scrapeRequest = 'cg-metrics-scrape';
const scrapeAnswer = 'cg-metrics-scraped';
/** prom-client's own gathering gives up after 5 s; this waits a little longer for its answer. */
const scrapeTimeoutMs = 7_000;

interface ScrapeRequest {
  kind: typeof scrapeRequest;
  id: string;
}
interface ScrapeAnswer {
  kind: typeof scrapeAnswer;
  id: string;
  text?: string;
  error?: string;
}

/** In the supervisor: answers each worker's scrape request with the aggregate of all workers. */
export function answerClusterScrapes(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    const request = message as Partial<ScrapeRequest> | null;
    if (request?.kind !== scrapeRequest || typeof request.id !== 'string') return;
    const answer = (fields: Partial<ScrapeAnswer>) => {
      if (worker.isConnected()) worker.send({ kind: scrapeAnswer, id: request.id, ...fields });
    };
    aggregator.clusterMetrics().then(
      (text) => answer({ text }),
      (error: unknown) => answer({ error: error instanceof Error ? error.message : String(error) }),
    );
  });
}

/** In a worker: offers this process's registry to the supervisor's aggregation. */
export function offerToCluster(registry: Registry): void {
  if (!cluster.isWorker) return;
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs prom-client's listener that answers the supervisor's gathering.
  new AggregatorRegistry();
}

/** The exposition text of a scrape: every worker's, aggregated, or this process's alone. */
export async function scrapeText(registry: Registry): Promise<string> {
  if (!cluster.isWorker || !process.send) return registry.metrics();
  const id = randomUUID();
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error('the supervisor did not answer the scrape in time')), scrapeTimeoutMs);
    const onMessage = (message: unknown) => {
      const answer = message as Partial<ScrapeAnswer> | null;
      if (answer?.kind !== scrapeAnswer || answer.id !== id) return;
      if (typeof answer.text === 'string') finish(undefined, answer.text);
      else finish(new Error(`the supervisor could not gather the workers' metrics: ${answer.error ?? 'no answer'}`));
    };
    const finish = (error: Error | undefined, text?: string) => {
      clearTimeout(timer);
      process.off('message', onMessage);
      if (error) reject(error);
      else resolve(text!);
    };
    process.on('message', onMessage);
    process.send!({ kind: scrapeRequest, id } satisfies ScrapeRequest);
  });
}
