//! The error of parsing an identifier: cheap to build, precise in what it says.

use std::fmt;

use super::parse::Spec;

/// Why a string is not an identifier of the expected kind.
///
/// Its [`Display`](fmt::Display) text is written for an API error's `details[].reason`: it says
/// what was wrong and where, and never repeats more than a few characters of the input. The
/// texts are stable; positions count characters from 1.
///
/// ```
/// use recruit_domain::JobId;
///
/// let err = "can_0123456789abcdef0123456789abcdef".parse::<JobId>().unwrap_err();
/// assert_eq!(err.to_string(), "has the prefix `can_`, but a job ID takes `job_` or no prefix");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseIdError {
    noun: &'static str,
    prefix: Option<&'static str>,
    kind: ParseIdErrorKind,
}

/// What exactly was wrong, for callers that branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseIdErrorKind {
    /// The input was empty.
    Empty,
    /// The input starts or ends with white space.
    Whitespace,
    /// The input is a UUID in braces, `{…}`, which is not an accepted spelling.
    Braced,
    /// The input is a `urn:uuid:` URN, which is not an accepted spelling.
    Urn,
    /// The input has a prefix, and it is not the one this kind of identifier takes.
    Prefix {
        /// The prefix found, without its underscore.
        found: Prefix,
    },
    /// The input has a character that does not belong where it stands.
    Character {
        /// 1-based position of the character, counted in characters of the whole input.
        position: usize,
        /// The character found there.
        found: char,
        /// What that position takes.
        expected: Expected,
    },
    /// Every character could belong, but there are too few or too many.
    Length {
        /// The number of characters in the input.
        found: usize,
    },
}

/// What a position of an identifier takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Expected {
    /// `0-9`, `a-f` or `A-F`.
    HexDigit,
    /// `-`, between the groups of a dashed UUID.
    Dash,
    /// A hexadecimal digit or a dash: said of characters outside ASCII.
    HexDigitOrDash,
}

/// A short prefix found in front of an identifier (at most [`Prefix::CAPACITY`] ASCII letters
/// and digits), kept inline so that the error needs no allocation.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Prefix {
    len: u8,
    bytes: [u8; Prefix::CAPACITY],
}

impl Prefix {
    /// The longest run of characters before an underscore that is read as a prefix.
    pub const CAPACITY: usize = 8;

    /// `head` is at most `CAPACITY` ASCII alphanumerics; the parser guarantees it.
    pub(crate) fn new(head: &str) -> Self {
        let mut bytes = [0u8; Self::CAPACITY];
        let len = head.len().min(Self::CAPACITY);
        bytes[..len].copy_from_slice(&head.as_bytes()[..len]);
        Self { len: u8::try_from(len).unwrap_or(0), bytes }
    }

    /// The prefix as written, without its underscore.
    pub fn as_str(&self) -> &str {
        // Built from ASCII alphanumerics only, so this never fails.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl fmt::Debug for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ParseIdError {
    pub(crate) fn new(spec: Spec, kind: ParseIdErrorKind) -> Self {
        Self { noun: spec.noun, prefix: spec.prefix_text, kind }
    }

    /// What was wrong.
    pub fn kind(&self) -> ParseIdErrorKind {
        self.kind
    }

    /// The prefix the expected identifier takes (`"job"`), or `None` for a bare UUID.
    pub fn expected_prefix(&self) -> Option<&'static str> {
        self.prefix
    }

    fn accepted_prefix(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.expected_prefix() {
            Some(p) => write!(f, "takes `{p}_` or no prefix"),
            None => f.write_str("takes no prefix"),
        }
    }
}

impl fmt::Display for ParseIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let noun = self.noun;
        match self.kind {
            ParseIdErrorKind::Empty => write!(f, "is empty; expected {noun}"),
            ParseIdErrorKind::Whitespace => f.write_str("has white space at its start or end"),
            ParseIdErrorKind::Braced => {
                write!(f, "is a UUID in braces; {noun} is written without braces")
            }
            ParseIdErrorKind::Urn => {
                write!(f, "is a `urn:uuid:` URN; {noun} is written without `urn:uuid:`")
            }
            ParseIdErrorKind::Prefix { found } => {
                write!(f, "has the prefix `{found}_`, but {noun} ")?;
                self.accepted_prefix(f)
            }
            ParseIdErrorKind::Character { position, found, expected } => {
                let expected = match expected {
                    Expected::HexDigit => "a hexadecimal digit",
                    Expected::Dash => "`-`",
                    Expected::HexDigitOrDash => "a hexadecimal digit or `-`",
                };
                write!(f, "has {} at position {position}; expected {expected}", DescribeChar(found))
            }
            ParseIdErrorKind::Length { found } => {
                write!(f, "has {found} characters; {noun} has 32 hexadecimal digits")?;
                match self.expected_prefix() {
                    Some(p) => write!(
                        f,
                        ", or 36 characters as a dashed UUID, either optionally after `{p}_`"
                    ),
                    None => f.write_str(", or 36 characters as a dashed UUID"),
                }
            }
        }
    }
}

impl std::error::Error for ParseIdError {}

/// Names a character so that control characters and invisible ones stay readable.
struct DescribeChar(char);

impl fmt::Display for DescribeChar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.0;
        if c.is_ascii_graphic() {
            write!(f, "`{c}`")
        } else if c == ' ' {
            f.write_str("a space")
        } else {
            write!(f, "the character U+{:04X}", u32::from(c))
        }
    }
}
