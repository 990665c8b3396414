//! Idempotency keys of create operations (draft-ietf-httpapi-idempotency-key-header): what a
//! store keeps of a key, and the one rule that decides what a request presenting a key does.
//!
//! A request claims its key with the fingerprint of what it asks. The first claim is granted
//! with a lease for as long as the request may run; the request then either completes (its
//! response is stored with the key, in the transaction of its writes) or fails and releases
//! the key. Later claims of the key get the stored response to replay, learn that the key is
//! in flight, or that it was used for another request. A key expires some time after its
//! first claim (24 hours in the API) and is purged; a lease that lapsed (the process that held
//! it died) is granted again.

use recruit_domain::{OrganizationId, Timestamp};

use crate::StoreError;

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
    /// Until when a granted claim holds the key while its request runs.
    pub lease_until: Timestamp,
    /// When a key granted now expires.
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
    /// The fingerprint of the request that claimed it.
    pub fingerprint: Vec<u8>,
    /// Until when the request that claimed it holds it; `None` once it completed.
    pub locked_until: Option<Timestamp>,
    /// When it expires.
    pub expires_at: Timestamp,
    /// The response, once the request completed.
    pub response: Option<StoredResponse>,
}

/// What a claim found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The key is the claimant's until its lease ends: run the request.
    Granted,
    /// Another request with this key is running, until at most `until`.
    InFlight {
        /// When that request's lease ends.
        until: Timestamp,
    },
    /// The key was used for a request with another fingerprint.
    OtherRequest,
    /// The request completed with this response: replay it.
    Completed(StoredResponse),
}

impl KeyClaim {
    /// Whether completing the key updated its row (`updated` rows): if not, the request no
    /// longer holds the key (its lease lapsed and another request took it), a `Conflict`.
    pub fn completed(&self, updated: usize) -> Result<(), StoreError> {
        if updated == 1 {
            return Ok(());
        }
        Err(StoreError::Conflict(format!(
            "the idempotency key {:?} is no longer held by this request",
            self.key
        )))
    }

    /// What this claim finds when the store holds `stored` for the key, and whether the store
    /// must write this claim over it (a new key, an expired one, or a lease that lapsed).
    pub fn decide(&self, stored: Option<&StoredKey>) -> (Claim, bool) {
        let Some(stored) = stored else { return (Claim::Granted, true) };
        if stored.expires_at <= self.now {
            return (Claim::Granted, true);
        }
        if stored.fingerprint != self.fingerprint {
            return (Claim::OtherRequest, false);
        }
        if let Some(response) = &stored.response {
            return (Claim::Completed(response.clone()), false);
        }
        match stored.locked_until {
            Some(until) if until > self.now => (Claim::InFlight { until }, false),
            // The request that held it stopped without completing or releasing it.
            _ => (Claim::Granted, true),
        }
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
            lease_until: at(now + 30),
            expires_at: at(now + 86_400),
        }
    }

    fn stored(fingerprint: u8, locked_until: Option<i64>, response: bool) -> StoredKey {
        StoredKey {
            fingerprint: vec![fingerprint; 32],
            locked_until: locked_until.map(at),
            expires_at: at(86_400),
            response: response.then(|| StoredResponse { status: 201, body: b"{}".to_vec() }),
        }
    }

    #[test]
    fn a_new_expired_or_abandoned_key_is_granted_and_written() {
        assert_eq!(claim(1, 10).decide(None), (Claim::Granted, true));
        assert_eq!(claim(2, 86_400).decide(Some(&stored(1, None, true))), (Claim::Granted, true));
        assert_eq!(claim(1, 40).decide(Some(&stored(1, Some(30), false))), (Claim::Granted, true));
    }

    #[test]
    fn a_live_key_replays_refuses_or_waits_and_is_not_written() {
        let done = stored(1, None, true);
        let (found, write) = claim(1, 10).decide(Some(&done));
        assert!(matches!(found, Claim::Completed(r) if r.status == 201) && !write);
        assert_eq!(claim(2, 10).decide(Some(&done)), (Claim::OtherRequest, false));
        let running = stored(1, Some(30), false);
        assert_eq!(claim(1, 10).decide(Some(&running)), (Claim::InFlight { until: at(30) }, false));
        assert_eq!(claim(2, 10).decide(Some(&running)), (Claim::OtherRequest, false));
    }
}
