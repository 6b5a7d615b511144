//! Which API generation sent a message: told per message from its method name and, for the
//! names both generations use, from the field ids and wire types of its arguments, without
//! decoding them (the rule is written out in [`super`]'s documentation and in docs/design.md).
//!
//! Byte order: big-endian, as the binary protocol defines. Only strict (versioned) message
//! headers are read, as [`super::super::wire`] does.

use crate::thrift::wire::ttype::{I32, I64, LIST, MAP, STRING, STRUCT};

/// One of the two Thrift APIs served on the RPC port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// API 20.1.0 (Cassandra 2.1–3.11): keyspace set once per connection.
    V20,
    /// API 2.2.0 (Cassandra 0.6): keyspace as argument 1 of every data call.
    V06,
}

/// Where the front end sends one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    To(Generation),
    /// `describe_keyspace` or `describe_keyspaces` on a connection whose generation is not known
    /// yet: answered in both generations' forms at once (see [`super::both`]).
    BothForms,
}

/// What one message says about the generation that sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// The method name, or the layout of its arguments, exists in one generation only.
    Decides(Generation),
    /// Both generations send this message with the same layout (or it cannot be read far
    /// enough to tell): the connection decides.
    Shared,
}

/// Per-connection routing state.
#[derive(Debug)]
pub struct Router {
    /// The generation of the last message that decided one.
    current: Option<Generation>,
    /// Before any message decided: Cassandra 0.6 served unframed transport by default, and the
    /// servers of API 20.1.0 serve framed transport only, so an unframed connection is taken
    /// for a 0.6 client and a framed one for a 20.1.0 client.
    first_guess: Generation,
}

impl Router {
    pub fn new(framed: bool) -> Router {
        Router { current: None, first_guess: if framed { Generation::V20 } else { Generation::V06 } }
    }

    /// Routes one message and remembers the generation it decided, if any.
    pub fn route(&mut self, message: &[u8]) -> Route {
        let Some((name, evidence)) = inspect(message) else {
            // An unreadable header: the 20.1.0 dispatcher refuses it and closes the connection.
            return Route::To(Generation::V20);
        };
        match (evidence, self.current) {
            (Evidence::Decides(g), _) => {
                self.current = Some(g);
                Route::To(g)
            }
            (Evidence::Shared, Some(g)) => Route::To(g),
            (Evidence::Shared, None) if answers_in_both_forms(name) => Route::BothForms,
            (Evidence::Shared, None) => Route::To(self.first_guess),
        }
    }

    /// The generation the connection has shown, if any message decided one.
    pub fn current(&self) -> Option<Generation> {
        self.current
    }
}

/// Methods of identical layout whose results differ in wire type between the generations, so
/// that one reply can carry both (every Thrift reader skips a field of an unexpected type).
fn answers_in_both_forms(method: &str) -> bool {
    matches!(method, "describe_keyspace" | "describe_keyspaces")
}

/// (field id, wire type) pairs of a method's arguments that only one generation sends.
type Signature = &'static [(i16, u8)];

/// How a method name relates to the generations.
#[derive(Debug, PartialEq, Eq)]
enum Name {
    Only(Generation),
    /// Both generations have it with different argument layouts: the pairs only 0.6 sends, and
    /// those only 20.1.0 sends.
    Layouts(Signature, Signature),
    /// Both have it with the same layout, or neither has it.
    Shared,
}

/// Methods only 0.6 has. 0.6.13 has no `get_key_range` (0.5 had): it is unknown to both.
pub const ONLY_06: [&str; 5] =
    ["multiget", "get_range_slice", "batch_insert", "get_string_property", "get_string_list_property"];

/// Methods only 20.1.0 has.
pub const ONLY_20: [&str; 29] = [
    "set_keyspace",
    "multiget_count",
    "get_paged_slice",
    "get_indexed_slices",
    "add",
    "cas",
    "remove_counter",
    "atomic_batch_mutate",
    "truncate",
    "get_multi_slice",
    "describe_schema_versions",
    "describe_local_ring",
    "describe_token_map",
    "describe_snitch",
    "trace_next_query",
    "describe_splits_ex",
    "system_add_column_family",
    "system_drop_column_family",
    "system_add_keyspace",
    "system_drop_keyspace",
    "system_update_keyspace",
    "system_update_column_family",
    "execute_cql_query",
    "execute_cql3_query",
    "prepare_cql_query",
    "prepare_cql3_query",
    "execute_prepared_cql_query",
    "execute_prepared_cql3_query",
    "set_cql_version",
];

/// Methods both generations have with the same argument layout.
pub const SAME_LAYOUT: [&str; 6] = [
    "describe_keyspace",
    "describe_keyspaces",
    "describe_ring",
    "describe_version",
    "describe_cluster_name",
    "describe_partitioner",
];

fn name(method: &str) -> Name {
    // 0.6 puts the keyspace (a string) first and shifts every argument up by one id; 20.1.0's
    // row key is binary, which is also wire type 11, so for the calls that start with a key
    // the second field tells: 0.6's key (a string) against 20.1.0's column path or parent.
    // (These come first: they are the calls every client makes most.)
    let (v06, v20): (Signature, Signature) = match method {
        "insert" => (&[(2, STRING), (4, STRING), (5, I64), (6, I32)], &[(2, STRUCT), (4, I32)]),
        "batch_mutate" => (&[(1, STRING), (2, MAP), (3, I32)], &[(1, MAP), (2, I32)]),
        "get" => (&[(2, STRING), (3, STRUCT), (4, I32)], &[(2, STRUCT), (3, I32)]),
        "get_slice" => (&[(2, STRING), (4, STRUCT), (5, I32)], &[(2, STRUCT), (4, I32)]),
        "multiget_slice" => (&[(1, STRING), (2, LIST), (4, STRUCT), (5, I32)], &[(1, LIST), (2, STRUCT), (4, I32)]),
        "get_count" => (&[(2, STRING)], &[(2, STRUCT)]),
        "get_range_slices" => (&[(1, STRING), (4, STRUCT), (5, I32)], &[(1, STRUCT), (4, I32)]),
        "remove" => (&[(2, STRING), (3, STRUCT), (4, I64), (5, I32)], &[(2, STRUCT), (3, I64), (4, I32)]),
        "login" => (&[(1, STRING), (2, STRUCT)], &[(1, STRUCT)]),
        "describe_splits" => (&[(3, I32)], &[(3, STRING), (4, I32)]),
        _ if ONLY_06.contains(&method) => return Name::Only(Generation::V06),
        _ if ONLY_20.contains(&method) => return Name::Only(Generation::V20),
        _ => return Name::Shared,
    };
    Name::Layouts(v06, v20)
}

/// The method name of a strict binary-protocol message and what it says about its generation;
/// `None` when the header cannot be read.
pub fn inspect(message: &[u8]) -> Option<(&str, Evidence)> {
    let mut c = Cursor { buf: message, pos: 0 };
    let version = c.u32()?;
    if version & 0xffff_0000 != 0x8001_0000 {
        return None;
    }
    let len = c.len()?;
    let method = thrift_idl::input::str_from_utf8(c.take(len)?).ok()?;
    c.take(4)?; // sequence id
    let evidence = match name(method) {
        Name::Only(g) => Evidence::Decides(g),
        Name::Shared => Evidence::Shared,
        Name::Layouts(v06, v20) => layout_evidence(&mut c, v06, v20),
    };
    Some((method, evidence))
}

/// Walks the arguments in wire order until one field's (id, type) belongs to one generation's
/// layout only. Anything unreadable, or a struct that ends first, decides nothing.
fn layout_evidence(c: &mut Cursor<'_>, v06: Signature, v20: Signature) -> Evidence {
    loop {
        let Some(ttype) = c.u8() else { return Evidence::Shared };
        if ttype == 0 {
            return Evidence::Shared; // STOP
        }
        let Some(id) = c.i16() else { return Evidence::Shared };
        if v06.contains(&(id, ttype)) {
            return Evidence::Decides(Generation::V06);
        }
        if v20.contains(&(id, ttype)) {
            return Evidence::Decides(Generation::V20);
        }
        if c.skip_value(ttype, 0).is_none() {
            return Evidence::Shared;
        }
    }
}

/// Nesting deeper than this is not walked (the message is then undecided, and its decoder
/// refuses it).
const MAX_DEPTH: usize = 64;

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1)?.first().copied()
    }

    fn i16(&mut self) -> Option<i16> {
        let b = self.take(2)?;
        Some(i16::from_be_bytes([*b.first()?, *b.get(1)?]))
    }

    fn u32(&mut self) -> Option<u32> {
        let b: [u8; 4] = self.take(4)?.try_into().ok()?;
        Some(u32::from_be_bytes(b))
    }

    fn len(&mut self) -> Option<usize> {
        usize::try_from(self.u32()? as i32).ok()
    }

    fn skip_value(&mut self, ttype: u8, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match ttype {
            2 | 3 => self.take(1).map(drop),
            6 => self.take(2).map(drop),
            8 => self.take(4).map(drop),
            4 | 10 => self.take(8).map(drop),
            11 => {
                let n = self.len()?;
                self.take(n).map(drop)
            }
            12 => loop {
                let t = self.u8()?;
                if t == 0 {
                    return Some(());
                }
                self.take(2)?;
                self.skip_value(t, depth + 1)?;
            },
            13 => {
                let (k, v) = (self.u8()?, self.u8()?);
                for _ in 0..self.len()? {
                    self.skip_value(k, depth + 1)?;
                    self.skip_value(v, depth + 1)?;
                }
                Some(())
            }
            14 | 15 => {
                let e = self.u8()?;
                for _ in 0..self.len()? {
                    self.skip_value(e, depth + 1)?;
                }
                Some(())
            }
            _ => None,
        }
    }
}

#[cfg(test)]
#[path = "route_tests.rs"]
mod tests;
