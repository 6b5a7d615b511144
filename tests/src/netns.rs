//! Real network partitions between nodes on this machine: each node runs in its own network
//! namespace, joined to the others by a bridge (all virtual: nothing leaves the machine). The
//! test process reaches every node through the bridge's own address, also while the nodes are
//! cut off from each other, so a test can talk to both sides of a partition.
//!
//! A partition is a blackhole route in each namespace for the other side's addresses: packets
//! from one side to the other are dropped as they leave, in both directions, while both sides
//! keep running and serving their own clients (unlike a paused process). Needs root (`ip`).

use std::process::Command;

/// The namespaces and the bridge of one test, removed when dropped.
pub struct Network {
    bridge: String,
    namespaces: Vec<String>,
    /// Third byte of this network's addresses: 10.213.<subnet>.<node + 1>.
    subnet: u8,
}

/// Runs `ip ARGS`, panicking with its output if it fails.
fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().unwrap_or_else(|e| panic!("cannot run ip {args:?}: {e}"));
    assert!(
        out.status.success(),
        "ip {} failed ({}): {}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Network {
    /// `n` namespaces on one bridge. Names carry the process id, so tests in other processes
    /// never meet them.
    pub fn new(n: usize) -> Network {
        let pid = std::process::id();
        let subnet = (pid % 250) as u8 + 1;
        let net = Network {
            bridge: format!("sbr{}", pid % 100_000),
            namespaces: (0..n).map(|i| format!("sibyl-{pid}-{i}")).collect(),
            subnet,
        };
        // Remove leftovers of an earlier process with the same id that died uncleanly.
        net.remove();
        ip(&["link", "add", &net.bridge, "type", "bridge"]);
        ip(&["addr", "add", &format!("10.213.{subnet}.254/24"), "dev", &net.bridge]);
        ip(&["link", "set", &net.bridge, "up"]);
        for (i, ns) in net.namespaces.iter().enumerate() {
            let outside = format!("sv{}-{i}", pid % 100_000);
            ip(&["netns", "add", ns]);
            ip(&["link", "add", &outside, "type", "veth", "peer", "name", "eth0", "netns", ns]);
            ip(&["link", "set", &outside, "master", &net.bridge]);
            ip(&["link", "set", &outside, "up"]);
            ip(&["-n", ns, "addr", "add", &format!("{}/24", net.address(i)), "dev", "eth0"]);
            ip(&["-n", ns, "link", "set", "eth0", "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        net
    }

    /// Node `i`'s address (0-based).
    pub fn ip(&self, i: usize) -> [u8; 4] {
        [10, 213, self.subnet, i as u8 + 1]
    }

    pub fn address(&self, i: usize) -> String {
        let [a, b, c, d] = self.ip(i);
        format!("{a}.{b}.{c}.{d}")
    }

    /// Node `i`'s namespace.
    pub fn namespace(&self, i: usize) -> String {
        self.namespaces[i].clone()
    }

    /// Cuts every node of `side` off from every node of `other`, both ways.
    pub fn cut(&self, side: &[usize], other: &[usize]) {
        self.routes("add", side, other);
    }

    /// Undoes [`Network::cut`].
    pub fn heal(&self, side: &[usize], other: &[usize]) {
        self.routes("del", side, other);
    }

    fn routes(&self, verb: &str, side: &[usize], other: &[usize]) {
        for (from, to) in [(side, other), (other, side)] {
            for &f in from {
                for &t in to {
                    ip(&["-n", &self.namespaces[f], "route", verb, "blackhole", &format!("{}/32", self.address(t))]);
                }
            }
        }
    }

    fn remove(&self) {
        for ns in &self.namespaces {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
        let _ = Command::new("ip").args(["link", "del", &self.bridge]).output();
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of each veth pair, and with it the other end.
        self.remove();
    }
}
