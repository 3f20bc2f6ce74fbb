/**
 * ER7 escape sequences, HL7 v2.5.1 section 2.7: \F\ \S\ \T\ \R\ \E\ delimiters, \Xhh..\ bytes in
 * the message's character set, and the formatted-text commands of 2.7.6 (\.br\ and friends).
 * Highlighting (\H\ \N\) and character-set switches (\Cxxyy\ \Mxxyyzz\) carry no text and are
 * dropped; an unknown or unterminated sequence is kept literally, as 2.7 asks receivers to do
 * with sequences they do not recognise rather than lose data.
 */
import { decodeBytes, type SupportedCharset } from './charset.ts';
import type { Delimiters } from './delimiters.ts';

export function unescapeText(raw: string, d: Delimiters, charset: SupportedCharset): string {
  if (!raw.includes(d.escape)) return raw;
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const ch = raw[i]!;
    if (ch !== d.escape) {
      out += ch;
      i++;
      continue;
    }
    const end = raw.indexOf(d.escape, i + 1);
    if (end < 0) {
      out += raw.slice(i);
      break;
    }
    const body = raw.slice(i + 1, end);
    const decoded = decodeSequence(body, d, charset);
    out += decoded ?? raw.slice(i, end + 1);
    i = end + 1;
  }
  return out;
}

function decodeSequence(body: string, d: Delimiters, charset: SupportedCharset): string | undefined {
  switch (body) {
    case 'F':
      return d.field;
    case 'S':
      return d.component;
    case 'T':
      return d.subcomponent;
    case 'R':
      return d.repetition;
    case 'E':
      return d.escape;
    case 'H':
    case 'N':
      return '';
  }
  const first = body[0];
  if (first === 'X' && /^X(?:[0-9A-Fa-f]{2})+$/.test(body)) {
    const bytes = Buffer.from(body.slice(1), 'hex');
    return decodeBytes(bytes, charset === 'ASCII' ? '8859/1' : charset) ?? Buffer.from(bytes).toString('latin1');
  }
  if ((first === 'C' && /^C[0-9A-Fa-f]{4}$/.test(body)) || (first === 'M' && /^M[0-9A-Fa-f]{4,6}$/.test(body))) return '';
  if (first === '.') return formattingCommand(body.slice(1));
  return undefined;
}

/** Section 2.7.6: .sp n (n line breaks), .br, and layout commands that carry no text. */
function formattingCommand(command: string): string | undefined {
  if (command === 'br') return '\n';
  const sp = /^sp\s*(\d*)$/.exec(command);
  if (sp) return '\n'.repeat(Math.min(Number(sp[1] || '1'), 100));
  if (/^(fi|nf|ce|sk[+-]?\d*|in[+-]?\d*|ti[+-]?\d*)$/.test(command)) return '';
  return undefined;
}

/** Escapes text so it can be placed in one ER7 leaf (used when building ACKs). */
export function escapeText(text: string, d: Delimiters): string {
  let out = '';
  for (const ch of text) {
    if (ch === d.escape) out += `${d.escape}E${d.escape}`;
    else if (ch === d.field) out += `${d.escape}F${d.escape}`;
    else if (ch === d.component) out += `${d.escape}S${d.escape}`;
    else if (ch === d.subcomponent) out += `${d.escape}T${d.escape}`;
    else if (ch === d.repetition) out += `${d.escape}R${d.escape}`;
    else if (ch === '\n') out += `${d.escape}.br${d.escape}`;
    // Other control characters (CR among them) as hexadecimal data (section 2.7.4): an echoed
    // NUL, say from a damaged MSH-5, would otherwise make the ACK unstorable in the message log.
    else if (ch < ' ') out += `${d.escape}X${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}${d.escape}`;
    else out += ch;
  }
  return out;
}
