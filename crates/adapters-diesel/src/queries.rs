//! The queries both stores run, written once as macros that expand where the adapter's schema
//! (`job_settings`, `privacy_audit_logs`, …), rows and `insert_rows!` are in scope: each
//! backend resolves the table paths and column types to its own, and an async backend passes
//! `.await` as the last argument.

/// Resolves and keeps the scheduling settings of the jobs that have none kept: those whose
/// stored ids are `$jobs` (`Some(&[…])`, just written in the caller's transaction), or every
/// one (`None`, once, when the store migrates). The rule is the domain's
/// (`ResolvedSettingsRow::new`). Evaluates to `Ok(())` or the first error, converted with `?`.
#[macro_export]
macro_rules! keep_resolved_settings {
    ($c:ident, $jobs:expr $(, .$await:tt)?) => {{
        let mut unresolved = job_settings::table
            .inner_join(organization_scheduling_defaults::table.on(
                organization_scheduling_defaults::organization_id
                    .eq(job_settings::organization_id),
            ))
            .left_join(
                job_resolved_settings::table.on(job_resolved_settings::organization_id
                    .eq(job_settings::organization_id)
                    .and(job_resolved_settings::job_id.eq(job_settings::job_id))),
            )
            .filter(job_resolved_settings::job_id.nullable().is_null())
            .select((JobSettingsRow::as_select(), SchedulingDefaultsRow::as_select()))
            .into_boxed();
        if let Some(jobs) = $jobs {
            unresolved = unresolved.filter(job_settings::job_id.eq_any(jobs));
        }
        let loaded = unresolved.load($c)$(.$await)?;
        let pairs: Vec<(JobSettingsRow, SchedulingDefaultsRow)> = loaded?;
        let resolved = pairs
            .into_iter()
            .map(|(settings, defaults)| {
                Ok(::recruit_ports::rows::ResolvedSettingsRow::new(
                    &settings.into_neutral()?,
                    defaults.into_neutral()?,
                ))
            })
            .collect::<Result<Vec<_>, ::recruit_ports::StoreError>>()?;
        insert_rows!($c, job_resolved_settings::table, ResolvedSettingsRow, resolved);
        Ok(())
    }};
}
