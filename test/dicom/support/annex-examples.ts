/** Bytes written as in PS3.5's annexes: hex pairs separated by spaces. */
export const hex = (text: string) => Buffer.from(text.replace(/ /g, ''), 'hex');

// PS3.5 annexes H, I and J: the example person names, byte for byte.
export const annexExamples = {
  // H.3.1 example 1: JIS X 0208 designated into G0, ASCII back before each delimiter.
  japaneseKanji: {
    specificCharacterSet: '\\ISO 2022 IR 87',
    bytes: hex('59 61 6d 61 64 61 5e 54 61 72 6f 75 3d 1b 24 42 3b 33 45 44 1b 28 42 5e 1b 24 42 42 40 4f 3a 1b 28 42 3d 1b 24 42 24 64 24 5e 24 40 1b 28 42 5e 1b 24 42 24 3f 24 6d 24 26 1b 28 42'),
    name: 'Yamada^Tarou=山田^太郎=やまだ^たろう',
  },
  // H.3.2 example 2: JIS X 0201 katakana in G1 from value 1, JIS X 0208 in G0, back to Romaji.
  japaneseKatakana: {
    specificCharacterSet: 'ISO 2022 IR 13\\ISO 2022 IR 87',
    bytes: hex('d4 cf c0 de 5e c0 db b3 3d 1b 24 42 3b 33 45 44 1b 28 4a 5e 1b 24 42 42 40 4f 3a 1b 28 4a 3d 1b 24 42 24 64 24 5e 24 40 1b 28 4a 5e 1b 24 42 24 3f 24 6d 24 26 1b 28 4a'),
    name: 'ﾔﾏﾀﾞ^ﾀﾛｳ=山田^太郎=やまだ^たろう',
  },
  // I.2: KS X 1001 designated into G1 after each delimiter.
  korean: {
    specificCharacterSet: '\\ISO 2022 IR 149',
    bytes: hex('48 6f 6e 67 5e 47 69 6c 64 6f 6e 67 3d 1b 24 29 43 fb f3 5e 1b 24 29 43 d1 ce d4 d7 3d 1b 24 29 43 c8 ab 5e 1b 24 29 43 b1 e6 b5 bf'),
    name: 'Hong^Gildong=洪^吉洞=홍^길동',
  },
  // J.1: GB18030, no code extensions.
  chineseGb18030: {
    specificCharacterSet: 'GB18030',
    bytes: hex('57 61 6e 67 5e 58 69 61 6f 44 6f 6e 67 3d cd f5 5e d0 a1 96 7c 3d'),
    name: 'Wang^XiaoDong=王^小東=',
  },
  // J.2: GB 2312 designated into G1.
  chineseGb2312: {
    specificCharacterSet: '\\ISO 2022 IR 58',
    bytes: hex('5a 68 61 6e 67 5e 58 69 61 6f 44 6f 6e 67 3d 1b 24 29 41 d5 c5 5e 1b 24 29 41 d0 a1 b6 ab 3d'),
    name: 'Zhang^XiaoDong=张^小东=',
  },
  // J.3: GBK, no code extensions.
  chineseGbk: {
    specificCharacterSet: 'GBK',
    bytes: hex('57 61 6e 67 5e 58 69 61 6f 44 6f 6e 67 3d cd f5 5e d0 a1 b6 ab 3d'),
    name: 'Wang^XiaoDong=王^小东=',
  },
};
