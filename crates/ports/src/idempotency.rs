//! Idempotency keys of create operations (draft-ietf-httpapi-idempotency-key-header): what a
//! store keeps of a key, and the one rule that decides what a request presenting a key does.
//!
//! A key is stored only with its response, in the transaction of the request's writes: a
//! request that fails, or whose connection or database dies before its commit, leaves nothing
//! behind, and its retry runs anew at once. A request first looks its key up (a replay or a
//! refusal needs no work); the transaction that writes then decides again, authoritatively. Of
//! concurrent requests with one key, one writes; the others find it in flight (on PostgreSQL a
//! transaction-scoped advisory lock, gone with the transaction or its connection) or, once it
//! committed, its response. A key expires some time after its first use (24 hours in the API)
//! and is purged.

use std::time::Duration;

use recruit_domain::{OrganizationId, Timestamp};

/// How long a request told that its key is in flight waits before it retries: about as long
/// as a batch takes to commit.
pub const IN_FLIGHT_RETRY: Duration = Duration::from_secs(1);

/// A request's claim of an idempotency key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyClaim {
    /// The organization the key belongs to: keys are scoped to it.
    pub organization_id: OrganizationId,
    /// The key, 1 to 255 characters.
    pub key: String,
    /// The SHA-256 of the normalised request.
    pub fingerprint: [u8; 32],
    /// When the claim is made.
    pub now: Timestamp,
    /// When a key written now expires.
    pub expires_at: Timestamp,
}

/// A response stored with its key, replayed byte for byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredResponse {
    /// The HTTP status.
    pub status: u16,
    /// The body, exactly as sent.
    pub body: Vec<u8>,
}

/// What a store holds for a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredKey {
    /// The fingerprint of the request that used it.
    pub fingerprint: Vec<u8>,
    /// When it expires.
    pub expires_at: Timestamp,
    /// The response of the request that used it.
    pub response: StoredResponse,
}

/// What a claim found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The key is free (never used, or expired): run the request, which writes it.
    Granted,
    /// Another request with this key is being written; retry after `until`.
    InFlight {
        /// When to retry.
        until: Timestamp,
    },
    /// The key was used for a request with another fingerprint.
    OtherRequest,
    /// The request completed with this response: replay it.
    Completed(StoredResponse),
}

impl KeyClaim {
    /// What this claim finds when the store holds `stored` for the key.
    pub fn decide(&self, stored: Option<&StoredKey>) -> Claim {
        match stored {
            None => Claim::Granted,
            Some(stored) if stored.expires_at <= self.now => Claim::Granted,
            Some(stored) if stored.fingerprint != self.fingerprint => Claim::OtherRequest,
            Some(stored) => Claim::Completed(stored.response.clone()),
        }
    }

    /// What a claim finds while another request writes the key.
    pub fn in_flight(&self) -> Claim {
        let until = self.now.checked_add_duration(IN_FLIGHT_RETRY).unwrap_or(Timestamp::MAX);
        Claim::InFlight { until }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_micros(seconds * 1_000_000).unwrap()
    }

    fn claim(fingerprint: u8, now: i64) -> KeyClaim {
        KeyClaim {
            organization_id: OrganizationId::nil(),
            key: "k".into(),
            fingerprint: [fingerprint; 32],
            now: at(now),
            expires_at: at(now + 86_400),
        }
    }

    fn stored(fingerprint: u8) -> StoredKey {
        StoredKey {
            fingerprint: vec![fingerprint; 32],
            expires_at: at(86_400),
            response: StoredResponse { status: 201, body: b"{}".to_vec() },
        }
    }

    #[test]
    fn a_new_or_expired_key_is_granted() {
        assert_eq!(claim(1, 10).decide(None), Claim::Granted);
        assert_eq!(claim(2, 86_400).decide(Some(&stored(1))), Claim::Granted);
    }

    #[test]
    fn a_live_key_replays_its_request_and_refuses_another() {
        assert!(
            matches!(claim(1, 10).decide(Some(&stored(1))), Claim::Completed(r) if r.status == 201)
        );
        assert_eq!(claim(2, 10).decide(Some(&stored(1))), Claim::OtherRequest);
        assert_eq!(claim(1, 10).in_flight(), Claim::InFlight { until: at(11) });
    }
}
