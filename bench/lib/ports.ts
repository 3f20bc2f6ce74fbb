/**
 * Fixed loopback ports of everything the bench starts, away from the product's defaults so that
 * a gateway a developer runs on this machine is not disturbed.
 */
export const benchHost = '127.0.0.1';

/** BENCH_PORT_OFFSET shifts every port below, for two benches on one machine (0 by default). */
const offset = Number(process.env.BENCH_PORT_OFFSET ?? 0) || 0;

export const gatewayPorts = {
  fhir: 18080 + offset,
  hl7: 18081 + offset,
  mpps: 18082 + offset,
  connectivity: 18083 + offset,
  admin: 18084 + offset,
  dicomweb: 18085 + offset,
  mllp: 12575 + offset,
  dicom: 21112 + offset,
} as const;

export const baselinePorts = {
  http: 18180 + offset,
  mllp: 12576 + offset,
  orthancDicom: 24242 + offset,
  orthancHttp: 18042 + offset,
  storescp: 21113 + offset,
} as const;
