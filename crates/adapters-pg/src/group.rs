//! The group commit of read records on PostgreSQL ([`recruit_adapters_diesel::Recorder`]'s
//! writer): one `tokio-postgres` connection of its own, its statements prepared once, and each
//! group in two round trips while its chains' heads are held: `BEGIN` with the lock of the
//! heads, then the rows' inserts, the heads' save and `COMMIT`, each pair of steps sent
//! together without waiting for the first's answer (pipelined).
//!
//! A connection whose group failed is closed, whatever the failure: the next group opens a
//! new one, so no group ever starts in a transaction a failure left open.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use recruit_domain::Uuid;
use recruit_ports::StoreError;
use recruit_ports::chain::{ChainedRows, Heads};
use recruit_ports::rows::{LedgerHeadRow, ReadRecords};
use tokio_postgres::{Client, Statement};

use crate::chain::{
    ADVANCE_HEADS, AdvancedHeads, LOCK_HEADS, LockedHeads, SAVE_HEADS, START_HEADS, SavedHeads,
    heads_from,
};
use crate::direct::DirectSettings;
use crate::error::{copy_error, write_error};
use crate::rows::{AuditRow, Copied, ToolAuditRow};

/// Multi-row inserts are prepared for 1, 2, 4, … `1 << (SIZES - 1)` rows; a group's rows go
/// in as few of them as add up to its number.
const SIZES: usize = 7;

/// A table's multi-row inserts, one statement per size (`[k]` inserts `1 << k` rows).
struct Inserts(Vec<Statement>);

impl Inserts {
    async fn prepare<R: Copied>(client: &Client) -> Result<Self, tokio_postgres::Error> {
        let columns = R::TYPES.len();
        let mut prepared = Vec::with_capacity(SIZES);
        for k in 0..SIZES {
            let rows = 1usize << k;
            let values = (0..rows)
                .map(|r| {
                    let row: Vec<String> =
                        (1..=columns).map(|c| format!("${}", r * columns + c)).collect();
                    format!("({})", row.join(", "))
                })
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!("INSERT INTO {} ({}) VALUES {values}", R::TABLE, R::COLUMNS);
            let types: Vec<_> = R::TYPES.iter().cycle().take(rows * columns).cloned().collect();
            prepared.push(client.prepare_typed(&sql, &types).await?);
        }
        Ok(Self(prepared))
    }

    /// The steps that insert `rows`: the largest prepared sizes first.
    fn steps<'a, R: Copied + Sync>(&'a self, client: &'a Client, mut rows: &'a [R]) -> Steps<'a> {
        let mut steps: Steps<'a> = vec![];
        while !rows.is_empty() {
            let k = (usize::BITS - 1 - rows.len().leading_zeros()) as usize;
            let k = k.min(SIZES - 1);
            let (part, rest) = rows.split_at(1 << k);
            rows = rest;
            let statement = &self.0[k];
            steps.push(Box::pin(async move {
                let values: Vec<_> = part.iter().flat_map(R::copy_values).collect();
                client.execute(statement, &values).await.map(drop)
            }));
        }
        steps
    }
}

type Steps<'a> = Vec<Pin<Box<dyn Future<Output = Result<(), tokio_postgres::Error>> + Send + 'a>>>;

/// The most chains whose heads a group connection remembers; past it, it forgets them all
/// and remembers again the ones it writes.
const SEEN_HEADS: usize = 4096;

/// The SQLSTATE of `advance_ledger_heads` (migration 000016) when a chain moved since its
/// head was last seen.
const HEAD_MOVED: &str = "RH001";

/// The recorder's connection, its prepared statements, and the heads it last saved.
struct GroupConnection {
    client: Client,
    lock: Statement,
    start: Statement,
    save: Statement,
    advance: Statement,
    api: Inserts,
    tool: Inserts,
    /// Each chain's head (position, hash) as this connection last locked or saved it. Another
    /// writer may have moved it since: `advance_ledger_heads` checks under the row's lock.
    seen: HashMap<(Uuid, String), (i64, Vec<u8>)>,
}

impl GroupConnection {
    async fn open(settings: &DirectSettings) -> Result<Self, tokio_postgres::Error> {
        let client = settings.connect().await?;
        // The heads' statements take arrays, whose length PostgreSQL knows only at a run: it
        // would plan them again at every group (up to 0.26 ms of planning for 0.05 ms of
        // work). One generic plan each serves every group.
        client.batch_execute("SET plan_cache_mode = force_generic_plan").await?;
        let lock = client.prepare(LOCK_HEADS).await?;
        let start = client.prepare(START_HEADS).await?;
        let save = client.prepare(SAVE_HEADS).await?;
        let advance = client.prepare(ADVANCE_HEADS).await?;
        let api = Inserts::prepare::<AuditRow>(&client).await?;
        let tool = Inserts::prepare::<ToolAuditRow>(&client).await?;
        let seen = HashMap::new();
        Ok(Self { client, lock, start, save, advance, api, tool, seen })
    }

    /// Writes `group` in one transaction, linked into its chains: in one round trip from the
    /// heads this connection saw last, when it saw them all and no one moved them since;
    /// otherwise in two, locking the heads first.
    async fn write(&mut self, group: ReadRecords) -> Result<(), StoreError> {
        // Before the heads are locked: the lock is held for the hashing only.
        let contents = group.contents()?;
        let start = group.chain_keys().genesis();
        let seen: Option<Vec<LedgerHeadRow>> = start
            .iter()
            .map(|h| {
                let (position, hash) = self.seen.get(&(h.organization_id, h.ledger.clone()))?;
                Some(LedgerHeadRow { position: *position, hash: hash.clone(), ..h.clone() })
            })
            .collect();
        if let Some(seen) = seen {
            let mut heads = Heads::new(seen.iter().cloned())?;
            let mut linked = group.clone();
            linked.link(&mut heads, &contents)?;
            match self.advance(&seen, &heads, linked).await {
                Ok(()) => {
                    self.remember(&heads);
                    return Ok(());
                }
                Err(e) if e.code().is_some_and(|c| c.code() == HEAD_MOVED) => self.seen.clear(),
                Err(e) => return Err(write_error(e)),
            }
        }
        self.write_locked(group, contents).await
    }

    /// [`GroupConnection::write`] from the heads `seen`, which `heads` moved: `BEGIN`, the
    /// heads' advance (which fails, aborting the transaction, if one is no longer where it
    /// was seen), the rows' inserts and `COMMIT`, all sent at once.
    async fn advance(
        &self,
        seen: &[LedgerHeadRow],
        heads: &Heads,
        group: ReadRecords,
    ) -> Result<(), tokio_postgres::Error> {
        let client = &self.client;
        let moved = heads.moved();
        let advanced = AdvancedHeads::new(seen, &moved);
        let (api, tool) = rows_of(group);
        let mut steps: Steps<'_> = vec![
            Box::pin(client.batch_execute("BEGIN")),
            Box::pin(async { client.execute(&self.advance, &advanced.params()).await.map(drop) }),
        ];
        steps.extend(self.api.steps(client, &api));
        steps.extend(self.tool.steps(client, &tool));
        steps.push(Box::pin(client.batch_execute("COMMIT")));
        in_order(steps).await
    }

    /// [`GroupConnection::write`] with the heads locked first: `BEGIN` and the lock, then the
    /// rows' inserts, the heads' save and `COMMIT`.
    async fn write_locked(
        &mut self,
        mut group: ReadRecords,
        contents: Vec<Vec<u8>>,
    ) -> Result<(), StoreError> {
        let client = &self.client;
        let start = group.chain_keys().genesis();
        let lock = LockedHeads::new(&start);
        let mut locked = vec![];
        in_order(vec![
            Box::pin(client.batch_execute("BEGIN")),
            Box::pin(async {
                locked = client.query(&self.lock, &lock.params()).await?;
                Ok(())
            }),
        ])
        .await
        .map_err(write_error)?;
        if lock.missing(&locked) {
            locked = client.query(&self.start, &lock.start_params()).await.map_err(write_error)?;
        }
        let mut heads: Heads = heads_from(&locked)?;
        group.link(&mut heads, &contents)?;
        let (api, tool) = rows_of(group);
        let moved = heads.moved();
        let saved = SavedHeads::new(&moved);
        let mut steps = self.api.steps(client, &api);
        steps.extend(self.tool.steps(client, &tool));
        steps.push(Box::pin(async { client.execute(&self.save, &saved.params()).await.map(drop) }));
        steps.push(Box::pin(client.batch_execute("COMMIT")));
        in_order(steps).await.map_err(write_error)?;
        self.remember(&heads);
        Ok(())
    }

    /// Remembers the heads a committed group left.
    fn remember(&mut self, heads: &Heads) {
        let moved = heads.moved();
        if self.seen.len() + moved.len() > SEEN_HEADS {
            self.seen.clear();
        }
        for h in moved {
            self.seen.insert((h.organization_id, h.ledger), (h.position, h.hash));
        }
    }
}

/// A group's rows as this adapter inserts them.
fn rows_of(group: ReadRecords) -> (Vec<AuditRow>, Vec<ToolAuditRow>) {
    let ReadRecords { api, tool } = group;
    (
        api.into_iter().map(AuditRow::from).collect(),
        tool.into_iter().map(ToolAuditRow::from).collect(),
    )
}

/// Runs `steps` side by side, each to its end, and fails with the first error in the order
/// given (a later statement's failure is most often that the transaction was aborted). Each
/// step is first polled in the order given, and `tokio-postgres` sends a statement when its
/// future is first polled: the statements reach PostgreSQL in this order, without waiting for
/// each other's answers.
async fn in_order(steps: Steps<'_>) -> Result<(), tokio_postgres::Error> {
    let mut steps: Vec<_> = steps.into_iter().map(|step| (Some(step), Ok(()))).collect();
    std::future::poll_fn(move |cx| {
        let mut pending = false;
        for (slot, outcome) in &mut steps {
            if let Some(step) = slot {
                match step.as_mut().poll(cx) {
                    Poll::Ready(done) => (*slot, *outcome) = (None, done),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            return Poll::Pending;
        }
        Poll::Ready(steps.drain(..).try_for_each(|(_, outcome)| outcome))
    })
    .await
}

/// What writes a group of read records on PostgreSQL: the rows, linked into their chains, in
/// one transaction on the recorder's own connection.
pub(crate) fn group_writer(
    settings: &Arc<DirectSettings>,
) -> impl Fn(ReadRecords) -> recruit_adapters_diesel::GroupWrite + Send + 'static {
    let settings = Arc::clone(settings);
    let connection = Arc::new(tokio::sync::Mutex::new(None::<GroupConnection>));
    move |group| {
        let (settings, connection) = (Arc::clone(&settings), Arc::clone(&connection));
        Box::pin(async move {
            let mut held = connection.lock().await;
            let mut c = match held.take() {
                Some(c) if !c.client.is_closed() => c,
                _ => GroupConnection::open(&settings).await.map_err(copy_error)?,
            };
            let written = c.write(group).await;
            if written.is_ok() {
                *held = Some(c);
            }
            written
        })
    }
}
