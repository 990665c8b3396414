DROP TRIGGER users_announce_truncate ON users;
DROP TRIGGER users_announce_change ON users;
DROP TRIGGER api_tokens_announce_truncate ON api_tokens;
DROP TRIGGER api_tokens_announce_change ON api_tokens;
DROP FUNCTION recruitd_announce_credential_change();
