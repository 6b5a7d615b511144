//! What a Thrift client sees when a request fails: one of the API's declared exceptions, or a
//! `TApplicationException` for what no method declares (an internal error).

use cluster::coordinator::CoordinatorError;
use storage::StorageError;
use thrift_idl as t;

/// A failed request, as the client will see it. [`super::dispatch`] puts each variant in the
/// exception field the method declares for it; a variant the method does not declare becomes a
/// `TApplicationException` (INTERNAL_ERROR) with the message.
#[derive(Debug, Clone, PartialEq)]
pub enum ThriftError {
    /// InvalidRequestException: the request is wrong; `why` names the problem.
    Invalid(String),
    NotFound,
    Unavailable,
    /// TimedOutException; for writes, how many replicas acknowledged in time; for a cas, that
    /// its Paxos round may still be finished (`paxos_in_progress`, as 3.11 sets it).
    TimedOut {
        acknowledged_by: Option<i32>,
        paxos_in_progress: Option<bool>,
    },
    /// AuthenticationException (login only).
    Authentication(String),
    /// AuthorizationException (login only; elsewhere a refusal is InvalidRequestException).
    Authorization(String),
    SchemaDisagreement,
    /// Not the client's fault: an I/O error, corruption, a node shutting down.
    Internal(String),
}

pub type TResult<T> = Result<T, ThriftError>;

/// Shorthand for the most common error.
pub fn ire(why: impl Into<String>) -> ThriftError {
    ThriftError::Invalid(why.into())
}

pub fn not_supported(what: &str) -> ThriftError {
    ire(format!("{what} is not supported yet"))
}

impl From<StorageError> for ThriftError {
    /// Schema and marshal problems are the client's; I/O, corruption and shutdown are not, and
    /// are logged. A keyspace that does not exist is named as 3.11's ThriftValidation names it
    /// for a request against a column family (a session keyspace dropped since set_keyspace,
    /// an update of a column family): without quotes, unlike set_keyspace's own refusal.
    fn from(e: StorageError) -> ThriftError {
        match e {
            StorageError::UnknownKeyspace(k) => ire(format!("Keyspace {k} does not exist")),
            StorageError::UnknownColumnFamily { cf, .. } => ire(format!("unconfigured table {cf}")),
            // 3.11's ThriftValidation.validateKeyspaceNotYetExisting.
            StorageError::KeyspaceExists { name, existing } => ire(format!(
                "Keyspace names must be case-insensitively unique (\"{name}\" conflicts with \"{existing}\")"
            )),
            StorageError::ColumnFamilyExists { keyspace, cf } => {
                ire(format!("Cannot add already existing table \"{cf}\" to keyspace \"{keyspace}\""))
            }
            StorageError::InvalidSchema(m) => ire(m),
            StorageError::Marshal(m) => ire(m.to_string()),
            StorageError::Dht(d) => ire(d.to_string()),
            // As when Cassandra's writers block on a flush queue that does not drain: the client
            // times out, and may retry on another node. The engine logs each failed flush.
            e @ StorageError::FlushFailing { .. } => {
                tracing::debug!(error = %e, "write refused");
                ThriftError::TimedOut { acknowledged_by: None, paxos_in_progress: None }
            }
            other => {
                tracing::error!(error = %other, "request failed in the storage engine");
                ThriftError::Internal(other.to_string())
            }
        }
    }
}

impl From<CoordinatorError> for ThriftError {
    fn from(e: CoordinatorError) -> ThriftError {
        match e {
            CoordinatorError::Unavailable { .. } => ThriftError::Unavailable,
            CoordinatorError::Timeout { received, operation, .. } => {
                let cas = operation.starts_with("cas");
                ThriftError::TimedOut {
                    acknowledged_by: (operation == "write" || cas).then(|| i32::try_from(received).unwrap_or(i32::MAX)),
                    paxos_in_progress: cas.then_some(true),
                }
            }
            CoordinatorError::Invalid(why) => ThriftError::Invalid(why),
            // Thrift has no failure exception: Cassandra 3.11 answers a replica's failure with
            // TimedOutException too. The reason is in the log.
            CoordinatorError::ReplicaFailure { operation, endpoint, reason } => {
                tracing::warn!(operation, %endpoint, %reason, "a replica failed a request");
                ThriftError::TimedOut { acknowledged_by: None, paxos_in_progress: None }
            }
            CoordinatorError::Storage(e) => e.into(),
        }
    }
}

/// The declared exception for each field name a method's result struct may have; `None` when
/// the error is of another kind. Used by [`super::dispatch`]'s method table.
pub(super) mod declared {
    use super::*;

    pub fn ire(e: &ThriftError) -> Option<t::InvalidRequestException> {
        match e {
            ThriftError::Invalid(why) => Some(t::InvalidRequestException::new(why.clone())),
            _ => None,
        }
    }

    pub fn nfe(e: &ThriftError) -> Option<t::NotFoundException> {
        matches!(e, ThriftError::NotFound).then(t::NotFoundException::new)
    }

    pub fn ue(e: &ThriftError) -> Option<t::UnavailableException> {
        matches!(e, ThriftError::Unavailable).then(t::UnavailableException::new)
    }

    pub fn te(e: &ThriftError) -> Option<t::TimedOutException> {
        match e {
            ThriftError::TimedOut { acknowledged_by, paxos_in_progress } => Some(t::TimedOutException {
                acknowledged_by: *acknowledged_by,
                acknowledged_by_batchlog: None,
                paxos_in_progress: *paxos_in_progress,
            }),
            _ => None,
        }
    }

    pub fn authnx(e: &ThriftError) -> Option<t::AuthenticationException> {
        match e {
            ThriftError::Authentication(why) => Some(t::AuthenticationException::new(why.clone())),
            _ => None,
        }
    }

    pub fn authzx(e: &ThriftError) -> Option<t::AuthorizationException> {
        match e {
            ThriftError::Authorization(why) => Some(t::AuthorizationException::new(why.clone())),
            _ => None,
        }
    }

    pub fn sde(e: &ThriftError) -> Option<t::SchemaDisagreementException> {
        matches!(e, ThriftError::SchemaDisagreement).then(t::SchemaDisagreementException::new)
    }
}

impl ThriftError {
    /// The message a TApplicationException carries when a method does not declare this error:
    /// the reason alone, as Cassandra sends it.
    pub fn application_message(&self) -> String {
        match self {
            ThriftError::Invalid(why)
            | ThriftError::Authentication(why)
            | ThriftError::Authorization(why)
            | ThriftError::Internal(why) => why.clone(),
            other => other.to_string(),
        }
    }
}

impl std::fmt::Display for ThriftError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ThriftError::Invalid(why) => write!(f, "InvalidRequestException: {why}"),
            ThriftError::NotFound => f.write_str("NotFoundException"),
            ThriftError::Unavailable => f.write_str("UnavailableException"),
            ThriftError::TimedOut { .. } => f.write_str("TimedOutException"),
            ThriftError::Authentication(why) => write!(f, "AuthenticationException: {why}"),
            ThriftError::Authorization(why) => write!(f, "AuthorizationException: {why}"),
            ThriftError::SchemaDisagreement => f.write_str("SchemaDisagreementException"),
            ThriftError::Internal(why) => write!(f, "internal error: {why}"),
        }
    }
}
