//! `recruitd token`: create, list and revoke API tokens.

use std::sync::Arc;

use recruit_domain::Timestamp;
use recruit_ports::Store;

use crate::Failure;
use crate::cli::TokenCommand;
use crate::output::print;

pub(crate) async fn token(store: Arc<dyn Store>, command: TokenCommand) -> Result<(), Failure> {
    match command {
        TokenCommand::Create { user, scopes, name, expires_in, scim, json } => {
            let found = store.find_user(user).await.map_err(|e| match e {
                recruit_ports::StoreError::NotFound => Failure(format!("no user {user}")),
                e => Failure(e.to_string()),
            })?;
            let expires_at = match expires_in {
                None => None,
                Some(d) => Some(
                    Timestamp::now()
                        .checked_add_duration(d)
                        .ok_or_else(|| Failure("--expires-in is too long".into()))?,
                ),
            };
            if let Some(s) = scopes.iter().find(|s| !s.opens_api()) {
                return Err(Failure(format!(
                    "the scope {} is held by SCIM tokens alone: use --scim",
                    s.as_str()
                )));
            }
            let (token, secret) = if scim {
                recruit_service::auth::create_scim_token(&*store, user, name, expires_at).await?
            } else {
                let tokens: &dyn recruit_ports::Tokens = &*store;
                recruit_service::auth::create_token(
                    tokens,
                    found.organization_id,
                    user,
                    name,
                    scopes,
                    expires_at,
                )
                .await?
            };
            if json {
                let scopes: Vec<&str> = token.scopes.iter().map(|s| s.as_str()).collect();
                print(
                    &serde_json::json!({
                        "id": token.id,
                        "token": secret,
                        "organization_id": token.organization_id,
                        "user_id": token.user_id,
                        "scopes": scopes,
                        "expires_at": token.expires_at,
                    })
                    .to_string(),
                );
            } else {
                print(&format!(
                    "Created token {} for user {} ({}).",
                    token.id,
                    found.name,
                    found.role.as_str()
                ));
                print("Its secret is shown once; store it now:");
                print(&format!("  {secret}"));
            }
            Ok(())
        }
        TokenCommand::List { org, json } => {
            let time = |t: Option<Timestamp>| t.map_or_else(|| "-".to_owned(), |t| t.to_string());
            for token in store.tokens(org).await? {
                let scopes: Vec<&str> = token.scopes.iter().map(|s| s.as_str()).collect();
                if json {
                    print(
                        &serde_json::json!({
                            "id": token.id,
                            "organization_id": token.organization_id,
                            "user_id": token.user_id,
                            "name": token.name,
                            "scopes": scopes,
                            "created_at": token.created_at,
                            "expires_at": token.expires_at,
                            "revoked_at": token.revoked_at,
                            "last_used_at": token.last_used_at,
                        })
                        .to_string(),
                    );
                } else {
                    print(&format!(
                        "{}  {}  user {}  {:?}  {}  created {}  expires {}  revoked {}  last used {}",
                        token.id,
                        token.organization_id,
                        token.user_id,
                        token.name,
                        scopes.join(","),
                        token.created_at,
                        time(token.expires_at),
                        time(token.revoked_at),
                        time(token.last_used_at),
                    ));
                }
            }
            Ok(())
        }
        TokenCommand::Revoke { id } => {
            let token = store.revoke_token(id, Timestamp::now()).await.map_err(|e| match e {
                recruit_ports::StoreError::NotFound => Failure(format!("no token {id}")),
                e => Failure(e.to_string()),
            })?;
            let at = token.revoked_at.map(|t| t.to_string()).unwrap_or_default();
            print(&format!("Token {id} is revoked (since {at})."));
            Ok(())
        }
    }
}
