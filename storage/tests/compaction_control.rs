//! What `compactionstats` and `setcompactionthroughput` rest on: the running compactions with
//! their progress, the compactions due, and a rate limit that changes for a running compaction.
#![expect(clippy::unwrap_used, reason = "test")]

use std::path::Path;
use std::time::{Duration, Instant};

use model::data::Cell;
use model::dht::Partitioner;
use model::mutation::RowMutation;
use model::schema::{CfDef, KeyspaceDef};
use storage::engine::{Storage, StorageConfig};

fn config(dir: &Path) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = false;
    c.compaction_throughput_mb_per_sec = 1;
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(CfDef::new("ks", "cf"));
    c.initial_keyspaces = vec![ks];
    c
}

/// `sstables` flushes of `rows` rows of 1 KiB each.
fn fill(s: &Storage, sstables: usize, rows: usize) {
    let value = vec![b'x'; 1024];
    for f in 0..sstables {
        for i in 0..rows {
            let mut m = RowMutation::new("ks", format!("key{f}-{i}").into_bytes());
            m.row_mut("cf").cells.push(Cell::live(b"c".to_vec(), value.clone(), 1));
            s.apply(m).unwrap();
        }
        s.flush("ks", "cf").unwrap();
    }
}

#[test]
fn a_running_compaction_is_listed_and_follows_a_new_rate_limit() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    assert_eq!(s.compaction_stats(), (Vec::new(), 0));
    // Four SSTables of about 5 MiB: one compaction due (the minimum threshold is 4), which at
    // 1 MiB/s would take some 20 seconds.
    fill(&s, 4, 5000);
    assert_eq!(s.compaction_stats().1, 1, "one compaction is due");
    assert_eq!(s.compaction_throughput(), 1);

    let compacting = {
        let s = s.clone();
        std::thread::spawn(move || s.major_compact("ks", "cf"))
    };
    let started = Instant::now();
    let running = loop {
        let (running, _) = s.compaction_stats();
        if running.first().is_some_and(|c| c.bytes_done > 0) {
            break running;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no compaction listed");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(running.len(), 1, "{running:?}");
    let c = &running[0];
    assert_eq!((c.kind, c.keyspace.as_str(), c.cf.as_str()), ("Compaction", "ks", "cf"));
    assert!(c.bytes_total > 20_000_000 && c.bytes_done < c.bytes_total, "{c:?}");
    assert_eq!(s.compaction_stats().1, 0, "the SSTables being compacted are not due again");

    // At 1 MiB/s, a second later it has done about 1 MiB more, far from the 20.
    std::thread::sleep(Duration::from_secs(1));
    let done = s.compaction_stats().0.first().map(|c| c.bytes_done).unwrap();
    assert!(done < 4 << 20, "{done} bytes done: the limit is not applied");

    // Unthrottled from now on: it ends long before the 20 seconds.
    s.set_compaction_throughput(0);
    let unthrottled = Instant::now();
    compacting.join().unwrap().unwrap();
    assert!(unthrottled.elapsed() < Duration::from_secs(10), "took {:?} after the limit went", unthrottled.elapsed());
    assert_eq!(s.compaction_stats(), (Vec::new(), 0));
    assert_eq!(s.data_files("ks", "cf").unwrap().len(), 1);
    s.shutdown().unwrap();
}
