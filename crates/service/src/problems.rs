//! The problems a transport finds in a request's parameters before the operation sees them,
//! worded once so that REST and the tool interface report them alike.

use recruit_domain::ErrorDetail;

/// A parameter the operation does not have.
pub fn unknown_parameter(name: &str) -> ErrorDetail {
    ErrorDetail::field(shorten(name), "is not a parameter of this operation")
}

/// A parameter given more than once.
pub fn repeated_parameter(name: &str) -> ErrorDetail {
    ErrorDetail::field(shorten(name), "is given more than once")
}

/// A required parameter that is absent.
pub fn missing(name: &str) -> ErrorDetail {
    ErrorDetail::field(shorten(name), "is required")
}

/// A parameter of the wrong type, such as a number where text is expected.
pub fn wrong_type(name: &str, expected: &str) -> ErrorDetail {
    ErrorDetail::field(shorten(name), format!("must be {expected}"))
}

/// A body that is not a JSON document, with the parser's words for where and why.
pub fn not_json(e: &serde_json::Error) -> ErrorDetail {
    ErrorDetail::field("body", format!("is not valid JSON: {e}"))
}

/// Whether `problems` already hold one about `name`: a parameter the transport found unusable
/// (of the wrong JSON type, say) is not reported again as missing or malformed. One problem,
/// one detail.
pub(crate) fn reported(problems: &[ErrorDetail], name: &str) -> bool {
    problems.iter().any(|p| p.get("field") == Some(name))
}

/// A client-chosen name, cut to a length fit for an error message.
pub(crate) fn shorten(name: &str) -> String {
    match name.char_indices().nth(64) {
        Some((end, _)) => format!("{}…", &name[..end]),
        None => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_and_marked() {
        let long = "é".repeat(100);
        let detail = unknown_parameter(&long);
        let field = detail.get("field").unwrap();
        assert_eq!(field.chars().count(), 65);
        assert!(field.ends_with('…'));
        assert_eq!(unknown_parameter("expand").get("field"), Some("expand"));
    }
}
