/**
 * The five ER7 delimiters, read from MSH-1 and MSH-2 (HL7 v2.5.1 section 2.5.4). The segment
 * terminator is always CR in the standard; the reader also accepts LF and CRLF.
 */
export interface Delimiters {
  field: string;
  component: string;
  repetition: string;
  escape: string;
  subcomponent: string;
}

export const defaultDelimiters: Delimiters = { field: '|', component: '^', repetition: '~', escape: '\\', subcomponent: '&' };

export function encodingCharacters(d: Delimiters): string {
  return `${d.component}${d.repetition}${d.escape}${d.subcomponent}`;
}
