//! Typed identifiers: one generic [`Id`] and a marker type per resource.
//!
//! An identifier is a UUID with a three-letter prefix naming its resource. Output is always
//! canonical (`job_` + 32 lowercase hex digits); input accepts the four spellings of the API
//! specification in any letter case. `Id<Job>` and `Id<User>` are different types, so passing
//! one where the other is expected does not compile.

mod error;
mod parse;

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::str::FromStr;

use uuid::Uuid;

pub use error::{Expected, ParseIdError, ParseIdErrorKind, Prefix};
use parse::Spec;

/// A kind of resource that has identifiers: its prefix and its name.
///
/// Implemented by the marker types in [`resource`]; services that embed this crate may define
/// their own. The prefix must be three lowercase ASCII letters, which is checked when the
/// code is compiled.
///
/// ```
/// use recruit_domain::{Id, Resource};
///
/// enum Interview {}
/// impl Resource for Interview {
///     const PREFIX: &'static str = "int";
///     const NOUN: &'static str = "an interview ID";
/// }
/// type InterviewId = Id<Interview>;
///
/// let id: InterviewId = "int_0190c7d8e4a27cc3b1f0a2d4e6f80011".parse().unwrap();
/// assert_eq!(id.to_string(), "int_0190c7d8e4a27cc3b1f0a2d4e6f80011");
/// ```
pub trait Resource: 'static {
    /// Three lowercase ASCII letters, written before the underscore.
    const PREFIX: &'static str;
    /// The identifier with its article, as error messages use it: `"a job ID"`.
    const NOUN: &'static str;
}

/// The length of every canonical identifier: a prefix of three letters, `_`, 32 hex digits.
pub const CANONICAL_LEN: usize = 36;

/// The prefix of `R` as bytes, checked to be three lowercase ASCII letters at compile time.
const fn prefix_bytes<R: Resource>() -> [u8; 3] {
    let p = R::PREFIX.as_bytes();
    assert!(p.len() == 3, "a resource prefix has exactly three letters");
    assert!(
        p[0].is_ascii_lowercase() && p[1].is_ascii_lowercase() && p[2].is_ascii_lowercase(),
        "a resource prefix is made of lowercase ASCII letters"
    );
    [p[0], p[1], p[2]]
}

/// An identifier of a resource of kind `R`: a UUID that prints as `prefix_` + 32 lowercase hex
/// digits.
///
/// It is `Copy`, compares and hashes by its UUID, and orders like its canonical string.
///
/// ```
/// use recruit_domain::JobId;
///
/// // Any of the four spellings, in any letter case.
/// for input in [
///     "job_0190c7d8e4a27cc3b1f0a2d4e6f80011",
///     "JOB_0190C7D8-E4A2-7CC3-B1F0-A2D4E6F80011",
///     "0190c7d8-e4a2-7cc3-b1f0-a2d4e6f80011",
///     "0190C7D8E4A27CC3B1F0A2D4E6F80011",
/// ] {
///     let id: JobId = input.parse().unwrap();
///     assert_eq!(id.to_string(), "job_0190c7d8e4a27cc3b1f0a2d4e6f80011");
/// }
///
/// // Another resource's prefix is refused, and the error says why.
/// let err = "usr_0190c7d8e4a27cc3b1f0a2d4e6f80011".parse::<JobId>().unwrap_err();
/// assert_eq!(err.to_string(), "has the prefix `usr_`, but a job ID takes `job_` or no prefix");
/// ```
pub struct Id<R: Resource> {
    uuid: Uuid,
    resource: PhantomData<fn() -> R>,
}

impl<R: Resource> Id<R> {
    /// The prefix this kind of identifier takes, without its underscore.
    pub const PREFIX: &'static str = R::PREFIX;

    /// Wraps a UUID.
    pub const fn from_uuid(uuid: Uuid) -> Self {
        Self { uuid, resource: PhantomData }
    }

    /// A new identifier from a version 7 UUID: time-ordered, so rows inserted in creation order
    /// land at the end of an index.
    pub fn new_v7() -> Self {
        Self::from_uuid(Uuid::now_v7())
    }

    /// The identifier whose UUID is all zeros. It parses like any other and names nothing.
    pub const fn nil() -> Self {
        Self::from_uuid(Uuid::nil())
    }

    /// The UUID inside.
    pub const fn uuid(self) -> Uuid {
        self.uuid
    }

    /// Parses any accepted spelling: `job_` + 32 hex digits, `job_` + a dashed UUID, a dashed
    /// UUID, or 32 hex digits, in any letter case.
    pub fn parse(s: &str) -> Result<Self, ParseIdError> {
        parse::parse(Self::SPEC, s).map(|bytes| Self::from_uuid(Uuid::from_bytes(bytes)))
    }

    /// Writes the canonical form into `buf` and returns it, without allocating.
    ///
    /// ```
    /// use recruit_domain::{CANONICAL_LEN, UserId};
    ///
    /// let id = UserId::nil();
    /// let mut buf = [0u8; CANONICAL_LEN];
    /// assert_eq!(id.encode(&mut buf), "usr_00000000000000000000000000000000");
    /// ```
    pub fn encode(self, buf: &mut [u8; CANONICAL_LEN]) -> &str {
        let prefix = const { prefix_bytes::<R>() };
        buf[..3].copy_from_slice(&prefix);
        buf[3] = b'_';
        let hex: &mut [u8; 32] = (&mut buf[4..]).try_into().unwrap_or_else(|_| unreachable!());
        encode_hex(self.uuid.as_bytes(), hex);
        ascii(buf)
    }

    const SPEC: Spec =
        Spec { prefix: Some(prefix_bytes::<R>()), prefix_text: Some(R::PREFIX), noun: R::NOUN };
}

/// Writes 16 bytes as 32 lowercase hex digits. Branch-free arithmetic per nibble (as the `uuid`
/// crate does it), which the compiler turns into vector instructions.
#[inline(always)]
fn encode_hex(bytes: &[u8; 16], out: &mut [u8; 32]) {
    for (i, &b) in bytes.iter().enumerate() {
        out[2 * i] = hex_digit(b >> 4);
        out[2 * i + 1] = hex_digit(b & 0x0f);
    }
}

/// The lowercase hex digit of a nibble: `0`–`9` from `b'0'` on, `a`–`f` 39 further.
#[inline(always)]
const fn hex_digit(nibble: u8) -> u8 {
    nibble + b'0' + if nibble > 9 { b'a' - b'0' - 10 } else { 0 }
}

/// Views bytes this module wrote, which are all ASCII, as a `str`.
#[inline(always)]
fn ascii(buf: &[u8]) -> &str {
    std::str::from_utf8(buf).unwrap_or_else(|_| unreachable!("identifiers are written in ASCII"))
}

// The traits are written by hand: derives would require `R` itself to be `Clone`, `Eq`, ….
impl<R: Resource> Clone for Id<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R: Resource> Copy for Id<R> {}
impl<R: Resource> PartialEq for Id<R> {
    fn eq(&self, other: &Self) -> bool {
        self.uuid == other.uuid
    }
}
impl<R: Resource> Eq for Id<R> {}
impl<R: Resource> PartialOrd for Id<R> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
/// Byte order of the UUID, which is the order of the canonical strings: same prefix, then
/// lowercase hex digits, whose ASCII order is their numeric order.
impl<R: Resource> Ord for Id<R> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.uuid.cmp(&other.uuid)
    }
}
impl<R: Resource> Hash for Id<R> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.uuid.hash(state);
    }
}

impl<R: Resource> fmt::Display for Id<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.encode(&mut [0; CANONICAL_LEN]))
    }
}

impl<R: Resource> fmt::Debug for Id<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.encode(&mut [0; CANONICAL_LEN]))
    }
}

impl<R: Resource> FromStr for Id<R> {
    type Err = ParseIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl<R: Resource> TryFrom<&str> for Id<R> {
    type Error = ParseIdError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        Self::parse(s)
    }
}

impl<R: Resource> From<Uuid> for Id<R> {
    fn from(uuid: Uuid) -> Self {
        Self::from_uuid(uuid)
    }
}

impl<R: Resource> From<Id<R>> for Uuid {
    fn from(id: Id<R>) -> Self {
        id.uuid
    }
}

/// The marker types naming each resource, used as `Id<resource::Job>`; the crate root exports
/// an alias for each (`JobId`, …).
pub mod resource {
    use super::Resource;

    macro_rules! resources {
        ($($(#[$doc:meta])* $name:ident = $prefix:literal, $noun:literal;)*) => {$(
            $(#[$doc])*
            #[derive(Debug)]
            pub enum $name {}
            impl Resource for $name {
                const PREFIX: &'static str = $prefix;
                const NOUN: &'static str = $noun;
            }
        )*};
    }

    resources! {
        /// An organization: `org_`.
        Organization = "org", "an organization ID";
        /// A job: `job_`.
        Job = "job", "a job ID";
        /// A user of an organization: `usr_`.
        User = "usr", "a user ID";
        /// A candidate: `can_`.
        Candidate = "can", "a candidate ID";
        /// An entry of the privacy audit ledger: `pal_`.
        PrivacyAuditLog = "pal", "a privacy audit log ID";
        /// A scheduling task queue: `que_`.
        TaskQueue = "que", "a task queue ID";
        /// A stage of a job's hiring process: `jst_`.
        JobStage = "jst", "a job stage ID";
        /// An API token (not a resource of the API specification): `tok_`.
        ApiToken = "tok", "an API token ID";
        /// A log stream of an organization's ledger (not a resource of the API
        /// specification): `lst_`.
        LogStream = "lst", "a log stream ID";
    }
}

/// The identifier of an organization, `org_…`.
pub type OrganizationId = Id<resource::Organization>;
/// The identifier of a job, `job_…`.
pub type JobId = Id<resource::Job>;
/// The identifier of a user, `usr_…`.
pub type UserId = Id<resource::User>;
/// The identifier of a candidate, `can_…`.
pub type CandidateId = Id<resource::Candidate>;
/// The identifier of a privacy audit log entry, `pal_…`.
pub type PrivacyAuditLogId = Id<resource::PrivacyAuditLog>;
/// The identifier of a task queue, `que_…`.
pub type TaskQueueId = Id<resource::TaskQueue>;
/// The identifier of a job stage, `jst_…`.
pub type JobStageId = Id<resource::JobStage>;
/// The identifier of an API token, `tok_…`.
pub type ApiTokenId = Id<resource::ApiToken>;
/// The identifier of a log stream, `lst_…`.
pub type LogStreamId = Id<resource::LogStream>;

/// The login account behind a privacy audit log entry: a bare UUID, written as 32 lowercase hex
/// digits with no prefix (`account_id` in the API).
///
/// Input accepts 32 hex digits or a dashed UUID, in any letter case.
///
/// ```
/// use recruit_domain::AccountId;
///
/// let id: AccountId = "0190C7D8-E4A2-7CC3-B1F0-A2D4E6F80011".parse().unwrap();
/// assert_eq!(id.to_string(), "0190c7d8e4a27cc3b1f0a2d4e6f80011");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AccountId(Uuid);

impl AccountId {
    /// The length of the canonical form: 32 hex digits.
    pub const CANONICAL_LEN: usize = 32;
    const SPEC: Spec = Spec { prefix: None, prefix_text: None, noun: "an account ID" };

    /// Wraps a UUID.
    pub const fn from_uuid(uuid: Uuid) -> Self {
        Self(uuid)
    }

    /// The UUID inside.
    pub const fn uuid(self) -> Uuid {
        self.0
    }

    /// Parses 32 hex digits or a dashed UUID, in any letter case.
    pub fn parse(s: &str) -> Result<Self, ParseIdError> {
        parse::parse(Self::SPEC, s).map(|bytes| Self(Uuid::from_bytes(bytes)))
    }

    /// Writes the canonical form into `buf` and returns it, without allocating.
    pub fn encode(self, buf: &mut [u8; Self::CANONICAL_LEN]) -> &str {
        encode_hex(self.0.as_bytes(), buf);
        ascii(buf)
    }
}

impl fmt::Display for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.encode(&mut [0; Self::CANONICAL_LEN]))
    }
}

impl fmt::Debug for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AccountId({self})")
    }
}

impl FromStr for AccountId {
    type Err = ParseIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<&str> for AccountId {
    type Error = ParseIdError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        Self::parse(s)
    }
}

impl From<Uuid> for AccountId {
    fn from(uuid: Uuid) -> Self {
        Self(uuid)
    }
}

impl From<AccountId> for Uuid {
    fn from(id: AccountId) -> Self {
        id.0
    }
}

#[cfg(feature = "serde")]
mod serde_impls {
    //! Identifiers serialize as their canonical string and deserialize from any accepted
    //! spelling.

    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::{self, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{AccountId, CANONICAL_LEN, Id, ParseIdError, Resource};

    impl<R: Resource> Serialize for Id<R> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_str(self.encode(&mut [0; CANONICAL_LEN]))
        }
    }

    impl Serialize for AccountId {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_str(self.encode(&mut [0; AccountId::CANONICAL_LEN]))
        }
    }

    /// Visits a string and parses it with `parse`; `expecting` names what is wanted.
    struct ParseVisitor<T> {
        parse: fn(&str) -> Result<T, ParseIdError>,
        expecting: &'static str,
        output: PhantomData<fn() -> T>,
    }

    impl<T> Visitor<'_> for ParseVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            (self.parse)(v).map_err(|e| E::custom(format_args!("`{}` {e}", Truncated(v))))
        }
    }

    /// At most the first 48 characters of a string, so a message never carries a whole
    /// oversized input.
    struct Truncated<'a>(&'a str);

    impl fmt::Display for Truncated<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            const MAX: usize = 48;
            match self.0.char_indices().nth(MAX) {
                Some((end, _)) => write!(f, "{}…", self.0[..end].escape_debug()),
                None => write!(f, "{}", self.0.escape_debug()),
            }
        }
    }

    impl<'de, R: Resource> Deserialize<'de> for Id<R> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_str(ParseVisitor {
                parse: Id::<R>::parse,
                expecting: R::NOUN,
                output: PhantomData,
            })
        }
    }

    impl<'de> Deserialize<'de> for AccountId {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_str(ParseVisitor {
                parse: AccountId::parse,
                expecting: "an account ID",
                output: PhantomData,
            })
        }
    }
}
