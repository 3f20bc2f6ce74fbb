import type { GatewayConfig } from '../config/env.ts';
import type { HttpSurface } from '../platform/http/surface.ts';
import type { Services } from '../platform/services.ts';

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

export const surfaceCatalogue: SurfaceCatalogue = {
  http: [],
  tcp: [],
};
