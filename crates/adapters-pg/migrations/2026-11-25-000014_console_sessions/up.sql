-- Sessions of the review console: the browser keeps the secret in a cookie, the server its hash.
-- A session acts through its token and ends with it (revoked, expired, its user demoted).
CREATE TABLE console_sessions (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    user_id uuid NOT NULL,
    token_id uuid NOT NULL,
    secret_hash bytea NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    ended_at timestamptz,
    PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, token_id) REFERENCES api_tokens (organization_id, id)
);
