//! The ledgers' chains (`recruit_ports::chain`) on PostgreSQL: heads locked by `SELECT … FOR
//! UPDATE` (a chain not begun yet gets its head from an upsert at the start, once), saved by
//! an update; entries stored before chaining linked once by [`PgBackend::migrate`].

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use recruit_adapters_diesel::LedgerTable;
use recruit_ports::StoreError;
use recruit_ports::chain::{ChainKeys, ChainedRows, Heads};
use recruit_ports::rows as neutral;

use crate::error::*;
use crate::rows::*;
use crate::schema::*;

/// Links the ledger rows of a write in the caller's transaction: locks the heads of their
/// chains until the commit, links the rows, saves the heads.
pub(crate) async fn chain(
    c: &mut AsyncPgConnection,
    rows: &mut impl ChainedRows,
) -> Result<(), TxError> {
    let keys = rows.chain_keys();
    if keys.is_empty() {
        return Ok(());
    }
    // Before the heads are locked: the lock is held for the hashing only.
    let contents = rows.contents()?;
    let mut heads = lock_heads(c, &keys).await?;
    rows.link(&mut heads, &contents)?;
    save_heads(c, &heads).await
}

/// Locks the heads of the chains `$1` (organizations) and `$2` (ledger names) name, in one
/// order whatever the write; all of them, or none when one has no head yet (a chain not begun):
/// then [`START_HEADS`] creates it. Locking only those that exist would take them out of that
/// order, and deadlock with a write that starts the missing one. Fixed text over arrays, so
/// that it stays prepared on the connection. A row lock, not a write: the head's row gets one
/// new version per commit, from [`SAVE_HEADS`].
pub(crate) const LOCK_HEADS: &str = "WITH k AS (SELECT o, l FROM unnest($1::uuid[], $2::text[]) AS k (o, l)) \
     SELECT h.organization_id, h.ledger, h.position, h.hash FROM ledger_heads h \
     WHERE (h.organization_id, h.ledger) IN (SELECT o, l FROM k) \
     AND (SELECT count(*) FROM ledger_heads x WHERE (x.organization_id, x.ledger) IN \
     (SELECT o, l FROM k)) = (SELECT count(*) FROM k) \
     ORDER BY h.organization_id, h.ledger FOR UPDATE OF h";

/// [`LOCK_HEADS`] for chains of which some have no head yet: creates the missing ones at the
/// start (`$1`, the genesis hash) and locks all, in the same order.
pub(crate) const START_HEADS: &str = "INSERT INTO ledger_heads (organization_id, ledger, position, hash) \
     SELECT o, l, 0, $1 FROM unnest($2::uuid[], $3::text[]) AS k (o, l) ORDER BY o, l \
     ON CONFLICT (organization_id, ledger) DO UPDATE SET position = ledger_heads.position \
     RETURNING organization_id, ledger, position, hash";

/// Moves the heads of the chains `$1` and `$2` name to positions `$3` and hashes `$4`.
pub(crate) const SAVE_HEADS: &str = "UPDATE ledger_heads SET position = k.p, hash = k.h \
     FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::bytea[]) AS k (o, l, p, h) \
     WHERE organization_id = k.o AND ledger = k.l";

/// Moves the heads of the chains `$1` and `$2` name from positions `$3` and hashes `$4`, where
/// the writer saw them, to `$5` and `$6`; fails with SQLSTATE `RH001` if one is no longer
/// where it was seen (`advance_ledger_heads`, migration 000016).
pub(crate) const ADVANCE_HEADS: &str = "SELECT advance_ledger_heads($1, $2, $3, $4, $5, $6)";

async fn lock_heads(c: &mut AsyncPgConnection, keys: &ChainKeys) -> Result<Heads, TxError> {
    use diesel::sql_types::{Array, BigInt, Bytea, Text, Uuid};
    type Head = (recruit_domain::Uuid, String, i64, Vec<u8>);
    let start = keys.genesis();
    let (orgs, ledgers): (Vec<_>, Vec<_>) =
        start.iter().map(|h| (h.organization_id, h.ledger.clone())).unzip();
    let mut locked: Vec<Head> =
        crate::prepared::PreparedSql::<(Uuid, Text, BigInt, Bytea)>::numbered(LOCK_HEADS)
            .bind::<Array<Uuid>, _>(orgs.clone())
            .bind::<Array<Text>, _>(ledgers.clone())
            .load(c)
            .await?;
    if locked.len() < start.len() {
        locked = crate::prepared::PreparedSql::<(Uuid, Text, BigInt, Bytea)>::numbered(START_HEADS)
            .bind::<Bytea, _>(recruit_domain::chain::GENESIS.to_vec())
            .bind::<Array<Uuid>, _>(orgs)
            .bind::<Array<Text>, _>(ledgers)
            .load(c)
            .await?;
    }
    Ok(Heads::new(locked.into_iter().map(|(organization_id, ledger, position, hash)| {
        neutral::LedgerHeadRow { organization_id, ledger, position, hash }
    }))?)
}

async fn save_heads(c: &mut AsyncPgConnection, heads: &Heads) -> Result<(), TxError> {
    use diesel::sql_types::{Array, BigInt, Bytea, Text, Uuid};
    let moved = heads.moved();
    crate::prepared::PreparedSql::<()>::numbered(SAVE_HEADS)
        .bind::<Array<Uuid>, _>(moved.iter().map(|h| h.organization_id).collect::<Vec<_>>())
        .bind::<Array<Text>, _>(moved.iter().map(|h| h.ledger.clone()).collect::<Vec<_>>())
        .bind::<Array<BigInt>, _>(moved.iter().map(|h| h.position).collect::<Vec<_>>())
        .bind::<Array<Bytea>, _>(moved.iter().map(|h| h.hash.clone()).collect::<Vec<_>>())
        .execute(c)
        .await?;
    Ok(())
}

/// [`chain`] on a `tokio-postgres` transaction (the `COPY` connections); returns the rows'
/// canonical JSON ([`ChainedRows::contents`]).
pub(crate) async fn chain_copy(
    tx: &tokio_postgres::Transaction<'_>,
    rows: &mut impl ChainedRows,
) -> Result<Vec<Vec<u8>>, StoreError> {
    let keys = rows.chain_keys();
    if keys.is_empty() {
        return Ok(vec![]);
    }
    // Before the heads are locked: the lock is held for the hashing only.
    let contents = rows.contents()?;
    let mut heads = lock_heads_copy(tx, &keys).await?;
    rows.link(&mut heads, &contents)?;
    save_heads_copy(tx, &heads).await?;
    Ok(contents)
}

/// Locks the heads of the chains `keys` name until the commit of `tx`, a missing one created
/// at the start.
pub(crate) async fn lock_heads_copy(
    tx: &tokio_postgres::Transaction<'_>,
    keys: &ChainKeys,
) -> Result<Heads, StoreError> {
    let start = keys.genesis();
    let heads = LockedHeads::new(&start);
    let mut locked = tx.query(LOCK_HEADS, &heads.params()).await.map_err(write_error)?;
    if heads.missing(&locked) {
        locked = tx.query(START_HEADS, &heads.start_params()).await.map_err(write_error)?;
    }
    heads_from(&locked)
}

/// Saves the heads that moved, in `tx`.
pub(crate) async fn save_heads_copy(
    tx: &tokio_postgres::Transaction<'_>,
    heads: &Heads,
) -> Result<(), StoreError> {
    let moved = heads.moved();
    tx.execute(SAVE_HEADS, &SavedHeads::new(&moved).params()).await.map_err(write_error)?;
    Ok(())
}

/// The heads [`LOCK_HEADS`] or [`START_HEADS`] returned, on a `tokio-postgres` connection.
pub(crate) fn heads_from(locked: &[tokio_postgres::Row]) -> Result<Heads, StoreError> {
    let row = |r: &tokio_postgres::Row| -> Result<_, tokio_postgres::Error> {
        Ok(neutral::LedgerHeadRow {
            organization_id: r.try_get(0)?,
            ledger: r.try_get(1)?,
            position: r.try_get(2)?,
            hash: r.try_get(3)?,
        })
    };
    Heads::new(locked.iter().map(row).collect::<Result<Vec<_>, _>>().map_err(write_error)?)
}

/// The parameters of [`LOCK_HEADS`] and [`START_HEADS`] for the chains of `start` (their
/// heads at genesis, for chains not begun yet), on a `tokio-postgres` connection.
pub(crate) struct LockedHeads<'a> {
    genesis: &'static [u8],
    orgs: Vec<recruit_domain::Uuid>,
    ledgers: Vec<&'a str>,
}

impl<'a> LockedHeads<'a> {
    pub(crate) fn new(start: &'a [neutral::LedgerHeadRow]) -> Self {
        Self {
            genesis: &recruit_domain::chain::GENESIS,
            orgs: start.iter().map(|h| h.organization_id).collect(),
            ledgers: start.iter().map(|h| h.ledger.as_str()).collect(),
        }
    }

    /// The parameters of [`LOCK_HEADS`].
    pub(crate) fn params(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 2] {
        [&self.orgs, &self.ledgers]
    }

    /// Whether [`LOCK_HEADS`] returned fewer heads than asked: then [`START_HEADS`] runs.
    pub(crate) fn missing(&self, locked: &[tokio_postgres::Row]) -> bool {
        locked.len() < self.orgs.len()
    }

    /// The parameters of [`START_HEADS`].
    pub(crate) fn start_params(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 3] {
        [&self.genesis, &self.orgs, &self.ledgers]
    }
}

/// The parameters of [`SAVE_HEADS`] for the heads `moved`, on a `tokio-postgres` connection.
pub(crate) struct SavedHeads<'a> {
    orgs: Vec<recruit_domain::Uuid>,
    ledgers: Vec<&'a str>,
    positions: Vec<i64>,
    hashes: Vec<&'a [u8]>,
}

impl<'a> SavedHeads<'a> {
    pub(crate) fn new(moved: &'a [neutral::LedgerHeadRow]) -> Self {
        Self {
            orgs: moved.iter().map(|h| h.organization_id).collect(),
            ledgers: moved.iter().map(|h| h.ledger.as_str()).collect(),
            positions: moved.iter().map(|h| h.position).collect(),
            hashes: moved.iter().map(|h| h.hash.as_slice()).collect(),
        }
    }

    pub(crate) fn params(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 4] {
        [&self.orgs, &self.ledgers, &self.positions, &self.hashes]
    }
}

/// How many stored entries one step of the backfill links.
const BACKFILL_CHUNK: i64 = 10_000;

/// Links, once, the entries stored before the ledgers were chained: in one transaction, while
/// the migration's `ledger_chain_backfill` row exists (and removes it). Each organization's
/// entries are linked in the order of their time, then id, after whatever its chain holds.
pub(crate) async fn backfill(c: &mut AsyncPgConnection) -> Result<(), StoreError> {
    c.transaction::<_, TxError, _>(async |c| {
        let pending: Vec<bool> = ledger_chain_backfill::table
            .select(ledger_chain_backfill::pending)
            .for_update()
            .load(c)
            .await?;
        if pending.is_empty() {
            return Ok(());
        }
        backfill_ledger::<LedgerRow>(c).await?;
        backfill_ledger::<AuditRow>(c).await?;
        backfill_ledger::<ToolAuditRow>(c).await?;
        diesel::delete(ledger_chain_backfill::table).execute(c).await?;
        Ok(())
    })
    .await
    .map_err(StoreError::from)
}

async fn backfill_ledger<R: LedgerTable<Pg>>(c: &mut AsyncPgConnection) -> Result<(), TxError> {
    use diesel::sql_types::{Array, BigInt, Bytea, Nullable, Timestamptz, Uuid};
    #[derive(QueryableByName)]
    struct Org {
        #[diesel(sql_type = Uuid)]
        organization_id: recruit_domain::Uuid,
    }
    let orgs: Vec<Org> = diesel::sql_query(format!(
        "SELECT DISTINCT organization_id FROM {} WHERE position IS NULL ORDER BY 1",
        <R::Neutral as recruit_ports::chain::Chained>::TABLE
    ))
    .load(c)
    .await?;
    for Org { organization_id: org } in orgs {
        let mut after: Option<(chrono::DateTime<chrono::Utc>, recruit_domain::Uuid)> = None;
        loop {
            let rows: Vec<R> = diesel::sql_query(format!(
                "SELECT * FROM {table} WHERE organization_id = $1 AND position IS NULL \
                 AND ($2::timestamptz IS NULL OR ({time}, id) > ($2, $3)) \
                 ORDER BY {time}, id LIMIT $4",
                table = <R::Neutral as recruit_ports::chain::Chained>::TABLE,
                time = <R::Neutral as recruit_ports::chain::Chained>::TIME,
            ))
            .bind::<Uuid, _>(org)
            .bind::<Nullable<Timestamptz>, _>(after.map(|a| a.0))
            .bind::<Nullable<Uuid>, _>(after.map(|a| a.1))
            .bind::<BigInt, _>(BACKFILL_CHUNK)
            .load(c)
            .await?;
            if rows.is_empty() {
                break;
            }
            let mut rows =
                rows.into_iter().map(Row::into_neutral).collect::<Result<Vec<_>, _>>()?;
            chain(c, &mut rows).await?;
            let last = rows.last().map(recruit_ports::chain::Chained::time_and_id);
            if let Some((time, id)) = last {
                after = Some((time.as_datetime(), id));
            }
            let mut ids = vec![];
            let (mut positions, mut prevs, mut hashes) = (vec![], vec![], vec![]);
            for row in &rows {
                let (position, prev, hash) = recruit_ports::chain::Chained::link(row);
                ids.push(recruit_ports::chain::Chained::time_and_id(row).1);
                positions.push(position);
                prevs.push(prev.map(<[u8]>::to_vec));
                hashes.push(hash.map(<[u8]>::to_vec));
            }
            diesel::sql_query(format!(
                "UPDATE {} AS t SET position = k.p, prev_hash = k.ph, hash = k.h \
                 FROM unnest($1::uuid[], $2::bigint[], $3::bytea[], $4::bytea[]) AS k (id, p, ph, h) \
                 WHERE t.organization_id = $5 AND t.id = k.id",
                <R::Neutral as recruit_ports::chain::Chained>::TABLE
            ))
            .bind::<Array<Uuid>, _>(ids)
            .bind::<Array<Nullable<BigInt>>, _>(positions)
            .bind::<Array<Nullable<Bytea>>, _>(prevs)
            .bind::<Array<Nullable<Bytea>>, _>(hashes)
            .bind::<Uuid, _>(org)
            .execute(c)
            .await?;
        }
    }
    Ok(())
}

/// `statement` with its values bound as PostgreSQL stores them.
pub(crate) fn bound(
    statement: recruit_adapters_diesel::statement::Statement<'_>,
) -> diesel::query_builder::BoxedSqlQuery<'_, Pg, diesel::query_builder::SqlQuery> {
    use diesel::sql_types::{BigInt, Text, Timestamptz, Uuid};
    use recruit_adapters_diesel::filter::Value;
    let mut query = diesel::sql_query(statement.sql).into_boxed();
    for value in statement.values {
        query = match value {
            Value::Uuid(id) => query.bind::<Uuid, _>(id),
            Value::Text(text) => query.bind::<Text, _>(text),
            Value::Time(t) => query.bind::<Timestamptz, _>(t.as_datetime()),
            Value::Int(n) => query.bind::<BigInt, _>(n),
            Value::Uuids(ids) => query.bind::<diesel::sql_types::Array<Uuid>, _>(ids),
            Value::OptText(text) => query.bind::<diesel::sql_types::Nullable<Text>, _>(text),
            Value::OptUuid(id) => query.bind::<diesel::sql_types::Nullable<Uuid>, _>(id),
            Value::Bool(b) => query.bind::<diesel::sql_types::Bool, _>(b),
            Value::Bytes(bytes) => query.bind::<diesel::sql_types::Binary, _>(bytes),
            Value::Gaps(spans) => query.bind::<Text, _>(gaps(spans)),
        };
    }
    query
}

/// What lies outside `spans` (each `[from, to)`, in order), as the text of a
/// `tstzmultirange`: `{(,from₁),[to₁,from₂),…,[toₙ,)}`, in UTC to the microsecond.
pub(crate) fn gaps(spans: &[(recruit_domain::Timestamp, recruit_domain::Timestamp)]) -> String {
    use std::fmt::Write;
    let at = |t: recruit_domain::Timestamp| t.as_datetime().format("%Y-%m-%d %H:%M:%S%.6f+00");
    let mut text = String::with_capacity(8 + spans.len() * 64);
    text.push_str("{(");
    for (from, to) in spans {
        let _ = write!(text, ",\"{}\"),[\"{}\"", at(*from), at(*to));
    }
    text.push_str(",)}");
    text
}

/// A connection of this store, to the statements both stores share.
pub struct PgDb<'c>(pub(crate) &'c mut AsyncPgConnection);

impl std::fmt::Debug for PgDb<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PgDb")
    }
}

impl recruit_adapters_diesel::db::Db for PgDb<'_> {
    const DIALECT: recruit_adapters_diesel::review::Dialect =
        recruit_adapters_diesel::review::Dialect::POSTGRES;

    async fn load<R: QueryableByName<Pg> + Send + 'static>(
        &mut self,
        statement: recruit_adapters_diesel::statement::Statement<'_>,
    ) -> Result<Vec<R>, StoreError> {
        crate::prepared::Kept::new(statement).load(self.0).await.map_err(store_error)
    }

    async fn neutral_page<N: recruit_adapters_diesel::db::StoredIn<Self> + Send + 'static>(
        &mut self,
        statement: recruit_adapters_diesel::statement::Statement<'_>,
        limit: usize,
    ) -> Result<Vec<N>, StoreError> {
        use futures_util::TryStreamExt as _;
        use recruit_adapters_diesel::Row as _;
        let mut rows = Vec::with_capacity(limit);
        let mut read = crate::prepared::Kept::new(statement)
            .load_stream::<N::Row>(self.0)
            .await
            .map_err(store_error)?;
        while let Some(row) = read.try_next().await.map_err(store_error)? {
            rows.push(row.into_neutral()?);
        }
        Ok(rows)
    }

    async fn execute(
        &mut self,
        statement: recruit_adapters_diesel::statement::Statement<'_>,
    ) -> Result<usize, StoreError> {
        crate::prepared::Kept::new(statement).execute(self.0).await.map_err(store_error)
    }

    async fn append_record(
        &mut self,
        mut page: neutral::RecordedPage<()>,
    ) -> Result<(), StoreError> {
        let c = &mut *self.0;
        let appended = async {
            chain(c, &mut page).await?;
            crate::insert::insert_rows(c, [page.api]).await?;
            crate::insert::insert_rows(c, page.tool).await?;
            Ok::<_, TxError>(())
        };
        appended.await.map_err(StoreError::from)
    }

    async fn append_entries(
        &mut self,
        mut rows: Vec<neutral::LedgerRow>,
    ) -> Result<(), StoreError> {
        let c = &mut *self.0;
        let appended = async {
            chain(c, &mut rows).await?;
            crate::insert::insert_rows(c, rows).await?;
            Ok::<_, TxError>(())
        };
        appended.await.map_err(StoreError::from)
    }

    async fn insert_resolved(
        &mut self,
        rows: Vec<neutral::ResolvedSettingsRow>,
    ) -> Result<(), StoreError> {
        let c = &mut *self.0;
        let inserted = async {
            crate::insert::insert_rows(c, rows).await?;
            Ok::<_, diesel::result::Error>(())
        };
        inserted.await.map_err(store_error)
    }

    async fn insert_decision(
        &mut self,
        row: neutral::DownloadDecisionRow,
    ) -> Result<(), StoreError> {
        let row = DownloadDecisionRow::from(row);
        let inserted = diesel::insert_into(privacy_download_decisions::table).values(&row);
        inserted.execute(self.0).await.map(drop).map_err(store_error)
    }

    async fn insert_sign_off(&mut self, row: neutral::SignOffRow) -> Result<bool, StoreError> {
        let row = SignOffRow::from(row);
        let inserted = diesel::insert_into(privacy_review_sign_offs::table)
            .values(&row)
            .on_conflict_do_nothing()
            .execute(self.0)
            .await;
        inserted.map(|n| n > 0).map_err(store_error)
    }
}

/// The parameters of [`ADVANCE_HEADS`]: the heads `moved` to, in locking order, each from
/// where it was `seen` (a head not seen gets position -1, which never matches).
pub(crate) struct AdvancedHeads<'a> {
    to: SavedHeads<'a>,
    seen_positions: Vec<i64>,
    seen_hashes: Vec<&'a [u8]>,
}

impl<'a> AdvancedHeads<'a> {
    pub(crate) fn new(
        seen: &'a [neutral::LedgerHeadRow],
        moved: &'a [neutral::LedgerHeadRow],
    ) -> Self {
        let seen_of = |m: &neutral::LedgerHeadRow| {
            seen.iter()
                .find(|s| (s.organization_id, &s.ledger) == (m.organization_id, &m.ledger))
                .map_or((-1, &[][..]), |s| (s.position, s.hash.as_slice()))
        };
        let (seen_positions, seen_hashes) = moved.iter().map(seen_of).unzip();
        Self { to: SavedHeads::new(moved), seen_positions, seen_hashes }
    }

    pub(crate) fn params(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 6] {
        let to = &self.to;
        [&to.orgs, &to.ledgers, &self.seen_positions, &self.seen_hashes, &to.positions, &to.hashes]
    }
}
