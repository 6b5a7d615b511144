//! `CompositeType` and `DynamicCompositeType` (Cassandra's `AbstractCompositeType`).
//!
//! Layout of a composite value (all integers big-endian):
//!
//! ```text
//! [FF FF]                      optional static marker, CompositeType only (CASSANDRA-6561)
//! component*:
//!   [comparator part]          DynamicCompositeType only: u16 header; if bit 15 is set the low
//!                              byte is an alias character, else the header is the length of
//!                              the UTF-8 type name that follows
//!   u16 length, value bytes
//!   end-of-component byte      0 normally; -1 / 1 turn the value into a bound below / above
//!                              every value with this prefix
//! ```
//!
//! Ordering: empty first, static before non-static, then component by component with that
//! component's type; on equal values the end-of-component bytes decide (as signed bytes); when
//! one side runs out of components it sorts first. Across `DynamicCompositeType` components of
//! different types, the type's class name decides, whatever the values.
//!
//! Every function here takes `depth`, how deep the composite type itself is nested: component
//! types sit one level deeper, and the type text of a dynamic component is parsed as nested
//! there, so the recursion through values stays within [`super::MAX_TYPE_NESTING`].

use std::borrow::Cow;
use std::cmp::Ordering;

use super::parse::parse_nested_type_string;
use super::{AbstractType, MarshalError};

/// Which composite: fixed component types, or aliases for self-describing components.
#[derive(Clone, Copy)]
pub(super) enum Kind<'t> {
    Static(&'t [AbstractType]),
    Dynamic(&'t [(u8, AbstractType)]),
}

/// What orders one component pair.
enum ComponentOrder<'t> {
    /// Compare the two values with this type.
    Typed(Cow<'t, AbstractType>),
    /// The components have different types: the order is fixed by the types alone.
    Fixed(Ordering),
}

fn take<'a>(buf: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if buf.len() < n {
        return None;
    }
    let (head, tail) = buf.split_at(n);
    *buf = tail;
    Some(head)
}

fn take_u16(buf: &mut &[u8]) -> Option<u16> {
    let (head, tail) = buf.split_first_chunk::<2>()?;
    *buf = tail;
    Some(u16::from_be_bytes(*head))
}

fn take_u8(buf: &mut &[u8]) -> Option<u8> {
    let (head, tail) = buf.split_first()?;
    *buf = tail;
    Some(*head)
}

fn take_with_short_length<'a>(buf: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = take_u16(buf)?;
    take(buf, usize::from(len))
}

/// Skips the static marker of a CompositeType value; true if it was there.
fn read_static(kind: Kind<'_>, buf: &mut &[u8]) -> bool {
    if matches!(kind, Kind::Static(_)) && buf.starts_with(&[0xFF, 0xFF]) {
        *buf = buf.get(2..).unwrap_or_default();
        true
    } else {
        false
    }
}

/// Why the comparator part of a DynamicCompositeType component could not be read.
enum BadComparator {
    /// Fewer than the two bytes of its header are left.
    NoHeader,
    /// The header promises a longer type name than the bytes left.
    ShortName,
    /// The type name is not UTF-8 or names no type, or the alias is not declared.
    Unknown,
    /// The type name nests deeper than a type may at this depth (a limit of Sibyl's).
    TooDeep(MarshalError),
}

/// The comparator part of a DynamicCompositeType component nested `depth` levels deep, plus how
/// it was written: the alias character or the type name.
fn read_dynamic_comparator<'t, 'a>(
    aliases: &'t [(u8, AbstractType)],
    depth: usize,
    buf: &mut &'a [u8],
) -> Result<(Cow<'t, AbstractType>, Cow<'a, str>), BadComparator> {
    let header = take_u16(buf).ok_or(BadComparator::NoHeader)?;
    if header & 0x8000 == 0 {
        let name = take(buf, usize::from(header)).ok_or(BadComparator::ShortName)?;
        let name = std::str::from_utf8(name).map_err(|_| BadComparator::Unknown)?;
        let t = parse_nested_type_string(name, depth).map_err(|e| match e {
            MarshalError::NestedTooDeeply { .. } => BadComparator::TooDeep(e),
            _ => BadComparator::Unknown,
        })?;
        Ok((Cow::Owned(t), Cow::Borrowed(name)))
    } else {
        let alias = (header & 0xFF) as u8;
        let (_, t) = aliases.iter().find(|(a, _)| *a == alias).ok_or(BadComparator::Unknown)?;
        Ok((Cow::Borrowed(t), Cow::Owned(char::from(alias).to_string())))
    }
}

/// DynamicCompositeType's choice between two component types: same type (ignoring a
/// `ReversedType` on both) compares values; otherwise the class names decide.
fn choose<'t>(c1: Cow<'t, AbstractType>, c2: &AbstractType) -> ComponentOrder<'t> {
    let (b1, b2) = match (c1.as_ref(), c2) {
        (AbstractType::Reversed(x), AbstractType::Reversed(y)) => (x.as_ref(), y.as_ref()),
        (x, y) => (x, y),
    };
    if b1 != b2 {
        // Cassandra compares the simple class names, then the full names; built-in types all
        // share one package, so the simple names are enough.
        let by_name = b1.short_name().cmp(b2.short_name());
        if by_name != Ordering::Equal {
            return ComponentOrder::Fixed(by_name);
        }
    }
    ComponentOrder::Typed(c1)
}

/// One component pair of a composite nested `depth` deep; `None` if either side is malformed
/// there.
fn compare_component<'v>(
    kind: Kind<'_>,
    depth: usize,
    i: usize,
    previous: Option<&[u8]>,
    ra: &mut &'v [u8],
    rb: &mut &[u8],
) -> Option<(Ordering, &'v [u8])> {
    let order = match kind {
        Kind::Static(types) => ComponentOrder::Typed(Cow::Borrowed(static_component(types, i, previous)?)),
        Kind::Dynamic(aliases) => {
            let (c1, _) = read_dynamic_comparator(aliases, depth + 1, ra).ok()?;
            let (c2, _) = read_dynamic_comparator(aliases, depth + 1, rb).ok()?;
            choose(c1, &c2)
        }
    };
    let v1 = take_with_short_length(ra)?;
    let v2 = take_with_short_length(rb)?;
    let by_value = match order {
        ComponentOrder::Typed(t) => t.compare_at(depth + 1, v1, v2),
        ComponentOrder::Fixed(o) => o,
    };
    if by_value != Ordering::Equal {
        return Some((by_value, v1));
    }
    let eoc1 = take_u8(ra)? as i8;
    let eoc2 = take_u8(rb)? as i8;
    Some((eoc1.cmp(&eoc2), v1))
}

/// The type of component `i` of a CompositeType; a `ColumnToCollectionType` component takes
/// the key type of the collection named by the component before it (bytes for another
/// column: the names around it already differ).
fn static_component<'t>(types: &'t [AbstractType], i: usize, previous: Option<&[u8]>) -> Option<&'t AbstractType> {
    match types.get(i)? {
        AbstractType::ColumnToCollection(columns) => {
            let column = columns.iter().find(|(name, _)| Some(name.as_slice()) == previous);
            Some(column.and_then(|(_, t)| t.collection_key_type()).unwrap_or(&AbstractType::Bytes))
        }
        t => Some(t),
    }
}

/// `AbstractCompositeType.compare`. Malformed input (which validation rejects; Cassandra would
/// throw) falls back to comparing the remaining bytes from the bad component on.
pub(super) fn compare(kind: Kind<'_>, depth: usize, a: &[u8], b: &[u8]) -> Ordering {
    if a.is_empty() || b.is_empty() {
        return (!a.is_empty()).cmp(&!b.is_empty());
    }
    let (mut ra, mut rb) = (a, b);
    let static_a = read_static(kind, &mut ra);
    let static_b = read_static(kind, &mut rb);
    if static_a != static_b {
        return if static_a { Ordering::Less } else { Ordering::Greater };
    }
    let mut i = 0;
    let mut previous = None;
    while !ra.is_empty() && !rb.is_empty() {
        let (start_a, start_b) = (ra, rb);
        match compare_component(kind, depth, i, previous, &mut ra, &mut rb) {
            Some((Ordering::Equal, value)) => {
                previous = Some(value);
                i += 1;
            }
            Some((o, _)) => return o,
            None => return start_a.cmp(start_b),
        }
    }
    (!ra.is_empty()).cmp(&!rb.is_empty())
}

/// `AbstractCompositeType.validate`: `Ok(Some(reason))` if the value's layout is malformed,
/// `Err` with the component type's own error if a component is refused (3.11 passes that
/// exception on unchanged). The reasons are 3.11's, word for word, including the missing space
/// before the component number in the last two.
pub(super) fn validate(kind: Kind<'_>, depth: usize, v: &[u8]) -> Result<Option<String>, MarshalError> {
    let mut bb = v;
    read_static(kind, &mut bb);
    let mut i = 0;
    let mut previous: Option<&[u8]> = None;
    while !bb.is_empty() {
        let comparator = match kind {
            Kind::Static(types) => match static_component(types, i, previous) {
                Some(t) => Cow::Borrowed(t),
                None => return Ok(Some("Too many bytes for comparator".to_string())),
            },
            Kind::Dynamic(aliases) => match read_dynamic_comparator(aliases, depth + 1, &mut bb) {
                Ok((t, _)) => t,
                Err(BadComparator::NoHeader) => {
                    return Ok(Some(format!("Not enough bytes to header of the comparator part of component {i}")))
                }
                Err(BadComparator::ShortName) => {
                    return Ok(Some(format!("Not enough bytes to read comparator name of component {i}")))
                }
                Err(BadComparator::Unknown) => return Ok(Some(format!("Cannot find comparator for component {i}"))),
                // 3.11 has no such limit, so no words for it: its message, and why.
                Err(BadComparator::TooDeep(e)) => {
                    return Ok(Some(format!("Cannot find comparator for component {i}: {e}")))
                }
            },
        };
        let Some(len) = take_u16(&mut bb) else {
            return Ok(Some(format!("Not enough bytes to read value size of component {i}")));
        };
        let Some(value) = take(&mut bb, usize::from(len)) else {
            return Ok(Some(format!("Not enough bytes to read value of component {i}")));
        };
        comparator.validate_at(depth + 1, value)?;
        previous = Some(value);
        let Some(eoc) = take_u8(&mut bb) else {
            return Ok(Some(format!("Not enough bytes to read the end-of-component byte of component{i}")));
        };
        if eoc != 0 && !bb.is_empty() {
            return Ok(Some(format!("Invalid bytes remaining after an end-of-component at component{i}")));
        }
        i += 1;
    }
    Ok(None)
}

/// Escapes `:` as `\:`, and appends `!` if the text ends with `\` or `!`.
fn escape(s: &str) -> String {
    let out = s.replace(':', "\\:");
    if out.ends_with(['\\', '!']) {
        out + "!"
    } else {
        out
    }
}

/// Reverses [`escape`].
fn unescape(s: &str) -> String {
    let mut out = s.replace("\\:", ":");
    if out.ends_with('!') {
        out.pop();
    }
    out
}

/// Splits on `:` not preceded by `\`.
fn split_components(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let bytes = s.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, &c) in bytes.iter().enumerate() {
        if c == b':' && !(i > 0 && bytes.get(i - 1) == Some(&b'\\')) {
            parts.push(s.get(start..i).unwrap_or_default());
            start = i + 1;
        }
    }
    parts.push(s.get(start..).unwrap_or_default());
    parts
}

/// `AbstractCompositeType.getString`: `a:b`, `alias@a:name@b`, with `:!` / `:_` for a
/// non-zero end-of-component. `None` if the value is malformed.
pub(super) fn display(kind: Kind<'_>, depth: usize, v: &[u8]) -> Option<String> {
    let mut out = String::new();
    let mut bb = v;
    read_static(kind, &mut bb);
    let mut i = 0;
    let mut previous: Option<&[u8]> = None;
    while !bb.is_empty() {
        if bb.len() != v.len() {
            out.push(':');
        }
        let comparator = match kind {
            Kind::Static(types) => Cow::Borrowed(static_component(types, i, previous)?),
            Kind::Dynamic(aliases) => {
                let (t, written) = read_dynamic_comparator(aliases, depth + 1, &mut bb).ok()?;
                out.push_str(&written);
                out.push('@');
                t
            }
        };
        let value = take_with_short_length(&mut bb)?;
        out.push_str(&escape(&comparator.to_display_string_at(depth + 1, value)));
        previous = Some(value);
        let eoc = take_u8(&mut bb)? as i8;
        if eoc != 0 {
            out.push_str(if eoc < 0 { ":_" } else { ":!" });
            break;
        }
        i += 1;
    }
    Some(out)
}

/// `AbstractCompositeType.fromString`: the inverse of [`display`].
pub(super) fn from_string(kind: Kind<'_>, depth: usize, s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut last_eoc = 0u8;
    let mut count = 0usize;
    for (i, part) in split_components(s).into_iter().enumerate() {
        match part {
            "!" => {
                last_eoc = 1;
                break;
            }
            "_" => {
                last_eoc = 0xFF;
                break;
            }
            _ => {}
        }
        let (t, text) = match kind {
            Kind::Static(types) => {
                let t = types.get(i).ok_or_else(|| format!("too many components: the type has {}", types.len()))?;
                (Cow::Borrowed(t), part)
            }
            Kind::Dynamic(aliases) => {
                let (name, text) = part.split_once('@').ok_or_else(|| format!("component '{part}' lacks 'type@'"))?;
                let alias = match name.as_bytes() {
                    [c] => aliases.iter().find(|(a, _)| a == c),
                    _ => None,
                };
                match alias {
                    Some((a, t)) => {
                        out.extend_from_slice(&(0x8000u16 | u16::from(*a)).to_be_bytes());
                        (Cow::Borrowed(t), text)
                    }
                    None => {
                        let t = parse_nested_type_string(name, depth + 1).map_err(|e| e.to_string())?;
                        let len =
                            u16::try_from(name.len()).ok().filter(|l| l & 0x8000 == 0).ok_or("type name too long")?;
                        out.extend_from_slice(&len.to_be_bytes());
                        out.extend_from_slice(name.as_bytes());
                        (Cow::Owned(t), text)
                    }
                }
            }
        };
        let value =
            t.value_from_display_string_at(depth + 1, &unescape(text)).map_err(|e| format!("component {i}: {e}"))?;
        let len = u16::try_from(value.len()).map_err(|_| format!("component {i} is longer than 65535 bytes"))?;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&value);
        out.push(0);
        count += 1;
    }
    if last_eoc != 0 {
        match out.last_mut() {
            Some(eoc) if count > 0 => *eoc = last_eoc,
            _ => return Err("an end-of-component marker needs a component before it".to_string()),
        }
    }
    Ok(out)
}
