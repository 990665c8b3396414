//! Contract cases of the import: a document is written whole, or refused whole naming its
//! path.

use recruit_domain::model::*;
use recruit_domain::{Candidate, User};

use crate::{ImportDocument, NewHiringTeamMember, ResumedBatch, Store};

use super::{
    ORG_A, ORG_B, assert_invalid, assert_nothing_written, candidate_id, id, job, job_id,
    ledger_entry, loaded, org_id, queue_id, t, user_id, world, world_user,
};

/// A document is written whole, and its summary counts each kind.
pub async fn import_writes_every_entity(store: &dyn Store) {
    let summary = store.import(&world()).await.unwrap();
    assert_eq!(
        (
            summary.organizations,
            summary.users,
            summary.task_queues,
            summary.candidates,
            summary.jobs,
            summary.privacy_audit_logs
        ),
        (2, 6, 2, 4, 4, 16)
    );
    // A second document may refer to what the first stored.
    let mut more = ImportDocument::default();
    more.users.push(User {
        id: id(0xABC),
        organization_id: org_id(ORG_A),
        name: "Late joiner".into(),
        email: "late@org-a.example".into(),
        manager: Some(user_id(ORG_A, Role::Admin)),
        ..world_user(ORG_A, Role::Member)
    });
    let member = NewHiringTeamMember { role: HiringTeamRole::HiringManager, user_id: id(0xABC) };
    more.jobs.push(job(ORG_A, 7, false, vec![member]));
    store.import(&more).await.unwrap();
    let job = store.job(org_id(ORG_A), job_id(ORG_A, 7)).await.unwrap();
    assert_eq!(job.hiring_team[0].user.name, "Late joiner");
}

/// A document that defines an id twice is refused whole, naming the path.
pub async fn import_rejects_duplicate_ids_and_writes_nothing(store: &dyn Store) {
    let mut doc = world();
    let dup = doc.users[1].clone();
    doc.users.push(dup);
    assert_invalid(store.import(&doc).await, "users[6].id", "duplicates users[1].id");
    assert_nothing_written(store).await;
    let mut doc = world();
    let dup = doc.privacy_audit_logs[3].clone();
    doc.privacy_audit_logs.insert(10, dup);
    assert_invalid(
        store.import(&doc).await,
        "privacy_audit_logs[10].id",
        "duplicates privacy_audit_logs[3].id",
    );
    assert_nothing_written(store).await;
}

/// A document that defines an id already stored is refused whole.
pub async fn import_rejects_ids_already_stored(store: &dyn Store) {
    loaded(store).await;
    let mut doc = ImportDocument::default();
    doc.candidates.push(Candidate {
        id: candidate_id(ORG_A, 9),
        organization_id: org_id(ORG_A),
        name: "New".into(),
        email: "new@mail.example".into(),
        phone: String::new(),
    });
    doc.jobs.push(job(ORG_A, 1, false, vec![]));
    assert_invalid(store.import(&doc).await, "jobs[0].id", "already exists");
    // Nothing of the refused document was kept: its candidate imports alone now.
    doc.jobs.clear();
    let summary = store.import(&doc).await.expect("the candidate was not stored before");
    assert_eq!(summary.candidates, 1);
    let mut doc = ImportDocument::default();
    doc.privacy_audit_logs.push(ledger_entry(ORG_B, 2, t(1)));
    assert_invalid(store.import(&doc).await, "privacy_audit_logs[0].id", "already exists");
}

/// A document of ledger entries only (a batch of the NDJSON import) is refused whole, naming
/// the entry, when an entry repeats or its organization is missing.
pub async fn a_ledger_batch_is_refused_whole_naming_the_entry(store: &dyn Store) {
    loaded(store).await;
    let mut doc = ImportDocument::default();
    doc.privacy_audit_logs.push(ledger_entry(ORG_A, 100, t(5)));
    doc.privacy_audit_logs.push(ledger_entry(ORG_B, 101, t(6)));
    doc.privacy_audit_logs.push(ledger_entry(ORG_A, 100, t(5)));
    assert_invalid(
        store.import(&doc).await,
        "privacy_audit_logs[2].id",
        "duplicates privacy_audit_logs[0].id",
    );
    doc.privacy_audit_logs[2] = ledger_entry(0xC, 102, t(7));
    assert_invalid(
        store.import(&doc).await,
        "privacy_audit_logs[2].organization_id",
        "no such organization",
    );
    // Nothing of the refused batches was written: its valid entries import now.
    doc.privacy_audit_logs.truncate(2);
    assert_eq!(store.import(&doc).await.unwrap().privacy_audit_logs, 2);
    assert_invalid(store.import(&doc).await, "privacy_audit_logs[0].id", "already exists");
}

/// A batch of an import that stopped part-way, written again: what is stored exactly as given
/// is left out and counted, the rest written; an entry stored with other values refuses the
/// whole batch, naming it, and the stored entry stays as it was.
pub async fn a_ledger_batch_written_again_skips_identical_entries_and_refuses_changed_ones(
    store: &dyn Store,
) {
    loaded(store).await;
    let first = [ledger_entry(ORG_A, 200, t(5)), ledger_entry(ORG_B, 201, t(6))];
    let mut doc = ImportDocument::default();
    doc.privacy_audit_logs.extend(first.clone());
    assert_eq!(store.import(&doc).await.unwrap().privacy_audit_logs, 2);

    doc.privacy_audit_logs.push(ledger_entry(ORG_A, 202, t(7)));
    let resumed = store.resume_ledger(&doc).await.unwrap();
    assert_eq!(resumed, ResumedBatch { written: 1, already_stored: 2 });
    let resumed = store.resume_ledger(&doc).await.unwrap();
    assert_eq!(resumed, ResumedBatch { written: 0, already_stored: 3 });

    let mut changed = ImportDocument::default();
    changed.privacy_audit_logs.push(ledger_entry(ORG_A, 203, t(8)));
    let mut edited = first[1].clone();
    edited.entry.access_menu = "edited".into();
    changed.privacy_audit_logs.push(edited);
    assert_invalid(
        store.resume_ledger(&changed).await,
        "privacy_audit_logs[1].id",
        "already exists with other values; the stored entry is kept",
    );
    // Nothing of the refused batch was written, and the stored entry is as it was.
    changed.privacy_audit_logs.truncate(1);
    assert_eq!(store.resume_ledger(&changed).await.unwrap().written, 1);
    let mut original = ImportDocument::default();
    original.privacy_audit_logs.push(first[1].clone());
    assert_eq!(store.resume_ledger(&original).await.unwrap().already_stored, 1);
    // Other problems are still named: an organization that does not exist.
    let mut orphan = ImportDocument::default();
    orphan.privacy_audit_logs.push(ledger_entry(0xC, 204, t(9)));
    assert_invalid(
        store.resume_ledger(&orphan).await,
        "privacy_audit_logs[0].organization_id",
        "no such organization",
    );
}

/// A reference to something missing, or of another organization, is refused with its path.
pub async fn import_rejects_missing_references_naming_the_path(store: &dyn Store) {
    let mut doc = world();
    doc.jobs[3].hiring_team[1].user_id = id(0xdead);
    assert_invalid(store.import(&doc).await, "jobs[3].hiring_team[1].user_id", "no such user");
    let mut doc = world();
    doc.jobs[0].hiring_team[0].user_id = user_id(ORG_B, Role::Admin);
    assert_invalid(
        store.import(&doc).await,
        "jobs[0].hiring_team[0].user_id",
        "the user belongs to another organization",
    );
    let mut doc = world();
    doc.jobs[2].settings.default_task_queue_id = queue_id(ORG_A);
    assert_invalid(
        store.import(&doc).await,
        "jobs[2].settings.default_task_queue_id",
        "the task queue belongs to another organization",
    );
    let mut doc = world();
    doc.users[4].organization_id = org_id(0xC);
    assert_invalid(store.import(&doc).await, "users[4].organization_id", "no such organization");
    let mut doc = world();
    doc.privacy_audit_logs[15].organization_id = org_id(0xC);
    assert_invalid(
        store.import(&doc).await,
        "privacy_audit_logs[15].organization_id",
        "no such organization",
    );
    assert_nothing_written(store).await;
}
