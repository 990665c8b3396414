-- Each job's three scheduling settings as resolved from its overrides (job_settings) and its
-- organization's defaults (organization_scheduling_defaults): kept by the store in the
-- transaction that writes either, so that the job read joins neither. Jobs stored before
-- are resolved once when the store migrates (recruit_ports::rows::ResolvedSettingsRow::new),
-- since the rule lives in recruit-domain, not in SQL.
CREATE TABLE job_resolved_settings (
    organization_id BLOB NOT NULL,
    job_id BLOB NOT NULL,
    name_is_custom INTEGER NOT NULL,
    name_is_locked INTEGER NOT NULL,
    name_show_interview_name INTEGER NOT NULL,
    info_is_custom INTEGER NOT NULL,
    info_is_locked INTEGER NOT NULL,
    info_can_show_info INTEGER NOT NULL,
    info_can_show_full_name INTEGER NOT NULL,
    info_can_show_job_title INTEGER NOT NULL,
    info_can_show_linkedin INTEGER NOT NULL,
    info_can_show_email INTEGER NOT NULL,
    info_can_show_profile_picture INTEGER NOT NULL,
    info_can_show_pronouns INTEGER NOT NULL,
    info_can_show_bio INTEGER NOT NULL,
    contact_is_custom INTEGER NOT NULL,
    contact_is_locked INTEGER NOT NULL,
    contact_show_recruiter INTEGER NOT NULL,
    contact_show_coordinator INTEGER NOT NULL,
    contact_can_show_job_title INTEGER NOT NULL,
    contact_can_show_linkedin INTEGER NOT NULL,
    contact_can_show_profile_picture INTEGER NOT NULL,
    contact_can_show_pronouns INTEGER NOT NULL,
    contact_can_show_bio INTEGER NOT NULL,
    contact_can_show_phone INTEGER NOT NULL,
    PRIMARY KEY (organization_id, job_id),
    FOREIGN KEY (organization_id, job_id) REFERENCES jobs (organization_id, id)
) STRICT;
