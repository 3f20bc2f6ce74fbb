import { http } from '../clients/http.ts';
import { ackCode, MllpClient } from '../clients/mllp-client.ts';
import { admitMessage } from '../samples/hl7-messages.ts';
import type { GatewayProcess, SurfaceName } from '../harness/gateway-process.ts';
import type { ProvisionedSite } from '../harness/provision.ts';
import { check, type ScenarioReport } from '../harness/scenario.ts';

/**
 * Bounded sizes and safe parsing (issue 9 point 5): oversized bodies, deeply nested JSON and
 * XML, and XML entity tricks (external entities, billion laughs) are refused with a 4xx in the
 * surface's format, and nothing of the machine leaks into the answer.
 */
const deepJson = (depth: number) => `{"resourceType":"Patient","extension":${'['.repeat(depth)}${']'.repeat(depth)}}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const deepXml = (depth: number) => `<PRPA_IN201301UV02 xmlns="urn:hl7-org:v3">${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}</PRPA_IN201301UV02>`;
const xxe = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><PRPA_IN201301UV02 xmlns="urn:hl7-org:v3"><id root="1.2.3" extension="&x;"/></PRPA_IN201301UV02>`;
const laughs = `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">]><PRPA_IN201301UV02 xmlns="urn:hl7-org:v3"><id root="1.2" extension="&h;"/></PRPA_IN201301UV02>`;

interface LimitCase {
  surface: SurfaceName;
  name: string;
  path: string;
  contentType: string;
  body: () => string | Buffer;
  expect: (status: number) => boolean;
  expected: string;
}

const refused = (status: number) => status >= 400 && status < 500;

const cases: LimitCase[] = [
  // The FHIR write routes accept resources up to 4 MiB (attachments); 5 MiB is over the limit.
  { surface: 'fhir', name: 'FHIR body of 5 MiB', path: '/fhir/Patient', contentType: 'application/fhir+json', body: () => JSON.stringify({ resourceType: 'Patient', name: [{ text: 'x'.repeat(5 * 1024 * 1024) }] }), expect: (s) => s === 413, expected: '413' },
  { surface: 'fhir', name: 'FHIR JSON nested 100,000 arrays deep', path: '/fhir/Patient', contentType: 'application/fhir+json', body: () => deepJson(100_000), expect: refused, expected: '4xx' },
  { surface: 'fhir', name: 'FHIR JSON nested 50,000 objects deep', path: '/fhir/Patient', contentType: 'application/fhir+json', body: () => deepObject(50_000), expect: refused, expected: '4xx' },
  { surface: 'hl7', name: 'HL7 v2 body of 2 MiB', path: '/v2/ingest', contentType: 'text/plain', body: () => `MSH|^~\\&|A|B|C|D|20260101||ADT^A04|BIG1|P|2.5.1\rPID|1||X||${'x'.repeat(2 * 1024 * 1024)}\r`, expect: (s) => s === 413, expected: '413' },
  { surface: 'hl7', name: 'HL7 v3 body of 2 MiB', path: '/v3/ingest', contentType: 'application/xml', body: () => `<PRPA_IN201301UV02 xmlns="urn:hl7-org:v3"><!--${'x'.repeat(2 * 1024 * 1024)}--></PRPA_IN201301UV02>`, expect: (s) => s === 413, expected: '413' },
  { surface: 'hl7', name: 'HL7 v3 XML nested 100,000 elements deep', path: '/v3/ingest', contentType: 'application/xml', body: () => deepXml(100_000), expect: refused, expected: '4xx' },
  { surface: 'hl7', name: 'HL7 v3 external entity (XXE, file:///etc/passwd)', path: '/v3/ingest', contentType: 'application/xml', body: () => xxe, expect: refused, expected: '4xx' },
  { surface: 'hl7', name: 'HL7 v3 billion laughs', path: '/v3/ingest', contentType: 'application/xml', body: () => laughs, expect: refused, expected: '4xx' },
  { surface: 'mpps', name: 'MPPS body of 128 KiB', path: '/ingest', contentType: 'application/json', body: () => JSON.stringify({ sop_instance_uid: '1.2.3', study_uid: '1.2.4', status: 'IN PROGRESS', modality: 'x'.repeat(128 * 1024) }), expect: (s) => s === 413, expected: '413' },
  // Under the MPPS body limit (64 KiB), so that the depth itself is what is tested.
  { surface: 'mpps', name: 'MPPS JSON nested 10,000 objects deep', path: '/ingest', contentType: 'application/json', body: () => deepObject(10_000), expect: refused, expected: '4xx' },
];

export async function checkLimits(report: ScenarioReport, gateway: GatewayProcess, site: ProvisionedSite): Promise<void> {
  for (const c of cases) {
    if (!gateway.listening.has(c.surface)) continue;
    const answer = await http({ port: gateway.ports[c.surface], method: 'POST', path: c.path, headers: { 'content-type': c.contentType, 'x-api-key': site.apiKey }, body: c.body(), timeoutMs: 30_000 }).catch((e: Error) => e);
    if (answer instanceof Error) {
      check(report, `${c.name}: refused (${c.expected})`, false, `no answer: ${answer.message}`);
      continue;
    }
    const leaked = /root:x:0:0|\n\s+at [\w$.<>]+ \(|node_modules\//.test(answer.body);
    check(report, `${c.name}: refused (${c.expected}), nothing leaked`, c.expect(answer.status) && !leaked, `HTTP ${answer.status}${leaked ? ', the answer leaks internals or file content' : ''}: ${answer.body.slice(0, 160)}`);
  }
  if (gateway.listening.has('mllp')) {
    // HL7 v2.5.1 Appendix C: an oversized frame is answered (AE) and the connection stays usable.
    let detail = '';
    let ok = false;
    try {
      const client = await MllpClient.connect(gateway.ports.mllp);
      const big = admitMessage(site.mllp, `BIG${Date.now()}`, 'MRN-BIG').replace('Faultline', 'F'.repeat(2 * 1024 * 1024));
      const first = ackCode(await client.send(big, 30_000));
      const second = ackCode(await client.send(admitMessage(site.mllp, `AFTERBIG${Date.now()}`, 'MRN-AFTER-BIG'), 30_000));
      client.close();
      ok = (first === 'AE' || first === 'AR') && second === 'AA';
      detail = `oversized frame: ${first}; next message on the same connection: ${second}`;
    } catch (error) {
      detail = `failed: ${(error as Error).message}`;
    }
    check(report, 'MLLP frame of 2 MiB: refused with an acknowledgement, connection still usable', ok, detail);
  }
}
