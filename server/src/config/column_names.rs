//! Column names written as text in the file (`<Column Name="user_name"/>`) turned into the bytes
//! the comparator sorts.
//!
//! BytesType names are taken as their UTF-8 text, not hex as Cassandra's BytesType reads them:
//! a conf file names columns such as `likes`, which hex would reject. Every other comparator
//! reads the text with its own parser (`AbstractType::from_display_string`).

use model::marshal::AbstractType;

/// Converts `text` to a column name for `comparator` (a marshal class name).
pub(crate) fn column_name_bytes(
    comparator: &str,
    text: &str,
    _warnings: &mut Vec<String>,
    _line: usize,
) -> Result<Vec<u8>, String> {
    let ty = AbstractType::parse(comparator).map_err(|e| e.to_string())?;
    let bytes = match ty {
        AbstractType::Bytes => text.as_bytes().to_vec(),
        _ => ty.from_display_string(text.trim()).map_err(|e| e.to_string())?,
    };
    ty.validate(&bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
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
    fn other_types_use_their_own_parser() {
        assert_eq!(conv("DateType", "1970-01-01T00:00:00.001Z").expect("ok"), vec![0, 0, 0, 0, 0, 0, 0, 1]);
        assert!(conv("DateType", "x").is_err());
    }
}
