//! Contract cases of log streams: kept with the records of their changes, and delivered by one
//! holder at a time (claims take free or run-out leases, and a lost lease changes nothing).

use recruit_domain::Uuid;
use recruit_domain::chain::GENESIS;
use recruit_domain::model::Role;

use crate::streams::{Delivery, Failure, Health, StreamRecord};
use crate::{Store, StoreError};

use super::{ORG_A, ORG_B, assert_not_found, id, loaded, org_id, record, t, user_id};

/// The HTTPS stream `n` of organization A, made by its owner, delivering from the start.
pub fn stream_record(n: u128) -> StreamRecord {
    StreamRecord {
        organization_id: org_id(ORG_A),
        id: Uuid::from_u128(ORG_A << 64 | 0x57 << 8 | n),
        name: format!("SIEM {n}"),
        ledger: "privacy".into(),
        destination: serde_json::json!({"type": "https", "url": "https://siem.example.com/in"}),
        secrets: serde_json::json!({"signing": "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"}),
        paused: false,
        created_by: user_id(ORG_A, Role::Owner),
        created_at: t(100 + i64::try_from(n).unwrap_or(0)),
        updated_at: t(100 + i64::try_from(n).unwrap_or(0)),
        delivery: Delivery::starting(0, GENESIS),
    }
}

/// Streams are kept whole (secrets too) with the record of each change, listed oldest first,
/// changed and removed; one holder at a time delivers each: a claim takes free and run-out
/// leases only, and a lease lost (run out and claimed again) renews, advances and fails
/// nothing, while its new holder's advance needs the position it stands at.
pub async fn log_streams_are_kept_and_delivered_by_one_holder_at_a_time(store: &dyn Store) {
    loaded(store).await;
    let org = org_id(ORG_A);
    let start = super::api_head(store, ORG_A).await;
    let (first, second) = (stream_record(1), stream_record(2));
    store.create_stream(&first, &record(ORG_A, 80)).await.unwrap();
    store.create_stream(&second, &record(ORG_A, 81)).await.unwrap();
    assert_eq!(super::api_head(store, ORG_A).await, start + 2, "each creation on the record");
    let again = store.create_stream(&first, &record(ORG_A, 82)).await;
    assert!(matches!(again, Err(StoreError::Conflict(_))), "{again:?}");
    assert_eq!(store.streams(org).await.unwrap(), [first.clone(), second.clone()]);
    assert_eq!(store.stream(org, first.id).await.unwrap(), first, "secrets kept whole");
    assert_not_found(store.stream(org_id(ORG_B), first.id).await, "another organization's");
    assert_eq!(store.streams(org_id(ORG_B)).await.unwrap(), []);

    // One holder at a time.
    let (a, b) = (Uuid::from_u128(0xA0), Uuid::from_u128(0xB0));
    let leases = store.claim_streams(a, t(200), t(230), 10).await.unwrap();
    assert_eq!(leases.len(), 2);
    let lease = *leases.iter().find(|l| l.stream_id == first.id).unwrap();
    assert_eq!((lease.holder, lease.epoch), (a, 1));
    assert_eq!(store.claim_streams(b, t(210), t(240), 10).await.unwrap(), [], "all held");
    assert!(store.renew_lease(&lease, t(260)).await.unwrap());
    let hash = [7; 32];
    assert_eq!(store.advance_stream(&lease, 5, 9, hash, t(211)).await.unwrap(), None, "not at 5");
    let advanced = store.advance_stream(&lease, 0, 9, hash, t(211)).await.unwrap();
    let delivered = store.stream(org, first.id).await.unwrap();
    assert_eq!(advanced.as_ref(), Some(&delivered), "the stream as it stands");
    let delivered = delivered.delivery;
    assert_eq!((delivered.position, delivered.hash, delivered.at), (9, hash, Some(t(211))));

    // The lease runs out; another claims it; the first holder changes nothing any more.
    let taken = store.claim_streams(b, t(261), t(300), 10).await.unwrap();
    let stolen = *taken.iter().find(|l| l.stream_id == first.id).unwrap();
    assert_eq!((stolen.holder, stolen.epoch), (b, 2));
    assert!(!store.renew_lease(&lease, t(400)).await.unwrap());
    assert!(
        store.advance_stream(&lease, 9, 12, [8; 32], t(262)).await.unwrap().is_none(),
        "fenced"
    );
    let failure = Failure {
        health: Health::Failing,
        error: serde_json::json!({"status": 503}),
        next_attempt_at: t(270),
        at: t(262),
    };
    assert!(!store.stream_failed(&lease, &failure).await.unwrap(), "fenced");
    assert!(store.stream_failed(&stolen, &failure).await.unwrap());
    let pending = serde_json::json!({"ack_id": 3});
    assert!(store.set_pending(&stolen, Some(&pending)).await.unwrap());
    let failing = store.stream(org, first.id).await.unwrap().delivery;
    assert_eq!((failing.health, failing.attempts, failing.position), (Health::Failing, 1, 9));
    assert_eq!((failing.failing_since, failing.pending), (Some(t(262)), Some(pending)));
    assert!(store.advance_stream(&stolen, 9, 12, [8; 32], t(263)).await.unwrap().is_some());
    let healthy = store.stream(org, first.id).await.unwrap().delivery;
    assert_eq!((healthy.health, healthy.attempts, healthy.pending), (Health::Ok, 0, None));
    assert_eq!(healthy.lease, Some((b, 2, t(300))));

    // Released: claimed again at once. Paused and suspended streams are not claimed.
    store.release_lease(&stolen, t(264)).await.unwrap();
    let paused = StreamRecord { paused: true, updated_at: t(265), ..first.clone() };
    store.update_stream(&paused, false, &record(ORG_A, 83)).await.unwrap();
    let suspend = Failure { health: Health::Suspended, ..failure.clone() };
    let second_lease = *taken.iter().find(|l| l.stream_id == second.id).unwrap();
    assert!(store.stream_failed(&second_lease, &suspend).await.unwrap());
    store.release_lease(&second_lease, t(264)).await.unwrap();
    assert_eq!(store.claim_streams(a, t(266), t(300), 10).await.unwrap(), []);
    // Resumed: healthy, claimed with the next epoch.
    let resumed = StreamRecord { updated_at: t(267), ..second.clone() };
    store.update_stream(&resumed, true, &record(ORG_A, 84)).await.unwrap();
    let back = store.stream(org, second.id).await.unwrap();
    assert_eq!((back.delivery.health, back.delivery.attempts), (Health::Ok, 0));
    let claimed = store.claim_streams(a, t(268), t(300), 10).await.unwrap();
    assert_eq!(
        claimed.iter().map(|l| (l.stream_id, l.epoch)).collect::<Vec<_>>(),
        [(second.id, 3)]
    );

    // Removed, with the record; nothing to remove is not found, and nothing is recorded.
    store.delete_stream(org, first.id, &record(ORG_A, 85)).await.unwrap();
    assert_not_found(store.stream(org, first.id).await, "removed");
    assert_not_found(store.delete_stream(org, first.id, &record(ORG_A, 86)).await, "gone");
    assert_eq!(
        super::api_head(store, ORG_A).await,
        start + 5,
        "creations, changes and the removal"
    );
    let orphan = StreamRecord { organization_id: id(0xdead), ..stream_record(3) };
    assert_not_found(store.create_stream(&orphan, &record(ORG_A, 87)).await, "no organization");
}
