use std::fs;
use std::net::IpAddr;

use super::*;

fn ep(addr: &str, port: u16) -> Endpoint {
    match addr.parse::<IpAddr>() {
        Ok(ip) => Endpoint::new(ip, port),
        Err(e) => panic!("{addr}: {e}"),
    }
}

fn conf_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("tempdir: {e}"),
    };
    for (name, text) in files {
        if let Err(e) = fs::write(dir.path().join(name), text) {
            panic!("write {name}: {e}");
        }
    }
    dir
}

fn loc(dc: &str, rack: &str) -> Location {
    Location::new(dc, rack)
}

const TOPOLOGY: &str = "\
# Cassandra's sample, more or less
192.168.1.100=DC1:RAC1
192.168.2.200 = DC2 : RAC2
   10.0.0.10=DC1:RAC3

! also a comment
fe80\\:0\\:0\\:0\\:202\\:b3ff\\:fe1e\\:8329=DC1:RAC3
2001:db8::1=DC3:RAC1
/10.0.0.11=DC2:RAC1
10.0.0.12\\:7000=DC2:RAC2
[2001:db8::2]:7000=DC3:RAC2
10.0.0.13=DC3:\\
          RAC9
default=DCX:RACX
";

#[test]
fn property_file_places_listed_nodes_by_ip_whatever_the_port() {
    let dir = conf_dir(&[(TOPOLOGY_FILE, TOPOLOGY)]);
    let local = ep("192.168.1.100", 7000);
    let snitch = match PropertyFileSnitch::load(&dir.path().join(TOPOLOGY_FILE), local) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let at = |addr: &str| snitch.location(ep(addr, 7001));
    assert_eq!(at("192.168.1.100"), loc("DC1", "RAC1"));
    assert_eq!(at("192.168.2.200"), loc("DC2", "RAC2"));
    assert_eq!(at("10.0.0.10"), loc("DC1", "RAC3"));
    assert_eq!(at("fe80::202:b3ff:fe1e:8329"), loc("DC1", "RAC3"));
    assert_eq!(at("2001:db8::1"), loc("DC3", "RAC1"));
    assert_eq!(at("10.0.0.11"), loc("DC2", "RAC1"));
    assert_eq!(at("10.0.0.12"), loc("DC2", "RAC2"));
    assert_eq!(at("2001:db8::2"), loc("DC3", "RAC2"));
    assert_eq!(at("10.0.0.13"), loc("DC3", "RAC9"));
    // An IPv4-mapped IPv6 address is the IPv4 node.
    assert_eq!(at("::ffff:10.0.0.10"), loc("DC1", "RAC3"));
    assert_eq!(at("10.9.9.9"), loc("DCX", "RACX"));
    assert_eq!(snitch.datacenter(ep("192.168.2.200", 1)), "DC2");
    assert_eq!(snitch.rack(ep("192.168.2.200", 1)), "RAC2");
    assert_eq!(snitch.class_name(), "org.apache.cassandra.locator.PropertyFileSnitch");
}

#[test]
fn property_file_without_default_refuses_an_unlisted_local_node() {
    let dir = conf_dir(&[(TOPOLOGY_FILE, "10.0.0.1=DC1:RAC1\n")]);
    let file = dir.path().join(TOPOLOGY_FILE);
    let err = PropertyFileSnitch::load(&file, ep("10.0.0.2", 7000));
    assert_eq!(
        err.as_ref().err(),
        Some(&SnitchError::UnknownEndpoint { file: file.clone(), endpoint: ep("10.0.0.2", 0).ip() })
    );
    let message = err.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("cassandra-topology.properties") && message.contains("10.0.0.2"), "{message}");

    // Loaded for a listed node, an unlisted one is an error through try_location and
    // UNKNOWN_DC through the trait.
    let snitch = match PropertyFileSnitch::load(&file, ep("10.0.0.1", 7000)) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    assert!(matches!(snitch.try_location(ep("10.0.0.3", 1)), Err(SnitchError::UnknownEndpoint { .. })));
    assert_eq!(snitch.location(ep("10.0.0.3", 1)), loc(UNKNOWN_DC, UNKNOWN_RACK));
}

/// Parses `text` as a topology file and returns the error.
fn topology_error(text: &str) -> SnitchError {
    match PropertyFileSnitch::parse(Path::new("/etc/sibyl/cassandra-topology.properties"), text) {
        Ok(s) => panic!("{text:?} parsed: {s:?}"),
        Err(e) => e,
    }
}

#[test]
fn property_file_errors_name_file_line_and_value() {
    let file = PathBuf::from("/etc/sibyl/cassandra-topology.properties");
    let bad_ip = topology_error("# header\n10.0.0.1=DC1:RAC1\ncassandra-host-3=DC1:RAC1\n");
    assert_eq!(bad_ip, SnitchError::InvalidAddress { file: file.clone(), line: 3, value: "cassandra-host-3".into() });
    assert_eq!(
        bad_ip.to_string(),
        "/etc/sibyl/cassandra-topology.properties:3: \"cassandra-host-3\" is not an IP address (host names are not resolved here)"
    );

    for (text, line, value) in [
        ("10.0.0.1=DC1\n", 1, "DC1"),
        ("\n\n10.0.0.1=DC1:\n", 3, "DC1:"),
        ("10.0.0.1=:RAC1\n", 1, ":RAC1"),
        ("10.0.0.1=DC1:RAC1:extra\n", 1, "DC1:RAC1:extra"),
        ("10.0.0.1=\n", 1, ""),
        ("default=DC1\n", 1, "DC1"),
    ] {
        let err = topology_error(text);
        assert!(
            matches!(&err, SnitchError::InvalidLocation { file: f, line: l, value: v, .. } if *f == file && *l == line && v == value),
            "{text:?}: {err:?}"
        );
        assert!(err.to_string().starts_with(&format!("{}:{line}:", file.display())), "{err}");
    }

    let syntax = topology_error("10.0.0.1=DC1:RAC1\n=DC2:RAC2\n");
    assert!(matches!(&syntax, SnitchError::Syntax { line: 2, text, .. } if text == "=DC2:RAC2"), "{syntax:?}");
    let escape = topology_error("10.0.0.1=DC\\u00G1:RAC1\n");
    assert!(matches!(escape, SnitchError::Syntax { line: 1, .. }), "{escape:?}");
}

#[test]
fn missing_topology_file_is_an_io_error_naming_it() {
    let dir = conf_dir(&[]);
    let err = from_class_name("PropertyFileSnitch", dir.path(), ep("10.0.0.1", 7000)).err();
    assert!(
        matches!(&err, Some(SnitchError::Io { file, kind: std::io::ErrorKind::NotFound, .. }) if file.ends_with(TOPOLOGY_FILE)),
        "{err:?}"
    );
}

#[test]
fn snitch_files_split_at_the_first_equals_and_need_a_key() {
    // The parsing rules themselves are `crate::properties`'; here what the snitch adds.
    let parsed = properties::parse(Path::new("x.properties"), "fe80::1=DC1:RAC1\n");
    let pairs: Vec<(String, String)> = match parsed {
        Ok(p) => p.into_iter().map(|p| (p.key, p.value)).collect(),
        Err(e) => panic!("{e}"),
    };
    assert_eq!(pairs, vec![("fe80::1".to_string(), "DC1:RAC1".to_string())]);
    match properties::parse(Path::new("x.properties"), "a=1\n=DC1:RAC1\n") {
        Err(SnitchError::Syntax { line: 2, reason, .. }) => assert!(reason.contains("no key"), "{reason}"),
        other => panic!("a line without a key: {other:?}"),
    }
}

#[test]
fn rack_inferring_reads_the_second_and_third_octets() {
    let s = RackInferringSnitch;
    assert_eq!(s.datacenter(ep("10.20.30.40", 7000)), "20");
    assert_eq!(s.rack(ep("10.20.30.40", 7000)), "30");
    assert_eq!(s.location(ep("192.168.0.1", 1)), loc("168", "0"));
    // IPv6: bytes 1 and 2 of the sixteen.
    assert_eq!(s.location(ep("2001:db8:1234::1", 1)), loc("1", "13"));
}

#[test]
fn simple_snitch_puts_everyone_in_one_rack() {
    assert_eq!(SimpleSnitch.location(ep("10.1.2.3", 1)), loc("datacenter1", "rack1"));
    assert_eq!(SimpleSnitch.location(ep("::1", 1)), loc("datacenter1", "rack1"));
}

#[test]
fn proximity_is_local_then_rack_then_datacenter_then_others_keeping_order() {
    let s = RackInferringSnitch;
    let local = ep("10.1.1.1", 7000);
    let mut eps = vec![
        ep("10.2.1.9", 7000), // other DC, rack number equal to ours
        ep("10.1.2.5", 7000), // same DC, other rack
        ep("10.1.1.7", 7000), // same rack
        ep("10.3.3.3", 7000), // other DC
        local,
        ep("10.1.2.4", 7000), // same DC, other rack
        ep("10.1.1.1", 7001), // same address, another node: same rack, not local
        ep("10.1.1.2", 7000), // same rack
    ];
    s.sort_by_proximity(local, &mut eps);
    let expected = vec![
        local,
        ep("10.1.1.7", 7000),
        ep("10.1.1.1", 7001),
        ep("10.1.1.2", 7000),
        ep("10.1.2.5", 7000),
        ep("10.1.2.4", 7000),
        ep("10.2.1.9", 7000),
        ep("10.3.3.3", 7000),
    ];
    assert_eq!(eps, expected);

    let mut simple = vec![ep("10.0.0.3", 1), local, ep("10.0.0.2", 1)];
    SimpleSnitch.sort_by_proximity(local, &mut simple);
    assert_eq!(simple, vec![local, ep("10.0.0.3", 1), ep("10.0.0.2", 1)]);
}

#[test]
fn gossiping_snitch_uses_its_file_then_gossip_then_topology_file() {
    let local = ep("10.0.0.1", 7000);
    let dir = conf_dir(&[
        (RACKDC_FILE, "# this node\ndc= DC1 \nrack=RAC1\nprefer_local=true\ndc_suffix=_x\n"),
        (TOPOLOGY_FILE, "10.0.0.3=DC3:RAC3\n"),
    ]);
    let snitch = match from_class_name("GossipingPropertyFileSnitch", dir.path(), local) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(snitch.class_name(), "org.apache.cassandra.locator.GossipingPropertyFileSnitch");
    assert_eq!(snitch.location(local), loc("DC1", "RAC1"));

    let peer = ep("10.0.0.2", 7000);
    // Unknown to gossip and not in the topology file (which has no default).
    assert_eq!(snitch.location(peer), loc(UNKNOWN_DC, UNKNOWN_RACK));
    snitch.set_location(peer, "DC2", "RAC2");
    assert_eq!(snitch.datacenter(peer), "DC2");
    assert_eq!(snitch.rack(peer), "RAC2");
    // Gossip matches whole endpoints: another port is another node.
    assert_eq!(snitch.location(ep("10.0.0.2", 7001)), loc(UNKNOWN_DC, UNKNOWN_RACK));
    // The topology file answers for nodes gossip has not described, until gossip does.
    let old = ep("10.0.0.3", 7000);
    assert_eq!(snitch.location(old), loc("DC3", "RAC3"));
    snitch.set_location(old, "DC4", "RAC4");
    assert_eq!(snitch.location(old), loc("DC4", "RAC4"));
    // Gossip cannot move the local node away from its file.
    snitch.set_location(local, "DCX", "RACX");
    assert_eq!(snitch.location(local), loc("DC1", "RAC1"));

    let direct = match GossipingPropertyFileSnitch::load(dir.path(), local) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    direct.set_location(peer, "DC2", "RAC2");
    direct.remove_location(peer);
    assert_eq!(direct.location(peer), loc(UNKNOWN_DC, UNKNOWN_RACK));
}

#[test]
fn gossiping_snitch_needs_its_file_with_dc_and_rack() {
    let local = ep("10.0.0.1", 7000);
    let missing = conf_dir(&[]);
    let err = GossipingPropertyFileSnitch::load(missing.path(), local).err();
    assert!(matches!(&err, Some(SnitchError::Io { file, .. }) if file.ends_with(RACKDC_FILE)), "{err:?}");

    let no_rack = conf_dir(&[(RACKDC_FILE, "dc=DC1\n")]);
    let err = GossipingPropertyFileSnitch::load(no_rack.path(), local).err();
    let file = no_rack.path().join(RACKDC_FILE);
    assert_eq!(err, Some(SnitchError::MissingProperty { file: file.clone(), key: "rack" }));

    let empty_dc = conf_dir(&[(RACKDC_FILE, "rack=R\n\ndc=  \n")]);
    let err = GossipingPropertyFileSnitch::load(empty_dc.path(), local).err();
    assert!(matches!(&err, Some(SnitchError::EmptyValue { line: 3, key, .. }) if key == "dc"), "{err:?}");

    // Without a topology file there is no fallback, and with a broken one the load fails.
    let no_topology = conf_dir(&[(RACKDC_FILE, "dc=DC1\nrack=RAC1\n")]);
    assert!(GossipingPropertyFileSnitch::load(no_topology.path(), local).is_ok());
    let broken = conf_dir(&[(RACKDC_FILE, "dc=DC1\nrack=RAC1\n"), (TOPOLOGY_FILE, "10.0.0.3=DC3\n")]);
    let err = GossipingPropertyFileSnitch::load(broken.path(), local).err();
    assert!(matches!(err, Some(SnitchError::InvalidLocation { line: 1, .. })), "{err:?}");
}

#[test]
fn class_names_short_full_and_from_cassandra_0_6() {
    let local = ep("10.1.2.3", 7000);
    let dir = conf_dir(&[(TOPOLOGY_FILE, "default=DC9:R9\n"), (RACKDC_FILE, "dc=D\nrack=R\n")]);
    for (name, class) in [
        ("SimpleSnitch", "org.apache.cassandra.locator.SimpleSnitch"),
        ("org.apache.cassandra.locator.SimpleSnitch", "org.apache.cassandra.locator.SimpleSnitch"),
        (" RackInferringSnitch ", "org.apache.cassandra.locator.RackInferringSnitch"),
        ("org.apache.cassandra.locator.EndPointSnitch", "org.apache.cassandra.locator.RackInferringSnitch"),
        ("EndpointSnitch", "org.apache.cassandra.locator.RackInferringSnitch"),
        ("PropertyFileSnitch", "org.apache.cassandra.locator.PropertyFileSnitch"),
        ("org.apache.cassandra.locator.PropertyFileEndPointSnitch", "org.apache.cassandra.locator.PropertyFileSnitch"),
        ("GossipingPropertyFileSnitch", "org.apache.cassandra.locator.GossipingPropertyFileSnitch"),
    ] {
        match from_class_name(name, dir.path(), local) {
            Ok(s) => assert_eq!(s.class_name(), class, "{name}"),
            Err(e) => panic!("{name}: {e}"),
        }
    }
    let rack_inferring = from_class_name("EndPointSnitch", dir.path(), local).ok().map(|s| s.location(local));
    assert_eq!(rack_inferring, Some(loc("1", "2")));

    assert_eq!(
        from_class_name("FancySnitch", dir.path(), local).err(),
        Some(SnitchError::UnknownSnitch("FancySnitch".into()))
    );
    assert_eq!(
        from_class_name("com.example.SimpleSnitch", dir.path(), local).err(),
        Some(SnitchError::UnknownSnitch("com.example.SimpleSnitch".into()))
    );
    assert_eq!(
        from_class_name("Ec2Snitch", dir.path(), local).err(),
        Some(SnitchError::UnsupportedSnitch("org.apache.cassandra.locator.Ec2Snitch".into()))
    );
}

#[test]
fn cassandra_0_6_property_snitch_reads_rack_properties_when_alone() {
    let local = ep("10.0.0.1", 7000);
    let dir = conf_dir(&[(LEGACY_TOPOLOGY_FILE, "10.0.0.1\\:7000=DC1:RAC1\n10.0.0.2\\:7000=DC2:RAC1\n")]);
    let snitch = match from_class_name("PropertyFileEndPointSnitch", dir.path(), local) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(snitch.location(ep("10.0.0.2", 7000)), loc("DC2", "RAC1"));
    // The modern name does not look at rack.properties.
    assert!(matches!(
        from_class_name("PropertyFileSnitch", dir.path(), local),
        Err(SnitchError::Io { kind: std::io::ErrorKind::NotFound, .. })
    ));
}

#[test]
fn latin1_files_are_read_as_java_reads_them() {
    let dir = conf_dir(&[]);
    let file = dir.path().join(TOPOLOGY_FILE);
    if let Err(e) = fs::write(&file, b"10.0.0.1=Z\xfcrich:R1\n") {
        panic!("{e}");
    }
    let snitch = match PropertyFileSnitch::load(&file, ep("10.0.0.1", 1)) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(snitch.datacenter(ep("10.0.0.1", 1)), "Z\u{fc}rich");
}
