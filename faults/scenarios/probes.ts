import { ackCode, MllpClient } from '../clients/mllp-client.ts';
import { http, type HttpAnswer } from '../clients/http.ts';
import { storescu } from '../clients/storescu.ts';
import { generateInstance } from '../samples/dicom-instances.ts';
import { admitMessage } from '../samples/hl7-messages.ts';
import type { GatewayProcess, SurfaceName } from '../harness/gateway-process.ts';
import type { ProvisionedSite } from '../harness/provision.ts';

/** One request per surface, used to see how each surface answers while a fault is injected. */
export interface ProbeAnswer {
  surface: SurfaceName;
  what: string;
  /** HTTP status, MSA-1 code or DIMSE status text; "no answer: ..." when none came. */
  answer: string;
  retryLater: boolean;
  permanent: boolean;
}

const httpProbes: { surface: SurfaceName; what: string; request(site: ProvisionedSite, n: string): { method: string; path: string; headers: Record<string, string>; body?: string } }[] = [
  {
    surface: 'fhir',
    what: 'POST /fhir/Patient',
    request: (site, n) => ({
      method: 'POST',
      path: '/fhir/Patient',
      headers: { 'content-type': 'application/fhir+json', 'x-api-key': site.apiKey },
      body: JSON.stringify({ resourceType: 'Patient', identifier: [{ system: 'urn:faults:probe', value: `P-${n}` }], name: [{ family: 'Probe' }] }),
    }),
  },
  {
    surface: 'hl7',
    what: 'POST /v2/ingest',
    request: (site, n) => ({ method: 'POST', path: '/v2/ingest', headers: { 'content-type': 'text/plain', 'x-api-key': site.apiKey }, body: admitMessage(site.mllp, `HP${n}`, `MRN-HP-${n}`) }),
  },
  {
    surface: 'mpps',
    what: 'POST /ingest',
    request: (site, n) => ({
      method: 'POST',
      path: '/ingest',
      headers: { 'content-type': 'application/json', 'x-api-key': site.apiKey },
      // The tag's digits as a number: a UID component with a leading zero is not a UID (PS3.5 9.1),
      // and the tags are base-36 times, whose digits sometimes begin with 0.
      body: JSON.stringify({ sop_instance_uid: `1.2.826.0.1.3680043.9.7433.${Date.now()}.${Number(n.replace(/\D/g, '')) || 1}`, study_uid: '1.2.826.0.1.3680043.9.7433.1', status: 'IN PROGRESS' }),
    }),
  },
  { surface: 'connectivity', what: 'GET /connectivity/dimse', request: (site) => ({ method: 'GET', path: '/connectivity/dimse', headers: { 'x-api-key': site.apiKey } }) },
];

function httpProbeAnswer(surface: SurfaceName, what: string, answer: HttpAnswer | Error): ProbeAnswer {
  if (answer instanceof Error) return { surface, what, answer: `no answer: ${answer.message}`, retryLater: false, permanent: false };
  return { surface, what, answer: `HTTP ${answer.status}`, retryLater: answer.status === 503 || answer.status === 429, permanent: answer.status >= 400 && answer.status !== 503 && answer.status !== 429 };
}

export async function probeEverySurface(gateway: GatewayProcess, site: ProvisionedSite, workDir: string, tag: string): Promise<ProbeAnswer[]> {
  const answers: Promise<ProbeAnswer>[] = [];
  for (const probe of httpProbes) {
    if (!gateway.listening.has(probe.surface)) continue;
    const request = probe.request(site, tag);
    answers.push(
      http({ port: gateway.ports[probe.surface], ...request, timeoutMs: 15_000 }).then(
        (a) => httpProbeAnswer(probe.surface, probe.what, a),
        (e: Error) => httpProbeAnswer(probe.surface, probe.what, e),
      ),
    );
  }
  if (gateway.listening.has('mllp')) {
    answers.push(
      (async (): Promise<ProbeAnswer> => {
        try {
          const client = await MllpClient.connect(gateway.ports.mllp);
          try {
            const ack = await client.send(admitMessage(site.mllp, `MP${tag}`, `MRN-MP-${tag}`), 15_000);
            const code = ackCode(ack) ?? '?';
            return { surface: 'mllp', what: 'ADT^A04 over MLLP', answer: `MSA-1 ${code}`, retryLater: code === 'AR', permanent: code === 'AE' };
          } finally {
            client.close();
          }
        } catch (error) {
          return { surface: 'mllp', what: 'ADT^A04 over MLLP', answer: `no answer: ${(error as Error).message}`, retryLater: false, permanent: false };
        }
      })(),
    );
  }
  if (gateway.listening.has('dicom')) {
    const instance = generateInstance(workDir, { patientId: `PROBE-${tag}` });
    answers.push(
      storescu({ port: gateway.ports.dicom, calledAe: site.aeTitle, files: [instance.path], timeoutSeconds: 15 }).then((result): ProbeAnswer => {
        const status = result.outcomes[0]?.status;
        if (status) return { surface: 'dicom', what: 'C-STORE', answer: status, retryLater: /resources|A7/i.test(status), permanent: !/^(Success|Warning)/i.test(status) && !/resources|A7/i.test(status) };
        if (result.rejection) return { surface: 'dicom', what: 'C-STORE', answer: `association ${result.rejection}`, retryLater: /transient/i.test(result.rejection), permanent: /permanent/i.test(result.rejection) };
        return { surface: 'dicom', what: 'C-STORE', answer: 'no answer', retryLater: false, permanent: false };
      }),
    );
  }
  return Promise.all(answers);
}

/** GET /readyz on every running HTTP origin: status code by surface. */
export async function readiness(gateway: GatewayProcess): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  for (const surface of ['fhir', 'hl7', 'mpps', 'connectivity', 'admin'] as SurfaceName[]) {
    if (!gateway.listening.has(surface)) continue;
    out[surface] = await http({ port: gateway.ports[surface], path: '/readyz', timeoutMs: 15_000 }).then(
      (a) => a.status,
      (e: Error) => `no answer: ${e.message}`,
    );
  }
  return out;
}
