//! Values as CQL encodes them, the column types the tables use, and the pools key
//! values are drawn from.

use super::*;

/// A value as CQL encodes it (shown in hex when proptest prints a case).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct V(pub(crate) Vec<u8>);

impl std::ops::Deref for V {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for V {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "0x{}", self.0.iter().map(|b| format!("{b:02x}")).collect::<String>())
    }
}

/// A row as a result shows it: a value (or null) per column.
pub(crate) type Row = Vec<Option<V>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    Int,
    Bigint,
    Text,
    Blob,
    Boolean,
    Double,
    /// `set<int>`, one cell per element (regular columns only); its values are the whole set
    /// as CQL serializes it (`i32` count, then each element with its `i32` length).
    IntSet,
}

impl Ty {
    pub(crate) const ALL: [Ty; 6] = [Ty::Int, Ty::Bigint, Ty::Text, Ty::Blob, Ty::Boolean, Ty::Double];

    pub(crate) fn cql(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Bigint => "bigint",
            Ty::Text => "text",
            Ty::Blob => "blob",
            Ty::Boolean => "boolean",
            Ty::Double => "double",
            Ty::IntSet => "set<int>",
        }
    }

    /// The type's order of values (a DESC column reverses it): numbers numerically (doubles as
    /// `java.lang.Double.compare`, so -0.0 < 0.0), text and blobs bytewise, false < true.
    pub(crate) fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Ty::Int => i32::from_be_bytes(a.try_into().unwrap()).cmp(&i32::from_be_bytes(b.try_into().unwrap())),
            Ty::Bigint => i64::from_be_bytes(a.try_into().unwrap()).cmp(&i64::from_be_bytes(b.try_into().unwrap())),
            Ty::Double => {
                f64::from_be_bytes(a.try_into().unwrap()).total_cmp(&f64::from_be_bytes(b.try_into().unwrap()))
            }
            Ty::Text | Ty::Blob | Ty::Boolean | Ty::IntSet => a.cmp(b),
        }
    }

    /// The CQL literal of a value.
    pub(crate) fn literal(self, v: &[u8]) -> String {
        match self {
            Ty::Int => i32::from_be_bytes(v.try_into().unwrap()).to_string(),
            Ty::Bigint => i64::from_be_bytes(v.try_into().unwrap()).to_string(),
            Ty::Text => format!("'{}'", String::from_utf8(v.to_vec()).unwrap().replace('\'', "''")),
            Ty::Blob => format!("0x{}", v.iter().map(|b| format!("{b:02x}")).collect::<String>()),
            Ty::Boolean => (v == [1]).to_string(),
            // Debug prints the shortest text that reads back as the same double: `1.5`,
            // `-0.0`, `1e300`, all CQL float (or integer) literals.
            Ty::Double => format!("{:?}", f64::from_be_bytes(v.try_into().unwrap())),
            Ty::IntSet => {
                let items: Vec<String> = set_elements(v).unwrap().iter().map(i32::to_string).collect();
                format!("{{{}}}", items.join(", "))
            }
        }
    }

    /// The literal, or what a result shows for a value that does not fit the type.
    pub(crate) fn show(self, v: &Option<V>) -> String {
        match v {
            None => "null".into(),
            Some(v) if self.fits(v) => self.literal(v),
            Some(v) => format!("<{} bytes: {v:?}>", v.len()),
        }
    }

    pub(crate) fn fits(self, v: &[u8]) -> bool {
        match self {
            Ty::Int => v.len() == 4,
            Ty::Bigint | Ty::Double => v.len() == 8,
            Ty::Text => std::str::from_utf8(v).is_ok(),
            Ty::Blob => true,
            Ty::Boolean => v.len() == 1,
            Ty::IntSet => set_elements(v).is_some(),
        }
    }
}

/// A `set<int>` value: its elements, sorted.
pub(crate) fn int_set(elements: &[i32]) -> V {
    let mut sorted = elements.to_vec();
    sorted.sort();
    sorted.dedup();
    let mut out = (sorted.len() as i32).to_be_bytes().to_vec();
    for e in sorted {
        out.extend(4i32.to_be_bytes());
        out.extend(e.to_be_bytes());
    }
    V(out)
}

/// The elements of a serialized `set<int>`, if it is one.
pub(crate) fn set_elements(v: &[u8]) -> Option<Vec<i32>> {
    let count = i32::from_be_bytes(v.get(..4)?.try_into().ok()?);
    let mut rest = &v[4..];
    let mut out = Vec::new();
    for _ in 0..count {
        if rest.get(..4)? != 4i32.to_be_bytes() {
            return None;
        }
        out.push(i32::from_be_bytes(rest.get(4..8)?.try_into().ok()?));
        rest = &rest[8..];
    }
    rest.is_empty().then_some(out)
}

pub(crate) fn int(n: i32) -> V {
    V(n.to_be_bytes().to_vec())
}
pub(crate) fn bigint(n: i64) -> V {
    V(n.to_be_bytes().to_vec())
}
pub(crate) fn double(f: f64) -> V {
    V(f.to_be_bytes().to_vec())
}
pub(crate) fn text(s: &str) -> V {
    V(s.as_bytes().to_vec())
}
pub(crate) fn blob(b: &[u8]) -> V {
    V(b.to_vec())
}

/// The few values key columns take, so that writes meet the same rows again: partition keys
/// from three (never empty: 3.11 refuses an empty key), clustering values from more, with the
/// edges of each type's order (extremes, signs, -0.0, the empty text and blob, a quote,
/// multi-byte UTF-8, bytes above 0x7f).
pub(crate) fn pool(ty: Ty, partition: bool) -> Vec<V> {
    if partition {
        return match ty {
            Ty::Int => vec![int(7), int(-1), int(i32::MIN)],
            Ty::Bigint => vec![bigint(0), bigint(i64::MAX), bigint(-5)],
            Ty::Text => vec![text("a"), text("it's"), text("日本")],
            Ty::Blob => vec![blob(&[0]), blob(&[0xff]), blob(&[1, 2])],
            Ty::Boolean => vec![blob(&[0]), blob(&[1])],
            Ty::Double => vec![double(0.0), double(-0.0), double(2.5)],
            Ty::IntSet => unreachable!("a set is no key here"),
        };
    }
    match ty {
        Ty::Int => vec![int(i32::MIN), int(-1), int(0), int(1), int(42), int(i32::MAX)],
        Ty::Bigint => vec![bigint(i64::MIN), bigint(-1), bigint(0), bigint(1), bigint(1 << 40), bigint(i64::MAX)],
        Ty::Text => ["", "a", "a'b", "ab", "b", "é", "日本"].iter().map(|s| text(s)).collect(),
        Ty::Blob => [&[][..], &[0], &[0, 0], &[1], &[0x7f], &[0x80], &[0xff]].iter().map(|b| blob(b)).collect(),
        Ty::Boolean => vec![blob(&[0]), blob(&[1])],
        Ty::Double => [-1e20, -1.5, -0.0, 0.0, 0.25, 3.0, 1e300].iter().map(|f| double(*f)).collect(),
        Ty::IntSet => unreachable!("a set is no key here"),
    }
}

pub(crate) fn key_value(ty: Ty, partition: bool) -> BoxedStrategy<V> {
    prop::sample::select(pool(ty, partition)).boxed()
}

/// Any value of a regular column (empty text and blobs included: live cells, not nulls).
pub(crate) fn regular_value(ty: Ty) -> BoxedStrategy<V> {
    match ty {
        Ty::Int => any::<i32>().prop_map(int).boxed(),
        Ty::Bigint => any::<i64>().prop_map(bigint).boxed(),
        Ty::Text => "[ab' é日]{0,6}".prop_map(|s: String| V(s.into_bytes())).boxed(),
        Ty::Blob => vec(any::<u8>(), 0..6).prop_map(V).boxed(),
        Ty::Boolean => any::<bool>().prop_map(|b| V(vec![u8::from(b)])).boxed(),
        Ty::Double => any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(double).boxed(),
        // Few elements from a small range, so that adds and removes meet the same ones.
        Ty::IntSet => vec(-3i32..4, 0..4).prop_map(|e| int_set(&e)).boxed(),
    }
}
