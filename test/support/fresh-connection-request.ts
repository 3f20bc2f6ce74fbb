import { request } from 'node:http';

export interface PlainAnswer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One HTTP exchange on a connection of its own (so each may land on any worker of a node). */
export function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<PlainAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false, timeout: 30_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body, headers: response.headers }));
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${url} did not answer`)));
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}
