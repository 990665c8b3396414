//! User profiles (`GET` and `PATCH /v1/users/{userId}`): the rules of a change. The change is a
//! JSON Merge Patch (RFC 7396) over `name`, `title`, `manager` and `linkedin_url`, each field
//! checked with every problem reported at once; the precondition is `If-Match` with strong
//! comparison (RFC 9110 §13.1.1); the entity tag is a digest of the stored user.

use recruit_domain::model::{FieldSource, ProfileField, ProfileFieldSources};
use recruit_domain::{ErrorDetail, Timestamp, User, UserId};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The longest name and title, in characters.
pub const MAX_TEXT_LEN: usize = 200;

/// The longest LinkedIn URL, in characters.
pub const MAX_URL_LEN: usize = 2_048;

/// A valid merge patch: for each field, whether it is written and with what (`None` removes
/// a field that may be null).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProfilePatch {
    /// The new name.
    pub name: Option<String>,
    /// The new title, or none.
    pub title: Option<Option<String>>,
    /// The new manager, or none.
    pub manager: Option<Option<UserId>>,
    /// The new LinkedIn URL, or none.
    pub linkedin_url: Option<Option<String>>,
}

impl ProfilePatch {
    /// The fields the patch writes, in the API's order.
    pub fn fields(&self) -> Vec<ProfileField> {
        let written = [
            self.name.is_some(),
            self.title.is_some(),
            self.manager.is_some(),
            self.linkedin_url.is_some(),
        ];
        ProfileField::ALL.into_iter().zip(written).filter_map(|(f, w)| w.then_some(f)).collect()
    }

    /// The fields the patch writes that `sources` keep outside the API, with their source:
    /// a change of any of them is refused, whatever its value (spec §7.2).
    pub fn sync_managed(&self, sources: &ProfileFieldSources) -> Vec<(ProfileField, FieldSource)> {
        self.fields().into_iter().filter_map(|f| Some((f, sources.sync_source(f)?))).collect()
    }

    /// `user` with the patch applied, changed at `now` when any value changes (and then at
    /// least a microsecond after its last change, so that every change has its own time and
    /// its own entity tag); unchanged, time included, otherwise.
    pub fn apply(&self, user: &User, now: Timestamp) -> User {
        let mut changed = user.clone();
        if let Some(name) = &self.name {
            changed.name.clone_from(name);
        }
        if let Some(title) = &self.title {
            changed.title.clone_from(title);
        }
        if let Some(manager) = self.manager {
            changed.manager = manager;
        }
        if let Some(url) = &self.linkedin_url {
            changed.linkedin_url.clone_from(url);
        }
        if changed != *user {
            let after = Timestamp::from_unix_micros(user.updated_at.unix_micros() + 1)
                .unwrap_or(user.updated_at);
            changed.updated_at = now.max(after);
        }
        changed
    }
}

/// The merge patch of a request body, each field checked; every problem is pushed to
/// `problems`. `None` when there is any.
pub fn patch(body: &Value, problems: &mut Vec<ErrorDetail>) -> Option<ProfilePatch> {
    let before = problems.len();
    let Some(object) = body.as_object() else {
        problems.push(ErrorDetail::field(
            "body",
            "must be a JSON object: a merge patch of name, title, manager and linkedin_url",
        ));
        return None;
    };
    let mut patch = ProfilePatch::default();
    for (name, value) in object {
        match ProfileField::from_name(name) {
            Some(ProfileField::Name) => match value {
                Value::Null => {
                    problems.push(ErrorDetail::field(name, "cannot be removed: a user has a name"))
                }
                value => patch.name = text(value, name, problems),
            },
            Some(ProfileField::Title) => {
                patch.title = nullable(value, |v| text(v, name, problems));
            }
            Some(ProfileField::Manager) => {
                patch.manager = nullable(value, |v| match v.as_str().map(UserId::parse) {
                    Some(Ok(id)) => Some(id),
                    Some(Err(e)) => {
                        problems.push(ErrorDetail::field(name, e));
                        None
                    }
                    None => {
                        problems.push(ErrorDetail::field(name, "must be a user ID or null"));
                        None
                    }
                });
            }
            Some(ProfileField::LinkedinUrl) => {
                patch.linkedin_url = nullable(value, |v| https_url(v, name, problems));
            }
            None if READ_ONLY.contains(&name.as_str()) => problems.push(ErrorDetail::field(
                name,
                "cannot be changed through the API; the fields that can are name, title, \
                 manager and linkedin_url",
            )),
            None => problems.push(ErrorDetail::field(
                crate::problems::shorten(name),
                "is not a field of a user; the fields that can be changed are name, title, \
                 manager and linkedin_url",
            )),
        }
    }
    (problems.len() == before).then_some(patch)
}

/// The fields of a user that the API shows but does not change.
const READ_ONLY: [&str; 7] = ["id", "email", "role", "created_at", "updated_at", "app_url", "etag"];

/// A field that may be null: `Some(None)` for null, `Some(Some(v))` for a valid value, `None`
/// for an invalid one (the check pushed its problem).
fn nullable<T>(value: &Value, check: impl FnOnce(&Value) -> Option<T>) -> Option<Option<T>> {
    match value {
        Value::Null => Some(None),
        value => check(value).map(Some),
    }
}

/// A name or a title: 1 to [`MAX_TEXT_LEN`] characters, not only spaces, no control
/// characters.
fn text(value: &Value, name: &str, problems: &mut Vec<ErrorDetail>) -> Option<String> {
    let reason = match value.as_str() {
        None => "must be a string",
        Some(s) if s.trim().is_empty() => "must not be empty or only spaces",
        Some(s) if s.chars().count() > MAX_TEXT_LEN => "must be at most 200 characters",
        Some(s) if s.chars().any(char::is_control) => "must not contain control characters",
        Some(s) => return Some(s.to_owned()),
    };
    problems.push(ErrorDetail::field(name, reason));
    None
}

/// An absolute `https` URL with a host and no credentials, at most [`MAX_URL_LEN`] characters,
/// without spaces or control characters, kept as given. The scheme is checked as written
/// (`https://`, lowercase), so that the rule is exactly the OpenAPI document's pattern, and
/// then the whole URL by a URL parser.
fn https_url(value: &Value, name: &str, problems: &mut Vec<ErrorDetail>) -> Option<String> {
    let Some(s) = value.as_str() else {
        return push(problems, name, "must be an https URL or null");
    };
    let authority = s.strip_prefix("https://").map(|rest| rest.split(['/', '?', '#']).next());
    let reason = match authority.flatten() {
        _ if s.chars().count() > MAX_URL_LEN => "must be at most 2048 characters",
        None => "must be an https URL (https://…)",
        Some("") => "must name a host",
        Some(authority) if authority.contains('@') => "must not carry a user name or password",
        Some(_) if s.chars().any(|c| c.is_control() || c.is_whitespace()) => {
            "must not contain spaces or control characters"
        }
        Some(_) => match url::Url::parse(s) {
            Err(e) => return push(problems, name, format!("is not a URL: {e}")),
            Ok(u) if u.host_str().is_none_or(str::is_empty) => "must name a host",
            Ok(_) => return Some(s.to_owned()),
        },
    };
    push(problems, name, reason)
}

fn push<T>(
    problems: &mut Vec<ErrorDetail>,
    name: &str,
    reason: impl std::fmt::Display,
) -> Option<T> {
    problems.push(ErrorDetail::field(name, reason));
    None
}

/// The strong entity tag of a stored user: a digest of every stored field, so that it changes
/// with any of them (and `updated_at` changes with every change).
pub fn etag(user: &User) -> String {
    let mut hash = Sha256::new();
    // Serialized, the user is every field, in a fixed order; it cannot fail.
    hash.update(serde_json::to_vec(user).unwrap_or_default());
    let digest = hash.finalize();
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

/// An `If-Match` precondition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IfMatch {
    /// `*`: any current representation.
    Any,
    /// Entity tags: strong ones as `"…"`, a weak one kept as `W/"…"` (it never matches).
    Tags(Vec<String>),
}

impl IfMatch {
    /// Parses a field value, `*` or a comma-separated list of entity tags (RFC 9110
    /// §13.1.1); for a tool's argument, one entity tag. `name` names it in a problem.
    pub fn parse(value: &str, name: &str) -> Result<Self, ErrorDetail> {
        let value = value.trim_matches([' ', '\t']);
        if value == "*" {
            return Ok(Self::Any);
        }
        let invalid = || {
            ErrorDetail::field(
                name,
                "must be * or a list of entity tags such as \"3f1c…\", as the ETag header and \
                 the profile's etag give them",
            )
        };
        let mut tags = vec![];
        let mut rest = value;
        loop {
            rest = rest.trim_start_matches([' ', '\t']);
            let (weak, tail) = match rest.strip_prefix("W/") {
                Some(tail) => (true, tail),
                None => (false, rest),
            };
            let tail = tail.strip_prefix('"').ok_or_else(invalid)?;
            let end = tail.find('"').ok_or_else(invalid)?;
            let opaque = &tail[..end];
            // etagc: %x21 / %x23-7E / obs-text.
            if opaque.bytes().any(|b| b < 0x21 || b == 0x7f) {
                return Err(invalid());
            }
            tags.push(if weak { format!("W/\"{opaque}\"") } else { format!("\"{opaque}\"") });
            rest = tail[end + 1..].trim_start_matches([' ', '\t']);
            if rest.is_empty() {
                break;
            }
            // Empty elements of the list are allowed (RFC 9110 §5.6.1.2).
            rest = rest.strip_prefix(',').ok_or_else(invalid)?.trim_start_matches([' ', '\t', ',']);
            if rest.is_empty() {
                break;
            }
        }
        Ok(Self::Tags(tags))
    }

    /// Whether the precondition holds for the current entity tag `etag`: strong comparison,
    /// so a weak tag never matches.
    pub fn matches(&self, etag: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Tags(tags) => tags.iter().any(|t| t == etag),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems_of(body: Value) -> Vec<(String, String)> {
        let mut problems = vec![];
        assert_eq!(patch(&body, &mut problems), None, "{body}");
        problems
            .iter()
            .map(|p| (p.get("field").unwrap().to_owned(), p.get("reason").unwrap().to_owned()))
            .collect()
    }

    #[test]
    fn a_merge_patch_writes_what_it_names_and_null_removes() {
        let mut problems = vec![];
        let p = patch(
            &json!({"title": null, "name": "Ada Park", "manager": "USR_0190C7D8E4A27CC3B1F0A2D4E6F80021",
                    "linkedin_url": "https://www.linkedin.com/in/ada"}),
            &mut problems,
        )
        .unwrap();
        assert!(problems.is_empty());
        assert_eq!(p.name.as_deref(), Some("Ada Park"));
        assert_eq!(p.title, Some(None));
        assert_eq!(
            p.manager.flatten().map(|m| m.to_string()).as_deref(),
            Some("usr_0190c7d8e4a27cc3b1f0a2d4e6f80021")
        );
        assert_eq!(p.fields(), ProfileField::ALL);
        assert_eq!(patch(&json!({}), &mut problems), Some(ProfilePatch::default()));
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let problems = problems_of(json!({
            "name": null,
            "title": "",
            "manager": "job_0190c7d8e4a27cc3b1f0a2d4e6f80021",
            "linkedin_url": "http://www.linkedin.com/in/ada",
            "email": "x@example.com",
            "nickname": "x",
        }));
        let fields: Vec<&str> = problems.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(fields, ["email", "linkedin_url", "manager", "name", "nickname", "title"]);
        assert!(problems[0].1.contains("cannot be changed"), "{problems:?}");
        assert!(problems[4].1.contains("is not a field of a user"), "{problems:?}");
        assert_eq!(problems_of(json!([1]))[0].0, "body");
    }

    #[test]
    fn texts_and_urls_are_bounded_and_clean() {
        for (body, field) in [
            (json!({"name": "a".repeat(201)}), "name"),
            (json!({"name": "   "}), "name"),
            (json!({"title": "a\u{0}b"}), "title"),
            (json!({"title": 5}), "title"),
            (json!({"linkedin_url": "https://user:pw@linkedin.com/in/x"}), "linkedin_url"),
            (json!({"linkedin_url": "linkedin.com/in/x"}), "linkedin_url"),
            (json!({"linkedin_url": "HTTPS://linkedin.com/in/x"}), "linkedin_url"),
            (json!({"linkedin_url": "https://@linkedin.com/in/x"}), "linkedin_url"),
            (json!({"linkedin_url": "https://linkedin.com/in/a b"}), "linkedin_url"),
            (json!({"linkedin_url": "https://exa mple.com"}), "linkedin_url"),
            (
                json!({"linkedin_url": format!("https://x.example/{}", "a".repeat(2048))}),
                "linkedin_url",
            ),
            (json!({"manager": 7}), "manager"),
        ] {
            assert_eq!(problems_of(body.clone())[0].0, field, "{body}");
        }
        let mut problems = vec![];
        let p = patch(&json!({"name": "a".repeat(200), "title": "Über-Engineer"}), &mut problems);
        assert!(p.is_some(), "{problems:?}");
    }

    #[test]
    fn if_match_is_a_star_or_a_list_of_tags_compared_strongly() {
        let tags = IfMatch::parse(r#" "a", W/"b" ,"c,d" "#, "If-Match").unwrap();
        assert_eq!(tags, IfMatch::Tags(vec!["\"a\"".into(), "W/\"b\"".into(), "\"c,d\"".into()]));
        assert!(tags.matches("\"a\"") && tags.matches("\"c,d\""));
        assert!(!tags.matches("\"b\""), "a weak tag never matches");
        assert_eq!(IfMatch::parse("*", "If-Match"), Ok(IfMatch::Any));
        for bad in ["", "a", "\"a", "\"a\" \"b\"", "\"a\";", "W/a", "\"a b\""] {
            assert!(IfMatch::parse(bad, "if_match").is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_entity_tag_changes_with_any_field_and_only_a_real_change_moves_the_time() {
        let user = recruit_ports::testkit::world_user(0xA, recruit_domain::model::Role::Member);
        let now = user.updated_at;
        let same = ProfilePatch { name: Some(user.name.clone()), ..Default::default() };
        assert_eq!(same.apply(&user, now), user, "writing the same value changes nothing");
        let renamed = ProfilePatch { name: Some("New".into()), ..Default::default() };
        let changed = renamed.apply(&user, now);
        assert!(changed.updated_at > user.updated_at, "a change has its own time");
        assert_ne!(etag(&changed), etag(&user));
        assert!(etag(&user).starts_with('"') && etag(&user).len() == 34);
    }
}
