//! Benchmarks of identifier parsing and formatting, side by side with the `uuid` crate on the
//! same bytes (the prefix stripped for `uuid`, which does not know it).
//!
//! Run with `cargo bench -p recruit-domain --bench ids`. The allocation counts come from
//! divan's `AllocProfiler`: formatting into a buffer must show none.

use divan::{AllocProfiler, Bencher, black_box};
use recruit_domain::{AccountId, CANONICAL_LEN, JobId, Uuid};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

/// A fixed pseudo-random set of UUIDs, so no single input is learned by the branch predictor.
fn uuids() -> Vec<Uuid> {
    let mut x: u128 = 0x0190_c7d8_e4a2_7cc3_b1f0_a2d4_e6f8_0011;
    (0..1024)
        .map(|_| {
            // xorshift128-style mixing: deterministic and cheap.
            x ^= x << 35;
            x ^= x >> 59;
            x ^= x << 21;
            Uuid::from_u128(x)
        })
        .collect()
}

/// The inputs of one spelling, mixed-case as clients send them, and the same bytes without
/// the prefix for `uuid`.
fn inputs(prefixed: bool, dashed: bool) -> (Vec<String>, Vec<String>) {
    uuids()
        .into_iter()
        .enumerate()
        .map(|(i, u)| {
            let body = if dashed { u.hyphenated().to_string() } else { u.simple().to_string() };
            let body = if i % 2 == 0 { body } else { body.to_uppercase() };
            let ours = if prefixed { format!("job_{body}") } else { body.clone() };
            (ours, body)
        })
        .unzip()
}

fn parse_ours(bencher: Bencher<'_, '_>, prefixed: bool, dashed: bool) {
    let (ours, _) = inputs(prefixed, dashed);
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % ours.len();
        JobId::parse(black_box(&ours[i])).is_ok()
    });
}

fn parse_uuid(bencher: Bencher<'_, '_>, prefixed: bool, dashed: bool) {
    let (_, theirs) = inputs(prefixed, dashed);
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % theirs.len();
        Uuid::try_parse(black_box(&theirs[i])).is_ok()
    });
}

/// Parsing each spelling: `recruit_domain` against `uuid::Uuid::try_parse` on the same bytes.
mod parse {
    use super::*;

    #[divan::bench]
    fn prefixed_compact_recruit(b: Bencher<'_, '_>) {
        parse_ours(b, true, false);
    }
    #[divan::bench]
    fn prefixed_compact_uuid(b: Bencher<'_, '_>) {
        parse_uuid(b, true, false);
    }
    #[divan::bench]
    fn prefixed_dashed_recruit(b: Bencher<'_, '_>) {
        parse_ours(b, true, true);
    }
    #[divan::bench]
    fn prefixed_dashed_uuid(b: Bencher<'_, '_>) {
        parse_uuid(b, true, true);
    }
    #[divan::bench]
    fn bare_dashed_recruit(b: Bencher<'_, '_>) {
        parse_ours(b, false, true);
    }
    #[divan::bench]
    fn bare_dashed_uuid(b: Bencher<'_, '_>) {
        parse_uuid(b, false, true);
    }
    #[divan::bench]
    fn bare_compact_recruit(b: Bencher<'_, '_>) {
        parse_ours(b, false, false);
    }
    #[divan::bench]
    fn bare_compact_uuid(b: Bencher<'_, '_>) {
        parse_uuid(b, false, false);
    }

    /// The error path: a wrong character near the end, diagnosed in full.
    #[divan::bench]
    fn invalid_character_recruit(b: Bencher<'_, '_>) {
        let input = "job_0190c7d8e4a27cc3b1f0a2d4e6f8001g";
        b.bench_local(|| JobId::parse(black_box(input)).is_err());
    }
    #[divan::bench]
    fn invalid_character_uuid(b: Bencher<'_, '_>) {
        let input = "0190c7d8e4a27cc3b1f0a2d4e6f8001g";
        b.bench_local(|| Uuid::try_parse(black_box(input)).is_err());
    }
}

/// Formatting the canonical form into a stack buffer, against `uuid`'s `encode_lower`.
mod format {
    use super::*;

    #[divan::bench]
    fn canonical_recruit(b: Bencher<'_, '_>) {
        let ids: Vec<JobId> = uuids().into_iter().map(JobId::from_uuid).collect();
        let mut buf = [0u8; CANONICAL_LEN];
        let mut i = 0;
        b.bench_local(|| {
            i = (i + 1) % ids.len();
            black_box(black_box(ids[i]).encode(&mut buf).len())
        });
    }

    #[divan::bench]
    fn account_id_recruit(b: Bencher<'_, '_>) {
        let ids: Vec<AccountId> = uuids().into_iter().map(AccountId::from_uuid).collect();
        let mut buf = [0u8; AccountId::CANONICAL_LEN];
        let mut i = 0;
        b.bench_local(|| {
            i = (i + 1) % ids.len();
            black_box(black_box(ids[i]).encode(&mut buf).len())
        });
    }

    #[divan::bench]
    fn simple_uuid(b: Bencher<'_, '_>) {
        let ids = uuids();
        let mut buf = [0u8; 32];
        let mut i = 0;
        b.bench_local(|| {
            i = (i + 1) % ids.len();
            black_box(black_box(ids[i]).simple().encode_lower(&mut buf).len())
        });
    }

    /// `to_string()`, which allocates its `String`, for reference.
    #[divan::bench]
    fn to_string_recruit(b: Bencher<'_, '_>) {
        let id = JobId::from_uuid(uuids()[0]);
        b.bench_local(|| black_box(id).to_string());
    }
}
