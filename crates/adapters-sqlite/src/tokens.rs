//! The tokens port: credentials by secret hash, creating, revoking, touching and listing
//! tokens.

use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use recruit_adapters_diesel::native::NativeTokens;
use recruit_domain::{ApiTokenId, OrganizationId, Timestamp};
use recruit_ports::rows as neutral;
use recruit_ports::{ApiToken, NewApiToken, SecretHash, SessionHolder, StoreError, TokenHolder};

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

    async fn create_token(&self, token: &NewApiToken) -> Result<ApiToken, StoreError> {
        let row = TokenRow::from(neutral::TokenRow::new(token));
        let id = blob(token.id.uuid());
        self.transaction(move |c| {
            diesel::insert_into(api_tokens::table).values(&row).execute(c)?;
            load_token(c, &id)
        })
        .await
        .map_err(StoreError::from)
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

    async fn touch_token(&self, id: ApiTokenId, at: Timestamp) -> Result<(), StoreError> {
        let id = blob(id.uuid());
        let (now, stale) = (at.unix_micros(), at.unix_micros() - 60_000_000);
        self.run(move |c| {
            diesel::update(
                api_tokens::table.filter(api_tokens::id.eq(id)).filter(
                    api_tokens::last_used_at.is_null().or(api_tokens::last_used_at.lt(stale)),
                ),
            )
            .set(api_tokens::last_used_at.eq(now))
            .execute(c)
            .map(drop)
        })
        .await
    }

    async fn tokens(
        &self,
        organization: Option<OrganizationId>,
    ) -> Result<Vec<ApiToken>, StoreError> {
        let org = organization.map(|o| blob(o.uuid()));
        let rows = self
            .run(move |c| {
                let mut q = api_tokens::table.select(TokenRow::as_select()).into_boxed();
                if let Some(org) = org {
                    q = q.filter(api_tokens::organization_id.eq(org));
                }
                q.order((api_tokens::created_at.desc(), api_tokens::id.desc())).load(c)
            })
            .await?;
        rows.into_iter().map(|r| r.into_neutral()?.into_token()).collect()
    }
}
