//! A month's access review of the privacy ledger, as the API shows it: what a privacy officer
//! checks each month (PIPA safety-measure standard, Art. 8), the decisions on its downloads,
//! and its sign-off with what the server adds to it. The server computes them
//! (`recruit-service`); a client reads them with these types.
//!
//! Unknown fields are ignored when deserializing, and [`Flag`] is an open enum, so a client
//! keeps reading the reviews of a newer server.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::chain::{Checkpoint, Finding};
use crate::model::{DataSubject, Role};
use crate::open_enum::open_enum;
use crate::{AccountId, Month, OrganizationId, PrivacyAuditLogId, Timestamp, User, UserId, Uuid};

/// Where a download of the month stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DownloadStatus {
    /// Nobody decided on it yet.
    Pending,
    /// Its reason was confirmed.
    Confirmed,
    /// The reviewer asked the account for an explanation.
    ExplanationRequested,
    /// The person who downloaded explained it, and the reviewer has yet to accept the
    /// explanation (CONFIRMED) or reject it (REJECTED).
    Explained,
    /// The reviewer did not accept the reason: the download was not justified.
    Rejected,
}

impl DownloadStatus {
    /// The status's name, as the API and the store write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Confirmed => "CONFIRMED",
            Self::ExplanationRequested => "EXPLANATION_REQUESTED",
            Self::Explained => "EXPLAINED",
            Self::Rejected => "REJECTED",
        }
    }

    /// Every status.
    pub const ALL: [Self; 5] = [
        Self::Pending,
        Self::Confirmed,
        Self::ExplanationRequested,
        Self::Explained,
        Self::Rejected,
    ];

    /// The statuses a reviewer's decision sets: the reason confirmed (or an explanation
    /// accepted), an explanation asked for, the reason rejected.
    pub const REVIEWERS: [Self; 3] = [Self::Confirmed, Self::ExplanationRequested, Self::Rejected];

    /// The status a reviewer's decision may set, by its name: not PENDING, which no one
    /// decides, nor EXPLAINED, which only the person who downloaded records.
    pub fn decided(name: &str) -> Option<Self> {
        Self::REVIEWERS.into_iter().find(|s| s.as_str() == name)
    }

    /// The status of a stored decision, by its name.
    pub fn stored(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Whether a reviewer still has to act on a download in this status: no decision yet, an
    /// explanation awaited, or one given and not yet accepted or rejected.
    pub fn open(self) -> bool {
        matches!(self, Self::Pending | Self::ExplanationRequested | Self::Explained)
    }
}

/// A reviewer's decision on a download: the response of setting it, and how a month's review
/// shows the latest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DownloadReview {
    /// The download's entry in the privacy ledger.
    pub entry_id: PrivacyAuditLogId,
    /// The month reviewed.
    pub month: Month,
    /// Where it stands.
    pub status: DownloadStatus,
    /// The reason confirmed or rejected, the question asked, or the explanation given.
    pub reason: String,
    /// Who decided (for EXPLAINED: who explained, the person who downloaded).
    pub reviewed_by: UserId,
    /// When.
    pub reviewed_at: Timestamp,
    /// For EXPLANATION_REQUESTED: when the explanation is due (the organization's
    /// `explanation_days` after it was asked); past it, the request is overdue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<Timestamp>,
    /// In the answer to a request for an explanation: how the person who downloaded was told
    /// (e-mailed, or why not). Not kept with the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// A download recorded in the privacy ledger: an entry whose reason the reviewer confirms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DownloadSeen {
    /// The entry's id.
    pub id: String,
    /// The account that downloaded.
    pub account_id: String,
    /// When.
    pub access_time: Timestamp,
    /// Whose data: the data subject as the API shows it.
    pub data_subject: DataSubject,
    /// Which data.
    pub access_data: Vec<String>,
    /// Where in the product.
    pub access_menu_path: String,
    /// From where.
    pub ip_addresses: Vec<String>,
    /// The purpose the download was stated for when it was recorded, if any: what the
    /// reviewer confirms.
    #[serde(default)]
    pub purpose: Option<String>,
    /// Where the review of it stands: PENDING until a reviewer decides.
    pub status: DownloadStatus,
    /// The latest decision on it, if any.
    pub review: Option<DownloadReview>,
    /// Every decision on it and every explanation of it, in the order they were recorded:
    /// the whole exchange, as the report shows it.
    #[serde(default)]
    pub history: Vec<DownloadReview>,
}

impl DownloadSeen {
    /// Whether `user` made the download (its account is the user's): then another owner
    /// decides on it (four eyes), and the server refuses the user's own decision.
    pub fn downloaded_by(&self, user: UserId) -> bool {
        AccountId::parse(&self.account_id).is_ok_and(|a| a.uuid() == user.uuid())
    }

    /// Whether an explanation of it was asked for and is past due at `now`.
    pub fn overdue(&self, now: Timestamp) -> bool {
        self.status == DownloadStatus::ExplanationRequested
            && self.review.as_ref().and_then(|r| r.due_at).is_some_and(|due| due <= now)
    }

    /// The latest explanation given by the person who downloaded, if any.
    pub fn explanation(&self) -> Option<&DownloadReview> {
        self.history.iter().rev().find(|r| r.status == DownloadStatus::Explained)
    }

    /// The latest question asked of the person who downloaded, if any.
    pub fn question(&self) -> Option<&DownloadReview> {
        self.history.iter().rev().find(|r| r.status == DownloadStatus::ExplanationRequested)
    }
}

/// An export of the privacy ledger through the API, from the API audit ledger: a download of
/// the ledger itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LedgerExportSeen {
    /// The account (the user who exported).
    pub account_id: String,
    /// When.
    pub at: Timestamp,
    /// The request's id.
    pub request_id: String,
    /// The client's address.
    pub client_ip: Option<String>,
    /// The window and ids asked for.
    pub filters: serde_json::Value,
    /// How many entries it held.
    pub entries: u32,
}

open_enum! {
    /// What about an account's month calls for a closer look.
    pub enum Flag {
        /// Accesses outside the work hours.
        OutsideWorkHours = "OUTSIDE_WORK_HOURS",
        /// Bulk accesses.
        Bulk = "BULK",
        /// Downloads, or exports of the ledger, each to be confirmed.
        Downloads = "DOWNLOADS",
        /// Addresses not seen from the account the month before.
        NewIpAddresses = "NEW_IP_ADDRESSES",
        /// A day with far more accesses than the account's own usual working day.
        DailyVolume = "DAILY_VOLUME",
    }
}

/// Why a flag is on an account: the account's figure and the rule's threshold it passed
/// ([`crate::model::ReviewRules`], stated in the review's `rules`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlagDetail {
    /// The flag.
    pub flag: Flag,
    /// The account's figure: accesses outside work hours, records accessed in bulk, downloads
    /// and exports, or new addresses.
    pub value: u64,
    /// The rule's threshold the figure passed.
    pub threshold: u64,
    /// For accesses outside work hours, their share of the account's accesses, in percent
    /// (rounded down).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<u64>,
}

/// One account's month.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AccountReview {
    /// The account (`account_id` in the privacy ledger; the user, for exports of the ledger).
    pub account_id: String,
    /// Accesses recorded.
    pub accesses: u64,
    /// Bulk accesses: a `BULK_` activity or a bulk data subject.
    pub bulk_accesses: u64,
    /// Records the bulk accesses covered, where they said.
    pub bulk_records: u64,
    /// Accesses outside the work hours; `None` when the work hours could not be read.
    pub outside_work_hours: Option<u64>,
    /// Downloads recorded in the privacy ledger.
    pub downloads: u64,
    /// Exports of the privacy ledger through the API.
    pub ledger_exports: u64,
    /// Distinct users and candidates whose data it accessed.
    pub distinct_data_subjects: u64,
    /// Addresses it used this month and not the month before, in order.
    pub new_ip_addresses: Vec<String>,
    /// Its busiest local day of the month, `YYYY-MM-DD`, and that day's accesses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest_day: Option<(String, u64)>,
    /// Its accesses per working day over the three months before, rounded down: the
    /// account's usual day, which the daily-volume rule compares the busiest day with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usual_day: Option<u64>,
    /// What calls for a closer look, in order.
    pub flags: Vec<Flag>,
    /// Each flag with the figure and the rule that raised it, in the order of `flags`.
    #[serde(default)]
    pub flag_details: Vec<FlagDetail>,
}

/// A person a review names (an account, a reviewer, a downloader): a user of the
/// organization as stored when the review was read, or when a sign-off was recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Person {
    /// The user.
    pub id: UserId,
    /// Their name.
    pub name: String,
    /// Their e-mail address.
    pub email: String,
    /// Their role in the organization.
    pub role: Role,
}

impl Person {
    /// The person `user` is.
    pub fn of(user: &User) -> Self {
        Self { id: user.id, name: user.name.clone(), email: user.email.clone(), role: user.role }
    }
}

/// One local day of the month.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DayReview {
    /// The date, `YYYY-MM-DD`, in the organization's time zone.
    pub date: String,
    /// Accesses that day.
    pub accesses: u64,
    /// Accesses that day per activity category, by category.
    pub categories: BTreeMap<String, u64>,
}

/// The review of one organization's month: the same for the CLI, the REST API, the tool
/// interface and the console.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Review {
    /// The organization.
    pub organization_id: OrganizationId,
    /// The organization's name.
    #[serde(default)]
    pub organization_name: String,
    /// The month.
    pub month: Month,
    /// The time zone the month and the work hours are read in (an IANA name).
    pub time_zone: String,
    /// The first instant reviewed.
    pub from: Timestamp,
    /// The first instant after the month.
    pub to: Timestamp,
    /// Why accesses outside the work hours are not counted, when they are not.
    pub work_hours_unknown: Option<String>,
    /// What of the work hours was left out.
    pub work_hours_notes: Vec<String>,
    /// The rules the accounts were flagged by.
    #[serde(default)]
    pub rules: crate::model::ReviewRules,
    /// The organization's work hours the review read, per weekday; a weekday not listed, and
    /// every holiday of the rules, is a day off.
    #[serde(default)]
    pub work_hours: Vec<crate::model::WorkHours>,
    /// Accesses recorded in the month.
    pub accesses: u64,
    /// Per account, by account id.
    pub accounts: Vec<AccountReview>,
    /// Every day of the month, in order.
    pub days: Vec<DayReview>,
    /// Accesses per local hour of each weekday: seven rows, Monday first, of 24 hours each.
    pub weekday_hours: Vec<Vec<u64>>,
    /// Every download of the month, by time.
    pub downloads: Vec<DownloadSeen>,
    /// Every export of the privacy ledger through the API in the month, by time.
    pub ledger_exports: Vec<LedgerExportSeen>,
    /// The month's sign-off as recorded, if it was signed off: a [`SignOff`] as the server
    /// that recorded it wrote it ([`Review::signed_off`] reads it).
    pub sign_off: Option<serde_json::Value>,
    /// Every user of the organization the review names (accounts, those who downloaded or
    /// exported, reviewers), by id; an account that is no user of the organization is not
    /// among them.
    #[serde(default)]
    pub people: Vec<Person>,
}

impl Review {
    /// The person with the id `id` (a user's, or an account's: the same UUID), if the review
    /// names one.
    pub fn person(&self, id: Uuid) -> Option<&Person> {
        self.people.binary_search_by_key(&id, |p| p.id.uuid()).ok().map(|i| &self.people[i])
    }

    /// The person behind the account `account_id` (as the review writes it), if any.
    pub fn account_person(&self, account_id: &str) -> Option<&Person> {
        AccountId::parse(account_id).ok().and_then(|a| self.person(a.uuid()))
    }

    /// The month's sign-off, if it was signed off, read as a [`SignOff`]; an error when the
    /// recorded sign-off lacks what this version needs of one.
    pub fn signed_off(&self) -> Option<Result<SignOff, serde_json::Error>> {
        self.sign_off.clone().map(serde_json::from_value)
    }
}

/// The month's figures, as signed off.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignOffFigures {
    /// Accesses recorded in the month.
    pub accesses: u64,
    /// Accounts with accesses, downloads or exports.
    pub accounts: u64,
    /// Accounts with at least one flag.
    pub flagged_accounts: u64,
    /// Downloads recorded in the privacy ledger.
    pub downloads: u64,
    /// Of those, confirmed.
    pub confirmed: u64,
    /// Of those, with an explanation asked for and not given yet.
    pub explanation_requested: u64,
    /// Of those, explained and awaiting the reviewer's decision.
    #[serde(default)]
    pub explained: u64,
    /// Of those, whose reason the reviewer rejected.
    #[serde(default)]
    pub rejected: u64,
    /// Of those, with no decision.
    pub pending: u64,
    /// Exports of the privacy ledger through the API.
    pub ledger_exports: u64,
}

impl SignOffFigures {
    /// The figures of `review`.
    pub fn of(review: &Review) -> Self {
        let count = |status| review.downloads.iter().filter(|d| d.status == status).count() as u64;
        Self {
            accesses: review.accesses,
            accounts: review.accounts.len() as u64,
            flagged_accounts: review.accounts.iter().filter(|a| !a.flags.is_empty()).count() as u64,
            downloads: review.downloads.len() as u64,
            confirmed: count(DownloadStatus::Confirmed),
            explanation_requested: count(DownloadStatus::ExplanationRequested),
            explained: count(DownloadStatus::Explained),
            rejected: count(DownloadStatus::Rejected),
            pending: count(DownloadStatus::Pending),
            ledger_exports: review.ledger_exports.len() as u64,
        }
    }

    /// The downloads not confirmed: undecided, awaiting or holding an explanation, or
    /// rejected.
    pub fn unconfirmed(&self) -> u64 {
        self.pending + self.explanation_requested + self.explained + self.rejected
    }
}

/// A month's integrity now: what a sign-off would record of the chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Integrity {
    /// The month.
    pub month: Month,
    /// The chain's verification over the month's part.
    pub verification: MonthVerification,
    /// The latest signed checkpoint (with the id of the key that signed it), if any.
    pub checkpoint: Option<Checkpoint>,
}

/// The verification of the privacy ledger's chain at sign-off: the part that holds the
/// month's entries, from the latest signed checkpoint before them to the head.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonthVerification {
    /// Whether nothing was found.
    pub intact: bool,
    /// The lowest position of the month's entries; `None` when the month has none.
    pub month_from_position: Option<i64>,
    /// The position of the signed checkpoint the part was checked from (0: the start).
    pub anchored_at: i64,
    /// The position of the chain's head.
    pub head_position: i64,
    /// The hash of the chain's head.
    pub head_hash: String,
    /// How many entries were checked.
    pub entries: u64,
    /// How many findings there were.
    pub findings_total: u64,
    /// The first findings, at most 20, in the order of positions.
    pub findings: Vec<Finding>,
}

/// A month's sign-off, as recorded and as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignOff {
    /// The organization.
    pub organization_id: OrganizationId,
    /// The month.
    pub month: Month,
    /// The reviewer.
    pub signed_by: UserId,
    /// The reviewer as stored when signing off: name, e-mail and role then. `None` in a
    /// sign-off recorded by a version that did not record it.
    #[serde(default)]
    pub reviewer: Option<Person>,
    /// When.
    pub signed_at: Timestamp,
    /// The reviewer's note.
    pub note: Option<String>,
    /// The month's figures when it was signed off.
    pub figures: SignOffFigures,
    /// The chain's verification when it was signed off.
    pub verification: MonthVerification,
    /// The latest signed checkpoint of the privacy ledger's chain then; `None` when the
    /// server signs none and none is stored.
    pub checkpoint: Option<Checkpoint>,
}

impl SignOff {
    /// Why the month cannot be signed off without a note, when the sign-off lacks one:
    /// downloads not confirmed, or a chain that did not verify. This is the month's state,
    /// not the request's form: the same request succeeds once the downloads are confirmed.
    pub fn missing_note(&self) -> Option<String> {
        if self.note.is_some() {
            return None;
        }
        let unconfirmed = self.figures.unconfirmed();
        let mut reasons = vec![];
        if unconfirmed > 0 {
            reasons.push(format!("{unconfirmed} of the month's downloads are not confirmed"));
        }
        match self.verification.findings_total {
            0 => {}
            1 => reasons.push("the chain's verification found a problem".to_owned()),
            n => reasons.push(format!("the chain's verification found {n} problems")),
        }
        (!reasons.is_empty()).then(|| {
            format!(
                "is required: {}; say in the note why the month is signed off",
                reasons.join(" and ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_reads_back_what_a_newer_server_sends() {
        let body = serde_json::json!({
            "organization_id": "org_0193a3b0c0e07000800000000000000a",
            "organization_name": "Acme",
            "month": "2026-10",
            "time_zone": "Asia/Seoul",
            "from": "2026-09-30T15:00:00Z",
            "to": "2026-10-31T15:00:00Z",
            "work_hours_unknown": null,
            "work_hours_notes": [],
            "work_hours": [{"day": "MONDAY", "start": "09:00", "end": "18:00"}],
            "rules": {
                "holidays": ["2026-10-03"], "outside_hours_accesses": 10,
                "outside_hours_percent": 10, "bulk_records": 1000, "downloads": 5, "explanation_days": 7,
                "daily_volume_factor": 3, "daily_volume_min": 100,
                "new_ip_addresses": 0
            },
            "accesses": 3,
            "accounts": [{
                "account_id": "0193a3b0c0e070008000000000000001",
                "accesses": 3, "bulk_accesses": 0, "bulk_records": 0,
                "outside_work_hours": 1, "downloads": 0, "ledger_exports": 0,
                "distinct_data_subjects": 2, "new_ip_addresses": [],
                "flags": ["OUTSIDE_WORK_HOURS", "A_FLAG_OF_LATER"],
                "flag_details": [
                    {"flag": "OUTSIDE_WORK_HOURS", "value": 1, "threshold": 0, "percent": 33}
                ],
                "a_field_of_later": true
            }],
            "days": [], "weekday_hours": [], "downloads": [], "ledger_exports": [],
            "sign_off": null,
            "people": [{
                "id": "usr_0193a3b0c0e070008000000000000001", "name": "김민준",
                "email": "minjun@example.com", "role": "OWNER"
            }]
        });
        let review: Review = serde_json::from_value(body.clone()).unwrap();
        let flags = &review.accounts[0].flags;
        assert_eq!(flags[0], Flag::OutsideWorkHours);
        assert_eq!((flags[1].is_known(), flags[1].as_str()), (false, "A_FLAG_OF_LATER"));
        assert!(review.signed_off().is_none());
        let person = review.account_person("0193a3b0c0e070008000000000000001").unwrap();
        assert_eq!(person.name, "김민준", "an account's person, by the account's id");
        assert_eq!(review.account_person("0193a3b0c0e070008000000000000002"), None);
        let mut written = serde_json::to_value(&review).unwrap();
        written["accounts"][0]["a_field_of_later"] = true.into();
        assert_eq!(written, body, "every known field and value written back as it came");
    }

    #[test]
    fn a_month_with_unconfirmed_downloads_needs_a_note() {
        let figures = SignOffFigures {
            accesses: 10,
            accounts: 2,
            flagged_accounts: 1,
            downloads: 3,
            confirmed: 1,
            explanation_requested: 1,
            explained: 0,
            rejected: 0,
            pending: 1,
            ledger_exports: 0,
        };
        let sign_off = |note: Option<&str>, findings_total| SignOff {
            organization_id: "org_0193a3b0c0e07000800000000000000a".parse().unwrap(),
            month: "2026-10".parse().unwrap(),
            signed_by: "usr_0193a3b0c0e07000800000000000000b".parse().unwrap(),
            reviewer: None,
            signed_at: "2026-11-02T09:00:00Z".parse().unwrap(),
            note: note.map(str::to_owned),
            figures: figures.clone(),
            verification: MonthVerification {
                intact: findings_total == 0,
                month_from_position: Some(1),
                anchored_at: 0,
                head_position: 10,
                head_hash: "00".repeat(32),
                entries: 10,
                findings_total,
                findings: vec![],
            },
            checkpoint: None,
        };
        let why = sign_off(None, 0).missing_note().unwrap();
        assert!(why.contains("2 of the month's downloads are not confirmed"), "{why}");
        let why = sign_off(None, 3).missing_note().unwrap();
        assert!(why.contains("and the chain's verification found 3 problems"), "{why}");
        assert_eq!(sign_off(Some("two asked about, one open"), 3).missing_note(), None);
    }
}
