//! What a month's access review reads from the ledgers ([`crate::Ledgers::review_facts`]):
//! counts the store aggregates over the month's entries, never the entries themselves, except
//! the downloads, which the review lists one by one. The rules that read them (what is bulk,
//! what is outside work hours, in which time zone) are the service's; a store only groups.

use recruit_domain::{OrganizationId, PrivacyAuditLog, Timestamp, Uuid};

use crate::AuditEntry;

/// What to aggregate: one organization's privacy ledger over `[from, to)`, by slots of
/// `slot_micros` counted from the Unix epoch, and the addresses seen over
/// `[previous_from, to)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReviewQuery {
    /// The organization.
    pub organization: OrganizationId,
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

/// An address an account used, and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressSeen {
    /// The account.
    pub account: Uuid,
    /// The address, as recorded.
    pub address: String,
    /// Whether it appears in the month.
    pub in_month: bool,
    /// Whether it appears in the month before.
    pub before: bool,
}

/// The month's facts, read from one snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReviewFacts {
    /// The month's entries, counted per account, slot, category and subject type.
    pub slots: Vec<SlotCount>,
    /// Per account, the distinct individual data subjects (users and candidates) of the month.
    pub subjects: Vec<(Uuid, u64)>,
    /// Per account and address, over the month and the one before.
    pub addresses: Vec<AddressSeen>,
    /// The month's downloads (activity `query.download`), by access time then id.
    pub downloads: Vec<PrivacyAuditLog>,
    /// The month's entries of the API audit ledger of operation `query.ledger_export`, by
    /// time then id.
    pub ledger_exports: Vec<AuditEntry>,
}
