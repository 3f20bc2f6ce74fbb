/**
 * A DICOM JSON dataset written as the Native DICOM Model of PS3.19 A.1 (application/dicom+xml):
 * what a STOW-RS user agent gets when it accepts XML only. PS3.18 10.5.3 offers the STOW-RS
 * response in either form, and the STOW clients of the dcm4che toolkit and older ones ask for XML.
 * Only what STOW-RS responses hold is needed: text, numbers and sequences.
 */
import { dictionaryEntry } from '../storage/dicom/dataset/dicom-dictionary.ts';
import type { DicomJson } from './dicom-json.ts';

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function attributes(dataset: DicomJson): string {
  return Object.entries(dataset)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([tag, element]) => {
      const keyword = dictionaryEntry(parseInt(tag, 16))?.name;
      const open = `<DicomAttribute tag="${tag}" vr="${element.vr}"${keyword ? ` keyword="${keyword}"` : ''}`;
      const values = element.Value ?? [];
      if (values.length === 0) return `${open}/>`;
      const content =
        element.vr === 'SQ'
          ? values.map((item, index) => `<Item number="${index + 1}">${attributes(item as DicomJson)}</Item>`).join('')
          : values.map((value, index) => `<Value number="${index + 1}">${escapeXml(String(value))}</Value>`).join('');
      return `${open}>${content}</DicomAttribute>`;
    })
    .join('');
}

export function nativeDicomXml(dataset: DicomJson): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<NativeDicomModel xmlns="http://dicom.nema.org/PS3.19/models/NativeDICOM" xml:space="preserve">${attributes(dataset)}</NativeDicomModel>\n`;
}
