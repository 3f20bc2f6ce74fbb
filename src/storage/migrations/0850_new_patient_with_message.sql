-- An HL7 v2 ADT message for a patient the site does not know yet, stored in one statement: the
-- patient (current row, version 1, token rows), its visit and the message log entry, or nothing.
-- Called outside a transaction, the call is its own transaction, so such a message costs one
-- round trip to PostgreSQL instead of six (BEGIN, lock, look-up, write, log entry, COMMIT).
--
-- It takes the lock the service's find-or-create takes on the business identifier, then looks
-- the patient up: a PL/pgSQL statement takes its own snapshot, so the look-up sees a patient
-- that a concurrent writer committed while this call waited for the lock (one SQL statement
-- holding both would not). Outcomes, with nothing written unless 'created':
--   'exists'     an active patient has the identifier: the caller runs its ordinary update;
--   'duplicate'  the log already holds this sender's control id: the caller answers as for one.
-- The columns written are those of the service's ordinary writes (records write.ts, visits.ts,
-- message-log.ts), and the tests compare its rows with theirs; a release that writes another
-- column adds a function of another name beside this one, which nodes of the previous release
-- still call during a rolling upgrade. Site-scoped like every query on clinical rows: each statement names p_site.
CREATE FUNCTION record_new_patient_message(
  -- the patient's rows, in the order of the records write statement's parameters (write.ts rowValues)
  p_site uuid,
  p_resource_type text,
  p_id uuid,
  p_version_id integer,
  p_last_updated timestamptz,
  p_content jsonb,
  p_patient_id uuid,
  p_business_identifier text,
  p_active boolean,
  p_name_search text,
  p_birth_date_start date,
  p_birth_date_end date,
  p_token_params text[],
  p_token_codes text[],
  p_token_systems text[],
  -- the business identifier's lock key (write.ts patientIdentifierLockKey)
  p_lock_key text,
  -- the visit, when the message has one (p_visit_context NULL: none)
  p_visit_number text,
  p_visit_context jsonb,
  p_visit_admit_time text,
  -- the message log entry, in the order of its columns after site_id (message-log.ts entryValues)
  p_message_id uuid,
  p_protocol text,
  p_transport text,
  p_sending_application text,
  p_sending_facility text,
  p_control_id text,
  p_message_type text,
  p_outcome text,
  p_ack_code text,
  p_problems jsonb,
  p_ack_text text,
  p_raw bytea,
  p_remote_address text,
  p_received_at timestamptz,
  p_patient_identifier text,
  p_reprocess_of uuid,
  p_client_id uuid,
  p_api_key_id uuid
) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_lock_key, 0));
  PERFORM 1 FROM clinical_resource
    WHERE site_id = p_site AND resource_type = 'Patient' AND active AND business_identifier = p_business_identifier;
  IF FOUND THEN
    RETURN 'exists';
  END IF;
  -- The log entry first: a repeated control id leaves before anything is written.
  INSERT INTO inbound_message (site_id, id, protocol, transport, sending_application, sending_facility, control_id,
      message_type, outcome, ack_code, problems, ack_text, raw, remote_address, received_at, patient_identifier, reprocess_of, client_id, api_key_id)
    VALUES (p_site, p_message_id, p_protocol, p_transport, p_sending_application, p_sending_facility, p_control_id,
      p_message_type, p_outcome, p_ack_code, p_problems, p_ack_text, p_raw, p_remote_address, p_received_at, p_patient_identifier, p_reprocess_of, p_client_id, p_api_key_id)
    ON CONFLICT (site_id, protocol, sending_application, sending_facility, control_id)
      WHERE control_id IS NOT NULL AND reprocess_of IS NULL AND (outcome <> 'refused' OR reprocessed_as IS NOT NULL)
      DO NOTHING;
  IF NOT FOUND THEN
    RETURN 'duplicate';
  END IF;
  INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, patient_id,
      business_identifier, active, name_search, birth_date_start, birth_date_end)
    VALUES (p_site, p_resource_type, p_id, p_version_id, p_last_updated, p_content, p_patient_id,
      p_business_identifier, p_active, p_name_search, p_birth_date_start, p_birth_date_end);
  INSERT INTO clinical_resource_version (site_id, resource_type, id, version_id, last_updated, content)
    VALUES (p_site, p_resource_type, p_id, p_version_id, p_last_updated, p_content);
  INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id)
    SELECT p_site, p_resource_type, t.param, t.code, t.system, p_id
      FROM unnest(p_token_params, p_token_codes, p_token_systems) AS t(param, code, system);
  -- A new patient has no visit yet: a plain insert.
  IF p_visit_context IS NOT NULL THEN
    INSERT INTO patient_visit (site_id, id, patient_id, visit_number, context, admit_time)
      VALUES (p_site, gen_random_uuid(), p_id, p_visit_number, p_visit_context, p_visit_admit_time);
  END IF;
  RETURN 'created';
END
$$;
