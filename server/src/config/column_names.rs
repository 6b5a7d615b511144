//! Column names written as text in the file (`<Column Name="user_name"/>`) turned into the bytes
//! the comparator sorts.
//!
//! LEAD: once the real marshal module lands, replace the body of [`column_name_bytes`] for
//! non-text comparators with `AbstractType::parse(comparator)?.from_display_string(text)`. Keep
//! the text rule for BytesType: Cassandra's BytesType reads hex, which would make ordinary names
//! such as `likes` invalid in this file, so here BytesType names are their UTF-8 bytes.

use super::values::short_class;

/// Converts `text` to a column name for `comparator` (a fully qualified marshal class name).
/// Text types take the UTF-8 bytes; integer and UUID types parse the text; any other type falls
/// back to UTF-8 bytes with a warning.
pub(crate) fn column_name_bytes(
    comparator: &str,
    text: &str,
    warnings: &mut Vec<String>,
    line: usize,
) -> Result<Vec<u8>, String> {
    let outer = comparator.split('(').next().unwrap_or(comparator);
    match short_class(outer) {
        "BytesType" | "UTF8Type" => Ok(text.as_bytes().to_vec()),
        "AsciiType" => {
            if text.is_ascii() {
                Ok(text.as_bytes().to_vec())
            } else {
                Err("AsciiType column names must be ASCII".into())
            }
        }
        "LongType" => text
            .trim()
            .parse::<i64>()
            .map(|v| v.to_be_bytes().to_vec())
            .map_err(|_| "LongType column names must be 64-bit integers".to_string()),
        "Int32Type" => text
            .trim()
            .parse::<i32>()
            .map(|v| v.to_be_bytes().to_vec())
            .map_err(|_| "Int32Type column names must be 32-bit integers".to_string()),
        "IntegerType" => text
            .trim()
            .parse::<i64>()
            .map(minimal_twos_complement)
            .map_err(|_| "IntegerType column names must be integers (up to 64 bits here)".to_string()),
        "UUIDType" | "LexicalUUIDType" => {
            uuid::Uuid::parse_str(text.trim()).map(|u| u.as_bytes().to_vec()).map_err(|e| format!("not a UUID: {e}"))
        }
        "TimeUUIDType" => {
            let u = uuid::Uuid::parse_str(text.trim()).map_err(|e| format!("not a UUID: {e}"))?;
            if u.get_version_num() != 1 {
                return Err("TimeUUIDType column names must be version 1 (time-based) UUIDs".into());
            }
            Ok(u.as_bytes().to_vec())
        }
        other => {
            warnings.push(format!(
                "line {line}: column name {text:?} taken as UTF-8 bytes; converting names for {other} is not supported yet"
            ));
            Ok(text.as_bytes().to_vec())
        }
    }
}

/// Big-endian two's complement in the fewest bytes (Java's `BigInteger.toByteArray`).
fn minimal_twos_complement(v: i64) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    while start < 7 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        let redundant = (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    bytes[start..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "org.apache.cassandra.db.marshal.";

    fn conv(t: &str, text: &str) -> Result<Vec<u8>, String> {
        column_name_bytes(&format!("{P}{t}"), text, &mut Vec::new(), 1)
    }

    #[test]
    fn text_and_numbers() {
        assert_eq!(conv("UTF8Type", "user_name").expect("ok"), b"user_name");
        assert_eq!(conv("BytesType", "likes").expect("ok"), b"likes");
        assert_eq!(conv("LongType", "3").expect("ok"), vec![0, 0, 0, 0, 0, 0, 0, 3]);
        assert_eq!(conv("LongType", "-1").expect("ok"), vec![0xff; 8]);
        assert!(conv("LongType", "x").is_err());
        assert!(conv("AsciiType", "é").is_err());
    }

    #[test]
    fn integer_type_uses_minimal_bytes() {
        assert_eq!(conv("IntegerType", "0").expect("ok"), vec![0]);
        assert_eq!(conv("IntegerType", "127").expect("ok"), vec![0x7f]);
        assert_eq!(conv("IntegerType", "128").expect("ok"), vec![0x00, 0x80]);
        assert_eq!(conv("IntegerType", "-1").expect("ok"), vec![0xff]);
        assert_eq!(conv("IntegerType", "-129").expect("ok"), vec![0xff, 0x7f]);
    }

    #[test]
    fn uuids() {
        let v1 = "9d2c8a00-3a3b-11ef-8000-000000000001";
        assert_eq!(conv("TimeUUIDType", v1).expect("ok").len(), 16);
        assert!(conv("TimeUUIDType", "6ba7b810-9dad-41d1-80b4-00c04fd430c8").is_err()); // v4
        assert_eq!(conv("UUIDType", "6ba7b810-9dad-41d1-80b4-00c04fd430c8").expect("ok")[0], 0x6b);
    }

    #[test]
    fn other_types_fall_back_with_a_warning() {
        let mut w = Vec::new();
        let b = column_name_bytes("org.apache.cassandra.db.marshal.DateType", "x", &mut w, 9).expect("ok");
        assert_eq!(b, b"x");
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("line 9"));
    }
}
