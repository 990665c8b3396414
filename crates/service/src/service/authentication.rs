//! Authentication: a presented secret becomes a [`Caller`], or UNAUTHENTICATED, with the
//! client address's quota of failures charged.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use recruit_domain::{ApiTokenId, ErrorCode, Timestamp};
use recruit_ports::StoreError;
use subtle::ConstantTimeEq;

use super::Service;
use crate::auth::{SecretKind, has_shape, hash_secret};
use crate::error::ServiceError;
use crate::operation::Caller;

impl Service {
    /// Authenticates a secret presented from `client_ip`. Missing, malformed, unknown, expired
    /// and revoked credentials, and those of a deactivated user, are all `UNAUTHENTICATED`, alike, and each is charged to the
    /// client's address; an address over its quota of failures is refused with RATE_LIMITED
    /// before its credential is looked at.
    pub async fn authenticate(
        &self,
        secret: Option<&str>,
        client_ip: Option<IpAddr>,
    ) -> Result<Caller, ServiceError> {
        self.charged(client_ip, self.verify(secret, SecretKind::ApiToken)).await
    }

    /// Runs `verify`, a check of a credential presented from `client_ip`: an address over its
    /// quota of failures is refused with RATE_LIMITED before it runs, and an UNAUTHENTICATED
    /// answer is charged to the address.
    pub(super) async fn charged<T>(
        &self,
        client_ip: Option<IpAddr>,
        verify: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, ServiceError> {
        self.clock.admit()?;
        self.limits.before_authentication(client_ip)?;
        match verify.await {
            Err(e) if e.code == ErrorCode::Unauthenticated => {
                let rate_limit = self.limits.failed_authentication(client_ip)?;
                Err(ServiceError { rate_limit: rate_limit.map(Box::new), ..e })
            }
            verified => verified,
        }
    }

    /// The caller a secret of `kind` belongs to, if it is live. A secret of another kind is
    /// refused before any look-up, like a malformed one.
    pub(super) async fn verify(
        &self,
        secret: Option<&str>,
        kind: SecretKind,
    ) -> Result<Caller, ServiceError> {
        let Some(secret) = secret else {
            return Err(ServiceError { no_credential: true, ..ServiceError::unauthenticated() });
        };
        if !has_shape(secret, kind.prefix()) {
            return Err(ServiceError::unauthenticated());
        }
        let hash = hash_secret(secret);
        let credential = match self.store.credential(&hash).await {
            Ok(c) => c,
            Err(StoreError::NotFound) => return Err(ServiceError::unauthenticated()),
            Err(e) => return Err(e.into()),
        };
        // The lookup was by hash; compare again in constant time before trusting the row.
        let same: bool = credential.token.secret_hash.0.ct_eq(&hash.0).into();
        let now = Timestamp::now();
        let expired = credential.token.expires_at.is_some_and(|at| at <= now);
        let user_gone = !credential.user.status.is_active();
        if !same || expired || credential.token.revoked_at.is_some() || user_gone {
            return Err(ServiceError::unauthenticated());
        }
        self.touch(credential.token.id, now).await;
        Ok(Caller { token: credential.token, user: credential.user })
    }

    /// Records a token's use, at most once a minute per token and never failing the request.
    async fn touch(&self, id: ApiTokenId, now: Timestamp) {
        let due = {
            let mut touched =
                self.touched.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let due = touched.get(&id).is_none_or(|at| at.elapsed() >= TOUCH_INTERVAL);
            if due {
                // Tokens not seen for a minute are forgotten now and then: the map holds the
                // tokens in use, not every token ever used.
                if touched.len() >= TOUCHED_CAPACITY {
                    touched.retain(|_, at| at.elapsed() < TOUCH_INTERVAL);
                }
                touched.insert(id, Instant::now());
            }
            due
        };
        if due {
            // Best effort: a failed write of the last use must not fail the request.
            let _ = self.store.touch_token(id, now).await;
        }
    }
}

/// How often a token's last use is written.
const TOUCH_INTERVAL: Duration = Duration::from_secs(60);

/// How many tokens' last writes are remembered before those older than [`TOUCH_INTERVAL`] are
/// forgotten.
const TOUCHED_CAPACITY: usize = 4096;
