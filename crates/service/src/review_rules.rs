//! An organization's review rules as the API sets them: the body's members, each checked,
//! those left out taking their defaults ([`recruit_domain::model::ReviewRules`]).

use recruit_domain::ErrorDetail;
use recruit_domain::model::ReviewRules;
use serde_json::Value;

/// The members of a body of rules, as the operation declares them.
pub const MEMBERS: [&str; 9] = [
    "holidays",
    "outside_hours_accesses",
    "outside_hours_percent",
    "bulk_records",
    "downloads",
    "new_ip_addresses",
    "explanation_days",
    "daily_volume_factor",
    "daily_volume_min",
];

/// The rules of `body`, a JSON object of [`MEMBERS`] only, checked: every problem is noted.
pub fn rules_body(body: &[u8], problems: &mut Vec<ErrorDetail>) -> Option<ReviewRules> {
    let before = problems.len();
    let mut members = crate::sign_off::object(body, &MEMBERS, problems)?;
    // JSON has one kind of number: a count written `5.0` is the count 5.
    for value in members.values_mut() {
        if let Some(f) = value.as_f64().filter(|f| value.is_f64() && f.fract() == 0.0)
            && (0.0..=9.0e15).contains(&f)
        {
            *value = Value::from(f as u64);
        }
    }
    for name in MEMBERS {
        let mut one = serde_json::Map::new();
        if let Some(value) = members.get(name) {
            one.insert(name.to_owned(), value.clone());
        }
        if let Err(e) = serde_json::from_value::<ReviewRules>(Value::Object(one)) {
            problems.push(ErrorDetail::field(name, e.to_string()));
        }
    }
    if problems.len() > before {
        return None;
    }
    let rules: ReviewRules = serde_json::from_value(Value::Object(members)).ok()?;
    if let Some(why) = rules.problem() {
        let name = why.split(' ').next().unwrap_or("body");
        problems.push(ErrorDetail::field(name, why));
        return None;
    }
    Some(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_left_out_take_their_defaults_and_each_problem_is_named() {
        let mut problems = vec![];
        let rules = rules_body(br#"{"downloads": 2, "holidays": ["2026-10-09"]}"#, &mut problems);
        let rules = rules.expect("rules");
        assert_eq!((rules.downloads, rules.bulk_records), (2, ReviewRules::DEFAULT.bulk_records));
        let body = br#"{"downloads": -1, "holidays": ["10/09"], "download": 2}"#;
        assert!(rules_body(body, &mut problems).is_none());
        let fields: Vec<&str> = problems.iter().filter_map(|p| p.get("field")).collect();
        assert_eq!(fields, ["download", "holidays", "downloads"]);
        let mut problems = vec![];
        assert!(rules_body(br#"{"outside_hours_percent": 101}"#, &mut problems).is_none());
        assert_eq!(problems[0].get("field"), Some("outside_hours_percent"));
        let mut problems = vec![];
        let whole = rules_body(br#"{"downloads": 4.0}"#, &mut problems).expect("a whole number");
        assert_eq!(whole.downloads, 4);
        assert!(rules_body(br#"{"downloads": 4.5}"#, &mut problems).is_none());
        assert!(rules_body(br#"{"bulk_records": 1e23}"#, &mut problems).is_none());
        assert!(rules_body(br#"{"bulk_records": 1000000000001}"#, &mut problems).is_none());
        let mut problems = vec![];
        assert!(rules_body(b"[]", &mut problems).is_none());
        assert_eq!(problems[0].get("field"), Some("body"));
    }
}
