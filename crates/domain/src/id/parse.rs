//! The byte-level identifier parser every entry point delegates to, and its cold diagnosis.
//!
//! The hot path checks the length first and dispatches on it, then validates all hex digits
//! branch-free (the technique of the `uuid` crate's parser), so valid input costs no allocation
//! and no data-dependent branch. Only when it fails does [`diagnose`] re-scan the input to say
//! what is wrong and where.

use super::error::{Expected, ParseIdError, ParseIdErrorKind, Prefix};

/// What a parser accepts: an optional three-letter prefix and the noun used in messages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spec {
    /// Lowercase ASCII letters written before the underscore, or `None` for a bare UUID.
    pub(crate) prefix: Option<[u8; 3]>,
    /// The same prefix as text, for messages.
    pub(crate) prefix_text: Option<&'static str>,
    /// What the value is, as in "a job ID".
    pub(crate) noun: &'static str,
}

/// Parses one of the accepted spellings into the UUID's bytes.
///
/// Accepted, case-insensitively: `pfx_` + 32 hex digits, `pfx_` + dashed UUID, dashed UUID,
/// 32 hex digits. With no prefix in `spec`, only the two bare spellings.
#[inline(always)]
pub(crate) fn parse(spec: Spec, s: &str) -> Result<[u8; 16], ParseIdError> {
    match try_parse(spec.prefix, s.as_bytes()) {
        Some(bytes) => Ok(bytes),
        None => Err(diagnose(spec, s)),
    }
}

#[inline(always)]
fn try_parse(prefix: Option<[u8; 3]>, s: &[u8]) -> Option<[u8; 16]> {
    match (s.len(), prefix) {
        (32, _) => decode_compact(s),
        (36, Some(p)) if s[3] == b'_' => {
            if has_prefix(p, s) {
                decode_compact(&s[4..])
            } else {
                None
            }
        }
        (36, _) => decode_dashed(s),
        (40, Some(p)) if has_prefix(p, s) && s[3] == b'_' => decode_dashed(&s[4..]),
        _ => None,
    }
}

/// Whether `s` starts with the three prefix letters in any case. `p` holds lowercase letters,
/// so `c | 0x20 == p` exactly when `c` is that letter in lower or upper case.
#[inline(always)]
fn has_prefix(p: [u8; 3], s: &[u8]) -> bool {
    (s[0] | 0x20) == p[0] && (s[1] | 0x20) == p[1] && (s[2] | 0x20) == p[2]
}

#[inline(always)]
fn decode_compact(s: &[u8]) -> Option<[u8; 16]> {
    let hex: &[u8; 32] = s.try_into().ok()?;
    decode_hex32(hex)
}

#[inline(always)]
fn decode_dashed(s: &[u8]) -> Option<[u8; 16]> {
    let s: &[u8; 36] = s.try_into().ok()?;
    if (s[8], s[13], s[18], s[23]) != (b'-', b'-', b'-', b'-') {
        return None;
    }
    let mut hex = [0u8; 32];
    hex[..8].copy_from_slice(&s[..8]);
    hex[8..12].copy_from_slice(&s[9..13]);
    hex[12..16].copy_from_slice(&s[14..18]);
    hex[16..20].copy_from_slice(&s[19..23]);
    hex[20..].copy_from_slice(&s[24..]);
    decode_hex32(&hex)
}

/// Decodes 32 hex digits of either case. Every digit is checked without branching on its
/// value, so the loop vectorises; one test at the end rejects the whole input.
#[inline(always)]
fn decode_hex32(hex: &[u8; 32]) -> Option<[u8; 16]> {
    let mut nibbles = [0u8; 32];
    let mut bad = 0u8;
    for (nibble, &c) in nibbles.iter_mut().zip(hex) {
        let digit = c.wrapping_sub(b'0');
        let alpha = (c | 0x20).wrapping_sub(b'a');
        let is_digit = digit < 10;
        let is_alpha = alpha < 6;
        *nibble = if is_digit { digit } else { alpha.wrapping_add(10) };
        bad |= u8::from(!(is_digit | is_alpha));
    }
    if bad != 0 {
        return None;
    }
    let mut bytes = [0u8; 16];
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = (nibbles[2 * i] << 4) | nibbles[2 * i + 1];
    }
    Some(bytes)
}

/// Positions (0-based, in the dashed body) that hold a dash.
const DASHES: [usize; 4] = [8, 13, 18, 23];

/// Re-scans input the hot path refused and says what is wrong with it. Never echoes more than
/// a few characters of the input.
#[cold]
#[inline(never)]
pub(crate) fn diagnose(spec: Spec, s: &str) -> ParseIdError {
    let fail = |kind| ParseIdError::new(spec, kind);
    if s.is_empty() {
        return fail(ParseIdErrorKind::Empty);
    }
    if s.trim() != s {
        return fail(ParseIdErrorKind::Whitespace);
    }
    if s.starts_with('{') && s.ends_with('}') {
        return fail(ParseIdErrorKind::Braced);
    }
    if s.len() >= 9 && s.as_bytes()[..9].eq_ignore_ascii_case(b"urn:uuid:") {
        return fail(ParseIdErrorKind::Urn);
    }

    // A short run of letters and digits, starting with a letter, before an underscore reads
    // as a prefix.
    let mut offset = 0; // characters before the body
    let mut body = s;
    if let Some((head, rest)) = s.split_once('_') {
        let looks_like_prefix = (1..=Prefix::CAPACITY).contains(&head.len())
            && head.as_bytes()[0].is_ascii_alphabetic()
            && head.bytes().all(|b| b.is_ascii_alphanumeric());
        if looks_like_prefix {
            let accepted =
                spec.prefix.is_some_and(|p| head.len() == 3 && has_prefix(p, head.as_bytes()));
            if !accepted {
                return fail(ParseIdErrorKind::Prefix { found: Prefix::new(head) });
            }
            offset = head.len() + 1;
            body = rest;
        }
    }

    // A character outside ASCII is reported as such before any length is counted, so a
    // length is never given in bytes where a person sees characters.
    if let Some((index, found)) = body.chars().enumerate().find(|(_, c)| !c.is_ascii()) {
        return fail(ParseIdErrorKind::Character {
            position: offset + index + 1,
            found,
            expected: Expected::HexDigitOrDash,
        });
    }

    let bytes = body.as_bytes();
    let expectation = |i: usize| match bytes.len() {
        32 => Expected::HexDigit,
        _ if DASHES.contains(&i) => Expected::Dash,
        _ => Expected::HexDigit,
    };
    match bytes.len() {
        32 | 36 => {
            for (i, &b) in bytes.iter().enumerate() {
                let expected = expectation(i);
                let fits = match expected {
                    Expected::Dash => b == b'-',
                    _ => b.is_ascii_hexdigit(),
                };
                if !fits {
                    return fail(ParseIdErrorKind::Character {
                        position: offset + i + 1,
                        found: char::from(b),
                        expected,
                    });
                }
            }
            // Every character fits, yet the hot path refused: the only way is a bare body
            // whose length collides with a prefixed spelling, which cannot happen. Report the
            // length rather than panic.
            fail(ParseIdErrorKind::Length { found: s.chars().count() })
        }
        _ => fail(ParseIdErrorKind::Length { found: s.chars().count() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hex_table_agrees_with_the_standard_library_for_every_byte() {
        for b in 0..=u8::MAX {
            let mut hex = [b'0'; 32];
            hex[17] = b;
            assert_eq!(decode_hex32(&hex).is_some(), b.is_ascii_hexdigit(), "byte {b:#04x}");
        }
    }

    #[test]
    fn the_prefix_test_accepts_only_the_letters_in_either_case() {
        for b in 0..=u8::MAX {
            let s = [b, b'o', b'b'];
            assert_eq!(has_prefix(*b"job", &s), b == b'j' || b == b'J', "byte {b:#04x}");
        }
    }
}
