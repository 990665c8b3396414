//! Refusals of the streamable HTTP transport as the MCP specification has them: an HTTP error
//! status whose body is a JSON-RPC error response, with the request's id when it can be read
//! and `null` otherwise.
//!
//! `rmcp` answers some refusals in plain text (a missing `Accept`, a wrong `Content-Type`, a
//! body that is not JSON). [`check_request`] makes those checks first, in JSON-RPC; whatever
//! `rmcp` still refuses in plain text, [`as_json_rpc`] rewrites.

use serde_json::{Value, json};

/// JSON-RPC 2.0: the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0: the body is JSON but not a valid request, or the transport refuses it.
pub const INVALID_REQUEST: i64 = -32600;

const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";

/// A refused request: the HTTP status and the JSON-RPC error body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status.
    pub status: u16,
    /// The JSON-RPC error response, serialized.
    pub body: Vec<u8>,
}

impl Refusal {
    fn new(status: u16, code: i64, message: &str, id: Value) -> Self {
        let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        Self { status, body: body.to_string().into_bytes() }
    }
}

/// The media type of a header value, without parameters, in lower case.
fn essence(value: &str) -> String {
    value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// The request's id, when the body is a JSON object that has a usable one.
fn id_of(message: &Value) -> Value {
    match message.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

/// Checks what the transport requires of a `POST`: a `Content-Type` of JSON, an `Accept` that
/// names both JSON and event streams (every value of every `Accept` header counts), and a body
/// that is a JSON object or array.
pub fn check_request<'a>(
    content_type: Option<&str>,
    accept: impl IntoIterator<Item = &'a str>,
    body: &[u8],
) -> Result<(), Refusal> {
    // The id is read only for a refusal; an accepted body is checked without being built.
    let id = || request_id(body);
    let accepted: Vec<String> =
        accept.into_iter().flat_map(|v| v.split(',')).map(essence).collect();
    if !(accepted.iter().any(|a| a == JSON) && accepted.iter().any(|a| a == EVENT_STREAM)) {
        return Err(Refusal::new(
            406,
            INVALID_REQUEST,
            "Not Acceptable: the Accept header must name both application/json and \
             text/event-stream.",
            id(),
        ));
    }
    if content_type.map(essence).as_deref() != Some(JSON) {
        return Err(Refusal::new(
            415,
            INVALID_REQUEST,
            "Unsupported Media Type: the Content-Type must be application/json.",
            id(),
        ));
    }
    if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err() {
        return Err(Refusal::new(400, PARSE_ERROR, "Parse error: the body is not JSON.", id()));
    }
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{' | b'[') => Ok(()),
        _ => Err(Refusal::new(
            400,
            INVALID_REQUEST,
            "Invalid Request: the body must be a JSON-RPC message.",
            id(),
        )),
    }
}

/// The id of the request in `body`, when it is a JSON object with a usable one.
fn request_id(body: &[u8]) -> Value {
    serde_json::from_slice(body).map(|m: Value| id_of(&m)).unwrap_or(Value::Null)
}

/// A refusal `rmcp` wrote in plain text (`status` 4xx or 5xx, a body other than JSON), as a
/// JSON-RPC error; `None` for every other response. `request` is the body it refused. A body
/// that is JSON but no JSON-RPC message `rmcp` calls an unsupported media type; it is an invalid
/// request (400).
pub fn as_json_rpc(
    status: u16,
    content_type: Option<&str>,
    body: &[u8],
    request: &[u8],
) -> Option<Refusal> {
    if status < 400 || content_type.map(essence).as_deref() == Some(JSON) {
        return None;
    }
    let id = request_id(request);
    let text = String::from_utf8_lossy(body);
    let (status, message) = match status {
        415 => (400, "Invalid Request: the body is not a valid JSON-RPC message.".to_owned()),
        _ => (status, text.trim().chars().take(200).collect()),
    };
    Some(Refusal::new(status, INVALID_REQUEST, &message, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(refusal: &Refusal) -> (u16, i64, Value) {
        let body: Value = serde_json::from_slice(&refusal.body).unwrap();
        assert_eq!(body["jsonrpc"], "2.0");
        assert!(body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
        (refusal.status, body["error"]["code"].as_i64().unwrap(), body["id"].clone())
    }

    #[test]
    fn each_refusal_is_its_status_and_json_rpc_code() {
        let both = ["application/json, text/event-stream"];
        let request = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#;
        assert_eq!(check_request(Some("application/json"), both, request), Ok(()));
        assert_eq!(
            check_request(
                Some("Application/JSON; charset=utf-8"),
                ["text/event-stream;q=0.5", "application/json"],
                request
            ),
            Ok(())
        );
        type Case<'a> = (Option<&'a str>, &'a [&'a str], &'a [u8], (u16, i64, Value));
        let cases: [Case<'_>; 6] = [
            (
                Some("application/json"),
                &["application/json"],
                request,
                (406, INVALID_REQUEST, json!(7)),
            ),
            (Some("application/json"), &[], request, (406, INVALID_REQUEST, json!(7))),
            (Some("text/plain"), &both, request, (415, INVALID_REQUEST, json!(7))),
            (None, &both, request, (415, INVALID_REQUEST, json!(7))),
            (
                Some("application/json"),
                &both,
                b"{\"jsonrpc\": \"2.0\", \"id\"",
                (400, PARSE_ERROR, Value::Null),
            ),
            (Some("application/json"), &both, b"42", (400, INVALID_REQUEST, Value::Null)),
        ];
        for (content_type, accept, body, expected) in cases {
            let refusal = check_request(content_type, accept.iter().copied(), body).unwrap_err();
            assert_eq!(code(&refusal), expected, "{content_type:?} {accept:?}");
        }
    }

    #[test]
    fn plain_text_refusals_become_json_rpc_errors_and_nothing_else_changes() {
        let request = br#"{"jsonrpc":"2.0","id":"a","method":"x"}"#;
        let refusal = as_json_rpc(415, Some("text/plain"), b"fail to deserialize", request);
        assert_eq!(code(&refusal.unwrap()), (400, INVALID_REQUEST, json!("a")));
        let refusal = as_json_rpc(400, None, b"Bad Request: Unsupported MCP-Protocol-Version", b"");
        assert_eq!(code(&refusal.unwrap()), (400, INVALID_REQUEST, Value::Null));
        assert_eq!(as_json_rpc(400, Some("application/json"), b"{}", request), None);
        assert_eq!(as_json_rpc(200, Some("text/plain"), b"ok", request), None);
        assert_eq!(as_json_rpc(202, None, b"", request), None);
    }
}
