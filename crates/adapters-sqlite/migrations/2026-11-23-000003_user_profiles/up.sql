-- Users' profiles: a title, a manager (a user of the same organization, which the service and
-- the import check), a LinkedIn URL, and when each user was created and last changed, in
-- microseconds since the epoch. Users stored before get the time of this migration.
ALTER TABLE users ADD COLUMN title TEXT;
ALTER TABLE users ADD COLUMN manager_id BLOB
    CHECK (manager_id IS NULL OR (length(manager_id) = 16 AND manager_id <> id));
ALTER TABLE users ADD COLUMN linkedin_url TEXT;
ALTER TABLE users ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
UPDATE users SET
    created_at = CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER),
    updated_at = CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER);

-- Where each organization keeps the truth of each profile field: this API, a directory sync
-- or SCIM provisioning.
ALTER TABLE organizations ADD COLUMN name_source TEXT NOT NULL DEFAULT 'API'
    CHECK (name_source IN ('API', 'DIRECTORY', 'SCIM'));
ALTER TABLE organizations ADD COLUMN title_source TEXT NOT NULL DEFAULT 'API'
    CHECK (title_source IN ('API', 'DIRECTORY', 'SCIM'));
ALTER TABLE organizations ADD COLUMN manager_source TEXT NOT NULL DEFAULT 'API'
    CHECK (manager_source IN ('API', 'DIRECTORY', 'SCIM'));
ALTER TABLE organizations ADD COLUMN linkedin_url_source TEXT NOT NULL DEFAULT 'API'
    CHECK (linkedin_url_source IN ('API', 'DIRECTORY', 'SCIM'));
