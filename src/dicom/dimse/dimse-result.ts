/** What a DIMSE service handler answers: a status, and what the response command carries. */
export interface DimseResult {
  status: number;
  /** PS3.7 C.4: Error Comment (0000,0902), at most 64 characters, never internals. */
  errorComment?: string;
  /** Overrides the Affected SOP Instance UID of the response (N-CREATE without one assigns it). */
  affectedSopInstanceUid?: string;
}
