-- The time zone in which a site's senders write times without a UTC offset (HL7 v2 DTM, DICOM
-- DA/TM): an IANA name, checked by the service against the runtime's time zone database. An
-- integration client's zone, when set, overrides its site's. NULL: none configured, and such times
-- are read as UTC with a warning, as before.
ALTER TABLE site ADD COLUMN time_zone text CHECK (length(time_zone) BETWEEN 1 AND 64);
ALTER TABLE integration_client ADD COLUMN time_zone text CHECK (length(time_zone) BETWEEN 1 AND 64);

-- The instant StudyDate and StudyTime name (PS3.3 C.7.2.1), read with the instance's Timezone
-- Offset From UTC (0008,0201) or else the site's zone when the study was indexed. NULL when the
-- study has no time, or no zone applied; study_date and study_time keep the values as received.
-- Studies indexed before this migration have none: which zone their senders meant is not known.
ALTER TABLE imaging_study ADD COLUMN study_started_at timestamptz;
