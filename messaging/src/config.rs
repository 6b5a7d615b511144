//! Settings of the messaging service. The server fills them from its configuration; tests use
//! `NetConfig::new` and change what they need.

use std::time::Duration;

use crate::codec::MAX_CLUSTER_NAME_BYTES;
use crate::error::NetError;
use crate::verb::Verb;
use crate::Endpoint;

/// Longest timeout accepted for a verb, so deadlines never overflow and a typo (ms for s) shows.
pub const MAX_VERB_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

#[derive(Debug, Clone)]
pub struct NetConfig {
    /// Where this node listens and what it tells peers (its listen address and storage port).
    /// Port 0 takes a free port (tests); `MessagingService::local` says which.
    pub local: Endpoint,
    /// Peers with another cluster name are refused.
    pub cluster_name: String,
    /// Largest payload sent or accepted, in bytes; a peer sending more is disconnected.
    /// Default 64 MiB (a Thrift batch may be 15 MiB, and the mutation it becomes a bit more).
    pub max_message_bytes: usize,
    /// Messages waiting per peer connection; when full, sends fail with QueueFull. Default 4096.
    pub queue_capacity: usize,
    /// How long a request waits for its reply, and a queued message for its connection.
    pub timeouts: Timeouts,
    /// How long opening a connection (TCP connect) may take. Default 2 s.
    pub connect_timeout: Duration,
    /// Outbound connections leave from any address the kernel picks, not from `local`'s
    /// (Cassandra's `outbound_bind_any`). Default false.
    pub outbound_bind_any: bool,
}

impl NetConfig {
    /// Settings with the defaults for a node at `local` in cluster `cluster_name`.
    pub fn new(local: Endpoint, cluster_name: impl Into<String>) -> NetConfig {
        NetConfig {
            local,
            cluster_name: cluster_name.into(),
            max_message_bytes: 64 << 20,
            queue_capacity: 4096,
            timeouts: Timeouts::default(),
            connect_timeout: Duration::from_secs(2),
            outbound_bind_any: false,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), NetError> {
        let invalid = |field, detail: String| Err(NetError::InvalidConfig { field, detail });
        if self.local.ip().is_unspecified() {
            return Err(NetError::UnspecifiedAddress(self.local));
        }
        if self.cluster_name.len() > MAX_CLUSTER_NAME_BYTES {
            return invalid("cluster_name", format!("longer than {MAX_CLUSTER_NAME_BYTES} bytes"));
        }
        // The frame's length field is a u32.
        if self.max_message_bytes == 0 || u32::try_from(self.max_message_bytes).is_err() {
            return invalid("max_message_bytes", format!("{} is not in 1..=2^32-1", self.max_message_bytes));
        }
        if self.queue_capacity == 0 {
            return invalid("queue_capacity", "must be at least 1".into());
        }
        if self.connect_timeout.is_zero() || self.connect_timeout > MAX_VERB_TIMEOUT {
            return invalid("connect_timeout", format!("{:?} is not in (0, 24h]", self.connect_timeout));
        }
        for verb in Verb::ALL {
            let t = self.timeouts.for_verb(verb);
            if t.is_zero() || t > MAX_VERB_TIMEOUT {
                return invalid("timeouts", format!("{verb}: {t:?} is not in (0, 24h]"));
            }
        }
        Ok(())
    }
}

/// Per-verb timeouts, with Cassandra's defaults (cassandra.yaml `*_request_timeout_in_ms`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeouts {
    /// Read, ReadDigest. Default 5 s.
    pub read: Duration,
    /// RangeSlice, RangeDigest. Default 10 s.
    pub range: Duration,
    /// Mutation, Hint and the Paxos phases. Default 2 s.
    pub write: Duration,
    /// CounterMutation. Default 5 s.
    pub counter_write: Duration,
    /// Truncate. Default 60 s.
    pub truncate: Duration,
    /// Everything else: schema, gossip, echo. Default 10 s.
    pub request: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            read: Duration::from_secs(5),
            range: Duration::from_secs(10),
            write: Duration::from_secs(2),
            counter_write: Duration::from_secs(5),
            truncate: Duration::from_secs(60),
            request: Duration::from_secs(10),
        }
    }
}

impl Timeouts {
    /// The same timeout for every verb (tests).
    pub fn uniform(t: Duration) -> Timeouts {
        Timeouts { read: t, range: t, write: t, counter_write: t, truncate: t, request: t }
    }

    pub fn for_verb(&self, verb: Verb) -> Duration {
        match verb {
            Verb::Read | Verb::ReadDigest => self.read,
            Verb::RangeSlice | Verb::RangeDigest => self.range,
            Verb::Mutation
            | Verb::Hint
            | Verb::StoreHint
            | Verb::PaxosPrepare
            | Verb::PaxosPropose
            | Verb::PaxosCommit => self.write,
            Verb::CounterMutation => self.counter_write,
            Verb::Truncate => self.truncate,
            Verb::SchemaPull
            | Verb::SchemaPush
            | Verb::SchemaCheck
            | Verb::GossipSyn
            | Verb::GossipAck
            | Verb::GossipAck2
            | Verb::Echo => self.request,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> Endpoint {
        Endpoint::from(([127, 0, 0, 1], 7000))
    }

    #[test]
    fn defaults_are_valid_and_bad_values_are_named() {
        assert!(NetConfig::new(local(), "Test").validate().is_ok());

        let unspecified = NetConfig::new(Endpoint::from(([0, 0, 0, 0], 7000)), "Test");
        assert!(matches!(unspecified.validate(), Err(NetError::UnspecifiedAddress(_))));

        let mut c = NetConfig::new(local(), "Test");
        c.queue_capacity = 0;
        assert!(matches!(c.validate(), Err(NetError::InvalidConfig { field: "queue_capacity", .. })));

        let mut c = NetConfig::new(local(), "Test");
        c.timeouts.truncate = Duration::ZERO;
        assert!(matches!(c.validate(), Err(NetError::InvalidConfig { field: "timeouts", .. })));

        let mut c = NetConfig::new(local(), "x".repeat(MAX_CLUSTER_NAME_BYTES + 1));
        assert!(matches!(c.validate(), Err(NetError::InvalidConfig { field: "cluster_name", .. })));
        c.cluster_name = "Test".into();
        c.max_message_bytes = 0;
        assert!(matches!(c.validate(), Err(NetError::InvalidConfig { field: "max_message_bytes", .. })));
    }

    #[test]
    fn verbs_map_to_cassandras_timeouts() {
        let t = Timeouts::default();
        assert_eq!(t.for_verb(Verb::Mutation), Duration::from_secs(2));
        assert_eq!(t.for_verb(Verb::ReadDigest), Duration::from_secs(5));
        assert_eq!(t.for_verb(Verb::RangeSlice), Duration::from_secs(10));
        assert_eq!(t.for_verb(Verb::Truncate), Duration::from_secs(60));
        assert_eq!(t.for_verb(Verb::GossipSyn), Duration::from_secs(10));
    }
}
