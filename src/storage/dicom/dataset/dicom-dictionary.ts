/**
 * The DICOM data dictionary (PS3.6): VR and keyword of a standard tag, repeating groups included.
 * dcmjs's, which the service already ships for DICOM JSON; looked up by 8-digit hex tag.
 */
import { createRequire } from 'node:module';

export interface DictionaryEntry {
  /** A PS3.5 VR, or dcmjs's lower-case code for a VR that depends on other attributes (`xs`: US or SS, `ox`: OB or OW...). */
  vr: string;
  /** The PS3.6 keyword. */
  name: string;
}

const dictionary = (createRequire(import.meta.url)('dcmjs') as { data: { DicomMetaDictionary: { dictionary: Record<string, DictionaryEntry | undefined> } } }).data
  .DicomMetaDictionary.dictionary;

/** `tag`: group << 16 | element. Undefined for private and unknown tags. */
export function dictionaryEntry(tag: number): DictionaryEntry | undefined {
  return dictionary[tag.toString(16).toUpperCase().padStart(8, '0')];
}
