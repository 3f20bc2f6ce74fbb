-- C-MOVE destinations (PS3.4 C.4.2): the AE titles a site's administrators allow studies to be
-- moved to, with where each listens. Site-scoped like every clinical table; the AE title is
-- unique per site, case-insensitively, as the listener compares called AE titles (0560).
CREATE TABLE dicom_destination (
  site_id uuid NOT NULL REFERENCES site (id),
  id uuid NOT NULL,
  ae_title text NOT NULL CHECK (ae_title ~ '^[\x21-\x5b\x5d-\x7e]([\x20-\x5b\x5d-\x7e]{0,14}[\x21-\x5b\x5d-\x7e])?$'),
  host text NOT NULL CHECK (length(host) BETWEEN 1 AND 253),
  port integer NOT NULL CHECK (port BETWEEN 1 AND 65535),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, id)
);
CREATE UNIQUE INDEX dicom_destination_ae_title_key ON dicom_destination (site_id, upper(ae_title));
