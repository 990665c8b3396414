//! What an operation takes from HTTP beyond its path and query: its header parameters out of
//! their syntax (`If-Match` a list of entity tags, RFC 9110 §13.1.1; any other, such as
//! `Idempotency-Key`, a Structured Field string, RFC 9651, or leniently a bare token), and its
//! body, whose media type is checked here. Problems of syntax are handed to the service, which
//! reports them with its own after authorization.

use hyper::HeaderMap;
use hyper::header::{CONTENT_TYPE, IF_MATCH};
use recruit_domain::ErrorDetail;
use recruit_service::{Arguments, OperationKind, Place, RequestBody};

/// Fills `arguments` from the request's headers and body, as `kind` declares them.
pub(crate) fn headers_and_body(
    kind: OperationKind,
    arguments: &mut Arguments,
    headers: &HeaderMap,
    body: bytes::Bytes,
) {
    for param in kind.params_in(Place::Header) {
        let value = if param.rest.eq_ignore_ascii_case(IF_MATCH.as_str()) {
            entity_tags(headers)
        } else {
            single(headers, param.rest)
        };
        arguments.header(param, value);
    }
    let (accepted, expected): (fn(&str) -> bool, &str) = match kind.spec().body {
        // Reads take no body; one is read (within the limit) and ignored.
        RequestBody::None => return,
        RequestBody::Json(_) => (
            |essence| {
                essence.eq_ignore_ascii_case("application/json")
                    || essence.to_ascii_lowercase().ends_with("+json")
            },
            "application/json",
        ),
        RequestBody::MergePatch => (
            |essence| {
                essence.eq_ignore_ascii_case("application/merge-patch+json")
                    || essence.eq_ignore_ascii_case("application/json")
            },
            "application/merge-patch+json (or application/json)",
        ),
    };
    let mut problems = vec![];
    if json_type(headers, accepted, expected, &mut problems) && present(&body, &mut problems) {
        arguments.body(Vec::from(body));
    }
    problems.into_iter().for_each(|p| arguments.problem(p));
}

/// The value of a header that is given at most once, out of its Structured Field string.
fn single(headers: &HeaderMap, name: &str) -> Result<Option<String>, String> {
    let mut values = headers.get_all(name).iter();
    match (values.next(), values.next()) {
        (None, _) => Ok(None),
        (Some(_), Some(_)) => Err("is given more than once; send one key".into()),
        (Some(value), None) => sf_string(value.as_bytes()).map(Some).map_err(str::to_owned),
    }
}

/// The entity tags of the `If-Match` fields: several fields of a list are one list.
fn entity_tags(headers: &HeaderMap) -> Result<Option<String>, String> {
    let values: Result<Vec<&str>, _> =
        headers.get_all(IF_MATCH).iter().map(|v| v.to_str()).collect();
    match values {
        Ok(values) if values.is_empty() => Ok(None),
        Ok(values) => Ok(Some(values.join(", "))),
        Err(_) => Err("must be ASCII entity tags".into()),
    }
}

/// Whether the body's `Content-Type` is `accepted`; if not, a problem saying that it must be
/// `expected`. A body without one is taken for JSON.
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
