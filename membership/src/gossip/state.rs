//! What gossip knows about one endpoint (Cassandra's `HeartBeatState`, `VersionedValue`,
//! `ApplicationState` and `EndpointState`), and the STATUS values with their helper enum.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Instant;

/// A node's incarnation and its progress within it. The generation is chosen at start-up (seconds
/// since the epoch, always above the previous one) so a restart is recognised; the version is the
/// node's version counter at its latest heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HeartBeatState {
    pub generation: i32,
    pub version: i32,
}

/// One application state's value and the version it was set at, taken from the owner's single
/// version counter, so every change of every state of a node is ordered.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VersionedValue {
    pub value: String,
    pub version: i32,
}

/// The kinds of state a node gossips about itself. The numbers go on the wire; they are
/// Cassandra 3.11's ordinals, so the two can be compared side by side. A number we do not know
/// (a newer node's state) is skipped when decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum ApplicationState {
    /// NORMAL, BOOT, LEAVING, LEFT... see [`Status`].
    Status = 0,
    /// Bytes of data on disk, as a decimal number.
    Load = 1,
    /// The schema version (a UUID); nodes that differ pull the schema.
    SchemaVersion = 2,
    Dc = 3,
    Rack = 4,
    ReleaseVersion = 5,
    /// The host id of the node coordinating a removenode of this one.
    RemovalCoordinator = 6,
    /// The address to prefer inside a data centre (Ec2MultiRegionSnitch and friends).
    InternalIp = 7,
    /// The Thrift `address:port` clients use.
    RpcAddress = 8,
    /// The dynamic snitch's badness of this node (I/O wait).
    Severity = 10,
    /// The internode messaging version.
    NetVersion = 11,
    /// The node's host id (a UUID), stable across restarts and address changes.
    HostId = 12,
    /// The node's tokens.
    Tokens = 13,
    /// Whether the Thrift server accepts clients ("true"/"false").
    RpcReady = 14,
}

impl ApplicationState {
    pub const ALL: [ApplicationState; 14] = [
        ApplicationState::Status,
        ApplicationState::Load,
        ApplicationState::SchemaVersion,
        ApplicationState::Dc,
        ApplicationState::Rack,
        ApplicationState::ReleaseVersion,
        ApplicationState::RemovalCoordinator,
        ApplicationState::InternalIp,
        ApplicationState::RpcAddress,
        ApplicationState::Severity,
        ApplicationState::NetVersion,
        ApplicationState::HostId,
        ApplicationState::Tokens,
        ApplicationState::RpcReady,
    ];

    /// Cassandra's name of the state, for logs and tools.
    pub fn name(self) -> &'static str {
        match self {
            ApplicationState::Status => "STATUS",
            ApplicationState::Load => "LOAD",
            ApplicationState::SchemaVersion => "SCHEMA",
            ApplicationState::Dc => "DC",
            ApplicationState::Rack => "RACK",
            ApplicationState::ReleaseVersion => "RELEASE_VERSION",
            ApplicationState::RemovalCoordinator => "REMOVAL_COORDINATOR",
            ApplicationState::InternalIp => "INTERNAL_IP",
            ApplicationState::RpcAddress => "RPC_ADDRESS",
            ApplicationState::Severity => "SEVERITY",
            ApplicationState::NetVersion => "NET_VERSION",
            ApplicationState::HostId => "HOST_ID",
            ApplicationState::Tokens => "TOKENS",
            ApplicationState::RpcReady => "RPC_READY",
        }
    }
}

impl TryFrom<u8> for ApplicationState {
    type Error = u8;

    fn try_from(n: u8) -> Result<Self, u8> {
        ApplicationState::ALL.into_iter().find(|s| *s as u8 == n).ok_or(n)
    }
}

impl fmt::Display for ApplicationState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything this node knows about one endpoint (itself included).
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointState {
    pub heartbeat: HeartBeatState,
    pub states: BTreeMap<ApplicationState, VersionedValue>,
    /// Whether we consider it up. Always true for the local node.
    pub alive: bool,
    /// When its heartbeat or states last changed here.
    pub last_update: Instant,
}

impl EndpointState {
    pub fn new(heartbeat: HeartBeatState, now: Instant) -> Self {
        EndpointState { heartbeat, states: BTreeMap::new(), alive: false, last_update: now }
    }

    /// The highest version among the heartbeat and every state: what a digest advertises.
    pub fn max_version(&self) -> i32 {
        self.states.values().map(|v| v.version).fold(self.heartbeat.version, i32::max)
    }

    /// The value of `state`, if known.
    pub fn value(&self, state: ApplicationState) -> Option<&str> {
        self.states.get(&state).map(|v| v.value.as_str())
    }

    /// The parsed STATUS, or `None` if there is none or it is not one we know.
    pub fn status(&self) -> Option<Status> {
        self.value(ApplicationState::Status).and_then(|s| s.parse().ok())
    }

    /// Whether the STATUS says the node is gone for good or on purpose (Cassandra's
    /// `isDeadState`): it is not marked alive when heard of.
    pub fn is_dead_state(&self) -> bool {
        self.status().is_some_and(|s| s.is_dead_state())
    }

    /// Whether the node announced its shutdown.
    pub fn is_shutdown(&self) -> bool {
        matches!(self.status(), Some(Status::Shutdown))
    }
}

/// The STATUS values, written as strings the way Cassandra writes them: the status name, then
/// comma-separated pieces. Cassandra puts a token before the expiry of LEFT and removed; we carry
/// tokens in [`ApplicationState::Tokens`] instead, and when parsing take the last piece as the
/// expiry, so both shapes are understood. Pieces we do not use are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// A full member of the ring.
    Normal,
    /// Bootstrapping: receiving its ranges before joining.
    Boot,
    /// Decommissioning: streaming its ranges away.
    Leaving,
    /// Moving to the token written after the name (`MOVING,<token>`, see [`Status::moving_to`]):
    /// taking the ranges of its new place and giving up those of its old one.
    Moving,
    /// Gone after a decommission; peers forget it at `expire_at_ms` (milliseconds since the Unix
    /// epoch, wall clock, because the value travels between nodes).
    Left { expire_at_ms: u64 },
    /// Being removed by another node's removenode.
    Removing,
    /// Removed by removenode; forgotten at `expire_at_ms` like [`Status::Left`].
    Removed { expire_at_ms: u64 },
    /// Replacing a dead node: must not be seen as alive yet.
    Hibernate,
    /// Announced its own shutdown; down until it restarts with a new generation.
    Shutdown,
}

/// A STATUS value that is not one of [`Status`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusError {
    #[error("unknown gossip status {0:?}")]
    Unknown(String),
    #[error("gossip status {status:?} lacks a valid expiry time in {value:?}")]
    BadExpiry { status: &'static str, value: String },
}

impl Status {
    pub const NORMAL: &'static str = "NORMAL";
    pub const BOOT: &'static str = "BOOT";
    pub const LEAVING: &'static str = "LEAVING";
    pub const MOVING: &'static str = "MOVING";
    pub const LEFT: &'static str = "LEFT";
    pub const REMOVING: &'static str = "removing";
    pub const REMOVED: &'static str = "removed";
    pub const HIBERNATE: &'static str = "hibernate";
    pub const SHUTDOWN: &'static str = "shutdown";

    /// The status name, without pieces.
    pub fn name(self) -> &'static str {
        match self {
            Status::Normal => Status::NORMAL,
            Status::Boot => Status::BOOT,
            Status::Leaving => Status::LEAVING,
            Status::Moving => Status::MOVING,
            Status::Left { .. } => Status::LEFT,
            Status::Removing => Status::REMOVING,
            Status::Removed { .. } => Status::REMOVED,
            Status::Hibernate => Status::HIBERNATE,
            Status::Shutdown => Status::SHUTDOWN,
        }
    }

    /// The STATUS value of a node moving to `token` (a token string).
    pub fn moving(token: &str) -> String {
        format!("{},{token}", Status::MOVING)
    }

    /// The token string of a `MOVING,<token>` STATUS value; `None` for any other status. The
    /// token is everything after the first comma (an order-preserving token may hold commas).
    pub fn moving_to(value: &str) -> Option<&str> {
        value.strip_prefix(Status::MOVING)?.strip_prefix(',').filter(|t| !t.is_empty())
    }

    /// Cassandra's dead states: a node in one is known but never marked alive.
    pub fn is_dead_state(self) -> bool {
        matches!(self, Status::Left { .. } | Status::Removing | Status::Removed { .. } | Status::Hibernate)
    }

    /// When peers may forget the node, for the states that say so.
    pub fn expire_at_ms(self) -> Option<u64> {
        match self {
            Status::Left { expire_at_ms } | Status::Removed { expire_at_ms } => Some(expire_at_ms),
            _ => None,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Left { expire_at_ms } | Status::Removed { expire_at_ms } => {
                write!(f, "{},{expire_at_ms}", self.name())
            }
            // Cassandra writes these with a ",true" piece.
            Status::Hibernate | Status::Shutdown => write!(f, "{},true", self.name()),
            _ => f.write_str(self.name()),
        }
    }
}

impl std::str::FromStr for Status {
    type Err = StatusError;

    fn from_str(value: &str) -> Result<Self, StatusError> {
        let mut pieces = value.split(',');
        let name = pieces.next().unwrap_or_default();
        let expiry = |status: &'static str| {
            value
                .rsplit(',')
                .next()
                .filter(|_| value.contains(','))
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or_else(|| StatusError::BadExpiry { status, value: value.to_owned() })
        };
        Ok(match name {
            Status::NORMAL => Status::Normal,
            Status::BOOT => Status::Boot,
            Status::LEAVING => Status::Leaving,
            Status::MOVING => Status::Moving,
            Status::LEFT => Status::Left { expire_at_ms: expiry(Status::LEFT)? },
            Status::REMOVING => Status::Removing,
            Status::REMOVED => Status::Removed { expire_at_ms: expiry(Status::REMOVED)? },
            Status::HIBERNATE => Status::Hibernate,
            Status::SHUTDOWN => Status::Shutdown,
            _ => return Err(StatusError::Unknown(value.to_owned())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_state_numbers_round_trip_and_unknown_is_refused() {
        for s in ApplicationState::ALL {
            assert_eq!(ApplicationState::try_from(s as u8), Ok(s));
        }
        assert_eq!(ApplicationState::try_from(9), Err(9));
        assert_eq!(ApplicationState::try_from(15), Err(15));
        assert_eq!(ApplicationState::RpcAddress as u8, 8);
        assert_eq!(ApplicationState::Tokens.to_string(), "TOKENS");
    }

    #[test]
    fn status_strings_round_trip() {
        let all = [
            Status::Normal,
            Status::Boot,
            Status::Leaving,
            Status::Left { expire_at_ms: 1_700_000_000_000 },
            Status::Removing,
            Status::Removed { expire_at_ms: 5 },
            Status::Hibernate,
            Status::Shutdown,
        ];
        for s in all {
            assert_eq!(s.to_string().parse::<Status>(), Ok(s), "{s}");
        }
        assert_eq!(Status::Left { expire_at_ms: 42 }.to_string(), "LEFT,42");
        assert_eq!(Status::Shutdown.to_string(), "shutdown,true");
    }

    #[test]
    fn status_parses_cassandra_shapes() {
        assert_eq!("NORMAL,-9223372036854775808".parse(), Ok(Status::Normal));
        assert_eq!("LEFT,1234,99".parse(), Ok(Status::Left { expire_at_ms: 99 }));
        assert_eq!("shutdown".parse(), Ok(Status::Shutdown));
        assert_eq!("bogus".parse::<Status>(), Err(StatusError::Unknown("bogus".into())));
        assert!(matches!("LEFT".parse::<Status>(), Err(StatusError::BadExpiry { .. })));
        assert!(matches!("LEFT,soon".parse::<Status>(), Err(StatusError::BadExpiry { .. })));
        assert_eq!(Status::moving("-42").parse(), Ok(Status::Moving));
        assert_eq!(Status::moving_to(&Status::moving("a,b")), Some("a,b"));
        assert_eq!(Status::moving_to("MOVING"), None);
        assert_eq!(Status::moving_to("NORMAL,5"), None);
        assert!(Status::Left { expire_at_ms: 1 }.is_dead_state());
        assert!(!Status::Shutdown.is_dead_state());
        assert!(!Status::Leaving.is_dead_state());
    }

    #[test]
    fn max_version_covers_heartbeat_and_states() {
        let now = Instant::now();
        let mut state = EndpointState::new(HeartBeatState { generation: 1, version: 7 }, now);
        assert_eq!(state.max_version(), 7);
        state.states.insert(ApplicationState::Load, VersionedValue { value: "1".into(), version: 3 });
        assert_eq!(state.max_version(), 7);
        state.states.insert(ApplicationState::Status, VersionedValue { value: "LEAVING".into(), version: 9 });
        assert_eq!(state.max_version(), 9);
        assert_eq!(state.status(), Some(Status::Leaving));
        assert!(!state.is_dead_state());
    }
}
