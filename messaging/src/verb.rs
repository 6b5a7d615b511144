//! The verbs nodes say to each other (Cassandra's `MessagingService.Verb`).
//!
//! Each verb has a fixed number on the wire; numbers are never reused or renumbered, a new verb
//! takes the next free number and a new protocol version. A response carries the verb of the
//! request it answers and the RESPONSE flag (see `codec`), so there is no response verb.

use std::fmt;

use crate::error::UnknownVerb;

/// What a message asks of its receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Verb {
    /// Apply a row mutation (a replica write).
    Mutation = 1,
    /// Read rows and return their data.
    Read = 2,
    /// Read rows and return only a digest of their data.
    ReadDigest = 3,
    /// Read a token range of rows.
    RangeSlice = 4,
    /// Truncate a column family.
    Truncate = 5,
    /// Ask a peer for its schema.
    SchemaPull = 6,
    /// Push schema changes to a peer.
    SchemaPush = 7,
    /// Gossip round, first message: the sender's digests.
    GossipSyn = 8,
    /// Gossip round, the answer to a SYN.
    GossipAck = 9,
    /// Gossip round, the answer to an ACK.
    GossipAck2 = 10,
    /// Deliver a hinted mutation to the replica it was meant for.
    Hint = 11,
    /// Apply a counter mutation on a replica that leads it.
    CounterMutation = 12,
    /// Paxos round, phase 1.
    PaxosPrepare = 13,
    /// Paxos round, phase 2.
    PaxosPropose = 14,
    /// Paxos round, commit.
    PaxosCommit = 15,
    /// Are you alive? (answered with an empty payload)
    Echo = 16,
    /// What is your schema version? (describe_schema_versions asks every live node)
    SchemaCheck = 17,
    /// Keep a hint for another node and replay it once that node is up (a leaving node hands
    /// its hints over).
    StoreHint = 18,
    /// Digest a column family's partitions over key bounds (repair compares replicas with it).
    RangeDigest = 19,
}

impl Verb {
    /// Every verb, in wire-number order.
    pub const ALL: [Verb; 19] = [
        Verb::Mutation,
        Verb::Read,
        Verb::ReadDigest,
        Verb::RangeSlice,
        Verb::Truncate,
        Verb::SchemaPull,
        Verb::SchemaPush,
        Verb::GossipSyn,
        Verb::GossipAck,
        Verb::GossipAck2,
        Verb::Hint,
        Verb::CounterMutation,
        Verb::PaxosPrepare,
        Verb::PaxosPropose,
        Verb::PaxosCommit,
        Verb::Echo,
        Verb::SchemaCheck,
        Verb::StoreHint,
        Verb::RangeDigest,
    ];

    /// The verb's number on the wire.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Cassandra's name for the verb, for logs.
    pub fn name(self) -> &'static str {
        match self {
            Verb::Mutation => "MUTATION",
            Verb::Read => "READ",
            Verb::ReadDigest => "READ_DIGEST",
            Verb::RangeSlice => "RANGE_SLICE",
            Verb::Truncate => "TRUNCATE",
            Verb::SchemaPull => "SCHEMA_PULL",
            Verb::SchemaPush => "SCHEMA_PUSH",
            Verb::GossipSyn => "GOSSIP_DIGEST_SYN",
            Verb::GossipAck => "GOSSIP_DIGEST_ACK",
            Verb::GossipAck2 => "GOSSIP_DIGEST_ACK2",
            Verb::Hint => "HINT",
            Verb::CounterMutation => "COUNTER_MUTATION",
            Verb::PaxosPrepare => "PAXOS_PREPARE",
            Verb::PaxosPropose => "PAXOS_PROPOSE",
            Verb::PaxosCommit => "PAXOS_COMMIT",
            Verb::Echo => "ECHO",
            Verb::SchemaCheck => "SCHEMA_CHECK",
            Verb::StoreHint => "STORE_HINT",
            Verb::RangeDigest => "RANGE_DIGEST",
        }
    }

    /// Which of a peer's two connections carries this verb (requests and their responses alike).
    pub fn connection(self) -> ConnectionKind {
        match self {
            Verb::GossipSyn | Verb::GossipAck | Verb::GossipAck2 | Verb::Echo => ConnectionKind::Gossip,
            _ => ConnectionKind::Small,
        }
    }
}

impl TryFrom<u8> for Verb {
    type Error = UnknownVerb;

    fn try_from(code: u8) -> Result<Verb, UnknownVerb> {
        // Codes start at 1, so ALL[code - 1] is the verb; 0 and anything past the end is unknown.
        usize::from(code).checked_sub(1).and_then(|i| Verb::ALL.get(i).copied()).ok_or(UnknownVerb(code))
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The two outbound connections a node keeps to each peer. Gossip (and echo) get their own so that
/// a queue of large mutations never delays a heartbeat: a late heartbeat makes the failure
/// detector convict a live node. (Cassandra kept a separate gossip/ack connection for the same
/// reason.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ConnectionKind {
    Small = 0,
    Gossip = 1,
}

impl ConnectionKind {
    pub fn name(self) -> &'static str {
        match self {
            ConnectionKind::Small => "small",
            ConnectionKind::Gossip => "gossip",
        }
    }
}

impl TryFrom<u8> for ConnectionKind {
    type Error = u8;

    fn try_from(code: u8) -> Result<ConnectionKind, u8> {
        match code {
            0 => Ok(ConnectionKind::Small),
            1 => Ok(ConnectionKind::Gossip),
            other => Err(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_and_numbers_are_fixed() {
        for (i, verb) in Verb::ALL.iter().enumerate() {
            assert_eq!(usize::from(verb.code()), i + 1, "{verb} is out of order in ALL");
            assert_eq!(Verb::try_from(verb.code()), Ok(*verb));
        }
        // Pinned numbers: changing one breaks every mixed-version cluster.
        assert_eq!(Verb::Mutation.code(), 1);
        assert_eq!(Verb::GossipSyn.code(), 8);
        assert_eq!(Verb::Echo.code(), 16);
        assert_eq!(Verb::StoreHint.code(), 18);
        assert_eq!(Verb::RangeDigest.code(), 19);
    }

    #[test]
    fn unknown_codes_are_errors() {
        assert_eq!(Verb::try_from(0), Err(UnknownVerb(0)));
        assert_eq!(Verb::try_from(20), Err(UnknownVerb(20)));
        assert_eq!(Verb::try_from(255), Err(UnknownVerb(255)));
    }

    #[test]
    fn gossip_verbs_use_the_gossip_connection() {
        assert_eq!(Verb::GossipAck2.connection(), ConnectionKind::Gossip);
        assert_eq!(Verb::Echo.connection(), ConnectionKind::Gossip);
        assert_eq!(Verb::Mutation.connection(), ConnectionKind::Small);
    }
}
