//! Fuzz target: the RFC 3339 timestamp parser. It never panics, and what it accepts prints in
//! the API's form and parses back to the same instant.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recruit_domain::Timestamp;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data)
        && let Ok(t) = Timestamp::parse(s)
    {
        let printed = t.to_string();
        assert_eq!(Timestamp::parse(&printed).ok(), Some(t), "{printed}");
    }
});
