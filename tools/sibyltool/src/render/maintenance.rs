//! The work an operator has a node do on its data: `flush` and `compact`, `cleanup`, `drain`,
//! `repair`, snapshots, `scrub`, `import`, `rebuild_index`; compaction's statistics and
//! thresholds, `getsstables`; and the throughput limits of compaction and streaming.

use std::fmt::Write;

use admin_protocol::{
    CleanupResult, ClearSnapshotResult, CompactionStatsResult, CompactionThresholdResult, CompactionThroughputResult,
    DrainResult, GetSsTablesResult, ImportResult, ListSnapshotsResult, RebuildIndexResult, RepairResult, ScrubResult,
    SnapshotResult, StreamThroughputResult, WorkResult,
};

use super::{column_width, format_bytes};

/// Flush: one line per column family flushed. Compact: SSTables and bytes before and after.
pub fn work(r: &WorkResult, compact: bool) -> String {
    let mut s = String::new();
    for cf in &r.column_families {
        if compact {
            let _ = writeln!(
                s,
                "{}: {} SSTables ({}) -> {} ({})",
                cf.name,
                cf.sstables_before,
                format_bytes(cf.bytes_before),
                cf.sstables_after,
                format_bytes(cf.bytes_after)
            );
        } else {
            let added = cf.sstables_after.saturating_sub(cf.sstables_before);
            let what = if added == 0 { "memtable was empty".to_string() } else { format!("{added} new SSTable") };
            let _ = writeln!(s, "{}: {what}, {} SSTables", cf.name, cf.sstables_after);
        }
    }
    s
}

pub fn cleanup(c: &CleanupResult) -> String {
    let mut s = String::new();
    for ks in &c.keyspaces {
        let _ = writeln!(s, "{}: {} ({} removed)", ks.keyspace, ks.reason, format_bytes(ks.removed_bytes));
    }
    s
}

pub fn drain(d: &DrainResult) -> String {
    if d.already_drained {
        format!("Already drained. {}\n", d.effect)
    } else {
        format!("Drained: flushed {} column families. {}\n", d.flushed.len(), d.effect)
    }
}

pub fn repair(r: &RepairResult) -> String {
    let mut s = String::new();
    for cf in &r.column_families {
        if cf.ranges == 0 {
            let _ = writeln!(s, "{}: nothing to repair (no range of it has another replica)", cf.name);
            continue;
        }
        let ranges = if cf.ranges == 1 { "range" } else { "ranges" };
        let _ = writeln!(
            s,
            "{}: {} {ranges}, {} partitions compared, {} sub-ranges differed, {} written to replicas that were behind",
            cf.name, cf.ranges, cf.partitions, cf.mismatched, cf.writes
        );
    }
    s
}

pub fn snapshot(r: &SnapshotResult) -> String {
    let files: u64 = r.column_families.iter().map(|c| c.files).sum();
    let bytes: u64 = r.column_families.iter().map(|c| c.bytes).sum();
    format!(
        "Snapshot directory: {} ({} column families, {} files, {})\n",
        r.tag,
        r.column_families.len(),
        files,
        format_bytes(bytes)
    )
}

pub fn clear_snapshot(r: &ClearSnapshotResult) -> String {
    let mut s = format!("Removed {} snapshot directories\n", r.removed.len());
    for dir in &r.removed {
        let _ = writeln!(s, "  {dir}");
    }
    s
}

pub fn list_snapshots(r: &ListSnapshotsResult) -> String {
    if r.snapshots.is_empty() {
        return "There are no snapshots\n".into();
    }
    // AutoSnapshot's tags are long: every column fits its longest entry.
    let (tag, ks, cf) = (
        column_width("Snapshot name", &r.snapshots, |c| &c.tag),
        column_width("Keyspace", &r.snapshots, |c| &c.keyspace),
        column_width("Column family", &r.snapshots, |c| &c.column_family),
    );
    let mut s = format!("{:<tag$}{:<ks$}{:<cf$}{:>6}  Size\n", "Snapshot name", "Keyspace", "Column family", "Files");
    for c in &r.snapshots {
        let _ = writeln!(
            s,
            "{:<tag$}{:<ks$}{:<cf$}{:>6}  {}",
            c.tag,
            c.keyspace,
            c.column_family,
            c.files,
            format_bytes(c.bytes)
        );
    }
    s
}

pub fn scrub(r: &ScrubResult) -> String {
    let mut s = String::new();
    for cf in &r.column_families {
        let _ = write!(
            s,
            "{}: {} SSTables checked, {} rewritten, {} partitions kept",
            cf.name, cf.checked, cf.rewritten, cf.partitions
        );
        if cf.lost == 0 {
            s.push('\n');
            continue;
        }
        let _ = writeln!(s, ", {} lost (run repair to restore them from the other replicas):", cf.lost);
        for key in &cf.lost_keys {
            let _ = writeln!(s, "  {key}");
        }
        if cf.lost > cf.lost_keys.len() as u64 {
            let _ = writeln!(s, "  ... and {} more", cf.lost - cf.lost_keys.len() as u64);
        }
    }
    s
}

pub fn import(r: &ImportResult) -> String {
    let mut s = format!(
        "Imported {} SSTables into {}.{} ({} partitions, {})\n",
        r.files.len(),
        r.keyspace,
        r.column_family,
        r.partitions,
        format_bytes(r.bytes)
    );
    for file in &r.files {
        let _ = writeln!(s, "  {file}");
    }
    s
}

pub fn rebuild_index(r: &RebuildIndexResult) -> String {
    if r.rebuilt.is_empty() {
        return format!("{} has no secondary index\n", r.column_family);
    }
    format!("Rebuilding {} of {} (sibyltool indexstatus follows it)\n", r.rebuilt.join(", "), r.column_family)
}

pub fn compaction_stats(r: &CompactionStatsResult) -> String {
    let mut s = format!("pending tasks: {}\n", r.pending_tasks);
    if r.compactions.is_empty() {
        return s;
    }
    let (kind, ks, cf) = (
        column_width("compaction type", &r.compactions, |c| &c.kind),
        column_width("keyspace", &r.compactions, |c| &c.keyspace),
        column_width("column family", &r.compactions, |c| &c.column_family),
    );
    let _ = writeln!(
        s,
        "{:<kind$}{:<ks$}{:<cf$}{:>16}{:>16}{:>10}",
        "compaction type", "keyspace", "column family", "bytes compacted", "bytes total", "progress"
    );
    let mut remaining = 0u64;
    for c in &r.compactions {
        let percent = if c.bytes_total == 0 { 100.0 } else { c.bytes_done as f64 * 100.0 / c.bytes_total as f64 };
        let _ = writeln!(
            s,
            "{:<kind$}{:<ks$}{:<cf$}{:>16}{:>16}{:>9.2}%",
            c.kind, c.keyspace, c.column_family, c.bytes_done, c.bytes_total, percent
        );
        remaining += c.bytes_total.saturating_sub(c.bytes_done);
    }
    // As nodetool estimates it: what is left at the configured rate.
    let left = if r.throughput_mb_per_sec == 0 {
        "unknown (unthrottled)".to_string()
    } else {
        let secs = remaining / (u64::from(r.throughput_mb_per_sec) << 20);
        format!("{}h{:02}m{:02}s", secs / 3600, secs / 60 % 60, secs % 60)
    };
    let _ = writeln!(s, "Active compaction remaining time : {left}");
    s
}

pub fn compaction_throughput(r: &CompactionThroughputResult) -> String {
    if r.mb_per_sec == 0 {
        "Current compaction throughput: unthrottled\n".into()
    } else {
        format!("Current compaction throughput: {} MB/s\n", r.mb_per_sec)
    }
}

/// Cassandra's `nodetool getcompactionthreshold`, word for word (two spaces before `max`
/// included).
pub fn compaction_threshold(r: &CompactionThresholdResult) -> String {
    format!(
        "Current compaction thresholds for {}/{}: \n min = {},  max = {}\n",
        r.keyspace, r.column_family, r.min, r.max
    )
}

/// Cassandra's `nodetool getsstables`: one Data file per line.
pub fn get_sstables(r: &GetSsTablesResult) -> String {
    r.files.iter().map(|f| format!("{f}\n")).collect()
}

pub fn stream_throughput(r: &StreamThroughputResult) -> String {
    if r.megabits_per_sec == 0 {
        "Current stream throughput: unthrottled\n".into()
    } else {
        format!("Current stream throughput: {} Mb/s\n", r.megabits_per_sec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use admin_protocol::ActiveCompaction;

    #[test]
    fn compaction_stats_show_progress_and_the_time_left_at_the_rate_limit() {
        let running = |kind: &str, done, total| ActiveCompaction {
            kind: kind.into(),
            keyspace: "music".into(),
            column_family: "songs".into(),
            bytes_done: done,
            bytes_total: total,
        };
        let r = CompactionStatsResult {
            pending_tasks: 2,
            compactions: vec![running("Compaction", 1 << 20, 4 << 20), running("Scrub", 0, 0)],
            throughput_mb_per_sec: 1,
        };
        let text = compaction_stats(&r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "pending tasks: 2");
        assert!(lines[1].starts_with("compaction type  keyspace  column family") && lines[1].ends_with("progress"));
        assert!(lines[2].starts_with("Compaction       music     songs") && lines[2].ends_with("25.00%"), "{text}");
        assert!(lines[3].ends_with("100.00%"), "{text}");
        assert_eq!(lines[4], "Active compaction remaining time : 0h00m03s");
        let idle = CompactionStatsResult { pending_tasks: 0, compactions: vec![], throughput_mb_per_sec: 0 };
        assert_eq!(compaction_stats(&idle), "pending tasks: 0\n");
    }

    #[test]
    fn compaction_thresholds_and_sstables_in_cassandras_words() {
        let r = CompactionThresholdResult {
            keyspace: "Keyspace1".into(),
            column_family: "Standard1".into(),
            min: 4,
            max: 32,
        };
        assert_eq!(
            compaction_threshold(&r),
            "Current compaction thresholds for Keyspace1/Standard1: \n min = 4,  max = 32\n"
        );
        let files = vec!["/d/ks/cf-1/ks-cf-a-1-Data.db".to_string(), "/d/ks/cf-1/ks-cf-a-3-Data.db".to_string()];
        assert_eq!(
            get_sstables(&GetSsTablesResult { files }),
            "/d/ks/cf-1/ks-cf-a-1-Data.db\n/d/ks/cf-1/ks-cf-a-3-Data.db\n"
        );
        assert_eq!(get_sstables(&GetSsTablesResult { files: vec![] }), "");
    }
}
