//! The reference `bench/run.py lean` measures recruitd against: the server a small team would
//! write by hand for three of recruitd's reads, with nothing else. It answers, with the same
//! bodies as recruitd:
//!
//! - `GET /v1/jobs/{id}`: the token's look-up, then the job in one statement;
//! - `GET /v1/organization`: the token's look-up, then the organization in one statement;
//! - `GET /v1/audit-logs/privacy?timestamp_gte=…&timestamp_lt=…&limit=…`: one transaction per
//!   read (the token's look-up, `BEGIN`, the page, the `INSERT` of the read's record in the API
//!   audit ledger, `COMMIT`), so a read is answered only once it is recorded.
//!
//! It is hyper 1 on one multi-threaded tokio runtime, and tokio-postgres with every statement
//! prepared once per connection, on a pool of `--pool` connections. No routing framework,
//! logging, metrics, limits, caches, request ids or timeouts; no chain on the records. Rows
//! decode into `recruit-ports`' neutral rows (the columns are the ones `stored_rows!`
//! declares) and become the domain's resources by the same translations recruitd uses, so the
//! bytes are recruitd's by construction.
//!
//! It must not depend on `recruit-service` or any store adapter: it stands for code written
//! without them.
//!
//! ```text
//! lean DATABASE_URL LISTEN_ADDRESS APP_BASE_URL POOL_SIZE
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use deadpool::managed::{self, Metrics, RecycleError, RecycleResult};
use hmac::{Hmac, Mac as _};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use recruit_domain::model::{Page, Pagination, PrivacyAuditLog};
use recruit_domain::{JobId, Timestamp, Uuid};
use recruit_ports::rows::{
    JobRow, JobStageRow, LedgerRow, OrganizationRow, ResolvedSettingsRow, SchedulingDefaultsRow,
    WorkHoursRow, job_record,
};
use sha2::{Digest as _, Sha256};
use tokio_postgres::{Client, NoTls, Row, Statement};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// A column of a neutral row, read from a tokio-postgres row.
trait Column: Sized {
    fn get(row: &Row, at: usize) -> Result<Self, Error>;
}

macro_rules! columns_as_is {
    ($($t:ty),* $(,)?) => {$(
        impl Column for $t {
            fn get(row: &Row, at: usize) -> Result<Self, Error> {
                Ok(row.try_get(at)?)
            }
        }
    )*};
}

columns_as_is!(
    Uuid,
    String,
    bool,
    i32,
    i64,
    Vec<String>,
    Vec<u8>,
    serde_json::Value,
    Option<Uuid>,
    Option<String>,
    Option<i32>,
    Option<i64>,
    Option<Vec<Uuid>>,
    Option<Vec<String>>,
    Option<Vec<u8>>,
    Option<serde_json::Value>,
);

impl Column for Timestamp {
    fn get(row: &Row, at: usize) -> Result<Self, Error> {
        Ok(Timestamp::from_datetime(row.try_get::<_, DateTime<Utc>>(at)?)?)
    }
}

impl Column for Option<Timestamp> {
    fn get(row: &Row, at: usize) -> Result<Self, Error> {
        let t: Option<DateTime<Utc>> = row.try_get(at)?;
        Ok(t.map(Timestamp::from_datetime).transpose()?)
    }
}

/// A neutral row read from consecutive columns of a result row.
trait Decode: Sized {
    /// The table's columns, in order.
    const COLUMNS: &'static [&'static str];
    /// The row from the columns starting at `*at`, moving `*at` past them.
    fn decode(row: &Row, at: &mut usize) -> Result<Self, Error>;
}

macro_rules! decoders {
    ($($(#[$doc:meta])* $row:ident in $table:ident { $($field:ident: $ty:ty),* $(,)? })*) => {$(
        impl Decode for recruit_ports::rows::$row {
            const COLUMNS: &'static [&'static str] = &[$(stringify!($field)),*];

            fn decode(row: &Row, at: &mut usize) -> Result<Self, Error> {
                Ok(Self {$($field: {
                    let value = <$ty as Column>::get(row, *at)?;
                    *at += 1;
                    value
                },)*})
            }
        }
    )*};
}

recruit_ports::stored_rows!(decoders);

/// `alias.column, …` of `R`'s columns.
fn select<R: Decode>(alias: &str) -> String {
    R::COLUMNS.iter().map(|c| format!("{alias}.{c}")).collect::<Vec<_>>().join(", ")
}

/// A connection with its prepared statements.
struct Connection {
    client: Client,
    token: Statement,
    job: Statement,
    organization: Statement,
    page: Statement,
    record: Statement,
}

struct Manager {
    url: String,
}

impl managed::Manager for Manager {
    type Type = Connection;
    type Error = Error;

    async fn create(&self) -> Result<Connection, Error> {
        let (client, connection) = tokio_postgres::connect(&self.url, NoTls).await?;
        tokio::spawn(connection);
        let token = client
            .prepare(
                "SELECT t.organization_id, t.id, t.user_id FROM api_tokens t \
                 JOIN users u ON u.organization_id = t.organization_id AND u.id = t.user_id \
                 WHERE t.secret_hash = $1 AND t.revoked_at IS NULL \
                 AND (t.expires_at IS NULL OR t.expires_at > now())",
            )
            .await?;
        let job = client
            .prepare(&format!(
                "SELECT {}, {}, \
                 ARRAY(SELECT t.role FROM job_hiring_team t WHERE t.organization_id = j.organization_id \
                   AND t.job_id = j.id ORDER BY t.position), \
                 ARRAY(SELECT t.user_id FROM job_hiring_team t WHERE t.organization_id = j.organization_id \
                   AND t.job_id = j.id ORDER BY t.position), \
                 ARRAY(SELECT u.name FROM job_hiring_team t JOIN users u \
                   ON u.organization_id = t.organization_id AND u.id = t.user_id \
                   WHERE t.organization_id = j.organization_id AND t.job_id = j.id ORDER BY t.position), \
                 ARRAY(SELECT s.position FROM job_stages s WHERE s.organization_id = j.organization_id \
                   AND s.job_id = j.id ORDER BY s.position), \
                 ARRAY(SELECT s.id FROM job_stages s WHERE s.organization_id = j.organization_id \
                   AND s.job_id = j.id ORDER BY s.position), \
                 ARRAY(SELECT s.name FROM job_stages s WHERE s.organization_id = j.organization_id \
                   AND s.job_id = j.id ORDER BY s.position) \
                 FROM jobs j JOIN job_resolved_settings r \
                   ON r.organization_id = j.organization_id AND r.job_id = j.id \
                 WHERE j.organization_id = $1 AND j.id = $2",
                select::<JobRow>("j"),
                select::<ResolvedSettingsRow>("r"),
            ))
            .await?;
        let organization = client
            .prepare(&format!(
                "SELECT {}, {}, \
                 ARRAY(SELECT w.position FROM organization_work_hours w WHERE w.organization_id = o.id \
                   ORDER BY w.position), \
                 ARRAY(SELECT w.day FROM organization_work_hours w WHERE w.organization_id = o.id \
                   ORDER BY w.position), \
                 ARRAY(SELECT w.start_time FROM organization_work_hours w WHERE w.organization_id = o.id \
                   ORDER BY w.position), \
                 ARRAY(SELECT w.end_time FROM organization_work_hours w WHERE w.organization_id = o.id \
                   ORDER BY w.position) \
                 FROM organizations o JOIN organization_scheduling_defaults d \
                   ON d.organization_id = o.id WHERE o.id = $1",
                select::<OrganizationRow>("o"),
                select::<SchedulingDefaultsRow>("d"),
            ))
            .await?;
        let page = client
            .prepare(&format!(
                "SELECT {} FROM privacy_audit_logs l WHERE l.organization_id = $1 \
                 AND l.access_time >= $2 AND l.access_time < $3 \
                 AND l.recorded_at >= $2 - make_interval(secs => 86700) \
                 ORDER BY l.access_time DESC, l.id DESC LIMIT $4",
                select::<LedgerRow>("l"),
            ))
            .await?;
        let record = client
            .prepare(
                "INSERT INTO api_audit_log (organization_id, id, at, token_id, user_id, operation, \
                 request_id, client_ip, filters, entries_returned, interface) \
                 VALUES ($1, $2, now(), $3, $4, 'listPrivacyAuditLogs', $5, $6, $7, $8, 'REST')",
            )
            .await?;
        Ok(Connection { client, token, job, organization, page, record })
    }

    async fn recycle(&self, c: &mut Connection, _: &Metrics) -> RecycleResult<Error> {
        if c.client.is_closed() { Err(RecycleError::message("closed")) } else { Ok(()) }
    }
}

struct State {
    pool: managed::Pool<Manager>,
    app_base_url: String,
    cursor_secret: Vec<u8>,
}

/// The caller a token names.
struct Caller {
    organization: Uuid,
    token: Uuid,
    user: Uuid,
}

fn json(status: StatusCode, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, "application/json".parse().expect("a header value"));
    response
}

fn status(status: StatusCode) -> Response<Full<Bytes>> {
    json(status, br#"{"error":{}}"#.to_vec())
}

async fn caller(c: &Connection, request: &Request<Incoming>) -> Result<Option<Caller>, Error> {
    let Some(secret) = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return Ok(None);
    };
    let digest = Sha256::digest(secret.as_bytes()).to_vec();
    let row = c.client.query_opt(&c.token, &[&digest]).await?;
    Ok(row.map(|r| Caller { organization: r.get(0), token: r.get(1), user: r.get(2) }))
}

async fn handle(state: Arc<State>, request: Request<Incoming>) -> Response<Full<Bytes>> {
    match answer(&state, &request).await {
        Ok(response) => response,
        Err(_) => status(StatusCode::INTERNAL_SERVER_ERROR),
    }
}

async fn answer(
    state: &State,
    request: &Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Error> {
    let c: managed::Object<Manager> = state.pool.get().await.map_err(|e| e.to_string())?;
    let Some(caller) = caller(&c, request).await? else {
        return Ok(status(StatusCode::UNAUTHORIZED));
    };
    let path = request.uri().path();
    let base = state.app_base_url.trim_end_matches('/');
    if let Some(id) = path.strip_prefix("/v1/jobs/") {
        let Ok(id) = id.parse::<JobId>() else {
            return Ok(status(StatusCode::BAD_REQUEST));
        };
        let Some(row) = c.client.query_opt(&c.job, &[&caller.organization, &id.uuid()]).await?
        else {
            return Ok(status(StatusCode::NOT_FOUND));
        };
        let mut at = 0;
        let job = JobRow::decode(&row, &mut at)?;
        let settings = ResolvedSettingsRow::decode(&row, &mut at)?;
        let (roles, users, names): (Vec<String>, Vec<Uuid>, Vec<String>) =
            (row.try_get(at)?, row.try_get(at + 1)?, row.try_get(at + 2)?);
        let (positions, ids, stage_names): (Vec<i32>, Vec<Uuid>, Vec<String>) =
            (row.try_get(at + 3)?, row.try_get(at + 4)?, row.try_get(at + 5)?);
        let team = roles.into_iter().zip(users).zip(names).map(|((r, u), n)| (r, u, n)).collect();
        let stages = positions
            .into_iter()
            .zip(ids)
            .zip(stage_names)
            .map(|((position, id), name)| JobStageRow {
                organization_id: job.organization_id,
                job_id: job.id,
                position,
                id,
                name,
            })
            .collect();
        let record = job_record(job, settings, team, stages)?;
        let app_url = format!("{base}/jobs/{}", record.id);
        return Ok(json(StatusCode::OK, serde_json::to_vec(&record.into_job(app_url))?));
    }
    if path == "/v1/organization" {
        let row = c.client.query_one(&c.organization, &[&caller.organization]).await?;
        let mut at = 0;
        let organization = OrganizationRow::decode(&row, &mut at)?;
        let defaults = SchedulingDefaultsRow::decode(&row, &mut at)?;
        let (positions, days, starts, ends): (Vec<i32>, Vec<String>, Vec<String>, Vec<String>) =
            (row.try_get(at)?, row.try_get(at + 1)?, row.try_get(at + 2)?, row.try_get(at + 3)?);
        let hours = positions
            .into_iter()
            .zip(days)
            .zip(starts.into_iter().zip(ends))
            .map(|((position, day), (start_time, end_time))| WorkHoursRow {
                organization_id: organization.id,
                position,
                day,
                start_time,
                end_time,
            })
            .collect();
        let record = organization.into_record(hours, defaults)?;
        let body = serde_json::to_vec(&record.into_organization(format!("{base}/organization")))?;
        return Ok(json(StatusCode::OK, body));
    }
    if path == "/v1/audit-logs/privacy" {
        return ledger_page(state, c, &caller, request.uri().query().unwrap_or("")).await;
    }
    Ok(status(StatusCode::NOT_FOUND))
}

/// A page of the privacy ledger, recorded in the API audit ledger in the same transaction.
async fn ledger_page(
    state: &State,
    mut c: managed::Object<Manager>,
    caller: &Caller,
    query: &str,
) -> Result<Response<Full<Bytes>>, Error> {
    let (mut gte, mut lt, mut limit) = (None, None, 25i64);
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("timestamp_gte", v)) => gte = v.parse::<Timestamp>().ok(),
            Some(("timestamp_lt", v)) => lt = v.parse::<Timestamp>().ok(),
            Some(("limit", v)) => limit = v.parse().unwrap_or(25),
            _ => {}
        }
    }
    let (Some(gte), Some(lt)) = (gte, lt) else {
        return Ok(status(StatusCode::BAD_REQUEST));
    };
    let c = &mut *c;
    let (page, record) = (c.page.clone(), c.record.clone());
    let transaction = c.client.transaction().await?;
    let (from, to) = (gte.as_datetime(), lt.as_datetime());
    let rows = transaction.query(&page, &[&caller.organization, &from, &to, &(limit + 1)]).await?;
    let more = rows.len() as i64 > limit;
    let entries = rows
        .iter()
        .take(limit as usize)
        .map(|row| LedgerRow::decode(row, &mut 0)?.into_entry().map_err(Error::from))
        .collect::<Result<Vec<PrivacyAuditLog>, Error>>()?;
    let filters = serde_json::json!({"timestamp_gte": gte, "timestamp_lt": lt, "limit": limit});
    let returned = entries.len() as i32;
    let request_id = Uuid::now_v7().simple().to_string();
    let client_ip: Option<String> = None;
    transaction
        .execute(
            &record,
            &[
                &caller.organization,
                &Uuid::now_v7(),
                &caller.token,
                &caller.user,
                &request_id,
                &client_ip,
                &filters,
                &returned,
            ],
        )
        .await?;
    transaction.commit().await?;
    let next_cursor = match entries.last() {
        Some(last) if more => Some(cursor(state, caller.organization, gte, lt, last)),
        _ => None,
    };
    let body = serde_json::to_vec(&Page { data: entries, pagination: Pagination { next_cursor } })?;
    Ok(json(StatusCode::OK, body))
}

/// The cursor after `last`, in recruitd's layout (version, organization, the filters'
/// fingerprint, the position, a truncated HMAC-SHA256), so that the bytes are the same.
fn cursor(
    state: &State,
    organization: Uuid,
    gte: Timestamp,
    lt: Timestamp,
    last: &PrivacyAuditLog,
) -> String {
    let mut fingerprint = Sha256::new();
    fingerprint.update(gte.unix_micros().to_be_bytes());
    fingerprint.update(lt.unix_micros().to_be_bytes());
    fingerprint.update([0]);
    let mut bytes = vec![1];
    bytes.extend_from_slice(organization.as_bytes());
    bytes.extend_from_slice(&fingerprint.finalize()[..16]);
    bytes.extend_from_slice(&last.access_time.unix_micros().to_be_bytes());
    bytes.extend_from_slice(last.id.uuid().as_bytes());
    let mut mac = <Hmac<Sha256> as hmac::KeyInit>::new_from_slice(&state.cursor_secret)
        .expect("HMAC takes keys of any length");
    mac.update(&bytes);
    bytes.extend_from_slice(&mac.finalize().into_bytes()[..16]);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, listen, app_base_url, pool_size] = &args[..] else {
        return Err("usage: lean DATABASE_URL LISTEN_ADDRESS APP_BASE_URL POOL_SIZE".into());
    };
    let pool = managed::Pool::builder(Manager { url: url.clone() })
        .max_size(pool_size.parse()?)
        .build()?;
    // recruitd keeps the secret its cursors are signed with in the database.
    let cursor_secret = {
        let c: managed::Object<Manager> = pool.get().await.map_err(|e| e.to_string())?;
        let row = c.client.query_one("SELECT value FROM server_secrets WHERE name = 'cursor'", &[]);
        row.await?.try_get::<_, Vec<u8>>(0)?
    };
    let state = Arc::new(State { pool, app_base_url: app_base_url.clone(), cursor_secret });
    let listener = tokio::net::TcpListener::bind(listen.parse::<SocketAddr>()?).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(handle(state, request).await) }
            });
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(served);
        });
    }
}
