-- A site's DICOM AE title is unique regardless of letter case (issue 26 point 13): titles that
-- differ only in case ("RADIOLOGY", "Radiology") look the same to the people configuring
-- modalities, and one site must never receive images meant for another because of a typo.
-- Existing titles that collide stop the migration with the list, rather than one being renamed
-- behind an operator's back: give each site a distinct title (administration app, or
-- `clinical-gateway site update SITE --ae-title AET`), then start again.
DO $$
DECLARE
  clashes text;
BEGIN
  SELECT string_agg(titles, '; ') INTO clashes
  FROM (SELECT string_agg(format('%s (site %s)', ae_title, name), ', ' ORDER BY ae_title) AS titles
        FROM site GROUP BY upper(ae_title) HAVING count(*) > 1) AS colliding;
  IF clashes IS NOT NULL THEN
    RAISE EXCEPTION 'sites whose DICOM AE titles differ only in letter case: %', clashes
      USING HINT = 'give each of these sites a distinct AE title (administration app, or clinical-gateway site update SITE --ae-title AET), then start the service again';
  END IF;
END $$;

CREATE UNIQUE INDEX site_ae_title_any_case_key ON site (upper(ae_title));
DROP INDEX site_ae_title_key;
