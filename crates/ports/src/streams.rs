//! Log streams as stored: an organization's stream (its settings and how far its delivery has
//! got) and the lease that lets one process at a time deliver it ([`LogStreams`]).
//!
//! A lease is a holder (a process's id) and an epoch, and runs out at a time: a process
//! claims streams whose lease is free or run out, renews its own, and every change it makes to
//! a stream's delivery names the epoch it holds. A process that lost its lease (it stalled, or
//! another claimed the stream after the lease ran out) changes nothing: the cursor moves only
//! under the epoch that holds it, so a stream is never delivered out of order and never skips.

use std::fmt;

use async_trait::async_trait;
use recruit_domain::{OrganizationId, Timestamp, UserId, Uuid};

use crate::{ReadRecord, StoreError};

/// How a stream's delivery goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    /// Delivering, or nothing to deliver.
    Ok,
    /// Its last attempts failed; it keeps trying.
    Failing,
    /// It stopped trying until an owner resumes it.
    Suspended,
}

impl Health {
    /// The value as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::Failing => "FAILING",
            Self::Suspended => "SUSPENDED",
        }
    }

    /// The health of a stored value.
    pub fn parse(stored: &str) -> Option<Self> {
        [Self::Ok, Self::Failing, Self::Suspended].into_iter().find(|h| h.as_str() == stored)
    }
}

/// A stream as stored.
#[derive(Clone, PartialEq, Eq)]
pub struct StreamRecord {
    /// The organization whose ledger it delivers.
    pub organization_id: OrganizationId,
    /// The stream's id.
    pub id: Uuid,
    /// Its name, for people.
    pub name: String,
    /// The ledger it delivers (`privacy`).
    pub ledger: String,
    /// Where it delivers, as the service describes it (no secret).
    pub destination: serde_json::Value,
    /// The destination's secrets (signing secrets, tokens, keys): write-only, never shown or
    /// logged.
    pub secrets: serde_json::Value,
    /// Whether an owner paused it.
    pub paused: bool,
    /// The user who made it: its deliveries' reads are recorded as theirs.
    pub created_by: UserId,
    /// When it was made.
    pub created_at: Timestamp,
    /// When its settings last changed.
    pub updated_at: Timestamp,
    /// How far its delivery has got.
    pub delivery: Delivery,
}

impl fmt::Debug for StreamRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamRecord")
            .field("organization_id", &self.organization_id)
            .field("id", &self.id)
            .field("name", &self.name)
            .field("ledger", &self.ledger)
            .field("destination", &self.destination)
            .field("secrets", &"<write-only>")
            .field("paused", &self.paused)
            .field("created_by", &self.created_by)
            .field("created_at", &self.created_at)
            .field("updated_at", &self.updated_at)
            .field("delivery", &self.delivery)
            .finish()
    }
}

/// How far a stream's delivery has got, and who delivers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The chain position of the last entry delivered (0: none yet).
    pub position: u64,
    /// That entry's hash (the chain's genesis before the first).
    pub hash: [u8; 32],
    /// When it was delivered.
    pub at: Option<Timestamp>,
    /// How delivery goes.
    pub health: Health,
    /// Since when it has failed without a success, while it does.
    pub failing_since: Option<Timestamp>,
    /// Attempts of the batch now being delivered.
    pub attempts: u32,
    /// Not before when the next attempt is made.
    pub next_attempt_at: Option<Timestamp>,
    /// The last failure, as the service describes it.
    pub last_error: Option<serde_json::Value>,
    /// A batch sent and awaiting the destination's acknowledgement, as the service keeps it.
    pub pending: Option<serde_json::Value>,
    /// The lease: its holder, its epoch and when it runs out (no holder: never claimed).
    pub lease: Option<(Uuid, u64, Timestamp)>,
    /// The number of claims so far: the next claim's epoch is one more.
    pub epoch: u64,
}

impl Delivery {
    /// A delivery that starts after `position` (with its `hash`), never attempted.
    pub fn starting(position: u64, hash: [u8; 32]) -> Self {
        Self {
            position,
            hash,
            at: None,
            health: Health::Ok,
            failing_since: None,
            attempts: 0,
            next_attempt_at: None,
            last_error: None,
            pending: None,
            lease: None,
            epoch: 0,
        }
    }
}

/// A stream held by a process: what every change to its delivery names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The stream's organization.
    pub organization_id: OrganizationId,
    /// The stream.
    pub stream_id: Uuid,
    /// The process holding it.
    pub holder: Uuid,
    /// The claim it holds it by.
    pub epoch: u64,
}

/// A failed attempt of a leased stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The stream's health from now.
    pub health: Health,
    /// The failure, as the service describes it.
    pub error: serde_json::Value,
    /// Not before when to try again.
    pub next_attempt_at: Timestamp,
    /// When it failed.
    pub at: Timestamp,
}

/// An organization's log streams, and their deliveries by one process at a time.
#[async_trait]
pub trait LogStreams: Send + Sync {
    /// Stores a new stream with the record of the request that made it, in one transaction.
    /// `Conflict` when its id is taken; `NotFound` when its organization is not stored.
    async fn create_stream(
        &self,
        stream: &StreamRecord,
        record: &ReadRecord,
    ) -> Result<(), StoreError>;

    /// The organization's streams, oldest first.
    async fn streams(&self, organization: OrganizationId) -> Result<Vec<StreamRecord>, StoreError>;

    /// One stream of the organization. `NotFound` when it has none with this id.
    async fn stream(
        &self,
        organization: OrganizationId,
        id: Uuid,
    ) -> Result<StreamRecord, StoreError>;

    /// Replaces a stream's settings (name, destination, secrets, paused, `updated_at`) with
    /// `stream`'s, its delivery as it is, with the request's record; with `resume`, a suspended
    /// stream is healthy again, its attempts at zero. `NotFound` when there is none.
    async fn update_stream(
        &self,
        stream: &StreamRecord,
        resume: bool,
        record: &ReadRecord,
    ) -> Result<(), StoreError>;

    /// Removes a stream, with the request's record. `NotFound` when there is none.
    async fn delete_stream(
        &self,
        organization: OrganizationId,
        id: Uuid,
        record: &ReadRecord,
    ) -> Result<(), StoreError>;

    /// Claims for `holder`, until `until`, at most `limit` streams that are neither paused nor
    /// suspended and whose lease is free or ran out before `now`; each claim's epoch is one more
    /// than the stream's last. The leases claimed.
    async fn claim_streams(
        &self,
        holder: Uuid,
        now: Timestamp,
        until: Timestamp,
        limit: u32,
    ) -> Result<Vec<Lease>, StoreError>;

    /// Keeps `lease` until `until`. False when it is no longer held (claimed again, the stream
    /// gone): its holder stops delivering.
    async fn renew_lease(&self, lease: &Lease, until: Timestamp) -> Result<bool, StoreError>;

    /// Records that the entries after `from` up to `to` (with `hash`) are delivered, at `at`:
    /// healthy, no attempts, no batch pending; the stream as it then stands (its holder sends
    /// on from it without reading it again). None, nothing changed, unless `lease` holds the
    /// stream and its delivery stands at `from`.
    async fn advance_stream(
        &self,
        lease: &Lease,
        from: u64,
        to: u64,
        hash: [u8; 32],
        at: Timestamp,
    ) -> Result<Option<StreamRecord>, StoreError>;

    /// Records a failed attempt: one more attempt, the failure, the health, when to try next.
    /// False, nothing changed, unless `lease` holds the stream.
    async fn stream_failed(&self, lease: &Lease, failure: &Failure) -> Result<bool, StoreError>;

    /// Keeps the batch awaiting the destination's acknowledgement (none: none awaited). False,
    /// nothing changed, unless `lease` holds the stream.
    async fn set_pending(
        &self,
        lease: &Lease,
        pending: Option<&serde_json::Value>,
    ) -> Result<bool, StoreError>;

    /// Gives `lease` up at `now` (a process stopping), so that another claims the stream at
    /// once. Nothing when it is no longer held.
    async fn release_lease(&self, lease: &Lease, now: Timestamp) -> Result<(), StoreError>;
}

impl crate::rows::LogStreamRow {
    /// The row of a stream.
    pub fn new(s: &StreamRecord) -> Self {
        let d = &s.delivery;
        let (holder, epoch_held, expires) = match d.lease {
            Some((holder, epoch, until)) => (Some(holder), Some(epoch), Some(until)),
            None => (None, None, None),
        };
        Self {
            organization_id: s.organization_id.uuid(),
            id: s.id,
            name: s.name.clone(),
            ledger: s.ledger.clone(),
            destination: s.destination.clone(),
            secrets: s.secrets.clone(),
            paused: s.paused,
            created_by: s.created_by.uuid(),
            created_at: s.created_at,
            updated_at: s.updated_at,
            delivered_position: i64::try_from(d.position).unwrap_or(i64::MAX),
            delivered_hash: d.hash.to_vec(),
            delivered_at: d.at,
            health: d.health.as_str().to_owned(),
            failing_since: d.failing_since,
            attempts: i32::try_from(d.attempts).unwrap_or(i32::MAX),
            next_attempt_at: d.next_attempt_at,
            last_error: d.last_error.clone(),
            pending: d.pending.clone(),
            lease_holder: holder,
            lease_epoch: i64::try_from(epoch_held.unwrap_or(d.epoch)).unwrap_or(i64::MAX),
            lease_expires_at: expires,
        }
    }

    /// The stream of a row; fails when a column holds what no stream has.
    pub fn into_stream(self) -> Result<StreamRecord, StoreError> {
        use crate::rows::corrupt;
        let hash = <[u8; 32]>::try_from(self.delivered_hash.as_slice())
            .map_err(|_| corrupt("a stream's hash is not 32 bytes"))?;
        let epoch = u64::try_from(self.lease_epoch).map_err(|_| corrupt("a negative epoch"))?;
        let lease = match (self.lease_holder, self.lease_expires_at) {
            (Some(holder), Some(until)) => Some((holder, epoch, until)),
            _ => None,
        };
        Ok(StreamRecord {
            organization_id: OrganizationId::from_uuid(self.organization_id),
            id: self.id,
            name: self.name,
            ledger: self.ledger,
            destination: self.destination,
            secrets: self.secrets,
            paused: self.paused,
            created_by: UserId::from_uuid(self.created_by),
            created_at: self.created_at,
            updated_at: self.updated_at,
            delivery: Delivery {
                position: u64::try_from(self.delivered_position)
                    .map_err(|_| corrupt("a negative position"))?,
                hash,
                at: self.delivered_at,
                health: Health::parse(&self.health)
                    .ok_or_else(|| corrupt(format!("a stream's health {}", self.health)))?,
                failing_since: self.failing_since,
                attempts: u32::try_from(self.attempts).map_err(|_| corrupt("negative attempts"))?,
                next_attempt_at: self.next_attempt_at,
                last_error: self.last_error,
                pending: self.pending,
                lease,
                epoch,
            },
        })
    }
}
