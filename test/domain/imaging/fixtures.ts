import { createHash, randomInt } from 'node:crypto';
import type { ReceivedInstance } from '../../../src/domain/imaging/index-instance.ts';

/** A fresh, valid DICOM UID under a test root (PS3.5 9.1: no leading zeros). */
export function uid(): string {
  return `2.25.${randomInt(1, 2 ** 47)}${randomInt(100000, 999999)}`;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A received instance as the DICOM listener would hand it over; override what a test needs. */
export function receivedInstance(overrides: Partial<ReceivedInstance> = {}): ReceivedInstance {
  const sopInstanceUid = overrides.sopInstanceUid ?? uid();
  return {
    sopInstanceUid,
    sopClassUid: '1.2.840.10008.5.1.4.1.1.4',
    transferSyntaxUid: '1.2.840.10008.1.2.1',
    studyInstanceUid: uid(),
    seriesInstanceUid: uid(),
    patientId: '4MR1',
    patientName: 'CompressedSamples^MR1',
    patientBirthDate: '19700101',
    patientSex: 'F',
    studyDate: '20040826',
    studyTime: '185059',
    accessionNumber: 'ACC1',
    studyDescription: 'MR brain',
    modality: 'MR',
    seriesNumber: '1',
    seriesDescription: 'T1',
    instanceNumber: '1',
    storagePath: `dicom/${sopInstanceUid}.dcm`,
    sizeBytes: 9830,
    sha256: sha256(sopInstanceUid),
    callingAeTitle: 'STORESCU',
    remoteAddress: '127.0.0.1',
    ...overrides,
  };
}
