//! Tamper evidence of the ledgers: every entry of an organization's ledger has a position and a
//! hash that chains it to the entry before, so that a change, a removal, an insertion or a
//! reordering of stored entries shows when the chain is computed again.
//!
//! The hash of the entry at `position` of `ledger` in `organization` is SHA-256 over, in order:
//!
//! 1. the tag `recruitd-ledger-v1` and a line feed (the encoding's version),
//! 2. the ledger's name (`privacy`, `api` or `tool`) and a line feed,
//! 3. the organization's UUID, 16 bytes,
//! 4. the position, 8 bytes big-endian (the first entry is at 1),
//! 5. the hash of the entry before (32 zero bytes for the first, [`GENESIS`]),
//! 6. the entry's canonical JSON ([`canonical_json`]): its object as the export shows it,
//!    without `position`, `prev_hash` and `hash`, keys sorted, no insignificant whitespace
//!    (RFC 8785 for the values entries hold: strings, integers, booleans, nulls, arrays and
//!    objects).
//!
//! Anyone holding an export can therefore recompute every hash with a JSON canonicalizer and
//! SHA-256, and compare the last one with a checkpoint kept outside the database.

use std::fmt;

mod finding;
mod line;
mod received;
pub use finding::{Finding, FindingKind};
pub use line::{ChainBreak, ChainPoint, ExportLine};
pub use received::{Problem, ReceivedChain, check_received};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::Signer as _;
/// The Ed25519 keys checkpoints are signed and checked with (`ed25519-dalek`'s).
pub use ed25519_dalek::{SigningKey, VerifyingKey};
use sha2::{Digest as _, Sha256};

use crate::{OrganizationId, Timestamp};

/// A SHA-256 digest: an entry's hash.
pub type Digest = [u8; 32];

/// The hash "before" the first entry of every chain.
pub const GENESIS: Digest = [0; 32];

/// One of the three ledgers, each chained per organization.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Ledger {
    /// The privacy audit ledger: who accessed whose personal data.
    Privacy,
    /// The API audit ledger: reads of the privacy ledger through the REST API.
    Api,
    /// The tool-interface audit ledger: reads of the privacy ledger through tools.
    Tool,
}

impl Ledger {
    /// Every ledger, in the order of their names.
    pub const ALL: [Ledger; 3] = [Ledger::Api, Ledger::Privacy, Ledger::Tool];

    /// The ledger's name: `privacy`, `api` or `tool`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Ledger::Privacy => "privacy",
            Ledger::Api => "api",
            Ledger::Tool => "tool",
        }
    }

    /// The ledger of this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl fmt::Display for Ledger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The hash of an entry: see the [module](self) for what it covers.
pub fn entry_hash(
    ledger: Ledger,
    organization: OrganizationId,
    position: u64,
    prev: &Digest,
    canonical_entry: &[u8],
) -> Digest {
    let mut hash = Sha256::new();
    hash.update(b"recruitd-ledger-v1\n");
    hash.update(ledger.as_str().as_bytes());
    hash.update(b"\n");
    hash.update(organization.uuid().as_bytes());
    hash.update(position.to_be_bytes());
    hash.update(prev);
    hash.update(canonical_entry);
    hash.finalize().into()
}

/// The canonical JSON of `entry`: keys sorted, no insignificant whitespace. Fails only for a
/// value JSON cannot hold (a map with keys that are not strings).
pub fn canonical_json<T: serde::Serialize>(entry: &T) -> Result<Vec<u8>, serde_json::Error> {
    // The bytes `serde_json::to_vec(&serde_json::to_value(entry)?)` gives, without the `Value`.
    crate::canonical::to_vec(entry)
}

/// A digest in lowercase hexadecimal, as exports and checkpoints show it.
pub fn hex(digest: &Digest) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(64);
    for b in digest {
        text.push(char::from(DIGITS[usize::from(b >> 4)]));
        text.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    text
}

/// The digest a string of 64 hexadecimal digits spells.
pub fn parse_hex(text: &str) -> Option<Digest> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = GENESIS;
    for (i, pair) in bytes.chunks(2).enumerate() {
        let digit = |c: u8| char::from(c).to_digit(16);
        out[i] = u8::try_from(digit(pair[0])? * 16 + digit(pair[1])?).ok()?;
    }
    Some(out)
}

/// A signed statement that the chain of `ledger` of an organization had the entry hashed
/// `head_hash` at `position` when it was signed: kept outside the database, it proves that no
/// entry up to `position` was changed, removed, inserted or reordered since, and that the chain
/// was not cut below it.
///
/// The signature is Ed25519 over the UTF-8 text of these fields as the JSON shows them, each
/// followed by a line feed ([`Checkpoint::message`]):
///
/// ```text
/// recruitd-checkpoint-v1
/// {ledger}
/// {organization_id}
/// {position}
/// {head_hash}
/// {signed_at}
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    /// The organization whose chain it is.
    pub organization_id: OrganizationId,
    /// The ledger.
    pub ledger: Ledger,
    /// The position of the entry the chain ended with (the first entry is at 1).
    pub position: u64,
    /// That entry's hash, in lowercase hexadecimal ([`hex`]).
    pub head_hash: String,
    /// When it was signed.
    pub signed_at: Timestamp,
    /// Which key signed it: the RFC 7638 thumbprint of its public key ([`key_id`]).
    pub key_id: String,
    /// The signature's algorithm: always `Ed25519`.
    pub algorithm: String,
    /// The signature of [`Checkpoint::message`], base64url without padding.
    pub signature: String,
}

/// The algorithm every checkpoint is signed with.
pub const CHECKPOINT_ALGORITHM: &str = "Ed25519";

/// Why a checkpoint does not prove anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    /// It names another algorithm than Ed25519.
    #[error("the checkpoint is not signed with Ed25519")]
    Algorithm,
    /// It was signed by another key than the one it is checked with.
    #[error("the checkpoint was signed by key {0}, not by the key it is checked with")]
    OtherKey(String),
    /// Its hash or its signature is not well formed.
    #[error("the checkpoint's {0} is not well formed")]
    Malformed(&'static str),
    /// The signature does not match its fields: the checkpoint was altered or forged.
    #[error("the checkpoint's signature does not match its fields")]
    BadSignature,
}

impl Checkpoint {
    /// The text a checkpoint of these fields signs.
    pub fn message(
        ledger: Ledger,
        organization: OrganizationId,
        position: u64,
        head_hash: &Digest,
        signed_at: Timestamp,
    ) -> String {
        format!(
            "recruitd-checkpoint-v1\n{ledger}\n{organization}\n{position}\n{}\n{signed_at}\n",
            hex(head_hash)
        )
    }

    /// Signs that `ledger` of `organization` had `head_hash` at `position` at `signed_at`.
    pub fn sign(
        key: &SigningKey,
        ledger: Ledger,
        organization: OrganizationId,
        position: u64,
        head_hash: &Digest,
        signed_at: Timestamp,
    ) -> Self {
        let message = Self::message(ledger, organization, position, head_hash, signed_at);
        let signature = key.sign(message.as_bytes());
        Self {
            organization_id: organization,
            ledger,
            position,
            head_hash: hex(head_hash),
            signed_at,
            key_id: key_id(&key.verifying_key()),
            algorithm: CHECKPOINT_ALGORITHM.to_owned(),
            signature: URL_SAFE_NO_PAD.encode(signature.to_bytes()),
        }
    }

    /// Checks the signature with `key`; returns the head hash it vouches for.
    pub fn verify(&self, key: &VerifyingKey) -> Result<Digest, CheckpointError> {
        signed_with(key, &self.algorithm, &self.key_id)?;
        let head = parse_hex(&self.head_hash).ok_or(CheckpointError::Malformed("head_hash"))?;
        let message =
            Self::message(self.ledger, self.organization_id, self.position, &head, self.signed_at);
        check_signature(key, &message, &self.signature)?;
        Ok(head)
    }
}

/// Whether a signature said to be made with `algorithm` by the key `named` can be checked
/// with `key`.
fn signed_with(key: &VerifyingKey, algorithm: &str, named: &str) -> Result<(), CheckpointError> {
    if algorithm != CHECKPOINT_ALGORITHM {
        return Err(CheckpointError::Algorithm);
    }
    if named != key_id(key) {
        return Err(CheckpointError::OtherKey(named.to_owned()));
    }
    Ok(())
}

/// Checks `signature` (base64url) of `message` with `key`.
fn check_signature(
    key: &VerifyingKey,
    message: &str,
    signature: &str,
) -> Result<(), CheckpointError> {
    let signature = URL_SAFE_NO_PAD
        .decode(signature)
        .ok()
        .and_then(|bytes| ed25519_dalek::Signature::from_slice(&bytes).ok())
        .ok_or(CheckpointError::Malformed("signature"))?;
    key.verify_strict(message.as_bytes(), &signature).map_err(|_| CheckpointError::BadSignature)
}

/// A signed record that retention removed the entries of an organization's chain of `ledger`
/// up to `position`, every one recorded before `recorded_before`, the last of them hashed
/// `hash`. The chain that remains starts after it: its first entry links to `hash`, which
/// this record vouches for as a checkpoint does, so that what remains is proven whole.
///
/// The signature is Ed25519 over the UTF-8 text of these fields, each followed by a line
/// feed ([`RetentionCut::message`]); the first line, `recruitd-retention-cut-v1`, keeps a cut
/// from ever being taken for a checkpoint, or the other way round.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RetentionCut {
    /// The organization whose chain it is.
    pub organization_id: OrganizationId,
    /// The ledger.
    pub ledger: Ledger,
    /// The position of the last entry removed.
    pub position: u64,
    /// That entry's hash, in lowercase hexadecimal ([`hex`]).
    pub hash: String,
    /// Every entry removed was recorded before this instant, and none after it was.
    pub recorded_before: Timestamp,
    /// When it was signed.
    pub signed_at: Timestamp,
    /// Which key signed it ([`key_id`]).
    pub key_id: String,
    /// Always `Ed25519`.
    pub algorithm: String,
    /// The signature of [`RetentionCut::message`], base64url without padding.
    pub signature: String,
}

impl RetentionCut {
    /// The text a cut of these fields signs.
    pub fn message(
        ledger: Ledger,
        organization: OrganizationId,
        position: u64,
        hash: &Digest,
        recorded_before: Timestamp,
        signed_at: Timestamp,
    ) -> String {
        format!(
            "recruitd-retention-cut-v1\n{ledger}\n{organization}\n{position}\n{}\n\
             {recorded_before}\n{signed_at}\n",
            hex(hash)
        )
    }

    /// Signs that retention removed `ledger` of `organization` up to `position`, hashed
    /// `hash`, every entry recorded before `recorded_before`.
    pub fn sign(
        key: &SigningKey,
        ledger: Ledger,
        organization: OrganizationId,
        (position, hash): (u64, &Digest),
        recorded_before: Timestamp,
        signed_at: Timestamp,
    ) -> Self {
        let message =
            Self::message(ledger, organization, position, hash, recorded_before, signed_at);
        Self {
            organization_id: organization,
            ledger,
            position,
            hash: hex(hash),
            recorded_before,
            signed_at,
            key_id: key_id(&key.verifying_key()),
            algorithm: CHECKPOINT_ALGORITHM.to_owned(),
            signature: URL_SAFE_NO_PAD.encode(key.sign(message.as_bytes()).to_bytes()),
        }
    }

    /// Checks the signature with `key`; returns the hash of the last entry removed.
    pub fn verify(&self, key: &VerifyingKey) -> Result<Digest, CheckpointError> {
        signed_with(key, &self.algorithm, &self.key_id)?;
        let hash = parse_hex(&self.hash).ok_or(CheckpointError::Malformed("hash"))?;
        let message = Self::message(
            self.ledger,
            self.organization_id,
            self.position,
            &hash,
            self.recorded_before,
            self.signed_at,
        );
        check_signature(key, &message, &self.signature)?;
        Ok(hash)
    }
}

/// A public key's identifier: its RFC 7638 JWK thumbprint (SHA-256 of its canonical JWK,
/// base64url without padding).
pub fn key_id(key: &VerifyingKey) -> String {
    let x = URL_SAFE_NO_PAD.encode(key.as_bytes());
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// The Ed25519 public key of a JSON Web Key (RFC 8037: `kty` `OKP`, `crv` `Ed25519`, `x` the
/// key in base64url), as the server's key set lists it; none for any other key.
pub fn key_from_jwk(jwk: &serde_json::Value) -> Option<VerifyingKey> {
    if jwk["kty"] != "OKP" || jwk["crv"] != "Ed25519" {
        return None;
    }
    let x = URL_SAFE_NO_PAD.decode(jwk["x"].as_str()?).ok()?;
    VerifyingKey::from_bytes(&x.try_into().ok()?).ok()
}

/// A public key as a JSON Web Key (RFC 8037), with its [`key_id`] as `kid`.
pub fn jwk(key: &VerifyingKey) -> serde_json::Value {
    serde_json::json!({
        "kty": "OKP",
        "crv": "Ed25519",
        "x": URL_SAFE_NO_PAD.encode(key.as_bytes()),
        "kid": key_id(key),
        "alg": "EdDSA",
        "use": "sig",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_anywhere_changes_the_hash() {
        let org = OrganizationId::from_uuid(crate::Uuid::from_u128(7));
        let base = entry_hash(Ledger::Privacy, org, 1, &GENESIS, b"{}");
        assert_ne!(base, entry_hash(Ledger::Api, org, 1, &GENESIS, b"{}"));
        assert_ne!(base, entry_hash(Ledger::Privacy, org, 2, &GENESIS, b"{}"));
        assert_ne!(base, entry_hash(Ledger::Privacy, org, 1, &[1; 32], b"{}"));
        assert_ne!(base, entry_hash(Ledger::Privacy, org, 1, &GENESIS, b"{ }"));
        let other = OrganizationId::from_uuid(crate::Uuid::from_u128(8));
        assert_ne!(base, entry_hash(Ledger::Privacy, other, 1, &GENESIS, b"{}"));
    }

    #[test]
    fn canonical_json_sorts_keys_and_drops_whitespace() {
        #[derive(serde::Serialize)]
        struct E {
            zeta: u32,
            alpha: Vec<&'static str>,
        }
        let json = canonical_json(&E { zeta: 1, alpha: vec!["a b"] }).unwrap();
        assert_eq!(json, br#"{"alpha":["a b"],"zeta":1}"#);
    }

    #[test]
    fn hex_round_trips() {
        let d: Digest = std::array::from_fn(|i| u8::try_from(i * 7).unwrap());
        assert_eq!(parse_hex(&hex(&d)), Some(d));
        assert_eq!(parse_hex("zz"), None);
        assert_eq!(parse_hex(&"g".repeat(64)), None);
    }

    fn checkpoint() -> (SigningKey, Checkpoint) {
        let key = SigningKey::from_bytes(&[7; 32]);
        let org = OrganizationId::from_uuid(crate::Uuid::from_u128(7));
        let at = Timestamp::parse("2026-11-24T01:02:03.456789Z").unwrap();
        let c = Checkpoint::sign(&key, Ledger::Privacy, org, 41, &[9; 32], at);
        (key, c)
    }

    #[test]
    fn a_checkpoint_verifies_with_its_key_and_survives_json() {
        let (key, c) = checkpoint();
        assert_eq!(c.verify(&key.verifying_key()), Ok([9; 32]));
        let json = serde_json::to_string(&c).unwrap();
        let back: Checkpoint = serde_json::from_str(&json).unwrap();
        assert_eq!(back.verify(&key.verifying_key()), Ok([9; 32]));
        assert_eq!(
            Checkpoint::message(c.ledger, c.organization_id, 41, &[9; 32], c.signed_at),
            format!(
                "recruitd-checkpoint-v1\nprivacy\n{}\n41\n{}\n2026-11-24T01:02:03.456789Z\n",
                c.organization_id,
                "09".repeat(32)
            )
        );
    }

    #[test]
    fn a_cut_verifies_with_its_key_and_is_never_taken_for_a_checkpoint() {
        let (key, c) = checkpoint();
        let public = key.verifying_key();
        let before = Timestamp::parse("2024-11-01T00:00:00Z").unwrap();
        let cut = RetentionCut::sign(
            &key,
            c.ledger,
            c.organization_id,
            (41, &[9; 32]),
            before,
            c.signed_at,
        );
        assert_eq!(cut.verify(&public), Ok([9; 32]));
        let back: RetentionCut =
            serde_json::from_str(&serde_json::to_string(&cut).unwrap()).unwrap();
        assert_eq!(back, cut);
        let bad = |cut: RetentionCut| cut.verify(&public).unwrap_err();
        let later = Timestamp::parse("2024-12-01T00:00:00Z").unwrap();
        assert_eq!(
            bad(RetentionCut { recorded_before: later, ..cut.clone() }),
            CheckpointError::BadSignature
        );
        assert_eq!(
            bad(RetentionCut { position: 40, ..cut.clone() }),
            CheckpointError::BadSignature
        );
        // The same fields signed as a checkpoint are not a cut, and a cut is no checkpoint.
        let as_checkpoint = RetentionCut { signature: c.signature.clone(), ..cut.clone() };
        assert_eq!(bad(as_checkpoint), CheckpointError::BadSignature);
        let as_cut = Checkpoint { signature: cut.signature.clone(), ..c };
        assert_eq!(as_cut.verify(&public).unwrap_err(), CheckpointError::BadSignature);
    }

    #[test]
    fn a_changed_field_or_another_key_does_not_verify() {
        let (key, c) = checkpoint();
        let public = key.verifying_key();
        let bad = |c: Checkpoint| c.verify(&public).unwrap_err();
        assert_eq!(bad(Checkpoint { position: 42, ..c.clone() }), CheckpointError::BadSignature);
        assert_eq!(
            bad(Checkpoint { head_hash: "0a".repeat(32), ..c.clone() }),
            CheckpointError::BadSignature
        );
        assert_eq!(
            bad(Checkpoint { ledger: Ledger::Api, ..c.clone() }),
            CheckpointError::BadSignature
        );
        let later = Timestamp::parse("2026-11-24T01:02:04Z").unwrap();
        assert_eq!(
            bad(Checkpoint { signed_at: later, ..c.clone() }),
            CheckpointError::BadSignature
        );
        assert_eq!(
            bad(Checkpoint { signature: "AAAA".into(), ..c.clone() }),
            CheckpointError::Malformed("signature")
        );
        let other = SigningKey::from_bytes(&[8; 32]).verifying_key();
        assert!(matches!(c.verify(&other), Err(CheckpointError::OtherKey(_))));
    }

    #[test]
    fn the_key_id_is_the_rfc_7638_thumbprint() {
        // RFC 8037, appendix A.3: the thumbprint of the key of A.2.
        let x = URL_SAFE_NO_PAD.decode("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo").unwrap();
        let key = VerifyingKey::from_bytes(&x.try_into().unwrap()).unwrap();
        assert_eq!(key_id(&key), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
        assert_eq!(key_from_jwk(&jwk(&key)), Some(key));
        assert_eq!(key_from_jwk(&serde_json::json!({"kty": "RSA", "x": "AQAB"})), None);
    }
}
