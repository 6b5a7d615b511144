//! Consistency levels: how many replicas must answer a read or acknowledge a write
//! (Cassandra's `db.ConsistencyLevel`).

use std::fmt;

/// A client's consistency level, as Cassandra defines them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConsistencyLevel {
    Any,
    One,
    Two,
    Three,
    Quorum,
    All,
    LocalQuorum,
    EachQuorum,
    Serial,
    LocalSerial,
    LocalOne,
}

impl ConsistencyLevel {
    pub fn name(self) -> &'static str {
        match self {
            ConsistencyLevel::Any => "ANY",
            ConsistencyLevel::One => "ONE",
            ConsistencyLevel::Two => "TWO",
            ConsistencyLevel::Three => "THREE",
            ConsistencyLevel::Quorum => "QUORUM",
            ConsistencyLevel::All => "ALL",
            ConsistencyLevel::LocalQuorum => "LOCAL_QUORUM",
            ConsistencyLevel::EachQuorum => "EACH_QUORUM",
            ConsistencyLevel::Serial => "SERIAL",
            ConsistencyLevel::LocalSerial => "LOCAL_SERIAL",
            ConsistencyLevel::LocalOne => "LOCAL_ONE",
        }
    }

    /// The level named `name` (as [`ConsistencyLevel::name`] spells it).
    pub fn from_name(name: &str) -> Option<ConsistencyLevel> {
        use ConsistencyLevel as CL;
        [CL::Any, CL::One, CL::Two, CL::Three, CL::Quorum, CL::All, CL::LocalQuorum, CL::EachQuorum]
            .into_iter()
            .chain([CL::Serial, CL::LocalSerial, CL::LocalOne])
            .find(|cl| cl.name() == name)
    }

    /// Levels that count only replicas in the coordinator's data centre.
    pub fn is_datacenter_local(self) -> bool {
        matches!(self, ConsistencyLevel::LocalQuorum | ConsistencyLevel::LocalOne | ConsistencyLevel::LocalSerial)
    }

    /// Refuses levels a read cannot use, with Cassandra's reasons. EACH_QUORUM reads a quorum
    /// in every data centre, as Cassandra does since 3.0 (CASSANDRA-9602); 2.x refused it.
    pub fn validate_for_read(self) -> Result<(), String> {
        match self {
            ConsistencyLevel::Any => Err("ANY ConsistencyLevel is only supported for writes".into()),
            // Serial reads of one partition go through Paxos (coordinator's cas module).
            _ => Ok(()),
        }
    }

    /// SERIAL and LOCAL_SERIAL: the levels of Paxos rounds (cas and serial reads).
    pub fn is_serial(self) -> bool {
        matches!(self, ConsistencyLevel::Serial | ConsistencyLevel::LocalSerial)
    }

    /// Refuses levels a plain write cannot use, with Cassandra's reasons.
    pub fn validate_for_write(self) -> Result<(), String> {
        match self {
            ConsistencyLevel::Serial | ConsistencyLevel::LocalSerial => {
                Err("You must use conditional updates for serializable writes".into())
            }
            _ => Ok(()),
        }
    }

    /// Replicas that must answer, given the keyspace's replication factor in total and in the
    /// coordinator's data centre. ANY needs one acknowledgement, which a hint may give.
    pub fn block_for(self, total_rf: usize, local_dc_rf: usize) -> usize {
        match self {
            ConsistencyLevel::Any | ConsistencyLevel::One | ConsistencyLevel::LocalOne => 1,
            ConsistencyLevel::Two => 2,
            ConsistencyLevel::Three => 3,
            ConsistencyLevel::Quorum | ConsistencyLevel::Serial | ConsistencyLevel::EachQuorum => quorum(total_rf),
            ConsistencyLevel::LocalQuorum | ConsistencyLevel::LocalSerial => quorum(local_dc_rf),
            ConsistencyLevel::All => total_rf,
        }
    }
}

/// A majority of `rf` replicas.
pub fn quorum(rf: usize) -> usize {
    rf / 2 + 1
}

impl fmt::Display for ConsistencyLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_for_follows_cassandra() {
        use ConsistencyLevel as CL;
        assert_eq!(CL::Quorum.block_for(3, 3), 2);
        assert_eq!(CL::Quorum.block_for(1, 1), 1);
        assert_eq!(CL::Quorum.block_for(4, 4), 3);
        assert_eq!(CL::LocalQuorum.block_for(6, 3), 2);
        assert_eq!(CL::All.block_for(3, 3), 3);
        assert_eq!(CL::Any.block_for(3, 3), 1);
        assert_eq!(CL::Three.block_for(1, 1), 3);
    }

    #[test]
    fn levels_a_read_or_write_cannot_use_are_refused() {
        use ConsistencyLevel as CL;
        assert!(CL::Any.validate_for_read().is_err());
        assert!(CL::EachQuorum.validate_for_read().is_ok());
        assert!(CL::Serial.validate_for_write().is_err());
        assert!(CL::Any.validate_for_write().is_ok());
        assert!(CL::LocalOne.validate_for_read().is_ok());
    }
}
