/**
 * Decodes text values by Specific Character Set (0008,0005): PS3.3 C.12.1.1.2 and PS3.5 6.1.2.5
 * with its annexes H (Japanese), I (Korean) and J (Chinese).
 *
 * Value 1 names the character set active at the start of every value (no value 1: the default
 * repertoire, ISO-IR 6). With code extensions, escape sequences designate other sets into G0 or
 * G1 within a value; the value-1 sets are active again after every control character (CR, LF, TAB,
 * FF...), after each value delimiter and, in person names, after each component ("^") and group
 * ("=") delimiter (PS3.5 6.1.2.5.3). Delimiters are recognised only while G0 holds a single-byte
 * set: in a two-byte G0 set (JIS X 0208) those bytes are halves of characters.
 *
 * The escape-sequence state machine is this file's; each run of bytes in one set is read by the
 * WHATWG decoders Node ships with full ICU (no npm decoder implements DICOM's use of ISO 2022:
 * WHATWG's ISO-2022-JP knows neither G1 sets nor JIS X 0212, iconv-lite has no ISO 2022 at all).
 *
 * Decoding never fails: a byte that cannot be read as declared becomes U+FFFD and the result says
 * it is not exact, so the caller can answer a warning and, for an identifier, fall back to a
 * byte-for-byte reading that keeps distinct values distinct.
 */
import { TextDecoder } from 'node:util';
import { characterSetTerm, defaultRepertoire, designatedSet, type GraphicSet, type Iso2022Term, type WholeValueTerm } from './charset-terms.ts';

/** Which bytes end a value or a part of it, and so restore the value-1 sets (PS3.5 6.1.2.5.3). */
export type DelimiterRule = 'person-name' | 'string' | 'text';

export interface DecodedText {
  text: string;
  /** False when some bytes could not be read as the declared character sets say. */
  exact: boolean;
}

const esc = 0x1b;
const replacement = '\ufffd';
const delimiters: Record<DelimiterRule, ReadonlySet<number>> = {
  'person-name': new Set([0x5c, 0x5e, 0x3d]), // \ ^ =
  string: new Set([0x5c]),
  text: new Set(), // ST, LT, UT: one value, backslash is a character
};

const decoders = new Map<string, { fatal: TextDecoder; lenient: TextDecoder }>();
function decoderFor(label: string): { fatal: TextDecoder; lenient: TextDecoder } {
  let decoder = decoders.get(label);
  if (!decoder) {
    decoder = { fatal: new TextDecoder(label, { fatal: true, ignoreBOM: true }), lenient: new TextDecoder(label, { ignoreBOM: true }) };
    decoders.set(label, decoder);
  }
  return decoder;
}

function decodeWith(label: string, bytes: Uint8Array): DecodedText {
  const decoder = decoderFor(label);
  try {
    return { text: decoder.fatal.decode(bytes), exact: true };
  } catch {
    return { text: decoder.lenient.decode(bytes), exact: false };
  }
}

export class CharacterSets {
  /** Terms of Specific Character Set that name no character set this service knows. */
  readonly unknownTerms: readonly string[];
  readonly #whole: WholeValueTerm | undefined;
  readonly #initialG0: GraphicSet;
  readonly #initialG1: GraphicSet | undefined;
  /** The G1 set GR bytes are read in when none is designated: the first one the terms declare. */
  readonly #expectedG1: GraphicSet | undefined;

  /** `specificCharacterSet` as the dataset holds it: values separated by backslashes. */
  constructor(specificCharacterSet: string | undefined) {
    const values = (specificCharacterSet ?? '').replace(/[\0 ]+$/, '').split('\\');
    const unknown: string[] = [];
    const terms = values.map((value) => {
      const term = characterSetTerm(value);
      if (!term) unknown.push(value.trim());
      return term;
    });
    this.unknownTerms = unknown;
    const first = terms[0];
    this.#whole = first?.kind === 'whole-value' ? first : undefined;
    const initial: Iso2022Term = first?.kind === 'iso-2022' ? first : defaultRepertoire;
    // A two-byte set cannot be active where delimiters must be read: value 1 names G0 only when
    // it is a single-byte set, and ASCII is there otherwise.
    this.#initialG0 = initial.g0?.bytesPerCharacter === 1 ? initial.g0 : defaultRepertoire.g0!;
    this.#initialG1 = initial.g1;
    this.#expectedG1 = initial.g1 ?? terms.find((term): term is Iso2022Term => term?.kind === 'iso-2022' && term.g1 !== undefined)?.g1;
  }

  decode(bytes: Uint8Array, rule: DelimiterRule): DecodedText {
    if (this.#whole) return decodeWith(this.#whole.decoder, bytes);
    return new Iso2022Reader(this.#initialG0, this.#initialG1, this.#expectedG1, delimiters[rule]).read(bytes);
  }
}

/** One value through the ISO 2022 state machine: runs of bytes per decoder, decoded at the end. */
class Iso2022Reader {
  #g0: GraphicSet;
  #g1: GraphicSet | undefined;
  #pieces: DecodedText[] = [];
  #run: { decoder: string; bytes: number[] } | undefined;
  #exact = true;
  readonly initialG0: GraphicSet;
  readonly initialG1: GraphicSet | undefined;
  readonly delimiters: ReadonlySet<number>;

  constructor(initialG0: GraphicSet, initialG1: GraphicSet | undefined, expectedG1: GraphicSet | undefined, delimiters: ReadonlySet<number>) {
    this.initialG0 = initialG0;
    this.initialG1 = initialG1;
    this.delimiters = delimiters;
    this.#g0 = initialG0;
    this.#g1 = expectedG1;
  }

  read(bytes: Uint8Array): DecodedText {
    let i = 0;
    while (i < bytes.length) {
      const byte = bytes[i]!;
      if (byte === esc) {
        i = this.#escape(bytes, i);
      } else if (byte < 0x20 || byte === 0x7f) {
        this.#neutral(byte);
        this.#reset();
        i += 1;
      } else if (byte < 0x80) {
        i = this.#left(bytes, i);
      } else {
        i = this.#right(bytes, i);
      }
    }
    this.#flush();
    return { text: this.#pieces.map((piece) => piece.text).join(''), exact: this.#exact && this.#pieces.every((piece) => piece.exact) };
  }

  /** PS3.5 6.1.2.5.3: the value-1 sets again. A G1 set designated within the value stays when value 1 has none to restore. */
  #reset(): void {
    this.#g0 = this.initialG0;
    if (this.initialG1) this.#g1 = this.initialG1;
  }

  /** ESC, intermediate bytes 02/00-02/15, a final byte 03/00-07/14 (ISO/IEC 2022 13.2). */
  #escape(bytes: Uint8Array, start: number): number {
    let end = start + 1;
    while (end < bytes.length && end - start <= 3 && bytes[end]! >= 0x20 && bytes[end]! <= 0x2f) end++;
    const final = bytes[end];
    if (final === undefined || final < 0x30 || final > 0x7e) {
      this.#literal(replacement);
      return start + 1;
    }
    const set = designatedSet(String.fromCharCode(...bytes.subarray(start + 1, end + 1)));
    if (!set) this.#exact = false; // an unknown set: what follows is read in the sets already active
    else if (set.element === 'G0') this.#g0 = set;
    else this.#g1 = set;
    return end + 1;
  }

  #left(bytes: Uint8Array, i: number): number {
    const byte = bytes[i]!;
    const g0 = this.#g0;
    if (g0.bytesPerCharacter === 1 || byte === 0x20) {
      this.#neutral(byte);
      if (g0.bytesPerCharacter === 1 && this.delimiters.has(byte)) this.#reset();
      return i + 1;
    }
    const second = bytes[i + 1];
    if (second === undefined || second < 0x21 || second > 0x7e) {
      this.#literal(replacement);
      return i + 1;
    }
    this.#character(g0, byte, second);
    return i + 2;
  }

  #right(bytes: Uint8Array, i: number): number {
    const g1 = this.#g1;
    if (!g1) {
      // GR bytes with no G1 set declared at all: read as ISO 8859-1, and said to be a guess.
      this.#exact = false;
      this.#append(bytes[i]!, 'windows-1252');
      return i + 1;
    }
    if (g1.bytesPerCharacter === 1) {
      this.#character(g1, bytes[i]!);
      return i + 1;
    }
    const [lead, trail] = [bytes[i]!, bytes[i + 1]];
    if (lead < 0xa1 || lead > 0xfe || trail === undefined || trail < 0xa1 || trail > 0xfe) {
      this.#literal(replacement);
      return i + 1;
    }
    this.#character(g1, lead, trail);
    return i + 2;
  }

  #character(set: GraphicSet, ...bytes: number[]): void {
    if (set.prefix !== undefined) this.#append(set.prefix, set.decoder);
    for (const byte of bytes) this.#append(set.setHighBit ? byte | 0x80 : byte, set.decoder);
  }

  /** An ASCII byte, which every decoder used here reads the same: it joins the current run. */
  #neutral(byte: number): void {
    if (this.#run) this.#run.bytes.push(byte);
    else this.#append(byte, 'windows-1252');
  }

  #append(byte: number, decoder: string): void {
    if (this.#run?.decoder !== decoder) {
      this.#flush();
      this.#run = { decoder, bytes: [] };
    }
    this.#run!.bytes.push(byte);
  }

  #literal(text: string): void {
    this.#flush();
    this.#exact = false;
    this.#pieces.push({ text, exact: false });
  }

  #flush(): void {
    if (!this.#run) return;
    this.#pieces.push(decodeWith(this.#run.decoder, Uint8Array.from(this.#run.bytes)));
    this.#run = undefined;
  }
}
