//! Fuzz target: every identifier spelling parser. Whatever the bytes, parsing never panics,
//! and whatever parses prints canonically and parses back to the same identifier.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recruit_domain::{JobId, PrivacyAuditLogId, UserId};

fn round_trip<T>(s: &str)
where
    T: std::str::FromStr + std::fmt::Display + PartialEq + std::fmt::Debug,
{
    if let Ok(id) = s.parse::<T>() {
        let canonical = id.to_string();
        let again = canonical.parse::<T>().ok();
        assert_eq!(again.as_ref(), Some(&id), "{canonical}");
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        round_trip::<JobId>(s);
        round_trip::<UserId>(s);
        round_trip::<PrivacyAuditLogId>(s);
    }
});
