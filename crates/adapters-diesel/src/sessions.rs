//! The console sessions' statements (`Tokens::open_session` and the rest), for both stores: the
//! look-up of a session, a macro that expands where the adapter's schema and rows are in
//! scope (a join of three rows), and the statements that touch and end one.

use crate::filter::Value;
use crate::review::Dialect;
use crate::statement::Statement;

/// The query of `Tokens::console_session`: the session whose stored secret hash is `$hash`,
/// with its token and the token's user, as `(ConsoleSessionRow, TokenRow, UserRow)`.
#[macro_export]
macro_rules! console_session_query {
    ($hash:expr) => {
        console_sessions::table
            .inner_join(
                api_tokens::table.on(api_tokens::organization_id
                    .eq(console_sessions::organization_id)
                    .and(api_tokens::id.eq(console_sessions::token_id))),
            )
            .inner_join(
                users::table.on(users::organization_id
                    .eq(api_tokens::organization_id)
                    .and(users::id.eq(api_tokens::user_id))),
            )
            .filter(console_sessions::secret_hash.eq($hash))
            .select((ConsoleSessionRow::as_select(), TokenRow::as_select(), UserRow::as_select()))
    };
}

/// What a statement does to a console session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionChange {
    /// Marks it used (`Tokens::touch_session`).
    Touch,
    /// Ends it (`Tokens::end_session`).
    End,
}

/// The statement that makes `change` to the session `id` at `at`, if it has not ended.
pub fn session_statement(
    d: Dialect,
    change: SessionChange,
    id: recruit_domain::Uuid,
    at: recruit_domain::Timestamp,
) -> Statement<'static> {
    let column = match change {
        SessionChange::Touch => "last_seen_at",
        SessionChange::End => "ended_at",
    };
    let sql = format!(
        "UPDATE console_sessions SET {column} = {} WHERE id = {} AND ended_at IS NULL",
        (d.param)(1),
        (d.param)(2)
    );
    Statement { sql, values: vec![Value::Time(at), Value::Uuid(id)] }
}

/// The session holder of a row of [`console_session_query!`].
pub fn session_holder<S, T, U>(
    (session, token, user): (S, T, U),
) -> Result<recruit_ports::SessionHolder, recruit_ports::StoreError>
where
    S: crate::Row<Neutral = recruit_ports::rows::ConsoleSessionRow>,
    T: crate::Row<Neutral = recruit_ports::rows::TokenRow>,
    U: crate::Row<Neutral = recruit_ports::rows::UserRow>,
{
    Ok(recruit_ports::SessionHolder {
        session: session.into_neutral()?.into_session()?,
        holder: recruit_ports::TokenHolder {
            token: token.into_neutral()?.into_token()?,
            user: user.into_neutral()?.into_user()?,
        },
    })
}
