-- Sessions of the review console: the browser keeps the secret in a cookie, the server its hash.
-- A session acts through its token and ends with it (revoked, expired, its user demoted).
CREATE TABLE console_sessions (
    organization_id BLOB NOT NULL,
    id BLOB NOT NULL,
    user_id BLOB NOT NULL,
    token_id BLOB NOT NULL,
    secret_hash BLOB NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    created_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    ended_at INTEGER,
    PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, token_id) REFERENCES api_tokens (organization_id, id)
) STRICT;
