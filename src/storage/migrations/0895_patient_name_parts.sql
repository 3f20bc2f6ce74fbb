-- Patient search by family and given name (src/domain/records/search-parameters.ts). The parts
-- are taken from name_search, which the service writes with each part normalized for search
-- (lower case, no diacritics: normalizeForNameSearch in src/domain/records/index-values.ts), so
-- that a part compares with a search value normalized by the same code: PostgreSQL has no
-- equivalent of that normalization. name_search holds, name after name, the non-empty string
-- parts of each in the order text, family, given, prefix, suffix, separated by U+001F; the
-- names in the resource say which positions are family and which are given. Nothing is stored,
-- so the patients stored before are searchable at once.
-- How many non-empty strings an array of name parts (given, prefix, suffix) holds.
CREATE FUNCTION cg_name_string_count(value jsonb) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT count(*)::int
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(value) = 'array' THEN value ELSE '[]'::jsonb END) AS element
   WHERE jsonb_typeof(element) = 'string' AND element #>> '{}' <> ''
$$;

CREATE FUNCTION cg_patient_name_parts(content jsonb, name_search text, part text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  parts text[] := string_to_array(name_search, chr(31));
  position int := 1;
  found text[] := '{}';
  name jsonb;
  given int;
BEGIN
  IF name_search IS NULL OR jsonb_typeof(content -> 'name') IS DISTINCT FROM 'array' THEN
    RETURN found;
  END IF;
  FOR name IN SELECT value FROM jsonb_array_elements(content -> 'name') LOOP
    IF jsonb_typeof(name -> 'text') = 'string' AND name ->> 'text' <> '' THEN
      position := position + 1;
    END IF;
    IF jsonb_typeof(name -> 'family') = 'string' AND name ->> 'family' <> '' THEN
      IF part = 'family' THEN
        found := found || parts[position];
      END IF;
      position := position + 1;
    END IF;
    given := cg_name_string_count(name -> 'given');
    IF part = 'given' AND given > 0 THEN
      found := found || parts[position:position + given - 1];
    END IF;
    position := position + given + cg_name_string_count(name -> 'prefix') + cg_name_string_count(name -> 'suffix');
  END LOOP;
  RETURN found;
END $$;
