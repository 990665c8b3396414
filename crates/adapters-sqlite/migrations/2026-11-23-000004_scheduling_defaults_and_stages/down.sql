DROP TABLE job_stages;
ALTER TABLE job_settings ADD COLUMN name_is_locked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_settings ADD COLUMN name_level TEXT NOT NULL DEFAULT 'ORG';
ALTER TABLE job_settings ADD COLUMN info_is_locked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_settings ADD COLUMN info_level TEXT NOT NULL DEFAULT 'ORG';
ALTER TABLE job_settings ADD COLUMN contact_is_locked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_settings ADD COLUMN contact_level TEXT NOT NULL DEFAULT 'ORG';
DROP TABLE organization_scheduling_defaults;
