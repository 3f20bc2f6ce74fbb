-- The message log as an operations console (search, filters, reprocess): columns that the
-- filters need, indexes that keep every filtered and paged query off a sequential scan of the
-- log on millions of rows, and the link between a failed message and its reprocessed attempts.

-- PID-3 (first identifier) of an HL7 v2 message, so an operator can find a patient's messages.
-- Messages logged before this column existed have none (their raw text is still there).
ALTER TABLE inbound_message ADD COLUMN patient_identifier text;
-- On a reprocessed attempt: the failed message it re-ran (same site).
ALTER TABLE inbound_message ADD COLUMN reprocess_of uuid;
-- On a failed message: the attempt that was later accepted; a sender re-sending the control id
-- then gets that attempt's acknowledgement, and the message cannot be reprocessed again.
ALTER TABLE inbound_message ADD COLUMN reprocessed_as uuid;

-- refused: an MLLP message from an address registered for the site whose MSH-3/MSH-4 matched no
-- integration client; kept (rate-limited) so that operators see it and can reprocess it once
-- the client is fixed. It was never processed, so it takes no part in idempotency.
ALTER TABLE inbound_message DROP CONSTRAINT inbound_message_outcome_check;
ALTER TABLE inbound_message ADD CONSTRAINT inbound_message_outcome_check CHECK (outcome IN ('processed', 'error', 'rejected', 'refused'));

-- Idempotency covers what senders delivered and the service processed: reprocessed attempts
-- carry the same control id beside their original and stay out of the key; a refused message
-- was not processed and stays out too, until an operator reprocesses it successfully (then it
-- stands for that control id, and a re-send gets the accepted attempt's answer).
DROP INDEX inbound_message_control_id_key;
CREATE UNIQUE INDEX inbound_message_control_id_key
  ON inbound_message (site_id, protocol, sending_application, sending_facility, control_id)
  WHERE control_id IS NOT NULL AND reprocess_of IS NULL AND (outcome <> 'refused' OR reprocessed_as IS NOT NULL);
-- At most one accepted attempt per failed message, whatever the races between operators.
CREATE UNIQUE INDEX inbound_message_accepted_reprocess_key
  ON inbound_message (site_id, reprocess_of) WHERE reprocess_of IS NOT NULL AND outcome = 'processed';
CREATE INDEX inbound_message_reprocess_of_idx ON inbound_message (site_id, reprocess_of) WHERE reprocess_of IS NOT NULL;

-- The log's order is (received_at, seq): time as received, ties broken by creation order.
-- Keyset paging reads it from both ends and from any instant (jump to a date).
DROP INDEX inbound_message_seq_idx;
CREATE INDEX inbound_message_received_idx ON inbound_message (site_id, received_at, seq);
-- Failures are few and are what operators look for: a small partial index finds them among
-- millions of accepted messages without walking those.
CREATE INDEX inbound_message_failed_idx ON inbound_message (site_id, outcome, received_at, seq) WHERE outcome <> 'processed';
CREATE INDEX inbound_message_type_idx ON inbound_message (site_id, message_type, received_at, seq);
CREATE INDEX inbound_message_control_id_idx ON inbound_message (site_id, control_id) WHERE control_id IS NOT NULL;
CREATE INDEX inbound_message_patient_idx ON inbound_message (site_id, patient_identifier) WHERE patient_identifier IS NOT NULL;
CREATE INDEX inbound_message_application_idx ON inbound_message (site_id, sending_application, received_at, seq);
CREATE INDEX inbound_message_facility_idx ON inbound_message (site_id, sending_facility, received_at, seq);
