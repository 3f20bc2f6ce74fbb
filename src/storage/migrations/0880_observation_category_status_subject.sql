-- Observation becomes searchable by category and status (src/domain/records/search-parameters.ts),
-- the searches most FHIR clients make of results (US Core: patient and category, patient and
-- code). New and updated Observations get these token rows as they are written; the ones stored
-- before get them here, by the same rules as src/domain/records/index-values.ts: one row per
-- coding of each category with a code (no system stored as ''), the status under the code
-- system its required binding implies. Values longer than the service indexes (1,024 characters)
-- were refused on write and are skipped here. `subject` is the same index as `patient`: no rows.
INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id)
SELECT DISTINCT r.site_id, r.resource_type, 'category', coding ->> 'code',
       CASE WHEN jsonb_typeof(coding -> 'system') = 'string' THEN coding ->> 'system' ELSE '' END, r.id
  FROM clinical_resource r
 CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(r.content -> 'category') = 'array' THEN r.content -> 'category' ELSE '[]'::jsonb END) AS category
 CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(category -> 'coding') = 'array' THEN category -> 'coding' ELSE '[]'::jsonb END) AS coding
 WHERE r.resource_type = 'Observation'
   AND jsonb_typeof(coding -> 'code') = 'string' AND coding ->> 'code' <> ''
   AND length(coding ->> 'code') <= 1024
   AND length(CASE WHEN jsonb_typeof(coding -> 'system') = 'string' THEN coding ->> 'system' ELSE '' END) <= 1024
ON CONFLICT DO NOTHING;

INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id)
SELECT r.site_id, r.resource_type, 'status', r.content ->> 'status', 'http://hl7.org/fhir/observation-status', r.id
  FROM clinical_resource r
 WHERE r.resource_type = 'Observation'
   AND jsonb_typeof(r.content -> 'status') = 'string' AND r.content ->> 'status' <> ''
   AND length(r.content ->> 'status') <= 1024
ON CONFLICT DO NOTHING;
