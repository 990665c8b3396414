//! Fuzz target: the NDJSON import's line parser. Whatever a line holds, parsing never panics,
//! and an error always names the line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recruit_service::import::{ImportFailure, parse_ledger_line};

fuzz_target!(|data: &[u8]| {
    if let Ok(line) = std::str::from_utf8(data)
        && let Err(ImportFailure::Invalid { at, .. }) = parse_ledger_line(7, line)
    {
        assert!(at.starts_with("line 7"), "{at}");
    }
});
