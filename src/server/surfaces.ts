import { adminSurface } from '../admin/surface.ts';
import type { GatewayConfig } from '../config/env.ts';
import { connectivitySurface } from '../connectivity/surface.ts';
import { startDicomListener } from '../dicom/listener.ts';
import { fhirSurface } from '../fhir/surface.ts';
import { startMllpListener } from '../hl7v2/surface.ts';
import { mppsSurface } from '../mpps/surface.ts';
import type { HttpSurface } from '../platform/http/surface.ts';
import type { Services } from '../platform/services.ts';
import { hl7Surface } from './hl7-origin.ts';

export interface RunningListener {
  port: number;
  close(): Promise<void>;
}

export interface TcpSurface {
  name: 'mllp' | 'dicom';
  start(services: Services, address: { host: string; port: number }): Promise<RunningListener>;
}

/** Every surface of the product and the port variable that enables it. */
export interface SurfaceCatalogue {
  http: { surface: HttpSurface; port: keyof GatewayConfig['ports'] }[];
  tcp: { surface: TcpSurface; port: keyof GatewayConfig['ports'] }[];
}

// Shutdown must end within 10 s (SIGTERM): listeners get 7 s to finish the work in flight.
const closeGraceMs = 7_000;

export const surfaceCatalogue: SurfaceCatalogue = {
  http: [
    { surface: fhirSurface, port: 'fhir' },
    { surface: hl7Surface, port: 'hl7' },
    { surface: mppsSurface, port: 'mpps' },
    { surface: connectivitySurface, port: 'connectivity' },
    { surface: adminSurface, port: 'admin' },
  ],
  tcp: [
    { surface: { name: 'mllp', start: (services, address) => startMllpListener(services, address) }, port: 'mllp' },
    { surface: { name: 'dicom', start: (services, address) => startDicomListener(services, { ...address, closeGraceMs }) }, port: 'dicom' },
  ],
};

