//! Logging that can never fail a request or the process: lines go to standard error through a
//! bounded buffer that a thread of its own writes out in batches, and a sink that is full,
//! closed or gone loses lines, which are counted, instead of blocking or panicking.
//!
//! A request's line is copied into the buffer under a lock held for that copy only. The
//! writing thread is woken by the first line of a batch, waits [`BATCH_WAIT`] for more, and
//! writes them with one call: a few wake-ups and writes a second, whatever the request rate,
//! instead of one of each per line (D10).

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

use crate::cli::LogFormat;

/// Bytes of lines waiting for the sink at most; past it new lines are dropped, not waited for.
const BUFFERED_BYTES: usize = 4 << 20;

/// How long the writing thread gathers lines after the first of a batch.
const BATCH_WAIT: Duration = Duration::from_millis(10);

/// How long the process waits at exit for buffered lines to reach the sink.
const FLUSH_AT_EXIT: Duration = Duration::from_millis(1500);

/// The lines between the loggers and the writing thread.
struct Shared {
    pending: Mutex<Pending>,
    wake: Condvar,
    /// Lines lost: dropped while the buffer was full, or refused by the sink.
    dropped: AtomicU64,
}

#[derive(Default)]
struct Pending {
    lines: Vec<u8>,
    closing: bool,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        // A logger that panicked mid-copy leaves whole lines behind it at worst.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes batches to `sink` until closed and drained.
    fn run(&self, sink: &mut impl Write) {
        let mut batch = Vec::new();
        loop {
            let mut pending = self.pending();
            while pending.lines.is_empty() && !pending.closing {
                pending = self.wake.wait(pending).unwrap_or_else(PoisonError::into_inner);
            }
            if pending.lines.is_empty() {
                return;
            }
            if !pending.closing {
                drop(pending);
                std::thread::sleep(BATCH_WAIT);
                pending = self.pending();
            }
            // The buffers trade places: the loggers keep the emptied one's allocation.
            batch.clear();
            std::mem::swap(&mut batch, &mut pending.lines);
            drop(pending);
            if sink.write_all(&batch).and_then(|()| sink.flush()).is_err() {
                let lines = batch.iter().filter(|b| **b == b'\n').count() as u64;
                self.dropped.fetch_add(lines.max(1), Ordering::Relaxed);
            }
        }
    }
}

/// One line's writer: it copies the line into the buffer, or drops it when the buffer is full.
pub(crate) struct Line<'a>(&'a Shared);

impl Write for Line<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut pending = self.0.pending();
        if pending.lines.len() + buf.len() > BUFFERED_BYTES {
            drop(pending);
            self.0.dropped.fetch_add(1, Ordering::Relaxed);
            return Ok(buf.len());
        }
        let first = pending.lines.is_empty();
        pending.lines.extend_from_slice(buf);
        drop(pending);
        if first {
            self.0.wake.notify_one();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The subscriber's writer: every event is formatted whole, then written once.
#[derive(Clone)]
struct Lines(Arc<Shared>);

impl<'a> MakeWriter<'a> for Lines {
    type Writer = Line<'a>;

    fn make_writer(&'a self) -> Line<'a> {
        Line(&self.0)
    }
}

/// A line's time as `tracing-subscriber`'s own timer writes it (`2026-11-27T02:22:56.123456Z`:
/// UTC, microseconds), its date and time of day formatted once a second on each thread.
struct LineTime;

impl FormatTime for LineTime {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        line_time(w, now.as_secs(), now.subsec_micros())
    }
}

/// Writes the text of `seconds` since the epoch and `micros` more to `w`.
fn line_time(w: &mut impl std::fmt::Write, seconds: u64, micros: u32) -> std::fmt::Result {
    thread_local! {
        /// The last second formatted on this thread, and its text to the seconds.
        static SECOND: std::cell::RefCell<(u64, String)> = const {
            std::cell::RefCell::new((u64::MAX, String::new()))
        };
    }
    SECOND.with_borrow_mut(|(second, text)| {
        if *second != seconds {
            *second = seconds;
            text.clear();
            let time =
                i64::try_from(seconds).ok().and_then(|s| chrono::DateTime::from_timestamp(s, 0));
            if let Some(time) = time {
                use std::fmt::Write as _;
                let _ = write!(text, "{}", time.format("%Y-%m-%dT%H:%M:%S"));
            }
        }
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(micros.min(999_999));
        w.write_str(text)?;
        w.write_char('.')?;
        w.write_str(&"000000"[digits.len()..])?;
        w.write_str(digits)?;
        w.write_char('Z')
    })
}

/// Keeps the log writer running; [`Logging::finish`] flushes what is buffered.
pub(crate) struct Logging {
    shared: Arc<Shared>,
    writer: Option<std::thread::JoinHandle<()>>,
}

impl Logging {
    /// Writes the buffered lines out, waiting for a stalled sink no longer than
    /// [`FLUSH_AT_EXIT`]: past it, the writing thread is left behind.
    pub(crate) fn finish(self) {
        self.shared.pending().closing = true;
        self.shared.wake.notify_one();
        let Some(writer) = self.writer else { return };
        let deadline = std::time::Instant::now() + FLUSH_AT_EXIT;
        while !writer.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Counts the lines lost so far: dropped while the buffer was full, or refused by the sink.
    pub(crate) fn dropped_lines(&self) -> DroppedLines {
        DroppedLines(Arc::clone(&self.shared))
    }
}

/// A count of the log lines that never reached the sink.
#[derive(Clone)]
pub(crate) struct DroppedLines(Arc<Shared>);

impl DroppedLines {
    pub(crate) fn get(&self) -> u64 {
        self.0.dropped.load(Ordering::Relaxed)
    }
}

/// Installs the global subscriber: `RUST_LOG` (default `info`), `format`, standard error.
pub(crate) fn init(format: LogFormat) -> Logging {
    let shared = Arc::new(Shared {
        pending: Mutex::new(Pending::default()),
        wake: Condvar::new(),
        dropped: AtomicU64::new(0),
    });
    let writing = Arc::clone(&shared);
    let writer = std::thread::Builder::new()
        .name("recruitd-log".into())
        .spawn(move || writing.run(&mut io::stderr()))
        .ok();
    if writer.is_none() {
        // No thread, no sink: every line is lost, and counted.
        shared.pending().closing = true;
    }
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // The subscriber's own report of a failed write goes to standard error with `eprintln!`,
    // which panics when standard error is broken: off. The writer counts failures instead.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(Lines(Arc::clone(&shared)))
        .with_timer(LineTime)
        .with_ansi(false)
        .log_internal_errors(false);
    match format {
        LogFormat::Human => builder.init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
    Logging { shared, writer }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> Arc<Shared> {
        Arc::new(Shared {
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            dropped: AtomicU64::new(0),
        })
    }

    /// A sink that refuses every write, as a closed pipe does.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_line_time_is_written_as_rfc_3339_in_utc_to_the_microsecond() {
        use chrono::{DateTime, SecondsFormat};
        // The same second twice (its text kept), then others, then the same one again.
        for (seconds, micros) in [
            (1_795_746_176, 123_456),
            (1_795_746_176, 7),
            (0, 0),
            (951_782_400, 999_999),
            (4_102_444_799, 500_000),
            (1_795_746_176, 40),
        ] {
            let expected = DateTime::from_timestamp(seconds as i64, micros * 1000)
                .unwrap()
                .to_rfc3339_opts(SecondsFormat::Micros, true);
            let mut written = String::new();
            line_time(&mut written, seconds, micros).unwrap();
            assert_eq!(written, expected);
        }
    }

    #[test]
    fn lines_reach_the_sink_in_order_and_closing_drains_them() {
        let shared = shared();
        let writing = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            let mut sink = Vec::new();
            writing.run(&mut sink);
            sink
        });
        for n in 0..1000 {
            writeln!(Line(&shared), "line {n}").unwrap();
        }
        shared.pending().closing = true;
        shared.wake.notify_one();
        let written = String::from_utf8(thread.join().unwrap()).unwrap();
        let expected: String = (0..1000).map(|n| format!("line {n}\n")).collect();
        assert_eq!(written, expected);
        assert_eq!(shared.dropped.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_full_buffer_drops_lines_and_a_refusing_sink_loses_them_all_counted() {
        let shared = shared();
        let line = vec![b'x'; 1023].into_iter().chain([b'\n']).collect::<Vec<u8>>();
        // Nothing writes: the buffer fills, and the lines past it are dropped, not waited for.
        let lines = BUFFERED_BYTES / line.len() + 10;
        for _ in 0..lines {
            Line(&shared).write_all(&line).unwrap();
        }
        assert_eq!(shared.dropped.load(Ordering::Relaxed), 10);
        shared.pending().closing = true;
        shared.run(&mut Closed);
        assert_eq!(shared.dropped.load(Ordering::Relaxed), lines as u64);
    }
}
