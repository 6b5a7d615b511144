//! Human-readable output of `sibyltool`, laid out like Cassandra's nodetool so its users find
//! things where they expect them.

use std::fmt::Write;

use admin_protocol::*;

/// Cassandra's FileUtils.stringifyFileSize: two decimals and a binary unit, or plain bytes.
pub fn format_bytes(n: u64) -> String {
    const KB: f64 = 1024.0;
    let v = n as f64;
    if v >= KB * KB * KB * KB {
        format!("{:.2} TB", v / (KB * KB * KB * KB))
    } else if v >= KB * KB * KB {
        format!("{:.2} GB", v / (KB * KB * KB))
    } else if v >= KB * KB {
        format!("{:.2} MB", v / (KB * KB))
    } else if v >= KB {
        format!("{:.2} KB", v / KB)
    } else {
        format!("{n} bytes")
    }
}

fn percent(fraction: f64) -> String {
    format!("{:.2}%", fraction * 100.0)
}

fn latency(ms: Option<f64>) -> String {
    match ms {
        Some(ms) => format!("{ms:.3} ms."),
        None => "NaN ms.".into(),
    }
}

fn or_na(v: Option<u64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "n/a".into())
}

pub fn ring(r: &RingResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<16}{:<12}{:<8}{:<8}{:<8}{:<16}{:<9}Token",
        "Address", "DC", "Rack", "Status", "State", "Load", "Owns"
    );
    if let Some(last) = r.entries.last() {
        let _ = writeln!(s, "{:<76}{}", "", last.token);
    }
    for e in &r.entries {
        let _ = writeln!(
            s,
            "{:<16}{:<12}{:<8}{:<8}{:<8}{:<16}{:<9}{}",
            e.address,
            e.datacenter,
            e.rack,
            e.status,
            e.state,
            format_bytes(e.load_bytes),
            percent(e.owns),
            e.token
        );
    }
    s
}

/// The two-letter code of `nodetool status`: U/D, then N/L/J/M.
fn status_code(e: &RingEntry) -> String {
    let up = if e.status == "Up" { 'U' } else { 'D' };
    let state = match e.state.as_str() {
        "Leaving" => 'L',
        "Joining" => 'J',
        "Moving" => 'M',
        _ => 'N',
    };
    format!("{up}{state}")
}

/// One line per node: its tokens counted and their ownership summed (the ring lists every
/// token of every node).
pub fn status(r: &RingResult) -> String {
    let mut nodes: Vec<(&RingEntry, usize, f64)> = Vec::new();
    for e in &r.entries {
        match nodes.iter_mut().find(|(n, _, _)| n.address == e.address) {
            Some((_, tokens, owns)) => {
                *tokens += 1;
                *owns += e.owns;
            }
            None => nodes.push((e, 1, e.owns)),
        }
    }
    nodes.sort_by(|a, b| a.0.address.cmp(&b.0.address));
    let mut s = String::new();
    let mut dcs: Vec<&str> = nodes.iter().map(|(e, _, _)| e.datacenter.as_str()).collect();
    dcs.sort_unstable();
    dcs.dedup();
    for dc in dcs {
        let title = format!("Datacenter: {dc}");
        let _ = writeln!(s, "{title}\n{}", "=".repeat(title.len()));
        let _ = writeln!(s, "Status=Up/Down\n|/ State=Normal/Leaving/Joining/Moving");
        let _ =
            writeln!(s, "{:<4}{:<16}{:<12}{:<8}{:<9}{:<38}Rack", "--", "Address", "Load", "Tokens", "Owns", "Host ID");
        for (e, tokens, owns) in nodes.iter().filter(|(e, _, _)| e.datacenter == dc) {
            let _ = writeln!(
                s,
                "{:<4}{:<16}{:<12}{:<8}{:<9}{:<38}{}",
                status_code(e),
                e.address,
                format_bytes(e.load_bytes),
                tokens,
                percent(*owns),
                e.host_id,
                e.rack
            );
        }
    }
    s
}

pub fn info(i: &InfoResult) -> String {
    let mut s = String::new();
    let mut row = |k: &str, v: String| {
        let _ = writeln!(s, "{k:<24}: {v}");
    };
    row("ID", i.host_id.clone());
    row("Gossip active", i.gossip_active.to_string());
    row("Thrift active", i.thrift_active.to_string());
    row("Token", i.token.clone());
    row("Mode", i.mode.clone());
    row("Cluster", i.cluster_name.clone());
    row("Listen address", i.listen_address.clone());
    row("RPC address", i.rpc_address.clone());
    row("Load", format_bytes(i.load_bytes));
    row("Uptime (seconds)", i.uptime_seconds.to_string());
    let memory = match (i.rss_bytes, i.peak_rss_bytes) {
        (Some(rss), Some(peak)) => format!("{} (peak {})", format_bytes(rss), format_bytes(peak)),
        (Some(rss), None) => format_bytes(rss),
        _ => "n/a (no /proc/self/status)".into(),
    };
    row("Memory (resident)", memory);
    row(
        "Memtables",
        format!(
            "{} in {} operations, {} partitions",
            format_bytes(i.memtable_bytes),
            i.memtable_operations,
            i.memtable_partitions
        ),
    );
    let hit_rate = match i.block_cache_requests {
        0 => "NaN".to_string(),
        n => format!("{:.3}", i.block_cache_hits as f64 / n as f64),
    };
    row(
        "Block cache",
        format!(
            "size {}, capacity {}, {} hits, {} requests, {hit_rate} hit rate",
            format_bytes(i.block_cache_bytes),
            format_bytes(i.block_cache_capacity_bytes),
            i.block_cache_hits,
            i.block_cache_requests
        ),
    );
    row("Schema version", i.schema_version.clone());
    row("Data Center", i.datacenter.clone());
    row("Rack", i.rack.clone());
    row("Data directory", i.data_directory.clone());
    row("Release version", i.release_version.clone());
    s
}

/// `nodetool statusthrift` and `statusgossip`: Cassandra's words.
pub fn service_status(s: &ServiceStatus) -> String {
    if s.running { "running\n" } else { "not running\n" }.into()
}

/// `nodetool statushandoff`: Cassandra's words, and a line when the replay is paused (which
/// nodetool does not show).
pub fn handoff_status(h: &HandoffStatus) -> String {
    let mut s = if h.enabled { "Hinted handoff is running\n" } else { "Hinted handoff is not running\n" }.to_string();
    if h.paused {
        s.push_str("Hint delivery is paused (resumehandoff resumes it)\n");
    }
    s
}

/// `truncatehints`: silent when there was nothing, as nodetool is; otherwise what went.
pub fn truncate_hints(t: &TruncateHintsResult) -> String {
    t.deleted.iter().map(|(target, n)| format!("Deleted {n} hint(s) for {target}\n")).collect()
}

pub fn describe_cluster(d: &DescribeClusterResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Cluster Information:");
    let _ = writeln!(s, "\tName: {}", d.name);
    let _ = writeln!(s, "\tSnitch: {}", d.snitch);
    let _ = writeln!(s, "\tPartitioner: {}", d.partitioner);
    let _ = writeln!(s, "\tSchema versions:");
    for (version, nodes) in &d.schema_versions {
        let _ = writeln!(s, "\t\t{version}: [{}]", nodes.join(", "));
    }
    s
}

/// One line per index: `ks.cf.index (column): built` or `building 4096/10000 rows (40%)`.
pub fn index_status(r: &IndexStatusResult) -> String {
    let mut s = String::new();
    if r.indexes.is_empty() {
        s.push_str("No secondary indexes.\n");
    }
    for i in &r.indexes {
        let state = if i.built {
            "built".to_string()
        } else if i.building {
            let pct = (i.rows_done * 100).checked_div(i.rows_total).unwrap_or(0).min(100);
            format!("building {}/{} rows ({pct}%)", i.rows_done, i.rows_total)
        } else {
            "not built".to_string()
        };
        let _ = writeln!(s, "{}.{}.{} ({}): {state}", i.keyspace, i.column_family, i.index, i.column);
    }
    s
}

pub fn cf_stats(r: &CfStatsResult) -> String {
    let mut s = String::new();
    for ks in &r.keyspaces {
        let _ = writeln!(s, "Keyspace: {}", ks.name);
        let _ = writeln!(s, "\tRead Count: {}", ks.read_count);
        let _ = writeln!(s, "\tRead Latency: {}", latency(ks.read_latency_ms));
        let _ = writeln!(s, "\tWrite Count: {}", ks.write_count);
        let _ = writeln!(s, "\tWrite Latency: {}", latency(ks.write_latency_ms));
        for cf in &ks.column_families {
            let _ = writeln!(s, "\t\tColumn Family: {}", cf.name);
            let mut row = |k: &str, v: String| {
                let _ = writeln!(s, "\t\t{k}: {v}");
            };
            row("SSTable count", cf.sstable_count.to_string());
            if !cf.sstables_in_each_level.is_empty() {
                // Cassandra's form: a level over its capacity shows as count/capacity.
                let levels: Vec<String> = cf
                    .sstables_in_each_level
                    .iter()
                    .map(|&(n, max)| if n > max { format!("{n}/{max}") } else { n.to_string() })
                    .collect();
                row("SSTables in each level", format!("[{}]", levels.join(", ")));
            }
            row("Space used (live)", cf.space_used_live.to_string());
            row("Space used (total)", cf.space_used_live.to_string());
            row("Data size (Data components)", cf.data_bytes.to_string());
            row("Number of Keys (estimate)", cf.key_estimate.to_string());
            row("SSTable cells", cf.sstable_cells.to_string());
            row("SSTable tombstones", cf.sstable_tombstones.to_string());
            row("Memtable Columns Count", cf.memtable_operations.to_string());
            row("Memtable Data Size", cf.memtable_bytes.to_string());
            row("Memtable Partitions", cf.memtable_partitions.to_string());
            row("Memtable Switch Count", cf.memtable_switch_count.to_string());
            row("Read Count", cf.read_count.to_string());
            row("Read Latency", latency(cf.read_latency_ms));
            row("Write Count", cf.write_count.to_string());
            row("Write Latency", latency(cf.write_latency_ms));
            row("Compactions", cf.compactions.to_string());
            let ts = |t: Option<i64>| t.map(|t| t.to_string()).unwrap_or_else(|| "n/a".into());
            row("Min timestamp", ts(cf.min_timestamp));
            row("Max timestamp", ts(cf.max_timestamp));
            let _ = writeln!(s);
        }
        let _ = writeln!(s, "----------------");
    }
    s
}

pub fn tp_stats(t: &TpStatsResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:<26}{:>10}{:>10}{:>15}", "Pool Name", "Active", "Pending", "Completed");
    for p in &t.pools {
        let _ = writeln!(s, "{:<26}{:>10}{:>10}{:>15}", p.name, or_na(p.active), or_na(p.pending), p.completed);
    }
    if !t.notes.is_empty() {
        let _ = writeln!(s);
        for n in &t.notes {
            let _ = writeln!(s, "Note: {n}");
        }
    }
    s
}

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

/// The width of a left-aligned column: its longest entry (or title), and two spaces.
fn column_width<T>(title: &str, rows: &[T], of: impl Fn(&T) -> &str) -> usize {
    rows.iter().map(|row| of(row).len()).chain([title.len()]).max().unwrap_or(0) + 2
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

/// As Cassandra 3.11's `nodetool gossipinfo`: `NAME:version:value`, the tokens hidden.
pub fn gossip_info(r: &GossipInfoResult) -> String {
    let mut s = String::new();
    for e in &r.endpoints {
        let _ = writeln!(s, "/{}{}", e.endpoint, if e.alive { "" } else { " (down)" });
        let _ = writeln!(s, "  generation:{}", e.generation);
        let _ = writeln!(s, "  heartbeat:{}", e.heartbeat);
        for state in &e.states {
            let value = if state.name == "TOKENS" { "<hidden>" } else { state.value.as_str() };
            let _ = writeln!(s, "  {}:{}:{}", state.name, state.version, value);
        }
    }
    s
}

/// As Cassandra's `nodetool describering`.
pub fn describe_ring(r: &DescribeRingResult) -> String {
    let mut s = format!("Schema Version:{}\nTokenRange: \n", r.schema_version);
    for range in &r.ranges {
        let details: Vec<String> = range
            .endpoint_details
            .iter()
            .map(|d| format!("EndpointDetails(host:{}, datacenter:{}, rack:{})", d.host, d.datacenter, d.rack))
            .collect();
        let _ = writeln!(
            s,
            "\tTokenRange(start_token:{}, end_token:{}, endpoints:[{}], rpc_endpoints:[{}], endpoint_details:[{}])",
            range.start_token,
            range.end_token,
            range.endpoints.join(", "),
            range.rpc_endpoints.join(", "),
            details.join(", ")
        );
    }
    s
}

pub fn rebuild_index(r: &RebuildIndexResult) -> String {
    if r.rebuilt.is_empty() {
        return format!("{} has no secondary index\n", r.column_family);
    }
    format!("Rebuilding {} of {} (sibyltool indexstatus follows it)\n", r.rebuilt.join(", "), r.column_family)
}

pub fn stream_throughput(r: &StreamThroughputResult) -> String {
    if r.megabits_per_sec == 0 {
        "Current stream throughput: unthrottled\n".into()
    } else {
        format!("Current stream throughput: {} Mb/s\n", r.megabits_per_sec)
    }
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

pub fn remove_node(r: &RemoveNodeResult) -> String {
    let mut s = format!("Removed {}: {} range transfers, {} partitions restored", r.removed, r.transfers, r.partitions);
    if r.lost_ranges > 0 {
        let _ = write!(s, "; {} ranges had no other replica and their data is lost", r.lost_ranges);
    }
    s.push_str(".\n");
    s
}

pub fn moved(m: &MoveResult) -> String {
    format!(
        "Moved from token {} to {}: {} range transfers, {} partitions moved. {}\n",
        m.from_token, m.token, m.transfers, m.partitions, m.effect
    )
}

pub fn decommission(d: &DecommissionResult) -> String {
    let mut s = format!("Decommissioned: {} range transfers, {} partitions sent", d.transfers, d.partitions);
    if d.hints_delivered + d.hints_handed_over > 0 {
        let _ = write!(s, "; {} hints replayed, {} handed over", d.hints_delivered, d.hints_handed_over);
    }
    let _ = writeln!(s, ". {}", d.effect);
    s
}

pub fn drain(d: &DrainResult) -> String {
    if d.already_drained {
        format!("Already drained. {}\n", d.effect)
    } else {
        format!("Drained: flushed {} column families. {}\n", d.flushed.len(), d.effect)
    }
}

pub fn net_stats(n: &NetStatsResult) -> String {
    let mut s = format!("Mode: {}\n", n.mode);
    if n.sending.is_empty() {
        s.push_str("Not sending any streams.\n");
    } else {
        for x in &n.sending {
            let _ = writeln!(s, "Sending: {x}");
        }
    }
    if n.receiving.is_empty() {
        s.push_str("Not receiving any streams.\n");
    } else {
        for x in &n.receiving {
            let _ = writeln!(s, "Receiving: {x}");
        }
    }
    s
}

pub fn get_endpoints(g: &GetEndpointsResult) -> String {
    let mut s = String::new();
    for e in &g.endpoints {
        let _ = writeln!(s, "{e}");
    }
    s
}

pub fn version(v: &VersionResult) -> String {
    format!(
        "ReleaseVersion: {}\nThrift API: {}\nAdmin protocol: {}\n",
        v.release_version, v.thrift_api_version, v.protocol_version
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_status_shows_built_and_building_with_percent() {
        let index = |name: &str, built, building, done, total| IndexStatus {
            keyspace: "music".into(),
            column_family: "users".into(),
            index: name.into(),
            column: "user_name".into(),
            built,
            building,
            rows_done: done,
            rows_total: total,
        };
        let r = IndexStatusResult {
            indexes: vec![
                index("a_idx", true, false, 10, 10),
                index("b_idx", false, true, 2500, 10_000),
                index("c_idx", false, true, 0, 0),
                index("d_idx", false, false, 0, 0),
            ],
        };
        assert_eq!(
            index_status(&r),
            "music.users.a_idx (user_name): built\n\
             music.users.b_idx (user_name): building 2500/10000 rows (25%)\n\
             music.users.c_idx (user_name): building 0/0 rows (0%)\n\
             music.users.d_idx (user_name): not built\n"
        );
        assert_eq!(index_status(&IndexStatusResult { indexes: vec![] }), "No secondary indexes.\n");
    }

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

    fn entry() -> RingEntry {
        RingEntry {
            address: "127.0.0.1".into(),
            datacenter: "datacenter1".into(),
            rack: "rack1".into(),
            status: "Up".into(),
            state: "Normal".into(),
            load_bytes: 2048,
            owns: 1.0,
            token: "1234".into(),
            host_id: "0f1e2d3c-0000-3000-8000-000000000000".into(),
        }
    }

    #[test]
    fn sizes_use_cassandra_units() {
        assert_eq!(format_bytes(0), "0 bytes");
        assert_eq!(format_bytes(1023), "1023 bytes");
        assert_eq!(format_bytes(1024), "1.00 KB");
        assert_eq!(format_bytes(1536), "1.50 KB");
        assert_eq!(format_bytes(5 << 20), "5.00 MB");
        assert_eq!(format_bytes(3 << 30), "3.00 GB");
        assert_eq!(format_bytes(2 << 40), "2.00 TB");
    }

    #[test]
    fn status_shows_up_normal_with_ownership() {
        let r = RingResult { partitioner: "p".into(), entries: vec![entry()] };
        let out = status(&r);
        assert!(out.starts_with("Datacenter: datacenter1\n=======================\n"), "{out}");
        let node = out.lines().last().expect("a node line");
        let fields: Vec<&str> = node.split_whitespace().collect();
        assert_eq!(
            fields,
            ["UN", "127.0.0.1", "2.00", "KB", "1", "100.00%", "0f1e2d3c-0000-3000-8000-000000000000", "rack1"]
        );
        let mut down = entry();
        down.status = "Down".into();
        down.state = "Leaving".into();
        assert_eq!(status_code(&down), "DL");
    }

    #[test]
    fn ring_lists_token_and_ownership() {
        let out = ring(&RingResult { partitioner: "p".into(), entries: vec![entry()] });
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(lines[1].trim(), "1234");
        let fields: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(fields, ["127.0.0.1", "datacenter1", "rack1", "Up", "Normal", "2.00", "KB", "100.00%", "1234"]);
    }

    #[test]
    fn cfstats_shows_nan_before_the_first_read() {
        let cf = CfStats {
            name: "Standard1".into(),
            sstable_count: 1,
            space_used_live: 500,
            data_bytes: 300,
            key_estimate: 3,
            sstable_cells: 6,
            sstable_tombstones: 0,
            memtable_operations: 0,
            memtable_bytes: 0,
            memtable_partitions: 0,
            memtable_switch_count: 1,
            read_count: 0,
            read_latency_ms: None,
            write_count: 3,
            write_latency_ms: Some(0.25),
            compactions: 0,
            min_timestamp: Some(1),
            max_timestamp: None,
            sstables_in_each_level: Vec::new(),
        };
        let r = CfStatsResult {
            keyspaces: vec![KeyspaceStats {
                name: "Keyspace1".into(),
                read_count: 0,
                read_latency_ms: None,
                write_count: 3,
                write_latency_ms: Some(0.25),
                column_families: vec![cf],
            }],
        };
        let out = cf_stats(&r);
        assert!(out.contains("Keyspace: Keyspace1\n\tRead Count: 0\n\tRead Latency: NaN ms.\n"), "{out}");
        assert!(out.contains("\t\tColumn Family: Standard1\n\t\tSSTable count: 1\n"), "{out}");
        assert!(out.contains("\t\tWrite Latency: 0.250 ms.\n"), "{out}");
        assert!(out.contains("\t\tMax timestamp: n/a\n"), "{out}");
    }

    #[test]
    fn handoff_status_in_cassandras_words() {
        let h = |enabled, paused| handoff_status(&HandoffStatus { enabled, paused, changed: false });
        assert_eq!(h(true, false), "Hinted handoff is running\n");
        assert_eq!(h(false, false), "Hinted handoff is not running\n");
        assert_eq!(h(true, true), "Hinted handoff is running\nHint delivery is paused (resumehandoff resumes it)\n");
        assert_eq!(truncate_hints(&TruncateHintsResult { deleted: vec![] }), "");
        let t = TruncateHintsResult { deleted: vec![("127.0.0.2:7000".into(), 12)] };
        assert_eq!(truncate_hints(&t), "Deleted 12 hint(s) for 127.0.0.2:7000\n");
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

    #[test]
    fn service_status_in_cassandras_words() {
        assert_eq!(service_status(&ServiceStatus { running: true, changed: false }), "running\n");
        assert_eq!(service_status(&ServiceStatus { running: false, changed: true }), "not running\n");
    }

    #[test]
    fn info_says_whether_gossip_and_thrift_are_active() {
        let i = InfoResult {
            host_id: "h".into(),
            token: "0".into(),
            mode: "NORMAL".into(),
            gossip_active: false,
            thrift_active: true,
            cluster_name: "c".into(),
            listen_address: "127.0.0.1".into(),
            rpc_address: "127.0.0.1".into(),
            uptime_seconds: 1,
            load_bytes: 0,
            schema_version: "v".into(),
            rss_bytes: None,
            peak_rss_bytes: None,
            memtable_bytes: 0,
            memtable_operations: 0,
            memtable_partitions: 0,
            block_cache_bytes: 0,
            block_cache_capacity_bytes: 0,
            block_cache_hits: 0,
            block_cache_requests: 0,
            datacenter: "dc".into(),
            rack: "r".into(),
            data_directory: "/d".into(),
            release_version: "0.1.0".into(),
        };
        let out = info(&i);
        assert!(out.contains("\nGossip active           : false\n"), "{out}");
        assert!(out.contains("\nThrift active           : true\n"), "{out}");
    }

    #[test]
    fn netstats_without_streams() {
        let out = net_stats(&NetStatsResult { mode: "NORMAL".into(), sending: vec![], receiving: vec![] });
        assert_eq!(out, "Mode: NORMAL\nNot sending any streams.\nNot receiving any streams.\n");
    }

    #[test]
    fn tpstats_marks_untracked_numbers() {
        let t = TpStatsResult {
            pools: vec![PoolStats { name: "ReadStage".into(), active: None, pending: Some(0), completed: 7 }],
            notes: vec!["x".into()],
        };
        let out = tp_stats(&t);
        let fields: Vec<&str> = out.lines().nth(1).expect("pool line").split_whitespace().collect();
        assert_eq!(fields, ["ReadStage", "n/a", "0", "7"]);
        assert!(out.ends_with("Note: x\n"));
    }
}
