//! Jobs' scheduling settings kept resolved, written once over [`Db`].

use std::collections::HashMap;

use recruit_domain::Uuid;
use recruit_ports::StoreError;
use recruit_ports::rows as neutral;

use crate::Row;
use crate::db::Db;
use crate::statement::Statement;

/// Resolves and keeps the scheduling settings of the jobs that have none kept: those whose
/// ids are `jobs` (just written, in the caller's transaction), or every one (`None`, once,
/// when the store migrates). The rule is the domain's (`ResolvedSettingsRow::new`); a job
/// whose organization has no defaults stored is left unresolved.
pub async fn keep_resolved<D: Db>(c: &mut D, jobs: Option<&[Uuid]>) -> Result<(), StoreError> {
    let d = D::DIALECT;
    let mut unresolved = Statement::new();
    unresolved.sql(
        "SELECT s.* FROM job_settings s LEFT JOIN job_resolved_settings r \
         ON r.organization_id = s.organization_id AND r.job_id = s.job_id \
         WHERE r.job_id IS NULL",
    );
    if let Some(jobs) = jobs {
        unresolved.sql(" AND ").in_ids(d, "s.job_id", jobs.to_vec());
    }
    let settings: Vec<D::JobSettingsRow> = c.load(unresolved).await?;
    let settings =
        settings.into_iter().map(Row::into_neutral).collect::<Result<Vec<_>, StoreError>>()?;
    if settings.is_empty() {
        return Ok(());
    }
    let mut orgs: Vec<Uuid> = settings.iter().map(|s| s.organization_id).collect();
    orgs.sort_unstable();
    orgs.dedup();
    let mut defaults = Statement::new();
    defaults.sql("SELECT * FROM organization_scheduling_defaults WHERE ");
    defaults.in_ids(d, "organization_id", orgs);
    let defaults: Vec<D::SchedulingDefaultsRow> = c.load(defaults).await?;
    let defaults: HashMap<Uuid, neutral::SchedulingDefaultsRow> = defaults
        .into_iter()
        .map(|r| r.into_neutral().map(|r| (r.organization_id, r)))
        .collect::<Result<_, StoreError>>()?;
    let resolved = settings
        .iter()
        .filter_map(|s| {
            let defaults = defaults.get(&s.organization_id)?.clone();
            Some(neutral::ResolvedSettingsRow::new(s, defaults))
        })
        .collect();
    c.insert_resolved(resolved).await
}
