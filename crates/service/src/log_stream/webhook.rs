//! The HTTPS destination's signatures, per the Standard Webhooks specification (v1.0.0): a
//! batch is sent with `webhook-id` (the same on every retry: the receiver's idempotency key),
//! `webhook-timestamp` (Unix seconds of the attempt) and `webhook-signature`, a `v1,` HMAC-SHA256
//! of `{id}.{timestamp}.{body}` under each current secret, space-separated, so that a receiver
//! holding either the new or the previous secret verifies a batch during a rotation.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use hmac::{KeyInit, Mac};
use rand::RngExt;

/// What every secret's text begins with.
pub const SECRET_PREFIX: &str = "whsec_";

/// A signing secret. Its text is shown once, when made; its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret(Vec<u8>);

impl SigningSecret {
    /// A new random secret.
    pub fn generate() -> Self {
        // The specification asks for 24 to 64 bytes.
        let key: [u8; 32] = rand::rng().random();
        Self(key.to_vec())
    }

    /// The secret of `text`, `whsec_` and the base64 of 24 to 64 bytes (padding optional).
    pub fn parse(text: &str) -> Result<Self, String> {
        let encoded = text.strip_prefix(SECRET_PREFIX).ok_or("a secret begins with whsec_")?;
        let key = STANDARD
            .decode(encoded)
            .or_else(|_| STANDARD_NO_PAD.decode(encoded))
            .map_err(|_| "a secret is whsec_ and base64")?;
        if !(24..=64).contains(&key.len()) {
            return Err("a secret holds 24 to 64 bytes".into());
        }
        Ok(Self(key))
    }

    /// The secret's text, `whsec_…`: what the receiver is given.
    pub fn reveal(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.0))
    }

    /// The `v1,` signature of the content made of `parts`, one after the other.
    fn sign(&self, parts: &[&[u8]]) -> String {
        let mut mac = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        for part in parts {
            mac.update(part);
        }
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret(<write-only>)")
    }
}

/// A batch's `webhook-id`: the stream and the chain positions it carries, the same on every
/// retry of the batch (no `.`, which the signed content uses as its separator).
pub fn message_id(stream: uuid::Uuid, first: u64, last: u64) -> String {
    format!("lsb_{}_{first}_{last}", stream.simple())
}

/// The three headers of a batch with `body`, sent at `timestamp` (Unix seconds), signed by each
/// of `secrets` (the current one first, the previous one during a rotation).
pub fn headers(
    secrets: &[&SigningSecret],
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> [(&'static str, String); 3] {
    let prefix = format!("{id}.{timestamp}.");
    let signatures: Vec<String> =
        secrets.iter().map(|s| s.sign(&[prefix.as_bytes(), body])).collect();
    [
        ("webhook-id", id.to_owned()),
        ("webhook-timestamp", timestamp.to_string()),
        ("webhook-signature", signatures.join(" ")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specifications_example_is_signed_as_it_says() {
        // The test vector of the specification's reference libraries.
        let secret = SigningSecret::parse("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD").unwrap();
        let body = br#"{"email":"test@example.com","username":"test_user"}"#;
        let [id, timestamp, signature] =
            headers(&[&secret], "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk", 1_649_367_553, body);
        assert_eq!(id, ("webhook-id", "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk".to_owned()));
        assert_eq!(timestamp, ("webhook-timestamp", "1649367553".to_owned()));
        assert_eq!(signature.1, "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=");
    }

    #[test]
    fn during_a_rotation_both_secrets_sign_and_each_signature_is_its_own() {
        let (new, old) = (SigningSecret::generate(), SigningSecret::generate());
        let body = b"{\"a\":1}\n{\"b\":2}\n";
        let both = headers(&[&new, &old], "lsb_x_1_2", 1_700_000_000, body)[2].1.clone();
        let alone =
            |s: &SigningSecret| headers(&[s], "lsb_x_1_2", 1_700_000_000, body)[2].1.clone();
        assert_eq!(both, format!("{} {}", alone(&new), alone(&old)));
        assert_ne!(alone(&new), alone(&old));
        let later = headers(&[&new], "lsb_x_1_2", 1_700_000_001, body)[2].1.clone();
        assert_ne!(later, alone(&new), "the timestamp is signed");
    }

    #[test]
    fn a_secret_is_shown_as_text_that_parses_back_and_never_in_debug() {
        let secret = SigningSecret::generate();
        let text = secret.reveal();
        assert!(text.starts_with("whsec_") && text.len() == 6 + 44, "{text}");
        assert_eq!(SigningSecret::parse(&text), Ok(secret.clone()));
        assert!(!format!("{secret:?}").contains(&text[6..]));
        let unpadded = text.trim_end_matches('=');
        assert_eq!(SigningSecret::parse(unpadded), Ok(secret), "padding is optional");
        for bad in ["C2FVsBQIhrscChlQIMV+b5sSYspob7oD", "whsec_!!", "whsec_c2hvcnQ="] {
            assert!(SigningSecret::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_batchs_id_is_the_same_on_every_retry_and_has_no_separator() {
        let stream = uuid::Uuid::from_u128(0x0190_b3c1_d2e3_7f4a_8b9c_0d1e_2f3a_4b5c);
        let id = message_id(stream, 41, 1040);
        assert_eq!(id, message_id(stream, 41, 1040));
        assert_eq!(id, "lsb_0190b3c1d2e37f4a8b9c0d1e2f3a4b5c_41_1040");
        assert!(!id.contains('.'));
    }
}
