//! The filters of the privacy ledger's list and export beside their window and ids, as a
//! reviewer narrows a month down (GitHub's audit-log qualifiers, Okta's click-to-filter): the
//! account, the activity category, the product area (`access_menu`), the data subject, an IP
//! address, and whether the access was outside the organization's work hours. Each given
//! filter must hold. They are read here, every problem reported at once, and handed to the
//! store as [`EntryFilter`] conditions on stored values; the work hours become spans of time
//! read in the organization's time zone slot by slot, as the monthly review counts them, so
//! the entries a filter lists are exactly those the review counts.

use std::net::IpAddr;

use recruit_domain::model::ActivityCategory;
use recruit_domain::{
    AccountId, CandidateId, ErrorDetail, OrganizationId, Timestamp, UserId, Uuid,
};
use recruit_ports::{EntryFilter, Store, SubjectFilter};
use serde_json::{Map, Value};

use crate::error::ServiceError;

/// The filters' parameters as received, `None` where not given.
#[derive(Clone, Debug, Default)]
pub struct RawFilter {
    /// `account_id`.
    pub account_id: Option<String>,
    /// `activity_category`.
    pub activity_category: Option<String>,
    /// `access_menu`.
    pub access_menu: Option<String>,
    /// `data_subject_id`.
    pub data_subject_id: Option<String>,
    /// `ip_address`.
    pub ip_address: Option<String>,
    /// `outside_work_hours`: `true` or `false`.
    pub outside_work_hours: Option<String>,
}

/// The data subject a filter names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// An employee (`usr_…`).
    User(UserId),
    /// A candidate (`can_…`).
    Candidate(CandidateId),
    /// A bare UUID: an employee or a candidate.
    Either(Uuid),
}

/// The filters, valid.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only this account's entries.
    pub account: Option<AccountId>,
    /// Only entries of this activity category.
    pub category: Option<ActivityCategory>,
    /// Only entries of this product area.
    pub menu: Option<String>,
    /// Only entries whose data subject this is.
    pub subject: Option<Subject>,
    /// Only entries that recorded this address.
    pub ip_address: Option<IpAddr>,
    /// Only entries outside (`true`) or within (`false`) the work hours.
    pub outside_work_hours: Option<bool>,
}

impl Filter {
    /// Reads the filters, pushing a problem for each value that is not valid.
    pub fn read(raw: RawFilter, problems: &mut Vec<ErrorDetail>) -> Self {
        let mut problem =
            |name: &str, reason: String| problems.push(ErrorDetail::field(name, reason));
        // An account is a user's UUID: the user's id (`usr_…`, as people are shown) names it too.
        let account = raw.account_id.and_then(|v| {
            let as_user = v.parse::<recruit_domain::UserId>().ok();
            let parsed = as_user.map(|u| Ok(AccountId::from_uuid(u.uuid())));
            parsed
                .unwrap_or_else(|| AccountId::parse(&v))
                .map_err(|e| problem("account_id", e.to_string()))
                .ok()
        });
        let category = raw.activity_category.and_then(|v| match text(&v) {
            Ok(()) => Some(ActivityCategory::from(v.as_str())),
            Err(e) => {
                problem("activity_category", e);
                None
            }
        });
        let menu = raw.access_menu.and_then(|v| match text(&v) {
            Ok(()) => Some(v),
            Err(e) => {
                problem("access_menu", e);
                None
            }
        });
        let subject = raw
            .data_subject_id
            .and_then(|v| subject(&v).map_err(|e| problem("data_subject_id", e)).ok());
        let ip_address = raw.ip_address.and_then(|v| {
            v.parse::<IpAddr>()
                .map_err(|_| problem("ip_address", "is not an IPv4 or IPv6 address".into()))
                .ok()
        });
        let outside_work_hours = raw.outside_work_hours.and_then(|v| match v.as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => {
                problem("outside_work_hours", "must be true or false".into());
                None
            }
        });
        Self { account, category, menu, subject, ip_address, outside_work_hours }
    }

    /// The filters given, by their parameters' names, in canonical form: what the audit
    /// ledgers record of a read, and what a cursor is bound to.
    pub fn json(&self) -> Map<String, Value> {
        let mut out = Map::new();
        let mut put = |name: &str, value: Option<Value>| {
            if let Some(value) = value {
                out.insert(name.into(), value);
            }
        };
        put("account_id", self.account.map(|a| a.to_string().into()));
        put("activity_category", self.category.as_ref().map(|c| c.as_str().into()));
        put("access_menu", self.menu.clone().map(Value::from));
        put(
            "data_subject_id",
            self.subject.map(|s| match s {
                Subject::User(id) => id.to_string().into(),
                Subject::Candidate(id) => id.to_string().into(),
                Subject::Either(id) => id.simple().to_string().into(),
            }),
        );
        put("ip_address", self.ip_address.map(|a| a.to_string().into()));
        put("outside_work_hours", self.outside_work_hours.map(Value::from));
        out
    }

    /// The conditions a store applies for these filters over the window `(from, to)` of
    /// `organization`'s ledger. The work hours are the organization's, in its time zone; when
    /// they cannot be read, a filter on them is a problem of `outside_work_hours`.
    pub async fn conditions(
        &self,
        store: &dyn Store,
        organization: OrganizationId,
        window: (Timestamp, Timestamp),
    ) -> Result<EntryFilter, ServiceError> {
        let spans = match self.outside_work_hours {
            None => None,
            Some(outside) => {
                let record = store.organization(organization).await?;
                let (hours, _) = crate::work_hours::WorkCalendar::of(
                    &record.settings,
                    &record.review_rules.holidays,
                )
                .map_err(|why| {
                    ServiceError::validation(vec![ErrorDetail::field(
                        "outside_work_hours",
                        format!(
                            "cannot be applied: the organization's work hours are not read ({why})"
                        ),
                    )])
                })?;
                Some(crate::work_hours::spans(record.time_zone, &hours, window, !outside))
            }
        };
        Ok(EntryFilter {
            account: self.account.map(AccountId::uuid),
            category: self.category.as_ref().map(|c| c.as_str().to_owned()),
            menu: self.menu.clone(),
            subject: self.subject.map(|s| match s {
                Subject::User(id) => SubjectFilter { id: id.uuid(), user: true, candidate: false },
                Subject::Candidate(id) => {
                    SubjectFilter { id: id.uuid(), user: false, candidate: true }
                }
                Subject::Either(id) => SubjectFilter { id, user: true, candidate: true },
            }),
            ip_address: self.ip_address.map(|a| a.to_string()),
            spans,
        })
    }
}

/// Text compared with what entries hold: 1 to [`crate::accesses::MAX_MENU_LEN`] characters,
/// as an entry's are.
fn text(value: &str) -> Result<(), String> {
    let len = value.chars().count();
    let max = crate::accesses::MAX_MENU_LEN;
    if len == 0 || len > max || value.contains('\0') {
        return Err(format!("must be 1 to {max} characters, without NUL"));
    }
    Ok(())
}

/// A data subject's id: a user's (`usr_…`), a candidate's (`can_…`), or a bare UUID, which
/// names either.
fn subject(value: &str) -> Result<Subject, String> {
    let lower = value.get(..4).map(str::to_ascii_lowercase);
    match lower.as_deref() {
        Some("usr_") => UserId::parse(value).map(Subject::User).map_err(|e| e.to_string()),
        Some("can_") => {
            CandidateId::parse(value).map(Subject::Candidate).map_err(|e| e.to_string())
        }
        _ => UserId::parse(value)
            .map(|id| Subject::Either(id.uuid()))
            .map_err(|_| "must be a user ID (usr_…), a candidate ID (can_…) or a UUID".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(raw: RawFilter) -> (Filter, Vec<(String, String)>) {
        let mut problems = vec![];
        let filter = Filter::read(raw, &mut problems);
        let problems = problems
            .iter()
            .map(|p| (p.get("field").unwrap().to_owned(), p.get("reason").unwrap().to_owned()))
            .collect();
        (filter, problems)
    }

    #[test]
    fn filters_are_read_in_canonical_form_and_every_problem_is_reported() {
        let (filter, problems) = read(RawFilter {
            account_id: Some("0123456789ABCDEF0123456789abcdef".into()),
            activity_category: Some("DOWNLOAD".into()),
            access_menu: Some("Candidates".into()),
            data_subject_id: Some("CAN_0123456789abcdef0123456789abcdef".into()),
            ip_address: Some("2001:DB8::1".into()),
            outside_work_hours: Some("true".into()),
        });
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            Value::Object(filter.json()),
            serde_json::json!({
                "account_id": "0123456789abcdef0123456789abcdef",
                "activity_category": "DOWNLOAD",
                "access_menu": "Candidates",
                "data_subject_id": "can_0123456789abcdef0123456789abcdef",
                "ip_address": "2001:db8::1",
                "outside_work_hours": true,
            })
        );
        let bare = Filter::read(
            RawFilter {
                data_subject_id: Some("01234567-89ab-cdef-0123-456789abcdef".into()),
                ..RawFilter::default()
            },
            &mut vec![],
        );
        assert!(matches!(bare.subject, Some(Subject::Either(_))));
        let by_user = Filter::read(
            RawFilter {
                account_id: Some("usr_0123456789abcdef0123456789abcdef".into()),
                ..RawFilter::default()
            },
            &mut vec![],
        );
        let account = by_user.account.map(|a| a.to_string());
        assert_eq!(account.as_deref(), Some("0123456789abcdef0123456789abcdef"), "a user's id");

        let (_, problems) = read(RawFilter {
            account_id: Some("acc_1".into()),
            activity_category: Some(String::new()),
            access_menu: Some("x".repeat(501)),
            data_subject_id: Some("job_0123456789abcdef0123456789abcdef".into()),
            ip_address: Some("10.0.0.300".into()),
            outside_work_hours: Some("yes".into()),
        });
        let fields: Vec<&str> = problems.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "account_id",
                "activity_category",
                "access_menu",
                "data_subject_id",
                "ip_address",
                "outside_work_hours"
            ]
        );
        assert!(Filter::read(RawFilter::default(), &mut vec![]).json().is_empty());
    }
}
