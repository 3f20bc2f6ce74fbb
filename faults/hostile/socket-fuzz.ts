import { connect } from 'node:net';
import { http, type HttpAnswer } from '../clients/http.ts';
import { ackCode, MllpClient } from '../clients/mllp-client.ts';
import type { GatewayProcess } from '../harness/gateway-process.ts';
import type { ProvisionedSite } from '../harness/provision.ts';
import { check, type ScenarioReport } from '../harness/scenario.ts';
import { dicomPduSeeds, fhirBodySeeds, fhirBundleSeeds, fhirSearchSeeds, hl7v2Seeds, hl7v3Seeds, mppsSeeds } from './corpus.ts';
import { mutate, Random } from './mutate.ts';

/** Signs of internals leaking into an answer (DESIGN.md: no stack traces in responses). */
const leak = /\n\s+at [\w$.<>]+ \(|node_modules\/|\/work\/|\.ts:\d+:\d+/;

interface SurfaceFuzzResult {
  sent: number;
  answered: number;
  serverErrors: string[];
  leaks: string[];
  noAnswer: string[];
  slowestMs: number;
}

/** Puts the site's client identity in MSH-3/MSH-4, so that mutated messages pass authorization and reach the parser. */
function asSender(message: Buffer, site: ProvisionedSite): Buffer {
  const text = message.toString('latin1').replace(/^\ufeff|^\u00ef\u00bb\u00bf/, '');
  const fieldSeparator = text[3] ?? '|';
  const fields = text.split(fieldSeparator);
  if (!text.startsWith('MSH') || fields.length < 5) return message;
  fields[2] = site.mllp.sendingApplication;
  fields[3] = site.mllp.sendingFacility;
  return Buffer.from(fields.join(fieldSeparator), 'latin1');
}

async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

async function fuzzHttp(port: number, count: number, random: Random, make: (random: Random) => { method: string; path: string; headers: Record<string, string>; body?: Buffer }): Promise<SurfaceFuzzResult> {
  const result: SurfaceFuzzResult = { sent: 0, answered: 0, serverErrors: [], leaks: [], noAnswer: [], slowestMs: 0 };
  const requests = Array.from({ length: count }, () => make(random));
  await pool(requests, 8, async (request) => {
    result.sent++;
    const t0 = Date.now();
    let answer: HttpAnswer;
    try {
      answer = await http({ port, ...request, timeoutMs: 15_000 });
    } catch (error) {
      result.noAnswer.push((error as Error).message);
      return;
    }
    result.slowestMs = Math.max(result.slowestMs, Date.now() - t0);
    result.answered++;
    if (answer.status >= 500 && answer.status !== 503) result.serverErrors.push(`${answer.status} ${request.method} ${request.path.slice(0, 80)}: ${answer.body.slice(0, 160)}`);
    if (leak.test(answer.body)) result.leaks.push(`${answer.status}: ${answer.body.slice(0, 200)}`);
  });
  return result;
}

async function fuzzMllp(port: number, count: number, random: Random, site: ProvisionedSite): Promise<SurfaceFuzzResult> {
  const result: SurfaceFuzzResult = { sent: 0, answered: 0, serverErrors: [], leaks: [], noAnswer: [], slowestMs: 0 };
  const seeds = hl7v2Seeds().map((s) => asSender(s, site));
  // Framing bytes are removed from the payload so that one frame is one message (framing has its own fuzz target).
  const messages = Array.from({ length: count }, () => Buffer.from(mutate(random, seeds, ['|', '^', '~', '\\', '&', '\r', '\\X00\\']).filter((b) => b !== 0x0b && b !== 0x1c)));
  const lanes = Array.from({ length: 4 }, (_, lane) => messages.filter((_, i) => i % 4 === lane));
  await Promise.all(lanes.map(async (lane) => {
    let client: MllpClient | undefined;
    for (const message of lane) {
      result.sent++;
      try {
        client ??= await MllpClient.connect(port);
        const t0 = Date.now();
        const ack = await client.send(message, 15_000);
        result.slowestMs = Math.max(result.slowestMs, Date.now() - t0);
        result.answered++;
        const code = ackCode(ack);
        if (!code || !['AA', 'AE', 'AR'].includes(code)) result.serverErrors.push(`answer without a valid MSA-1: ${ack.slice(0, 120)}`);
        if (leak.test(ack)) result.leaks.push(ack.slice(0, 200));
      } catch (error) {
        result.noAnswer.push((error as Error).message);
        client?.close();
        client = undefined;
      }
    }
    client?.close();
  }));
  return result;
}

/** Raw association byte streams, mutated; the listener must answer or close, and stay up. */
async function fuzzDicom(port: number, count: number, random: Random, calledAe: string): Promise<SurfaceFuzzResult> {
  const result: SurfaceFuzzResult = { sent: 0, answered: 0, serverErrors: [], leaks: [], noAnswer: [], slowestMs: 0 };
  const seeds = dicomPduSeeds(calledAe);
  const streams = Array.from({ length: count }, () => mutate(random, seeds, ['\x01\x00\x00\x00\x00\x44', '\x04\x00', '\xff\xff\xff\xff'], 64 * 1024));
  await pool(streams, 4, async (bytes) => {
    result.sent++;
    const t0 = Date.now();
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      let answered = false;
      const timer = setTimeout(() => {
        socket.destroy();
        resolve('the connection was still open after 40 s');
      }, 40_000);
      socket.on('data', () => (answered = true));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(answered ? 'answered' : 'closed');
      });
      socket.on('connect', () => socket.end(bytes));
    });
    result.slowestMs = Math.max(result.slowestMs, Date.now() - t0);
    if (outcome.startsWith('the connection')) result.noAnswer.push(outcome);
    else result.answered++;
  });
  return result;
}

export async function fuzzOverSockets(report: ScenarioReport, gateway: GatewayProcess, site: ProvisionedSite, scale: number, seed: number): Promise<void> {
  const random = new Random(seed);
  const n = (full: number) => Math.max(20, Math.round(full * scale));
  const key = site.apiKey;
  const results: [string, SurfaceFuzzResult][] = [];
  const types = ['Patient', 'Condition', 'AllergyIntolerance', 'Observation', 'Procedure', 'DocumentReference'];
  const tasks: Promise<void>[] = [];
  const add = (label: string, work: Promise<SurfaceFuzzResult>) => tasks.push(work.then((r) => void results.push([label, r])));
  if (gateway.listening.has('mllp')) add('MLLP: mutated HL7 v2 messages', fuzzMllp(gateway.ports.mllp, n(2000), random, site));
  if (gateway.listening.has('hl7')) {
    const v2 = hl7v2Seeds();
    const v3 = hl7v3Seeds();
    add('HTTP POST /v2/ingest: mutated HL7 v2', fuzzHttp(gateway.ports.hl7, n(1000), random, (r) => ({ method: 'POST', path: '/v2/ingest', headers: { 'content-type': 'text/plain', 'x-api-key': key }, body: mutate(r, v2, ['|', '^', '\r']) })));
    add('HTTP POST /v3/ingest: mutated HL7 v3 XML', fuzzHttp(gateway.ports.hl7, n(1000), random, (r) => ({ method: 'POST', path: '/v3/ingest', headers: { 'content-type': 'application/xml', 'x-api-key': key }, body: mutate(r, v3, ['<', '>', '&', '<!DOCTYPE x>', '&#0;']) })));
  }
  if (gateway.listening.has('fhir')) {
    const bodies = fhirBodySeeds();
    const queries = fhirSearchSeeds();
    add('HTTP POST /fhir/{type}: mutated FHIR JSON', fuzzHttp(gateway.ports.fhir, n(1000), random, (r) => ({ method: 'POST', path: `/fhir/${r.pick(types)}`, headers: { 'content-type': 'application/fhir+json', 'x-api-key': key }, body: mutate(r, bodies, ['{', '}', '[', '"', ':', ',', 'null', '1e999']) })));
    const bundles = fhirBundleSeeds();
    add('HTTP POST /fhir: mutated Bundles (transaction, batch)', fuzzHttp(gateway.ports.fhir, n(500), random, (r) => ({ method: 'POST', path: '/fhir', headers: { 'content-type': 'application/fhir+json', 'x-api-key': key }, body: mutate(r, bundles, ['{', '}', '[', ']', '"', ':', ',', 'null', 'urn:uuid:', '"request":{}']) })));
    add('HTTP GET /fhir/{type}?…: mutated search parameters', fuzzHttp(gateway.ports.fhir, n(1000), random, (r) => {
      const query = mutate(r, queries, ['&', '=', ',', '|', '%', '%00', '%zz', '_count=', 'eq']).toString('latin1').replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
      return { method: 'GET', path: `/fhir/${r.pick([...types, 'DiagnosticReport'])}?${query}`, headers: { 'x-api-key': key } };
    }));
  }
  if (gateway.listening.has('mpps')) {
    const bodies = mppsSeeds();
    add('HTTP POST /ingest (MPPS): mutated JSON', fuzzHttp(gateway.ports.mpps, n(1000), random, (r) => ({ method: 'POST', path: '/ingest', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: mutate(r, bodies, ['{', '}', '"', 'null', 'IN PROGRESS', 'COMPLETED']) })));
  }
  if (gateway.listening.has('dicom')) add('DICOM: mutated association byte streams', fuzzDicom(gateway.ports.dicom, n(300), random, site.aeTitle));
  await Promise.all(tasks);
  for (const [label, r] of results.sort()) {
    check(
      report,
      `${label}: every input answered, no 5xx, no internals leaked`,
      r.answered === r.sent && r.serverErrors.length === 0 && r.leaks.length === 0,
      `${r.sent} sent, ${r.answered} answered, slowest ${r.slowestMs} ms; ${r.serverErrors.length} server errors${r.serverErrors.length ? ` (${r.serverErrors.slice(0, 2).join(' | ')})` : ''}; ${r.leaks.length} leaks${r.leaks.length ? ` (${r.leaks[0]})` : ''}; ${r.noAnswer.length} without answer${r.noAnswer.length ? ` (${[...new Set(r.noAnswer)].slice(0, 2).join(' | ')})` : ''}`,
    );
    report.tallies.push({ item: `over the socket: ${label}`, sent: r.sent, acknowledged: r.answered, found: r.answered, lost: r.sent - r.answered, duplicated: 0 });
  }
}
