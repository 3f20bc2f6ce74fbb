/**
 * Clinical reads from the command line go to the data access log like the administration app's
 * (surface `cli`, no user or key: the actor is the operator holding the database's credentials).
 * The record is written before anything is printed: when it cannot be, the data is not shown.
 */
import { dataAccessRecorder, type DataAccess } from '../domain/audit/data-access.ts';
import type { Database } from '../storage/database.ts';

export type OperatorRead = Pick<DataAccess, 'interaction' | 'resourceType' | 'resourceIds' | 'patientIds' | 'query'>;

export async function recordOperatorRead(database: Database, siteId: string, read: OperatorRead): Promise<void> {
  let failure: object | undefined;
  const recorder = dataAccessRecorder(database);
  recorder.record(
    { siteId, occurredAt: new Date(), userId: null, keyId: null, remoteAddress: null, surface: 'cli', ...read },
    { error: (details) => (failure = details) },
  );
  await recorder.settled();
  if (failure) throw new Error('the data access log could not be written, so the clinical data is not shown');
}
