//! The console sessions' statements (`Tokens::open_session` and the rest), for both stores:
//! macros that expand where the adapter's schema and rows are in scope.

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

/// The statement of `Tokens::touch_session` (`$touch` true) or `Tokens::end_session`: the
/// session `$id` (stored), if not ended, used or ended at `$at` (stored).
#[macro_export]
macro_rules! session_statement {
    ($id:expr, $at:expr, touch) => {
        diesel::update(
            console_sessions::table
                .filter(console_sessions::id.eq($id))
                .filter(console_sessions::ended_at.is_null()),
        )
        .set(console_sessions::last_seen_at.eq($at))
    };
    ($id:expr, $at:expr, end) => {
        diesel::update(
            console_sessions::table
                .filter(console_sessions::id.eq($id))
                .filter(console_sessions::ended_at.is_null()),
        )
        .set(console_sessions::ended_at.eq(Some($at)))
    };
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
