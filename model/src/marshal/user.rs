//! `UserType`: a user-defined type, a tuple whose components have names, made by CREATE TYPE.
//!
//! Its class name carries the whole definition, as 3.11's `UserType.toString` writes it:
//! `org.apache.cassandra.db.marshal.UserType(ks,hexname,hexfield:type,...)`, inside
//! `FrozenType(...)` when the value is one cell. Field types are written without their
//! `FrozenType` inside a frozen one (3.11's `toString(ignoreFreezing)`).
//!
//! A value is a tuple's serialization, each field an `i32` length (negative: null) then its
//! bytes; trailing fields may be missing (a value written before ALTER TYPE ADD).
//! A non-frozen one is a cell per field, named by the field's position as a 2-byte short.

use std::cmp::Ordering;

use super::collection::{compare_tuple, read_tuple};
use super::AbstractType;

/// A user type's definition, and whether its value is one cell (`frozen`) or a cell per field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserType {
    /// Keyspace the type lives in.
    pub keyspace: String,
    /// Its name (UTF-8 bytes).
    pub name: Vec<u8>,
    /// Its fields in order: name (UTF-8 bytes) and type.
    pub fields: Vec<(Vec<u8>, AbstractType)>,
    /// One cell holding the whole value.
    pub frozen: bool,
}

impl UserType {
    /// The type's name as text.
    pub fn name_str(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }

    /// The field types, in order.
    pub fn field_types(&self) -> Vec<AbstractType> {
        self.fields.iter().map(|(_, t)| t.clone()).collect()
    }

    /// The position of field `name`.
    pub fn field_position(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|(n, _)| n == name.as_bytes())
    }

    /// The field names as text, in order.
    pub fn field_names(&self) -> Vec<String> {
        self.fields.iter().map(|(n, _)| String::from_utf8_lossy(n).into_owned()).collect()
    }

    /// 3.11's `UserType.toString(ignoreFreezing)`.
    pub(super) fn type_string(&self, ignore_freezing: bool) -> String {
        let wrap = !ignore_freezing && self.frozen;
        let mut out = String::new();
        if wrap {
            out.push_str(super::PACKAGE);
            out.push_str("FrozenType(");
        }
        out.push_str(super::PACKAGE);
        out.push_str("UserType(");
        out.push_str(&self.keyspace);
        out.push(',');
        out.push_str(&hex::encode(&self.name));
        for (name, t) in &self.fields {
            out.push(',');
            out.push_str(&hex::encode(name));
            out.push(':');
            out.push_str(&t.type_string(ignore_freezing || self.frozen));
        }
        out.push(')');
        if wrap {
            out.push(')');
        }
        out
    }

    pub(super) fn compare(&self, depth: usize, a: &[u8], b: &[u8]) -> Ordering {
        compare_tuple(&self.field_types(), depth, a, b)
    }

    /// 3.11's `UserTypeSerializer.validate`: fewer fields than declared are fine, more are not.
    pub(super) fn validate(&self, depth: usize, v: &[u8]) -> Result<Option<String>, super::MarshalError> {
        let mut buf = v;
        for (i, (name, t)) in self.fields.iter().enumerate() {
            if buf.is_empty() {
                return Ok(None);
            }
            let name = String::from_utf8_lossy(name);
            let Some((len, rest)) = buf.split_first_chunk::<4>() else {
                return Ok(Some(format!("Not enough bytes to read size of {i}th field {name}")));
            };
            buf = rest;
            let Ok(len) = usize::try_from(i32::from_be_bytes(*len)) else { continue };
            if buf.len() < len {
                return Ok(Some(format!("Not enough bytes to read {i}th field {name}")));
            }
            let (field, rest) = buf.split_at(len);
            buf = rest;
            t.validate_at(depth + 1, field)?;
        }
        if !buf.is_empty() {
            return Ok(Some("Invalid remaining data after end of UDT value".into()));
        }
        Ok(None)
    }

    /// `{f: v, g: null}` with each field's display form.
    pub(super) fn display(&self, depth: usize, v: &[u8]) -> Option<String> {
        let values = read_tuple(v, self.fields.len()).ok()?;
        let parts: Vec<String> = self
            .fields
            .iter()
            .enumerate()
            .map(|(i, (name, t))| {
                let shown = match values.get(i).copied().flatten() {
                    Some(v) => t.to_display_string_at(depth + 1, v),
                    None => "null".into(),
                };
                format!("{}: {shown}", String::from_utf8_lossy(name))
            })
            .collect();
        Some(format!("{{{}}}", parts.join(", ")))
    }
}

impl AbstractType {
    /// The types this one is made of (a collection's elements, a tuple's or user type's fields).
    pub fn children(&self) -> Vec<&AbstractType> {
        use AbstractType as T;
        match self {
            T::Reversed(t) => vec![t.as_ref()],
            T::List { element, .. } | T::Set { element, .. } => vec![element.as_ref()],
            T::Map { key, value, .. } => vec![key.as_ref(), value.as_ref()],
            T::Tuple(ts) | T::Composite(ts) => ts.iter().collect(),
            T::DynamicComposite(ts) => ts.iter().map(|(_, t)| t).collect(),
            T::ColumnToCollection(ts) => ts.iter().map(|(_, t)| t).collect(),
            T::User(u) => u.fields.iter().map(|(_, t)| t).collect(),
            _ => Vec::new(),
        }
    }

    /// True if user type `name` of `keyspace` is this type or is inside it.
    pub fn references_user_type(&self, keyspace: &str, name: &str) -> bool {
        if let AbstractType::User(u) = self {
            if u.keyspace == keyspace && u.name == name.as_bytes() {
                return true;
            }
        }
        self.children().into_iter().any(|t| t.references_user_type(keyspace, name))
    }

    /// True if a duration is this type or inside it (3.11's `referencesDuration`).
    pub fn references_duration(&self) -> bool {
        matches!(self, AbstractType::Duration) || self.children().into_iter().any(AbstractType::references_duration)
    }

    /// This type with every use of user type `new` (same keyspace and name) replaced by its
    /// new definition, each use keeping its frozenness (3.11's `withUpdatedUserType`).
    pub fn with_updated_user_type(&self, new: &UserType) -> AbstractType {
        use AbstractType as T;
        let up = |t: &AbstractType| Box::new(t.with_updated_user_type(new));
        match self {
            T::User(u) if u.keyspace == new.keyspace && u.name == new.name => {
                let t = T::User(Box::new(UserType { frozen: false, ..new.clone() }));
                if u.frozen {
                    t.frozen()
                } else {
                    t
                }
            }
            T::User(u) => T::User(Box::new(UserType {
                fields: u.fields.iter().map(|(n, t)| (n.clone(), t.with_updated_user_type(new))).collect(),
                ..u.as_ref().clone()
            })),
            T::Reversed(t) => T::Reversed(up(t)),
            T::List { element, frozen } => T::List { element: up(element), frozen: *frozen },
            T::Set { element, frozen } => T::Set { element: up(element), frozen: *frozen },
            T::Map { key, value, frozen } => T::Map { key: up(key), value: up(value), frozen: *frozen },
            T::Tuple(ts) => T::Tuple(ts.iter().map(|t| t.with_updated_user_type(new)).collect()),
            T::Composite(ts) => T::Composite(ts.iter().map(|t| t.with_updated_user_type(new)).collect()),
            T::ColumnToCollection(ts) => {
                T::ColumnToCollection(ts.iter().map(|(n, t)| (n.clone(), t.with_updated_user_type(new))).collect())
            }
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{write_tuple, AbstractType as T};

    const PKG: &str = "org.apache.cassandra.db.marshal.";

    #[test]
    fn class_names_are_3_11s_and_parse_back() {
        // CREATE TYPE ks.address (street text, zips frozen<list<int>>), used frozen.
        let frozen = format!(
            "{PKG}FrozenType({PKG}UserType(ks,61646472657373,737472656574:{PKG}UTF8Type,7a697073:{PKG}ListType({PKG}Int32Type)))"
        );
        let t = T::parse(&frozen).expect("parses");
        let T::User(u) = &t else { panic!("a user type: {t:?}") };
        assert!(u.frozen);
        assert_eq!(u.name_str(), "address");
        assert_eq!(u.field_names(), ["street", "zips"]);
        assert!(matches!(u.fields[1].1, T::List { frozen: true, .. }));
        assert_eq!(t.class_name(), frozen);
        // Not frozen: no FrozenType around it, and its fields keep theirs.
        let multi = format!("{PKG}UserType(ks,61,62:{PKG}FrozenType({PKG}SetType({PKG}Int32Type)))");
        let t = T::parse(&multi).expect("parses");
        assert!(matches!(&t, T::User(u) if !u.frozen));
        assert_eq!(t.class_name(), multi);
        assert_eq!(
            t.frozen().class_name(),
            format!("{PKG}FrozenType({PKG}UserType(ks,61,62:{PKG}SetType({PKG}Int32Type)))")
        );
        assert!(T::parse("UserType(ks,zz)").is_err());
        assert!(T::parse("UserType").is_err());
    }

    #[test]
    fn values_may_miss_trailing_fields_but_not_carry_more() {
        let t = T::parse("FrozenType(UserType(ks,61,62:Int32Type,63:UTF8Type))").expect("parses");
        let one = 7i32.to_be_bytes();
        let full = write_tuple([Some(&one[..]), Some(&b"x"[..])]);
        assert_eq!(t.validate(&full), Ok(()));
        assert_eq!(t.validate(&write_tuple([Some(&one[..])])), Ok(()));
        assert_eq!(t.validate(&write_tuple([None, Some(&b"x"[..])])), Ok(()));
        assert_eq!(t.to_display_string(&write_tuple([None, Some(&b"x"[..])])), "{b: null, c: x}");
        let more = write_tuple([Some(&one[..]), Some(&b"x"[..]), Some(&b"y"[..])]);
        assert_eq!(
            t.validate(&more).map_err(|e| e.to_string()),
            Err("Invalid remaining data after end of UDT value".into())
        );
        assert_eq!(
            t.validate(&[0, 0]).map_err(|e| e.to_string()),
            Err("Not enough bytes to read size of 0th field b".into())
        );
        let bad_int = write_tuple([Some(&b"xy"[..])]);
        assert!(t.validate(&bad_int).is_err());
        let a = write_tuple([Some(&1i32.to_be_bytes()[..])]);
        assert_eq!(t.compare(&a, &full), std::cmp::Ordering::Less);
    }

    #[test]
    fn duration_type_checks_and_shows_its_values() {
        let t = T::parse("DurationType").expect("parses");
        assert_eq!(t.class_name(), format!("{PKG}DurationType"));
        let v = t.from_display_string("1h30m").expect("a duration");
        assert_eq!(t.to_display_string(&v), "1h30m");
        assert!(t.validate(&[1]).is_err());
    }
}
