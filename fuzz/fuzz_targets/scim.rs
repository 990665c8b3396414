//! Fuzz target: what a SCIM client sends. A body read as a User, as a PatchOp applied to a
//! user, or as a search request, and a text read as a filter or a query string: never a panic,
//! and a patch that succeeds leaves a JSON object whose fields are read like any body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recruit_service::scim::{ListParams, document, filter, patch};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = filter::parse(text);
    let _ = ListParams::from_query(text);
    let _ = document::attribute(text);
    let Ok(body) = serde_json::from_str::<serde_json::Value>(text) else { return };
    let _ = document::fields(&body);
    let _ = ListParams::from_search(&body);
    let user = serde_json::json!({
        "schemas": [recruit_service::scim::USER_SCHEMA],
        "id": "usr_0190c7d8e4a27cc3b1f0a2d4e6f80002",
        "userName": "kim@example.com",
        "displayName": "김민지",
        "active": true,
        "emails": [{"value": "kim@example.com"}],
    });
    if let Ok(patched) = patch::apply(&user, &body) {
        assert!(patched.is_object(), "a patch leaves an object: {patched}");
        let _ = document::fields(&patched);
        let _ = document::project(patched, &["userName".into()], &["emails".into()]);
    }
});
