//! The tools: their definitions for models, the translation of arguments into the service's
//! parameters and of results into tool results, and the handler `rmcp` calls.

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use recruit_service::{
    Caller, Effect, GetJobParams, GetUserParams, ListParams, Operation, OperationKind,
    RecordParams, RequestContext, Service, ServiceError, UpdateUserParams, Via, problems,
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
use serde_json::{Map, Value};

/// The protocol revisions served: the current, stateless one and the last with a handshake.
const REVISIONS: &[ProtocolVersion] =
    &[ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

/// Each tool's input and output schema, derived from `docs/openapi.yaml` by `build.rs`.
static SCHEMAS: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_slice(include_bytes!(concat!(env!("OUT_DIR"), "/tool_schemas.json")))
        .unwrap_or_default()
});

/// A tool's title and description, for models; `None` for an operation without a tool.
fn describe(kind: OperationKind) -> Option<(&'static str, &'static str)> {
    Some(match kind {
        OperationKind::ListPrivacyAuditLogs => (
            "List privacy audit log entries",
            "Lists entries of the organization's privacy audit ledger, newest first: who \
             (account_id) accessed whose personal data (data_subject: an employee, a candidate, \
             or a bulk selection), which categories (access_data), when (access_time), from which \
             IP addresses, and in which product area (access_menu, access_menu_path). \
             `timestamp_gte` and `timestamp_lt` are required RFC 3339 date-times, at most 366 \
             days apart; entries at or after the first and before the second are listed. \
             `limit` is the page size (1 to 100, default 25). `ids` restricts the list to the \
             given entry IDs (`pal_…` or UUIDs, 1 to 100). When `pagination.next_cursor` is not \
             null, call again with the same filters and `cursor` set to it for the next page. \
             Needs the audit_logs:read scope and a token acting for an owner; every call is \
             recorded in the audit ledgers. Failures return the error envelope (`error.code`, \
             `error.message`, `error.details`).",
        ),
        OperationKind::GetJob => (
            "Get a job",
            "Gets one job of the caller's organization by `job_id` (`job_…` or a UUID, dashed or \
             not, any case): name, status (DRAFT, OPEN, CLOSED), confidentiality, locations, \
             hiring team, the external ATS reference, creation and update times, a link to the \
             web app, and the resolved interview scheduling settings. A job of another \
             organization is NOT_FOUND, like one that does not exist; a confidential job needs an \
             owner, an admin or a member of its hiring team (otherwise PERMISSION_DENIED). Needs \
             the jobs:read scope. Failures return the error envelope.",
        ),
        OperationKind::RecordPrivacyAccesses => (
            "Record accesses to personal data",
            "Records in the organization's privacy audit ledger 1 to 1000 accesses to personal \
             data as they happen (`entries`): each with access_time (RFC 3339, at most 5 minutes \
             ahead), account_id, ip_addresses (1 to 16 IPv4 or IPv6 addresses), data_subject \
             (EMPLOYEE, CANDIDATE or BULK), access_data (NAME, EMAIL_ADDRESS, PHONE_NUMBER), \
             access_menu, access_menu_path and activity_category, and optionally its own `id` \
             (`pal_…`; otherwise the server assigns one). Every problem of every entry is \
             reported at once; the batch is written whole or not at all. `idempotency_key` is \
             required: a fresh one per batch, the same one when retrying it; within 24 hours \
             the same key and entries return the first result again without writing, other \
             entries with the key are IDEMPOTENCY_KEY_REUSED, and while the first call runs \
             CONFLICT. Needs the audit_logs:write scope and a token acting for an owner or an \
             admin. Failures return the error envelope.",
        ),
        OperationKind::GetUser => (
            "Get a user's profile",
            "Gets the profile of one user of the caller's organization by `user_id` (`usr_…` or \
             a UUID): name, email, role (OWNER, ADMIN, MEMBER), title, manager (a user ID), \
             linkedin_url, creation and update times, a link to the web app, and `etag`, to \
             pass as `if_match` to update_user. A user of another organization is NOT_FOUND, \
             like one that does not exist. Reading a profile is recorded in the privacy audit \
             ledger. Needs the users:read scope. Failures return the error envelope.",
        ),
        OperationKind::UpdateUser => (
            "Update a user's profile",
            "Changes fields of one user's profile (`user_id`), as a JSON Merge Patch: give only \
             the fields to change among name, title, manager (a `usr_…` ID of the same \
             organization) and linkedin_url (an https URL); null removes title, manager or \
             linkedin_url. Fields the organization keeps in a directory or SCIM sync (see \
             get_organization's profile_field_sources) are refused with \
             CANNOT_UPDATE_SYNC_MANAGED_FIELDS, listing each, even when the value is unchanged: \
             leave them out. Pass the `etag` of the profile you read as `if_match` to change \
             only that version (otherwise CONFLICT: read it again). A manager that is the user \
             or reports to them is CONFLICT. Owners and admins change anyone; members only \
             themselves (PERMISSION_DENIED). Returns the profile as changed; every change is \
             recorded in the privacy audit ledger. Needs the users:write scope. Failures \
             return the error envelope.",
        ),
        OperationKind::GetOrganization => (
            "Get the organization",
            "Gets the caller's organization, the one the token belongs to: name, domain, a link \
             to the web app, and its scheduling defaults (work hours per weekday, interviewer \
             load limits, buffers around interviews, feedback writing time, calendar conflict \
             keywords), and where each user profile field is kept (profile_field_sources: API, \
             DIRECTORY or SCIM). Takes no arguments. Needs the organization:read scope. Failures \
             return the error envelope.",
        ),
        OperationKind::GetLatestPrivacyAuditLogCheckpoint => (
            "Get the latest checkpoint of the privacy audit ledger",
            "Gets the latest signed checkpoint of the organization's privacy audit ledger: that \
             its hash chain had the entry hashed `head_hash` at `position` when the server \
             signed it (Ed25519, `signature` base64url, by the key `key_id` published at \
             /.well-known/recruitd-checkpoint-keys), signed now if entries were recorded since \
             the last one. Keep it outside the recruiting system: with it, an auditor proves \
             that no entry up to `position` was changed, removed or reordered afterwards. The \
             call is recorded in the audit ledgers. Takes no arguments. Needs the \
             audit_logs:read scope and a token acting for an owner. NOT_IMPLEMENTED when the \
             server has no signing key. Failures return the error envelope.",
        ),
        OperationKind::ExportPrivacyAuditLogs => return None,
    })
}

/// The operation a call of `kind`'s tool with `arguments` asks for: JSON types are checked
/// here, values by the service. `None` for an operation without a tool.
fn operation(kind: OperationKind, arguments: &JsonObject) -> Option<Operation> {
    Some(match kind {
        OperationKind::ListPrivacyAuditLogs => {
            Operation::ListPrivacyAuditLogs(list_params(arguments))
        }
        OperationKind::GetJob => Operation::GetJob(job_params(arguments)),
        OperationKind::RecordPrivacyAccesses => {
            Operation::RecordPrivacyAccesses(record_params(arguments))
        }
        OperationKind::GetOrganization => Operation::GetOrganization {
            problems: arguments.keys().map(|k| problems::unknown_parameter(k)).collect(),
        },
        OperationKind::GetUser => {
            let (user_id, problems) = id_argument("user_id", arguments, |_| false);
            Operation::GetUser(GetUserParams { user_id, name: "user_id", problems })
        }
        OperationKind::UpdateUser => Operation::UpdateUser(update_params(arguments)),
        OperationKind::GetLatestPrivacyAuditLogCheckpoint => {
            Operation::GetLatestPrivacyAuditLogCheckpoint {
                problems: arguments.keys().map(|k| problems::unknown_parameter(k)).collect(),
            }
        }
        OperationKind::ExportPrivacyAuditLogs => return None,
    })
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
                .read_only(kind.effect() == Effect::Read)
                .destructive(kind.effect() == Effect::Change)
                .idempotent(true)
                .open_world(false),
        );
    Some(tool)
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
}

/// Where a call's caller comes from.
#[derive(Clone)]
enum Credential {
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
    credential: Credential,
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
        let tools = Self { service, config: Arc::new(config), credential: Credential::Http };
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
            Self { service, config: Arc::new(config), credential: Credential::Token(token.into()) };
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
        let (caller, request_id, client_ip) = match http {
            Some(h) => (Some(h.caller), h.request_id, h.client_ip),
            None => (None, uuid::Uuid::now_v7().simple().to_string(), None),
        };
        let credential = match (&self.credential, caller) {
            (_, Some(caller)) => recruit_service::Credential::Authenticated(Box::new(caller)),
            (Credential::Token(secret), None) => {
                recruit_service::Credential::Secret(Some(secret.to_string()))
            }
            (Credential::Http, None) => return Err(ServiceError::unauthenticated()),
        };
        let (Some(operation), Some(name)) = (operation(kind, &arguments), kind.tool_name()) else {
            return Err(ServiceError::not_found("tool"));
        };
        let context = RequestContext {
            request_id: request_id.clone(),
            client_ip,
            via: Via::Tool { name: name.to_owned(), arguments: Value::Object(arguments) },
        };
        let started = std::time::Instant::now();
        let result = self
            .service
            .run(self.config.deadline, credential, context, operation)
            .await
            .and_then(|done| {
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

fn json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}

/// A text argument; another JSON type is a problem.
fn text(
    name: &str,
    value: &Value,
    problems: &mut Vec<recruit_domain::ErrorDetail>,
) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        _ => {
            problems.push(problems::wrong_type(name, "a string"));
            None
        }
    }
}

/// The list's arguments, as the service takes them: JSON types checked here, values there.
/// A null argument counts as absent (`cursor: null` from the last page means "from the start").
fn list_params(arguments: &Map<String, Value>) -> ListParams {
    let mut params = ListParams::default();
    for (name, value) in arguments {
        let known = ["timestamp_gte", "timestamp_lt", "limit", "ids", "cursor"];
        if !known.contains(&name.as_str()) {
            params.problems.push(problems::unknown_parameter(name));
            continue;
        }
        if value.is_null() {
            continue;
        }
        match name.as_str() {
            "timestamp_gte" => params.timestamp_gte = text(name, value, &mut params.problems),
            "timestamp_lt" => params.timestamp_lt = text(name, value, &mut params.problems),
            "cursor" => params.cursor = text(name, value, &mut params.problems),
            "limit" => match value {
                Value::Number(n) => params.limit = Some(n.to_string()),
                _ => params.problems.push(problems::wrong_type(name, "an integer")),
            },
            _ => match value.as_array().map(|items| {
                items.iter().map(|v| v.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>()
            }) {
                Some(Some(ids)) => params.ids = Some(ids),
                _ => params.problems.push(problems::wrong_type(name, "an array of strings")),
            },
        }
    }
    params
}

/// `record_privacy_accesses`' arguments: the key, and the body `{"entries": …}` as REST takes
/// it, so that the same batch is the same request through either interface.
fn record_params(arguments: &Map<String, Value>) -> RecordParams {
    let mut params = RecordParams {
        idempotency_key: None,
        key_name: "idempotency_key",
        body: None,
        problems: vec![],
    };
    let mut body = Map::new();
    for (name, value) in arguments {
        match name.as_str() {
            "idempotency_key" => params.idempotency_key = text(name, value, &mut params.problems),
            "entries" => {
                body.insert(name.clone(), value.clone());
            }
            _ => params.problems.push(problems::unknown_parameter(name)),
        }
    }
    // Serializing a JSON value does not fail.
    params.body = serde_json::to_vec(&Value::Object(body)).ok();
    params
}

/// The identifier argument `id` of a tool's arguments, and the problems of all of them: a
/// missing identifier, and arguments that are neither it nor `other` ones.
fn id_argument(
    id: &str,
    arguments: &Map<String, Value>,
    other: impl Fn(&str) -> bool,
) -> (String, Vec<recruit_domain::ErrorDetail>) {
    let mut problems = vec![];
    let mut value = None;
    for (name, given) in arguments {
        if name == id {
            value = Some(text(name, given, &mut problems).unwrap_or_default());
        } else if !other(name) {
            problems.push(problems::unknown_parameter(name));
        }
    }
    if value.is_none() {
        problems.push(problems::missing(id));
    }
    (value.unwrap_or_default(), problems)
}

/// `get_job`'s arguments.
fn job_params(arguments: &Map<String, Value>) -> GetJobParams {
    let (job_id, problems) = id_argument("job_id", arguments, |_| false);
    GetJobParams { job_id, name: "job_id", problems }
}

/// `update_user`'s arguments: the user, the precondition, and every other argument a field
/// of the merge patch, as the REST body takes it (so that the service reports unknown fields
/// alike through either interface).
fn update_params(arguments: &Map<String, Value>) -> UpdateUserParams {
    let (user_id, mut problems) = id_argument("user_id", arguments, |_| true);
    let mut if_match = None;
    let mut patch = Map::new();
    for (name, value) in arguments {
        match name.as_str() {
            "user_id" => {}
            // A null precondition is none, as a null cursor is.
            "if_match" if value.is_null() => {}
            "if_match" => if_match = text(name, value, &mut problems),
            _ => {
                patch.insert(name.clone(), value.clone());
            }
        }
    }
    UpdateUserParams {
        user_id,
        name: "user_id",
        if_match,
        if_match_name: "if_match",
        patch: Some(Value::Object(patch)),
        problems,
    }
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
            Err(e) => {
                CallToolResult::structured_error(json(&e.envelope(&self.config.public_base_url)))
            }
        };
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_but_the_export_is_a_tool_with_a_title_a_description_and_both_schemas() {
        assert_eq!(TOOLS.len(), OperationKind::ALL.len() - 1);
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

    #[test]
    fn arguments_become_the_operation_of_their_tool_and_unknown_ones_are_problems() {
        let arguments = |v: Value| v.as_object().cloned().unwrap_or_default();
        let job = operation(OperationKind::GetJob, &arguments(serde_json::json!({"job_id": "x"})));
        assert!(
            matches!(&job, Some(Operation::GetJob(p)) if p.job_id == "x" && p.problems.is_empty())
        );
        let organization =
            operation(OperationKind::GetOrganization, &arguments(serde_json::json!({"x": 1})));
        assert!(matches!(
            &organization,
            Some(Operation::GetOrganization { problems }) if problems.len() == 1 && problems[0].get("field") == Some("x")
        ));
        let list = operation(
            OperationKind::ListPrivacyAuditLogs,
            &arguments(serde_json::json!({"limit": "5", "ids": ["a"], "cursor": null})),
        );
        match list {
            Some(Operation::ListPrivacyAuditLogs(p)) => {
                assert_eq!(p.ids, Some(vec!["a".to_owned()]));
                assert_eq!(p.cursor, None, "a null cursor is no cursor");
                assert_eq!(p.problems.len(), 1, "a limit given as a string is one problem");
                assert_eq!(p.problems[0].get("field"), Some("limit"));
            }
            other => panic!("{other:?}"),
        }
    }
}
