//! The operations of the monthly access review ([`crate::review`], [`crate::sign_off`]):
//! reading a month's review, a reviewer's decision on one of its downloads, and the month's
//! sign-off. Each is recorded in the audit ledgers: the read like a read of the ledger, the
//! decision and the sign-off in the transaction that writes them.

use recruit_domain::chain::{Checkpoint, Ledger};
use recruit_domain::model::ActivityCategory;
use recruit_domain::{ErrorCode, ErrorDetail, OrganizationId, PrivacyAuditLogId, Timestamp, Uuid};
use recruit_ports::StoreError;
use recruit_ports::review::{
    Author, Decided, DecisionWrite, DownloadDecision, SignOffRecord, SignOffWrite, SignedOff,
};
use serde_json::{Value, json};

use super::ledger::audit_record;
use super::{CREATED, Service};
use crate::error::ServiceError;
use crate::input::{DecideParams, SignOffParams};
use crate::operation::{Caller, OperationKind, Recorded, RequestContext};
use crate::review::{Month, MonthWindow, Review, ReviewError};
use crate::sign_off::{
    DownloadReview, DownloadStatus, Integrity, MonthVerification, SignOff, SignOffFigures,
};
use crate::verify::Anchors;

impl Service {
    /// The review of a month of the caller's organization's privacy ledger
    /// ([`crate::review`]). Needs what reading the ledger needs; recorded in the audit ledgers
    /// like a read of the ledger, with the downloads it lists as the entries returned, and
    /// committed before it returns. It takes a slot of the heavy reads, as an export does.
    pub(crate) async fn privacy_access_review(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: crate::input::ReviewParams,
    ) -> Result<crate::review::Review, ServiceError> {
        let kind = OperationKind::GetPrivacyAccessReview;
        let mut problems = params.problems;
        let name = context.via.name(kind, "month");
        let month = month(&mut problems, name, &params.month);
        let (Some(month), true) = (month, problems.is_empty()) else {
            return Err(ServiceError::validation(problems));
        };
        let _slot = self.heavy_read()?;
        let (review, _) = self.review_of(caller.token.organization_id, month, name).await?;
        let filters = serde_json::json!({ "month": review.month });
        let record = audit_record(caller, context, kind, filters, None);
        let shown = review.downloads.len() + review.ledger_exports.len();
        self.store.record_read(&record, shown).await?;
        Ok(review)
    }
}

impl Service {
    /// A reviewer's decision on a download of a month: the reason confirmed, or an
    /// explanation asked for. Needs the `audit_logs:review` scope and an owner. The download
    /// must be an entry of activity DOWNLOAD of the caller's organization within the month
    /// (in its time zone), else NOT_FOUND. The decision is kept beside earlier ones with its
    /// record in the audit ledgers; one that says what the latest already says writes
    /// nothing. Returns the download's latest decision.
    pub(crate) async fn review_download(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: DecideParams,
    ) -> Result<DownloadReview, ServiceError> {
        let kind = OperationKind::ReviewPrivacyAccessDownload;
        let mut problems = params.problems;
        let target = target(kind, context, &params.month, &params.entry_id, &mut problems);
        let decision =
            params.body.and_then(|body| crate::sign_off::decision_body(&body, &mut problems));
        let (Some((month, entry)), Some((status, reason)), true) =
            (target, decision, problems.is_empty())
        else {
            return Err(ServiceError::validation(problems));
        };
        let asked = status == DownloadStatus::ExplanationRequested;
        let decision = Decision { month, entry, status, reason, author: Author::Reviewer };
        let (mut review, written, zone) = self.decide(caller, context, kind, decision).await?;
        if asked && written {
            let (notice, due) = self.ask_for_explanation(caller, &review, zone).await;
            review.notice = Some(notice);
            review.due_at = due;
        }
        Ok(review)
    }

    /// Records `decision` of `caller` on a download (for the operation `kind`): the latest
    /// decision on it then, whether this one was written, and the organization's time zone.
    pub(super) async fn decide(
        &self,
        caller: &Caller,
        context: &RequestContext,
        kind: OperationKind,
        decision: Decision,
    ) -> Result<(DownloadReview, bool, chrono_tz::Tz), ServiceError> {
        let Decision { month, entry, status, reason, author } = decision;
        let organization = caller.token.organization_id;
        let zone = self.store.organization(organization).await?.time_zone;
        let (from, to) =
            month.window(zone).ok_or_else(|| out_of_range(context.via.name(kind, "month")))?;
        let filters = json!({
            "month": month.to_string(),
            "entry_id": entry,
            "status": status,
            "reason": reason,
        });
        let record = audit_record(caller, context, kind, filters, None);
        let write = DecisionWrite {
            decision: DownloadDecision {
                id: Uuid::now_v7(),
                organization_id: organization,
                month: month.to_string(),
                entry_id: entry,
                status: status.as_str().into(),
                reason,
                user_id: caller.user.id,
                token_id: caller.token.id,
                at: record.api.at,
                request_id: context.request_id.clone(),
            },
            record,
            from,
            to,
            download: ActivityCategory::Download.as_str(),
            author,
        };
        let (decided, written) = match self.store.decide_download(&write).await {
            Ok(Decided::Written) => (write.decision, true),
            Ok(Decided::Unchanged(latest)) => (latest, false),
            Ok(Decided::OwnDownload) => {
                return Err(ServiceError::permission_denied(
                    "This download is your own: another owner of the organization decides on \
                     it (four eyes). An organization with a single owner cannot review its \
                     owner's downloads: add a second owner.",
                ));
            }
            Ok(Decided::NotAsked) => {
                return Err(ServiceError::new(
                    ErrorCode::Conflict,
                    format!(
                        "No explanation of the download {entry} is asked of you: only the person \
                         who made a download explains it, and only while a reviewer's request \
                         for an explanation is open."
                    ),
                ));
            }
            Err(StoreError::NotFound) => {
                return Err(ServiceError::new(
                    ErrorCode::NotFound,
                    format!(
                        "The organization's privacy ledger holds no download {entry} in {month} \
                         ({zone}): name an entry of activity DOWNLOAD that the month's review \
                         lists."
                    ),
                ));
            }
            Err(e) => return Err(e.into()),
        };
        let review = crate::sign_off::download_review(&decided).ok_or_else(|| {
            ServiceError::internal_because(format!(
                "a stored decision has the status {:?}",
                decided.status
            ))
        })?;
        Ok((review, written, zone))
    }

    /// Signs off a month's review of the caller's organization. Needs the `audit_logs:review`
    /// scope and an owner. The server adds the reviewer and the time, the month's figures,
    /// the verification of the privacy ledger's chain from the latest signed checkpoint before
    /// the month's entries to its head, and the latest signed checkpoint. A month with
    /// downloads not confirmed, or whose chain did not verify, needs a note: without one,
    /// CONFLICT naming `note`. It takes a slot of the heavy reads, as the review does.
    ///
    /// A month is signed off once: the same reviewer's same sign-off again is answered with
    /// the one recorded (`Idempotent-Replayed`); any other is CONFLICT.
    pub(crate) async fn sign_off_review(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: SignOffParams,
    ) -> Result<Recorded, ServiceError> {
        let kind = OperationKind::SignOffPrivacyAccessReview;
        let mut problems = params.problems;
        let name = context.via.name(kind, "month");
        let month = month(&mut problems, name, &params.month);
        let note =
            params.body.and_then(|body| crate::sign_off::sign_off_body(&body, &mut problems));
        let (Some(month), Some(note), true) = (month, note, problems.is_empty()) else {
            return Err(ServiceError::validation(problems));
        };
        let organization = caller.token.organization_id;
        let zone = self.store.organization(organization).await?.time_zone;
        let (_, end) = month.window(zone).ok_or_else(|| out_of_range(name))?;
        if end > Timestamp::now() {
            return Err(not_ended(month, zone, end, name));
        }
        let _slot = self.heavy_read()?;
        let (review, first) = self.review_of(organization, month, name).await?;
        if let Some(signed) = &review.sign_off {
            return signed_already(caller, signed, note.as_deref());
        }
        let (verification, checkpoint) = self.verify_month(organization, first).await?;
        let record = audit_record(caller, context, kind, Value::Null, None);
        let sign_off = SignOff {
            organization_id: organization,
            month,
            signed_by: caller.user.id,
            reviewer: Some(recruit_domain::review::Person::of(&caller.user)),
            signed_at: record.api.at,
            note,
            figures: SignOffFigures::of(&review),
            verification,
            checkpoint,
        };
        if let Some(why) = sign_off.missing_note() {
            let field = context.via.name(kind, "note");
            return Err(ServiceError {
                details: vec![ErrorDetail::field(field, &why)],
                ..ServiceError::new(
                    ErrorCode::Conflict,
                    format!(
                        "The month {month} cannot be signed off without a note: a note {why}. \
                         Or confirm its downloads first.",
                    ),
                )
            });
        }
        let body = serde_json::to_value(&sign_off).map_err(|e| {
            ServiceError::internal_because(format!("the sign-off could not be serialized: {e}"))
        })?;
        // The sign-off itself is in the API ledger's chain: what the auditor is shown is
        // tamper-evident like the ledger it vouches for.
        let mut record = record;
        record.api.filters = body.clone();
        let write = SignOffWrite {
            sign_off: SignOffRecord {
                organization_id: organization,
                month: month.to_string(),
                user_id: caller.user.id,
                at: sign_off.signed_at,
                note: sign_off.note.clone(),
                body,
            },
            record,
        };
        match self.store.sign_off(&write).await? {
            SignedOff::Written => Ok(Recorded {
                status: CREATED,
                body: json_bytes(&write.sign_off.body)?,
                replayed: false,
            }),
            SignedOff::Existing(stored) => signed_already(caller, &stored.body, note_of(&write)),
        }
    }

    /// The integrity of a month of the caller's organization's privacy ledger: the
    /// verification of its chain from the latest signed checkpoint before the month's entries
    /// to the head, and the latest signed checkpoint, as a sign-off would record them now.
    /// Needs what reading the month's review needs, and takes a slot of the heavy reads.
    pub async fn month_integrity(
        &self,
        caller: &Caller,
        month: &str,
    ) -> Result<Integrity, ServiceError> {
        self.authorize(caller, OperationKind::GetPrivacyAccessReview)?;
        let mut problems = vec![];
        let Some(month) = self::month(&mut problems, "month", month) else {
            return Err(ServiceError::validation(problems));
        };
        let _slot = self.heavy_read()?;
        let organization = caller.token.organization_id;
        let (_, first) = self.review_of(organization, month, "month").await?;
        let (verification, checkpoint) = self.verify_month(organization, first).await?;
        Ok(Integrity { month, verification, checkpoint })
    }

    /// The month running now in the caller's organization's time zone: the months before it
    /// have ended and may be signed off.
    pub async fn running_month(&self, caller: &Caller) -> Result<Month, ServiceError> {
        let zone = self.store.organization(caller.token.organization_id).await?.time_zone;
        crate::review::month_at(Timestamp::now(), zone)
            .ok_or_else(|| ServiceError::internal_because("the clock is out of range"))
    }

    /// The first instant of a month of the caller's organization and the first after it, in
    /// the organization's time zone (whose name comes third): the window of the month's
    /// entries.
    pub async fn month_window(
        &self,
        caller: &Caller,
        month: &str,
    ) -> Result<(Timestamp, Timestamp, String), ServiceError> {
        let mut problems = vec![];
        let Some(month) = self::month(&mut problems, "month", month) else {
            return Err(ServiceError::validation(problems));
        };
        let zone = self.store.organization(caller.token.organization_id).await?.time_zone;
        let (from, to) = month.window(zone).ok_or_else(|| out_of_range("month"))?;
        Ok((from, to, zone.name().to_owned()))
    }

    /// The verification of the privacy ledger's chain of `organization` from the latest
    /// signed checkpoint before `first` (a month's first position; none: the head) to its
    /// head, and the latest signed checkpoint.
    async fn verify_month(
        &self,
        organization: OrganizationId,
        first: Option<i64>,
    ) -> Result<(MonthVerification, Option<Checkpoint>), ServiceError> {
        let store = self.store.as_ref();
        let keys: Vec<_> = self.config.checkpoint_key.iter().map(|k| k.public()).collect();
        let anchors = Anchors { keys: &keys, kept: &[] };
        // A month without entries checks the chain from its latest checkpoint.
        let from = first.unwrap_or(i64::MAX);
        let part = self
            .heavy
            .run("verification", |store| async move {
                let store = store.as_ref();
                crate::verify::verify_since(store, Ledger::Privacy, organization, from, anchors)
                    .await
            })
            .await?;
        let checkpoint = match &self.config.checkpoint_key {
            Some(key) => {
                crate::checkpoint::latest(store, key, organization, Ledger::Privacy).await?
            }
            None => store.latest_checkpoint(organization, Ledger::Privacy).await?,
        };
        Ok((crate::sign_off::month_verification(part, first), checkpoint))
    }

    /// The review of `organization`'s `month` and the lowest chain position of its entries, an
    /// out-of-range month reported on the parameter `name`.
    pub(super) async fn review_of(
        &self,
        organization: OrganizationId,
        month: Month,
        name: &str,
    ) -> Result<(Review, Option<i64>), ServiceError> {
        let review = self.heavy.run("review", |store| async move {
            crate::review::reviewed(store.as_ref(), organization, month).await
        });
        review.await.map_err(|e| match e {
            ReviewError::Store(e) => ServiceError::from(e),
            ReviewError::Month(_) => out_of_range(name),
        })
    }
}

/// A decision to record on a download.
pub(super) struct Decision {
    /// The month reviewed.
    pub(super) month: Month,
    /// The download.
    pub(super) entry: PrivacyAuditLogId,
    /// Its status.
    pub(super) status: DownloadStatus,
    /// The reason, question or explanation.
    pub(super) reason: String,
    /// Who records it.
    pub(super) author: Author,
}

/// The month and the download an operation `kind` names, or `None` with the problems noted.
pub(super) fn target(
    kind: OperationKind,
    context: &RequestContext,
    month: &str,
    entry: &str,
    problems: &mut Vec<ErrorDetail>,
) -> Option<(Month, PrivacyAuditLogId)> {
    let month = self::month(problems, context.via.name(kind, "month"), month);
    let entry = match PrivacyAuditLogId::parse(entry) {
        Ok(id) => Some(id),
        Err(e) => {
            problems.push(ErrorDetail::field(context.via.name(kind, "entry_id"), e));
            None
        }
    };
    Some((month?, entry?))
}

/// The note of a sign-off to write.
fn note_of(write: &SignOffWrite) -> Option<&str> {
    write.sign_off.note.as_deref()
}

/// The answer to a sign-off of a month signed off already (`signed`, as recorded): the same
/// reviewer's same sign-off is replayed; any other is CONFLICT.
fn signed_already(
    caller: &Caller,
    signed: &Value,
    note: Option<&str>,
) -> Result<Recorded, ServiceError> {
    let by = signed["signed_by"].as_str().unwrap_or("-");
    if by == caller.user.id.to_string() && signed["note"].as_str() == note {
        return Ok(Recorded { status: CREATED, body: json_bytes(signed)?, replayed: true });
    }
    Err(ServiceError::new(
        ErrorCode::Conflict,
        format!(
            "The month {} was signed off by {by} at {}; a month is signed off once. Decisions on \
             its downloads made since are kept beside the sign-off.",
            signed["month"].as_str().unwrap_or("-"),
            signed["signed_at"].as_str().unwrap_or("-"),
        ),
    ))
}

/// `value` as the bytes of its JSON.
fn json_bytes(value: &Value) -> Result<Vec<u8>, ServiceError> {
    serde_json::to_vec(value).map_err(|e| {
        ServiceError::internal_because(format!("the sign-off could not be serialized: {e}"))
    })
}

/// The month `value` of the parameter `name`, or `None` with the problem noted.
pub(super) fn month(problems: &mut Vec<ErrorDetail>, name: &str, value: &str) -> Option<Month> {
    value.parse::<Month>().map_err(|e| problems.push(ErrorDetail::field(name, e))).ok()
}

/// The problem of a month that cannot be placed in time.
fn out_of_range(name: &str) -> ServiceError {
    ServiceError::validation(vec![ErrorDetail::field(
        name,
        "is out of the range of time recruitd keeps",
    )])
}

/// CONFLICT: `month` (named `name`) has not ended in `zone`, where it ends at `end`: a month
/// is signed off once all of it is recorded.
fn not_ended(month: Month, zone: chrono_tz::Tz, end: Timestamp, name: &str) -> ServiceError {
    let local = end.as_datetime().with_timezone(&zone);
    let why = format!(
        "has not ended: it ends at {} ({zone})",
        local.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    ServiceError {
        details: vec![ErrorDetail::field(name, &why)],
        ..ServiceError::new(
            ErrorCode::Conflict,
            format!(
                "The month {month} {why}. Only a month that has ended can be signed off: \
                 review it now, and sign it off once it is over."
            ),
        )
    }
}
