//! Helpers shared by the engine's integration tests: keyspace `ks` with a `users` column family
//! whose `name` column has a KEYS index, and damage done to an SSTable on disk.
#![allow(dead_code, reason = "each test file uses a different part of this module")]

use std::path::{Path, PathBuf};

use model::data::Cell;
use model::dht::Partitioner;
use model::filter::ReadFilter;
use model::mutation::RowMutation;
use model::schema::{CfDef, ColumnDef, IndexType, KeyspaceDef};
use storage::engine::{Storage, StorageConfig};

const UTF8: &str = "org.apache.cassandra.db.marshal.UTF8Type";

/// An engine in `dir` holding `ks.users` (UTF8 names, `name` indexed), without background
/// compaction.
pub fn users_config(dir: &Path) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = false;
    let mut users = CfDef::new("ks", "users");
    users.comparator_type = UTF8.into();
    users.column_metadata = vec![ColumnDef {
        name: b"name".to_vec(),
        validation_class: UTF8.into(),
        index_type: Some(IndexType::Keys),
        index_name: None,
        index_options: Default::default(),
    }];
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(users);
    c.initial_keyspaces = vec![ks];
    c
}

/// Sets `name` of row `key` of `ks.users`.
pub fn put_name(s: &Storage, key: &str, value: &str) {
    let mut m = RowMutation::new("ks", key.as_bytes().to_vec());
    m.row_mut("users").cells.push(Cell::live("name", value, 1));
    s.apply(m).expect("write");
}

/// The `name` of row `key` of `ks.users`.
pub fn name_of(s: &Storage, key: &str) -> Option<Vec<u8>> {
    s.read("ks", "users", key.as_bytes(), &ReadFilter::all()).expect("read").into_iter().next().map(|c| c.value)
}

/// Damages the first `-Data.db` file directly in `dir` ([`damage_middle_of`]), and returns
/// its path.
pub fn damage_data_file_in(dir: &Path) -> PathBuf {
    let data = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .find(|p| p.to_string_lossy().ends_with("-Data.db"))
        .expect("a Data file");
    damage_middle_of(&data);
    data
}

/// Flips bits of three bytes in the middle of `file`.
pub fn damage_middle_of(file: &Path) {
    let mut bytes = std::fs::read(file).expect("read");
    let middle = bytes.len() / 2;
    for (byte, flip) in bytes[middle..].iter_mut().zip([0xA5u8, 0x5A, 0xA5]) {
        *byte ^= flip;
    }
    std::fs::write(file, bytes).expect("write");
}
