//! The directory port: organizations, users and jobs, each in one round trip; users' profiles
//! read and changed with the privacy ledger entry that records it.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use recruit_adapters_diesel::Column;
use recruit_domain::{JobId, OrganizationId, Timestamp, User, UserId};
use recruit_ports::rows as neutral;
use recruit_ports::{
    Directory, JobRecord, LedgerEntry, OrganizationRecord, ProfileUpdate, StoreError,
};

use crate::PgStore;
use crate::error::*;
use crate::rows::*;
use crate::schema::*;

#[async_trait]
impl Directory for PgStore {
    async fn organization(&self, id: OrganizationId) -> Result<OrganizationRecord, StoreError> {
        let c = self.conn().await?;
        // Both queries go out together, pipelined on the connection: one round trip.
        let (mut first, mut second) = (&*c, &*c);
        let row = organizations::table
            .inner_join(
                organization_scheduling_defaults::table
                    .on(organization_scheduling_defaults::organization_id.eq(organizations::id)),
            )
            .filter(organizations::id.eq(id.uuid()))
            .select((OrganizationRow::as_select(), SchedulingDefaultsRow::as_select()))
            .first(&mut first);
        let hours = organization_work_hours::table
            .filter(organization_work_hours::organization_id.eq(id.uuid()))
            .order(organization_work_hours::position)
            .select(WorkHoursRow::as_select())
            .load(&mut second);
        let (row, hours) = tokio::join!(row, hours);
        let hours = hours.map_err(store_error)?.into_iter().map(Row::into_neutral);
        let (row, defaults) = row.map_err(store_error)?;
        row.into_neutral()?.into_record(hours.collect::<Result<_, _>>()?, defaults.into_neutral()?)
    }

    async fn user(&self, organization: OrganizationId, id: UserId) -> Result<User, StoreError> {
        let mut c = self.conn().await?;
        users::table
            .find((organization.uuid(), id.uuid()))
            .select(UserRow::as_select())
            .first(&mut c)
            .await
            .map_err(store_error)?
            .into_neutral()?
            .into_user()
    }

    async fn read_user(
        &self,
        organization: OrganizationId,
        id: UserId,
        entry: &LedgerEntry,
    ) -> Result<User, StoreError> {
        let logged = neutral::LedgerRow::new(entry)?;
        let mut c = self.conn().await?;
        let row = c
            .transaction::<_, TxError, _>(async |c| {
                let row: UserRow = users::table
                    .find((organization.uuid(), id.uuid()))
                    .select(UserRow::as_select())
                    .first(c)
                    .await?;
                insert_rows!(c, privacy_audit_logs::table, LedgerRow, [logged]);
                Ok(row)
            })
            .await
            .map_err(StoreError::from)?;
        row.into_neutral()?.into_user()
    }

    async fn update_user(&self, update: &ProfileUpdate) -> Result<User, StoreError> {
        let user = UserRow::from(neutral::UserRow::new(&update.user));
        let logged = neutral::LedgerRow::new(&update.entry)?;
        let ids = update.read_ids();
        let org = user.organization_id;
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| {
            // The users the decision read, locked in the order of their ids, must be as read.
            let stored: Vec<(recruit_domain::Uuid, chrono::DateTime<chrono::Utc>)> = users::table
                .filter(users::organization_id.eq(org).and(users::id.eq_any(&ids)))
                .order(users::id)
                .select((users::id, users::updated_at))
                .for_update()
                .load(c)
                .await?;
            let stored = stored
                .into_iter()
                .map(|(id, at)| Ok((id, <Timestamp as Column<Postgres>>::load(at)?)))
                .collect::<Result<_, StoreError>>()?;
            update.check_read(stored)?;
            let changed = diesel::update(users::table.find((org, user.id)))
                .set((
                    users::name.eq(&user.name),
                    users::title.eq(&user.title),
                    users::manager_id.eq(user.manager_id),
                    users::linkedin_url.eq(&user.linkedin_url),
                    users::updated_at.eq(user.updated_at),
                ))
                .execute(c)
                .await?;
            if changed != 1 {
                return Err(StoreError::Conflict("the user is gone".into()).into());
            }
            insert_rows!(c, privacy_audit_logs::table, LedgerRow, [logged]);
            Ok(())
        })
        .await
        .map_err(StoreError::from)?;
        Ok(update.user.clone())
    }

    async fn find_user(&self, id: UserId) -> Result<User, StoreError> {
        let mut c = self.conn().await?;
        users::table
            .filter(users::id.eq(id.uuid()))
            .select(UserRow::as_select())
            .first(&mut c)
            .await
            .map_err(store_error)?
            .into_neutral()?
            .into_user()
    }

    async fn job(&self, organization: OrganizationId, id: JobId) -> Result<JobRecord, StoreError> {
        let (org, job) = (organization.uuid(), id.uuid());
        let c = self.conn().await?;
        // The three queries go out together, pipelined on the connection: one round trip.
        let (mut one, mut two, mut three) = (&*c, &*c, &*c);
        let first =
            jobs::table
                .inner_join(
                    job_settings::table.on(job_settings::organization_id
                        .eq(jobs::organization_id)
                        .and(job_settings::job_id.eq(jobs::id))),
                )
                .inner_join(organization_scheduling_defaults::table.on(
                    organization_scheduling_defaults::organization_id.eq(jobs::organization_id),
                ))
                .filter(jobs::organization_id.eq(org).and(jobs::id.eq(job)))
                .select((
                    JobRow::as_select(),
                    JobSettingsRow::as_select(),
                    SchedulingDefaultsRow::as_select(),
                ))
                .first(&mut one);
        let team = job_hiring_team::table
            .inner_join(
                users::table.on(users::organization_id
                    .eq(job_hiring_team::organization_id)
                    .and(users::id.eq(job_hiring_team::user_id))),
            )
            .filter(job_hiring_team::organization_id.eq(org).and(job_hiring_team::job_id.eq(job)))
            .order(job_hiring_team::position)
            .select((job_hiring_team::role, job_hiring_team::user_id, users::name))
            .load::<(String, recruit_domain::Uuid, String)>(&mut two);
        let stages = job_stages::table
            .filter(job_stages::organization_id.eq(org).and(job_stages::job_id.eq(job)))
            .order(job_stages::position)
            .select(JobStageRow::as_select())
            .load(&mut three);
        let (first, team, stages) = tokio::join!(first, team, stages);
        let (row, settings, defaults) = first.map_err(store_error)?;
        let stages = stages.map_err(store_error)?.into_iter().map(Row::into_neutral);
        neutral::job_record(
            row.into_neutral()?,
            settings.into_neutral()?,
            defaults.into_neutral()?,
            team.map_err(store_error)?,
            stages.collect::<Result<_, _>>()?,
        )
    }
}
