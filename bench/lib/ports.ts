import { createServer } from 'node:net';

/**
 * Loopback ports of everything the bench starts. The service's and the HTTP and MLLP baselines'
 * are free ports the system hands out (port 0), picked again before each service starts
 * (refreshPorts): a port free when a 20-minute bench began may be another program's by its end.
 * So a gateway a developer runs, or a second bench on the same machine, is not disturbed; Orthanc
 * and storescp each run in a network namespace of their own, where fixed ports cannot collide.
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

export const gatewayPorts = { fhir: 0, hl7: 0, mpps: 0, connectivity: 0, admin: 0, dicomweb: 0, mllp: 0, dicom: 0 };

export const baselinePorts = {
  http: 0,
  mllp: 0,
  mllpInsert: 0,
  orthancDicom: 24242,
  orthancHttp: 18042,
  storescp: 21113,
};

/** Picks free ports for the service and the HTTP and MLLP baselines (all at once, so they differ). */
export async function refreshPorts(): Promise<void> {
  const [fhir, hl7, mpps, connectivity, admin, dicomweb, mllp, dicom, http, mllpBaseline, mllpInsert] = await Promise.all(Array.from({ length: 11 }, () => freePort()));
  Object.assign(gatewayPorts, { fhir, hl7, mpps, connectivity, admin, dicomweb, mllp, dicom });
  Object.assign(baselinePorts, { http, mllp: mllpBaseline, mllpInsert });
}

await refreshPorts();
