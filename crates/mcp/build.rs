//! Derives the tools' JSON Schemas from `docs/openapi.yaml`, so that a tool's arguments are its
//! REST twin's parameters and its output is the REST response body, by construction: for each
//! operation of the API (under `/v1/`), keyed by its `operationId` in snake case (the tool's
//! name), its title and description for models (`x-tool-title`, `x-tool-description`), an input schema (an object with one property per parameter, named in snake case) and
//! an output schema (the 200 response's schema), each self-contained, with the component
//! schemas it uses under `$defs`. A tool without schemas fails the crate's tests.

use std::collections::BTreeSet;
use std::path::PathBuf;

use heck::ToSnakeCase;
use serde_json::{Map, Value, json};

/// The HTTP methods an operation may have in the document.
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

fn main() {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.yaml");
    println!("cargo::rerun-if-changed={}", source.display());
    let yaml = std::fs::read_to_string(&source)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", source.display()));
    let doc: Value = serde_norway::from_str(&yaml)
        .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", source.display()));
    let mut tools = Map::new();
    let paths = doc["paths"].as_object().expect("the document has paths");
    let operations = paths
        .iter()
        .filter(|(path, _)| path.starts_with("/v1/"))
        .flat_map(|(_, item)| METHODS.iter().filter_map(|method| item.get(*method)));
    for operation in operations {
        let Some(operation_id) = operation["operationId"].as_str() else { continue };
        let tool = operation_id.to_snake_case();
        let mut properties = Map::new();
        let mut required = vec![];
        for parameter in operation["parameters"].as_array().into_iter().flatten() {
            let parameter = match parameter["$ref"].as_str() {
                Some(r) => {
                    let name = r.strip_prefix(PARAMETERS).expect("a parameter reference");
                    &doc["components"]["parameters"][name]
                }
                None => parameter,
            };
            let name = parameter["name"].as_str().expect("a parameter has a name");
            // A header's name is kebab case (`Idempotency-Key` → `idempotency_key`), and a tool
            // argument takes the value without the header's syntax (`x-tool-schema`).
            let (name, mut schema) = if parameter["in"] == "header" {
                let schema = parameter.get("x-tool-schema").unwrap_or(&parameter["schema"]);
                (name.to_ascii_lowercase().replace('-', "_"), schema.clone())
            } else {
                (name.to_snake_case(), parameter["schema"].clone())
            };
            if let (Some(object), Some(description)) =
                (schema.as_object_mut(), parameter.get("description"))
            {
                object.insert("description".into(), description.clone());
            }
            if parameter["required"] == true {
                required.push(Value::String(name.clone()));
            }
            properties.insert(name, schema);
        }
        // A body's fields are arguments beside the parameters.
        let body = &operation["requestBody"]["content"]["application/json"]["schema"];
        if let Some(body) = resolve(&doc, body).as_object() {
            for (name, schema) in
                body.get("properties").and_then(Value::as_object).into_iter().flatten()
            {
                properties.insert(name.clone(), schema.clone());
            }
            required.extend(
                body.get("required").and_then(Value::as_array).into_iter().flatten().cloned(),
            );
        }
        let input = json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        });
        let responses = &operation["responses"];
        let success =
            if responses.get("200").is_some() { &responses["200"] } else { &responses["201"] };
        let output = success["content"]["application/json"]["schema"].clone();
        let output = json!({"type": "object", "allOf": [output]});
        // What a model reads of the tool: its title and description, beside the REST text.
        assert_eq!(
            operation.get("x-tool-title").is_some(),
            operation.get("x-tool-description").is_some(),
            "{operation_id}: a tool has both x-tool-title and x-tool-description, or neither"
        );
        tools.insert(
            tool,
            json!({
                "input": self_contained(&doc, input),
                "output": self_contained(&doc, output),
                "title": operation["x-tool-title"],
                "description": operation["x-tool-description"],
            }),
        );
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let json = serde_json::to_vec(&Value::Object(tools)).expect("a JSON value serializes");
    std::fs::write(out.join("tool_schemas.json"), json).expect("OUT_DIR is writable");
}

/// A schema, or the component schema it refers to.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str().and_then(|r| r.strip_prefix(COMPONENTS)) {
        Some(name) => &doc["components"]["schemas"][name],
        None => schema,
    }
}

const COMPONENTS: &str = "#/components/schemas/";

const PARAMETERS: &str = "#/components/parameters/";

/// `schema` with its references to the document's component schemas pointed at `$defs`, and
/// those schemas (and the ones they use) added there.
fn self_contained(doc: &Value, mut schema: Value) -> Value {
    let mut wanted = BTreeSet::new();
    relink(&mut schema, &mut wanted);
    let mut defs = Map::new();
    while let Some(name) = wanted.iter().find(|n| !defs.contains_key(*n)).cloned() {
        let mut component = doc["components"]["schemas"][&name].clone();
        assert!(!component.is_null(), "{COMPONENTS}{name} does not exist");
        relink(&mut component, &mut wanted);
        defs.insert(name, component);
    }
    if !defs.is_empty() {
        schema.as_object_mut().expect("a schema object").insert("$defs".into(), defs.into());
    }
    schema
}

fn relink(value: &mut Value, wanted: &mut BTreeSet<String>) {
    match value {
        Value::Object(object) => {
            // OpenAPI's discriminator mapping names component paths; JSON Schema ignores it.
            object.remove("discriminator");
            for (key, child) in object.iter_mut() {
                if key == "$ref"
                    && let Some(name) = child.as_str().and_then(|r| r.strip_prefix(COMPONENTS))
                {
                    wanted.insert(name.to_owned());
                    *child = Value::String(format!("#/$defs/{name}"));
                } else {
                    relink(child, wanted);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| relink(item, wanted)),
        _ => {}
    }
}
