/**
 * JSON schemas of the admin API: they validate requests and generate the origin's OpenAPI
 * document (the platform's documentation is built from them), and they shape responses.
 */
const str = { type: 'string' } as const;
const nullableStr = { type: ['string', 'null'] } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;

export const uuidParam = { type: 'string', maxLength: 64 } as const;

export const errorSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        code: str,
        message: str,
        fields: { type: 'array', items: { type: 'object', properties: { field: str, message: str } } },
        request_id: str,
      },
    },
  },
} as const;

export const errorResponses = {
  400: errorSchema,
  401: errorSchema,
  403: errorSchema,
  404: errorSchema,
  409: errorSchema,
  503: errorSchema,
} as const;

export const sessionUserSchema = {
  type: 'object',
  properties: { id: str, site_id: nullableStr, email: str, role: { type: 'string', enum: ['service-admin', 'site-admin', 'clinician'] } },
} as const;

export const sessionSchema = {
  type: 'object',
  properties: {
    user: sessionUserSchema,
    csrf_token: str,
    expires_at: { ...dateTime, description: 'the absolute end of the session (12 hours after sign-in)' },
    idle_timeout_seconds: { type: 'integer', description: 'the session ends after this many seconds without a request' },
    idle_warning_seconds: { type: 'integer', description: 'how long before the idle limit the app warns' },
  },
} as const;

/** A writable time zone setting (src/domain/time-zones/time-zone-name.ts checks the name). */
export function timeZoneField(whose: string) {
  return {
    type: ['string', 'null'],
    maxLength: 64,
    description: `IANA time zone name (e.g. Europe/London) in which times without a UTC offset from ${whose} are read (HL7 v2 DTM, DICOM StudyDate/StudyTime); null or blank: none, times are read as UTC`,
  } as const;
}

export const siteSchema = {
  type: 'object',
  properties: {
    id: str,
    name: str,
    ae_title: str,
    patient_put_creates: { type: 'boolean' },
    mllp_allow_any_ip: { type: 'boolean' },
    time_zone: nullableStr,
    data_access_retention_days: { type: 'integer' },
    message_body_retention_days: { type: ['integer', 'null'] },
    export_retention_hours: { type: ['integer', 'null'] },
    refused_traffic_retention_days: { type: ['integer', 'null'] },
    offboarding_marked_at: { type: ['string', 'null'], format: 'date-time', description: 'when a service admin marked the site for offboarding (`site offboard`); null: not marked' },
    purge_after: { type: ['string', 'null'], format: 'date-time', description: 'when the marked site is purged, with every record and file of it' },
    created_at: dateTime,
    updated_at: dateTime,
  },
} as const;

export const userSchema = {
  type: 'object',
  properties: { id: str, site_id: nullableStr, email: str, role: str, active: { type: 'boolean' }, created_at: dateTime, updated_at: dateTime },
} as const;

export const apiKeySchema = {
  type: 'object',
  properties: {
    id: str,
    prefix: str,
    label: str,
    user_id: str,
    user_email: str,
    created_at: dateTime,
    last_used_at: nullableDateTime,
    revoked_at: nullableDateTime,
  },
} as const;

export const clientSchema = {
  type: 'object',
  properties: {
    id: str,
    name: str,
    protocol: str,
    allowed_ips: { type: 'array', items: str },
    sending_application: nullableStr,
    sending_facility: nullableStr,
    default_charset: str,
    time_zone: nullableStr,
    enabled: { type: 'boolean' },
    created_at: dateTime,
    updated_at: dateTime,
  },
} as const;

export const auditEventSchema = {
  type: 'object',
  properties: {
    id: str,
    occurred_at: dateTime,
    site_id: nullableStr,
    actor: str,
    actor_email: nullableStr,
    action: str,
    target_type: str,
    target_id: nullableStr,
    details: { type: 'object', additionalProperties: true },
  },
} as const;

export const reportSchema = {
  type: 'object',
  properties: {
    id: str,
    study_instance_uid: str,
    status: { type: 'string', enum: ['draft', 'completed'] },
    text: str,
    author_user_id: nullableStr,
    author_email: nullableStr,
    created_at: dateTime,
    updated_at: dateTime,
    completed_at: nullableDateTime,
    version: { type: 'integer' },
  },
} as const;

export const worklistStudySchema = {
  type: 'object',
  properties: {
    study_instance_uid: str,
    patient_id: nullableStr,
    dicom_patient_id: nullableStr,
    patient_name: nullableStr,
    patient_birth_date: nullableStr,
    patient_sex: nullableStr,
    study_date: nullableStr,
    study_time: nullableStr,
    study_started_at: { ...nullableDateTime, description: 'StudyDate and StudyTime as an instant, read with (0008,0201) or the site time zone; null when neither applied' },
    accession_number: nullableStr,
    study_description: nullableStr,
    modalities: { type: 'array', items: str },
    series_count: { type: 'integer' },
    instance_count: { type: 'integer' },
    size_bytes: { type: 'integer' },
    step_status: nullableStr,
    report_status: nullableStr,
    first_received_at: dateTime,
    last_received_at: dateTime,
  },
} as const;

export const messageSummarySchema = {
  type: 'object',
  properties: {
    id: str,
    protocol: str,
    transport: str,
    sending_application: str,
    sending_facility: str,
    control_id: nullableStr,
    message_type: str,
    outcome: str,
    ack_code: str,
    problems: {
      type: 'array',
      items: { type: 'object', properties: { severity: str, code: str, location: str, message: str } },
    },
    remote_address: nullableStr,
    received_at: dateTime,
    patient_identifier: nullableStr,
    reprocess_of: nullableStr,
    reprocessed_as: nullableStr,
  },
} as const;
