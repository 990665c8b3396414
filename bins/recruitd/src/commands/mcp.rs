//! `recruitd mcp`: the tool interface for agents (MCP) over standard input and output, as the
//! holder of one token.

use std::sync::Arc;

use recruit_mcp::{Tools, ToolsConfig};
use recruit_service::Service;

use crate::Failure;
use crate::cli::McpArgs;

/// Serves the tool interface over stdio until the client closes it. Standard output carries
/// the protocol only; logs go to standard error.
pub(crate) async fn mcp(service: Arc<Service>, args: McpArgs) -> Result<(), Failure> {
    let token = std::fs::read_to_string(&args.token_file).map_err(|e| {
        Failure(format!("cannot read the token file {}: {e}", args.token_file.display()))
    })?;
    let config = ToolsConfig {
        public_base_url: args.public_base_url.unwrap_or_default(),
        deadline: args.service.request_deadline,
    };
    Tools::serve_stdio(service, config, token.trim()).await.map_err(|e| {
        Failure(match e.code {
            recruit_domain::ErrorCode::Unauthenticated => format!(
                "the token in {} is not valid: it is unknown, expired or revoked",
                args.token_file.display()
            ),
            _ => e.cause.map(String::from).unwrap_or(e.message),
        })
    })
}
