//! Group commit of the records of privacy ledger reads, for both stores: concurrent reads hand
//! their audit rows to one task, which writes every record waiting in one transaction (one lock
//! of each chain's head, one commit, one flush of the log) and then answers each read. A read
//! returns its page only once its record is committed; when the shared transaction fails,
//! every read of the group gets the error and none of their records is written.
//!
//! What the transaction is belongs to the store: it hands [`Recorder::record`] the function
//! that writes a group.

use std::future::Future;
use std::sync::OnceLock;

use recruit_ports::StoreError;
use recruit_ports::rows::{self as neutral, ReadRecords};
use tokio::sync::{mpsc, oneshot};

/// The most records one transaction writes.
const GROUP: usize = 512;

/// How many records may wait for a group at once; a read past that waits to hand its record.
const WAITING: usize = 4 * GROUP;

/// A group's write under way, as a store's writer returns it.
pub type GroupWrite =
    std::pin::Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'static>>;

struct Job {
    api: neutral::AuditRow,
    tool: Option<neutral::ToolAuditRow>,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// The task that commits records in groups, started at the first read.
#[derive(Default)]
pub struct Recorder(OnceLock<mpsc::Sender<Job>>);

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("started", &self.0.get().is_some()).finish()
    }
}

impl Recorder {
    /// Commits the audit rows of a read, with whatever other reads' rows wait meanwhile; returns
    /// once they are committed, or with the error that failed the group. `writer` makes, at the
    /// first read, the function the task writes each group with, in one transaction; it must
    /// not hold the store the recorder belongs to, or the task would keep it alive.
    pub async fn record<W, F>(
        &self,
        writer: impl FnOnce() -> W,
        api: neutral::AuditRow,
        tool: Option<neutral::ToolAuditRow>,
    ) -> Result<(), StoreError>
    where
        W: Fn(ReadRecords) -> F + Send + 'static,
        F: Future<Output = Result<(), StoreError>> + Send + 'static,
    {
        let sender = self.0.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(WAITING);
            tokio::spawn(run(writer(), receiver));
            sender
        });
        let (done, answer) = oneshot::channel();
        let gone = || StoreError::Unavailable("the recorder of reads has stopped".into());
        sender.send(Job { api, tool, done }).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

async fn run<W, F>(write: W, mut receiver: mpsc::Receiver<Job>)
where
    W: Fn(ReadRecords) -> F,
    F: Future<Output = Result<(), StoreError>>,
{
    let mut jobs = Vec::with_capacity(GROUP);
    while receiver.recv_many(&mut jobs, GROUP).await > 0 {
        let mut group = ReadRecords::default();
        let mut waiting = Vec::with_capacity(jobs.len());
        for Job { api, tool, done } in jobs.drain(..) {
            group.api.push(api);
            group.tool.extend(tool);
            waiting.push(done);
        }
        let written = write(group).await;
        for done in waiting {
            let _ = done.send(match &written {
                Ok(()) => Ok(()),
                Err(e) => Err(e.for_each_caller()),
            });
        }
    }
}
