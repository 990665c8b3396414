//! Canonical JSON written straight from a `serde::Serialize` value: the bytes
//! `serde_json::to_vec(&serde_json::to_value(value)?)` gives (every object's keys sorted, no
//! insignificant whitespace), without building the `serde_json::Value` in between.
//!
//! Scalars and strings are written by `serde_json` itself, so escapes and numbers are exactly
//! its own. An object's members are written one after the other as they come, each remembered
//! by its key and where its value's bytes are; when the object ends, they are put in the order
//! of their keys (by bytes, as `Value`'s map orders them; a key given twice keeps its last
//! value, as `Value` does). Ledger entries are hashed over these bytes on every write and every
//! verification, which is why they are not built through a `Value`.

use std::borrow::Cow;
use std::ops::Range;

use serde::ser::{self, Error as _, Impossible, Serialize};
use serde_json::Error;

/// The canonical JSON of `value`.
pub(crate) fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(512);
    value.serialize(Canonical { out: &mut out })?;
    Ok(out)
}

/// Writes one value into `out`.
struct Canonical<'a> {
    out: &'a mut Vec<u8>,
}

impl Canonical<'_> {
    /// A scalar or a string, as `serde_json` writes it.
    fn leaf<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        serde_json::to_writer(&mut *self.out, value)
    }

    /// `{"variant":` before a value, for the variants serialized as an object of one member.
    fn open_variant(&mut self, variant: &str) -> Result<(), Error> {
        self.out.push(b'{');
        serde_json::to_writer(&mut *self.out, variant)?;
        self.out.push(b':');
        Ok(())
    }
}

/// An array being written.
struct Seq<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    /// Whether it is a variant's value, closed by a brace after the bracket.
    variant: bool,
}

impl Seq<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        value.serialize(Canonical { out: self.out })
    }

    fn close(self) -> Result<(), Error> {
        self.out.push(b']');
        if self.variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

/// An object being written: its members' values are in `out` from `start` on, unordered.
struct Object<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    members: Vec<(Cow<'static, str>, Range<usize>)>,
    /// The key of the member whose value comes next (a map's `serialize_key`).
    key: Option<String>,
    /// Whether it is a variant's value, closed by a brace of its own.
    variant: bool,
}

impl<'a> Object<'a> {
    fn new(out: &'a mut Vec<u8>, len: usize, variant: bool) -> Self {
        let start = out.len();
        Self { out, start, members: Vec::with_capacity(len), key: None, variant }
    }

    fn member<T: Serialize + ?Sized>(
        &mut self,
        key: Cow<'static, str>,
        value: &T,
    ) -> Result<(), Error> {
        let from = self.out.len();
        value.serialize(Canonical { out: self.out })?;
        self.members.push((key, from..self.out.len()));
        Ok(())
    }

    /// Writes the members in the order of their keys in place of their values.
    fn close(mut self) -> Result<(), Error> {
        // Stable: of two members with one key, the later stays later, and is the one kept.
        self.members.sort_by(|a, b| a.0.cmp(&b.0));
        let values = self.out.split_off(self.start);
        self.out.reserve(values.len() + self.members.len() * 24 + 2);
        self.out.push(b'{');
        let mut first = true;
        for (i, (key, range)) in self.members.iter().enumerate() {
            if self.members.get(i + 1).is_some_and(|next| next.0 == *key) {
                continue;
            }
            if !std::mem::take(&mut first) {
                self.out.push(b',');
            }
            serde_json::to_writer(&mut *self.out, key.as_ref())?;
            self.out.push(b':');
            self.out.extend_from_slice(&values[range.start - self.start..range.end - self.start]);
        }
        self.out.push(b'}');
        if self.variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

/// Scalars written by `serde_json` as they are.
macro_rules! scalars {
    ($($method:ident: $t:ty),*) => {
        $(fn $method(self, v: $t) -> Result<(), Error> {
            self.leaf(&v)
        })*
    };
}

impl<'a> ser::Serializer for Canonical<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Object<'a>;

    scalars!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64);
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        // As `Value` holds it: a number only when it fits 64 bits.
        match (i64::try_from(v), u64::try_from(v)) {
            (Ok(v), _) => self.leaf(&v),
            (_, Ok(v)) => self.leaf(&v),
            _ => Err(Error::custom("number out of range")),
        }
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        match u64::try_from(v) {
            Ok(v) => self.leaf(&v),
            Err(_) => Err(Error::custom("number out of range")),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        // As `Value` holds it: widened, and null when not finite.
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.leaf(&serde_json::Number::from_f64(v))
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.leaf(&v)
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.leaf(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        self.leaf(v)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.leaf(&())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.leaf(&())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.leaf(&())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.leaf(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        mut self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.open_variant(variant)?;
        value.serialize(Canonical { out: self.out })?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'a>, Error> {
        self.out.push(b'[');
        Ok(Seq { out: self.out, first: true, variant: false })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        mut self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Seq<'a>, Error> {
        self.open_variant(variant)?;
        self.out.push(b'[');
        Ok(Seq { out: self.out, first: true, variant: true })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Object<'a>, Error> {
        Ok(Object::new(self.out, len.unwrap_or(8), false))
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Object<'a>, Error> {
        Ok(Object::new(self.out, len, false))
    }
    fn serialize_struct_variant(
        mut self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Object<'a>, Error> {
        self.open_variant(variant)?;
        Ok(Object::new(self.out, len, true))
    }
}

macro_rules! seq {
    ($trait:ident, $method:ident) => {
        impl ser::$trait for Seq<'_> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        }
    };
}
seq!(SerializeSeq, serialize_element);
seq!(SerializeTuple, serialize_element);
seq!(SerializeTupleStruct, serialize_field);
seq!(SerializeTupleVariant, serialize_field);

impl ser::SerializeMap for Object<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeySerializer)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self.key.take().ok_or_else(|| Error::custom("a map value without its key"))?;
        self.member(Cow::Owned(key), value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Object<'_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                self.member(Cow::Borrowed(key), value)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        }
    )*};
}
fields!(SerializeStruct, SerializeStructVariant);

/// A map's key as the text `Value` would key it by: strings, characters, integers and booleans
/// (as their text) and unit variants; anything else is refused, as `Value` refuses it.
struct KeySerializer;

fn key_error() -> Error {
    Error::custom("key must be a string")
}

macro_rules! text_key {
    ($($method:ident: $t:ty),*) => {
        $(fn $method(self, v: $t) -> Result<String, Error> {
            Ok(v.to_string())
        })*
    };
}

macro_rules! refused_key {
    ($($method:ident: $t:ty),*) => {
        $(fn $method(self, _: $t) -> Result<String, Error> {
            Err(key_error())
        })*
    };
}

impl ser::Serializer for KeySerializer {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = Impossible<String, Error>;
    type SerializeTuple = Impossible<String, Error>;
    type SerializeTupleStruct = Impossible<String, Error>;
    type SerializeTupleVariant = Impossible<String, Error>;
    type SerializeMap = Impossible<String, Error>;
    type SerializeStruct = Impossible<String, Error>;
    type SerializeStructVariant = Impossible<String, Error>;

    text_key!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128, serialize_char: char,
        serialize_str: &str);
    refused_key!(serialize_bytes: &[u8]);

    fn serialize_f32(self, v: f32) -> Result<String, Error> {
        if !v.is_finite() {
            return Err(Error::custom("float key must be finite"));
        }
        serde_json::to_string(&v)
    }
    fn serialize_f64(self, v: f64) -> Result<String, Error> {
        if !v.is_finite() {
            return Err(Error::custom("float key must be finite"));
        }
        serde_json::to_string(&v)
    }

    fn serialize_none(self) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<String, Error> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<String, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_error())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_error())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_error())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_error())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_error())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde::Serialize;
    use serde_json::{Value, json};

    /// What the canonical JSON is defined as: through a `Value`.
    fn reference<T: Serialize>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(&serde_json::to_value(value)?)
    }

    fn same<T: Serialize>(value: &T) {
        // Refused by both, whatever the words.
        let fast = super::to_vec(value).map_err(|_| ());
        let slow = reference(value).map_err(|_| ());
        assert_eq!(
            fast.as_ref().map(|b| String::from_utf8_lossy(b)),
            slow.as_ref().map(|b| String::from_utf8_lossy(b))
        );
    }

    #[derive(Serialize)]
    #[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
    enum Tagged {
        Employee { zeta: u8, alpha: Option<String> },
        Bulk,
    }

    #[derive(Serialize)]
    enum External {
        Unit,
        Newtype(i64),
        Tuple(u8, String),
        Struct { z: bool, a: f64 },
    }

    #[derive(Serialize)]
    struct Inner {
        z_last: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
        a_first: Vec<Tagged>,
    }

    #[derive(Serialize)]
    struct Entry {
        zulu: i128,
        #[serde(flatten)]
        inner: Inner,
        alpha: Value,
        mid: (u8, char),
        bytes: &'static [u8],
        variants: Vec<External>,
        keyed: BTreeMap<u32, bool>,
        nan: f32,
        narrow: f32,
        unit: (),
    }

    #[test]
    fn writes_what_a_value_would() {
        same(&Entry {
            zulu: -7,
            inner: Inner {
                z_last: "quote \" backslash \\ tab \t nul \u{0} bell \u{7} é 한 😀 </",
                skipped: None,
                a_first: vec![
                    Tagged::Employee { zeta: 1, alpha: Some("x".into()) },
                    Tagged::Employee { zeta: 2, alpha: None },
                    Tagged::Bulk,
                ],
            },
            alpha: json!({"b": [1, {"d": null, "c": 2.5}], "a": {"é": 1, "e": 2, "": 3}}),
            mid: (3, 'q'),
            bytes: b"\x00\xff",
            variants: vec![
                External::Unit,
                External::Newtype(i64::MIN),
                External::Tuple(9, "t".into()),
                External::Struct { z: true, a: 1e300 },
            ],
            keyed: BTreeMap::from([(10, true), (9, false)]),
            nan: f32::NAN,
            narrow: 1.1,
            unit: (),
        });
    }

    /// The definition holds only while `serde_json` keeps a `Value`'s keys sorted and its
    /// numbers as machine numbers: its `preserve_order` and `arbitrary_precision` features,
    /// turned on by any crate of the build, would change what every entry hashes to.
    #[test]
    fn serde_json_keeps_values_as_the_definition_assumes() {
        let value: Value = serde_json::from_str(r#"{"b":1,"a":2}"#).unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), r#"{"a":2,"b":1}"#, "preserve_order");
        let big: Value = serde_json::from_str("100000000000000000000").unwrap();
        assert!(big.is_f64(), "arbitrary_precision");
    }

    #[test]
    fn refuses_what_a_value_refuses() {
        same(&BTreeMap::from([((1, 2), 3)]));
        same(&BTreeMap::from([(vec![1u8], 3)]));
        same(&BTreeMap::from([(true, 1), (false, 2)]));
        same(&BTreeMap::from([('z', 1), ('a', 2)]));
        same(&BTreeMap::from([(i128::MIN, 1)]));
        same(&BTreeMap::from([(Some(1), 1)]));
        #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
        enum Key {
            Unit,
        }
        same(&BTreeMap::from([(Key::Unit, 1)]));
        /// A map whose keys are numbers that are not integers.
        struct FloatKeys(f64);
        impl Serialize for FloatKeys {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_map([(self.0, 1)])
            }
        }
        same(&FloatKeys(1.5));
        same(&FloatKeys(1.0));
        same(&FloatKeys(-1e300));
        same(&FloatKeys(f64::NAN));
        same(&u128::MAX);
        same(&(i128::from(u64::MAX) + 1));
    }

    #[test]
    fn a_key_given_twice_keeps_its_last_value() {
        #[derive(Serialize)]
        struct Twice {
            a: u8,
            #[serde(flatten)]
            again: BTreeMap<&'static str, u8>,
        }
        same(&Twice { a: 1, again: BTreeMap::from([("a", 2), ("b", 3)]) });
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".*".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::btree_map(".*", inner, 0..8)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_json_is_written_as_through_a_value(value in any_value()) {
            let fast = super::to_vec(&value).unwrap();
            prop_assert_eq!(fast, reference(&value).unwrap());
        }

        #[test]
        fn any_map_is_written_as_through_a_value(
            map in prop::collection::hash_map(".*", any::<Option<i32>>(), 0..16),
        ) {
            prop_assert_eq!(super::to_vec(&map).unwrap(), reference(&map).unwrap());
        }
    }
}
