/**
 * QIDO-RS results as DICOM JSON (PS3.18 10.6.3.3, annex F): the attributes the index holds at the
 * query's level and above, with the Retrieve URL of each match. Values are the index's (UTF-8
 * text, so Specific Character Set is ISO_IR 192).
 */
import type { ImagingMatch, QueryLevel } from '../domain/imaging/query/imaging-query.ts';
import type { DicomJson } from './dicom-json.ts';

type Element = DicomJson[string];

const value = (vr: string, content: unknown): Element => (content === null || content === undefined || content === '' ? { vr } : { vr, Value: [content] });

const groupNames = ['Alphabetic', 'Ideographic', 'Phonetic'] as const;

/**
 * A person name as the index keeps it (`Yamada^Tarou=山田^太郎=やまだ^たろう`, values separated by
 * backslashes) in DICOM JSON (PS3.18 F.2.2): one object per value, its component groups under
 * their own names, empty groups left out. Viewers show `Alphabetic`; a whole name there would show
 * the ideographic and phonetic groups, delimiters and all, as part of the family name.
 */
function personNameJson(name: string | null | undefined): Element {
  if (!name) return { vr: 'PN' };
  const values = name.split('\\').map((one) => {
    const groups: Partial<Record<(typeof groupNames)[number], string>> = {};
    one.split('=').forEach((group, index) => {
      const groupName = groupNames[index];
      if (groupName && group !== '') groups[groupName] = group;
    });
    return groups;
  });
  return { vr: 'PN', Value: values };
}

export function matchToDicomJson(level: QueryLevel, match: ImagingMatch, baseUrl: string): DicomJson {
  const json: DicomJson = {
    '00080005': { vr: 'CS', Value: ['ISO_IR 192'] },
    '00100010': personNameJson(match.patientName),
    '00100020': value('LO', match.patientId),
    '00100030': value('DA', match.patientBirthDate),
    '00100040': value('CS', match.patientSex),
  };
  if (match.studyInstanceUid === undefined) return json;
  Object.assign(json, {
    '00080020': value('DA', match.studyDate),
    '00080030': value('TM', match.studyTime),
    '00080050': value('SH', match.accessionNumber),
    '00080061': match.modalitiesInStudy && match.modalitiesInStudy.length > 0 ? { vr: 'CS', Value: match.modalitiesInStudy } : { vr: 'CS' },
    '00080090': personNameJson(match.referringPhysicianName),
    '00081030': value('LO', match.studyDescription),
    '0020000D': value('UI', match.studyInstanceUid),
    '00200010': value('SH', match.studyId),
    ...(match.numberOfStudyRelatedSeries !== undefined ? { '00201206': value('IS', match.numberOfStudyRelatedSeries) } : {}),
    ...(match.numberOfStudyRelatedInstances !== undefined ? { '00201208': value('IS', match.numberOfStudyRelatedInstances) } : {}),
  });
  let retrieve = `${baseUrl}/studies/${match.studyInstanceUid}`;
  if (level !== 'STUDY' && match.seriesInstanceUid !== undefined) {
    retrieve += `/series/${match.seriesInstanceUid}`;
    Object.assign(json, {
      '00080060': value('CS', match.modality),
      '0008103E': value('LO', match.seriesDescription),
      '0020000E': value('UI', match.seriesInstanceUid),
      '00200011': value('IS', match.seriesNumber),
      ...(match.numberOfSeriesRelatedInstances !== undefined ? { '00201209': value('IS', match.numberOfSeriesRelatedInstances) } : {}),
    });
  }
  if (level === 'IMAGE' && match.sopInstanceUid !== undefined) {
    retrieve += `/instances/${match.sopInstanceUid}`;
    Object.assign(json, {
      '00080016': value('UI', match.sopClassUid),
      '00080018': value('UI', match.sopInstanceUid),
      '00083002': value('UI', match.transferSyntaxUid),
      '00200013': value('IS', match.instanceNumber),
    });
  }
  json['00081190'] = { vr: 'UR', Value: [retrieve] };
  return json;
}
