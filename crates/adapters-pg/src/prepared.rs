//! Hand-written SQL that the connection keeps prepared. diesel's `sql_query` is never kept: it
//! is parsed and planned again at every run. For the ledger's page query, planning costs
//! several times what running it does (about 0.2 ms against 0.05 ms on a partitioned table), so
//! the statement is prepared once per connection, and PostgreSQL settles on a generic plan
//! with run-time partition pruning after its first few runs.

use std::borrow::Cow;

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::Untyped;
use diesel::{QueryResult, expression::AsExpression};

/// A statement built from SQL text and bound values, in order, whose rows are of SQL type
/// `ST` (untyped: read by column name). Its text depends only on its shape, never on the
/// values, so each shape is prepared once per connection.
/// The SQL types of a row's columns in the order of its fields: what a statement selecting
/// them returns, decoded column by position rather than looked up by name.
pub(crate) type RowType<R> =
    <<R as diesel::Selectable<Pg>>::SelectExpression as diesel::Expression>::SqlType;

pub(crate) struct PreparedSql<ST = Untyped> {
    pieces: Vec<Piece>,
    /// Whether its text numbers its parameters (`$1`…), each bound in order.
    numbered: bool,
    /// Whether it is planned anew at every run, for its values, rather than kept.
    each_run: bool,
    rows: std::marker::PhantomData<fn() -> ST>,
}

impl<ST> Default for PreparedSql<ST> {
    fn default() -> Self {
        Self { pieces: vec![], numbered: false, each_run: false, rows: std::marker::PhantomData }
    }
}

enum Piece {
    /// Text: the statement's own (borrowed, not copied at every run) or built for this run.
    Sql(Cow<'static, str>),
    Bind(Box<dyn QueryFragment<Pg> + Send>),
    /// A parameter of a numbered statement not bound yet.
    Slot,
    /// A value bound to a numbered statement beyond its parameters.
    Extra,
}

impl<ST> PreparedSql<ST> {
    /// The statement `text`, whose parameters `$1`, `$2`… each appear once, in that order:
    /// bind their values with [`PreparedSql::bind`] in the same order.
    pub(crate) fn numbered(text: &'static str) -> Self {
        Numbered::new(text).statement()
    }

    /// Not kept prepared: planned at every run with its values (an unnamed statement). For a
    /// statement whose best plan depends on a value: PostgreSQL's generic plan of a kept one
    /// guesses every value alike.
    pub(crate) fn planned_each_run(mut self) -> Self {
        self.each_run = true;
        self
    }

    /// Appends SQL text.
    pub(crate) fn sql(mut self, text: impl Into<Cow<'static, str>>) -> Self {
        self.pieces.push(Piece::Sql(text.into()));
        self
    }

    /// Appends a parameter holding `value`, of SQL type `ST`.
    /// (In a [`PreparedSql::numbered`] statement, fills its next parameter.)
    pub(crate) fn bind<B, T>(mut self, value: T) -> Self
    where
        T: AsExpression<B>,
        T::Expression: QueryFragment<Pg> + Send + 'static,
        B: diesel::sql_types::SqlType + diesel::expression::TypedExpressionType,
    {
        let value = Piece::Bind(Box::new(value.as_expression()));
        match self.pieces.iter_mut().find(|p| matches!(p, Piece::Slot)) {
            Some(slot) => *slot = value,
            None if self.numbered => self.pieces.push(Piece::Extra),
            None => self.pieces.push(value),
        }
        self
    }
}

impl<ST> QueryFragment<Pg> for PreparedSql<ST> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        if self.each_run {
            out.unsafe_to_cache_prepared();
        }
        for piece in &self.pieces {
            match piece {
                Piece::Sql(text) => out.push_sql(text),
                Piece::Bind(value) => value.walk_ast(out.reborrow())?,
                Piece::Slot | Piece::Extra => {
                    return Err(diesel::result::Error::QueryBuilderError(
                        "a prepared statement's values do not match its parameters".into(),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl<ST> QueryId for PreparedSql<ST> {
    // Kept by its text: no type stands for the statement.
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<ST: 'static> Query for PreparedSql<ST> {
    type SqlType = ST;
}

/// A statement text whose parameters `$1`, `$2`… each appear once, in that order, split at
/// them once: statements are made from it at every run without scanning the text again.
pub(crate) struct Numbered(Vec<&'static str>);

impl Numbered {
    pub(crate) fn new(text: &'static str) -> Self {
        let mut pieces = vec![];
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            let digits = rest[at + 1..].bytes().take_while(u8::is_ascii_digit).count();
            let n = rest[at + 1..at + 1 + digits].parse::<usize>();
            // The statements are the crate's own constants: a test runs each one.
            assert_eq!(n.ok(), Some(pieces.len() + 1), "parameters out of order in {text}");
            pieces.push(&rest[..at]);
            rest = &rest[at + 1 + digits..];
        }
        pieces.push(rest);
        Self(pieces)
    }

    /// The statement, its parameters to bind with [`PreparedSql::bind`] in order.
    pub(crate) fn statement<ST>(&self) -> PreparedSql<ST> {
        let mut pieces = Vec::with_capacity(self.0.len() * 2);
        for (n, text) in self.0.iter().enumerate() {
            if n > 0 {
                pieces.push(Piece::Slot);
            }
            pieces.push(Piece::Sql(Cow::Borrowed(*text)));
        }
        PreparedSql { pieces, numbered: true, each_run: false, rows: std::marker::PhantomData }
    }
}

/// A statement both stores share (`recruit_adapters_diesel::statement::Statement`), kept
/// prepared by its text like [`PreparedSql`], unlike the `sql_query` it would otherwise be:
/// each `$n` of its text becomes a parameter bound to its `n`th value (a value used twice is
/// bound twice), so that the text diesel sends, and keeps prepared, depends on the
/// statement's shape alone.
pub(crate) struct Kept {
    sql: String,
    values: Vec<Owned>,
}

/// A value of a shared statement, owned.
enum Owned {
    Uuid(recruit_domain::Uuid),
    Text(String),
    Time(chrono::DateTime<chrono::Utc>),
    Int(i64),
    Uuids(Vec<recruit_domain::Uuid>),
    OptText(Option<String>),
    OptUuid(Option<recruit_domain::Uuid>),
    Bool(bool),
    Bytes(Vec<u8>),
}

impl Kept {
    pub(crate) fn new(statement: recruit_adapters_diesel::statement::Statement<'_>) -> Self {
        use recruit_adapters_diesel::filter::Value;
        let values = statement.values.into_iter().map(|value| match value {
            Value::Uuid(id) => Owned::Uuid(id),
            Value::Text(text) => Owned::Text(text.to_owned()),
            Value::Time(t) => Owned::Time(t.as_datetime()),
            Value::Int(n) => Owned::Int(n),
            Value::Uuids(ids) => Owned::Uuids(ids),
            Value::OptText(text) => Owned::OptText(text.map(str::to_owned)),
            Value::OptUuid(id) => Owned::OptUuid(id),
            Value::Bool(b) => Owned::Bool(b),
            Value::Bytes(bytes) => Owned::Bytes(bytes.to_vec()),
            Value::Gaps(spans) => Owned::Text(crate::chain::gaps(spans)),
        });
        Self { sql: statement.sql, values: values.collect() }
    }
}

impl Owned {
    fn bind<'b>(&'b self, out: &mut AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        use diesel::sql_types::{Array, BigInt, Binary, Bool, Nullable, Text, Timestamptz, Uuid};
        match self {
            Self::Uuid(id) => out.push_bind_param::<Uuid, _>(id),
            Self::Text(text) => out.push_bind_param::<Text, _>(text),
            Self::Time(t) => out.push_bind_param::<Timestamptz, _>(t),
            Self::Int(n) => out.push_bind_param::<BigInt, _>(n),
            Self::Uuids(ids) => out.push_bind_param::<Array<Uuid>, _>(ids),
            Self::OptText(text) => out.push_bind_param::<Nullable<Text>, _>(text),
            Self::OptUuid(id) => out.push_bind_param::<Nullable<Uuid>, _>(id),
            Self::Bool(b) => out.push_bind_param::<Bool, _>(b),
            Self::Bytes(bytes) => out.push_bind_param::<Binary, _>(bytes),
        }
    }
}

impl QueryFragment<Pg> for Kept {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let mut rest = self.sql.as_str();
        while let Some(at) = rest.find('$') {
            let digits = rest[at + 1..].bytes().take_while(u8::is_ascii_digit).count();
            let Ok(n) = rest[at + 1..at + 1 + digits].parse::<usize>() else {
                out.push_sql(&rest[..=at]);
                rest = &rest[at + 1..];
                continue;
            };
            out.push_sql(&rest[..at]);
            let value = n.checked_sub(1).and_then(|i| self.values.get(i)).ok_or_else(|| {
                diesel::result::Error::QueryBuilderError(
                    format!("a statement's parameter ${n} has no value").into(),
                )
            })?;
            value.bind(&mut out)?;
            rest = &rest[at + 1 + digits..];
        }
        out.push_sql(rest);
        Ok(())
    }
}

impl QueryId for Kept {
    // Kept by its text: no type stands for the statement.
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for Kept {
    type SqlType = Untyped;
}

#[cfg(test)]
mod tests {
    use diesel::pg::Pg;
    use diesel::sql_types::Integer;

    use super::PreparedSql;

    fn text(query: &PreparedSql<()>) -> String {
        diesel::debug_query::<Pg, _>(query).to_string()
    }

    #[test]
    fn numbered_parameters_take_their_values_in_order() {
        let ten = (1..=10).fold(
            PreparedSql::<()>::numbered(
                (1..=10).map(|n| format!("${n}")).collect::<Vec<_>>().join(",").leak(),
            ),
            |q, n| q.bind::<Integer, _>(n),
        );
        assert!(text(&ten).starts_with("$1,$2,$3,$4,$5,$6,$7,$8,$9,$10 --"), "{}", text(&ten));
    }

    #[test]
    fn a_shared_statement_binds_each_parameter_where_it_stands() {
        use recruit_adapters_diesel::filter::Value;
        use recruit_adapters_diesel::statement::Statement;
        let statement = Statement {
            sql: "SELECT $2, $1 WHERE $2 > 0 AND '$' <> $3".into(),
            values: vec![Value::Int(1), Value::Int(2), Value::Text("x")],
        };
        let text = diesel::debug_query::<Pg, _>(&super::Kept::new(statement)).to_string();
        assert_eq!(text, "SELECT $1, $2 WHERE $3 > 0 AND '$' <> $4 -- binds: [2, 1, 2, \"x\"]");
        let missing = Statement { sql: "SELECT $2".into(), values: vec![Value::Int(1)] };
        let mut sql = diesel::pg::PgQueryBuilder::default();
        use diesel::query_builder::QueryFragment;
        assert!(super::Kept::new(missing).to_sql(&mut sql, &Pg).is_err());
    }

    #[test]
    #[should_panic(expected = "parameters out of order")]
    fn parameters_out_of_order_are_refused() {
        let _ = PreparedSql::<()>::numbered("SELECT $2, $1");
    }

    #[test]
    fn values_that_do_not_match_the_parameters_fail_the_statement() {
        use diesel::query_builder::QueryFragment;
        let build = |q: &PreparedSql<()>| {
            let mut sql = diesel::pg::PgQueryBuilder::default();
            q.to_sql(&mut sql, &Pg)
        };
        let missing = PreparedSql::<()>::numbered("SELECT $1, $2").bind::<Integer, _>(1);
        assert!(build(&missing).is_err());
        let extra =
            PreparedSql::<()>::numbered("SELECT $1").bind::<Integer, _>(1).bind::<Integer, _>(2);
        assert!(build(&extra).is_err());
        let exact = PreparedSql::<()>::numbered("SELECT $1").bind::<Integer, _>(1);
        assert!(build(&exact).is_ok());
    }
}
