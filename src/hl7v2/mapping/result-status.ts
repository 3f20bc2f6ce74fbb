/**
 * The status of one result (OBX-11, table 0085). OBX-11 is required, but instrument middleware
 * and older feeds leave it empty and give the status once for the whole report in OBR-25 (result
 * status, table 0123). The report's status is the sender's own word on its results, so it is
 * taken, as its 0085 equivalent, with a warning; with neither, the result is refused, since a
 * status cannot be guessed.
 */
import { hl7Null, valueOf, type Segment } from '../er7/message.ts';
import { errorCodes, error, warning, type Problem } from '../problems.ts';

// Table 0123 (OBR-25) to table 0085 (OBX-11). "A" (some results available) says nothing final of
// any one result, so preliminary; "Y" and "Z" (no order, no patient on record) are no status.
const fromReportStatus: Record<string, string> = { O: 'O', I: 'I', S: 'S', A: 'P', P: 'P', R: 'R', C: 'C', F: 'F', X: 'X' };

/** OBX-11's code (upper case), else OBR-25's equivalent; '' with an error when neither is usable. */
export function resultStatusCode(obx: Segment, obr: Segment | undefined): { code: string; problems: Problem[] } {
  const own = valueOf(obx, 11).trim().toUpperCase();
  if (own !== '' && own !== hl7Null) return { code: own, problems: [] };
  const at = { segment: 'OBX', sequence: obx.sequence, field: 11 };
  const report = valueOf(obr, 25).trim().toUpperCase();
  const code = fromReportStatus[report];
  if (!code) return { code: '', problems: [error(errorCodes.requiredFieldMissing, 'OBX-11 (observation result status) is empty', at)] };
  return {
    code,
    problems: [warning(errorCodes.requiredFieldMissing, `OBX-11 (observation result status) is empty; the report's status OBR-25 "${report}" was taken (as "${code}")`, at)],
  };
}
