import { join } from 'node:path';
import type { GeneratedInstance } from '../samples/dicom-instances.ts';
import type { Environment } from '../harness/environment.ts';
import type { ProvisionedSite } from '../harness/provision.ts';
import type { ScenarioReport } from '../harness/scenario.ts';
import { sleep } from '../harness/timing.ts';
import { checkDicom, checkFhir, checkHl7, checkNoOrphans } from '../verify/data-check.ts';
import type { Ledger } from './ledger.ts';
import { dicomLedger, fhirLedger, hl7Ledger, runDicomSender, runFhirWriter, runMllpSender, type FhirItem, type Hl7Item, type LoadControl } from './senders.ts';

export interface MixedLoadOptions {
  mllpSenders: number;
  dicomAssociations: number;
  fhirWriters: number;
}

/**
 * The load of issue 9 point 1: MLLP senders, DICOM associations and FHIR writers, all running at
 * once against one site, each keeping a ledger, each retrying what was not acknowledged. Only the
 * surfaces that are running get load.
 */
export class MixedLoad {
  readonly control: LoadControl = { producing: true, stopped: false };
  readonly hl7: Ledger<Hl7Item>;
  readonly dicom: Ledger<GeneratedInstance>;
  readonly fhir: Ledger<FhirItem>;
  #workers: Promise<void>[] = [];
  #env: Environment;
  #site: ProvisionedSite;

  constructor(env: Environment, site: ProvisionedSite, workDir: string, prefix: string) {
    this.#env = env;
    this.#site = site;
    this.hl7 = hl7Ledger(site.mllp, prefix);
    this.dicom = dicomLedger(join(workDir, 'instances'), prefix);
    this.fhir = fhirLedger(prefix);
  }

  start(options: MixedLoadOptions): void {
    const { gateway } = this.#env;
    if (gateway.listening.has('mllp')) for (let i = 0; i < options.mllpSenders; i++) this.#workers.push(runMllpSender(this.control, this.hl7, gateway.ports.mllp));
    if (gateway.listening.has('dicom')) for (let i = 0; i < options.dicomAssociations; i++) this.#workers.push(runDicomSender(this.control, this.dicom, gateway.ports.dicom, this.#site.aeTitle));
    // Half the writers post plainly (the path that commits concurrent creates together), half conditionally.
    if (gateway.listening.has('fhir')) {
      for (let i = 0; i < options.fhirWriters; i++) {
        this.#workers.push(runFhirWriter(this.control, this.fhir, gateway.ports.fhir, this.#site.apiKey, i % 2 === 0 ? 'plain' : 'conditional'));
      }
    }
  }

  /** Stops making new items and lets the senders retry until everything is acknowledged (bounded). */
  async drain(timeoutMs: number): Promise<void> {
    this.control.producing = false;
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      if ([this.hl7, this.dicom, this.fhir].every((l) => l.pending.length === 0)) break;
      await sleep(200);
    }
    this.control.stopped = true;
    await Promise.allSettled(this.#workers);
  }

  /** Stops every sender at once (an aborted scenario must not leave load running). */
  stop(): void {
    this.control.producing = false;
    this.control.stopped = true;
  }

  /**
   * Runs the data check on every surface that got load, and the orphan check. `storage`: the
   * DICOM storage folder (by default the data directory's dicom folder), or every node's.
   */
  async verify(report: ScenarioReport, label: string, storage: string | string[] = join(this.#env.gateway.dataDir, 'dicom')): Promise<void> {
    const { gateway, sql } = this.#env;
    if (gateway.listening.has('mllp')) report.tallies.push(await checkHl7(report, sql, this.#site.id, this.hl7, label));
    if (gateway.listening.has('dicom')) report.tallies.push(await checkDicom(report, sql, this.#site.id, storage, this.dicom, label));
    if (gateway.listening.has('fhir')) report.tallies.push(await checkFhir(report, sql, this.#site.id, this.fhir, gateway.ports.fhir, this.#site.apiKey, label));
    await checkNoOrphans(report, sql, storage, label);
  }

  answerCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [name, ledger] of [['hl7', this.hl7], ['dicom', this.dicom], ['fhir', this.fhir]] as const) {
      for (const answer of (ledger as Ledger<unknown>).answers()) counts[`${name} ${answer.verdict}`] = (counts[`${name} ${answer.verdict}`] ?? 0) + 1;
    }
    return counts;
  }
}
