//! The rows of an import: a document's rows table by table, and the keys that find which of a
//! batch's ledger entries are stored already.

use std::collections::HashSet;

use recruit_domain::{OrganizationId, PrivacyAuditLogId};

use super::{
    CandidateRow, HiringTeamRow, JobRow, JobSettingsRow, JobStageRow, LedgerRow, OrganizationRow,
    SchedulingDefaultsRow, TaskQueueRow, UserRow, WorkHoursRow, column, job_rows,
};
use crate::{ImportDocument, ImportSummary, LedgerEntry, StoreError};

/// The rows of an import document, table by table, in the order they are inserted (a row's
/// references before it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DocumentRows {
    /// `organizations`.
    pub organizations: Vec<OrganizationRow>,
    /// `organization_scheduling_defaults`.
    pub scheduling_defaults: Vec<SchedulingDefaultsRow>,
    /// `organization_work_hours`.
    pub work_hours: Vec<WorkHoursRow>,
    /// `users`.
    pub users: Vec<UserRow>,
    /// `task_queues`.
    pub task_queues: Vec<TaskQueueRow>,
    /// `candidates`.
    pub candidates: Vec<CandidateRow>,
    /// `jobs`.
    pub jobs: Vec<JobRow>,
    /// `job_settings`.
    pub job_settings: Vec<JobSettingsRow>,
    /// `job_hiring_team`.
    pub hiring_team: Vec<HiringTeamRow>,
    /// `job_stages`.
    pub job_stages: Vec<JobStageRow>,
    /// `privacy_audit_logs`.
    pub privacy_audit_logs: Vec<LedgerRow>,
}

impl DocumentRows {
    /// The rows of `doc`. Fails only for a ledger entry no store can hold.
    pub fn new(doc: &ImportDocument) -> Result<Self, StoreError> {
        let mut rows = Self::default();
        for o in &doc.organizations {
            let (row, hours) = OrganizationRow::new(o);
            rows.organizations.push(row);
            rows.scheduling_defaults.push(SchedulingDefaultsRow::new(o));
            rows.work_hours.extend(hours);
        }
        rows.users = doc.users.iter().map(UserRow::new).collect();
        rows.task_queues = doc.task_queues.iter().map(TaskQueueRow::new).collect();
        rows.candidates = doc.candidates.iter().map(CandidateRow::new).collect();
        for j in &doc.jobs {
            let (row, settings, team, stages) = job_rows(j);
            rows.jobs.push(row);
            rows.job_settings.push(settings);
            rows.hiring_team.extend(team);
            rows.job_stages.extend(stages);
        }
        rows.privacy_audit_logs =
            doc.privacy_audit_logs.iter().map(LedgerRow::new).collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// What inserting these rows imports.
    pub fn summary(&self) -> ImportSummary {
        ImportSummary {
            organizations: self.organizations.len(),
            users: self.users.len(),
            task_queues: self.task_queues.len(),
            candidates: self.candidates.len(),
            jobs: self.jobs.len(),
            privacy_audit_logs: self.privacy_audit_logs.len(),
        }
    }
}

/// The ledger entries of an import batch, for finding which are stored already: the
/// organizations and identifiers to look up (a store looks up every identifier within every
/// organization named, in chunks), and which of the rows found are the batch's.
#[derive(Clone, Debug)]
pub struct LedgerKeys {
    wanted: HashSet<(OrganizationId, PrivacyAuditLogId)>,
    /// The organizations of the batch's entries, each once.
    pub organizations: Vec<column::Uuid>,
    /// The identifiers of the batch's entries, each once.
    pub ids: Vec<column::Uuid>,
}

impl LedgerKeys {
    /// The keys of `batch`'s ledger entries.
    pub fn new(batch: &ImportDocument) -> Self {
        let wanted: HashSet<_> =
            batch.privacy_audit_logs.iter().map(|e| (e.organization_id, e.entry.id)).collect();
        let organizations =
            wanted.iter().map(|(o, _)| o.uuid()).collect::<HashSet<_>>().into_iter().collect();
        let ids = wanted.iter().map(|(_, id)| id.uuid()).collect();
        Self { wanted, organizations, ids }
    }

    /// The entries of `rows` (found by organization and identifier) that are the batch's.
    pub fn keep(
        &self,
        rows: impl IntoIterator<Item = LedgerRow>,
        found: &mut Vec<LedgerEntry>,
    ) -> Result<(), StoreError> {
        for row in rows {
            let entry = row.into_ledger_entry()?;
            if self.wanted.contains(&(entry.organization_id, entry.entry.id)) {
                found.push(entry);
            }
        }
        Ok(())
    }
}
