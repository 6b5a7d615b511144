//! One reply readable by both generations, for `describe_keyspace` and `describe_keyspaces`
//! arriving before a connection has shown its generation. Their arguments are the same in both
//! APIs but their results are not: 20.1.0 answers a `KsDef` struct (a list of them), 0.6 a map
//! (a set of names). The reply's result struct carries the fields of both answers, 20.1.0's
//! first: field 0 twice, once per wire type, and each generation's exceptions at their ids.
//! Every Thrift reader (the generated Java, Python, Ruby, PHP, C++ and ours) skips a field whose
//! wire type is not the one it expects, so each client reads its own answer and skips the other.
//!
//! Why not guess: the first call of the Ruby `cassandra` gem (0.6) on a connection is
//! `describe_keyspace`, over unframed or framed transport; so is `sibyl-stress`'s (20.1.0), over
//! either too. The transport cannot tell them apart; this answer needs no guess.

use thrift::protocol::{TMessageIdentifier, TMessageType, TOutputProtocol};
use thrift::ApplicationErrorKind;
use thrift_idl as t;
use thrift_idl::v06 as v;
use thrift_idl::{MessageInput, MessageOutput};
use tracing::debug;

use super::handler::Handler as Handler06;
use crate::thrift::dispatch::{application_error, not_a_call, protocol_error, BadHeader};
use crate::thrift::error::{declared as declared20, ThriftError};
use crate::thrift::handler::Handler as Handler20;

/// Answers one `describe_keyspace` or `describe_keyspaces` call in both generations' forms.
pub async fn dispatch(
    h20: &mut Handler20,
    h06: &mut Handler06,
    message: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), BadHeader> {
    let mut input = MessageInput::new(message);
    let header = input.read_header().map_err(BadHeader)?;
    if header.kind != TMessageType::Call && header.kind != TMessageType::OneWay {
        not_a_call(header, out);
        return Ok(());
    }
    let (name, seq) = (header.name, header.sequence_number);
    // The result structs of both generations, each encoded alone.
    let encoded: Result<(Vec<u8>, Vec<u8>), ThriftError> = match name {
        "describe_keyspace" => {
            // Same arguments in both: `1: required string keyspace`.
            let args = match t::CassandraDescribeKeyspaceArgs::read_from_in_protocol(&mut input) {
                Ok(args) => args,
                Err(e) => {
                    protocol_error(name, seq, e, out);
                    return Ok(());
                }
            };
            let new = h20.describe_keyspace(args.keyspace.clone()).await;
            let old = h06.describe_keyspace(args.keyspace).await;
            describe_keyspace_results(new, old)
        }
        "describe_keyspaces" => {
            if let Err(e) = t::CassandraDescribeKeyspacesArgs::read_from_in_protocol(&mut input) {
                protocol_error(name, seq, e, out);
                return Ok(());
            }
            let new = h20.describe_keyspaces().await;
            let old = h06.describe_keyspaces().await;
            describe_keyspaces_results(new, old)
        }
        other => {
            debug!(method = other, "not a method answered in both forms");
            Err(ThriftError::Internal(format!("{other} has no answer in both forms")))
        }
    };
    match encoded.and_then(|(new, old)| splice(new, old)) {
        Ok(body) => {
            let mut o = MessageOutput::new(&mut *out);
            if let Err(e) = o.write_message_begin(&TMessageIdentifier::new(name, TMessageType::Reply, seq)) {
                debug!(method = name, error = %e, "could not encode a reply");
            }
            // The binary protocol's message end writes nothing: the body closes the message.
            out.extend_from_slice(&body);
        }
        Err(error) => {
            application_error(name, seq, ApplicationErrorKind::InternalError, error.application_message(), out)
        }
    }
    Ok(())
}

type KeyspaceMap = std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>;

fn describe_keyspace_results(
    new: Result<t::KsDef, ThriftError>,
    old: Result<KeyspaceMap, ThriftError>,
) -> Result<(Vec<u8>, Vec<u8>), ThriftError> {
    let mut r20 = t::CassandraDescribeKeyspaceResult::default();
    match new {
        Ok(ks) => r20.result_value = Some(ks),
        Err(e) => {
            r20.nfe = declared20::nfe(&e);
            r20.ire = declared20::ire(&e);
            if r20.nfe.is_none() && r20.ire.is_none() {
                return Err(e);
            }
        }
    }
    let mut r06 = v::CassandraDescribeKeyspaceResult::default();
    match old {
        Ok(map) => r06.result_value = Some(map),
        Err(ThriftError::NotFound) => r06.nfe = Some(v::NotFoundException::new()),
        Err(e) => return Err(e),
    }
    Ok((encode(|o| r20.write_to_out_protocol(o))?, encode(|o| r06.write_to_out_protocol(o))?))
}

fn describe_keyspaces_results(
    new: Result<Vec<t::KsDef>, ThriftError>,
    old: Result<std::collections::BTreeSet<String>, ThriftError>,
) -> Result<(Vec<u8>, Vec<u8>), ThriftError> {
    let mut r20 = t::CassandraDescribeKeyspacesResult::default();
    match new {
        Ok(list) => r20.result_value = Some(list),
        Err(e) => r20.ire = Some(declared20::ire(&e).ok_or(e)?),
    }
    let r06 = v::CassandraDescribeKeyspacesResult { result_value: Some(old?) };
    Ok((encode(|o| r20.write_to_out_protocol(o))?, encode(|o| r06.write_to_out_protocol(o))?))
}

fn encode(write: impl FnOnce(&mut dyn TOutputProtocol) -> thrift::Result<()>) -> Result<Vec<u8>, ThriftError> {
    let mut bytes = Vec::new();
    write(&mut MessageOutput::new(&mut bytes)).map_err(|e| ThriftError::Internal(e.to_string()))?;
    Ok(bytes)
}

/// The fields of the 20.1.0 result, then those of the 0.6 result and its STOP: one struct.
fn splice(mut new: Vec<u8>, old: Vec<u8>) -> Result<Vec<u8>, ThriftError> {
    // A binary-protocol struct ends with its STOP byte (struct end writes nothing).
    if new.pop() != Some(0) {
        return Err(ThriftError::Internal("an encoded result does not end with STOP".into()));
    }
    new.extend_from_slice(&old);
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};
    use thrift::protocol::TBinaryInputProtocol;

    fn reader(bytes: &[u8]) -> TBinaryInputProtocol<&[u8]> {
        TBinaryInputProtocol::new(bytes, true)
    }

    #[test]
    fn each_generation_reads_its_own_keyspace_description() {
        let ks = t::KsDef {
            name: "Blog".into(),
            strategy_class: "org.apache.cassandra.locator.SimpleStrategy".into(),
            strategy_options: None,
            replication_factor: None,
            cf_defs: vec![],
            durable_writes: None,
        };
        let map = BTreeMap::from([("Entries".to_string(), BTreeMap::from([("Type".into(), "Standard".into())]))]);
        let (new, old) = describe_keyspace_results(Ok(ks.clone()), Ok(map.clone())).expect("both encode");
        let body = splice(new, old).expect("spliced");
        let r20 = t::CassandraDescribeKeyspaceResult::read_from_in_protocol(&mut reader(&body)).expect("20.1.0 reads");
        assert_eq!((r20.result_value, r20.nfe, r20.ire), (Some(ks), None, None));
        let r06 = v::CassandraDescribeKeyspaceResult::read_from_in_protocol(&mut reader(&body)).expect("0.6 reads");
        assert_eq!((r06.result_value, r06.nfe), (Some(map), None));
    }

    #[test]
    fn an_unknown_keyspace_is_not_found_for_both() {
        let (new, old) =
            describe_keyspace_results(Err(ThriftError::NotFound), Err(ThriftError::NotFound)).expect("both encode");
        let body = splice(new, old).expect("spliced");
        let r20 = t::CassandraDescribeKeyspaceResult::read_from_in_protocol(&mut reader(&body)).expect("20.1.0 reads");
        assert!(r20.result_value.is_none() && r20.nfe.is_some());
        let r06 = v::CassandraDescribeKeyspaceResult::read_from_in_protocol(&mut reader(&body)).expect("0.6 reads");
        assert!(r06.result_value.is_none() && r06.nfe.is_some());
    }

    #[test]
    fn each_generation_reads_its_own_keyspace_list() {
        let names = BTreeSet::from(["Blog".to_string(), "system".to_string()]);
        let refused = ThriftError::Invalid("You have not logged in".into());
        let (new, old) = describe_keyspaces_results(Err(refused), Ok(names.clone())).expect("both encode");
        let body = splice(new, old).expect("spliced");
        let r20 = t::CassandraDescribeKeyspacesResult::read_from_in_protocol(&mut reader(&body)).expect("20.1.0 reads");
        assert_eq!(r20.ire.map(|e| e.why).as_deref(), Some("You have not logged in"));
        assert!(r20.result_value.is_none());
        let r06 = v::CassandraDescribeKeyspacesResult::read_from_in_protocol(&mut reader(&body)).expect("0.6 reads");
        assert_eq!(r06.result_value, Some(names));
    }
}
