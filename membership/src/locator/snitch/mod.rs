//! Snitches: where a node sits (data centre and rack), and which replicas are closest
//! (Cassandra's `IEndpointSnitch` and its implementations in `locator`).
//!
//! | Snitch | Location of a node |
//! |---|---|
//! | [`SimpleSnitch`] | always `datacenter1` / `rack1` |
//! | [`RackInferringSnitch`] | 2nd octet of the address is the DC, 3rd the rack |
//! | [`PropertyFileSnitch`] | `cassandra-topology.properties`: `<ip>=<DC>:<RACK>` |
//! | [`GossipingPropertyFileSnitch`] | the local node's from `cassandra-rackdc.properties`; others' from gossip |
//!
//! **Gossip integration.** [`Snitch::set_location`] is how gossip tells a snitch what it learned:
//! call it whenever a node's `DC` or `RACK` application state arrives or changes (and at start-up
//! for the locations saved in the peers table). Snitches that compute locations themselves ignore
//! it; [`GossipingPropertyFileSnitch`] records it. Whatever the snitch, gossip publishes the local
//! node's `datacenter(local)` and `rack(local)` as its own `DC` and `RACK` states, as Cassandra
//! does for every snitch. After a location changes, the ring's replica maps must be rebuilt.

mod gossiping;
pub(crate) mod properties;
mod property_file;

#[cfg(test)]
mod tests;

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use gossiping::GossipingPropertyFileSnitch;
pub use property_file::PropertyFileSnitch;

use crate::Endpoint;

const LOCATOR: &str = "org.apache.cassandra.locator.";

/// The file [`PropertyFileSnitch`] reads, in the configuration directory.
pub const TOPOLOGY_FILE: &str = "cassandra-topology.properties";
/// The file Cassandra 0.6's `PropertyFileEndPointSnitch` read (`ip\:port=DC:RACK`), used when
/// that class name is configured and `cassandra-topology.properties` does not exist.
pub const LEGACY_TOPOLOGY_FILE: &str = "rack.properties";
/// The file [`GossipingPropertyFileSnitch`] reads the local node's DC and rack from.
pub const RACKDC_FILE: &str = "cassandra-rackdc.properties";

/// What a snitch answers for a node nobody has told it about (Cassandra's GossipingPropertyFile
/// snitch defaults).
pub const UNKNOWN_DC: &str = "UNKNOWN_DC";
pub const UNKNOWN_RACK: &str = "UNKNOWN_RACK";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnitchError {
    #[error("unknown snitch class {0:?}")]
    UnknownSnitch(String),
    /// A real Cassandra snitch that Sibyl does not implement (cloud metadata snitches).
    #[error("snitch {0} is not supported; use GossipingPropertyFileSnitch or PropertyFileSnitch")]
    UnsupportedSnitch(String),
    #[error("cannot read {}: {reason}", file.display())]
    Io { file: PathBuf, kind: std::io::ErrorKind, reason: String },
    #[error("{}:{line}: {reason}: {text:?}", file.display())]
    Syntax { file: PathBuf, line: usize, text: String, reason: String },
    #[error("{}:{line}: {value:?} is not an IP address (host names are not resolved here)", file.display())]
    InvalidAddress { file: PathBuf, line: usize, value: String },
    #[error("{}:{line}: location {value:?} for {key} must be <DC>:<RACK>", file.display())]
    InvalidLocation { file: PathBuf, line: usize, key: String, value: String },
    #[error("{}:{line}: {key} must not be empty", file.display())]
    EmptyValue { file: PathBuf, line: usize, key: String },
    #[error("{} does not set {key}", file.display())]
    MissingProperty { file: PathBuf, key: &'static str },
    /// Cassandra's "Snitch definitions at ... do not define a location for this node's
    /// broadcast address ..., nor does it provide a default".
    #[error("{} does not define a location for {endpoint} and has no default", file.display())]
    UnknownEndpoint { file: PathBuf, endpoint: IpAddr },
}

/// A node's place in the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    pub datacenter: String,
    pub rack: String,
}

impl Location {
    pub fn new(datacenter: impl Into<String>, rack: impl Into<String>) -> Location {
        Location { datacenter: datacenter.into(), rack: rack.into() }
    }

    fn unknown() -> Location {
        Location::new(UNKNOWN_DC, UNKNOWN_RACK)
    }
}

pub trait Snitch: Send + Sync {
    /// The full Java class name, as `describe_snitch` returns it.
    fn class_name(&self) -> &str;

    fn datacenter(&self, ep: Endpoint) -> String;

    fn rack(&self, ep: Endpoint) -> String;

    /// Both at once; snitches with one lookup for both override it.
    fn location(&self, ep: Endpoint) -> Location {
        Location { datacenter: self.datacenter(ep), rack: self.rack(ep) }
    }

    /// Orders `eps` closest first: the local node, then nodes in its rack, then in its data
    /// centre, then the rest; the order within each group is kept. A rack is a (DC, rack) pair:
    /// Cassandra's `AbstractNetworkTopologySnitch` compares rack names alone, which would call
    /// rack "1" of DC "a" and rack "1" of DC "b" the same rack.
    fn sort_by_proximity(&self, local: Endpoint, eps: &mut Vec<Endpoint>) {
        let here = self.location(local);
        eps.sort_by_cached_key(|ep| {
            if *ep == local {
                return 0u8;
            }
            let there = self.location(*ep);
            match (there.datacenter == here.datacenter, there.rack == here.rack) {
                (true, true) => 1,
                (true, false) => 2,
                _ => 3,
            }
        });
    }

    /// Gossip reports a node's `DC`/`RACK` application state (see the module documentation).
    /// Snitches that do not learn from gossip ignore it.
    fn set_location(&self, _ep: Endpoint, _dc: &str, _rack: &str) {}
}

/// Every node in `datacenter1`, `rack1` (Cassandra's default snitch).
#[derive(Debug, Clone, Copy, Default)]
pub struct SimpleSnitch;

impl Snitch for SimpleSnitch {
    fn class_name(&self) -> &str {
        "org.apache.cassandra.locator.SimpleSnitch"
    }

    fn datacenter(&self, _ep: Endpoint) -> String {
        "datacenter1".to_string()
    }

    fn rack(&self, _ep: Endpoint) -> String {
        "rack1".to_string()
    }
}

/// The data centre is the second byte of the address and the rack the third, printed as
/// decimal numbers: 10.20.30.40 is in DC "20", rack "30". An IPv6 address is read the same way,
/// from the second and third of its sixteen bytes, as Cassandra does with `getAddress()`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RackInferringSnitch;

impl RackInferringSnitch {
    fn byte(ep: Endpoint, i: usize) -> String {
        let b = match ep.ip() {
            IpAddr::V4(v4) => v4.octets().get(i).copied(),
            IpAddr::V6(v6) => v6.octets().get(i).copied(),
        };
        b.unwrap_or(0).to_string()
    }
}

impl Snitch for RackInferringSnitch {
    fn class_name(&self) -> &str {
        "org.apache.cassandra.locator.RackInferringSnitch"
    }

    fn datacenter(&self, ep: Endpoint) -> String {
        Self::byte(ep, 1)
    }

    fn rack(&self, ep: Endpoint) -> String {
        Self::byte(ep, 2)
    }
}

/// The snitch a configuration names, short (`PropertyFileSnitch`) or full
/// (`org.apache.cassandra.locator.PropertyFileSnitch`; a name without a dot gets that package).
/// Files are read from `conf_dir`; `local` is this node.
///
/// Cassandra 0.6 names map to their successors, as Cassandra 0.7's configuration converter did:
/// - `EndPointSnitch` (and the spelling `EndpointSnitch`): same DC when the 2nd octet matches,
///   same rack when the 3rd does, which is [`RackInferringSnitch`];
/// - `PropertyFileEndPointSnitch` (contrib, `ip\:port=DC:RACK` lines in `rack.properties`,
///   and the spelling `PropertyFileEndpointSnitch`): [`PropertyFileSnitch`], reading
///   `cassandra-topology.properties`, or `rack.properties` when only that one exists.
pub fn from_class_name(name: &str, conf_dir: &Path, local: Endpoint) -> Result<Arc<dyn Snitch>, SnitchError> {
    let trimmed = name.trim();
    let full = if trimmed.contains('.') { trimmed.to_string() } else { format!("{LOCATOR}{trimmed}") };
    let Some(short) = full.strip_prefix(LOCATOR) else {
        return Err(SnitchError::UnknownSnitch(name.to_string()));
    };
    match short {
        "SimpleSnitch" => Ok(Arc::new(SimpleSnitch)),
        "RackInferringSnitch" | "EndPointSnitch" | "EndpointSnitch" => Ok(Arc::new(RackInferringSnitch)),
        "PropertyFileSnitch" => Ok(Arc::new(PropertyFileSnitch::load(&conf_dir.join(TOPOLOGY_FILE), local)?)),
        "PropertyFileEndPointSnitch" | "PropertyFileEndpointSnitch" => {
            let modern = conf_dir.join(TOPOLOGY_FILE);
            let legacy = conf_dir.join(LEGACY_TOPOLOGY_FILE);
            let file = if !modern.exists() && legacy.exists() { legacy } else { modern };
            Ok(Arc::new(PropertyFileSnitch::load(&file, local)?))
        }
        "GossipingPropertyFileSnitch" => Ok(Arc::new(GossipingPropertyFileSnitch::load(conf_dir, local)?)),
        "Ec2Snitch"
        | "Ec2MultiRegionSnitch"
        | "GoogleCloudSnitch"
        | "CloudstackSnitch"
        | "AlibabaCloudSnitch"
        | "AzureSnitch"
        | "DynamicEndpointSnitch" => Err(SnitchError::UnsupportedSnitch(full)),
        _ => Err(SnitchError::UnknownSnitch(name.to_string())),
    }
}
