//! ERROR bodies (spec §9): what the client sees for each failure, with the code and the extra
//! fields drivers read to choose their exception (and whether to retry).

use cluster::consistency::ConsistencyLevel;
use cluster::coordinator::CoordinatorError;
use cql::CqlError;
use tracing::warn;

use super::request::consistency_code;
use super::wire::Writer;
use crate::auth::AuthError;
use crate::cql_access::Refusal;

/// The kind of write that timed out (WriteTimeout's `writeType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteType {
    Simple,
    UnloggedBatch,
    Batch,
    Counter,
    Cas,
}

impl WriteType {
    fn name(self) -> &'static str {
        match self {
            WriteType::Simple => "SIMPLE",
            WriteType::UnloggedBatch => "UNLOGGED_BATCH",
            WriteType::Batch => "BATCH",
            WriteType::Counter => "COUNTER",
            WriteType::Cas => "CAS",
        }
    }
}

/// An error answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NativeError {
    /// 0x0000: a failure of the server itself (logged).
    Server(String),
    /// 0x000A: a frame or body that breaks the protocol.
    Protocol(String),
    /// 0x0100: a refused login.
    BadCredentials(String),
    /// 0x1000.
    Unavailable { cl: ConsistencyLevel, required: i32, alive: i32 },
    /// 0x1003.
    Truncate(String),
    /// 0x1100.
    WriteTimeout { message: String, cl: ConsistencyLevel, received: i32, block_for: i32, write_type: WriteType },
    /// 0x1200.
    ReadTimeout { message: String, cl: ConsistencyLevel, received: i32, block_for: i32, data_present: bool },
    /// 0x2000.
    Syntax(String),
    /// 0x2100.
    Unauthorized(String),
    /// 0x2200.
    Invalid(String),
    /// 0x2400: `table` empty for a keyspace.
    AlreadyExists { message: String, keyspace: String, table: String },
    /// 0x2500: the id asked for, which the client prepares again.
    Unprepared { id: Vec<u8> },
}

impl NativeError {
    pub fn code(&self) -> i32 {
        match self {
            NativeError::Server(_) => 0x0000,
            NativeError::Protocol(_) => 0x000A,
            NativeError::BadCredentials(_) => 0x0100,
            NativeError::Unavailable { .. } => 0x1000,
            NativeError::Truncate(_) => 0x1003,
            NativeError::WriteTimeout { .. } => 0x1100,
            NativeError::ReadTimeout { .. } => 0x1200,
            NativeError::Syntax(_) => 0x2000,
            NativeError::Unauthorized(_) => 0x2100,
            NativeError::Invalid(_) => 0x2200,
            NativeError::AlreadyExists { .. } => 0x2400,
            NativeError::Unprepared { .. } => 0x2500,
        }
    }

    pub fn message(&self) -> String {
        match self {
            NativeError::Server(m)
            | NativeError::Protocol(m)
            | NativeError::BadCredentials(m)
            | NativeError::Truncate(m)
            | NativeError::Syntax(m)
            | NativeError::Unauthorized(m)
            | NativeError::Invalid(m) => m.clone(),
            NativeError::WriteTimeout { message, .. }
            | NativeError::ReadTimeout { message, .. }
            | NativeError::AlreadyExists { message, .. } => message.clone(),
            NativeError::Unavailable { cl, required, alive } => {
                format!("Cannot achieve consistency level {cl}: {required} replica(s) required, {alive} alive")
            }
            NativeError::Unprepared { id } => format!(
                "Prepared query with ID {} not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)",
                hex(id)
            ),
        }
    }

    /// The ERROR message's body.
    pub fn body(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.put_int(self.code());
        out.put_string(&self.message());
        match self {
            NativeError::Unavailable { cl, required, alive } => {
                out.put_short(consistency_code(*cl));
                out.put_int(*required);
                out.put_int(*alive);
            }
            NativeError::WriteTimeout { cl, received, block_for, write_type, .. } => {
                out.put_short(consistency_code(*cl));
                out.put_int(*received);
                out.put_int(*block_for);
                out.put_string(write_type.name());
            }
            NativeError::ReadTimeout { cl, received, block_for, data_present, .. } => {
                out.put_short(consistency_code(*cl));
                out.put_int(*received);
                out.put_int(*block_for);
                out.push(u8::from(*data_present));
            }
            NativeError::AlreadyExists { keyspace, table, .. } => {
                out.put_string(keyspace);
                out.put_string(table);
            }
            NativeError::Unprepared { id } => out.put_short_bytes(id),
            _ => {}
        }
        out
    }

    /// A statement's failure, `cl` being the level it ran at and `write` what kind of write
    /// it was (None for a read).
    pub fn from_cql(e: CqlError, cl: ConsistencyLevel, write: Option<WriteType>) -> NativeError {
        match e {
            CqlError::Syntax(s) => NativeError::Syntax(s.to_string()),
            CqlError::Invalid(why) => NativeError::Invalid(why),
            CqlError::AlreadyExists { keyspace, table, message } => {
                NativeError::AlreadyExists { message, keyspace, table }
            }
            CqlError::Coordinator(c) => NativeError::from_coordinator(c, cl, write),
        }
    }

    fn from_coordinator(e: CoordinatorError, cl: ConsistencyLevel, write: Option<WriteType>) -> NativeError {
        let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
        match e {
            CoordinatorError::Unavailable { cl, required, alive } => {
                NativeError::Unavailable { cl, required: count(required), alive: count(alive) }
            }
            CoordinatorError::Timeout { operation, received, required, .. } => {
                let message = e.to_string();
                // The coordinator names its operation; writes are those the statement made
                // (a read inside a write, such as a CAS's, still times out as a write).
                match timed_out_write(operation, write) {
                    Some(write_type) => {
                        if operation == "truncate" {
                            return NativeError::Truncate(message);
                        }
                        NativeError::WriteTimeout {
                            message,
                            cl,
                            received: count(received),
                            block_for: count(required),
                            write_type,
                        }
                    }
                    None => NativeError::ReadTimeout {
                        message,
                        cl,
                        received: count(received),
                        block_for: count(required),
                        data_present: false,
                    },
                }
            }
            // 3.11 answers a replica's failure to Thrift clients as a timeout; native
            // clients get the same, as there is no count of failures to give.
            CoordinatorError::ReplicaFailure { operation, .. } => {
                let message = e.to_string();
                match timed_out_write(operation, write) {
                    Some(write_type) => {
                        NativeError::WriteTimeout { message, cl, received: 0, block_for: 1, write_type }
                    }
                    None => NativeError::ReadTimeout { message, cl, received: 0, block_for: 1, data_present: false },
                }
            }
            CoordinatorError::Invalid(why) => NativeError::Invalid(why),
            CoordinatorError::Storage(e) => {
                warn!(error = %e, "storage error answering a native protocol request");
                NativeError::Server(e.to_string())
            }
        }
    }
}

/// The write type of a timed-out `operation`, or None for a read.
fn timed_out_write(operation: &str, write: Option<WriteType>) -> Option<WriteType> {
    match operation {
        "read" | "range read" | "index query" | "serial read" | "read repair" if write.is_none() => None,
        "counter write" => Some(WriteType::Counter),
        "cas" | "cas prepare" | "cas commit" => Some(WriteType::Cas),
        _ => Some(write.unwrap_or(WriteType::Simple)),
    }
}

impl From<Refusal> for NativeError {
    fn from(r: Refusal) -> NativeError {
        match r {
            Refusal::Auth(AuthError::BadCredentials(m)) => NativeError::BadCredentials(m),
            Refusal::Auth(AuthError::NotAuthorized(m)) => NativeError::Unauthorized(m),
            Refusal::Auth(AuthError::NotLoggedIn) => NativeError::Unauthorized("You have not logged in".into()),
            Refusal::Reserved(m) => NativeError::Unauthorized(m),
        }
    }
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::wire::Reader;

    #[test]
    fn timeouts_carry_their_counts_and_kind() {
        let e = CoordinatorError::Timeout {
            operation: "write",
            waited: std::time::Duration::from_secs(2),
            received: 1,
            required: 2,
        };
        let native = NativeError::from_cql(CqlError::Coordinator(e), ConsistencyLevel::Quorum, Some(WriteType::Simple));
        let body = native.body();
        let mut r = Reader::new(&body);
        assert_eq!(r.int(), Ok(0x1100));
        assert!(r.string().expect("message").contains("timed out"));
        assert_eq!(r.short(), Ok(4));
        assert_eq!((r.int(), r.int()), (Ok(1), Ok(2)));
        assert_eq!(r.string(), Ok("SIMPLE"));
        assert!(r.finish("error").is_ok());

        let read = CoordinatorError::Timeout {
            operation: "range read",
            waited: std::time::Duration::from_secs(2),
            received: 0,
            required: 1,
        };
        assert!(matches!(
            NativeError::from_cql(CqlError::Coordinator(read), ConsistencyLevel::One, None),
            NativeError::ReadTimeout { received: 0, block_for: 1, data_present: false, .. }
        ));
    }

    #[test]
    fn unprepared_names_the_id() {
        let body = NativeError::Unprepared { id: vec![0xAB; 16] }.body();
        let mut r = Reader::new(&body);
        assert_eq!(r.int(), Ok(0x2500));
        assert!(r.string().expect("message").contains(&"ab".repeat(16)));
        assert_eq!(r.short_bytes(), Ok(&[0xAB; 16][..]));
    }
}
