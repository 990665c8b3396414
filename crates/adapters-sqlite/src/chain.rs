//! The ledgers' chains (`recruit_ports::chain`) on SQLite: heads read and saved in the
//! caller's immediate transaction, which holds the write lock; the writer of grouped read
//! records; entries stored before chaining linked once by [`SqliteBackend::migrate`]; a page of
//! a chain's entries.
//!
//! [`SqliteBackend::migrate`]: crate::SqliteBackend::migrate

use diesel::prelude::*;
use diesel::sqlite::{Sqlite, SqliteConnection};
use diesel_async::pooled_connection::deadpool::Pool;
use recruit_adapters_diesel::LedgerTable;
use recruit_ports::StoreError;
use recruit_ports::chain::{ChainedRows, Heads};
use recruit_ports::rows as neutral;

use crate::error::TxError;
use crate::rows::*;
use crate::schema::*;
use crate::{Conn, run};

/// What writes a group of read records on SQLite: the rows, linked into their chains, in one
/// immediate transaction.
pub(crate) fn group_writer(
    pool: &Pool<Conn>,
) -> impl Fn(neutral::ReadRecords) -> recruit_adapters_diesel::GroupWrite + Send + 'static {
    let pool = pool.clone();
    move |mut group| {
        let pool = pool.clone();
        Box::pin(async move {
            run(&pool, move |c| {
                Ok(c.immediate_transaction(|c| -> Result<(), TxError> {
                    chain(c, &mut group)?;
                    let neutral::ReadRecords { api, tool } = group;
                    crate::insert::insert_rows(c, api)?;
                    crate::insert::insert_rows(c, tool)?;
                    Ok(())
                }))
            })
            .await?
            .map_err(StoreError::from)
        })
    }
}

/// Links the ledger rows of a write in the caller's transaction, which holds the database's
/// write lock (an immediate transaction) until it ends: reads the heads of their chains
/// (starting a missing one), links the rows, saves the heads. Returns the rows' canonical
/// JSON ([`ChainedRows::contents`]).
pub(crate) fn chain(
    c: &mut SqliteConnection,
    rows: &mut impl ChainedRows,
) -> Result<Vec<Vec<u8>>, TxError> {
    let keys = rows.chain_keys();
    if keys.is_empty() {
        return Ok(vec![]);
    }
    // Before the heads are locked: the lock is held for the hashing only.
    let contents = rows.contents()?;
    let start: Vec<LedgerHeadRow> = keys.genesis().into_iter().map(LedgerHeadRow::from).collect();
    diesel::insert_or_ignore_into(ledger_heads::table).values(&start).execute(c)?;
    let mut found = Vec::with_capacity(start.len());
    for head in &start {
        let row: LedgerHeadRow = ledger_heads::table
            .find((&head.organization_id, &head.ledger))
            .select(LedgerHeadRow::as_select())
            .first(c)?;
        found.push(row.into_neutral()?);
    }
    let mut heads = Heads::new(found)?;
    rows.link(&mut heads, &contents)?;
    for head in heads.moved().into_iter().map(LedgerHeadRow::from) {
        diesel::update(ledger_heads::table.find((&head.organization_id, &head.ledger)))
            .set((ledger_heads::position.eq(head.position), ledger_heads::hash.eq(&head.hash)))
            .execute(c)?;
    }
    Ok(contents)
}

/// Links, once, the entries stored before the ledgers were chained: in one transaction, while
/// the migration's `ledger_chain_backfill` row exists (and removes it). Each organization's
/// entries are linked in the order of their time, then id, after whatever its chain holds.
pub(crate) fn backfill(c: &mut SqliteConnection) -> Result<(), TxError> {
    c.immediate_transaction(|c| {
        let pending: i64 = ledger_chain_backfill::table.count().get_result(c)?;
        if pending == 0 {
            return Ok(());
        }
        backfill_ledger::<LedgerRow>(c)?;
        backfill_ledger::<AuditRow>(c)?;
        backfill_ledger::<ToolAuditRow>(c)?;
        diesel::delete(ledger_chain_backfill::table).execute(c)?;
        Ok(())
    })
}

fn backfill_ledger<R: LedgerTable<Sqlite>>(c: &mut SqliteConnection) -> Result<(), TxError> {
    use diesel::sql_types::{BigInt, Binary, Nullable};
    use recruit_ports::chain::Chained;
    let mut rows: Vec<R::Neutral> = diesel::sql_query(format!(
        "SELECT * FROM {table} WHERE position IS NULL ORDER BY organization_id, {time}, id",
        table = <R::Neutral as recruit_ports::chain::Chained>::TABLE,
        time = <R::Neutral as recruit_ports::chain::Chained>::TIME,
    ))
    .load::<R>(c)?
    .into_iter()
    .map(Row::into_neutral)
    .collect::<Result<_, _>>()?;
    chain(c, &mut rows)?;
    let update = format!(
        "UPDATE {} SET position = ?, prev_hash = ?, hash = ? WHERE organization_id = ? AND id = ?",
        <R::Neutral as recruit_ports::chain::Chained>::TABLE
    );
    for row in &rows {
        let (position, prev, hash) = row.link();
        diesel::sql_query(&update)
            .bind::<Nullable<BigInt>, _>(position)
            .bind::<Nullable<Binary>, _>(prev)
            .bind::<Nullable<Binary>, _>(hash)
            .bind::<Binary, _>(blob(row.organization()))
            .bind::<Binary, _>(blob(row.time_and_id().1))
            .execute(c)?;
    }
    Ok(())
}
