//! Open enums: string enums whose value set may grow. A value this version does not know is
//! kept intact in an `Other` variant, so deserialize → serialize never loses it.

use std::fmt;

/// A value of an open enum that this version of the crate does not know, kept as it was sent.
///
/// It can only be made by parsing, so it never holds a value that has a variant of its own:
/// `ActivityCategory::from("READ")` is always `ActivityCategory::Read`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnknownValue(Box<str>);

impl UnknownValue {
    pub(crate) fn new(value: &str) -> Self {
        Self(value.into())
    }

    /// The value as it was sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for UnknownValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// Defines an open string enum: known variants with their wire strings, plus
/// `Other(UnknownValue)`; `as_str`, `Display`, infallible `From<&str>`/`FromStr`, and serde as
/// a plain string.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $value:literal,)*
        }
    ) => {
        $(#[$meta])*
        ///
        /// The set of values is open: a value this version does not know deserializes to
        /// `Other` and serializes back unchanged. Match with a wildcard arm.
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        $vis enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A value this version does not know, kept as it was sent.
            Other($crate::UnknownValue),
        }

        impl $name {
            /// The wire strings of the known values, in declaration order.
            pub const KNOWN: &'static [&'static str] = &[$($value),*];

            /// The value as written on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $value,)*
                    Self::Other(v) => v.as_str(),
                }
            }

            /// Whether this version knows the value.
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Other(_))
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                match value {
                    $($value => Self::$variant,)*
                    other => Self::Other($crate::UnknownValue::new(other)),
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::convert::Infallible;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Ok(Self::from(s))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        #[cfg(feature = "serde")]
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a string")
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        Ok($name::from(v))
                    }
                }
                deserializer.deserialize_str(V)
            }
        }
    };
}

pub(crate) use open_enum;
