//! What an identity provider keeps: users as SCIM provisions them (looked up, and stored with
//! what their change ends and its ledger entry, in the caller's transaction) and the
//! organization's single sign-on settings; written once over [`Db`].

use recruit_domain::model::ProfileField;
use recruit_domain::{Timestamp, UserStatus, Uuid};
use recruit_ports::rows as neutral;
use recruit_ports::{Provisioning, StoreError, UserLookup};

use crate::Row;
use crate::db::Db;
use crate::filter::Value;
use crate::statement::Statement;

/// A count, as both stores name it.
#[derive(Debug, diesel::QueryableByName)]
pub struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    /// The count.
    pub n: i64,
}

/// `Directory::provisioned_users`: the users of `org` that `lookup` asks for, removed users
/// left out, `limit` of them after the first `offset` by id, and how many there are in all.
pub async fn users<D: Db>(
    c: &mut D,
    org: Uuid,
    lookup: &UserLookup,
    offset: u64,
    limit: u64,
) -> Result<(Vec<D::UserRow>, u64), StoreError>
where
    Count: diesel::QueryableByName<D::Backend>,
{
    let p = D::DIALECT.param;
    let (condition, value) = match lookup {
        UserLookup::All => (String::new(), None),
        UserLookup::UserName(name) => {
            (format!(" AND lower(coalesce(user_name, email)) = lower({})", p(2)), Some(name))
        }
        UserLookup::ExternalId(id) => (format!(" AND external_id = {}", p(2)), Some(id)),
    };
    let base = format!(
        "FROM users WHERE organization_id = {} AND status <> '{}'{condition}",
        p(1),
        UserStatus::Removed.as_str()
    );
    let values = || {
        let mut values = vec![Value::Uuid(org)];
        values.extend(value.map(|v| Value::Text(v)));
        values
    };
    let next = values().len() + 1;
    let mut page = values();
    page.extend([Value::Int(clamp(limit)), Value::Int(clamp(offset))]);
    let rows: Vec<D::UserRow> = c
        .load(Statement {
            sql: format!("SELECT * {base} ORDER BY id LIMIT {} OFFSET {}", p(next), p(next + 1)),
            values: page,
        })
        .await?;
    let counted: Vec<Count> =
        c.load(Statement { sql: format!("SELECT count(*) AS n {base}"), values: values() }).await?;
    let total = counted.first().map_or(0, |c| u64::try_from(c.n).unwrap_or(0));
    Ok((rows, total))
}

fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `Directory::provision_user`: the user stored (inserted, or every field of a stored one
/// written), the organization's sources of the managed fields set to SCIM, every credential
/// of the user ended when asked, and the entry appended.
pub async fn provision<D: Db>(c: &mut D, p: &Provisioning) -> Result<(), StoreError> {
    let user = neutral::UserRow::new(&p.user);
    let d = D::DIALECT.param;
    let fields = [
        ("name", Value::Text(&user.name)),
        ("email", Value::Text(&user.email)),
        ("role", Value::Text(&user.role)),
        ("title", Value::OptText(user.title.as_deref())),
        ("manager_id", Value::OptUuid(user.manager_id)),
        ("linkedin_url", Value::OptText(user.linkedin_url.as_deref())),
        ("updated_at", Value::Time(user.updated_at)),
        ("status", Value::Text(&user.status)),
        ("user_name", Value::OptText(user.user_name.as_deref())),
        ("external_id", Value::OptText(user.external_id.as_deref())),
    ];
    let key =
        [("organization_id", Value::Uuid(user.organization_id)), ("id", Value::Uuid(user.id))];
    let written = if p.create {
        let all: Vec<_> = key
            .into_iter()
            .chain([("created_at", Value::Time(user.created_at))])
            .chain(fields)
            .collect();
        let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
        let params: Vec<String> = (1..=all.len()).map(d).collect();
        c.execute(Statement {
            sql: format!("INSERT INTO users ({}) VALUES ({})", names.join(", "), params.join(", ")),
            values: all.into_iter().map(|(_, v)| v).collect(),
        })
        .await?
    } else {
        let sets: Vec<String> =
            fields.iter().enumerate().map(|(i, (n, _))| format!("{n} = {}", d(i + 1))).collect();
        let at = fields.len();
        c.execute(Statement {
            sql: format!(
                "UPDATE users SET {} WHERE organization_id = {} AND id = {}",
                sets.join(", "),
                d(at + 1),
                d(at + 2)
            ),
            values: fields.into_iter().chain(key).map(|(_, v)| v).collect(),
        })
        .await?
    };
    if written != 1 {
        return Err(StoreError::NotFound);
    }
    let sources: Vec<String> =
        p.managed.iter().map(|f| format!("{}_source = 'SCIM'", source_column(*f))).collect();
    if !sources.is_empty() {
        c.execute(Statement {
            sql: format!("UPDATE organizations SET {} WHERE id = {}", sources.join(", "), d(1)),
            values: vec![Value::Uuid(user.organization_id)],
        })
        .await?;
    }
    if p.ends_credentials {
        end_credentials(c, user.organization_id, user.id, p.user.updated_at).await?;
    }
    c.append_entries(vec![neutral::LedgerRow::new(&p.entry)?]).await
}

/// The column prefix of a profile field's source in `organizations`.
fn source_column(field: ProfileField) -> &'static str {
    match field {
        ProfileField::Name => "name",
        ProfileField::Title => "title",
        ProfileField::Manager => "manager",
        ProfileField::LinkedinUrl => "linkedin_url",
    }
}

/// Revokes every live token of the user (API tokens and unused links) and ends every console
/// session of theirs, at `at`.
async fn end_credentials<D: Db>(
    c: &mut D,
    org: Uuid,
    user: Uuid,
    at: Timestamp,
) -> Result<(), StoreError> {
    let p = D::DIALECT.param;
    for (table, column) in [("api_tokens", "revoked_at"), ("console_sessions", "ended_at")] {
        c.execute(Statement {
            sql: format!(
                "UPDATE {table} SET {column} = {} WHERE organization_id = {} AND user_id = {} \
                 AND {column} IS NULL",
                p(1),
                p(2),
                p(3)
            ),
            values: vec![Value::Time(at), Value::Uuid(org), Value::Uuid(user)],
        })
        .await?;
    }
    Ok(())
}

/// The users of `rows`, as the neutral rows read them.
pub fn into_users<R: Row<Neutral = neutral::UserRow>>(
    rows: Vec<R>,
) -> Result<Vec<recruit_domain::User>, StoreError> {
    rows.into_iter().map(|r| r.into_neutral()?.into_user()).collect()
}

/// `Directory::set_sso`: the organization's single sign-on settings as the column keeps them
/// (JSON), or none, and the change's record if any. An organization not stored is `NotFound`.
pub async fn set_sso<D: Db>(
    c: &mut D,
    org: Uuid,
    sso: Option<&recruit_ports::SsoSettings>,
    record: Option<&recruit_ports::ReadRecord>,
) -> Result<(), StoreError> {
    let d = D::DIALECT;
    let json =
        sso.map(serde_json::to_string).transpose().map_err(|e| StoreError::Other(Box::new(e)))?;
    let (before, after) = d.json_param;
    let update = Statement {
        sql: format!(
            "UPDATE organizations SET sso = {before}{}{after} WHERE id = {}",
            (d.param)(1),
            (d.param)(2)
        ),
        values: vec![Value::OptText(json.as_deref()), Value::Uuid(org)],
    };
    if c.execute(update).await? == 0 {
        return Err(StoreError::NotFound);
    }
    match record {
        Some(record) => c.append_record(record.page(Vec::<()>::new(), 0)).await,
        None => Ok(()),
    }
}
