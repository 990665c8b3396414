//! `PATCH` (RFC 7644 §3.5.2): a `PatchOp`'s operations applied in order to a resource's
//! representation, all or nothing. Accepted as identity providers send them: `op` in any case
//! (Entra ID's `Replace`), a path qualified by its schema's URN, a value filter in the path
//! (`emails[type eq "work"].value`, `members[value eq "…"]`), `add` and `replace` without a
//! path whose value's keys are paths themselves (`name.givenName`), and `remove` with a value
//! that names the members to remove.

use serde_json::{Map, Value};

use super::document::{attribute, get};
use super::filter::{Equals, parse};
use super::{ENTERPRISE_SCHEMA, PATCH_SCHEMA, ScimError};

/// The most operations of one request.
pub const MAX_OPERATIONS: usize = 100;

/// What an operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Add,
    Replace,
    Remove,
}

/// Where an operation's path leads: the keys from the top, and a value filter on the first.
#[derive(Debug)]
struct Path {
    keys: Vec<String>,
    filter: Option<Equals>,
}

/// `doc` with the operations of the `PatchOp` `body` applied; attributes that are read-only
/// (`id`, `meta`, `schemas`) may not be changed.
pub fn apply(doc: &Value, body: &Value) -> Result<Value, ScimError> {
    let Some(body) = body.as_object() else {
        return Err(ScimError::bad("invalidSyntax", "A PatchOp is a JSON object."));
    };
    let schemas = get(body, "schemas").and_then(Value::as_array);
    if !schemas.is_some_and(|s| s.iter().any(|v| v.as_str() == Some(PATCH_SCHEMA))) {
        return Err(ScimError::bad("invalidSyntax", format!("schemas must hold {PATCH_SCHEMA}.")));
    }
    let Some(operations) = get(body, "Operations").and_then(Value::as_array) else {
        return Err(ScimError::bad("invalidSyntax", "Operations must be a list."));
    };
    if operations.len() > MAX_OPERATIONS {
        return Err(ScimError::bad(
            "tooMany",
            format!("At most {MAX_OPERATIONS} operations at once."),
        ));
    }
    let mut doc = doc.clone();
    let Some(target) = doc.as_object_mut() else {
        return Err(ScimError::status(500, "The resource is not an object."));
    };
    for operation in operations {
        let Some(operation) = operation.as_object() else {
            return Err(ScimError::bad("invalidSyntax", "Each operation is a JSON object."));
        };
        let op = match get(operation, "op").and_then(Value::as_str) {
            Some(o) if o.eq_ignore_ascii_case("add") => Op::Add,
            Some(o) if o.eq_ignore_ascii_case("replace") => Op::Replace,
            Some(o) if o.eq_ignore_ascii_case("remove") => Op::Remove,
            _ => {
                return Err(ScimError::bad("invalidSyntax", "op must be add, replace or remove."));
            }
        };
        let value = get(operation, "value");
        match get(operation, "path") {
            None | Some(Value::Null) => match (op, value) {
                (Op::Remove, _) => {
                    return Err(ScimError::bad("noTarget", "A remove operation needs a path."));
                }
                (_, Some(Value::Object(values))) => {
                    for (key, value) in values {
                        write(target, &path(key)?, op, Some(value))?;
                    }
                }
                _ => {
                    return Err(ScimError::bad(
                        "invalidValue",
                        "Without a path, the value is an object of attributes.",
                    ));
                }
            },
            Some(Value::String(p)) => write(target, &path(p)?, op, value)?,
            Some(_) => return Err(ScimError::bad("invalidPath", "path must be a string.")),
        }
    }
    Ok(doc)
}

/// The path `text`: `attribute[filter].sub`, each part optional but the first.
fn path(text: &str) -> Result<Path, ScimError> {
    let invalid = |why: String| ScimError::bad("invalidPath", why);
    let text = text.trim();
    let (head, filter, tail) = match text.find('[') {
        Some(open) => {
            let close = text[open..]
                .find(']')
                .map(|c| open + c)
                .ok_or_else(|| invalid(format!("{text}: a [ without its ].")))?;
            let filter = parse(&text[open + 1..close]).map_err(invalid)?;
            (&text[..open], Some(filter), text[close + 1..].strip_prefix('.'))
        }
        None => (text, None, None),
    };
    if head.is_empty() {
        return Err(invalid("A path names an attribute.".into()));
    }
    let (top, sub) = attribute(head);
    let mut keys = vec![top.to_owned()];
    if top == ENTERPRISE_SCHEMA {
        let Some(sub) = sub else {
            return Err(invalid(
                "A path into the enterprise extension names its attribute.".into(),
            ));
        };
        keys.extend(sub.split('.').map(str::to_owned));
    } else if let Some(sub) = sub.or(tail) {
        keys.push(sub.to_owned());
    }
    if keys.iter().any(|k| k.is_empty()) {
        return Err(invalid(format!("{text} is not a path.")));
    }
    if ["id", "meta", "schemas"].iter().any(|k| keys[0].eq_ignore_ascii_case(k)) {
        return Err(ScimError::bad("mutability", format!("{} cannot be changed.", keys[0])));
    }
    Ok(Path { keys, filter })
}

/// The key of `object` equal to `key` but for case, or `key` itself.
fn key_of(object: &Map<String, Value>, key: &str) -> String {
    object.keys().find(|k| k.eq_ignore_ascii_case(key)).cloned().unwrap_or_else(|| key.to_owned())
}

/// Applies one operation at `path`.
fn write(
    doc: &mut Map<String, Value>,
    path: &Path,
    op: Op,
    value: Option<&Value>,
) -> Result<(), ScimError> {
    let value = match (op, value) {
        (Op::Remove, v) => v.cloned(),
        (_, Some(v)) => Some(v.clone()),
        (_, None) => return Err(ScimError::bad("invalidValue", "add and replace need a value.")),
    };
    let top = key_of(doc, &path.keys[0]);
    if let Some(filter) = &path.filter {
        return write_filtered(doc, &top, filter, path.keys.get(1), op, value);
    }
    // Walk to the object holding the last key, making objects on the way when writing.
    let mut at = doc;
    let mut key = top;
    for next in &path.keys[1..] {
        let entry = at.entry(key.clone()).or_insert(Value::Null);
        if !entry.is_object() {
            if op == Op::Remove {
                return Ok(());
            }
            *entry = Value::Object(Map::new());
        }
        let Value::Object(inner) = entry else { unreachable_object()? };
        at = inner;
        key = key_of(at, next);
    }
    match (op, value) {
        (Op::Remove, Some(Value::Array(gone))) if at.get(&key).is_some_and(Value::is_array) => {
            if let Some(Value::Array(items)) = at.get_mut(&key) {
                items.retain(|item| !gone.iter().any(|g| same_member(item, g)));
            }
        }
        (Op::Remove, _) => {
            at.remove(&key);
        }
        (Op::Add, Some(new)) if at.get(&key).is_some_and(Value::is_array) => {
            let Some(Value::Array(items)) = at.get_mut(&key) else { unreachable_object()? };
            let new = match new {
                Value::Array(more) => more,
                one => vec![one],
            };
            for item in new {
                if !items.iter().any(|i| same_member(i, &item)) {
                    items.push(item);
                }
            }
        }
        (_, Some(new)) => {
            at.insert(key, new);
        }
        (_, None) => {}
    }
    Ok(())
}

/// Applies one operation to the values of the multi-valued `top` that `filter` selects.
fn write_filtered(
    doc: &mut Map<String, Value>,
    top: &str,
    filter: &Equals,
    sub: Option<&String>,
    op: Op,
    value: Option<Value>,
) -> Result<(), ScimError> {
    let items = doc.entry(top.to_owned()).or_insert_with(|| Value::Array(vec![]));
    if items.is_null() {
        *items = Value::Array(vec![]);
    }
    let Value::Array(items) = items else {
        return Err(ScimError::bad("invalidPath", format!("{top} is not multi-valued.")));
    };
    let selects = |item: &Value| {
        item.as_object().and_then(|o| get(o, &filter.attribute)).is_some_and(|v| filter.matches(v))
    };
    match (op, sub) {
        (Op::Remove, None) => items.retain(|item| !selects(item)),
        (Op::Remove, Some(sub)) => {
            for item in items.iter_mut().filter(|i| selects(i)) {
                if let Value::Object(o) = item {
                    let key = key_of(o, sub);
                    o.remove(&key);
                }
            }
        }
        (_, sub) => {
            let value = value.unwrap_or(Value::Null);
            let mut matched = false;
            for item in items.iter_mut().filter(|i| selects(i)) {
                matched = true;
                set_in(item, sub, value.clone());
            }
            // Entra ID replaces `emails[type eq "work"].value` of a user without one: the
            // value it means is the one it names.
            if !matched {
                let mut item = Map::new();
                item.insert(filter.attribute.clone(), filter.value.clone());
                let mut item = Value::Object(item);
                set_in(&mut item, sub, value);
                items.push(item);
            }
        }
    }
    Ok(())
}

/// Writes `value` at `sub` of `item`, or merges an object `value` into `item`.
fn set_in(item: &mut Value, sub: Option<&String>, value: Value) {
    let Value::Object(o) = item else { return };
    match (sub, value) {
        (Some(sub), value) => {
            let key = key_of(o, sub);
            o.insert(key, value);
        }
        (None, Value::Object(fields)) => {
            for (k, v) in fields {
                let key = key_of(o, &k);
                o.insert(key, v);
            }
        }
        (None, _) => {}
    }
}

/// Whether two values of a multi-valued attribute are the same member: by their `value`
/// sub-attribute when both have one, else wholly.
fn same_member(a: &Value, b: &Value) -> bool {
    let value = |v: &Value| v.as_object().and_then(|o| get(o, "value")).cloned();
    match (value(a), value(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn unreachable_object<T>() -> Result<T, ScimError> {
    Err(ScimError::status(500, "The resource changed shape while being patched."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patch(ops: Value) -> Value {
        json!({"schemas": [PATCH_SCHEMA], "Operations": ops})
    }

    fn user() -> Value {
        json!({"schemas": [super::super::USER_SCHEMA], "id": "usr_1", "userName": "a@b.c",
            "displayName": "A", "active": true,
            "emails": [{"value": "a@b.c", "type": "work", "primary": true}]})
    }

    #[test]
    fn okta_s_deactivation_and_entra_s_replace() {
        let okta = patch(json!([{"op": "replace", "value": {"active": false}}]));
        assert_eq!(apply(&user(), &okta).unwrap()["active"], json!(false));
        let entra = patch(json!([{"op": "Replace", "path": "active", "value": "False"}]));
        assert_eq!(apply(&user(), &entra).unwrap()["active"], json!("False"));
        let many = patch(json!([
            {"op":"Replace","path":"displayName","value":"Pvlo"},
            {"op":"Replace","path":"emails[type eq \"work\"].value","value":"T@test.microsoft.com"},
            {"op":"Replace","path":"name.givenName","value":"Gtfd"},
            {"op":"Replace","path":"externalId","value":"Eqpj"},
            {"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager",
             "value":"2c2f6fb8-254f-492e-b7fe-c09c5a61c8a2"}]));
        let out = apply(&user(), &many).unwrap();
        assert_eq!(out["displayName"], "Pvlo");
        assert_eq!(out["emails"][0]["value"], "T@test.microsoft.com");
        assert_eq!(out["name"]["givenName"], "Gtfd");
        assert_eq!(out["externalId"], "Eqpj");
        assert_eq!(out[ENTERPRISE_SCHEMA]["manager"], "2c2f6fb8-254f-492e-b7fe-c09c5a61c8a2");
    }

    #[test]
    fn a_no_path_replace_takes_dotted_and_qualified_keys() {
        let flagged = patch(json!([{"op": "replace", "value": {"displayName": "Bjfe",
            "name.givenName": "Kkom",
            "urn:ietf:params:scim:schemas:core:2.0:User:title": "Chief"}}]));
        let out = apply(&user(), &flagged).unwrap();
        assert_eq!(
            (&out["displayName"], &out["name"]["givenName"]),
            (&json!("Bjfe"), &json!("Kkom"))
        );
        assert_eq!(out["title"], "Chief");
    }

    #[test]
    fn values_are_removed_by_path_filter_or_value() {
        let doc =
            json!({"members": [{"value": "1"}, {"value": "2"}, {"value": "3"}], "title": "t"});
        let ops = patch(json!([
            {"op": "remove", "path": "members[value eq \"1\"]"},
            {"op": "Remove", "path": "members", "value": [{"value": "3"}]},
            {"op": "remove", "path": "title"},
            {"op": "add", "path": "members", "value": [{"value": "2"}, {"value": "4"}]}]));
        let out = apply(&doc, &ops).unwrap();
        assert_eq!(out, json!({"members": [{"value": "2"}, {"value": "4"}]}));
    }

    #[test]
    fn bad_requests_are_refused_with_their_scim_type() {
        let cases = [
            (json!({"Operations": []}), "invalidSyntax"),
            (patch(json!([{"op": "move", "path": "title", "value": "x"}])), "invalidSyntax"),
            (patch(json!([{"op": "remove"}])), "noTarget"),
            (patch(json!([{"op": "replace", "value": "x"}])), "invalidValue"),
            (
                patch(json!([{"op": "replace", "path": "emails[type co \"w\"]", "value": {}}])),
                "invalidPath",
            ),
            (
                patch(json!([{"op": "replace", "path": "emails[type eq \"w\"", "value": {}}])),
                "invalidPath",
            ),
            (patch(json!([{"op": "replace", "path": "id", "value": "x"}])), "mutability"),
            (
                patch(json!([{"op": "replace", "path": "displayName[value eq 1]", "value": 1}])),
                "invalidPath",
            ),
            (patch(json!([{"op": "add", "path": "title"}])), "invalidValue"),
            (patch(json!([{"op": "add", "path": 7, "value": 1}])), "invalidPath"),
        ];
        for (body, scim_type) in cases {
            let e = apply(&user(), &body).unwrap_err();
            assert_eq!((e.status, e.scim_type), (400, Some(scim_type)), "{body}");
        }
    }
}
