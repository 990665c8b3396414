//! Tests of recording accesses ([`super`]): validation, keys and what is stored.

use serde_json::json;

use super::*;

fn now() -> Timestamp {
    Timestamp::parse("2026-11-23T12:00:00Z").unwrap()
}

fn good() -> Value {
    json!({
        "access_time": "2026-11-23T11:59:00Z",
        "account_id": "0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e",
        "ip_addresses": ["203.0.113.7", "2001:DB8::1"],
        "data_subject": {"type": "EMPLOYEE", "user": "usr_0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e"},
        "access_data": ["NAME", "EMAIL_ADDRESS"],
        "access_menu": "Candidates",
        "access_menu_path": "/candidates/list",
        "activity_category": "READ"
    })
}

/// The entries of `body`, written as JSON text.
fn entries(body: &Value, now: Timestamp, problems: &mut Vec<ErrorDetail>) -> Option<Vec<NewEntry>> {
    read("op", body.to_string().as_bytes(), now, problems).map(|batch| batch.entries)
}

fn problems_of(body: Value) -> Vec<(String, String)> {
    problems_of_text(&body.to_string())
}

fn problems_of_text(body: &str) -> Vec<(String, String)> {
    let mut problems = vec![];
    assert!(
        read("op", body.as_bytes(), now(), &mut problems).is_none(),
        "{body} should be refused"
    );
    problems
        .iter()
        .map(|d| {
            (d.get("field").unwrap_or("").to_owned(), d.get("reason").unwrap_or("").to_owned())
        })
        .collect()
}

#[test]
fn valid_entries_are_read_in_canonical_form() {
    let mut with_id = good();
    with_id["id"] = json!("0B7C5D1E-6F8A-4B3C-9D2E-1F0A1B2C3D4E");
    let mut problems = vec![];
    let read = entries(&json!({"entries": [good(), with_id]}), now(), &mut problems).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(read[0].id, None);
    assert_eq!(read[1].id.unwrap().to_string(), "pal_0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e");
    assert_eq!(read[0].entry.ip_addresses, ["203.0.113.7", "2001:db8::1"]);
}

#[test]
fn every_problem_of_every_entry_is_reported_at_once_with_its_path() {
    let mut bad = good();
    bad["access_time"] = json!("yesterday");
    bad["ip_addresses"] = json!(["203.0.113.7", "not an address"]);
    bad["data_subject"] = json!({"type": "BULK", "bulk_count": 2, "query": {"type": "CANDIDATE_IDS", "ids": ["can_1"]}});
    bad["access_data"] = json!([]);
    bad["colour"] = json!("red");
    let mut future = good();
    future["access_time"] = json!("2026-11-23T12:05:01Z");
    let mut missing = good();
    missing.as_object_mut().unwrap().remove("access_menu");
    let fields: Vec<String> = problems_of(json!({"entries": [good(), bad, future, missing]}))
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(
        fields,
        [
            "entries[1].colour",
            "entries[1].access_time",
            "entries[1].ip_addresses[1]",
            "entries[1].data_subject",
            "entries[1].access_data",
            "entries[2].access_time",
            "entries[3].access_menu",
        ]
    );
}

#[test]
fn a_count_written_with_a_zero_fraction_is_an_integer() {
    let mut entry = good();
    entry["data_subject"] = json!({"type": "BULK", "bulk_count": 9999.0,
        "query": {"type": "SCOPE", "scope": "ALL_ORG_EMPLOYEES"}});
    let mut problems = vec![];
    let read = entries(&json!({"entries": [entry.clone()]}), now(), &mut problems).unwrap();
    assert!(matches!(read[0].entry.data_subject, DataSubject::Bulk { bulk_count: Some(9999), .. }));
    entry["data_subject"]["bulk_count"] = json!(9999.5);
    assert_eq!(problems_of(json!({"entries": [entry]}))[0].0, "entries[0].data_subject");
}

#[test]
fn a_large_count_with_a_zero_fraction_is_read_exactly() {
    // Above 2^51 a double's step is 0.5: a parser that is off by one step reads this as
    // 3663933135210398.5, which is no integer.
    let mut entry = good();
    entry["data_subject"] = json!({"type": "BULK", "bulk_count": "COUNT",
        "query": {"type": "SCOPE", "scope": "ALL_ORG_EMPLOYEES"}});
    let text = json!({"entries": [entry]}).to_string().replace("\"COUNT\"", "3663933135210398.0");
    let mut problems = vec![];
    let read = read("op", text.as_bytes(), now(), &mut problems).map(|b| b.entries);
    assert_eq!(problems, vec![]);
    assert!(matches!(
        read.unwrap()[0].entry.data_subject,
        DataSubject::Bulk { bulk_count: Some(3_663_933_135_210_398), .. }
    ));
}

#[test]
fn no_text_holds_the_nul_character() {
    let mut bad = good();
    bad["data_subject"] = json!({"type": "BULK", "bulk_count": null,
        "query": {"type": "CANDIDATE_SEARCH", "values": ["ok", "a\0b"]}});
    assert_eq!(
        problems_of(json!({"entries": [bad]})),
        [(
            "entries[0].data_subject.query.values[1]".into(),
            "must not contain the NUL character".into()
        )]
    );
}

#[test]
fn the_batch_is_one_to_a_thousand_entries_with_distinct_ids() {
    assert_eq!(problems_of(json!({"entries": []}))[0].0, "entries");
    let many: Vec<Value> = (0..=MAX_ENTRIES).map(|_| good()).collect();
    assert!(problems_of(json!({"entries": many}))[0].1.contains("1 to 1000"));
    assert_eq!(problems_of(json!({}))[0], ("entries".into(), "is required".into()));
    assert_eq!(problems_of(json!([]))[0].0, "body");
    assert_eq!(problems_of(json!({"entries": {}}))[0].0, "entries");
    assert_eq!(
        problems_of(json!({"entries": [good()], "more": 1})),
        [("more".into(), "is not a field of this request".into())]
    );
    let mut a = good();
    a["id"] = json!("pal_0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e");
    let b = a.clone();
    assert_eq!(
        problems_of(json!({"entries": [a, b]})),
        [("entries[1].id".into(), "repeats entries[0].id".into())]
    );
}

#[test]
fn keys_are_one_to_255_printable_characters() {
    assert!(check_key("a", "Idempotency-Key").is_ok());
    assert!(check_key(&"k".repeat(255), "Idempotency-Key").is_ok());
    assert!(check_key(&"k".repeat(256), "Idempotency-Key").is_err());
    assert!(check_key("", "idempotency_key").is_err());
    assert!(check_key("tab\there", "idempotency_key").is_err());
}

#[test]
fn the_fingerprint_ignores_formatting_and_key_order_but_not_content() {
    let a: Value = serde_json::from_str(r#"{"entries": [{"b": 1, "a": [1, 2]}]}"#).unwrap();
    let b: Value = serde_json::from_str(r#"{"entries":[{"a":[1,2],"b":1}]}"#).unwrap();
    let c: Value = serde_json::from_str(r#"{"entries":[{"a":[2,1],"b":1}]}"#).unwrap();
    assert_eq!(fingerprint("op", &a), fingerprint("op", &b));
    assert_ne!(fingerprint("op", &a), fingerprint("op", &c));
    assert_ne!(fingerprint("op", &a), fingerprint("other", &a));
}

#[test]
fn a_body_read_entry_by_entry_has_the_fingerprint_of_its_document() {
    // Keys claimed by a server that read whole documents still match.
    let mut later = good();
    later["access_menu"] = json!("People");
    let text = format!(
        "{{ \"entries\" : [ {},\n{} ] }}",
        serde_json::to_string_pretty(&good()).unwrap(),
        later
    );
    let document: Value = serde_json::from_str(&text).unwrap();
    let batch = read("op", text.as_bytes(), now(), &mut vec![]).unwrap();
    assert_eq!(batch.entries.len(), 2);
    assert_eq!(batch.fingerprint, fingerprint("op", &document));
    let one = read("op", json!({"entries": [good()]}).to_string().as_bytes(), now(), &mut vec![]);
    assert_ne!(one.unwrap().fingerprint, batch.fingerprint);
}

#[test]
fn a_body_that_is_not_json_is_one_problem() {
    let broken = format!("{{\"entries\": [{}, {{\"access_time\": 1}}", good());
    let problems = problems_of_text(&broken);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].0, "body");
    assert!(problems[0].1.starts_with("is not valid JSON"), "{problems:?}");
    assert_eq!(problems_of_text(&format!("{} x", json!({"entries": [good()]})))[0].0, "body");
    assert_eq!(
        problems_of_text(r#"{"entries": [], "entries": []}"#),
        [
            ("entries".into(), "is given more than once".into()),
            ("entries".into(), "must hold 1 to 1000 entries; it holds 0".into())
        ]
    );
}
