//! The tools: their definitions for models, the translation of arguments into the service's
//! parameters and of results into tool results, and the handler `rmcp` calls.

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use recruit_service::{
    Arguments, Caller, Effect, Identity, Operation, OperationKind, RequestContext, Service,
    ServiceError, Via,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    Tool, ToolAnnotations,
};
use rmcp::service::RequestContext as McpContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

/// The protocol revisions served: the current, stateless one and the last with a handshake.
const REVISIONS: &[ProtocolVersion] =
    &[ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

/// Each tool's title, description, input and output schema, derived from `docs/openapi.yaml`
/// by `build.rs`, which refuses an operation with only one of `x-tool-title` and
/// `x-tool-description`; the crate's tests check that every tool has each.
static SCHEMAS: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_slice(include_bytes!(concat!(env!("OUT_DIR"), "/tool_schemas.json")))
        .expect("build.rs writes the tool schemas as JSON")
});

/// A tool's title and description, for models, from the OpenAPI document.
fn describe(kind: OperationKind) -> Option<(&'static str, &'static str)> {
    let tool = SCHEMAS.get(kind.tool_name()?)?;
    Some((tool.get("title")?.as_str()?, tool.get("description")?.as_str()?))
}

/// A tool's input (`which` = `"input"`) or output schema, if `build.rs` derived one.
fn schema(kind: OperationKind, which: &str) -> Option<JsonObject> {
    SCHEMAS.get(kind.tool_name()?)?.get(which)?.as_object().filter(|o| !o.is_empty()).cloned()
}

/// The tool of `kind`, as listed, if it has one.
fn tool(kind: OperationKind) -> Option<Tool> {
    let name = kind.tool_name()?;
    let (title, description) = describe(kind)?;
    let schema = |which| Arc::new(schema(kind, which).unwrap_or_default());
    let tool = Tool::new(name, description, schema("input"))
        .with_title(title)
        .with_raw_output_schema(schema("output"))
        .with_annotations(
            // A write is idempotent by its key (the same call again records nothing more), and
            // a merge patch by its nature (the same patch again changes nothing more).
            ToolAnnotations::new()
                .read_only(kind.spec().effect == Effect::Read)
                .destructive(kind.spec().effect == Effect::Change)
                .idempotent(true)
                .open_world(false),
        );
    Some(tool)
}

/// Each tool's name and the names of its arguments (its input schema's properties, sorted),
/// in the order the tools are listed: what a page for agents lists.
pub fn tool_arguments() -> Vec<(&'static str, Vec<String>)> {
    OperationKind::tools()
        .filter_map(|kind| {
            let input = schema(kind, "input").unwrap_or_default();
            let properties = input.get("properties").and_then(Value::as_object);
            Some((
                kind.tool_name()?,
                properties.map(|p| p.keys().cloned().collect()).unwrap_or_default(),
            ))
        })
        .collect()
}

/// The tools, in the order they are listed.
static TOOLS: LazyLock<Vec<Tool>> =
    LazyLock::new(|| OperationKind::ALL.into_iter().filter_map(tool).collect());

/// The tool interface's settings.
#[derive(Clone, Debug)]
pub struct ToolsConfig {
    /// The URL clients reach the server at; the `docs_url` of errors is built from it. Empty:
    /// errors carry no link.
    pub public_base_url: String,
    /// The longest a tool call may take; past it the call fails with UPSTREAM_TIMEOUT.
    pub deadline: Duration,
}

/// What the HTTP layer established about a request before handing it to the tool interface:
/// put into the request's extensions, it reaches the tool call.
#[derive(Clone, Debug)]
pub struct HttpCaller {
    /// The authenticated caller.
    pub caller: Caller,
    /// The request's id, as logged and echoed.
    pub request_id: String,
    /// The client's address, when known.
    pub client_ip: Option<IpAddr>,
    /// When the request's time is up: the call gets what is left of it, so that one deadline
    /// covers authentication and the call.
    pub until: std::time::Instant,
}

/// Where a call's caller comes from.
#[derive(Clone)]
enum CallerSource {
    /// The HTTP layer authenticated the request ([`HttpCaller`] in its extensions).
    Http,
    /// One token for the whole session (stdio), authenticated again on every call, so that a
    /// revoked or expired token stops working at once.
    Token(Arc<str>),
}

/// The MCP server: the three tools over a [`Service`].
#[derive(Clone)]
pub struct Tools {
    service: Arc<Service>,
    config: Arc<ToolsConfig>,
    source: CallerSource,
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tools").field("config", &self.config).finish_non_exhaustive()
    }
}

/// The streamable HTTP endpoint of the tool interface.
pub type McpService = StreamableHttpService<Tools, NeverSessionManager>;

impl Tools {
    /// The streamable HTTP endpoint: stateless (no sessions), JSON answers, for both protocol
    /// revisions. The HTTP layer in front of it routes, limits the body, checks `Origin`,
    /// authenticates and puts an [`HttpCaller`] into each request's extensions.
    pub fn http(service: Arc<Service>, config: ToolsConfig) -> McpService {
        let tools = Self { service, config: Arc::new(config), source: CallerSource::Http };
        let settings = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_sse_retry(None)
            // Hosts and origins are the HTTP layer's to check, with the operator's allow-list.
            .disable_allowed_hosts();
        StreamableHttpService::new(
            move || Ok(tools.clone()),
            Arc::new(NeverSessionManager::default()),
            settings,
        )
    }

    /// Serves the tools over standard input and output as the holder of `token`, until the
    /// client closes its end. The token is checked first, and again on every call.
    pub async fn serve_stdio(
        service: Arc<Service>,
        config: ToolsConfig,
        token: &str,
    ) -> Result<(), ServiceError> {
        service.authenticate(Some(token), None).await?;
        let tools =
            Self { service, config: Arc::new(config), source: CallerSource::Token(token.into()) };
        let running = tools.serve(rmcp::transport::stdio()).await.map_err(|e| ServiceError {
            cause: Some(format!("the MCP session did not start: {e}").into()),
            ..ServiceError::internal()
        })?;
        running.waiting().await.map_err(|e| ServiceError {
            cause: Some(format!("the MCP session failed: {e}").into()),
            ..ServiceError::internal()
        })?;
        Ok(())
    }

    /// Runs the tool of `kind` with `arguments`: the REST body on success, the error otherwise.
    async fn call(
        &self,
        kind: OperationKind,
        arguments: JsonObject,
        http: Option<HttpCaller>,
    ) -> Result<Value, ServiceError> {
        let (caller, request_id, client_ip, deadline) = match http {
            Some(h) => {
                let left = h.until.saturating_duration_since(std::time::Instant::now());
                (Some(h.caller), h.request_id, h.client_ip, left)
            }
            None => (None, uuid::Uuid::now_v7().simple().to_string(), None, self.config.deadline),
        };
        let credential = match (&self.source, caller) {
            (_, Some(caller)) => Identity::Authenticated(Box::new(caller)),
            (CallerSource::Token(secret), None) => Identity::Secret(Some(secret.to_string())),
            (CallerSource::Http, None) => return Err(ServiceError::unauthenticated()),
        };
        let Some(name) = kind.tool_name() else {
            return Err(ServiceError::not_found("tool"));
        };
        let operation = Arguments::tool(kind, &arguments)
            .and_then(|arguments| Operation::parse(kind, arguments))
            .inspect_err(|e| recruit_service::log_failure(&request_id, e))?;
        let context = RequestContext {
            request_id: request_id.clone(),
            client_ip,
            via: Via::Tool { name: name.to_owned(), arguments: Value::Object(arguments) },
        };
        let started = std::time::Instant::now();
        let result =
            self.service.run(deadline, credential, context, operation).await.and_then(|done| {
                done.outcome.to_json().inspect_err(|e| recruit_service::log_failure(&request_id, e))
            });
        let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        match &result {
            Ok(_) => {
                tracing::info!(request.id = %request_id, tool = kind.tool_name(), latency_ms, "tool call")
            }
            Err(e) => tracing::info!(
                request.id = %request_id,
                tool = kind.tool_name(),
                latency_ms,
                error.code = %e.code,
                "tool call failed"
            ),
        }
        result
    }
}

/// A tool result's JSON; an envelope that does not serialize is logged, and the result is
/// the INTERNAL envelope instead, never an empty one.
fn envelope(error: &ServiceError, base_url: &str) -> Value {
    serde_json::to_value(error.envelope(base_url)).unwrap_or_else(|e| {
        tracing::error!(error = %e, "an error envelope could not be serialized");
        serde_json::json!({"error": {"code": "INTERNAL", "message": "Internal error."}})
    })
}

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("recruitd", env!("CARGO_PKG_VERSION")).with_title("recruitd"),
            )
            .with_instructions(
                "Tools over a recruiting service's data, for the organization of the access \
                 token: its privacy audit ledger (who accessed whose personal data: list it, and \
                 record accesses with an idempotency key), its jobs, its users' profiles (read \
                 and update them), and the organization itself. Results are the JSON of the \
                 REST API; a \
                 failure is a result with isError whose content is the error envelope, with a \
                 stable `error.code` to act on.",
            )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(REVISIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: McpContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(TOOLS.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        TOOLS.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: McpContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(kind) = OperationKind::from_tool_name(&request.name) else {
            let names: Vec<_> = OperationKind::tools().filter_map(|k| k.tool_name()).collect();
            return Err(ErrorData::invalid_params(
                format!("There is no tool named `{}`; the tools are {names:?}.", request.name),
                None,
            ));
        };
        let http = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<HttpCaller>())
            .cloned();
        let result = match self.call(kind, request.arguments.unwrap_or_default(), http).await {
            Ok(value) => CallToolResult::structured(value),
            Err(e) => CallToolResult::structured_error(envelope(&e, &self.config.public_base_url)),
        };
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_but_the_export_is_a_tool_with_a_title_a_description_and_both_schemas() {
        let with_tools = OperationKind::ALL.iter().filter(|k| k.spec().tool).count();
        assert_eq!(TOOLS.len(), with_tools);
        assert!(OperationKind::tools().all(|k| k != OperationKind::ExportPrivacyAuditLogs));
        assert_eq!(OperationKind::from_tool_name("export_privacy_audit_logs"), None);
        assert!(TOOLS.iter().all(|t| t.name != "export_privacy_audit_logs"));
        assert_eq!(TOOLS.len(), OperationKind::tools().count());
        for (kind, listed) in OperationKind::tools().zip(TOOLS.iter()) {
            let name = kind.tool_name().unwrap_or_default();
            assert_eq!(listed.name, name, "tools are listed in the order of the operations");
            let (title, description) = describe(kind).unwrap_or_default();
            assert!(!title.is_empty() && description.len() > 40, "{name} is not described");
            for which in ["input", "output"] {
                let schema = schema(kind, which)
                    .unwrap_or_else(|| panic!("{name} has no {which} schema from the OpenAPI"));
                assert_eq!(schema.get("type"), Some(&Value::from("object")), "{name} {which}");
            }
            assert_eq!(OperationKind::from_tool_name(name), Some(kind));
        }
    }

    #[test]
    fn a_name_that_is_not_exactly_a_tools_is_no_tool() {
        for name in ["delete_everything", "GET_JOB", "get_job ", "getJob", "", "get"] {
            assert_eq!(OperationKind::from_tool_name(name), None, "{name:?}");
        }
    }
}
