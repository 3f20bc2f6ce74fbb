// One case per kind of bad input the planner handles: the answer class (AR/AE/warning), the
// table 0357 code and the location an interface engine will see.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Observation } from '@medplum/fhirtypes';
import { describeLocation } from '../../../src/hl7v2/problems.ts';
import { parseEr7 } from '../../../src/hl7v2/er7/parse.ts';
import { planMessage } from '../../../src/hl7v2/intake/plan.ts';

function plan(msh: string, segments: string[]) {
  const message = parseEr7(Buffer.from([msh, ...segments].join('\r')), { defaultCharset: 'UNICODE UTF-8', maxBytes: 1 << 20 }).message!;
  const result = planMessage(message);
  return { ...result, found: result.problems.map((p) => `${p.severity} ${p.code} ${describeLocation(p.location) ?? ''}`.trim()) };
}
const msh = (type: string, extra: { controlId?: string; processing?: string; version?: string } = {}) =>
  `MSH|^~\\&|LAB|HOSP|GW|SITE|20240101||${type}|${extra.controlId ?? 'C1'}|${extra.processing ?? 'P'}|${extra.version ?? '2.5.1'}`;
const pid = 'PID|1||ID1^^^H^MR||Doe^Jane||19800101|F';

const cases: { name: string; msh: string; segments: string[]; rejected: boolean; found: string[] }[] = [
  { name: 'unsupported processing id', msh: msh('ADT^A01', { processing: 'X' }), segments: [pid], rejected: true, found: ['E 202 MSH[1]-11'] },
  { name: 'unsupported version', msh: msh('ADT^A01', { version: '3.0' }), segments: [pid], rejected: true, found: ['E 203 MSH[1]-12'] },
  { name: 'unsupported type', msh: msh('QRY^A19'), segments: [pid], rejected: true, found: ['E 200 MSH[1]-9.1'] },
  { name: 'unsupported event', msh: msh('ORU^R30'), segments: [pid], rejected: true, found: ['E 201 MSH[1]-9.2'] },
  { name: 'empty processing id is a warning', msh: msh('ADT^A01', { processing: '' }), segments: [pid], rejected: false, found: ['W 101 MSH[1]-11'] },
  { name: 'missing control id', msh: msh('ADT^A01', { controlId: '' }), segments: [pid], rejected: false, found: ['E 101 MSH[1]-10'] },
  { name: 'missing PID', msh: msh('ADT^A04'), segments: ['EVN|A04', 'PV1|1|I'], rejected: false, found: ['E 100 PID[1]'] },
  { name: 'bad birth date', msh: msh('ADT^A01'), segments: ['PID|1||ID1^^^H^MR||Doe||19801301'], rejected: false, found: ['E 102 PID[1]-7.1'] },
  { name: 'unknown sex and patient class are warnings', msh: msh('ADT^A01'), segments: ['PID|1||ID1^^^H^MR||Doe||19800101|Q', 'PV1|1|Z||||||||||||||||||||||||||||||||||||||||||notadate'], rejected: false, found: ['W 103 PID[1]-8', 'W 103 PV1[1]-2', 'W 102 PV1[1]-44'] },
  { name: 'A40 without MRG', msh: msh('ADT^A40'), segments: [pid], rejected: false, found: ['E 100 PID[1]'] },
  { name: 'A40 with empty MRG-1', msh: msh('ADT^A40'), segments: [pid, 'MRG|""'], rejected: false, found: ['E 101 MRG[1]-1'] },
  { name: 'MRG before any PID', msh: msh('ADT^A40'), segments: ['MRG|X1', pid, 'MRG|X2'], rejected: false, found: ['E 100 MRG[1]'] },
  { name: 'OBX-11 not in table 0085', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1', 'OBX|1|NM|1-1^A^LN||1||||||Q'], rejected: false, found: ['E 103 OBX[1]-11'] },
  { name: 'OBX-2 empty with a value', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1', 'OBX|1||1-1^A^LN||1||||||F'], rejected: false, found: ['E 101 OBX[1]-2'] },
  { name: 'NM that is not a number', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1', 'OBX|1|NM|1-1^A^LN||5,6||||||F'], rejected: false, found: ['E 102 OBX[1]-5'] },
  { name: 'NM with a comparator and no number', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1', 'OBX|1|NM|1-1^A^LN||>high||||||F'], rejected: false, found: ['E 102 OBX[1]-5'] },
  { name: 'NM with a comparator is a warning', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1', 'OBX|1|NM|1-1^A^LN||>500||||||F'], rejected: false, found: ['W 102 OBX[1]-5'] },
  { name: 'ADT of HL7 v2.1: the event in EVN-1', msh: msh('ADT', { version: '2.1' }), segments: ['EVN|A01|20240101', pid], rejected: false, found: [] },
  { name: 'ADT of HL7 v2.1 without EVN', msh: msh('ADT', { version: '2.1' }), segments: [pid], rejected: true, found: ['E 201 MSH[1]-9.2'] },
  { name: 'SN that is not structured numeric', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1', 'OBX|1|SN|1-1^A^LN||~^5^+^x||||||F'], rejected: false, found: ['E 102 OBX[1]-5'] },
  { name: 'bad OBX-14', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1', 'OBX|1|NM|1-1^A^LN||1||||||F|||2024-01-01'], rejected: false, found: ['E 102 OBX[1]-14'] },
  { name: 'bad DT value', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1', 'OBX|1|DT|1-1^A^LN||20241345||||||F'], rejected: false, found: ['E 102 OBX[1]-5'] },
  { name: 'ED whose data is not Base64', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1', 'OBX|1|ED|1-1^A^LN||LAB^Application^PDF^Base64^not*base64!||||||F'], rejected: false, found: ['E 102 OBX[1]-5.5'] },
  { name: 'RP whose pointer is not a URL', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1', 'OBX|1|RP|1-1^A^LN||just text^APP^TEXT^HTML||||||F'], rejected: false, found: ['E 102 OBX[1]-5.1'] },
  { name: 'ED repeated', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1', 'OBX|1|ED|1-1^A^LN||^TEXT^PLAIN^A^x~^TEXT^PLAIN^A^y||||||F'], rejected: false, found: ['E 102 OBX[1]-5'] },
  { name: 'ORU without OBX is a warning', msh: msh('ORU^R01'), segments: [pid, 'OBR|1||O1'], rejected: false, found: ['W 100 OBX[1]'] },
];

for (const c of cases) {
  test(`plan: ${c.name}`, () => {
    const result = plan(c.msh, c.segments);
    assert.equal(result.rejected, c.rejected);
    assert.deepEqual(result.found, c.found);
    assert.equal(result.plan === undefined, c.found.some((f) => f.startsWith('E')));
  });
}

/** A PV1 segment with the given fields (by number) set. */
function pv1(fields: Record<number, string>): string {
  const values = Array.from({ length: Math.max(...Object.keys(fields).map(Number)) }, (_, i) => fields[i + 1] ?? '');
  return ['PV1', ...values].join('|');
}

test('a transfer (A02) and a discharge (A03) update the visit of their visit number: new location, discharge time', () => {
  const transfer = plan(msh('ADT^A02^ADT_A02'), ['EVN|A02', pid, pv1({ 1: '1', 2: 'I', 3: 'W2^202^B', 6: 'W1^101^A', 19: 'V100' })]);
  assert.deepEqual(transfer.found, []);
  const moved = transfer.plan?.kind === 'demographics' ? transfer.plan.visit : undefined;
  assert.equal(moved?.visitNumber, 'V100');
  assert.equal(moved?.location?.text, 'W2 / 202 / B');
  const discharge = plan(msh('ADT^A03^ADT_A03'), ['EVN|A03', pid, pv1({ 1: '1', 2: 'I', 3: 'W2^202^B', 19: 'V100', 44: '20240101080000+0000', 45: '20240105113000+0000' })]);
  assert.deepEqual(discharge.found, []);
  const ended = discharge.plan?.kind === 'demographics' ? discharge.plan.visit : undefined;
  assert.equal(ended?.visitNumber, 'V100');
  assert.equal(ended?.admitTime, '2024-01-01T08:00:00+00:00');
  assert.equal(ended?.dischargeTime, '2024-01-05T11:30:00+00:00');
  const badTime = plan(msh('ADT^A03'), [pid, pv1({ 1: '1', 2: 'I', 19: 'V100', 44: '20240101', 45: 'notatime' })]);
  assert.deepEqual(badTime.found, ['W 102 PV1[1]-45']);
});

test('add and update person (A28, A31) update the demographics and take no visit from their pseudo PV1', () => {
  for (const event of ['A28', 'A31']) {
    const result = plan(msh(`ADT^${event}^ADT_A05`), ['EVN|' + event, 'PID|1||ID1^^^H^MR||Doe^Jane||19800101|F', 'PV1|1|N']);
    assert.deepEqual(result.found, [], event);
    assert.equal(result.plan?.kind, 'demographics', event);
    assert.equal(result.plan?.kind === 'demographics' ? result.plan.visit : 'none', undefined, event);
    assert.equal(result.plan?.kind === 'demographics' ? result.plan.patient.name?.[0]?.family : undefined, 'Doe', event);
  }
  // An admission's PV1 is still its visit.
  const admit = plan(msh('ADT^A01'), [pid, 'PV1|1|I|W1^101']);
  assert.equal(admit.plan?.kind === 'demographics' ? admit.plan.visit?.patientClass : undefined, 'I');
});

test('NM sent with a comparator, as many laboratories do, keeps it in the quantity', () => {
  const result = plan(msh('ORU^R01'), [pid, 'OBR|1||O1', 'OBX|1|NM|1-1^A^LN||>500|mg/dL|||||F', 'OBX|2|NM|1-2^B^LN||<= 0.05|ng/mL|||||F', 'OBX|3|NM|1-3^C^LN||7.5|mmol/L|||||F']);
  assert.deepEqual(result.found, ['W 102 OBX[1]-5', 'W 102 OBX[2]-5']);
  const observations = result.plan!.kind === 'results' ? result.plan!.groups.flatMap((g) => g.results).map((r) => r.resource as Observation) : [];
  assert.deepEqual(observations[0]!.valueQuantity, { value: 500, comparator: '>', unit: 'mg/dL', code: 'mg/dL' });
  assert.deepEqual(observations[1]!.valueQuantity, { value: 0.05, comparator: '<=', unit: 'ng/mL', code: 'ng/mL' });
  assert.deepEqual(observations[2]!.valueQuantity, { value: 7.5, unit: 'mmol/L', code: 'mmol/L' });
});

test('the HL7 null "" in OBX-6, OBX-7 and OBX-8 is no unit, range or interpretation', () => {
  const result = plan(msh('ORU^R01'), [pid, 'OBR|1||O1', 'OBX|1|NM|1-1^A^LN||95|""|""|""|||F', 'OBX|2|NM|1-2^B^LN||1.2|""^^""|||||F']);
  assert.deepEqual(result.found, []);
  const observations = result.plan!.kind === 'results' ? result.plan!.groups.flatMap((g) => g.results).map((r) => r.resource as Observation) : [];
  assert.deepEqual(
    observations.map((o) => [o.valueQuantity, o.referenceRange, o.interpretation]),
    [
      [{ value: 95 }, undefined, undefined],
      [{ value: 1.2 }, undefined, undefined],
    ],
  );
});

test('ID and IS values (codes of an HL7 or a local table) become a coded value without a system', () => {
  const result = plan(msh('ORU^R01'), [pid, 'OBR|1||O1', 'OBX|1|ID|1-1^A^LN||Y||||||F', 'OBX|2|IS|1-2^B^L||POS||||||F']);
  assert.deepEqual(result.found, []);
  const observations = result.plan!.kind === 'results' ? result.plan!.groups.flatMap((g) => g.results).map((r) => r.resource as Observation) : [];
  assert.deepEqual(observations.map((o) => o.valueCodeableConcept), [{ coding: [{ code: 'Y' }] }, { coding: [{ code: 'POS' }] }]);
});

test('a DTM result value without an offset, read as UTC for want of a time zone, is warned about like OBX-14', () => {
  const result = plan(msh('ORU^R01'), [pid, 'OBR|1||O1|||20241005', 'OBX|1|TS|1-1^A^LN||200410051230||||||F']);
  assert.deepEqual(result.found, ['W 102']);
  const observations = result.plan!.kind === 'results' ? result.plan!.groups.flatMap((g) => g.results).map((r) => r.resource as Observation) : [];
  assert.equal(observations[0]!.valueDateTime, '2004-10-05T12:30:00Z');
  assert.deepEqual(plan(msh('ORU^R01'), [pid, 'OBR|1||O1|||20241005', 'OBX|1|TS|1-1^A^LN||200410051230-0500||||||F']).found, []);
});

test('an empty OBX-11 takes the report status of OBR-25, with a warning; with neither, the result is refused', () => {
  const obr = (status: string) => `OBR|1||O1|X^X^L|||20241005||||||||||||||||||${status}`;
  const taken = plan(msh('ORU^R01'), [pid, obr('F'), 'OBX|1|NM|1-1^A^LN||5|mg|||||', 'OBX|2|ED|1-2^B^LN||^AP^PDF^Base64^JVBERi0=||||||""', obr('A'), 'OBX|1|NM|1-3^C^LN||6|mg|||||']);
  assert.deepEqual(taken.found, ['W 101 OBX[1]-11', 'W 101 OBX[2]-11', 'W 101 OBX[3]-11']);
  const resources = taken.plan!.kind === 'results' ? taken.plan!.groups.flatMap((g) => g.results).map((r) => r.resource) : [];
  assert.deepEqual(
    resources.map((r) => (r.resourceType === 'Observation' ? r.status : r.docStatus)),
    ['final', 'final', 'preliminary'],
  );
  assert.deepEqual(plan(msh('ORU^R01'), [pid, obr(''), 'OBX|1|NM|1-1^A^LN||5|mg|||||']).found, ['E 101 OBX[1]-11']);
  assert.deepEqual(plan(msh('ORU^R01'), [pid, obr('Y'), 'OBX|1|NM|1-1^A^LN||5|mg|||||']).found, ['E 101 OBX[1]-11']);
});

test('an OBX before any OBR, with no order number, is stored with a warning', () => {
  const result = plan(msh('ORU^R01'), [pid, 'OBX|1|NM|1-1^A^LN||5|mg|||||F|||20241005120000-0500', 'OBX|2|NM|1-2^B^LN||6|mg|||||F|||20241005120000-0500']);
  assert.deepEqual(result.found, ['W 100 OBX[1]']);
  const ids = result.plan!.kind === 'results' ? result.plan!.groups.flatMap((g) => g.results).map((r) => r.resource.identifier![0]!.value) : [];
  assert.deepEqual(ids, ['HOSP|1-1@20241005120000-0500|http://loinc.org^1-1|', 'HOSP|1-2@20241005120000-0500|http://loinc.org^1-2|']);
  // An ORC number gives the results their order: nothing to warn about.
  assert.deepEqual(plan(msh('ORU^R01'), [pid, 'ORC|RE|P1|F1', 'OBX|1|NM|1-1^A^LN||5|mg|||||F']).found, []);
});

test('an OBR or OBX before the first PID belongs to no patient: AE, not filed under the next PID', () => {
  const result = plan(msh('ORU^R01'), ['OBR|1||O1', 'OBX|1|NM|1-1^A^LN||5|mg|||||F', pid, 'OBR|1||O2', 'OBX|1|NM|1-2^B^LN||6|mg|||||F']);
  assert.deepEqual(result.found, ['E 100 OBR[1]', 'E 100 OBX[1]']);
  assert.equal(result.plan, undefined);
});

test('SN forms: comparator, range and ratio', () => {
  const result = plan(msh('ORU^R01'), [pid, 'OBR|1||O1', 'OBX|1|SN|1-1^A^LN||<^5|mg|||||F', 'OBX|2|SN|1-2^B^LN||^1^-^3|mg|||||F', 'OBX|3|SN|1-3^C^LN||^1^:^128||||||F']);
  assert.deepEqual(result.found, []);
  const observations = result.plan!.kind === 'results' ? result.plan!.groups.flatMap((g) => g.results).map((r) => r.resource as Observation) : [];
  assert.deepEqual(observations[0]!.valueQuantity, { value: 5, comparator: '<', unit: 'mg', code: 'mg' });
  assert.deepEqual(observations[1]!.valueRange, { low: { value: 1, unit: 'mg', code: 'mg' }, high: { value: 3, unit: 'mg', code: 'mg' } });
  assert.deepEqual(observations[2]!.valueRatio, { numerator: { value: 1 }, denominator: { value: 128 } });
});

test('result identifiers are the order, OBX-3 and OBX-4, never the set ids, and do not depend on the control id', () => {
  const segments = [pid, 'ORC|RE|P1|F1', 'OBR|1|P1|F1^LAB', 'OBX|1|NM|1-1^A^LN||1||||||F', 'OBX|2|NM|1-2^B^LN|2|2||||||F', 'OBX|3|NM|1-3^C^99LOCAL||3||||||F', 'OBR|2|P2|F2^LAB', 'OBX|1|NM|1-1^A^LN||3||||||F'];
  const a = plan(msh('ORU^R01', { controlId: 'A' }), segments).plan!;
  const b = plan(msh('ORU^R01', { controlId: 'B' }), segments).plan!;
  const ids = (p: typeof a) => (p.kind === 'results' ? p.groups.flatMap((g) => g.results).map((r) => r.resource.identifier![0]!.value) : []);
  assert.deepEqual(ids(a), ['HOSP|F1^LAB|http://loinc.org^1-1|', 'HOSP|F1^LAB|http://loinc.org^1-2|2', 'HOSP|F1^LAB|99LOCAL^1-3|', 'HOSP|F2^LAB|http://loinc.org^1-1|']);
  assert.deepEqual(ids(a), ids(b), 'the control id does not enter the identifier');
  // A coding system without a FHIR URI was dropped from the key before it entered it (migration 0510).
  const former = a.kind === 'results' ? a.groups.flatMap((g) => g.results).map((r) => (r.formerIdentifiers ?? []).map((i) => i.value)) : [];
  assert.deepEqual(former, [[], [], ['HOSP|F1^LAB|^1-3|'], []]);
});

test('XTN rules: e-mail, composed numbers, fax and mobile', () => {
  const result = plan(msh('ADT^A01'), ['PID|1||ID1^^^H^MR||Doe||||||||^NET^Internet^jane@example.org~^PRN^CP^^1^555^1234567~^PRN^FX^^^555^7654321|(555)000-1111^WPN^PH']);
  const patient = result.plan!.kind === 'demographics' ? result.plan!.patient : undefined;
  assert.deepEqual(patient!.telecom, [
    { system: 'email', value: 'jane@example.org', use: 'home' },
    { system: 'phone', value: '+1 (555) 1234567', use: 'mobile' },
    { system: 'fax', value: '(555) 7654321', use: 'home' },
    { system: 'phone', value: '(555)000-1111', use: 'work' },
  ]);
});
