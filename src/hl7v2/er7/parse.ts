/**
 * ER7 (pipe-and-hat) reader for one HL7 v2 message, HL7 v2.5.1 chapter 2.
 *
 * Written here because no maintained npm package does the whole job: @medplum/core's Hl7Message
 * neither unescapes nor honours MSH-18, and the older packages (simple-hl7, hl7-standard,
 * hl7parser) decode bytes as UTF-8 regardless of MSH-18 and leave escapes undecoded.
 *
 * Bytes are turned into characters once, in the charset that MSH-18 declares (else the sender's
 * agreed default), then split by the delimiters of MSH-1/MSH-2, then each leaf is unescaped.
 * Splitting before unescaping is what makes \F\ \S\ \T\ \R\ safe.
 */
import { decodeBytes, isSevenBit, supportedCharset, type SupportedCharset } from './charset.ts';
import type { Delimiters } from './delimiters.ts';
import { unescapeText } from './escape.ts';
import type { Field, Hl7Message, Segment } from './message.ts';
import { errorCodes, error, warning, type Problem } from '../problems.ts';

export interface ParseOptions {
  /** Charset for messages whose MSH-18 is empty (the integration client's default). */
  defaultCharset: SupportedCharset;
  /** Largest message accepted, in bytes. */
  maxBytes: number;
}

export interface ParseResult {
  /** Present whenever an MSH segment could be read, even if later segments are broken. */
  message?: Hl7Message;
  /** Errors (severity E) make the message unacceptable; warnings (W) do not. */
  problems: Problem[];
}

const utf8Bom = [0xef, 0xbb, 0xbf];
const c1Control = /[\x80-\x9f]/;
const segmentName = /^[A-Z][A-Z0-9]{2}$/;

export function parseEr7(input: Uint8Array, options: ParseOptions): ParseResult {
  let bytes = input;
  let hadBom = false;
  if (bytes.length >= 3 && bytes[0] === utf8Bom[0] && bytes[1] === utf8Bom[1] && bytes[2] === utf8Bom[2]) {
    bytes = bytes.subarray(3);
    hadBom = true;
  }
  const problems: Problem[] = [];
  const tooLarge = input.length > options.maxBytes;
  if (tooLarge) {
    problems.push(error(errorCodes.dataTypeError, `the message is ${input.length} bytes; the limit is ${options.maxBytes} bytes`));
    // Only the header is read, to address the acknowledgement.
    bytes = bytes.subarray(0, Math.min(bytes.length, 64 * 1024));
  }
  // Delimiters and MSH-18 are ASCII, so a byte-transparent view finds them before the charset is known.
  const latin = Buffer.from(bytes).toString('latin1');
  const start = latin.search(/\S/);
  if (start < 0 || latin.slice(start, start + 3) !== 'MSH') {
    const batch = /^(FHS|BHS)/.test(latin.slice(start));
    problems.push(
      error(
        errorCodes.segmentSequenceError,
        batch
          ? 'HL7 batches (FHS/BHS, section 2.10.3) are not accepted; send each message on its own'
          : 'the content is not an HL7 v2 message: it does not begin with an MSH segment',
      ),
    );
    return { problems };
  }
  const delimiterResult = readDelimiters(latin.slice(start));
  if ('problem' in delimiterResult) return { problems: [...problems, delimiterResult.problem] };
  const { delimiters } = delimiterResult;
  if (delimiterResult.warning) problems.push(delimiterResult.warning);

  const charsetResult = chooseCharset(bytes, latin.slice(start), delimiters, options.defaultCharset, hadBom, tooLarge);
  problems.push(...charsetResult.problems);
  let decoded = charsetResult.text;
  if (charsetResult.charset === '8859/1' && c1Control.test(decoded)) {
    // Bytes 0x80-0x9F are control characters in ISO 8859-1, which no text uses; Windows senders
    // that say (or are taken to mean) 8859/1 write Windows-1252 there: O'Brien's apostrophe as
    // 0x92. Read so, as WHATWG decoders read every "ISO-8859-1" label, with a warning.
    decoded = new TextDecoder('windows-1252').decode(bytes);
    problems.push(warning(errorCodes.dataTypeError, 'bytes 0x80-0x9F are control characters in ISO 8859-1; they were read as Windows-1252 characters (curly quotes, dashes, the euro sign)', { segment: 'MSH', sequence: 1, field: 18 }));
  }
  const text = decoded.slice(decoded.search(/\S/));

  const segments: Segment[] = [];
  const counts = new Map<string, number>();
  const lines = text.split(/\r\n|\r|\n/);
  for (let index = 0; index < lines.length; index++) {
    // Spaces and tabs after a segment's last field are padding (fixed-width exporters, hand-edited
    // files), not data: kept, they would end up in values and be echoed into the ACK's MSH-12.
    const line = lines[index]!.replace(/[ \t]+$/, '');
    if (line === '') continue;
    const name = line.slice(0, 3);
    if (!segmentName.test(name) || (line.length > 3 && line[3] !== delimiters.field)) {
      problems.push(
        error(errorCodes.segmentSequenceError, `line ${index + 1} is not a segment: it must begin with a three-character segment id followed by '${delimiters.field}'`),
      );
      continue;
    }
    if (name === 'MSH' && segments.length > 0) {
      problems.push(error(errorCodes.segmentSequenceError, 'the body holds more than one message; send one message per request or frame', { segment: 'MSH', sequence: 2 }));
      break;
    }
    if (segments.length === 0 && name !== 'MSH') break;
    const sequence = (counts.get(name) ?? 0) + 1;
    counts.set(name, sequence);
    const fields = splitFields(line, name, delimiters, charsetResult.charset);
    // A hex escape (\X00\) can make a control character too, so leaves are checked when an escape is present.
    if (controlCharacter.test(line) || line.includes(delimiters.escape)) problems.push(...cleanControlCharacters(fields, name, sequence));
    segments.push({ name, position: segments.length + 1, sequence, fields, raw: line });
  }
  if (segments.length === 0) return { problems };
  return { message: { delimiters, charset: charsetResult.charset, segments }, problems };
}

function readDelimiters(text: string): { delimiters: Delimiters; warning?: Problem } | { problem: Problem } {
  const field = text[3];
  const bad = (message: string) => ({ problem: error(errorCodes.dataTypeError, message, { segment: 'MSH', sequence: 1, field: 2 }) });
  // Delimiters are printable 7-bit characters other than letters and digits (section 2.5.4), so
  // they mean the same in every supported charset.
  const isDelimiter = (ch: string) => /^[\x21-\x7e]$/.test(ch) && !/[A-Za-z0-9]/.test(ch);
  if (!field || !isDelimiter(field)) return bad('MSH-1 (field separator) is missing or not a delimiter character');
  const end = text.indexOf(field, 4);
  const lineEnd = text.slice(4).search(/[\r\n]/);
  const encoding = text.slice(4, end < 0 ? (lineEnd < 0 ? undefined : 4 + lineEnd) : end);
  let chars = encoding;
  let note: Problem | undefined;
  // Some exporters write MSH-2 with the escape character doubled ("^~\\&"), as a string literal
  // would; read as the four standard characters, since a subcomponent separator equal to the
  // escape character could never be meant.
  if (chars.length === 5 && chars[2] === chars[3]) {
    chars = chars[0]! + chars[1]! + chars[2]! + chars[4]!;
    note = warning(errorCodes.dataTypeError, `MSH-2 "${encoding}" repeats the escape character; read as "${chars}"`, { segment: 'MSH', sequence: 1, field: 2 });
  }
  // 4 characters, or 5 from v2.7 on (the fifth is the truncation character, which is not used here).
  if (chars.length !== 4 && chars.length !== 5) return bad(`MSH-2 (encoding characters) must be 4 characters, got ${JSON.stringify(encoding)}`);
  const set = new Set([field, ...chars]);
  if (set.size !== chars.length + 1 || ![...chars].every(isDelimiter)) return bad(`MSH-2 (encoding characters) ${JSON.stringify(encoding)} must be distinct delimiter characters`);
  const delimiters: Delimiters = { field, component: chars[0]!, repetition: chars[1]!, escape: chars[2]!, subcomponent: chars[3]! };
  return note ? { delimiters, warning: note } : { delimiters };
}

function chooseCharset(
  bytes: Uint8Array,
  text: string,
  d: Delimiters,
  fallback: SupportedCharset,
  hadBom: boolean,
  truncated: boolean,
): { charset: SupportedCharset; text: string; problems: Problem[] } {
  const header = text.split(/[\r\n]/, 1)[0]!.split(d.field);
  // header[0] is "MSH" and header[1] is MSH-2, so MSH-n is header[n - 1].
  const declared = (header[17] ?? '').split(d.repetition)[0]!.split(d.component)[0]!.trim();
  const location = { segment: 'MSH', sequence: 1, field: 18 };
  const problems: Problem[] = [];
  if (declared !== '') {
    const charset = supportedCharset(declared);
    if (charset) {
      const decoded = decodeBytes(bytes, charset);
      if (decoded !== undefined || truncated) return { charset, text: decoded ?? Buffer.from(bytes).toString('latin1'), problems };
      return {
        charset,
        text: Buffer.from(bytes).toString('latin1'),
        problems: [error(errorCodes.dataTypeError, `the message declares MSH-18 "${declared}" but its bytes are not valid ${declared}`, location)],
      };
    }
    if (isSevenBit(bytes)) {
      problems.push(warning(errorCodes.tableValueNotFound, `MSH-18 "${declared}" is not a supported character set; the message is 7-bit ASCII and was read as such`, location));
      return { charset: 'ASCII', text: Buffer.from(bytes).toString('latin1'), problems };
    }
    return {
      charset: 'ASCII',
      text: Buffer.from(bytes).toString('latin1'),
      problems: [error(errorCodes.tableValueNotFound, `MSH-18 "${declared}" is not a supported character set (ASCII, 8859/1, UNICODE UTF-8)`, location)],
    };
  }
  const charset: SupportedCharset = hadBom ? 'UNICODE UTF-8' : fallback;
  const decoded = decodeBytes(bytes, charset);
  if (decoded !== undefined) return { charset, text: decoded, problems };
  if (charset === 'ASCII' || charset === 'UNICODE UTF-8') {
    // Undeclared 8-bit text that is not valid in the default: ISO 8859-1 reads every byte, and the
    // warning tells the sender to declare MSH-18.
    problems.push(
      warning(errorCodes.dataTypeError, `MSH-18 is empty and the bytes are not valid ${charset}; read as ISO 8859-1 (declare MSH-18 to remove this warning)`, location),
    );
  }
  return { charset: '8859/1', text: Buffer.from(bytes).toString('latin1'), problems };
}

function splitFields(line: string, name: string, d: Delimiters, charset: SupportedCharset): Field[] {
  const parts = line.split(d.field);
  const fields: Field[] = [[]];
  let from = 1;
  if (name === 'MSH') {
    // MSH-1 is the field separator itself and MSH-2 the encoding characters: neither is split.
    fields.push([[[d.field]]], [[[parts[1] ?? '']]]);
    from = 2;
  }
  for (let i = from; i < parts.length; i++) fields.push(splitField(parts[i]!, d, charset));
  return fields;
}

// Most fields hold no delimiter at all; the fast paths skip the nested splits (a 10 KB ORU parses
// about twice as fast with them).
function splitField(text: string, d: Delimiters, charset: SupportedCharset): Field {
  if (text.indexOf(d.repetition) < 0 && text.indexOf(d.component) < 0 && text.indexOf(d.subcomponent) < 0) {
    return [[[unescapeText(text, d, charset)]]];
  }
  const repetitions = text.split(d.repetition);
  const field: Field = new Array(repetitions.length);
  for (let r = 0; r < repetitions.length; r++) {
    const components = repetitions[r]!.split(d.component);
    const repetition: string[][] = new Array(components.length);
    for (let c = 0; c < components.length; c++) {
      const component = components[c]!;
      if (component.indexOf(d.subcomponent) < 0) repetition[c] = [unescapeText(component, d, charset)];
      else repetition[c] = component.split(d.subcomponent).map((leaf) => unescapeText(leaf, d, charset));
    }
    field[r] = repetition;
  }
  return field;
}

/**
 * C0 control characters other than TAB, CR and LF (and DEL), which FHIR text cannot hold either.
 * ESC is left alone: it begins ISO 2022 shifts, text in a character set the service does not read,
 * which must not be stored with its shifts removed.
 */
const controlCharacter = /[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/;
const strayControls = /[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]/g;

/**
 * NUL is no character of HL7 v2 text (section 2.7: data values are displayable characters) and
 * cannot be stored as text: each field holding one is an error at its location (AE, never a
 * "retry later" that the sender would repeat for ever), and the NUL is replaced (U+FFFD) so that
 * the acknowledgement and the log can quote the value.
 *
 * Other control characters are strays in text that is otherwise sound (a form feed between the
 * pages of a report, a bell pasted into a name): a form feed or vertical tab becomes a line break,
 * the others are removed, and a warning names the field. Refusing the message for them would hold
 * back a result over a character no reader sees.
 */
function cleanControlCharacters(fields: Field[], segment: string, sequence: number): Problem[] {
  const problems: Problem[] = [];
  fields.forEach((field, index) => {
    let nul = false;
    const removed = new Set<string>();
    for (const repetition of field) {
      for (const component of repetition) {
        for (let leaf = 0; leaf < component.length; leaf++) {
          let value = component[leaf]!;
          if (!controlCharacter.test(value)) continue;
          if (value.includes('\0')) {
            value = value.replaceAll('\0', '\uFFFD');
            nul = true;
          }
          for (const ch of value.match(new RegExp(controlCharacter.source, 'g')) ?? []) removed.add(`U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
          component[leaf] = value.replace(/[\x0b\x0c]/g, '\n').replace(strayControls, '');
        }
      }
    }
    const at = { segment, sequence, field: index };
    if (nul) problems.push(error(errorCodes.dataTypeError, `${segment}-${index} contains a NUL character, which HL7 v2 text cannot hold`, at));
    else if (removed.size > 0) {
      problems.push(warning(errorCodes.dataTypeError, `${segment}-${index} contains control characters (${[...removed].join(', ')}), which text cannot hold: a form feed or vertical tab was stored as a line break, any other was removed`, at));
    }
  });
  return problems;
}
