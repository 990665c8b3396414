//! A user as a SCIM `User` resource, and a resource's fields as a user's: what recruitd keeps
//! of a provisioned user is `userName`, `externalId`, `displayName` (the user's name),
//! `title`, `active`, one e-mail address (`emails`) and the enterprise extension's `manager`.
//!
//! What identity providers send is accepted as they send it: attribute names in any case, a
//! boolean as the string `"True"`, `name.givenName` and `name.familyName` when there is no
//! `displayName`, the manager as a string, an object or a one-element list (RFC 7643 §2.1,
//! §4.3; the forms Microsoft Entra ID documents).

use recruit_domain::{Timestamp, User, UserId, UserStatus};
use serde_json::{Map, Value, json};

use super::{ENTERPRISE_SCHEMA, ScimError, USER_SCHEMA};
use crate::profiles::MAX_TEXT_LEN;

/// The longest `userName`, `externalId` and e-mail address, in characters.
pub const MAX_NAME_LEN: usize = 256;

/// The SCIM representation of `user`; `base` is the SCIM base URL (`…/scim/v2`). What
/// [`super::discovery`]'s schema declares, and nothing else: `displayName` when the name is
/// not just the `userName`, `emails` as their values. The manager is written over SCIM but
/// read through the API: a client that reads, changes and replaces a user keeps it.
pub fn to_document(user: &User, base: &str) -> Value {
    let user_name = user.user_name.as_deref().unwrap_or(&user.email);
    let mut doc = json!({
        "schemas": [USER_SCHEMA],
        "id": user.id.to_string(),
        "userName": user_name,
        "active": user.status.is_active(),
        "meta": {
            "resourceType": "User",
            "created": user.created_at.to_string(),
            "lastModified": user.updated_at.to_string(),
            "location": format!("{}/Users/{}", base.trim_end_matches('/'), user.id),
        },
    });
    if user.name != user_name {
        doc["displayName"] = json!(user.name);
    }
    if let Some(id) = &user.external_id {
        doc["externalId"] = json!(id);
    }
    if let Some(title) = &user.title {
        doc["title"] = json!(title);
    }
    if !user.email.is_empty() {
        doc["emails"] = json!([{ "value": user.email }]);
    }
    doc
}

/// A user's fields as a SCIM representation gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fields {
    /// `userName`.
    pub user_name: String,
    /// `externalId`.
    pub external_id: Option<String>,
    /// The name: `displayName`, else `name.formatted`, else the given and family names, else
    /// `userName`.
    pub name: String,
    /// The primary (else the first) e-mail address, if any (none clears it).
    pub email: Option<String>,
    /// `title`.
    pub title: Option<String>,
    /// `active`.
    pub active: bool,
    /// The enterprise extension's manager, if the representation has the attribute (`None`
    /// inside: no manager).
    pub manager: Option<Option<String>>,
    /// Whether the representation has a `title` attribute.
    pub has_title: bool,
}

/// The fields of a SCIM `User` representation. A missing `userName`, a value of the wrong
/// type, or text too long or with control characters is `invalidValue`.
pub fn fields(doc: &Value) -> Result<Fields, ScimError> {
    let Some(doc) = doc.as_object() else {
        return Err(ScimError::bad("invalidSyntax", "A User is a JSON object."));
    };
    let enterprise = get(doc, ENTERPRISE_SCHEMA).and_then(Value::as_object);
    let user_name = match get(doc, "userName") {
        Some(Value::String(s)) if !s.trim().is_empty() => text(s, "userName", MAX_NAME_LEN)?,
        Some(Value::String(_) | Value::Null) | None => {
            return Err(ScimError::bad("invalidValue", "userName is required."));
        }
        Some(_) => return Err(wrong_type("userName", "a string")),
    };
    let external_id = optional_text(doc, "externalId", MAX_NAME_LEN)?;
    let name_parts = get(doc, "name").and_then(Value::as_object);
    let part = |key: &str| name_parts.and_then(|n| get(n, key)).and_then(Value::as_str);
    let given = [part("givenName"), part("familyName")]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let name = optional_text(doc, "displayName", MAX_TEXT_LEN)?
        .or_else(|| part("formatted").map(str::to_owned))
        .or_else(|| (!given.is_empty()).then_some(given))
        .unwrap_or_else(|| user_name.clone());
    let name = text(&name, "displayName", MAX_TEXT_LEN)?;
    let has_title = get(doc, "title").is_some();
    let title = optional_text(doc, "title", MAX_TEXT_LEN)?;
    let active = match get(doc, "active") {
        None | Some(Value::Null) => true,
        Some(value) => boolean(value).ok_or_else(|| wrong_type("active", "a boolean"))?,
    };
    let email = email(get(doc, "emails"))?;
    let manager = match enterprise.and_then(|e| get(e, "manager")) {
        None => None,
        Some(value) => Some(manager(value)?),
    };
    Ok(Fields { user_name, external_id, name, email, title, active, manager, has_title })
}

/// `user` with `fields` written, changed at `now` (at least a microsecond after its last
/// change); its status follows `active`; `manager` is the manager the caller resolved.
pub fn apply(user: &User, fields: &Fields, manager: Option<UserId>, now: Timestamp) -> User {
    let after = Timestamp::from_unix_micros(user.updated_at.unix_micros() + 1).unwrap_or(now);
    User {
        name: fields.name.clone(),
        email: fields.email.clone().unwrap_or_default(),
        title: fields.title.clone(),
        manager,
        updated_at: now.max(after),
        status: if fields.active { UserStatus::Active } else { UserStatus::Deactivated },
        user_name: Some(fields.user_name.clone()),
        external_id: fields.external_id.clone(),
        ..user.clone()
    }
}

/// The value of `key` in `object`, its case ignored (RFC 7643 §2.1).
pub fn get<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    object
        .get(key)
        .or_else(|| object.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v))
}

/// A boolean, or the strings `"true"` and `"false"` in any case (as Entra ID sends them).
pub fn boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

fn wrong_type(name: &str, what: &str) -> ScimError {
    ScimError::bad("invalidValue", format!("{name} must be {what}."))
}

fn text(value: &str, name: &str, longest: usize) -> Result<String, ScimError> {
    let value = value.trim();
    if value.chars().count() > longest {
        return Err(ScimError::bad(
            "invalidValue",
            format!("{name} must be at most {longest} characters."),
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(ScimError::bad(
            "invalidValue",
            format!("{name} must not hold control characters."),
        ));
    }
    Ok(value.to_owned())
}

fn optional_text(
    doc: &Map<String, Value>,
    name: &str,
    longest: usize,
) -> Result<Option<String>, ScimError> {
    match get(doc, name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => text(s, name, longest).map(Some),
        Some(_) => Err(wrong_type(name, "a string")),
    }
}

/// The address recruitd keeps of `emails`.
fn email(emails: Option<&Value>) -> Result<Option<String>, ScimError> {
    let items: Vec<&Map<String, Value>> = match emails {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => {
            let objects: Option<Vec<_>> = items.iter().map(Value::as_object).collect();
            objects.ok_or_else(|| wrong_type("emails", "a list of objects"))?
        }
        Some(_) => return Err(wrong_type("emails", "a list of objects")),
    };
    // The primary address, else the work address (the one recruitd keeps is both), else the
    // first: a `PATCH` of `emails[type eq "work"].value` changes the address recruitd keeps.
    let primary = items.iter().find(|e| get(e, "primary").and_then(boolean) == Some(true));
    let work = || {
        items.iter().find(|e| {
            get(e, "type").and_then(Value::as_str).is_some_and(|t| t.eq_ignore_ascii_case("work"))
        })
    };
    let Some(chosen) = primary.or_else(work).or(items.first()) else { return Ok(None) };
    match get(chosen, "value") {
        Some(Value::String(s)) if s.contains('@') => {
            text(s, "emails.value", MAX_NAME_LEN).map(Some)
        }
        Some(Value::String(_)) => {
            Err(ScimError::bad("invalidValue", "An e-mail address must contain '@'."))
        }
        None | Some(Value::Null) => Ok(None),
        Some(_) => Err(wrong_type("emails.value", "a string")),
    }
}

/// The manager's identifier: a string, `{"value": …}`, or a list of one of them; `null`, an
/// empty string or an empty list is no manager.
fn manager(value: &Value) -> Result<Option<String>, ScimError> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) if s.trim().is_empty() => Ok(None),
        Value::String(s) => Ok(Some(s.trim().to_owned())),
        Value::Object(o) => get(o, "value").map_or(Ok(None), manager),
        Value::Array(items) if items.len() <= 1 => items.first().map_or(Ok(None), manager),
        _ => Err(wrong_type("manager", "a user's id")),
    }
}

/// `doc` with only what `attributes` asks for (and what is always returned), or without what
/// `excluded` names (RFC 7644 §3.9), attribute by attribute: a sub-attribute names its
/// attribute. Names may be qualified by their schema's URN.
pub fn project(mut doc: Value, attributes: &[String], excluded: &[String]) -> Value {
    const ALWAYS: [&str; 2] = ["schemas", "id"];
    let Some(object) = doc.as_object_mut() else { return doc };
    if !attributes.is_empty() {
        object.retain(|k, _| {
            ALWAYS.contains(&k.as_str())
                || attributes.iter().any(|a| attribute(a).0.eq_ignore_ascii_case(k))
        });
    } else if !excluded.is_empty() {
        object.retain(|k, _| {
            ALWAYS.contains(&k.as_str())
                || !excluded.iter().any(|e| {
                    let (top, sub) = attribute(e);
                    sub.is_none() && top.eq_ignore_ascii_case(k)
                })
        });
    }
    doc
}

/// The top-level attribute a name is of, and the rest of the name below it: `title` is
/// `("title", None)`, `name.givenName` `("name", Some("givenName"))`, the enterprise
/// extension's `…:User:manager` `(ENTERPRISE_SCHEMA, Some("manager"))`.
pub fn attribute(name: &str) -> (&str, Option<&str>) {
    if let Some(rest) = strip_urn(name, ENTERPRISE_SCHEMA) {
        return (ENTERPRISE_SCHEMA, Some(rest).filter(|r| !r.is_empty()));
    }
    let name = strip_urn(name, USER_SCHEMA).unwrap_or(name);
    match name.split_once('.') {
        Some((top, rest)) => (top, Some(rest)),
        None => (name, None),
    }
}

/// `name` after the schema `urn` and its colon, the URN's case ignored.
fn strip_urn<'a>(name: &'a str, urn: &str) -> Option<&'a str> {
    let head = name.get(..urn.len())?;
    if !head.eq_ignore_ascii_case(urn) {
        return None;
    }
    let rest = &name[urn.len()..];
    if rest.is_empty() { Some(rest) } else { rest.strip_prefix(':') }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn okta_s_create_body_gives_a_user() {
        let okta = json!({"schemas":[USER_SCHEMA],"userName":"test.user@okta.local",
            "name":{"givenName":"Test","familyName":"User"},
            "emails":[{"primary":true,"value":"test.user@okta.local","type":"work"}],
            "displayName":"Test User","locale":"en-US","externalId":"00ujl29u0le5T6Aj10h7",
            "groups":[],"password":"1mz050nq","active":true});
        let f = fields(&okta).unwrap();
        assert_eq!(f.user_name, "test.user@okta.local");
        assert_eq!(f.name, "Test User");
        assert_eq!(f.email.as_deref(), Some("test.user@okta.local"));
        assert_eq!(f.external_id.as_deref(), Some("00ujl29u0le5T6Aj10h7"));
        assert!(f.active && f.manager.is_none() && !f.has_title);
        let without_display = json!({"userName":"u","name":{"givenName":"Ji","familyName":"Kim"}});
        assert_eq!(fields(&without_display).unwrap().name, "Ji Kim");
    }

    #[test]
    fn entra_s_forms_are_accepted() {
        let entra = json!({"USERNAME":"a@b.c","Active":"False",
            ENTERPRISE_SCHEMA: {"manager": "2c2f6fb8-254f-492e-b7fe-c09c5a61c8a2"}});
        let f = fields(&entra).unwrap();
        assert!(!f.active);
        assert_eq!(f.manager, Some(Some("2c2f6fb8-254f-492e-b7fe-c09c5a61c8a2".into())));
        for manager in [json!({"value":"m"}), json!([{"value":"m"}]), json!("m")] {
            let doc = json!({"userName":"u", ENTERPRISE_SCHEMA: {"manager": manager}});
            assert_eq!(fields(&doc).unwrap().manager, Some(Some("m".into())));
        }
        let none = json!({"userName":"u", ENTERPRISE_SCHEMA: {"manager": null}});
        assert_eq!(fields(&none).unwrap().manager, Some(None));
    }

    #[test]
    fn bad_values_are_invalid_value() {
        for doc in [
            json!({}),
            json!({"userName": ""}),
            json!({"userName": 7}),
            json!({"userName": "u", "active": "maybe"}),
            json!({"userName": "u", "emails": "a@b"}),
            json!({"userName": "u", "emails": [{"value": "no-at-sign"}]}),
            json!({"userName": "x".repeat(MAX_NAME_LEN + 1)}),
            json!({"userName": "u", "displayName": "a\u{7}b"}),
            json!([1]),
        ] {
            let e = fields(&doc).unwrap_err();
            assert_eq!(e.status, 400, "{doc}");
        }
    }

    #[test]
    fn a_projection_keeps_what_is_asked_and_what_is_always_returned() {
        let doc = json!({"schemas":[USER_SCHEMA],"id":"1","userName":"u","title":"t",
            "emails":[{"value":"a@b"}], ENTERPRISE_SCHEMA: {"manager": {"value": "m"}}});
        let only = project(doc.clone(), &["userName".into()], &[]);
        assert_eq!(only, json!({"schemas":[USER_SCHEMA],"id":"1","userName":"u"}));
        let qualified = project(doc.clone(), &[format!("{USER_SCHEMA}:title")], &[]);
        assert_eq!(qualified["title"], "t");
        let without = project(doc.clone(), &[], &["title".into(), "id".into()]);
        assert!(without.get("title").is_none() && without["id"] == "1");
        let manager = project(doc, &[format!("{ENTERPRISE_SCHEMA}:manager")], &[]);
        assert_eq!(manager[ENTERPRISE_SCHEMA]["manager"]["value"], "m");
    }
}
