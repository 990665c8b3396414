//! The log streams page: the organization's streams (its ledger delivered to its SIEM) with
//! how each delivers, and the forms by which an owner pauses and resumes one. Streams are made
//! and changed through the API or `recruitd log-stream`: their destinations hold secrets a
//! page should not carry.

use std::collections::HashMap;

use askama::Template;
use http::StatusCode;
use recruit_domain::model::{LogStream, LogStreamState};
use recruit_service::console::ConsoleCaller;
use recruit_service::{OperationKind, Outcome};

use crate::lang::{Lang, Locale};
use crate::pages::{Page, Problem};
use crate::route::Route;
use crate::{Answer, Console, ConsoleRequest, Failure, html, locale, query_pairs, redirect};

/// A stream as the page lists it.
pub(crate) struct StreamRow {
    pub(crate) id: String,
    pub(crate) name: String,
    /// Where it delivers: its kind and its address.
    pub(crate) destination: String,
    /// Its state, in the page's language.
    pub(crate) state: String,
    /// Its state as the API names it.
    pub(crate) code: &'static str,
    /// The position delivered up to, and when.
    pub(crate) delivered: String,
    /// How many entries it is behind.
    pub(crate) lag: String,
    /// Since when it fails, and the last failure.
    pub(crate) error: Option<String>,
    /// The form's action: `resume` for a paused or suspended stream, else `pause`.
    pub(crate) action: &'static str,
}

impl StreamRow {
    fn of(lang: Lang, zone: &str, s: &LogStream) -> Self {
        let (kind, address) = s.destination.endpoint();
        let destination = format!("{kind} · {address}");
        let code = match s.state {
            LogStreamState::Active => "ACTIVE",
            LogStreamState::Paused => "PAUSED",
            LogStreamState::Failing => "FAILING",
            LogStreamState::Suspended => "SUSPENDED",
            _ => "other",
        };
        let position = lang.number(s.delivered_position);
        let delivered = match s.delivered_at {
            Some(at) => lang.ta(
                "streams-delivered-at",
                &[("position", position.into()), ("at", lang.time(zone, at).into())],
            ),
            None => lang.ta("streams-delivered-none", &[("position", position.into())]),
        };
        let error = s.last_error.as_ref().map(|e| {
            let since = s.failing_since.unwrap_or(e.at);
            let status = e.status.map(|s| format!("HTTP {s}: ")).unwrap_or_default();
            let since = lang.ta("streams-failing-since", &[("at", lang.time(zone, since).into())]);
            format!("{since} {status}{}", e.message)
        });
        let action = if s.state.is_stopped() { "resume" } else { "pause" };
        Self {
            id: s.id.to_string(),
            name: s.name.clone(),
            destination,
            state: lang.t(&format!("streams-state-{code}")),
            code,
            delivered,
            lag: lang.ta("streams-lag", &[("count", lang.number(s.lag_entries).into())]),
            error,
            action,
        }
    }
}

/// The log streams page.
#[derive(Template)]
#[template(path = "streams.html")]
pub(crate) struct Streams {
    pub(crate) page: Page,
    pub(crate) rows: Vec<StreamRow>,
    /// Why the streams are not shown, or why a change was refused.
    pub(crate) problem: Option<Problem>,
    pub(crate) l: Locale,
}

impl Console {
    /// `GET /console/log-streams`.
    pub(crate) async fn streams(
        &self,
        r: &ConsoleRequest<'_>,
        query: &HashMap<String, String>,
    ) -> Answer {
        let session = self.session(r).await?;
        let page = self.page(r, &session, query).await?;
        self.streams_page(r, &session, page, None).await
    }

    /// `POST /console/log-streams`: a stream paused or resumed.
    pub(crate) async fn stream_form(&self, r: &ConsoleRequest<'_>) -> Answer {
        let session = self.session(r).await?;
        self.check_form(r, &session)?;
        let form = query_pairs(std::str::from_utf8(&r.body).ok());
        let page = self.page(r, &session, &form).await?;
        let kind = match form.get("action").map(String::as_str) {
            Some("pause") => OperationKind::PauseLogStream,
            Some("resume") => OperationKind::ResumeLogStream,
            _ => return Err(Failure::NOT_FOUND),
        };
        let stream = form.get("stream").cloned().unwrap_or_default();
        let path = [("streamId", stream.clone())];
        match self.run(r, &session, kind, &path, None).await {
            Ok(_) => {
                let back = format!("{}#{stream}", Route::Streams.month(page.month));
                Ok(redirect(&back).into())
            }
            Err(e) if crate::server_side(&e) => Err(e.into()),
            Err(e) => {
                let problem = Problem::of(locale(r).lang, &e, Some(stream));
                let status = crate::status_of(e.code);
                let mut answer = self.streams_page(r, &session, page, Some(problem)).await?;
                *answer.response.status_mut() = status;
                Ok(answer)
            }
        }
    }

    /// The page with the organization's streams as the session's owner reads them, or with
    /// why they cannot be read (a reviewer who is not an owner).
    async fn streams_page(
        &self,
        r: &ConsoleRequest<'_>,
        session: &ConsoleCaller,
        page: Page,
        problem: Option<Problem>,
    ) -> Answer {
        let lang = page.l.lang;
        let (rows, problem) =
            match self.run(r, session, OperationKind::ListLogStreams, &[], None).await {
                Ok(Outcome::LogStreams(list)) => {
                    let month = page.month.to_string();
                    let (_, _, zone) = self.service.month_window(&session.caller, &month).await?;
                    let rows = list.data.iter().map(|s| StreamRow::of(lang, &zone, s)).collect();
                    (rows, problem)
                }
                Ok(_) => return Err(recruit_service::ServiceError::internal().into()),
                Err(e) if crate::server_side(&e) => return Err(e.into()),
                Err(e) => (vec![], Some(Problem::of(lang, &e, None))),
            };
        let l = page.l.clone();
        Ok(html(StatusCode::OK, &Streams { page, rows, problem, l }).into())
    }
}
