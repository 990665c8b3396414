DROP INDEX users_external_id;
DROP INDEX users_user_name;
ALTER TABLE users DROP COLUMN external_id;
ALTER TABLE users DROP COLUMN user_name;
ALTER TABLE users DROP COLUMN status;
