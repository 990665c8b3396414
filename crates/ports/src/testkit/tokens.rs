//! Contract cases of API tokens: created, found by secret hash, revoked, and their use
//! recorded.

use recruit_domain::model::*;
use recruit_domain::{ApiTokenId, Scope};

use crate::{NewApiToken, SecretHash, Store, StoreError};

use super::{ORG_A, ORG_B, assert_not_found, id, loaded, org_id, record, t, user_id};

fn new_token(org: u128, n: u128, role: Role) -> NewApiToken {
    NewApiToken {
        id: id::<recruit_domain::resource::ApiToken>(org << 64 | 0x900 | n),
        organization_id: org_id(org),
        user_id: user_id(org, role),
        name: format!("token {n}"),
        scopes: vec![Scope::JobsRead, Scope::AuditLogsRead],
        secret_hash: SecretHash([u8::try_from(n).unwrap_or(0xff); 32]),
        created_at: t(i64::try_from(n).unwrap_or(0)),
        expires_at: Some(t(100_000)),
    }
}

/// A created token is found by its secret hash together with its user; revoking it keeps the
/// first revocation time.
pub async fn tokens_are_created_found_by_hash_and_revoked(store: &dyn Store) {
    loaded(store).await;
    let new = new_token(ORG_A, 1, Role::Owner);
    let created = store.create_token(&new).await.unwrap();
    assert_eq!(
        (
            created.id,
            created.organization_id,
            created.user_id,
            &created.name,
            created.created_at,
            created.expires_at
        ),
        (new.id, new.organization_id, new.user_id, &new.name, new.created_at, new.expires_at)
    );
    assert_eq!(created.scopes, [Scope::AuditLogsRead, Scope::JobsRead]);
    assert_eq!((created.revoked_at, created.last_used_at), (None, None));
    let found = store.credential(&new.secret_hash).await.unwrap();
    assert_eq!(found.token, created);
    assert_eq!(found.user.role, Role::Owner);
    assert_eq!(found.user.id, user_id(ORG_A, Role::Owner));
    assert_not_found(store.credential(&SecretHash([0xee; 32])).await, "unknown secret");

    let mut never = new_token(ORG_A, 2, Role::Member);
    never.expires_at = None;
    never.scopes = vec![];
    let never = store.create_token(&never).await.unwrap();
    assert_eq!((never.expires_at, never.scopes.len()), (None, 0));

    let revoked = store.revoke_token(created.id, t(50)).await.unwrap();
    assert_eq!(revoked.revoked_at, Some(t(50)));
    let again = store.revoke_token(created.id, t(60)).await.unwrap();
    assert_eq!(again.revoked_at, Some(t(50)));
    assert_eq!(store.credential(&new.secret_hash).await.unwrap().token.revoked_at, Some(t(50)));
    assert_not_found(store.revoke_token(id(0x999), t(1)).await, "revoking a missing token");

    let listed: Vec<ApiTokenId> = store.tokens(None).await.unwrap().iter().map(|t| t.id).collect();
    assert_eq!(listed, [never.id, created.id]);
    assert!(store.tokens(Some(org_id(ORG_B))).await.unwrap().is_empty());
}

/// A taken id or secret hash is a conflict; a user outside the organization is not found.
pub async fn token_conflicts_and_missing_users_are_reported(store: &dyn Store) {
    loaded(store).await;
    store.create_token(&new_token(ORG_A, 1, Role::Owner)).await.unwrap();
    let mut same_hash = new_token(ORG_A, 2, Role::Owner);
    same_hash.secret_hash = new_token(ORG_A, 1, Role::Owner).secret_hash;
    let result = store.create_token(&same_hash).await;
    assert!(matches!(result, Err(StoreError::Conflict(_))), "{result:?}");
    let mut same_id = new_token(ORG_A, 3, Role::Owner);
    same_id.id = new_token(ORG_A, 1, Role::Owner).id;
    let result = store.create_token(&same_id).await;
    assert!(matches!(result, Err(StoreError::Conflict(_))), "{result:?}");
    let mut stranger = new_token(ORG_A, 4, Role::Owner);
    stranger.user_id = user_id(ORG_B, Role::Owner);
    assert_not_found(store.create_token(&stranger).await, "a user of another organization");
    assert_eq!(store.tokens(None).await.unwrap().len(), 1);
}

/// Use is recorded, but not more often than once a minute.
pub async fn touching_a_token_records_use_at_most_once_a_minute(store: &dyn Store) {
    loaded(store).await;
    let token = store.create_token(&new_token(ORG_A, 1, Role::Owner)).await.unwrap();
    // As operators see it in the token list: a credential kept in memory may show an older
    // last use (see `Tokens::credential`).
    let last_used = || async {
        let tokens = store.tokens(Some(org_id(ORG_A))).await.unwrap();
        tokens.iter().find(|t| t.id == token.id).and_then(|t| t.last_used_at)
    };
    store.touch_token(token.id, t(1000)).await.unwrap();
    assert_eq!(last_used().await, Some(t(1000)));
    store.touch_token(token.id, t(1059)).await.unwrap();
    assert_eq!(last_used().await, Some(t(1000)), "within a minute nothing is written");
    store.touch_token(token.id, t(1061)).await.unwrap();
    assert_eq!(last_used().await, Some(t(1061)));
    store.touch_token(id(0x999), t(2000)).await.unwrap();
}

/// A console session is found by its secret hash with its token and user as stored now (a
/// revoked token shows at once); its use is recorded until it ends; ending it keeps the first
/// time. Its sign-in, and a sign-out, are API ledger records written with it. A session of a
/// token that does not exist is not stored, nor its record.
pub async fn console_sessions_are_found_with_their_token_and_end_once(store: &dyn Store) {
    use crate::ConsoleSession;
    loaded(store).await;
    let token = store.create_token(&new_token(ORG_A, 7, Role::Owner)).await.unwrap();
    let session = ConsoleSession {
        id: recruit_domain::Uuid::from_u128(0x5E55),
        organization_id: org_id(ORG_A),
        user_id: user_id(ORG_A, Role::Owner),
        token_id: token.id,
        secret_hash: SecretHash([0x55; 32]),
        created_at: t(10),
        last_seen_at: t(10),
        expires_at: t(10 + 8 * 3600),
        ended_at: None,
    };
    let start = super::api_head(store, ORG_A).await;
    store.open_session(&session, &record(ORG_A, 50)).await.unwrap();
    assert_eq!(super::api_head(store, ORG_A).await, start + 1, "the sign-in is on the record");
    let found = store.console_session(&session.secret_hash).await.unwrap();
    assert_eq!((&found.session, &found.holder.token), (&session, &token));
    assert_eq!(found.holder.user.role, Role::Owner);
    assert_not_found(store.console_session(&SecretHash([0x56; 32])).await, "unknown secret");

    store.touch_session(session.id, t(70)).await.unwrap();
    let touched = store.console_session(&session.secret_hash).await.unwrap().session;
    assert_eq!(touched.last_seen_at, t(70));
    store.revoke_token(token.id, t(80)).await.unwrap();
    let revoked = store.console_session(&session.secret_hash).await.unwrap();
    assert_eq!(revoked.holder.token.revoked_at, Some(t(80)), "never an older copy");

    store.end_session(session.id, t(90), Some(&record(ORG_A, 51))).await.unwrap();
    assert_eq!(super::api_head(store, ORG_A).await, start + 2, "the sign-out is on the record");
    store.end_session(session.id, t(95), None).await.unwrap();
    assert_eq!(super::api_head(store, ORG_A).await, start + 2, "an end without a request is not");
    store.touch_session(session.id, t(99)).await.unwrap();
    let ended = store.console_session(&session.secret_hash).await.unwrap().session;
    assert_eq!((ended.ended_at, ended.last_seen_at), (Some(t(90)), t(70)));

    let orphan = ConsoleSession {
        id: recruit_domain::Uuid::from_u128(0x5E56),
        token_id: id(0x999),
        secret_hash: SecretHash([0x57; 32]),
        ..session.clone()
    };
    let orphaned = store.open_session(&orphan, &record(ORG_A, 52)).await;
    assert!(orphaned.is_err(), "a session needs its token");
    assert!(
        matches!(
            store.open_session(&session, &record(ORG_A, 53)).await,
            Err(StoreError::Conflict(_))
        ),
        "a session is stored once"
    );
    assert_eq!(
        super::api_head(store, ORG_A).await,
        start + 2,
        "nothing recorded for sessions not stored"
    );
}
