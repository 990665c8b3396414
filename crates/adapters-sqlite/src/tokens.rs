//! The tokens port: credentials by secret hash, creating, revoking, touching and listing
//! tokens.

use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use recruit_adapters_diesel::native::NativeTokens;
use recruit_domain::{ApiTokenId, Timestamp};
use recruit_ports::{ApiToken, SecretHash, SessionHolder, StoreError, TokenHolder};

use crate::SqliteBackend;
use crate::error::TxError;
use crate::rows::*;
use crate::schema::*;

fn load_token(c: &mut SqliteConnection, token: &[u8]) -> Result<ApiToken, TxError> {
    let row = api_tokens::table
        .filter(api_tokens::id.eq(token))
        .select(TokenRow::as_select())
        .first(c)?;
    Ok(row.into_neutral()?.into_token()?)
}

impl NativeTokens for SqliteBackend {
    async fn credential(&self, secret_hash: &SecretHash) -> Result<TokenHolder, StoreError> {
        let hash = secret_hash.0.to_vec();
        let (token, user) = self
            .run(move |c| {
                api_tokens::table
                    .inner_join(
                        users::table.on(users::organization_id
                            .eq(api_tokens::organization_id)
                            .and(users::id.eq(api_tokens::user_id))),
                    )
                    .filter(api_tokens::secret_hash.eq(hash))
                    .select((TokenRow::as_select(), UserRow::as_select()))
                    .first(c)
            })
            .await?;
        Ok(TokenHolder {
            token: token.into_neutral()?.into_token()?,
            user: user.into_neutral()?.into_user()?,
        })
    }

    async fn revoke_token(&self, id: ApiTokenId, at: Timestamp) -> Result<ApiToken, StoreError> {
        let id = blob(id.uuid());
        self.transaction(move |c| {
            let current = api_tokens::table.filter(api_tokens::id.eq(&id));
            diesel::update(current)
                .set(api_tokens::revoked_at.eq(diesel::dsl::sql::<
                    diesel::sql_types::Nullable<diesel::sql_types::BigInt>,
                >(&format!(
                    "COALESCE(revoked_at, {})",
                    at.unix_micros()
                ))))
                .execute(c)?;
            load_token(c, &id)
        })
        .await
        .map_err(StoreError::from)
    }

    async fn console_session(&self, hash: &SecretHash) -> Result<SessionHolder, StoreError> {
        let hash = hash.0.to_vec();
        let row = self
            .run(move |c| {
                console_sessions_with_holders()
                    .filter(console_sessions::secret_hash.eq(hash))
                    .select((
                        ConsoleSessionRow::as_select(),
                        TokenRow::as_select(),
                        UserRow::as_select(),
                    ))
                    .first(c)
            })
            .await?;
        recruit_adapters_diesel::sessions::session_holder(row)
    }
}
