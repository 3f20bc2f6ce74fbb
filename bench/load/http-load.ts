import autocannon from 'autocannon';
import { percentile } from '../lib/stats.ts';

/**
 * HTTP load through autocannon: `connections` keep-alive connections, each sending its next
 * request when the previous answer arrives (no pipelining), for `seconds`. Latencies are
 * collected per 2xx response so that p95 can be given (autocannon's summary skips it).
 */
export interface HttpLoad {
  baseUrl: string;
  connections: number;
  seconds: number;
  method: 'GET' | 'POST' | 'PUT';
  headers: Record<string, string>;
  /** Called for every request: a fresh path (and body) so that each request asks for something else. */
  next: () => { path: string; body?: string; headers?: Record<string, string> };
  /** Only bounded loads: at most this many requests in all. */
  maxRequests?: number;
}

export interface HttpLoadResult {
  requestsPerSecond: number;
  p50: number;
  p95: number;
  p99: number;
  ok: number;
  /** Non-2xx answers and connection errors: any makes the figure suspect, so the report shows them. */
  failed: number;
  statusCodes: Record<string, number>;
}

export async function runHttpLoad(load: HttpLoad): Promise<HttpLoadResult> {
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const options: autocannon.Options = {
    url: load.baseUrl,
    connections: load.connections,
    duration: load.seconds,
    ...(load.maxRequests ? { amount: load.maxRequests } : {}),
    timeout: 30,
    headers: load.headers,
    method: load.method,
    requests: [
      {
        method: load.method,
        setupRequest: (request) => {
          const next = load.next();
          return { ...request, path: next.path, ...(next.body !== undefined ? { body: next.body } : {}), ...(next.headers ? { headers: { ...request.headers, ...next.headers } } : {}) };
        },
      },
    ],
  };
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
  const elapsed = result.duration > 0 ? result.duration : load.seconds;
  return {
    requestsPerSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    ok: latencies.length,
    failed: result.errors + result.timeouts + result.non2xx,
    statusCodes,
  };
}
