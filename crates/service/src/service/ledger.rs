//! The operations on the privacy audit ledger: listing a page, exporting a window,
//! recording accesses, and the latest signed checkpoint of its chain; and what the audit
//! ledgers record of an operation. The month's review is in `review.rs`.

use std::sync::Arc;
use std::time::Duration;

use recruit_domain::model::ActivityCategory;
use recruit_domain::resource::PrivacyAuditLog as PrivacyAuditLogResource;
use recruit_domain::{
    ApiTokenId, ErrorCode, ErrorDetail, IdFilter, OrganizationId, Page, PageLimit, Pagination,
    PrivacyAuditLog, PrivacyAuditLogId, TimeWindow, Timestamp, UserId, Uuid,
};
use recruit_ports::{
    AccessesWrite, AuditEntry, Claim, Interface, KeyClaim, LedgerEntry, PrivacyLogQuery,
    ReadRecord, StoreError, StoredResponse, ToolAuditEntry,
};

use super::{BatchWrites, CREATED, Service};
use crate::cursor::Filters;
use crate::error::ServiceError;
use crate::filter::Filter;
use crate::input::{ListParams, NoParams, RecordParams};
use crate::operation::{Caller, OperationKind, Recorded, RequestContext, Via};
use crate::{accesses, cursor};

/// The most entries a count of a list counts: [`Service::count_privacy_audit_logs`].
pub const COUNTED_AT_MOST: u64 = 10_000;

/// How many entries a list pages through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matching {
    /// This many.
    Exactly(u64),
    /// More than [`COUNTED_AT_MOST`].
    More,
}

/// The filters of the entries' fields among the parameters `$p` of a list or an export.
macro_rules! raw_filter {
    ($p:ident) => {
        crate::filter::RawFilter {
            account_id: $p.account_id,
            activity_category: $p.activity_category,
            access_menu: $p.access_menu,
            data_subject_id: $p.data_subject_id,
            ip_address: $p.ip_address,
            outside_work_hours: $p.outside_work_hours,
        }
    };
}

impl Service {
    /// One page of the caller's organization's privacy audit ledger, newest first. Needs the
    /// `audit_logs:read` scope and an acting user holding READ_AUDIT_LOGS (owners). The read is
    /// recorded in the API audit ledger (and the tool-interface ledger for tool calls) in the
    /// same transaction; if it cannot be recorded, no entry is returned.
    pub(crate) async fn list_privacy_audit_logs(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: ListParams,
    ) -> Result<Page<PrivacyAuditLog>, ServiceError> {
        let input = validate_list(params)?;
        let organization = caller.token.organization_id;
        let filters =
            Filters { window: input.window, ids: input.ids.as_ref(), fields: &input.filter };
        let after = match &input.cursor {
            None => None,
            Some(c) => Some(cursor::decode(&self.config.cursor_key, c, organization, &filters).map_err(|_| {
                ServiceError::new(
                    ErrorCode::InvalidCursor,
                    "The cursor does not belong to this query: reuse a cursor only with the same \
                     filters it was issued for, or restart without one.",
                )
            })?),
        };
        let query = PrivacyLogQuery {
            organization_id: organization,
            window: input.window,
            ids: input.ids.clone(),
            after,
            filter: input.conditions(self.store.as_ref(), organization).await?,
            limit: u32::from(input.limit.get()),
        };
        let record = self.record(caller, context, &input);
        let page = self.store.read_privacy_audit_logs(&query, &record).await?;
        let next_cursor = match page.entries.last() {
            Some(last) if page.more => Some(cursor::encode(
                &self.config.cursor_key,
                organization,
                &filters,
                recruit_ports::LedgerPosition::of(last),
            )),
            _ => None,
        };
        Ok(Page { data: page.entries, pagination: Pagination { next_cursor } })
    }

    /// How many entries of the caller's organization's privacy audit ledger a list with
    /// `params` pages through (its cursor and limit aside), counted up to [`COUNTED_AT_MOST`]
    /// so that the figure costs no more for a large ledger: `More` past that. Needs what
    /// listing needs. A count shows no entry, so it is not recorded as a read.
    pub async fn count_privacy_audit_logs(
        &self,
        caller: &Caller,
        params: ListParams,
    ) -> Result<Matching, ServiceError> {
        self.authorize(caller, OperationKind::ListPrivacyAuditLogs)?;
        let input = validate_list(params)?;
        let organization = caller.token.organization_id;
        let query = recruit_ports::chain::ExportQuery {
            ledger: recruit_domain::chain::Ledger::Privacy,
            organization: Some(organization),
            from: Some(input.window.gte()),
            to: Some(input.window.lt()),
            ids: input.ids.as_ref().map(|ids| ids.iter().map(|id| id.uuid()).collect()),
            recorded_before: None,
            after_position: None,
            filter: input.conditions(self.store.as_ref(), organization).await?,
        };
        let count = self.store.count_entries(&query, COUNTED_AT_MOST + 1).await?;
        Ok(if count > COUNTED_AT_MOST { Matching::More } else { Matching::Exactly(count) })
    }

    /// Every entry of a window of the caller's organization's privacy audit ledger, as NDJSON
    /// lines with their chain fields ([`crate::export::line`]), in the order of time and id;
    /// with `after_position`, only those after it in the chain, in the chain's order.
    /// Needs what listing needs; the window may span the ledgers' whole retention period. The
    /// export is recorded in the API audit ledger (operation `exportPrivacyAuditLogs`, a
    /// download, with its filters and count), committed before the first line is handed over;
    /// it reads one snapshot, so exactly that count follows. At most
    /// [`ServiceConfig::max_exports`] exports and reviews run at once: past that, RATE_LIMITED.
    pub(crate) async fn export_privacy_audit_logs(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: crate::ExportParams,
    ) -> Result<crate::export::Download, ServiceError> {
        let mut problems = params.problems;
        // The window's bounds are each optional: without them the export holds every entry
        // retained, and after a position with neither, the chain alone selects (an entry
        // recorded late, or stamped ahead by a source's clock, stays in its place), which is
        // what a reader verifying the chain asks for. Both given, they are one window, at
        // most the retention period long.
        let (from, to) = match (&params.timestamp_gte, &params.timestamp_lt) {
            (Some(_), Some(_)) => {
                let w =
                    window(&mut problems, params.timestamp_gte, params.timestamp_lt, |gte, lt| {
                        TimeWindow::within(gte, lt, self.config.ledger_retention)
                    });
                (w.map(|w| w.gte()), w.map(|w| w.lt()))
            }
            _ => {
                let mut bound = |name: &str, value: Option<String>| {
                    value.and_then(|v| match Timestamp::parse(&v) {
                        Ok(t) => Some(t),
                        Err(e) => {
                            problems.push(ErrorDetail::field(name, e));
                            None
                        }
                    })
                };
                (
                    bound("timestamp_gte", params.timestamp_gte),
                    bound("timestamp_lt", params.timestamp_lt),
                )
            }
        };
        let ids = ids(&mut problems, params.ids);
        let filter = Filter::read(raw_filter!(params), &mut problems);
        let format = match params.format.as_deref() {
            None | Some("ndjson") => Some(crate::export::Format::Ndjson),
            Some("csv") => Some(crate::export::Format::Csv),
            Some(_) => {
                problems.push(ErrorDetail::field("format", "must be ndjson or csv"));
                None
            }
        };
        let after_position =
            params.after_position.as_deref().and_then(|v| match v.parse::<i64>() {
                Ok(p) if p >= 0 => Some(p),
                _ => {
                    problems.push(ErrorDetail::field(
                        "after_position",
                        "must be an integer of 0 or more",
                    ));
                    None
                }
            });
        let (Some(format), true) = (format, problems.is_empty()) else {
            return Err(ServiceError::validation(problems));
        };
        // The work hours are laid over the window where entries lie: up to a day ahead, and
        // over the retention period at most, whatever bounds were given (a window of
        // thousands of years would otherwise be millions of spans).
        let ahead = Timestamp::now()
            .checked_add_duration(std::time::Duration::from_secs(86_400))
            .unwrap_or(Timestamp::MAX);
        let end = to.map_or(ahead, |to| to.min(ahead));
        let start = self.config.ledger_retention.horizon(end);
        let span = (from.map_or(start, |from| from.max(start)).min(end), end);
        let slot = self.heavy_read()?;
        let organization = caller.token.organization_id;
        let ledger = recruit_domain::chain::Ledger::Privacy;
        let query = recruit_ports::chain::ExportQuery {
            ledger,
            organization: Some(organization),
            from,
            to,
            ids: ids.as_ref().map(|ids| ids.iter().map(|id| id.uuid()).collect()),
            recorded_before: None,
            after_position,
            filter: filter.conditions(self.store.as_ref(), organization, span).await?,
        };
        // An export is a download of the ledger: the record says so, beside what it holds.
        let mut filters = serde_json::json!({
            "activity_category": ActivityCategory::Download.as_str(),
            "timestamp_gte": from,
            "timestamp_lt": to,
            "ids": ids.as_ref().map(|ids| ids.iter().collect::<Vec<_>>()),
            "format": format.name(),
        });
        if let Some(object) = filters.as_object_mut() {
            object.insert("filters".into(), filter.json().into());
            if let Some(position) = after_position {
                object.insert("after_position".into(), position.into());
            }
        }
        let kind = OperationKind::ExportPrivacyAuditLogs;
        let record = audit_record(caller, context, kind, filters, None);
        let q = &query;
        let export = self.heavy.run("export", |store| async move { store.export(q).await }).await?;
        // Committed on the primary before the export is handed over: no entry leaves
        // unrecorded. The export holds its snapshot meanwhile, so exactly `count` follow.
        self.store
            .record_read(&record, usize::try_from(export.count).unwrap_or(usize::MAX))
            .await?;
        let named = self.store.organization(organization).await?;
        let mut named_by = filter.json();
        if let Some(position) = after_position {
            named_by.insert("after_position".into(), position.into());
        }
        let file_name =
            crate::export::file_name(&named.name, (from, to), named.time_zone, &named_by, format);
        Ok(crate::export::Download {
            count: export.count,
            file_name,
            media_type: format.media_type(),
            chunks: crate::export::Chunks::new(ledger, format, export, Box::new(slot)),
        })
    }

    /// A slot of the heavy reads, exports and reviews: each reads a month or more of the
    /// ledger, so at most [`ServiceConfig::max_exports`] run at once, and past that the
    /// request is RATE_LIMITED with `Retry-After` rather than queued behind them.
    pub(super) fn heavy_read(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ServiceError> {
        Arc::clone(&self.exports).try_acquire_owned().map_err(|_| ServiceError {
            retry_after: Some(Duration::from_secs(5)),
            ..ServiceError::new(
                ErrorCode::RateLimited,
                format!(
                    "The server runs at most {} exports and reviews at once; retry when one \
                     has ended.",
                    self.config.max_exports.max(1)
                ),
            )
        })
    }

    /// What the audit ledgers record of a read.
    fn record(&self, caller: &Caller, context: &RequestContext, input: &ListInput) -> ReadRecord {
        let filters = serde_json::json!({
            "timestamp_gte": input.window.gte(),
            "timestamp_lt": input.window.lt(),
            "ids": input.ids.as_ref().map(|ids| ids.iter().collect::<Vec<_>>()),
            "limit": input.limit.get(),
            "cursor": input.cursor.is_some(),
            "filters": input.filter.json(),
        });
        audit_record(caller, context, OperationKind::ListPrivacyAuditLogs, filters, None)
    }

    /// Records accesses in the caller's organization's privacy ledger. Needs `audit_logs:write`
    /// and an owner or admin; an idempotency key; a body of 1 to 1 000 valid entries (every
    /// problem reported at once). The key decides first: a request it completed before is
    /// replayed, one running is CONFLICT, another request's key is IDEMPOTENCY_KEY_REUSED.
    /// The entries, the audit record and the key with its response are written together, so a
    /// request that fails anywhere leaves its key free for its retry.
    pub(crate) async fn record_privacy_accesses(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: RecordParams,
    ) -> Result<Recorded, ServiceError> {
        let mut problems = params.problems;
        let key_name = context.via.name(OperationKind::RecordPrivacyAccesses, "idempotency_key");
        let key = match params.idempotency_key {
            Some(key) => {
                if let Err(problem) = accesses::check_key(&key, key_name) {
                    problems.push(problem);
                }
                Some(key)
            }
            // The transport found the key unusable and said so: one problem among the others.
            None if crate::problems::reported(&problems, key_name) => None,
            None => {
                return Err(ServiceError::new(
                    ErrorCode::IdempotencyKeyRequired,
                    format!(
                        "Recording accesses needs an idempotency key ({}): generate a fresh one \
                         for this batch and send the same one when retrying it.",
                        key_name
                    ),
                ));
            }
        };
        let Some(body) = params.body else {
            return Err(ServiceError::validation(problems));
        };
        // The body is read in the batch's turn, so that only so many are in memory at once.
        let _turn = self.batch_turn().await?;
        let kind = OperationKind::RecordPrivacyAccesses;
        let now = Timestamp::now();
        let batch = accesses::read(kind.operation_id(), &body, now, &mut problems);
        drop(body);
        let (Some(key), Some(batch), true) = (key, batch, problems.is_empty()) else {
            return Err(ServiceError::validation(problems));
        };
        let organization = caller.token.organization_id;
        let add = |d: Duration| now.checked_add_duration(d).unwrap_or(Timestamp::MAX);
        let claim = KeyClaim {
            organization_id: organization,
            key: key.clone(),
            fingerprint: batch.fingerprint,
            now,
            expires_at: add(self.config.idempotency.retention),
        };
        // A replay or a refusal needs no work; the write decides again, in its transaction.
        if let Some(answer) = key_answer(&claim, self.store.idempotency_key(&claim).await?) {
            return answer;
        }
        let entries: Vec<LedgerEntry> = batch
            .entries
            .into_iter()
            .map(|new| {
                let id = new.id.unwrap_or_else(PrivacyAuditLogId::new_v7);
                LedgerEntry {
                    organization_id: organization,
                    entry: PrivacyAuditLog { id, ..new.entry },
                }
            })
            .collect();
        /// The response's shape, serialized as it is.
        #[derive(serde::Serialize)]
        struct Shown<'a> {
            entries: Vec<&'a PrivacyAuditLog>,
        }
        let shown = Shown { entries: entries.iter().map(|e| &e.entry).collect() };
        let response = serde_json::to_vec(&shown).map_err(crate::operation::not_serialized);
        let response = StoredResponse { status: CREATED, body: response? };
        let summary = serde_json::json!({ "idempotency_key": key, "entries": entries.len() });
        let write = AccessesWrite {
            record: audit_record(caller, context, kind, summary.clone(), Some(summary)),
            entries,
            claim,
            response,
        };
        match self.store.record_privacy_accesses(&write).await {
            Ok(written) if written.claim == Claim::Granted => {
                self.deliveries.recorded(written.chained);
                Ok(Recorded { status: CREATED, body: write.response.body, replayed: false })
            }
            Ok(found) => key_answer(&write.claim, found.claim).unwrap_or_else(|| {
                Err(ServiceError::internal_because("the key was granted twice"))
            }),
            // Nothing was written, the key included: a retry runs anew.
            Err(e) => Err(match e {
                StoreError::Conflict(_) => ServiceError::new(
                    ErrorCode::Conflict,
                    "The batch conflicts with the ledger: an entry with one of its ids is \
                         already recorded. Nothing was written; leave ids out to have the server \
                         assign them, or read the ledger first.",
                ),
                other => other.into(),
            }),
        }
    }

    /// A turn to read and write a batch of accesses, waited for at most
    /// [`BatchWrites::wait`]; then UNAVAILABLE, before anything is claimed or written.
    async fn batch_turn(&self) -> Result<tokio::sync::SemaphorePermit<'_>, ServiceError> {
        let BatchWrites { at_once, wait } = self.config.batch_writes;
        match tokio::time::timeout(wait, self.batch_turns.acquire()).await {
            Ok(Ok(turn)) => Ok(turn),
            // Waited too long, or (never) closed.
            _ => Err(ServiceError {
                retry_after: Some(Duration::from_secs(1)),
                ..ServiceError::new(
                    ErrorCode::Unavailable,
                    format!(
                        "The server writes at most {} batches at once, and this one waited {} \
                         ms for its turn. Nothing was written: send it again, with the same \
                         idempotency key.",
                        at_once.max(1),
                        wait.as_millis()
                    ),
                )
            }),
        }
    }

    /// The latest signed checkpoint of the caller's organization's privacy ledger chain, signed
    /// now if the chain moved since the last one ([`crate::checkpoint::latest`]). Needs what
    /// reading the ledger needs; recorded in the audit ledgers like a read of the ledger,
    /// committed before it returns. NOT_IMPLEMENTED without a signing key, NOT_FOUND while the
    /// ledger holds nothing.
    pub(crate) async fn latest_checkpoint(
        &self,
        caller: &Caller,
        context: &RequestContext,
        NoParams { problems }: NoParams,
    ) -> Result<recruit_domain::chain::Checkpoint, ServiceError> {
        if !problems.is_empty() {
            return Err(ServiceError::validation(problems));
        }
        let key = self.config.checkpoint_key.as_ref().ok_or_else(|| {
            ServiceError::new(
                ErrorCode::NotImplemented,
                "This server signs no checkpoints: it runs without a checkpoint key \
                 (--checkpoint-key).",
            )
        })?;
        let organization = caller.token.organization_id;
        let ledger = recruit_domain::chain::Ledger::Privacy;
        let checkpoint = crate::checkpoint::latest(self.store.as_ref(), key, organization, ledger)
            .await?
            .ok_or_else(|| {
                ServiceError::new(
                    ErrorCode::NotFound,
                    "The organization's privacy audit ledger holds no entry yet, so its chain \
                     has no checkpoint.",
                )
            })?;
        let kind = OperationKind::GetLatestPrivacyAuditLogCheckpoint;
        let record = audit_record(caller, context, kind, serde_json::json!({}), None);
        self.store.record_read(&record, 0).await?;
        Ok(checkpoint)
    }
}

/// What the audit ledgers record of an operation of `kind` by `caller`: `filters` say what it
/// asked; a tool call's arguments are recorded as given, or as `arguments` when the operation
/// gives a summary of them (a write's entries are in the privacy ledger already).
pub(super) fn audit_record(
    caller: &Caller,
    context: &RequestContext,
    kind: OperationKind,
    filters: serde_json::Value,
    arguments: Option<serde_json::Value>,
) -> ReadRecord {
    let actor = (caller.token.organization_id, caller.token.id, caller.user.id);
    record_of(actor, context, kind.operation_id(), filters, arguments)
}

/// What the audit ledgers record of `operation` (an operation's id, or one of the console's
/// own: `consoleSignIn`, `consoleSignOut`) by `actor`: the organization, the token and the
/// user it acts as.
pub(crate) fn record_of(
    (organization_id, token_id, user_id): (OrganizationId, ApiTokenId, UserId),
    context: &RequestContext,
    operation: &str,
    filters: serde_json::Value,
    arguments: Option<serde_json::Value>,
) -> ReadRecord {
    let at = Timestamp::now();
    let (interface, tool) = match &context.via {
        Via::Rest => (Interface::Rest, None),
        Via::Tool { name, arguments: given } => (
            Interface::Tool,
            Some(ToolAuditEntry {
                id: Uuid::now_v7(),
                at,
                organization_id,
                token_id,
                user_id,
                tool_name: name.clone(),
                arguments: arguments.unwrap_or_else(|| given.clone()),
                entries_returned: 0,
                request_id: context.request_id.clone(),
            }),
        ),
    };
    ReadRecord {
        api: AuditEntry {
            id: Uuid::now_v7(),
            at,
            organization_id,
            token_id,
            user_id,
            operation: operation.into(),
            request_id: context.request_id.clone(),
            client_ip: context.client_ip.map(|ip| ip.to_string()),
            filters,
            entries_returned: 0,
            interface,
            tool_name: tool.as_ref().map(|t| t.tool_name.clone()),
        },
        tool,
    }
}

/// The list's input, valid.
struct ListInput {
    window: TimeWindow,
    ids: Option<IdFilter<PrivacyAuditLogResource>>,
    limit: PageLimit,
    cursor: Option<String>,
    filter: Filter,
}

impl ListInput {
    /// The conditions of its filters over its window.
    async fn conditions(
        &self,
        store: &dyn recruit_ports::Store,
        organization: recruit_domain::OrganizationId,
    ) -> Result<recruit_ports::EntryFilter, ServiceError> {
        let window = (self.window.gte(), self.window.lt());
        self.filter.conditions(store, organization, window).await
    }
}

/// The window of `timestamp_gte` and `timestamp_lt` by `rule`, or `None` with the problems
/// noted: each missing or malformed value, then the rule's refusal.
fn window(
    problems: &mut Vec<ErrorDetail>,
    gte: Option<String>,
    lt: Option<String>,
    rule: impl FnOnce(Timestamp, Timestamp) -> Result<TimeWindow, recruit_domain::TimeWindowError>,
) -> Option<TimeWindow> {
    let mut timestamp = |name: &str, value: Option<String>| match value {
        None if crate::problems::reported(problems, name) => None,
        None => {
            problems.push(crate::problems::missing(name));
            None
        }
        Some(v) => match Timestamp::parse(&v) {
            Ok(t) => Some(t),
            Err(e) => {
                problems.push(ErrorDetail::field(name, e));
                None
            }
        },
    };
    let gte = timestamp("timestamp_gte", gte);
    let lt = timestamp("timestamp_lt", lt);
    match rule(gte?, lt?) {
        Ok(w) => Some(w),
        // Every refusal of the domain's rule, this version's and any later one's.
        Err(e) => {
            problems.push(ErrorDetail::field("timestamp_lt", e));
            None
        }
    }
}

/// The filter of `ids`, or `None`, with the problems of its values noted.
fn ids(
    problems: &mut Vec<ErrorDetail>,
    values: Option<Vec<String>>,
) -> Option<IdFilter<PrivacyAuditLogResource>> {
    let values = values?;
    // How many values a filter takes is the domain's rule, and so is its wording; it is
    // checked first, so that a list far too long is one problem, not one per value.
    if let Err(e) = IdFilter::<PrivacyAuditLogResource>::check_len(values.len()) {
        problems.push(ErrorDetail::field("ids", e));
        return None;
    }
    let mut parsed = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        match PrivacyAuditLogId::parse(v) {
            Ok(id) => parsed.push(id),
            Err(e) => problems.push(ErrorDetail::field("ids", format!("value {} {e}", i + 1))),
        }
    }
    if parsed.len() < values.len() {
        return None;
    }
    match IdFilter::new(parsed) {
        Ok(filter) => Some(filter),
        Err(e) => {
            problems.push(ErrorDetail::field("ids", e));
            None
        }
    }
}

/// Validates the list's parameters, reporting every problem at once.
fn validate_list(params: ListParams) -> Result<ListInput, ServiceError> {
    let mut problems = params.problems;
    let window = window(&mut problems, params.timestamp_gte, params.timestamp_lt, TimeWindow::new);
    let limit = match params.limit {
        None => Some(PageLimit::DEFAULT),
        Some(v) => match v.parse::<PageLimit>() {
            Ok(l) => Some(l),
            Err(e) => {
                problems.push(ErrorDetail::field("limit", e));
                None
            }
        },
    };
    let ids = ids(&mut problems, params.ids);
    let filter = Filter::read(raw_filter!(params), &mut problems);
    match (window, limit) {
        (Some(window), Some(limit)) if problems.is_empty() => {
            Ok(ListInput { window, ids, limit, cursor: params.cursor, filter })
        }
        _ => Err(ServiceError::validation(problems)),
    }
}

/// The answer to a request whose key was found `found`, unless the request is to run
/// ([`Claim::Granted`]): the first response replayed, CONFLICT while another request with the
/// key is being written (with `Retry-After`), or IDEMPOTENCY_KEY_REUSED.
fn key_answer(claim: &KeyClaim, found: Claim) -> Option<Result<Recorded, ServiceError>> {
    match found {
        Claim::Granted => None,
        Claim::Completed(response) => {
            Some(Ok(Recorded { status: response.status, body: response.body, replayed: true }))
        }
        Claim::InFlight { until } => {
            let wait = until.unix_micros().saturating_sub(claim.now.unix_micros());
            Some(Err(ServiceError {
                retry_after: Some(Duration::from_micros(u64::try_from(wait).unwrap_or(0))),
                ..ServiceError::new(
                    ErrorCode::Conflict,
                    "A request with this idempotency key is being written. Wait as long as \
                     `Retry-After` says, then send it again to get its response.",
                )
            }))
        }
        Claim::OtherRequest => Some(Err(ServiceError::new(
            ErrorCode::IdempotencyKeyReused,
            "This idempotency key was used for a different request (other entries). Use a fresh \
             key for a changed request.",
        ))),
    }
}
