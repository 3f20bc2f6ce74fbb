-- Clinical records: FHIR R4 resources, versioned, confined to one site.
--
-- clinical_resource holds the current version of every resource, clinical_resource_version every
-- version ever written (including the current one), and the search index tables hold what the
-- FHIR search parameters need. All are written in the transaction that writes the resource, so a
-- committed resource is searchable at once. site_id leads every primary key and every index, so
-- the tables distribute by site (Citus) and no query needs rows of two sites.
--
-- btree_gin lets one GIN index lead with site_id and continue with the trigram name column.
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE SEQUENCE clinical_resource_seq;

CREATE TABLE clinical_resource (
  site_id uuid NOT NULL REFERENCES site (id),
  resource_type text NOT NULL,
  id uuid NOT NULL,
  -- Creation order; never changes, so it is the stable keyset for paging.
  seq bigint NOT NULL DEFAULT nextval('clinical_resource_seq'),
  version_id integer NOT NULL CHECK (version_id >= 1),
  last_updated timestamptz NOT NULL,
  content jsonb NOT NULL,
  -- The Patient a resource belongs to (subject or patient reference); null for Patient itself.
  patient_id uuid,
  -- Patient only: identifier[0].value (DESIGN.md: the site's business identifier), whether the
  -- patient is active (Patient.active is not false), lower-cased name parts for substring search,
  -- and the birth date as the first and last day it can denote (FHIR dates may be yyyy or yyyy-mm).
  business_identifier text,
  active boolean NOT NULL DEFAULT true,
  name_search text,
  birth_date_start date,
  birth_date_end date,
  PRIMARY KEY (site_id, resource_type, id),
  CONSTRAINT clinical_resource_patient_fields CHECK (
    resource_type = 'Patient' OR (business_identifier IS NULL AND name_search IS NULL AND birth_date_start IS NULL)
  )
);

-- One active patient per business identifier per site: concurrent HL7 and DICOM intake can
-- never create two patients for one identifier, whatever the application does.
CREATE UNIQUE INDEX clinical_resource_patient_business_identifier_key
  ON clinical_resource (site_id, business_identifier)
  WHERE resource_type = 'Patient' AND active AND business_identifier IS NOT NULL;

-- Paging keysets: creation order, and _sort=_lastUpdated (both directions scan this index).
CREATE UNIQUE INDEX clinical_resource_seq_key ON clinical_resource (site_id, resource_type, seq);
CREATE INDEX clinical_resource_last_updated_idx ON clinical_resource (site_id, resource_type, last_updated, seq);
-- The patient search parameter and the patient compartment.
CREATE INDEX clinical_resource_patient_idx ON clinical_resource (site_id, patient_id, resource_type, seq)
  WHERE patient_id IS NOT NULL;
CREATE INDEX clinical_resource_birth_date_idx ON clinical_resource (site_id, birth_date_start, birth_date_end)
  WHERE resource_type = 'Patient';
CREATE INDEX clinical_resource_name_search_idx ON clinical_resource USING gin (site_id, name_search gin_trgm_ops)
  WHERE resource_type = 'Patient';

CREATE TABLE clinical_resource_version (
  site_id uuid NOT NULL REFERENCES site (id),
  resource_type text NOT NULL,
  id uuid NOT NULL,
  version_id integer NOT NULL,
  last_updated timestamptz NOT NULL,
  content jsonb NOT NULL,
  PRIMARY KEY (site_id, resource_type, id, version_id)
);

-- Token search parameters (identifier, code, gender, clinical-status, type). An absent system is
-- stored as '' so that `|code` (no system) is an equality, and the primary key needs no nulls.
CREATE TABLE clinical_resource_token (
  site_id uuid NOT NULL REFERENCES site (id),
  resource_type text NOT NULL,
  param text NOT NULL,
  code text NOT NULL,
  system text NOT NULL,
  resource_id uuid NOT NULL,
  PRIMARY KEY (site_id, resource_type, param, code, system, resource_id)
);
-- `system|` (any code of a system).
CREATE INDEX clinical_resource_token_system_idx ON clinical_resource_token (site_id, resource_type, param, system);
-- Replacing a resource's tokens on update.
CREATE INDEX clinical_resource_token_resource_idx ON clinical_resource_token (site_id, resource_type, resource_id);
