//! The method table of the 0.6 API (2.2.0): decode a call's arguments with the generated 0.6
//! `*Args` struct, await the 0.6 handler, encode the 0.6 `*Result` struct with an error in the
//! exception field 0.6 declares for it (at 0.6's field ids).
//!
//! Errors as 0.6's generated processor gave them: arguments that do not decode answer a
//! `TApplicationException` PROTOCOL_ERROR ("Required field 'key' was not present! Struct:
//! get_args"), and so does a consistency level outside 0.6's enum in a required argument (0.6
//! decoded it as a missing field); an unknown method UNKNOWN_METHOD; an error the method does
//! not declare INTERNAL_ERROR "Internal error processing <method>".

use thrift::protocol::TMessageType;
use thrift::ApplicationErrorKind;
use thrift_idl::v06 as v;
use thrift_idl::MessageInput;
use tracing::warn;

use super::convert::is_known_level;
use super::error::{declared, internal_error_message};
use super::handler::Handler;
use crate::thrift::dispatch::{application_error, not_a_call, protocol_error, write_message, BadHeader};
use crate::thrift::error::ThriftError;

/// Runs one 0.6 call message through `handler` and appends the reply message to `out`.
pub async fn dispatch(handler: &mut Handler, message: &[u8], out: &mut Vec<u8>) -> Result<(), BadHeader> {
    let mut input = MessageInput::new(message);
    let header = input.read_header().map_err(BadHeader)?;
    if header.kind != TMessageType::Call && header.kind != TMessageType::OneWay {
        not_a_call(header, out);
        return Ok(());
    }
    call(handler, header.name, header.sequence_number, &mut input, out).await;
    Ok(())
}

/// `"name" => Args / Result (args) [level field]: call => value|void [exceptions]`.
macro_rules! methods {
    ($method:expr, $seq:expr, $input:expr, $out:expr;
     $( $name:literal => $Args:ident / $Res:ident ($a:ident) $([level $cl:ident])? : $call:expr
        => $kind:ident [$($exc:ident),*] ),* $(,)?) => {
        match $method {
            $( $name => {
                let $a = match v::$Args::read_from_in_protocol($input) {
                    Ok(args) => args,
                    Err(e) => return protocol_error($name, $seq, e, $out),
                };
                $( if !is_known_level($a.$cl) {
                    let missing = thrift::Error::Protocol(thrift::ProtocolError::new(
                        thrift::ProtocolErrorKind::InvalidData,
                        format!("missing required field {}.{}", stringify!($Args), stringify!($cl)),
                    ));
                    return protocol_error($name, $seq, missing, $out);
                } )?
                // Boxed at each method's own size, as in the 20.1.0 table: a connection's state
                // stays small whichever method is largest.
                let outcome: Result<_, ThriftError> = Box::pin(async move { $call }).await;
                let mut result = v::$Res::default();
                match outcome {
                    Ok(value) => methods!(@set $kind result value),
                    Err(error) => {
                        let handled = false $( || match declared::$exc(&error) {
                            Some(exception) => {
                                result.$exc = Some(exception);
                                true
                            }
                            None => false,
                        } )*;
                        if !handled {
                            // Logged as 0.6 logged it: the client only hears "Internal error".
                            warn!(method = $name, error = %error, "0.6 call failed with an undeclared error");
                            return application_error($name, $seq, ApplicationErrorKind::InternalError,
                                                     internal_error_message($name), $out);
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
    (@set value $result:ident $value:ident) => { $result.result_value = Some($value) };
    (@set void $result:ident $value:ident) => { { let () = $value; } };
}

async fn call(h: &mut Handler, method: &str, seq: i32, input: &mut MessageInput<'_>, out: &mut Vec<u8>) {
    methods! { method, seq, input, out;
        "login" => CassandraLoginArgs / CassandraLoginResult (a):
            h.login(a.keyspace, a.auth_request).await => void [authnx, authzx],
        "get" => CassandraGetArgs / CassandraGetResult (a) [level consistency_level]:
            h.get(a.keyspace, a.key, a.column_path, a.consistency_level).await => value [ire, nfe, ue, te],
        "get_slice" => CassandraGetSliceArgs / CassandraGetSliceResult (a) [level consistency_level]:
            h.get_slice(a.keyspace, a.key, a.column_parent, a.predicate, a.consistency_level).await
            => value [ire, ue, te],
        "multiget" => CassandraMultigetArgs / CassandraMultigetResult (a) [level consistency_level]:
            h.multiget(a.keyspace, a.keys, a.column_path, a.consistency_level).await => value [ire, ue, te],
        "multiget_slice" => CassandraMultigetSliceArgs / CassandraMultigetSliceResult (a) [level consistency_level]:
            h.multiget_slice(a.keyspace, a.keys, a.column_parent, a.predicate, a.consistency_level).await
            => value [ire, ue, te],
        "get_count" => CassandraGetCountArgs / CassandraGetCountResult (a) [level consistency_level]:
            h.get_count(a.keyspace, a.key, a.column_parent, a.consistency_level).await => value [ire, ue, te],
        "get_range_slice" => CassandraGetRangeSliceArgs / CassandraGetRangeSliceResult (a) [level consistency_level]:
            h.get_range_slice(a.keyspace, a.column_parent, a.predicate, a.start_key, a.finish_key, a.row_count,
                              a.consistency_level).await => value [ire, ue, te],
        "get_range_slices" => CassandraGetRangeSlicesArgs / CassandraGetRangeSlicesResult (a) [level consistency_level]:
            h.get_range_slices(a.keyspace, a.column_parent, a.predicate, a.range, a.consistency_level).await
            => value [ire, ue, te],
        "insert" => CassandraInsertArgs / CassandraInsertResult (a) [level consistency_level]:
            h.insert(a.keyspace, a.key, a.column_path, a.value, a.timestamp, a.consistency_level).await
            => void [ire, ue, te],
        "batch_insert" => CassandraBatchInsertArgs / CassandraBatchInsertResult (a) [level consistency_level]:
            h.batch_insert(a.keyspace, a.key, a.cfmap, a.consistency_level).await => void [ire, ue, te],
        // Not `required` in 0.6: an unknown level reaches the handler, which fails internally as 0.6 did.
        "remove" => CassandraRemoveArgs / CassandraRemoveResult (a):
            h.remove(a.keyspace, a.key, a.column_path, a.timestamp, a.consistency_level).await => void [ire, ue, te],
        "batch_mutate" => CassandraBatchMutateArgs / CassandraBatchMutateResult (a) [level consistency_level]:
            h.batch_mutate(a.keyspace, a.mutation_map, a.consistency_level).await => void [ire, ue, te],
        "get_string_property" => CassandraGetStringPropertyArgs / CassandraGetStringPropertyResult (a):
            h.get_string_property(a.property).await => value [],
        "get_string_list_property" => CassandraGetStringListPropertyArgs / CassandraGetStringListPropertyResult (a):
            h.get_string_list_property(a.property).await => value [],
        "describe_keyspaces" => CassandraDescribeKeyspacesArgs / CassandraDescribeKeyspacesResult (_a):
            h.describe_keyspaces().await => value [],
        "describe_cluster_name" => CassandraDescribeClusterNameArgs / CassandraDescribeClusterNameResult (_a):
            h.describe_cluster_name().await => value [],
        "describe_version" => CassandraDescribeVersionArgs / CassandraDescribeVersionResult (_a):
            h.describe_version().await => value [],
        "describe_ring" => CassandraDescribeRingArgs / CassandraDescribeRingResult (a):
            h.describe_ring(a.keyspace).await => value [ire],
        "describe_partitioner" => CassandraDescribePartitionerArgs / CassandraDescribePartitionerResult (_a):
            h.describe_partitioner().await => value [],
        "describe_keyspace" => CassandraDescribeKeyspaceArgs / CassandraDescribeKeyspaceResult (a):
            h.describe_keyspace(a.keyspace).await => value [nfe],
        "describe_splits" => CassandraDescribeSplitsArgs / CassandraDescribeSplitsResult (a):
            h.describe_splits(a.start_token, a.end_token, a.keys_per_split).await => value [],
    }
}
