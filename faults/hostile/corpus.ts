import { readFileSync } from 'node:fs';
import { fixtureFiles, readFixture } from '../../test/support/fixtures.ts';
import { storeStream } from '../clients/dicom-pdu.ts';
import { datasetOffset } from '../samples/dicom-instances.ts';
import { admitMessage, resultMessage } from '../samples/hl7-messages.ts';

/**
 * Seeds of the fuzz campaign, every one derived from the fixtures in test/fixtures (byte-exact
 * public samples) or synthesised in the shape the surfaces accept, so that mutations start from
 * inputs that reach deep into each parser.
 */

const sender = { sendingApplication: 'FUZZ_APP', sendingFacility: 'FUZZ_FAC' };

export function hl7v2Seeds(): Buffer[] {
  return [
    ...fixtureFiles('hl7v2', '.hl7').map((f) => readFileSync(f)),
    ...fixtureFiles('hl7v3', '.hl7').map((f) => readFileSync(f)),
    Buffer.from(admitMessage(sender, 'SEED1', 'MRN-SEED-1')),
    Buffer.from(resultMessage(sender, 'SEED2', 'MRN-SEED-1', 5.4)),
  ];
}

export function mllpSeeds(): Buffer[] {
  const frame = (b: Buffer) => Buffer.concat([Buffer.from([0x0b]), b, Buffer.from([0x1c, 0x0d])]);
  const messages = hl7v2Seeds();
  return [
    ...messages.map(frame),
    Buffer.concat([frame(messages[0]!), frame(messages[1]!), frame(messages[2]!)]),
    Buffer.concat([Buffer.from('junk before the frame'), frame(messages[3]!)]),
  ];
}

export function hl7v3Seeds(): Buffer[] {
  return fixtureFiles('hl7v3', '.xml').map((f) => readFileSync(f));
}

const patientId = '3f2a1c4e-0b5d-4e6f-8a7b-9c0d1e2f3a4b';

/** One valid resource of each writable type; the Patient carries a fixture's demographics. */
export function fhirBodySeeds(): Buffer[] {
  const subject = { reference: `Patient/${patientId}` };
  const resources = [
    {
      resourceType: 'Patient',
      identifier: [{ system: 'urn:oid:1.2.3.4', value: 'PIX-1' }],
      name: [{ family: 'Lestrade', given: ['G'], text: 'G Lestrade' }],
      gender: 'male',
      birthDate: '1962-04-02',
      telecom: [{ system: 'phone', value: '+44 20 7946 0000' }, { system: 'email', value: 'g@example.test' }],
      address: [{ text: '221B Baker Street', state: 'London', country: 'GB', postalCode: 'NW1 6XE' }],
    },
    { resourceType: 'Condition', subject, clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'active' }] }, code: { coding: [{ system: 'http://snomed.info/sct', code: '38341003' }] } },
    { resourceType: 'AllergyIntolerance', patient: subject, clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }] }, code: { text: 'penicillin' } },
    { resourceType: 'Observation', status: 'final', subject, code: { coding: [{ system: 'http://loinc.org', code: '2345-7', display: 'Glucose' }] }, valueQuantity: { value: 5.4, unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' }, effectiveDateTime: '2026-01-02T10:20:00Z' },
    { resourceType: 'Procedure', status: 'completed', subject, code: { coding: [{ system: 'http://snomed.info/sct', code: '80146002' }] }, performedDateTime: '2026-01-02' },
    { resourceType: 'DocumentReference', status: 'current', subject, type: { coding: [{ system: 'http://loinc.org', code: '34133-9' }] }, content: [{ attachment: { contentType: 'text/plain', data: 'aGVsbG8=' } }] },
  ];
  return resources.map((r) => Buffer.from(JSON.stringify(r)));
}

/**
 * Transaction and batch Bundles of those resources, and one whose entry is nested thousands deep
 * (copying or serialising such an entry once exhausted the stack: a 500).
 */
export function fhirBundleSeeds(): Buffer[] {
  const resources = fhirBodySeeds().map((body) => JSON.parse(body.toString()) as { resourceType: string });
  const bundles = ['transaction', 'batch'].map((type) =>
    JSON.stringify({
      resourceType: 'Bundle',
      type,
      entry: resources.map((resource, i) => ({ fullUrl: `urn:uuid:00000000-0000-4000-8000-00000000000${i}`, resource, request: { method: 'POST', url: resource.resourceType } })),
    }),
  );
  const deep = `{"resourceType":"Bundle","type":"batch","entry":[{"resource":{"resourceType":"Patient","extension":${'['.repeat(20_000)}${']'.repeat(20_000)}},"request":{"method":"POST","url":"Patient"}}]}`;
  return [...bundles, deep].map((text) => Buffer.from(text));
}

export function fhirSearchSeeds(): Buffer[] {
  return [
    'identifier=urn:oid:1.2.3.4|PIX-1',
    'name=lestrade&birthdate=1962-04-02&gender=male',
    'birthdate=ge1960-01-01&birthdate=lt1970-01-01&_count=50&_sort=-_lastUpdated',
    `patient=Patient/${patientId}&clinical-status=active&code=http://snomed.info/sct|38341003`,
    `patient=${patientId}&code=|2345-7,http://loinc.org|`,
    `patient=Patient/${patientId}&type=http://loinc.org|34133-9&_total=accurate`,
    `patient=Patient/${patientId}&status=final`,
    '_id=3f2a1c4e-0b5d-4e6f-8a7b-9c0d1e2f3a4b&_lastUpdated=gt2026-01-01T00:00:00Z',
    '_count=1000&unknown=1',
  ].map((q) => Buffer.from(q));
}

interface IndexRow {
  file: string;
  sopClassUid: string;
  sopInstanceUid: string;
  transferSyntaxUid: string;
  studyInstanceUid: string;
}

function dicomIndex(): IndexRow[] {
  const [header, ...rows] = readFixture('dicom/dicom-index.tsv').toString('utf8').trim().split('\n');
  const columns = header!.split('\t');
  const at = (name: string) => columns.indexOf(name);
  return rows.map((line) => {
    const cells = line.split('\t');
    return {
      file: cells[at('file')]!,
      sopClassUid: cells[at('sop_class_uid')]!,
      sopInstanceUid: cells[at('sop_instance_uid')]!,
      transferSyntaxUid: cells[at('transfer_syntax_uid')]!,
      studyInstanceUid: cells[at('study_instance_uid')]!,
    };
  });
}

export function mppsSeeds(): Buffer[] {
  return dicomIndex().flatMap((row, i) => [
    Buffer.from(JSON.stringify({ sop_instance_uid: `${row.sopInstanceUid}.${i}`, study_uid: row.studyInstanceUid, status: 'IN PROGRESS', modality: 'MR', station_ae_title: 'MODALITY1', started_at: '2026-01-02T10:20:00Z' })),
    Buffer.from(JSON.stringify({ sop_instance_uid: `${row.sopInstanceUid}.${i}`, study_uid: row.studyInstanceUid, status: 'COMPLETED', ended_at: '2026-01-02T10:40:00+01:00', procedure_code: { code_value: 'P1', coding_scheme: 'LOCAL', code_meaning: 'Scan' } })),
  ]);
}

export interface DatasetSeed {
  file: string;
  bytes: Buffer;
  transferSyntaxUid: string;
  sopClassUid: string;
  sopInstanceUid: string;
}

export function dicomDatasetSeeds(): DatasetSeed[] {
  return dicomIndex().map((row) => {
    const file = readFixture(`dicom/${row.file}`);
    return { file: row.file, bytes: file.subarray(datasetOffset(file)), transferSyntaxUid: row.transferSyntaxUid, sopClassUid: row.sopClassUid, sopInstanceUid: row.sopInstanceUid };
  });
}

/** Whole associations, as bytes on the wire, storing each fixture. */
export function dicomPduSeeds(calledAe = 'FUZZSCP'): Buffer[] {
  return dicomDatasetSeeds().map((seed) => storeStream({ calledAe, sopClassUid: seed.sopClassUid, sopInstanceUid: seed.sopInstanceUid, transferSyntaxUid: seed.transferSyntaxUid, dataset: seed.bytes.subarray(0, 8192), fragment: 2048 }));
}
