-- Users' profiles: a title, a manager (a user of the same organization; checked at commit, so
-- that a document's users may name managers inserted after them), a LinkedIn URL, and when each
-- user was created and last changed. Users stored before get the time of this migration.
ALTER TABLE users
    ADD COLUMN title text,
    ADD COLUMN manager_id uuid,
    ADD COLUMN linkedin_url text,
    ADD COLUMN created_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
    ADD CONSTRAINT users_manager FOREIGN KEY (organization_id, manager_id)
        REFERENCES users (organization_id, id) DEFERRABLE INITIALLY DEFERRED,
    ADD CONSTRAINT users_manager_not_self CHECK (manager_id <> id);
ALTER TABLE users ALTER COLUMN created_at DROP DEFAULT, ALTER COLUMN updated_at DROP DEFAULT;

-- Where each organization keeps the truth of each profile field: this API, a directory sync
-- or SCIM provisioning.
ALTER TABLE organizations
    ADD COLUMN name_source text NOT NULL DEFAULT 'API'
        CHECK (name_source IN ('API', 'DIRECTORY', 'SCIM')),
    ADD COLUMN title_source text NOT NULL DEFAULT 'API'
        CHECK (title_source IN ('API', 'DIRECTORY', 'SCIM')),
    ADD COLUMN manager_source text NOT NULL DEFAULT 'API'
        CHECK (manager_source IN ('API', 'DIRECTORY', 'SCIM')),
    ADD COLUMN linkedin_url_source text NOT NULL DEFAULT 'API'
        CHECK (linkedin_url_source IN ('API', 'DIRECTORY', 'SCIM'));

-- A credential shows a user's organization, id and role; servers forget the credentials they
-- keep when one of those changes, not when a profile does.
DROP TRIGGER users_announce_change ON users;
CREATE TRIGGER users_announce_change AFTER UPDATE OF organization_id, id, role OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_announce_credential_change();
