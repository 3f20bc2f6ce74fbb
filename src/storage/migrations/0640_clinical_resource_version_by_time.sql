-- Type- and system-level history (https://hl7.org/fhir/R4/http.html#history): the versions of a
-- site's resources of one type, newest first, paged by (last_updated, id, version_id). System-level
-- history merges one such range per type, so this one index serves both. Its cost on writes is
-- measured in docs/architecture/fhir.md.
CREATE INDEX clinical_resource_version_time_idx
  ON clinical_resource_version (site_id, resource_type, last_updated, id, version_id);
