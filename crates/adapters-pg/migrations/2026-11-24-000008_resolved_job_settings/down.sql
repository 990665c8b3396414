DROP TABLE job_resolved_settings;
