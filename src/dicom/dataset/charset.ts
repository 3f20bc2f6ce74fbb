/**
 * Decodes text values by Specific Character Set (0008,0005), PS3.3 C.12.1.1.2, using the WHATWG
 * decoders Node ships. Code extensions (ISO 2022 escape sequences) are approximated by the
 * decoder of the first declared term, which is exact for the single-byte sets in practice.
 */
import { TextDecoder } from 'node:util';

const decoderLabels: Record<string, string> = {
  '': 'latin1', // default repertoire is ASCII; Latin-1 decodes it byte for byte
  ISO_IR_6: 'latin1',
  ISO_IR_100: 'latin1',
  ISO_IR_101: 'iso-8859-2',
  ISO_IR_109: 'iso-8859-3',
  ISO_IR_110: 'iso-8859-4',
  ISO_IR_144: 'iso-8859-5',
  ISO_IR_127: 'iso-8859-6',
  ISO_IR_126: 'iso-8859-7',
  ISO_IR_138: 'iso-8859-8',
  ISO_IR_148: 'iso-8859-9',
  ISO_IR_203: 'iso-8859-15',
  ISO_IR_13: 'shift_jis',
  ISO_IR_166: 'windows-874',
  ISO_IR_192: 'utf-8',
  GB18030: 'gb18030',
  GBK: 'gbk',
  ISO_2022_IR_6: 'latin1',
  ISO_2022_IR_100: 'latin1',
  ISO_2022_IR_101: 'iso-8859-2',
  ISO_2022_IR_144: 'iso-8859-5',
  ISO_2022_IR_126: 'iso-8859-7',
  ISO_2022_IR_138: 'iso-8859-8',
  ISO_2022_IR_148: 'iso-8859-9',
  ISO_2022_IR_13: 'shift_jis',
  ISO_2022_IR_87: 'iso-2022-jp',
  ISO_2022_IR_149: 'euc-kr',
  ISO_2022_IR_58: 'gb18030',
};

export function textDecoderFor(specificCharacterSet: string | undefined): TextDecoder {
  const terms = (specificCharacterSet ?? '').split('\\').map((term) => term.trim().replace(/ /g, '_'));
  const first = terms.find((term) => term.length > 0) ?? '';
  const label = decoderLabels[first] ?? 'latin1';
  try {
    return new TextDecoder(label);
  } catch {
    return new TextDecoder('latin1');
  }
}
