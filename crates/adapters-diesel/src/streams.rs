//! `LogStreams` for both stores, over a store's [`Db`] in the caller's transaction: a stream
//! kept with the record of the request that changed it, and the leases by which one process at
//! a time delivers it. A lease is claimed by compare-and-set on the stream's epoch, and every
//! change to a delivery names the epoch it holds, so a process that lost its lease changes
//! nothing.

use recruit_domain::{OrganizationId, Timestamp, Uuid};
use recruit_ports::rows::LogStreamRow;
use recruit_ports::streams::{Failure, Lease, StreamRecord};
use recruit_ports::{ReadRecord, StoreError};

use crate::Insert;
use crate::db::Db;
use crate::filter::Value;
use crate::statement::Statement;

/// `LogStreams::create_stream`: the stream and its record.
pub async fn create<D: Db + Insert<LogStreamRow>>(
    c: &mut D,
    stream: &StreamRecord,
    record: &ReadRecord,
) -> Result<(), StoreError> {
    c.insert(vec![LogStreamRow::new(stream)]).await?;
    c.append_record(record.page(Vec::<()>::new(), 0)).await
}

/// `LogStreams::streams` (no `id`) and `LogStreams::stream`: the organization's streams,
/// oldest first.
pub async fn load<D: Db>(
    c: &mut D,
    organization: OrganizationId,
    id: Option<Uuid>,
) -> Result<Vec<StreamRecord>, StoreError> {
    let p = D::DIALECT.param;
    let mut sql = format!("SELECT * FROM log_streams WHERE organization_id = {}", p(1));
    let mut values = vec![Value::Uuid(organization.uuid())];
    if let Some(id) = id {
        sql.push_str(&format!(" AND id = {}", p(2)));
        values.push(Value::Uuid(id));
    }
    sql.push_str(" ORDER BY created_at, id");
    let rows: Vec<D::LogStreamRow> = c.load(Statement { sql, values }).await?;
    rows.into_iter().map(|r| crate::Row::into_neutral(r)?.into_stream()).collect()
}

/// `LogStreams::update_stream`: the settings, a suspended stream healthy again when
/// `resume`, and the record.
pub async fn update<D: Db>(
    c: &mut D,
    stream: &StreamRecord,
    resume: bool,
    record: &ReadRecord,
) -> Result<(), StoreError> {
    let d = D::DIALECT;
    let (p, (before, after)) = (d.param, d.json_param);
    let destination = stream.destination.to_string();
    let secrets = stream.secrets.to_string();
    let mut sql = format!(
        "UPDATE log_streams SET name = {}, destination = {before}{}{after}, \
         secrets = {before}{}{after}, paused = {}, updated_at = {}",
        p(1),
        p(2),
        p(3),
        p(4),
        p(5)
    );
    if resume {
        sql.push_str(
            ", attempts = CASE WHEN health = 'SUSPENDED' THEN 0 ELSE attempts END, \
             next_attempt_at = CASE WHEN health = 'SUSPENDED' THEN NULL ELSE next_attempt_at END, \
             health = CASE WHEN health = 'SUSPENDED' THEN 'OK' ELSE health END",
        );
    }
    sql.push_str(&format!(" WHERE organization_id = {} AND id = {}", p(6), p(7)));
    let values = vec![
        Value::Text(&stream.name),
        Value::Text(&destination),
        Value::Text(&secrets),
        Value::Bool(stream.paused),
        Value::Time(stream.updated_at),
        Value::Uuid(stream.organization_id.uuid()),
        Value::Uuid(stream.id),
    ];
    if c.execute(Statement { sql, values }).await? == 0 {
        return Err(StoreError::NotFound);
    }
    c.append_record(record.page(Vec::<()>::new(), 0)).await
}

/// `LogStreams::delete_stream`: the stream gone, and the record.
pub async fn delete<D: Db>(
    c: &mut D,
    organization: OrganizationId,
    id: Uuid,
    record: &ReadRecord,
) -> Result<(), StoreError> {
    let p = D::DIALECT.param;
    let sql = format!("DELETE FROM log_streams WHERE organization_id = {} AND id = {}", p(1), p(2));
    let values = vec![Value::Uuid(organization.uuid()), Value::Uuid(id)];
    if c.execute(Statement { sql, values }).await? == 0 {
        return Err(StoreError::NotFound);
    }
    c.append_record(record.page(Vec::<()>::new(), 0)).await
}

/// A stream a claim may take, as the claim's query reads it.
#[derive(Debug, diesel::QueryableByName)]
pub struct Claimable {
    /// The organization's id, as its 16 bytes.
    #[diesel(sql_type = diesel::sql_types::Binary)]
    organization_id: Vec<u8>,
    /// The stream's id, as its 16 bytes.
    #[diesel(sql_type = diesel::sql_types::Binary)]
    id: Vec<u8>,
    /// Its epoch when read: the claim takes it only if it is still the same.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    lease_epoch: i64,
}

/// `LogStreams::claim_streams`: each stream free to claim, taken if no other claim took it
/// since it was read.
pub async fn claim<D: Db>(
    c: &mut D,
    holder: Uuid,
    now: Timestamp,
    until: Timestamp,
    limit: u32,
) -> Result<Vec<Lease>, StoreError>
where
    Claimable: diesel::QueryableByName<D::Backend>,
{
    let d = D::DIALECT;
    let (p, (before, after)) = (d.param, d.id_bytes);
    let sql = format!(
        "SELECT {before}organization_id{after} AS organization_id, {before}id{after} AS id, \
         lease_epoch FROM log_streams \
         WHERE paused = {} AND health <> 'SUSPENDED' \
           AND (lease_expires_at IS NULL OR lease_expires_at < {}) \
         ORDER BY lease_expires_at, organization_id, id LIMIT {}",
        p(1),
        p(2),
        p(3)
    );
    let values = vec![Value::Bool(false), Value::Time(now), Value::Int(i64::from(limit))];
    let free: Vec<Claimable> = c.load(Statement { sql, values }).await?;
    let mut claimed = vec![];
    for stream in free {
        let (Ok(org), Ok(id)) =
            (Uuid::from_slice(&stream.organization_id), Uuid::from_slice(&stream.id))
        else {
            return Err(recruit_ports::rows::corrupt("a stream's id is not 16 bytes"));
        };
        let sql = format!(
            "UPDATE log_streams SET lease_holder = {}, lease_epoch = lease_epoch + 1, \
             lease_expires_at = {} \
             WHERE organization_id = {} AND id = {} AND lease_epoch = {}",
            p(1),
            p(2),
            p(3),
            p(4),
            p(5)
        );
        let values = vec![
            Value::Uuid(holder),
            Value::Time(until),
            Value::Uuid(org),
            Value::Uuid(id),
            Value::Int(stream.lease_epoch),
        ];
        if c.execute(Statement { sql, values }).await? == 1 {
            let epoch = u64::try_from(stream.lease_epoch + 1)
                .map_err(|_| recruit_ports::rows::corrupt("a stream's epoch is negative"))?;
            let organization_id = OrganizationId::from_uuid(org);
            claimed.push(Lease { organization_id, stream_id: id, holder, epoch });
        }
    }
    Ok(claimed)
}

/// Runs `set` (SQL assignments, its values numbered from 1) on the stream `lease` holds, if it
/// holds it (and, with `at`, if its delivery stands at that position): whether it did.
async fn under_lease<D: Db>(
    c: &mut D,
    lease: &Lease,
    set: &str,
    values: Vec<Value<'_>>,
) -> Result<bool, StoreError> {
    Ok(c.execute(leased::<D>(lease, set, values, None)?).await? == 1)
}

/// The `UPDATE` of [`under_lease`], of a stream whose delivery stands at `at` when given.
fn leased<'a, D: Db>(
    lease: &Lease,
    set: &str,
    mut values: Vec<Value<'a>>,
    at: Option<u64>,
) -> Result<Statement<'a>, StoreError> {
    let p = D::DIALECT.param;
    let n = values.len();
    let mut sql = format!(
        "UPDATE log_streams SET {set} WHERE organization_id = {} AND id = {} \
         AND lease_holder = {} AND lease_epoch = {}",
        p(n + 1),
        p(n + 2),
        p(n + 3),
        p(n + 4)
    );
    values.extend([
        Value::Uuid(lease.organization_id.uuid()),
        Value::Uuid(lease.stream_id),
        Value::Uuid(lease.holder),
        Value::Int(epoch(lease)?),
    ]);
    if let Some(position) = at {
        sql.push_str(&format!(" AND delivered_position = {}", p(n + 5)));
        values.push(Value::Int(i64::try_from(position).map_err(|_| out_of_range())?));
    }
    Ok(Statement { sql, values })
}

fn epoch(lease: &Lease) -> Result<i64, StoreError> {
    i64::try_from(lease.epoch).map_err(|_| out_of_range())
}

fn out_of_range() -> StoreError {
    recruit_ports::rows::corrupt("a position or epoch out of range")
}

/// `LogStreams::renew_lease`.
pub async fn renew<D: Db>(c: &mut D, lease: &Lease, until: Timestamp) -> Result<bool, StoreError> {
    let set = format!("lease_expires_at = {}", (D::DIALECT.param)(1));
    under_lease(c, lease, &set, vec![Value::Time(until)]).await
}

/// `LogStreams::release_lease`.
pub async fn release<D: Db>(c: &mut D, lease: &Lease, now: Timestamp) -> Result<(), StoreError> {
    let set = format!("lease_expires_at = {}", (D::DIALECT.param)(1));
    under_lease(c, lease, &set, vec![Value::Time(now)]).await.map(drop)
}

/// `LogStreams::advance_stream`.
pub async fn advance<D: Db>(
    c: &mut D,
    lease: &Lease,
    (from, to): (u64, u64),
    hash: &[u8; 32],
    at: Timestamp,
) -> Result<Option<StreamRecord>, StoreError> {
    let p = D::DIALECT.param;
    let set = format!(
        "delivered_position = {}, delivered_hash = {}, delivered_at = {}, health = 'OK', \
         failing_since = NULL, attempts = 0, next_attempt_at = NULL, last_error = NULL, \
         pending = NULL",
        p(1),
        p(2),
        p(3)
    );
    let to = i64::try_from(to).map_err(|_| out_of_range())?;
    let values = vec![Value::Int(to), Value::Bytes(hash), Value::Time(at)];
    let mut statement = leased::<D>(lease, &set, values, Some(from))?;
    statement.sql.push_str(" RETURNING *");
    let rows: Vec<D::LogStreamRow> = c.load(statement).await?;
    rows.into_iter().next().map(|r| crate::Row::into_neutral(r)?.into_stream()).transpose()
}

/// `LogStreams::stream_failed`.
pub async fn failed<D: Db>(c: &mut D, lease: &Lease, f: &Failure) -> Result<bool, StoreError> {
    let d = D::DIALECT;
    let (p, (before, after)) = (d.param, d.json_param);
    let error = f.error.to_string();
    let set = format!(
        "attempts = attempts + 1, health = {}, failing_since = COALESCE(failing_since, {}), \
         last_error = {before}{}{after}, next_attempt_at = {}",
        p(1),
        p(2),
        p(3),
        p(4)
    );
    let values = vec![
        Value::Text(f.health.as_str()),
        Value::Time(f.at),
        Value::Text(&error),
        Value::Time(f.next_attempt_at),
    ];
    under_lease(c, lease, &set, values).await
}

/// `LogStreams::set_pending`.
pub async fn pending<D: Db>(
    c: &mut D,
    lease: &Lease,
    pending: Option<&serde_json::Value>,
) -> Result<bool, StoreError> {
    let d = D::DIALECT;
    let (p, (before, after)) = (d.param, d.json_param);
    let text = pending.map(serde_json::Value::to_string);
    let set = format!("pending = {before}{}{after}", p(1));
    under_lease(c, lease, &set, vec![Value::OptText(text.as_deref())]).await
}

/// One entry of a chain, as [`start_at`] probes it.
#[derive(Debug, diesel::QueryableByName)]
pub struct Probe {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    position: i64,
    #[diesel(sql_type = diesel::sql_types::Binary)]
    prev_hash: Vec<u8>,
    #[diesel(sql_type = diesel::sql_types::Binary)]
    hash: Vec<u8>,
    /// 1 when it was recorded before the time asked about.
    #[diesel(sql_type = diesel::sql_types::Integer)]
    earlier: i32,
}

/// Which entry [`probe`] reads: the first at or after a position, or the last.
#[derive(Clone, Copy)]
enum Bound {
    From(i64),
    Last,
}

/// `Ledgers::chain_start_at`: where a reader of the entries of `organization`'s chain in
/// `ledger` recorded at or after `at` starts, as the position and hash it reads after; none
/// for an empty chain. Positions grow with the time of recording, so the last entry recorded
/// before `at` is found by bisection: a few reads of one entry each, however long the chain.
/// A chain with a hole (which `audit verify` reports) can make the start earlier, never later.
pub async fn start_at<D: Db>(
    c: &mut D,
    ledger: recruit_domain::chain::Ledger,
    organization: OrganizationId,
    at: Timestamp,
) -> Result<Option<(u64, Vec<u8>)>, StoreError>
where
    Probe: diesel::QueryableByName<D::Backend>,
{
    let chain = (ledger, organization, at);
    let Some(mut earlier) = probe(c, chain, Bound::From(1)).await? else {
        return Ok(None);
    };
    if earlier.earlier == 0 {
        return Ok(Some((to_position(earlier.position - 1), earlier.prev_hash)));
    }
    let mut later = match probe(c, chain, Bound::Last).await? {
        Some(last) if last.earlier == 0 => last.position,
        Some(last) => return Ok(Some((to_position(last.position), last.hash))),
        None => return Ok(Some((to_position(earlier.position), earlier.hash))),
    };
    while later - earlier.position > 1 {
        let middle = earlier.position + (later - earlier.position) / 2;
        match probe(c, chain, Bound::From(middle)).await? {
            Some(m) if m.position < later && m.earlier == 1 => earlier = m,
            Some(m) if m.position < later => later = m.position,
            _ => break,
        }
    }
    Ok(Some((to_position(earlier.position), earlier.hash)))
}

/// The entry of the chain `bound` names, with whether it was recorded before the time.
async fn probe<D: Db>(
    c: &mut D,
    (ledger, organization, at): (recruit_domain::chain::Ledger, OrganizationId, Timestamp),
    bound: Bound,
) -> Result<Option<Probe>, StoreError>
where
    Probe: diesel::QueryableByName<D::Backend>,
{
    let p = D::DIALECT.param;
    let table = crate::LEDGER_TABLES.iter().find(|(l, _)| *l == ledger).map_or("", |(_, t)| t);
    let mut values = vec![Value::Time(at), Value::Uuid(organization.uuid())];
    let (from, order) = match bound {
        Bound::From(position) => {
            values.push(Value::Int(position));
            (format!(" AND position >= {}", p(3)), "ASC")
        }
        Bound::Last => (String::new(), "DESC"),
    };
    let sql = format!(
        "SELECT position, prev_hash, hash, CASE WHEN recorded_at < {} THEN 1 ELSE 0 END AS earlier \
         FROM {table} WHERE organization_id = {} AND position IS NOT NULL{from} \
         ORDER BY position {order} LIMIT 1",
        p(1),
        p(2),
    );
    Ok(c.load(Statement { sql, values }).await?.pop())
}

fn to_position(position: i64) -> u64 {
    u64::try_from(position).unwrap_or_default()
}
