//! Internode addresses: `<ListenAddress>` and `<Seeds>` turned into socket addresses at load.
//!
//! A node is known to the others by `ListenAddress:StoragePort`, so both settings are resolved
//! once, when the file is read: a host name that does not resolve stops startup naming the
//! element, its line and the name (0.6 exited too, asking for IP addresses instead). Gossip then
//! works with plain [`SocketAddr`]s and never waits on DNS.
//!
//! A blank or absent `<ListenAddress>` means, as in 0.6 (`InetAddress.getLocalHost()`), the
//! address the machine's host name resolves to; when the host name cannot be read or does not
//! resolve, 127.0.0.1 with a warning.

use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use super::values::{bad, container, leaf, Elements};
use super::xml::Node;
use super::ConfigError;

/// Turns a host name into socket addresses: the system resolver in production, a fixed table
/// in tests (so tests neither depend on nor wait for DNS).
pub(crate) trait Resolve {
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>>;

    /// This machine's host name, which a blank `<ListenAddress>` stands for.
    fn local_host_name(&self) -> io::Result<String>;
}

/// `getaddrinfo` through the standard library (which reads `/etc/hosts` first).
pub(crate) struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        Ok((host, port).to_socket_addrs()?.collect())
    }

    fn local_host_name(&self) -> io::Result<String> {
        system_host_name()
    }
}

/// The kernel's host name (what `gethostname` returns): `/proc/sys/kernel/hostname` on Linux,
/// `uname -n` where there is no `/proc` (macOS, the BSDs). The `HOSTNAME` variable is a
/// shell's, often unset for a service, so it is not consulted.
fn system_host_name() -> io::Result<String> {
    let name = match std::fs::read_to_string("/proc/sys/kernel/hostname") {
        Ok(name) => name,
        Err(_) => {
            let out = std::process::Command::new("uname").arg("-n").output()?;
            if !out.status.success() {
                return Err(io::Error::other(format!("uname -n failed ({})", out.status)));
            }
            String::from_utf8(out.stdout)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "uname -n printed no text"))?
        }
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(io::Error::new(io::ErrorKind::NotFound, "the machine has no host name"));
    }
    Ok(name.to_string())
}

/// An address as written in the file, before resolution.
#[derive(Debug, PartialEq)]
enum HostPort<'a> {
    Ip(SocketAddr),
    Name { host: &'a str, port: u16 },
}

/// Parses a `<Seed>`: `address`, `host`, `[ipv6]` (all at `default_port`, the cluster's
/// StoragePort, as 0.6 meant them), or the extension `address:port`, `host:port`,
/// `[ipv6]:port`. A bare IPv6 address without brackets is accepted too, without a port.
fn parse_seed(text: &str, default_port: u16) -> Result<HostPort<'_>, String> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(HostPort::Ip(SocketAddr::new(addr.ip(), nonzero_port(addr.port())?)));
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(HostPort::Ip(SocketAddr::new(ip, default_port)));
    }
    if let Some(rest) = text.strip_prefix('[') {
        let (inside, after) = rest.split_once(']').ok_or("an opening [ without its closing ]")?;
        let ip: Ipv6Addr = inside.parse().map_err(|_| format!("{inside:?} in brackets is not an IPv6 address"))?;
        let port = match after {
            "" => default_port,
            _ => port_text(after.strip_prefix(':').ok_or("expected :port after the ]")?)?,
        };
        return Ok(HostPort::Ip(SocketAddr::new(IpAddr::V6(ip), port)));
    }
    let (host, port) = match text.split_once(':') {
        Some((_, after)) if after.contains(':') => {
            return Err("not an IPv6 address; with a port, write an IPv6 address as [address]:port".into())
        }
        Some((host, port)) => (host, port_text(port)?),
        None => (text, default_port),
    };
    check_host_name(host)?;
    Ok(HostPort::Name { host, port })
}

/// Parses `<ListenAddress>`: an address or host name without a port (the port is StoragePort).
fn parse_listen_address(text: &str, port: u16) -> Result<HostPort<'_>, String> {
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(HostPort::Ip(SocketAddr::new(ip, port)));
    }
    if let Some(inside) = text.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let ip: Ipv6Addr = inside.parse().map_err(|_| format!("{inside:?} in brackets is not an IPv6 address"))?;
        return Ok(HostPort::Ip(SocketAddr::new(IpAddr::V6(ip), port)));
    }
    if text.contains(':') {
        return Err("give an address or host name without a port; the port is <StoragePort>".into());
    }
    check_host_name(text)?;
    Ok(HostPort::Name { host: text, port })
}

fn port_text(text: &str) -> Result<u16, String> {
    let port: u16 = text.parse().map_err(|_| format!("port {text:?} is not a number from 1 to 65535"))?;
    nonzero_port(port)
}

fn nonzero_port(port: u16) -> Result<u16, String> {
    if port == 0 {
        return Err("port 0 cannot be reached; give a port from 1 to 65535".into());
    }
    Ok(port)
}

/// Letters, digits, `-`, `_` and `.` only, so a typo (a space, a stray `/`) is reported as
/// such instead of as a failed lookup.
fn check_host_name(host: &str) -> Result<(), String> {
    if host.is_empty() {
        return Err("empty host name".into());
    }
    if let Some(c) = host.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))) {
        return Err(format!("{c:?} cannot appear in a host name or address"));
    }
    Ok(())
}

/// Resolves `hp`, preferring an IPv4 address when a name has both kinds (as Java's resolver
/// does by default, which is what 0.6 used).
fn resolve(element: &str, line: usize, hp: HostPort<'_>, resolver: &dyn Resolve) -> Result<SocketAddr, ConfigError> {
    let (host, port) = match hp {
        HostPort::Ip(addr) => return Ok(addr),
        HostPort::Name { host, port } => (host, port),
    };
    let unknown = |source: io::Error| ConfigError::UnknownHost {
        element: element.to_string(),
        line,
        host: host.to_string(),
        source,
    };
    let addrs = resolver.resolve(host, port).map_err(unknown)?;
    prefer_ipv4(&addrs).ok_or_else(|| unknown(io::Error::new(io::ErrorKind::NotFound, "the name has no addresses")))
}

/// The first IPv4 address of a name, else its first address.
fn prefer_ipv4(addrs: &[SocketAddr]) -> Option<SocketAddr> {
    addrs.iter().find(|a| a.is_ipv4()).or_else(|| addrs.first()).copied()
}

/// `<ListenAddress>` as written and resolved at `storage_port`. Blank or absent: the address
/// of the machine's host name, written as an address ([`local_host_address`]).
pub(crate) fn listen_address(
    els: &Elements<'_>,
    storage_port: u16,
    resolver: &dyn Resolve,
    warnings: &mut Vec<String>,
) -> Result<(String, SocketAddr), ConfigError> {
    let Some((text, line)) = els.text("ListenAddress")? else {
        let addr = local_host_address(els, storage_port, resolver, warnings)?;
        return Ok((addr.ip().to_string(), addr));
    };
    let hp = parse_listen_address(text, storage_port).map_err(|reason| bad("ListenAddress", line, text, reason))?;
    let addr = resolve("ListenAddress", line, hp, resolver)?;
    if addr.ip().is_unspecified() {
        return Err(bad(
            "ListenAddress",
            line,
            text,
            "other nodes must be able to reach this address; give a real one",
        ));
    }
    Ok((text.to_string(), addr))
}

/// What a blank or absent `<ListenAddress>` stands for: as 0.6's `InetAddress.getLocalHost()`,
/// the address the machine's host name resolves to (IPv4 first). When there is none, 127.0.0.1
/// with a warning naming the element: other machines cannot reach this node there.
fn local_host_address(
    els: &Elements<'_>,
    storage_port: u16,
    resolver: &dyn Resolve,
    warnings: &mut Vec<String>,
) -> Result<SocketAddr, ConfigError> {
    let why = match find_local_host(storage_port, resolver) {
        Ok(addr) => return Ok(addr),
        Err(why) => why,
    };
    let (at, state) = match els.node("ListenAddress") {
        Some(node) => (format!("line {}: ", node.line), "is empty"),
        None => (String::new(), "is not set"),
    };
    // ThriftAddress (and AdminAddress) follow the listen address when not set.
    let thrift = if els.text("ThriftAddress")?.is_none() { " and <ThriftAddress>" } else { "" };
    warnings.push(format!(
        "{at}<ListenAddress> {state}, which means the address of this machine's host name, but {why}; \
         using 127.0.0.1 for <ListenAddress>{thrift}, which other machines cannot reach: set it explicitly"
    ));
    Ok(SocketAddr::new(IpAddr::from([127, 0, 0, 1]), storage_port))
}

/// The address of this machine's host name at `port`, or why there is none.
fn find_local_host(port: u16, resolver: &dyn Resolve) -> Result<SocketAddr, String> {
    let host = resolver.local_host_name().map_err(|e| format!("the host name cannot be read ({e})"))?;
    let addrs = resolver.resolve(&host, port).map_err(|e| format!("host name {host:?} does not resolve ({e})"))?;
    let addr = prefer_ipv4(&addrs).ok_or_else(|| format!("host name {host:?} has no addresses"))?;
    if addr.ip().is_unspecified() {
        return Err(format!("host name {host:?} resolves to {}", addr.ip()));
    }
    Ok(addr)
}

/// What `<Seeds>` yields: the seeds as written and their endpoints, in file order, without
/// duplicates.
pub(crate) struct Seeds {
    pub written: Vec<String>,
    pub endpoints: Vec<SocketAddr>,
}

/// `<Seeds><Seed>..</Seed>..</Seeds>`: at least one; `storage_port` applies to seeds without
/// a port. Two seeds naming the same endpoint keep the first, with a warning.
pub(crate) fn seeds(
    els: &Elements<'_>,
    storage_port: u16,
    resolver: &dyn Resolve,
    warnings: &mut Vec<String>,
) -> Result<Seeds, ConfigError> {
    let node = els.node("Seeds").ok_or_else(|| els.missing("Seeds"))?;
    container(node, "Seed")?;
    let mut seeds = Seeds { written: Vec::new(), endpoints: Vec::new() };
    let mut lines: Vec<usize> = Vec::new();
    for child in &node.children {
        if child.name != "Seed" {
            return Err(super::node::unknown_child(node, child, &["Seed"]));
        }
        leaf(child)?;
        let Some(text) = child.value() else { continue };
        let hp = parse_seed(text, storage_port).map_err(|reason| bad("Seed", child.line, text, reason))?;
        let endpoint = resolve("Seed", child.line, hp, resolver)?;
        if let Some(i) = seeds.endpoints.iter().position(|e| *e == endpoint) {
            let first_line = lines.get(i).copied().unwrap_or(child.line);
            warnings.push(format!(
                "line {}: <Seed> {text:?} is {endpoint}, already listed at line {first_line}; ignored",
                child.line
            ));
            continue;
        }
        seeds.written.push(text.to_string());
        seeds.endpoints.push(endpoint);
        lines.push(child.line);
    }
    if seeds.endpoints.is_empty() {
        return Err(missing_seed(node));
    }
    Ok(seeds)
}

fn missing_seed(node: &Node) -> ConfigError {
    ConfigError::Missing { element: "<Seed>".into(), within: "Seeds".into(), line: node.line }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(s: &str) -> SocketAddr {
        s.parse().expect("test address")
    }

    #[test]
    fn seeds_without_a_port_take_the_storage_port() {
        assert_eq!(parse_seed("127.0.0.1", 7000), Ok(HostPort::Ip(sa("127.0.0.1:7000"))));
        assert_eq!(parse_seed("::1", 7000), Ok(HostPort::Ip(sa("[::1]:7000"))));
        assert_eq!(parse_seed("[fe80::1]", 7001), Ok(HostPort::Ip(sa("[fe80::1]:7001"))));
        assert_eq!(parse_seed("cass-1.example", 7000), Ok(HostPort::Name { host: "cass-1.example", port: 7000 }));
    }

    #[test]
    fn seeds_with_a_port_keep_it() {
        assert_eq!(parse_seed("127.0.0.1:7100", 7000), Ok(HostPort::Ip(sa("127.0.0.1:7100"))));
        assert_eq!(parse_seed("[::1]:7100", 7000), Ok(HostPort::Ip(sa("[::1]:7100"))));
        assert_eq!(parse_seed("node2:7100", 7000), Ok(HostPort::Name { host: "node2", port: 7100 }));
    }

    #[test]
    fn malformed_seeds_say_why() {
        for (text, needle) in [
            ("127.0.0.1:0", "port 0"),
            ("127.0.0.1:70000", "1 to 65535"),
            ("host:", "port \"\""),
            ("fe80::1::2", "IPv6"),
            ("fe80::1:x:7000", "[address]:port"),
            ("[::1", "closing ]"),
            ("[::1]7000", ":port"),
            ("[10.0.0.1]", "not an IPv6"),
            ("my host", "' '"),
            ("http://x", "port \"//x\""),
        ] {
            match parse_seed(text, 7000) {
                Err(reason) => assert!(reason.contains(needle), "{text}: {reason} lacks {needle}"),
                Ok(hp) => panic!("{text} parsed as {hp:?}"),
            }
        }
    }

    #[test]
    fn listen_addresses_have_no_port() {
        assert_eq!(parse_listen_address("10.0.0.1", 7000), Ok(HostPort::Ip(sa("10.0.0.1:7000"))));
        assert_eq!(parse_listen_address("[::1]", 7000), Ok(HostPort::Ip(sa("[::1]:7000"))));
        assert_eq!(parse_listen_address("::1", 7000), Ok(HostPort::Ip(sa("[::1]:7000"))));
        assert!(parse_listen_address("10.0.0.1:7000", 7000).is_err_and(|r| r.contains("StoragePort")));
    }

    struct Table(Vec<(&'static str, Vec<SocketAddr>)>);

    impl Resolve for Table {
        fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
            let found = self.0.iter().find(|(h, _)| *h == host).ok_or(io::ErrorKind::NotFound)?;
            Ok(found.1.iter().map(|a| SocketAddr::new(a.ip(), port)).collect())
        }

        fn local_host_name(&self) -> io::Result<String> {
            Err(io::ErrorKind::NotFound.into())
        }
    }

    #[test]
    fn names_prefer_ipv4_and_keep_the_port() {
        let table = Table(vec![("dual", vec![sa("[::2]:0"), sa("10.0.0.2:0")]), ("v6", vec![sa("[::3]:0")])]);
        let dual = HostPort::Name { host: "dual", port: 7100 };
        assert_eq!(resolve("Seed", 1, dual, &table).expect("resolves"), sa("10.0.0.2:7100"));
        let v6 = HostPort::Name { host: "v6", port: 7000 };
        assert_eq!(resolve("Seed", 1, v6, &table).expect("resolves"), sa("[::3]:7000"));
        let gone = HostPort::Name { host: "gone", port: 7000 };
        let err = resolve("Seed", 9, gone, &table).expect_err("unknown");
        assert!(
            matches!(err, ConfigError::UnknownHost { ref element, line: 9, ref host, .. } if element == "Seed" && host == "gone")
        );
    }
}
