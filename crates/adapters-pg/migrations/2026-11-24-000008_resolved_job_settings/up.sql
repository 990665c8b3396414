-- Each job's three scheduling settings as resolved from its overrides (job_settings) and its
-- organization's defaults (organization_scheduling_defaults): kept by the store in the
-- transaction that writes either, so that the job read joins neither. Jobs stored before
-- are resolved once when the store migrates (recruit_ports::rows::ResolvedSettingsRow::new),
-- since the rule lives in recruit-domain, not in SQL.
CREATE TABLE job_resolved_settings (
    organization_id uuid NOT NULL,
    job_id uuid NOT NULL,
    name_is_custom boolean NOT NULL,
    name_is_locked boolean NOT NULL,
    name_show_interview_name boolean NOT NULL,
    info_is_custom boolean NOT NULL,
    info_is_locked boolean NOT NULL,
    info_can_show_info boolean NOT NULL,
    info_can_show_full_name boolean NOT NULL,
    info_can_show_job_title boolean NOT NULL,
    info_can_show_linkedin boolean NOT NULL,
    info_can_show_email boolean NOT NULL,
    info_can_show_profile_picture boolean NOT NULL,
    info_can_show_pronouns boolean NOT NULL,
    info_can_show_bio boolean NOT NULL,
    contact_is_custom boolean NOT NULL,
    contact_is_locked boolean NOT NULL,
    contact_show_recruiter boolean NOT NULL,
    contact_show_coordinator boolean NOT NULL,
    contact_can_show_job_title boolean NOT NULL,
    contact_can_show_linkedin boolean NOT NULL,
    contact_can_show_profile_picture boolean NOT NULL,
    contact_can_show_pronouns boolean NOT NULL,
    contact_can_show_bio boolean NOT NULL,
    contact_can_show_phone boolean NOT NULL,
    PRIMARY KEY (organization_id, job_id),
    FOREIGN KEY (organization_id, job_id) REFERENCES jobs (organization_id, id)
);
