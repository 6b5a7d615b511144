//! The requests that only report: the ring and this node (`ring`, `status`, `info`,
//! `describecluster`, `describering`, `gossipinfo`, `getendpoints`, `version`) and the counters
//! (`cfstats`, `tpstats`, `indexstatus`, `netstats`).

use std::fmt::Write;

use admin_protocol::{
    CfStatsResult, DescribeClusterResult, DescribeRingResult, GetEndpointsResult, GossipInfoResult, IndexStatusResult,
    InfoResult, NetStatsResult, RingEntry, RingResult, TpStatsResult, VersionResult,
};

use super::format_bytes;

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
    use admin_protocol::{CfStats, IndexStatus, KeyspaceStats, PoolStats};

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
