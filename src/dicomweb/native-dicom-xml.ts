/**
 * A DICOM JSON dataset written as the Native DICOM Model of PS3.19 A.1 (application/dicom+xml):
 * what a user agent gets when it accepts XML only. PS3.18 offers the STOW-RS response, QIDO-RS
 * results and WADO-RS metadata in either form, and the DICOMweb clients of the dcm4che toolkit
 * ask for XML. Values are written as text; PN objects as their component groups, binary values as
 * InlineBinary.
 */
import { dictionaryEntry } from '../storage/dicom/dataset/dicom-dictionary.ts';
import type { DicomJson } from './dicom-json.ts';
import { multipartContentType, newBoundary } from './multipart-writer.ts';

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function attributes(dataset: DicomJson): string {
  return Object.entries(dataset)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([tag, element]) => {
      const keyword = dictionaryEntry(parseInt(tag, 16))?.name;
      const open = `<DicomAttribute tag="${tag}" vr="${element.vr}"${keyword ? ` keyword="${keyword}"` : ''}`;
      const values = element.Value ?? [];
      if (element.InlineBinary !== undefined) return `${open}><InlineBinary>${element.InlineBinary}</InlineBinary></DicomAttribute>`;
      if (values.length === 0) return `${open}/>`;
      const content =
        element.vr === 'SQ'
          ? values.map((item, index) => `<Item number="${index + 1}">${attributes(item as DicomJson)}</Item>`).join('')
          : element.vr === 'PN'
            ? values.map((name, index) => personName(name as Record<string, string>, index + 1)).join('')
            : values.map((value, index) => (value === null ? '' : `<Value number="${index + 1}">${escapeXml(String(value))}</Value>`)).join('');
      return `${open}>${content}</DicomAttribute>`;
    })
    .join('');
}

/** PS3.19 A.1: a PersonName element per value, its groups with their components. */
function personName(name: Record<string, string>, number: number): string {
  const groups = (['Alphabetic', 'Ideographic', 'Phonetic'] as const)
    .filter((group) => name[group])
    .map((group) => {
      const [family, given, middle, prefix, suffix] = name[group]!.split('^');
      const components = Object.entries({ FamilyName: family, GivenName: given, MiddleName: middle, NamePrefix: prefix, NameSuffix: suffix })
        .filter(([, value]) => value)
        .map(([component, value]) => `<${component}>${escapeXml(value!)}</${component}>`)
        .join('');
      return `<${group}>${components}</${group}>`;
    });
  return `<PersonName number="${number}">${groups.join('')}</PersonName>`;
}

export function nativeDicomXml(dataset: DicomJson): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<NativeDicomModel xmlns="http://dicom.nema.org/PS3.19/models/NativeDICOM" xml:space="preserve">${attributes(dataset)}</NativeDicomModel>\n`;
}

/** Datasets as multipart/related; type="application/dicom+xml", one part each. */
export function nativeDicomXmlParts(datasets: readonly DicomJson[]): { contentType: string; body: string } {
  const boundary = newBoundary();
  const parts = datasets.map((dataset) => `--${boundary}\r\nContent-Type: application/dicom+xml; charset=utf-8\r\n\r\n${nativeDicomXml(dataset)}\r\n`);
  return { contentType: multipartContentType('application/dicom+xml', boundary), body: `${parts.join('')}--${boundary}--\r\n` };
}
