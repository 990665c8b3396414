//! Log streams: the ledger's entries pushed to an organization's SIEM. Each event is the
//! entry's export line ([`crate::export::line`]: id, organization, chain position, hash and
//! previous hash), so that a receiver dedups by id, finds a gap by position and checks the
//! chain with the same code as an export. This module holds the destinations' wire formats:
//! the HTTPS destination's batches signed per Standard Webhooks ([`webhook`]), Splunk HTTP
//! Event Collector's envelope and answers ([`splunk`]), and the RFC 5424 messages in RFC 5425
//! frames of syslog over TLS ([`syslog`]).

pub mod splunk;
pub mod syslog;
pub mod webhook;
