//! Statements both stores run, written once: SQL text in a store's [`Dialect`] with the values
//! to bind in order ([`Value`]). Each store binds the values as its own types (one function
//! each) and loads its own rows; nothing here names a store's schema or row types.

use recruit_domain::{Timestamp, Uuid};
use recruit_ports::chain::ExportQuery;

use crate::filter::{Piece, Value};
use crate::review::Dialect;

/// SQL text and the values its parameters take, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement<'a> {
    /// The SQL, its parameters written as the dialect writes them.
    pub sql: String,
    /// The parameters' values, in order.
    pub values: Vec<Value<'a>>,
}

impl<'a> Statement<'a> {
    /// An empty statement.
    pub(crate) fn new() -> Self {
        Self { sql: String::new(), values: vec![] }
    }

    pub(crate) fn sql(&mut self, text: &str) -> &mut Self {
        self.sql.push_str(text);
        self
    }

    pub(crate) fn value(&mut self, d: Dialect, value: Value<'a>) -> &mut Self {
        self.values.push(value);
        self.sql.push_str(&(d.param)(self.values.len()));
        self
    }

    /// `column` holds one of `ids`.
    pub(crate) fn in_ids(&mut self, d: Dialect, column: &str, ids: Vec<Uuid>) -> &mut Self {
        let (before, after) = d.in_ids;
        self.sql(column).sql(before).value(d, Value::Uuids(ids)).sql(after)
    }

    fn pieces(&mut self, d: Dialect, pieces: Vec<Piece<'a>>) -> &mut Self {
        for piece in pieces {
            match piece {
                Piece::Sql(text) => self.sql(text),
                Piece::Value(value) => self.value(d, value),
            };
        }
        self
    }
}

/// What a statement over an export's entries reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportRead {
    /// How many entries match, as a `count` column; up to `at_most` when given.
    Count {
        /// The most entries counted.
        at_most: Option<u64>,
    },
    /// The next chunk of up to `limit` whole rows of one organization: in the chain's order
    /// when the query is after a position, else in the order of time and id after `after`
    /// (the last row's time and id).
    Chunk {
        /// The last row read, when a chunk was.
        after: Option<(Timestamp, Uuid)>,
        /// The most rows.
        limit: usize,
    },
}

/// The statement of `read` over the entries of `q` in the ledger table `table`, whose time
/// column is `time`. The keyset after a chunk is written as the ledger page's is, so that it
/// bounds a scan of the ledger's (organization, time, id) index.
pub fn export<'a>(
    d: Dialect,
    (table, time): (&str, &str),
    q: &'a ExportQuery,
    read: ExportRead,
) -> Statement<'a> {
    let mut s = Statement::new();
    let select = match read {
        ExportRead::Count { at_most: None } => "count(*) AS count",
        ExportRead::Count { at_most: Some(_) } => "1",
        ExportRead::Chunk { .. } => "*",
    };
    s.sql(&format!("SELECT {select} FROM {table} WHERE 1 = 1"));
    if let Some(org) = q.organization {
        s.sql(" AND organization_id = ").value(d, Value::Uuid(org.uuid()));
    }
    if let Some(from) = q.from {
        s.sql(&format!(" AND {time} >= ")).value(d, Value::Time(from));
    }
    if let Some(to) = q.to {
        s.sql(&format!(" AND {time} < ")).value(d, Value::Time(to));
    }
    if let Some(ids) = &q.ids {
        s.sql(" AND ").in_ids(d, "id", ids.clone());
    }
    if let Some(before) = q.recorded_before {
        s.sql(" AND recorded_at < ").value(d, Value::Time(before));
    }
    if let Some(position) = q.after_position {
        s.sql(" AND position > ").value(d, Value::Int(position));
    }
    s.pieces(d, crate::filter::entry_conditions(d, &q.filter));
    match read {
        ExportRead::Count { at_most: None } => {}
        ExportRead::Count { at_most: Some(n) } => {
            let inner = std::mem::take(&mut s.sql);
            s.sql(&format!("SELECT count(*) AS count FROM ({inner} LIMIT "));
            s.value(d, Value::Int(i64::try_from(n).unwrap_or(i64::MAX))).sql(") AS matched");
        }
        ExportRead::Chunk { after, limit } => {
            if let (Some((at, id)), None) = (after, q.after_position) {
                s.sql(&format!(" AND {time} >= ")).value(d, Value::Time(at));
                s.sql(&format!(" AND ({time} > ")).value(d, Value::Time(at));
                s.sql(" OR id > ").value(d, Value::Uuid(id)).sql(")");
            }
            match q.after_position {
                Some(_) => s.sql(" ORDER BY position LIMIT "),
                None => s.sql(&format!(" ORDER BY {time}, id LIMIT ")),
            };
            s.value(d, Value::Int(i64::try_from(limit).unwrap_or(i64::MAX)));
        }
    }
    s
}

/// The statements that look up an import batch's privacy ledger entries by its `keys`: every
/// id within every organization named, `chunk` ids a statement.
pub fn stored_entries(
    d: Dialect,
    keys: &recruit_ports::rows::LedgerKeys,
    chunk: usize,
) -> Vec<Statement<'static>> {
    keys.ids
        .chunks(chunk.max(1))
        .map(|part| {
            let mut s = Statement::new();
            s.sql("SELECT * FROM privacy_audit_logs WHERE ");
            s.in_ids(d, "organization_id", keys.organizations.clone());
            s.sql(" AND ").in_ids(d, "id", part.to_vec());
            s
        })
        .collect()
}

/// Adds to `found` the rows of a look-up of [`stored_entries`] that are the batch's.
pub fn keep_stored<R: crate::Row<Neutral = recruit_ports::rows::LedgerRow>>(
    keys: &recruit_ports::rows::LedgerKeys,
    rows: Vec<R>,
    found: &mut Vec<recruit_ports::LedgerEntry>,
) -> Result<(), recruit_ports::StoreError> {
    keys.keep(rows.into_iter().map(crate::Row::into_neutral).collect::<Result<Vec<_>, _>>()?, found)
}

/// The signed checkpoints, of the organization `org` and of the ledger `ledger` when given, in
/// the order of organization, ledger, position and time of signing.
pub fn checkpoints(
    d: Dialect,
    org: Option<Uuid>,
    ledger: Option<recruit_domain::chain::Ledger>,
) -> Statement<'static> {
    kept_by_ledger(d, "ledger_checkpoints", org, ledger, "position, signed_at")
}

/// The latest signed checkpoint of the organization `org` and the ledger `ledger`: the highest
/// position, then the latest signature; a statement of one row at most.
pub fn latest_checkpoint(
    d: Dialect,
    org: Uuid,
    ledger: recruit_domain::chain::Ledger,
) -> Statement<'static> {
    let mut s = Statement::new();
    s.sql("SELECT * FROM ledger_checkpoints WHERE organization_id = ").value(d, Value::Uuid(org));
    s.sql(" AND ledger = ").value(d, Value::Text(ledger.as_str()));
    s.sql(" ORDER BY position DESC, signed_at DESC LIMIT 1");
    s
}

/// The retention cuts, of the organization `org` and of the ledger `ledger` when given, in the
/// order of organization, ledger and position.
pub fn retention_cuts(
    d: Dialect,
    org: Option<Uuid>,
    ledger: Option<recruit_domain::chain::Ledger>,
) -> Statement<'static> {
    kept_by_ledger(d, "ledger_retention_cuts", org, ledger, "position")
}

/// Every row of `table` (a table of records kept per organization and ledger), of `org` and
/// `ledger` when given, ordered by organization, ledger, then `order`.
fn kept_by_ledger(
    d: Dialect,
    table: &str,
    org: Option<Uuid>,
    ledger: Option<recruit_domain::chain::Ledger>,
    order: &str,
) -> Statement<'static> {
    let mut s = Statement::new();
    s.sql(&format!("SELECT * FROM {table} WHERE 1 = 1"));
    if let Some(org) = org {
        s.sql(" AND organization_id = ").value(d, Value::Uuid(org));
    }
    if let Some(ledger) = ledger {
        s.sql(" AND ledger = ").value(d, Value::Text(ledger.as_str()));
    }
    s.sql(&format!(" ORDER BY organization_id, ledger, {order}"));
    s
}

#[cfg(test)]
mod tests {
    use recruit_domain::chain::Ledger;

    use super::*;

    #[test]
    fn an_export_binds_its_values_in_the_order_it_names_them() {
        let t = |s| Timestamp::from_unix_micros(s).unwrap();
        let q = ExportQuery {
            ledger: Ledger::Privacy,
            organization: Some(recruit_domain::OrganizationId::from_uuid(Uuid::nil())),
            from: Some(t(1)),
            to: None,
            ids: Some(vec![Uuid::max(), Uuid::nil()]),
            recorded_before: None,
            after_position: None,
            filter: recruit_ports::EntryFilter {
                category: Some("READ".into()),
                ..Default::default()
            },
        };
        let table = ("privacy_audit_logs", "access_time");
        let chunk = ExportRead::Chunk { after: Some((t(5), Uuid::max())), limit: 10 };
        let s = export(Dialect::POSTGRES, table, &q, chunk);
        assert_eq!(
            s.sql,
            "SELECT * FROM privacy_audit_logs WHERE 1 = 1 AND organization_id = $1 AND \
             access_time >= $2 AND id = ANY($3) AND activity_category = $4 AND access_time >= \
             $5 AND (access_time > $6 OR id > $7) ORDER BY access_time, id LIMIT $8"
        );
        assert_eq!(s.values.len(), 8);
        assert_eq!(s.values[7], Value::Int(10));
        let counted = export(Dialect::SQLITE, table, &q, ExportRead::Count { at_most: Some(3) });
        assert!(counted.sql.starts_with("SELECT count(*) AS count FROM (SELECT 1 FROM"));
        assert!(counted.sql.ends_with("LIMIT ?5) AS matched"), "{}", counted.sql);
        assert!(counted.sql.contains(" AND id IN (SELECT unhex(value) FROM json_each(?3))"));
    }
}
