/**
 * DIMSE status codes (PS3.7 annex C, PS3.4 B.2.3 for C-STORE, F.7.2 for MPPS), and the one place
 * that turns a failure into a status.
 */
export const status = {
  success: 0x0000,
  // PS3.4 B.2.3: C-STORE warning; the instance is stored.
  coercionOfDataElements: 0xb000,
  // PS3.4 B.2.3: C-STORE failures.
  outOfResources: 0xa700,
  cannotUnderstand: 0xc000,
  dataSetDoesNotMatchSopClass: 0xa900,
  // PS3.7 C.5: general statuses used by N- and C- services.
  sopClassNotSupported: 0x0122,
  processingFailure: 0x0110,
  noSuchSopInstance: 0x0112,
  duplicateSopInstance: 0x0111,
  invalidAttributeValue: 0x0106,
  missingAttribute: 0x0120,
  missingAttributeValue: 0x0121,
  unrecognizedOperation: 0x0211,
  resourceLimitation: 0x0213,
  classInstanceConflict: 0x0119,
} as const;

/** PS3.7 C.1.2: warnings (0001, 0107, 0116, Bxxx) report a completed operation, as success does. */
export function isCompleted(code: number): boolean {
  return code === status.success || code === 0x0001 || code === 0x0107 || code === 0x0116 || (code & 0xf000) === 0xb000;
}
