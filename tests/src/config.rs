//! What goes into a test node's `storage-conf.xml`, and the free ports it listens on.

use std::collections::hash_map::RandomState;
use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hasher};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::Mutex;

use crate::{BYTE_ORDERED_PARTITIONER, RANDOM_PARTITIONER};

/// What goes into a test node's `storage-conf.xml`. Paths and ports are filled in by [`crate::Node`].
#[derive(Clone, Debug)]
pub struct Config {
    pub cluster_name: String,
    /// Fully qualified partitioner class.
    pub partitioner: String,
    /// The contents of `<Keyspaces>` (0.6 `<Keyspace>` elements); empty for none.
    pub keyspaces_xml: String,
    /// More node-level elements, verbatim (e.g. `<ThriftMaxMessageLengthInMB>1</ThriftMaxMessageLengthInMB>`).
    pub extra_xml: String,
    pub commit_log_sync_period_ms: u32,
    /// The node's address (ListenAddress, ThriftAddress, AdminAddress); default 127.0.0.1.
    pub ip: [u8; 4],
    /// `<Seed>` entries; empty means this node alone (its own storage endpoint).
    pub seeds: Vec<String>,
    /// `InitialToken`, empty for none.
    pub initial_token: String,
    /// `AutoBootstrap`: a non-seed node's first start fetches its ranges' data.
    pub auto_bootstrap: bool,
    /// The network namespace the process runs in (`ip netns exec`), for partition tests (see
    /// [`netns::Network`]); `None`: this machine's own network.
    pub netns: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cluster_name: "Sibyl E2E".into(),
            partitioner: RANDOM_PARTITIONER.into(),
            keyspaces_xml: String::new(),
            extra_xml: String::new(),
            commit_log_sync_period_ms: 1000,
            ip: [127, 0, 0, 1],
            seeds: Vec::new(),
            initial_token: String::new(),
            auto_bootstrap: false,
            netns: None,
        }
    }
}

impl Config {
    /// RandomPartitioner, no keyspaces.
    pub fn random() -> Config {
        Config::default()
    }

    /// ByteOrderedPartitioner (keys sort bytewise, tokens are the keys in hex), no keyspaces.
    pub fn ordered() -> Config {
        Config { partitioner: BYTE_ORDERED_PARTITIONER.into(), ..Config::default() }
    }

    pub fn keyspaces(mut self, xml: impl Into<String>) -> Config {
        self.keyspaces_xml = xml.into();
        self
    }

    pub fn extra(mut self, xml: impl Into<String>) -> Config {
        self.extra_xml.push_str(&xml.into());
        self
    }

    pub fn cluster_name(mut self, name: impl Into<String>) -> Config {
        self.cluster_name = name.into();
        self
    }

    pub fn partitioner(mut self, class: impl Into<String>) -> Config {
        self.partitioner = class.into();
        self
    }

    /// The address as a string (`127.0.0.K`).
    pub fn address(&self) -> String {
        let [a, b, c, d] = self.ip;
        format!("{a}.{b}.{c}.{d}")
    }

    /// The whole file for a node rooted at `dir`.
    pub fn render(&self, dir: &Path, thrift_port: u16, storage_port: u16, admin_port: u16, native_port: u16) -> String {
        let address = self.address();
        let seeds = if self.seeds.is_empty() {
            format!("    <Seed>{address}:{storage_port}</Seed>")
        } else {
            self.seeds.iter().map(|s| format!("    <Seed>{s}</Seed>")).collect::<Vec<_>>().join("\n")
        };
        // The wait for gossip to settle before serving: none for a node alone (nothing to
        // learn), short for a cluster node (a test's gossip on loopback settles in a round or
        // two), unless the test sets its own.
        let settle = if self.extra_xml.contains("GossipToSettle") || self.extra_xml.contains("GossipSettle") {
            ""
        } else if self.seeds.is_empty() {
            "  <SkipWaitForGossipToSettle>0</SkipWaitForGossipToSettle>"
        } else {
            "  <GossipSettleMinWaitInMillis>1000</GossipSettleMinWaitInMillis>\n  \
             <GossipSettlePollIntervalInMillis>500</GossipSettlePollIntervalInMillis>"
        };
        let keyspaces = if self.keyspaces_xml.trim().is_empty() {
            "  <Keyspaces/>".to_string()
        } else {
            format!("  <Keyspaces>\n{}\n  </Keyspaces>", self.keyspaces_xml)
        };
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<Storage>
  <ClusterName>{cluster}</ClusterName>
  <AutoBootstrap>{auto_bootstrap}</AutoBootstrap>
  <Partitioner>{partitioner}</Partitioner>
  <InitialToken>{initial_token}</InitialToken>
  <CommitLogDirectory>{dir}/commitlog</CommitLogDirectory>
  <DataFileDirectories>
    <DataFileDirectory>{dir}/data</DataFileDirectory>
  </DataFileDirectories>
  <SavedCachesDirectory>{dir}/saved_caches</SavedCachesDirectory>
  <Seeds>
{seeds}
  </Seeds>
  <ListenAddress>{address}</ListenAddress>
  <StoragePort>{storage_port}</StoragePort>
  <ThriftAddress>{address}</ThriftAddress>
  <ThriftPort>{thrift_port}</ThriftPort>
  <AdminAddress>{address}</AdminAddress>
  <AdminPort>{admin_port}</AdminPort>
{native}
  <CommitLogSync>periodic</CommitLogSync>
  <CommitLogSyncPeriodInMS>{sync}</CommitLogSyncPeriodInMS>
{settle}
{extra}
{keyspaces}
</Storage>
"#,
            cluster = xml_escape(&self.cluster_name),
            partitioner = self.partitioner,
            dir = xml_escape(&dir.display().to_string()),
            sync = self.commit_log_sync_period_ms,
            extra = self.extra_xml,
            // A port of its own per node, unless the test sets it.
            native = if self.extra_xml.contains("NativeTransportPort") {
                String::new()
            } else {
                format!("  <NativeTransportPort>{native_port}</NativeTransportPort>")
            },
            initial_token = xml_escape(&self.initial_token),
            auto_bootstrap = self.auto_bootstrap,
        )
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A 0.6-style keyspace declaration (RackUnawareStrategy, RF 1) holding `column_families`
/// (complete `<ColumnFamily .../>` elements).
pub fn keyspace_xml(name: &str, column_families: &[&str]) -> String {
    let mut s = format!("    <Keyspace Name=\"{name}\">\n");
    for cf in column_families {
        s.push_str("      ");
        s.push_str(cf);
        s.push('\n');
    }
    s.push_str(
        "      <ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy>\n\
         \x20     <ReplicationFactor>1</ReplicationFactor>\n\
         \x20     <EndPointSnitch>org.apache.cassandra.locator.EndPointSnitch</EndPointSnitch>\n    </Keyspace>",
    );
    s
}

/// A port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> u16 {
    free_port_on([127, 0, 0, 1])
}

/// A port that was free a moment ago on `ip`, and that this process has not handed out before.
///
/// Ports come from below the kernel's ephemeral range. Every outbound connection takes a port
/// from that range, and a node's own internode connections are bound to its address before it
/// has bound its listeners: a port picked from that range could be taken by the node itself
/// before it listens there, and the node would then fail to start.
pub fn free_port_on(ip: [u8; 4]) -> u16 {
    static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    let (low, high) = listening_port_range();
    let span = u32::from(high - low);
    let start = RandomState::new().build_hasher().finish() as u32 % span;
    for step in 0..span {
        let port = low + ((start + step) % span) as u16;
        let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
        if handed_out.contains(&port) || TcpListener::bind(SocketAddr::from((ip, port))).is_err() {
            continue;
        }
        handed_out.insert(port);
        return port;
    }
    panic!("no free port on {ip:?} in {low}..{high}");
}

/// The ports tests listen on: from 10000 up to the start of the ephemeral range
/// (`/proc/sys/net/ipv4/ip_local_port_range`, 32768 by default).
fn listening_port_range() -> (u16, u16) {
    const LOW: u16 = 10_000;
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    assert!(ephemeral_low > LOW + 1000, "the ephemeral port range starts at {ephemeral_low}: too low for the tests");
    (LOW, ephemeral_low)
}
