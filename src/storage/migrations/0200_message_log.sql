-- The inbound message log (HL7 v2 and HL7 v3): every message a site's senders delivered, with
-- its raw bytes and the acknowledgement it got, written in the transaction that applied it.
-- site_id leads the primary key and every index (tenancy; distributable by site).
CREATE TABLE inbound_message (
  site_id uuid NOT NULL REFERENCES site (id),
  id uuid NOT NULL,
  -- Creation order within the server; the keyset for paging the log.
  seq bigint GENERATED ALWAYS AS IDENTITY,
  protocol text NOT NULL CHECK (protocol IN ('hl7v2', 'hl7v3')),
  transport text NOT NULL CHECK (transport IN ('http', 'mllp')),
  sending_application text NOT NULL DEFAULT '',
  sending_facility text NOT NULL DEFAULT '',
  -- MSH-10 (v2) or the message id (v3); null when the message had none that could be read.
  control_id text,
  message_type text NOT NULL DEFAULT '',
  outcome text NOT NULL CHECK (outcome IN ('processed', 'error', 'rejected')),
  ack_code text NOT NULL,
  problems jsonb NOT NULL DEFAULT '[]',
  ack_text text NOT NULL,
  raw bytea NOT NULL,
  remote_address text,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, id)
);

-- Idempotency (DESIGN.md section 2): one message per control id per sender within a site.
CREATE UNIQUE INDEX inbound_message_control_id_key
  ON inbound_message (site_id, protocol, sending_application, sending_facility, control_id)
  WHERE control_id IS NOT NULL;
CREATE INDEX inbound_message_seq_idx ON inbound_message (site_id, seq DESC);

-- HL7 v2 PV1 visit context, kept against the site's patient.
CREATE TABLE patient_visit (
  site_id uuid NOT NULL REFERENCES site (id),
  id uuid NOT NULL,
  patient_id uuid NOT NULL,
  visit_number text,
  context jsonb NOT NULL,
  admit_time text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, id)
);
CREATE UNIQUE INDEX patient_visit_number_key ON patient_visit (site_id, patient_id, visit_number) WHERE visit_number IS NOT NULL;
CREATE UNIQUE INDEX patient_visit_unnumbered_key ON patient_visit (site_id, patient_id) WHERE visit_number IS NULL;
