//! Known-vector tests per type, type-string tests, and one property suite run over every type.

use std::cmp::Ordering::{Equal, Greater, Less};

use num_bigint::BigInt;

use super::tests_properties::suite_types;
use super::{text, AbstractType as T, MarshalError};

pub(super) fn long(v: i64) -> Vec<u8> {
    v.to_be_bytes().to_vec()
}

pub(super) fn uuid(s: &str) -> Vec<u8> {
    uuid::Uuid::parse_str(s).expect("test uuid").as_bytes().to_vec()
}

/// A CompositeType value from (component bytes, end-of-component byte).
pub(super) fn comp(parts: &[(&[u8], u8)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (value, eoc) in parts {
        out.extend_from_slice(&u16::try_from(value.len()).expect("short component").to_be_bytes());
        out.extend_from_slice(value);
        out.push(*eoc);
    }
    out
}

/// A DynamicCompositeType component written with an alias.
pub(super) fn dyn_alias(alias: u8, value: &[u8], eoc: u8) -> Vec<u8> {
    let mut out = vec![0x80, alias];
    out.extend(comp(&[(value, eoc)]));
    out
}

/// A DynamicCompositeType component written with a type name.
pub(super) fn dyn_named(name: &str, value: &[u8], eoc: u8) -> Vec<u8> {
    let mut out = u16::try_from(name.len()).expect("short name").to_be_bytes().to_vec();
    out.extend_from_slice(name.as_bytes());
    out.extend(comp(&[(value, eoc)]));
    out
}

/// Asserts that `values` are in strictly increasing order under `t`, pairwise both ways.
pub(super) fn assert_increasing(t: &T, values: &[Vec<u8>]) {
    for (i, a) in values.iter().enumerate() {
        for (j, b) in values.iter().enumerate() {
            assert_eq!(t.compare(a, b), i.cmp(&j), "{t}: {} vs {}", hex::encode(a), hex::encode(b));
        }
    }
}

pub(super) fn invalid_message(t: &T, v: &[u8]) -> String {
    match t.validate(v) {
        Err(e @ MarshalError::Invalid { .. }) => e.to_string(),
        other => panic!("{t}: expected Invalid for {}, got {other:?}", hex::encode(v)),
    }
}

// ---- per-type ordering and validation ----

#[test]
fn long_type_is_signed_with_empty_first() {
    assert_increasing(&T::Long, &[vec![], long(i64::MIN), long(-1), long(0), long(1), long(i64::MAX)]);
    assert_eq!(invalid_message(&T::Long, &[1, 2, 3]), "Expected 8 or 0 byte long (3)");
    assert!(T::Long.validate(&[]).is_ok());
}

#[test]
fn int32_short_byte_are_signed() {
    let i = |v: i32| v.to_be_bytes().to_vec();
    assert_increasing(&T::Int32, &[vec![], i(i32::MIN), i(-1), i(0), i(300)]);
    assert_eq!(invalid_message(&T::Int32, &[0; 8]), "Expected 4 or 0 byte int (8)");
    let s = |v: i16| v.to_be_bytes().to_vec();
    assert_increasing(&T::Short, &[s(-300), s(-1), s(0), s(2)]);
    assert_eq!(invalid_message(&T::Short, &[]), "Expected 2 bytes for a smallint (0)");
    assert_increasing(&T::Byte, &[vec![0x80], vec![0xFF], vec![0], vec![0x7F]]);
    assert_eq!(invalid_message(&T::Byte, &[1, 2]), "Expected 1 byte for a tinyint (2)");
}

#[test]
fn integer_type_compares_numerically_across_lengths() {
    // -129 < -128 < -1 < 0 < 1 < 127 < 128 < 256
    let ordered: Vec<Vec<u8>> = vec![
        vec![],
        vec![0xFF, 0x7F],
        vec![0x80],
        vec![0xFF],
        vec![0x00],
        vec![0x01],
        vec![0x7F],
        vec![0x00, 0x80],
        vec![0x01, 0x00],
    ];
    assert_increasing(&T::Integer, &ordered);
    // Redundant sign extension does not change the number.
    assert_eq!(T::Integer.compare(&[0x00, 0x00, 0x05], &[0x05]), Equal);
    assert_eq!(T::Integer.compare(&[0xFF, 0xFF, 0xFF], &[0xFF]), Equal);
    assert_eq!(T::Integer.compare(&[0xFF, 0x80], &[0x80]), Equal);
    assert!(T::Integer.validate(&[0xAB; 40]).is_ok());
    assert_eq!(T::Integer.to_display_string(&[0xFF, 0x7F]), "-129");
    assert_eq!(T::Integer.from_display_string("256"), Ok(vec![0x01, 0x00]));
    assert_eq!(T::Integer.from_display_string("-1"), Ok(vec![0xFF]));
}

pub(super) fn decimal(unscaled: i64, scale: i32) -> Vec<u8> {
    let mut out = scale.to_be_bytes().to_vec();
    out.extend(BigInt::from(unscaled).to_signed_bytes_be());
    out
}

#[test]
fn decimal_type_is_numeric_and_scale_blind() {
    assert_eq!(T::Decimal.compare(&decimal(10, 1), &decimal(1, 0)), Equal);
    assert_increasing(
        &T::Decimal,
        &[vec![], decimal(-2, 0), decimal(-15, 1), decimal(0, 0), decimal(5, 1), decimal(1, 0), decimal(1, -3)],
    );
    // Huge scales must not build huge powers of ten.
    assert_eq!(T::Decimal.compare(&decimal(1, i32::MAX), &decimal(0, 0)), Greater);
    assert_eq!(T::Decimal.compare(&decimal(1, i32::MAX), &decimal(1, i32::MIN)), Less);
    assert_eq!(T::Decimal.compare(&decimal(-1, i32::MIN), &decimal(-1, i32::MAX)), Less);
    assert_eq!(invalid_message(&T::Decimal, &[0, 0, 1]), "Expected 0 or at least 4 bytes (3)");
    for (unscaled, scale, shown) in [
        (123, 2, "1.23"),
        (1, -3, "1E+3"),
        (1, 6, "0.000001"),
        (1, 7, "1E-7"),
        (-5, 0, "-5"),
        (-1234, 3, "-1.234"),
        (12, -1, "1.2E+2"),
    ] {
        assert_eq!(T::Decimal.to_display_string(&decimal(unscaled, scale)), shown);
        assert_eq!(T::Decimal.from_display_string(shown), Ok(decimal(unscaled, scale)), "{shown}");
    }
}

#[test]
fn bytes_ascii_utf8_use_unsigned_byte_order_and_validate() {
    assert_increasing(&T::Bytes, &[vec![], vec![0x00], vec![0x00, 0x00], vec![0x7F], vec![0x80], vec![0xFF]]);
    assert_increasing(&T::Utf8, &[vec![], b"a".to_vec(), b"ab".to_vec(), "é".as_bytes().to_vec()]);
    // Java prints the first byte above 127 as a signed byte.
    assert_eq!(invalid_message(&T::Ascii, b"ab\x80\xff"), "Invalid byte for ascii: -128");
    assert!(T::Ascii.validate(b"plain text").is_ok());
    assert!(T::Utf8.validate("héllo ☃ 🦀".as_bytes()).is_ok());
    // Cassandra's validator accepts modified UTF-8 NUL and encoded surrogates...
    assert!(T::Utf8.validate(&[0xC0, 0x80]).is_ok());
    assert!(T::Utf8.validate(&[0xED, 0xA0, 0x80]).is_ok());
    // ...and rejects these.
    for bad in [&[0xC1, 0x80][..], &[0xE2, 0x82], &[0xF8, 0x80, 0x80, 0x80], &[0x80], &[0xE0, 0x80, 0x80]] {
        assert_eq!(invalid_message(&T::Utf8, bad), "String didn't validate.", "{bad:02x?}");
    }
}

// Two v1 UUIDs where the timestamp order and java.util.UUID order disagree:
// A has time_low 1, time_hi 0x001 (timestamp 2^48 + 1); B has time_low 2, time_hi 0 (timestamp 2).
const UUID_A: &str = "00000001-0000-1001-8000-000000000000";
const UUID_B: &str = "00000002-0000-1000-8000-000000000000";

#[test]
fn time_uuid_and_lexical_uuid_disagree_on_the_same_pair() {
    let (a, b) = (uuid(UUID_A), uuid(UUID_B));
    assert_eq!(T::TimeUuid.compare(&a, &b), Greater);
    assert_eq!(T::LexicalUuid.compare(&a, &b), Less);
    assert_eq!(T::Uuid.compare(&a, &b), Greater);
}

#[test]
fn uuid_tie_breaks_follow_cassandra() {
    // Same timestamp; the clock-sequence byte differs as 0x80 vs 0x7f.
    let lo = uuid("00000001-0000-1000-8000-000000000000");
    let hi = uuid("00000001-0000-1000-7f00-000000000000");
    // TimeUUIDType compares the last 8 bytes signed: 0x80 (-128) < 0x7f.
    assert_eq!(T::TimeUuid.compare(&lo, &hi), Less);
    // UUIDType compares them unsigned.
    assert_eq!(T::Uuid.compare(&lo, &hi), Greater);
    // LexicalUUIDType uses signed longs: an msb with the top bit set sorts first.
    let neg = uuid("80000000-0000-4000-8000-000000000000");
    let pos = uuid("00000000-0000-4000-8000-000000000000");
    assert_eq!(T::LexicalUuid.compare(&neg, &pos), Less);
    assert_eq!(T::Uuid.compare(&neg, &pos), Greater);
    // UUIDType orders by version first.
    let v1 = uuid("ffffffff-ffff-1fff-bfff-ffffffffffff");
    assert_eq!(T::Uuid.compare(&v1, &pos), Less);
    // Empty first for all three.
    for t in [T::TimeUuid, T::LexicalUuid, T::Uuid] {
        assert_eq!(t.compare(&[], &lo), Less);
        assert_eq!(t.compare(&[], &[]), Equal);
    }
}

#[test]
fn uuid_validation() {
    let v4 = uuid("80000000-0000-4000-8000-000000000000");
    assert_eq!(invalid_message(&T::TimeUuid, &v4), "Invalid version for TimeUUID type.");
    assert!(T::TimeUuid.validate(&uuid(UUID_A)).is_ok());
    assert!(T::TimeUuid.validate(&[]).is_ok());
    for t in [T::TimeUuid, T::LexicalUuid, T::Uuid] {
        assert_eq!(invalid_message(&t, &[0; 15]), "UUID should be 16 or 0 bytes (15)", "{t}");
    }
    assert!(T::Uuid.validate(&v4).is_ok());
}

#[test]
fn boolean_dates_doubles_inet_counter() {
    assert_increasing(&T::Boolean, &[vec![], vec![0], vec![1]]);
    assert_eq!(T::Boolean.compare(&[1], &[2]), Equal);
    assert_eq!(invalid_message(&T::Boolean, &[0, 0]), "Expected 1 or 0 byte value (2)");

    // DateType compares unsigned (pre-1970 after post-1970), TimestampType signed.
    assert_eq!(T::Date.compare(&long(-1), &long(0)), Greater);
    assert_eq!(T::Timestamp.compare(&long(-1), &long(0)), Less);

    let d = |v: f64| v.to_be_bytes().to_vec();
    assert_increasing(
        &T::Double,
        &[vec![], d(f64::NEG_INFINITY), d(-1.0), d(-0.0), d(0.0), d(1.5), d(f64::INFINITY), d(f64::NAN)],
    );
    assert_eq!(T::Double.compare(&d(f64::NAN), &d(-f64::NAN)), Equal);
    let f = |v: f32| v.to_be_bytes().to_vec();
    assert_increasing(&T::Float, &[vec![], f(-1.0), f(-0.0), f(0.0), f(f32::INFINITY), f(f32::NAN)]);
    assert_eq!(invalid_message(&T::Float, &[0; 8]), "Expected 4 or 0 byte value for a float (8)");

    assert!(T::InetAddress.validate(&[127, 0, 0, 1]).is_ok());
    assert!(T::InetAddress.validate(&[0; 16]).is_ok());
    assert_eq!(
        invalid_message(&T::InetAddress, &[1, 2, 3, 0xab, 5]),
        "Expected 4 or 16 byte inetaddress; got 010203ab05"
    );

    assert!(T::CounterColumn.is_counter());
    assert!(!T::Long.is_counter());
    assert!(T::CounterColumn.validate(&long(5)).is_ok());
    assert_eq!(invalid_message(&T::CounterColumn, &[0; 3]), "Expected 8 or 0 byte long (3)");

    assert_eq!(T::Empty.compare(&[], &[]), Equal);
    assert_eq!(invalid_message(&T::Empty, &[1]), "EmptyType only accept empty values");
    assert_increasing(&T::SimpleDate, &[vec![0, 0, 0, 0], vec![0x80, 0, 0, 0], vec![0xFF, 0, 0, 0]]);
    assert_eq!(invalid_message(&T::Time, &[0; 4]), "Expected 8 byte long for time (4)");
}

/// One invalid value of every simple type and the MarshalException message Cassandra 3.11's
/// serializer gives for it: the error displays that message alone and names the type.
#[test]
fn every_refusal_is_in_3_11_words() {
    let v4 = uuid("80000000-0000-4000-8000-000000000000");
    let cases: Vec<(T, Vec<u8>, &str)> = vec![
        (T::Ascii, b"a\xc3\xa9".to_vec(), "Invalid byte for ascii: -61"),
        (T::Utf8, vec![0xE2, 0x82], "String didn't validate."),
        (T::Long, vec![0; 3], "Expected 8 or 0 byte long (3)"),
        (T::CounterColumn, vec![0; 9], "Expected 8 or 0 byte long (9)"),
        (T::Date, vec![0; 3], "Expected 8 or 0 byte long for date (3)"),
        (T::Timestamp, vec![0; 4], "Expected 8 or 0 byte long for date (4)"),
        (T::Double, vec![0; 3], "Expected 8 or 0 byte value for a double (3)"),
        (T::Int32, vec![0; 3], "Expected 4 or 0 byte int (3)"),
        (T::Float, vec![0; 3], "Expected 4 or 0 byte value for a float (3)"),
        (T::Uuid, vec![0; 3], "UUID should be 16 or 0 bytes (3)"),
        (T::LexicalUuid, vec![0; 17], "UUID should be 16 or 0 bytes (17)"),
        (T::TimeUuid, vec![0; 3], "UUID should be 16 or 0 bytes (3)"),
        (T::TimeUuid, v4, "Invalid version for TimeUUID type."),
        (T::Boolean, vec![0; 2], "Expected 1 or 0 byte value (2)"),
        (T::Decimal, vec![0; 3], "Expected 0 or at least 4 bytes (3)"),
        (T::InetAddress, vec![1, 2, 3], "Expected 4 or 16 byte inetaddress; got 010203"),
        (T::Short, vec![0; 3], "Expected 2 bytes for a smallint (3)"),
        (T::Byte, vec![], "Expected 1 byte for a tinyint (0)"),
        (T::Empty, vec![0], "EmptyType only accept empty values"),
        (T::SimpleDate, vec![0; 3], "Expected 4 byte long for date (3)"),
        (T::Time, vec![0; 3], "Expected 8 byte long for time (3)"),
    ];
    for (t, v, expected) in cases {
        let refused = t.validate(&v);
        assert_eq!(
            refused,
            Err(MarshalError::Invalid { type_name: t.short_name().into(), reason: expected.into() }),
            "{t}"
        );
        assert_eq!(invalid_message(&t, &v), expected, "{t}");
    }
    // BytesType and IntegerType take any bytes.
    assert!(T::Bytes.validate(&[0xFF; 3]).is_ok());
    assert!(T::Integer.validate(&[0xFF; 3]).is_ok());
}

// ---- composites ----

pub(super) fn utf8_long() -> T {
    T::Composite(vec![T::Utf8, T::Long])
}

#[test]
fn composite_orders_components_then_end_of_component() {
    let t = utf8_long();
    let one = long(1);
    let minus = long(-1);
    assert_increasing(
        &t,
        &[
            vec![],
            comp(&[(b"a", 0xFF)]),           // start bound: before everything "a"
            comp(&[(b"a", 0)]),              // "a" alone
            comp(&[(b"a", 0), (&minus, 0)]), // "a", -1 (LongType: signed)
            comp(&[(b"a", 0), (&one, 0)]),   // "a", 1
            comp(&[(b"a", 0), (&one, 1)]),   // end bound of ("a", 1)
            comp(&[(b"a", 1)]),              // end bound: after everything "a"
            comp(&[(b"b", 0xFF)]),
            comp(&[(b"b", 0), (&minus, 0)]),
        ],
    );
    // A static name (0xFFFF prefix) sorts before all non-static names.
    let mut static_name = vec![0xFF, 0xFF];
    static_name.extend(comp(&[(b"z", 0)]));
    assert_eq!(t.compare(&static_name, &comp(&[(b"a", 0xFF)])), Less);
    assert!(t.validate(&static_name).is_ok());
}

#[test]
fn composite_validation_names_the_problem() {
    let t = utf8_long();
    assert!(t.validate(&[]).is_ok());
    assert!(t.validate(&comp(&[(b"a", 0), (&long(1), 1)])).is_ok());
    // Any end-of-component byte is accepted on the last component, as in Cassandra.
    assert!(t.validate(&comp(&[(b"a", 7)])).is_ok());
    // 3.11's AbstractCompositeType words, without a space before the component number in the
    // last two, as 3.11 writes them.
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![0x00], "Not enough bytes to read value size of component 0"),
        (vec![0x00, 0x05, b'a'], "Not enough bytes to read value of component 0"),
        (vec![0x00, 0x01, b'a'], "Not enough bytes to read the end-of-component byte of component0"),
        (
            [comp(&[(b"a", 1)]), comp(&[(&long(1), 0)])].concat(),
            "Invalid bytes remaining after an end-of-component at component0",
        ),
        (comp(&[(b"a", 0), (&long(1), 0), (b"x", 0)]), "Too many bytes for comparator"),
    ];
    for (value, expected) in cases {
        assert_eq!(
            t.validate(&value),
            Err(MarshalError::Invalid { type_name: "CompositeType".into(), reason: expected.into() }),
            "{}",
            hex::encode(&value)
        );
    }
    // A refused component's error reaches the caller unchanged, as in 3.11: its type's words
    // and its type's name.
    let cases: Vec<(Vec<u8>, &str, &str)> = vec![
        (comp(&[(b"a", 0), (&[1, 2, 3], 0)]), "LongType", "Expected 8 or 0 byte long (3)"),
        (comp(&[(&[0xFF], 0)]), "UTF8Type", "String didn't validate."),
    ];
    for (value, type_name, expected) in cases {
        assert_eq!(
            t.validate(&value),
            Err(MarshalError::Invalid { type_name: type_name.into(), reason: expected.into() }),
            "{}",
            hex::encode(&value)
        );
        assert_eq!(invalid_message(&t, &value), expected);
    }
}

#[test]
fn composite_text_form_escapes_and_marks_bounds() {
    let t = utf8_long();
    let value = comp(&[(b"a:b", 0), (&long(5), 0)]);
    assert_eq!(t.to_display_string(&value), "a\\:b:5");
    assert_eq!(t.from_display_string("a\\:b:5"), Ok(value));
    let bound = comp(&[(b"x!", 0), (&long(-2), 1)]);
    assert_eq!(t.to_display_string(&bound), "x!!:-2:!");
    assert_eq!(t.from_display_string("x!!:-2:!"), Ok(bound));
    assert_eq!(t.from_display_string("a:_"), Ok(comp(&[(b"a", 0xFF)])));
    assert!(matches!(
        t.from_display_string("a:5:x"),
        Err(MarshalError::BadValueString { ref type_name, .. }) if type_name == "CompositeType"
    ));
    assert!(t.from_display_string("a:notanumber").is_err());
}

pub(super) fn dct() -> T {
    T::DynamicComposite(vec![
        (b'a', T::Utf8),
        (b'b', T::Long),
        (b'r', T::Reversed(Box::new(T::Long))),
        (b's', T::Reversed(Box::new(T::Utf8))),
    ])
}

#[test]
fn dynamic_composite_orders_by_type_name_then_value() {
    let t = dct();
    // Different types: the class name decides ("LongType" < "UTF8Type") whatever the values.
    let b_big = dyn_alias(b'b', &long(i64::MAX), 0);
    let a_small = dyn_alias(b'a', b"", 0);
    assert_eq!(t.compare(&b_big, &a_small), Less);
    // Same type written by alias or by name: values decide.
    let named = dyn_named("org.apache.cassandra.db.marshal.UTF8Type", b"m", 0);
    assert_eq!(t.compare(&dyn_alias(b'a', b"a", 0), &named), Less);
    assert_eq!(t.compare(&dyn_named("UTF8Type", b"m", 0), &named), Equal);
    // Both reversed: the base types are compared by name, and equal bases compare reversed.
    assert_eq!(t.compare(&dyn_alias(b'r', &long(1), 0), &dyn_alias(b'r', &long(2), 0)), Greater);
    assert_eq!(t.compare(&dyn_alias(b'r', &long(9), 0), &dyn_alias(b's', b"a", 0)), Less);
    // A reversed type against a plain one: "ReversedType" vs "LongType".
    assert_eq!(t.compare(&dyn_alias(b'r', &long(1), 0), &dyn_alias(b'b', &long(1), 0)), Greater);
    // End-of-component bytes and prefixes as in CompositeType.
    let prefix = dyn_alias(b'a', b"k", 0);
    let longer = [prefix.clone(), dyn_alias(b'b', &long(1), 0)].concat();
    assert_increasing(&t, &[vec![], dyn_alias(b'a', b"k", 0xFF), prefix, longer, dyn_alias(b'a', b"k", 1)]);
}

#[test]
fn dynamic_composite_validation_and_text() {
    let t = dct();
    let value = [dyn_alias(b'a', b"x:y", 0), dyn_named("LongType", &long(5), 0)].concat();
    assert!(t.validate(&value).is_ok());
    assert_eq!(t.to_display_string(&value), "a@x\\:y:LongType@5");
    assert_eq!(t.from_display_string("a@x\\:y:LongType@5"), Ok(value));
    // 3.11's DynamicCompositeType words for a component whose type cannot be read.
    let second = |bad: Vec<u8>| [dyn_alias(b'a', b"x", 0), bad].concat();
    let cases: [(Vec<u8>, &str); 6] = [
        (second(dyn_alias(b'z', b"x", 0)), "Cannot find comparator for component 1"),
        (dyn_named("NoSuchType", b"x", 0), "Cannot find comparator for component 0"),
        (dyn_named("LongType(", b"x", 0), "Cannot find comparator for component 0"),
        (vec![0x00, 0x02, 0xFF, 0xFE, 0x00, 0x00, 0x00], "Cannot find comparator for component 0"),
        (vec![0x80], "Not enough bytes to header of the comparator part of component 0"),
        (vec![0x00, 0x08, b'L', b'o', b'n', b'g'], "Not enough bytes to read comparator name of component 0"),
    ];
    for (value, expected) in cases {
        assert_eq!(invalid_message(&t, &value), expected, "{}", hex::encode(&value));
    }
    // A refused component answers in its own type's words.
    assert_eq!(invalid_message(&t, &dyn_alias(b'b', b"x", 0)), "Expected 8 or 0 byte long (1)");
}

#[test]
fn reversed_type_swaps_arguments_and_sorts_empty_last() {
    let t = T::Reversed(Box::new(T::Long));
    assert_increasing(&t, &[long(1), long(0), long(-1), vec![]]);
    assert!(t.is_reversed());
    assert!(!T::Long.is_reversed());
    assert_eq!(invalid_message(&t, &[1]), "Expected 8 or 0 byte long (1)");
    assert_eq!(t.from_display_string("7"), Ok(long(7)));
    assert_eq!(t.to_display_string(&long(7)), "7");
}

// ---- type strings ----

#[test]
fn parse_accepts_short_full_and_parameterised_names() {
    assert_eq!(T::parse("UTF8Type"), Ok(T::Utf8));
    assert_eq!(T::parse("org.apache.cassandra.db.marshal.UTF8Type"), Ok(T::Utf8));
    assert_eq!(T::parse(" \tCompositeType ( UTF8Type ,\n LongType ) "), Ok(utf8_long()));
    assert_eq!(T::parse("ReversedType(org.apache.cassandra.db.marshal.LongType)"), Ok(T::Reversed(Box::new(T::Long))));
    assert_eq!(T::parse("LongType(reversed=true)"), Ok(T::Reversed(Box::new(T::Long))));
    assert_eq!(T::parse("LongType(reversed=false)"), Ok(T::Long));
    assert_eq!(T::parse("LongType()"), Ok(T::Long));
    assert_eq!(
        T::parse("DynamicCompositeType(a=>UTF8Type,b=>LongType)"),
        Ok(T::DynamicComposite(vec![(b'a', T::Utf8), (b'b', T::Long)]))
    );
    assert_eq!(T::parse("DynamicCompositeType"), Ok(T::DynamicComposite(vec![])));
    // Cassandra maps a blank type string to BytesType.
    assert_eq!(T::parse(""), Ok(T::Bytes));
    assert_eq!(T::parse("  "), Ok(T::Bytes));
}

#[test]
fn class_name_is_cassandras_full_form() {
    assert_eq!(
        utf8_long().class_name(),
        "org.apache.cassandra.db.marshal.CompositeType(org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.LongType)"
    );
    assert_eq!(
        T::parse("DynamicCompositeType(a=>UTF8Type,b=>LongType(reversed=true))").map(|t| t.class_name()),
        Ok("org.apache.cassandra.db.marshal.DynamicCompositeType(a=>org.apache.cassandra.db.marshal.UTF8Type,\
            b=>org.apache.cassandra.db.marshal.ReversedType(org.apache.cassandra.db.marshal.LongType))"
            .to_string())
    );
    assert_eq!(T::TimeUuid.to_string(), "org.apache.cassandra.db.marshal.TimeUUIDType");
    for t in suite_types() {
        assert_eq!(T::parse(&t.class_name()), Ok(t.clone()), "{t}");
        if T::SIMPLE.contains(&t) {
            assert_eq!(T::parse(t.short_name()), Ok(t.clone()));
        }
    }
}

#[test]
fn parse_errors() {
    let unknown = T::parse("FooType");
    assert_eq!(unknown, Err(MarshalError::UnknownType("org.apache.cassandra.db.marshal.FooType".into())));
    assert_eq!(
        unknown.map_err(|e| e.to_string()),
        Err("Unknown type org.apache.cassandra.db.marshal.FooType".to_string())
    );
    assert_eq!(T::parse("com.example.MyType"), Err(MarshalError::UnknownType("com.example.MyType".into())));
    assert_eq!(
        T::parse("CompositeType(UTF8Type,BarType)"),
        Err(MarshalError::UnknownType("org.apache.cassandra.db.marshal.BarType".into()))
    );
    assert_eq!(T::parse("utf8type"), Err(MarshalError::UnknownType("org.apache.cassandra.db.marshal.utf8type".into())));
    for bad in [
        "CompositeType(UTF8Type",
        "CompositeType()",
        "CompositeType",
        "ReversedType(LongType,UTF8Type)",
        "ReversedType",
        "LongType junk",
        "DynamicCompositeType(ab=>UTF8Type)",
        "DynamicCompositeType(a=UTF8Type)",
        "CompositeType(UTF8Type,,LongType)",
        "(UTF8Type)",
    ] {
        assert!(matches!(T::parse(bad), Err(MarshalError::BadTypeString { .. })), "{bad}: {:?}", T::parse(bad));
    }
}

// ---- text forms ----

#[test]
fn display_and_parse_known_values() {
    assert_eq!(T::Long.to_display_string(&long(-42)), "-42");
    assert_eq!(T::Long.from_display_string("-42"), Ok(long(-42)));
    assert_eq!(T::Long.from_display_string(""), Ok(vec![]));
    assert!(matches!(
        T::Long.from_display_string("abc"),
        Err(MarshalError::BadValueString { ref type_name, .. }) if type_name == "LongType"
    ));
    assert_eq!(T::Bytes.to_display_string(&[0xCA, 0xFE]), "cafe");
    assert_eq!(T::Bytes.from_display_string("abc"), Ok(vec![0x0A, 0xBC]));
    assert!(T::Bytes.from_display_string("xyz").is_err());
    assert_eq!(T::Utf8.to_display_string("héllo".as_bytes()), "héllo");
    assert!(T::Ascii.from_display_string("é").is_err());
    assert_eq!(T::Uuid.to_display_string(&uuid(UUID_A)), UUID_A);
    assert!(T::TimeUuid.from_display_string("80000000-0000-4000-8000-000000000000").is_err());
    let now = T::TimeUuid.from_display_string("now").expect("fresh time uuid");
    assert!(T::TimeUuid.validate(&now).is_ok());
    assert_eq!(now.len(), 16);
    assert_eq!(T::Boolean.to_display_string(&[2]), "true");
    assert_eq!(T::Boolean.from_display_string("FALSE"), Ok(vec![0]));
    assert_eq!(T::Timestamp.to_display_string(&long(0)), "1970-01-01T00:00:00.000Z");
    assert_eq!(T::Timestamp.to_display_string(&long(-3_600_000)), "1969-12-31T23:00:00.000Z");
    for s in ["2011-02-03 04:05+0000", "2011-02-03T04:05:00Z", "2011-02-03T05:05:00.000+01:00", "1296705900000"] {
        assert_eq!(T::Date.from_display_string(s), Ok(long(1_296_705_900_000)), "{s}");
    }
    assert!(T::Timestamp.from_display_string("2011-02-30").is_err());
    assert_eq!(T::Double.to_display_string(&1.0f64.to_be_bytes()), "1.0");
    assert_eq!(T::Double.to_display_string(&1e7f64.to_be_bytes()), "1.0E7");
    assert_eq!(T::Double.to_display_string(&1.5e-5f64.to_be_bytes()), "1.5E-5");
    assert_eq!(T::Double.to_display_string(&(-0.0f64).to_be_bytes()), "-0.0");
    assert_eq!(T::Float.to_display_string(&100.5f32.to_be_bytes()), "100.5");
    assert_eq!(T::InetAddress.to_display_string(&[10, 0, 0, 1]), "10.0.0.1");
    assert_eq!(T::InetAddress.from_display_string("::1"), Ok([vec![0; 15], vec![1]].concat()));
    assert_eq!(T::CounterColumn.to_display_string(&long(12)), "12");
    assert_eq!(T::SimpleDate.to_display_string(&[0x80, 0, 0, 0]), "1970-01-01");
    assert_eq!(T::SimpleDate.from_display_string("2024-02-29"), Ok((0x8000_0000u32 + 19_782).to_be_bytes().to_vec()));
    assert_eq!(T::Time.to_display_string(&3_723_000_000_004i64.to_be_bytes()), "01:02:03.000000004");
    assert_eq!(T::Time.from_display_string("01:02:03.000000004"), Ok(3_723_000_000_004i64.to_be_bytes().to_vec()));
    // Types that do not allow empty values reject "".
    assert!(T::Short.from_display_string("").is_err());
    // Invalid bytes never make display fail.
    assert_eq!(T::Long.to_display_string(&[1, 2, 3]), "0x010203");
}

#[test]
fn civil_dates() {
    assert_eq!(text::days_from_civil_for_tests(1970, 1, 1), 0);
    assert_eq!(text::days_from_civil_for_tests(2024, 2, 29), 19_782);
    assert_eq!(text::days_from_civil_for_tests(1, 1, 1), -719_162);
    assert_eq!(text::civil_from_days_for_tests(-719_162), (1, 1, 1));
}

mod collections {
    use std::cmp::Ordering;

    use super::super::{read_elements, write_elements, write_tuple, AbstractType as T, CollectionKind};

    fn int(v: i32) -> Vec<u8> {
        v.to_be_bytes().to_vec()
    }

    fn list_of(values: &[i32]) -> Vec<u8> {
        let elements: Vec<Vec<u8>> = values.iter().map(|v| int(*v)).collect();
        write_elements(elements.len(), elements.iter().map(Vec::as_slice))
    }

    #[test]
    fn type_strings_round_trip_with_frozen_and_column_to_collection() {
        let cases = [
            "org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.Int32Type)",
            "org.apache.cassandra.db.marshal.FrozenType(org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.FrozenType(org.apache.cassandra.db.marshal.SetType(org.apache.cassandra.db.marshal.LongType))))",
            "org.apache.cassandra.db.marshal.TupleType(org.apache.cassandra.db.marshal.Int32Type,org.apache.cassandra.db.marshal.UTF8Type)",
            "org.apache.cassandra.db.marshal.ColumnToCollectionType(6c:org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.Int32Type))",
        ];
        for case in cases {
            assert_eq!(T::parse(case).expect(case).class_name(), case);
        }
        // FrozenType freezes what it wraps, and the short form reads the same.
        let frozen = T::parse("FrozenType(ListType(SetType(Int32Type)))").expect("parses");
        assert!(!frozen.is_multi_cell());
        let T::List { element, frozen: true } = &frozen else { panic!("a frozen list: {frozen:?}") };
        assert!(matches!(element.as_ref(), T::Set { frozen: true, .. }));
        assert!(T::parse("ListType(Int32Type)").expect("parses").is_multi_cell());
        assert!(T::parse("MapType(Int32Type)").is_err());
        assert!(T::parse("ListType()").is_err());
    }

    #[test]
    fn whole_values_validate_and_compare_as_three_eleven() {
        let t = T::parse("FrozenType(ListType(Int32Type))").expect("parses");
        assert_eq!(t.validate(&list_of(&[1, -2])), Ok(()));
        assert_eq!(
            t.validate(&[0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1]).map_err(|e| e.to_string()),
            Err("Not enough bytes to read a list".to_string())
        );
        let mut extra = list_of(&[1]);
        extra.push(0);
        assert_eq!(
            t.validate(&extra).map_err(|e| e.to_string()),
            Err("Unexpected extraneous bytes after list value".to_string())
        );
        // The element type checks each element.
        let bad = write_elements(1, [&[1u8, 2][..]]);
        assert_eq!(t.validate(&bad).map_err(|e| e.to_string()), Err("Expected 4 or 0 byte int (2)".to_string()));
        // A huge count with no bytes behind it is refused without allocating.
        assert!(t.validate(&[0x7f, 0xff, 0xff, 0xff]).is_err());
        // Element by element with the element type, then the shorter first.
        assert_eq!(t.compare(&list_of(&[-1]), &list_of(&[1])), Ordering::Less);
        assert_eq!(t.compare(&list_of(&[1]), &list_of(&[1, 0])), Ordering::Less);
        assert_eq!(t.compare(&[], &list_of(&[])), Ordering::Less);
        assert_eq!(t.to_display_string(&list_of(&[1, -2])), "[1, -2]");
        let map = T::parse("FrozenType(MapType(UTF8Type,Int32Type))").expect("parses");
        let value = write_elements(1, [&b"a"[..], &int(7)]);
        assert_eq!(map.to_display_string(&value), "{a: 7}");
        assert_eq!(read_elements(CollectionKind::Map, &value).expect("reads").len(), 2);
    }

    #[test]
    fn tuples_allow_null_and_fewer_components() {
        let t = T::parse("TupleType(Int32Type,UTF8Type)").expect("parses");
        let full = write_tuple([Some(&int(1)[..]), Some(&b"x"[..])]);
        let null_first = write_tuple([None, Some(&b"x"[..])]);
        let short = write_tuple([Some(&int(1)[..])]);
        assert_eq!(t.validate(&full), Ok(()));
        assert_eq!(t.validate(&null_first), Ok(()));
        assert_eq!(t.validate(&short), Ok(()));
        let too_many = write_tuple([Some(&int(1)[..]), Some(&b"x"[..]), None]);
        assert!(t.validate(&too_many).is_err());
        assert_eq!(t.compare(&null_first, &full), Ordering::Less);
        assert_eq!(t.compare(&short, &full), Ordering::Less);
        assert_eq!(t.to_display_string(&null_first), "@:x");
    }

    #[test]
    fn cell_names_order_collection_keys_by_their_column_type() {
        let comparator = T::parse(
            "CompositeType(UTF8Type,ColumnToCollectionType(73:SetType(Int32Type),6d:MapType(UTF8Type,Int32Type)))",
        )
        .expect("parses");
        let name = |column: &[u8], key: &[u8]| {
            let mut out = Vec::new();
            for c in [column, key] {
                out.extend_from_slice(&(c.len() as u16).to_be_bytes());
                out.extend_from_slice(c);
                out.push(0);
            }
            out
        };
        // Set elements by Int32Type, not by their bytes: -1 before 1.
        assert_eq!(comparator.compare(&name(b"s", &int(-1)), &name(b"s", &int(1))), Ordering::Less);
        assert_eq!(
            comparator.validate(&name(b"s", &[1, 2])).map_err(|e| e.to_string()),
            Err("Expected 4 or 0 byte int (2)".to_string())
        );
        // Another column's keys are bytes; the column names order first.
        assert_eq!(comparator.compare(&name(b"m", b"z"), &name(b"s", &int(-1))), Ordering::Less);
        assert_eq!(comparator.validate(&name(b"x", &[1, 2])), Ok(()));
    }
}
