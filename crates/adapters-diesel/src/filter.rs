//! The conditions of an [`EntryFilter`] on the privacy ledger, for both stores: SQL text with
//! the values to bind in order ([`Piece`]), which each backend binds as its own types, so the
//! conditions are written once.

use recruit_domain::{Timestamp, Uuid};
use recruit_ports::EntryFilter;

use crate::review::Dialect;

/// A value to bind, in its neutral form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// A UUID (an account, a user or a candidate).
    Uuid(Uuid),
    /// Text, as stored.
    Text(&'a str),
    /// An instant, compared with `access_time`.
    Time(Timestamp),
    /// An integer: a position, a count.
    Int(i64),
    /// A list of UUIDs, one parameter: see [`Dialect::in_ids`].
    Uuids(Vec<Uuid>),
    /// Text or NULL.
    OptText(Option<&'a str>),
    /// A UUID or NULL.
    OptUuid(Option<Uuid>),
    /// A truth value.
    Bool(bool),
    /// Bytes (a hash).
    Bytes(&'a [u8]),
    /// What lies outside spans of time (each `[from, to)`, in order): the gaps before, between
    /// and after them, one parameter; see [`Dialect::spans`].
    Gaps(&'a [(Timestamp, Timestamp)]),
}

/// A piece of a statement: SQL text, or a parameter holding a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// SQL text.
    Sql(&'static str),
    /// A parameter.
    Value(Value<'a>),
}

const EMPLOYEE: Piece<'static> = Piece::Sql(" AND subject_type = 'EMPLOYEE'");
const CANDIDATE: Piece<'static> = Piece::Sql(" AND subject_type = 'CANDIDATE'");

/// The conditions of `f` on a row of `privacy_audit_logs`, each beginning with ` AND `; none
/// for an empty filter.
pub fn entry_conditions(d: Dialect, f: &EntryFilter) -> Vec<Piece<'_>> {
    use Piece::{Sql, Value as V};
    let mut out = vec![];
    if let Some(account) = f.account {
        out.extend([Sql(" AND account_id = "), V(Value::Uuid(account))]);
    }
    if let Some(category) = &f.category {
        out.extend([Sql(" AND activity_category = "), V(Value::Text(category))]);
    }
    if let Some(menu) = &f.menu {
        out.extend([Sql(" AND access_menu = "), V(Value::Text(menu))]);
    }
    if let Some(s) = f.subject {
        // As the subject index has it: an entry's subject is one column or the other by its
        // type, so one expression finds either, and the type tells them apart.
        let subject =
            [Sql(" AND coalesce(subject_user_id, subject_candidate_id) = "), V(Value::Uuid(s.id))];
        match (s.user, s.candidate) {
            (true, true) => out.extend(subject),
            (true, false) => out.extend([subject[0].clone(), subject[1].clone(), EMPLOYEE]),
            (false, true) => out.extend([subject[0].clone(), subject[1].clone(), CANDIDATE]),
            (false, false) => out.push(Sql(" AND 1 = 0")),
        }
    }
    if let Some(address) = &f.ip_address {
        out.push(Sql(" AND "));
        for (i, &sql) in d.has_address.iter().enumerate() {
            if i > 0 {
                out.push(V(Value::Text(address)));
            }
            out.push(Sql(sql));
        }
    }
    if let Some(spans) = &f.spans {
        if spans.is_empty() {
            out.push(Sql(" AND 1 = 0"));
        } else if let Some((before, after)) = d.spans {
            out.extend([Sql(" AND "), Sql(before), V(Value::Gaps(spans)), Sql(after)]);
        } else {
            out.push(Sql(" AND ("));
            for (i, &(from, to)) in spans.iter().enumerate() {
                out.push(Sql(if i == 0 { "(access_time >= " } else { " OR (access_time >= " }));
                out.extend([V(Value::Time(from)), Sql(" AND access_time < "), V(Value::Time(to))]);
                out.push(Sql(")"));
            }
            out.push(Sql(")"));
        }
    }
    out
}

/// The pieces as SQL text, each parameter written by `param` (given its 0-based index among
/// them), and the values in order.
pub fn render<'a>(
    pieces: &[Piece<'a>],
    mut param: impl FnMut(usize) -> String,
) -> (String, Vec<Value<'a>>) {
    let (mut sql, mut values) = (String::new(), vec![]);
    for piece in pieces {
        match piece {
            Piece::Sql(text) => sql.push_str(text),
            Piece::Value(value) => {
                sql.push_str(&param(values.len()));
                values.push(value.clone());
            }
        }
    }
    (sql, values)
}

#[cfg(test)]
mod tests {
    use recruit_ports::SubjectFilter;

    use super::*;

    #[test]
    fn each_condition_binds_its_values_in_order() {
        let t = |s| Timestamp::from_unix_micros(s).unwrap();
        let f = EntryFilter {
            account: Some(Uuid::nil()),
            category: Some("READ".into()),
            subject: Some(SubjectFilter { id: Uuid::max(), user: true, candidate: true }),
            ip_address: Some("10.0.0.1".into()),
            spans: Some(vec![(t(1), t(2)), (t(3), t(4))]),
            ..EntryFilter::default()
        };
        let (sql, values) = render(&entry_conditions(Dialect::POSTGRES, &f), |i| format!("${i}"));
        assert_eq!(
            sql,
            " AND account_id = $0 AND activity_category = $1 AND coalesce(subject_user_id, \
             subject_candidate_id) = $2 AND CAST(ip_addresses AS varchar(256)[]) @> \
             ARRAY[CAST($3 AS varchar(256))] AND $4 = ANY(ip_addresses) AND NOT (access_time \
             <@ (SELECT CAST($5 AS tstzmultirange)))"
        );
        assert_eq!(values.len(), 6);
        assert_eq!(values[3..5], [Value::Text("10.0.0.1"), Value::Text("10.0.0.1")]);
        assert_eq!(values[5], Value::Gaps(&[(t(1), t(2)), (t(3), t(4))]));
        let spans = EntryFilter { spans: f.spans.clone(), ..EntryFilter::default() };
        let (sql, values) = render(&entry_conditions(Dialect::SQLITE, &spans), |i| format!("?{i}"));
        assert_eq!(
            sql,
            " AND ((access_time >= ?0 AND access_time < ?1) OR (access_time >= ?2 AND \
             access_time < ?3))"
        );
        assert_eq!(values, [t(1), t(2), t(3), t(4)].map(Value::Time));
        let empty = EntryFilter { spans: Some(vec![]), ..EntryFilter::default() };
        assert_eq!(
            render(&entry_conditions(Dialect::SQLITE, &empty), |_| "?".into()).0,
            " AND 1 = 0"
        );
        assert!(entry_conditions(Dialect::SQLITE, &EntryFilter::default()).is_empty());
    }
}
