//! What a month's access review reads from the ledgers ([`crate::Ledgers::review_facts`]):
//! counts the store aggregates over the month's entries, never the entries themselves, except
//! the downloads, which the review lists one by one. The rules that read them (what is bulk,
//! what is outside work hours, in which time zone) are the service's; a store only groups.
//!
//! The review's own records are here too: a reviewer's decision on a download
//! ([`DownloadDecision`], written by `Ledgers::decide_download`) and the month's sign-off
//! ([`SignOffRecord`], written by `Ledgers::sign_off`). Both are append-only and written in
//! one transaction with the API audit ledger's entry that records the request.

use recruit_domain::{
    ApiTokenId, OrganizationId, PrivacyAuditLog, PrivacyAuditLogId, Timestamp, UserId, Uuid,
};

use crate::{AuditEntry, ReadRecord};

/// What to aggregate: one organization's privacy ledger over `[from, to)`, by slots of
/// `slot_micros` counted from the Unix epoch, and the addresses seen over
/// `[previous_from, to)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReviewQuery {
    /// The organization.
    pub organization: OrganizationId,
    /// The month, `YYYY-MM`, as the review's decisions and sign-off are kept.
    pub month: String,
    /// The first instant of the month.
    pub from: Timestamp,
    /// The first instant after it.
    pub to: Timestamp,
    /// The first instant of the month before, from which addresses count as seen before.
    pub previous_from: Timestamp,
    /// The width of a slot in microseconds: entries are counted per slot, and the service
    /// places each slot in local time, so a slot never straddles a boundary it cares about.
    pub slot_micros: i64,
    /// The activity category of a download, whose entries are listed one by one.
    pub download: &'static str,
    /// The operation of the API audit ledger that exports the privacy ledger.
    pub ledger_export: &'static str,
}

/// Entries of one account, slot, activity category and data subject type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotCount {
    /// The account (`account_id`).
    pub account: Uuid,
    /// The slot: the entries' `access_time` in microseconds since the epoch, divided by the
    /// slot width and rounded down.
    pub slot: i64,
    /// The activity category, as stored.
    pub category: String,
    /// Whether the data subject is a bulk one (many people at once).
    pub bulk_subject: bool,
    /// How many entries.
    pub entries: u64,
    /// The sum of their `bulk_count`s (none counts 0).
    pub bulk_records: u64,
}

impl SlotCount {
    /// The count of a row grouped by account, slot, category and the stored `subject_type`.
    pub fn new(
        account: Uuid,
        slot: i64,
        category: String,
        subject_type: &str,
        entries: u64,
        bulk_records: u64,
    ) -> Self {
        let bulk_subject = subject_type == crate::columns::BULK;
        Self { account, slot, category, bulk_subject, entries, bulk_records }
    }
}

/// The month's facts, read from one snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReviewFacts {
    /// The month's entries, counted per account, slot, category and subject type; a store
    /// may count one of those in several parts, which add up.
    pub slots: Vec<SlotCount>,
    /// Per account, the distinct individual data subjects (users and candidates) of the month.
    pub subjects: Vec<(Uuid, u64)>,
    /// Per account, each address it used in the month and not in the month before (from
    /// `previous_from`), in no order; a store may give one more than once.
    pub new_addresses: Vec<(Uuid, String)>,
    /// The month's downloads (activity `query.download`), by access time then id.
    pub downloads: Vec<PrivacyAuditLog>,
    /// The month's entries of the API audit ledger of operation `query.ledger_export`, by
    /// time then id.
    pub ledger_exports: Vec<AuditEntry>,
    /// The lowest chain position of the month's entries; `None` when it has none linked.
    pub first_position: Option<i64>,
    /// Every decision on the month's downloads, in the order they were made (time, then id).
    pub decisions: Vec<DownloadDecision>,
    /// The month's sign-off, if it was signed off.
    pub sign_off: Option<SignOffRecord>,
}

/// A reviewer's decision on one download of a month.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DownloadDecision {
    /// The decision's id (UUID v7).
    pub id: Uuid,
    /// The organization.
    pub organization_id: OrganizationId,
    /// The month reviewed, `YYYY-MM`.
    pub month: String,
    /// The download: an entry of the privacy ledger.
    pub entry_id: PrivacyAuditLogId,
    /// The status, as the service names it.
    pub status: String,
    /// Why: the reason confirmed, or the question asked.
    pub reason: String,
    /// The reviewer.
    pub user_id: UserId,
    /// The token the reviewer used.
    pub token_id: ApiTokenId,
    /// When.
    pub at: Timestamp,
    /// The request that made it.
    pub request_id: String,
}

/// A decision to write ([`crate::Ledgers::decide_download`]): written only if the download
/// it names is an entry of activity `download` of the organization's ledger within
/// `[from, to)`, and the latest decision on it says something else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionWrite {
    /// The decision.
    pub decision: DownloadDecision,
    /// The audit ledger entries of the request (nothing returned).
    pub record: ReadRecord,
    /// The month's first instant.
    pub from: Timestamp,
    /// The first instant after it.
    pub to: Timestamp,
    /// The activity category of a download, as stored.
    pub download: &'static str,
    /// Who records it: a reviewer, or the person who downloaded answering a request.
    pub author: Author,
}

/// Who records a decision on a download.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Author {
    /// A reviewer: never on their own download ([`Decided::OwnDownload`]).
    Reviewer,
    /// The person who downloaded, explaining: only on their own download, and only while the
    /// latest decision on it has the status `asked` ([`Decided::NotAsked`] otherwise), or is
    /// this same explanation ([`Decided::Unchanged`]).
    Downloader {
        /// The status of a request for an explanation, as stored.
        asked: &'static str,
    },
}

/// What became of a decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decided {
    /// It was written, with its record.
    Written,
    /// The latest decision on the download says the same already (returned): nothing written.
    Unchanged(DownloadDecision),
    /// The download is the deciding user's own (its account is the user's): another owner
    /// decides on it, and nothing is written.
    OwnDownload,
    /// An explanation by someone who did not make the download, or of a download whose latest
    /// decision is not a request for one: nothing is written.
    NotAsked,
}

/// The sign-off of a month.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignOffRecord {
    /// The organization.
    pub organization_id: OrganizationId,
    /// The month, `YYYY-MM`.
    pub month: String,
    /// Who signed it off.
    pub user_id: UserId,
    /// When.
    pub at: Timestamp,
    /// The reviewer's note.
    pub note: Option<String>,
    /// The sign-off as the API shows it, with what the server added: kept as signed.
    pub body: serde_json::Value,
}

/// A sign-off to write ([`crate::Ledgers::sign_off`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignOffWrite {
    /// The sign-off.
    pub sign_off: SignOffRecord,
    /// The audit ledger entries of the request (nothing returned).
    pub record: ReadRecord,
}

/// An organization's review rules to write ([`crate::Ledgers::set_review_rules`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RulesWrite {
    /// The organization.
    pub organization: OrganizationId,
    /// Its new rules, checked.
    pub rules: recruit_domain::model::ReviewRules,
    /// The audit ledger entries of the request (nothing returned).
    pub record: ReadRecord,
}

/// What became of a sign-off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignedOff {
    /// It was written, with its record.
    Written,
    /// The month was signed off already (returned): nothing written.
    Existing(SignOffRecord),
}
