//! Fuzz target: the cursor decoder. Whatever a client sends as a cursor, decoding never panics
//! and never accepts it: without the server's key no cursor can be forged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recruit_domain::{OrganizationId, TimeWindow, Timestamp, Uuid};
use recruit_service::cursor::{CursorKey, Filters, decode};

fuzz_target!(|data: &[u8]| {
    let Ok(cursor) = std::str::from_utf8(data) else { return };
    let Some(key) = CursorKey::new(&[7; 32]) else { return };
    let organization = OrganizationId::from_uuid(Uuid::from_u128(1));
    let (Ok(gte), Ok(lt)) =
        (Timestamp::parse("2026-01-01T00:00:00Z"), Timestamp::parse("2026-02-01T00:00:00Z"))
    else {
        return;
    };
    let Ok(window) = TimeWindow::new(gte, lt) else { return };
    let fields = recruit_service::filter::Filter::default();
    let filters = Filters { window, ids: None, fields: &fields };
    assert!(decode(&key, cursor, organization, &filters).is_err(), "a forged cursor: {cursor}");
});
