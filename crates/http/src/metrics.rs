//! Metrics in the Prometheus (OpenMetrics) text format, served at `GET /metrics`: requests and
//! their latency by route and status, the database pool, audit ledger records written, client
//! connections, operations refused by rate limits, and log lines lost.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use recruit_ports::PoolStatus;
use recruit_service::limits::POLICIES;

#[derive(Clone, Debug, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: &'static str,
    status: u16,
}

/// Hashed by the route's length and the status: labels that are equal hash alike, and the few
/// routes of one length are told apart by `Eq`. Hashing the route's text cost more than the
/// rest of counting a request.
impl std::hash::Hash for RequestLabels {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(((self.route.len() as u64) << 16) | u64::from(self.status));
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PolicyLabels {
    policy: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LedgerLabels {
    ledger: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StreamLabels {
    stream: String,
}

/// The figures of the log streams this process delivers.
pub(crate) type StreamFigures =
    Box<dyn Fn() -> Vec<(uuid::Uuid, recruit_service::log_stream::deliver::Figures)> + Send + Sync>;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HeavyReadLabels {
    on: &'static str,
}

/// Totals so far, by label value.
type Totals<const N: usize> = [(&'static str, u64); N];

/// Where the service's own counts come from: rate-limit refusals per policy, audit ledger
/// entries written per ledger, and heavy reads on a standby and fallen back to the primary,
/// each the total so far.
pub(crate) type ServiceCounts =
    Box<dyn Fn() -> (Totals<{ POLICIES.len() }>, Totals<2>, Totals<2>) + Send + Sync>;

/// Raises `counter` to `total`, counted elsewhere.
fn catch_up(counter: &Counter, total: u64) {
    let counted = counter.get();
    if total > counted {
        counter.inc_by(total - counted);
    }
}

fn latency_histogram() -> Histogram {
    // 0.5 ms to about 16 s.
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// The server's metrics and where the pool's numbers come from.
pub(crate) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RequestLabels, Histogram, fn() -> Histogram>,
    ledger_records: Family<LedgerLabels, Counter>,
    pool_max: Gauge,
    pool_open: Gauge,
    pool_idle: Gauge,
    pool_waiting: Gauge,
    pool: Option<Box<dyn Fn() -> PoolStatus + Send + Sync>>,
    connections_open: Gauge,
    connections_refused: Counter,
    connections_idle_closed: Counter,
    log_lines_dropped: Counter,
    log_drops: Option<Box<dyn Fn() -> u64 + Send + Sync>>,
    rate_limited: Family<PolicyLabels, Counter>,
    heavy_reads: Family<HeavyReadLabels, Counter>,
    service_counts: Option<ServiceCounts>,
    stream_lag_entries: Family<StreamLabels, Gauge>,
    stream_lag_seconds: Family<StreamLabels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    stream_delivered: Family<StreamLabels, Counter>,
    stream_failed: Family<StreamLabels, Counter>,
    stream_retried: Family<StreamLabels, Counter>,
    streams: Option<StreamFigures>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let mut registry = Registry::with_prefix("recruitd");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by route template and status",
            requests.clone(),
        );
        let latency = Family::<RequestLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        registry.register(
            "http_request_duration_seconds",
            "Time from a request's head to its answer, by route template and status",
            latency.clone(),
        );
        let ledger_records = Family::<LedgerLabels, Counter>::default();
        registry.register(
            "audit_ledger_records",
            "Audit ledger entries written, by ledger (api: every read of the privacy ledger and every recording of accesses; tool: those through the tool interface)",
            ledger_records.clone(),
        );
        let [pool_max, pool_open, pool_idle, pool_waiting] =
            std::array::from_fn(|_| Gauge::default());
        registry.register(
            "db_pool_max_connections",
            "The most database connections the pool opens",
            pool_max.clone(),
        );
        registry.register(
            "db_pool_open_connections",
            "Database connections open now",
            pool_open.clone(),
        );
        registry.register(
            "db_pool_idle_connections",
            "Open database connections not in use",
            pool_idle.clone(),
        );
        registry.register(
            "db_pool_waiting_requests",
            "Requests waiting for a database connection",
            pool_waiting.clone(),
        );
        let connections_open = Gauge::default();
        registry.register(
            "http_connections_open",
            "Client connections open now",
            connections_open.clone(),
        );
        let connections_refused = Counter::default();
        registry.register(
            "http_connections_refused",
            "Client connections closed on arrival because the most allowed were open",
            connections_refused.clone(),
        );
        let connections_idle_closed = Counter::default();
        registry.register(
            "http_connections_idle_closed",
            "Client connections closed by the server after sitting idle for the idle timeout",
            connections_idle_closed.clone(),
        );
        let log_lines_dropped = Counter::default();
        registry.register(
            "log_lines_dropped",
            "Log lines lost because the log sink was full, closed or failing",
            log_lines_dropped.clone(),
        );
        let rate_limited = Family::<PolicyLabels, Counter>::default();
        registry.register(
            "rate_limited",
            "Operations refused with RATE_LIMITED, by policy (reads, ledger_reads, writes: per token; auth_failures: per client address), through either interface",
            rate_limited.clone(),
        );
        let heavy_reads = Family::<HeavyReadLabels, Counter>::default();
        registry.register(
            "heavy_reads",
            "With --read-database-url: exports, verifications and reviews run on a standby (on=standby), and those run on the primary because no standby had caught up in time or could be reached (on=fallback)",
            heavy_reads.clone(),
        );
        let stream_lag_entries = Family::<StreamLabels, Gauge>::default();
        registry.register(
            "stream_lag_entries",
            "Entries of its ledger a log stream this process delivers has not delivered yet",
            stream_lag_entries.clone(),
        );
        let stream_lag_seconds =
            Family::<StreamLabels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
        registry.register(
            "stream_lag_seconds",
            "How long a log stream this process delivers has been behind its ledger (0: caught up)",
            stream_lag_seconds.clone(),
        );
        let stream_delivered = Family::<StreamLabels, Counter>::default();
        registry.register(
            "stream_delivered_entries",
            "Ledger entries a log stream delivered (acknowledged by its destination), by this process",
            stream_delivered.clone(),
        );
        let stream_failed = Family::<StreamLabels, Counter>::default();
        registry.register(
            "stream_failed_attempts",
            "Attempts to deliver a log stream's batch that failed, by this process",
            stream_failed.clone(),
        );
        let stream_retried = Family::<StreamLabels, Counter>::default();
        registry.register(
            "stream_retried_batches",
            "Batches of a log stream sent again after a failed attempt, by this process",
            stream_retried.clone(),
        );
        Self {
            registry,
            requests,
            latency,
            ledger_records,
            pool_max,
            pool_open,
            pool_idle,
            pool_waiting,
            pool: None,
            connections_open,
            connections_refused,
            connections_idle_closed,
            log_lines_dropped,
            log_drops: None,
            rate_limited,
            heavy_reads,
            service_counts: None,
            stream_lag_entries,
            stream_lag_seconds,
            stream_delivered,
            stream_failed,
            stream_retried,
            streams: None,
        }
    }

    /// Reads the figures of the log streams this process delivers at every scrape.
    pub(crate) fn set_stream_figures(&mut self, figures: StreamFigures) {
        self.streams = Some(figures);
    }

    /// Reads the service's counts (rate-limit refusals, audit ledger entries written) from
    /// `counts` at every scrape.
    pub(crate) fn set_service_counts(&mut self, counts: ServiceCounts) {
        self.service_counts = Some(counts);
    }

    /// Reads the pool's numbers from `status` at every scrape.
    pub(crate) fn set_pool_status(&mut self, status: Box<dyn Fn() -> PoolStatus + Send + Sync>) {
        self.pool = Some(status);
    }

    /// Reads the count of lost log lines from `dropped` at every scrape.
    pub(crate) fn set_log_drops(&mut self, dropped: Box<dyn Fn() -> u64 + Send + Sync>) {
        self.log_drops = Some(dropped);
    }

    pub(crate) fn connection_opened(&self) {
        self.connections_open.inc();
    }

    pub(crate) fn connection_closed(&self) {
        self.connections_open.dec();
    }

    pub(crate) fn connection_refused(&self) {
        self.connections_refused.inc();
    }

    pub(crate) fn connection_idle_closed(&self) {
        self.connections_idle_closed.inc();
    }

    /// Counts one answered request.
    pub(crate) fn observe(&self, route: &'static str, status: u16, seconds: f64) {
        let labels = RequestLabels { route, status };
        self.requests.get_or_create(&labels).inc();
        self.latency.get_or_create(&labels).observe(seconds);
    }

    /// The metrics in the OpenMetrics text format.
    pub(crate) fn encode(&self) -> String {
        if let Some(pool) = &self.pool {
            let status = pool();
            let as_gauge = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
            self.pool_max.set(as_gauge(status.max_size));
            self.pool_open.set(as_gauge(status.size));
            self.pool_idle.set(as_gauge(status.available));
            self.pool_waiting.set(as_gauge(status.waiting));
        }
        if let Some(dropped) = &self.log_drops {
            catch_up(&self.log_lines_dropped, dropped());
        }
        if let Some(counts) = &self.service_counts {
            let (refusals, records, heavy) = counts();
            for (policy, total) in refusals {
                catch_up(&self.rate_limited.get_or_create(&PolicyLabels { policy }), total);
            }
            for (ledger, total) in records {
                catch_up(&self.ledger_records.get_or_create(&LedgerLabels { ledger }), total);
            }
            for (on, total) in heavy {
                catch_up(&self.heavy_reads.get_or_create(&HeavyReadLabels { on }), total);
            }
        }
        if let Some(streams) = &self.streams {
            for (id, figures) in streams() {
                let stream = recruit_domain::LogStreamId::from_uuid(id).to_string();
                let labels = StreamLabels { stream };
                catch_up(&self.stream_delivered.get_or_create(&labels), figures.delivered);
                catch_up(&self.stream_failed.get_or_create(&labels), figures.failed);
                catch_up(&self.stream_retried.get_or_create(&labels), figures.retried);
                // A stream another process holds is that process's to report.
                if figures.held {
                    let lag = i64::try_from(figures.lag_entries).unwrap_or(i64::MAX);
                    self.stream_lag_entries.get_or_create(&labels).set(lag);
                    self.stream_lag_seconds.get_or_create(&labels).set(figures.lag_seconds);
                } else {
                    self.stream_lag_entries.remove(&labels);
                    self.stream_lag_seconds.remove(&labels);
                }
            }
        }
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}
