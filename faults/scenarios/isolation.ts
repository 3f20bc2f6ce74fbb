import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { http, json, type HttpAnswer } from '../clients/http.ts';
import { ackCode, MllpClient } from '../clients/mllp-client.ts';
import { storescu } from '../clients/storescu.ts';
import { generateInstance } from '../samples/dicom-instances.ts';
import { admitMessage, resultMessage } from '../samples/hl7-messages.ts';
import { createEnvironment, requireSurfaces } from '../harness/environment.ts';
import { provisionSite, type ProvisionedSite } from '../harness/provision.ts';
import { check, type Scenario } from '../harness/scenario.ts';

/**
 * Issue 9 point 6. Site A attacks site B with everything A legitimately holds: its API key, its
 * MLLP client, its modality. B's data carries a canary (a family name nobody else writes); no
 * answer given to A may contain it, and no row of B may change during the attack except through
 * B's own DICOM door (its AE title), which anyone on the network can address: AE titles route,
 * they do not authenticate (PS3.8 7.1.1.6; site-level trust for DICOM is the network boundary).
 */
export const isolation: Scenario = {
  id: 'isolation',
  title: '6. Isolation under attack (site A against site B)',
  budgetMs: 4 * 60_000,
  async run(context, report) {
    const env = await createEnvironment(context, 'isolation');
    try {
      const a = await provisionSite(env.gateway, 'siteA');
      const b = await provisionSite(env.gateway, 'siteB');
      await env.gateway.start();
      requireSurfaces(report, env.gateway, ['fhir', 'hl7', 'mpps', 'connectivity', 'mllp', 'dicom']);
      const fhir = (site: ProvisionedSite, method: string, path: string, body?: unknown) =>
        http({ port: env.gateway.ports.fhir, method, path, headers: { 'x-api-key': site.apiKey, ...(body ? { 'content-type': 'application/fhir+json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
      const canary = `Canary${randomBytes(6).toString('hex')}`;
      const sharedIdentifier = `SHARED-${randomBytes(3).toString('hex')}`;
      const bMrn = `B-ONLY-${randomBytes(3).toString('hex')}`;

      // B's data: two patients (one with an identifier value A will also use), an observation, an HL7 patient, a study.
      const bPatients: string[] = [];
      for (let i = 0; i < 3; i++) {
        const created = await fhir(b, 'POST', '/fhir/Patient', { resourceType: 'Patient', identifier: [{ system: 'urn:faults:iso', value: i === 0 ? sharedIdentifier : `${canary}-${i}` }], name: [{ family: canary, given: [`B${i}`] }], gender: 'female', birthDate: '1970-01-01' });
        const id = (json(created) as { id?: string } | undefined)?.id;
        if (id) bPatients.push(id);
      }
      check(report, "site B's own data is created through B's key", bPatients.length === 3, `${bPatients.length}/3 patients`);
      const bPatient = bPatients[0] ?? randomUUID();
      await fhir(b, 'POST', '/fhir/Observation', { resourceType: 'Observation', status: 'final', subject: { reference: `Patient/${bPatient}` }, code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }] }, valueQuantity: { value: 5.4, unit: 'mmol/L' } });
      if (env.gateway.listening.has('mllp')) {
        const client = await MllpClient.connect(env.gateway.ports.mllp);
        await client.send(admitMessage(b.mllp, `ISOB${Date.now()}`, bMrn, canary, 'Hl7'));
        client.close();
      }
      const before = await env.sql.query('SELECT count(*)::int AS n, max(last_updated) AS last FROM clinical_resource WHERE site_id = $1', [b.id]);
      const attackStart = new Date();

      // Everything A is answered during the attack, to look for the canary afterwards.
      const answersToA: { what: string; answer: HttpAnswer; path?: string }[] = [];
      const asA = async (what: string, method: string, path: string, body?: unknown) => {
        const answer = await fhir(a, method, path, body);
        answersToA.push({ what, answer, path });
        return answer;
      };

      // 1. B's real ids and guessed ids, every read interaction.
      const realReads = [];
      for (const id of bPatients) {
        realReads.push(await asA('read', 'GET', `/fhir/Patient/${id}`));
        realReads.push(await asA('vread', 'GET', `/fhir/Patient/${id}/_history/1`));
        realReads.push(await asA('history', 'GET', `/fhir/Patient/${id}/_history`));
      }
      const missing = await asA('read of an id that exists nowhere', 'GET', `/fhir/Patient/${randomUUID()}`);
      check(report, "A reading B's real patient ids (read, vread, history): 404", realReads.length > 0 && realReads.every((r) => r.status === 404), realReads.map((r) => r.status).join(' '));
      const shape = (r: HttpAnswer) => JSON.stringify((json(r) as { issue?: { code?: string; severity?: string }[] } | undefined)?.issue?.map((i) => [i.severity, i.code]));
      check(report, "B's ids are indistinguishable from ids that do not exist", realReads.filter((r) => r.status === 404).every((r) => shape(r) === shape(missing)) && missing.status === 404, `existing-elsewhere ${shape(realReads[0]!)} vs nonexistent ${shape(missing)}`);
      const guessed = [];
      for (let i = 0; i < 100; i++) guessed.push(await asA('guessed id', 'GET', `/fhir/${['Patient', 'Observation', 'Condition'][i % 3]}/${i % 10 === 0 ? `../${i}` : randomUUID()}`));
      check(report, 'A guessing 100 ids: all 404, none a 5xx', guessed.every((r) => r.status === 404), [...new Set(guessed.map((r) => r.status))].join(' '));

      // 2. Searches that name B's data.
      await asA('own patient with the same identifier value', 'POST', '/fhir/Patient', { resourceType: 'Patient', identifier: [{ system: 'urn:faults:iso', value: sharedIdentifier }], name: [{ family: 'SiteA' }] });
      const searches = [
        await asA('search by shared identifier', 'GET', `/fhir/Patient?identifier=${sharedIdentifier}`),
        await asA("search by B's canary name", 'GET', `/fhir/Patient?name=${canary}`),
        await asA("search by B's _id", 'GET', `/fhir/Patient?_id=${bPatient}`),
        await asA("observations of B's patient", 'GET', `/fhir/Observation?patient=Patient/${bPatient}`),
        await asA('all patients', 'GET', '/fhir/Patient?_count=1000'),
      ];
      const leakedIds = searches.filter((r) => bPatients.some((id) => r.body.includes(`"id":"${id}"`)));
      check(report, "A's searches never return B's resources", leakedIds.length === 0 && searches.every((r) => r.status === 200 || r.status === 400), `${searches.map((r) => r.status).join(' ')}; ${leakedIds.length} answers with B's ids`);

      // 3. B's paging token replayed with A's key.
      const page = await fhir(b, 'GET', '/fhir/Patient?_count=1');
      const next = (json(page) as { link?: { relation: string; url: string }[] } | undefined)?.link?.find((l) => l.relation === 'next')?.url;
      if (next) {
        const url = new URL(next, 'http://127.0.0.1');
        const replay = await asA("B's paging link replayed", 'GET', `${url.pathname}${url.search}`);
        check(report, "B's paging token replayed with A's key reveals nothing", !bPatients.some((id) => replay.body.includes(id)) && !replay.body.includes(canary) && replay.status < 500, `HTTP ${replay.status}: ${replay.body.slice(0, 160)}`);
      } else {
        check(report, "B's paging token replayed with A's key reveals nothing", false, `B's search gave no next link to replay (HTTP ${page.status})`);
      }

      // 4. Writes that reference or target B's patients.
      const refWrite = await asA("observation referencing B's patient", 'POST', '/fhir/Observation', { resourceType: 'Observation', status: 'final', subject: { reference: `Patient/${bPatient}` }, code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }] } });
      const put = await asA("update of B's patient", 'PUT', `/fhir/Patient/${bPatient}`, { resourceType: 'Patient', id: bPatient, name: [{ family: 'Hijacked' }] });
      check(report, "A writing a reference to B's patient: refused (4xx)", refWrite.status >= 400 && refWrite.status < 500, `HTTP ${refWrite.status}`);
      // An update of an id the caller's site does not have is a 405 (no client-assigned ids,
      // http.html#update), whether the id exists in another site or nowhere.
      const nowhereId = randomUUID();
      const nowhere = await asA('update of an id that exists nowhere', 'PUT', `/fhir/Patient/${nowhereId}`, { resourceType: 'Patient', id: nowhereId, name: [{ family: 'Hijacked' }] });
      check(report, "A updating B's patient: answered as an id that exists nowhere (405), nothing created or changed", put.status === 405 && nowhere.status === 405 && shape(put) === shape(nowhere), `HTTP ${put.status} (${shape(put)}), nowhere ${nowhere.status} (${shape(nowhere)})`);

      // 5. MLLP from A's client carrying B's identifiers; HL7 over HTTP with A's key naming B's sender.
      if (env.gateway.listening.has('mllp')) {
        const client = await MllpClient.connect(env.gateway.ports.mllp);
        const adt = ackCode(await client.send(admitMessage(a.mllp, `ISOA${Date.now()}`, bMrn, 'Intruder', 'A')));
        const oru = ackCode(await client.send(resultMessage(a.mllp, `ISOR${Date.now()}`, bMrn, 99)));
        const spoofed = ackCode(await client.send(admitMessage({ sendingApplication: b.mllp.sendingApplication, sendingFacility: 'NOT_B' }, `ISOS${Date.now()}`, bMrn, 'Spoof', 'S')));
        client.close();
        report.notes.push(`MLLP from A's client with B's patient identifier: ADT ${adt}, ORU ${oru} (they apply to A's own patient of that identifier). With B's sending application but a facility that matches no client: ${spoofed}.`);
        check(report, 'MLLP with a sender identity that matches no registered client: rejected (AR), nothing stored', spoofed === 'AR', `MSA-1 ${spoofed}`);
      }
      if (env.gateway.listening.has('hl7')) {
        const v2 = await http({ port: env.gateway.ports.hl7, method: 'POST', path: '/v2/ingest', headers: { 'content-type': 'text/plain', 'x-api-key': a.apiKey }, body: admitMessage(b.mllp, `ISOH${Date.now()}`, bMrn, 'ViaHttp', 'A') });
        answersToA.push({ what: "HL7 over HTTP naming B's sender and patient", answer: v2 });
      }
      // 6. MPPS for B's study uid with A's key, and the connectivity lookup.
      const instancesDir = join(context.workDir, 'instances');
      mkdirSync(instancesDir, { recursive: true });
      const bStudy = generateInstance(instancesDir, { patientId: bMrn });
      if (env.gateway.listening.has('mpps')) {
        const mpps = await http({ port: env.gateway.ports.mpps, method: 'POST', path: '/ingest', headers: { 'content-type': 'application/json', 'x-api-key': a.apiKey }, body: JSON.stringify({ sop_instance_uid: `${bStudy.studyInstanceUid}.9`, study_uid: bStudy.studyInstanceUid, status: 'IN PROGRESS' }) });
        answersToA.push({ what: "MPPS naming B's study", answer: mpps });
      }
      if (env.gateway.listening.has('connectivity')) {
        const lookup = await http({ port: env.gateway.ports.connectivity, path: '/connectivity/dimse', headers: { 'x-api-key': a.apiKey } });
        check(report, 'the connectivity lookup gives the listener address and no AE title', lookup.status === 200 && !lookup.body.includes(a.aeTitle) && !lookup.body.includes(b.aeTitle), `HTTP ${lookup.status}: ${lookup.body.slice(0, 120)}`);
      }

      // 7. DICOM: A's modality addresses B's AE title (the legitimate door of B), and an unknown one.
      if (env.gateway.listening.has('dicom')) {
        const toB = await storescu({ port: env.gateway.ports.dicom, calledAe: b.aeTitle, callingAe: 'SITEA_MODALITY', files: [bStudy.path] });
        const inB = await env.sql.query('SELECT site_id::text AS site FROM imaging_instance WHERE sop_instance_uid = $1', [bStudy.sopInstanceUid]);
        check(report, "DICOM sent to B's AE title lands in B only (AE titles address, they do not authenticate)", toB.outcomes[0]?.acknowledged === true && inB.rowCount === 1 && inB.rows[0].site === b.id, `status ${toB.outcomes[0]?.status}; stored in ${inB.rows.map((r) => (r.site === b.id ? 'B' : r.site === a.id ? 'A' : r.site)).join(',') || 'no site'}`);
        const unknown = await storescu({ port: env.gateway.ports.dicom, calledAe: 'NOSUCHSITE', files: [generateInstance(instancesDir, { patientId: 'X' }).path] });
        check(report, 'DICOM to an unknown AE title: association rejected', unknown.associationRejected, unknown.rejection ?? 'accepted');
        const aSees = await asA("A's view of the patient B's study names", 'GET', `/fhir/Patient?identifier=${bMrn}`);
        check(report, "B's study is not visible to A", !aSees.body.includes(bStudy.studyInstanceUid), `HTTP ${aSees.status}`);
      }

      // Afterwards: nothing of B changed, nothing of B was shown to A.
      const after = await env.sql.query('SELECT count(*)::int AS n, max(last_updated) AS last FROM clinical_resource WHERE site_id = $1', [b.id]);
      const changed = await env.sql.query('SELECT resource_type, id::text FROM clinical_resource WHERE site_id = $1 AND last_updated >= $2', [b.id, attackStart]);
      const bMessages = await env.sql.query('SELECT count(*)::int AS n FROM inbound_message WHERE site_id = $1 AND received_at >= $2', [b.id, attackStart]);
      const bSteps = await env.sql.query('SELECT count(*)::int AS n FROM imaging_procedure_step WHERE site_id = $1', [b.id]);
      // The DICOM study created through B's AE title links (or creates) B's patient: that is B's own door, not A's credentials.
      const changedOtherwise = changed.rows.filter((r) => !(r.resource_type === 'Patient' && !bPatients.includes(r.id)));
      check(report, "no clinical row of B changed through A's credentials", changedOtherwise.length === 0 && bMessages.rows[0].n === 0 && bSteps.rows[0].n === 0, `${before.rows[0].n} -> ${after.rows[0].n} resources; changed: ${changedOtherwise.map((r) => `${r.resource_type}/${r.id}`).join(', ') || 'none'}; B messages ${bMessages.rows[0].n}; B procedure steps ${bSteps.rows[0].n}`);
      const bRead = await fhir(b, 'GET', `/fhir/Patient/${bPatient}`);
      const bBody = json(bRead) as { meta?: { versionId?: string }; name?: { family?: string }[] } | undefined;
      check(report, "B's patient is unchanged when B reads it", bRead.status === 200 && bBody?.meta?.versionId === '1' && bBody?.name?.[0]?.family === canary, `HTTP ${bRead.status}, version ${bBody?.meta?.versionId}, family ${bBody?.name?.[0]?.family}`);
      // A search naming the canary has it echoed back in the bundle's self link: that is A's own
      // input, so for those only the entries are looked at.
      const shown = ({ answer, path }: { answer: HttpAnswer; path?: string }) => (path?.includes(canary) ? JSON.stringify((json(answer) as { entry?: unknown } | undefined)?.entry ?? []) : answer.body);
      const leaks = answersToA.filter((entry) => shown(entry).includes(canary));
      check(report, "no answer given to A contains B's data (canary)", leaks.length === 0, leaks.length ? leaks.map((l) => l.what).join(', ') : `${answersToA.length} answers checked`);
      report.injected = `site A's key, MLLP client and modality used against site B: ${bPatients.length * 3} reads of B's real ids, 100 guessed ids, 5 searches, a replayed paging token, a reference and an update to B's patient, MLLP and HTTP HL7 naming B's patient and sender, MPPS naming B's study, C-STORE to B's AE title`;
      report.tallies.push({ item: "site B resources exposed or changed through A's credentials", sent: answersToA.length, acknowledged: 0, found: leaks.length + changedOtherwise.length, lost: 0, duplicated: 0 });
    } finally {
      await env.close();
    }
  },
};
