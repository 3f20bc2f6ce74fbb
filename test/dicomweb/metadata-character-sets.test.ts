// WADO-RS metadata and frames of instances whose text is not in dcmjs's reach: ISO 2022 code
// extensions (Japanese, Korean), a leniently spelt term, and UTF-8 text inside sequence items.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { XMLParser } from 'fast-xml-parser';
import { annexExamples } from '../dicom/support/annex-examples.ts';
import { dcmtk } from '../dicom/support/dicom-harness.ts';
import { encodeDataset, writeTestInstance, type ElementSpec } from '../dicom/support/dataset-builder.ts';
import { parseMultipart, siteWithKey, stow, useDicomwebOrigin } from './support.ts';

const origin = useDicomwebOrigin();
const folder = await mkdtemp(join(tmpdir(), 'cg-metadata-charsets-'));
after(() => rm(folder, { recursive: true, force: true }));

type Json = Record<string, { vr: string; Value?: unknown[] }>;

let next = 0;
async function storeInstance(key: string, attributes: ElementSpec[]): Promise<{ study: string; series: string; instance: string }> {
  next++;
  const uids = { study: `1.2.826.0.1.3680043.2.1125.77.${next}`, series: `1.2.826.0.1.3680043.2.1125.77.${next}.1`, instance: `1.2.826.0.1.3680043.2.1125.77.${next}.1.1` };
  const path = join(folder, `${next}.dcm`);
  await writeTestInstance(path, uids, attributes);
  const response = await stow(origin, key, [await readFile(path)]);
  assert.equal(response.status, 200, await response.text());
  return uids;
}

async function metadata(key: string, uids: { study: string }): Promise<Json[]> {
  const response = await fetch(`${origin.url}/studies/${uids.study}/metadata`, { headers: { 'x-api-key': key } });
  assert.equal(response.status, 200);
  return (await response.json()) as Json[];
}

/** An explicit VR little endian sequence of one defined-length item. */
function sequence(tag: number, item: ElementSpec[]): ElementSpec {
  const body = encodeDataset(item);
  const header = Buffer.alloc(8);
  header.writeUInt16LE(0xfffe, 0);
  header.writeUInt16LE(0xe000, 2);
  header.writeUInt32LE(body.length, 4);
  return { tag, vr: 'SQ', value: Buffer.concat([header, body]) };
}

test('metadata and frames of instances in ISO 2022 character sets (Japanese, Korean) are answered, names decoded into their component groups', async () => {
  const { key } = await siteWithKey(origin);
  for (const example of [annexExamples.japaneseKanji, annexExamples.japaneseKatakana, annexExamples.korean]) {
    const uids = await storeInstance(key, [
      { tag: 0x00080005, vr: 'CS', value: example.specificCharacterSet },
      { tag: 0x00100010, vr: 'PN', value: example.bytes },
    ]);
    const [dataset] = await metadata(key, uids);
    assert.ok(dataset, `the instance of ${example.specificCharacterSet} is in its study's metadata`);
    const [alphabetic, ideographic, phonetic] = example.name.split('=');
    assert.deepEqual(dataset['00100010'], { vr: 'PN', Value: [{ Alphabetic: alphabetic, Ideographic: ideographic, Phonetic: phonetic }] });
    // Text in DICOM JSON is Unicode, whatever the dataset declared.
    assert.deepEqual(dataset['00080005'], { vr: 'CS', Value: ['ISO_IR 192'] });

    const frames = await fetch(`${origin.url}/studies/${uids.study}/series/${uids.series}/instances/${uids.instance}/frames/1`, {
      headers: { 'x-api-key': key, accept: 'multipart/related; type="application/octet-stream"' },
    });
    assert.equal(frames.status, 200);
    const [part] = parseMultipart(Buffer.from(await frames.arrayBuffer()), frames.headers.get('content-type') ?? '');
    assert.equal(part!.body.length, 8);
  }
});

test('text inside sequence items is read in the dataset\'s character set; a leniently spelt term is read as the index reads it', async () => {
  const { key } = await siteWithKey(origin);
  const utf8 = await storeInstance(key, [
    { tag: 0x00080005, vr: 'CS', value: 'ISO_IR 192' },
    { tag: 0x00100010, vr: 'PN', value: Buffer.from('Müller^Jürgen', 'utf8') },
    sequence(0x00081032, [
      { tag: 0x00080100, vr: 'SH', value: 'XR1' },
      { tag: 0x00080104, vr: 'LO', value: Buffer.from('Röntgen Thorax', 'utf8') },
    ]),
  ]);
  const [dataset] = await metadata(key, utf8);
  assert.deepEqual(dataset!['00100010'], { vr: 'PN', Value: [{ Alphabetic: 'Müller^Jürgen' }] });
  const [item] = dataset!['00081032']!.Value as Json[];
  assert.deepEqual(item!['00080104'], { vr: 'LO', Value: ['Röntgen Thorax'] });

  // "ISO_IR100" without its space: dcmjs does not know it, the index reads it as ISO_IR 100.
  const latin1 = await storeInstance(key, [
    { tag: 0x00080005, vr: 'CS', value: 'ISO_IR100' },
    { tag: 0x00100010, vr: 'PN', value: Buffer.from('Ångström^Åsa', 'latin1') },
  ]);
  const [latinDataset] = await metadata(key, latin1);
  assert.deepEqual(latinDataset!['00100010'], { vr: 'PN', Value: [{ Alphabetic: 'Ångström^Åsa' }] });
});

test('QIDO-RS gives a person name as DICOM JSON does: each value an object, its component groups under their names', async () => {
  const { key } = await siteWithKey(origin);
  const japanese = await storeInstance(key, [
    { tag: 0x00080005, vr: 'CS', value: annexExamples.japaneseKanji.specificCharacterSet },
    { tag: 0x00100010, vr: 'PN', value: annexExamples.japaneseKanji.bytes },
  ]);
  // Two values, as some modalities write a patient's names; and a name with no alphabetic group.
  const twoNames = await storeInstance(key, [{ tag: 0x00100010, vr: 'PN', value: 'DOE^JOHN\\SMITH^J' }]);
  const ideographicOnly = await storeInstance(key, [
    { tag: 0x00080005, vr: 'CS', value: 'ISO_IR 192' },
    { tag: 0x00100010, vr: 'PN', value: Buffer.from('=山田^太郎', 'utf8') },
  ]);
  const expected: [{ study: string }, unknown][] = [
    [japanese, [{ Alphabetic: 'Yamada^Tarou', Ideographic: '山田^太郎', Phonetic: 'やまだ^たろう' }]],
    [twoNames, [{ Alphabetic: 'DOE^JOHN' }, { Alphabetic: 'SMITH^J' }]],
    [ideographicOnly, [{ Ideographic: '山田^太郎' }]],
  ];
  for (const [uids, value] of expected) {
    for (const path of [`/studies?StudyInstanceUID=${uids.study}`, `/studies/${uids.study}/series`, `/studies/${uids.study}/instances`]) {
      const response = await fetch(`${origin.url}${path}`, { headers: { 'x-api-key': key } });
      const [match] = (await response.json()) as Json[];
      assert.deepEqual(match!['00100010'], { vr: 'PN', Value: value }, path);
    }
  }
});

test('PatientName matches by component group: the alphabetic name alone, the ideographic one alone, or each group in its place (QIDO-RS and C-FIND)', async () => {
  const { site, key } = await siteWithKey(origin);
  const japanese = await storeInstance(key, [
    { tag: 0x00080005, vr: 'CS', value: annexExamples.japaneseKanji.specificCharacterSet },
    { tag: 0x00100010, vr: 'PN', value: annexExamples.japaneseKanji.bytes },
  ]);
  const plain = await storeInstance(key, [{ tag: 0x00100010, vr: 'PN', value: 'Yamada^Hanako' }]);
  const studiesFor = async (name: string) => {
    const response = await fetch(`${origin.url}/studies?PatientName=${encodeURIComponent(name)}`, { headers: { 'x-api-key': key } });
    assert.equal(response.status, 200, name);
    return ((await response.json()) as Json[]).map((match) => match['0020000D']!.Value![0]).sort();
  };
  const expected: [string, string[]][] = [
    ['Yamada^Tarou', [japanese.study]],
    ['yamada^tarou', [japanese.study]],
    ['山田^太郎', [japanese.study]],
    ['山田*', [japanese.study]],
    ['やまだ^たろう', [japanese.study]],
    ['Yamada*', [japanese.study, plain.study].sort()],
    ['Yamada^Tarou=山田^太郎', [japanese.study]],
    ['Yamada^Tarou=山田^花子', []],
    ['=山田^太郎', [japanese.study]],
    ['Yamada^Hanako', [plain.study]],
    ['Tarou', []],
  ];
  for (const [name, studies] of expected) assert.deepEqual(await studiesFor(name), studies, name);

  // C-FIND reads the same matching: the alphabetic name finds the Japanese patient's study.
  const found = await dcmtk('findscu', ['-S', '-aet', 'FINDSCU', '-aec', site.aeTitle, '-k', 'QueryRetrieveLevel=STUDY', '-k', 'PatientName=Yamada^Tarou', '-k', 'StudyInstanceUID', '-v', '127.0.0.1', String(origin.listener.port)]);
  assert.equal(found.code, 0, found.stderr);
  // findscu prints the UID with its padding byte.
  assert.match(found.stderr, new RegExp(`\\[${japanese.study.replace(/\./g, '\\.')}\\0?\\] +# +\\d+, 1 StudyInstanceUID`));
  assert.doesNotMatch(found.stderr, new RegExp(plain.study.replace(/\./g, '\\.')));
});

test('QIDO-RS results and WADO-RS metadata as multipart/related application/dicom+xml: one PS3.19 dataset a part, names in their groups', async () => {
  const { key } = await siteWithKey(origin);
  const uids = await storeInstance(key, [
    { tag: 0x00080005, vr: 'CS', value: annexExamples.japaneseKanji.specificCharacterSet },
    { tag: 0x00100010, vr: 'PN', value: annexExamples.japaneseKanji.bytes },
  ]);
  const accept = 'multipart/related; type="application/dicom+xml"';
  for (const path of [`/studies?StudyInstanceUID=${uids.study}`, `/studies/${uids.study}/metadata`]) {
    const response = await fetch(`${origin.url}${path}`, { headers: { 'x-api-key': key, accept } });
    assert.equal(response.status, 200, path);
    const type = response.headers.get('content-type') ?? '';
    assert.match(type, /^multipart\/related; type="application\/dicom\+xml"; boundary=/);
    const parts = parseMultipart(Buffer.from(await response.arrayBuffer()), type);
    assert.equal(parts.length, 1, path);
    assert.equal(parts[0]!.headers['content-type'], 'application/dicom+xml; charset=utf-8');
    const xml = new XMLParser({ ignoreAttributes: false }).parse(parts[0]!.body.toString('utf8')) as { NativeDicomModel: { DicomAttribute: Record<string, unknown>[] } };
    const name = xml.NativeDicomModel.DicomAttribute.find((attribute) => attribute['@_tag'] === '00100010') as { PersonName: Record<string, { FamilyName: string; GivenName: string }> };
    assert.deepEqual(name.PersonName.Alphabetic, { FamilyName: 'Yamada', GivenName: 'Tarou' }, path);
    assert.deepEqual(name.PersonName.Ideographic, { FamilyName: '山田', GivenName: '太郎' }, path);
    assert.deepEqual(name.PersonName.Phonetic, { FamilyName: 'やまだ', GivenName: 'たろう' }, path);
  }
  // Neither JSON nor XML: 406, naming both.
  const refused = await fetch(`${origin.url}/studies`, { headers: { 'x-api-key': key, accept: 'text/html' } });
  assert.equal(refused.status, 406);
});
