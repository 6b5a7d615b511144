//! SELECT JSON and INSERT JSON: values as 3.11 writes them in JSON (`toJSONString`) and reads
//! them back (`fromJSONObject`).

use model::marshal::AbstractType;
use serde_json::Value as Json;

use super::markers::spec;
use super::values::Value;
use super::{invalid, ColumnSpec, CqlError, ResultSet};
use crate::schema::cql_name;
use crate::schema::Table;

/// A column name as a JSON key, as 3.11's `ColumnIdentifier.toCQLString` writes it: bare when
/// it is `[a-z][a-z0-9_]*` and no reserved keyword (unreserved ones such as `key` stay bare),
/// else between double quotes.
pub(super) fn key(name: &str) -> String {
    let plain = name.bytes().next().is_some_and(|c| c.is_ascii_lowercase())
        && name.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_');
    if plain && !crate::Keyword::from_word(name).is_some_and(|k| k.is_reserved()) {
        return name.to_string();
    }
    crate::ast::Identifier::quoted(name).text().to_string()
}

/// One value in JSON, as 3.11 writes it.
pub(super) fn to_json(ty: &AbstractType, v: Option<&[u8]>) -> String {
    let Some(v) = v else { return "null".to_string() };
    let quoted = |s: String| Json::String(s).to_string();
    match ty {
        AbstractType::Reversed(base) => to_json(base, Some(v)),
        AbstractType::Ascii | AbstractType::Utf8 => quoted(String::from_utf8_lossy(v).into_owned()),
        AbstractType::Bytes => quoted(format!("0x{}", v.iter().map(|b| format!("{b:02x}")).collect::<String>())),
        AbstractType::Boolean => (v.first().copied().unwrap_or(0) != 0).to_string(),
        AbstractType::List { element, .. } | AbstractType::Set { element, .. } => {
            let kind = ty.collection_kind().unwrap_or(model::marshal::CollectionKind::List);
            match model::marshal::read_elements(kind, v) {
                Ok(elements) => {
                    let parts: Vec<String> = elements.iter().map(|e| to_json(element, Some(e))).collect();
                    format!("[{}]", parts.join(", "))
                }
                Err(_) => quoted(ty.to_display_string(v)),
            }
        }
        AbstractType::Map { key, value, .. } => {
            match model::marshal::read_elements(model::marshal::CollectionKind::Map, v) {
                Ok(elements) => {
                    // 3.11's MapType.toJSONString: a key that is not a JSON string becomes one.
                    let parts: Vec<String> = elements
                        .chunks(2)
                        .map(|kv| {
                            let k = to_json(key, Some(kv[0]));
                            let k = if k.starts_with('"') { k } else { quoted(k) };
                            format!("{k}: {}", to_json(value, Some(kv[1])))
                        })
                        .collect();
                    format!("{{{}}}", parts.join(", "))
                }
                Err(_) => quoted(ty.to_display_string(v)),
            }
        }
        AbstractType::Tuple(types) => match model::marshal::read_tuple(v, types.len()) {
            Ok(components) => {
                let parts: Vec<String> = components.iter().zip(types).map(|(c, t)| to_json(t, *c)).collect();
                format!("[{}]", parts.join(", "))
            }
            Err(_) => quoted(ty.to_display_string(v)),
        },
        AbstractType::User(u) => match model::marshal::read_tuple(v, u.fields.len()) {
            // 3.11's UserType.toJSONString: every field, a missing one null; a name that is not
            // lower case in double quotes inside the key.
            Ok(values) => {
                let parts: Vec<String> = u
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(i, (name, t))| {
                        let name = String::from_utf8_lossy(name);
                        let name = if name.to_lowercase() == name { name.into_owned() } else { format!("\"{name}\"") };
                        format!("{}: {}", quoted(name), to_json(t, values.get(i).copied().flatten()))
                    })
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            Err(_) => quoted(ty.to_display_string(v)),
        },
        t if is_numeric(t) => ty.to_display_string(v),
        AbstractType::Timestamp | AbstractType::Date => quoted(ty.to_display_string(v).replacen('T', " ", 1)),
        _ => quoted(ty.to_display_string(v)),
    }
}

/// A JSON value as a column's value: numbers for numeric columns (or strings that parse), text
/// for the others, `null` as null.
pub(super) fn from_json(ty: &AbstractType, j: &Json, column: &str) -> Result<Value, CqlError> {
    let base = match ty {
        AbstractType::Reversed(b) => b.as_ref(),
        t => t,
    };
    let element = |t: &AbstractType, j: &Json, what: &str| -> Result<Vec<u8>, CqlError> {
        match from_json(t, j, column)? {
            Value::Bytes(b) => Ok(b),
            _ => invalid(format!("Error decoding JSON value for {column}: null is not supported inside {what}")),
        }
    };
    match (base, j) {
        (AbstractType::List { element: e, .. } | AbstractType::Set { element: e, .. }, Json::Array(items)) => {
            if items.len() > model::marshal::MAX_COLLECTION_ELEMENTS {
                return invalid(format!("Error decoding JSON value for {column}: too many elements"));
            }
            let mut values = Vec::with_capacity(items.len());
            for item in items {
                values.push(element(e, item, "collections")?);
            }
            if matches!(base, AbstractType::Set { .. }) {
                values.sort_by(|a, b| e.compare(a, b));
                values.dedup_by(|a, b| e.compare(a, b).is_eq());
            }
            return Ok(Value::Bytes(model::marshal::write_elements(values.len(), values.iter().map(Vec::as_slice))));
        }
        (AbstractType::Map { key, value, .. }, Json::Object(entries)) => {
            if entries.len() > model::marshal::MAX_COLLECTION_ELEMENTS {
                return invalid(format!("Error decoding JSON value for {column}: too many elements"));
            }
            let mut pairs = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                // A key is a JSON string; a non-text key's string holds its JSON form.
                let k_json = match key.as_ref() {
                    AbstractType::Ascii | AbstractType::Utf8 => Json::String(k.clone()),
                    _ => serde_json::from_str(k).unwrap_or_else(|_| Json::String(k.clone())),
                };
                pairs.push((element(key, &k_json, "collections")?, element(value, v, "collections")?));
            }
            pairs.sort_by(|a, b| key.compare(&a.0, &b.0));
            pairs.dedup_by(|a, b| key.compare(&a.0, &b.0).is_eq());
            return Ok(Value::Bytes(model::marshal::write_elements(
                pairs.len(),
                pairs.iter().flat_map(|(k, v)| [k.as_slice(), v.as_slice()]),
            )));
        }
        (AbstractType::Tuple(types), Json::Array(items)) => {
            if items.len() > types.len() {
                return invalid(format!(
                    "Error decoding JSON value for {column}: Tuple contains extra items (expected {}, got {})",
                    types.len(),
                    items.len()
                ));
            }
            let mut components = Vec::new();
            for (item, t) in items.iter().zip(types) {
                components.push(match from_json(t, item, column)? {
                    Value::Bytes(b) => Some(b),
                    _ => None,
                });
            }
            return Ok(Value::Bytes(model::marshal::write_tuple(components.iter().map(Option::as_deref))));
        }
        (AbstractType::User(u), Json::Object(entries)) => {
            let mut components: Vec<Option<Vec<u8>>> = vec![None; u.fields.len()];
            for (k, v) in entries {
                let field = match k.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
                    Some(quoted) => quoted.to_string(),
                    None => k.to_lowercase(),
                };
                let Some(i) = u.field_position(&field) else {
                    return invalid(format!(
                        "Error decoding JSON value for {column}: Unknown field '{field}' in value of user defined type {}",
                        u.name_str()
                    ));
                };
                components[i] = match from_json(&u.fields[i].1, v, column)? {
                    Value::Bytes(b) => Some(b),
                    _ => None,
                };
            }
            return Ok(Value::Bytes(model::marshal::write_tuple(components.iter().map(Option::as_deref))));
        }
        _ => {}
    }
    let text = match (base, j) {
        (_, Json::Null) => return Ok(Value::Null),
        (AbstractType::Boolean, Json::Bool(b)) => b.to_string(),
        (AbstractType::Boolean, Json::String(s)) => s.to_ascii_lowercase(),
        (AbstractType::Bytes, Json::String(s)) => match s.strip_prefix("0x") {
            Some(hex) => hex.to_string(),
            None => return invalid(format!("Error decoding JSON value for {column}: Value '{s}' is not a valid blob representation: String representation of blob is missing 0x prefix")),
        },
        (_, Json::Number(n)) if is_numeric(base) || matches!(base, AbstractType::Timestamp | AbstractType::Date | AbstractType::SimpleDate | AbstractType::Time) => n.to_string(),
        (_, Json::String(s)) => s.clone(),
        (_, other) => {
            return invalid(format!(
                "Error decoding JSON value for {column}: Expected a {} value, but got a {}: {other}",
                cql_name(base),
                kind(other)
            ))
        }
    };
    if text.is_empty() && !matches!(base, AbstractType::Ascii | AbstractType::Utf8 | AbstractType::Bytes) {
        return invalid(format!("Error decoding JSON value for {column}: empty value for type {}", cql_name(base)));
    }
    base.from_display_string(&text)
        .map(Value::Bytes)
        .or_else(|e| invalid(format!("Error decoding JSON value for {column}: {e}")))
}

fn is_numeric(t: &AbstractType) -> bool {
    matches!(
        t,
        AbstractType::Long
            | AbstractType::CounterColumn
            | AbstractType::Int32
            | AbstractType::Short
            | AbstractType::Byte
            | AbstractType::Integer
            | AbstractType::Decimal
            | AbstractType::Double
            | AbstractType::Float
    )
}

fn kind(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "list",
        Json::Object(_) => "map",
    }
}

/// The object of an INSERT JSON, its keys matched to column names as 3.11 does (a key is a
/// column's name as CQL writes it: lower case, or between double quotes).
pub(super) fn object(text: &str) -> Result<Vec<(String, Json)>, CqlError> {
    let parsed: Json = serde_json::from_str(text)
        .or_else(|e| invalid(format!("Could not decode JSON string as a map: {e}. (String was: {text})")))?;
    let Json::Object(map) = parsed else {
        return invalid(format!("Could not decode JSON string as a map: not an object. (String was: {text})"));
    };
    Ok(map
        .into_iter()
        .map(|(k, v)| {
            let name = match k.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
                Some(quoted) => quoted.replace("\"\"", "\""),
                None => k.to_ascii_lowercase(),
            };
            (name, v)
        })
        .collect())
}

/// SELECT JSON: one text column, `[json]`, holding each row as an object.
pub(super) fn as_json(table: &Table, columns: Vec<ColumnSpec>, rows: Vec<Vec<Option<Vec<u8>>>>) -> ResultSet {
    let rows = rows
        .into_iter()
        .map(|row| {
            let fields: Vec<String> = columns
                .iter()
                .zip(&row)
                .map(|(c, v)| {
                    let key = serde_json::Value::String(key(&c.name)).to_string();
                    format!("{key}: {}", to_json(&c.ty, v.as_deref()))
                })
                .collect();
            vec![Some(format!("{{{}}}", fields.join(", ")).into_bytes())]
        })
        .collect();
    ResultSet { columns: vec![json_column(table)], rows, paging_state: None }
}

/// The one column of a `SELECT JSON`.
pub(super) fn json_column(table: &Table) -> ColumnSpec {
    spec(table, "[json]", &AbstractType::Utf8)
}
