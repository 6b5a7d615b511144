//! fillrandom / readrandom through the storage engine's API, shaped like RocksDB's db_bench so
//! the two can run side by side (see bench/storage-vs-rocksdb.sh):
//! N rows of one column, 16-byte keys, 100-byte values, commit log on (periodic sync, as
//! db_bench's default WAL without sync), one thread, keys drawn uniformly from [0, N).
//!
//! `cargo run --release -p storage --example db_bench -- [--num N] [--dir DIR]`

use std::time::Instant;

use model::data::Cell;
use model::dht::Partitioner;
use model::filter::ReadFilter;
use model::mutation::RowMutation;
use model::schema::{CfDef, KeyspaceDef};
use rand::{Rng, SeedableRng};
use storage::engine::{Storage, StorageConfig};

/// The allocator the `sibyl` daemon links, so that this measures the engine as it runs there:
/// with glibc's malloc, the flush thread freeing a memtable's entries contends with the writer
/// for the arena lock (a tenth of the writer's time in futex wakeups at 10 million rows).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn key(i: u64) -> Vec<u8> {
    format!("{i:016}").into_bytes()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut num: u64 = 1_000_000;
    let mut dir: Option<std::path::PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--num" => num = args.next().ok_or("--num needs a value")?.parse()?,
            "--dir" => dir = Some(args.next().ok_or("--dir needs a value")?.into()),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let tmp = tempfile::tempdir()?;
    let dir = dir.unwrap_or_else(|| tmp.path().to_path_buf());
    let mut config = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    config.partitioner = Partitioner::Murmur3;
    let mut ks = KeyspaceDef::new("bench");
    ks.cf_defs.push(CfDef::new("bench", "kv"));
    config.initial_keyspaces = vec![ks];
    let storage = Storage::open(config)?;

    let mut rng = rand::rngs::StdRng::seed_from_u64(301);
    let value: Vec<u8> = (0..100).map(|_| rng.gen_range(b'a'..=b'z')).collect();

    let started = Instant::now();
    for _ in 0..num {
        let k = rng.gen_range(0..num);
        let mut m = RowMutation::new("bench", key(k));
        m.row_mut("kv").cells.push(Cell::live(&b"v"[..], value.clone(), 1));
        storage.apply(m)?;
    }
    let fill = started.elapsed();
    report("fillrandom", num, fill);

    let filter = ReadFilter::all();
    let started = Instant::now();
    let mut found = 0u64;
    for _ in 0..num {
        let k = rng.gen_range(0..num);
        if !storage.read("bench", "kv", &key(k), &filter)?.is_empty() {
            found += 1;
        }
    }
    let read = started.elapsed();
    report("readrandom", num, read);
    println!("readrandom found {found} of {num}");
    storage.shutdown()?;
    Ok(())
}

fn report(name: &str, ops: u64, elapsed: std::time::Duration) {
    let micros = elapsed.as_secs_f64() * 1e6 / ops as f64;
    let rate = ops as f64 / elapsed.as_secs_f64();
    println!("{name:<12}: {micros:>10.3} micros/op {rate:>8.0} ops/sec;");
}
