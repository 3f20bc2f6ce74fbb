import assert from 'node:assert/strict';
import { indexInstance } from '../../src/domain/imaging/index-instance.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { hl7v2OnlySurface } from '../../src/hl7v2/surface.ts';
import type { Database } from '../../src/storage/database.ts';
import { receivedInstance } from '../domain/imaging/fixtures.ts';
import { message } from '../hl7v2/support.ts';
import { buildTestOrigin, createTestApiKey } from '../support/http.ts';

export interface ClinicalPatient {
  identifier: string;
  studyInstanceUid: string;
}

/**
 * A patient as the site's feeds would make her: an ADT^A04 (female, born 1980-05-17), an ORU^R01
 * with a high cholesterol (245 mg/dL, range <200, flag H) over HL7 v2 HTTP, and a CT study whose
 * DICOM header disagrees on sex (O) and has no birth date.
 */
export async function admitPatientWithResults(database: Database, site: SiteContext, identifier: string): Promise<ClinicalPatient> {
  const hl7 = await buildTestOrigin(hl7v2OnlySurface, database);
  try {
    const key = await createTestApiKey(database, site);
    const send = async (body: Buffer) => {
      const response = await hl7.inject({ method: 'POST', url: '/v2/ingest', headers: { 'content-type': 'text/plain', 'x-api-key': key }, payload: body });
      assert.equal(response.json().ack_code, 'AA', response.body);
    };
    const pid = `PID|1||${identifier}^^^HOSP^MR||Martin^Claire||19800517|F|||12 Rue Haute^^Lyon^^69001^FR`;
    await send(message(['EVN|A04|20261120080000+0100', pid, 'PV1|1|O'], { type: 'ADT^A04^ADT_A01' }));
    await send(
      message(
        [
          pid,
          'OBR|1|ORD-77|FIL-77^LAB|24331-1^Lipid panel^LN|||20261120083000+0100',
          'OBX|1|NM|2093-3^Cholesterol [Mass/volume] in Serum or Plasma^LN|1|245|mg/dL^mg/dL^UCUM|<200|H|||F|||20261120083000+0100',
          'OBX|2|NM|2571-8^Triglyceride [Mass/volume] in Serum or Plasma^LN|1|120|mg/dL^mg/dL^UCUM|<150|N|||F|||20261120083000+0100',
        ],
        { type: 'ORU^R01^ORU_R01' },
      ),
    );
  } finally {
    await hl7.close();
  }
  const instance = receivedInstance({ patientId: identifier, patientName: 'MARTIN^CLAIRE', patientSex: 'O', modality: 'CT', studyDescription: 'CT chest', studyDate: '20261121', studyTime: '101500' });
  delete instance.patientBirthDate;
  await database.transaction((tx) => indexInstance(tx, site, instance));
  return { identifier, studyInstanceUid: instance.studyInstanceUid };
}
