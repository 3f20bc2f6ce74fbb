-- Processes cache what authenticates a request (API keys with their user and site, integration
-- clients). Every change that could alter such a decision notifies the channel at commit, from
-- whichever process made it (the service, the CLI, another instance), so caches drop their
-- entries at once instead of serving a revoked key or a disabled client until an expiry.
CREATE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('credentials_changed', TG_TABLE_NAME);
  RETURN NULL;
END
$$;

-- Not on last_used_at: it is written once a minute per busy key and decides nothing.
CREATE TRIGGER api_key_credentials_changed
  AFTER UPDATE OF prefix, secret_hash, revoked_at, site_id, user_id OR DELETE ON api_key
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();

CREATE TRIGGER app_user_credentials_changed
  AFTER UPDATE OR DELETE ON app_user
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();

CREATE TRIGGER site_credentials_changed
  AFTER UPDATE OR DELETE ON site
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();

-- Inserts too: a newly registered client must be admitted without waiting.
CREATE TRIGGER integration_client_credentials_changed
  AFTER INSERT OR UPDATE OR DELETE ON integration_client
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
