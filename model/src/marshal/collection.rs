//! Collections and tuples: `ListType`, `SetType`, `MapType`, `TupleType` and the comparator part
//! `ColumnToCollectionType`.
//!
//! A whole collection value is written as CQL's native protocol v3 writes it, which is also how
//! 3.11 stores a frozen collection and answers Thrift's CQL calls (`QueryOptions.fromThrift`
//! uses v3): an `i32` element count, then each element (a map: key then value) as an `i32`
//! length and its bytes. A tuple is its components back to back, each an `i32` length (negative
//! for null) and its bytes, with nothing before them.
//!
//! A non-frozen collection is stored one cell per element (see the `cql` crate's schema): the
//! cell name ends with the element's key (a list's cell key is a time UUID, a set's the element,
//! a map's the key), ordered by the collection's column through `ColumnToCollectionType`.

use std::cmp::Ordering;

use super::AbstractType;

/// Most elements a collection value may hold: the native protocol's and 3.11's limit for what
/// it reads back (a short count in protocol v2), kept for every value.
pub const MAX_COLLECTION_ELEMENTS: usize = 65_535;

/// Which collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectionKind {
    /// `list<T>`: elements in insertion order (cell keys are time UUIDs).
    List,
    /// `set<T>`: distinct elements, sorted.
    Set,
    /// `map<K, V>`: distinct keys, sorted.
    Map,
}

impl CollectionKind {
    /// The word 3.11 uses in its messages (`list`, `set`, `map`).
    pub fn word(self) -> &'static str {
        match self {
            CollectionKind::List => "list",
            CollectionKind::Set => "set",
            CollectionKind::Map => "map",
        }
    }
}

fn take_i32(buf: &mut &[u8]) -> Option<i32> {
    let (head, tail) = buf.split_first_chunk::<4>()?;
    *buf = tail;
    Some(i32::from_be_bytes(*head))
}

/// One `[i32 length][bytes]` value; `Some(None)` for a negative length (null).
fn take_value<'a>(buf: &mut &'a [u8]) -> Option<Option<&'a [u8]>> {
    let len = take_i32(buf)?;
    let Ok(len) = usize::try_from(len) else {
        return Some(None);
    };
    if buf.len() < len {
        return None;
    }
    let (head, tail) = buf.split_at(len);
    *buf = tail;
    Some(Some(head))
}

/// The elements of a whole list or set value (pairs for a map: key then value, flattened), or
/// why they cannot be read, in 3.11's words.
pub fn read_elements(kind: CollectionKind, v: &[u8]) -> Result<Vec<&[u8]>, String> {
    let word = kind.word();
    let short = || format!("Not enough bytes to read a {word}");
    let mut buf = v;
    let count = take_i32(&mut buf).ok_or_else(short)?;
    let count = usize::try_from(count).map_err(|_| format!("Invalid negative size for a {word}"))?;
    let per_element = if kind == CollectionKind::Map { 2 } else { 1 };
    // Each element needs at least its four length bytes: a count past what the bytes can hold
    // is refused before anything is allocated for it.
    if count.saturating_mul(4 * per_element) > buf.len() {
        return Err(short());
    }
    let mut out = Vec::with_capacity(count * per_element);
    for _ in 0..count * per_element {
        match take_value(&mut buf).ok_or_else(short)? {
            Some(e) => out.push(e),
            None => return Err(format!("null is not supported inside {word}s")),
        }
    }
    if !buf.is_empty() {
        return Err(format!("Unexpected extraneous bytes after {word} value"));
    }
    Ok(out)
}

/// A whole collection value from its elements (a map's keys and values alternating).
pub fn write_elements<'a>(count: usize, elements: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(count as i32).to_be_bytes());
    for e in elements {
        out.extend_from_slice(&(e.len() as i32).to_be_bytes());
        out.extend_from_slice(e);
    }
    out
}

/// The components of a tuple value (`None` for null); fewer than the type has is fine (3.11
/// reads the missing trailing ones as null).
pub fn read_tuple(v: &[u8], arity: usize) -> Result<Vec<Option<&[u8]>>, String> {
    let mut buf = v;
    let mut out = Vec::new();
    while !buf.is_empty() {
        if out.len() == arity {
            return Err(format!("Expected {arity} components in tuple value, but got more"));
        }
        let i = out.len();
        let Some(len) = take_i32(&mut buf) else {
            return Err(format!("Not enough bytes to read size of {i}th component"));
        };
        match usize::try_from(len) {
            Err(_) => out.push(None),
            Ok(len) if buf.len() < len => return Err(format!("Not enough bytes to read {i}th component")),
            Ok(len) => {
                let (head, tail) = buf.split_at(len);
                buf = tail;
                out.push(Some(head));
            }
        }
    }
    Ok(out)
}

/// A tuple value from its components.
pub fn write_tuple<'a>(components: impl IntoIterator<Item = Option<&'a [u8]>>) -> Vec<u8> {
    let mut out = Vec::new();
    for c in components {
        match c {
            Some(bytes) => {
                out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                out.extend_from_slice(bytes);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    out
}

/// 3.11's `CollectionType.compareListOrSet` (and the map's version): element by element, then
/// the shorter first; an empty value before any other. Malformed values compare as bytes.
pub(super) fn compare(
    kind: CollectionKind,
    types: (&AbstractType, Option<&AbstractType>),
    depth: usize,
    a: &[u8],
    b: &[u8],
) -> Ordering {
    if a.is_empty() || b.is_empty() {
        return (!a.is_empty()).cmp(&!b.is_empty());
    }
    let (Ok(ea), Ok(eb)) = (read_elements(kind, a), read_elements(kind, b)) else {
        return a.cmp(b);
    };
    for (i, (x, y)) in ea.iter().zip(eb.iter()).enumerate() {
        let t = match (types.1, i % 2) {
            (Some(value), 1) => value,
            _ => types.0,
        };
        let o = t.compare_at(depth + 1, x, y);
        if o != Ordering::Equal {
            return o;
        }
    }
    ea.len().cmp(&eb.len())
}

/// Why a whole collection value is refused, or `Ok(None)`; an element's own refusal is passed
/// on as it is.
pub(super) fn validate(
    kind: CollectionKind,
    types: (&AbstractType, Option<&AbstractType>),
    depth: usize,
    v: &[u8],
) -> Result<Option<String>, super::MarshalError> {
    let elements = match read_elements(kind, v) {
        Ok(e) => e,
        Err(reason) => return Ok(Some(reason)),
    };
    if elements.len() / if kind == CollectionKind::Map { 2 } else { 1 } > MAX_COLLECTION_ELEMENTS {
        return Ok(Some(format!("a {} may not hold more than {MAX_COLLECTION_ELEMENTS} elements", kind.word())));
    }
    for (i, e) in elements.iter().enumerate() {
        let t = match (types.1, i % 2) {
            (Some(value), 1) => value,
            _ => types.0,
        };
        t.validate_at(depth + 1, e)?;
    }
    Ok(None)
}

/// 3.11's `ListSerializer.toString` and friends: `[a, b]`, `{a, b}`, `{k: v}`.
pub(super) fn display(
    kind: CollectionKind,
    types: (&AbstractType, Option<&AbstractType>),
    depth: usize,
    v: &[u8],
) -> Option<String> {
    let elements = read_elements(kind, v).ok()?;
    let shown = |t: &AbstractType, e: &[u8]| t.to_display_string_at(depth + 1, e);
    let parts: Vec<String> = match (kind, types.1) {
        (CollectionKind::Map, Some(value)) => {
            elements.chunks(2).map(|kv| format!("{}: {}", shown(types.0, kv[0]), shown(value, kv[1]))).collect()
        }
        _ => elements.iter().map(|e| shown(types.0, e)).collect(),
    };
    let (open, close) = if kind == CollectionKind::List { ("[", "]") } else { ("{", "}") };
    Some(format!("{open}{}{close}", parts.join(", ")))
}

/// 3.11's `TupleType.compareCustom`: component by component, a null first.
pub(super) fn compare_tuple(types: &[AbstractType], depth: usize, a: &[u8], b: &[u8]) -> Ordering {
    let (Ok(ca), Ok(cb)) = (read_tuple(a, types.len()), read_tuple(b, types.len())) else {
        return a.cmp(b);
    };
    for ((x, y), t) in ca.iter().zip(cb.iter()).zip(types) {
        let o = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => t.compare_at(depth + 1, x, y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len())
}

/// Why a tuple value is refused, or `Ok(None)`.
pub(super) fn validate_tuple(
    types: &[AbstractType],
    depth: usize,
    v: &[u8],
) -> Result<Option<String>, super::MarshalError> {
    let components = match read_tuple(v, types.len()) {
        Ok(c) => c,
        Err(reason) => return Ok(Some(reason)),
    };
    for (c, t) in components.iter().zip(types) {
        if let Some(c) = c {
            t.validate_at(depth + 1, c)?;
        }
    }
    Ok(None)
}

/// 3.11's `TupleType.getString`: components joined by `:` (escaped as in composites), `@` for
/// a null.
pub(super) fn display_tuple(types: &[AbstractType], depth: usize, v: &[u8]) -> Option<String> {
    let components = read_tuple(v, types.len()).ok()?;
    let parts: Vec<String> = components
        .iter()
        .zip(types)
        .map(|(c, t)| match c {
            None => "@".to_string(),
            Some(c) => t.to_display_string_at(depth + 1, c).replace(':', "\\:").replace('@', "\\@"),
        })
        .collect();
    Some(parts.join(":"))
}
