-- Servers keep verified credentials in memory; they listen on this channel and forget them all
-- when a token or a user changes in a way a credential shows. Recording a token's last use
-- (`last_used_at` alone) announces nothing.
CREATE FUNCTION recruitd_announce_credential_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('recruitd_credentials', TG_TABLE_NAME);
    RETURN NULL;
END;
$$;

CREATE TRIGGER api_tokens_announce_change
    AFTER UPDATE OF organization_id, id, user_id, name, scopes, secret_hash, created_at,
        expires_at, revoked_at OR DELETE ON api_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_announce_credential_change();
CREATE TRIGGER api_tokens_announce_truncate AFTER TRUNCATE ON api_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_announce_credential_change();
CREATE TRIGGER users_announce_change AFTER UPDATE OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_announce_credential_change();
CREATE TRIGGER users_announce_truncate AFTER TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_announce_credential_change();
