//! An organization's log streams: its privacy ledger delivered, entry by entry in chain order,
//! to a system of its own (a SIEM), as the API shows a stream ([`LogStream`]) and as an owner
//! makes one ([`LogStreamSettings`]). A destination's secrets are write-only: a signing secret
//! is shown once, in the answer that made it, and never again.

use std::fmt;

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::{LogStreamId, Timestamp};

/// The ledger a stream delivers (the privacy ledger is the only one a stream may deliver).
pub const STREAMED_LEDGER: &str = "privacy";

/// A log stream, as shown.
#[derive(Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct LogStream {
    /// The stream's id.
    pub id: LogStreamId,
    /// Its name, for people.
    pub name: String,
    /// The ledger it delivers ([`STREAMED_LEDGER`]).
    pub ledger: String,
    /// Where it delivers.
    pub destination: LogStreamDestination,
    /// How its delivery goes.
    pub state: LogStreamState,
    /// The chain position of the last entry delivered (0: none yet).
    pub delivered_position: u64,
    /// When the last batch was delivered.
    pub delivered_at: Option<Timestamp>,
    /// How many entries of the ledger are not delivered yet.
    pub lag_entries: u64,
    /// Since when delivery has failed without a success, while it does.
    pub failing_since: Option<Timestamp>,
    /// The last failure, while delivery fails.
    pub last_error: Option<DeliveryError>,
    /// When it was made.
    pub created_at: Timestamp,
    /// When its settings last changed.
    pub updated_at: Timestamp,
    /// The destination's signing secret (`whsec_…`): only in the answer that made the stream.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub signing_secret: Option<String>,
}

impl fmt::Debug for LogStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogStream")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("ledger", &self.ledger)
            .field("destination", &self.destination)
            .field("state", &self.state)
            .field("delivered_position", &self.delivered_position)
            .field("delivered_at", &self.delivered_at)
            .field("lag_entries", &self.lag_entries)
            .field("failing_since", &self.failing_since)
            .field("last_error", &self.last_error)
            .field("created_at", &self.created_at)
            .field("updated_at", &self.updated_at)
            .field("signing_secret", &self.signing_secret.as_ref().map(|_| "<shown once>"))
            .finish()
    }
}

/// Where a stream delivers, by its `type`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "type", rename_all = "snake_case"))]
#[non_exhaustive]
pub enum LogStreamDestination {
    /// An HTTPS endpoint that takes batches signed per the Standard Webhooks specification.
    Https {
        /// The endpoint's URL.
        url: String,
        /// How a batch is written ([`BatchFormat::Ndjson`] when left out).
        #[cfg_attr(feature = "serde", serde(default = "ndjson"))]
        format: BatchFormat,
    },
    /// A syslog receiver over TLS (RFC 5425): each entry an RFC 5424 message.
    SyslogTls {
        /// The receiver's host name (checked against its certificate) or address.
        host: String,
        /// Its port ([`SYSLOG_TLS_PORT`] when left out).
        #[cfg_attr(feature = "serde", serde(default = "syslog_port"))]
        port: u16,
        /// The PEM certificates the receiver's certificate must chain to; left out, the
        /// system's roots.
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        ca_certificate: Option<String>,
        /// recruitd's client certificate (PEM, the chain), when the receiver asks for one.
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        client_certificate: Option<String>,
        /// The client certificate's private key (PEM): write-only, sent in settings and never
        /// shown (the server keeps it apart). Left out of a change, the stored one is kept.
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        client_key: Option<WriteOnly>,
        /// HOSTNAME of the messages (`-` when left out).
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        hostname: Option<String>,
        /// APP-NAME of the messages (`recruitd` when left out).
        #[cfg_attr(feature = "serde", serde(default = "app_name"))]
        app_name: String,
        /// The messages' facility, 0 to 23 (13, log audit, when left out).
        #[cfg_attr(feature = "serde", serde(default = "facility"))]
        facility: u8,
    },
    /// A Splunk HTTP Event Collector: each entry an event, acknowledged by indexer
    /// acknowledgement when the collector's token has it.
    SplunkHec {
        /// The collector's base URL (`https://splunk.example.com:8088`): events go to
        /// `/services/collector/event` under it.
        url: String,
        /// The events' index (the token's default when left out).
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        index: Option<String>,
        /// The events' source (`recruitd:privacy` when left out).
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        source: Option<String>,
        /// The events' source type (`recruitd:audit` when left out).
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        sourcetype: Option<String>,
        /// The events' host (the token's default when left out).
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        host: Option<String>,
        /// The channel (a GUID) the stream's requests name; chosen by the server when left
        /// out.
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        channel: Option<String>,
        /// The collector's token: write-only, sent in settings and never shown. Left out of a
        /// change, the stored one is kept.
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        token: Option<WriteOnly>,
        /// Whether batches go compressed (`Content-Encoding: gzip`, which the collector reads):
        /// about a tenth of the bytes on the wire, for the server's CPU (false when left out).
        #[cfg_attr(feature = "serde", serde(default))]
        gzip: bool,
    },
}

impl LogStreamDestination {
    /// Its kind, as its `type` names it, and where it delivers: the URL, or `host:port`.
    pub fn endpoint(&self) -> (&'static str, String) {
        match self {
            Self::Https { url, .. } => ("https", url.clone()),
            Self::SyslogTls { host, port, .. } => ("syslog_tls", format!("{host}:{port}")),
            Self::SplunkHec { url, .. } => ("splunk_hec", url.clone()),
        }
    }
}

/// The port of syslog over TLS (RFC 5425).
pub const SYSLOG_TLS_PORT: u16 = 6514;

#[cfg(feature = "serde")]
fn ndjson() -> BatchFormat {
    BatchFormat::Ndjson
}

#[cfg(feature = "serde")]
fn syslog_port() -> u16 {
    SYSLOG_TLS_PORT
}

#[cfg(feature = "serde")]
fn app_name() -> String {
    "recruitd".into()
}

#[cfg(feature = "serde")]
fn facility() -> u8 {
    13
}

/// A secret given in settings (a private key): kept, never shown, never in `Debug`.
#[derive(Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct WriteOnly(pub String);

impl fmt::Debug for WriteOnly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<write-only>")
    }
}

open_enum! {
    /// How a batch of entries is written in the body of a request.
    pub enum BatchFormat {
        /// One export line per entry, each ended by a line feed (`application/x-ndjson`).
        Ndjson = "NDJSON",
        /// A JSON array of the export lines' objects (`application/json`).
        JsonArray = "JSON_ARRAY",
    }
}

open_enum! {
    /// How a stream's delivery goes.
    pub enum LogStreamState {
        /// Delivering, or caught up.
        Active = "ACTIVE",
        /// Paused by an owner: it keeps its position and delivers nothing until resumed.
        Paused = "PAUSED",
        /// Its last attempts failed; it keeps trying, from the position it holds.
        Failing = "FAILING",
        /// It stopped trying (after a long outage, or an answer that says to stop) until an
        /// owner resumes it; it keeps its position.
        Suspended = "SUSPENDED",
    }
}

impl LogStreamState {
    /// Whether the stream delivers nothing until an owner resumes it (paused or suspended).
    pub fn is_stopped(&self) -> bool {
        matches!(self, Self::Paused | Self::Suspended)
    }
}

/// A failed delivery, as a stream shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct DeliveryError {
    /// When it failed.
    pub at: Timestamp,
    /// The destination's HTTP status, when it answered.
    pub status: Option<u16>,
    /// What went wrong.
    pub message: String,
}

/// A log stream, as an owner makes one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct LogStreamSettings {
    /// Its name, for people.
    pub name: String,
    /// Where it delivers.
    pub destination: LogStreamDestination,
    /// The chain position after which delivery starts: 0 for every retained entry; left out,
    /// the entries recorded from now on.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub after_position: Option<u64>,
    /// Instead of a position, a time in the past: delivery starts with the first entry
    /// recorded at or after it (a backfill of what is retained since).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub after_time: Option<Timestamp>,
}
