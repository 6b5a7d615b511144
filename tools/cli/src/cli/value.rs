//! Turning typed text into bytes and bytes back into text, as cassandra-cli does.
//!
//! A value written in a statement becomes bytes either through a conversion function
//! (`long(42)`, `utf8('x')`, `timeuuid()`, ...) or through the type the schema gives that position:
//! the comparator for column names, the sub-comparator for sub-column names, the column's
//! `validation_class` (else `default_validation_class`) for values, `key_validation_class` for row
//! keys. `assume` statements override those per column family for this session only.
//! The conversions themselves are `model::marshal::AbstractType`'s `from_display_string` and
//! `to_display_string` (Cassandra's `fromString` / `getString`).

use model::marshal::{AbstractType, MarshalError};
use uuid::Uuid;

use super::ast::Term;

/// Errors converting values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("Function '{0}' not found. Available functions: {FUNCTION_NAMES}")]
    UnknownFunction(String),
    #[error("Argument for '{0}' could not be empty.")]
    EmptyArgument(String),
    #[error("Type '{0}' was not found. Available: {FUNCTION_NAMES}")]
    UnknownAssumeType(String),
    #[error("{}", marshal_message(.0))]
    Marshal(#[from] MarshalError),
}

/// A conversion error as cassandra-cli words it: BytesType's `cannot parse 'x' as hex bytes`
/// (BytesType.fromString), the marshal error's own text otherwise.
fn marshal_message(e: &MarshalError) -> String {
    match e {
        MarshalError::BadValueString { type_name, input, .. } if type_name == "BytesType" => {
            format!("cannot parse '{input}' as hex bytes")
        }
        other => other.to_string(),
    }
}

/// The conversion functions, as listed in error messages.
pub const FUNCTION_NAMES: &str =
    "bytes, integer, long, int, lexicaluuid, timeuuid, uuid, utf8, ascii, countercolumn, boolean, double, float, date.";

/// The marshal type behind a conversion function name (case-insensitive), if any.
pub fn function_type(name: &str) -> Option<AbstractType> {
    let class = match name.to_ascii_lowercase().as_str() {
        "bytes" => "BytesType",
        "integer" => "IntegerType",
        "long" => "LongType",
        "int" => "Int32Type",
        "lexicaluuid" => "LexicalUUIDType",
        "timeuuid" => "TimeUUIDType",
        "uuid" => "UUIDType",
        "utf8" => "UTF8Type",
        "ascii" => "AsciiType",
        "countercolumn" => "CounterColumnType",
        "boolean" => "BooleanType",
        "double" => "DoubleType",
        "float" => "FloatType",
        "date" => "DateType",
        _ => return None,
    };
    AbstractType::parse(class).ok()
}

/// The type named in `assume ... as TYPE` or `get ... as TYPE`: a function name (`utf8`, `long`)
/// or a marshal class name (`UTF8Type`, `org.apache.cassandra.db.marshal.LongType`).
pub fn type_by_name(name: &str) -> Result<AbstractType, ValueError> {
    if let Some(t) = function_type(name) {
        return Ok(t);
    }
    AbstractType::parse(name).map_err(|_| ValueError::UnknownAssumeType(name.to_string()))
}

/// Parses a schema type string; an absent or empty one means `BytesType`.
pub fn schema_type(class: Option<&str>) -> Result<AbstractType, ValueError> {
    Ok(AbstractType::parse(class.unwrap_or(""))?)
}

/// Bytes of a conversion function call. With no argument, `timeuuid()` is a new version 1 UUID,
/// `lexicaluuid()` and `uuid()` a random (version 4) UUID and `bytes()` the empty value; the others
/// need an argument.
pub fn call_to_bytes(name: &str, arg: Option<&str>) -> Result<Vec<u8>, ValueError> {
    let ty = function_type(name).ok_or_else(|| ValueError::UnknownFunction(name.to_string()))?;
    match arg.filter(|a| !a.is_empty()) {
        Some(a) => Ok(ty.from_display_string(a)?),
        None => match name.to_ascii_lowercase().as_str() {
            "timeuuid" => Ok(new_time_uuid().as_bytes().to_vec()),
            "lexicaluuid" | "uuid" => Ok(Uuid::new_v4().as_bytes().to_vec()),
            "bytes" => Ok(Vec::new()),
            _ => Err(ValueError::EmptyArgument(name.to_string())),
        },
    }
}

/// A term's bytes: function calls convert themselves, text goes through `ty`.
pub fn term_to_bytes(term: &Term, ty: &AbstractType) -> Result<Vec<u8>, ValueError> {
    match term {
        Term::Text(s) => Ok(ty.from_display_string(s)?),
        Term::Call { name, arg } => call_to_bytes(name, arg.as_deref()),
    }
}

/// The type a function call converts with, if the term is a call (used to remember the type
/// of a value set with `set cf[k][c] = long(5)`, as cassandra-cli does).
pub fn term_function_type(term: &Term) -> Option<AbstractType> {
    match term {
        Term::Call { name, .. } => function_type(name),
        Term::Text(_) => None,
    }
}

/// A version 1 (time-based) UUID for now, with a random node id (multicast bit set, as RFC 4122
/// asks for node ids that are not MAC addresses).
pub fn new_time_uuid() -> Uuid {
    let mut node: [u8; 6] = *Uuid::new_v4().as_bytes().first_chunk::<6>().unwrap_or(&[0; 6]);
    node[0] |= 0x01;
    Uuid::now_v1(&node)
}

/// Human-readable form of `bytes` under `ty`.
pub fn display(ty: &AbstractType, bytes: &[u8]) -> String {
    ty.to_display_string(bytes)
}

/// Java's `Double.toString` (`0.0`, `0.1`, `2.61`, `1.0E-4`), as cassandra-cli printed doubles:
/// the marshal DoubleType shows its values that way.
pub fn java_double(x: f64) -> String {
    AbstractType::Double.to_display_string(&x.to_be_bytes())
}

/// CliClient.elapsedTime's number: milliseconds with two decimals under 10 ms (`2.61`, `0.0`),
/// whole milliseconds above.
pub fn elapsed_millis(d: std::time::Duration) -> String {
    let nanos = d.as_nanos();
    if nanos < 10_000_000 {
        java_double((nanos as f64 / 10_000.0).round() / 100.0)
    } else {
        ((nanos as f64) / 1_000_000.0).round().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_convert_their_argument() {
        assert_eq!(call_to_bytes("long", Some("42")).unwrap(), 42i64.to_be_bytes().to_vec());
        assert_eq!(call_to_bytes("LONG", Some("-1")).unwrap(), vec![0xff; 8]);
        assert_eq!(call_to_bytes("int", Some("7")).unwrap(), 7i32.to_be_bytes().to_vec());
        assert_eq!(call_to_bytes("integer", Some("256")).unwrap(), vec![1, 0]);
        assert_eq!(call_to_bytes("utf8", Some("héllo")).unwrap(), "héllo".as_bytes().to_vec());
        assert_eq!(call_to_bytes("ascii", Some("abc")).unwrap(), b"abc".to_vec());
        assert_eq!(call_to_bytes("bytes", Some("00ff10")).unwrap(), vec![0x00, 0xff, 0x10]);
        let u = "550e8400-e29b-41d4-a716-446655440000";
        assert_eq!(call_to_bytes("uuid", Some(u)).unwrap(), Uuid::parse_str(u).unwrap().as_bytes().to_vec());
        assert_eq!(call_to_bytes("lexicaluuid", Some(u)).unwrap().len(), 16);
    }

    #[test]
    fn functions_without_argument() {
        let t = call_to_bytes("timeuuid", None).unwrap();
        let u = Uuid::from_slice(&t).unwrap();
        assert_eq!(u.get_version_num(), 1);
        assert_ne!(call_to_bytes("timeuuid", None).unwrap(), t, "each call is a new UUID");
        assert_eq!(Uuid::from_slice(&call_to_bytes("lexicaluuid", None).unwrap()).unwrap().get_version_num(), 4);
        assert_eq!(call_to_bytes("bytes", None).unwrap(), Vec::<u8>::new());
        assert_eq!(call_to_bytes("long", None), Err(ValueError::EmptyArgument("long".into())));
        assert_eq!(call_to_bytes("long", Some("")), Err(ValueError::EmptyArgument("long".into())));
    }

    #[test]
    fn java_number_formats() {
        assert_eq!(java_double(0.0), "0.0");
        assert_eq!(java_double(0.1), "0.1");
        assert_eq!(java_double(1.0), "1.0");
        assert_eq!(java_double(0.0001), "1.0E-4");
        use std::time::Duration;
        assert_eq!(elapsed_millis(Duration::from_micros(2_614)), "2.61");
        assert_eq!(elapsed_millis(Duration::from_micros(3)), "0.0");
        assert_eq!(elapsed_millis(Duration::from_micros(9_999)), "10.0");
        assert_eq!(elapsed_millis(Duration::from_micros(12_600)), "13");
    }

    #[test]
    fn bad_function_calls() {
        assert_eq!(call_to_bytes("nosuch", Some("1")), Err(ValueError::UnknownFunction("nosuch".into())));
        assert!(matches!(call_to_bytes("long", Some("abc")), Err(ValueError::Marshal(_))));
        assert!(matches!(call_to_bytes("bytes", Some("xyz")), Err(ValueError::Marshal(_))));
        // cassandra-cli's wording for hex (BytesType.fromString); other types keep the marshal text.
        let e = term_to_bytes(&Term::Text("not hex".into()), &AbstractType::Bytes).unwrap_err();
        assert_eq!(e.to_string(), "cannot parse 'not hex' as hex bytes");
        let e = call_to_bytes("long", Some("abc")).unwrap_err();
        assert!(e.to_string().starts_with("Cannot parse 'abc' as LongType"), "{e}");
    }

    #[test]
    fn text_follows_the_schema_type() {
        let long = schema_type(Some("LongType")).unwrap();
        assert_eq!(term_to_bytes(&Term::Text("5".into()), &long).unwrap(), 5i64.to_be_bytes().to_vec());
        let bytes = schema_type(None).unwrap();
        assert_eq!(term_to_bytes(&Term::Text("cafe".into()), &bytes).unwrap(), vec![0xca, 0xfe]);
        assert!(term_to_bytes(&Term::Text("jsmith".into()), &bytes).is_err(), "BytesType keys must be hex");
        let call = Term::Call { name: "utf8".into(), arg: Some("jsmith".into()) };
        assert_eq!(term_to_bytes(&call, &bytes).unwrap(), b"jsmith".to_vec());
        assert_eq!(display(&long, &5i64.to_be_bytes()), "5");
        assert_eq!(display(&bytes, b"\x01\xab"), "01ab");
    }

    #[test]
    fn assume_type_names() {
        assert_eq!(type_by_name("utf8").unwrap(), AbstractType::parse("UTF8Type").unwrap());
        assert_eq!(type_by_name("LongType").unwrap(), AbstractType::parse("LongType").unwrap());
        assert!(matches!(type_by_name("nonsense"), Err(ValueError::UnknownAssumeType(_))));
    }
}
