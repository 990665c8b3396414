//! The server's scheduled jobs: idempotency keys purged, the chains' heads signed, the months
//! to come prepared, stalled writes ended, and retention. Each job is a small type saying when
//! it first runs, how often, and what one run does; [`spawn`] runs it for as long as the
//! server serves, a failed run logged and tried again at the next tick.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use recruit_domain::Timestamp;
use recruit_ports::Store;
use recruit_service::Service;
use recruit_service::checkpoint::CheckpointKey;

/// A job the server runs on a schedule.
pub(crate) trait Job: Send + 'static {
    /// Its name, in the logs.
    const NAME: &'static str;

    /// How long after start it first runs.
    fn first(&self) -> Duration;

    /// How long between runs.
    fn every(&self) -> Duration;

    /// One run: what it did, for the log when it did anything, or why it failed.
    fn run(&mut self) -> impl Future<Output = Result<Option<String>, String>> + Send;
}

/// Runs `job` on its schedule, on a task of its own; a run that overruns delays the next one
/// rather than running twice in a row.
pub(crate) fn spawn<J: Job>(mut job: J) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let first = tokio::time::Instant::now() + job.first();
        let mut every = tokio::time::interval_at(first, job.every());
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            match job.run().await {
                Ok(None) => {}
                Ok(Some(done)) => tracing::info!(job = J::NAME, "{done}"),
                Err(why) => {
                    tracing::warn!(job = J::NAME, error = %why, "the scheduled job failed; tried again at its next run")
                }
            }
        }
    })
}

/// This replica's clock checked against the database's every ten seconds (and once before the
/// server starts serving).
pub(crate) struct CheckClock(pub(crate) Arc<Service>);

impl Job for CheckClock {
    const NAME: &'static str = "check the clock";

    fn first(&self) -> Duration {
        Duration::from_secs(10)
    }

    fn every(&self) -> Duration {
        Duration::from_secs(10)
    }

    async fn run(&mut self) -> Result<Option<String>, String> {
        self.0.check_clock().await.map(|()| None).map_err(|e| e.to_string())
    }
}

/// Idempotency keys past their 24 hours, purged every ten minutes from start.
pub(crate) struct PurgeKeys(pub(crate) Arc<Service>);

impl Job for PurgeKeys {
    const NAME: &'static str = "purge idempotency keys";

    fn first(&self) -> Duration {
        Duration::ZERO
    }

    fn every(&self) -> Duration {
        Duration::from_secs(600)
    }

    async fn run(&mut self) -> Result<Option<String>, String> {
        match self.0.purge_expired_keys().await.map_err(|e| e.to_string())? {
            0 => Ok(None),
            n => Ok(Some(format!("{n} expired idempotency keys purged"))),
        }
    }
}

/// The heads of the chains that moved, signed at start and then every `interval`.
pub(crate) struct SignHeads {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) key: CheckpointKey,
    pub(crate) interval: Duration,
}

impl Job for SignHeads {
    const NAME: &'static str = "sign checkpoints";

    fn first(&self) -> Duration {
        Duration::ZERO
    }

    fn every(&self) -> Duration {
        self.interval
    }

    async fn run(&mut self) -> Result<Option<String>, String> {
        let signed = recruit_service::checkpoint::sign_heads(self.store.as_ref(), &self.key, None)
            .await
            .map_err(|e| e.to_string())?;
        Ok((!signed.is_empty()).then(|| format!("{} chains' heads signed", signed.len())))
    }
}

/// The months to come prepared (PostgreSQL's ledger partitions) daily; the migration at start
/// has done it once already.
pub(crate) struct PrepareMonths(pub(crate) Arc<dyn Store>);

impl Job for PrepareMonths {
    const NAME: &'static str = "prepare months";

    fn first(&self) -> Duration {
        self.every()
    }

    fn every(&self) -> Duration {
        Duration::from_secs(24 * 3600)
    }

    async fn run(&mut self) -> Result<Option<String>, String> {
        self.0.prepare().await.map_err(|e| e.to_string())?;
        Ok(None)
    }
}

/// Writes stalled mid-way at their client (a replica frozen or cut off while it held its
/// organization's chain) ended every two seconds, by whichever replica sees them first.
pub(crate) struct EndStalledWrites(pub(crate) Arc<dyn Store>);

impl Job for EndStalledWrites {
    const NAME: &'static str = "end stalled writes";

    fn first(&self) -> Duration {
        self.every()
    }

    fn every(&self) -> Duration {
        Duration::from_secs(2)
    }

    async fn run(&mut self) -> Result<Option<String>, String> {
        // Each one ended is a warning of the store's, naming the session.
        self.0.end_stalled_writes().await.map(|_| None).map_err(|e| e.to_string())
    }
}

/// Retention: what is older than the period exported to `dir`, cut with a signed record and
/// removed, every `interval`, the first time within a minute of start (so that a server
/// restarted more often than the interval still runs it).
pub(crate) struct Retention {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) key: CheckpointKey,
    pub(crate) period: recruit_domain::Retention,
    pub(crate) dir: PathBuf,
    pub(crate) interval: Duration,
}

impl Job for Retention {
    const NAME: &'static str = "ledger retention";

    fn first(&self) -> Duration {
        self.interval.min(Duration::from_secs(60))
    }

    fn every(&self) -> Duration {
        self.interval
    }

    async fn run(&mut self) -> Result<Option<String>, String> {
        let (store, key, dir) = (self.store.as_ref(), &self.key, &self.dir);
        let applied =
            recruit_service::retention::run(store, key, self.period, dir, Timestamp::now())
                .await
                .map_err(|e| e.to_string())?;
        Ok((applied.removed > 0).then(|| {
            format!(
                "{} entries recorded before {} exported and removed",
                applied.removed, applied.before
            )
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use recruit_adapters_sqlite::testkit::TestStore;
    use recruit_domain::OrganizationId;
    use recruit_ports::testkit::ORG_A;

    use super::*;

    /// Counts its runs; fails every other one.
    struct Counting(Arc<AtomicU32>);

    impl Job for Counting {
        const NAME: &'static str = "count";
        fn first(&self) -> Duration {
            Duration::from_secs(5)
        }
        fn every(&self) -> Duration {
            Duration::from_secs(60)
        }
        async fn run(&mut self) -> Result<Option<String>, String> {
            match self.0.fetch_add(1, Ordering::SeqCst) % 2 {
                0 => Ok(None),
                _ => Err("failed".into()),
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_job_runs_first_after_its_delay_then_on_its_interval_through_failures() {
        let runs = Arc::new(AtomicU32::new(0));
        let task = spawn(Counting(Arc::clone(&runs)));
        let at = |secs| tokio::time::sleep(Duration::from_secs(secs));
        at(4).await;
        assert_eq!(runs.load(Ordering::SeqCst), 0, "not before its first delay");
        at(2).await;
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        at(60 * 3).await;
        assert_eq!(runs.load(Ordering::SeqCst), 4, "every minute, a failed run no stop");
        task.abort();
    }

    async fn store() -> (Arc<dyn Store>, tempfile::TempDir) {
        let TestStore { store, dir } = TestStore::world().await;
        (Arc::new(store), dir)
    }

    #[tokio::test]
    async fn signing_the_heads_signs_each_chain_that_moved_once() {
        let (store, _dir) = store().await;
        let key = CheckpointKey::generate();
        let mut job =
            SignHeads { store: Arc::clone(&store), key, interval: Duration::from_secs(1) };
        assert!(job.run().await.unwrap().is_some(), "the world's chains, signed");
        assert_eq!(job.run().await.unwrap(), None, "nothing moved since");
        let org = OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_A));
        let signed = store.checkpoints(Some(org), None).await.unwrap();
        assert!(!signed.is_empty());
    }

    #[tokio::test]
    async fn preparing_months_and_purging_keys_run_on_a_store() {
        let (store, _dir) = store().await;
        PrepareMonths(Arc::clone(&store)).run().await.unwrap();
        let cursor_key = recruit_service::cursor::CursorKey::new(&[1; 32]).unwrap();
        let config = recruit_service::ServiceConfig::new("https://app.example.com", cursor_key);
        let service = Arc::new(Service::new(Arc::clone(&store), config));
        assert_eq!(PurgeKeys(service).run().await.unwrap(), None, "no key has expired");
    }

    #[tokio::test]
    async fn retention_removes_nothing_within_the_period() {
        let (store, dir) = store().await;
        let mut job = Retention {
            store: Arc::clone(&store),
            key: CheckpointKey::generate(),
            period: recruit_domain::Retention::DEFAULT,
            dir: dir.path().to_path_buf(),
            interval: Duration::from_secs(3600),
        };
        assert_eq!(job.first(), Duration::from_secs(60));
        assert_eq!(job.run().await.unwrap(), None, "the world is within two years");
    }
}
