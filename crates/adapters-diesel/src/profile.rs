//! A user's profile read or changed for the API, each with the privacy ledger entry that
//! records it, in the caller's transaction: written once over [`Db`].

use recruit_domain::Uuid;
use recruit_ports::StoreError;
use recruit_ports::rows as neutral;

use crate::db::Db;
use crate::filter::Value;
use crate::statement::Statement;

/// `Directory::read_user`: the stored user `id` of the organization `org`, and the ledger
/// rows `logged` that record the read, appended. A user not stored is `NotFound`.
pub async fn read<D: Db>(
    c: &mut D,
    (org, id): (Uuid, Uuid),
    logged: Vec<neutral::LedgerRow>,
) -> Result<D::UserRow, StoreError> {
    let p = D::DIALECT.param;
    let user = Statement {
        sql: format!("SELECT * FROM users WHERE organization_id = {} AND id = {}", p(1), p(2)),
        values: vec![Value::Uuid(org), Value::Uuid(id)],
    };
    let found: Vec<D::UserRow> = c.load(user).await?;
    let row = found.into_iter().next().ok_or(StoreError::NotFound)?;
    c.append_entries(logged).await?;
    Ok(row)
}

/// `Directory::update_user`, once the caller has checked that what the decision read is
/// unchanged: the profile fields the API changes of `user`, and the ledger rows `logged` that
/// record the change, appended. A user gone meanwhile is `Conflict`.
pub async fn write<D: Db>(
    c: &mut D,
    user: &neutral::UserRow,
    logged: Vec<neutral::LedgerRow>,
) -> Result<(), StoreError> {
    let p = D::DIALECT.param;
    let update = Statement {
        sql: format!(
            "UPDATE users SET name = {}, title = {}, manager_id = {}, linkedin_url = {}, \
             updated_at = {} WHERE organization_id = {} AND id = {}",
            p(1),
            p(2),
            p(3),
            p(4),
            p(5),
            p(6),
            p(7)
        ),
        values: vec![
            Value::Text(&user.name),
            Value::OptText(user.title.as_deref()),
            Value::OptUuid(user.manager_id),
            Value::OptText(user.linkedin_url.as_deref()),
            Value::Time(user.updated_at),
            Value::Uuid(user.organization_id),
            Value::Uuid(user.id),
        ],
    };
    if c.execute(update).await? != 1 {
        return Err(StoreError::Conflict("the user is gone".into()));
    }
    c.append_entries(logged).await
}
