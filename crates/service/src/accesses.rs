//! Recording accesses to personal data (`POST /v1/audit-logs/privacy`): the rules of the
//! request: its idempotency key, its body of 1 to 1 000 entries each checked field by field
//! with every problem reported at once, the fingerprint that tells one request from another,
//! and the entries as stored.

use std::net::IpAddr;
use std::time::Duration;

use recruit_domain::model::{AccessData, ActivityCategory, DataSubject};
use recruit_domain::{AccountId, ErrorDetail, PrivacyAuditLog, PrivacyAuditLogId, Timestamp};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The most entries one request records.
pub const MAX_ENTRIES: usize = 1_000;

/// The longest idempotency key, in characters (draft-ietf-httpapi-idempotency-key-header).
pub const MAX_KEY_LEN: usize = 255;

/// How far in the future an entry's `access_time` may be: the domain's rule
/// ([`recruit_domain::PrivacyAuditLog::FUTURE_TOLERANCE`]).
pub const FUTURE_TOLERANCE: Duration = recruit_domain::PrivacyAuditLog::FUTURE_TOLERANCE;

/// The most IP addresses one entry records.
pub const MAX_IP_ADDRESSES: usize = 16;

/// The longest `access_menu` and `access_menu_path`, in characters.
pub const MAX_MENU_LEN: usize = 500;

/// The fields of an entry; `id` may be left out.
const FIELDS: [&str; 10] = [
    "id",
    "access_time",
    "account_id",
    "ip_addresses",
    "data_subject",
    "access_data",
    "access_menu",
    "access_menu_path",
    "activity_category",
    "purpose",
];

/// An entry to record, valid; without an `id` the server assigns one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEntry {
    /// The client's id, in canonical form, if it gave one.
    pub id: Option<PrivacyAuditLogId>,
    /// The entry, with a placeholder id when the client gave none.
    pub entry: PrivacyAuditLog,
}

/// Checks an idempotency key as received (the transport has taken it out of its syntax): 1 to
/// [`MAX_KEY_LEN`] printable ASCII characters. `field` names it as the client sent it.
pub fn check_key(key: &str, field: &str) -> Result<(), ErrorDetail> {
    let len = key.chars().count();
    if len == 0 || len > MAX_KEY_LEN {
        return Err(ErrorDetail::field(
            field,
            format!("must be 1 to {MAX_KEY_LEN} characters; it has {len}"),
        ));
    }
    if !key.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(ErrorDetail::field(field, "must be printable ASCII characters"));
    }
    Ok(())
}

/// The fingerprint of a request: the SHA-256 of the operation's name and its body as
/// normalised JSON (object keys sorted, no insignificant whitespace), so that the same request
/// sent again with other formatting is the same request.
pub fn fingerprint(operation: &str, body: &Value) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(operation.as_bytes());
    hash.update(b"\n");
    // serde_json's map is ordered by key, so this is the normalised form; it is written
    // straight into the hash.
    // Writing into a hash does not fail, nor does serializing a JSON value.
    let _ = serde_json::to_writer(HashWriter(&mut hash), body);
    hash.finalize().into()
}

/// A hash as an `io::Write`.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A batch read from a request body with no problem: its entries, and the request's
/// [`fingerprint`].
#[derive(Debug)]
pub struct Batch {
    /// The entries, in the order sent.
    pub entries: Vec<NewEntry>,
    /// The request's fingerprint, the same as [`fingerprint`] of the body's document.
    pub fingerprint: [u8; 32],
}

/// Reads a request body, the JSON text `{"entries": [ … ]}`, one entry at a time: no JSON tree
/// of the whole body is built, only one entry's at once, each checked field by field. Every
/// problem of every entry is pushed to `problems` with its path (`entries[3].access_time`);
/// `None` when there is any. The fingerprint of `operation` is computed while reading.
pub fn read(
    operation: &str,
    body: &[u8],
    now: Timestamp,
    problems: &mut Vec<ErrorDetail>,
) -> Option<Batch> {
    let mut hash = Sha256::new();
    hash.update(operation.as_bytes());
    hash.update(b"\n");
    let mut reader = Reader {
        latest: now.checked_add_duration(FUTURE_TOLERANCE).unwrap_or(Timestamp::MAX),
        problems: vec![],
        entry_problems: vec![],
        hash,
        entries: vec![],
        seen: std::collections::HashMap::new(),
        reading: Reading::Body,
    };
    let mut json = serde_json::Deserializer::from_slice(body);
    let read =
        serde::Deserializer::deserialize_map(&mut json, &mut reader).and_then(|()| json.end());
    let before = problems.len();
    // The body's own problems first, then those of `entries`, whatever their order in it.
    problems.append(&mut reader.problems);
    problems.append(&mut reader.entry_problems);
    match read {
        Ok(()) => {}
        // A value of the wrong kind where the body or the list of entries must be.
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            problems.push(reader.reading.wrong_kind());
        }
        Err(e) => {
            problems.truncate(before);
            problems.push(crate::problems::not_json(&e));
        }
    }
    (problems.len() == before)
        .then(|| Batch { entries: reader.entries, fingerprint: reader.hash.finalize().into() })
}

/// The state of [`read`].
struct Reader {
    /// The latest `access_time` accepted.
    latest: Timestamp,
    /// The problems of the body found so far.
    problems: Vec<ErrorDetail>,
    /// The problems of `entries` found so far.
    entry_problems: Vec<ErrorDetail>,
    /// The fingerprint, fed the body's normalised form as it is read.
    hash: Sha256,
    /// The valid entries read so far.
    entries: Vec<NewEntry>,
    /// Where each client-given id was first seen.
    seen: std::collections::HashMap<PrivacyAuditLogId, usize>,
    /// What is being read.
    reading: Reading,
}

/// What [`read`] is reading, so that a value of the wrong kind is reported where it is.
#[derive(Clone, Copy)]
enum Reading {
    /// The body, which must be an object.
    Body,
    /// The value of `entries`, which must be an array.
    Entries,
}

impl Reading {
    fn wrong_kind(self) -> ErrorDetail {
        match self {
            Self::Body => ErrorDetail::field("body", "must be a JSON object with `entries`"),
            Self::Entries => ErrorDetail::field("entries", "must be an array of entries"),
        }
    }
}

impl<'de> serde::de::Visitor<'de> for &mut Reader {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object with `entries`")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut given = false;
        while let Some(name) = map.next_key::<String>()? {
            if name == "entries" && !given {
                given = true;
                self.reading = Reading::Entries;
                map.next_value_seed(Entries(&mut *self))?;
                self.reading = Reading::Body;
                continue;
            }
            let reason = if name == "entries" {
                "is given more than once"
            } else {
                "is not a field of this request"
            };
            self.problems.push(ErrorDetail::field(name, reason));
            map.next_value::<serde::de::IgnoredAny>()?;
        }
        if !given {
            self.problems.push(ErrorDetail::field("entries", "is required"));
        }
        Ok(())
    }
}

/// The value of `entries`, read element by element into [`Reader`].
struct Entries<'r>(&'r mut Reader);

impl<'de> serde::de::DeserializeSeed<'de> for Entries<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, value: D) -> Result<(), D::Error> {
        value.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Entries<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of entries")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut list: A) -> Result<(), A::Error> {
        let reader = self.0;
        // The problems of the entries count only if their number is right.
        let mut problems = vec![];
        let mut count = 0;
        reader.hash.update(b"{\"entries\":[");
        loop {
            if count >= MAX_ENTRIES {
                // Past the limit the request is refused: the rest is only counted.
                match list.next_element::<serde::de::IgnoredAny>()? {
                    Some(_) => count += 1,
                    None => break,
                }
                continue;
            }
            let Some(value) = list.next_element::<Value>()? else { break };
            if count > 0 {
                reader.hash.update(b",");
            }
            // Writing into a hash does not fail, nor does serializing a JSON value; a map
            // of serde_json is ordered by key, so this is the normalised form.
            let _ = serde_json::to_writer(HashWriter(&mut reader.hash), &value);
            let at = At::Entry(count);
            match value.as_object() {
                None => problems.push(ErrorDetail::field(at.to_string(), "must be an object")),
                Some(fields) => {
                    if let Some(entry) = entry(fields, &at, reader.latest, &mut problems) {
                        if let Some(first) = entry.id.and_then(|id| reader.seen.insert(id, count)) {
                            problems.push(ErrorDetail::field(
                                format!("{at}.id"),
                                format!("repeats entries[{first}].id"),
                            ));
                        }
                        reader.entries.push(entry);
                    }
                }
            }
            count += 1;
        }
        reader.hash.update(b"]}");
        if (1..=MAX_ENTRIES).contains(&count) {
            reader.entry_problems.append(&mut problems);
        } else {
            reader.entries.clear();
            reader.entry_problems.push(ErrorDetail::field(
                "entries",
                format!("must hold 1 to {MAX_ENTRIES} entries; it holds {count}"),
            ));
        }
        Ok(())
    }
}

/// Where a value is in the request, written out only for a problem: a request of 1 000 valid
/// entries builds no path at all.
#[derive(Clone, Copy)]
enum At<'a> {
    /// `entries[i]`.
    Entry(usize),
    /// `{parent}.{name}`.
    Field(&'a At<'a>, &'a str),
    /// `{parent}[i]`.
    Item(&'a At<'a>, usize),
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Entry(i) => write!(f, "entries[{i}]"),
            Self::Field(parent, name) => write!(f, "{parent}.{name}"),
            Self::Item(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// One entry's fields, each parsed on its own so that every problem is found.
fn entry(
    fields: &Map<String, Value>,
    at: &At<'_>,
    latest: Timestamp,
    problems: &mut Vec<ErrorDetail>,
) -> Option<NewEntry> {
    let before = problems.len();
    for (name, value) in fields {
        nul_free(value, &At::Field(at, name), problems);
    }
    if problems.len() > before {
        return None;
    }
    for name in fields.keys().filter(|k| !FIELDS.contains(&k.as_str())) {
        problems.push(ErrorDetail::field(format!("{at}.{name}"), "is not a field of an entry"));
    }
    // Optional: the purpose the access was for, in the words of whoever accessed.
    let purpose = fields.get("purpose").filter(|v| !v.is_null());
    let purpose = purpose.and_then(|v| text(v, &At::Field(at, "purpose"), problems));
    let mut field = |name: &str| -> Option<&Value> {
        let value = fields.get(name);
        if value.is_none() && name != "id" {
            problems.push(ErrorDetail::field(format!("{at}.{name}"), "is required"));
        }
        value
    };
    let (id, access_time, account_id, ips, subject, data, menu, path, category) = (
        field("id"),
        field("access_time"),
        field("account_id"),
        field("ip_addresses"),
        field("data_subject"),
        field("access_data"),
        field("access_menu"),
        field("access_menu_path"),
        field("activity_category"),
    );
    let id = id.and_then(|v| parse::<PrivacyAuditLogId>(v, &At::Field(at, "id"), problems));
    let time_at = At::Field(at, "access_time");
    let access_time = access_time.and_then(|v| parse::<Timestamp>(v, &time_at, problems));
    if let Some(t) = access_time.filter(|t| *t > latest) {
        problems.push(ErrorDetail::field(
            time_at.to_string(),
            format!(
                "is more than {} minutes in the future ({t}); an access is recorded when it \
                 happens",
                FUTURE_TOLERANCE.as_secs() / 60
            ),
        ));
    }
    let account_id =
        account_id.and_then(|v| parse::<AccountId>(v, &At::Field(at, "account_id"), problems));
    let ips = ips.and_then(|v| ip_addresses(v, &At::Field(at, "ip_addresses"), problems));
    let subject = subject.and_then(|v| {
        parse::<DataSubject>(&integral_count(v), &At::Field(at, "data_subject"), problems)
    });
    if let Some(DataSubject::Bulk { bulk_count: Some(n), .. }) = &subject
        && i64::try_from(*n).is_err()
    {
        problems.push(ErrorDetail::field(
            format!("{at}.data_subject.bulk_count"),
            format!("must be at most {}", i64::MAX),
        ));
    }
    let data_at = At::Field(at, "access_data");
    let data = data.and_then(|v| parse::<Vec<AccessData>>(v, &data_at, problems));
    if data.as_ref().is_some_and(Vec::is_empty) {
        problems.push(ErrorDetail::field(data_at.to_string(), "must name at least one category"));
    }
    let menu = menu.and_then(|v| text(v, &At::Field(at, "access_menu"), problems));
    let path = path.and_then(|v| text(v, &At::Field(at, "access_menu_path"), problems));
    let category = category.and_then(|v| {
        let name = At::Field(at, "activity_category");
        let category = parse::<ActivityCategory>(v, &name, problems)?;
        if category.as_str().is_empty() {
            problems.push(ErrorDetail::field(name.to_string(), "must not be empty"));
            return None;
        }
        Some(category)
    });
    if problems.len() > before {
        return None;
    }
    Some(NewEntry {
        id,
        entry: PrivacyAuditLog {
            id: id.unwrap_or_else(PrivacyAuditLogId::nil),
            access_time: access_time?,
            account_id: account_id?,
            ip_addresses: ips?,
            data_subject: subject?,
            access_data: data?,
            access_menu: menu?,
            access_menu_path: path?,
            activity_category: category?,
            purpose,
        },
    })
}

/// A data subject with its `bulk_count` as an integer when JSON wrote it as a number with a
/// zero fraction (`9999.0`): JSON Schema's `integer` takes it, so the API does too. Borrowed
/// unless there is such a count to rewrite.
fn integral_count(subject: &Value) -> std::borrow::Cow<'_, Value> {
    let integral = subject
        .get("bulk_count")
        .and_then(|count| count.as_f64().filter(|_| !count.is_u64() && !count.is_i64()))
        .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f <= u64::MAX as f64);
    let Some(f) = integral else {
        return std::borrow::Cow::Borrowed(subject);
    };
    let mut subject = subject.clone();
    if let Some(count) = subject.get_mut("bulk_count") {
        // In range and integral: the conversion is exact up to f64's precision.
        *count = Value::from(f as u64);
    }
    std::borrow::Cow::Owned(subject)
}

/// Reports every string in `value` holding the NUL character, which no store keeps as text.
fn nul_free(value: &Value, at: &At<'_>, problems: &mut Vec<ErrorDetail>) {
    match value {
        Value::String(s) if s.contains('\0') => {
            problems.push(ErrorDetail::field(at.to_string(), "must not contain the NUL character"));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                nul_free(item, &At::Item(at, i), problems);
            }
        }
        Value::Object(fields) => {
            for (name, item) in fields {
                nul_free(item, &At::Field(at, name), problems);
            }
        }
        _ => {}
    }
}

/// A value of type `T`, or a problem at `at` (and below it, for nested values). Deserialized
/// directly; only a value that fails is deserialized again to find where, inside it, it fails.
fn parse<T: serde::de::DeserializeOwned>(
    value: &Value,
    at: &At<'_>,
    problems: &mut Vec<ErrorDetail>,
) -> Option<T> {
    if let Ok(v) = T::deserialize(value) {
        return Some(v);
    }
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(v) => Some(v),
        Err(e) => {
            let path = e.path().to_string();
            let at = if path == "." { at.to_string() } else { format!("{at}.{path}") };
            let reason = e.inner().to_string();
            problems.push(ErrorDetail::field(at, reason));
            None
        }
    }
}

/// 1 to [`MAX_IP_ADDRESSES`] IP addresses, each in canonical text form.
fn ip_addresses(
    value: &Value,
    at: &At<'_>,
    problems: &mut Vec<ErrorDetail>,
) -> Option<Vec<String>> {
    let list: Vec<String> = parse(value, at, problems)?;
    if list.is_empty() || list.len() > MAX_IP_ADDRESSES {
        let n = list.len();
        problems.push(ErrorDetail::field(
            at.to_string(),
            format!("must hold 1 to {MAX_IP_ADDRESSES} addresses; it holds {n}"),
        ));
        return None;
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, text) in list.iter().enumerate() {
        match text.parse::<IpAddr>() {
            Ok(ip) => out.push(ip.to_string()),
            Err(_) => problems.push(ErrorDetail::field(
                At::Item(at, i).to_string(),
                "is not an IPv4 or IPv6 address",
            )),
        }
    }
    (out.len() == list.len()).then_some(out)
}

/// Text of 1 to [`MAX_MENU_LEN`] characters.
fn text(value: &Value, at: &At<'_>, problems: &mut Vec<ErrorDetail>) -> Option<String> {
    let text: String = parse(value, at, problems)?;
    let len = text.chars().count();
    if len == 0 || len > MAX_MENU_LEN {
        problems.push(ErrorDetail::field(
            at.to_string(),
            format!("must be 1 to {MAX_MENU_LEN} characters; it has {len}"),
        ));
        return None;
    }
    Some(text)
}

#[cfg(test)]
mod tests;
