//! The entries page (a month's ledger entries, filtered and paged on the server, every filter
//! in the URL so that a bookmark is a saved view, a click on a value filtering by it), its
//! CSV and NDJSON exports, and the integrity page. Each runs the service's operations as the
//! signed-in reviewer: the list and the export are recorded as the REST API records them.

use std::collections::HashMap;

use askama::Template;
use http::{Response, StatusCode};
use recruit_domain::PrivacyAuditLog;
use recruit_domain::model::DataSubject;
use recruit_service::{OperationKind, Outcome, ServiceError};

use crate::lang::{Lang, Locale};
use crate::pages::{ChainView, Page, PageMonth, Problem};
use crate::route::Route;
use crate::{Answer, Console, ConsoleRequest, ConsoleResponse, Failure, html, server_side};

/// How many entries match, in words: the count, or that there are more than the most a count
/// counts.
fn matching(lang: Lang, count: recruit_service::Matching) -> String {
    match count {
        recruit_service::Matching::Exactly(n) => {
            lang.ta("entries-matching", &[("count", n.into())])
        }
        recruit_service::Matching::More => {
            lang.ta("entries-matching-more", &[("count", recruit_service::COUNTED_AT_MOST.into())])
        }
    }
}

/// The filters of the entries page, as the list operation names them, in the order of the
/// form.
pub(crate) const FILTERS: [(&str, &str); 6] = [
    ("account_id", "filter-account"),
    ("activity_category", "filter-category"),
    ("access_menu", "filter-menu"),
    ("data_subject_id", "filter-subject"),
    ("ip_address", "filter-ip"),
    ("outside_work_hours", "filter-work-hours"),
];

/// The categories the form offers.
const CATEGORIES: [&str; 9] = [
    "CREATE",
    "READ",
    "UPDATE",
    "DELETE",
    "BULK_CREATE",
    "BULK_READ",
    "BULK_UPDATE",
    "BULK_DELETE",
    "DOWNLOAD",
];

/// How many entries a page shows.
const PAGE_SIZE: &str = "50";

/// The filters given in a query: the non-empty values of [`FILTERS`], in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Filters(Vec<(&'static str, String)>);

impl Filters {
    pub(crate) fn from_query(query: &HashMap<String, String>) -> Self {
        Self(
            FILTERS
                .iter()
                .filter_map(|(name, _)| {
                    let value = query.get(*name).map(|v| v.trim()).filter(|v| !v.is_empty())?;
                    Some((*name, value.to_owned()))
                })
                .collect(),
        )
    }

    /// The value of the filter `name`, or nothing.
    pub(crate) fn get(&self, name: &str) -> &str {
        self.0.iter().find(|(n, _)| *n == name).map_or("", |(_, v)| v.as_str())
    }

    /// A link to `path` of `month` with these filters, `name` set to `value` when given, and
    /// `extra` pairs after them.
    pub(crate) fn link(
        &self,
        path: &str,
        month: &PageMonth,
        set: Option<(&str, &str)>,
        extra: &[(&str, &str)],
    ) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        query.append_pair("month", &month.to_string());
        let mut seen = false;
        for (name, value) in &self.0 {
            match set {
                Some((n, v)) if n == *name => {
                    query.append_pair(name, v);
                    seen = true;
                }
                _ => {
                    query.append_pair(name, value);
                }
            }
        }
        if let (Some((n, v)), false) = (set, seen) {
            query.append_pair(n, v);
        }
        for (name, value) in extra {
            query.append_pair(name, value);
        }
        format!("{path}?{}", query.finish())
    }
}

/// A value of an entry that filters by itself when clicked.
pub(crate) struct Linked {
    pub(crate) text: String,
    pub(crate) href: Option<String>,
}

/// An entry as the entries page lists it.
pub(crate) struct EntryRow {
    pub(crate) id: String,
    pub(crate) at: String,
    pub(crate) account: Linked,
    pub(crate) subject: Linked,
    pub(crate) category: Linked,
    pub(crate) menu: Linked,
    pub(crate) path: String,
    pub(crate) ips: Vec<Linked>,
    pub(crate) data: String,
}

/// A month's entries, filtered and paged.
#[derive(Template)]
#[template(path = "entries.html")]
pub(crate) struct Entries {
    pub(crate) page: Page,
    pub(crate) time_zone: String,
    pub(crate) filters: Filters,
    pub(crate) rows: Vec<EntryRow>,
    /// How many entries match, in words.
    pub(crate) matching: Option<String>,
    pub(crate) next: Option<String>,
    pub(crate) first: Option<String>,
    /// The page before, when this one is not the first.
    pub(crate) previous: Option<String>,
    /// This page's number, from 1.
    pub(crate) number: usize,
    pub(crate) csv: String,
    pub(crate) ndjson: String,
    pub(crate) problem: Option<Problem>,
    pub(crate) l: Locale,
}

impl Entries {
    pub(crate) fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &FILTERS[..5]
    }

    pub(crate) fn categories(&self) -> &'static [&'static str] {
        &CATEGORIES
    }

    pub(crate) fn clear(&self) -> String {
        Filters::default().link(Route::Entries.path(), &self.page.month, None, &[])
    }
}

/// The integrity of a month's part of the chain.
#[derive(Template)]
#[template(path = "integrity.html")]
pub(crate) struct Integrity {
    pub(crate) page: Page,
    pub(crate) chain: ChainView,
    pub(crate) key: Option<String>,
    pub(crate) l: Locale,
}

impl Console {
    /// `GET /console/entries`: a page of the month's entries under the query's filters.
    pub(crate) async fn entries(
        &self,
        r: &ConsoleRequest<'_>,
        query: &HashMap<String, String>,
    ) -> Answer {
        let session = self.session(r).await?;
        let Filtered { month, running, time_zone, filters, mut pairs } =
            self.filtered(&session, query).await?;
        let counted = pairs.clone();
        pairs.push(("limit".into(), PAGE_SIZE.into()));
        let cursor = query.get("cursor").filter(|c| !c.is_empty());
        if let Some(cursor) = cursor {
            pairs.push(("cursor".into(), cursor.clone()));
        }
        let kind = OperationKind::ListPrivacyAuditLogs;
        let page = Page::new(&session, month, running, crate::locale(r));
        let lang = page.l.lang;
        let link =
            |set, extra: &[(&str, &str)]| filters.link(Route::Entries.path(), &month, set, extra);
        let export =
            |format| filters.link(Route::EntriesExport.path(), &month, None, &[("format", format)]);
        // The cursors of the pages before this one, first page first (that one as ""), so
        // that a page links back as well as on: `back` holds them joined by `~`, which no
        // cursor has.
        let back: Vec<&str> = query
            .get("back")
            .filter(|_| cursor.is_some())
            .map_or(vec![], |b| b.split('~').collect());
        let mut trail = back.clone();
        trail.push(cursor.map_or("", String::as_str));
        let trail = trail.join("~");
        let previous = back.split_last().map(|(before, rest)| {
            let rest = rest.join("~");
            match *before {
                "" => link(None, &[]),
                c => link(None, &[("cursor", c), ("back", &rest)]),
            }
        });
        let number = if cursor.is_some() { back.len().max(1) + 1 } else { 1 };
        let (rows, next, problem, status) = match self.run_query(r, &session, kind, pairs).await {
            Ok(Outcome::PrivacyAuditLogs(found)) => {
                let next = found
                    .pagination
                    .next_cursor
                    .as_deref()
                    .map(|c| link(None, &[("cursor", c), ("back", &trail)]));
                let rows =
                    found.data.iter().map(|e| row(lang, e, &time_zone, &filters, &month)).collect();
                (rows, next, None, StatusCode::OK)
            }
            Ok(_) => return Err(Failure::Service(ServiceError::internal())),
            Err(e) if server_side(&e) => return Err(e.into()),
            Err(e) => (vec![], None, Some(Problem::of(lang, &e, None)), crate::status_of(e.code)),
        };
        let first = cursor.map(|_| link(None, &[]));
        // How many match, once the list found some: with the list's own filters, so a count
        // that fails (the same problems) says nothing of its own.
        let matching = match rows.is_empty() {
            true => None,
            false => {
                let mut arguments = recruit_service::Arguments::rest(kind);
                arguments.query(counted);
                match recruit_service::Operation::parse(kind, arguments)? {
                    recruit_service::Operation::ListPrivacyAuditLogs(params) => {
                        let count =
                            self.service.count_privacy_audit_logs(&session.caller, params).await?;
                        Some(matching(lang, count))
                    }
                    _ => None,
                }
            }
        };
        let page = Entries {
            matching,
            time_zone,
            rows,
            next,
            first,
            previous,
            number,
            csv: export("csv"),
            ndjson: export("ndjson"),
            problem,
            filters: filters.clone(),
            l: page.l.clone(),
            page,
        };
        Ok(html(status, &page).into())
    }

    /// `GET /console/entries/export`: the month's entries under the query's filters as a
    /// download, recorded as the API's export is.
    pub(crate) async fn export(
        &self,
        r: &ConsoleRequest<'_>,
        query: &HashMap<String, String>,
    ) -> Answer {
        let session = self.session(r).await?;
        let mut pairs = self.filtered(&session, query).await?.pairs;
        let format = query.get("format").cloned().unwrap_or_else(|| "csv".into());
        pairs.push(("format".into(), format));
        let kind = OperationKind::ExportPrivacyAuditLogs;
        match self.run_query(r, &session, kind, pairs).await? {
            Outcome::Download(download) => {
                use http::header::{self, HeaderValue};
                let mut response = Response::new(Vec::new());
                let headers = response.headers_mut();
                headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(download.media_type));
                headers.insert("recruitd-export-count", HeaderValue::from(download.count));
                // It holds personal data: never kept by a cache.
                headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
                if let Ok(value) = HeaderValue::from_str(&download.content_disposition()) {
                    headers.insert(header::CONTENT_DISPOSITION, value);
                }
                Ok(ConsoleResponse { response, download: Some(download) })
            }
            _ => Err(Failure::Service(ServiceError::internal())),
        }
    }

    /// The month and the filters of `query`, and the parameters of an operation that lists
    /// them: the month's window in the organization's time zone, then the filters.
    async fn filtered(
        &self,
        session: &recruit_service::console::ConsoleCaller,
        query: &HashMap<String, String>,
    ) -> Result<Filtered, Failure> {
        let running = self.service.running_month(&session.caller).await?;
        let month = PageMonth::from_query(query, running)?;
        let (from, to, time_zone) =
            self.service.month_window(&session.caller, &month.to_string()).await?;
        let filters = Filters::from_query(query);
        let mut pairs: Vec<(String, String)> = vec![
            ("timestamp_gte".into(), from.to_string()),
            ("timestamp_lt".into(), to.to_string()),
        ];
        pairs.extend(filters.0.iter().map(|(n, v)| ((*n).to_owned(), v.clone())));
        Ok(Filtered { month, running, time_zone, filters, pairs })
    }

    /// `GET /console/integrity`: the month's part of the chain, verified now.
    pub(crate) async fn integrity(
        &self,
        r: &ConsoleRequest<'_>,
        query: &HashMap<String, String>,
    ) -> Answer {
        let session = self.session(r).await?;
        let page = self.page(r, &session, query).await?;
        let month = page.month;
        let integrity = self.service.month_integrity(&session.caller, &month.to_string()).await?;
        let (_, _, zone) = self.service.month_window(&session.caller, &month.to_string()).await?;
        let lang = page.l.lang;
        let chain =
            ChainView::of(lang, &integrity.verification, integrity.checkpoint.as_ref(), &zone);
        let key = integrity.checkpoint.as_ref().map(|c| c.key_id.clone());
        let page = Integrity { l: page.l.clone(), page, chain, key };
        Ok(html(StatusCode::OK, &page).into())
    }
}

/// A month under filters ([`Console::filtered`]).
struct Filtered {
    month: PageMonth,
    /// The organization's month now.
    running: recruit_domain::Month,
    time_zone: String,
    filters: Filters,
    pairs: Vec<(String, String)>,
}

/// An entry as a row, each value a link that filters by it.
fn row(
    lang: Lang,
    e: &PrivacyAuditLog,
    time_zone: &str,
    filters: &Filters,
    month: &PageMonth,
) -> EntryRow {
    let by = |name: &str, value: &str| Linked {
        text: value.to_owned(),
        href: Some(filters.link(Route::Entries.path(), month, Some((name, value)), &[])),
    };
    let account = e.account_id.to_string();
    let subject = match &e.data_subject {
        DataSubject::Employee { user } => by("data_subject_id", &user.to_string()),
        DataSubject::Candidate { candidate } => by("data_subject_id", &candidate.to_string()),
        DataSubject::Bulk { bulk_count, .. } => Linked {
            text: match bulk_count {
                Some(n) => lang.ta("subject-bulk", &[("count", (*n).into())]),
                None => lang.t("subject-bulk-unknown"),
            },
            href: None,
        },
    };
    EntryRow {
        id: e.id.to_string(),
        at: lang.time(time_zone, e.access_time),
        account: by("account_id", &account),
        subject,
        category: by("activity_category", e.activity_category.as_str()),
        menu: by("access_menu", &e.access_menu),
        path: e.access_menu_path.clone(),
        ips: e.ip_addresses.iter().map(|ip| by("ip_address", ip)).collect(),
        data: e.access_data.iter().map(|d| d.as_str()).collect::<Vec<_>>().join(", "),
    }
}
