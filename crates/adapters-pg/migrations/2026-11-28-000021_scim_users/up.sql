-- Users provisioned by an identity provider over SCIM: whether they may sign in, the name the
-- provider knows them by, and the provider's own identifier. A user is never deleted (the
-- ledgers name them): a SCIM delete marks them REMOVED.
ALTER TABLE users
    ADD COLUMN status text NOT NULL DEFAULT 'ACTIVE'
        CHECK (status IN ('ACTIVE', 'DEACTIVATED', 'REMOVED')),
    ADD COLUMN user_name text,
    ADD COLUMN external_id text;
-- SCIM's userName is unique within the organization, compared without case (RFC 7643 §4.1.1);
CREATE UNIQUE INDEX users_user_name ON users (organization_id, lower(user_name))
    WHERE status <> 'REMOVED' AND user_name IS NOT NULL;
CREATE INDEX users_external_id ON users (organization_id, external_id) WHERE external_id IS NOT NULL;

-- A credential shows whether its user may sign in: servers forget the credentials they keep
-- when a user's status changes too.
DROP TRIGGER users_announce_change ON users;
CREATE TRIGGER users_announce_change AFTER UPDATE OF organization_id, id, role, status OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_announce_credential_change();
