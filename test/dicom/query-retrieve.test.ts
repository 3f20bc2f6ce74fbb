import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { negotiate } from '../../src/dicom/association/negotiate.ts';
import { createDicomDestination } from '../../src/domain/imaging/dicom-destinations.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { createTestSite } from '../support/sites.ts';
import { associate, associateRequest, commandSet, pData, RawPeer, readCommand, statusOf } from './support/raw-peer.ts';
import { datasetOf, dcmtk, dumpElements, freePort, dicomFixture, listFiles, metaTransferSyntax, startHarness, storescu, type DicomHarness, type ToolResult } from './support/dicom-harness.ts';

const studyRootFind = '1.2.840.10008.5.1.4.1.2.2.1';
const ctStudy = '1.3.6.1.4.1.5962.1.2.1.20040119072730.12322';
const mrStudy = '1.3.6.1.4.1.5962.1.2.4.20040826185059.5457';
const nmStudy = '1.3.6.1.4.1.5962.1.2.8.20040826185059.5457';
const ctInstance = '1.3.6.1.4.1.5962.1.1.1.1.1.20040119072730.12322';
const nmInstance = '1.3.6.1.4.1.5962.1.1.8.1.5.20040826185059.5457';

let harness: DicomHarness;
let site: SiteContext;
let work: string;
before(async () => {
  harness = await startHarness();
  site = await createTestSite(harness.db.database);
  work = await mkdtemp(join(tmpdir(), 'cg-qr-'));
  const stored = await storescu(harness.listener.port, site.aeTitle, ['CT_small.dcm', 'MR_small.dcm'].map(dicomFixture), ['-xe']);
  assert.equal(stored.code, 0, stored.stderr);
  const jpeg = await storescu(harness.listener.port, site.aeTitle, [dicomFixture('JPGExtended.dcm')], ['-xx']);
  assert.equal(jpeg.code, 0, jpeg.stderr);
});
after(async () => {
  await harness.stop();
  await rm(work, { recursive: true, force: true });
});

function findscu(calledAe: string, keys: string[], extra: string[] = []): Promise<ToolResult> {
  return dcmtk('findscu', ['-v', '-S', '-aet', 'FINDSCU', '-aec', calledAe, ...extra, ...keys.flatMap((key) => ['-k', key]), '127.0.0.1', String(harness.listener.port)]);
}

/** The identifiers findscu printed, each as its dcmdump lines. */
function matchesOf(result: ToolResult): string[] {
  return result.stderr.split(/I: Find Response: \d+ \(Pending\)/).slice(1);
}

async function storedPath(sopInstanceUid: string): Promise<string> {
  const file = (await listFiles(join(harness.dataDir, 'dicom', site.siteId))).find((path) => path.endsWith(`${sopInstanceUid}.dcm`));
  assert.ok(file, `no stored file for ${sopInstanceUid}`);
  return file;
}

/** The stored copy's dataset bytes of an instance of the site. */
async function storedDataset(sopInstanceUid: string): Promise<Buffer> {
  return datasetOf(await readFile(await storedPath(sopInstanceUid)));
}

test('findscu: study level with wildcards, ranges and return keys, then series and image level', async () => {
  const studies = await findscu(site.aeTitle, ['QueryRetrieveLevel=STUDY', 'PatientName=*', 'PatientID', 'StudyInstanceUID', 'StudyDate', 'ModalitiesInStudy', 'NumberOfStudyRelatedInstances', 'NumberOfStudyRelatedSeries']);
  assert.equal(studies.code, 0, studies.stderr);
  const all = matchesOf(studies);
  assert.equal(all.length, 3, studies.stderr);
  assert.ok(all.some((match) => match.includes(`UI [${ctStudy}`)), studies.stderr);
  assert.match(studies.stderr, /\(0020,1208\) IS \[1\s*\]/);
  assert.match(studies.stderr, /\(0008,0052\) CS \[STUDY\s*\]/);

  const byName = matchesOf(await findscu(site.aeTitle, ['QueryRetrieveLevel=STUDY', 'PatientName=compressedsamples^c?1*', 'StudyInstanceUID']));
  assert.equal(byName.length, 1, 'PatientName wildcards, any case');
  assert.ok(byName[0]!.includes(ctStudy));
  const byId = matchesOf(await findscu(site.aeTitle, ['QueryRetrieveLevel=STUDY', 'PatientID=1CT1', 'StudyInstanceUID']));
  assert.equal(byId.length, 1);
  assert.ok(byId[0]!.includes(ctStudy));
  const byDate = matchesOf(await findscu(site.aeTitle, ['QueryRetrieveLevel=STUDY', 'StudyDate=20040101-20040131', 'StudyInstanceUID']));
  assert.deepEqual(byDate.map((match) => match.includes(ctStudy)), [true]);
  const byModality = matchesOf(await findscu(site.aeTitle, ['QueryRetrieveLevel=STUDY', 'ModalitiesInStudy=MR\\NM', 'StudyInstanceUID']));
  assert.equal(byModality.length, 2);
  const byStudyId = await findscu(site.aeTitle, ['QueryRetrieveLevel=STUDY', 'StudyID=1CT*', 'StudyInstanceUID', 'ReferringPhysicianName']);
  assert.deepEqual(matchesOf(byStudyId).map((match) => match.includes(ctStudy)), [true]);
  assert.match(byStudyId.stderr, /\(0020,0010\) SH \[1CT1\]/);
  // Modality in a study-level query, as viewers send it, asks what ModalitiesInStudy asks.
  const byStudyModality = matchesOf(await findscu(site.aeTitle, ['QueryRetrieveLevel=STUDY', 'Modality=CT', 'StudyInstanceUID']));
  assert.deepEqual(byStudyModality.map((match) => match.includes(ctStudy)), [true]);
  const byUids = matchesOf(await findscu(site.aeTitle, ['QueryRetrieveLevel=STUDY', `StudyInstanceUID=${ctStudy}\\${mrStudy}`]));
  assert.equal(byUids.length, 2);

  const series = await findscu(site.aeTitle, ['QueryRetrieveLevel=SERIES', `StudyInstanceUID=${mrStudy}`, 'SeriesInstanceUID', 'Modality', 'NumberOfSeriesRelatedInstances']);
  assert.equal(matchesOf(series).length, 1);
  assert.match(series.stderr, /\(0008,0060\) CS \[MR\]/);
  const images = await findscu(site.aeTitle, ['QueryRetrieveLevel=IMAGE', `StudyInstanceUID=${ctStudy}`, 'SOPInstanceUID', 'SOPClassUID', 'InstanceNumber']);
  assert.equal(matchesOf(images).length, 1);
  assert.match(images.stderr, /\(0008,0016\) UI =CTImageStorage/);
});

test("findscu: another site's UIDs find nothing; a missing or unknown level is refused (0xA900)", async () => {
  const other = await createTestSite(harness.db.database);
  const foreign = await findscu(other.aeTitle, ['QueryRetrieveLevel=STUDY', `StudyInstanceUID=${ctStudy}`]);
  assert.equal(foreign.code, 0, foreign.stderr);
  assert.equal(matchesOf(foreign).length, 0);
  assert.match(foreign.stderr, /Received Final Find Response \(Success\)/);

  const noLevel = await findscu(site.aeTitle, ['PatientID=1CT1']);
  assert.match(noLevel.stderr, /Final Find Response \(Error: DataSetDoesNotMatchSOPClass\)/);
  const badLevel = await findscu(site.aeTitle, ['QueryRetrieveLevel=FRAME', 'PatientID=1CT1']);
  assert.match(badLevel.stderr, /Final Find Response \(Error: DataSetDoesNotMatchSOPClass\)/);
  const badDate = await findscu(site.aeTitle, ['QueryRetrieveLevel=STUDY', 'StudyDate=yesterday']);
  assert.match(badDate.stderr, /Final Find Response \(Error: DataSetDoesNotMatchSOPClass\)/);
});

test('a C-FIND with more than 1,000 matches answers 1,000 of them, then 0xA700: what one query holds is bounded', async () => {
  const crowded = await createTestSite(harness.db.database);
  await harness.db.database.query(
    `INSERT INTO imaging_study (site_id, study_instance_uid, dicom_patient_id, patient_name, study_date)
     SELECT $1, '2.25.4242' || n, 'MANY' || n, 'MANY^' || n, date '2024-01-01' + (n % 365) FROM generate_series(1, 1200) AS n`,
    [crowded.siteId],
  );
  const result = await findscu(crowded.aeTitle, ['QueryRetrieveLevel=STUDY', 'PatientID', 'StudyInstanceUID']);
  assert.equal(matchesOf(result).length, 1000, result.stderr.slice(-500));
  assert.match(result.stderr, /Final Find Response \(Refused: OutOfResources\)/);
});

test('a malformed identifier is answered 0xC000 for its request', async () => {
  const peer = await associate(harness.listener.port, site.aeTitle, [{ id: 1, abstractSyntax: studyRootFind, transferSyntaxes: ['1.2.840.10008.1.2.1'] }]);
  const command = commandSet([[0x0002, studyRootFind], [0x0100, 0x0020], [0x0110, 7], [0x0700, 0], [0x0800, 0x0001]]);
  peer.write(pData(1, true, true, command));
  // An element whose length runs past the end of the identifier.
  peer.write(pData(1, false, true, Buffer.from([0x08, 0x00, 0x52, 0x00, 0x43, 0x53, 0x40, 0x00, 0x53, 0x54])));
  const response = await peer.nextPdu();
  assert.equal(response?.type, 0x04);
  assert.equal(statusOf(response!.body), 0xc000);
  assert.equal(readCommand(response!.body).get(0x0120)?.readUInt16LE(0), 7);
  peer.destroy();
});

test('getscu: the study arrives on the same association, byte for byte as stored; a syntax not offered fails, counted', async () => {
  const out = await mkdtemp(join(work, 'get-'));
  const result = await dcmtk('getscu', ['-v', '-S', '-aet', 'GETSCU', '-aec', site.aeTitle, '-od', out, '-k', 'QueryRetrieveLevel=STUDY', '-k', `StudyInstanceUID=${ctStudy}`, '127.0.0.1', String(harness.listener.port)]);
  assert.equal(result.code, 0, result.stderr);
  const files = await listFiles(out);
  assert.equal(files.length, 1, result.stderr);
  assert.deepEqual(await dumpElements(files[0]!), await dumpElements(await storedPath(ctInstance)), 'same content (the bytes on the wire are compared below)');

  // getscu offers uncompressed syntaxes only: the JPEG Extended instance cannot be sent as stored.
  const jpeg = await dcmtk('getscu', ['-v', '-S', '-aet', 'GETSCU', '-aec', site.aeTitle, '-od', out, '-k', 'QueryRetrieveLevel=STUDY', '-k', `StudyInstanceUID=${nmStudy}`, '127.0.0.1', String(harness.listener.port)]);
  assert.match(jpeg.stderr, /Received C-GET Response \(Refused: OutOfResourcesSubOperations\)/, jpeg.stderr);
  assert.match(jpeg.stderr, /Number of Failed Suboperations\s*:\s*1/, jpeg.stderr);
  assert.doesNotMatch(jpeg.stderr, /Release Failed/, 'the final response is all the requestor reads');
  assert.equal((await listFiles(out)).length, 1);

  const foreign = await createTestSite(harness.db.database);
  const none = await dcmtk('getscu', ['-v', '-S', '-aet', 'GETSCU', '-aec', foreign.aeTitle, '-od', out, '-k', 'QueryRetrieveLevel=STUDY', '-k', `StudyInstanceUID=${ctStudy}`, '127.0.0.1', String(harness.listener.port)]);
  assert.equal(none.code, 0, none.stderr);
  assert.equal((await listFiles(out)).length, 1, "another site's study is not found");
});


/** `accepted`: storescp's transfer syntax switch (`+xa` any, `+xi` implicit VR little endian only). */
async function startStorescp(port: number, out: string, accepted = '+xa'): Promise<ChildProcess> {
  const child = spawn('storescp', ['-aet', 'STORESCP', accepted, '-od', out, String(port)], { stdio: 'ignore' });
  for (let attempt = 0; attempt < 100; attempt++) {
    const echo = await dcmtk('echoscu', ['-aec', 'STORESCP', '127.0.0.1', String(port)]);
    if (echo.code === 0) return child;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill();
  throw new Error('storescp did not start');
}

function movescu(destination: string, keys: string[], extra: string[] = []): Promise<ToolResult> {
  return dcmtk('movescu', ['-v', '-S', '-aet', 'MOVESCU', '-aec', site.aeTitle, '-aem', destination, ...extra, ...keys.flatMap((key) => ['-k', key]), '127.0.0.1', String(harness.listener.port)]);
}

test('movescu: studies go to a registered storescp as stored, compressed ones included; an unknown destination is 0xA801', async () => {
  const out = await mkdtemp(join(work, 'move-'));
  const port = await freePort();
  const storescp = await startStorescp(port, out);
  try {
    await createDicomDestination(harness.db.database, site, { aeTitle: 'STORESCP', host: '127.0.0.1', port });
    const moved = await movescu('STORESCP', ['QueryRetrieveLevel=STUDY', `StudyInstanceUID=${ctStudy}\\${nmStudy}`]);
    assert.equal(moved.code, 0, moved.stderr);
    const files = await listFiles(out);
    assert.equal(files.length, 2);
    for (const file of files) {
      const dataset = datasetOf(await readFile(file));
      const matches = await Promise.all([ctInstance, nmInstance].map(async (sop) => (await storedDataset(sop)).equals(dataset)));
      assert.ok(matches.includes(true), `${file} differs from every stored dataset`);
    }

    const unknown = await movescu('NOWHERE', ['QueryRetrieveLevel=STUDY', `StudyInstanceUID=${ctStudy}`]);
    assert.match(unknown.stderr, /MoveDestinationUnknown|a801/i, unknown.stderr);
  } finally {
    storescp.kill();
  }
});

test('movescu to a registered destination that is not listening: 0xA702 with the failures counted', async () => {
  const port = await freePort();
  await createDicomDestination(harness.db.database, site, { aeTitle: 'GONE', host: '127.0.0.1', port });
  const result = await movescu('GONE', ['QueryRetrieveLevel=STUDY', `StudyInstanceUID=${ctStudy}`]);
  assert.match(result.stderr, /Final Move Response \(Refused: OutOfResourcesSubOperations\)/, result.stderr);
});

test('an instance stored in implicit VR, deflated or big endian is retrieved by a peer taking explicit VR only, and one stored in explicit VR by a peer taking implicit VR only: converted, same content', async () => {
  // Implicit VR, as modalities send by default (storescu -xi): an RT plan of nested sequences and
  // a 15-frame RT dose; and a deflated secondary capture (-xd).
  const implicit = await storescu(harness.listener.port, site.aeTitle, ['rtplan.dcm', 'rtdose.dcm'].map(dicomFixture), ['-xi']);
  assert.equal(implicit.code, 0, implicit.stderr);
  const deflated = await storescu(harness.listener.port, site.aeTitle, [dicomFixture('image_dfl.dcm')], ['-xd']);
  assert.equal(deflated.code, 0, deflated.stderr);
  const stored = [
    { study: '1.22.333.4.555555.6.7777777777777777777777777777', instance: '1.2.777.777.77.7.7777.7777.20030903150023', syntax: '1.2.840.10008.1.2' },
    { study: '1.2.999.999.99.9.9999.8888', instance: '1.9.999.999.99.9.9999.9999.20030818153516', syntax: '1.2.840.10008.1.2' },
    { study: '1.3.6.1.4.1.5962.1.2.0.977067310.6001.0', instance: '1.3.6.1.4.1.5962.1.1.0.0.0.977067309.6001.0', syntax: '1.2.840.10008.1.2.1.99' },
  ];
  for (const { instance, syntax } of stored) assert.equal(await metaTransferSyntax(await storedPath(instance)), syntax, instance);

  // getscu proposes explicit VR first in each SOP class's one context: the listener accepts that.
  const out = await mkdtemp(join(work, 'get-converted-'));
  const keys = ['QueryRetrieveLevel=STUDY', `StudyInstanceUID=${stored.map(({ study }) => study).join('\\')}`];
  const got = await dcmtk('getscu', ['-v', '-S', '-aet', 'GETSCU', '-aec', site.aeTitle, '-od', out, ...keys.flatMap((key) => ['-k', key]), '127.0.0.1', String(harness.listener.port)]);
  assert.equal(got.code, 0, got.stderr);
  assert.match(got.stderr, /Number of Completed Suboperations\s*:\s*3/, got.stderr);
  for (const file of await listFiles(out)) {
    assert.equal(await metaTransferSyntax(file), '1.2.840.10008.1.2.1', file);
    const { instance } = stored.find(({ instance }) => file.endsWith(instance))!;
    assert.deepEqual(await dumpElements(file), await dumpElements(await storedPath(instance)), `${instance}: same content`);
  }

  // Explicit VR big endian (retired, still in archives): values byte-swapped. In a site of its
  // own: the MR sample shares its SOP Instance UID with the little endian copy stored above.
  const bigSite = await createTestSite(harness.db.database);
  const big = await storescu(harness.listener.port, bigSite.aeTitle, [dicomFixture('MR_small_bigendian.dcm')], ['-xb']);
  assert.equal(big.code, 0, big.stderr);
  const bigOut = await mkdtemp(join(work, 'get-big-'));
  const gotBig = await dcmtk('getscu', ['-v', '-S', '-aet', 'GETSCU', '-aec', bigSite.aeTitle, '-od', bigOut, '-k', 'QueryRetrieveLevel=STUDY', '-k', `StudyInstanceUID=${mrStudy}`, '127.0.0.1', String(harness.listener.port)]);
  assert.equal(gotBig.code, 0, gotBig.stderr);
  const [bigFile] = await listFiles(bigOut);
  assert.equal(await metaTransferSyntax(bigFile!), '1.2.840.10008.1.2.1');
  assert.deepEqual(await dumpElements(bigFile!), await dumpElements(dicomFixture('MR_small_bigendian.dcm')), 'the big endian sample: same content');

  // A destination taking implicit VR only gets the explicit VR CT converted to implicit VR.
  const moved = await mkdtemp(join(work, 'move-implicit-'));
  const port = await freePort();
  const storescp = await startStorescp(port, moved, '+xi');
  try {
    await createDicomDestination(harness.db.database, site, { aeTitle: 'IMPLICIT_ONLY', host: '127.0.0.1', port });
    const result = await movescu('IMPLICIT_ONLY', ['QueryRetrieveLevel=STUDY', `StudyInstanceUID=${ctStudy}\\${stored[0]!.study}`]);
    assert.equal(result.code, 0, result.stderr);
    const files = await listFiles(moved);
    assert.equal(files.length, 2);
    for (const file of files) {
      assert.equal(await metaTransferSyntax(file), '1.2.840.10008.1.2', file);
      const instance = file.includes(ctInstance) ? ctInstance : stored[0]!.instance;
      assert.deepEqual(await dumpElements(file), await dumpElements(await storedPath(instance)), `${instance}: same content`);
    }
  } finally {
    storescp.kill();
  }
});

test('a C-GET requestor preferring a compressed syntax (getscu +xs) still gets the instances stored uncompressed; a requestor that also sends keeps its own order', async () => {
  // The CT stored in explicit VR, the RT plan stored in implicit VR by the test before.
  const out = await mkdtemp(join(work, 'get-lossless-'));
  const keys = ['QueryRetrieveLevel=STUDY', `StudyInstanceUID=${ctStudy}\\1.22.333.4.555555.6.7777777777777777777777777777`];
  const got = await dcmtk('getscu', ['-v', '-S', '+xs', '-aet', 'GETSCU', '-aec', site.aeTitle, '-od', out, ...keys.flatMap((key) => ['-k', key]), '127.0.0.1', String(harness.listener.port)]);
  assert.equal(got.code, 0, got.stderr);
  assert.match(got.stderr, /Number of Completed Suboperations\s*:\s*2/, got.stderr);
  for (const file of await listFiles(out)) assert.equal(await metaTransferSyntax(file), '1.2.840.10008.1.2.1', file);

  const jpegLossless = '1.2.840.10008.1.2.4.70';
  const proposed = [{ id: 1, abstractSyntax: '1.2.840.10008.5.1.4.1.1.2', transferSyntaxes: [jpegLossless, '1.2.840.10008.1.2', '1.2.840.10008.1.2.1'] }];
  const receiving = negotiate(proposed, [{ sopClassUid: '1.2.840.10008.5.1.4.1.1.2', scuRole: false, scpRole: true }]);
  assert.equal(receiving.accepted.get(1)!.transferSyntax, '1.2.840.10008.1.2.1');
  const both = negotiate(proposed, [{ sopClassUid: '1.2.840.10008.5.1.4.1.1.2', scuRole: true, scpRole: true }]);
  assert.equal(both.accepted.get(1)!.transferSyntax, jpegLossless);
  assert.equal(negotiate(proposed).accepted.get(1)!.transferSyntax, jpegLossless);
});

/** Explicit VR little endian elements of short VRs (PS3.5 7.1.2), for a hand-built identifier. */
function explicitElements(elements: [tag: number, vr: string, value: string][]): Buffer {
  return Buffer.concat(
    elements.map(([tag, vr, value]) => {
      const bytes = Buffer.from(value.length % 2 ? `${value}${vr === 'UI' ? '\0' : ' '}` : value, 'latin1');
      const header = Buffer.alloc(8);
      header.writeUInt16LE(tag >>> 16, 0);
      header.writeUInt16LE(tag & 0xffff, 2);
      header.write(vr, 4, 'latin1');
      header.writeUInt16LE(bytes.length, 6);
      return Buffer.concat([header, bytes]);
    }),
  );
}

/** The first PDV of a P-DATA-TF body. */
function pdvOf(body: Buffer): { contextId: number; isCommand: boolean; isLast: boolean; fragment: Buffer } {
  const length = body.readUInt32BE(0);
  return { contextId: body[4]!, isCommand: (body[5]! & 1) === 1, isLast: (body[5]! & 2) === 2, fragment: body.subarray(6, 4 + length) };
}

test('C-GET by hand: the dataset on the wire is the stored one byte for byte; C-CANCEL stops before the next sub-operation', async () => {
  const ctStorage = '1.2.840.10008.5.1.4.1.1.2';
  const mrStorage = '1.2.840.10008.5.1.4.1.1.4';
  const explicit = '1.2.840.10008.1.2.1';
  const peer = await RawPeer.connect(harness.listener.port);
  peer.write(
    associateRequest({
      calledAeTitle: site.aeTitle,
      contexts: [
        { id: 1, abstractSyntax: '1.2.840.10008.5.1.4.1.2.2.3', transferSyntaxes: [explicit] },
        { id: 3, abstractSyntax: ctStorage, transferSyntaxes: [explicit] },
        { id: 5, abstractSyntax: mrStorage, transferSyntaxes: [explicit] },
      ],
      scpRoleFor: [ctStorage, mrStorage],
    }),
  );
  assert.equal((await peer.nextPdu())?.type, 0x02);
  peer.write(pData(1, true, true, commandSet([[0x0002, '1.2.840.10008.5.1.4.1.2.2.3'], [0x0100, 0x0010], [0x0110, 9], [0x0700, 0], [0x0800, 0x0001]])));
  peer.write(pData(1, false, true, explicitElements([[0x00080052, 'CS', 'STUDY'], [0x0020000d, 'UI', `${ctStudy}\\${mrStudy}`]])));

  // The first sub-operation: a C-STORE-RQ on a storage context, then its dataset.
  const command = await peer.nextPdu();
  const storeCommand = pdvOf(command!.body);
  assert.ok(storeCommand.isCommand && [3, 5].includes(storeCommand.contextId));
  const fields = readCommand(command!.body);
  assert.equal(fields.get(0x0100)!.readUInt16LE(0), 0x0001);
  const sopInstanceUid = fields.get(0x1000)!.toString('latin1').replace(/\0+$/, '');
  const fragments: Buffer[] = [];
  for (;;) {
    const pdv = pdvOf((await peer.nextPdu())!.body);
    fragments.push(pdv.fragment);
    if (pdv.isLast) break;
  }
  assert.ok(Buffer.concat(fragments).equals(await storedDataset(sopInstanceUid)), 'the dataset sent differs from the stored bytes');

  // Cancel, then answer the sub-operation in progress: no second C-STORE follows.
  peer.write(pData(1, true, true, commandSet([[0x0100, 0x0fff], [0x0120, 9], [0x0800, 0x0101]])));
  const messageId = fields.get(0x0110)!.readUInt16LE(0);
  peer.write(pData(storeCommand.contextId, true, true, commandSet([[0x0002, fields.get(0x0002)!.toString('latin1').replace(/\0+$/, '')], [0x0100, 0x8001], [0x0120, messageId], [0x0800, 0x0101], [0x0900, 0], [0x1000, sopInstanceUid]])));
  const statuses: number[] = [];
  let final: Map<number, Buffer> | undefined;
  for (;;) {
    const pdu = await peer.nextPdu();
    assert.equal(pdu?.type, 0x04);
    const pdv = pdvOf(pdu!.body);
    assert.equal(pdv.contextId, 1, 'no further C-STORE after the cancel');
    const status = statusOf(pdu!.body);
    statuses.push(status);
    if (status !== 0xff00) {
      final = readCommand(pdu!.body);
      break;
    }
  }
  assert.deepEqual(statuses, [0xff00, 0xfe00]);
  assert.equal(final!.get(0x1021)!.readUInt16LE(0), 1, 'completed');
  assert.equal(final!.get(0x1020)!.readUInt16LE(0), 1, 'remaining');
  assert.equal(final!.get(0x0120)!.readUInt16LE(0), 9);
  peer.destroy();
});
