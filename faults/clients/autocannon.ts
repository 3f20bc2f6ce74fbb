import { createRequire } from 'node:module';

/** The slice of autocannon (a well-kept HTTP load generator) used here; it ships no types. */
export interface AutocannonRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  timeout?: number;
  pipelining?: number;
  requests?: AutocannonRequest[];
  headers?: Record<string, string>;
}

export interface AutocannonResult {
  requests: { total: number; average: number };
  latency: { p50: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}

const autocannon = createRequire(import.meta.url)('autocannon') as (options: AutocannonOptions, done: (error: Error | null, result: AutocannonResult) => void) => unknown;

export function runAutocannon(options: AutocannonOptions): Promise<AutocannonResult> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}
