//! Times writing an SSTable and random point reads from it, for tuning the layout:
//! `cargo run --release -p storage --example sstable_point_reads -- [ROWS] [CHUNK_BYTES] [INDEX_INTERVAL]`
//! (a measurement, not a test: timings belong in benchmarks).

use std::time::Instant;

use model::data::{Cell, Row};
use model::dht::{DecoratedKey, Token};
use rand::Rng;
use storage::block_cache::{BlockCache, DEFAULT_CAPACITY};
use storage::sstable::{AllCells, Descriptor, SsTableWriter, WriterOptions};

fn key(i: u32) -> DecoratedKey {
    DecoratedKey::new(Token::from_bytes(&i.to_be_bytes()), format!("k{i}").into_bytes())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows: u32 = args.first().map(|a| a.parse()).transpose()?.unwrap_or(200_000);
    let defaults = WriterOptions::default();
    let chunk_size = args.get(1).map(|a| a.parse()).transpose()?.unwrap_or(defaults.chunk_size);
    let index_interval = args.get(2).map(|a| a.parse()).transpose()?.unwrap_or(defaults.index_interval);
    let dir = tempfile::tempdir()?;
    let started = Instant::now();
    let options = WriterOptions { chunk_size, index_interval, ..defaults };
    let mut w = SsTableWriter::create(Descriptor::new(dir.path(), "ks", "cf", 1), rows as usize, options)?;
    for i in 0..rows {
        w.append(&key(i), &Row { cells: vec![Cell::live("c", vec![7u8; 100], 1)], ..Row::new() })?;
    }
    let cache = std::sync::Arc::new(BlockCache::new(DEFAULT_CAPACITY));
    let reader = w.finish((0, 0), vec![], &cache)?;
    println!("write+open: {:?} for {rows} rows, {} bytes", started.elapsed(), reader.disk_size());
    let mut rng = rand::thread_rng();
    let reads = 200_000;
    let started = Instant::now();
    for _ in 0..reads {
        if reader.get(&key(rng.gen_range(0..rows)), &AllCells)?.is_none() {
            return Err("a written key was not found".into());
        }
    }
    println!("random gets: {:.2} µs/op", started.elapsed().as_secs_f64() * 1e6 / reads as f64);
    Ok(())
}
