-- The date search parameters of the clinical types (src/domain/records/search-parameters.ts):
-- Observation `date` (effective[x]), Procedure `date` (performed[x]), Condition `onset-date`
-- (onset[x]), AllergyIntolerance `date` (recordedDate) and DocumentReference `date`. Each type has
-- at most one, so its current row holds the instants it covers, as search compares them
-- (https://hl7.org/fhir/R4/search.html#date): the first, and the one just after the last. A
-- Period's missing bound is open on that side (-infinity, infinity); no date: both null.
ALTER TABLE clinical_resource
  ADD COLUMN clinical_date_start timestamptz,
  ADD COLUMN clinical_date_end timestamptz;

-- The resources stored before get the values a write gives them now, by the rules of
-- src/domain/records/fhir-date.ts (instantRange, storedInstantRange): a date without a time is
-- taken in UTC, a time needs a zone, fractions count to the millisecond. A value those rules
-- refuse indexes nothing (a write would have refused it).
CREATE FUNCTION cg_migration_0890_instant_range(value text, OUT low timestamptz, OUT high timestamptz)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  year int;
  month int;
  day int;
  base timestamp;
  zone text;
  fraction text;
BEGIN
  -- The forms are fixed-width, so the parts are read by position: a pattern with groups to
  -- capture costs PostgreSQL's regular expression engine hundreds of microseconds a value, one
  -- without them a few. Every check a cast below could fail on comes first, as an exception
  -- handler would cost a subtransaction a row.
  IF value IS NULL OR value !~ '^\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?)?)?$' THEN
    RETURN;
  END IF;
  year := substr(value, 1, 4)::int;
  month := CASE WHEN length(value) >= 7 THEN substr(value, 6, 2)::int ELSE 1 END;
  day := CASE WHEN length(value) >= 10 THEN substr(value, 9, 2)::int ELSE 1 END;
  IF year < 1 OR month NOT BETWEEN 1 AND 12 OR day NOT BETWEEN 1 AND extract(day FROM make_date(year, month, 1) + interval '1 month - 1 day') THEN
    RETURN;
  END IF;
  base := make_timestamp(year, month, day, 0, 0, 0);
  IF length(value) <= 10 THEN
    -- Calendar arithmetic on a timestamp without a zone: the session's zone (its summer time, its
    -- month ends) plays no part.
    low := base AT TIME ZONE 'UTC';
    high := (base + CASE length(value) WHEN 10 THEN interval '1 day' WHEN 7 THEN interval '1 month' ELSE interval '1 year' END) AT TIME ZONE 'UTC';
    RETURN;
  END IF;
  zone := CASE WHEN right(value, 1) = 'Z' THEN 'Z' ELSE right(value, 6) END;
  IF substr(value, 12, 2)::int > 23 OR substr(value, 15, 2)::int > 59 OR (substr(value, 17, 1) = ':' AND substr(value, 18, 2)::int > 59)
     OR (zone <> 'Z' AND (substr(zone, 2, 2)::int > 14 OR substr(zone, 5, 2)::int > 59)) THEN
    RETURN;
  END IF;
  fraction := CASE WHEN substr(value, 20, 1) = '.' THEN substr(value, 21, length(value) - 20 - length(zone)) END;
  low := (substr(value, 1, 16) || ':' || CASE WHEN substr(value, 17, 1) = ':' THEN substr(value, 18, 2) ELSE '00' END
          || CASE WHEN fraction IS NULL THEN '' ELSE '.' || rpad(left(fraction, 3), 3, '0') END || zone)::timestamptz;
  high := low + CASE
    WHEN fraction IS NOT NULL THEN (10 ^ (3 - least(length(fraction), 3)))::int * interval '1 millisecond'
    WHEN substr(value, 17, 1) = ':' THEN interval '1 second'
    ELSE interval '1 minute' END;
END $$;

CREATE FUNCTION cg_migration_0890_stored_range(value jsonb, OUT low timestamptz, OUT high timestamptz)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF jsonb_typeof(value) = 'string' THEN
    SELECT r.low, r.high INTO low, high FROM cg_migration_0890_instant_range(value #>> '{}') r;
    RETURN;
  END IF;
  IF jsonb_typeof(value) IS DISTINCT FROM 'object' OR NOT (value ? 'start' OR value ? 'end') THEN
    RETURN;
  END IF;
  low := '-infinity';
  high := 'infinity';
  IF value ? 'start' THEN
    low := (cg_migration_0890_instant_range(CASE WHEN jsonb_typeof(value -> 'start') = 'string' THEN value ->> 'start' END)).low;
  END IF;
  IF value ? 'end' THEN
    high := (cg_migration_0890_instant_range(CASE WHEN jsonb_typeof(value -> 'end') = 'string' THEN value ->> 'end' END)).high;
  END IF;
  -- A bound that is no date makes the Period no date (a write refuses it).
  IF low IS NULL OR high IS NULL THEN
    low := NULL;
    high := NULL;
  END IF;
END $$;

UPDATE clinical_resource r
   SET clinical_date_start = d.low, clinical_date_end = d.high
  FROM (SELECT c.site_id, c.resource_type, c.id, range.low, range.high
          FROM clinical_resource c
         CROSS JOIN LATERAL cg_migration_0890_stored_range(CASE c.resource_type
            WHEN 'Observation' THEN coalesce(c.content -> 'effectiveDateTime', c.content -> 'effectivePeriod', c.content -> 'effectiveInstant')
            WHEN 'Procedure' THEN coalesce(c.content -> 'performedDateTime', c.content -> 'performedPeriod')
            WHEN 'Condition' THEN coalesce(c.content -> 'onsetDateTime', c.content -> 'onsetPeriod')
            WHEN 'AllergyIntolerance' THEN c.content -> 'recordedDate'
            WHEN 'DocumentReference' THEN c.content -> 'date'
          END) range
         WHERE c.resource_type IN ('Observation', 'Procedure', 'Condition', 'AllergyIntolerance', 'DocumentReference')) d
 WHERE r.site_id = d.site_id AND r.resource_type = d.resource_type AND r.id = d.id AND d.low IS NOT NULL;

DROP FUNCTION cg_migration_0890_stored_range(jsonb);
DROP FUNCTION cg_migration_0890_instant_range(text);

-- Made after the values, so the update need not maintain them. Date searches without a patient (a day's results of a site; with a patient, the patient index
-- narrows first): eq, lt, le and ne bound the start, gt and ge the end.
CREATE INDEX clinical_resource_clinical_date_start_idx ON clinical_resource (site_id, resource_type, clinical_date_start)
  WHERE clinical_date_start IS NOT NULL;
CREATE INDEX clinical_resource_clinical_date_end_idx ON clinical_resource (site_id, resource_type, clinical_date_end)
  WHERE clinical_date_end IS NOT NULL;
