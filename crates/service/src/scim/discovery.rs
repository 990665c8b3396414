//! What the service provider tells a SCIM client about itself (RFC 7644 §4): its
//! configuration, its one resource type (`User`) and the schemas of what it returns.
//!
//! The schema declares exactly what a `User` representation holds (see
//! [`super::document::to_document`]), so that a client which trusts it writes what is kept and
//! reads back what it wrote: `userName` (unique, its case ignored), `displayName`, `title`,
//! `active`, and `emails` by value. `active` is declared required: recruitd keeps whether a
//! user may sign in, never that nobody said; a request without it means active.

use serde_json::{Value, json};

use super::{MAX_RESULTS, USER_SCHEMA};

/// The service provider configuration (RFC 7643 §5); `base` is the SCIM base URL.
pub fn service_provider_config(base: &str, documentation: &str) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
        "documentationUri": documentation,
        "patch": { "supported": true },
        "bulk": { "supported": false, "maxOperations": 0, "maxPayloadSize": 0 },
        "filter": { "supported": true, "maxResults": MAX_RESULTS },
        "changePassword": { "supported": false },
        "sort": { "supported": false },
        "etag": { "supported": false },
        "authenticationSchemes": [{
            "type": "oauthbearertoken",
            "name": "SCIM token",
            "description": "A bearer token of recruitd's SCIM kind (rsc_…), made by an \
                            operator with `recruitd token create --scim`.",
            "primary": true,
        }],
        "meta": {
            "resourceType": "ServiceProviderConfig",
            "location": format!("{}/ServiceProviderConfig", base.trim_end_matches('/')),
        },
    })
}

/// The `User` resource type (RFC 7643 §6).
pub fn user_resource_type(base: &str) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
        "id": "User",
        "name": "User",
        "endpoint": "/Users",
        "description": "A user of the organization the SCIM token belongs to.",
        "schema": USER_SCHEMA,
        "meta": {
            "resourceType": "ResourceType",
            "location": format!("{}/ResourceTypes/User", base.trim_end_matches('/')),
        },
    })
}

/// The schemas the resource types use (RFC 7643 §7), by id.
pub fn schemas(base: &str) -> Vec<Value> {
    vec![user_schema(base)]
}

fn attribute(name: &str, kind: &str, description: &str) -> Value {
    json!({
        "name": name,
        "type": kind,
        "multiValued": false,
        "description": description,
        "required": false,
        "caseExact": false,
        "mutability": "readWrite",
        "returned": "default",
        "uniqueness": "none",
    })
}

fn user_schema(base: &str) -> Value {
    let mut user_name = attribute(
        "userName",
        "string",
        "The name the identity provider knows the user by; unique in the organization, its \
         case ignored.",
    );
    user_name["required"] = json!(true);
    user_name["uniqueness"] = json!("server");
    let mut active = attribute(
        "active",
        "boolean",
        "Whether the user may sign in; false ends every credential.",
    );
    active["required"] = json!(true);
    let mut emails = attribute("emails", "complex", "The user's e-mail address.");
    emails["multiValued"] = json!(true);
    emails["subAttributes"] =
        json!([attribute("value", "string", "An e-mail address; the primary one is kept.")]);
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Schema"],
        "id": USER_SCHEMA,
        "name": "User",
        "description": "A user of the organization.",
        "attributes": [
            user_name,
            attribute("displayName", "string", "The user's name, as the console and the ledger show it."),
            attribute("title", "string", "The user's job title."),
            active,
            emails,
        ],
        "meta": {
            "resourceType": "Schema",
            "location": format!("{}/Schemas/{USER_SCHEMA}", base.trim_end_matches('/')),
        },
    })
}
