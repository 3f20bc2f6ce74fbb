/**
 * Character sets of HL7 v2.5.1 table 0211 (MSH-18) that the gateway reads. HL7 v2.5.1 section
 * 2.15.9.18: the first repetition of MSH-18 is the message's character set; when MSH-18 is empty
 * the receiver's agreed default applies (here: the integration client's default charset).
 */
export type SupportedCharset = 'ASCII' | '8859/1' | 'UNICODE UTF-8';

const aliases: Record<string, SupportedCharset> = {
  ASCII: 'ASCII',
  '8859/1': '8859/1',
  'ISO-8859-1': '8859/1',
  'ISO8859-1': '8859/1',
  'ISO_IR 100': '8859/1',
  LATIN1: '8859/1',
  'UNICODE UTF-8': 'UNICODE UTF-8',
  'UTF-8': 'UNICODE UTF-8',
  UTF8: 'UNICODE UTF-8',
  'ISO_IR 192': 'UNICODE UTF-8',
};

/** Maps an MSH-18 value or a configured default to a supported charset, or undefined. */
export function supportedCharset(name: string): SupportedCharset | undefined {
  return aliases[name.trim().toUpperCase()];
}

/** Decodes bytes strictly; returns undefined when they are not valid in that charset. */
export function decodeBytes(bytes: Uint8Array, charset: SupportedCharset): string | undefined {
  switch (charset) {
    case 'ASCII':
      return isSevenBit(bytes) ? Buffer.from(bytes).toString('latin1') : undefined;
    case '8859/1':
      // Buffer's latin1 is true ISO 8859-1; TextDecoder('iso-8859-1') is windows-1252 (WHATWG).
      return Buffer.from(bytes).toString('latin1');
    case 'UNICODE UTF-8':
      try {
        return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
      } catch {
        return undefined;
      }
  }
}

/** Encodes text for the wire; characters a single-byte charset cannot hold become '?'. */
export function encodeText(text: string, charset: SupportedCharset): Buffer {
  if (charset === 'UNICODE UTF-8') return Buffer.from(text, 'utf8');
  const limit = charset === 'ASCII' ? 0x7f : 0xff;
  let safe = '';
  for (const ch of text) safe += ch.codePointAt(0)! <= limit ? ch : '?';
  return Buffer.from(safe, 'latin1');
}

export function isSevenBit(bytes: Uint8Array): boolean {
  for (const byte of bytes) if (byte > 0x7f) return false;
  return true;
}
