//! The repository traits. Each method's documentation says what it must return in each case;
//! the contract suite (`testkit`) checks it for every adapter.
//!
//! Every method that reads an organization's data takes the organization and never returns
//! anything of another one: a row of another organization is reported exactly like a missing
//! row ([`StoreError::NotFound`]).
//!
//! Any method may also return [`StoreError::Unavailable`] (no connection could be had in
//! time, or the database cannot be reached), [`StoreError::Timeout`] (a statement ran past its
//! deadline) or [`StoreError::Other`].

use async_trait::async_trait;
use recruit_domain::chain::{Checkpoint, Ledger, RetentionCut};
use recruit_domain::{ApiTokenId, JobId, OrganizationId, Timestamp, User, UserId, Uuid};

use crate::chain::{ChainPage, CheckedEntry, Export, ExportQuery, PlannedCut};
use crate::rows::LedgerHeadRow;
use crate::{
    AccessesWrite, AccessesWritten, ApiToken, AuditEntry, AuditListQuery, Claim, ConsoleSession,
    ImportDocument, ImportError, ImportSummary, JobRecord, KeyClaim, LedgerEntry, LedgerPage,
    NewApiToken, OrganizationRecord, PrivacyLogQuery, ProfileUpdate, Provisioning, ReadRecord,
    ResumedBatch, SecretHash, SessionHolder, StoreError, TokenHolder, ToolAuditEntry, UserLookup,
};

/// Organizations, their people, queues and jobs.
#[async_trait]
pub trait Directory: Send + Sync + 'static {
    /// The organization. `NotFound` when there is none with this id.
    async fn organization(&self, id: OrganizationId) -> Result<OrganizationRecord, StoreError>;

    /// Every stored organization's id and name, by id.
    async fn organizations(&self) -> Result<Vec<(OrganizationId, String)>, StoreError>;

    /// A user of the organization. `NotFound` when there is none, or it belongs to another
    /// organization.
    async fn user(&self, organization: OrganizationId, id: UserId) -> Result<User, StoreError>;

    /// The users of the organization among `ids`, by id: ids of no user of the organization
    /// are left out, a repeated id gives one user. For naming people, not as a read of their
    /// profiles: nothing is recorded.
    async fn users(
        &self,
        organization: OrganizationId,
        ids: &[UserId],
    ) -> Result<Vec<User>, StoreError>;

    /// The users of every organization whose e-mail address is `email`, its ASCII case
    /// ignored, by organization then id: whom a sign-in link asked for by address goes to.
    async fn users_by_email(&self, email: &str) -> Result<Vec<User>, StoreError>;

    /// A user of the organization whose ledger `entry` is for, read as a processing of their
    /// personal data: in one transaction, reads the user and appends `entry` to the privacy
    /// ledger. The read and its record cannot name different organizations. `NotFound` (and
    /// nothing written) when there is no such user in the organization; when the entry cannot
    /// be written, the error and no user: no read of a profile is returned unrecorded.
    async fn read_user(&self, id: UserId, entry: &LedgerEntry) -> Result<User, StoreError>;

    /// Changes a user's profile and records the change, in one transaction: when every user of
    /// `update.read` is stored in the organization with the `updated_at` read, writes the
    /// profile fields and `updated_at` of `update.user`, appends `update.entry` to the privacy
    /// ledger, and returns the user as stored. `Conflict` (nothing written) when any of them
    /// changed or is gone since it was read, so that a decision made on what was read holds
    /// for what is written; `Conflict` too when the entry's id is taken.
    async fn update_user(&self, update: &ProfileUpdate) -> Result<User, StoreError>;

    /// The user with this id in whichever organization, for operators' tools that are given
    /// only the user. `NotFound` when there is none.
    async fn find_user(&self, id: UserId) -> Result<User, StoreError>;

    /// Sets (or, with none, removes) the organization's single sign-on settings, with the
    /// audit record of the request that changed them, if any, in the same transaction.
    /// `NotFound` (nothing written) when the organization is not stored.
    async fn set_sso(
        &self,
        organization: OrganizationId,
        sso: Option<&crate::SsoSettings>,
        record: Option<&crate::ReadRecord>,
    ) -> Result<(), StoreError>;

    /// The users of the organization that `lookup` asks for, removed users left out, by id:
    /// `limit` of them after the first `offset`, and how many there are in all.
    async fn provisioned_users(
        &self,
        organization: OrganizationId,
        lookup: &UserLookup,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<User>, u64), StoreError>;

    /// Stores a user as an identity provider wrote it, in one transaction: the user (new, or
    /// every field of a stored one), the organization's sources of the fields it manages, the
    /// end of every credential of the user when it asks, and its ledger entry. Returns the
    /// user as stored. `Conflict` (nothing written) when another user not removed has the
    /// same `user_name` (its case ignored) or a new user's id is taken; `NotFound` when a
    /// changed user is not stored in the organization.
    async fn provision_user(&self, provisioning: &Provisioning) -> Result<User, StoreError>;

    /// A job of the organization with its hiring team's names resolved, team in stored order.
    /// `NotFound` when there is none, or it belongs to another organization.
    async fn job(&self, organization: OrganizationId, id: JobId) -> Result<JobRecord, StoreError>;
}

/// API tokens. Stores keep the hash of each secret, never the secret.
#[async_trait]
pub trait Tokens: Send + Sync + 'static {
    /// The token with this secret hash and the user it acts as, whatever its expiry or
    /// revocation (the caller decides). `NotFound` when no token has this hash.
    ///
    /// A store may answer from memory, provided that it forgets what it kept as soon as the
    /// token or its user changes (revocation first of all); the token's `last_used_at` may
    /// then be older than stored, as [`Tokens::touch_token`] does not count as a change.
    async fn credential(&self, secret_hash: &SecretHash) -> Result<TokenHolder, StoreError>;

    /// Stores a new token and returns it as stored. `Conflict` when its id or secret hash is
    /// taken; `NotFound` when its user does not exist in its organization.
    async fn create_token(&self, token: &NewApiToken) -> Result<ApiToken, StoreError>;

    /// Marks the token revoked at `at` and returns it. Revoking a revoked token keeps the first
    /// time. `NotFound` when there is no such token.
    async fn revoke_token(&self, id: ApiTokenId, at: Timestamp) -> Result<ApiToken, StoreError>;

    /// Records that the token was used at `at`. To keep reads cheap it writes only when the
    /// stored time is more than a minute older (or unset), so `last_used_at` is exact to
    /// within a minute. A missing token is not an error.
    async fn touch_token(&self, id: ApiTokenId, at: Timestamp) -> Result<(), StoreError>;

    /// Stores a new console session with the API audit ledger's record of its sign-in, in one
    /// transaction. `Conflict` when its id or secret hash is taken; `NotFound` when its token
    /// does not exist in its organization; nothing written either way.
    async fn open_session(
        &self,
        session: &ConsoleSession,
        record: &crate::ReadRecord,
    ) -> Result<(), StoreError>;

    /// The console session with this secret hash, its token and the token's user, as stored
    /// now (never from memory: a revoked token or a demoted user shows at once), whatever
    /// its expiry or end (the caller decides). `NotFound` when no session has this hash.
    async fn console_session(&self, secret_hash: &SecretHash) -> Result<SessionHolder, StoreError>;

    /// Records that the session was used at `at`; a session ended already is left as it is.
    async fn touch_session(&self, id: Uuid, at: Timestamp) -> Result<(), StoreError>;

    /// Ends the session at `at`, with the record of the sign-out that asks, if any, in one
    /// transaction; ending an ended session keeps the first time.
    async fn end_session(
        &self,
        id: Uuid,
        at: Timestamp,
        record: Option<&crate::ReadRecord>,
    ) -> Result<(), StoreError>;

    /// Every token of the organization (or of all of them), newest first.
    async fn tokens(
        &self,
        organization: Option<OrganizationId>,
    ) -> Result<Vec<ApiToken>, StoreError>;
}

/// The privacy audit ledger and the two audit ledgers that record reads of it. All three are
/// append-only.
#[async_trait]
pub trait Ledgers: Send + Sync + 'static {
    /// One page of the privacy ledger, newest first (`access_time` descending, then `id`
    /// descending), returned only once the record of that read is committed.
    ///
    /// Returns at most `query.limit` entries of `query.organization_id` with
    /// `window.gte <= access_time < window.lt`, in `query.ids` when given, strictly after
    /// `query.after` in the ledger's order when given, and whether more entries match after
    /// them. It appends `record.api` to the API audit ledger and `record.tool` (when given) to
    /// the tool-interface audit ledger, with `entries_returned` set to the number of entries
    /// returned, and commits them (in the read's transaction, or together with the records of
    /// concurrent reads) before it returns. If the record cannot be written, it returns the
    /// error and no entries: no read of the ledger is ever returned unrecorded. `Conflict` when
    /// an audit entry's id is taken.
    async fn read_privacy_audit_logs(
        &self,
        query: &PrivacyLogQuery,
        record: &ReadRecord,
    ) -> Result<LedgerPage, StoreError>;

    /// Appends the record of a read of the ledgers that showed `entries` ledger entries
    /// (`record.api`, and `record.tool` when given, with that `entries_returned`), such as a
    /// read of a chain's checkpoint (none) or a month's review (its downloads), and commits it
    /// before it returns.
    async fn record_read(&self, record: &ReadRecord, entries: usize) -> Result<(), StoreError>;

    /// What a request presenting `claim`'s key finds now ([`KeyClaim::decide`] of what the
    /// store holds for it); writes nothing.
    async fn idempotency_key(&self, claim: &KeyClaim) -> Result<Claim, StoreError>;

    /// Records accesses, in one transaction, when the key of `write.claim` is free
    /// ([`Claim::Granted`]): appends `write.entries` to the privacy ledger and `write.record` to
    /// the audit ledgers (with `entries_returned` the number of entries), and stores the key
    /// with `write.response`. Otherwise writes nothing and returns what it found: the key in
    /// flight in another transaction, used for another request, or completed. The key is never
    /// stored without its response, so a failure at any point leaves it free. `Conflict` when an
    /// entry's id is already in its organization's ledger or appears twice; nothing is written
    /// then. Granted, it returns the entries as committed, linked into their chain.
    async fn record_privacy_accesses(
        &self,
        write: &AccessesWrite,
    ) -> Result<AccessesWritten, StoreError>;

    /// Removes the idempotency keys that expired at or before `now`; returns how many.
    async fn purge_idempotency_keys(&self, now: Timestamp) -> Result<usize, StoreError>;

    /// API audit ledger entries, newest first (`at` descending, then `id` descending).
    async fn api_audit_entries(
        &self,
        query: &AuditListQuery,
    ) -> Result<Vec<AuditEntry>, StoreError>;

    /// Tool-interface audit ledger entries, newest first.
    async fn tool_audit_entries(
        &self,
        query: &AuditListQuery,
    ) -> Result<Vec<ToolAuditEntry>, StoreError>;

    /// The head of every chain (of `organization`'s only, when given): each organization's last
    /// position and hash in each ledger it has written to, ordered by organization and ledger.
    async fn chain_heads(
        &self,
        organization: Option<OrganizationId>,
    ) -> Result<Vec<LedgerHeadRow>, StoreError>;

    /// Starts an export of the entries `query` names, read from one snapshot: counts them and
    /// returns the export, its entries read as they are taken. Whoever hands them to a caller
    /// records that first (`record_read` with the count).
    async fn export(&self, query: &ExportQuery) -> Result<Export, StoreError>;

    /// Up to `limit` entries of `organization`'s chain in `ledger` after position `after`, in
    /// the chain's order: what a reader that follows the chain reads next. Not a read for
    /// its record: whoever hands them on records that.
    async fn chain_after(
        &self,
        ledger: Ledger,
        organization: OrganizationId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<crate::chain::ExportedEntry>, StoreError>;

    /// Where a reader of the entries of `organization`'s chain in `ledger` recorded at or
    /// after `at` starts: the position it reads after, and that position's hash (the chain's
    /// start, or the hash before the first retained entry, when every retained entry is as
    /// late). None for a chain with no entry retained.
    async fn chain_start_at(
        &self,
        ledger: Ledger,
        organization: OrganizationId,
        at: Timestamp,
    ) -> Result<Option<(u64, Vec<u8>)>, StoreError>;

    /// How many entries `query` names, counted up to `at_most`: a figure for a page, whose
    /// cost stays bounded however many match. Not a read of the entries: nothing is recorded.
    async fn count_entries(&self, query: &ExportQuery, at_most: u64) -> Result<u64, StoreError>;

    /// Stores signed checkpoints; one stored already (same organization, ledger, position and
    /// key) is left as it is.
    async fn save_checkpoints(&self, checkpoints: &[Checkpoint]) -> Result<(), StoreError>;

    /// The stored checkpoints of `organization` (every organization's when none) of `ledger`
    /// (every ledger's when none), ordered by organization, ledger, position and time.
    async fn checkpoints(
        &self,
        organization: Option<OrganizationId>,
        ledger: Option<Ledger>,
    ) -> Result<Vec<Checkpoint>, StoreError>;

    /// What a retention at `before` removes: for each chain with entries recorded before it
    /// (a prefix of the chain, as positions are given in the order of recording), the last of
    /// them, its hash, and how many are still stored.
    async fn retention_plan(&self, before: Timestamp) -> Result<Vec<PlannedCut>, StoreError>;

    /// Stores signed retention cuts; one stored already (same organization, ledger and
    /// position) is left as it is.
    async fn save_retention_cuts(&self, cuts: &[RetentionCut]) -> Result<(), StoreError>;

    /// The stored retention cuts of `organization` (every organization's when none) of
    /// `ledger` (every ledger's when none), ordered by organization, ledger and position.
    async fn retention_cuts(
        &self,
        organization: Option<OrganizationId>,
        ledger: Option<Ledger>,
    ) -> Result<Vec<RetentionCut>, StoreError>;

    /// Removes every entry of the three ledgers recorded before `before`, all in one
    /// transaction; returns how many. The store refuses to remove an entry that no stored cut
    /// covers (of its chain, at its position or after, with a later boundary): then nothing is
    /// removed.
    async fn remove_retained(&self, before: Timestamp) -> Result<u64, StoreError>;

    /// The checkpoint of `organization`'s `ledger` at the highest position (the latest signed
    /// of those), if any.
    async fn latest_checkpoint(
        &self,
        organization: OrganizationId,
        ledger: Ledger,
    ) -> Result<Option<Checkpoint>, StoreError>;

    /// The facts of a month's access review (see [`crate::review`]), read from one snapshot:
    /// the privacy ledger's entries of `[query.from, query.to)` counted per account, slot,
    /// activity category and subject type; the distinct individual subjects per account; the
    /// addresses per account over the month and the one before; the month's downloads; and
    /// the month's exports of the privacy ledger from the API audit ledger.
    async fn review_facts(
        &self,
        query: &crate::review::ReviewQuery,
    ) -> Result<crate::review::ReviewFacts, StoreError>;

    /// Replaces an organization's review rules and appends `write.record` (with no entries
    /// returned) to the audit ledgers, in one transaction with the chain heads locked: a
    /// change of what the review flags is itself on the record. `NotFound` (nothing written)
    /// when the organization is not stored.
    async fn set_review_rules(&self, write: &crate::review::RulesWrite) -> Result<(), StoreError>;

    /// The accesses of each account of `organization`'s privacy ledger over `[from, to)`, in
    /// no order; an account without any is left out. Both instants fall on a quarter hour
    /// (a month's bounds in any time zone): a store may count from the review's kept counts.
    async fn account_volumes(
        &self,
        organization: OrganizationId,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Vec<(Uuid, u64)>, StoreError>;

    /// Records a reviewer's decision on a download, in one transaction with the heads of the
    /// organization's audit ledger chains locked: `NotFound` (nothing written) when the
    /// organization's privacy ledger holds no entry `write.decision.entry_id` of activity
    /// `write.download` with `write.from <= access_time < write.to`; `OwnDownload` (nothing
    /// written) when the entry's account is the deciding user (`write.decision.user_id`);
    /// [`Decided::Unchanged`](crate::review::Decided) (nothing written) when the latest
    /// decision on that entry has the same status and reason; otherwise appends the decision
    /// and `write.record` (with no entries returned) and returns `Written`. Concurrent
    /// decisions on one entry are taken one after the other.
    async fn decide_download(
        &self,
        write: &crate::review::DecisionWrite,
    ) -> Result<crate::review::Decided, StoreError>;

    /// Records a month's sign-off, in one transaction: [`SignedOff::Existing`](crate::review::SignedOff)
    /// with the stored one (nothing written) when the organization's month is signed off
    /// already; otherwise appends the sign-off and `write.record` (with no entries returned)
    /// and returns `Written`. Of concurrent sign-offs of one month, exactly one is written.
    async fn sign_off(
        &self,
        write: &crate::review::SignOffWrite,
    ) -> Result<crate::review::SignedOff, StoreError>;

    /// Up to `page.limit` entries of the chain of `page.ledger` of `page.organization`, from
    /// where `page.from` says: those with a position in the order of (position, id), so that a
    /// page never ends between two entries sharing a position unseen; or those stored without
    /// one (which a store never writes once its entries are linked), in id order.
    async fn chain_entries(&self, page: ChainPage) -> Result<Vec<CheckedEntry>, StoreError>;
}

/// Loading whole documents.
#[async_trait]
pub trait Import: Send + Sync + 'static {
    /// Inserts every entity of the document in one transaction, all or nothing.
    /// [`ImportError::Invalid`] (naming the path) when the document does not pass
    /// [`ImportDocument::check`] against what is stored; nothing is written then.
    async fn import(&self, document: &ImportDocument) -> Result<ImportSummary, ImportError>;

    /// Writes a batch of privacy ledger entries (a document holding nothing else) again, as a
    /// re-run of an import that stopped part-way does: in one transaction, the entries stored
    /// exactly as given are left out ([`ImportDocument::without_stored`]) and the rest is
    /// written as [`Import::import`] writes it. An entry stored with other values, or any other
    /// problem, is [`ImportError::Invalid`] naming its path, and nothing is written.
    async fn resume_ledger(&self, batch: &ImportDocument) -> Result<ResumedBatch, ImportError>;
}

/// What the server needs of its store besides the data.
#[async_trait]
pub trait Maintenance: Send + Sync + 'static {
    /// Succeeds when the database answers and its schema is up to date.
    async fn ping(&self) -> Result<(), StoreError>;

    /// The database server's clock now, when it keeps one apart from this process (PostgreSQL);
    /// None when the database runs on this process's own clock (SQLite). What a replica checks
    /// its clock against.
    async fn database_clock(&self) -> Result<Option<Timestamp>, StoreError>;

    /// The secret stored under `name`. When there is none, stores `proposed` and returns it;
    /// concurrent callers all get the one that was stored first.
    async fn server_secret(&self, name: &str, proposed: &[u8]) -> Result<Vec<u8>, StoreError>;

    /// Whether the store holds any organization: a fresh database holds none.
    async fn is_empty(&self) -> Result<bool, StoreError>;

    /// Prepares ahead what the store needs to keep writing: on PostgreSQL, the ledgers'
    /// monthly partitions for the months to come. Servers run it at start and daily; a
    /// failure is worth a warning, not an outage (writes go to a default partition).
    async fn prepare(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Ends the database sessions of this store's writers that have sent nothing in the middle
    /// of a write for longer than the store lets a transaction wait on its client; returns how
    /// many. A writer frozen or cut off mid-write otherwise keeps its transaction, and with it
    /// the lock on its organization's chain that every other write there waits for, for as
    /// long as its connection looks alive (PostgreSQL applies no timeout to a `COPY` waiting
    /// for data). Servers run it every few seconds: a live replica ends a frozen one's write.
    /// Does nothing where the database lives in the writing process (SQLite).
    async fn end_stalled_writes(&self) -> Result<usize, StoreError> {
        Ok(0)
    }
}

/// Standbys of the store's database, for the heavy reads: exports, the chains' verification,
/// the monthly review. Only PostgreSQL has them.
#[async_trait]
pub trait Replica: Send + Sync + 'static {
    /// A store that reads from the standbys what includes everything the primary had
    /// committed when this was called: each connection it takes first waits, until
    /// `deadline`, for its standby to replay the primary's position of that moment. Past the
    /// deadline, and while no standby can be reached, its methods fail with `Unavailable`.
    /// It reads only: a write through it fails.
    async fn caught_up(
        &self,
        deadline: std::time::Instant,
    ) -> Result<std::sync::Arc<dyn Store>, StoreError>;
}

/// Everything a server needs of its storage, as one trait object: `Arc<dyn Store>`.
pub trait Store:
    Directory + Tokens + Ledgers + Import + Maintenance + crate::streams::LogStreams
{
}

impl<T> Store for T where
    T: Directory + Tokens + Ledgers + Import + Maintenance + crate::streams::LogStreams
{
}
