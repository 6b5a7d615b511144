//! batch_mutate's arguments read in place, for the shape nearly every batch has: rows in key
//! order, each row's column families in name order, every mutation one plain column. The
//! generated reader builds two nested `BTreeMap`s, a list and a `Mutation` per column, and each
//! name, value, key and family name is allocated on the way, only for the conversion to take
//! them apart again; here they stay slices of the message until the engine's cells are built
//! from them (about a third of an insert's instructions went into that decoding and
//! conversion, bench/instructions-sibyl.sh).
//!
//! The shape is checked completely before anything is converted, so a batch read here gives
//! what the generated reader and [`super::row_mutations`] give, error for error: anything else
//! (a deletion, a super or counter column, keys or names out of order or repeated, a field the
//! plain shape does not have, a malformed message) is left to the generated reader.

use std::ops::Range;
use std::sync::Arc;

use model::data::Row;
use model::mutation::RowMutation;
use model::schema::CfMetadata;
use smallvec::SmallVec;
use thrift::protocol::{TInputProtocol, TType};
use thrift_idl as t;
use thrift_idl::MessageInput;

use super::in_place::{expect_field, expect_stop, read_last_consistency_level, strictly_after, try_read};
use super::mutation::{column_cell, not_super, sort_cells};
use crate::thrift::error::TResult;
use crate::thrift::validate::{validate_key, validate_key_type};
use crate::thrift::wire::ttype::{I32, I64, MAP, STOP, STRING, STRUCT};

/// A batch_mutate call's arguments: read in place when they have the plain shape, by the
/// generated reader otherwise.
pub enum BatchMutateArgs<'a> {
    InPlace(BatchInPlace<'a>),
    Decoded(t::CassandraBatchMutateArgs),
}

impl<'a> BatchMutateArgs<'a> {
    /// Reads the arguments at the front of `input` (the method table's reader).
    pub fn read_from_in_protocol(input: &mut MessageInput<'a>) -> thrift::Result<BatchMutateArgs<'a>> {
        match BatchInPlace::read(input) {
            Some(batch) => Ok(BatchMutateArgs::InPlace(batch)),
            None => t::CassandraBatchMutateArgs::read_from_in_protocol(input).map(BatchMutateArgs::Decoded),
        }
    }
}

/// One column of a mutation, borrowed from the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnRef<'a> {
    pub name: &'a [u8],
    pub value: Option<&'a [u8]>,
    pub timestamp: Option<i64>,
    pub ttl: Option<i32>,
}

/// A row of the batch: its key and its column families (a range of [`BatchInPlace::families`]).
#[derive(Clone, Debug)]
struct RowRef<'a> {
    key: &'a [u8],
    families: Range<usize>,
}

/// A column family of a row: its name and its columns (a range of [`BatchInPlace::columns`]).
#[derive(Clone, Debug)]
struct FamilyRef<'a> {
    name: &'a str,
    columns: Range<usize>,
}

/// A batch of the plain shape, its parts borrowed from the message, in the message's order
/// (which is the maps' order: keys and names are strictly ascending).
#[derive(Clone, Debug)]
pub struct BatchInPlace<'a> {
    rows: SmallVec<[RowRef<'a>; 1]>,
    families: SmallVec<[FamilyRef<'a>; 1]>,
    columns: SmallVec<[ColumnRef<'a>; 2]>,
    pub consistency_level: t::ConsistencyLevel,
}

impl<'a> BatchInPlace<'a> {
    /// The arguments at the front of `input`, consumed, if they have the plain shape; `None`,
    /// with `input` untouched, otherwise.
    pub fn read(input: &mut MessageInput<'a>) -> Option<BatchInPlace<'a>> {
        try_read(input, read_plain)
    }

    /// Every column family the batch names, row by row, as the decoded map lists them.
    pub fn column_families(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.families.iter().map(|f| f.name)
    }

    /// The row mutations of `keyspace` the batch makes, every one validated before any is
    /// returned, in the order and with the errors of [`super::row_mutations`] for the same batch
    /// decoded; `metadata` looks a column family up.
    pub fn row_mutations(
        &self,
        keyspace: &str,
        metadata: impl Fn(&str) -> TResult<Arc<CfMetadata>>,
        now: i32,
    ) -> TResult<Vec<RowMutation>> {
        let mut mutations = Vec::with_capacity(self.rows.len());
        for row in &self.rows {
            validate_key(row.key)?;
            let mut rm = RowMutation {
                keyspace: keyspace.to_string(),
                key: row.key.to_vec(),
                updates: Vec::with_capacity(row.families.len()),
            };
            for family in &self.families[row.families.clone()] {
                let meta = metadata(family.name)?;
                validate_key_type(&meta, &rm.key)?;
                let mut update = Row { cells: Vec::with_capacity(family.columns.len()), ..Row::new() };
                for c in &self.columns[family.columns.clone()] {
                    not_super(&meta)?;
                    update.cells.push(column_cell(&meta, None, c.name, c.value, c.timestamp, c.ttl, now)?);
                }
                sort_cells(&meta, &mut update);
                rm.updates.push((family.name.to_string(), update));
            }
            mutations.push(rm);
        }
        Ok(mutations)
    }
}

/// batch_mutate's arguments `{1: map<binary, map<string, list<Mutation>>> mutation_map, 2: i32
/// consistency_level}`, if they have the plain shape. The generated writers of every language
/// write fields in id order, so only that order is taken.
fn read_plain<'a>(i: &mut MessageInput<'a>) -> Option<BatchInPlace<'a>> {
    expect_field(i, MAP, 1)?;
    let rows = i.read_map_begin().ok()?;
    if (rows.key_type, rows.value_type) != (Some(TType::String), Some(TType::Map)) || rows.size == 0 {
        return None;
    }
    let mut batch = BatchInPlace {
        rows: SmallVec::new(),
        families: SmallVec::new(),
        columns: SmallVec::new(),
        consistency_level: t::ConsistencyLevel::ONE,
    };
    let mut last_key: Option<&[u8]> = None;
    for _ in 0..rows.size {
        let key = i.read_binary_ref().ok()?;
        if !strictly_after(&mut last_key, key) {
            return None;
        }
        let families = i.read_map_begin().ok()?;
        if (families.key_type, families.value_type) != (Some(TType::String), Some(TType::List)) {
            return None;
        }
        let first_family = batch.families.len();
        let mut last_name: Option<&str> = None;
        for _ in 0..families.size {
            let name = i.read_str_ref().ok()?;
            if !strictly_after(&mut last_name, name) {
                return None;
            }
            let mutations = i.read_list_begin().ok()?;
            if mutations.element_type != TType::Struct {
                return None;
            }
            let first_column = batch.columns.len();
            for _ in 0..mutations.size {
                batch.columns.push(read_plain_mutation(i)?);
            }
            batch.families.push(FamilyRef { name, columns: first_column..batch.columns.len() });
        }
        batch.rows.push(RowRef { key, families: first_family..batch.families.len() });
    }
    batch.consistency_level = read_last_consistency_level(i, 2)?;
    Some(batch)
}

/// A `Mutation` holding a `ColumnOrSuperColumn` holding only a `Column`.
fn read_plain_mutation<'a>(i: &mut MessageInput<'a>) -> Option<ColumnRef<'a>> {
    expect_field(i, STRUCT, 1)?; // Mutation.column_or_supercolumn
    expect_field(i, STRUCT, 1)?; // ColumnOrSuperColumn.column
    let column = read_column(i)?;
    expect_stop(i)?; // the ColumnOrSuperColumn's end
    expect_stop(i)?; // the Mutation's end
    Some(column)
}

/// `Column {1: binary name, 2: binary value, 3: i64 timestamp, 4: i32 ttl}`, its fields in id
/// order, each at most once, the name present.
// Inlined into each reader (batch_mutate's and insert's): called, it cost a one-column
// batch_mutate about 110 instructions.
#[inline(always)]
pub(super) fn read_column<'a>(i: &mut MessageInput<'a>) -> Option<ColumnRef<'a>> {
    let (mut name, mut value, mut timestamp, mut ttl) = (None, None, None, None);
    let mut last_id = 0;
    loop {
        let (field_type, id) = i.read_field_header()?;
        if field_type == STOP {
            break;
        }
        if id <= last_id {
            return None;
        }
        last_id = id;
        match (id, field_type) {
            (1, STRING) => name = Some(i.read_binary_ref().ok()?),
            (2, STRING) => value = Some(i.read_binary_ref().ok()?),
            (3, I64) => timestamp = Some(i.read_i64().ok()?),
            (4, I32) => ttl = Some(i.read_i32().ok()?),
            _ => return None,
        }
    }
    Some(ColumnRef { name: name?, value, timestamp, ttl })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use model::schema::{CfDef, ColumnType};
    use proptest::prelude::*;
    use thrift::protocol::{TListIdentifier, TMapIdentifier, TOutputProtocol};
    use thrift_idl::MessageOutput;

    use super::*;
    use crate::thrift::convert::in_place::{encoded, field};
    use crate::thrift::convert::row_mutations;
    use crate::thrift::error::ire;

    /// Column families of keyspace KS: a standard one with UTF-8 names and a default TTL, one
    /// with long names and values, a super one and a counter one; any other name is unknown.
    fn metadata(cf: &str) -> TResult<Arc<CfMetadata>> {
        let marshal = |ty: &str| format!("org.apache.cassandra.db.marshal.{ty}");
        let mut def = CfDef::new("KS", cf);
        match cf {
            "Utf8" => {
                def.comparator_type = marshal("UTF8Type");
                def.default_time_to_live = 60;
            }
            "Longs" => {
                def.comparator_type = marshal("LongType");
                def.default_validation_class = marshal("LongType");
            }
            "Super" => {
                def.column_type = ColumnType::Super;
                def.subcomparator_type = Some(marshal("BytesType"));
            }
            "Counts" => def.default_validation_class = marshal("CounterColumnType"),
            _ => return Err(ire(format!("unconfigured table {cf}"))),
        }
        Ok(Arc::new(CfMetadata::new(def).expect("valid definition")))
    }

    fn encode(args: &t::CassandraBatchMutateArgs) -> Vec<u8> {
        encoded(|o| args.write_to_out_protocol(o))
    }

    fn plain(name: &[u8], value: Option<&[u8]>, timestamp: Option<i64>, ttl: Option<i32>) -> t::Mutation {
        let column = t::Column::new(name.to_vec(), value.map(<[u8]>::to_vec), timestamp, ttl);
        let cosc = t::ColumnOrSuperColumn::new(
            column,
            None::<t::SuperColumn>,
            None::<t::CounterColumn>,
            None::<t::CounterSuperColumn>,
        );
        t::Mutation::new(cosc, None::<t::Deletion>)
    }

    fn is_plain(m: &t::Mutation) -> bool {
        matches!(
            m,
            t::Mutation {
                column_or_supercolumn: Some(t::ColumnOrSuperColumn {
                    column: Some(_),
                    super_column: None,
                    counter_column: None,
                    counter_super_column: None
                }),
                deletion: None
            }
        )
    }

    /// What either path makes of a batch: the row mutations, or the error's words.
    fn outcome(r: TResult<Vec<RowMutation>>) -> Result<Vec<RowMutation>, String> {
        r.map_err(|e| format!("{e:?}"))
    }

    fn mutation() -> impl Strategy<Value = t::Mutation> {
        let bytes = |max| proptest::collection::vec(any::<u8>(), 0..max);
        let column = (
            prop_oneof![Just(b"a".to_vec()), Just(b"b".to_vec()), Just(7i64.to_be_bytes().to_vec()), bytes(10)],
            proptest::option::weighted(0.9, prop_oneof![Just(5i64.to_be_bytes().to_vec()), bytes(10)]),
            proptest::option::weighted(0.9, any::<i64>()),
            proptest::option::weighted(0.3, prop_oneof![Just(-1i32), 0..100_000i32, Just(i32::MAX)]),
        )
            .prop_map(|(name, value, timestamp, ttl)| plain(&name, value.as_deref(), timestamp, ttl));
        let deletion = any::<i64>().prop_map(|ts| {
            t::Mutation::new(
                None::<t::ColumnOrSuperColumn>,
                t::Deletion::new(ts, None::<Vec<u8>>, None::<t::SlicePredicate>),
            )
        });
        let sup = bytes(4).prop_map(|name| {
            let sc = t::SuperColumn::new(name, vec![t::Column::new(b"s".to_vec(), b"v".to_vec(), 1i64, None::<i32>)]);
            t::Mutation::new(
                t::ColumnOrSuperColumn::new(
                    None::<t::Column>,
                    sc,
                    None::<t::CounterColumn>,
                    None::<t::CounterSuperColumn>,
                ),
                None::<t::Deletion>,
            )
        });
        prop_oneof![8 => column, 1 => deletion, 1 => sup]
    }

    fn batch() -> impl Strategy<Value = t::CassandraBatchMutateArgs> {
        let family = prop_oneof![Just("Utf8"), Just("Longs"), Just("Super"), Just("Counts"), Just("Nope")]
            .prop_map(String::from);
        let families = proptest::collection::btree_map(family, proptest::collection::vec(mutation(), 0..4), 0..3);
        let key = prop_oneof![Just(Vec::new()), proptest::collection::vec(any::<u8>(), 1..4), Just(vec![0; 65536])];
        (proptest::collection::btree_map(key, families, 0..4), prop_oneof![Just(1), Just(9), Just(0), -2..20i32])
            .prop_map(|(mutation_map, cl)| t::CassandraBatchMutateArgs {
                mutation_map,
                consistency_level: t::ConsistencyLevel(cl),
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// A batch read in place converts to what the decoded batch converts to, error for
        /// error; every plain batch is read in place.
        #[test]
        fn in_place_converts_as_the_decoded_map(args in batch()) {
            let bytes = encode(&args);
            let in_place = BatchInPlace::read(&mut MessageInput::new(&bytes));
            let all_plain = args.mutation_map.values().flat_map(|cfs| cfs.values()).flatten().all(is_plain);
            prop_assert_eq!(in_place.is_some(), all_plain && !args.mutation_map.is_empty());
            let Some(in_place) = in_place else { return Ok(()) };
            prop_assert_eq!(in_place.consistency_level, args.consistency_level);
            let families: Vec<&str> = args.mutation_map.values().flat_map(|cfs| cfs.keys().map(String::as_str)).collect();
            prop_assert_eq!(in_place.column_families().collect::<Vec<_>>(), families);
            let decoded = t::CassandraBatchMutateArgs::read_from_in_protocol(&mut MessageInput::new(&bytes)).expect("decodes");
            prop_assert_eq!(
                outcome(in_place.row_mutations("KS", metadata, 1_000)),
                outcome(row_mutations("KS", decoded.mutation_map, metadata, 1_000))
            );
        }

        /// A message cut anywhere is not read in place, and the input is left where it was for
        /// the generated reader.
        #[test]
        fn a_truncated_batch_is_left_to_the_generated_reader(args in batch(), cut in any::<prop::sample::Index>()) {
            let bytes = encode(&args);
            let cut = cut.index(bytes.len());
            let mut input = MessageInput::new(&bytes[..cut]);
            prop_assert!(BatchInPlace::read(&mut input).is_none());
            prop_assert_eq!(input.remaining(), cut);
        }
    }

    /// A row of [`raw`]: its key, and its families' names with their columns' names.
    type RawRow<'a> = (&'a [u8], &'a [(&'a str, &'a [&'a [u8]])]);

    /// Writes a batch field by field.
    fn raw(rows: &[RawRow<'_>], tail: impl FnOnce(&mut MessageOutput<'_>)) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut o = MessageOutput::new(&mut bytes);
        o.write_field_begin(&field(TType::Map, 1)).expect("w");
        o.write_map_begin(&TMapIdentifier::new(TType::String, TType::Map, rows.len() as i32)).expect("w");
        for (key, families) in rows {
            o.write_bytes(key).expect("w");
            o.write_map_begin(&TMapIdentifier::new(TType::String, TType::List, families.len() as i32)).expect("w");
            for (name, columns) in *families {
                o.write_string(name).expect("w");
                o.write_list_begin(&TListIdentifier::new(TType::Struct, columns.len() as i32)).expect("w");
                for column in *columns {
                    plain(column, Some(b"v"), Some(1), None).write_to_out_protocol(&mut o).expect("w");
                }
            }
        }
        tail(&mut o);
        bytes
    }

    fn level(o: &mut MessageOutput<'_>, cl: i32) {
        o.write_field_begin(&field(TType::I32, 2)).expect("w");
        o.write_i32(cl).expect("w");
    }

    fn stop(o: &mut MessageOutput<'_>) {
        o.write_field_stop().expect("w");
    }

    fn read(bytes: &[u8]) -> Option<BatchInPlace<'_>> {
        BatchInPlace::read(&mut MessageInput::new(bytes))
    }

    #[test]
    fn only_the_maps_order_is_read_in_place() {
        let ok = raw(&[(b"a", &[("Longs", &[b"c"]), ("Utf8", &[b"c"])]), (b"b", &[])], |o| {
            level(o, 2);
            stop(o);
        });
        let batch = read(&ok).expect("plain, in order");
        assert_eq!(batch.consistency_level, t::ConsistencyLevel::QUORUM);
        assert_eq!(batch.column_families().collect::<Vec<_>>(), ["Longs", "Utf8"]);
        let done = |o: &mut MessageOutput<'_>| {
            level(o, 1);
            stop(o);
        };
        // Keys or names out of order, or repeated, decode to a map that sorts them or keeps the
        // last: the generated reader's business.
        assert!(read(&raw(&[(b"b", &[]), (b"a", &[])], done)).is_none());
        assert!(read(&raw(&[(b"a", &[]), (b"a", &[])], done)).is_none());
        assert!(read(&raw(&[(b"a", &[("Utf8", &[]), ("Longs", &[])])], done)).is_none());
        assert!(read(&raw(&[(b"a", &[("Utf8", &[]), ("Utf8", &[])])], done)).is_none());
        // No rows at all: the generated reader too.
        assert!(read(&raw(&[], done)).is_none());
    }

    #[test]
    fn the_level_defaults_to_one_and_nothing_may_follow_it() {
        let no_level = raw(&[(b"a", &[("Utf8", &[b"c"])])], stop);
        let batch = read(&no_level).expect("no level");
        assert_eq!(batch.consistency_level, t::ConsistencyLevel::ONE);
        let extra = raw(&[(b"a", &[("Utf8", &[b"c"])])], |o| {
            level(o, 1);
            o.write_field_begin(&field(TType::I32, 3)).expect("w");
            o.write_i32(0).expect("w");
            stop(o);
        });
        assert!(read(&extra).is_none(), "an unknown field is skipped by the generated reader");
        let mistyped = raw(&[(b"a", &[("Utf8", &[b"c"])])], |o| {
            o.write_field_begin(&field(TType::I64, 2)).expect("w");
            o.write_i64(1).expect("w");
            stop(o);
        });
        assert!(read(&mistyped).is_none());
    }

    #[test]
    fn a_column_with_fields_out_of_order_or_unknown_is_left_to_the_generated_reader() {
        let column = |fields: &[(i16, TType)]| {
            let mut bytes = Vec::new();
            let mut o = MessageOutput::new(&mut bytes);
            o.write_field_begin(&field(TType::Map, 1)).expect("w");
            o.write_map_begin(&TMapIdentifier::new(TType::String, TType::Map, 1)).expect("w");
            o.write_bytes(b"k").expect("w");
            o.write_map_begin(&TMapIdentifier::new(TType::String, TType::List, 1)).expect("w");
            o.write_string("Utf8").expect("w");
            o.write_list_begin(&TListIdentifier::new(TType::Struct, 1)).expect("w");
            for id in [1, 1] {
                o.write_field_begin(&field(TType::Struct, id)).expect("w");
            }
            for (id, ty) in fields {
                o.write_field_begin(&field(*ty, *id)).expect("w");
                match ty {
                    TType::I64 => o.write_i64(1).expect("w"),
                    TType::I32 => o.write_i32(1).expect("w"),
                    _ => o.write_bytes(b"x").expect("w"),
                }
            }
            for _ in 0..4 {
                o.write_field_stop().expect("w");
            }
            bytes
        };
        let name = (1, TType::String);
        let value = (2, TType::String);
        let timestamp = (3, TType::I64);
        assert!(read(&column(&[name, value, timestamp])).is_some());
        assert!(read(&column(&[value, timestamp])).is_none(), "the name is required");
        assert!(read(&column(&[name, timestamp, value])).is_none());
        assert!(read(&column(&[name, name, value])).is_none());
        assert!(read(&column(&[name, (5, TType::String)])).is_none());
        assert!(read(&column(&[name, (3, TType::I32)])).is_none());
        let bytes = column(&[name, value, timestamp]);
        let batch = read(&bytes).expect("plain");
        let rows = batch.row_mutations("KS", metadata, 1).expect("valid");
        assert_eq!(rows[0].updates[0].1.cells[0].name, b"x");
    }

    #[test]
    fn column_families_are_looked_up_in_the_maps_order() {
        let map: BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>> = BTreeMap::from([(
            b"k".to_vec(),
            BTreeMap::from([
                ("Nope".to_string(), vec![]),
                ("Utf8".to_string(), vec![plain(&[0xFF], Some(b"v"), Some(1), None)]),
            ]),
        )]);
        let bytes =
            encode(&t::CassandraBatchMutateArgs { mutation_map: map, consistency_level: t::ConsistencyLevel::ONE });
        let batch = read(&bytes).expect("plain");
        assert_eq!(
            outcome(batch.row_mutations("KS", metadata, 1)),
            Err(format!("{:?}", ire("unconfigured table Nope")))
        );
    }
}
