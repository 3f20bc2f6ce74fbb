/**
 * Fixed loopback ports of everything the bench starts, away from the product's defaults so that
 * a gateway a developer runs on this machine is not disturbed.
 */
export const benchHost = '127.0.0.1';

export const gatewayPorts = {
  fhir: 18080,
  hl7: 18081,
  mpps: 18082,
  connectivity: 18083,
  admin: 18084,
  dicomweb: 18085,
  mllp: 12575,
  dicom: 21112,
} as const;

export const baselinePorts = {
  http: 18180,
  mllp: 12576,
  orthancDicom: 24242,
  orthancHttp: 18042,
  storescp: 21113,
} as const;
