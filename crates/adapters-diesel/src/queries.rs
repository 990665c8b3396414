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

/// Reads the stored user `$id` of the organization `$org` (stored ids) and appends the privacy
/// ledger rows `$logged` that record the read, linked into their chain by `$chain`, in the
/// caller's transaction: the body of `Directory::read_user`. Evaluates to the user's row or
/// the first error, converted with `?`.
#[macro_export]
macro_rules! read_profile {
    ($c:ident, $org:expr, $id:expr, $logged:ident, $chain:path $(, .$await:tt)?) => {{
        let found = users::table.find(($org, $id)).select(UserRow::as_select()).first($c)$(.$await)?;
        let row: UserRow = found?;
        $chain($c, &mut $logged)$(.$await)??;
        insert_rows!($c, privacy_audit_logs::table, LedgerRow, $logged);
        Ok(row)
    }};
}

/// Writes the profile fields the API changes of the stored user `$user` (a `UserRow`) and
/// appends the privacy ledger rows `$logged` that record the change, linked into their chain
/// by `$chain`, in the caller's transaction, once it has checked that what the decision read
/// is unchanged. A user gone meanwhile is CONFLICT. Evaluates to `Ok(())` or the first error,
/// converted with `?`.
#[macro_export]
macro_rules! write_profile {
    ($c:ident, $user:expr, $logged:ident, $chain:path $(, .$await:tt)?) => {{
        let user: &UserRow = $user;
        let changed = diesel::update(users::table.find((&user.organization_id, &user.id)))
            .set((
                users::name.eq(&user.name),
                users::title.eq(&user.title),
                users::manager_id.eq(&user.manager_id),
                users::linkedin_url.eq(&user.linkedin_url),
                users::updated_at.eq(&user.updated_at),
            ))
            .execute($c)$(.$await)?;
        if changed? != 1 {
            return Err(::recruit_ports::StoreError::Conflict("the user is gone".into()).into());
        }
        $chain($c, &mut $logged)$(.$await)??;
        insert_rows!($c, privacy_audit_logs::table, LedgerRow, $logged);
        Ok(())
    }};
}
