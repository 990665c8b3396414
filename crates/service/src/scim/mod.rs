//! SCIM 2.0 provisioning (RFC 7643, RFC 7644) at `/scim/v2`: the rules of its resources and
//! messages, with no I/O. [`document`] turns a user into its SCIM representation and a SCIM
//! representation into a user's fields, accepting what Okta and Microsoft Entra ID actually
//! send; [`patch`] applies a `PatchOp` to a representation; [`filter`] reads the filters the
//! server answers; [`discovery`] holds the service provider's configuration, resource types
//! and schemas. `Service::scim` (in the service module) runs requests with them.

pub mod discovery;
pub mod document;
pub mod filter;
pub mod patch;

use serde_json::{Value, json};

/// The core User schema (RFC 7643 §4.1).
pub const USER_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
/// The enterprise User extension (RFC 7643 §4.3).
pub const ENTERPRISE_SCHEMA: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
/// A list response (RFC 7644 §3.4.2).
pub const LIST_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
/// An error response (RFC 7644 §3.12).
pub const ERROR_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:Error";
/// A patch request (RFC 7644 §3.5.2).
pub const PATCH_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
/// A search request (RFC 7644 §3.4.3).
pub const SEARCH_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";

/// The media type of SCIM messages (RFC 7644 §8.1).
pub const MEDIA_TYPE: &str = "application/scim+json";

/// The most resources one list response holds; a larger `count` is lowered to it.
pub const MAX_RESULTS: u64 = 200;

/// A SCIM error: its HTTP status, its `scimType` where RFC 7644 §3.12 names one, and a detail
/// for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScimError {
    /// The HTTP status.
    pub status: u16,
    /// The `scimType` (`invalidFilter`, `invalidValue`, `uniqueness`, …), if any.
    pub scim_type: Option<&'static str>,
    /// What went wrong, for people.
    pub detail: String,
}

impl ScimError {
    /// A 400 with a `scimType`.
    pub fn bad(scim_type: &'static str, detail: impl Into<String>) -> Self {
        Self { status: 400, scim_type: Some(scim_type), detail: detail.into() }
    }

    /// An error of `status` with no `scimType`.
    pub fn status(status: u16, detail: impl Into<String>) -> Self {
        Self { status, scim_type: None, detail: detail.into() }
    }

    /// The 404 of a resource or endpoint that is not there.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::status(404, detail)
    }

    /// The error message (RFC 7644 §3.12): `status` is a string there.
    pub fn body(&self) -> Value {
        let mut body = json!({
            "schemas": [ERROR_SCHEMA],
            "status": self.status.to_string(),
            "detail": self.detail,
        });
        if let Some(t) = self.scim_type {
            body["scimType"] = json!(t);
        }
        body
    }
}

/// A list response of `resources`, the `start_index`th of `total` first.
pub fn list_response(resources: Vec<Value>, total: u64, start_index: u64) -> Value {
    json!({
        "schemas": [LIST_SCHEMA],
        "totalResults": total,
        "startIndex": start_index,
        "itemsPerPage": resources.len(),
        "Resources": resources,
    })
}

/// Paging and projection of a list or search (RFC 7644 §3.4.2.4, §3.4.2.5, §3.9).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListParams {
    /// The filter, as given.
    pub filter: Option<String>,
    /// The 1-based index of the first result.
    pub start_index: u64,
    /// How many results at most.
    pub count: u64,
    /// `attributes`: only these (and those always returned).
    pub attributes: Vec<String>,
    /// `excludedAttributes`: all but these.
    pub excluded: Vec<String>,
}

impl ListParams {
    /// The parameters of a query string. A `startIndex` below 1 is 1, a negative `count` 0
    /// and one above [`MAX_RESULTS`] that many (RFC 7644 §3.4.2.4); anything that is not a
    /// number is `invalidValue`.
    pub fn from_query(query: &str) -> Result<Self, ScimError> {
        let mut params = Self { start_index: 1, count: MAX_RESULTS, ..Self::default() };
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            match key.to_ascii_lowercase().as_str() {
                "filter" => params.filter = Some(value.into_owned()),
                "startindex" => params.start_index = number(&value, "startIndex")?.max(1) as u64,
                "count" => {
                    params.count = number(&value, "count")?.clamp(0, MAX_RESULTS as i64) as u64;
                }
                "attributes" => params.attributes = names(&value),
                "excludedattributes" => params.excluded = names(&value),
                _ => {}
            }
        }
        Ok(params)
    }

    /// The parameters of a search request's body (RFC 7644 §3.4.3).
    pub fn from_search(body: &Value) -> Result<Self, ScimError> {
        let Some(body) = body.as_object() else {
            return Err(ScimError::bad("invalidSyntax", "A search request is a JSON object."));
        };
        let mut params = Self { start_index: 1, count: MAX_RESULTS, ..Self::default() };
        for (key, value) in body {
            let wrong =
                |what: &str| ScimError::bad("invalidValue", format!("{key} must be {what}."));
            let list = || match value {
                Value::Array(items) => items
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| wrong("a list of attribute names")),
                Value::String(s) => Ok(names(s)),
                _ => Err(wrong("a list of attribute names")),
            };
            let int = |name| value.as_i64().ok_or_else(|| not_a_number(name));
            match key.to_ascii_lowercase().as_str() {
                "filter" => match value {
                    Value::String(f) => params.filter = Some(f.clone()),
                    _ => return Err(ScimError::bad("invalidFilter", "filter must be a string.")),
                },
                "startindex" => params.start_index = int("startIndex")?.max(1) as u64,
                "count" => params.count = int("count")?.clamp(0, MAX_RESULTS as i64) as u64,
                "attributes" => params.attributes = list()?,
                "excludedattributes" => params.excluded = list()?,
                _ => {}
            }
        }
        Ok(params)
    }
}

fn number(value: &str, name: &str) -> Result<i64, ScimError> {
    value.trim().parse::<i64>().map_err(|_| not_a_number(name))
}

fn not_a_number(name: &str) -> ScimError {
    ScimError::bad("invalidValue", format!("{name} must be an integer."))
}

fn names(value: &str) -> Vec<String> {
    value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}
