//! The cursor of the privacy ledger list (design.md §5): opaque, URL-safe, signed with a server
//! key, bound to the organization and to the normalised filters, carrying the position after
//! which the next page starts. `limit` is not part of it, so it may change between pages.
//!
//! Layout before base64url: version (1 byte), organization (16), filter fingerprint (16),
//! position time in microseconds (8, big-endian), position id (16), then the first 16 bytes of
//! HMAC-SHA256 over all of that.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use recruit_domain::resource::PrivacyAuditLog;
use recruit_domain::{IdFilter, OrganizationId, PrivacyAuditLogId, TimeWindow, Timestamp, Uuid};
use recruit_ports::LedgerPosition;
use sha2::{Digest, Sha256};

const VERSION: u8 = 1;
const PAYLOAD: usize = 1 + 16 + 16 + 8 + 16;
const TAG: usize = 16;

/// The key cursors are signed with. Every replica must use the same one.
#[derive(Clone)]
pub struct CursorKey(Vec<u8>);

impl std::fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorKey(…)")
    }
}

impl CursorKey {
    /// A key from secret bytes; at least 32 of them.
    pub fn new(secret: &[u8]) -> Option<Self> {
        (secret.len() >= 32).then(|| Self(secret.to_vec()))
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes keys of any length.
        <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!())
    }
}

/// The filters a cursor is bound to, normalised: both ends of the window, the id filter as
/// a sorted set, and the filters of the entries' fields in canonical form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filters<'a> {
    /// The time window.
    pub window: TimeWindow,
    /// The id filter, when given.
    pub ids: Option<&'a IdFilter<PrivacyAuditLog>>,
    /// The filters of the entries' fields.
    pub fields: &'a crate::filter::Filter,
}

impl Filters<'_> {
    fn fingerprint(&self) -> [u8; 16] {
        let mut h = Sha256::new();
        h.update(self.window.gte().unix_micros().to_be_bytes());
        h.update(self.window.lt().unix_micros().to_be_bytes());
        match self.ids {
            None => h.update([0]),
            Some(ids) => {
                h.update([1]);
                h.update((ids.len() as u64).to_be_bytes());
                for id in ids.iter() {
                    h.update(id.uuid().as_bytes());
                }
            }
        }
        // Without field filters, the fingerprint is what it was before there were any.
        let fields = self.fields.json();
        if !fields.is_empty() {
            h.update([2]);
            h.update(serde_json::Value::Object(fields).to_string().as_bytes());
        }
        let digest = h.finalize();
        let mut out = [0u8; 16];
        out.copy_from_slice(&digest[..16]);
        out
    }
}

/// Writes the cursor of the page after `position`.
pub fn encode(
    key: &CursorKey,
    organization: OrganizationId,
    filters: &Filters<'_>,
    position: LedgerPosition,
) -> String {
    let mut bytes = Vec::with_capacity(PAYLOAD + TAG);
    bytes.push(VERSION);
    bytes.extend_from_slice(organization.uuid().as_bytes());
    bytes.extend_from_slice(&filters.fingerprint());
    bytes.extend_from_slice(&position.access_time.unix_micros().to_be_bytes());
    bytes.extend_from_slice(position.id.uuid().as_bytes());
    let mut mac = key.mac();
    mac.update(&bytes);
    bytes.extend_from_slice(&mac.finalize().into_bytes()[..TAG]);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Why a cursor is refused. Clients see one code, INVALID_CURSOR, whatever the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CursorError {
    /// Not a cursor this server wrote: bad encoding, length, version or signature.
    Malformed,
    /// A genuine cursor of another organization or of other filters.
    OtherQuery,
}

/// Reads a cursor back, checking its signature (in constant time) and that it belongs to this
/// organization and these filters.
pub fn decode(
    key: &CursorKey,
    cursor: &str,
    organization: OrganizationId,
    filters: &Filters<'_>,
) -> Result<LedgerPosition, CursorError> {
    if cursor.len() > 2 * (PAYLOAD + TAG) {
        return Err(CursorError::Malformed);
    }
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| CursorError::Malformed)?;
    if bytes.len() != PAYLOAD + TAG || bytes[0] != VERSION {
        return Err(CursorError::Malformed);
    }
    let (payload, tag) = bytes.split_at(PAYLOAD);
    let mut mac = key.mac();
    mac.update(payload);
    mac.verify_truncated_left(tag).map_err(|_| CursorError::Malformed)?;

    let uuid = |range: std::ops::Range<usize>| {
        Uuid::from_slice(&payload[range]).map_err(|_| CursorError::Malformed)
    };
    if uuid(1..17)? != organization.uuid() || payload[17..33] != filters.fingerprint() {
        return Err(CursorError::OtherQuery);
    }
    let micros =
        i64::from_be_bytes(payload[33..41].try_into().map_err(|_| CursorError::Malformed)?);
    Ok(LedgerPosition {
        access_time: Timestamp::from_unix_micros(micros).map_err(|_| CursorError::Malformed)?,
        id: PrivacyAuditLogId::from_uuid(uuid(41..57)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CursorKey {
        CursorKey::new(&[7; 32]).unwrap()
    }

    fn window(from: &str, to: &str) -> TimeWindow {
        TimeWindow::new(from.parse().unwrap(), to.parse().unwrap()).unwrap()
    }

    fn position() -> LedgerPosition {
        LedgerPosition {
            access_time: "2026-03-01T10:00:00.123456Z".parse().unwrap(),
            id: PrivacyAuditLogId::from_uuid(Uuid::from_u128(42)),
        }
    }

    #[test]
    fn a_cursor_round_trips_for_the_same_organization_and_filters() {
        let org = OrganizationId::from_uuid(Uuid::from_u128(1));
        let ids =
            IdFilter::new([3, 1, 2].map(|n| PrivacyAuditLogId::from_uuid(Uuid::from_u128(n))))
                .unwrap();
        let f = Filters {
            window: window("2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z"),
            ids: Some(&ids),
            fields: &crate::filter::Filter::default(),
        };
        let cursor = encode(&key(), org, &f, position());
        assert!(
            cursor.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{cursor}"
        );
        assert_eq!(decode(&key(), &cursor, org, &f), Ok(position()));
        // The same set in another order and with repeats is the same filter.
        let same =
            IdFilter::new([2, 3, 1, 1].map(|n| PrivacyAuditLogId::from_uuid(Uuid::from_u128(n))))
                .unwrap();
        let f2 = Filters { ids: Some(&same), ..f.clone() };
        assert_eq!(decode(&key(), &cursor, org, &f2), Ok(position()));
    }

    #[test]
    fn a_cursor_of_other_filters_or_another_organization_is_refused() {
        let org = OrganizationId::from_uuid(Uuid::from_u128(1));
        let f = Filters {
            window: window("2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z"),
            ids: None,
            fields: &crate::filter::Filter::default(),
        };
        let cursor = encode(&key(), org, &f, position());
        let other_org = OrganizationId::from_uuid(Uuid::from_u128(2));
        assert_eq!(decode(&key(), &cursor, other_org, &f), Err(CursorError::OtherQuery));
        let wider = Filters {
            window: window("2026-01-01T00:00:00Z", "2026-06-01T00:00:00.000001Z"),
            ..f.clone()
        };
        assert_eq!(decode(&key(), &cursor, org, &wider), Err(CursorError::OtherQuery));
        let by_account = crate::filter::Filter {
            account: Some(recruit_domain::AccountId::from(Uuid::from_u128(7))),
            ..crate::filter::Filter::default()
        };
        let narrower = Filters { fields: &by_account, ..f.clone() };
        assert_eq!(decode(&key(), &cursor, org, &narrower), Err(CursorError::OtherQuery));
        let ids = IdFilter::new([PrivacyAuditLogId::nil()]).unwrap();
        let filtered = Filters { ids: Some(&ids), ..f.clone() };
        assert_eq!(decode(&key(), &cursor, org, &filtered), Err(CursorError::OtherQuery));
    }

    #[test]
    fn tampered_forged_or_garbage_cursors_are_refused() {
        let org = OrganizationId::from_uuid(Uuid::from_u128(1));
        let f = Filters {
            window: window("2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z"),
            ids: None,
            fields: &crate::filter::Filter::default(),
        };
        let cursor = encode(&key(), org, &f, position());
        let mut bytes = URL_SAFE_NO_PAD.decode(&cursor).unwrap();
        bytes[40] ^= 1;
        let tampered = URL_SAFE_NO_PAD.encode(&bytes);
        assert_eq!(decode(&key(), &tampered, org, &f), Err(CursorError::Malformed));
        let forged = encode(&CursorKey::new(&[8; 32]).unwrap(), org, &f, position());
        assert_eq!(decode(&key(), &forged, org, &f), Err(CursorError::Malformed));
        for garbage in
            ["", "abc", "!!!!", &"A".repeat(98), &"A".repeat(10_000), &cursor[..cursor.len() - 1]]
        {
            assert_eq!(
                decode(&key(), garbage, org, &f),
                Err(CursorError::Malformed),
                "{garbage:?}"
            );
        }
        assert!(CursorKey::new(&[0; 31]).is_none());
    }
}
