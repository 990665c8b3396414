//! The credential cache of the PostgreSQL adapter: credentials are served from memory, and a
//! change made anywhere (another replica, an operator's SQL) is seen once its notification
//! arrives; while nothing listens, nothing stale is served.
//!
//! Changes made with triggers switched off (`session_replication_role = replica`) announce
//! nothing: they show whether an answer came from memory or from the database.

use std::time::{Duration, Instant};

use recruit_adapters_pg::testkit::TestDatabase;
use recruit_domain::{ApiTokenId, OrganizationId, Role, Scope, Uuid};
use recruit_ports::testkit::{ORG_A, t, user_id, world};
use recruit_ports::{Import, NewApiToken, SecretHash, TokenHolder, Tokens};
use tokio_postgres::{AsyncMessage, Client, NoTls};

const TOKEN: u128 = 0xA_0000_0000_0000_0000_0000_0000_0951;
const HASH: SecretHash = SecretHash([0x51; 32]);

/// A database holding the world and one token of its owner, whose credential is cached.
async fn cached() -> (TestDatabase, Client) {
    let db = TestDatabase::fresh().await;
    load(&db).await;
    let sql = client(&db).await;
    (db, sql)
}

/// Loads the world and the owner's token into `store`.
async fn load(store: &recruit_adapters_pg::PgStore) {
    store.import(&world()).await.unwrap();
    store
        .create_token(&NewApiToken {
            id: ApiTokenId::from_uuid(Uuid::from_u128(TOKEN)),
            organization_id: OrganizationId::from_uuid(Uuid::from_u128(ORG_A)),
            user_id: user_id(ORG_A, Role::Owner),
            name: "cached".into(),
            scopes: vec![Scope::JobsRead],
            secret_hash: HASH,
            created_at: t(0),
            expires_at: None,
        })
        .await
        .unwrap();
}

async fn client(db: &TestDatabase) -> Client {
    let (client, connection) = tokio_postgres::connect(db.url(), NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

async fn credential(db: &TestDatabase) -> TokenHolder {
    db.credential(&HASH).await.unwrap()
}

/// Renames the owner without announcing it.
async fn rename_silently(sql: &Client, name: &str) {
    sql.batch_execute(&format!(
        "BEGIN; SET LOCAL session_replication_role = replica;
         UPDATE users SET name = '{name}' WHERE id = '{}'; COMMIT;",
        user_id(ORG_A, Role::Owner).uuid()
    ))
    .await
    .unwrap();
}

/// Waits until `check` holds of the store's answer; fails after ten seconds.
async fn eventually(db: &TestDatabase, what: &str, check: impl Fn(&TokenHolder) -> bool) {
    let started = Instant::now();
    loop {
        let found = credential(db).await;
        if check(&found) {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "never {what}: {found:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the cache is on: a silent change is then not seen. Returns the user's name as
/// the store still gives it and as it is stored.
async fn until_cached(db: &TestDatabase, sql: &Client) -> (String, String) {
    let started = Instant::now();
    let mut n = 0;
    loop {
        n += 1;
        let before = credential(db).await.user.name;
        let stored = format!("silent {n}");
        rename_silently(sql, &stored).await;
        if credential(db).await.user.name == before {
            return (before, stored);
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the cache never came on");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_made_elsewhere_is_seen_once_announced() {
    let (db, sql) = cached().await;
    let (cached, stored) = until_cached(&db, &sql).await;
    assert_eq!(credential(&db).await.user.name, cached);

    // As another replica or an operator would: a plain UPDATE, which the trigger announces.
    sql.execute(
        "UPDATE api_tokens SET revoked_at = now() WHERE id = $1",
        &[&Uuid::from_u128(TOKEN)],
    )
    .await
    .unwrap();
    eventually(&db, "revoked", |c| c.token.revoked_at.is_some()).await;
    // Everything was forgotten, the silently renamed user too.
    assert_eq!(credential(&db).await.user.name, stored);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_to_the_user_is_announced_too() {
    let (db, sql) = cached().await;
    let _ = until_cached(&db, &sql).await;
    sql.execute(
        "UPDATE users SET role = 'MEMBER' WHERE id = $1",
        &[&user_id(ORG_A, Role::Owner).uuid()],
    )
    .await
    .unwrap();
    eventually(&db, "a member", |c| c.user.role == Role::Member).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_store_forgets_a_token_it_revokes_at_once() {
    let (db, sql) = cached().await;
    let _ = until_cached(&db, &sql).await;
    db.revoke_token(ApiTokenId::from_uuid(Uuid::from_u128(TOKEN)), t(5)).await.unwrap();
    assert_eq!(credential(&db).await.token.revoked_at, Some(t(5)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_nothing_listens_nothing_stale_is_served() {
    let (db, sql) = cached().await;
    let _ = until_cached(&db, &sql).await;
    // Cut the listening connection, then change the token without announcing it: the change
    // can only be seen if the cache was emptied and turned off when the connection broke.
    let cut = sql
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND application_name LIKE '%credential changes%'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(cut, 1, "one listening connection");
    sql.batch_execute(&format!(
        "BEGIN; SET LOCAL session_replication_role = replica;
         UPDATE api_tokens SET revoked_at = now() WHERE id = '{}'; COMMIT;",
        Uuid::from_u128(TOKEN)
    ))
    .await
    .unwrap();
    eventually(&db, "revoked", |c| c.token.revoked_at.is_some()).await;
    // The store listens again, and caches again.
    let _ = until_cached(&db, &sql).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recording_a_tokens_use_announces_nothing() {
    let (db, sql) = cached().await;
    let (listener, mut connection) = tokio_postgres::connect(db.url(), NoTls).await.unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    let _ = tx.send(n.channel().to_owned());
                }
                Some(Ok(_)) => {}
                _ => return,
            }
        }
    });
    listener.batch_execute("LISTEN recruitd_credentials; LISTEN marker").await.unwrap();

    db.touch_token(ApiTokenId::from_uuid(Uuid::from_u128(TOKEN)), t(100)).await.unwrap();
    sql.batch_execute("NOTIFY marker").await.unwrap();
    // Notifications arrive in commit order: anything the touch sent comes before the marker.
    assert_eq!(rx.recv().await.as_deref(), Some("marker"));
    let last_used = sql
        .query_one(
            "SELECT last_used_at IS NOT NULL FROM api_tokens WHERE id = $1",
            &[&Uuid::from_u128(TOKEN)],
        )
        .await
        .unwrap();
    assert!(last_used.get::<_, bool>(0), "the use was recorded");

    sql.execute("UPDATE api_tokens SET name = 'renamed' WHERE id = $1", &[&Uuid::from_u128(TOKEN)])
        .await
        .unwrap();
    assert_eq!(rx.recv().await.as_deref(), Some("recruitd_credentials"));
}

/// The longest a committed change may go unseen, as docs/operations.md states it: the cache
/// answers only while its latest heartbeat back was sent less than a second ago.
const BOUND: Duration = Duration::from_secs(1);

/// The listening connection's backend, stopped with SIGSTOP: a connection that stays open and
/// delivers nothing, as a half-open TCP connection does. Resumed when dropped.
struct Stalled(String);

impl Drop for Stalled {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").args(["-CONT", &self.0]).status();
    }
}

async fn stall_the_listener(sql: &Client) -> Stalled {
    let row = sql
        .query_one(
            "SELECT pid FROM pg_stat_activity \
             WHERE datname = current_database() AND application_name LIKE '%credential changes%'",
            &[],
        )
        .await
        .unwrap();
    let pid = row.get::<_, i32>(0).to_string();
    let stopped = std::process::Command::new("kill").args(["-STOP", &pid]).status();
    assert!(
        stopped.is_ok_and(|s| s.success()),
        "this test stalls a PostgreSQL backend with SIGSTOP: it needs the server on this machine \
         (the tests' own cluster, not a DATABASE_URL elsewhere) and the right to signal it"
    );
    Stalled(pid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_is_seen_within_the_bound_while_the_listener_is_stalled() {
    let (db, sql) = cached().await;
    let _ = until_cached(&db, &sql).await;
    let stalled = stall_the_listener(&sql).await;
    sql.execute(
        "UPDATE api_tokens SET revoked_at = now() WHERE id = $1",
        &[&Uuid::from_u128(TOKEN)],
    )
    .await
    .unwrap();
    let committed = Instant::now();
    while credential(&db).await.token.revoked_at.is_none() {
        assert!(
            committed.elapsed() < BOUND + Duration::from_millis(300),
            "a revoked token was still served from memory {:?} after the revocation committed",
            committed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(stalled);
    // Delivering again, the connection is trusted again: the cache comes back on.
    let _ = until_cached(&db, &sql).await;
}

/// The database restarts under a running store: the changes made while the store was not
/// listening (its notifications went to no one) are seen once it listens again, because the
/// cache starts empty on every new listening connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_change_across_a_database_restart_is_seen() {
    // The cluster's own methods block: they run beside the runtime, not on it.
    use tokio::task::block_in_place as blocking;
    let cluster = blocking(recruit_adapters_pg::testkit::DedicatedCluster::start);
    blocking(|| cluster.create_database("restart"));
    let mut config = recruit_adapters_pg::PgConfig::new(cluster.url("restart"));
    config.credential_cache = Some(Duration::from_secs(60));
    config.wait_timeout = Duration::from_millis(500);
    let store = recruit_adapters_pg::PgBackend::connect(&config).unwrap();
    store.migrate().await.unwrap();
    load(&store).await;
    let connect = || async {
        let (client, connection) =
            tokio_postgres::connect(&cluster.url("restart"), NoTls).await.unwrap();
        tokio::spawn(connection);
        client
    };
    // Cached: a silent rename is not seen.
    let sql = connect().await;
    let started = Instant::now();
    loop {
        let before = store.credential(&HASH).await.unwrap().user.name;
        rename_silently(&sql, &format!("silent {}", started.elapsed().as_micros())).await;
        if store.credential(&HASH).await.unwrap().user.name == before {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the cache never came on");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    blocking(|| {
        cluster.stop();
        cluster.start_again();
    });
    // Demoted at once, whether or not the store listens again yet.
    let sql = connect().await;
    sql.execute(
        "UPDATE users SET role = 'MEMBER' WHERE id = $1",
        &[&user_id(ORG_A, Role::Owner).uuid()],
    )
    .await
    .unwrap();
    let committed = Instant::now();
    loop {
        match store.credential(&HASH).await {
            Ok(c) if c.user.role == Role::Member => break,
            Ok(_) => {}
            // The pool's connections died with the server; the next ones are new.
            Err(_) => {}
        }
        assert!(
            committed.elapsed() < BOUND + Duration::from_millis(300),
            "the demoted owner was still an owner {:?} after the change",
            committed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
