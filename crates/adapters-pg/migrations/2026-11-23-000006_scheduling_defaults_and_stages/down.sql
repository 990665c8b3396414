DROP TABLE job_stages;
ALTER TABLE job_settings ADD COLUMN name_is_locked boolean NOT NULL DEFAULT false;
ALTER TABLE job_settings ADD COLUMN name_level text NOT NULL DEFAULT 'ORG';
ALTER TABLE job_settings ADD COLUMN info_is_locked boolean NOT NULL DEFAULT false;
ALTER TABLE job_settings ADD COLUMN info_level text NOT NULL DEFAULT 'ORG';
ALTER TABLE job_settings ADD COLUMN contact_is_locked boolean NOT NULL DEFAULT false;
ALTER TABLE job_settings ADD COLUMN contact_level text NOT NULL DEFAULT 'ORG';
DROP TABLE organization_scheduling_defaults;
