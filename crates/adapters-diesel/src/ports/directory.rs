//! `Directory`: organizations, users and jobs.

use async_trait::async_trait;
use recruit_domain::{JobId, OrganizationId, User, UserId, Uuid};
use recruit_ports::rows::{self as neutral};
use recruit_ports::{
    Directory, JobRecord, LedgerEntry, OrganizationRecord, ProfileUpdate, Provisioning, StoreError,
    UserLookup,
};

use super::{dialect, read};
use crate::Row;
use crate::db::Db;
use crate::filter::Value;
use crate::native::*;
use crate::statement::Statement;
use crate::store::{Backend, Diesel, pending};
use crate::{profile, provisioning};

#[async_trait]
impl<B: Backend + NativeDirectory> Directory for Diesel<B>
where
    provisioning::Count: diesel::QueryableByName<B::Sql>,
    Named: diesel::QueryableByName<B::Sql>,
{
    async fn organization(&self, id: OrganizationId) -> Result<OrganizationRecord, StoreError> {
        self.0.organization(id).await
    }

    async fn organizations(&self) -> Result<Vec<(OrganizationId, String)>, StoreError> {
        let (before, after) = dialect::<B>().id_bytes;
        let sql = format!(
            "SELECT {before}id{after} AS id, name FROM organizations ORDER BY organizations.id"
        );
        let rows = self.0.connection(move |db| {
            pending(async move { db.load::<Named>(Statement { sql, values: vec![] }).await })
        });
        rows.await?
            .into_iter()
            .map(|row| Ok((OrganizationId::from_uuid(uuid_of(&row.id)?), row.name)))
            .collect()
    }

    async fn user(&self, organization: OrganizationId, id: UserId) -> Result<User, StoreError> {
        let p = dialect::<B>().param;
        let sql = format!("SELECT * FROM users WHERE organization_id = {} AND id = {}", p(1), p(2));
        let values = vec![Value::Uuid(organization.uuid()), Value::Uuid(id.uuid())];
        let found = self.0.connection(move |db| {
            pending(read(db, Statement { sql, values }, neutral::UserRow::into_user))
        });
        found.await?.into_iter().next().ok_or(StoreError::NotFound)
    }

    async fn users(
        &self,
        organization: OrganizationId,
        ids: &[UserId],
    ) -> Result<Vec<User>, StoreError> {
        let d = dialect::<B>();
        let (p, (before, after)) = (d.param, d.in_ids);
        let sql = format!(
            "SELECT * FROM users WHERE organization_id = {} AND id{before}{}{after} ORDER BY id",
            p(1),
            p(2)
        );
        let ids = ids.iter().map(|id| id.uuid()).collect();
        let values = vec![Value::Uuid(organization.uuid()), Value::Uuids(ids)];
        self.0
            .connection(move |db| {
                pending(read(db, Statement { sql, values }, neutral::UserRow::into_user))
            })
            .await
    }

    async fn users_by_email(&self, email: &str) -> Result<Vec<User>, StoreError> {
        let p = dialect::<B>().param;
        let sql = format!(
            "SELECT * FROM users WHERE lower(email) = {} ORDER BY organization_id, id",
            p(1)
        );
        let email = email.to_ascii_lowercase();
        self.0
            .connection(move |db| {
                pending(async move {
                    read(
                        db,
                        Statement { sql, values: vec![Value::Text(&email)] },
                        neutral::UserRow::into_user,
                    )
                    .await
                })
            })
            .await
    }

    async fn read_user(&self, id: UserId, entry: &LedgerEntry) -> Result<User, StoreError> {
        let key = (entry.organization_id.uuid(), id.uuid());
        let logged = vec![neutral::LedgerRow::new(entry)?];
        self.0
            .transaction(move |db| {
                pending(async move {
                    profile::read(db, key, logged).await?.into_neutral()?.into_user()
                })
            })
            .await
    }

    async fn update_user(&self, update: &ProfileUpdate) -> Result<User, StoreError> {
        let user = neutral::UserRow::new(&update.user);
        let logged = vec![neutral::LedgerRow::new(&update.entry)?];
        let d = dialect::<B>();
        let (p, (before, after)) = (d.param, d.in_ids);
        // The users the decision read, locked in the order of their ids, must be as read.
        let sql = format!(
            "SELECT * FROM users WHERE organization_id = {} AND id{before}{}{after} ORDER BY id{}",
            p(1),
            p(2),
            d.lock
        );
        let values = vec![Value::Uuid(user.organization_id), Value::Uuids(update.read_ids())];
        let decision = update.clone();
        self.0
            .transaction(move |db| {
                pending(async move {
                    let stored =
                        read(db, Statement { sql, values }, neutral::UserRow::into_user).await?;
                    decision
                        .check_read(stored.iter().map(|u| (u.id.uuid(), u.updated_at)).collect())?;
                    profile::write(db, &user, logged).await
                })
            })
            .await?;
        Ok(update.user.clone())
    }

    async fn find_user(&self, id: UserId) -> Result<User, StoreError> {
        let p = dialect::<B>().param;
        let sql = format!("SELECT * FROM users WHERE id = {}", p(1));
        let values = vec![Value::Uuid(id.uuid())];
        let found = self.0.connection(move |db| {
            pending(read(db, Statement { sql, values }, neutral::UserRow::into_user))
        });
        found.await?.into_iter().next().ok_or(StoreError::NotFound)
    }

    async fn set_sso(
        &self,
        organization: OrganizationId,
        sso: Option<&recruit_ports::SsoSettings>,
        record: Option<&recruit_ports::ReadRecord>,
    ) -> Result<(), StoreError> {
        let (org, sso, record) = (organization.uuid(), sso.cloned(), record.cloned());
        self.0
            .transaction(move |db| {
                pending(async move {
                    provisioning::set_sso(db, org, sso.as_ref(), record.as_ref()).await
                })
            })
            .await
    }

    async fn provisioned_users(
        &self,
        organization: OrganizationId,
        lookup: &UserLookup,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<User>, u64), StoreError> {
        let (org, lookup) = (organization.uuid(), lookup.clone());
        self.0
            .transaction(move |db| {
                pending(async move {
                    let (rows, total) =
                        provisioning::users(db, org, &lookup, offset, limit).await?;
                    Ok((provisioning::into_users(rows)?, total))
                })
            })
            .await
    }

    async fn provision_user(&self, provisioning: &Provisioning) -> Result<User, StoreError> {
        let p = provisioning.clone();
        self.0
            .transaction(move |db| pending(async move { provisioning::provision(db, &p).await }))
            .await?;
        Ok(provisioning.user.clone())
    }

    async fn job(&self, organization: OrganizationId, id: JobId) -> Result<JobRecord, StoreError> {
        self.0.job(organization, id).await
    }
}

/// An id and a name, the id as its 16 bytes.
#[derive(Debug, diesel::QueryableByName)]
struct Named {
    #[diesel(sql_type = diesel::sql_types::Binary)]
    id: Vec<u8>,
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
}

/// The UUID of 16 stored bytes.
fn uuid_of(bytes: &[u8]) -> Result<Uuid, StoreError> {
    Uuid::from_slice(bytes).map_err(|_| neutral::corrupt("a stored id is not 16 bytes"))
}
