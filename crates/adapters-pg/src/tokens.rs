//! The tokens port: credentials by secret hash (through the credential cache when it is on),
//! creating, revoking, touching and listing tokens.

use diesel::prelude::*;
use diesel::sql_types;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use recruit_adapters_diesel::native::NativeTokens;
use recruit_domain::{ApiTokenId, Timestamp};
use recruit_ports::{ApiToken, SecretHash, SessionHolder, StoreError, TokenHolder};

use crate::PgBackend;
use crate::error::*;
use crate::rows::*;
use crate::schema::*;

pub(crate) async fn load_token(
    c: &mut AsyncPgConnection,
    id: recruit_domain::Uuid,
) -> Result<ApiToken, TxError> {
    let row = api_tokens::table
        .filter(api_tokens::id.eq(id))
        .select(TokenRow::as_select())
        .first(c)
        .await?;
    Ok(row.into_neutral()?.into_token()?)
}

impl NativeTokens for PgBackend {
    async fn credential(&self, secret_hash: &SecretHash) -> Result<TokenHolder, StoreError> {
        use crate::credentials::Lookup;
        let lookup = self.credentials.as_ref().map_or(Lookup::Off, |cache| cache.get(secret_hash));
        let epoch = match lookup {
            Lookup::Hit(credential) => return Ok(*credential),
            Lookup::Miss(epoch) => Some(epoch),
            Lookup::Off => None,
        };
        let mut c = self.conn().await?;
        let (token, user) = api_tokens::table
            .inner_join(
                users::table.on(users::organization_id
                    .eq(api_tokens::organization_id)
                    .and(users::id.eq(api_tokens::user_id))),
            )
            .filter(api_tokens::secret_hash.eq(secret_hash.0.as_slice()))
            .select((TokenRow::as_select(), UserRow::as_select()))
            .first(&mut c)
            .await
            .map_err(store_error)?;
        let credential = TokenHolder {
            token: token.into_neutral()?.into_token()?,
            user: user.into_neutral()?.into_user()?,
        };
        if let (Some(cache), Some(epoch)) = (&self.credentials, epoch) {
            cache.put(*secret_hash, &credential, epoch);
        }
        Ok(credential)
    }

    async fn revoke_token(&self, id: ApiTokenId, at: Timestamp) -> Result<ApiToken, StoreError> {
        let id = id.uuid();
        let mut c = self.conn().await?;
        let revoked = c
            .transaction::<_, TxError, _>(async |c| {
                diesel::update(api_tokens::table.filter(api_tokens::id.eq(id)))
                    .set(
                        api_tokens::revoked_at.eq(diesel::dsl::sql::<
                            sql_types::Nullable<sql_types::Timestamptz>,
                        >(
                            "COALESCE(revoked_at, "
                        )
                        .bind::<sql_types::Timestamptz, _>(at.as_datetime())
                        .sql(")")),
                    )
                    .execute(c)
                    .await?;
                load_token(c, id).await
            })
            .await
            .map_err(StoreError::from);
        // This store forgets at once; other stores, when the trigger's notification arrives.
        if let Some(cache) = &self.credentials {
            cache.clear();
        }
        revoked
    }

    async fn console_session(&self, hash: &SecretHash) -> Result<SessionHolder, StoreError> {
        let mut c = self.conn().await?;
        let row = console_sessions_with_holders()
            .filter(console_sessions::secret_hash.eq(hash.0.as_slice()))
            .select((ConsoleSessionRow::as_select(), TokenRow::as_select(), UserRow::as_select()))
            .first(&mut c)
            .await
            .map_err(store_error)?;
        recruit_adapters_diesel::sessions::session_holder(row)
    }
}
