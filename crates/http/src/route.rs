//! Parse first, then dispatch: method, path and query become the service's typed
//! [`Operation`], with every problem of the query (an unknown or repeated parameter) collected
//! for the service to report after authorization.

use std::borrow::Cow;

use hyper::Method;
use recruit_domain::ErrorDetail;
use recruit_service::{
    ExportParams, GetJobParams, GetUserParams, ListParams, Operation, RecordParams,
    UpdateUserParams, problems,
};

/// The path template of an operation, as logs and metrics name it.
pub(crate) fn template(operation: &Operation) -> &'static str {
    match operation {
        Operation::ListPrivacyAuditLogs(_) => "/v1/audit-logs/privacy",
        Operation::ExportPrivacyAuditLogs(_) => "/v1/audit-logs/privacy/export",
        Operation::GetJob(_) => "/v1/jobs/{jobId}",
        Operation::GetOrganization { .. } => "/v1/organization",
        Operation::RecordPrivacyAccesses(_) => "/v1/audit-logs/privacy",
        Operation::GetUser(_) | Operation::UpdateUser(_) => "/v1/users/{userId}",
        Operation::GetLatestPrivacyAuditLogCheckpoint { .. } => {
            "/v1/audit-logs/privacy/checkpoints/latest"
        }
    }
}

/// Pages and probes served without authentication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Public {
    /// `GET /docs/errors`: the reference of the error codes.
    ErrorDocs,
    /// `GET /healthz`: the process is up.
    Health,
    /// `GET /readyz`: the database answers and its schema is current.
    Ready,
    /// `GET /metrics`: Prometheus metrics.
    Metrics,
    /// `GET /openapi.json`: the API's OpenAPI document.
    OpenApi,
    /// `GET /.well-known/oauth-protected-resource[/mcp]`: the tool interface's protected
    /// resource metadata (RFC 9728).
    ProtectedResource,
    /// `GET /.well-known/recruitd-checkpoint-keys`: the public key checkpoints are signed
    /// with, as a JSON Web Key Set.
    CheckpointKeys,
}

/// What a method and path lead to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Routing {
    /// An operation of the API.
    Api(Operation),
    /// A page or probe without authentication.
    Public(Public, &'static str),
    /// `POST /mcp`: the tool interface.
    Mcp,
    /// A known path (its template) with a method it does not serve, and the one it does.
    MethodNotAllowed(&'static str, &'static str),
    /// No such path.
    NotFound,
}

/// Builds a route from the query and the path's third segment.
type Build = fn(Query, Option<&str>) -> Operation;

/// Routes a request.
pub(crate) fn route(method: &Method, path: &str, query: Option<&str>) -> Routing {
    let public = match path {
        "/docs/errors" => Some((Public::ErrorDocs, "/docs/errors")),
        "/healthz" => Some((Public::Health, "/healthz")),
        "/readyz" => Some((Public::Ready, "/readyz")),
        "/metrics" => Some((Public::Metrics, "/metrics")),
        "/openapi.json" => Some((Public::OpenApi, "/openapi.json")),
        "/.well-known/oauth-protected-resource" | "/.well-known/oauth-protected-resource/mcp" => {
            Some((Public::ProtectedResource, "/.well-known/oauth-protected-resource"))
        }
        "/.well-known/recruitd-checkpoint-keys" => {
            Some((Public::CheckpointKeys, "/.well-known/recruitd-checkpoint-keys"))
        }
        _ => None,
    };
    if let Some((page, template)) = public {
        return if method == Method::GET {
            Routing::Public(page, template)
        } else {
            Routing::MethodNotAllowed(template, "GET")
        };
    }
    if path == "/mcp" {
        return if method == Method::POST {
            Routing::Mcp
        } else {
            Routing::MethodNotAllowed("/mcp", "POST")
        };
    }
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    // Each path's operations by method, and the `Allow` value of the path.
    let (template, operations, allow): (&'static str, &[(Method, Build)], &str) = match segments
        .as_slice()
    {
        ["v1", "audit-logs", "privacy"] => {
            ("/v1/audit-logs/privacy", &[(Method::GET, list), (Method::POST, record)], "GET, POST")
        }
        ["v1", "audit-logs", "privacy", "export"] => {
            ("/v1/audit-logs/privacy/export", &[(Method::GET, export)], "GET")
        }
        ["v1", "audit-logs", "privacy", "checkpoints", "latest"] => (
            "/v1/audit-logs/privacy/checkpoints/latest",
            &[(Method::GET, latest_checkpoint)],
            "GET",
        ),
        ["v1", "jobs", id] if !id.is_empty() => ("/v1/jobs/{jobId}", &[(Method::GET, job)], "GET"),
        ["v1", "organization"] => ("/v1/organization", &[(Method::GET, organization)], "GET"),
        ["v1", "users", id] if !id.is_empty() => (
            "/v1/users/{userId}",
            &[(Method::GET, get_user), (Method::PATCH, update_user)],
            "GET, PATCH",
        ),
        _ => return Routing::NotFound,
    };
    match operations.iter().find(|(m, _)| m == method) {
        Some((_, build)) => Routing::Api(build(Query::parse(query), segments.get(2).copied())),
        None => Routing::MethodNotAllowed(template, allow),
    }
}

/// The parameters of a query string, decoded, with their order kept.
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(query: Option<&str>) -> Self {
        let pairs = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        Self(pairs)
    }

    /// Takes the known parameters out; reports unknown and repeated ones as problems.
    fn take<const N: usize>(self, known: [&str; N]) -> ([Option<String>; N], Vec<ErrorDetail>) {
        let mut values: [Option<String>; N] = std::array::from_fn(|_| None);
        let mut problems = vec![];
        let mut reported: Vec<String> = vec![];
        for (name, value) in self.0 {
            match known.iter().position(|k| *k == name) {
                Some(i) if values[i].is_none() => values[i] = Some(value),
                Some(_) => {
                    if !reported.contains(&name) {
                        problems.push(problems::repeated_parameter(&name));
                        reported.push(name);
                    }
                }
                None => {
                    if !reported.contains(&name) {
                        problems.push(problems::unknown_parameter(&name));
                        reported.push(name);
                    }
                }
            }
        }
        (values, problems)
    }
}

/// `POST /v1/audit-logs/privacy`: the key and the body come from the request's header and
/// body, which the HTTP layer reads after authentication; the query takes no parameter.
fn record(query: Query, _: Option<&str>) -> Operation {
    let ([], problems) = query.take([]);
    Operation::RecordPrivacyAccesses(RecordParams {
        idempotency_key: None,
        key_name: IDEMPOTENCY_KEY,
        body: None,
        problems,
    })
}

/// The header that carries a write's idempotency key.
pub(crate) const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

/// The values of `ids`: form style, not exploded, so one parameter with values separated by
/// commas. An empty parameter holds no value.
fn ids(ids: Option<String>) -> Option<Vec<String>> {
    ids.map(|v| if v.is_empty() { vec![] } else { v.split(',').map(str::to_owned).collect() })
}

fn list(query: Query, _: Option<&str>) -> Operation {
    let ([cursor, limit, ids_, timestamp_gte, timestamp_lt], problems) =
        query.take(["cursor", "limit", "ids", "timestamp_gte", "timestamp_lt"]);
    let ids = ids(ids_);
    Operation::ListPrivacyAuditLogs(ListParams {
        timestamp_gte,
        timestamp_lt,
        limit,
        ids,
        cursor,
        problems,
    })
}

fn export(query: Query, _: Option<&str>) -> Operation {
    let ([ids_, timestamp_gte, timestamp_lt], problems) =
        query.take(["ids", "timestamp_gte", "timestamp_lt"]);
    Operation::ExportPrivacyAuditLogs(ExportParams {
        timestamp_gte,
        timestamp_lt,
        ids: ids(ids_),
        problems,
    })
}

/// A path segment, percent-decoded (kept as sent when it does not decode to UTF-8).
fn segment(raw: Option<&str>) -> String {
    let raw = raw.unwrap_or_default();
    match percent_encoding::percent_decode_str(raw).decode_utf8() {
        Ok(Cow::Borrowed(s)) => s.to_owned(),
        Ok(Cow::Owned(s)) => s,
        Err(_) => raw.to_owned(),
    }
}

fn job(query: Query, id: Option<&str>) -> Operation {
    let ([], problems) = query.take([]);
    Operation::GetJob(GetJobParams { job_id: segment(id), name: "jobId", problems })
}

fn get_user(query: Query, id: Option<&str>) -> Operation {
    let ([], problems) = query.take([]);
    Operation::GetUser(GetUserParams { user_id: segment(id), name: "userId", problems })
}

/// `PATCH /v1/users/{userId}`: the precondition and the patch come from the request's header
/// and body, which the HTTP layer reads after authentication.
fn update_user(query: Query, id: Option<&str>) -> Operation {
    let ([], problems) = query.take([]);
    Operation::UpdateUser(UpdateUserParams {
        user_id: segment(id),
        name: "userId",
        if_match: None,
        if_match_name: "If-Match",
        patch: None,
        problems,
    })
}

fn organization(query: Query, _: Option<&str>) -> Operation {
    let ([], problems) = query.take([]);
    Operation::GetOrganization { problems }
}

fn latest_checkpoint(query: Query, _: Option<&str>) -> Operation {
    let ([], problems) = query.take([]);
    Operation::GetLatestPrivacyAuditLogCheckpoint { problems }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str, query: Option<&str>) -> Routing {
        route(&Method::GET, path, query)
    }

    #[test]
    fn paths_route_to_operations_or_to_nothing() {
        assert!(
            matches!(get("/v1/organization", None), Routing::Api(Operation::GetOrganization { problems: p }) if p.is_empty())
        );
        assert!(
            matches!(get("/v1/jobs/job_1", None), Routing::Api(Operation::GetJob(p)) if p.job_id == "job_1")
        );
        assert!(
            matches!(get("/v1/jobs/job%5F1", None), Routing::Api(Operation::GetJob(p)) if p.job_id == "job_1")
        );
        for path in [
            "/",
            "/v1",
            "/v1/jobs",
            "/v1/jobs/",
            "/v1/jobs/a/b",
            "/v1/organization/",
            "/v2/organization",
            "/V1/organization",
        ] {
            assert_eq!(get(path, None), Routing::NotFound, "{path}");
        }
        assert_eq!(
            route(&Method::POST, "/v1/organization", None),
            Routing::MethodNotAllowed("/v1/organization", "GET")
        );
        assert_eq!(
            route(&Method::DELETE, "/v1/jobs/x", None),
            Routing::MethodNotAllowed("/v1/jobs/{jobId}", "GET")
        );
        assert!(
            matches!(get("/v1/users/usr%5F1", None), Routing::Api(Operation::GetUser(p)) if p.user_id == "usr_1")
        );
        assert!(matches!(
            route(&Method::PATCH, "/v1/users/usr_1", Some("x=1")),
            Routing::Api(Operation::UpdateUser(p)) if p.user_id == "usr_1" && p.problems.len() == 1
        ));
        assert_eq!(
            route(&Method::PUT, "/v1/users/usr_1", None),
            Routing::MethodNotAllowed("/v1/users/{userId}", "GET, PATCH")
        );
        assert_eq!(get("/v1/users/", None), Routing::NotFound);
        assert_eq!(route(&Method::POST, "/mcp", None), Routing::Mcp);
        assert_eq!(route(&Method::GET, "/mcp", None), Routing::MethodNotAllowed("/mcp", "POST"));
        for path in
            ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]
        {
            assert_eq!(
                get(path, None),
                Routing::Public(Public::ProtectedResource, "/.well-known/oauth-protected-resource")
            );
        }
    }

    #[test]
    fn list_parameters_are_decoded_and_ids_split_on_commas() {
        let Routing::Api(Operation::ListPrivacyAuditLogs(p)) = get(
            "/v1/audit-logs/privacy",
            Some(
                "timestamp_gte=2026-01-01T00%3A00%3A00%2B01%3A00&timestamp_lt=x&ids=a,b%2Cc&limit=5&cursor=abc",
            ),
        ) else {
            panic!("not the list");
        };
        assert_eq!(p.timestamp_gte.as_deref(), Some("2026-01-01T00:00:00+01:00"));
        assert_eq!(p.ids, Some(vec!["a".into(), "b".into(), "c".into()]));
        assert_eq!((p.limit.as_deref(), p.cursor.as_deref()), (Some("5"), Some("abc")));
        assert!(p.problems.is_empty());
        let Routing::Api(Operation::ListPrivacyAuditLogs(p)) =
            get("/v1/audit-logs/privacy", Some("ids=&ids=x"))
        else {
            panic!("not the list");
        };
        assert_eq!(p.ids, Some(vec![]));
    }

    #[test]
    fn unknown_and_repeated_parameters_are_problems_reported_once() {
        let Routing::Api(Operation::ListPrivacyAuditLogs(p)) =
            get("/v1/audit-logs/privacy", Some("limit=1&limit=2&limit=3&sort=asc&sort=desc&ids=a"))
        else {
            panic!("not the list");
        };
        let problems: Vec<(Option<&str>, Option<&str>)> =
            p.problems.iter().map(|d| (d.get("field"), d.get("reason"))).collect();
        assert_eq!(
            problems,
            [
                (Some("limit"), Some("is given more than once")),
                (Some("sort"), Some("is not a parameter of this operation")),
            ]
        );
        let Routing::Api(Operation::GetOrganization { problems }) =
            get("/v1/organization", Some("expand=settings"))
        else {
            panic!("not the organization");
        };
        assert_eq!(problems[0].get("field"), Some("expand"));
    }
}
