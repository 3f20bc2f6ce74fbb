import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CharacterSets } from '../../src/storage/dicom/dataset/charset.ts';
import { decodeHeaderFields, headerTags } from '../../src/storage/dicom/dataset/header-fields.ts';
import { annexExamples, hex } from './support/annex-examples.ts';

for (const [example, { specificCharacterSet, bytes, name }] of Object.entries(annexExamples)) {
  test(`the ${example} person name of PS3.5's annexes decodes exactly`, () => {
    assert.deepEqual(new CharacterSets(specificCharacterSet).decode(bytes, 'person-name'), { text: name, exact: true });
  });
}

test('an empty first value means the default repertoire; value 1 is active again after each delimiter', () => {
  // Korean written by an encoder that designates KS X 1001 once: after "=" the G1 set stays, as
  // nothing else is declared for GR bytes; ASCII is back in G0.
  const sets = new CharacterSets('\\ISO 2022 IR 149');
  assert.deepEqual(sets.decode(hex('1b 24 29 43 c8 ab 5e b1 e6 b5 bf'), 'person-name'), { text: '홍^길동', exact: true });
  // No escape sequence at all: the GR bytes are read in the one G1 set the terms declare.
  assert.deepEqual(sets.decode(hex('c8 ab 5e b1 e6 b5 bf'), 'person-name'), { text: '홍^길동', exact: true });
  // JIS X 0208 left active before "^" by a careless encoder: the 2-byte G0 set reads 5E as half
  // a character, so the reset happens at the next control character or the value's end only.
  const japanese = new CharacterSets('\\ISO 2022 IR 87');
  assert.deepEqual(japanese.decode(hex('1b 24 42 3b 33 45 44 0d 41'), 'text'), { text: '山田\rA', exact: true });
});

test('single-byte code extensions switch G1 within a value (ISO 2022 IR 100 with IR 144 and IR 126)', () => {
  const sets = new CharacterSets('ISO 2022 IR 100\\ISO 2022 IR 144\\ISO 2022 IR 126');
  // "Müller^" Latin-1, then ESC - L Cyrillic, then after "^" Latin-1 again, then ESC - F Greek.
  const bytes = Buffer.concat([hex('4d fc 6c 6c 65 72 3d 1b 2d 4c'), hex('bb ee da 63 65 dc d1 79 70 d3'), hex('5e e9 3d 1b 2d 46 c4 e9 ef ed f5 f3 e9 ef f2')]);
  assert.deepEqual(sets.decode(bytes, 'person-name'), { text: 'Müller=Люкceмбypг^é=Διονυσιος', exact: true });
});

test('JIS X 0212 (ISO 2022 IR 159) is read through ESC $ ( D', () => {
  const sets = new CharacterSets('\\ISO 2022 IR 87\\ISO 2022 IR 159');
  assert.deepEqual(sets.decode(hex('1b 24 28 44 30 21 1b 28 42 5e 41'), 'person-name'), { text: '丂^A', exact: true });
});

test('plain single-valued character sets decode as before', () => {
  assert.deepEqual(new CharacterSets('ISO_IR 100').decode(hex('4d fc 6c 6c 65 72'), 'person-name'), { text: 'Müller', exact: true });
  assert.deepEqual(new CharacterSets('ISO_IR 192').decode(Buffer.from('Müller^Jörg', 'utf8'), 'person-name'), { text: 'Müller^Jörg', exact: true });
  assert.deepEqual(new CharacterSets('ISO_IR 13').decode(hex('d4 cf c0 de'), 'person-name'), { text: 'ﾔﾏﾀﾞ', exact: true });
  assert.deepEqual(new CharacterSets('ISO_IR 166').decode(hex('a1'), 'string'), { text: 'ก', exact: true });
  // Spelling is read leniently.
  assert.deepEqual(new CharacterSets('iso-ir 100').decode(hex('fc'), 'string'), { text: 'ü', exact: true });
});

test('bytes that cannot be read as declared become U+FFFD and the result says so; nothing throws', () => {
  assert.deepEqual(new CharacterSets('ISO_IR 192').decode(hex('4d dc 4c'), 'string'), { text: 'M\ufffdL', exact: false });
  // Undeclared GR bytes are read as ISO 8859-1, which is a guess.
  assert.deepEqual(new CharacterSets(undefined).decode(hex('4d fc'), 'string'), { text: 'Mü', exact: false });
  // An escape sequence designating a set PS3.3 does not list, a truncated one, a lone lead byte.
  assert.equal(new CharacterSets('\\ISO 2022 IR 149').decode(hex('41 1b 24 29 5a 42'), 'string').exact, false);
  assert.deepEqual(new CharacterSets('\\ISO 2022 IR 87').decode(hex('41 1b'), 'string'), { text: 'A\ufffd', exact: false });
  assert.deepEqual(new CharacterSets('\\ISO 2022 IR 149').decode(hex('41 c8'), 'string'), { text: 'A\ufffd', exact: false });
  assert.deepEqual(new CharacterSets('\\ISO 2022 IR 87').decode(hex('1b 24 42 3b'), 'string'), { text: '\ufffd', exact: false });
});

test('header fields: an identifier that cannot be read as declared is kept byte for byte, a name with U+FFFD, both as findings', () => {
  const values = new Map<number, Buffer>([
    [headerTags.specificCharacterSet, Buffer.from('ISO_IR 192')],
    [headerTags.patientId, hex('4d dc 4c 4c 45 52 31')],
    [headerTags.patientName, hex('4d dc 6c 6c 65 72')],
  ]);
  const { fields, findings } = decodeHeaderFields(values);
  assert.equal(fields.patientId, 'MÜLLER1');
  assert.equal(fields.patientName, 'M\ufffdller');
  assert.deepEqual(findings.map((finding) => finding.attribute).sort(), ['PatientID', 'PatientName']);
});

test('header fields: an unknown character set term is a finding; an identifier too long to be read is named', () => {
  const values = new Map<number, Buffer>([[headerTags.specificCharacterSet, Buffer.from('KLINGON')]]);
  const decoded = decodeHeaderFields(values, new Map([[headerTags.patientId, 70_000], [headerTags.studyDescription, 70_000]]));
  assert.equal(decoded.unreadIdentifier, 'PatientID');
  assert.deepEqual(decoded.findings.map((finding) => finding.attribute), ['SpecificCharacterSet', 'StudyDescription']);
});
