import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import type { Database } from '../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, createTestApiKey } from '../support/http.ts';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { createTestSite } from '../support/sites.ts';

export interface FhirClient {
  site: SiteContext;
  key: string;
  request(method: string, url: string, options?: { body?: unknown; headers?: Record<string, string> }): Promise<LightMyRequestResponse>;
}

/** A fresh site with its own API key, talking to the FHIR origin in-process. */
export async function fhirClient(app: FastifyInstance, database: Database, options: { patientPutCreates?: boolean } = {}): Promise<FhirClient> {
  const site = await createTestSite(database, options);
  const key = await createTestApiKey(database, site);
  return {
    site,
    key,
    request(method, url, { body, headers = {} } = {}) {
      return app.inject({
        method: method as 'GET',
        url,
        headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/fhir+json' } : {}), ...headers },
        ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
    },
  };
}

export function buildFhirOrigin(database: Database): Promise<FastifyInstance> {
  return buildTestOrigin(fhirSurface, database);
}

export const patientBody = (identifier: string, extra: Record<string, unknown> = {}) => ({
  resourceType: 'Patient',
  identifier: [{ system: 'urn:mrn', value: identifier }],
  name: [{ family: 'Doe', given: ['Jane'] }],
  ...extra,
});

/** An in-process FHIR origin on a database of its own for the tests of one file, made before them and closed after. */
export interface FhirOrigin {
  db: TestDatabase;
  app: FastifyInstance;
}

export function useFhirOrigin(): FhirOrigin {
  return useOrigin(false);
}

/** The same origin, also listening on a loopback port. */
export interface ListeningFhirOrigin extends FhirOrigin {
  /** http://127.0.0.1:{port} */
  url: string;
}

export function useListeningFhirOrigin(): ListeningFhirOrigin {
  return useOrigin(true);
}

// One hook each way: top-level hooks of a file are not chained, so the listen cannot be a hook of its own.
function useOrigin(listen: boolean): ListeningFhirOrigin {
  const origin = {} as ListeningFhirOrigin;
  before(async () => {
    origin.db = await createTestDatabase();
    origin.app = await buildFhirOrigin(origin.db.database);
    if (!listen) return;
    await origin.app.listen({ port: 0, host: '127.0.0.1' });
    origin.url = `http://127.0.0.1:${(origin.app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await origin.app.close();
    await origin.db.drop();
  });
  return origin;
}

/** `clinical-gateway serve` with only the FHIR surface, on a database of its own for one test file. */
export interface FhirServiceProcess {
  db: TestDatabase;
  /** The running service, if any: set by `start`, cleared by whoever stops it. */
  service: ServiceProcess | undefined;
  start(env: NodeJS.ProcessEnv): Promise<ServiceProcess>;
}

const onlyFhirOnAFreePort = { CG_FHIR_PORT: '0', CG_HL7_PORT: '', CG_MPPS_PORT: '', CG_CONNECTIVITY_PORT: '', CG_ADMIN_PORT: '', CG_DICOMWEB_PORT: '', CG_MLLP_PORT: '', CG_DICOM_PORT: '' };

export function useFhirServiceProcess(): FhirServiceProcess {
  const state = { service: undefined } as FhirServiceProcess;
  state.start = async (env) => (state.service = await startServiceProcess({ CG_DATABASE_URL: state.db.connectionString, ...onlyFhirOnAFreePort, ...env }, 1));
  before(async () => {
    state.db = await createTestDatabase();
  });
  after(async () => {
    await state.service?.stop('SIGKILL');
    await state.db?.drop();
  });
  return state;
}
