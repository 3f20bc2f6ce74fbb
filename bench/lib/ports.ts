import { createServer } from 'node:net';

/**
 * Loopback ports of everything the bench starts. The service's and the HTTP and MLLP baselines'
 * are free ports the system hands out when the bench starts (port 0), so that a gateway a
 * developer runs, or a second bench on the same machine, is not disturbed; Orthanc and storescp
 * each run in a network namespace of their own, where fixed ports cannot collide.
 */
export const benchHost = '127.0.0.1';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, benchHost, () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || !address) throw new Error('no free loopback port');
  return address.port;
}

const [fhir, hl7, mpps, connectivity, admin, mllp, dicom, http, mllpBaseline, mllpInsert] = await Promise.all(Array.from({ length: 10 }, () => freePort()));

export const gatewayPorts = { fhir: fhir!, hl7: hl7!, mpps: mpps!, connectivity: connectivity!, admin: admin!, mllp: mllp!, dicom: dicom! } as const;

export const baselinePorts = {
  http: http!,
  mllp: mllpBaseline!,
  mllpInsert: mllpInsert!,
  orthancDicom: 24242,
  orthancHttp: 18042,
  storescp: 21113,
} as const;
