//! Hand-written SQL that the connection keeps prepared. diesel's `sql_query` is never kept: it
//! is parsed and planned again at every run. For the ledger's page query, planning costs
//! several times what running it does (about 0.2 ms against 0.05 ms on a partitioned table), so
//! the statement is prepared once per connection, and PostgreSQL settles on a generic plan
//! with run-time partition pruning after its first few runs.

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::Untyped;
use diesel::{QueryResult, expression::AsExpression};

/// A statement built from SQL text and bound values, in order, whose rows are of SQL type
/// `ST` (untyped: read by column name). Its text depends only on its shape, never on the
/// values, so each shape is prepared once per connection.
pub(crate) struct PreparedSql<ST = Untyped> {
    pieces: Vec<Piece>,
    rows: std::marker::PhantomData<fn() -> ST>,
}

impl<ST> Default for PreparedSql<ST> {
    fn default() -> Self {
        Self { pieces: vec![], rows: std::marker::PhantomData }
    }
}

enum Piece {
    Sql(String),
    Bind(Box<dyn QueryFragment<Pg> + Send>),
    /// A parameter of a numbered statement not bound yet.
    Slot,
}

impl<ST> PreparedSql<ST> {
    /// The statement `text`, whose parameters `$1`, `$2`… each appear once, in that order:
    /// bind their values with [`PreparedSql::bind`] in the same order.
    pub(crate) fn numbered(text: &str) -> Self {
        let mut query = Self::default();
        let mut rest = text;
        let mut n = 1;
        while let Some(at) = rest.find(&format!("${n}")) {
            let digits = n.to_string().len() + 1;
            query.pieces.push(Piece::Sql(rest[..at].to_owned()));
            query.pieces.push(Piece::Slot);
            rest = &rest[at + digits..];
            n += 1;
        }
        debug_assert!(!rest.contains('$'), "parameters out of order in {text}");
        query.pieces.push(Piece::Sql(rest.to_owned()));
        query
    }

    /// Appends SQL text.
    pub(crate) fn sql(mut self, text: impl Into<String>) -> Self {
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
            None => self.pieces.push(value),
        }
        self
    }
}

impl<ST> QueryFragment<Pg> for PreparedSql<ST> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        for piece in &self.pieces {
            match piece {
                Piece::Sql(text) => out.push_sql(text),
                Piece::Bind(value) => value.walk_ast(out.reborrow())?,
                Piece::Slot => {
                    return Err(diesel::result::Error::QueryBuilderError(
                        "a parameter of a prepared statement is not bound".into(),
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
