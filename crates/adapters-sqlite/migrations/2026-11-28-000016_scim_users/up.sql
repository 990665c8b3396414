-- Users provisioned by an identity provider over SCIM: whether they may sign in, the name the
-- provider knows them by, and the provider's own identifier. A user is never deleted (the
-- ledgers name them): a SCIM delete marks them REMOVED.
ALTER TABLE users ADD COLUMN status TEXT NOT NULL DEFAULT 'ACTIVE'
    CHECK (status IN ('ACTIVE', 'DEACTIVATED', 'REMOVED'));
ALTER TABLE users ADD COLUMN user_name TEXT;
ALTER TABLE users ADD COLUMN external_id TEXT;
-- SCIM's userName is unique within the organization, compared without case (RFC 7643 §4.1.1).
CREATE UNIQUE INDEX users_user_name ON users (organization_id, lower(user_name))
    WHERE status <> 'REMOVED' AND user_name IS NOT NULL;
CREATE INDEX users_external_id ON users (organization_id, external_id) WHERE external_id IS NOT NULL;
