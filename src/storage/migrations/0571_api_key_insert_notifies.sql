-- Processes remember prefixes that matched no key (so that an unknown prefix costs what a known
-- one does: issue 26 point 10). A key created afterwards, by any process, must be found at once,
-- so inserts notify too.
CREATE TRIGGER api_key_inserted_credentials_changed
  AFTER INSERT ON api_key
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
