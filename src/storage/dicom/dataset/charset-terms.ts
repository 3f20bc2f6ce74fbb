/**
 * The character sets of Specific Character Set (0008,0005), PS3.3 C.12.1.1.2 tables C.12-2 to
 * C.12-5, and the ISO 2022 escape sequences that designate them (PS3.5 6.1.2.5, annexes H, I, J).
 * Each graphic set is read by one of the WHATWG decoders Node ships (full ICU), after its bytes
 * are transcribed into that decoder's encoding where they differ (JIS X 0208 and 0212 arrive as
 * 7-bit pairs; EUC-JP carries them with the high bit set).
 */

export interface GraphicSet {
  /** How the set is named in findings. */
  name: string;
  /** G0 sets are invoked in GL (bytes 0x21-0x7E), G1 sets in GR (0xA1-0xFE). */
  element: 'G0' | 'G1';
  bytesPerCharacter: 1 | 2;
  /** The WHATWG decoder that reads the transcribed bytes. */
  decoder: string;
  /** Bytes put before each character's bytes for `decoder` (EUC-JP's single shifts). */
  prefix?: number;
  /** The character's bytes take the high bit for `decoder` (7-bit JIS pairs to EUC-JP). */
  setHighBit?: boolean;
}

const ascii: GraphicSet = { name: 'ISO-IR 6 (ASCII)', element: 'G0', bytesPerCharacter: 1, decoder: 'windows-1252' };
// JIS X 0201 Romaji differs from ASCII only at 05/12 and 07/14 (yen sign, overline); 05/12 is
// the DICOM value delimiter whatever the set (PS3.5 6.1.3), so it is read as ASCII.
const jisRomaji: GraphicSet = { name: 'JIS X 0201 Romaji', element: 'G0', bytesPerCharacter: 1, decoder: 'windows-1252' };
const jisKatakana: GraphicSet = { name: 'JIS X 0201 Katakana', element: 'G1', bytesPerCharacter: 1, decoder: 'euc-jp', prefix: 0x8e };
const jisX0208: GraphicSet = { name: 'JIS X 0208', element: 'G0', bytesPerCharacter: 2, decoder: 'euc-jp', setHighBit: true };
const jisX0212: GraphicSet = { name: 'JIS X 0212', element: 'G0', bytesPerCharacter: 2, decoder: 'euc-jp', prefix: 0x8f, setHighBit: true };
const ksX1001: GraphicSet = { name: 'KS X 1001', element: 'G1', bytesPerCharacter: 2, decoder: 'euc-kr' };
const gb2312: GraphicSet = { name: 'GB 2312', element: 'G1', bytesPerCharacter: 2, decoder: 'gb18030' };

/** The right halves of the ISO 8859 family and TIS 620 (96-character G1 sets). */
function rightHalf(name: string, decoder: string): GraphicSet {
  return { name, element: 'G1', bytesPerCharacter: 1, decoder };
}
// WHATWG reads "ISO-8859-1" as windows-1252, which differs only where ISO 8859-1 has C1 controls:
// senders that type in Windows code page 1252 and declare ISO_IR 100 are read as they meant.
const latin1 = rightHalf('ISO 8859-1', 'windows-1252');
const latin2 = rightHalf('ISO 8859-2', 'iso-8859-2');
const latin3 = rightHalf('ISO 8859-3', 'iso-8859-3');
const latin4 = rightHalf('ISO 8859-4', 'iso-8859-4');
const cyrillic = rightHalf('ISO 8859-5', 'iso-8859-5');
const arabic = rightHalf('ISO 8859-6', 'iso-8859-6');
const greek = rightHalf('ISO 8859-7', 'iso-8859-7');
const hebrew = rightHalf('ISO 8859-8', 'iso-8859-8');
const latin5 = rightHalf('ISO 8859-9', 'windows-1254');
const latin9 = rightHalf('ISO 8859-15', 'iso-8859-15');
const thai = rightHalf('TIS 620-2533', 'windows-874');

/** An ISO 2022 term: the sets it designates in G0 and G1. */
export interface Iso2022Term {
  kind: 'iso-2022';
  g0: GraphicSet | undefined;
  g1: GraphicSet | undefined;
}

/** A term of table C.12-5: one decoder for the whole value, no code extensions. */
export interface WholeValueTerm {
  kind: 'whole-value';
  name: string;
  decoder: string;
}

export type CharacterSetTerm = Iso2022Term | WholeValueTerm;

const iso2022 = (g0: GraphicSet | undefined, g1: GraphicSet | undefined): Iso2022Term => ({ kind: 'iso-2022', g0, g1 });

/**
 * By IR number. The "ISO_IR n" form (tables C.12-2, no code extensions) and the "ISO 2022 IR n"
 * form (C.12-3 and C.12-4) name the same sets; both are read with the escape-sequence decoder,
 * which reads a value without escape sequences exactly as a plain decoder would.
 */
const byIrNumber: Record<string, Iso2022Term> = {
  '6': iso2022(ascii, undefined),
  '100': iso2022(ascii, latin1),
  '101': iso2022(ascii, latin2),
  '109': iso2022(ascii, latin3),
  '110': iso2022(ascii, latin4),
  '144': iso2022(ascii, cyrillic),
  '127': iso2022(ascii, arabic),
  '126': iso2022(ascii, greek),
  '138': iso2022(ascii, hebrew),
  '148': iso2022(ascii, latin5),
  '203': iso2022(ascii, latin9),
  '13': iso2022(jisRomaji, jisKatakana),
  '166': iso2022(ascii, thai),
  // Table C.12-4: multi-byte sets, with code extensions only.
  '87': iso2022(jisX0208, undefined),
  '159': iso2022(jisX0212, undefined),
  '149': iso2022(undefined, ksX1001),
  '58': iso2022(undefined, gb2312),
};

const wholeValue: Record<string, WholeValueTerm> = {
  ISOIR192: { kind: 'whole-value', name: 'ISO_IR 192 (UTF-8)', decoder: 'utf-8' },
  GB18030: { kind: 'whole-value', name: 'GB18030', decoder: 'gb18030' },
  GBK: { kind: 'whole-value', name: 'GBK', decoder: 'gbk' },
};

/**
 * The term a value of Specific Character Set names, or undefined when it names none. Spelling
 * is read leniently (case, spaces, underscores and hyphens are ignored: "ISO_IR100" and
 * "iso-ir 100" are ISO_IR 100), since a name the sender misspelt still says what it sent.
 */
export function characterSetTerm(value: string): CharacterSetTerm | undefined {
  const compact = value.toUpperCase().replace(/[^A-Z0-9]/g, '');
  if (compact === '') return byIrNumber['6'];
  const whole = wholeValue[compact];
  if (whole) return whole;
  const ir = /^ISO(?:2022)?IR(\d+)$/.exec(compact);
  return ir ? byIrNumber[ir[1]!] : undefined;
}

/** PS3.5 6.1.2.5.1 and tables C.12-3, C.12-4: the escape sequences (after ESC) and what they designate. */
const designations: Record<string, GraphicSet> = {
  '(B': ascii,
  '(J': jisRomaji,
  ')I': jisKatakana,
  $B: jisX0208,
  // JIS C 6226-1978, the older edition of JIS X 0208, which some Japanese encoders still announce.
  '$@': jisX0208,
  '$(D': jisX0212,
  '$)C': ksX1001,
  '$)A': gb2312,
  '-A': latin1,
  '-B': latin2,
  '-C': latin3,
  '-D': latin4,
  '-L': cyrillic,
  '-G': arabic,
  '-F': greek,
  '-H': hebrew,
  '-M': latin5,
  '-b': latin9,
  '-T': thai,
};

/** The set an escape sequence designates; `sequence` is what follows ESC, final byte included. */
export function designatedSet(sequence: string): GraphicSet | undefined {
  return designations[sequence];
}

export const defaultRepertoire = byIrNumber['6']!;
