//! Human-readable output of `sibyltool`, laid out like Cassandra's nodetool so its users find
//! things where they expect them.
//!
//! One module per kind of operation, as the admin protocol is split: `statistics`,
//! `maintenance`, `topology` and `toggles`; the helpers they share are here.

mod maintenance;
mod statistics;
mod toggles;
mod topology;

pub use maintenance::{
    cleanup, clear_snapshot, compaction_stats, compaction_threshold, compaction_throughput, drain, get_sstables,
    import, list_snapshots, rebuild_index, repair, scrub, snapshot, stream_throughput, work,
};
pub use statistics::{
    cf_stats, describe_cluster, describe_ring, get_endpoints, gossip_info, index_status, info, net_stats, ring, status,
    tp_stats, version,
};
pub use toggles::{handoff_status, service_status, truncate_hints};
pub use topology::{decommission, moved, remove_node};

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

/// The width of a left-aligned column: its longest entry (or title), and two spaces.
fn column_width<T>(title: &str, rows: &[T], of: impl Fn(&T) -> &str) -> usize {
    rows.iter().map(|row| of(row).len()).chain([title.len()]).max().unwrap_or(0) + 2
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
