//! What a write takes from HTTP: its idempotency key out of the `Idempotency-Key` header (a
//! Structured Field string, draft-ietf-httpapi-idempotency-key-header; an unquoted token is
//! accepted too), a profile change's `If-Match` fields, and the JSON body. Problems of syntax are handed to the service, which
//! reports them with its own after authorization.

use hyper::HeaderMap;
use hyper::header::{CONTENT_TYPE, IF_MATCH};
use recruit_domain::ErrorDetail;
use recruit_service::{RecordParams, UpdateUserParams, problems};

use crate::route::IDEMPOTENCY_KEY;

/// Fills `params` from the request's headers and body.
pub(crate) fn read_write(params: &mut RecordParams, headers: &HeaderMap, body: bytes::Bytes) {
    let mut values = headers.get_all(IDEMPOTENCY_KEY).iter();
    match (values.next(), values.next()) {
        (None, _) => {}
        (Some(_), Some(_)) => params
            .problems
            .push(ErrorDetail::field(IDEMPOTENCY_KEY, "is given more than once; send one key")),
        (Some(value), None) => match sf_string(value.as_bytes()) {
            Ok(key) => params.idempotency_key = Some(key),
            Err(reason) => params.problems.push(ErrorDetail::field(IDEMPOTENCY_KEY, reason)),
        },
    }
    let json = |essence: &str| {
        essence.eq_ignore_ascii_case("application/json")
            || essence.to_ascii_lowercase().ends_with("+json")
    };
    if json_type(headers, json, "application/json", &mut params.problems)
        && present(&body, &mut params.problems)
    {
        // Read by the service when the batch's turn comes, entry by entry.
        params.body = Some(Vec::from(body));
    }
}

/// Fills `params` of a profile change from the request's `If-Match` fields and its body, a
/// JSON Merge Patch (`application/merge-patch+json`, or `application/json`).
pub(crate) fn read_patch(params: &mut UpdateUserParams, headers: &HeaderMap, body: &[u8]) {
    let values: Result<Vec<&str>, _> =
        headers.get_all(IF_MATCH).iter().map(|v| v.to_str()).collect();
    match values {
        Ok(values) if values.is_empty() => {}
        // Several fields of a list are one list (RFC 9110 §5.3).
        Ok(values) => params.if_match = Some(values.join(", ")),
        Err(_) => params
            .problems
            .push(ErrorDetail::field(params.if_match_name, "must be ASCII entity tags")),
    }
    let merge_patch = |essence: &str| {
        essence.eq_ignore_ascii_case("application/merge-patch+json")
            || essence.eq_ignore_ascii_case("application/json")
    };
    let expected = "application/merge-patch+json (or application/json)";
    params.patch = json_body(headers, body, merge_patch, expected, &mut params.problems);
}

/// The JSON document of a body whose `Content-Type` (when given) is `accepted`; a problem
/// otherwise, saying that it must be `expected`.
fn json_body(
    headers: &HeaderMap,
    body: &[u8],
    accepted: impl Fn(&str) -> bool,
    expected: &str,
    problems: &mut Vec<ErrorDetail>,
) -> Option<serde_json::Value> {
    if !json_type(headers, accepted, expected, problems) || !present(body, problems) {
        return None;
    }
    serde_json::from_slice(body).map_err(|e| problems.push(problems::not_json(&e))).ok()
}

/// Whether the body's `Content-Type` (when given) is `accepted`; if not, a problem saying that
/// it must be `expected`.
fn json_type(
    headers: &HeaderMap,
    accepted: impl Fn(&str) -> bool,
    expected: &str,
    problems: &mut Vec<ErrorDetail>,
) -> bool {
    let ok = headers
        .get(CONTENT_TYPE)
        .is_none_or(|v| accepted(v.to_str().unwrap_or("").split(';').next().unwrap_or("").trim()));
    if !ok {
        problems.push(ErrorDetail::field("Content-Type", format!("must be {expected}")));
    }
    ok
}

/// Whether there is a body, not only white space; if not, a problem saying it is required.
fn present(body: &[u8], problems: &mut Vec<ErrorDetail>) -> bool {
    let present = !body.iter().all(u8::is_ascii_whitespace);
    if !present {
        problems.push(ErrorDetail::field("body", "is required: a JSON document"));
    }
    present
}

/// The key of a header value: a Structured Field string (`"…"`, with `\"` and `\\` escapes, RFC
/// 9651 §3.3.3) or, leniently, the bare text of a token.
fn sf_string(value: &[u8]) -> Result<String, &'static str> {
    let value = value.trim_ascii();
    let Some(inner) = value.strip_prefix(b"\"") else {
        return if value.iter().all(|b| (0x21..0x7f).contains(b) && *b != b'"' && *b != b'\\') {
            Ok(String::from_utf8_lossy(value).into_owned())
        } else {
            Err("is not a Structured Field string (\"…\") nor a token")
        };
    };
    let mut out = String::with_capacity(inner.len());
    let mut bytes = inner.iter();
    while let Some(&b) = bytes.next() {
        match b {
            b'\\' => match bytes.next() {
                Some(&e @ (b'"' | b'\\')) => out.push(char::from(e)),
                _ => return Err("has an escape other than \\\" or \\\\"),
            },
            b'"' => {
                return if bytes.next().is_none() {
                    Ok(out)
                } else {
                    Err("has text after its closing quote")
                };
            }
            0x20..=0x7e => out.push(char::from(b)),
            _ => return Err("holds a character that is not printable ASCII"),
        }
    }
    Err("has no closing quote")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_structured_field_strings_or_tokens() {
        assert_eq!(sf_string(br#""8e03978e-40d5-43e8""#), Ok("8e03978e-40d5-43e8".into()));
        assert_eq!(sf_string(br#""a \"b\" \\ c""#), Ok(r#"a "b" \ c"#.into()));
        assert_eq!(sf_string(b" token-1 "), Ok("token-1".into()));
        assert!(sf_string(br#""open"#).is_err());
        assert!(sf_string(br#""a" b"#).is_err());
        assert!(sf_string(br#""\n""#).is_err());
        assert!(sf_string(b"two words").is_err());
    }
}
