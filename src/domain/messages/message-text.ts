/**
 * Raw bytes as text for reading: UTF-8 when they are valid UTF-8, else Latin-1 (HL7 8859/1), so
 * no byte is dropped; segment terminators (CR) become line breaks for display.
 */
export function displayRaw(raw: Buffer): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    text = raw.toString('latin1');
  }
  return text.replace(/\r\n?/g, '\n');
}
