//! The filters recruitd answers (RFC 7644 §3.4.2.2): one attribute compared with `eq` to a
//! JSON value, as identity providers send them to find a user (`userName eq "…"`,
//! `externalId eq "…"`) and as `PATCH` paths select values (`emails[type eq "work"]`). Any
//! other operator or a combination is refused, never guessed at.

use serde_json::Value;

/// `attribute eq value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Equals {
    /// The attribute, as written (possibly qualified by its schema's URN).
    pub attribute: String,
    /// The value compared with.
    pub value: Value,
}

impl Equals {
    /// Whether `candidate` equals the value: strings without regard to case (recruitd's
    /// attributes are not `caseExact`), anything else exactly.
    pub fn matches(&self, candidate: &Value) -> bool {
        match (&self.value, candidate) {
            (Value::String(a), Value::String(b)) => a.eq_ignore_ascii_case(b),
            (a, b) => a == b,
        }
    }
}

/// The filter `text`, or why it is not one recruitd answers.
pub fn parse(text: &str) -> Result<Equals, String> {
    let text = text.trim();
    let (attribute, rest) = text.split_once(char::is_whitespace).ok_or_else(|| {
        "A filter is an attribute, the operator eq and a value, such as userName eq \"x\"."
            .to_owned()
    })?;
    let rest = rest.trim_start();
    let (operator, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    if !operator.eq_ignore_ascii_case("eq") {
        return Err(format!("The operator {operator} is not supported: only eq is."));
    }
    let value = value.trim();
    let valid_name = !attribute.is_empty()
        && attribute.chars().all(|c| c.is_ascii_alphanumeric() || "$_-.:".contains(c));
    if !valid_name {
        return Err(format!("{attribute} is not an attribute name."));
    }
    let value: Value = serde_json::from_str(value).map_err(|_| {
        "The value of a filter is a JSON string, number, true, false or null; and, or and not \
         are not supported."
            .to_owned()
    })?;
    if value.is_array() || value.is_object() {
        return Err("The value of a filter is a JSON string, number, true, false or null.".into());
    }
    Ok(Equals { attribute: attribute.to_owned(), value })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_attribute_eq_a_value_is_read() {
        let f = parse(r#"userName eq "test.user@okta.local""#).unwrap();
        assert_eq!((f.attribute.as_str(), &f.value), ("userName", &json!("test.user@okta.local")));
        let f = parse(r#"  externalId EQ "a \"quoted\" id"  "#).unwrap();
        assert_eq!(f.value, json!("a \"quoted\" id"));
        assert!(parse("active eq true").unwrap().matches(&json!(true)));
        assert!(parse(r#"type eq "WORK""#).unwrap().matches(&json!("work")));
    }

    #[test]
    fn anything_else_is_refused() {
        for f in [
            "",
            "userName",
            r#"userName co "x""#,
            r#"userName eq "x" and active eq true"#,
            r#"userName eq "x"#,
            "userName eq [1]",
            r#"user(Name) eq "x""#,
            "userName pr",
        ] {
            assert!(parse(f).is_err(), "{f}");
        }
    }
}
