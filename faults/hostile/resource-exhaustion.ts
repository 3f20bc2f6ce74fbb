import { connect, type Socket } from 'node:net';
import { createIntegrationClient } from '../../src/domain/clients/integration-clients.ts';
import { Database } from '../../src/storage/database.ts';
import { http } from '../clients/http.ts';
import { associateRequest, cStoreCommand, pData, releaseRequest } from '../clients/dicom-pdu.ts';
import { ackCode, MllpClient } from '../clients/mllp-client.ts';
import { storescu } from '../clients/storescu.ts';
import { campaignWorkers, type GatewayProcess } from '../harness/gateway-process.ts';
import type { ProvisionedSite } from '../harness/provision.ts';
import { check, type ScenarioReport } from '../harness/scenario.ts';
import { sleep, waitUntil } from '../harness/timing.ts';
import { generateInstance } from '../samples/dicom-instances.ts';
import { admitMessage } from '../samples/hl7-messages.ts';

/**
 * Issue 26 points 2, 3, 5 and 13 under load: one site's credentials (an API key, a registered
 * MLLP sender) and a handful of loopback addresses try to take the database, the DICOM and MLLP
 * listeners and the memory and disk from every other site at once, while another site keeps
 * sending. The attacker's addresses are 127.0.0.2 and up (Linux routes all of 127/8 to loopback),
 * so the per-address limits tell it apart from the victim on 127.0.0.1.
 */

/** What the scenario sets, so that an oversized instance is quick to send. */
export const resourceLimitEnv = { CG_DICOM_MAX_INSTANCE_SIZE: '4MiB' };
const maxInstanceBytes = 4 * 1024 * 1024;
/**
 * The DICOM listener's slots: 16 per address (CG_DICOM_MAX_CONNECTIONS_PER_ADDRESS), 128 in all,
 * in each worker process; a node of CG_WORKERS workers admits that many times as much.
 */
const dicomOpenBound = 128 * campaignWorkers;
/** The MLLP frame memory (CG_MLLP_UNFINISHED_BYTES, 64 MiB per worker) holds at most 64 connections of 1 MiB per worker. */
const mllpOpenBound = 64 * campaignWorkers;
/**
 * Memory the attack may add, per serving process, like the connection bounds above: each worker
 * holds its own connections and up to 64 MiB of unfinished MLLP frames, and its heap grows with the
 * other site's traffic. One process grew 146 MB in the scenario's first development run; with two workers the
 * summed growth measured 268 to 329 MB, which a bound of 300 MB for the whole service failed at
 * random.
 */
const growthPerWorkerMb = 200;
const growthBoundMb = growthPerWorkerMb * campaignWorkers;
const attackerAddresses = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7', '127.0.0.8', '127.0.0.9'];
/** Addresses of their own for the dribbled association and the oversized store, whose outcome is checked. */
const dripAddress = '127.0.0.10';
const oversizeAddress = '127.0.0.11';

export interface ResourceAttackOptions {
  scale: number;
  workDir: string;
  log(message: string): void;
}

/** The attacking site's sender may send from the attacker addresses (it registers them itself). */
async function registerAttackerSender(gateway: GatewayProcess, attacker: ProvisionedSite): Promise<{ sendingApplication: string; sendingFacility: string }> {
  const database = new Database({ connectionString: gateway.databaseUrl, maxConnections: 1 });
  try {
    const sender = { sendingApplication: `${attacker.mllp.sendingApplication}_FLOOD`, sendingFacility: attacker.mllp.sendingFacility };
    await createIntegrationClient(database, attacker.id, { name: 'flood', protocol: 'hl7-mllp', allowedIps: attackerAddresses.join(','), ...sender }, { kind: 'operator' });
    return sender;
  } finally {
    await database.close();
  }
}

/** Another site's ordinary traffic, every few hundred milliseconds, counting what was not served. */
class VictimTraffic {
  readonly failures: string[] = [];
  served = { fhir: 0, mllp: 0, dicom: 0 };
  #running = true;
  #loops: Promise<void>[] = [];

  start(gateway: GatewayProcess, victim: ProvisionedSite, workDir: string): void {
    const fhir = async () => {
      for (let i = 0; this.#running; i++) {
        const answer = await http({ port: gateway.ports.fhir, path: `/fhir/Patient?identifier=VICTIM-${i}`, headers: { 'x-api-key': victim.apiKey }, timeoutMs: 15_000 }).catch((e: Error) => e);
        if (answer instanceof Error || answer.status !== 200) this.failures.push(`FHIR search: ${answer instanceof Error ? answer.message : `HTTP ${answer.status}`}`);
        else this.served.fhir++;
        await sleep(200);
      }
    };
    const mllp = async () => {
      for (let i = 0; this.#running; i++) {
        try {
          const client = await MllpClient.connect(gateway.ports.mllp);
          const ack = ackCode(await client.send(admitMessage(victim.mllp, `VICTIM-${Date.now()}-${i}`, `MRN-VICTIM-${i}`), 15_000));
          client.close();
          if (ack === 'AA') this.served.mllp++;
          else this.failures.push(`MLLP: ${ack}`);
        } catch (error) {
          this.failures.push(`MLLP: ${(error as Error).message}`);
        }
        await sleep(200);
      }
    };
    const dicom = async () => {
      for (let i = 0; this.#running; i++) {
        const instance = generateInstance(workDir, { patientId: `MRN-VICTIM-DICOM-${i}` });
        const result = await storescu({ port: gateway.ports.dicom, calledAe: victim.aeTitle, files: [instance.path] });
        if (result.outcomes[0]?.acknowledged) this.served.dicom++;
        else this.failures.push(`DICOM: ${result.rejection ?? result.outcomes[0]?.status ?? 'no response'}`);
        await sleep(300);
      }
    };
    this.#loops = [fhir(), mllp(), dicom()];
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }
}

/** Sockets the service has closed (or reset). */
const closedAt = new WeakMap<Socket, number>();
const openedAt = new WeakMap<Socket, number>();
const isClosed = (socket: Socket) => closedAt.has(socket);

function socketFrom(port: number, localAddress: string): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    socket.on('error', () => resolve(undefined));
    socket.on('data', () => {});
    socket.once('close', () => closedAt.set(socket, Date.now()));
    socket.once('connect', () => {
      openedAt.set(socket, Date.now());
      resolve(socket);
    });
  });
}

/** Point 2: the searches that took 750 MB to 1.8 GB of one PostgreSQL backend each, 24 at a time. */
async function costlySearches(gateway: GatewayProcess, attacker: ProvisionedSite, rounds: number): Promise<{ statuses: Map<number, number>; slowestMs: number }> {
  const hundred = (prefix: string) => Array.from({ length: 100 }, (_, i) => `${prefix}${i}`).join(',');
  const params = Array.from({ length: 100 }, (_, p) => `identifier=${hundred(`P${p}-`)}`).join('&');
  // Within a URL's length but over the value budget: refused by count, not by size.
  const query = Array.from({ length: 8 }, (_, p) => `identifier=${hundred(`Q${p}-`)}`).join('&');
  const statuses = new Map<number, number>();
  let slowestMs = 0;
  for (let round = 0; round < rounds; round++) {
    await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const t0 = Date.now();
        const headers = { 'x-api-key': attacker.apiKey, 'content-type': 'application/x-www-form-urlencoded' };
        const answer = await (i % 2 === 0
          ? http({ port: gateway.ports.fhir, method: 'POST', path: '/fhir/Patient/_search', headers, body: params, timeoutMs: 60_000 })
          : http({ port: gateway.ports.fhir, path: `/fhir/Patient?${query}`, headers, timeoutMs: 60_000 })
        ).catch(() => undefined);
        slowestMs = Math.max(slowestMs, Date.now() - t0);
        const status = answer?.status ?? 0;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }),
    );
  }
  return { statuses, slowestMs };
}

/** Point 3: idle sockets and a byte every few seconds, from attacker addresses, on the DICOM port. */
async function dicomFlood(gateway: GatewayProcess, calledAe: string, perAddress: number): Promise<{ opened: number; closedAtOnce: number; drippers: Socket[]; idle: Socket[] }> {
  const idle: Socket[] = [];
  for (const address of attackerAddresses) {
    for (let i = 0; i < perAddress; i++) {
      const socket = await socketFrom(gateway.ports.dicom, address);
      if (socket) idle.push(socket);
    }
  }
  // Well inside ARTIM (30 s): refused for their number, not for their silence.
  await waitUntil(10_000, () => idle.filter(isClosed).length >= idle.length - dicomOpenBound, 200);
  const closedAtOnce = idle.filter(isClosed).length;
  // A-ASSOCIATE-RQ dribbled a byte every 2 s: the association deadline is fixed, not per byte.
  const request = associateRequest({ calledAe, callingAe: 'DRIP', abstractSyntax: '1.2.840.10008.1.1', transferSyntaxes: ['1.2.840.10008.1.2'] });
  const drippers: Socket[] = [];
  for (let i = 0; i < 4; i++) {
    const socket = await socketFrom(gateway.ports.dicom, dripAddress);
    if (!socket) continue;
    let at = 0;
    const timer = setInterval(() => {
      if (socket.destroyed || at >= request.length - 1) return clearInterval(timer);
      socket.write(request.subarray(at, ++at));
    }, 2_000);
    socket.once('close', () => clearInterval(timer));
    drippers.push(socket);
  }
  return { opened: idle.length, closedAtOnce, drippers, idle };
}

/** Point 5: a registered sender opens many connections, each holding 1 MiB of a frame it never ends. */
async function mllpFlood(gateway: GatewayProcess, sender: { sendingApplication: string; sendingFacility: string }, connections: number): Promise<Socket[]> {
  const header = `\x0bMSH|^~\\&|${sender.sendingApplication}|${sender.sendingFacility}|CG|CG|20260101||ADT^A04|FLOOD|P|2.5.1\rPID|1||FLOOD||`;
  const megabyte = Buffer.concat([Buffer.from(header), Buffer.alloc(1024 * 1024 - header.length, 'F')]);
  const sockets: Socket[] = [];
  for (let i = 0; i < connections; i++) {
    const socket = await socketFrom(gateway.ports.mllp, attackerAddresses[i % attackerAddresses.length]!);
    if (!socket) continue;
    socket.write(megabyte);
    sockets.push(socket);
  }
  return sockets;
}

/** Point 13: a C-STORE whose data set is four times the limit, answered on the same association. */
async function oversizedStore(gateway: GatewayProcess, calledAe: string): Promise<{ status?: number; detail: string }> {
  const socket = await socketFrom(gateway.ports.dicom, oversizeAddress);
  if (!socket) return { detail: 'no connection' };
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  const secondaryCapture = '1.2.840.10008.5.1.4.1.1.7';
  socket.write(associateRequest({ calledAe, callingAe: 'OVERSIZE', abstractSyntax: secondaryCapture, transferSyntaxes: ['1.2.840.10008.1.2.1'], maxPdu: 65536 }));
  await waitUntil(10_000, () => Buffer.concat(received).length >= 6);
  if (Buffer.concat(received)[0] !== 0x02) {
    socket.destroy();
    return { detail: `association not accepted (PDU type ${Buffer.concat(received)[0]})` };
  }
  received.length = 0;
  socket.write(pData(1, cStoreCommand(secondaryCapture, `1.2.826.0.1.3680043.10.26.${Date.now()}`), true, true));
  const total = 4 * maxInstanceBytes;
  const fragment = Buffer.alloc(16 * 1024);
  for (let sent = 0; sent < total; sent += fragment.length) {
    if (!socket.write(pData(1, fragment, false, sent + fragment.length >= total))) await new Promise((resolve) => socket.once('drain', resolve));
  }
  await waitUntil(30_000, () => Buffer.concat(received).length >= 6);
  const response = Buffer.concat(received);
  // The response command's Status (0000,0900), implicit VR little endian: tag, length 2, value.
  const at = response.indexOf(Buffer.from([0x00, 0x00, 0x00, 0x09, 0x02, 0x00, 0x00, 0x00]));
  const status = at >= 0 ? response.readUInt16LE(at + 8) : undefined;
  socket.write(releaseRequest());
  await sleep(200);
  socket.destroy();
  return status === undefined ? { detail: `no C-STORE response (${response.length} bytes, PDU type ${response[0]})` } : { status, detail: `status 0x${status.toString(16).padStart(4, '0')}` };
}

export async function exhaustResources(report: ScenarioReport, gateway: GatewayProcess, attacker: ProvisionedSite, victim: ProvisionedSite, options: ResourceAttackOptions): Promise<void> {
  const sender = await registerAttackerSender(gateway, attacker);
  const baselineRss = gateway.residentBytes() ?? 0;
  let peakRss = baselineRss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, gateway.residentBytes() ?? 0);
  }, 200);
  const victimTraffic = new VictimTraffic();
  victimTraffic.start(gateway, victim, options.workDir);
  const held: Socket[] = [];
  try {
    options.log('resource exhaustion: costly searches, DICOM and MLLP connection floods, oversized C-STORE, while another site sends');
    // Never fewer than the 8 addresses' 32 connections each: the memory budget is what stops those.
    const mllpConnections = Math.max(300, Math.round(1_000 * options.scale));
    const [searches, dicom, flood, oversized] = await Promise.all([
      costlySearches(gateway, attacker, Math.max(2, Math.round(10 * options.scale))),
      dicomFlood(gateway, attacker.aeTitle, 20 * campaignWorkers),
      mllpFlood(gateway, sender, mllpConnections),
      oversizedStore(gateway, attacker.aeTitle),
    ]);
    held.push(...dicom.idle, ...dicom.drippers, ...flood);

    const statuses = [...searches.statuses].map(([status, n]) => `${n} x ${status || 'no answer'}`).join(', ');
    check(report, 'costly searches (100 x 100 values in a _search body, 8 x 100 in a URL; 24 at a time) are refused before the database, 4xx not 5xx', [...searches.statuses.keys()].every((s) => s >= 400 && s < 500), `${statuses}; slowest ${searches.slowestMs} ms`);
    report.figures['costly search, slowest answer, ms'] = searches.slowestMs;

    check(
      report,
      `DICOM: idle connections beyond 16 per address and 128 in all (per worker; ${campaignWorkers} workers) are closed at once, and another site's associations still get in`,
      dicom.opened - dicom.closedAtOnce <= dicomOpenBound,
      `${dicom.opened} opened from ${attackerAddresses.length} addresses, ${dicom.closedAtOnce} closed within 10 s`,
    );
    const dripClosed = dicom.drippers.length > 0 && (await waitUntil(45_000, () => dicom.drippers.every(isClosed), 500));
    const lifetimes = dicom.drippers.map((socket) => ((closedAt.get(socket) ?? Date.now()) - openedAt.get(socket)!) / 1000);
    // Admitted (alive well past the first bytes) and cut near the 30 s deadline, not kept by each byte.
    check(
      report,
      'DICOM: an A-ASSOCIATE-RQ dribbled a byte every 2 s is cut at the fixed association deadline (30 s)',
      dripClosed && lifetimes.every((s) => s >= 20 && s <= 40),
      `${dicom.drippers.filter(isClosed).length}/${dicom.drippers.length} closed; after ${lifetimes.map((s) => s.toFixed(1)).join(', ')} s`,
    );

    await waitUntil(10_000, () => flood.filter((socket) => !isClosed(socket)).length <= mllpOpenBound, 200);
    const mllpOpen = flood.filter((socket) => !isClosed(socket)).length;
    check(report, `MLLP: one sender's connections are capped per address and in all, and its unfinished frames by the memory budget (64 MiB per worker; ${campaignWorkers} workers)`, mllpOpen <= mllpOpenBound, `${flood.length} connections with 1 MiB unfinished frames from ${attackerAddresses.length} addresses; ${mllpOpen} still open`);
    report.figures['MLLP flood: connections still open'] = mllpOpen;

    check(report, 'C-STORE over CG_DICOM_MAX_INSTANCE_SIZE (16 MiB against 4 MiB) is answered 0xA700 (out of resources)', oversized.status === 0xa700, oversized.detail);

    await sleep(2_000);
  } finally {
    await victimTraffic.stop();
    clearInterval(sampler);
    for (const socket of held) socket.destroy();
  }
  const { served, failures } = victimTraffic;
  check(report, 'another site is served throughout: FHIR search, MLLP and C-STORE', failures.length === 0 && served.fhir > 0 && served.mllp > 0 && served.dicom > 0, `served ${served.fhir} searches, ${served.mllp} MLLP messages, ${served.dicom} C-STOREs; ${failures.length} failures${failures.length ? `: ${[...new Set(failures)].slice(0, 5).join('; ')}` : ''}`);
  const growthMb = (peakRss - baselineRss) / 1048576;
  check(
    report,
    `resident memory stays bounded during the attack (growth under ${growthBoundMb} MB: ${growthPerWorkerMb} MB per worker; ${campaignWorkers} workers)`,
    peakRss > 0 && growthMb < growthBoundMb,
    `baseline ${(baselineRss / 1048576).toFixed(0)} MB, peak ${(peakRss / 1048576).toFixed(0)} MB`,
  );
  report.figures['resource exhaustion: peak RSS, MB'] = Math.round(peakRss / 1048576);
  report.figures['resource exhaustion: RSS growth, MB'] = Math.round(growthMb);
}
