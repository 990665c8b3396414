//! What a reviewer records of a month's review, and its rules: a decision on each download
//! (the reason confirmed, or an explanation asked for), and the month's sign-off with what the
//! server adds to it (the month's figures, the chain's verification, the latest signed
//! checkpoint). A month whose downloads are not all confirmed, or whose chain did not verify,
//! is signed off only with a note that says why. Both are append-only: a later decision on a
//! download is a new record beside the earlier ones, and a month is signed off once.

use recruit_domain::ErrorDetail;
use recruit_ports::review::DownloadDecision;
use serde_json::Value;

use crate::verify::PartReport;

/// The longest reason of a decision, in characters.
pub const REASON_MAX: usize = 1_000;

/// The longest note of a sign-off, in characters.
pub const NOTE_MAX: usize = 4_000;

/// The most findings a sign-off lists; it counts them all.
const FINDINGS_LISTED: usize = 20;

pub use recruit_domain::review::{
    DownloadReview, DownloadStatus, Integrity, MonthVerification, SignOff, SignOffFigures,
};

/// A decision as the API shows it; `None` for a status no decision sets (a store's value this
/// version does not know).
pub fn download_review(d: &DownloadDecision) -> Option<DownloadReview> {
    Some(DownloadReview {
        entry_id: d.entry_id,
        month: d.month.parse().ok()?,
        status: DownloadStatus::stored(&d.status)?,
        reason: d.reason.clone(),
        reviewed_by: d.user_id,
        reviewed_at: d.at,
        due_at: None,
        notice: None,
    })
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
                "must be CONFIRMED (the download's reason, or its explanation, is accepted), \
                 EXPLANATION_REQUESTED (the person who downloaded is asked why) or REJECTED \
                 (the reason is not accepted)",
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

/// The longest explanation of a download, in characters.
pub const EXPLANATION_MAX: usize = 2_000;

/// The body of an explanation, `{"explanation": …}`, checked: every problem is noted.
pub fn explanation_body(body: &[u8], problems: &mut Vec<ErrorDetail>) -> Option<String> {
    let members = object(body, &["explanation"], problems)?;
    text(&members, "explanation", EXPLANATION_MAX, problems).and_then(|e| match e {
        Some(e) => Some(e),
        None => missing(problems, "explanation"),
    })
}

/// The body of a sign-off, `{"note": …}` (the note may be left out or null), checked: every
/// problem is noted.
pub fn sign_off_body(body: &[u8], problems: &mut Vec<ErrorDetail>) -> Option<Option<String>> {
    let members = object(body, &["note"], problems)?;
    text(&members, "note", NOTE_MAX, problems)
}

/// The body's members, when it is a JSON object of only `known` members (each unknown one
/// noted).
pub(crate) fn object(
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

/// The verification that `part` reports, of the month whose entries begin at `first`.
pub fn month_verification(part: PartReport, first: Option<i64>) -> MonthVerification {
    let r = part.report;
    MonthVerification {
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
