import { XmlRejection } from './rejection.ts';

/**
 * Bytes to text for an XML entity (XML 1.0, section 4.3.3 and appendix F): a byte order mark
 * decides UTF-8 or UTF-16; otherwise the charset parameter or the encoding declaration does, and
 * without either the document is UTF-8. Only encodings a v3 sender really uses are accepted, and bytes that are not valid in
 * the declared encoding are refused rather than replaced, so a mangled name never gets stored.
 */
const supported: Record<string, string> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'us-ascii': 'utf-8',
  ascii: 'utf-8',
  'iso-8859-1': 'latin1',
  'iso_8859-1': 'latin1',
  latin1: 'latin1',
  'utf-16': 'utf-16',
};

/**
 * `charset` is the media type's charset parameter: it outranks the encoding declaration
 * (RFC 7303, section 3.2), and a byte order mark outranks both (section 3.3).
 */
export function decodeXmlBytes(bytes: Uint8Array, charset?: string): string {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return strictDecode(bytes.subarray(3), 'utf-8');
  }
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return strictDecode(bytes.subarray(2), 'utf-16le');
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return strictDecode(bytes.subarray(2), 'utf-16be');
  // UTF-16 without a byte order mark still starts with "<" as two bytes (appendix F.1).
  if (bytes.length >= 2 && bytes[0] === 0x3c && bytes[1] === 0x00) return strictDecode(bytes, 'utf-16le');
  if (bytes.length >= 2 && bytes[0] === 0x00 && bytes[1] === 0x3c) return strictDecode(bytes, 'utf-16be');

  const declared = charset ?? declaredEncoding(bytes);
  if (declared === undefined) return strictDecode(bytes, 'utf-8');
  const label = supported[declared.toLowerCase()];
  // UTF-16 always has a byte order mark or a zero byte in its first two: these bytes are 8-bit,
  // so the label is wrong, as .NET writes it (a string serialised as "utf-16", then sent as
  // UTF-8). Read as UTF-8, strictly, as libxml2 does: bytes that are not UTF-8 are still refused.
  if (label === 'utf-16') return strictDecode(bytes, 'utf-8');
  if (label === undefined) {
    throw new XmlRejection('encoding', `the character encoding "${declared}" is not supported; send UTF-8`);
  }
  return strictDecode(bytes, label);
}

/** The encoding pseudo-attribute of an XML declaration, read from the ASCII-compatible prefix. */
function declaredEncoding(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.subarray(0, 256)).toString('latin1');
  if (!head.startsWith('<?xml')) return undefined;
  const end = head.indexOf('?>');
  const declaration = end === -1 ? head : head.slice(0, end);
  return /\sencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']/.exec(declaration)?.[1];
}

function strictDecode(bytes: Uint8Array, label: string): string {
  try {
    return new TextDecoder(label, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new XmlRejection('encoding', `the document is not valid ${label === 'latin1' ? 'ISO-8859-1' : label.toUpperCase()}`);
  }
}
