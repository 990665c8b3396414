//! Logging that can never fail a request or the process: lines go to standard error through a
//! non-blocking writer, and a sink that is full, closed or gone loses lines, which are counted,
//! instead of blocking or panicking.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tracing_appender::non_blocking::{ErrorCounter, NonBlockingBuilder, WorkerGuard};

use crate::cli::LogFormat;

/// Lines waiting for the sink at most; past it new lines are dropped, not waited for.
const BUFFERED_LINES: usize = 16_384;

/// How long the process waits at exit for buffered lines to reach the sink.
const FLUSH_AT_EXIT: Duration = Duration::from_millis(1500);

/// Keeps the log writer running; [`Logging::finish`] flushes what is buffered.
pub(crate) struct Logging {
    guard: WorkerGuard,
    dropped: DroppedLines,
}

impl Logging {
    /// Flushes the buffered lines, waiting for a stalled sink no longer than [`FLUSH_AT_EXIT`].
    /// The writer's own shutdown prints to standard output when the sink is stalled, which
    /// panics when that is broken too: it runs on a thread of its own that nothing waits for
    /// past the bound.
    pub(crate) fn finish(self) {
        let (done, finished) = std::sync::mpsc::channel();
        let guard = self.guard;
        let flushing =
            std::thread::Builder::new().name("recruitd-log-flush".into()).spawn(move || {
                drop(guard);
                let _ = done.send(());
            });
        if flushing.is_ok() {
            let _ = finished.recv_timeout(FLUSH_AT_EXIT);
        }
    }

    /// Counts the lines lost so far: dropped while the buffer was full, or refused by the sink.
    pub(crate) fn dropped_lines(&self) -> DroppedLines {
        self.dropped.clone()
    }
}

/// A count of the log lines that never reached the sink.
#[derive(Clone)]
pub(crate) struct DroppedLines {
    queue: ErrorCounter,
    sink: Arc<AtomicU64>,
}

impl DroppedLines {
    pub(crate) fn get(&self) -> u64 {
        self.sink.load(Ordering::Relaxed) + self.queue.dropped_lines() as u64
    }
}

/// Standard error as a sink that never fails: a write it refuses (a closed pipe, a full disk) is
/// counted and forgotten.
struct Stderr {
    failed: Arc<AtomicU64>,
}

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if io::stderr().write_all(buf).is_err() {
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let _ = io::stderr().flush();
        Ok(())
    }
}

/// Installs the global subscriber: `RUST_LOG` (default `info`), `format`, standard error.
pub(crate) fn init(format: LogFormat) -> Logging {
    let failed = Arc::new(AtomicU64::new(0));
    let (writer, guard) = NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(BUFFERED_LINES)
        .thread_name("recruitd-log")
        .finish(Stderr { failed: Arc::clone(&failed) });
    let dropped = DroppedLines { queue: writer.error_counter(), sink: failed };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = io::IsTerminal::is_terminal(&io::stderr());
    // The subscriber's own report of a failed write goes to standard error with `eprintln!`,
    // which panics when standard error is broken: off. The writer counts failures instead.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(ansi)
        .log_internal_errors(false);
    match format {
        LogFormat::Human => builder.init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
    Logging { guard, dropped }
}
