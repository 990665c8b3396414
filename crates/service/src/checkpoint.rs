//! Signed checkpoints of the ledgers' chains ([`recruit_domain::chain::Checkpoint`]): the
//! server's Ed25519 key ([`CheckpointKey`], from a PKCS#8 PEM file), signing the heads of the
//! chains that moved since their last checkpoint ([`sign_heads`]), on a schedule or on demand,
//! and the latest checkpoint of a chain for an auditor ([`latest`]).
//!
//! A checkpoint kept outside the database proves, with the public key alone, what the chain
//! held up to its position: `recruitd audit verify` names any entry changed, removed, inserted
//! or reordered at or below it, and a chain cut below it, even when whoever changed the
//! database computed every hash again.

use std::path::Path;

use ed25519_dalek::SigningKey;
pub use ed25519_dalek::VerifyingKey;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use rand::RngExt;
use recruit_domain::chain::{Checkpoint, Digest, Ledger, key_id};
use recruit_domain::{OrganizationId, Timestamp};
use recruit_ports::{Store, StoreError};

/// The key the server signs checkpoints with.
#[derive(Clone)]
pub struct CheckpointKey {
    signing: SigningKey,
}

impl std::fmt::Debug for CheckpointKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointKey").field("key_id", &self.key_id()).finish_non_exhaustive()
    }
}

/// Why a key could not be read.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds no key of the kind expected.
    #[error(
        "{path} is not an Ed25519 {kind} in PEM (PKCS#8 for a private key, SubjectPublicKeyInfo \
         for a public one): {reason}; `recruitd audit keygen FILE` writes a private key, or \
         `openssl genpkey -algorithm ed25519`"
    )]
    Format {
        /// The file.
        path: String,
        /// A private or a public key.
        kind: &'static str,
        /// What the decoder said.
        reason: String,
    },
}

impl CheckpointKey {
    /// A new random key.
    pub fn generate() -> Self {
        let secret: [u8; 32] = rand::rng().random();
        Self { signing: SigningKey::from_bytes(&secret) }
    }

    /// The key of a PKCS#8 PEM file (`-----BEGIN PRIVATE KEY-----`).
    pub fn load(path: &Path) -> Result<Self, KeyError> {
        let text = read(path)?;
        let signing = SigningKey::from_pkcs8_pem(&text).map_err(|e| KeyError::Format {
            path: path.display().to_string(),
            kind: "private key",
            reason: e.to_string(),
        })?;
        Ok(Self { signing })
    }

    /// The key in PKCS#8 PEM, for a file only its owner can read.
    pub fn to_pem(&self) -> String {
        self.signing
            .to_pkcs8_pem(Default::default())
            .map(|pem| pem.to_string())
            .expect("an Ed25519 key always encodes")
    }

    /// The public key.
    pub fn public(&self) -> VerifyingKey {
        self.signing.verifying_key()
    }

    /// The public key's identifier ([`key_id`]), which every checkpoint it signs names.
    pub fn key_id(&self) -> String {
        key_id(&self.public())
    }

    /// Signs that `ledger` of `organization` had `hash` at `position`, now.
    pub fn sign(
        &self,
        ledger: Ledger,
        organization: OrganizationId,
        position: u64,
        hash: &Digest,
    ) -> Checkpoint {
        Checkpoint::sign(&self.signing, ledger, organization, position, hash, Timestamp::now())
    }

    /// Signs, at `signed_at`, that retention removed `ledger` of `organization` up to the
    /// entry at `(position, hash)`, every entry recorded before `before`.
    pub fn sign_cut(
        &self,
        ledger: Ledger,
        organization: OrganizationId,
        at: (u64, &Digest),
        before: Timestamp,
        signed_at: Timestamp,
    ) -> recruit_domain::chain::RetentionCut {
        recruit_domain::chain::RetentionCut::sign(
            &self.signing,
            ledger,
            organization,
            at,
            before,
            signed_at,
        )
    }
}

/// The public key in PEM (SubjectPublicKeyInfo, `-----BEGIN PUBLIC KEY-----`).
pub fn public_pem(key: &VerifyingKey) -> String {
    key.to_public_key_pem(Default::default()).expect("an Ed25519 key always encodes")
}

/// The public key of a PEM file: a public key, or a private key's public half.
pub fn load_public(path: &Path) -> Result<VerifyingKey, KeyError> {
    let text = read(path)?;
    if let Ok(key) = VerifyingKey::from_public_key_pem(&text) {
        return Ok(key);
    }
    SigningKey::from_pkcs8_pem(&text).map(|k| k.verifying_key()).map_err(|e| KeyError::Format {
        path: path.display().to_string(),
        kind: "public key",
        reason: e.to_string(),
    })
}

fn read(path: &Path) -> Result<String, KeyError> {
    std::fs::read_to_string(path)
        .map_err(|source| KeyError::Read { path: path.display().to_string(), source })
}

/// Signs the head of every chain (of `organization`'s, when given) that moved since its last
/// checkpoint, and stores the checkpoints; returns them. A chain whose head already has a
/// checkpoint by this key gets none.
pub async fn sign_heads(
    store: &dyn Store,
    key: &CheckpointKey,
    organization: Option<OrganizationId>,
) -> Result<Vec<Checkpoint>, StoreError> {
    let mut signed = vec![];
    for head in store.chain_heads(organization).await? {
        let Some(ledger) = Ledger::from_name(&head.ledger) else { continue };
        let org = OrganizationId::from_uuid(head.organization_id);
        let (Ok(position), Ok(hash)) =
            (u64::try_from(head.position), <Digest>::try_from(head.hash.as_slice()))
        else {
            continue;
        };
        if position == 0 {
            continue;
        }
        let latest = store.latest_checkpoint(org, ledger).await?;
        if latest.is_some_and(|c| c.position == position && c.key_id == key.key_id()) {
            continue;
        }
        signed.push(key.sign(ledger, org, position, &hash));
    }
    store.save_checkpoints(&signed).await?;
    Ok(signed)
}

/// The latest checkpoint of `organization`'s `ledger`, signed now if its head moved since (or
/// if it has none yet); `None` when nothing was ever recorded in the ledger.
pub async fn latest(
    store: &dyn Store,
    key: &CheckpointKey,
    organization: OrganizationId,
    ledger: Ledger,
) -> Result<Option<Checkpoint>, StoreError> {
    let head = store
        .chain_heads(Some(organization))
        .await?
        .into_iter()
        .find(|h| h.ledger == ledger.as_str() && h.position > 0);
    let Some(head) = head else { return Ok(None) };
    let stored = store.latest_checkpoint(organization, ledger).await?;
    if let Some(c) = stored
        && c.position as i64 == head.position
        && c.key_id == key.key_id()
    {
        return Ok(Some(c));
    }
    let hash: Digest = head
        .hash
        .as_slice()
        .try_into()
        .map_err(|_| StoreError::other("a chain's head hash is not 32 bytes"))?;
    let checkpoint = key.sign(ledger, organization, head.position as u64, &hash);
    store.save_checkpoints(std::slice::from_ref(&checkpoint)).await?;
    Ok(Some(checkpoint))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_survives_its_pem_and_its_public_half_verifies_what_it_signs() {
        let dir = tempfile::tempdir().unwrap();
        let key = CheckpointKey::generate();
        let private = dir.path().join("key.pem");
        std::fs::write(&private, key.to_pem()).unwrap();
        let public = dir.path().join("key.pub.pem");
        std::fs::write(&public, public_pem(&key.public())).unwrap();
        let again = CheckpointKey::load(&private).unwrap();
        assert_eq!(again.key_id(), key.key_id());
        let org = OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(1));
        let c = again.sign(Ledger::Privacy, org, 3, &[5; 32]);
        assert_eq!(c.verify(&load_public(&public).unwrap()), Ok([5; 32]));
        assert_eq!(c.verify(&load_public(&private).unwrap()), Ok([5; 32]));
    }

    #[test]
    fn a_file_that_is_no_key_is_named_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.pem");
        std::fs::write(&path, "not a key").unwrap();
        let e = CheckpointKey::load(&path).unwrap_err().to_string();
        assert!(e.contains("key.pem") && e.contains("recruitd audit keygen"), "{e}");
        let missing = CheckpointKey::load(&dir.path().join("none.pem")).unwrap_err().to_string();
        assert!(missing.starts_with("cannot read"), "{missing}");
    }
}
