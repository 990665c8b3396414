//! The import port: a checked document in one transaction, and a ledger batch written again
//! after a stopped run.

use std::collections::HashSet;

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use recruit_adapters_diesel::native::NativeImport;
use recruit_adapters_diesel::review::Dialect;
use recruit_ports::rows as neutral;
use recruit_ports::{
    ExistingIds, ImportDocument, ImportError, ImportSummary, LedgerEntry, ResumedBatch,
};

use crate::PgBackend;
use crate::error::*;
use crate::rows::*;
use crate::schema::*;

/// How many identifiers one look-up of stored ledger entries names at most.
pub(crate) const LOOKUP_CHUNK: usize = 50_000;

pub(crate) async fn look_up(
    c: &mut AsyncPgConnection,
    doc: &ImportDocument,
) -> Result<ExistingIds, TxError> {
    let l = doc.lookups();
    let mut existing = ExistingIds::default();
    let uuids = |ids: &mut dyn Iterator<Item = recruit_domain::Uuid>| ids.collect::<Vec<_>>();
    let orgs = uuids(&mut l.organizations.iter().map(|o| o.uuid()));
    for id in organizations::table
        .filter(organizations::id.eq_any(&orgs))
        .select(organizations::id)
        .load::<recruit_domain::Uuid>(c)
        .await?
    {
        existing.organizations.insert(id.into());
    }
    let users = uuids(&mut l.users.iter().map(|u| u.uuid()));
    for (id, org) in users::table
        .filter(users::id.eq_any(&users))
        .select((users::id, users::organization_id))
        .load::<(recruit_domain::Uuid, recruit_domain::Uuid)>(c)
        .await?
    {
        existing.users.insert(id.into(), org.into());
    }
    let queues = uuids(&mut l.task_queues.iter().map(|q| q.uuid()));
    for (id, org) in task_queues::table
        .filter(task_queues::id.eq_any(&queues))
        .select((task_queues::id, task_queues::organization_id))
        .load::<(recruit_domain::Uuid, recruit_domain::Uuid)>(c)
        .await?
    {
        existing.task_queues.insert(id.into(), org.into());
    }
    let cands = uuids(&mut l.candidates.iter().map(|x| x.uuid()));
    for id in candidates::table
        .filter(candidates::id.eq_any(&cands))
        .select(candidates::id)
        .load::<recruit_domain::Uuid>(c)
        .await?
    {
        existing.candidates.insert(id.into());
    }
    let jobs_wanted = uuids(&mut l.jobs.iter().map(|x| x.uuid()));
    for id in jobs::table
        .filter(jobs::id.eq_any(&jobs_wanted))
        .select(jobs::id)
        .load::<recruit_domain::Uuid>(c)
        .await?
    {
        existing.jobs.insert(id.into());
    }
    let stages_wanted = uuids(&mut l.job_stages.iter().map(|x| x.uuid()));
    for id in job_stages::table
        .filter(job_stages::id.eq_any(&stages_wanted))
        .select(job_stages::id)
        .load::<recruit_domain::Uuid>(c)
        .await?
    {
        existing.job_stages.insert(id.into());
    }
    let wanted: HashSet<_> = l.privacy_audit_logs.iter().copied().collect();
    let entry_ids = uuids(&mut l.privacy_audit_logs.iter().map(|(_, id)| id.uuid()));
    for part in entry_ids.chunks(LOOKUP_CHUNK) {
        // Filtering by organization too lets the primary key (organization_id, id) serve it.
        for (id, org) in privacy_audit_logs::table
            .filter(privacy_audit_logs::organization_id.eq_any(&orgs))
            .filter(privacy_audit_logs::id.eq_any(part))
            .select((privacy_audit_logs::id, privacy_audit_logs::organization_id))
            .load::<(recruit_domain::Uuid, recruit_domain::Uuid)>(c)
            .await?
        {
            let key = (org.into(), id.into());
            if wanted.contains(&key) {
                existing.privacy_audit_logs.insert(key);
            }
        }
    }
    Ok(existing)
}

impl NativeImport for PgBackend {
    async fn import(&self, document: &ImportDocument) -> Result<ImportSummary, ImportError> {
        // Ledger batches (the NDJSON import) go in by COPY and skip the look-up of what is
        // stored, which cost as much as the insert: almost every batch is valid, and the few
        // that are not are tried again through the checked path, which says where the problem
        // is.
        let ledger_only = document.len() == document.privacy_audit_logs.len();
        if ledger_only && let Some(summary) = self.copy_ledger(document).await? {
            return Ok(summary);
        }
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| insert_document(c, document).await)
            .await
            .map_err(ImportError::from)
    }

    async fn resume_ledger(&self, batch: &ImportDocument) -> Result<ResumedBatch, ImportError> {
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| {
            let stored = stored_ledger_entries(c, batch).await?;
            let (rest, already_stored) = batch.without_stored(&stored).map_err(TxError::Invalid)?;
            let written = insert_document(c, &rest).await?.privacy_audit_logs;
            Ok(ResumedBatch { written, already_stored })
        })
        .await
        .map_err(ImportError::from)
    }
}

/// Checks `doc` against what is stored and inserts it whole (in the caller's transaction).
pub(crate) async fn insert_document(
    c: &mut AsyncPgConnection,
    doc: &ImportDocument,
) -> Result<ImportSummary, TxError> {
    let existing = look_up(c, doc).await?;
    doc.check(&existing).map_err(TxError::Invalid)?;
    let mut rows = neutral::DocumentRows::new(doc)?;
    crate::chain::chain(c, &mut rows).await?;
    let summary = rows.summary();
    recruit_adapters_diesel::insert_document_rows(&mut crate::chain::PgDb(c), rows).await?;
    if !doc.jobs.is_empty() {
        let jobs: Vec<_> = doc.jobs.iter().map(|j| j.id.uuid()).collect();
        keep_resolved_settings(c, Some(&jobs)).await?;
    }
    Ok(summary)
}

/// Resolves and keeps the scheduling settings of the jobs that have none kept: those of `jobs`
/// (just written, in the caller's transaction), or every one when `jobs` is `None` (once, when
/// the store migrates): [`recruit_adapters_diesel::settings::keep_resolved`].
pub(crate) async fn keep_resolved_settings(
    c: &mut AsyncPgConnection,
    jobs: Option<&[recruit_domain::Uuid]>,
) -> Result<(), TxError> {
    Ok(recruit_adapters_diesel::settings::keep_resolved(&mut crate::chain::PgDb(c), jobs).await?)
}

/// The stored privacy ledger entries among the batch's (organization, id) pairs.
pub(crate) async fn stored_ledger_entries(
    c: &mut AsyncPgConnection,
    batch: &ImportDocument,
) -> Result<Vec<LedgerEntry>, TxError> {
    use recruit_adapters_diesel::statement::{keep_stored, stored_entries};
    let keys = neutral::LedgerKeys::new(batch);
    let mut found = vec![];
    for statement in stored_entries(Dialect::POSTGRES, &keys, LOOKUP_CHUNK) {
        let rows: Vec<LedgerRow> = crate::chain::bound(statement).load(c).await?;
        keep_stored(&keys, rows, &mut found)?;
    }
    Ok(found)
}
