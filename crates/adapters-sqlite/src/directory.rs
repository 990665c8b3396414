//! The directory port: organizations, users and jobs; users' profiles read and changed with
//! the privacy ledger entry that records it, in one immediate transaction.

use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use recruit_adapters_diesel::native::NativeDirectory;
use recruit_domain::{JobId, OrganizationId};
use recruit_ports::rows as neutral;
use recruit_ports::{JobRecord, OrganizationRecord, StoreError};

use crate::SqliteBackend;
use crate::error::TxError;
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

impl NativeDirectory for SqliteBackend {
    async fn organization(&self, id: OrganizationId) -> Result<OrganizationRecord, StoreError> {
        let org = blob(id.uuid());
        self.run(move |c| Ok(load_organization(c, &org))).await?.map_err(Into::into)
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
