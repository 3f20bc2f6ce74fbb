-- HL7 v2 results are identified by their observation, not their position (HL7 v2.5.1 section
-- 7.4.2.4: within an order, OBX-3 plus OBX-4 identify an observation; OBX-1 only numbers the
-- segments of one message). Results stored before carry the identifier
--   urn:clinical-gateway:hl7v2:result | <MSH-4>|<order>|<OBR-1>|<OBX-1>|<OBX-4>
-- and from now on
--   urn:clinical-gateway:hl7v2:order-result | <MSH-4>|<order>|<system>^<code>|<OBX-4>
-- where system^code is the stored code's first coding (src/hl7v2/mapping/result-identity.ts).
-- Each stored result is given its new identifier as a new version, so that the next report of
-- its order updates it instead of adding a second one. A coding system the service has no URI
-- for was not stored, so those results get an empty system here; the intake looks them up under
-- that form too (formerKey in src/hl7v2/mapping/observation-identifier.ts). Results that shared an
-- order and code in different OBR groups, or at different set ids, now share an identity, which
-- the intake tells apart by value kind, then creation order, as it does within one message.
CREATE TEMPORARY TABLE result_identity_0510 ON COMMIT DROP AS
WITH legacy AS (
  SELECT site_id, resource_type, id, version_id, content,
         content #>> '{identifier,0,value}' AS old_value,
         content #> CASE resource_type WHEN 'Observation' THEN '{code,coding,0}'::text[] ELSE '{type,coding,0}'::text[] END AS coding
    FROM clinical_resource
   WHERE resource_type IN ('Observation', 'DocumentReference')
     AND content #>> '{identifier,0,system}' = 'urn:clinical-gateway:hl7v2:result'
), renamed AS (
  SELECT legacy.*,
         substring(old_value FROM '^(.*)\|[^|]*\|[^|]*\|[^|]*$') || '|' || coalesce(coding ->> 'system', '') || '^'
           || coalesce(coding ->> 'code', '') || '|' || substring(old_value FROM '\|([^|]*)$') AS new_value
    FROM legacy
)
SELECT site_id, resource_type, id, old_value, new_value, version_id + 1 AS version_id, now() AS last_updated,
       jsonb_set(
         jsonb_set(content, '{identifier,0}', jsonb_build_object('system', 'urn:clinical-gateway:hl7v2:order-result', 'value', new_value)),
         '{meta}',
         coalesce(content -> 'meta', '{}'::jsonb) || jsonb_build_object(
           'versionId', (version_id + 1)::text,
           'lastUpdated', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))) AS content
  FROM renamed
 WHERE new_value IS NOT NULL;

UPDATE clinical_resource c
   SET version_id = r.version_id, last_updated = r.last_updated, content = r.content
  FROM result_identity_0510 r
 WHERE c.site_id = r.site_id AND c.resource_type = r.resource_type AND c.id = r.id;

INSERT INTO clinical_resource_version (site_id, resource_type, id, version_id, last_updated, content)
SELECT site_id, resource_type, id, version_id, last_updated, content FROM result_identity_0510;

DELETE FROM clinical_resource_token t
 USING result_identity_0510 r
 WHERE t.site_id = r.site_id AND t.resource_type = r.resource_type AND t.resource_id = r.id
   AND t.param = 'identifier' AND t.system = 'urn:clinical-gateway:hl7v2:result' AND t.code = r.old_value;

INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id)
SELECT site_id, resource_type, 'identifier', new_value, 'urn:clinical-gateway:hl7v2:order-result', id FROM result_identity_0510
ON CONFLICT DO NOTHING;
