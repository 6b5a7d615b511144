//! Tests of what lets several nodes run side by side: addresses, seeds, tokens and the
//! cluster settings with their defaults.

use std::io;
use std::net::SocketAddr;

use super::endpoints::Resolve;
use super::tests::{doc, err, ok};
use super::*;

fn sa(s: &str) -> SocketAddr {
    s.parse().expect("test address")
}

/// A resolver that knows a few names and nothing else, so no test waits on DNS, on a machine
/// named `local` (`None`: a host name that cannot be read).
struct Table {
    hosts: &'static [(&'static str, &'static str)],
    local: Option<&'static str>,
}

impl Resolve for Table {
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        let ips = self.hosts.iter().filter(|(h, _)| *h == host).map(|(_, ip)| SocketAddr::new(sa(ip).ip(), port));
        let found: Vec<SocketAddr> = ips.collect();
        if found.is_empty() {
            return Err(io::Error::new(io::ErrorKind::NotFound, "no such host"));
        }
        Ok(found)
    }

    fn local_host_name(&self) -> io::Result<String> {
        self.local.map(str::to_string).ok_or_else(|| io::Error::other("no host name"))
    }
}

const HOSTS: Table = Table {
    hosts: &[
        ("seed-a", "10.0.0.1:0"),
        ("dual", "[fd00::9]:0"),
        ("dual", "10.0.0.9:0"),
        ("this-machine", "127.0.0.1:0"),
        ("node7", "[fd00::7]:0"),
        ("node7", "10.0.0.7:0"),
        ("wildcard", "0.0.0.0:0"),
    ],
    local: Some("this-machine"),
};

fn ok_with(xml: &str) -> Config {
    match parse_with(xml, "test", &HOSTS) {
        Ok(c) => c,
        Err(e) => panic!("expected success, got: {e}\n{xml}"),
    }
}

fn err_with(xml: &str) -> ConfigError {
    match parse_with(xml, "test", &HOSTS) {
        Ok(_) => panic!("expected an error for\n{xml}"),
        Err(e) => e,
    }
}

fn with_seeds(seeds: &[&str], extra: &str) -> String {
    let list: String = seeds.iter().map(|s| format!("<Seed>{s}</Seed>\n")).collect();
    doc(extra, "").replace("<Seed>127.0.0.1</Seed>", &list)
}

#[test]
fn admin_interface_listens_on_the_listen_address_by_default() {
    // Three nodes of one machine, configured alike except for their addresses: each admin
    // interface gets its own address, so they no longer collide on 127.0.0.1:7199.
    let admins: Vec<(String, u16)> = ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
        .iter()
        .map(|a| ok(&doc(&format!("<ListenAddress>{a}</ListenAddress><ThriftAddress>{a}</ThriftAddress>"), "")))
        .map(|c| (c.admin_address, c.admin_port))
        .collect();
    assert_eq!(
        admins,
        [("127.0.0.1".to_string(), 7199), ("127.0.0.2".to_string(), 7199), ("127.0.0.3".to_string(), 7199)]
    );
    // A host name is kept as written; AdminAddress still overrides.
    let c = ok(&doc("<ListenAddress>localhost</ListenAddress>", ""));
    assert_eq!(c.admin_address, "localhost");
    let c = ok(&doc("<ListenAddress>127.0.0.2</ListenAddress><AdminAddress>127.0.0.9</AdminAddress>", ""));
    assert_eq!((c.admin_address.as_str(), c.listen_address.as_str()), ("127.0.0.9", "127.0.0.2"));
    // Without ListenAddress both default to 127.0.0.1.
    assert_eq!(ok(&doc("", "")).admin_address, "127.0.0.1");
}

#[test]
fn listen_endpoint_is_listen_address_at_storage_port() {
    assert_eq!(ok(&doc("", "")).listen_endpoint, sa("127.0.0.1:7000"));
    let c = ok(&doc("<ListenAddress>127.0.0.2</ListenAddress><StoragePort>7100</StoragePort>", ""));
    assert_eq!(c.listen_endpoint, sa("127.0.0.2:7100"));
    assert_eq!(ok(&doc("<ListenAddress>::1</ListenAddress>", "")).listen_endpoint, sa("[::1]:7000"));
    assert_eq!(ok(&doc("<ListenAddress>[::1]</ListenAddress>", "")).listen_endpoint, sa("[::1]:7000"));
    // Host names are resolved once, IPv4 first; the text stays as written.
    let c = ok_with(&doc("<ListenAddress>dual</ListenAddress>", ""));
    assert_eq!((c.listen_address.as_str(), c.listen_endpoint), ("dual", sa("10.0.0.9:7000")));
}

#[test]
fn listen_address_localhost_resolves_with_the_system_resolver() {
    // /etc/hosts maps localhost on every system these tests run on; the IPv4 entry wins.
    let c = ok(&doc("<ListenAddress>localhost</ListenAddress>", ""));
    assert_eq!(c.listen_endpoint, sa("127.0.0.1:7000"));
}

#[test]
fn a_blank_listen_address_is_the_address_of_the_machines_host_name() {
    let node7 = Table { local: Some("node7"), ..HOSTS };
    for blank in ["", "<ListenAddress></ListenAddress>", "<ListenAddress> </ListenAddress><ThriftAddress/>"] {
        let c = parse_with(&doc(blank, ""), "test", &node7).expect("loads");
        // As 0.6's InetAddress.getLocalHost(): the host name's address, IPv4 first, written as
        // an address so Thrift and the admin interface bind (and gossip announces) just that.
        assert_eq!((c.listen_address.as_str(), c.listen_endpoint), ("10.0.0.7", sa("10.0.0.7:7000")), "{blank}");
        assert_eq!((c.thrift_address.as_str(), c.admin_address.as_str()), ("10.0.0.7", "10.0.0.7"), "{blank}");
        assert!(c.warnings.is_empty(), "{blank}: {:?}", c.warnings);
    }
    let c = parse_with(&doc("<ThriftAddress>0.0.0.0</ThriftAddress>", ""), "test", &node7).expect("loads");
    assert_eq!((c.listen_address.as_str(), c.thrift_address.as_str()), ("10.0.0.7", "0.0.0.0"));
    // An explicit address needs no host name.
    let nameless = Table { local: None, ..HOSTS };
    let c = parse_with(&doc("<ListenAddress>127.0.0.2</ListenAddress>", ""), "test", &nameless).expect("loads");
    assert_eq!((c.listen_address.as_str(), c.thrift_address.as_str()), ("127.0.0.2", "127.0.0.2"));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn a_machine_without_an_address_listens_on_loopback_with_a_warning() {
    for (machine, why) in [
        (Table { local: None, ..HOSTS }, "the host name cannot be read"),
        (Table { local: Some("ghost"), ..HOSTS }, "host name \"ghost\" does not resolve"),
        (Table { local: Some("wildcard"), ..HOSTS }, "resolves to 0.0.0.0"),
    ] {
        let c = parse_with(&doc("", ""), "test", &machine).expect("loads");
        assert_eq!((c.listen_address.as_str(), c.listen_endpoint), ("127.0.0.1", sa("127.0.0.1:7000")));
        assert_eq!(c.thrift_address, "127.0.0.1");
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        let w = &c.warnings[0];
        assert!(w.starts_with("<ListenAddress> is not set") && w.contains(why), "{w}");
        assert!(w.contains("using 127.0.0.1 for <ListenAddress> and <ThriftAddress>"), "{w}");
    }
    let ghost = Table { local: Some("ghost"), ..HOSTS };
    let c = parse_with(
        &doc("<ListenAddress></ListenAddress>\n<ThriftAddress>10.0.0.5</ThriftAddress>", ""),
        "test",
        &ghost,
    )
    .expect("loads");
    assert_eq!((c.listen_address.as_str(), c.thrift_address.as_str()), ("127.0.0.1", "10.0.0.5"));
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(c.warnings[0].starts_with("line 7: <ListenAddress> is empty"), "{}", c.warnings[0]);
    assert!(c.warnings[0].contains("using 127.0.0.1 for <ListenAddress>, which"), "{}", c.warnings[0]);
}

#[test]
fn the_system_host_name_is_read() {
    let name = endpoints::SystemResolver.local_host_name().expect("this machine has a host name");
    assert!(!name.is_empty() && !name.contains(char::is_whitespace), "{name:?}");
}

#[test]
fn bad_listen_addresses_are_refused() {
    for (text, element_error) in [("10.0.0.1:7000", true), ("::", true), ("no host", true), ("ghost", false)] {
        let e = err_with(&doc(&format!("<ListenAddress>{text}</ListenAddress>"), ""));
        match e {
            ConfigError::BadValue { element, line, value, .. } if element_error => {
                assert_eq!((element.as_str(), line, value.as_str()), ("ListenAddress", 7, text));
            }
            ConfigError::UnknownHost { element, line, host, .. } if !element_error => {
                assert_eq!((element.as_str(), line, host.as_str()), ("ListenAddress", 7, text));
            }
            other => panic!("{text}: wrong error {other:?}"),
        }
    }
}

#[test]
fn seeds_are_endpoints_at_the_storage_port_unless_they_name_one() {
    let c = ok_with(&with_seeds(
        &["127.0.0.1", "127.0.0.2:7001", "[::1]", "[::1]:7002", "seed-a", "seed-a:7003", "dual"],
        "<StoragePort>7100</StoragePort>",
    ));
    assert_eq!(
        c.seed_endpoints,
        [
            sa("127.0.0.1:7100"),
            sa("127.0.0.2:7001"),
            sa("[::1]:7100"),
            sa("[::1]:7002"),
            sa("10.0.0.1:7100"),
            sa("10.0.0.1:7003"),
            sa("10.0.0.9:7100"),
        ]
    );
    assert_eq!(c.seeds.len(), c.seed_endpoints.len());
    assert_eq!(c.seeds[1], "127.0.0.2:7001");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn seeds_naming_one_endpoint_twice_keep_the_first() {
    let c = ok_with(&with_seeds(&["10.0.0.1", "seed-a", "10.0.0.1:7000", "10.0.0.2"], ""));
    assert_eq!(c.seed_endpoints, [sa("10.0.0.1:7000"), sa("10.0.0.2:7000")]);
    assert_eq!(c.seeds, ["10.0.0.1", "10.0.0.2"]);
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(c.warnings[0].contains("\"seed-a\"") && c.warnings[0].contains("line 6"), "{}", c.warnings[0]);
}

#[test]
fn an_unresolvable_seed_stops_startup_with_element_line_and_name() {
    let e = err_with(&with_seeds(&["127.0.0.1", "seed-b"], ""));
    match &e {
        ConfigError::UnknownHost { element, line, host, .. } => {
            assert_eq!((element.as_str(), *line, host.as_str()), ("Seed", 7, "seed-b"));
        }
        other => panic!("wrong error {other:?}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("\"seed-b\"") && msg.contains("Seed") && msg.contains("line 7"), "{msg}");
}

#[test]
fn malformed_seeds_are_bad_values() {
    for seed in ["127.0.0.1:0", "10.0.0.1:99999", "[::1", "fe80::1:x:7000", "a b"] {
        match err_with(&with_seeds(&[seed], "")) {
            ConfigError::BadValue { element, line, value, .. } => {
                assert_eq!((element.as_str(), line, value.as_str()), ("Seed", 6, seed));
            }
            other => panic!("{seed}: wrong error {other:?}"),
        }
    }
}

#[test]
fn cluster_elements_keep_their_0_6_defaults() {
    let c = ok(&doc("", ""));
    assert_eq!(c.initial_token, None);
    assert!(c.initial_tokens.is_empty());
    assert!(!c.auto_bootstrap);
    assert!(c.hinted_handoff_enabled);
    assert_eq!(c.phi_convict_threshold, 8);
    assert_eq!(c.rpc_timeout_ms, 2000);
    assert_eq!(c.storage_port, 7000);
    assert_eq!(c.seed_endpoints, [sa("127.0.0.1:7000")]);
    let ks = c.keyspace("KS").expect("ks");
    assert_eq!(ks.strategy_class, "org.apache.cassandra.locator.SimpleStrategy");
    assert_eq!(ks.strategy_options.get("replication_factor").map(String::as_str), Some("1"));
    // 0.6 required ReplicaPlacementStrategy in every keyspace; so do we.
    let no_strategy = doc("", "").replace(
        "<ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy>",
        "",
    );
    assert!(
        matches!(err(&no_strategy), ConfigError::Missing { element, .. } if element == "<ReplicaPlacementStrategy>")
    );
    // Without any EndPointSnitch the node uses SimpleSnitch.
    let no_snitch =
        doc("", "").replace("<EndPointSnitch>org.apache.cassandra.locator.EndPointSnitch</EndPointSnitch>", "");
    assert_eq!(ok(&no_snitch).endpoint_snitch, "org.apache.cassandra.locator.SimpleSnitch");
}

#[test]
fn cluster_extensions_have_cassandra_defaults() {
    let c = ok(&doc("", ""));
    assert_eq!(c.num_tokens, 1);
    assert_eq!(c.max_hint_window_ms, 3 * 60 * 60 * 1000);
    assert_eq!(c.hinted_handoff_throttle_kb, 1024);
    assert_eq!((c.read_request_timeout_ms, c.write_request_timeout_ms, c.range_request_timeout_ms), (2000, 2000, 2000));
    assert_eq!(c.truncate_request_timeout_ms, 60_000);
    assert_eq!(c.stream_throughput_outbound_megabits_per_sec, 200);
    assert_eq!(c.ring_delay_ms, 30_000);
    assert_eq!(
        c.gossip_settle,
        GossipSettle { min_wait_ms: 5000, poll_interval_ms: 1000, polls_required: 3, force_after_polls: -1 }
    );
    assert!(!c.outbound_bind_any);
}

#[test]
fn the_gossip_settle_wait_and_outbound_binding_are_read_and_checked() {
    let c = ok(&doc(
        "<GossipSettleMinWaitInMillis>500</GossipSettleMinWaitInMillis>\
         <GossipSettlePollIntervalInMillis>250</GossipSettlePollIntervalInMillis>\
         <GossipSettlePollSuccessesRequired>6</GossipSettlePollSuccessesRequired>\
         <SkipWaitForGossipToSettle>0</SkipWaitForGossipToSettle><OutboundBindAny>true</OutboundBindAny>",
        "",
    ));
    assert_eq!(
        c.gossip_settle,
        GossipSettle { min_wait_ms: 500, poll_interval_ms: 250, polls_required: 6, force_after_polls: 0 }
    );
    assert!(c.outbound_bind_any);
    for bad in [
        "<SkipWaitForGossipToSettle>-2</SkipWaitForGossipToSettle>",
        "<GossipSettlePollIntervalInMillis>0</GossipSettlePollIntervalInMillis>",
        "<GossipSettlePollSuccessesRequired>0</GossipSettlePollSuccessesRequired>",
        "<OutboundBindAny>maybe</OutboundBindAny>",
    ] {
        let e = err(&doc(bad, ""));
        let name = &bad[1..bad.find('>').unwrap_or(1)];
        assert!(e.to_string().contains(name), "{bad}: {e}");
    }
}

#[test]
fn cluster_extensions_are_read() {
    let c = ok(&doc(
        "<NumTokens>4</NumTokens><InitialToken>0, 42535295865117307932921825928971026432,\
         85070591730234615865843651857942052864,127605887595351923798765477786913079296</InitialToken>\
         <MaxHintWindowInMs>60000</MaxHintWindowInMs><HintedHandoffThrottleInKB>0</HintedHandoffThrottleInKB>\
         <RpcTimeoutInMillis>5000</RpcTimeoutInMillis><WriteRequestTimeoutInMillis>1500</WriteRequestTimeoutInMillis>\
         <TruncateRequestTimeoutInMillis>120000</TruncateRequestTimeoutInMillis>\
         <StreamThroughputOutboundMegabitsPerSec>0</StreamThroughputOutboundMegabitsPerSec>\
         <RingDelayInMillis>1000</RingDelayInMillis>",
        "",
    ));
    assert_eq!(c.num_tokens, 4);
    assert_eq!(c.initial_tokens.len(), 4);
    assert_eq!(c.initial_tokens[0], "0");
    assert_eq!(c.initial_tokens[1], "42535295865117307932921825928971026432");
    assert_eq!((c.max_hint_window_ms, c.hinted_handoff_throttle_kb), (60_000, 0));
    // The request timeouts not given follow RpcTimeoutInMillis.
    assert_eq!((c.read_request_timeout_ms, c.write_request_timeout_ms, c.range_request_timeout_ms), (5000, 1500, 5000));
    assert_eq!(c.truncate_request_timeout_ms, 120_000);
    assert_eq!((c.stream_throughput_outbound_megabits_per_sec, c.ring_delay_ms), (0, 1000));
}

#[test]
fn initial_tokens_follow_the_partitioner_and_num_tokens() {
    let murmur = |extra: &str| {
        doc(extra, "")
            .replace("org.apache.cassandra.dht.RandomPartitioner", "org.apache.cassandra.dht.Murmur3Partitioner")
    };
    let c = ok(&murmur("<InitialToken>-9223372036854775808</InitialToken>"));
    assert_eq!(c.initial_tokens, ["-9223372036854775808"]);
    assert_eq!(c.initial_token.as_deref(), Some("-9223372036854775808"));
    let cases = [
        (doc("<InitialToken>abc</InitialToken>", ""), "not an integer"),
        (doc("<InitialToken>170141183460469231731687303715884105729</InitialToken>", ""), "2**127"),
        (murmur("<InitialToken>1.5</InitialToken>"), "long"),
        (doc("<InitialToken>1,2</InitialToken>", ""), "<NumTokens> is 1"),
        (doc("<NumTokens>3</NumTokens><InitialToken>1,2</InitialToken>", ""), "lists 2 token(s)"),
        (doc("<NumTokens>2</NumTokens><InitialToken>1,</InitialToken>", ""), "empty token"),
        (doc("<NumTokens>2</NumTokens><InitialToken>5,5</InitialToken>", ""), "twice"),
    ];
    for (xml, needle) in cases {
        match err(&xml) {
            ConfigError::BadValue { element, line, reason, .. } => {
                assert_eq!((element.as_str(), line), ("InitialToken", 7), "{reason}");
                assert!(reason.contains(needle), "{reason:?} lacks {needle:?}");
            }
            other => panic!("wrong error {other:?}"),
        }
    }
}

#[test]
fn num_tokens_is_bounded_as_in_cassandra() {
    assert_eq!(ok(&doc("<NumTokens>1536</NumTokens>", "")).num_tokens, 1536);
    for bad in ["0", "1537", "-1", "many"] {
        let e = err(&doc(&format!("<NumTokens>{bad}</NumTokens>"), ""));
        assert!(matches!(&e, ConfigError::BadValue { element, line: 7, .. } if element == "NumTokens"), "{e:?}");
    }
}
