import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';

const portVariables = {
  fhir: 'CG_FHIR_PORT',
  hl7: 'CG_HL7_PORT',
  mllp: 'CG_MLLP_PORT',
  dicom: 'CG_DICOM_PORT',
  admin: 'CG_ADMIN_PORT',
  mpps: 'CG_MPPS_PORT',
  connectivity: 'CG_CONNECTIVITY_PORT',
  dicomweb: 'CG_DICOMWEB_PORT',
} as const;

export type Surface = keyof typeof portVariables;

export interface TwoWorkerService {
  db: TestDatabase;
  service: ServiceProcess;
  env: NodeJS.ProcessEnv;
}

/**
 * For the test file: `serve` with CG_WORKERS=2 on a database and data folder of its own, the
 * surfaces named on free ports and the others off; killed, and its database dropped, after the
 * file's tests. The fields are set by the `before` hook this adds: read them in the tests, not in
 * another top-level hook (those do not wait for one another).
 */
export function useTwoWorkerService(dataDirPrefix: string, surfaces: Surface[]): TwoWorkerService {
  const running = {} as TwoWorkerService;
  before(async () => {
    running.db = await createTestDatabase();
    const ports = Object.fromEntries(Object.entries(portVariables).map(([surface, variable]) => [variable, surfaces.includes(surface as Surface) ? '0' : '']));
    running.env = { CG_DATABASE_URL: running.db.connectionString, CG_DATA_DIR: mkdtempSync(join(tmpdir(), dataDirPrefix)), CG_WORKERS: '2', ...ports };
    running.service = await startServiceProcess(running.env, surfaces.length);
  });
  after(async () => {
    await running.service?.stop('SIGKILL');
    await running.db?.drop();
  });
  return running;
}
