//! `Tokens`: API tokens and console sessions.

use async_trait::async_trait;
use recruit_domain::{ApiTokenId, OrganizationId, Timestamp, Uuid};
use recruit_ports::rows as neutral;
use recruit_ports::{
    ApiToken, ConsoleSession, NewApiToken, SecretHash, SessionHolder, StoreError, TokenHolder,
    Tokens,
};

use super::{dialect, read};
use crate::Insert;
use crate::db::Db;
use crate::filter::Value;
use crate::native::*;
use crate::sessions;
use crate::sessions::{SessionChange, session_statement};
use crate::statement::Statement;
use crate::store::{Backend, Diesel, pending};

#[async_trait]
impl<B: Backend + NativeTokens> Tokens for Diesel<B> {
    async fn credential(&self, secret_hash: &SecretHash) -> Result<TokenHolder, StoreError> {
        self.0.credential(secret_hash).await
    }

    async fn create_token(&self, token: &NewApiToken) -> Result<ApiToken, StoreError> {
        let row = neutral::TokenRow::new(token);
        let p = dialect::<B>().param;
        let sql = format!("SELECT * FROM api_tokens WHERE id = {}", p(1));
        let values = vec![Value::Uuid(token.id.uuid())];
        self.0
            .transaction(move |db| {
                pending(async move {
                    db.insert(vec![row]).await?;
                    let found =
                        read(db, Statement { sql, values }, neutral::TokenRow::into_token).await?;
                    found.into_iter().next().ok_or(StoreError::NotFound)
                })
            })
            .await
    }

    async fn revoke_token(&self, id: ApiTokenId, at: Timestamp) -> Result<ApiToken, StoreError> {
        self.0.revoke_token(id, at).await
    }

    async fn touch_token(&self, id: ApiTokenId, at: Timestamp) -> Result<(), StoreError> {
        // Written at most once a minute: a token in use does not write at every request.
        let stale =
            Timestamp::from_unix_micros(at.unix_micros().saturating_sub(60_000_000)).unwrap_or(at);
        let p = dialect::<B>().param;
        let sql = format!(
            "UPDATE api_tokens SET last_used_at = {} \
             WHERE id = {} AND (last_used_at IS NULL OR last_used_at < {})",
            p(1),
            p(2),
            p(3)
        );
        let values = vec![Value::Time(at), Value::Uuid(id.uuid()), Value::Time(stale)];
        let touched = self.0.connection(move |db| pending(db.execute(Statement { sql, values })));
        touched.await.map(drop)
    }

    async fn open_session(
        &self,
        session: &ConsoleSession,
        record: &recruit_ports::ReadRecord,
    ) -> Result<(), StoreError> {
        let (session, record) = (session.clone(), record.clone());
        self.0
            .transaction(move |db| {
                pending(async move { sessions::open_session(db, &session, &record).await })
            })
            .await
    }

    async fn console_session(&self, secret_hash: &SecretHash) -> Result<SessionHolder, StoreError> {
        self.0.console_session(secret_hash).await
    }

    async fn touch_session(&self, id: Uuid, at: Timestamp) -> Result<(), StoreError> {
        let statement = session_statement(dialect::<B>(), SessionChange::Touch, id, at);
        self.0
            .connection(move |db| pending(async move { db.execute(statement).await.map(drop) }))
            .await
    }

    async fn end_session(
        &self,
        id: Uuid,
        at: Timestamp,
        record: Option<&recruit_ports::ReadRecord>,
    ) -> Result<(), StoreError> {
        let record = record.cloned();
        self.0
            .transaction(move |db| {
                pending(async move { sessions::end_session(db, id, at, record.as_ref()).await })
            })
            .await
    }

    async fn tokens(
        &self,
        organization: Option<OrganizationId>,
    ) -> Result<Vec<ApiToken>, StoreError> {
        let p = dialect::<B>().param;
        let (condition, values) = match organization {
            Some(org) => {
                (format!(" WHERE organization_id = {}", p(1)), vec![Value::Uuid(org.uuid())])
            }
            None => (String::new(), vec![]),
        };
        let sql = format!("SELECT * FROM api_tokens{condition} ORDER BY created_at DESC, id DESC");
        self.0
            .connection(move |db| {
                pending(read(db, Statement { sql, values }, neutral::TokenRow::into_token))
            })
            .await
    }
}
