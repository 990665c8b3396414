//! Group commit of the records of privacy ledger reads: concurrent reads hand their audit rows
//! to one task, which writes every record waiting in one transaction (one lock of each chain's
//! head, one commit, one WAL flush) and then answers each read. A read returns its page only
//! once its record is committed; when the shared transaction fails, every read of the group
//! gets the error and none of their records is written.

use std::sync::OnceLock;

use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use recruit_ports::StoreError;
use recruit_ports::rows::{self as neutral};
use tokio::sync::{mpsc, oneshot};

use crate::error::*;
use crate::rows::*;
use crate::schema::*;

/// The most records one transaction writes.
const GROUP: usize = 512;

/// How many records may wait for a group at once; a read past that waits to hand its record.
const WAITING: usize = 4 * GROUP;

/// The audit rows of one read.
struct Record {
    api: neutral::AuditRow,
    tool: Option<neutral::ToolAuditRow>,
}

struct Job {
    record: Record,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// The task that commits records in groups, started at the first read.
#[derive(Default)]
pub(crate) struct Recorder(OnceLock<mpsc::Sender<Job>>);

impl Recorder {
    /// Commits the audit rows of a read, with whatever other reads' rows wait meanwhile; returns
    /// once they are committed, or with the error that failed the group.
    pub(crate) async fn record(
        &self,
        pool: &Pool<AsyncPgConnection>,
        api: neutral::AuditRow,
        tool: Option<neutral::ToolAuditRow>,
    ) -> Result<(), StoreError> {
        let sender = self.0.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(WAITING);
            tokio::spawn(run(pool.clone(), receiver));
            sender
        });
        let (done, answer) = oneshot::channel();
        let gone = || StoreError::Unavailable("the recorder of reads has stopped".into());
        sender.send(Job { record: Record { api, tool }, done }).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

async fn run(pool: Pool<AsyncPgConnection>, mut receiver: mpsc::Receiver<Job>) {
    let mut jobs = Vec::with_capacity(GROUP);
    while receiver.recv_many(&mut jobs, GROUP).await > 0 {
        let mut group = neutral::ReadRecords::default();
        let mut waiting = Vec::with_capacity(jobs.len());
        for Job { record, done } in jobs.drain(..) {
            group.api.push(record.api);
            group.tool.extend(record.tool);
            waiting.push(done);
        }
        let written = write(&pool, group).await;
        for done in waiting {
            let _ = done.send(match &written {
                Ok(()) => Ok(()),
                Err(e) => Err(e.for_each_caller()),
            });
        }
    }
}

/// Writes a group's rows, linked into their chains, in one transaction.
async fn write(
    pool: &Pool<AsyncPgConnection>,
    mut group: neutral::ReadRecords,
) -> Result<(), StoreError> {
    let mut c = pool.get().await.map_err(pool_error)?;
    c.transaction::<_, TxError, _>(async |c| {
        crate::chain::chain(c, &mut group).await?;
        let neutral::ReadRecords { api, tool } = group;
        insert_rows!(c, api_audit_log::table, AuditRow, api);
        insert_rows!(c, tool_audit_log::table, ToolAuditRow, tool);
        Ok(())
    })
    .await
    .map_err(StoreError::from)
}
