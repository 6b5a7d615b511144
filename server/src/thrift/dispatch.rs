//! The method table of API 20.1.0: decode a call's arguments with the generated `*Args` struct,
//! await the handler, and encode its `*Result` struct, putting an error in the exception field
//! the method declares for it (Cassandra's generated `Cassandra.Processor`, made asynchronous so
//! that a handler can await the coordinator without blocking its event loop).
//!
//! Errors as Cassandra's Java processor gives them: arguments that do not decode (a required one
//! missing, say) answer a `TApplicationException` PROTOCOL_ERROR naming the problem; an unknown
//! method UNKNOWN_METHOD; an error the method does not declare INTERNAL_ERROR. The connection
//! stays usable after each.

use cluster::trace::{self, TraceState};
use thrift::protocol::{TMessageIdentifier, TMessageType, TOutputProtocol};
use thrift::{ApplicationError, ApplicationErrorKind};
use thrift_idl as t;
use thrift_idl::{Header, MessageInput, MessageOutput};
use tracing::{debug, warn};

use super::error::{declared, ThriftError};
use super::handler::Handler;

/// A message whose header cannot be read: the connection is closed (Cassandra does the same).
#[derive(Debug, thiserror::Error)]
#[error("unreadable message header: {0}")]
pub struct BadHeader(pub(crate) thrift::Error);

/// Runs one call message through `handler` and appends the reply message to `out`.
pub async fn dispatch(handler: &mut Handler, message: &[u8], out: &mut Vec<u8>) -> Result<(), BadHeader> {
    let mut input = MessageInput::new(message);
    let header = input.read_header().map_err(BadHeader)?;
    if header.kind != TMessageType::Call && header.kind != TMessageType::OneWay {
        not_a_call(header, out);
        return Ok(());
    }
    // The one check an untraced request pays.
    let Some(session_id) = handler.session_mut().take_trace() else {
        call(handler, header.name, header.sequence_number, &mut input, out).await;
        return Ok(());
    };
    let state = TraceState::new(session_id, handler.coordinator().local_address());
    let method = header.name;
    // Boxed: a traced request is rare, and inline its future would double the size of every
    // connection's state.
    Box::pin(trace::traced(state.clone(), async {
        trace::trace(|| format!("{method} request received"));
        call(handler, method, header.sequence_number, &mut input, out).await;
        trace::trace(|| "Request complete".into());
    }))
    .await;
    let (session, events) = state.finish(method, handler.session_mut().client());
    // Written before the answer goes out, so the client can read its trace at once.
    match handler.coordinator().record_trace(session, events).await {
        Ok(()) => debug!(session = %session_id, method, "trace recorded"),
        Err(e) => warn!(session = %session_id, method, error = %e, "could not record a trace"),
    }
    Ok(())
}

/// The arguments' readers: the generated ones, and those of batch_mutate, get_slice and insert,
/// which read their usual arguments in place ([`super::convert::BatchMutateArgs`],
/// [`super::convert::GetSliceArgs`], [`super::convert::InsertArgs`]).
mod args {
    pub use super::super::convert::{BatchMutateArgs, GetSliceArgs, InsertArgs};
    pub use thrift_idl::*;
}

/// One arm per method: `[#[inline]] "name" => ArgsStruct / ResultStruct (args) call =>
/// value|void|direct(writer) [exceptions]`. `direct(writer)`: the call's value writes the body of
/// its successful reply itself (`value.writer(&mut Vec<u8>)`), without the Result struct.
macro_rules! methods {
    ($method:expr, $seq:expr, $input:expr, $out:expr;
     $( $(#[$inline:ident])? $name:literal => $Args:ident / $Res:ident ($a:ident) $call:expr
        => $kind:ident $(($write:ident))? [$($exc:ident),*] ),* $(,)?) => {
        match $method {
            $( $name => {
                let $a = match args::$Args::read_from_in_protocol($input) {
                    Ok(args) => args,
                    Err(e) => return protocol_error($name, $seq, e, $out),
                };
                let outcome: Result<_, ThriftError> = methods!(@await $($inline)? $call);
                let mut result = t::$Res::default();
                match outcome {
                    Ok(value) => methods!(@set $kind $(($write))? result value, $name, $seq, $out),
                    Err(error) => {
                        let handled = false $( || match declared::$exc(&error) {
                            Some(exception) => {
                                result.$exc = Some(exception);
                                true
                            }
                            None => false,
                        } )*;
                        if !handled {
                            return application_error($name, $seq, ApplicationErrorKind::InternalError, error.application_message(), $out);
                        }
                    }
                }
                write_message($name, TMessageType::Reply, $seq, $out, |o| result.write_to_out_protocol(o));
            } )*
            other => application_error(
                other,
                $seq,
                ApplicationErrorKind::UnknownMethod,
                format!("Invalid method name: '{other}'"),
                $out,
            ),
        }
    };
    // Each method's future is boxed at its own size: inline, the largest of them (cas) set the
    // size of every connection's task (10.7 KB with tracing); boxed, a connection holds only what
    // its current call needs. The calls that make up nearly all of a loaded node's traffic (under
    // 1 KB each) run inline, and a connection's task is 2.1 KB with them: their box was an
    // allocation, a free and a copy of the future per request, about 250 instructions of a point
    // read or an insert (bench/instructions-sibyl.sh).
    (@await inline $call:expr) => { $call };
    (@await $call:expr) => { Box::pin(async move { $call }).await };
    (@set value $result:ident $value:ident, $($_:tt)*) => { $result.result_value = Some($value) };
    (@set void $result:ident $value:ident, $($_:tt)*) => { { let () = $value; } };
    (@set direct ($write:ident) $result:ident $value:ident, $name:expr, $seq:expr, $out:expr) => {
        return write_message($name, TMessageType::Reply, $seq, $out, |o| {
            $value.$write(o.buffer());
            Ok(())
        })
    };
}

async fn call(h: &mut Handler, method: &str, seq: i32, input: &mut MessageInput<'_>, out: &mut Vec<u8>) {
    methods! { method, seq, input, out;
        "login" => CassandraLoginArgs / CassandraLoginResult (a) h.login(a.auth_request).await => void [authnx, authzx],
        "set_keyspace" => CassandraSetKeyspaceArgs / CassandraSetKeyspaceResult (a) h.set_keyspace(a.keyspace).await => void [ire],
        #[inline] "get" => CassandraGetArgs / CassandraGetResult (a)
            h.get(a.key, a.column_path, a.consistency_level).await => direct(write_get_result) [ire, nfe, ue, te],
        #[inline] "get_slice" => GetSliceArgs / CassandraGetSliceResult (a)
            h.get_slice(a).await
            => direct(write_get_slice_result) [ire, ue, te],
        "get_count" => CassandraGetCountArgs / CassandraGetCountResult (a)
            h.get_count(a.key, a.column_parent, a.predicate, a.consistency_level).await => value [ire, ue, te],
        #[inline] "multiget_slice" => CassandraMultigetSliceArgs / CassandraMultigetSliceResult (a)
            h.multiget_slice(a.keys, a.column_parent, a.predicate, a.consistency_level).await
            => direct(write_multiget_slice_result) [ire, ue, te],
        "multiget_count" => CassandraMultigetCountArgs / CassandraMultigetCountResult (a)
            h.multiget_count(a.keys, a.column_parent, a.predicate, a.consistency_level).await => value [ire, ue, te],
        "get_range_slices" => CassandraGetRangeSlicesArgs / CassandraGetRangeSlicesResult (a)
            h.get_range_slices(a.column_parent, a.predicate, a.range, a.consistency_level).await => value [ire, ue, te],
        "get_paged_slice" => CassandraGetPagedSliceArgs / CassandraGetPagedSliceResult (a)
            h.get_paged_slice(a.column_family, a.range, a.start_column, a.consistency_level).await => value [ire, ue, te],
        "get_indexed_slices" => CassandraGetIndexedSlicesArgs / CassandraGetIndexedSlicesResult (a)
            h.get_indexed_slices(a.column_parent, a.index_clause, a.column_predicate, a.consistency_level).await
            => value [ire, ue, te],
        #[inline] "insert" => InsertArgs / CassandraInsertResult (a) h.insert(a).await => void [ire, ue, te],
        "add" => CassandraAddArgs / CassandraAddResult (a)
            h.add(a.key, a.column_parent, a.column, a.consistency_level).await => void [ire, ue, te],
        "cas" => CassandraCasArgs / CassandraCasResult (a)
            h.cas(a).await => value [ire, ue, te],
        "remove" => CassandraRemoveArgs / CassandraRemoveResult (a)
            h.remove(a.key, a.column_path, a.timestamp, a.consistency_level).await
            => void [ire, ue, te],
        "remove_counter" => CassandraRemoveCounterArgs / CassandraRemoveCounterResult (a)
            h.remove_counter(a.key, a.path, a.consistency_level).await => void [ire, ue, te],
        #[inline] "batch_mutate" => BatchMutateArgs / CassandraBatchMutateResult (a)
            h.batch_mutate(a).await => void [ire, ue, te],
        "atomic_batch_mutate" => CassandraAtomicBatchMutateArgs / CassandraAtomicBatchMutateResult (a)
            h.atomic_batch_mutate(a.mutation_map, a.consistency_level).await => void [ire, ue, te],
        "truncate" => CassandraTruncateArgs / CassandraTruncateResult (a) h.truncate(a.cfname).await => void [ire, ue, te],
        "get_multi_slice" => CassandraGetMultiSliceArgs / CassandraGetMultiSliceResult (a)
            h.get_multi_slice(a.request).await => value [ire, ue, te],
        "describe_schema_versions" => CassandraDescribeSchemaVersionsArgs / CassandraDescribeSchemaVersionsResult (_a)
            h.describe_schema_versions().await => value [ire],
        "describe_keyspaces" => CassandraDescribeKeyspacesArgs / CassandraDescribeKeyspacesResult (_a)
            h.describe_keyspaces().await => value [ire],
        "describe_cluster_name" => CassandraDescribeClusterNameArgs / CassandraDescribeClusterNameResult (_a)
            h.describe_cluster_name().await => value [],
        "describe_version" => CassandraDescribeVersionArgs / CassandraDescribeVersionResult (_a)
            h.describe_version().await => value [],
        "describe_ring" => CassandraDescribeRingArgs / CassandraDescribeRingResult (a)
            h.describe_ring(a.keyspace).await => value [ire],
        "describe_local_ring" => CassandraDescribeLocalRingArgs / CassandraDescribeLocalRingResult (a)
            h.describe_local_ring(a.keyspace).await => value [ire],
        "describe_token_map" => CassandraDescribeTokenMapArgs / CassandraDescribeTokenMapResult (_a)
            h.describe_token_map().await => value [ire],
        "describe_partitioner" => CassandraDescribePartitionerArgs / CassandraDescribePartitionerResult (_a)
            h.describe_partitioner().await => value [],
        "describe_snitch" => CassandraDescribeSnitchArgs / CassandraDescribeSnitchResult (_a)
            h.describe_snitch().await => value [],
        "describe_keyspace" => CassandraDescribeKeyspaceArgs / CassandraDescribeKeyspaceResult (a)
            h.describe_keyspace(a.keyspace).await => value [nfe, ire],
        "describe_splits" => CassandraDescribeSplitsArgs / CassandraDescribeSplitsResult (a)
            h.describe_splits(a.cf_name, a.start_token, a.end_token, a.keys_per_split).await => value [ire],
        "trace_next_query" => CassandraTraceNextQueryArgs / CassandraTraceNextQueryResult (_a)
            h.trace_next_query().await => value [],
        "describe_splits_ex" => CassandraDescribeSplitsExArgs / CassandraDescribeSplitsExResult (a)
            h.describe_splits_ex(a.cf_name, a.start_token, a.end_token, a.keys_per_split).await => value [ire],
        "system_add_column_family" => CassandraSystemAddColumnFamilyArgs / CassandraSystemAddColumnFamilyResult (a)
            h.system_add_column_family(a.cf_def).await => value [ire, sde],
        "system_drop_column_family" => CassandraSystemDropColumnFamilyArgs / CassandraSystemDropColumnFamilyResult (a)
            h.system_drop_column_family(a.column_family).await => value [ire, sde],
        "system_add_keyspace" => CassandraSystemAddKeyspaceArgs / CassandraSystemAddKeyspaceResult (a)
            h.system_add_keyspace(a.ks_def).await => value [ire, sde],
        "system_drop_keyspace" => CassandraSystemDropKeyspaceArgs / CassandraSystemDropKeyspaceResult (a)
            h.system_drop_keyspace(a.keyspace).await => value [ire, sde],
        "system_update_keyspace" => CassandraSystemUpdateKeyspaceArgs / CassandraSystemUpdateKeyspaceResult (a)
            h.system_update_keyspace(a.ks_def).await => value [ire, sde],
        "system_update_column_family" => CassandraSystemUpdateColumnFamilyArgs / CassandraSystemUpdateColumnFamilyResult (a)
            h.system_update_column_family(a.cf_def).await => value [ire, sde],
        "execute_cql_query" => CassandraExecuteCqlQueryArgs / CassandraExecuteCqlQueryResult (_a)
            h.cql2("execute_cql_query").await => value [ire, ue, te, sde],
        "execute_cql3_query" => CassandraExecuteCql3QueryArgs / CassandraExecuteCql3QueryResult (a)
            h.execute_cql3_query(a.query, a.compression, a.consistency).await => value [ire, ue, te, sde],
        "prepare_cql_query" => CassandraPrepareCqlQueryArgs / CassandraPrepareCqlQueryResult (_a)
            h.cql2_prepare("prepare_cql_query").await => value [ire],
        "prepare_cql3_query" => CassandraPrepareCql3QueryArgs / CassandraPrepareCql3QueryResult (a)
            h.prepare_cql3_query(a.query, a.compression).await => value [ire],
        "execute_prepared_cql_query" => CassandraExecutePreparedCqlQueryArgs / CassandraExecutePreparedCqlQueryResult (_a)
            h.cql2("execute_prepared_cql_query").await => value [ire, ue, te, sde],
        "execute_prepared_cql3_query" => CassandraExecutePreparedCql3QueryArgs / CassandraExecutePreparedCql3QueryResult (a)
            h.execute_prepared_cql3_query(a.item_id, a.values, a.consistency).await => value [ire, ue, te, sde],
        "set_cql_version" => CassandraSetCqlVersionArgs / CassandraSetCqlVersionResult (a)
            h.set_cql_version(a.version).await => void [ire],
    }
}

/// The protocol replies are written with: concrete, so the generated writers inline into it.
pub(crate) type Output<'a> = MessageOutput<'a>;

/// Writes one message: header, body, end. (Also the 0.6 method table's.)
pub(crate) fn write_message(
    name: &str,
    kind: TMessageType,
    seq: i32,
    out: &mut Vec<u8>,
    body: impl FnOnce(&mut Output<'_>) -> thrift::Result<()>,
) {
    let mut o = MessageOutput::new(out);
    // Writing into a Vec cannot fail: the results are plain data.
    let written = o
        .write_message_begin(&TMessageIdentifier::new(name, kind, seq))
        .and_then(|()| body(&mut o))
        .and_then(|()| o.write_message_end());
    if let Err(e) = written {
        debug!(method = name, error = %e, "could not encode a reply");
    }
}

pub(crate) fn application_error(name: &str, seq: i32, kind: ApplicationErrorKind, message: String, out: &mut Vec<u8>) {
    let error = ApplicationError::new(kind, message);
    write_message(name, TMessageType::Exception, seq, out, |o| {
        thrift::Error::write_application_error_to_out_protocol(&error, o)
    });
}

/// A REPLY or EXCEPTION sent to the server: INVALID_MESSAGE_TYPE, so the client is not left
/// waiting for an answer that would never come.
pub(crate) fn not_a_call(header: Header<'_>, out: &mut Vec<u8>) {
    debug!(method = %header.name, kind = ?header.kind, "refusing a message that is not a call");
    let message = format!("expected a call or a one-way call, got a message of type {:?}", header.kind);
    application_error(header.name, header.sequence_number, ApplicationErrorKind::InvalidMessageType, message, out);
}

/// Arguments that do not decode: PROTOCOL_ERROR, with a missing required field named the way
/// Cassandra's Java processor names it. (0.6's processor names it the same way.)
pub(crate) fn protocol_error(name: &str, seq: i32, e: thrift::Error, out: &mut Vec<u8>) {
    let message = match &e {
        thrift::Error::Protocol(p) => required_field_message(name, &p.message).unwrap_or_else(|| p.message.clone()),
        // Arguments that run past the message's end: the reader's words say where.
        thrift::Error::Transport(t) => t.message.clone(),
        other => other.to_string(),
    };
    application_error(name, seq, ApplicationErrorKind::ProtocolError, message, out);
}

/// "missing required field CassandraDescribeKeyspaceArgs.keyspace" (the generated readers'
/// words) as Java's "Required field 'keyspace' was not present! Struct: describe_keyspace_args".
fn required_field_message(method: &str, generated: &str) -> Option<String> {
    let path = generated.strip_prefix("missing required field ")?;
    let (owner, field) = path.rsplit_once('.')?;
    let owner = if owner.starts_with("Cassandra") && owner.ends_with("Args") {
        format!("{method}_args")
    } else {
        owner.to_string()
    };
    Some(format!("Required field '{field}' was not present! Struct: {owner}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_required_fields_are_named_as_java_does() {
        assert_eq!(
            required_field_message(
                "describe_keyspace",
                "missing required field CassandraDescribeKeyspaceArgs.keyspace"
            )
            .as_deref(),
            Some("Required field 'keyspace' was not present! Struct: describe_keyspace_args")
        );
        assert_eq!(
            required_field_message("get", "missing required field ColumnPath.column_family").as_deref(),
            Some("Required field 'column_family' was not present! Struct: ColumnPath")
        );
        assert_eq!(required_field_message("get", "bad size"), None);
    }
}
