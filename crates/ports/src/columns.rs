//! A flat form of a privacy ledger entry's data subject, for stores that keep it in columns
//! rather than as a document: one column per field any variant has, unused ones empty.

use recruit_domain::Uuid;
use recruit_domain::model::{BulkQuery, BulkScope, DataSubject};

use crate::StoreError;

/// The data subject of a ledger entry as columns. Every variant fills `subject_type`; the
/// other columns are set only by the variants that have them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SubjectColumns {
    /// `EMPLOYEE`, `CANDIDATE` or `BULK`.
    pub subject_type: String,
    /// The employee of an `EMPLOYEE` subject.
    pub user_id: Option<Uuid>,
    /// The candidate of a `CANDIDATE` subject.
    pub candidate_id: Option<Uuid>,
    /// The count of a `BULK` subject, when known.
    pub bulk_count: Option<i64>,
    /// The query type of a `BULK` subject.
    pub query_type: Option<String>,
    /// The identifiers of a `CANDIDATE_IDS` or `EMPLOYEE_IDS` query.
    pub query_ids: Option<Vec<Uuid>>,
    /// The values of a `CANDIDATE_SEARCH` or `EMPLOYEE_SEARCH` query.
    pub query_values: Option<Vec<String>>,
    /// The scope of a `SCOPE` query.
    pub query_scope: Option<String>,
}

/// The stored `subject_type` of a bulk data subject.
pub(crate) const BULK: &str = "BULK";

impl SubjectColumns {
    /// The columns of a data subject. Fails only for a bulk count above `i64::MAX`, which no
    /// column type the stores use can hold.
    pub(crate) fn from_subject(subject: &DataSubject) -> Result<Self, StoreError> {
        let mut c = Self::default();
        match subject {
            DataSubject::Employee { user } => {
                c.subject_type = "EMPLOYEE".into();
                c.user_id = Some(user.uuid());
            }
            DataSubject::Candidate { candidate } => {
                c.subject_type = "CANDIDATE".into();
                c.candidate_id = Some(candidate.uuid());
            }
            DataSubject::Bulk { bulk_count, query } => {
                c.subject_type = BULK.into();
                c.bulk_count = bulk_count
                    .map(i64::try_from)
                    .transpose()
                    .map_err(|_| StoreError::other("bulk_count is larger than 2^63 - 1"))?;
                let (kind, ids, values, scope) = match query {
                    BulkQuery::CandidateIds { ids } => {
                        ("CANDIDATE_IDS", Some(ids.iter().map(|i| i.uuid()).collect()), None, None)
                    }
                    BulkQuery::EmployeeIds { ids } => {
                        ("EMPLOYEE_IDS", Some(ids.iter().map(|i| i.uuid()).collect()), None, None)
                    }
                    BulkQuery::CandidateSearch { values } => {
                        ("CANDIDATE_SEARCH", None, Some(values.clone()), None)
                    }
                    BulkQuery::EmployeeSearch { values } => {
                        ("EMPLOYEE_SEARCH", None, Some(values.clone()), None)
                    }
                    BulkQuery::Scope { scope } => {
                        ("SCOPE", None, None, Some(scope.as_str().into()))
                    }
                };
                c.query_type = Some(kind.into());
                c.query_ids = ids;
                c.query_values = values;
                c.query_scope = scope;
            }
        }
        Ok(c)
    }

    /// The data subject these columns hold. Fails when they do not describe one, which means
    /// the stored row is corrupt.
    pub(crate) fn into_subject(self) -> Result<DataSubject, StoreError> {
        let corrupt = |what: &str| StoreError::other(format!("corrupt ledger row: {what}"));
        match self.subject_type.as_str() {
            "EMPLOYEE" => Ok(DataSubject::Employee {
                user: self.user_id.ok_or_else(|| corrupt("EMPLOYEE without user"))?.into(),
            }),
            "CANDIDATE" => Ok(DataSubject::Candidate {
                candidate: self
                    .candidate_id
                    .ok_or_else(|| corrupt("CANDIDATE without candidate"))?
                    .into(),
            }),
            "BULK" => {
                let bulk_count = self
                    .bulk_count
                    .map(u64::try_from)
                    .transpose()
                    .map_err(|_| corrupt("negative bulk_count"))?;
                let ids = || self.query_ids.clone().ok_or_else(|| corrupt("query without ids"));
                let values =
                    || self.query_values.clone().ok_or_else(|| corrupt("query without values"));
                let query = match self.query_type.as_deref() {
                    Some("CANDIDATE_IDS") => BulkQuery::CandidateIds {
                        ids: ids()?.into_iter().map(Into::into).collect(),
                    },
                    Some("EMPLOYEE_IDS") => {
                        BulkQuery::EmployeeIds { ids: ids()?.into_iter().map(Into::into).collect() }
                    }
                    Some("CANDIDATE_SEARCH") => BulkQuery::CandidateSearch { values: values()? },
                    Some("EMPLOYEE_SEARCH") => BulkQuery::EmployeeSearch { values: values()? },
                    Some("SCOPE") => BulkQuery::Scope {
                        scope: self
                            .query_scope
                            .as_deref()
                            .and_then(BulkScope::from_wire)
                            .ok_or_else(|| corrupt("unknown scope"))?,
                    },
                    _ => return Err(corrupt("unknown query type")),
                };
                Ok(DataSubject::Bulk { bulk_count, query })
            }
            _ => Err(corrupt("unknown subject type")),
        }
    }
}
