//! What a reviewer records of a month's review, and its rules: a decision on each download
//! (the reason confirmed, or an explanation asked for), and the month's sign-off with what the
//! server adds to it (the month's figures, the chain's verification, the latest signed
//! checkpoint). A month whose downloads are not all confirmed, or whose chain did not verify,
//! is signed off only with a note that says why. Both are append-only: a later decision on a
//! download is a new record beside the earlier ones, and a month is signed off once.

use recruit_domain::chain::Checkpoint;
use recruit_domain::{ErrorDetail, OrganizationId, PrivacyAuditLogId, Timestamp, UserId};
use recruit_ports::review::DownloadDecision;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::review::Review;
use crate::verify::{Finding, PartReport};

/// The longest reason of a decision, in characters.
pub const REASON_MAX: usize = 1_000;

/// The longest note of a sign-off, in characters.
pub const NOTE_MAX: usize = 4_000;

/// The most findings a sign-off lists; it counts them all.
const FINDINGS_LISTED: usize = 20;

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
}

impl DownloadStatus {
    /// The status's name, as the API and the store write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Confirmed => "CONFIRMED",
            Self::ExplanationRequested => "EXPLANATION_REQUESTED",
        }
    }

    /// The status a decision may set, by its name: not PENDING, which no one decides.
    pub fn decided(name: &str) -> Option<Self> {
        [Self::Confirmed, Self::ExplanationRequested].into_iter().find(|s| s.as_str() == name)
    }
}

/// A reviewer's decision on a download: the response of setting it, and how a month's review
/// shows the latest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DownloadReview {
    /// The download's entry in the privacy ledger.
    pub entry_id: PrivacyAuditLogId,
    /// The month reviewed, `YYYY-MM`.
    pub month: String,
    /// Where it stands.
    pub status: DownloadStatus,
    /// The reason confirmed, or the explanation asked for.
    pub reason: String,
    /// Who decided.
    pub reviewed_by: UserId,
    /// When.
    pub reviewed_at: Timestamp,
}

impl DownloadReview {
    /// The decision as the API shows it; `None` for a status no decision sets (a store's
    /// value this version does not know).
    pub fn of(d: &DownloadDecision) -> Option<Self> {
        Some(Self {
            entry_id: d.entry_id,
            month: d.month.clone(),
            status: DownloadStatus::decided(&d.status)?,
            reason: d.reason.clone(),
            reviewed_by: d.user_id,
            reviewed_at: d.at,
        })
    }
}

/// The body of a decision, `{"status": …, "reason": …}`, checked: every problem is noted.
pub fn decision_body(
    body: &[u8],
    problems: &mut Vec<ErrorDetail>,
) -> Option<(DownloadStatus, String)> {
    let members = object(body, &["status", "reason"], problems)?;
    let status = match members.get("status") {
        None => missing(problems, "status"),
        Some(Value::String(s)) => DownloadStatus::decided(s).or_else(|| {
            problems.push(ErrorDetail::field(
                "status",
                "must be CONFIRMED (the download's reason is confirmed) or EXPLANATION_REQUESTED",
            ));
            None
        }),
        Some(_) => wrong_type(problems, "status"),
    };
    let reason = text(&members, "reason", REASON_MAX, problems).and_then(|r| match r {
        Some(r) => Some(r),
        None => missing(problems, "reason"),
    });
    Some((status?, reason?))
}

/// The body of a sign-off, `{"note": …}` (the note may be left out or null), checked: every
/// problem is noted.
pub fn sign_off_body(body: &[u8], problems: &mut Vec<ErrorDetail>) -> Option<Option<String>> {
    let members = object(body, &["note"], problems)?;
    text(&members, "note", NOTE_MAX, problems)
}

/// The body's members, when it is a JSON object of only `known` members.
fn object(
    body: &[u8],
    known: &[&str],
    problems: &mut Vec<ErrorDetail>,
) -> Option<serde_json::Map<String, Value>> {
    let members = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(members)) => members,
        Ok(_) => {
            problems.push(ErrorDetail::field("body", "must be a JSON object"));
            return None;
        }
        Err(e) => {
            problems.push(crate::problems::not_json(&e));
            return None;
        }
    };
    for name in members.keys().filter(|name| !known.contains(&name.as_str())) {
        problems.push(crate::problems::unknown_parameter(name));
    }
    Some(members)
}

/// The text member `name`: `Some(None)` when absent or null, trimmed, at most `max`
/// characters and not blank.
fn text(
    members: &serde_json::Map<String, Value>,
    name: &str,
    max: usize,
    problems: &mut Vec<ErrorDetail>,
) -> Option<Option<String>> {
    match members.get(name) {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(s)) if s.trim().is_empty() => {
            problems.push(ErrorDetail::field(name, "must not be blank"));
            None
        }
        Some(Value::String(s)) if s.chars().count() > max => {
            problems.push(ErrorDetail::field(name, format!("must be at most {max} characters")));
            None
        }
        Some(Value::String(s)) => Some(Some(s.trim().to_owned())),
        Some(_) => wrong_type(problems, name),
    }
}

fn missing<T>(problems: &mut Vec<ErrorDetail>, name: &str) -> Option<T> {
    problems.push(crate::problems::missing(name));
    None
}

fn wrong_type<T>(problems: &mut Vec<ErrorDetail>, name: &str) -> Option<T> {
    problems.push(crate::problems::wrong_type(name, "a string"));
    None
}

/// The month's figures, as signed off.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
    /// Of those, with an explanation asked for.
    pub explanation_requested: u64,
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
            pending: count(DownloadStatus::Pending),
            ledger_exports: review.ledger_exports.len() as u64,
        }
    }

    /// The downloads not confirmed.
    pub fn unconfirmed(&self) -> u64 {
        self.pending + self.explanation_requested
    }
}

/// A month's integrity now ([`crate::Service::month_integrity`]): what a sign-off would
/// record of the chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Integrity {
    /// The month, `YYYY-MM`.
    pub month: String,
    /// The chain's verification over the month's part.
    pub verification: MonthVerification,
    /// The latest signed checkpoint (with the id of the key that signed it), if any.
    pub checkpoint: Option<Checkpoint>,
}

/// The verification of the privacy ledger's chain at sign-off: the part that holds the
/// month's entries, from the latest signed checkpoint before them to the head.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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

impl MonthVerification {
    /// The verification that `part` reports, of the month whose entries begin at `first`.
    pub fn of(part: PartReport, first: Option<i64>) -> Self {
        let r = part.report;
        Self {
            intact: r.findings.is_empty(),
            month_from_position: first,
            anchored_at: part.anchored_at,
            head_position: r.head_position,
            head_hash: r.head_hash,
            entries: r.entries,
            findings_total: r.findings.len() as u64,
            findings: r.findings.into_iter().take(FINDINGS_LISTED).collect(),
        }
    }
}

/// A month's sign-off, as recorded and as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SignOff {
    /// The organization.
    pub organization_id: OrganizationId,
    /// The month, `YYYY-MM`.
    pub month: String,
    /// The reviewer.
    pub signed_by: UserId,
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
