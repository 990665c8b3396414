//! Fuzz target: routing of a method and request target, with the query string parser behind
//! it. It never panics, whatever the method, path and query.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (method, target) = match data.iter().position(|b| *b == b' ') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b"GET"[..], data),
    };
    if let Ok(target) = std::str::from_utf8(target) {
        recruit_http::route_target(method, target);
    }
});
