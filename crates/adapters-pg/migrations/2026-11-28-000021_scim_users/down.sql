DROP TRIGGER users_announce_change ON users;
CREATE TRIGGER users_announce_change AFTER UPDATE OF organization_id, id, role OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_announce_credential_change();
DROP INDEX users_external_id;
DROP INDEX users_user_name;
ALTER TABLE users DROP COLUMN external_id, DROP COLUMN user_name, DROP COLUMN status;
