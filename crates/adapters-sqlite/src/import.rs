//! The import port: a checked document in one immediate transaction, and a ledger batch
//! written again after a stopped run; the jobs' resolved settings kept as they are written.

use std::collections::HashSet;

use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use recruit_adapters_diesel::native::NativeImport;
use recruit_adapters_diesel::review::Dialect;
use recruit_ports::rows as neutral;
use recruit_ports::{
    ExistingIds, ImportDocument, ImportError, ImportSummary, LedgerEntry, ResumedBatch, StoreError,
};

use crate::SqliteBackend;
use crate::chain::chain;
use crate::db::SqliteDb;
use crate::error::TxError;
use crate::rows;
use crate::rows::*;
use crate::schema::*;

/// How many identifiers one look-up names at most (SQLite binds each as a parameter).
const LOOKUP_CHUNK: usize = 10_000;

/// Which of `ids` exist in `table`, with their organization: `(id, organization_id)` pairs.
fn existing_pairs(
    c: &mut SqliteConnection,
    ids: Vec<Vec<u8>>,
    load: impl Fn(&mut SqliteConnection, &[Vec<u8>]) -> QueryResult<Vec<(Vec<u8>, Vec<u8>)>>,
    mut add: impl FnMut(Vec<u8>, Vec<u8>) -> Result<(), StoreError>,
) -> Result<(), TxError> {
    for part in ids.chunks(LOOKUP_CHUNK) {
        for (id, org) in load(c, part)? {
            add(id, org)?;
        }
    }
    Ok(())
}

fn look_up(c: &mut SqliteConnection, doc: &ImportDocument) -> Result<ExistingIds, TxError> {
    let lookups = doc.lookups();
    let mut existing = ExistingIds::default();
    let blobs = |ids: Vec<recruit_domain::Uuid>| ids.into_iter().map(blob).collect::<Vec<_>>();

    let orgs = blobs(lookups.organizations.iter().map(|o| o.uuid()).collect());
    for part in orgs.chunks(LOOKUP_CHUNK) {
        for id in organizations::table
            .filter(organizations::id.eq_any(part))
            .select(organizations::id)
            .load::<Vec<u8>>(c)?
        {
            existing.organizations.insert(rows::id(&id)?);
        }
    }
    existing_pairs(
        c,
        blobs(lookups.users.iter().map(|u| u.uuid()).collect()),
        |c, part| {
            users::table
                .filter(users::id.eq_any(part))
                .select((users::id, users::organization_id))
                .load(c)
        },
        |id, org| {
            existing.users.insert(rows::id(&id)?, rows::id(&org)?);
            Ok(())
        },
    )?;
    existing_pairs(
        c,
        blobs(lookups.task_queues.iter().map(|q| q.uuid()).collect()),
        |c, part| {
            task_queues::table
                .filter(task_queues::id.eq_any(part))
                .select((task_queues::id, task_queues::organization_id))
                .load(c)
        },
        |id, org| {
            existing.task_queues.insert(rows::id(&id)?, rows::id(&org)?);
            Ok(())
        },
    )?;
    existing_pairs(
        c,
        blobs(lookups.candidates.iter().map(|x| x.uuid()).collect()),
        |c, part| {
            candidates::table
                .filter(candidates::id.eq_any(part))
                .select((candidates::id, candidates::organization_id))
                .load(c)
        },
        |id, _| {
            existing.candidates.insert(rows::id(&id)?);
            Ok(())
        },
    )?;
    existing_pairs(
        c,
        blobs(lookups.jobs.iter().map(|x| x.uuid()).collect()),
        |c, part| {
            jobs::table
                .filter(jobs::id.eq_any(part))
                .select((jobs::id, jobs::organization_id))
                .load(c)
        },
        |id, _| {
            existing.jobs.insert(rows::id(&id)?);
            Ok(())
        },
    )?;
    existing_pairs(
        c,
        blobs(lookups.job_stages.iter().map(|x| x.uuid()).collect()),
        |c, part| {
            job_stages::table
                .filter(job_stages::id.eq_any(part))
                .select((job_stages::id, job_stages::organization_id))
                .load(c)
        },
        |id, _| {
            existing.job_stages.insert(rows::id(&id)?);
            Ok(())
        },
    )?;
    let wanted: HashSet<_> = lookups.privacy_audit_logs.iter().copied().collect();
    // Filtering by organization too lets the primary key (organization_id, id) serve it.
    existing_pairs(
        c,
        blobs(lookups.privacy_audit_logs.iter().map(|(_, id)| id.uuid()).collect()),
        |c, part| {
            privacy_audit_logs::table
                .filter(privacy_audit_logs::organization_id.eq_any(&orgs))
                .filter(privacy_audit_logs::id.eq_any(part))
                .select((privacy_audit_logs::id, privacy_audit_logs::organization_id))
                .load(c)
        },
        |id, org| {
            let key = (rows::id(&org)?, rows::id(&id)?);
            if wanted.contains(&key) {
                existing.privacy_audit_logs.insert(key);
            }
            Ok(())
        },
    )?;
    Ok(existing)
}

impl NativeImport for SqliteBackend {
    async fn import(&self, document: &ImportDocument) -> Result<ImportSummary, ImportError> {
        let doc = document.clone();
        self.transaction(move |c| insert_document(c, &doc)).await.map_err(ImportError::from)
    }

    async fn resume_ledger(&self, batch: &ImportDocument) -> Result<ResumedBatch, ImportError> {
        let batch = batch.clone();
        self.transaction(move |c| -> Result<ResumedBatch, TxError> {
            let stored = stored_ledger_entries(c, &batch)?;
            let (rest, already_stored) = batch
                .without_stored(&stored)
                .map_err(|p| TxError::Import(ImportError::Invalid(p)))?;
            let written = insert_document(c, &rest)?.privacy_audit_logs;
            Ok(ResumedBatch { written, already_stored })
        })
        .await
        .map_err(ImportError::from)
    }
}

/// Checks `doc` against what is stored and inserts it whole (in the caller's transaction).
fn insert_document(
    c: &mut SqliteConnection,
    doc: &ImportDocument,
) -> Result<ImportSummary, TxError> {
    let existing = look_up(c, doc)?;
    doc.check(&existing).map_err(|p| TxError::Import(ImportError::Invalid(p)))?;
    let mut rows = neutral::DocumentRows::new(doc)?;
    chain(c, &mut rows)?;
    let summary = rows.summary();
    let db = &mut crate::db::SqliteDb(c);
    crate::db::at_once(recruit_adapters_diesel::insert_document_rows(db, rows))?;
    if !doc.jobs.is_empty() {
        let jobs: Vec<_> = doc.jobs.iter().map(|j| j.id.uuid()).collect();
        keep_resolved_settings(c, Some(&jobs))?;
    }
    Ok(summary)
}

/// Resolves and keeps the scheduling settings of the jobs that have none kept: those of `jobs`
/// (just written, in the caller's transaction), or every one when `jobs` is `None` (once, when
/// the store migrates): [`recruit_adapters_diesel::settings::keep_resolved`].
pub(crate) fn keep_resolved_settings(
    c: &mut SqliteConnection,
    jobs: Option<&[recruit_domain::Uuid]>,
) -> Result<(), TxError> {
    let db = &mut SqliteDb(c);
    Ok(crate::db::at_once(recruit_adapters_diesel::settings::keep_resolved(db, jobs))?)
}

/// The stored privacy ledger entries among the batch's (organization, id) pairs.
fn stored_ledger_entries(
    c: &mut SqliteConnection,
    batch: &ImportDocument,
) -> Result<Vec<LedgerEntry>, TxError> {
    use recruit_adapters_diesel::statement::{keep_stored, stored_entries};
    let keys = neutral::LedgerKeys::new(batch);
    let mut found = vec![];
    for statement in stored_entries(Dialect::SQLITE, &keys, LOOKUP_CHUNK) {
        let rows: Vec<LedgerRow> = crate::db::bound(statement).load(c)?;
        keep_stored(&keys, rows, &mut found)?;
    }
    Ok(found)
}
