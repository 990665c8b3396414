//! What stores keep and return, beyond the domain's API shapes: stored jobs and organizations
//! (without the links the service adds), tokens, ledger entries with their organization, audit
//! entries, and the ledger's page query.

use std::fmt;

use recruit_domain::model::{
    Ats, HiringTeamMember, JobSettings, JobStage, JobStatus, OrganizationSettings, ProfileField,
    ProfileFieldSources, ReviewRules, SchedulingDefaults, User,
};
use recruit_domain::resource::PrivacyAuditLog as PrivacyAuditLogResource;
use recruit_domain::{
    ApiTokenId, IdFilter, Job, JobId, Organization, OrganizationId, PrivacyAuditLog,
    PrivacyAuditLogId, Scope, TimeWindow, Timestamp, UserId, Uuid,
};
use serde::{Deserialize, Serialize};

/// An organization as stored: the API's organization without its `app_url`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrganizationRecord {
    /// The organization's identifier.
    pub id: OrganizationId,
    /// The organization's name.
    pub name: String,
    /// The organization's domain.
    pub domain: String,
    /// The scheduling defaults.
    pub settings: OrganizationSettings,
    /// The defaults of the scheduling settings its jobs inherit; in a document, the built-in
    /// ones ([`SchedulingDefaults::BUILT_IN`]) when left out.
    #[serde(default)]
    pub scheduling_defaults: SchedulingDefaults,
    /// Where the organization keeps the truth of each profile field; in a document, fields left
    /// out (or the whole object) are kept by the API.
    #[serde(default)]
    pub profile_field_sources: ProfileFieldSources,
    /// The organization's time zone, an IANA name such as `Asia/Seoul`: where its months and
    /// work hours are read in its access review. In a document, UTC when left out; a name the
    /// time zone database does not know is refused.
    #[serde(default = "utc")]
    pub time_zone: chrono_tz::Tz,
    /// The rules its monthly access review flags accounts by: holidays and thresholds; the
    /// defaults ([`ReviewRules::DEFAULT`]) when left out of a document, each field alike.
    #[serde(default)]
    pub review_rules: ReviewRules,
    /// Its console's single sign-on through its identity provider, if set. Never written out
    /// (it holds the client secret); an import document cannot set it.
    #[serde(default, skip)]
    pub sso: Option<SsoSettings>,
}

/// An organization's single sign-on to the console through its OpenID Connect provider.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SsoSettings {
    /// The provider's issuer URL, exactly as its discovery document names it.
    pub issuer: String,
    /// recruitd's client id at the provider.
    pub client_id: String,
    /// recruitd's client secret at the provider: write-only, never shown or logged.
    pub client_secret: String,
    /// The ID token's claim that names the user: an e-mail address of a user of the
    /// organization (`email` by default).
    pub user_claim: String,
    /// The provider's groups whose members may sign in (their `groups` claim); none: every
    /// owner the provider names.
    pub owner_groups: Vec<String>,
    /// Whether API tokens and one-time links still open the console (break glass).
    pub tokens_and_links: bool,
}

impl fmt::Debug for SsoSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SsoSettings")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<write-only>")
            .field("user_claim", &self.user_claim)
            .field("owner_groups", &self.owner_groups)
            .field("tokens_and_links", &self.tokens_and_links)
            .finish()
    }
}

impl SsoSettings {
    /// The settings as the API shows them: everything but the client secret.
    pub fn shown(&self) -> recruit_domain::model::SingleSignOn {
        recruit_domain::model::SingleSignOn {
            issuer: self.issuer.clone(),
            client_id: self.client_id.clone(),
            user_claim: self.user_claim.clone(),
            owner_groups: self.owner_groups.clone(),
            tokens_and_links: self.tokens_and_links,
            redirect_path: recruit_domain::model::SSO_REDIRECT_PATH.to_owned(),
        }
    }
}

/// UTC, the time zone of an organization that names none.
fn utc() -> chrono_tz::Tz {
    chrono_tz::Tz::UTC
}

impl OrganizationRecord {
    /// The API's organization, with the link the service built.
    pub fn into_organization(self, app_url: String) -> Organization {
        Organization {
            id: self.id,
            name: self.name,
            domain: self.domain,
            settings: self.settings,
            scheduling_defaults: self.scheduling_defaults,
            profile_field_sources: self.profile_field_sources,
            app_url,
        }
    }
}

/// A job as stored, with its hiring team's names resolved: the API's job without `app_url`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    /// The organization the job belongs to.
    pub organization_id: OrganizationId,
    /// The job's identifier.
    pub id: JobId,
    /// The job's name.
    pub name: String,
    /// The job's status.
    pub status: JobStatus,
    /// Whether the job is confidential.
    pub confidential: bool,
    /// The job's locations.
    pub locations: Vec<String>,
    /// The hiring team, in the order it was stored, each user with their current name.
    pub hiring_team: Vec<HiringTeamMember>,
    /// The job in the external applicant-tracking system.
    pub ats: Ats,
    /// When the job was created.
    pub created_at: Timestamp,
    /// When the job last changed.
    pub updated_at: Timestamp,
    /// The scheduling settings, resolved from the organization's defaults and the job's
    /// overrides.
    pub settings: JobSettings,
    /// The stages of the job's hiring process, in order.
    pub job_stages: Vec<JobStage>,
}

impl JobRecord {
    /// The API's job, with the link the service built.
    pub fn into_job(self, app_url: String) -> Job {
        Job {
            id: self.id,
            name: self.name,
            status: self.status,
            confidential: self.confidential,
            locations: self.locations,
            hiring_team: self.hiring_team,
            ats: self.ats,
            created_at: self.created_at,
            updated_at: self.updated_at,
            app_url,
            settings: self.settings,
            job_stages: self.job_stages,
        }
    }
}

/// The SHA-256 of a token's secret. Stores keep only this, never the secret.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SecretHash(pub [u8; 32]);

impl fmt::Debug for SecretHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Enough to tell two apart in a log, not enough to matter.
        write!(
            f,
            "SecretHash({:02x}{:02x}{:02x}{:02x}…)",
            self.0[0], self.0[1], self.0[2], self.0[3]
        )
    }
}

/// A token to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewApiToken {
    /// The token's identifier.
    pub id: ApiTokenId,
    /// The organization the token acts in.
    pub organization_id: OrganizationId,
    /// The user the token acts as.
    pub user_id: UserId,
    /// A name for people, such as "CI export".
    pub name: String,
    /// What the token may be used for.
    pub scopes: Vec<Scope>,
    /// The hash of the secret.
    pub secret_hash: SecretHash,
    /// When the token was made.
    pub created_at: Timestamp,
    /// When the token stops working, if ever.
    pub expires_at: Option<Timestamp>,
}

/// A stored token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiToken {
    /// The token's identifier.
    pub id: ApiTokenId,
    /// The organization the token acts in.
    pub organization_id: OrganizationId,
    /// The user the token acts as.
    pub user_id: UserId,
    /// A name for people.
    pub name: String,
    /// What the token may be used for, sorted, without duplicates.
    pub scopes: Vec<Scope>,
    /// The hash of the secret, as stored.
    pub secret_hash: SecretHash,
    /// When the token was made.
    pub created_at: Timestamp,
    /// When the token stops working, if ever.
    pub expires_at: Option<Timestamp>,
    /// When the token was revoked, if it was.
    pub revoked_at: Option<Timestamp>,
    /// When the token was last used, to within the store's touch interval.
    pub last_used_at: Option<Timestamp>,
}

/// A token together with the user it acts as: what authentication needs, in one read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenHolder {
    /// The token.
    pub token: ApiToken,
    /// The user the token acts as, with their current role.
    pub user: User,
}

/// A session of the review console, stored server-side: the browser holds its secret in a
/// cookie; the session acts through its token, and ends with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsoleSession {
    /// The session's id.
    pub id: Uuid,
    /// The organization.
    pub organization_id: OrganizationId,
    /// The user it acts as.
    pub user_id: UserId,
    /// The token it acts through: the token pasted at sign-in, or one made for a sign-in by
    /// link.
    pub token_id: ApiTokenId,
    /// The hash of its secret.
    pub secret_hash: SecretHash,
    /// When it began.
    pub created_at: Timestamp,
    /// When it was last used (written at most once a minute).
    pub last_seen_at: Timestamp,
    /// When it ends at the latest.
    pub expires_at: Timestamp,
    /// When it was ended (signed out, or found idle), if it was.
    pub ended_at: Option<Timestamp>,
}

/// A console session with its token and the user the token acts as, as stored now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionHolder {
    /// The session.
    pub session: ConsoleSession,
    /// Its token and user.
    pub holder: TokenHolder,
}

/// A privacy audit ledger entry with the organization it belongs to. In JSON, the entry's
/// fields and `organization_id` side by side.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "LedgerEntryFields")]
pub struct LedgerEntry {
    /// The organization whose ledger holds the entry.
    pub organization_id: OrganizationId,
    /// The entry, as the API shows it.
    #[serde(flatten)]
    pub entry: PrivacyAuditLog,
}

/// The JSON fields of a [`LedgerEntry`], read one by one rather than through
/// `#[serde(flatten)]`, so that an error names the field it is in.
#[derive(Deserialize)]
struct LedgerEntryFields {
    organization_id: OrganizationId,
    id: PrivacyAuditLogId,
    access_time: Timestamp,
    account_id: recruit_domain::AccountId,
    ip_addresses: Vec<String>,
    data_subject: recruit_domain::model::DataSubject,
    access_data: Vec<recruit_domain::model::AccessData>,
    access_menu: String,
    access_menu_path: String,
    activity_category: recruit_domain::model::ActivityCategory,
    #[serde(default)]
    purpose: Option<String>,
}

impl From<LedgerEntryFields> for LedgerEntry {
    fn from(f: LedgerEntryFields) -> Self {
        Self {
            organization_id: f.organization_id,
            entry: PrivacyAuditLog {
                id: f.id,
                access_time: f.access_time,
                account_id: f.account_id,
                ip_addresses: f.ip_addresses,
                data_subject: f.data_subject,
                access_data: f.access_data,
                access_menu: f.access_menu,
                access_menu_path: f.access_menu_path,
                activity_category: f.activity_category,
                purpose: f.purpose,
            },
        }
    }
}

/// A place in the ledger's order (newest first: `access_time` descending, then `id`
/// descending). A page that continues from it starts with the entry right after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LedgerPosition {
    /// The `access_time` of the last entry seen.
    pub access_time: Timestamp,
    /// The `id` of the last entry seen.
    pub id: PrivacyAuditLogId,
}

impl LedgerPosition {
    /// The position of an entry.
    pub fn of(entry: &PrivacyAuditLog) -> Self {
        Self { access_time: entry.access_time, id: entry.id }
    }
}

/// One page of one organization's privacy audit ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrivacyLogQuery {
    /// Whose ledger. Nothing of another organization is ever returned.
    pub organization_id: OrganizationId,
    /// Entries with `gte <= access_time < lt`.
    pub window: TimeWindow,
    /// Only these entries, when given.
    pub ids: Option<IdFilter<PrivacyAuditLogResource>>,
    /// Only entries after this position in the ledger's order, when given.
    pub after: Option<LedgerPosition>,
    /// Only entries that meet every condition given.
    pub filter: EntryFilter,
    /// The page size: at most this many entries are returned.
    pub limit: u32,
}

/// Conditions on the fields of privacy ledger entries, beside a list's or an export's window
/// and ids: an entry is kept when it meets every condition given. The service reads them from
/// a request; a store only compares stored values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryFilter {
    /// Only the entries of this account (`account_id`).
    pub account: Option<Uuid>,
    /// Only the entries of this activity category, as stored.
    pub category: Option<String>,
    /// Only the entries of this product area (`access_menu`), as stored.
    pub menu: Option<String>,
    /// Only the entries whose data subject is this user or candidate.
    pub subject: Option<SubjectFilter>,
    /// Only the entries that recorded this address, in canonical text form, among theirs.
    pub ip_address: Option<String>,
    /// Only the entries whose `access_time` falls within one of these spans (`[from, to)`
    /// each, in order, not overlapping); none when the list is empty.
    pub spans: Option<Vec<(Timestamp, Timestamp)>>,
}

impl EntryFilter {
    /// Whether it has no condition.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// A data subject to filter by: the user or candidate `id`, as an employee (`user`), as a
/// candidate (`candidate`), or as either.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubjectFilter {
    /// The user's or candidate's id.
    pub id: Uuid,
    /// Whether an employee with this id is a match.
    pub user: bool,
    /// Whether a candidate with this id is a match.
    pub candidate: bool,
}

/// One page of the privacy ledger as a store returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerPage {
    /// At most `limit` entries, in the ledger's order.
    pub entries: Vec<PrivacyAuditLog>,
    /// Whether at least one more entry matches after the last one returned.
    pub more: bool,
}

/// Which interface a request came through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Interface {
    /// The REST API.
    Rest,
    /// The tool interface for agents.
    Tool,
}

impl Interface {
    /// The value as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rest => "REST",
            Self::Tool => "TOOL",
        }
    }

    /// Parses the stored value.
    pub fn from_stored(s: &str) -> Option<Self> {
        [Self::Rest, Self::Tool].into_iter().find(|i| i.as_str() == s)
    }
}

/// An entry of the API audit ledger: one successful read of the privacy ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// The entry's identifier (UUID v7).
    pub id: Uuid,
    /// When the read happened.
    pub at: Timestamp,
    /// The organization whose ledger was read.
    pub organization_id: OrganizationId,
    /// The token that was used.
    pub token_id: ApiTokenId,
    /// The user the token acts as.
    pub user_id: UserId,
    /// The operation, such as `listPrivacyAuditLogs`.
    pub operation: String,
    /// The request's identifier.
    pub request_id: String,
    /// The client's IP address, when known.
    pub client_ip: Option<String>,
    /// The normalised filters of the read.
    pub filters: serde_json::Value,
    /// How many ledger entries the read returned.
    pub entries_returned: u32,
    /// The interface the read came through.
    pub interface: Interface,
    /// The tool's name, for reads through the tool interface.
    pub tool_name: Option<String>,
}

/// An entry of the tool-interface audit ledger: one successful tool call that read the
/// privacy ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolAuditEntry {
    /// The entry's identifier (UUID v7).
    pub id: Uuid,
    /// When the call happened.
    pub at: Timestamp,
    /// The organization whose ledger was read.
    pub organization_id: OrganizationId,
    /// The token that was used.
    pub token_id: ApiTokenId,
    /// The user the token acts as.
    pub user_id: UserId,
    /// The tool that was called.
    pub tool_name: String,
    /// The arguments of the call.
    pub arguments: serde_json::Value,
    /// How many ledger entries the call returned.
    pub entries_returned: u32,
    /// The request's identifier.
    pub request_id: String,
}

/// What to record about a read of the privacy ledger. The store sets `entries_returned` of
/// both entries to the number of entries it returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadRecord {
    /// The API audit ledger entry; every read writes one.
    pub api: AuditEntry,
    /// The tool-interface audit ledger entry; reads through the tool interface write one.
    pub tool: Option<ToolAuditEntry>,
}

/// Accesses to record ([`crate::Ledgers::record_privacy_accesses`]): the entries, the audit
/// record of the request, and the response to keep with its idempotency key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessesWrite {
    /// The entries, all of the claim's organization.
    pub entries: Vec<LedgerEntry>,
    /// The audit ledger entries of the request; `entries_returned` is set to the number of
    /// entries written.
    pub record: ReadRecord,
    /// The request's claim of its idempotency key.
    pub claim: crate::KeyClaim,
    /// The response to replay to a request with the same key and fingerprint.
    pub response: crate::StoredResponse,
}

/// What recording accesses did ([`crate::Ledgers::record_privacy_accesses`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessesWritten {
    /// What the claim of the key found: the entries were written only when it was granted.
    pub claim: crate::Claim,
    /// The entries written, as their chain holds them once committed, in chain order (none
    /// when nothing was written).
    pub chained: Vec<crate::chain::ExportedEntry>,
}

impl AccessesWritten {
    /// Nothing written: the claim found `claim`.
    pub fn refused(claim: crate::Claim) -> Self {
        Self { claim, chained: vec![] }
    }
}

/// Which users of an organization a SCIM client asks for
/// ([`crate::Directory::provisioned_users`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserLookup {
    /// Every user not removed.
    All,
    /// The user whose SCIM `userName` (their e-mail address when they have none) is this one,
    /// its case ignored.
    UserName(String),
    /// The users with this `externalId`, exactly.
    ExternalId(String),
}

/// A user as an identity provider writes it over SCIM ([`crate::Directory::provision_user`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provisioning {
    /// The user as it is to be stored, every field of it.
    pub user: User,
    /// Whether the user is new (stored anew) or a stored user changes.
    pub create: bool,
    /// The profile fields the provider wrote: their source in the organization becomes SCIM,
    /// so that the API refuses to change them (`CANNOT_UPDATE_SYNC_MANAGED_FIELDS`).
    pub managed: Vec<ProfileField>,
    /// Whether every credential of the user ends (API tokens, links, console sessions), at
    /// `user.updated_at`: the user was deactivated or removed.
    pub ends_credentials: bool,
    /// The privacy ledger entry that records the change.
    pub entry: LedgerEntry,
}

/// A change of a user's profile ([`crate::Directory::update_user`]): the user as it is to be
/// stored, what the decision to change it read, and the privacy ledger entry that records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileUpdate {
    /// The user as changed: its organization and id name the stored user; its profile fields
    /// (`name`, `title`, `manager`, `linkedin_url`) and `updated_at` are written.
    pub user: User,
    /// The users of the organization the decision read, each with the `updated_at` it read
    /// (the user itself, and the chain of managers above its new manager). The change is made
    /// only if each of them is still stored with that time.
    pub read: Vec<(UserId, Timestamp)>,
    /// The privacy ledger entry that records the change.
    pub entry: LedgerEntry,
}

impl ProfileUpdate {
    /// The users the decision read, each once, in ascending order: the order a store locks
    /// them in, so that concurrent changes wait for each other rather than deadlock.
    pub fn read_ids(&self) -> Vec<Uuid> {
        let mut ids: Vec<Uuid> = self.read.iter().map(|(id, _)| id.uuid()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Whether the users of [`ProfileUpdate::read_ids`] are stored as the decision read them:
    /// `stored` is what the store holds of them (id and `updated_at`, in any order; a user not
    /// stored is left out). `Conflict` otherwise.
    pub fn check_read(&self, mut stored: Vec<(Uuid, Timestamp)>) -> Result<(), crate::StoreError> {
        let mut read: Vec<(Uuid, Timestamp)> =
            self.read.iter().map(|(id, at)| (id.uuid(), *at)).collect();
        read.sort_unstable();
        read.dedup();
        stored.sort_unstable();
        if stored == read {
            Ok(())
        } else {
            Err(crate::StoreError::Conflict("a user changed since it was read".into()))
        }
    }
}

/// Which audit ledger entries an operator lists: newest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuditListQuery {
    /// Only this organization's entries, when given.
    pub organization_id: Option<OrganizationId>,
    /// At most this many entries.
    pub limit: u32,
}

/// Numbers about a store's connection pool, for metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolStatus {
    /// The most connections the pool opens.
    pub max_size: usize,
    /// Connections open now.
    pub size: usize,
    /// Open connections not in use.
    pub available: usize,
    /// Callers waiting for a connection.
    pub waiting: usize,
}
