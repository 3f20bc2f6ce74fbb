import { mkdirSync } from 'node:fs';
import { ackCode, MllpClient } from '../clients/mllp-client.ts';
import { http } from '../clients/http.ts';
import { storescu } from '../clients/storescu.ts';
import { generateInstance, type GeneratedInstance } from '../samples/dicom-instances.ts';
import { admitMessage, type SenderIdentity } from '../samples/hl7-messages.ts';
import { sleep } from '../harness/timing.ts';
import { Ledger, type LedgerItem } from './ledger.ts';

/** Shared switch of a load phase: `producing` false means "only retry what is unacknowledged". */
export interface LoadControl {
  producing: boolean;
  stopped: boolean;
}

export interface Hl7Item {
  controlId: string;
  mrn: string;
  message: string;
}

export interface FhirItem {
  identifier: string;
  body: string;
}

export function hl7Ledger(sender: SenderIdentity, prefix: string): Ledger<Hl7Item> {
  return new Ledger((index) => {
    const controlId = `${prefix}${index}`;
    const mrn = `MRN-${prefix}-${index}`;
    return { key: controlId, data: { controlId, mrn, message: admitMessage(sender, controlId, mrn) } };
  });
}

export function dicomLedger(dir: string, prefix: string): Ledger<GeneratedInstance> {
  mkdirSync(dir, { recursive: true });
  return new Ledger((index) => {
    const instance = generateInstance(dir, { patientId: `DCM-${prefix}-${index}` });
    return { key: instance.sopInstanceUid, data: instance };
  });
}

export const fhirIdentifierSystem = 'urn:faults:patient';

export function fhirLedger(prefix: string): Ledger<FhirItem> {
  return new Ledger((index) => {
    const identifier = `FHIR-${prefix}-${index}`;
    const body = JSON.stringify({
      resourceType: 'Patient',
      identifier: [{ system: fhirIdentifierSystem, value: identifier }],
      name: [{ family: 'Writer', given: [`W${index}`], text: `W${index} Writer` }],
      gender: 'other',
      birthDate: '1980-02-29',
    });
    return { key: identifier, data: { identifier, body } };
  });
}

/** HL7 acknowledgement codes mapped to what the sender must do (HL7 v2.5.1 2.9.2, table 0008). */
function hl7Verdict(ack: string) {
  const code = ackCode(ack);
  if (code === 'AA' || code === 'CA') return 'ack' as const;
  if (code === 'AR' || code === 'CR') return 'retry-later' as const;
  return 'permanent' as const;
}

/** One MLLP sender: one connection at a time, one message in flight, reconnecting after failures. */
export async function runMllpSender(control: LoadControl, ledger: Ledger<Hl7Item>, port: number): Promise<void> {
  let client: MllpClient | undefined;
  while (!control.stopped) {
    const item = ledger.take(control.producing);
    if (!item) {
      if (!control.producing && ledger.pending.every((p) => !p.inFlight)) break;
      await sleep(50);
      continue;
    }
    try {
      if (!client || client.closed) client = await MllpClient.connect(port);
      const ack = await client.send(item.data.message);
      const verdict = hl7Verdict(ack);
      ledger.settle(item, { verdict, detail: ack.split('\r').find((s) => s.startsWith('MSA')) ?? ack.slice(0, 80) }, ack);
      if (verdict !== 'ack') await sleep(200);
    } catch (error) {
      ledger.settle(item, { verdict: 'no-answer', detail: (error as Error).message });
      client?.close();
      client = undefined;
      await sleep(200);
    }
  }
  client?.close();
}

/** DIMSE statuses that mean "try again" (PS3.4 B.2.3: A7xx out of resources). */
function dicomVerdict(status: string | undefined) {
  if (status === undefined) return 'no-answer' as const;
  if (/^(Success|Warning)/i.test(status)) return 'ack' as const;
  if (/resources|A7[0-9A-F]{2}/i.test(status)) return 'retry-later' as const;
  return 'permanent' as const;
}

/** One DICOM sender: storescu associations of a few instances each, retrying what got no success. */
export async function runDicomSender(control: LoadControl, ledger: Ledger<GeneratedInstance>, port: number, calledAe: string, batch = 4): Promise<void> {
  while (!control.stopped) {
    const items: LedgerItem<GeneratedInstance>[] = [];
    for (let i = 0; i < batch; i++) {
      const item = ledger.take(control.producing);
      if (item) items.push(item);
    }
    if (items.length === 0) {
      if (!control.producing && ledger.pending.every((p) => !p.inFlight)) break;
      await sleep(50);
      continue;
    }
    const result = await storescu({ port, calledAe, files: items.map((i) => i.data.path), timeoutSeconds: 10 });
    for (const [index, item] of items.entries()) {
      const outcome = result.outcomes[index]!;
      // A transient association rejection (PS3.8 9.3.4 result 2) is "retry later" too.
      const verdict = outcome.status === undefined && result.rejection ? (/transient/i.test(result.rejection) ? 'retry-later' : 'permanent') : dicomVerdict(outcome.status);
      const detail = outcome.status ?? (result.associationRejected ? `association ${result.rejection ?? 'rejected'}` : result.associationAccepted ? 'no response' : 'no association');
      ledger.settle(item, { verdict, detail });
    }
    if (items.some((i) => !i.acknowledged)) await sleep(200);
  }
}

/** The id of the one patient the search finds, if it finds exactly one; throws when the search is not answered (retry later). */
async function storedPatientId(port: number, apiKey: string, criteria: string): Promise<string | undefined> {
  const answer = await http({ port, path: `/fhir/Patient?${criteria.replace('|', '%7C')}`, headers: { 'x-api-key': apiKey } });
  if (answer.status !== 200) throw new Error(`the search for the stored patient answered HTTP ${answer.status}`);
  const bundle = JSON.parse(answer.body) as { entry?: { resource?: { id?: string } }[] };
  return bundle.entry?.length === 1 ? bundle.entry[0]!.resource?.id : undefined;
}

/** HTTP statuses: 2xx acknowledged; 429/503 (and no answer) retry later; anything else permanent. */
function httpVerdict(status: number) {
  if (status >= 200 && status < 300) return 'ack' as const;
  if (status === 429 || status === 503) return 'retry-later' as const;
  return 'permanent' as const;
}

/**
 * How a FHIR writer makes its patients safe to retry. `conditional`: If-None-Exist on the
 * business identifier (FHIR R4 http.html#ccreate), answered 200 with the stored patient when an
 * earlier attempt was applied. `plain`: a plain POST, the path where the service commits
 * concurrent creates together; a retry answered 409 (the site already has an active patient with
 * that identifier) means an earlier attempt was applied, and the writer looks the patient up.
 */
export type FhirWriteMode = 'conditional' | 'plain';

export async function runFhirWriter(control: LoadControl, ledger: Ledger<FhirItem>, port: number, apiKey: string, mode: FhirWriteMode): Promise<void> {
  while (!control.stopped) {
    const item = ledger.take(control.producing);
    if (!item) {
      if (!control.producing && ledger.pending.every((p) => !p.inFlight)) break;
      await sleep(50);
      continue;
    }
    try {
      const criteria = `identifier=${fhirIdentifierSystem}|${item.data.identifier}`;
      const answer = await http({
        port,
        method: 'POST',
        path: '/fhir/Patient',
        headers: { 'content-type': 'application/fhir+json', 'x-api-key': apiKey, ...(mode === 'conditional' ? { 'if-none-exist': criteria } : {}) },
        body: item.data.body,
      });
      if (mode === 'plain' && answer.status === 409 && item.attempts > 1) {
        const found = await storedPatientId(port, apiKey, criteria);
        ledger.settle(item, found ? { verdict: 'ack', detail: 'HTTP 409 on a retry: stored by an earlier attempt' } : { verdict: 'permanent', detail: `HTTP 409 ${answer.body.slice(0, 200)}` }, found);
        continue;
      }
      const verdict = httpVerdict(answer.status);
      let id: string | undefined;
      try {
        id = (JSON.parse(answer.body) as { id?: string }).id;
      } catch {
        id = undefined;
      }
      ledger.settle(item, { verdict, detail: `HTTP ${answer.status}${verdict === 'permanent' ? ` ${answer.body.slice(0, 200)}` : ''}` }, id);
      if (verdict !== 'ack') await sleep(200);
    } catch (error) {
      ledger.settle(item, { verdict: 'no-answer', detail: (error as Error).message });
      await sleep(200);
    }
  }
}
