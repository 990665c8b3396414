//! The organization's log streams through the API ([`crate::log_stream`]): made (its signing
//! secret shown once), listed, read, changed, paused, resumed and removed by an owner; each
//! change on the API ledger with what it set, never a secret.

use recruit_domain::chain::{GENESIS, Ledger};
use recruit_domain::model::{
    LogStream, LogStreamDestination, LogStreamSettings, Page, Pagination, STREAMED_LEDGER,
};
use recruit_domain::{ErrorDetail, LogStreamId, OrganizationId, Timestamp, Uuid};
use recruit_ports::StoreError;
use recruit_ports::streams::{Delivery, StreamRecord};
use serde_json::Value;

use super::ledger::audit_record;
use super::{Service, parse_id};
use crate::error::ServiceError;
use crate::input::{
    BodyParams, LogStreamParams, NoParams, RotateSecretParams, UpdateLogStreamParams,
};
use crate::log_stream::webhook::SigningSecret;
use crate::operation::{Caller, OperationKind, RequestContext};

impl Service {
    /// The caller's organization's log streams, oldest first.
    pub(crate) async fn log_streams(
        &self,
        caller: &Caller,
        _: &RequestContext,
        NoParams { problems }: NoParams,
    ) -> Result<Page<LogStream>, ServiceError> {
        if !problems.is_empty() {
            return Err(ServiceError::validation(problems));
        }
        let organization = caller.token.organization_id;
        let head = self.streamed_head(organization).await?.0;
        let streams = self.store.streams(organization).await?;
        let data = streams.iter().map(|s| crate::log_stream::shown(s, head)).collect();
        Ok(Page { data, pagination: Pagination { next_cursor: None } })
    }

    /// Makes a log stream from the body's settings: checked field by field, its destination's
    /// host admitted by the server's outbound policy, delivering from now, after the position
    /// it names or from the time it names, with a new signing secret shown in this answer only.
    pub(crate) async fn create_log_stream(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: BodyParams,
    ) -> Result<LogStream, ServiceError> {
        self.sends_requests()?;
        let mut problems = params.problems;
        let settings =
            params.body.and_then(|body| crate::log_stream::settings_body(&body, &mut problems));
        let (Some(mut settings), true) = (settings, problems.is_empty()) else {
            return Err(ServiceError::validation(problems));
        };
        settings.destination = crate::log_stream::with_channel(settings.destination);
        self.admitted(&settings).await?;
        let organization = caller.token.organization_id;
        let (position, hash) = match settings.after_time {
            Some(at) => self.start_at(organization, at).await?,
            None => self.start(organization, settings.after_position).await?,
        };
        let now = Timestamp::now();
        let (secrets, shown_secret) = match &settings.destination {
            LogStreamDestination::Https { .. } => {
                let secret = SigningSecret::generate().reveal();
                (serde_json::json!({"signing": secret}), Some(secret))
            }
            other => (crate::log_stream::secrets_of(other, Value::Null).map_err(refused)?, None),
        };
        let stream = StreamRecord {
            organization_id: organization,
            id: Uuid::now_v7(),
            name: settings.name.trim().to_owned(),
            ledger: STREAMED_LEDGER.to_owned(),
            destination: crate::log_stream::stored(&settings.destination),
            secrets,
            paused: false,
            created_by: caller.user.id,
            created_at: now,
            updated_at: now,
            delivery: Delivery::starting(position, hash),
        };
        let mut filters = serde_json::json!({
            "stream_id": LogStreamId::from_uuid(stream.id),
            "name": stream.name,
            "destination": stream.destination,
            "after_position": position,
        });
        if let Some(at) = settings.after_time {
            filters["after_time"] = serde_json::json!(at);
        }
        let record = audit_record(caller, context, OperationKind::CreateLogStream, filters, None);
        self.store.create_stream(&stream, &record).await?;
        let head = self.streamed_head(organization).await?.0;
        let mut shown = crate::log_stream::shown(&stream, head);
        shown.signing_secret = shown_secret;
        Ok(shown)
    }

    /// One log stream of the caller's organization.
    pub(crate) async fn log_stream(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: LogStreamParams,
    ) -> Result<LogStream, ServiceError> {
        let kind = OperationKind::GetLogStream;
        let stream = self.stream_of(caller, context, kind, &params.stream_id, params.problems);
        let stream = stream.await?;
        self.shown(&stream).await
    }

    /// Changes a log stream's name or destination by a JSON Merge Patch; its secret, its
    /// position and its state stay as they are.
    pub(crate) async fn update_log_stream(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: UpdateLogStreamParams,
    ) -> Result<LogStream, ServiceError> {
        self.sends_requests()?;
        let kind = OperationKind::UpdateLogStream;
        let mut problems = vec![];
        let stream =
            self.stream_of(caller, context, kind, &params.stream_id, params.problems).await?;
        let settings =
            params.body.and_then(|b| crate::log_stream::patched(&stream, &b, &mut problems));
        let (Some(mut settings), true) = (settings, problems.is_empty()) else {
            return Err(ServiceError::validation(problems));
        };
        settings.destination = crate::log_stream::with_channel(settings.destination);
        let stored = crate::log_stream::destination(&stream);
        if stored.as_ref().map(std::mem::discriminant)
            != Some(std::mem::discriminant(&settings.destination))
        {
            let why = "A stream keeps its destination's type: make a new stream for another.";
            return Err(refused(("destination.type", why.to_owned())));
        }
        self.admitted(&settings).await?;
        let secrets = stream.secrets.clone();
        let secrets = crate::log_stream::secrets_of(&settings.destination, secrets);
        let changed = StreamRecord {
            name: settings.name.trim().to_owned(),
            destination: crate::log_stream::stored(&settings.destination),
            secrets: secrets.map_err(refused)?,
            updated_at: Timestamp::now(),
            ..stream
        };
        let filters = serde_json::json!({
            "stream_id": LogStreamId::from_uuid(changed.id),
            "name": changed.name,
            "destination": changed.destination,
        });
        let record = audit_record(caller, context, kind, filters, None);
        self.store.update_stream(&changed, false, &record).await.map_err(not_found)?;
        self.shown(&changed).await
    }

    /// Pauses a log stream: it keeps its position and delivers nothing until resumed.
    pub(crate) async fn pause_log_stream(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: LogStreamParams,
    ) -> Result<LogStream, ServiceError> {
        self.set_paused(caller, context, OperationKind::PauseLogStream, params, true).await
    }

    /// Resumes a paused or suspended log stream from the position it holds.
    pub(crate) async fn resume_log_stream(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: LogStreamParams,
    ) -> Result<LogStream, ServiceError> {
        self.set_paused(caller, context, OperationKind::ResumeLogStream, params, false).await
    }

    /// Replaces a log stream's signing secret with a new one, shown in this answer only; the
    /// one it replaces signs beside it for the overlap the body names (24 hours when none), so
    /// that the receiver can change secrets without refusing a batch.
    pub(crate) async fn rotate_log_stream_secret(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: RotateSecretParams,
    ) -> Result<LogStream, ServiceError> {
        let kind = OperationKind::RotateLogStreamSecret;
        let mut problems = vec![];
        let stream =
            self.stream_of(caller, context, kind, &params.stream_id, params.problems).await?;
        let overlap = params.body.and_then(|b| crate::log_stream::overlap_body(&b, &mut problems));
        let (Some(overlap), true) = (overlap, problems.is_empty()) else {
            return Err(ServiceError::validation(problems));
        };
        if !matches!(
            crate::log_stream::destination(&stream),
            Some(LogStreamDestination::Https { .. })
        ) {
            let why = "Only an https stream signs its batches: this one has no secret to rotate.";
            return Err(refused(("destination.type", why.to_owned())));
        }
        let secret = SigningSecret::generate();
        let now = Timestamp::now();
        let until = now.checked_add_duration(std::time::Duration::from_secs(overlap));
        let until = until.unwrap_or(now);
        let secrets = serde_json::json!({
            "signing": secret.reveal(),
            "previous": stream.secrets["signing"],
            "previous_until": until,
        });
        let changed = StreamRecord { secrets, updated_at: now, ..stream };
        let filters = serde_json::json!({
            "stream_id": LogStreamId::from_uuid(changed.id),
            "overlap_seconds": overlap,
            "previous_until": until,
        });
        let record = audit_record(caller, context, kind, filters, None);
        self.store.update_stream(&changed, false, &record).await.map_err(not_found)?;
        let mut shown = self.shown(&changed).await?;
        shown.signing_secret = Some(secret.reveal());
        Ok(shown)
    }

    /// Removes a log stream; its destination receives nothing more.
    pub(crate) async fn delete_log_stream(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: LogStreamParams,
    ) -> Result<(), ServiceError> {
        let kind = OperationKind::DeleteLogStream;
        let stream =
            self.stream_of(caller, context, kind, &params.stream_id, params.problems).await?;
        let filters = serde_json::json!({"stream_id": LogStreamId::from_uuid(stream.id)});
        let record = audit_record(caller, context, kind, filters, None);
        let organization = caller.token.organization_id;
        self.store.delete_stream(organization, stream.id, &record).await.map_err(not_found)
    }

    async fn set_paused(
        &self,
        caller: &Caller,
        context: &RequestContext,
        kind: OperationKind,
        params: LogStreamParams,
        paused: bool,
    ) -> Result<LogStream, ServiceError> {
        let stream =
            self.stream_of(caller, context, kind, &params.stream_id, params.problems).await?;
        let changed = StreamRecord { paused, updated_at: Timestamp::now(), ..stream };
        let filters = serde_json::json!({"stream_id": LogStreamId::from_uuid(changed.id)});
        let record = audit_record(caller, context, kind, filters, None);
        self.store.update_stream(&changed, !paused, &record).await.map_err(not_found)?;
        let stream = self.store.stream(changed.organization_id, changed.id).await;
        self.shown(&stream.map_err(not_found)?).await
    }

    /// The stream of the caller's organization that `raw` names.
    async fn stream_of(
        &self,
        caller: &Caller,
        context: &RequestContext,
        kind: OperationKind,
        raw: &str,
        mut problems: Vec<ErrorDetail>,
    ) -> Result<StreamRecord, ServiceError> {
        let name = context.via.name(kind, "stream_id");
        let id = match parse_id::<LogStreamId>(raw, name, &mut problems) {
            Some(id) if problems.is_empty() => id,
            _ => return Err(ServiceError::validation(problems)),
        };
        let stream = self.store.stream(caller.token.organization_id, id.uuid()).await;
        stream.map_err(not_found)
    }

    /// `stream` as shown, with the lag behind its chain's head now.
    async fn shown(&self, stream: &StreamRecord) -> Result<LogStream, ServiceError> {
        let head = self.streamed_head(stream.organization_id).await?.0;
        Ok(crate::log_stream::shown(stream, head))
    }

    /// The last position and hash of `organization`'s chain of the streamed ledger.
    async fn streamed_head(
        &self,
        organization: OrganizationId,
    ) -> Result<(u64, [u8; 32]), ServiceError> {
        let heads = self.store.chain_heads(Some(organization)).await?;
        let head = heads.into_iter().find(|h| h.ledger == Ledger::Privacy.as_str());
        Ok(head.map_or((0, GENESIS), |h| {
            let hash = <[u8; 32]>::try_from(h.hash.as_slice()).unwrap_or(GENESIS);
            (u64::try_from(h.position).unwrap_or_default(), hash)
        }))
    }

    /// Where a new stream starts: after the chain's head (from now) or after `after`, which
    /// must be a stored position of the chain (or 0, its start).
    async fn start(
        &self,
        organization: OrganizationId,
        after: Option<u64>,
    ) -> Result<(u64, [u8; 32]), ServiceError> {
        let head = self.streamed_head(organization).await?;
        let refused =
            |why: String| ServiceError::validation(vec![ErrorDetail::field("after_position", why)]);
        match after {
            None => Ok(head),
            Some(0) => Ok((0, GENESIS)),
            Some(p) if p > head.0 => {
                Err(refused(format!("The ledger's last position is {}.", head.0)))
            }
            Some(p) if p == head.0 => Ok(head),
            Some(p) => {
                let next = self.store.chain_after(Ledger::Privacy, organization, p - 1, 1).await?;
                match next.first() {
                    Some(e) if e.entry.position == i64::try_from(p).ok() => {
                        let hash = e.entry.hash.as_deref().and_then(|h| h.try_into().ok());
                        Ok((p, hash.unwrap_or(GENESIS)))
                    }
                    _ => Err(refused(format!(
                        "The entry at position {p} is no longer stored (retention)."
                    ))),
                }
            }
        }
    }

    /// Where a new stream that starts at a time starts: after the last entry recorded before
    /// `at`, which must not be in the future.
    async fn start_at(
        &self,
        organization: OrganizationId,
        at: Timestamp,
    ) -> Result<(u64, [u8; 32]), ServiceError> {
        if at > Timestamp::now() {
            let why = "A stream starts at a time in the past; leave it out to start from now.";
            return Err(ServiceError::validation(vec![ErrorDetail::field("after_time", why)]));
        }
        match self.store.chain_start_at(Ledger::Privacy, organization, at).await? {
            Some((position, hash)) => Ok((position, hash.try_into().unwrap_or(GENESIS))),
            None => self.streamed_head(organization).await,
        }
    }

    /// Checks that the server may send requests at all, and to the destination's host.
    async fn admitted(&self, settings: &LogStreamSettings) -> Result<(), ServiceError> {
        let problems = crate::log_stream::problems(settings);
        if !problems.is_empty() {
            let details = problems.into_iter().map(|(f, why)| ErrorDetail::field(f, why));
            return Err(ServiceError::validation(details.collect()));
        }
        let fetch = self.sends_requests()?;
        let Some(host) = crate::log_stream::host(&settings.destination) else {
            return Ok(());
        };
        let field = match settings.destination {
            LogStreamDestination::Https { .. } => "destination.url",
            _ => "destination.host",
        };
        let admitted = fetch.0.admits(&host).await;
        admitted.map_err(|e| ServiceError::validation(vec![ErrorDetail::field(field, e.0)]))
    }
}

impl Service {
    /// What sends the server's own requests; NOT_IMPLEMENTED when it sends none, so that no
    /// stream is made that nothing would deliver.
    fn sends_requests(&self) -> Result<&crate::outbound::Fetcher, ServiceError> {
        self.config.outbound.as_ref().ok_or_else(|| {
            ServiceError::new(
                recruit_domain::ErrorCode::NotImplemented,
                "This server sends no requests of its own, so it cannot deliver log streams.",
            )
        })
    }
}

/// A setting refused: the field and why.
fn refused((field, why): (&'static str, String)) -> ServiceError {
    ServiceError::validation(vec![ErrorDetail::field(field, why)])
}

fn not_found(e: StoreError) -> ServiceError {
    match e {
        StoreError::NotFound => ServiceError::not_found("log stream"),
        e => e.into(),
    }
}
