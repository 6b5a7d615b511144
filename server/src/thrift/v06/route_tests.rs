//! The router on bytes: its name lists against both IDLs, every shared method of either
//! generation with arbitrary well-formed arguments (in any field order) routed to the
//! generation that sent it, the per-connection rule for identical layouts, and arbitrary bytes.

#![allow(clippy::indexing_slicing, reason = "test code slicing messages it built itself")]
use std::collections::{BTreeMap, BTreeSet};

use e2e::CallValues as Sample;
use proptest::prelude::*;
use thrift::protocol::{TBinaryOutputProtocol, TMessageIdentifier, TMessageType, TOutputProtocol};
use thrift_idl as t;
use thrift_idl::v06 as v;

use super::*;

// ----- the name lists -----

/// Method names of the `service` of a Thrift IDL file.
fn idl_methods(file: &str) -> BTreeSet<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../thrift-idl").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let service = text.split("service Cassandra").nth(1).expect("a service");
    service
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            if !line.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) || line.starts_with("throws") {
                return None;
            }
            let before = &line[..line.find('(')?];
            let name = before.rsplit(|c: char| c.is_whitespace() || c == '>').next()?;
            (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then(|| name.to_string())
        })
        .collect()
}

#[test]
fn name_lists_match_both_idls() {
    let new = idl_methods("cassandra.thrift");
    let old = idl_methods("cassandra-0.6.thrift");
    assert_eq!(old.len(), 21, "0.6 has 21 methods: {old:?}");
    assert!(new.contains("get_multi_slice") && new.contains("login"), "{new:?}");
    let only_06: BTreeSet<String> = old.difference(&new).cloned().collect();
    let only_20: BTreeSet<String> = new.difference(&old).cloned().collect();
    assert_eq!(only_06, ONLY_06.iter().map(|s| s.to_string()).collect());
    assert_eq!(only_20, ONLY_20.iter().map(|s| s.to_string()).collect());
    for shared in old.intersection(&new) {
        let same = SAME_LAYOUT.contains(&shared.as_str());
        match name(shared) {
            Name::Shared => assert!(same, "{shared} is shared but has no layout rule"),
            Name::Layouts(v06, v20) => {
                assert!(!same, "{shared} is listed as identical");
                assert!(v06.iter().all(|p| !v20.contains(p)), "{shared}: a pair in both signatures");
            }
            Name::Only(g) => panic!("{shared} is in both IDLs but routed only to {g:?}"),
        }
    }
    assert_eq!(name("get_key_range"), Name::Shared, "0.5's get_key_range is unknown to both");
}

// ----- well-formed messages of either generation -----

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..12)
}

fn sample() -> impl Strategy<Value = Sample> {
    (
        ("[a-zA-Z0-9_]{0,8}", "\\PC{0,6}", "[A-Za-z]{0,8}"),
        (prop::option::of(bytes()), prop::option::of(bytes()), prop::option::of(prop::collection::vec(bytes(), 0..3))),
        ((bytes(), bytes(), any::<bool>(), any::<i32>()), any::<bool>(), any::<i64>(), 0..7i32, bytes()),
    )
        .prop_map(Sample::from)
}

/// What these tests build of a sample beyond the shared structs.
trait Calls {
    fn key_range06(&self) -> v::KeyRange;
    fn key_range20(&self) -> t::KeyRange;
    fn mutations06(&self) -> BTreeMap<String, BTreeMap<String, Vec<v::Mutation>>>;
    fn mutations20(&self) -> BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>;
}

impl Calls for Sample {
    fn key_range06(&self) -> v::KeyRange {
        let count = self.range.3;
        if self.by_token {
            v::KeyRange::new(None, None, self.key.clone(), self.keyspace.clone(), count)
        } else {
            v::KeyRange::new(self.key.clone(), self.keyspace.clone(), None, None, count)
        }
    }

    fn key_range20(&self) -> t::KeyRange {
        let count = self.range.3;
        if self.by_token {
            t::KeyRange::new(None, None, self.key.clone(), None, count, None)
        } else {
            t::KeyRange::new(self.key.clone().into_bytes(), None, None, None, count, None)
        }
    }

    fn mutations06(&self) -> BTreeMap<String, BTreeMap<String, Vec<v::Mutation>>> {
        let column = v::Column::new(self.value.clone(), self.value.clone(), self.number);
        let insert = v::Mutation::new(v::ColumnOrSuperColumn::new(column, None), None);
        let delete =
            v::Mutation::new(None, v::Deletion::new(self.number, self.super_column.clone(), self.predicate06()));
        BTreeMap::from([(self.key.clone(), BTreeMap::from([(self.cf.clone(), vec![insert, delete])]))])
    }

    fn mutations20(&self) -> BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>> {
        let column = t::Column::new(self.value.clone(), self.value.clone(), self.number, None);
        let insert = t::Mutation::new(t::ColumnOrSuperColumn::new(column, None, None, None), None);
        let delete =
            t::Mutation::new(None, t::Deletion::new(self.number, self.super_column.clone(), self.predicate20()));
        BTreeMap::from([(self.key.clone().into_bytes(), BTreeMap::from([(self.cf.clone(), vec![insert, delete])]))])
    }
}

/// A CALL message of `method` with the arguments `write` encodes.
fn call(method: &str, write: impl FnOnce(&mut dyn TOutputProtocol) -> thrift::Result<()>) -> Vec<u8> {
    let mut m = Vec::new();
    let mut o = TBinaryOutputProtocol::new(&mut m, true);
    o.write_message_begin(&TMessageIdentifier::new(method, TMessageType::Call, 1)).expect("header");
    write(&mut o).expect("arguments");
    m
}

/// The methods whose layouts differ, each as the 0.6 call and the 20.1.0 call of one sample.
fn calls(s: &Sample) -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
    let (ks, key, kb) = (s.keyspace.clone(), s.key.clone(), s.key.clone().into_bytes());
    let cl06 = v::ConsistencyLevel(s.level);
    let cl20 = t::ConsistencyLevel(s.level);
    let creds = BTreeMap::from([("username".to_string(), s.key.clone())]);
    vec![
        (
            "login",
            call("login", |o| {
                let auth_request = v::AuthenticationRequest::new(creds.clone());
                v::CassandraLoginArgs { keyspace: ks.clone(), auth_request }.write_to_out_protocol(o)
            }),
            call("login", |o| {
                let auth_request = t::AuthenticationRequest::new(creds.clone());
                t::CassandraLoginArgs { auth_request }.write_to_out_protocol(o)
            }),
        ),
        (
            "get",
            call("get", |o| {
                let (column_path, consistency_level) = (s.path06(), cl06);
                v::CassandraGetArgs { keyspace: ks.clone(), key: key.clone(), column_path, consistency_level }
                    .write_to_out_protocol(o)
            }),
            call("get", |o| {
                let (column_path, consistency_level) = (s.path20(), cl20);
                t::CassandraGetArgs { key: kb.clone(), column_path, consistency_level }.write_to_out_protocol(o)
            }),
        ),
        (
            "get_slice",
            call("get_slice", |o| {
                let (column_parent, predicate, consistency_level) = (s.parent06(), s.predicate06(), cl06);
                v::CassandraGetSliceArgs {
                    keyspace: ks.clone(),
                    key: key.clone(),
                    column_parent,
                    predicate,
                    consistency_level,
                }
                .write_to_out_protocol(o)
            }),
            call("get_slice", |o| {
                let (column_parent, predicate, consistency_level) = (s.parent20(), s.predicate20(), cl20);
                t::CassandraGetSliceArgs { key: kb.clone(), column_parent, predicate, consistency_level }
                    .write_to_out_protocol(o)
            }),
        ),
        (
            "multiget_slice",
            call("multiget_slice", |o| {
                let (column_parent, predicate, consistency_level) = (s.parent06(), s.predicate06(), cl06);
                let keys = vec![key.clone(); 2];
                v::CassandraMultigetSliceArgs {
                    keyspace: ks.clone(),
                    keys,
                    column_parent,
                    predicate,
                    consistency_level,
                }
                .write_to_out_protocol(o)
            }),
            call("multiget_slice", |o| {
                let (column_parent, predicate, consistency_level) = (s.parent20(), s.predicate20(), cl20);
                t::CassandraMultigetSliceArgs { keys: vec![kb.clone()], column_parent, predicate, consistency_level }
                    .write_to_out_protocol(o)
            }),
        ),
        (
            "get_count",
            call("get_count", |o| {
                let (column_parent, consistency_level) = (s.parent06(), cl06);
                v::CassandraGetCountArgs { keyspace: ks.clone(), key: key.clone(), column_parent, consistency_level }
                    .write_to_out_protocol(o)
            }),
            call("get_count", |o| {
                let (column_parent, predicate, consistency_level) = (s.parent20(), s.predicate20(), cl20);
                t::CassandraGetCountArgs { key: kb.clone(), column_parent, predicate, consistency_level }
                    .write_to_out_protocol(o)
            }),
        ),
        (
            "get_range_slices",
            call("get_range_slices", |o| {
                let (column_parent, predicate, range) = (s.parent06(), s.predicate06(), s.key_range06());
                v::CassandraGetRangeSlicesArgs {
                    keyspace: ks.clone(),
                    column_parent,
                    predicate,
                    range,
                    consistency_level: cl06,
                }
                .write_to_out_protocol(o)
            }),
            call("get_range_slices", |o| {
                let (column_parent, predicate, range) = (s.parent20(), s.predicate20(), s.key_range20());
                t::CassandraGetRangeSlicesArgs { column_parent, predicate, range, consistency_level: cl20 }
                    .write_to_out_protocol(o)
            }),
        ),
        (
            "insert",
            call("insert", |o| {
                v::CassandraInsertArgs {
                    keyspace: ks.clone(),
                    key: key.clone(),
                    column_path: s.path06(),
                    value: s.value.clone(),
                    timestamp: s.number,
                    consistency_level: cl06,
                }
                .write_to_out_protocol(o)
            }),
            call("insert", |o| {
                let column = t::Column::new(s.value.clone(), s.value.clone(), s.number, None);
                t::CassandraInsertArgs { key: kb.clone(), column_parent: s.parent20(), column, consistency_level: cl20 }
                    .write_to_out_protocol(o)
            }),
        ),
        (
            "remove",
            call("remove", |o| {
                let (column_path, timestamp) = (s.path06(), s.number);
                v::CassandraRemoveArgs {
                    keyspace: ks.clone(),
                    key: key.clone(),
                    column_path,
                    timestamp,
                    consistency_level: cl06,
                }
                .write_to_out_protocol(o)
            }),
            call("remove", |o| {
                let (column_path, timestamp) = (s.path20(), s.number);
                t::CassandraRemoveArgs { key: kb.clone(), column_path, timestamp, consistency_level: cl20 }
                    .write_to_out_protocol(o)
            }),
        ),
        (
            "batch_mutate",
            call("batch_mutate", |o| {
                v::CassandraBatchMutateArgs {
                    keyspace: ks.clone(),
                    mutation_map: s.mutations06(),
                    consistency_level: cl06,
                }
                .write_to_out_protocol(o)
            }),
            call("batch_mutate", |o| {
                t::CassandraBatchMutateArgs { mutation_map: s.mutations20(), consistency_level: cl20 }
                    .write_to_out_protocol(o)
            }),
        ),
        (
            "describe_splits",
            call("describe_splits", |o| {
                v::CassandraDescribeSplitsArgs {
                    start_token: key.clone(),
                    end_token: ks.clone(),
                    keys_per_split: s.level,
                }
                .write_to_out_protocol(o)
            }),
            call("describe_splits", |o| {
                t::CassandraDescribeSplitsArgs {
                    cf_name: s.cf.clone(),
                    start_token: key.clone(),
                    end_token: ks.clone(),
                    keys_per_split: s.level,
                }
                .write_to_out_protocol(o)
            }),
        ),
    ]
}

/// The message with its top-level argument fields in another order (`order` picks them),
/// as a client that does not write fields by id might send it.
fn reorder(message: &[u8], order: &[usize]) -> Vec<u8> {
    let mut c = Cursor { buf: message, pos: 0 };
    c.u32().expect("version");
    let n = c.len().expect("name length");
    c.take(n + 4).expect("name and sequence id");
    let body_start = c.pos;
    let mut fields: Vec<&[u8]> = Vec::new();
    loop {
        let start = c.pos;
        let ttype = c.u8().expect("field type");
        if ttype == 0 {
            break;
        }
        c.i16().expect("field id");
        c.skip_value(ttype, 0).expect("field value");
        fields.push(&message[start..c.pos]);
    }
    let mut out = message[..body_start].to_vec();
    let mut rest: Vec<&[u8]> = fields.clone();
    for pick in order {
        if rest.is_empty() {
            break;
        }
        out.extend_from_slice(rest.remove(pick % rest.len()));
    }
    for f in rest {
        out.extend_from_slice(f);
    }
    out.push(0);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Every method both generations have with different layouts, with arbitrary arguments in
    /// any field order: the message alone says which generation sent it, whatever the connection
    /// showed before.
    #[test]
    fn well_formed_messages_are_routed_to_their_generation(
        s in sample(),
        order in prop::collection::vec(any::<usize>(), 0..6),
        framed in any::<bool>(),
    ) {
        for (method, old, new) in calls(&s) {
            for (message, generation) in [(old, Generation::V06), (new, Generation::V20)] {
                let message = reorder(&message, &order);
                prop_assert_eq!(inspect(&message), Some((method, Evidence::Decides(generation))), "{}", method);
                for before in [Generation::V06, Generation::V20] {
                    let mut router = Router::new(framed);
                    router.current = Some(before);
                    prop_assert_eq!(router.route(&message), Route::To(generation));
                    prop_assert_eq!(router.current(), Some(generation));
                }
            }
        }
    }

    /// Arbitrary bytes, and a well-formed message cut short or with one byte changed: no panic,
    /// and a message the header of which cannot be read goes to 20.1.0's dispatcher (which
    /// closes the connection).
    #[test]
    fn arbitrary_bytes_never_panic(
        noise in prop::collection::vec(any::<u8>(), 0..200),
        s in sample(),
        at in any::<usize>(),
        byte in any::<u8>(),
    ) {
        let mut router = Router::new(true);
        let _ = router.route(&noise);
        if inspect(&noise).is_none() {
            prop_assert_eq!(router.route(&noise), Route::To(Generation::V20));
        }
        for (_, old, new) in calls(&s) {
            for mut m in [old, new] {
                let _ = inspect(&m[..at % (m.len() + 1)]);
                let i = at % m.len();
                m[i] = byte;
                let _ = Router::new(false).route(&m);
            }
        }
    }
}

fn call_without_arguments(method: &str) -> Vec<u8> {
    call(method, |o| {
        o.write_struct_begin(&thrift::protocol::TStructIdentifier::new("args"))?;
        o.write_field_stop()?;
        o.write_struct_end()
    })
}

fn describe_keyspace_call() -> Vec<u8> {
    call("describe_keyspace", |o| {
        t::CassandraDescribeKeyspaceArgs { keyspace: "Keyspace1".into() }.write_to_out_protocol(o)
    })
}

#[test]
fn identical_layouts_follow_the_connection() {
    let version = call_without_arguments("describe_version");
    let property = call("get_string_property", |o| {
        v::CassandraGetStringPropertyArgs { property: "version".into() }.write_to_out_protocol(o)
    });
    let set_keyspace =
        call("set_keyspace", |o| t::CassandraSetKeyspaceArgs { keyspace: "Keyspace1".into() }.write_to_out_protocol(o));
    assert_eq!(inspect(&version), Some(("describe_version", Evidence::Shared)));
    // Before any message decides: the transport.
    assert_eq!(Router::new(false).route(&version), Route::To(Generation::V06));
    assert_eq!(Router::new(true).route(&version), Route::To(Generation::V20));
    // ... except for the two descriptions answered in both forms.
    let mut fresh = Router::new(false);
    assert_eq!(fresh.route(&describe_keyspace_call()), Route::BothForms);
    assert_eq!(fresh.route(&call_without_arguments("describe_keyspaces")), Route::BothForms);
    assert_eq!(fresh.current(), None, "a shared message decides nothing");
    // Then the last message that decided.
    let mut r = Router::new(true);
    assert_eq!(r.route(&property), Route::To(Generation::V06));
    assert_eq!(r.route(&version), Route::To(Generation::V06));
    assert_eq!(r.route(&describe_keyspace_call()), Route::To(Generation::V06));
    assert_eq!(r.route(&set_keyspace), Route::To(Generation::V20));
    assert_eq!(r.route(&version), Route::To(Generation::V20));
    assert_eq!(r.route(&call_without_arguments("describe_keyspaces")), Route::To(Generation::V20));
    // Unknown names decide nothing either.
    assert_eq!(r.route(&call_without_arguments("get_key_range")), Route::To(Generation::V20));
    assert_eq!(r.current(), Some(Generation::V20));
}

#[test]
fn a_message_without_the_deciding_fields_follows_the_connection() {
    // A 0.6 `get` with only its keyspace: field 1 is a string in both generations.
    let partial = call("get", |o| {
        o.write_struct_begin(&thrift::protocol::TStructIdentifier::new("args"))?;
        o.write_field_begin(&thrift::protocol::TFieldIdentifier::new("keyspace", thrift::protocol::TType::String, 1))?;
        o.write_string("Keyspace1")?;
        o.write_field_end()?;
        o.write_field_stop()?;
        o.write_struct_end()
    });
    assert_eq!(inspect(&partial), Some(("get", Evidence::Shared)));
    let mut r = Router::new(false);
    assert_eq!(r.route(&partial), Route::To(Generation::V06));
    assert_eq!(r.current(), None);
}

#[test]
fn unreadable_headers_go_to_the_20_1_0_dispatcher() {
    for bytes in [
        &b""[..],
        b"GET / HTTP/1.1",
        &[0x80, 0x01, 0x00, 0x01, 0x7f, 0xff, 0xff, 0xff],
        &[0, 0, 0, 3, b'g', b'e', b't'],
    ] {
        assert_eq!(inspect(bytes), None, "{bytes:?}");
        assert_eq!(Router::new(false).route(bytes), Route::To(Generation::V20));
    }
}
