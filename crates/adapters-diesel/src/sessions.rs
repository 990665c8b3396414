//! The console sessions' statements (`Tokens::open_session` and the rest), for both stores: a
//! session opened and ended with the records of its sign-in and sign-out, the statements that
//! touch and end one, and the session holder of a row of the join
//! `console_sessions_with_holders` (each store's schema).

use crate::filter::Value;
use crate::review::Dialect;
use crate::statement::Statement;

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

/// `Tokens::open_session` in the caller's transaction on `c`: the session, and its sign-in's
/// record.
pub async fn open_session<D>(
    c: &mut D,
    session: &recruit_ports::ConsoleSession,
    record: &recruit_ports::ReadRecord,
) -> Result<(), recruit_ports::StoreError>
where
    D: crate::db::Db + crate::Insert<recruit_ports::rows::ConsoleSessionRow>,
{
    c.insert(vec![recruit_ports::rows::ConsoleSessionRow::new(session)]).await?;
    c.append_record(record.page(Vec::<()>::new(), 0)).await
}

/// `Tokens::end_session` in the caller's transaction on `c`: the session ended at `at`, and
/// the sign-out's record if any.
pub async fn end_session<D: crate::db::Db>(
    c: &mut D,
    id: recruit_domain::Uuid,
    at: recruit_domain::Timestamp,
    record: Option<&recruit_ports::ReadRecord>,
) -> Result<(), recruit_ports::StoreError> {
    c.execute(session_statement(D::DIALECT, SessionChange::End, id, at)).await?;
    match record {
        Some(record) => c.append_record(record.page(Vec::<()>::new(), 0)).await,
        None => Ok(()),
    }
}

/// The session holder of a row of the schema's `console_sessions_with_holders`, selected as
/// `(ConsoleSessionRow, TokenRow, UserRow)`.
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
