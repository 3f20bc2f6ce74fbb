-- Search pages pick their rows by id from the token indexes, then order them by seq or
-- last_updated; with both in this index that step reads no table rows (index-only scan).
CREATE UNIQUE INDEX clinical_resource_id_cover ON clinical_resource (site_id, resource_type, id) INCLUDE (seq, last_updated);
