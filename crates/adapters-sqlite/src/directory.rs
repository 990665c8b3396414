//! The directory port: organizations, users and jobs; users' profiles read and changed with
//! the privacy ledger entry that records it, in one immediate transaction.

use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use recruit_adapters_diesel::native::NativeDirectory;
use recruit_domain::{JobId, OrganizationId, Timestamp, User, UserId};
use recruit_ports::rows as neutral;
use recruit_ports::{JobRecord, OrganizationRecord, ProfileUpdate, StoreError};

use crate::SqliteBackend;
use crate::error::TxError;
use crate::export::{SqliteDb, at_once};
use crate::rows::*;
use crate::schema::*;

fn load_organization(c: &mut SqliteConnection, org: &[u8]) -> Result<OrganizationRecord, TxError> {
    let (row, defaults) = organizations::table
        .inner_join(
            organization_scheduling_defaults::table
                .on(organization_scheduling_defaults::organization_id.eq(organizations::id)),
        )
        .filter(organizations::id.eq(org))
        .select((OrganizationRow::as_select(), SchedulingDefaultsRow::as_select()))
        .first(c)?;
    let hours = organization_work_hours::table
        .filter(organization_work_hours::organization_id.eq(org))
        .order(organization_work_hours::position)
        .select(WorkHoursRow::as_select())
        .load(c)?;
    let hours = hours.into_iter().map(Row::into_neutral).collect::<Result<_, _>>()?;
    Ok(row.into_neutral()?.into_record(hours, defaults.into_neutral()?)?)
}

/// How many ids one statement of [`Directory::users`] binds.
const USERS_PER_STATEMENT: usize = 500;

impl NativeDirectory for SqliteBackend {
    async fn organization(&self, id: OrganizationId) -> Result<OrganizationRecord, StoreError> {
        let org = blob(id.uuid());
        self.run(move |c| Ok(load_organization(c, &org))).await?.map_err(Into::into)
    }

    async fn organizations(&self) -> Result<Vec<(OrganizationId, String)>, StoreError> {
        let rows: Vec<(Vec<u8>, String)> = self
            .run(|c| {
                let names = organizations::table.select((organizations::id, organizations::name));
                names.order(organizations::id).load(c)
            })
            .await?;
        rows.into_iter()
            .map(|(id, name)| Ok((OrganizationId::from_uuid(uuid(&id)?), name)))
            .collect()
    }

    async fn user(&self, organization: OrganizationId, id: UserId) -> Result<User, StoreError> {
        let (org, id) = (blob(organization.uuid()), blob(id.uuid()));
        let row = self
            .run(move |c| users::table.find((org, id)).select(UserRow::as_select()).first(c))
            .await?;
        row.into_neutral()?.into_user()
    }

    async fn users(
        &self,
        organization: OrganizationId,
        ids: &[UserId],
    ) -> Result<Vec<User>, StoreError> {
        let org = blob(organization.uuid());
        let mut ids: Vec<Vec<u8>> = ids.iter().map(|id| blob(id.uuid())).collect();
        ids.sort_unstable();
        ids.dedup();
        let rows = self
            .run(move |c| {
                // Sorted and in chunks within SQLite's bound on a statement's variables.
                let mut rows = Vec::with_capacity(ids.len());
                for chunk in ids.chunks(USERS_PER_STATEMENT) {
                    rows.extend(
                        users::table
                            .filter(users::organization_id.eq(&org))
                            .filter(users::id.eq_any(chunk))
                            .order(users::id)
                            .select(UserRow::as_select())
                            .load(c)?,
                    );
                }
                Ok(rows)
            })
            .await?;
        rows.into_iter().map(|row| row.into_neutral()?.into_user()).collect()
    }

    async fn users_by_email(&self, email: &str) -> Result<Vec<User>, StoreError> {
        let email = email.to_ascii_lowercase();
        let rows = self
            .run(move |c| {
                users::table
                    .filter(recruit_adapters_diesel::lower(users::email).eq(&email))
                    .order((users::organization_id, users::id))
                    .select(UserRow::as_select())
                    .load(c)
            })
            .await?;
        rows.into_iter().map(|row| row.into_neutral()?.into_user()).collect()
    }

    async fn update_user(&self, update: &ProfileUpdate) -> Result<User, StoreError> {
        let user = neutral::UserRow::new(&update.user);
        let logged = vec![neutral::LedgerRow::new(&update.entry)?];
        let ids: Vec<Vec<u8>> = update.read_ids().into_iter().map(blob).collect();
        let decision = update.clone();
        self.transaction(move |c| -> Result<(), TxError> {
            // The transaction holds the write lock: what is read here stays so until it ends.
            let stored: Vec<(Vec<u8>, i64)> = users::table
                .filter(users::organization_id.eq(blob(user.organization_id)))
                .filter(users::id.eq_any(&ids))
                .select((users::id, users::updated_at))
                .load(c)?;
            let stored = stored
                .into_iter()
                .map(|(id, at)| {
                    Ok((
                        uuid(&id)?,
                        <Timestamp as recruit_adapters_diesel::Column<Sqlite3>>::load(at)?,
                    ))
                })
                .collect::<Result<_, StoreError>>()?;
            decision.check_read(stored)?;
            let db = &mut SqliteDb(c);
            Ok(at_once(recruit_adapters_diesel::profile::write(db, &user, logged))?)
        })
        .await
        .map_err(StoreError::from)?;
        Ok(update.user.clone())
    }

    async fn find_user(&self, id: UserId) -> Result<User, StoreError> {
        let id = blob(id.uuid());
        let row = self
            .run(move |c| {
                users::table.filter(users::id.eq(id)).select(UserRow::as_select()).first(c)
            })
            .await?;
        row.into_neutral()?.into_user()
    }

    async fn job(&self, organization: OrganizationId, id: JobId) -> Result<JobRecord, StoreError> {
        let (org, job) = (blob(organization.uuid()), blob(id.uuid()));
        let (row, settings, team, stages) = self
            .run(move |c| {
                let (row, settings) = jobs::table
                    .inner_join(
                        job_resolved_settings::table.on(job_resolved_settings::organization_id
                            .eq(jobs::organization_id)
                            .and(job_resolved_settings::job_id.eq(jobs::id))),
                    )
                    .filter(jobs::organization_id.eq(&org).and(jobs::id.eq(&job)))
                    .select((JobRow::as_select(), ResolvedSettingsRow::as_select()))
                    .first(c)?;
                let team = job_hiring_team::table
                    .inner_join(
                        users::table.on(users::organization_id
                            .eq(job_hiring_team::organization_id)
                            .and(users::id.eq(job_hiring_team::user_id))),
                    )
                    .filter(
                        job_hiring_team::organization_id
                            .eq(&org)
                            .and(job_hiring_team::job_id.eq(&job)),
                    )
                    .order(job_hiring_team::position)
                    .select((job_hiring_team::role, job_hiring_team::user_id, users::name))
                    .load::<(String, Vec<u8>, String)>(c)?;
                let stages = job_stages::table
                    .filter(job_stages::organization_id.eq(&org).and(job_stages::job_id.eq(&job)))
                    .order(job_stages::position)
                    .select(JobStageRow::as_select())
                    .load(c)?;
                Ok((row, settings, team, stages))
            })
            .await?;
        let team = team
            .into_iter()
            .map(|(role, user, name)| Ok((role, uuid(&user)?, name)))
            .collect::<Result<_, StoreError>>()?;
        let stages = stages.into_iter().map(Row::into_neutral).collect::<Result<_, _>>()?;
        neutral::job_record(row.into_neutral()?, settings.into_neutral()?, team, stages)
    }
}
