-- Each organization's defaults of the three scheduling settings its jobs inherit, each with
-- whether it is locked. Organizations stored before get the built-in defaults
-- (`SchedulingDefaults::BUILT_IN`, as of this migration).
CREATE TABLE organization_scheduling_defaults (
    organization_id uuid PRIMARY KEY REFERENCES organizations (id),
    name_show_interview_name boolean NOT NULL,
    name_is_locked boolean NOT NULL,
    info_can_show_info boolean NOT NULL,
    info_can_show_full_name boolean NOT NULL,
    info_can_show_job_title boolean NOT NULL,
    info_can_show_linkedin boolean NOT NULL,
    info_can_show_email boolean NOT NULL,
    info_can_show_profile_picture boolean NOT NULL,
    info_can_show_pronouns boolean NOT NULL,
    info_can_show_bio boolean NOT NULL,
    info_is_locked boolean NOT NULL,
    contact_show_recruiter boolean NOT NULL,
    contact_show_coordinator boolean NOT NULL,
    contact_can_show_job_title boolean NOT NULL,
    contact_can_show_linkedin boolean NOT NULL,
    contact_can_show_profile_picture boolean NOT NULL,
    contact_can_show_pronouns boolean NOT NULL,
    contact_can_show_bio boolean NOT NULL,
    contact_can_show_phone boolean NOT NULL,
    contact_is_locked boolean NOT NULL
);
INSERT INTO organization_scheduling_defaults (organization_id, name_show_interview_name, name_is_locked, info_can_show_info, info_can_show_full_name, info_can_show_job_title, info_can_show_linkedin, info_can_show_email, info_can_show_profile_picture, info_can_show_pronouns, info_can_show_bio, info_is_locked, contact_show_recruiter, contact_show_coordinator, contact_can_show_job_title, contact_can_show_linkedin, contact_can_show_profile_picture, contact_can_show_pronouns, contact_can_show_bio, contact_can_show_phone, contact_is_locked)
SELECT id, true, false, true, true, true, false, false, true, true, false, false, true, true, true, false, false, true, false, false, false FROM organizations;

-- A job keeps only which settings it overrides and their values: whether a setting is locked
-- and where it came from are derived when the job is read.
ALTER TABLE job_settings DROP COLUMN name_is_locked;
ALTER TABLE job_settings DROP COLUMN name_level;
ALTER TABLE job_settings DROP COLUMN info_is_locked;
ALTER TABLE job_settings DROP COLUMN info_level;
ALTER TABLE job_settings DROP COLUMN contact_is_locked;
ALTER TABLE job_settings DROP COLUMN contact_level;

-- The stages of each job's hiring process, in order; a stage's id is unique.
CREATE TABLE job_stages (
    organization_id uuid NOT NULL,
    job_id uuid NOT NULL,
    position integer NOT NULL CHECK (position >= 0),
    id uuid NOT NULL UNIQUE,
    name text NOT NULL,
    PRIMARY KEY (organization_id, job_id, position),
    FOREIGN KEY (organization_id, job_id) REFERENCES jobs (organization_id, id)
);
