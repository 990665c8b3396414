//! Every operation's [`Spec`], in [`OperationKind::spec`], and the parts specs share: the
//! ledger's filters and window, and the defaults each kind of operation starts from.

use recruit_domain::{Permission, Scope};

use super::{BATCH_BODY_LIMIT, BODY_LIMIT, Effect, Method, OperationKind, RequestBody, Spec};
use crate::input::{Param, Shape};
use crate::limits::OperationClass;

/// What reading the ledger needs of the acting user.
const READ_AUDIT_LOGS: Option<(Permission, &str)> = Some((
    Permission::ReadAuditLogs,
    "Reading the privacy audit ledger needs the READ_AUDIT_LOGS permission, which only owners \
     of the organization hold.",
));

/// What configuring the organization's sign-in needs of the acting user.
const MANAGE_SIGN_ON: Option<(Permission, &str)> = Some((
    Permission::ManageSignOn,
    "Configuring how the organization signs in needs the MANAGE_SIGN_ON permission, which only \
     owners of the organization hold.",
));

/// What streaming the ledger to the organization's own systems needs of the acting user.
const STREAM_AUDIT_LOGS: Option<(Permission, &str)> = Some((
    Permission::ReadAuditLogs,
    "Streaming the privacy audit ledger needs the READ_AUDIT_LOGS permission, which only owners \
     of the organization hold.",
));

/// The filters of the ledger's entries beside its window and ids ([`crate::filter`]).
const FILTERS: [Param; 6] = [
    Param::query("account_id", Shape::Text),
    Param::query("activity_category", Shape::Text),
    Param::query("access_menu", Shape::Text),
    Param::query("data_subject_id", Shape::Text),
    Param::query("ip_address", Shape::Text),
    Param::query("outside_work_hours", Shape::Boolean),
];

/// The parameters of a time window of the ledger.
const WINDOW: [Param; 2] =
    [Param::query("timestamp_gte", Shape::Text), Param::query("timestamp_lt", Shape::Text)];

/// `head`, then every one of [`FILTERS`], then `tail`: the parameters of a read of the ledger's
/// entries. `T` must be their count (the build fails otherwise).
const fn filtered<const H: usize, const L: usize, const T: usize>(
    head: [Param; H],
    tail: [Param; L],
) -> [Param; T] {
    assert!(H + FILTERS.len() + L == T, "the count of a filtered read's parameters");
    let mut out = [FILTERS[0]; T];
    let mut i = 0;
    while i < T {
        out[i] = match i {
            _ if i < H => head[i],
            _ if i < H + FILTERS.len() => FILTERS[i - H],
            _ => tail[i - H - FILTERS.len()],
        };
        i += 1;
    }
    out
}

/// The list's parameters.
const LIST_PARAMS: [Param; 11] = filtered(
    [
        WINDOW[0],
        WINDOW[1],
        Param::query("limit", Shape::Integer),
        Param::query("ids", Shape::TextList),
        Param::query("cursor", Shape::Text),
    ],
    [],
);

/// The export's parameters.
const EXPORT_PARAMS: [Param; 11] = filtered(
    [WINDOW[0], WINDOW[1], Param::query("ids", Shape::TextList)],
    [Param::query("after_position", Shape::Integer), Param::query("format", Shape::Text)],
);

/// A read of one thing and nothing more: the default a spec starts from.
const READ: Spec = Spec {
    operation_id: "",
    method: Method::Get,
    path: "",
    params: &[],
    body: RequestBody::None,
    body_limit: BODY_LIMIT,
    success: 200,
    statuses: &[200, 400, 401, 403, 413, 429, 500, 503, 504],
    scope: None,
    permission: None,
    class: OperationClass::Read,
    recorded: false,
    effect: Effect::Read,
    tool: true,
};

/// A recorded read of the ledger: what reading the ledger needs (the `audit_logs:read` scope
/// and an owner), its quota, and its record in the audit ledgers.
const LEDGER_READ: Spec = Spec {
    scope: Some(Scope::AuditLogsRead),
    permission: READ_AUDIT_LOGS,
    class: OperationClass::LedgerRead,
    recorded: true,
    ..READ
};

/// A record of the review of the ledger: what the review's writes need (the
/// `audit_logs:review` scope and an owner), the write quota, and their record in the audit
/// ledgers. Each appends a record and is idempotent by its content.
const REVIEW_RECORD: Spec = Spec {
    scope: Some(Scope::AuditLogsReview),
    permission: READ_AUDIT_LOGS,
    class: OperationClass::Write,
    recorded: true,
    effect: Effect::Append,
    ..READ
};

/// The organization's single sign-on: an owner's, with the `organization:admin` scope, at one
/// path, never a tool.
const SIGN_ON: Spec = Spec {
    path: "/v1/organization/sso",
    scope: Some(Scope::OrganizationAdmin),
    permission: MANAGE_SIGN_ON,
    tool: false,
    ..READ
};

/// The organization's log streams: an owner's, with the `log_streams:admin` scope, never a
/// tool.
const LOG_STREAMS: Spec = Spec {
    path: "/v1/log-streams",
    scope: Some(Scope::LogStreamsAdmin),
    permission: STREAM_AUDIT_LOGS,
    tool: false,
    ..READ
};

/// A change of one log stream: recorded on the API ledger with what it set.
const LOG_STREAM_CHANGE: Spec = Spec {
    path: "/v1/log-streams/{streamId}",
    params: &[Param::path("stream_id", "streamId")],
    statuses: &[200, 400, 401, 403, 404, 413, 429, 500, 503, 504],
    class: OperationClass::Write,
    recorded: true,
    effect: Effect::Change,
    ..LOG_STREAMS
};

impl OperationKind {
    /// The operation's declaration: everything the interfaces derive it from.
    pub fn spec(self) -> &'static Spec {
        match self {
            Self::ListPrivacyAuditLogs => {
                const SPEC: Spec = Spec {
                    operation_id: "listPrivacyAuditLogs",
                    path: "/v1/audit-logs/privacy",
                    // The specification declares 404, 409 and 410 for the list; this version
                    // never answers them.
                    statuses: &[200, 400, 401, 403, 404, 409, 410, 413, 429, 500, 503, 504],
                    params: &LIST_PARAMS,
                    ..LEDGER_READ
                };
                &SPEC
            }
            Self::ExportPrivacyAuditLogs => {
                const SPEC: Spec = Spec {
                    operation_id: "exportPrivacyAuditLogs",
                    path: "/v1/audit-logs/privacy/export",
                    params: &EXPORT_PARAMS,
                    tool: false,
                    ..LEDGER_READ
                };
                &SPEC
            }
            Self::GetPrivacyAccessReview => {
                const SPEC: Spec = Spec {
                    operation_id: "getPrivacyAccessReview",
                    path: "/v1/audit-logs/privacy/reviews/{month}",
                    params: &[Param::path("month", "month")],
                    statuses: &[200, 400, 401, 403, 413, 429, 500, 503, 504],
                    ..LEDGER_READ
                };
                &SPEC
            }
            Self::ReviewPrivacyAccessDownload => {
                const SPEC: Spec = Spec {
                    operation_id: "reviewPrivacyAccessDownload",
                    method: Method::Put,
                    path: "/v1/audit-logs/privacy/reviews/{month}/downloads/{entryId}",
                    params: &[Param::path("month", "month"), Param::path("entry_id", "entryId")],
                    body: RequestBody::Json(&["status", "reason"]),
                    statuses: &[200, 400, 401, 403, 404, 413, 429, 500, 503, 504],
                    ..REVIEW_RECORD
                };
                &SPEC
            }
            Self::SignOffPrivacyAccessReview => {
                const SPEC: Spec = Spec {
                    operation_id: "signOffPrivacyAccessReview",
                    method: Method::Post,
                    path: "/v1/audit-logs/privacy/reviews/{month}/sign-off",
                    params: &[Param::path("month", "month")],
                    body: RequestBody::Json(&["note"]),
                    success: 201,
                    statuses: &[201, 400, 401, 403, 409, 413, 429, 500, 503, 504],
                    ..REVIEW_RECORD
                };
                &SPEC
            }
            Self::GetPrivacyReviewRules => {
                const SPEC: Spec = Spec {
                    operation_id: "getPrivacyReviewRules",
                    path: "/v1/audit-logs/privacy/review-rules",
                    scope: Some(Scope::AuditLogsRead),
                    permission: READ_AUDIT_LOGS,
                    tool: false,
                    ..READ
                };
                &SPEC
            }
            Self::SetPrivacyReviewRules => {
                const SPEC: Spec = Spec {
                    operation_id: "setPrivacyReviewRules",
                    method: Method::Put,
                    path: "/v1/audit-logs/privacy/review-rules",
                    body: RequestBody::Json(&crate::review_rules::MEMBERS),
                    effect: Effect::Change,
                    tool: false,
                    ..REVIEW_RECORD
                };
                &SPEC
            }
            Self::GetSingleSignOn => {
                const SPEC: Spec = Spec {
                    operation_id: "getSingleSignOn",
                    path: "/v1/organization/sso",
                    statuses: &[200, 400, 401, 403, 404, 413, 429, 500, 503, 504],
                    ..SIGN_ON
                };
                &SPEC
            }
            Self::SetSingleSignOn => {
                const SPEC: Spec = Spec {
                    operation_id: "setSingleSignOn",
                    method: Method::Put,
                    body: RequestBody::Json(&crate::sso::MEMBERS),
                    statuses: &[200, 400, 401, 403, 413, 429, 500, 501, 503, 504],
                    class: OperationClass::Write,
                    recorded: true,
                    effect: Effect::Change,
                    ..SIGN_ON
                };
                &SPEC
            }
            Self::RemoveSingleSignOn => {
                const SPEC: Spec = Spec {
                    operation_id: "removeSingleSignOn",
                    method: Method::Delete,
                    success: 204,
                    statuses: &[204, 400, 401, 403, 413, 429, 500, 503, 504],
                    class: OperationClass::Write,
                    recorded: true,
                    effect: Effect::Change,
                    ..SIGN_ON
                };
                &SPEC
            }
            Self::ListLogStreams => {
                const SPEC: Spec = Spec { operation_id: "listLogStreams", ..LOG_STREAMS };
                &SPEC
            }
            Self::CreateLogStream => {
                const SPEC: Spec = Spec {
                    operation_id: "createLogStream",
                    method: Method::Post,
                    body: RequestBody::Json(&crate::log_stream::MEMBERS),
                    success: 201,
                    statuses: &[201, 400, 401, 403, 413, 429, 500, 501, 503, 504],
                    class: OperationClass::Write,
                    recorded: true,
                    effect: Effect::Change,
                    ..LOG_STREAMS
                };
                &SPEC
            }
            Self::GetLogStream => {
                const SPEC: Spec = Spec {
                    operation_id: "getLogStream",
                    class: OperationClass::Read,
                    recorded: false,
                    effect: Effect::Read,
                    ..LOG_STREAM_CHANGE
                };
                &SPEC
            }
            Self::UpdateLogStream => {
                const SPEC: Spec = Spec {
                    operation_id: "updateLogStream",
                    method: Method::Patch,
                    body: RequestBody::MergePatch,
                    statuses: &[200, 400, 401, 403, 404, 413, 429, 500, 501, 503, 504],
                    ..LOG_STREAM_CHANGE
                };
                &SPEC
            }
            Self::PauseLogStream => {
                const SPEC: Spec = Spec {
                    operation_id: "pauseLogStream",
                    method: Method::Post,
                    path: "/v1/log-streams/{streamId}/pause",
                    ..LOG_STREAM_CHANGE
                };
                &SPEC
            }
            Self::ResumeLogStream => {
                const SPEC: Spec = Spec {
                    operation_id: "resumeLogStream",
                    method: Method::Post,
                    path: "/v1/log-streams/{streamId}/resume",
                    ..LOG_STREAM_CHANGE
                };
                &SPEC
            }
            Self::RotateLogStreamSecret => {
                const SPEC: Spec = Spec {
                    operation_id: "rotateLogStreamSecret",
                    method: Method::Post,
                    path: "/v1/log-streams/{streamId}/rotate-secret",
                    body: RequestBody::Json(&["overlap_seconds"]),
                    ..LOG_STREAM_CHANGE
                };
                &SPEC
            }
            Self::DeleteLogStream => {
                const SPEC: Spec = Spec {
                    operation_id: "deleteLogStream",
                    method: Method::Delete,
                    success: 204,
                    statuses: &[204, 400, 401, 403, 404, 413, 429, 500, 503, 504],
                    ..LOG_STREAM_CHANGE
                };
                &SPEC
            }
            Self::ExplainPrivacyAccessDownload => {
                const SPEC: Spec = Spec {
                    operation_id: "explainPrivacyAccessDownload",
                    method: Method::Put,
                    path: "/v1/audit-logs/privacy/reviews/{month}/downloads/{entryId}/explanation",
                    params: &[Param::path("month", "month"), Param::path("entry_id", "entryId")],
                    body: RequestBody::Json(&["explanation"]),
                    statuses: &[200, 400, 401, 404, 409, 413, 429, 500, 503, 504],
                    // Whoever downloaded explains, whatever their role: the service checks
                    // that the download is the caller's and that an explanation was asked.
                    class: OperationClass::Write,
                    recorded: true,
                    effect: Effect::Append,
                    tool: false,
                    ..READ
                };
                &SPEC
            }
            Self::GetLatestPrivacyAuditLogCheckpoint => {
                const SPEC: Spec = Spec {
                    operation_id: "getLatestPrivacyAuditLogCheckpoint",
                    path: "/v1/audit-logs/privacy/checkpoints/latest",
                    statuses: &[200, 400, 401, 403, 404, 413, 429, 500, 501, 503, 504],
                    ..LEDGER_READ
                };
                &SPEC
            }
            Self::RecordPrivacyAccesses => {
                const SPEC: Spec = Spec {
                    operation_id: "recordPrivacyAccesses",
                    method: Method::Post,
                    path: "/v1/audit-logs/privacy",
                    params: &[Param::header("idempotency_key", "Idempotency-Key", Shape::Text)],
                    body: RequestBody::Json(&["entries"]),
                    body_limit: BATCH_BODY_LIMIT,
                    success: 201,
                    statuses: &[201, 400, 401, 403, 409, 413, 422, 429, 500, 503, 504],
                    scope: Some(Scope::AuditLogsWrite),
                    permission: Some((
                        Permission::RecordAccesses,
                        "Recording accesses in the privacy audit ledger needs an owner or an admin: \
                         create the service's token for such a user.",
                    )),
                    class: OperationClass::Write,
                    recorded: true,
                    effect: Effect::Append,
                    ..READ
                };
                &SPEC
            }
            Self::GetJob => {
                const SPEC: Spec = Spec {
                    operation_id: "getJob",
                    path: "/v1/jobs/{jobId}",
                    params: &[Param::path("job_id", "jobId")],
                    statuses: &[200, 400, 401, 403, 404, 413, 429, 500, 503, 504],
                    scope: Some(Scope::JobsRead),
                    ..READ
                };
                &SPEC
            }
            Self::GetOrganization => {
                const SPEC: Spec = Spec {
                    operation_id: "getOrganization",
                    path: "/v1/organization",
                    scope: Some(Scope::OrganizationRead),
                    ..READ
                };
                &SPEC
            }
            Self::GetUser => {
                const SPEC: Spec = Spec {
                    operation_id: "getUser",
                    path: "/v1/users/{userId}",
                    params: &[Param::path("user_id", "userId")],
                    statuses: &[200, 400, 401, 403, 404, 413, 429, 500, 503, 504],
                    scope: Some(Scope::UsersRead),
                    ..READ
                };
                &SPEC
            }
            Self::UpdateUser => {
                const SPEC: Spec = Spec {
                    operation_id: "updateUser",
                    method: Method::Patch,
                    path: "/v1/users/{userId}",
                    params: &[
                        Param::path("user_id", "userId"),
                        Param::header("if_match", "If-Match", Shape::Text),
                    ],
                    body: RequestBody::MergePatch,
                    statuses: &[200, 400, 401, 403, 404, 409, 413, 429, 500, 503, 504],
                    scope: Some(Scope::UsersWrite),
                    class: OperationClass::Write,
                    effect: Effect::Change,
                    ..READ
                };
                &SPEC
            }
            Self::GetMe => {
                const SPEC: Spec = Spec {
                    operation_id: "getMe",
                    path: "/v1/me",
                    statuses: &[200, 400, 401, 413, 429, 500, 503, 504],
                    ..READ
                };
                &SPEC
            }
        }
    }
}
