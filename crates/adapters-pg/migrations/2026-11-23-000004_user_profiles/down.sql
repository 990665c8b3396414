DROP TRIGGER users_announce_change ON users;
CREATE TRIGGER users_announce_change AFTER UPDATE OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_announce_credential_change();
ALTER TABLE organizations
    DROP COLUMN name_source,
    DROP COLUMN title_source,
    DROP COLUMN manager_source,
    DROP COLUMN linkedin_url_source;
ALTER TABLE users
    DROP CONSTRAINT users_manager,
    DROP CONSTRAINT users_manager_not_self,
    DROP COLUMN title,
    DROP COLUMN manager_id,
    DROP COLUMN linkedin_url,
    DROP COLUMN created_at,
    DROP COLUMN updated_at;
