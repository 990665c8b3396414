//! Identifier parsing and formatting: property tests against the specification's input pattern,
//! round trips of every spelling, ordering, serde, and the exact texts of errors.

use proptest::prelude::*;
use recruit_domain::resource::{
    ApiToken, Candidate, Job, JobStage, Organization, PrivacyAuditLog, TaskQueue, User,
};
use recruit_domain::{AccountId, Id, JobId, ParseIdErrorKind, Resource, Uuid};
use regex::{Regex, RegexBuilder};

/// The spec's input pattern for a prefix (§2.1), matched case-insensitively. Case folding is
/// ASCII-only: the spec's identifiers are ASCII, and Unicode folding would let `ſ` stand for
/// `s` and the Kelvin sign for `k` (see `docs/decisions.md`).
fn oracle(prefix: Option<&str>) -> Regex {
    let prefix = prefix.map(|p| format!("(?:{p}_)?")).unwrap_or_default();
    let pattern = format!(
        "^{prefix}(?:[0-9a-fA-F]{{32}}|[0-9a-fA-F]{{8}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{12}})$"
    );
    RegexBuilder::new(&pattern)
        .case_insensitive(true)
        .unicode(false)
        .build()
        .expect("valid pattern")
}

/// The UUID an input the oracle accepts stands for: its last 32 hex digits.
fn oracle_uuid(s: &str) -> Uuid {
    let hex: String = s.chars().rev().filter(char::is_ascii_hexdigit).take(32).collect();
    let hex: String = hex.chars().rev().collect();
    Uuid::from_u128(u128::from_str_radix(&hex, 16).expect("32 hex digits"))
}

/// The four spellings of the specification.
#[derive(Clone, Copy, Debug)]
enum Spelling {
    PrefixedCompact,
    PrefixedDashed,
    BareDashed,
    BareCompact,
}

fn spelling() -> impl Strategy<Value = Spelling> {
    prop_oneof![
        Just(Spelling::PrefixedCompact),
        Just(Spelling::PrefixedDashed),
        Just(Spelling::BareDashed),
        Just(Spelling::BareCompact),
    ]
}

/// Writes `uuid` in a spelling, then sets the case of each character from the bits of `case`.
fn spell(prefix: Option<&str>, uuid: Uuid, spelling: Spelling, case: u64) -> String {
    let body = match spelling {
        Spelling::PrefixedCompact | Spelling::BareCompact => uuid.simple().to_string(),
        Spelling::PrefixedDashed | Spelling::BareDashed => uuid.hyphenated().to_string(),
    };
    let s = match (spelling, prefix) {
        (Spelling::PrefixedCompact | Spelling::PrefixedDashed, Some(p)) => format!("{p}_{body}"),
        _ => body,
    };
    s.chars()
        .enumerate()
        .map(|(i, c)| if case >> (i % 64) & 1 == 1 { c.to_ascii_uppercase() } else { c })
        .collect()
}

fn any_uuid() -> impl Strategy<Value = Uuid> {
    prop_oneof![any::<u128>().prop_map(Uuid::from_u128), Just(Uuid::nil()), Just(Uuid::max()),]
}

/// Characters that are near misses: letters past `f`, separators, white space, braces, and
/// Unicode characters that fold or look like ASCII.
fn near_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => prop::sample::select(vec![
            'g', 'G', 'z', 'x', '-', '_', ' ', '\t', '\n', '{', '}', ':', '0', 'a', 'F',
            'ſ', '\u{212A}', 'é', '\u{FF10}', '\u{0}', '\u{200B}',
        ]),
        1 => any::<char>(),
    ]
}

/// One small change to a valid spelling.
#[derive(Clone, Debug)]
enum Mutation {
    Replace(usize, char),
    Delete(usize),
    Insert(usize, char),
    SwapPrefix(String),
    MoveDash(usize, usize),
    Swap(usize),
    Wrap(String, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let idx = 0usize..48;
    let other_prefix = prop_oneof![
        prop::sample::select(vec![
            "org",
            "job",
            "usr",
            "can",
            "pal",
            "que",
            "tok",
            "JOB",
            "jOb",
            "jo",
            "jobs",
            "job_",
            "uſr",
            "to\u{212A}",
            "",
            "urn:uuid",
            "x",
        ])
        .prop_map(str::to_owned),
        "[a-zA-Z]{1,4}",
    ];
    prop_oneof![
        (idx.clone(), near_char()).prop_map(|(i, c)| Mutation::Replace(i, c)),
        idx.clone().prop_map(Mutation::Delete),
        (idx.clone(), near_char()).prop_map(|(i, c)| Mutation::Insert(i, c)),
        other_prefix.prop_map(Mutation::SwapPrefix),
        (idx.clone(), idx.clone()).prop_map(|(a, b)| Mutation::MoveDash(a, b)),
        idx.prop_map(Mutation::Swap),
        prop::sample::select(vec![
            ("{", "}"),
            (" ", ""),
            ("", "\n"),
            ("urn:uuid:", ""),
            ("\"", "\"")
        ])
        .prop_map(|(a, b)| Mutation::Wrap(a.to_owned(), b.to_owned())),
    ]
}

fn mutate(s: &str, m: &Mutation) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    let at = |i: usize, len: usize| if len == 0 { 0 } else { i % len };
    match m {
        Mutation::Replace(i, c) => {
            let i = at(*i, chars.len());
            chars[i] = *c;
        }
        Mutation::Delete(i) => {
            let i = at(*i, chars.len());
            chars.remove(i);
        }
        Mutation::Insert(i, c) => {
            let i = at(*i, chars.len() + 1);
            chars.insert(i, *c);
        }
        Mutation::SwapPrefix(p) => {
            let body: String = match s.split_once('_') {
                Some((_, body)) => body.to_owned(),
                None => s.to_owned(),
            };
            return if p.is_empty() { body } else { format!("{p}_{body}") };
        }
        Mutation::MoveDash(from, to) => {
            let dashes: Vec<usize> = (0..chars.len()).filter(|&i| chars[i] == '-').collect();
            if dashes.is_empty() {
                let i = at(*to, chars.len() + 1);
                chars.insert(i, '-');
            } else {
                chars.remove(dashes[from % dashes.len()]);
                let i = at(*to, chars.len() + 1);
                chars.insert(i, '-');
            }
        }
        Mutation::Swap(i) => {
            if chars.len() >= 2 {
                let i = at(*i, chars.len() - 1);
                chars.swap(i, i + 1);
            }
        }
        Mutation::Wrap(a, b) => return format!("{a}{s}{b}"),
    }
    chars.into_iter().collect()
}

/// The parser and the oracle agree on `s`, and on the UUID when both accept it.
fn agrees<R: Resource>(s: &str) -> Result<(), TestCaseError> {
    let ours = Id::<R>::parse(s);
    let theirs = oracle(Some(R::PREFIX)).is_match(s);
    prop_assert_eq!(ours.is_ok(), theirs, "{} on {:?}: parser says {:?}", R::PREFIX, s, ours);
    if let Ok(id) = ours {
        prop_assert_eq!(id.uuid(), oracle_uuid(s));
    }
    Ok(())
}

fn account_agrees(s: &str) -> Result<(), TestCaseError> {
    let ours = AccountId::parse(s);
    prop_assert_eq!(ours.is_ok(), oracle(None).is_match(s), "account on {:?}: {:?}", s, ours);
    if let Ok(id) = ours {
        prop_assert_eq!(id.uuid(), oracle_uuid(s));
    }
    Ok(())
}

/// Runs a generic check for every identifier type of the crate.
macro_rules! for_every_type {
    ($check:ident($($arg:expr),*)) => {{
        $check::<Organization>($($arg),*)?;
        $check::<Job>($($arg),*)?;
        $check::<User>($($arg),*)?;
        $check::<Candidate>($($arg),*)?;
        $check::<PrivacyAuditLog>($($arg),*)?;
        $check::<TaskQueue>($($arg),*)?;
        $check::<JobStage>($($arg),*)?;
        $check::<ApiToken>($($arg),*)?;
    }};
}

fn every_spelling_parses<R: Resource>(
    uuid: Uuid,
    spelling: Spelling,
    case: u64,
) -> Result<(), TestCaseError> {
    let s = spell(Some(R::PREFIX), uuid, spelling, case);
    let id = Id::<R>::parse(&s);
    prop_assert_eq!(id.map(Id::uuid), Ok(uuid), "{:?}", s);
    Ok(())
}

fn display_then_parse_is_identity<R: Resource>(uuid: Uuid) -> Result<(), TestCaseError> {
    let id = Id::<R>::from_uuid(uuid);
    let s = id.to_string();
    prop_assert_eq!(s.len(), recruit_domain::CANONICAL_LEN);
    prop_assert_eq!(&s, &format!("{}_{}", R::PREFIX, uuid.simple()));
    prop_assert_eq!(s.parse::<Id<R>>(), Ok(id));
    prop_assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{s}\""));
    prop_assert_eq!(serde_json::from_str::<Id<R>>(&format!("\"{s}\"")).unwrap(), id);
    Ok(())
}

fn near_misses_agree_with_the_pattern<R: Resource>(
    uuid: Uuid,
    spelling: Spelling,
    case: u64,
    mutations: &[Mutation],
) -> Result<(), TestCaseError> {
    let mut s = spell(Some(R::PREFIX), uuid, spelling, case);
    for m in mutations {
        s = mutate(&s, m);
    }
    agrees::<R>(&s)
}

fn strings_agree<R: Resource>(s: &str) -> Result<(), TestCaseError> {
    agrees::<R>(s)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn any_uuid_in_any_spelling_and_case_parses_to_that_uuid(
        uuid in any_uuid(), spelling in spelling(), case in any::<u64>(),
    ) {
        for_every_type!(every_spelling_parses(uuid, spelling, case));
        let bare = match spelling {
            Spelling::PrefixedCompact | Spelling::BareCompact => Spelling::BareCompact,
            _ => Spelling::BareDashed,
        };
        prop_assert_eq!(AccountId::parse(&spell(None, uuid, bare, case)).map(AccountId::uuid), Ok(uuid));
    }

    #[test]
    fn display_then_parse_is_the_identity(uuid in any_uuid()) {
        for_every_type!(display_then_parse_is_identity(uuid));
        let id = AccountId::from_uuid(uuid);
        prop_assert_eq!(id.to_string(), uuid.simple().to_string());
        prop_assert_eq!(id.to_string().parse::<AccountId>(), Ok(id));
    }

    #[test]
    fn the_parser_accepts_exactly_what_the_spec_pattern_accepts_on_near_misses(
        uuid in any_uuid(),
        spelling in spelling(),
        case in any::<u64>(),
        mutations in prop::collection::vec(mutation(), 1..=2),
    ) {
        for_every_type!(near_misses_agree_with_the_pattern(uuid, spelling, case, &mutations));
        let mut s = spell(None, uuid, spelling, case);
        for m in &mutations {
            s = mutate(&s, m);
        }
        account_agrees(&s)?;
    }

    #[test]
    fn arbitrary_strings_never_panic_and_agree_with_the_pattern(
        s in prop_oneof![
            any::<String>(),
            "[ -~]{0,44}",
            "(?:[a-zA-Z]{3}_)?[0-9a-fA-F-]{30,38}",
        ],
    ) {
        for_every_type!(strings_agree(&s));
        account_agrees(&s)?;
    }

    #[test]
    fn identifiers_order_like_their_canonical_strings(a in any_uuid(), b in any_uuid()) {
        let (a, b) = (JobId::from_uuid(a), JobId::from_uuid(b));
        prop_assert_eq!(a.cmp(&b), a.to_string().cmp(&b.to_string()));
        let (a, b) = (AccountId::from_uuid(a.uuid()), AccountId::from_uuid(b.uuid()));
        prop_assert_eq!(a.cmp(&b), a.to_string().cmp(&b.to_string()));
    }

    #[test]
    fn every_error_message_is_short_whatever_the_input(s in any::<String>(), n in 0usize..10_000) {
        let long = s.repeat(n.min(50));
        if let Err(e) = JobId::parse(&long) {
            prop_assert!(e.to_string().len() < 160, "{:?}", e.to_string());
        }
    }
}

/// Pins the exact error text for one input (a table of cases, rust-analyzer style).
fn check(input: &str, expected: &str) {
    let err = JobId::parse(input).expect_err(input);
    assert_eq!(err.to_string(), expected, "input {input:?}");
}

#[test]
fn errors_say_what_is_wrong_and_where() {
    let hex = "0190c7d8e4a27cc3b1f0a2d4e6f80011";
    let dashed = "0190c7d8-e4a2-7cc3-b1f0-a2d4e6f80011";
    check("", "is empty; expected a job ID");
    check(&format!(" {hex}"), "has white space at its start or end");
    check(&format!("{hex}\n"), "has white space at its start or end");
    check(&format!("{{{dashed}}}"), "is a UUID in braces; a job ID is written without braces");
    check(
        &format!("urn:uuid:{dashed}"),
        "is a `urn:uuid:` URN; a job ID is written without `urn:uuid:`",
    );
    check(&format!("can_{hex}"), "has the prefix `can_`, but a job ID takes `job_` or no prefix");
    check(&format!("jobs_{hex}"), "has the prefix `jobs_`, but a job ID takes `job_` or no prefix");
    check(
        &format!("job_{}", &hex[1..]),
        "has 35 characters; a job ID has 32 hexadecimal digits, or 36 characters as a dashed UUID, either optionally after `job_`",
    );
    check(
        &hex[1..],
        "has 31 characters; a job ID has 32 hexadecimal digits, or 36 characters as a dashed UUID, either optionally after `job_`",
    );
    check(&format!("job_{}g", &hex[1..]), "has `g` at position 36; expected a hexadecimal digit");
    check(
        "0190c7d8e4a27cc3b1f0a2d4e6f8001G",
        "has `G` at position 32; expected a hexadecimal digit",
    );
    // A dashed UUID with its groups of the wrong length: the first misplaced dash is named.
    check(
        "0190c7d-8e4a2-7cc3-b1f0-a2d4e6f80011",
        "has `-` at position 8; expected a hexadecimal digit",
    );
    check("0190c7d8-e4a2-7cc3-b1f0a-2d4e6f80011", "has `a` at position 24; expected `-`");
    check(&format!("JOB_{}", dashed.replace('-', "_")), "has `_` at position 13; expected `-`");
    check(
        &format!("job_{}é", &hex[1..]),
        "has the character U+00E9 at position 36; expected a hexadecimal digit or `-`",
    );
    check(
        &format!("{}\u{0}", &hex[1..]),
        "has the character U+0000 at position 32; expected a hexadecimal digit",
    );
    check(&format!("job_{}", " ".repeat(32)), "has white space at its start or end");
    check(
        &format!("job_0{}0", " ".repeat(30)),
        "has a space at position 6; expected a hexadecimal digit",
    );
    // Unicode characters that fold to ASCII letters are not the letters.
    check(
        &format!("uſr_{hex}"),
        "has the character U+017F at position 2; expected a hexadecimal digit or `-`",
    );
    let long = "x".repeat(1_000_000);
    check(
        &long,
        "has 1000000 characters; a job ID has 32 hexadecimal digits, or 36 characters as a dashed UUID, either optionally after `job_`",
    );
}

#[test]
fn errors_are_typed_for_callers_that_branch() {
    let err = JobId::parse("usr_0190c7d8e4a27cc3b1f0a2d4e6f80011").unwrap_err();
    match err.kind() {
        ParseIdErrorKind::Prefix { found } => assert_eq!(found.as_str(), "usr"),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(err.expected_prefix(), Some("job"));
    let err = AccountId::parse("usr_0190c7d8e4a27cc3b1f0a2d4e6f80011").unwrap_err();
    assert_eq!(err.to_string(), "has the prefix `usr_`, but an account ID takes no prefix");
    assert_eq!(err.expected_prefix(), None);
}

#[test]
fn the_nil_uuid_parses_like_any_other() {
    let nil = JobId::parse("job_00000000000000000000000000000000").unwrap();
    assert_eq!(nil, JobId::nil());
    assert_eq!(nil.uuid(), Uuid::nil());
}

#[test]
fn new_identifiers_are_uuid_v7_in_creation_order() {
    let ids: Vec<JobId> = (0..1000).map(|_| JobId::new_v7()).collect();
    assert!(ids.iter().all(|id| id.uuid().get_version_num() == 7));
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "v7 identifiers sort by creation");
}

#[test]
fn deserializing_reports_the_offending_value_shortened() {
    let long = format!("\"{}\"", "z".repeat(500));
    let err = serde_json::from_str::<JobId>(&long).unwrap_err().to_string();
    assert!(err.starts_with(&format!("`{}…` has 500 characters", "z".repeat(48))), "{err}");
    let err = serde_json::from_str::<JobId>("42").unwrap_err().to_string();
    assert!(err.contains("expected a job ID"), "{err}");
}
