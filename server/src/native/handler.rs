//! QUERY, PREPARE, EXECUTE and BATCH: the rights checked ([`crate::cql_access`]), the
//! statement run by the executor in the connection's keyspace, the outcome encoded. A traced
//! request runs inside `cluster::trace::traced` and its trace is written before the answer
//! leaves, as Thrift's are.

use std::sync::Arc;

use cluster::consistency::ConsistencyLevel;
use cluster::trace::{self, TraceState};
use cql::ast::{Attributes, Batch, BatchStatement, Constant, Statement, Term};
use cql::exec::{Outcome, Prepared, Value};
use md5::{Digest, Md5};
use tracing::{debug, warn};
use uuid::Uuid;

use super::connection::{ConnSession, Responder};
use super::error::{NativeError, WriteType};
use super::frame::{flags, Opcode, Version};
use super::request::{BatchQuery, BatchRequest, QueryParams, Request, Values};
use super::wire::Writer;
use super::NativeContext;

/// Runs one statement request and sends its answer on `stream`.
pub async fn run(
    ctx: &NativeContext,
    session: &ConnSession,
    respond: &Responder,
    stream: i16,
    traced: bool,
    request: Request,
) {
    // v4 carries the statement's warnings back; before it they are only logged (3.11).
    let carries_warnings = respond.version() >= Version::V4;
    let (answer, trace_id) = if traced {
        let id = Uuid::now_v1(&trace::NODE_ID);
        let state = TraceState::new(id, ctx.coordinator.local_address());
        let name = request_name(&request);
        let answer = Box::pin(trace::traced(state.clone(), async {
            trace::trace(|| format!("{name} request received"));
            let answer = execute_warned(ctx, session, respond, request, carries_warnings).await;
            trace::trace(|| "Request complete".into());
            answer
        }))
        .await;
        let (row, events) = state.finish(name, Some(session.client));
        // Written before the answer goes out, so the client can read its trace at once.
        match ctx.coordinator.record_trace(row, events).await {
            Ok(()) => (answer, Some(id)),
            Err(e) => {
                warn!(session = %id, error = %e, "could not record a trace");
                (answer, None)
            }
        }
    } else {
        (execute_warned(ctx, session, respond, request, carries_warnings).await, None)
    };
    // An error carries no warnings (3.11 attaches them to answers only).
    let (opcode, body, warnings) = match answer {
        Ok((body, warnings)) => (Opcode::Result, body, warnings),
        Err(e) => {
            debug!(code = e.code(), error = %e.message(), "native request failed");
            (Opcode::Error, e.body(), Vec::new())
        }
    };
    let (flags, body) = prefixed(trace_id, &warnings, body);
    respond.send(flags, stream, opcode, &body).await;
}

/// A response body with what goes before it (spec §2.2): the trace session id, then the
/// [string list] of warnings; and the flags that say so.
fn prefixed(trace_id: Option<Uuid>, warnings: &[String], body: Vec<u8>) -> (u8, Vec<u8>) {
    if trace_id.is_none() && warnings.is_empty() {
        return (0, body);
    }
    let mut out = Vec::with_capacity(body.len() + 64);
    let mut frame_flags = 0;
    if let Some(id) = trace_id {
        out.put_uuid(id);
        frame_flags |= flags::TRACING;
    }
    if !warnings.is_empty() {
        let list: Vec<&str> = warnings.iter().map(String::as_str).collect();
        out.put_string_list(&list);
        frame_flags |= flags::WARNING;
    }
    out.extend_from_slice(&body);
    (frame_flags, out)
}

/// [`execute`], with the warnings the statement gave when the connection can carry them.
async fn execute_warned(
    ctx: &NativeContext,
    session: &ConnSession,
    respond: &Responder,
    request: Request,
    carries_warnings: bool,
) -> Result<(Vec<u8>, Vec<String>), NativeError> {
    // Boxed once: held inline, the statement's large future was copied whole at each of the
    // three places that move it (the two arms and the capture), which more than doubled the
    // instructions of a prepared read.
    let statement = Box::pin(execute(ctx, session, respond, request));
    if !carries_warnings {
        return statement.await.map(|body| (body, Vec::new()));
    }
    let (answer, warnings) = cql::exec::client_warn::capture(statement).await;
    answer.map(|body| (body, warnings))
}

/// 3.11's names of the requests in trace sessions.
fn request_name(r: &Request) -> &'static str {
    match r {
        Request::Query { .. } => "Execute CQL3 query",
        Request::Execute { .. } => "Execute CQL3 prepared query",
        Request::Batch(_) => "Execute batch of CQL3 queries",
        Request::Prepare { .. } => "Preparing CQL3 query",
        _ => "Native protocol request",
    }
}

async fn execute(
    ctx: &NativeContext,
    session: &ConnSession,
    respond: &Responder,
    request: Request,
) -> Result<Vec<u8>, NativeError> {
    match request {
        Request::Query { query, params } => query_request(ctx, session, &query, params).await,
        Request::Prepare { query } => prepare(ctx, session, respond, &query),
        Request::Execute { id, params } => {
            let prepared = ctx.find_prepared(&id).ok_or(NativeError::Unprepared { id })?;
            authorize(ctx, session, &prepared.statement)?;
            // The statement's text only when a trace will keep it: formatting it cost as
            // much as a fifth of a prepared read.
            trace_parameters(|| prepared.statement.to_string(), params.consistency);
            let run = params_of(&params)?;
            let values = bind(&prepared, params.values)?;
            run_prepared(ctx, session, &prepared, &values, &run).await
        }
        Request::Batch(batch) => batch_request(ctx, session, batch).await,
        Request::Startup(_) | Request::Options | Request::AuthResponse(_) | Request::Register(_) => {
            Err(NativeError::Server("connection messages are handled by the connection".into()))
        }
    }
}

/// What a statement runs with, from its request's parameters.
struct RunParams {
    cl: ConsistencyLevel,
    skip_metadata: bool,
    default_timestamp: Option<i64>,
    /// A conditional write's Paxos consistency (SERIAL when not given).
    serial: Option<ConsistencyLevel>,
    /// A SELECT's page: a positive `page_size` pages (3.11: zero or less does not).
    paging: Option<cql::exec::Paging>,
}

fn params_of(p: &QueryParams) -> Result<RunParams, NativeError> {
    let paging = match p.page_size {
        Some(n) if n > 0 => Some(cql::exec::Paging { page_size: n as usize, state: p.paging_state.clone() }),
        _ => None,
    };
    Ok(RunParams {
        cl: p.consistency,
        skip_metadata: p.skip_metadata,
        default_timestamp: p.default_timestamp,
        serial: p.serial_consistency,
        paging,
    })
}

fn trace_parameters(query: impl FnOnce() -> String, cl: ConsistencyLevel) {
    trace::trace_parameters(|| vec![("query".to_string(), query()), ("consistency_level".to_string(), cl.to_string())]);
}

fn cql_session(session: &ConnSession, run: &RunParams) -> cql::Session {
    cql::Session { keyspace: session.keyspace(), serial_consistency: run.serial }
}

fn authorize(ctx: &NativeContext, session: &ConnSession, statement: &Statement) -> Result<(), NativeError> {
    let user = session.user();
    let keyspace = session.keyspace();
    crate::cql_access::authorize(&ctx.authenticator, user.as_ref(), keyspace.as_deref(), statement)?;
    Ok(())
}

async fn query_request(
    ctx: &NativeContext,
    session: &ConnSession,
    query: &str,
    params: QueryParams,
) -> Result<Vec<u8>, NativeError> {
    trace_parameters(|| query.to_string(), params.consistency);
    let run = params_of(&params)?;
    let statement = cql::parse(query).map_err(|e| NativeError::Syntax(e.to_string()))?;
    authorize(ctx, session, &statement)?;
    match params.values {
        Values::None => {
            let statement = with_default_timestamp(&statement, run.default_timestamp).unwrap_or(statement);
            let mut cql = cql_session(session, &run);
            let outcome = ctx.cql.execute_statement_paged(&mut cql, &statement, run.cl, run.paging.clone()).await;
            finish(ctx, session, cql, outcome, &statement, &run)
        }
        values => {
            // Values need the markers' types: the text is prepared (and so cached) first.
            let (_, prepared) = prepare_once(ctx, session.keyspace().as_deref(), query, run.cl)?;
            let values = bind(&prepared, values)?;
            run_prepared(ctx, session, &prepared, &values, &run).await
        }
    }
}

async fn run_prepared(
    ctx: &NativeContext,
    session: &ConnSession,
    prepared: &Arc<Prepared>,
    values: &[Value],
    run: &RunParams,
) -> Result<Vec<u8>, NativeError> {
    let stamped = with_default_timestamp(&prepared.statement, run.default_timestamp)
        .map(|statement| Arc::new(Prepared { statement, ..Prepared::clone(prepared) }));
    let prepared = stamped.as_ref().unwrap_or(prepared);
    let mut cql = cql_session(session, run);
    let outcome = ctx.cql.execute_prepared_paged(&mut cql, prepared, values, run.cl, run.paging.clone()).await;
    finish(ctx, session, cql, outcome, &prepared.statement, run)
}

/// The outcome's RESULT body; `USE` moves the connection's keyspace, a schema change wakes
/// the event watcher.
fn finish(
    ctx: &NativeContext,
    session: &ConnSession,
    cql: cql::Session,
    outcome: Result<Outcome, cql::CqlError>,
    statement: &Statement,
    run: &RunParams,
) -> Result<Vec<u8>, NativeError> {
    let outcome = outcome.map_err(|e| err(e, run.cl, write_type(statement)))?;
    match &outcome {
        Outcome::SetKeyspace(_) => {
            if let Some(ks) = cql.keyspace {
                session.set_keyspace(ks);
            }
        }
        Outcome::SchemaChange(_) => ctx.events.schema_changed(),
        Outcome::Void | Outcome::Rows(_) => {}
    }
    Ok(super::result::outcome(&outcome, run.skip_metadata))
}

fn err(e: cql::CqlError, cl: ConsistencyLevel, write: Option<WriteType>) -> NativeError {
    NativeError::from_cql(e, cl, write)
}

/// The write a statement makes, for a timeout's `writeType` (None for reads).
fn write_type(s: &Statement) -> Option<WriteType> {
    match s {
        Statement::Select(_) => None,
        Statement::Batch(_) => Some(WriteType::UnloggedBatch),
        _ => Some(WriteType::Simple),
    }
}

/// Values for the markers: as sent, or picked by marker name.
fn bind(prepared: &Prepared, values: Values) -> Result<Vec<Value>, NativeError> {
    match values {
        Values::None => Ok(Vec::new()),
        Values::Positional(v) => Ok(v),
        Values::Named(named) => prepared
            .markers
            .iter()
            .map(|m| {
                named
                    .iter()
                    .find(|(name, _)| *name == m.name)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| NativeError::Invalid(format!("No value found for bind variable {}", m.name)))
            })
            .collect(),
    }
}

/// The statement with `USING TIMESTAMP` the client's default timestamp, when it is a write
/// that sets none (conditional writes take their Paxos ballot's time, and refuse one).
fn with_default_timestamp(s: &Statement, ts: Option<i64>) -> Option<Statement> {
    let ts = Term::Constant(Constant::Integer(ts?.to_string()));
    let mut s = s.clone();
    match &mut s {
        Statement::Insert(i) if !i.if_not_exists && i.attributes.timestamp.is_none() => {
            i.attributes.timestamp = Some(ts)
        }
        Statement::Update(u) if u.conditions.is_none() && u.attributes.timestamp.is_none() => {
            u.attributes.timestamp = Some(ts)
        }
        Statement::Delete(d) if d.conditions.is_none() && d.timestamp.is_none() => d.timestamp = Some(ts),
        Statement::Batch(b) if b.attributes.timestamp.is_none() => b.attributes.timestamp = Some(ts),
        _ => return None,
    }
    Some(s)
}

/// 3.11's id of a statement prepared over the native protocol: the MD5 of the keyspace (when
/// the connection has one) followed by the text.
pub fn statement_id(keyspace: Option<&str>, text: &str) -> [u8; 16] {
    let mut md5 = Md5::new();
    md5.update(keyspace.unwrap_or("").as_bytes());
    md5.update(text.as_bytes());
    md5.finalize().into()
}

fn prepare(
    ctx: &NativeContext,
    session: &ConnSession,
    respond: &Responder,
    query: &str,
) -> Result<Vec<u8>, NativeError> {
    trace::trace_parameters(|| vec![("query".to_string(), query.to_string())]);
    if ctx.authenticator.requires_login() && session.user().is_none() {
        return Err(NativeError::Unauthorized("You have not logged in".into()));
    }
    let (id, prepared) = prepare_once(ctx, session.keyspace().as_deref(), query, ConsistencyLevel::One)?;
    Ok(super::result::prepared(respond.version(), &id, &prepared))
}

/// The executor's prepared statement for `text` in `keyspace` and its native id, prepared
/// now if no front end has prepared it yet.
///
/// IMPORTANT: `cql::Executor::prepare` deadlocks on a text already in its cache (its cache
/// lock is taken twice within one `if let`, and the first guard lives to the end of it), so
/// a statement it may hold is looked up first: in this front end's cache by MD5 id, then in
/// the executor's under the Thrift ids its collision walk would have given it.
fn prepare_once(
    ctx: &NativeContext,
    keyspace: Option<&str>,
    text: &str,
    cl: ConsistencyLevel,
) -> Result<([u8; 16], Arc<Prepared>), NativeError> {
    let id = statement_id(keyspace, text);
    if let Some(p) = ctx.find_prepared(&id) {
        return Ok((id, p));
    }
    let mut thrift = thrift_id(keyspace, text);
    let mut parsed = None;
    while let Some(p) = ctx.cql.prepared(thrift) {
        let statement = match &parsed {
            Some(s) => s,
            None => parsed.insert(cql::parse(text).map_err(|e| NativeError::Syntax(e.to_string()))?),
        };
        if p.statement == *statement {
            if p.keyspace.as_deref() == keyspace {
                ctx.keep_prepared(id, p.clone());
                return Ok((id, p));
            }
            break;
        }
        thrift = thrift.wrapping_add(1);
    }
    let session = cql::Session { keyspace: keyspace.map(str::to_string), ..cql::Session::default() };
    let (_, p) = ctx.cql.prepare(&session, text).map_err(|e| err(e, cl, None))?;
    ctx.keep_prepared(id, p.clone());
    Ok((id, p))
}

/// The executor's Thrift id of a text (Java's `String.hashCode` of keyspace and text, as in
/// `cql::exec`), for [`prepare_once`]'s look-up.
fn thrift_id(keyspace: Option<&str>, text: &str) -> i32 {
    let full = format!("{}{text}", keyspace.unwrap_or(""));
    full.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// BATCH: its statements (texts, or prepared ids) made into one `cql::ast::Batch` and run as
/// one prepared statement, their values one after the other.
async fn batch_request(ctx: &NativeContext, session: &ConnSession, req: BatchRequest) -> Result<Vec<u8>, NativeError> {
    let cl = req.consistency;
    let mut statements = Vec::with_capacity(req.statements.len());
    let mut markers = Vec::new();
    let mut values = Vec::new();
    let mut keyspace: Option<Option<String>> = None;
    for (query, these) in req.statements {
        let prepared = match query {
            BatchQuery::Prepared(id) => ctx.find_prepared(&id).ok_or(NativeError::Unprepared { id })?,
            BatchQuery::Text(text) if these.is_empty() => {
                let statement = cql::parse(&text).map_err(|e| NativeError::Syntax(e.to_string()))?;
                Arc::new(Prepared {
                    statement,
                    keyspace: session.keyspace(),
                    markers: Vec::new(),
                    columns: Vec::new(),
                    partition_key: None,
                })
            }
            BatchQuery::Text(text) => prepare_once(ctx, session.keyspace().as_deref(), &text, cl)?.1,
        };
        if !prepared.markers.is_empty() && prepared.markers.len() != these.len() {
            return Err(NativeError::Invalid(format!(
                "There were {} markers(?) in CQL but {} bound variables",
                prepared.markers.len(),
                these.len()
            )));
        }
        match &keyspace {
            None => keyspace = Some(prepared.keyspace.clone()),
            Some(ks) if *ks != prepared.keyspace => {
                return Err(NativeError::Invalid(
                    "a BATCH of statements prepared in different keyspaces is not supported yet".into(),
                ))
            }
            Some(_) => {}
        }
        statements.push(match &prepared.statement {
            Statement::Insert(s) => BatchStatement::Insert(s.clone()),
            Statement::Update(s) => BatchStatement::Update(s.clone()),
            Statement::Delete(s) => BatchStatement::Delete(s.clone()),
            _ => {
                return Err(NativeError::Invalid(
                    "Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed.".into(),
                ))
            }
        });
        markers.extend(prepared.markers.iter().cloned());
        values.extend(these);
    }
    let attributes = Attributes {
        timestamp: req.default_timestamp.map(|ts| Term::Constant(Constant::Integer(ts.to_string()))),
        ..Attributes::default()
    };
    let statement = Statement::Batch(Batch { kind: req.kind, attributes, statements });
    authorize(ctx, session, &statement)?;
    trace_parameters(|| statement.to_string(), cl);
    let prepared = Arc::new(Prepared {
        statement,
        keyspace: keyspace.flatten(),
        markers,
        columns: Vec::new(),
        partition_key: None,
    });
    let run =
        RunParams { cl, skip_metadata: false, default_timestamp: None, serial: req.serial_consistency, paging: None };
    run_prepared(ctx, session, &prepared, &values, &run).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_the_md5_of_keyspace_and_text() {
        // md5("ksSELECT 1") computed independently.
        let id = statement_id(Some("ks"), "SELECT 1");
        let mut md5 = Md5::new();
        md5.update(b"ksSELECT 1");
        let expected: [u8; 16] = md5.finalize().into();
        assert_eq!(id, expected);
        assert_ne!(statement_id(None, "SELECT 1"), id, "the keyspace is part of the id");
    }

    #[test]
    fn a_default_timestamp_goes_only_where_none_is_written() {
        let parse = |q: &str| cql::parse(q).expect("parses");
        let stamped = with_default_timestamp(&parse("INSERT INTO t (k) VALUES (1)"), Some(42)).expect("a write");
        assert_eq!(stamped.to_string(), "INSERT INTO t (k) VALUES (1) USING TIMESTAMP 42");
        assert!(with_default_timestamp(&parse("INSERT INTO t (k) VALUES (1) USING TIMESTAMP 7"), Some(42)).is_none());
        assert!(with_default_timestamp(&parse("INSERT INTO t (k) VALUES (1) IF NOT EXISTS"), Some(42)).is_none());
        assert!(with_default_timestamp(&parse("SELECT * FROM t"), Some(42)).is_none());
        assert!(with_default_timestamp(&parse("DELETE FROM t WHERE k = 1"), None).is_none());
    }
}
