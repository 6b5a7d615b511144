//! `GossipingPropertyFileSnitch`: each node states its own location in
//! `cassandra-rackdc.properties` and the others learn it through gossip.
//!
//! ```text
//! dc=DC1
//! rack=RAC1
//! ```
//!
//! Lookups follow Cassandra 3.11: the local node answers from its file; another node from the
//! `DC`/`RACK` gossip states reported through [`Snitch::set_location`]; a node gossip has not
//! described yet from `cassandra-topology.properties` when that file exists (the compatibility
//! mode for clusters moving off PropertyFileSnitch), else `UNKNOWN_DC`/`UNKNOWN_RACK`. (Cassandra
//! also consults the DC and rack saved in `system.peers` before answering unknown; the gossip
//! integration does the same by calling `set_location` for the saved peers at start-up.)
//!
//! Differences from Cassandra, both to fail early on a misconfigured node: a missing rackdc file,
//! or one without `dc` or `rack`, is an error (Cassandra warns and uses `UNKNOWN_DC`); and a
//! malformed topology file is an error (Cassandra quietly disables the compatibility mode). Keys
//! other than `dc` and `rack` (`prefer_local`, `dc_suffix`, ...) are ignored.

use std::collections::HashMap;
use std::path::Path;

use parking_lot::RwLock;

use super::properties;
use super::{Location, PropertyFileSnitch, Snitch, SnitchError, RACKDC_FILE, TOPOLOGY_FILE};
use crate::Endpoint;

#[derive(Debug)]
pub struct GossipingPropertyFileSnitch {
    local: Endpoint,
    local_location: Location,
    /// Locations gossip reported, by endpoint (address and port, as gossip knows nodes).
    /// Written by the gossip task through `set_location`, read by every replica lookup; held
    /// only for the map operation itself.
    gossiped: RwLock<HashMap<Endpoint, Location>>,
    /// `cassandra-topology.properties`, when it exists.
    fallback: Option<PropertyFileSnitch>,
}

impl GossipingPropertyFileSnitch {
    /// Reads `cassandra-rackdc.properties`, and `cassandra-topology.properties` if present, from
    /// `conf_dir`.
    pub fn load(conf_dir: &Path, local: Endpoint) -> Result<GossipingPropertyFileSnitch, SnitchError> {
        let rackdc = conf_dir.join(RACKDC_FILE);
        let props = properties::read(&rackdc)?;
        let local_location = local_location(&rackdc, &props)?;
        let topology = conf_dir.join(TOPOLOGY_FILE);
        let fallback = if topology.exists() { Some(PropertyFileSnitch::read(&topology)?) } else { None };
        if fallback.is_some() {
            tracing::info!("loaded {} for compatibility", topology.display());
        }
        Ok(GossipingPropertyFileSnitch::new(local, local_location, fallback))
    }

    pub fn new(
        local: Endpoint,
        local_location: Location,
        fallback: Option<PropertyFileSnitch>,
    ) -> GossipingPropertyFileSnitch {
        GossipingPropertyFileSnitch { local, local_location, gossiped: RwLock::new(HashMap::new()), fallback }
    }

    /// Forgets what gossip said about a node (it left the cluster).
    pub fn remove_location(&self, ep: Endpoint) {
        self.gossiped.write().remove(&ep);
    }
}

fn local_location(file: &Path, props: &[properties::Property]) -> Result<Location, SnitchError> {
    // The last occurrence of a key wins, as in a Java `Properties`.
    let get = |key: &'static str| -> Result<String, SnitchError> {
        let p = props
            .iter()
            .rev()
            .find(|p| p.key == key)
            .ok_or_else(|| SnitchError::MissingProperty { file: file.to_path_buf(), key })?;
        let v = p.value.trim();
        if v.is_empty() {
            return Err(SnitchError::EmptyValue { file: file.to_path_buf(), line: p.line, key: key.to_string() });
        }
        Ok(v.to_string())
    };
    Ok(Location::new(get("dc")?, get("rack")?))
}

impl Snitch for GossipingPropertyFileSnitch {
    fn class_name(&self) -> &str {
        "org.apache.cassandra.locator.GossipingPropertyFileSnitch"
    }

    fn datacenter(&self, ep: Endpoint) -> String {
        self.location(ep).datacenter
    }

    fn rack(&self, ep: Endpoint) -> String {
        self.location(ep).rack
    }

    fn location(&self, ep: Endpoint) -> Location {
        if ep == self.local {
            return self.local_location.clone();
        }
        if let Some(l) = self.gossiped.read().get(&ep) {
            return l.clone();
        }
        match &self.fallback {
            Some(pfs) => pfs.location(ep),
            None => Location::unknown(),
        }
    }

    fn set_location(&self, ep: Endpoint, dc: &str, rack: &str) {
        if ep == self.local {
            // Our own location comes from our file; gossip only echoes it back.
            return;
        }
        self.gossiped.write().insert(ep, Location::new(dc, rack));
    }
}
