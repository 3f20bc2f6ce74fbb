-- Several HL7 v2 ADT messages for patients the site does not know yet, stored by one call and so
-- in one transaction with one commit: the intake gathers the messages that arrive on several
-- connections at once, sends them together, and acknowledges each only after this call answers
-- (the call commits on its own). Each message is stored exactly as record_new_patient_message
-- (migration 0850) stores it alone, by calling it: the same outcomes, one per message, in order.
--
-- The parameters are that function's, one array element per message; the token rows of all the
-- messages are in three flat arrays, message i's from p_token_ends[i - 1] + 1 to p_token_ends[i].
--
-- The identifiers' locks are taken first, in the order of their keys: two calls (or a call and
-- the ordinary find-or-create) that name the same identifiers then wait for each other instead of
-- deadlocking. If the call fails as a whole (a deadlock past that, a constraint), nothing was
-- written and the service sends each message again alone.
CREATE FUNCTION record_new_patient_messages(
  p_site uuid[],
  p_resource_type text[],
  p_id uuid[],
  p_version_id integer[],
  p_last_updated timestamptz[],
  p_content jsonb[],
  p_patient_id uuid[],
  p_business_identifier text[],
  p_active boolean[],
  p_name_search text[],
  p_birth_date_start date[],
  p_birth_date_end date[],
  p_token_ends integer[],
  p_token_params text[],
  p_token_codes text[],
  p_token_systems text[],
  p_lock_key text[],
  p_visit_number text[],
  p_visit_context jsonb[],
  p_visit_admit_time text[],
  p_message_id uuid[],
  p_protocol text[],
  p_transport text[],
  p_sending_application text[],
  p_sending_facility text[],
  p_control_id text[],
  p_message_type text[],
  p_outcome text[],
  p_ack_code text[],
  p_problems jsonb[],
  p_ack_text text[],
  p_raw bytea[],
  p_remote_address text[],
  p_received_at timestamptz[],
  p_patient_identifier text[],
  p_reprocess_of uuid[],
  p_client_id uuid[],
  p_api_key_id uuid[]
) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v_key bigint;
  v_from integer := 1;
  v_outcomes text[] := '{}';
BEGIN
  FOR v_key IN SELECT DISTINCT hashtextextended(k, 0) FROM unnest(p_lock_key) AS k ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(v_key);
  END LOOP;
  FOR i IN 1 .. cardinality(p_id) LOOP
    v_outcomes := v_outcomes || record_new_patient_message(
      p_site[i], p_resource_type[i], p_id[i], p_version_id[i], p_last_updated[i], p_content[i], p_patient_id[i],
      p_business_identifier[i], p_active[i], p_name_search[i], p_birth_date_start[i], p_birth_date_end[i],
      coalesce(p_token_params[v_from:p_token_ends[i]], '{}'), coalesce(p_token_codes[v_from:p_token_ends[i]], '{}'),
      coalesce(p_token_systems[v_from:p_token_ends[i]], '{}'),
      p_lock_key[i], p_visit_number[i], p_visit_context[i], p_visit_admit_time[i],
      p_message_id[i], p_protocol[i], p_transport[i], p_sending_application[i], p_sending_facility[i], p_control_id[i],
      p_message_type[i], p_outcome[i], p_ack_code[i], p_problems[i], p_ack_text[i], p_raw[i], p_remote_address[i],
      p_received_at[i], p_patient_identifier[i], p_reprocess_of[i], p_client_id[i], p_api_key_id[i]);
    v_from := p_token_ends[i] + 1;
  END LOOP;
  RETURN v_outcomes;
END
$$;
