//! Routing, built from the operations' declarations: every [`OperationKind`]'s method and path
//! template make the table of paths, each with the `Allow` value of its methods; the public
//! pages and the tool interface are the only paths written here.

use std::borrow::Cow;
use std::sync::LazyLock;

use hyper::Method;
use recruit_service::{Method as OperationMethod, OperationKind};

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
    /// An operation of the API, with its path parameters: each placeholder and the segment
    /// it matched, percent-decoded.
    Api(OperationKind, Vec<(&'static str, String)>),
    /// A page or probe without authentication.
    Public(Public, &'static str),
    /// `POST /mcp`: the tool interface.
    Mcp,
    /// A page of the review console: `/console` and below.
    Console,
    /// SCIM 2.0 provisioning: `/scim/v2` and below, the path below it percent-decoded.
    Scim(String),
    /// A known path (its template) with a method it does not serve, and those it does.
    MethodNotAllowed(&'static str, &'static str),
    /// No such path.
    NotFound,
}

/// A segment of a path template.
#[derive(Debug)]
enum Segment {
    /// Text that must be there as written.
    Literal(&'static str),
    /// `{name}`: any non-empty segment.
    Placeholder(&'static str),
}

/// One path of the API: its template, its operations by method, and its `Allow` value.
#[derive(Debug)]
struct Path {
    template: &'static str,
    segments: Vec<Segment>,
    operations: Vec<(Method, OperationKind)>,
    allow: String,
}

/// Every path of the API, from the operations' declarations.
static PATHS: LazyLock<Vec<Path>> = LazyLock::new(|| {
    let mut paths: Vec<Path> = vec![];
    for kind in OperationKind::ALL {
        let spec = kind.spec();
        let method = http_method(spec.method);
        match paths.iter_mut().find(|p| p.template == spec.path) {
            Some(path) => path.operations.push((method, kind)),
            None => paths.push(Path {
                template: spec.path,
                segments: segments(spec.path),
                operations: vec![(method, kind)],
                allow: String::new(),
            }),
        }
    }
    for path in &mut paths {
        let served: Vec<&str> = OperationMethod::ALL
            .into_iter()
            .filter(|m| path.operations.iter().any(|(served, _)| *served == http_method(*m)))
            .map(OperationMethod::as_str)
            .collect();
        path.allow = served.join(", ");
    }
    paths
});

/// The template's segments after its leading `/`.
fn segments(template: &'static str) -> Vec<Segment> {
    let template = template.strip_prefix('/').unwrap_or(template);
    template
        .split('/')
        .map(|s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) => Segment::Placeholder(name),
            None => Segment::Literal(s),
        })
        .collect()
}

/// The HTTP method of an operation's declared one.
fn http_method(method: OperationMethod) -> Method {
    match method {
        OperationMethod::Get => Method::GET,
        OperationMethod::Post => Method::POST,
        OperationMethod::Put => Method::PUT,
        OperationMethod::Patch => Method::PATCH,
        OperationMethod::Delete => Method::DELETE,
    }
}

/// The pages and probes without authentication: their paths and templates.
const PUBLIC: [(&str, Public, &str); 8] = [
    ("/docs/errors", Public::ErrorDocs, "/docs/errors"),
    ("/healthz", Public::Health, "/healthz"),
    ("/readyz", Public::Ready, "/readyz"),
    ("/metrics", Public::Metrics, "/metrics"),
    ("/openapi.json", Public::OpenApi, "/openapi.json"),
    (
        "/.well-known/oauth-protected-resource",
        Public::ProtectedResource,
        "/.well-known/oauth-protected-resource",
    ),
    (
        "/.well-known/oauth-protected-resource/mcp",
        Public::ProtectedResource,
        "/.well-known/oauth-protected-resource",
    ),
    (
        "/.well-known/recruitd-checkpoint-keys",
        Public::CheckpointKeys,
        "/.well-known/recruitd-checkpoint-keys",
    ),
];

/// Where SCIM 2.0 provisioning is served.
pub(crate) const SCIM_BASE: &str = "/scim/v2";

/// Routes a request.
pub(crate) fn route(method: &Method, path: &str) -> Routing {
    if let Some((_, page, template)) = PUBLIC.iter().find(|(p, ..)| *p == path) {
        return if method == Method::GET {
            Routing::Public(*page, template)
        } else {
            Routing::MethodNotAllowed(template, "GET")
        };
    }
    if path == "/console" || path.starts_with("/console/") {
        return Routing::Console;
    }
    if let Some(below) = path.strip_prefix(SCIM_BASE).filter(|b| b.is_empty() || b.starts_with('/'))
    {
        return Routing::Scim(decoded(below));
    }
    if path == "/mcp" {
        return if method == Method::POST {
            Routing::Mcp
        } else {
            Routing::MethodNotAllowed("/mcp", "POST")
        };
    }
    let given: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let Some(known) = PATHS.iter().find(|known| matches(&known.segments, &given)) else {
        return Routing::NotFound;
    };
    match known.operations.iter().find(|(m, _)| m == method) {
        Some((_, kind)) => Routing::Api(*kind, values(&known.segments, &given)),
        None => Routing::MethodNotAllowed(known.template, &known.allow),
    }
}

/// Whether `given` matches the template's `segments`: its literals, and a value for each
/// placeholder.
fn matches(segments: &[Segment], given: &[&str]) -> bool {
    segments.len() == given.len()
        && segments.iter().zip(given).all(|(segment, given)| match segment {
            Segment::Literal(text) => text == given,
            Segment::Placeholder(_) => !given.is_empty(),
        })
}

/// The placeholders' values in `given`, which [`matches`] the template's `segments`.
fn values(segments: &[Segment], given: &[&str]) -> Vec<(&'static str, String)> {
    let placeholders = segments.iter().zip(given).filter_map(|(segment, given)| match segment {
        Segment::Placeholder(name) => Some((*name, decoded(given))),
        Segment::Literal(_) => None,
    });
    placeholders.collect()
}

/// A path segment, percent-decoded (kept as sent when it does not decode to UTF-8).
fn decoded(raw: &str) -> String {
    // Identifiers are sent as they are: nothing to decode.
    if !raw.contains('%') {
        return raw.to_owned();
    }
    match percent_encoding::percent_decode_str(raw).decode_utf8() {
        Ok(Cow::Borrowed(s)) => s.to_owned(),
        Ok(Cow::Owned(s)) => s,
        Err(_) => raw.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str) -> Routing {
        route(&Method::GET, path)
    }

    #[test]
    fn paths_route_to_operations_or_to_nothing() {
        assert_eq!(get("/v1/organization"), Routing::Api(OperationKind::GetOrganization, vec![]));
        assert_eq!(
            get("/v1/jobs/job_1"),
            Routing::Api(OperationKind::GetJob, vec![("jobId", "job_1".into())])
        );
        assert_eq!(
            get("/v1/jobs/job%5F1"),
            Routing::Api(OperationKind::GetJob, vec![("jobId", "job_1".into())])
        );
        assert_eq!(get("/v1/me"), Routing::Api(OperationKind::GetMe, vec![]));
        for path in [
            "/",
            "/v1",
            "/v1/jobs",
            "/v1/jobs/",
            "/v1/jobs/a/b",
            "/v1/organization/",
            "/v2/organization",
            "/V1/organization",
            "/v1/me/",
        ] {
            assert_eq!(get(path), Routing::NotFound, "{path}");
        }
        assert_eq!(
            route(&Method::POST, "/v1/organization"),
            Routing::MethodNotAllowed("/v1/organization", "GET")
        );
        assert_eq!(
            route(&Method::DELETE, "/v1/jobs/x"),
            Routing::MethodNotAllowed("/v1/jobs/{jobId}", "GET")
        );
        assert_eq!(
            route(&Method::PATCH, "/v1/users/usr_1"),
            Routing::Api(OperationKind::UpdateUser, vec![("userId", "usr_1".into())])
        );
        assert_eq!(
            route(&Method::PUT, "/v1/users/usr_1"),
            Routing::MethodNotAllowed("/v1/users/{userId}", "GET, PATCH")
        );
        assert_eq!(
            route(&Method::DELETE, "/v1/audit-logs/privacy"),
            Routing::MethodNotAllowed("/v1/audit-logs/privacy", "GET, POST")
        );
        assert_eq!(
            route(&Method::GET, "/v1/audit-logs/privacy/reviews/2026-11/downloads/pal_1"),
            Routing::MethodNotAllowed(
                "/v1/audit-logs/privacy/reviews/{month}/downloads/{entryId}",
                "PUT"
            )
        );
        assert_eq!(get("/v1/users/"), Routing::NotFound);
        assert_eq!(route(&Method::POST, "/mcp"), Routing::Mcp);
        assert_eq!(
            route(&Method::GET, "/scim/v2/Schemas/urn%3Ax"),
            Routing::Scim("/Schemas/urn:x".into())
        );
        assert_eq!(route(&Method::PUT, "/scim/v2"), Routing::Scim(String::new()));
        assert_eq!(route(&Method::GET, "/scim/v2x"), Routing::NotFound);
        assert_eq!(route(&Method::GET, "/mcp"), Routing::MethodNotAllowed("/mcp", "POST"));
        for path in
            ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]
        {
            assert_eq!(
                get(path),
                Routing::Public(Public::ProtectedResource, "/.well-known/oauth-protected-resource")
            );
        }
    }

    #[test]
    fn every_operation_is_routed_by_its_declared_method_and_path() {
        for kind in OperationKind::ALL {
            let spec = kind.spec();
            let path = spec.path.replace(['{', '}'], "");
            match route(&http_method(spec.method), &path) {
                Routing::Api(routed, _) => assert_eq!(routed, kind, "{path}"),
                other => panic!("{kind:?}: {other:?}"),
            }
            // Every other method of the path is 405, with the path's methods in `Allow`.
            let Routing::MethodNotAllowed(template, allow) = route(&Method::TRACE, &path) else {
                panic!("{path} answers TRACE");
            };
            assert_eq!(template, spec.path);
            assert!(allow.split(", ").any(|m| m == spec.method.as_str()), "{allow}");
        }
    }
}
