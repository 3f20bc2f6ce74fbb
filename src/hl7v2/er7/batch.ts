/**
 * HL7 batches, HL7 v2.5.1 section 2.10.3: [FHS] {[BHS] {MSH ...} [BTS]} [FTS]. Interface engines
 * forward files of results this way, and some send several messages back to back in one body
 * with no envelope at all; both are split here into their messages, each then taken exactly as if
 * it had come alone.
 *
 * The split works on bytes, before any charset is chosen: segment ids and line ends are ASCII in
 * every charset the reader accepts, and each message keeps its own bytes, so its own MSH-18 still
 * decides how it is read.
 */
const envelopeIds = new Set(['FHS', 'BHS', 'BTS', 'FTS']);
const utf8Bom = [0xef, 0xbb, 0xbf];

/** A batch or file header or trailer, split into fields by its own field separator (FHS-1/BHS-1). */
export interface EnvelopeSegment {
  /** fields[n] is field n as received (not unescaped); fields[1] is the field separator. */
  fields: string[];
}

export interface Batch {
  bhs?: EnvelopeSegment;
  bts?: EnvelopeSegment;
  messages: Uint8Array[];
}

export interface SplitBatch {
  fhs?: EnvelopeSegment;
  fts?: EnvelopeSegment;
  batches: Batch[];
  /** Mismatches between trailers' counts and what was received (for the answer's warnings). */
  notes: string[];
}

interface Line {
  id: string;
  start: number;
  end: number;
}

/**
 * The body's batches and messages when it is a batch (begins with FHS or BHS) or holds several
 * messages; undefined for one message (or for something that is no HL7 at all), which takes the
 * ordinary single-message path.
 */
export function splitBatch(input: Uint8Array): SplitBatch | undefined {
  const lines = segmentLines(input);
  const first = lines[0];
  if (!first) return undefined;
  const enveloped = first.id === 'FHS' || first.id === 'BHS';
  if (!enveloped && (first.id !== 'MSH' || lines.filter((line) => line.id === 'MSH').length < 2)) return undefined;

  const split: SplitBatch = { batches: [], notes: [] };
  let batch: Batch | undefined;
  let message: { start: number; end: number } | undefined;
  const current = (): Batch => {
    if (!batch) {
      batch = { messages: [] };
      split.batches.push(batch);
    }
    return batch;
  };
  const endMessage = () => {
    if (message) current().messages.push(input.subarray(message.start, message.end));
    message = undefined;
  };
  for (const line of lines) {
    if (line.id === 'MSH') {
      endMessage();
      message = { start: line.start, end: line.end };
      continue;
    }
    if (!envelopeIds.has(line.id)) {
      // A segment of the message in hand; one outside any message belongs to none, and is named.
      if (message) message.end = line.end;
      else split.notes.push(`a ${line.id} segment outside any message (not after an MSH) was ignored`);
      continue;
    }
    endMessage();
    const segment = envelopeSegment(input.subarray(line.start, line.end));
    if (line.id === 'FHS') split.fhs = segment;
    else if (line.id === 'FTS') split.fts = segment;
    else if (line.id === 'BHS') {
      batch = { bhs: segment, messages: [] };
      split.batches.push(batch);
    } else {
      current().bts = segment;
      checkCount(segment, current().messages.length, 'BTS-1 (batch message count)', split.notes);
      batch = undefined;
    }
  }
  endMessage();
  if (split.fts) checkCount(split.fts, split.batches.length, 'FTS-1 (file batch count)', split.notes);
  return split;
}

/** Every message of the split, in order. */
export function batchMessages(split: SplitBatch): Uint8Array[] {
  return split.batches.flatMap((batch) => batch.messages);
}

function checkCount(segment: EnvelopeSegment, received: number, name: string, notes: string[]): void {
  const declared = (segment.fields[1] ?? '').trim();
  if (declared !== '' && /^\d+$/.test(declared) && Number(declared) !== received) {
    notes.push(`${name} is ${declared} but ${received} ${name.startsWith('FTS') ? 'batches' : 'messages'} were received`);
  }
}

function envelopeSegment(bytes: Uint8Array): EnvelopeSegment {
  const text = Buffer.from(bytes).toString('latin1').replace(/[\r\n]+$/, '');
  const id = text.slice(0, 3);
  const separator = text[3] ?? '|';
  const rest = text.slice(4).split(separator);
  // FHS-1 and BHS-1 are the separator itself (as MSH-1 is); trailers start at field 1.
  const fields = id === 'FHS' || id === 'BHS' ? [id, separator, ...rest] : [id, ...rest];
  return { fields };
}

/**
 * Lines that begin with a segment id followed by a delimiter (so not a continuation or free
 * text), with their byte span including the line end. A UTF-8 byte order mark and blank lines
 * before the first segment are skipped; other text there gives no lines.
 */
function segmentLines(input: Uint8Array): Line[] {
  const lines: Line[] = [];
  let start = bomLength(input);
  while (start < input.length) {
    let end = start;
    while (end < input.length && input[end] !== 0x0d && input[end] !== 0x0a) end++;
    let next = end;
    while (next < input.length && (input[next] === 0x0d || input[next] === 0x0a)) next++;
    const id = Buffer.from(input.subarray(start, start + 3)).toString('latin1');
    const separator = input[start + 3];
    if (/^[A-Z][A-Z0-9]{2}$/.test(id) && separator !== undefined && separator > 0x20 && separator < 0x7f && !/[A-Za-z0-9]/.test(String.fromCharCode(separator))) {
      lines.push({ id, start, end: next });
    } else if (lines.length > 0) {
      lines[lines.length - 1]!.end = next;
    } else if (!isBlank(input.subarray(start, end))) {
      // Text before the first segment: not HL7, which the single-message reader answers as such.
      return [];
    }
    start = next;
  }
  return lines;
}

function bomLength(input: Uint8Array): number {
  return input.length >= 3 && input[0] === utf8Bom[0] && input[1] === utf8Bom[1] && input[2] === utf8Bom[2] ? 3 : 0;
}

function isBlank(bytes: Uint8Array): boolean {
  return bytes.every((byte) => byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0a);
}
