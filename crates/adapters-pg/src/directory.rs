//! The directory port: organizations, users and jobs, each in one round trip; users' profiles
//! read and changed with the privacy ledger entry that records it.

use diesel::pg::sql_types::Record;
use diesel::prelude::*;
use diesel::sql_types::{Array, Integer, Text, Uuid as SqlUuid};
use recruit_adapters_diesel::native::NativeDirectory;
use recruit_domain::{JobId, OrganizationId, Uuid};
use recruit_ports::rows as neutral;
use recruit_ports::{JobRecord, OrganizationRecord, StoreError};

use crate::PgBackend;
use crate::direct::DirectRead;
use crate::rows::*;
use crate::schema::*;

/// SQL expressions of a fixed text: safe to keep prepared (unlike `diesel::dsl::sql`, whose
/// queries diesel prepares anew each time), each a type of its own.
macro_rules! fixed_sql {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $sql:expr;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, diesel::query_builder::QueryId)]
        struct $name;

        impl diesel::Expression for $name {
            type SqlType = $ty;
        }

        impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for $name {
            fn walk_ast<'b>(
                &'b self,
                mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
            ) -> QueryResult<()> {
                out.push_sql($sql);
                Ok(())
            }
        }

        impl<QS> diesel::SelectableExpression<QS> for $name {}
        impl<QS> diesel::AppearsOnTable<QS> for $name {}
        impl diesel::expression::ValidGrouping<()> for $name {
            type IsAggregate = diesel::expression::is_aggregate::No;
        }
    )*};
}

fixed_sql! {
    /// A job's hiring team in order, as an array of (role, user id, user name) in the job's
    /// row.
    Team: Array<Record<(Text, SqlUuid, Text)>> = "ARRAY(SELECT ROW(t.role, t.user_id, u.name) \
        FROM job_hiring_team t \
        JOIN users u ON u.organization_id = t.organization_id AND u.id = t.user_id \
        WHERE t.organization_id = jobs.organization_id AND t.job_id = jobs.id \
        ORDER BY t.position)";
    /// A job's stages in order, as an array of (position, id, name) in the job's row.
    Stages: Array<Record<(Integer, SqlUuid, Text)>> = "ARRAY(SELECT ROW(s.position, s.id, \
        s.name) FROM job_stages s \
        WHERE s.organization_id = jobs.organization_id AND s.job_id = jobs.id \
        ORDER BY s.position)";
    /// An organization's work hours in order, as an array of (position, day, start, end) in
    /// the organization's row.
    WorkHours: Array<Record<(Integer, Text, Text, Text)>> = "ARRAY(SELECT ROW(w.position, \
        w.day, w.start_time, w.end_time) FROM organization_work_hours w \
        WHERE w.organization_id = organizations.id ORDER BY w.position)";
}

/// The job read's query type.
type JobQuery = diesel::dsl::Select<
    diesel::dsl::Filter<
        diesel::dsl::InnerJoinOn<
            jobs::table,
            job_resolved_settings::table,
            diesel::dsl::And<
                diesel::dsl::Eq<job_resolved_settings::organization_id, jobs::organization_id>,
                diesel::dsl::Eq<job_resolved_settings::job_id, jobs::id>,
            >,
        >,
        diesel::dsl::And<
            diesel::dsl::Eq<jobs::organization_id, Uuid>,
            diesel::dsl::Eq<jobs::id, Uuid>,
        >,
    >,
    (
        diesel::dsl::AsSelect<JobRow, diesel::pg::Pg>,
        diesel::dsl::AsSelect<ResolvedSettingsRow, diesel::pg::Pg>,
        Team,
        Stages,
    ),
>;

/// The job read: one statement, the job and its resolved settings joined, its hiring team and
/// its stages as arrays of records in the same row; `$1` the organization, `$2` the job.
fn job_query(organization: Uuid, id: Uuid) -> JobQuery {
    jobs::table
        .inner_join(
            job_resolved_settings::table.on(job_resolved_settings::organization_id
                .eq(jobs::organization_id)
                .and(job_resolved_settings::job_id.eq(jobs::id))),
        )
        .filter(jobs::organization_id.eq(organization).and(jobs::id.eq(id)))
        .select((JobRow::as_select(), ResolvedSettingsRow::as_select(), Team, Stages))
}

/// The organization read's query type.
type OrganizationQuery = diesel::dsl::Select<
    diesel::dsl::Filter<
        diesel::dsl::InnerJoinOn<
            organizations::table,
            organization_scheduling_defaults::table,
            diesel::dsl::Eq<organization_scheduling_defaults::organization_id, organizations::id>,
        >,
        diesel::dsl::Eq<organizations::id, Uuid>,
    >,
    (
        diesel::dsl::AsSelect<OrganizationRow, diesel::pg::Pg>,
        diesel::dsl::AsSelect<SchedulingDefaultsRow, diesel::pg::Pg>,
        WorkHours,
    ),
>;

/// The organization read: one statement, the organization and its defaults joined, its work
/// hours as an array of records in the same row; `$1` the organization.
fn organization_query(id: Uuid) -> OrganizationQuery {
    organizations::table
        .inner_join(
            organization_scheduling_defaults::table
                .on(organization_scheduling_defaults::organization_id.eq(organizations::id)),
        )
        .filter(organizations::id.eq(id))
        .select((OrganizationRow::as_select(), SchedulingDefaultsRow::as_select(), WorkHours))
}

/// The job read's and the organization read's texts, each built once: they do not depend on
/// the values.
static JOB_STATEMENT: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
static ORGANIZATION_STATEMENT: std::sync::OnceLock<Result<String, String>> =
    std::sync::OnceLock::new();

/// The text diesel sends for `query`, its parameters numbered in the order of its values,
/// built at the first call into `text` (whatever `query`'s values: only the text is kept).
fn statement_text<Q: diesel::query_builder::QueryFragment<diesel::pg::Pg>>(
    text: &'static std::sync::OnceLock<Result<String, String>>,
    query: impl FnOnce() -> Q,
) -> Result<&'static str, StoreError> {
    use diesel::query_builder::QueryBuilder;
    let text = text.get_or_init(|| {
        let mut sql = diesel::pg::PgQueryBuilder::default();
        query()
            .to_sql(&mut sql, &diesel::pg::Pg)
            .map_err(|e| format!("a read's statement cannot be built: {e}"))?;
        Ok(sql.finish())
    });
    text.as_deref().map_err(StoreError::other)
}

/// The rows' SQL type of the query `Q`.
type Rows<Q> = <Q as diesel::query_builder::Query>::SqlType;

impl NativeDirectory for PgBackend {
    /// On a direct connection, the statement prepared once on it (D60).
    async fn organization(&self, id: OrganizationId) -> Result<OrganizationRecord, StoreError> {
        let text = statement_text(&ORGANIZATION_STATEMENT, || organization_query(Uuid::nil()))?;
        let row = self
            .read_kept(DirectRead::Organization, text, &[&id.uuid()])
            .await?
            .ok_or(StoreError::NotFound)?;
        let (row, defaults, hours) = row.decode::<Rows<OrganizationQuery>, (
            OrganizationRow,
            SchedulingDefaultsRow,
            Vec<(i32, String, String, String)>,
        )>()?;
        let hours =
            hours.into_iter().map(|(position, day, start_time, end_time)| neutral::WorkHoursRow {
                organization_id: id.uuid(),
                position,
                day,
                start_time,
                end_time,
            });
        row.into_neutral()?.into_record(hours.collect(), defaults.into_neutral()?)
    }

    /// On a direct connection, the statement prepared once on it (D60).
    async fn job(&self, organization: OrganizationId, id: JobId) -> Result<JobRecord, StoreError> {
        let text = statement_text(&JOB_STATEMENT, || job_query(Uuid::nil(), Uuid::nil()))?;
        let row = self
            .read_kept(DirectRead::Job, text, &[&organization.uuid(), &id.uuid()])
            .await?
            .ok_or(StoreError::NotFound)?;
        let (row, settings, team, stages) = row.decode::<Rows<JobQuery>, (
            JobRow,
            ResolvedSettingsRow,
            Vec<neutral::TeamMemberColumns>,
            Vec<(i32, Uuid, String)>,
        )>()?;
        let stages = stages.into_iter().map(|(position, stage, name)| neutral::JobStageRow {
            organization_id: organization.uuid(),
            job_id: id.uuid(),
            position,
            id: stage,
            name,
        });
        neutral::job_record(row.into_neutral()?, settings.into_neutral()?, team, stages.collect())
    }
}
