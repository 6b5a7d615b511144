//! `PropertyFileSnitch`: every node's location from `cassandra-topology.properties`.
//!
//! ```text
//! # comments
//! 192.168.1.100=DC1:RAC1
//! fe80\:0\:0\:0\:202\:b3ff\:fe1e\:8329=DC2:RAC1
//! default=DC1:r1
//! ```
//!
//! Keys are IP addresses (IPv4 or IPv6, escaped or not; a leading `/` as Java prints addresses is
//! dropped). Cassandra 0.6's `ip\:port` keys and `[v6]:port` keys are read as their address:
//! nodes are matched by IP, whatever their port. Cassandra resolves host-name keys through DNS;
//! Sibyl refuses them. A value must be exactly `<DC>:<RACK>` with neither part empty; Cassandra
//! silently reads a malformed value as `default:default`, which hides typos, so here it is an
//! error naming the file and line. The last entry for an address wins, as in a Java `Properties`.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use super::properties::{self, Property};
use super::{Location, Snitch, SnitchError};
use crate::Endpoint;

const DEFAULT_KEY: &str = "default";

#[derive(Debug, Clone)]
pub struct PropertyFileSnitch {
    file: PathBuf,
    by_ip: HashMap<IpAddr, Location>,
    default: Option<Location>,
}

impl PropertyFileSnitch {
    /// Reads the file and checks that it places `local` (by its own line or the default), as
    /// Cassandra does at start-up.
    pub fn load(file: &Path, local: Endpoint) -> Result<PropertyFileSnitch, SnitchError> {
        let snitch = PropertyFileSnitch::from_properties(file, properties::read(file)?)?;
        snitch.try_location(local)?;
        Ok(snitch)
    }

    /// Reads the file without requiring any particular node in it (GossipingPropertyFileSnitch's
    /// compatibility fallback).
    pub fn read(file: &Path) -> Result<PropertyFileSnitch, SnitchError> {
        PropertyFileSnitch::from_properties(file, properties::read(file)?)
    }

    /// Parses `text` as the contents of `file` (the name is only used in errors).
    pub fn parse(file: &Path, text: &str) -> Result<PropertyFileSnitch, SnitchError> {
        PropertyFileSnitch::from_properties(file, properties::parse(file, text)?)
    }

    fn from_properties(file: &Path, props: Vec<Property>) -> Result<PropertyFileSnitch, SnitchError> {
        let mut by_ip = HashMap::new();
        let mut default = None;
        for p in props {
            let location = parse_location(file, &p)?;
            if p.key == DEFAULT_KEY {
                default = Some(location);
            } else {
                by_ip.insert(parse_address(file, &p)?, location);
            }
        }
        Ok(PropertyFileSnitch { file: file.to_path_buf(), by_ip, default })
    }

    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The node's line, else the default line; an error naming the file and address when the
    /// file has neither (Cassandra throws "Unknown host ... with no default configured").
    pub fn try_location(&self, ep: Endpoint) -> Result<Location, SnitchError> {
        self.lookup(ep.ip())
            .cloned()
            .ok_or_else(|| SnitchError::UnknownEndpoint { file: self.file.clone(), endpoint: ep.ip() })
    }

    /// The node's own line, without the default.
    pub(crate) fn listed(&self, ip: IpAddr) -> Option<&Location> {
        self.by_ip.get(&ip.to_canonical())
    }

    fn lookup(&self, ip: IpAddr) -> Option<&Location> {
        self.listed(ip).or(self.default.as_ref())
    }
}

impl Snitch for PropertyFileSnitch {
    fn class_name(&self) -> &str {
        "org.apache.cassandra.locator.PropertyFileSnitch"
    }

    fn datacenter(&self, ep: Endpoint) -> String {
        self.location(ep).datacenter
    }

    fn rack(&self, ep: Endpoint) -> String {
        self.location(ep).rack
    }

    /// A node the file does not place (no line, no default) cannot stop a request, so it is
    /// reported and placed in `UNKNOWN_DC`/`UNKNOWN_RACK`; [`PropertyFileSnitch::try_location`]
    /// gives the error instead. The local node was checked at load.
    fn location(&self, ep: Endpoint) -> Location {
        match self.try_location(ep) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!("{e}");
                Location::unknown()
            }
        }
    }
}

fn parse_location(file: &Path, p: &Property) -> Result<Location, SnitchError> {
    let invalid = || SnitchError::InvalidLocation {
        file: file.to_path_buf(),
        line: p.line,
        key: p.key.clone(),
        value: p.value.clone(),
    };
    let mut parts = p.value.split(':');
    let (Some(dc), Some(rack), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(invalid());
    };
    let (dc, rack) = (dc.trim(), rack.trim());
    if dc.is_empty() || rack.is_empty() {
        return Err(invalid());
    }
    Ok(Location::new(dc, rack))
}

fn parse_address(file: &Path, p: &Property) -> Result<IpAddr, SnitchError> {
    let key: String = p.key.trim().chars().filter(|&c| c != '/').collect();
    let bare = key.strip_prefix('[').and_then(|k| k.strip_suffix(']')).unwrap_or(&key);
    bare.parse::<IpAddr>()
        .or_else(|_| key.parse::<SocketAddr>().map(|sa| sa.ip()))
        .map(|ip| ip.to_canonical())
        .map_err(|_| SnitchError::InvalidAddress { file: file.to_path_buf(), line: p.line, value: p.key.clone() })
}
