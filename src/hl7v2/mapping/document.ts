/**
 * OBX with an ED (encapsulated data) or RP (reference pointer) value to FHIR DocumentReference,
 * as the HL7 v2-to-FHIR IG's "OBX[DocumentReference]" map does: an R4 Observation cannot hold an
 * attachment. OBX-3 gives the type, OBX-5 the attachment, OBX-11 the document status, OBX-14
 * (else OBR-7) the date. The identifier is the result's identity, as for Observations.
 * https://build.fhir.org/ig/HL7/v2-to-fhir/ConceptMap-segment-obx-to-documentreference.html
 */
import type { Attachment, DocumentReference, Identifier } from '@medplum/fhirtypes';
import { componentOf, fieldOf, hl7Null, isEmptyRepetition, valueOf, type Segment } from '../er7/message.ts';
import { errorCodes, error, type Problem } from '../problems.ts';
import { parseHl7DateTime, type LocalTimeSetting } from '../../domain/time-zones/hl7-timestamp.ts';
import { readObservationIdentifier } from './observation-identifier.ts';
import { resultIdentity, type ResultContext } from './result-identity.ts';
import { resultStatusCode } from './result-status.ts';

export const documentValueTypes = new Set(['ED', 'RP']);

// HL7 table 0191 (type of referenced data) with table 0291 subtypes to MIME types.
const mainTypes: Record<string, string> = { AP: 'application', APPLICATION: 'application', IM: 'image', IMAGE: 'image', AU: 'audio', AUDIO: 'audio', TEXT: 'text', TX: 'text', VIDEO: 'video', MULTIPART: 'multipart' };

function contentType(type: string, subtype: string): string {
  const main = mainTypes[type.trim().toUpperCase()];
  const sub = subtype.trim().toLowerCase();
  if (!main) return 'application/octet-stream';
  if (/^[a-z0-9][a-z0-9.+-]*$/.test(sub)) return `${main}/${sub}`;
  return main === 'text' ? 'text/plain' : 'application/octet-stream';
}

export function mapObxDocument(obx: Segment, context: ResultContext & LocalTimeSetting): { document?: DocumentReference; formerIdentifiers: Identifier[]; problems: Problem[]; assumedUtc?: boolean } {
  const problems: Problem[] = [];
  const at = (field: number, component?: number) => ({ segment: 'OBX', sequence: obx.sequence, field, ...(component ? { component } : {}) });
  const type = valueOf(obx, 2).trim().toUpperCase();
  const value = fieldOf(obx, 5).filter((rep) => !isEmptyRepetition(rep));
  if (value.length !== 1) {
    problems.push(error(errorCodes.dataTypeError, value.length === 0 ? `OBX-5 is empty for value type ${type}` : `OBX-5 repeats ${value.length} times for value type ${type}`, at(5)));
    return { formerIdentifiers: [], problems };
  }
  const rep = value[0]!;
  let attachment: Attachment | undefined;
  if (type === 'RP') {
    // RP: pointer ^ application id ^ type of data ^ subtype (section 2.A.65).
    const pointer = componentOf(rep, 1).trim();
    if (!/^[a-z][a-z0-9+.-]*:\S+$/i.test(pointer)) problems.push(error(errorCodes.dataTypeError, `OBX-5.1 "${pointer}" is not a URL`, at(5, 1)));
    else attachment = { url: pointer, contentType: contentType(componentOf(rep, 3), componentOf(rep, 4)) };
  } else {
    // ED: source application ^ type of data ^ subtype ^ encoding ^ data (section 2.A.24).
    const encoding = componentOf(rep, 4).trim().toUpperCase();
    const data = componentOf(rep, 5).trim();
    let base64: string | undefined;
    if (encoding === 'BASE64' && /^[A-Za-z0-9+/\s]*={0,2}$/.test(data)) base64 = data.replace(/\s+/g, '');
    else if (encoding === 'HEX' && /^([0-9A-Fa-f]{2})*$/.test(data)) base64 = Buffer.from(data, 'hex').toString('base64');
    else if (encoding === 'A' || encoding === '') base64 = Buffer.from(data, 'utf8').toString('base64');
    if (base64 === undefined || base64 === '') problems.push(error(errorCodes.dataTypeError, `OBX-5 data is empty or not valid ${encoding || 'text'}`, at(5, 5)));
    else attachment = { contentType: contentType(componentOf(rep, 2), componentOf(rep, 3)), data: base64 };
  }
  const read = readObservationIdentifier(obx);
  problems.push(...read.problems);
  const { code: status, problems: statusProblems } = resultStatusCode(obx, context.obr);
  problems.push(...statusProblems);
  if (problems.some((p) => p.severity === 'E') || !attachment || !read.identifier) return { formerIdentifiers: [], problems };

  const identity = resultIdentity(obx, context, read.identifier);
  const document: DocumentReference = {
    resourceType: 'DocumentReference',
    identifier: [identity.identifier],
    // Table 0085 D and W withdraw a result; anything else is the current document.
    status: status === 'D' || status === 'W' ? 'entered-in-error' : 'current',
    type: read.identifier.concept,
    content: [{ attachment }],
  };
  if (['P', 'R', 'S', 'I'].includes(status)) document.docStatus = 'preliminary';
  else if (status === 'C') document.docStatus = 'amended';
  else if (status === 'F' || status === 'U') document.docStatus = 'final';
  const when = [valueOf(obx, 14), valueOf(context.obr, 7)].map((v) => v.trim()).find((v) => v !== '' && v !== hl7Null);
  const parsed = when ? parseHl7DateTime(when, context.timeZone) : undefined;
  // DocumentReference.date is an instant: only a full date and time qualifies.
  if (parsed && /T/.test(parsed.dateTime)) document.date = parsed.dateTime;
  return { document, formerIdentifiers: identity.formerIdentifiers, problems, assumedUtc: parsed?.assumedUtc === true };
}
