//! The import document (`docs/import-format.md`) and its validation, shared by every adapter:
//! an adapter looks up which of the document's identifiers are already stored
//! ([`ImportDocument::lookups`]), then [`ImportDocument::check`] decides, naming the path of the
//! first problem.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

use recruit_domain::model::{Ats, DataSubject, HiringTeamRole, JobSettings, JobStatus};
use recruit_domain::{
    Candidate, CandidateId, JobId, JobStageId, OrganizationId, PrivacyAuditLogId, TaskQueue,
    TaskQueueId, Timestamp, User, UserId,
};
use serde::{Deserialize, Serialize};

use crate::{ImportProblem, LedgerEntry, OrganizationRecord};

/// A whole document of entities to import, every array optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportDocument {
    /// Organizations, as the API shows them without `app_url`.
    #[serde(default)]
    pub organizations: Vec<OrganizationRecord>,
    /// Users, with their organization and role.
    #[serde(default)]
    pub users: Vec<User>,
    /// Task queues.
    #[serde(default)]
    pub task_queues: Vec<TaskQueue>,
    /// Candidates.
    #[serde(default)]
    pub candidates: Vec<Candidate>,
    /// Jobs, with their hiring team as user identifiers.
    #[serde(default)]
    pub jobs: Vec<NewJob>,
    /// Privacy audit ledger entries.
    #[serde(default)]
    pub privacy_audit_logs: Vec<LedgerEntry>,
}

/// A job to import: the API's job without `app_url`, with its organization, and its hiring
/// team as user identifiers (names are resolved when the job is read).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewJob {
    /// The organization the job belongs to.
    pub organization_id: OrganizationId,
    /// The job's identifier.
    pub id: JobId,
    /// The job's name.
    pub name: String,
    /// The job's status.
    pub status: JobStatus,
    /// Whether the job is confidential.
    pub confidential: bool,
    /// The job's locations.
    pub locations: Vec<String>,
    /// The hiring team.
    pub hiring_team: Vec<NewHiringTeamMember>,
    /// The job in the external applicant-tracking system.
    pub ats: Ats,
    /// When the job was created.
    pub created_at: Timestamp,
    /// When the job last changed.
    pub updated_at: Timestamp,
    /// The scheduling settings: a setting with `is_custom: true` is the job's override of its
    /// organization's default; one with `is_custom: false` takes the default. `is_locked` and
    /// `level` are derived when the job is read; what a document says of them is not kept.
    pub settings: JobSettings,
    /// The stages of the job's hiring process, in order (positions 0, 1, …).
    #[serde(default)]
    pub job_stages: Vec<NewJobStage>,
}

/// A stage of a job to import; its position is its place in the job's list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewJobStage {
    /// The stage's identifier.
    pub id: JobStageId,
    /// The stage's name.
    pub name: String,
}

/// A member of a hiring team to import.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewHiringTeamMember {
    /// The member's role on the team.
    pub role: HiringTeamRole,
    /// The member, a user of the job's organization.
    pub user_id: UserId,
}

/// How many entities of each kind an import wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportSummary {
    /// Organizations written.
    pub organizations: usize,
    /// Users written.
    pub users: usize,
    /// Task queues written.
    pub task_queues: usize,
    /// Candidates written.
    pub candidates: usize,
    /// Jobs written.
    pub jobs: usize,
    /// Privacy audit ledger entries written.
    pub privacy_audit_logs: usize,
}

/// What writing a ledger batch again ([`crate::Import::resume_ledger`]) did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResumedBatch {
    /// Entries written now.
    pub written: usize,
    /// Entries left out because an identical one was already stored.
    pub already_stored: usize,
}

/// The identifiers an adapter must look up before [`ImportDocument::check`]: every identifier
/// the document defines or refers to, by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lookups {
    /// Organizations defined or referred to.
    pub organizations: Vec<OrganizationId>,
    /// Users defined or referred to.
    pub users: Vec<UserId>,
    /// Task queues defined or referred to.
    pub task_queues: Vec<TaskQueueId>,
    /// Candidates defined.
    pub candidates: Vec<CandidateId>,
    /// Jobs defined.
    pub jobs: Vec<JobId>,
    /// Job stages defined.
    pub job_stages: Vec<JobStageId>,
    /// Ledger entries defined, with their organization.
    pub privacy_audit_logs: Vec<(OrganizationId, PrivacyAuditLogId)>,
}

/// Which of the [`Lookups`] are already stored, with the organization of each where the
/// check needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExistingIds {
    /// Stored organizations.
    pub organizations: HashSet<OrganizationId>,
    /// Stored users and their organization.
    pub users: HashMap<UserId, OrganizationId>,
    /// Stored task queues and their organization.
    pub task_queues: HashMap<TaskQueueId, OrganizationId>,
    /// Stored candidates.
    pub candidates: HashSet<CandidateId>,
    /// Stored jobs.
    pub jobs: HashSet<JobId>,
    /// Stored job stages.
    pub job_stages: HashSet<JobStageId>,
    /// Stored ledger entries.
    pub privacy_audit_logs: HashSet<(OrganizationId, PrivacyAuditLogId)>,
}

fn sorted_unique<T: Ord>(mut ids: Vec<T>) -> Vec<T> {
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The longest purpose an entry states, in characters, as the API takes it.
const MAX_PURPOSE_LEN: usize = 500;

fn problem(path: String, reason: impl Into<String>) -> ImportProblem {
    ImportProblem { path, reason: reason.into() }
}

/// Checks that each key is defined once in the document and not stored yet.
fn check_new<K: Eq + Hash + Copy>(
    kind: &str,
    keys: impl IntoIterator<Item = K>,
    stored: impl Fn(&K) -> bool,
) -> Result<HashMap<K, usize>, ImportProblem> {
    let mut seen = HashMap::new();
    for (i, key) in keys.into_iter().enumerate() {
        if let Some(first) = seen.insert(key, i) {
            return Err(problem(
                format!("{kind}[{i}].id"),
                format!("duplicates {kind}[{first}].id"),
            ));
        }
        if stored(&key) {
            return Err(problem(format!("{kind}[{i}].id"), "already exists"));
        }
    }
    Ok(seen)
}

impl ImportDocument {
    /// For writing a batch of ledger entries again after an import stopped part-way: the
    /// batch without the entries already stored exactly as given, and how many those were.
    /// `stored` is what the store holds under the batch's identifiers. An entry stored with
    /// other values is a problem at its path: the file and the ledger disagree, and the
    /// ledger is never rewritten.
    pub fn without_stored(
        &self,
        stored: &[LedgerEntry],
    ) -> Result<(ImportDocument, usize), ImportProblem> {
        let stored: HashMap<_, _> =
            stored.iter().map(|e| ((e.organization_id, e.entry.id), e)).collect();
        let mut rest = ImportDocument { privacy_audit_logs: vec![], ..self.clone() };
        let mut already = 0;
        for (i, entry) in self.privacy_audit_logs.iter().enumerate() {
            match stored.get(&(entry.organization_id, entry.entry.id)) {
                Some(&same) if same == entry => already += 1,
                Some(_) => {
                    return Err(problem(
                        format!("privacy_audit_logs[{i}].id"),
                        "already exists with other values; the stored entry is kept",
                    ));
                }
                None => rest.privacy_audit_logs.push(entry.clone()),
            }
        }
        Ok((rest, already))
    }

    /// The number of entities in the document.
    pub fn len(&self) -> usize {
        self.organizations.len()
            + self.users.len()
            + self.task_queues.len()
            + self.candidates.len()
            + self.jobs.len()
            + self.privacy_audit_logs.len()
    }

    /// Whether the document holds no entity.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What an adapter must look up before calling [`ImportDocument::check`].
    pub fn lookups(&self) -> Lookups {
        let mut organizations: Vec<OrganizationId> =
            self.organizations.iter().map(|o| o.id).collect();
        organizations.extend(self.users.iter().map(|u| u.organization_id));
        organizations.extend(self.task_queues.iter().map(|q| q.organization_id));
        organizations.extend(self.candidates.iter().map(|c| c.organization_id));
        organizations.extend(self.jobs.iter().map(|j| j.organization_id));
        organizations.extend(self.privacy_audit_logs.iter().map(|e| e.organization_id));
        let mut users: Vec<UserId> = self.users.iter().map(|u| u.id).collect();
        users.extend(self.users.iter().filter_map(|u| u.manager));
        users.extend(self.jobs.iter().flat_map(|j| j.hiring_team.iter().map(|m| m.user_id)));
        let mut task_queues: Vec<TaskQueueId> = self.task_queues.iter().map(|q| q.id).collect();
        task_queues.extend(self.jobs.iter().map(|j| j.settings.default_task_queue_id));
        Lookups {
            organizations: sorted_unique(organizations),
            users: sorted_unique(users),
            task_queues: sorted_unique(task_queues),
            candidates: self.candidates.iter().map(|c| c.id).collect(),
            jobs: self.jobs.iter().map(|j| j.id).collect(),
            job_stages: self.jobs.iter().flat_map(|j| j.job_stages.iter().map(|s| s.id)).collect(),
            privacy_audit_logs: self
                .privacy_audit_logs
                .iter()
                .map(|e| (e.organization_id, e.entry.id))
                .collect(),
        }
    }

    /// Checks the document against what is stored: no identifier defined twice or already
    /// stored, every reference resolved (in the document or in the store), every reference
    /// within its organization. Returns the first problem, with its path.
    pub fn check(&self, existing: &ExistingIds) -> Result<(), ImportProblem> {
        let orgs = check_new("organizations", self.organizations.iter().map(|o| o.id), |id| {
            existing.organizations.contains(id)
        })?;
        for (i, o) in self.organizations.iter().enumerate() {
            if let Some(why) = o.review_rules.problem() {
                return Err(problem(format!("organizations[{i}].review_rules"), why));
            }
        }
        let org_exists =
            |id: &OrganizationId| orgs.contains_key(id) || existing.organizations.contains(id);
        let check_org = |path: String, id: &OrganizationId| {
            if org_exists(id) { Ok(()) } else { Err(problem(path, "no such organization")) }
        };

        let users = check_new("users", self.users.iter().map(|u| u.id), |id| {
            existing.users.contains_key(id)
        })?;
        for (i, u) in self.users.iter().enumerate() {
            check_org(format!("users[{i}].organization_id"), &u.organization_id)?;
        }
        let queues = check_new("task_queues", self.task_queues.iter().map(|q| q.id), |id| {
            existing.task_queues.contains_key(id)
        })?;
        for (i, q) in self.task_queues.iter().enumerate() {
            check_org(format!("task_queues[{i}].organization_id"), &q.organization_id)?;
        }
        check_new("candidates", self.candidates.iter().map(|c| c.id), |id| {
            existing.candidates.contains(id)
        })?;
        for (i, c) in self.candidates.iter().enumerate() {
            check_org(format!("candidates[{i}].organization_id"), &c.organization_id)?;
        }

        let user_org = |id: &UserId| {
            users
                .get(id)
                .map(|&i| self.users[i].organization_id)
                .or(existing.users.get(id).copied())
        };
        let queue_org = |id: &TaskQueueId| {
            queues
                .get(id)
                .map(|&i| self.task_queues[i].organization_id)
                .or(existing.task_queues.get(id).copied())
        };
        self.check_managers(&users, &user_org)?;
        check_new("jobs", self.jobs.iter().map(|j| j.id), |id| existing.jobs.contains(id))?;
        let mut stages = HashMap::new();
        for (i, job) in self.jobs.iter().enumerate() {
            for (s, stage) in job.job_stages.iter().enumerate() {
                let path = format!("jobs[{i}].job_stages[{s}].id");
                if let Some(first) = stages.insert(stage.id, format!("jobs[{i}].job_stages[{s}]")) {
                    return Err(problem(path, format!("duplicates {first}.id")));
                }
                if existing.job_stages.contains(&stage.id) {
                    return Err(problem(path, "already exists"));
                }
            }
        }
        for (i, job) in self.jobs.iter().enumerate() {
            check_org(format!("jobs[{i}].organization_id"), &job.organization_id)?;
            let queue = job.settings.default_task_queue_id;
            match queue_org(&queue) {
                None => {
                    return Err(problem(
                        format!("jobs[{i}].settings.default_task_queue_id"),
                        "no such task queue",
                    ));
                }
                Some(org) if org != job.organization_id => {
                    return Err(problem(
                        format!("jobs[{i}].settings.default_task_queue_id"),
                        "the task queue belongs to another organization",
                    ));
                }
                Some(_) => {}
            }
            let mut members = HashSet::new();
            for (m, member) in job.hiring_team.iter().enumerate() {
                let path = format!("jobs[{i}].hiring_team[{m}].user_id");
                match user_org(&member.user_id) {
                    None => return Err(problem(path, "no such user")),
                    Some(org) if org != job.organization_id => {
                        return Err(problem(path, "the user belongs to another organization"));
                    }
                    Some(_) => {}
                }
                if !members.insert(member.user_id) {
                    return Err(problem(path, "the user is on the hiring team twice"));
                }
            }
        }

        check_new(
            "privacy_audit_logs",
            self.privacy_audit_logs.iter().map(|e| (e.organization_id, e.entry.id)),
            |key| existing.privacy_audit_logs.contains(key),
        )?;
        for (i, e) in self.privacy_audit_logs.iter().enumerate() {
            check_org(format!("privacy_audit_logs[{i}].organization_id"), &e.organization_id)?;
            if let DataSubject::Bulk { bulk_count: Some(n), .. } = e.entry.data_subject
                && i64::try_from(n).is_err()
            {
                return Err(problem(
                    format!("privacy_audit_logs[{i}].data_subject.bulk_count"),
                    "must be at most 9223372036854775807",
                ));
            }
            let stated = e.entry.purpose.as_deref().map(|p| p.chars().count());
            if stated.is_some_and(|n| !(1..=MAX_PURPOSE_LEN).contains(&n)) {
                return Err(problem(
                    format!("privacy_audit_logs[{i}].purpose"),
                    format!("must be 1 to {MAX_PURPOSE_LEN} characters"),
                ));
            }
        }
        Ok(())
    }

    /// Checks the users' managers: each a user of the same organization (in the document or
    /// stored), and no chain of managers a cycle. Stored users' managers are stored users, so
    /// a cycle can only run through the document's.
    fn check_managers(
        &self,
        users: &HashMap<UserId, usize>,
        user_org: &impl Fn(&UserId) -> Option<OrganizationId>,
    ) -> Result<(), ImportProblem> {
        for (i, u) in self.users.iter().enumerate() {
            let Some(manager) = u.manager else { continue };
            let path = format!("users[{i}].manager");
            match user_org(&manager) {
                None => return Err(problem(path, "no such user")),
                Some(org) if org != u.organization_id => {
                    return Err(problem(path, "the manager belongs to another organization"));
                }
                Some(_) => {}
            }
            let mut seen = HashSet::from([u.id]);
            let mut next = Some(manager);
            while let Some(m) = next {
                if !seen.insert(m) {
                    return Err(problem(path, "the chain of managers comes back to the user"));
                }
                next = users.get(&m).and_then(|&j| self.users[j].manager);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use recruit_domain::model::FieldSource;

    use super::*;

    #[test]
    fn the_example_of_the_import_format_imports() {
        let doc = include_str!("../../../docs/import-format.md");
        let start = doc.find("An example with one of each:").expect("the example");
        let block = &doc[start..];
        let json = &block[block.find("```json\n").expect("a JSON block") + 8..];
        let json = &json[..json.find("```").expect("the block's end")];
        let example: ImportDocument = serde_json::from_str(json).expect("the example parses");
        assert_eq!(example.check(&ExistingIds::default()), Ok(()));
        let sources = example.organizations[0].profile_field_sources;
        assert_eq!((sources.name, sources.title), (FieldSource::Scim, FieldSource::Api));
        assert_eq!(example.users[0].title.as_deref(), Some("Head of Talent"));
        assert!(example.organizations[0].scheduling_defaults.interviewer_info_setting.is_locked);
        let stages: Vec<&str> =
            example.jobs[0].job_stages.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(stages, ["Phone screen", "Onsite"]);
        let rules = &example.organizations[0].review_rules;
        assert_eq!((rules.holidays.len(), rules.downloads, rules.bulk_records), (2, 2, 1_000));

        let mut long = example.clone();
        long.privacy_audit_logs[0].entry.purpose = Some("x".repeat(501));
        let refused = long.check(&ExistingIds::default()).unwrap_err();
        assert_eq!(refused.path, "privacy_audit_logs[0].purpose");

        let mut bad = example.clone();
        bad.organizations[0].review_rules.outside_hours_percent = 101;
        let refused = bad.check(&ExistingIds::default()).unwrap_err();
        assert_eq!(refused.path, "organizations[0].review_rules");
    }
}
