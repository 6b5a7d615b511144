//! Terms to bytes: literals checked against the column's type as 3.11 checks them, bind markers
//! taking their values in order, and the few functions a value may call.

use model::marshal::{write_elements, write_tuple, AbstractType, MAX_COLLECTION_ELEMENTS};
use uuid::Uuid;

use super::{invalid, CqlError};
use crate::ast::{BindMarker, Constant, Term};
use crate::schema::cql_name;

/// A value given for a bind marker, or computed from a term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// Bytes, checked against the type.
    Bytes(Vec<u8>),
    /// `NULL`.
    Null,
    /// Not set: the column is left as it is (native protocol v4).
    Unset,
}

impl Value {
    /// The bytes, or `None` for null and unset.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// Hands out bound values in marker order.
pub(crate) struct Binder<'v> {
    values: &'v [Value],
    next: usize,
}

impl<'v> Binder<'v> {
    pub fn new(values: &'v [Value]) -> Binder<'v> {
        Binder { values, next: 0 }
    }

    fn take(&mut self) -> Result<Value, CqlError> {
        let v = self.values.get(self.next).cloned();
        self.next += 1;
        v.map_or_else(|| invalid("Invalid amount of bind variables"), Ok)
    }
}

/// The value of `term` for a column (or marker position) named `name` of type `ty`.
pub(crate) fn term_value(term: &Term, ty: &AbstractType, name: &str, binder: &mut Binder) -> Result<Value, CqlError> {
    let ty = match ty {
        AbstractType::Reversed(base) => base.as_ref(),
        t => t,
    };
    match term {
        Term::Null => Ok(Value::Null),
        Term::BindMarker(_) => match binder.take()? {
            Value::Bytes(b) => {
                if let Err(e) = ty.validate(&b) {
                    return invalid(format!("Exception while validating value for {name}: {e}"));
                }
                Ok(Value::Bytes(b))
            }
            other => Ok(other),
        },
        Term::Constant(c) => constant(c, ty, name).map(Value::Bytes),
        Term::TypeHint { hint, term } => {
            let hinted = match (hint, ty) {
                (crate::ast::CqlType::UserDefined(n), AbstractType::User(u)) if n.name.name() == u.name_str() => {
                    ty.clone()
                }
                _ => crate::schema::storage_type(hint, &crate::schema::TypeScope::NONE)?,
            };
            if cql_name(&hinted) != cql_name(ty) {
                return invalid(format!(
                    "Type error: {term} cannot be cast to {} for {name} of type {}",
                    hint,
                    cql_name(ty)
                ));
            }
            term_value(term, ty, name, binder)
        }
        Term::FunctionCall { name: function, args } => call(&function.to_string(), args, ty, name, binder),
        Term::List(items) => match ty {
            AbstractType::List { element, .. } => sequence(items, element, name, "list", binder, false),
            _ => invalid(format!("Invalid list literal for {name} of type {}", cql_name(ty))),
        },
        Term::Set(items) => match ty {
            AbstractType::Set { element, .. } => sequence(items, element, name, "set", binder, true),
            // `{}` is also the empty map.
            AbstractType::Map { .. } if items.is_empty() => Ok(Value::Bytes(write_elements(0, []))),
            _ => invalid(format!("Invalid set literal for {name} of type {}", cql_name(ty))),
        },
        Term::Map(entries) => match ty {
            AbstractType::Map { key, value, .. } => map(entries, key, value, name, binder),
            _ => invalid(format!("Invalid map literal for {name} of type {}", cql_name(ty))),
        },
        Term::Tuple(items) => match ty {
            AbstractType::Tuple(types) => tuple(items, types, ty, name, binder),
            _ => invalid(format!("Invalid tuple type literal for {name} of type {}", cql_name(ty))),
        },
        Term::UserType(fields) => match ty {
            AbstractType::User(u) => user_value(fields, u, name, binder),
            _ => invalid(format!("Invalid user type literal for {name} of type {}", cql_name(ty))),
        },
    }
}

/// A user type literal `{f: v, ...}` (3.11's `UserTypes.Literal`): fields in any order, the
/// missing ones null, in the type's order.
fn user_value(
    fields: &[(crate::ast::Identifier, Term)],
    u: &model::marshal::UserType,
    name: &str,
    binder: &mut Binder,
) -> Result<Value, CqlError> {
    for (field, _) in fields {
        if u.field_position(field.name()).is_none() {
            return invalid(format!("Unknown field '{}' in value of user defined type {}", field.name(), u.name_str()));
        }
    }
    let mut components: Vec<Option<Vec<u8>>> = vec![None; u.fields.len()];
    // Values are taken in the order written, for the bind markers among them.
    for (field, term) in fields {
        let Some(i) = u.field_position(field.name()) else { continue };
        let field_type = &u.fields[i].1;
        components[i] = match term_value(term, field_type, &format!("{name}.{}", field.name()), binder)? {
            Value::Bytes(b) => Some(b),
            Value::Null => None,
            Value::Unset => {
                return invalid(format!(
                    "Invalid unset value for field '{}' of user defined type {}",
                    field.name(),
                    u.name_str()
                ))
            }
        };
    }
    Ok(Value::Bytes(write_tuple(components.iter().map(Option::as_deref))))
}

/// An element of a collection literal: a value, never null.
fn element_value(term: &Term, ty: &AbstractType, spec: &str, binder: &mut Binder) -> Result<Vec<u8>, CqlError> {
    match term_value(term, ty, spec, binder)? {
        Value::Bytes(b) => Ok(b),
        Value::Null => invalid("null is not supported inside collections"),
        Value::Unset => invalid(format!("Invalid unset value for {spec}")),
    }
}

fn too_many(word: &str, name: &str, count: usize) -> Result<Value, CqlError> {
    invalid(format!(
        "Invalid {word} literal for {name}: {count} elements, more than the {MAX_COLLECTION_ELEMENTS} a collection may hold"
    ))
}

/// A list or set literal: its elements in order (a set's sorted and without repeats).
fn sequence(
    items: &[Term],
    element: &AbstractType,
    name: &str,
    word: &str,
    binder: &mut Binder,
    sorted: bool,
) -> Result<Value, CqlError> {
    if items.len() > MAX_COLLECTION_ELEMENTS {
        return too_many(word, name, items.len());
    }
    let spec = format!("value({name})");
    let mut values = Vec::with_capacity(items.len());
    for item in items {
        values.push(element_value(item, element, &spec, binder)?);
    }
    if sorted {
        values.sort_by(|a, b| element.compare(a, b));
        values.dedup_by(|a, b| element.compare(a, b).is_eq());
    }
    Ok(Value::Bytes(write_elements(values.len(), values.iter().map(Vec::as_slice))))
}

/// A map literal: its entries sorted by key, a repeated key keeping its last value.
fn map(
    entries: &[(Term, Term)],
    key: &AbstractType,
    value: &AbstractType,
    name: &str,
    binder: &mut Binder,
) -> Result<Value, CqlError> {
    if entries.len() > MAX_COLLECTION_ELEMENTS {
        return too_many("map", name, entries.len());
    }
    let (key_spec, value_spec) = (format!("key({name})"), format!("value({name})"));
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let k = element_value(k, key, &key_spec, binder)?;
        let v = element_value(v, value, &value_spec, binder)?;
        pairs.push((k, v));
    }
    // A stable sort keeps repeated keys in the order written; the last one stays.
    pairs.sort_by(|a, b| key.compare(&a.0, &b.0));
    let mut kept: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(pairs.len());
    for p in pairs {
        match kept.last_mut() {
            Some(last) if key.compare(&last.0, &p.0).is_eq() => *last = p,
            _ => kept.push(p),
        }
    }
    Ok(Value::Bytes(write_elements(kept.len(), kept.iter().flat_map(|(k, v)| [k.as_slice(), v.as_slice()]))))
}

/// A tuple literal: a value (or null) per component, no more than the type has.
fn tuple(
    items: &[Term],
    types: &[AbstractType],
    ty: &AbstractType,
    name: &str,
    binder: &mut Binder,
) -> Result<Value, CqlError> {
    if items.len() > types.len() {
        return invalid(format!(
            "Invalid tuple literal for {name}: too many elements. Type {} expects {} but got {}",
            cql_name(ty),
            types.len(),
            items.len()
        ));
    }
    let mut components = Vec::with_capacity(items.len());
    for (i, (item, t)) in items.iter().zip(types).enumerate() {
        components.push(match term_value(item, t, &format!("{name}[{i}]"), binder)? {
            Value::Bytes(b) => Some(b),
            Value::Null => None,
            Value::Unset => return invalid(format!("Invalid unset value for {name}[{i}]")),
        });
    }
    Ok(Value::Bytes(write_tuple(components.iter().map(Option::as_deref))))
}

/// The bytes of a non-null value: null is refused with 3.11's words for a key part.
pub(crate) fn key_value(term: &Term, ty: &AbstractType, name: &str, binder: &mut Binder) -> Result<Vec<u8>, CqlError> {
    match term_value(term, ty, name, binder)? {
        Value::Bytes(b) => Ok(b),
        Value::Null => invalid(format!("Invalid null value for {name}")),
        Value::Unset => invalid(format!("Invalid unset value for column {name}")),
    }
}

/// 3.11's `Constants.Literal`: the literal's kind must suit the type, then the text is parsed
/// as the type's `fromString`.
fn constant(c: &Constant, ty: &AbstractType, name: &str) -> Result<Vec<u8>, CqlError> {
    use AbstractType as T;
    let (kind, text) = match c {
        Constant::String(s) => ("STRING", s.clone()),
        Constant::Integer(t) => ("INTEGER", t.clone()),
        Constant::Float(t) => ("FLOAT", t.clone()),
        Constant::Boolean(b) => ("BOOLEAN", b.to_string()),
        Constant::Duration(t) => ("DURATION", t.clone()),
        Constant::Uuid(u) => ("UUID", u.hyphenated().to_string()),
        Constant::Hex(h) => ("HEX", h.clone()),
    };
    let fits = match kind {
        "STRING" => {
            matches!(ty, T::Ascii | T::Utf8 | T::InetAddress | T::SimpleDate | T::Time | T::Timestamp | T::Date)
        }
        "INTEGER" => matches!(
            ty,
            T::Long
                | T::CounterColumn
                | T::SimpleDate
                | T::Decimal
                | T::Double
                | T::Float
                | T::Int32
                | T::Short
                | T::Time
                | T::Timestamp
                | T::Date
                | T::Byte
                | T::Integer
        ),
        "FLOAT" => matches!(ty, T::Decimal | T::Double | T::Float),
        "BOOLEAN" => matches!(ty, T::Boolean),
        "UUID" => matches!(ty, T::Uuid | T::TimeUuid | T::LexicalUuid),
        "HEX" => matches!(ty, T::Bytes),
        "DURATION" => matches!(ty, T::Duration),
        _ => false,
    };
    // Types CQL does not name take every literal their fromString reads (3.11: custom types).
    let custom = cql_name(ty).starts_with('\'');
    if !fits && !custom {
        return invalid(format!("Invalid {kind} constant ({c}) for \"{name}\" of type {}", cql_name(ty)));
    }
    if matches!(ty, T::Duration) {
        return model::marshal::Duration::parse(&text).map(model::marshal::Duration::to_bytes).or_else(invalid);
    }
    if matches!(ty, T::TimeUuid) {
        if let Constant::Uuid(u) = c {
            if u.get_version_num() != 1 {
                return invalid(format!("Unsupported UUID for timeuuid {name}: {u} is not a version 1 UUID"));
            }
        }
    }
    if text.is_empty() && !matches!(ty, T::Ascii | T::Utf8 | T::Bytes) {
        return invalid(format!("Invalid empty value for {name} of type {}", cql_name(ty)));
    }
    ty.from_display_string(&text).or_else(|e| invalid(e.to_string()))
}

/// The functions a term may call: `now()`, `uuid()`, `toTimestamp(now())`, and the blob
/// conversions `xAsBlob`/`blobAsX`.
fn call(function: &str, args: &[Term], ty: &AbstractType, name: &str, binder: &mut Binder) -> Result<Value, CqlError> {
    let lower = function.to_ascii_lowercase();
    let lower = lower.strip_prefix("system.").unwrap_or(&lower);
    let result: (AbstractType, Vec<u8>) = match (lower, args) {
        ("now", []) => (AbstractType::TimeUuid, Uuid::now_v1(&cluster::trace::NODE_ID).as_bytes().to_vec()),
        ("uuid", []) => (AbstractType::Uuid, Uuid::new_v4().as_bytes().to_vec()),
        ("totimestamp" | "tounixtimestamp" | "todate", [arg]) if is_now(arg) => {
            let ms = model::data::now_micros() / 1000;
            match lower {
                "totimestamp" => (AbstractType::Timestamp, ms.to_be_bytes().to_vec()),
                "tounixtimestamp" => (AbstractType::Long, ms.to_be_bytes().to_vec()),
                _ => {
                    let days = ms.div_euclid(86_400_000) + (1i64 << 31);
                    (AbstractType::SimpleDate, (days as u32).to_be_bytes().to_vec())
                }
            }
        }
        (f, [arg]) if f.starts_with("blobas") => {
            let target = &f["blobas".len()..];
            if target != cql_name(ty) {
                return invalid(format!(
                    "Type error: {function}({arg}) cannot be used for {name} of type {}",
                    cql_name(ty)
                ));
            }
            match term_value(arg, &AbstractType::Bytes, name, binder)? {
                Value::Bytes(b) => {
                    if let Err(e) = ty.validate(&b) {
                        return invalid(format!("In call to function {function}, value 0x{} is not a valid binary representation for type {}: {e}", hex(&b), cql_name(ty)));
                    }
                    return Ok(Value::Bytes(b));
                }
                other => return Ok(other),
            }
        }
        (f, [arg]) if f.ends_with("asblob") => {
            let source = &f[..f.len() - "asblob".len()];
            let Some(source_type) =
                crate::ast::NativeType::ALL.into_iter().find(|n| n.to_string() == source).map(crate::schema::native)
            else {
                return invalid(format!("Unknown function {function}"));
            };
            if !matches!(ty, AbstractType::Bytes) {
                return invalid(format!(
                    "Type error: {function}({arg}) cannot be used for {name} of type {}",
                    cql_name(ty)
                ));
            }
            return term_value(arg, &source_type, name, binder);
        }
        _ => return invalid(format!("function {function} is not supported yet in this position")),
    };
    let (returned, bytes) = result;
    if cql_name(&returned) != cql_name(ty) {
        return invalid(format!(
            "Type error: cannot assign result of function {function} (type {}) to {name} (type {})",
            cql_name(&returned),
            cql_name(ty)
        ));
    }
    Ok(Value::Bytes(bytes))
}

fn is_now(t: &Term) -> bool {
    matches!(t, Term::FunctionCall { name, args } if args.is_empty() && name.to_string().eq_ignore_ascii_case("now"))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The spec of an anonymous or named marker, when `term` is one.
pub(crate) fn is_marker(term: &Term) -> Option<&BindMarker> {
    match term {
        Term::BindMarker(m) => Some(m),
        _ => None,
    }
}
