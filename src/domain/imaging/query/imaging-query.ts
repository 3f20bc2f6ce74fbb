/**
 * Query over a site's imaging index at study, series and instance level (PS3.4 C.6.2 Study Root,
 * C.6.1 Patient Root), shared by the DIMSE C-FIND SCP and DICOMweb QIDO-RS. The keys are DICOM
 * keywords with their values as DICOM strings; matching follows PS3.4 C.2.2.2 (matching.ts).
 *
 * Keys are applied at the query's level and above, but for Modality in a study-level query, which
 * viewers send there for what ModalitiesInStudy asks (the studies with a series of that modality)
 * and is read so; other keys of a lower level are ignored. Matching is relational, as for QIDO-RS: a series
 * query need not name its study. Every statement fixes the caller's site, and a call returns at
 * most maxImagingQueryResults matches.
 */
import type { Queryable } from '../../../storage/database.ts';
import { DomainError } from '../../errors.ts';
import type { SiteContext } from '../../site-context.ts';
import { codeList, dateCondition, integerCondition, SqlParameters, textCondition, timeCondition, uidListCondition } from './matching.ts';
import { personNameCondition } from './person-name-matching.ts';

export const queryLevels = ['PATIENT', 'STUDY', 'SERIES', 'IMAGE'] as const;
export type QueryLevel = (typeof queryLevels)[number];

/** The most matches one query returns; the caller learns from `more` that there were others. */
export const maxImagingQueryResults = 1000;

/** The matching keys understood, by level (PS3.4 C.6.1.1 and C.6.2.1 tables). */
export const matchingKeysByLevel = {
  PATIENT: ['PatientID', 'PatientName', 'PatientBirthDate', 'PatientSex'],
  STUDY: ['StudyInstanceUID', 'StudyDate', 'StudyTime', 'AccessionNumber', 'StudyDescription', 'ModalitiesInStudy', 'StudyID', 'ReferringPhysicianName'],
  SERIES: ['SeriesInstanceUID', 'Modality', 'SeriesNumber', 'SeriesDescription'],
  IMAGE: ['SOPInstanceUID', 'SOPClassUID', 'InstanceNumber'],
} as const;

export type MatchingKey = (typeof matchingKeysByLevel)[QueryLevel][number];
export type MatchingKeys = Partial<Record<MatchingKey, string>>;

export interface ImagingQuery {
  level: QueryLevel;
  /** DICOM keyword -> match value as a DICOM string ('' or absent: universal matching). */
  keys: MatchingKeys;
  /** At most maxImagingQueryResults (the default). */
  limit?: number;
  offset?: number;
}

/** One match. Attributes of the levels above are filled too; those below are absent. */
export interface ImagingMatch {
  patientId: string | null;
  /** As received: DICOM PN (Family^Given). */
  patientName: string | null;
  /** YYYYMMDD */
  patientBirthDate: string | null;
  patientSex: string | null;
  numberOfPatientRelatedStudies?: number;
  studyInstanceUid?: string;
  /** YYYYMMDD */
  studyDate?: string | null;
  /** HHMMSS[.FFFFFF] */
  studyTime?: string | null;
  accessionNumber?: string | null;
  studyDescription?: string | null;
  studyId?: string | null;
  /** As received: DICOM PN. */
  referringPhysicianName?: string | null;
  modalitiesInStudy?: string[];
  numberOfStudyRelatedSeries?: number;
  numberOfStudyRelatedInstances?: number;
  seriesInstanceUid?: string;
  modality?: string | null;
  seriesNumber?: number | null;
  seriesDescription?: string | null;
  numberOfSeriesRelatedInstances?: number;
  sopInstanceUid?: string;
  sopClassUid?: string;
  instanceNumber?: number | null;
  /** The transfer syntax the instance is stored in (and sent in). */
  transferSyntaxUid?: string;
}

export interface ImagingQueryResult {
  matches: ImagingMatch[];
  /** More matches exist beyond this page. */
  more: boolean;
}

const levelRank: Record<QueryLevel, number> = { PATIENT: 0, STUDY: 1, SERIES: 2, IMAGE: 3 };

const patientColumns = `s.dicom_patient_id AS patient_id, s.patient_name, to_char(s.patient_birth_date, 'YYYYMMDD') AS patient_birth_date, s.patient_sex`;
const studyColumns = `${patientColumns}, s.study_instance_uid, to_char(s.study_date, 'YYYYMMDD') AS study_date,
  regexp_replace(to_char(s.study_time, 'HH24MISS.US'), '\\.?0*$', '') AS study_time, s.accession_number, s.study_description, s.modalities,
  s.study_id, s.referring_physician_name`;
const seriesColumns = `se.series_instance_uid, se.modality, se.series_number, se.series_description`;

/** A study-level query's Modality, read as ModalitiesInStudy (unless that is given too). */
function studyModalities(query: ImagingQuery): ImagingQuery {
  const { Modality, ...keys } = query.keys;
  if (query.level !== 'STUDY' || !Modality) return query;
  return { ...query, keys: { ...keys, ModalitiesInStudy: keys.ModalitiesInStudy || Modality } };
}

/** The level's rows of one site, matched by `query.keys`, in a stable order. */
export async function queryImaging(db: Queryable, site: SiteContext, query: ImagingQuery): Promise<ImagingQueryResult> {
  if (!queryLevels.includes(query.level)) throw new DomainError('invalid', `unsupported query level ${String(query.level)}`, [{ message: 'unsupported query level', location: 'QueryRetrieveLevel' }]);
  const limit = Math.min(Math.max(Math.trunc(query.limit ?? maxImagingQueryResults), 0), maxImagingQueryResults);
  const offset = Math.max(Math.trunc(query.offset ?? 0), 0);
  const params = new SqlParameters();
  const siteParam = params.add(site.siteId);
  const conditions = matchConditions(studyModalities(query), params);
  const where = conditions.length > 0 ? ` AND ${conditions.join(' AND ')}` : '';
  const page = `LIMIT ${params.add(limit + 1)} OFFSET ${params.add(offset)}`;
  let text: string;
  switch (query.level) {
    case 'PATIENT':
      // Patients are known here only through their studies: one row per DICOM PatientID.
      text = `SELECT DISTINCT ON (s.dicom_patient_id) ${patientColumns},
          (SELECT count(*)::int FROM imaging_study p WHERE p.site_id = s.site_id AND p.dicom_patient_id = s.dicom_patient_id) AS patient_studies
        FROM imaging_study s WHERE s.site_id = ${siteParam} AND s.dicom_patient_id IS NOT NULL${where}
        ORDER BY s.dicom_patient_id, s.first_received_at ${page}`;
      break;
    case 'STUDY':
      text = `SELECT ${studyColumns},
          (SELECT count(*)::int FROM imaging_series x WHERE x.site_id = s.site_id AND x.study_instance_uid = s.study_instance_uid) AS study_series,
          (SELECT count(*)::int FROM imaging_instance i WHERE i.site_id = s.site_id AND i.study_instance_uid = s.study_instance_uid) AS study_instances
        FROM imaging_study s WHERE s.site_id = ${siteParam}${where}
        ORDER BY s.study_date DESC NULLS LAST, s.study_time DESC NULLS LAST, s.study_instance_uid ${page}`;
      break;
    case 'SERIES':
      text = `SELECT ${studyColumns}, ${seriesColumns},
          (SELECT count(*)::int FROM imaging_instance i WHERE i.site_id = se.site_id AND i.series_instance_uid = se.series_instance_uid) AS series_instances
        FROM imaging_series se
        JOIN imaging_study s ON s.site_id = se.site_id AND s.study_instance_uid = se.study_instance_uid
        WHERE se.site_id = ${siteParam} AND s.site_id = ${siteParam}${where}
        ORDER BY se.study_instance_uid, se.series_number NULLS LAST, se.series_instance_uid ${page}`;
      break;
    case 'IMAGE':
      text = `SELECT ${studyColumns}, ${seriesColumns}, i.sop_instance_uid, i.sop_class_uid, i.instance_number, i.transfer_syntax_uid
        FROM imaging_instance i
        JOIN imaging_series se ON se.site_id = i.site_id AND se.series_instance_uid = i.series_instance_uid
        JOIN imaging_study s ON s.site_id = i.site_id AND s.study_instance_uid = i.study_instance_uid
        WHERE i.site_id = ${siteParam} AND se.site_id = ${siteParam} AND s.site_id = ${siteParam}${where}
        ORDER BY i.series_instance_uid, i.instance_number NULLS LAST, i.sop_instance_uid ${page}`;
      break;
  }
  const { rows } = await db.query({ text, values: params.values });
  const more = rows.length > limit;
  return { matches: rows.slice(0, limit).map((row) => toMatch(query.level, row)), more };
}

function matchConditions(query: ImagingQuery, params: SqlParameters): string[] {
  const keys = query.keys;
  const rank = levelRank[query.level];
  const conditions: (string | undefined)[] = [
    textCondition('s.dicom_patient_id', keys.PatientID, params),
    personNameCondition('s.patient_name', keys.PatientName, params),
    dateCondition('s.patient_birth_date', keys.PatientBirthDate, params, 'PatientBirthDate'),
    textCondition('s.patient_sex', keys.PatientSex, params),
  ];
  if (rank >= levelRank.STUDY) {
    const modalities = codeList(keys.ModalitiesInStudy);
    conditions.push(
      uidListCondition('s.study_instance_uid', keys.StudyInstanceUID, params, 'StudyInstanceUID'),
      dateCondition('s.study_date', keys.StudyDate, params, 'StudyDate'),
      timeCondition('s.study_time', keys.StudyTime, params, 'StudyTime'),
      textCondition('s.accession_number', keys.AccessionNumber, params),
      textCondition('s.study_description', keys.StudyDescription, params, { caseInsensitive: true }),
      textCondition('s.study_id', keys.StudyID, params),
      personNameCondition('s.referring_physician_name', keys.ReferringPhysicianName, params),
      modalities ? `s.modalities && ${params.add(modalities)}::text[]` : undefined,
    );
  }
  if (rank >= levelRank.SERIES) {
    conditions.push(
      uidListCondition('se.series_instance_uid', keys.SeriesInstanceUID, params, 'SeriesInstanceUID'),
      textCondition('se.modality', keys.Modality, params),
      integerCondition('se.series_number', keys.SeriesNumber, params, 'SeriesNumber'),
      textCondition('se.series_description', keys.SeriesDescription, params, { caseInsensitive: true }),
    );
  }
  if (rank >= levelRank.IMAGE) {
    conditions.push(
      uidListCondition('i.sop_instance_uid', keys.SOPInstanceUID, params, 'SOPInstanceUID'),
      uidListCondition('i.sop_class_uid', keys.SOPClassUID, params, 'SOPClassUID'),
      integerCondition('i.instance_number', keys.InstanceNumber, params, 'InstanceNumber'),
    );
  }
  return conditions.filter((condition): condition is string => condition !== undefined);
}

function toMatch(level: QueryLevel, row: Record<string, any>): ImagingMatch {
  const match: ImagingMatch = {
    patientId: row.patient_id,
    patientName: row.patient_name,
    patientBirthDate: row.patient_birth_date,
    patientSex: row.patient_sex,
  };
  if (level === 'PATIENT') {
    match.numberOfPatientRelatedStudies = row.patient_studies;
    return match;
  }
  Object.assign(match, {
    studyInstanceUid: row.study_instance_uid,
    studyDate: row.study_date,
    studyTime: row.study_time || null,
    accessionNumber: row.accession_number,
    studyDescription: row.study_description,
    studyId: row.study_id,
    referringPhysicianName: row.referring_physician_name,
    modalitiesInStudy: row.modalities,
  });
  if (level === 'STUDY') {
    match.numberOfStudyRelatedSeries = row.study_series;
    match.numberOfStudyRelatedInstances = row.study_instances;
    return match;
  }
  Object.assign(match, {
    seriesInstanceUid: row.series_instance_uid,
    modality: row.modality,
    seriesNumber: row.series_number,
    seriesDescription: row.series_description,
  });
  if (level === 'SERIES') {
    match.numberOfSeriesRelatedInstances = row.series_instances;
    return match;
  }
  Object.assign(match, {
    sopInstanceUid: row.sop_instance_uid,
    sopClassUid: row.sop_class_uid,
    instanceNumber: row.instance_number,
    transferSyntaxUid: row.transfer_syntax_uid,
  });
  return match;
}
