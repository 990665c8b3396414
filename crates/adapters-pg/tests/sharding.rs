//! The schema is ready to be distributed by organization (Citus' rules), checked on a freshly
//! migrated database: every primary key and unique index of a tenant table (one with an
//! `organization_id`) includes the organization, foreign keys run on it between tenant tables
//! or to `organizations`, the tables without one are the known few, and sequences are bigint.
//! The exceptions are listed with their reasons; any other is a failure.

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use recruit_adapters_pg::testkit::TestDatabase;

/// Unique indexes of tenant tables without the organization, and why. A credential's secret is
/// looked up before its organization is known, and a token's id is global in the CLI; a stage's
/// id is unique across organizations on import. Distributing them needs the organization in
/// the secret (or a reference table of hashes), which is on paper only (docs/operations.md).
const GLOBAL_UNIQUE: [(&str, &str); 4] = [
    ("api_tokens", "api_tokens_secret_hash_key"),
    ("api_tokens", "api_tokens_id"),
    ("console_sessions", "console_sessions_secret_hash_key"),
    ("job_stages", "job_stages_id_key"),
];

/// Tables without an organization: the distribution table itself, and the server's own
/// bookkeeping (its secrets, the chain backfill's progress, diesel's migrations).
const NOT_TENANT: [&str; 4] =
    ["__diesel_schema_migrations", "ledger_chain_backfill", "organizations", "server_secrets"];

#[derive(diesel::QueryableByName, Debug)]
struct Named {
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    detail: String,
}

async fn rows(c: &mut AsyncPgConnection, sql: &str) -> Vec<(String, String)> {
    let found: Vec<Named> = diesel::sql_query(sql).load(c).await.expect(sql);
    found.into_iter().map(|r| (r.name, r.detail)).collect()
}

/// Tables of the public schema (partitions counted as their parent), with whether they have
/// an `organization_id`.
const TABLES: &str = "SELECT c.relname::text AS name, \
     (EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid \
              AND a.attname = 'organization_id' AND NOT a.attisdropped))::text AS detail \
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition";

#[tokio::test(flavor = "multi_thread")]
async fn the_schema_can_be_distributed_by_organization() {
    let db = TestDatabase::fresh().await;
    let mut c = AsyncPgConnection::establish(db.url()).await.expect("connects");

    let mut global: Vec<String> = rows(&mut c, TABLES)
        .await
        .into_iter()
        .filter(|(_, tenant)| tenant == "false")
        .map(|(name, _)| name)
        .collect();
    global.sort();
    assert_eq!(global, NOT_TENANT, "a table without organization_id");

    // Every primary key and unique index of a tenant table includes the organization.
    let unique = rows(
        &mut c,
        &format!(
            "SELECT t.name || '.' || i.relname AS name, pg_get_indexdef(i.oid) AS detail \
             FROM ({TABLES}) t JOIN pg_class tc ON tc.relname = t.name \
             JOIN pg_index x ON x.indrelid = tc.oid JOIN pg_class i ON i.oid = x.indexrelid \
             WHERE t.detail = 'true' AND (x.indisunique OR x.indisprimary) AND NOT EXISTS ( \
               SELECT 1 FROM unnest(x.indkey) k JOIN pg_attribute a \
               ON a.attrelid = tc.oid AND a.attnum = k WHERE a.attname = 'organization_id')"
        ),
    )
    .await;
    let mut unexpected: Vec<_> = unique
        .iter()
        .filter(|(name, _)| !GLOBAL_UNIQUE.iter().any(|(t, i)| *name == format!("{t}.{i}")))
        .collect();
    unexpected.sort();
    assert!(unexpected.is_empty(), "unique without organization_id: {unexpected:#?}");
    assert_eq!(unique.len(), GLOBAL_UNIQUE.len(), "an exception no longer needed: {unique:#?}");

    // Foreign keys of tenant tables run on the organization: to `organizations` by it, or to
    // another tenant table with it among the columns on both sides.
    let foreign = rows(
        &mut c,
        "SELECT conrelid::regclass::text AS name, pg_get_constraintdef(oid) AS detail \
         FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace \
         AND NOT (SELECT relispartition FROM pg_class WHERE oid = conrelid) AND NOT ( \
           'organization_id' = ANY (SELECT attname FROM pg_attribute \
             WHERE attrelid = conrelid AND attnum = ANY (conkey)) \
           AND ( \
             (confrelid = 'organizations'::regclass AND array_length(confkey, 1) = 1) \
             OR 'organization_id' = ANY (SELECT attname FROM pg_attribute \
               WHERE attrelid = confrelid AND attnum = ANY (confkey))))",
    )
    .await;
    assert!(foreign.is_empty(), "foreign keys across organizations: {foreign:#?}");

    // Sequences, and identity columns, are bigint.
    let narrow = rows(
        &mut c,
        "SELECT sequencename::text AS name, data_type::text AS detail FROM pg_sequences \
         WHERE schemaname = 'public' AND data_type <> 'bigint'::regtype",
    )
    .await;
    assert!(narrow.is_empty(), "sequences narrower than bigint: {narrow:#?}");
}
