//! The admin interface against a real engine in a temporary directory: line framing, malformed
//! requests, every operation's result, drain, and the blocking client over TCP.

use std::io::{BufRead, BufReader as StdBufReader, Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use admin_protocol::*;
use model::data::Cell;
use model::mutation::RowMutation;
use model::schema::{CfDef, KeyspaceDef};
use sibyltool::{Client, ToolError};
use storage::engine::{Storage, StorageConfig};
use storage::StorageError;
use tokio::io::BufReader;

use super::state::{run_blocking_every, AdminState};
use super::*;
use crate::node::Node;
use cluster::coordinator::{Coordinator, LocalNode};

/// Bound on every wait in these tests.
const WAIT: Duration = Duration::from_secs(30);

fn open_node(dir: &Path) -> Arc<Node> {
    open_node_with(dir, |_| {})
}

/// A single node in `dir` with keyspace `ks` (column families `cf` and `other`), background
/// compaction off, and the engine configuration changed by `configure`.
pub(super) fn open_node_with(dir: &Path, configure: impl FnOnce(&mut StorageConfig)) -> Arc<Node> {
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(CfDef::new("ks", "cf"));
    ks.cf_defs.push(CfDef::new("ks", "other"));
    let mut config = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    config.initial_keyspaces = vec![ks];
    config.auto_compaction = false;
    configure(&mut config);
    let storage = Storage::open(config).expect("engine opens");
    let local_token = storage.partitioner().token_for_key(b"this node");
    let local = LocalNode {
        cluster_name: "Admin Test Cluster".into(),
        endpoint: "127.0.0.1:7000".parse().expect("endpoint"),
        rpc_address: "127.0.0.1".into(),
        token: local_token,
        snitch: "org.apache.cassandra.locator.SimpleSnitch".into(),
    };
    let coordinator = Coordinator::single_node(storage.clone(), local).expect("coordinator starts");
    Arc::new(Node { storage, coordinator, service: None, thrift: None, native: None })
}

fn write(storage: &Storage, cf: &str, key: &str) -> Result<(), StorageError> {
    let mut m = RowMutation::new("ks", key.as_bytes());
    m.row_mut(cf).cells.push(Cell::live(b"col".to_vec(), b"value".to_vec(), 1000));
    storage.apply(m)
}

/// Feeds `input` to the request loop and returns the reply lines.
async fn exchange(state: &AdminState, input: &[u8]) -> Vec<Reply> {
    let mut reader = BufReader::with_capacity(7, input);
    let mut out = ReplyWriter::new(Vec::new());
    serve_lines(&mut reader, &mut out, state, "test").await.expect("in-memory I/O");
    let text = String::from_utf8(out.write).expect("replies are UTF-8");
    text.lines().map(|l| Reply::decode_line(l.as_bytes()).expect("well-formed reply")).collect()
}

fn finals(replies: &[Reply]) -> Vec<&Reply> {
    replies.iter().filter(|r| !matches!(r, Reply::Progress(_))).collect()
}

fn error_kind(r: &Reply) -> Option<ErrorKind> {
    match r {
        Reply::Error(e) => Some(e.kind),
        _ => None,
    }
}

fn ok<T: serde::de::DeserializeOwned>(r: &Reply) -> T {
    match r {
        Reply::Ok(v) => serde_json::from_value(v.clone()).expect("result decodes"),
        other => panic!("expected ok, got {other:?}"),
    }
}

#[tokio::test]
async fn lines_are_split_and_bounded() {
    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut r = BufReader::with_capacity(3, input);
        let mut out = Vec::new();
        loop {
            let l = read_line_bounded(&mut r, max).await.expect("in-memory");
            let stop = matches!(l, Line::Eof | Line::TooLong);
            out.push(l);
            if stop {
                return out;
            }
        }
    }
    let c = |s: &str| Line::Complete(s.as_bytes().to_vec());
    assert_eq!(lines(b"a\nbbbbbb\n\nlast", 10).await, [c("a"), c("bbbbbb"), c(""), c("last"), Line::Eof]);
    assert_eq!(lines(b"abcd\nx\n", 4).await, [c("abcd"), c("x"), Line::Eof]);
    // A long line is skipped to its end; the next one is found.
    let mut r = BufReader::with_capacity(3, &b"abcdefghij\nxy\nabcde"[..]);
    assert_eq!(read_line_bounded(&mut r, 4).await.expect("read"), Line::TooLong);
    assert_eq!(read_line_bounded(&mut r, 4).await.expect("read"), c("xy"));
    assert_eq!(read_line_bounded(&mut r, 4).await.expect("read"), Line::TooLong);
    assert_eq!(read_line_bounded(&mut r, 4).await.expect("read"), Line::Eof);
    assert_eq!(lines(b"", 4).await, [Line::Eof]);
}

#[tokio::test]
async fn malformed_requests_get_errors_and_the_connection_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = AdminState::new(open_node(dir.path()));
    let input = b"garbage\n{\"op\":\"explode\"}\n\n\xff\xfe\n{\"op\":\"ring\",\"v\":2}\n{\"op\":\"flush\",\"cfs\":[\"cf\"]}\n{\"op\":\"version\"}";
    let replies = exchange(&state, input).await;
    let kinds: Vec<Option<ErrorKind>> = replies.iter().map(error_kind).collect();
    assert_eq!(
        kinds,
        [
            Some(ErrorKind::BadRequest),
            Some(ErrorKind::BadRequest),
            Some(ErrorKind::BadRequest),
            Some(ErrorKind::BadRequest),
            Some(ErrorKind::UnsupportedVersion),
            Some(ErrorKind::BadRequest),
            None
        ]
    );
    let v: VersionResult = ok(&replies[6]);
    assert_eq!(v.protocol_version, PROTOCOL_VERSION);
    assert_eq!(v.thrift_api_version, thrift_idl::VERSION);
}

#[tokio::test]
async fn a_too_long_line_gets_an_error_and_the_next_request_is_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = AdminState::new(open_node(dir.path()));
    let mut input = vec![b'x'; MAX_REQUEST_LINE + 1];
    input.extend_from_slice(b"\n{\"op\":\"version\"}\n");
    let replies = exchange(&state, &input).await;
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert!(
        matches!(&replies[0], Reply::Error(e) if e.kind == ErrorKind::BadRequest && e.message.contains("longer than"))
    );
    let _: VersionResult = ok(&replies[1]);
}

#[tokio::test]
async fn flush_then_cfstats_shows_one_sstable_per_flushed_cf() {
    let dir = tempfile::tempdir().expect("tempdir");
    let node = open_node(dir.path());
    for key in ["a", "b", "c"] {
        write(&node.storage, "cf", key).expect("write");
    }
    write(&node.storage, "other", "z").expect("write");
    let state = AdminState::new(node.clone());

    let before = exchange(&state, b"{\"op\":\"cf_stats\",\"keyspace\":\"ks\",\"cf\":\"cf\"}\n").await;
    let stats: CfStatsResult = ok(&before[0]);
    let cf = &stats.keyspaces[0].column_families[0];
    assert_eq!((cf.sstable_count, cf.memtable_operations, cf.memtable_partitions), (0, 3, 3));
    assert_eq!(cf.write_count, 3);

    let replies = exchange(&state, b"{\"op\":\"flush\",\"keyspace\":\"ks\"}\n").await;
    let progress: Vec<&Progress> =
        replies.iter().filter_map(|r| if let Reply::Progress(p) = r { Some(p) } else { None }).collect();
    assert_eq!(progress.first().map(|p| (p.done, p.total, p.what.as_str())), Some((0, 2, "flushing ks.cf")));
    assert_eq!(progress.last().map(|p| (p.done, p.total)), Some((2, 2)));
    let work: WorkResult = ok(finals(&replies)[0]);
    let names: Vec<&str> = work.column_families.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["ks.cf", "ks.other"]);
    assert!(work.column_families.iter().all(|c| c.sstables_before == 0 && c.sstables_after == 1));

    let after = exchange(&state, b"{\"op\":\"cf_stats\"}\n").await;
    let stats: CfStatsResult = ok(&after[0]);
    // The built-in keyspaces (schema, node state, traces) are listed too, as nodetool does.
    let names: Vec<&str> = stats.keyspaces.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["ks", "system", "system_auth", "system_distributed", "system_schema", "system_traces"]);
    let ks = &stats.keyspaces[0];
    assert_eq!(ks.write_count, 4);
    let cf = ks.column_families.iter().find(|c| c.name == "cf").expect("cf listed");
    assert_eq!(cf.sstable_count, 1);
    assert_eq!(cf.key_estimate, 3);
    assert_eq!(cf.sstable_cells, 3);
    assert_eq!(cf.memtable_switch_count, 1);
    assert_eq!((cf.memtable_operations, cf.memtable_bytes), (0, 0));
    assert_eq!((cf.min_timestamp, cf.max_timestamp), (Some(1000), Some(1000)));
    assert!(cf.space_used_live > cf.data_bytes && cf.data_bytes > 0, "{cf:?}");

    // Compaction of one SSTable leaves one; of two, one.
    write(&node.storage, "cf", "d").expect("write");
    node.storage.flush("ks", "cf").expect("flush");
    let replies = exchange(&state, b"{\"op\":\"compact\",\"keyspace\":\"ks\",\"cfs\":[\"cf\"]}\n").await;
    let work: WorkResult = ok(finals(&replies)[0]);
    assert_eq!((work.column_families[0].sstables_before, work.column_families[0].sstables_after), (2, 1));
    let stats: CfStatsResult =
        ok(&exchange(&state, b"{\"op\":\"cf_stats\",\"keyspace\":\"ks\",\"cf\":\"cf\"}\n").await[0]);
    assert_eq!(stats.keyspaces[0].column_families[0].key_estimate, 4);
    assert_eq!(stats.keyspaces[0].column_families[0].compactions, 1);
}

#[tokio::test]
async fn unknown_names_are_typed_errors_checked_before_any_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let node = open_node(dir.path());
    write(&node.storage, "cf", "a").expect("write");
    let state = AdminState::new(node.clone());
    let replies = exchange(
        &state,
        b"{\"op\":\"flush\",\"keyspace\":\"nope\"}\n\
          {\"op\":\"flush\",\"keyspace\":\"ks\",\"cfs\":[\"cf\",\"missing\"]}\n\
          {\"op\":\"cf_stats\",\"keyspace\":\"ks\",\"cf\":\"missing\"}\n\
          {\"op\":\"cf_stats\",\"cf\":\"cf\"}\n\
          {\"op\":\"get_endpoints\",\"keyspace\":\"ks\",\"cf\":\"missing\",\"key\":\"k\"}\n\
          {\"op\":\"cleanup\",\"keyspace\":\"nope\"}\n",
    )
    .await;
    let kinds: Vec<Option<ErrorKind>> = replies.iter().map(error_kind).collect();
    assert_eq!(
        kinds,
        [
            Some(ErrorKind::UnknownKeyspace),
            Some(ErrorKind::UnknownColumnFamily),
            Some(ErrorKind::UnknownColumnFamily),
            Some(ErrorKind::BadRequest),
            Some(ErrorKind::UnknownColumnFamily),
            Some(ErrorKind::UnknownKeyspace),
        ]
    );
    // The flush naming a missing CF did not flush the one that exists.
    assert_eq!(node.storage.cf_stats("ks", "cf").expect("cf").sstable_count as usize, 0);
}

#[tokio::test]
async fn join_answers_as_on_a_joined_node_and_move_needs_the_cluster_service() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = AdminState::new(open_node(dir.path()));
    let replies =
        exchange(&state, b"{\"op\":\"move\",\"token\":\"5\"}\n{\"op\":\"load_balance\"}\n{\"op\":\"join\"}\n").await;
    assert_eq!(replies.len(), 3);
    for (r, op) in replies[..2].iter().zip(["move", "loadbalance"]) {
        let expected = format!("{op}: this node runs without the cluster service");
        assert!(matches!(r, Reply::Error(e) if e.message == expected), "{r:?}");
    }
    assert!(
        matches!(&replies[2], Reply::Error(e) if e.kind == ErrorKind::BadRequest && e.message == "This node has already joined the ring."),
        "{:?}",
        replies[2]
    );
}

/// Alone in the ring, every range has one replica: repair compares nothing and says so per
/// column family; a missing keyspace or column family is named.
#[tokio::test]
async fn repair_on_a_single_node_has_nothing_to_compare() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = AdminState::new(open_node(dir.path()));
    let replies = exchange(
        &state,
        b"{\"op\":\"repair\",\"keyspace\":\"ks\",\"primary_range\":true}\n\
          {\"op\":\"repair\",\"keyspace\":\"nope\"}\n{\"op\":\"repair\",\"keyspace\":\"ks\",\"cfs\":[\"nope\"]}\n",
    )
    .await;
    let Some(Reply::Ok(value)) = replies.iter().find(|r| matches!(r, Reply::Ok(_))) else {
        panic!("no ok reply: {replies:?}")
    };
    let result: RepairResult = serde_json::from_value(value.clone()).expect("a repair result");
    assert!(!result.column_families.is_empty());
    assert!(result.column_families.iter().all(|cf| cf.name.starts_with("ks.") && cf.ranges == 0 && cf.writes == 0));
    let errors: Vec<&ErrorReply> =
        replies.iter().filter_map(|r| if let Reply::Error(e) = r { Some(e) } else { None }).collect();
    assert_eq!(errors.len(), 2, "{replies:?}");
    assert_eq!(errors[0].kind, ErrorKind::UnknownKeyspace);
    assert_eq!(errors[1].kind, ErrorKind::UnknownColumnFamily);
}

#[tokio::test]
async fn slow_steps_repeat_their_progress_line() {
    let mut out = ReplyWriter::new(Vec::new());
    let p = Progress { done: 0, total: 1, what: "compacting ks.cf".into() };
    let value = run_blocking_every(&mut out, &p, Duration::from_millis(40), || {
        std::thread::sleep(Duration::from_millis(300));
        7
    })
    .await
    .expect("task runs");
    assert_eq!(value, 7);
    let text = String::from_utf8(out.write).expect("UTF-8");
    let beats = text.lines().count();
    assert!((3..=9).contains(&beats), "{beats} heartbeats: {text}");
    assert!(text.lines().all(|l| Reply::decode_line(l.as_bytes()) == Ok(Reply::Progress(p.clone()))));
}

/// Runs a blocking client closure off the runtime, bounded.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::time::timeout(WAIT, tokio::task::spawn_blocking(f)).await.expect("in time").expect("client task")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_drives_a_node_over_tcp_through_drain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let node = open_node(dir.path());
    write(&node.storage, "cf", "a").expect("write");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let server = tokio::spawn(serve(listener, node.clone(), stop_rx));

    let expected_token = {
        let p = node.storage.partitioner();
        p.token_to_string(&p.token_for_key(b"some key"))
    };
    let node_token = node.storage.partitioner().token_to_string(&node.coordinator.membership().local_tokens()[0]);
    let (ring, info, cluster, endpoints, drain, progress) = blocking(move || {
        let mut c = Client::connect("127.0.0.1", port, WAIT).expect("connects");
        let none = &mut |_: &Progress| {};
        let ring: RingResult = c.call_as(&Request::Ring, none).expect("ring");
        let info: InfoResult = c.call_as(&Request::Info, none).expect("info");
        let cluster: DescribeClusterResult = c.call_as(&Request::DescribeCluster, none).expect("describe");
        let endpoints: GetEndpointsResult = c
            .call_as(&Request::GetEndpoints { keyspace: "ks".into(), cf: "cf".into(), key: "some key".into() }, none)
            .expect("endpoints");
        let mut progress = Vec::new();
        let drain: DrainResult = c.call_as(&Request::Drain, &mut |p| progress.push(p.clone())).expect("drain");
        (ring, info, cluster, endpoints, drain, progress)
    })
    .await;

    assert_eq!(ring.entries.len(), 1);
    let e = &ring.entries[0];
    assert_eq!((e.address.as_str(), e.status.as_str(), e.state.as_str()), ("127.0.0.1", "Up", "Normal"));
    assert_eq!(e.owns, 1.0);
    assert_eq!(e.token, node_token);
    assert_eq!(ring.partitioner, "org.apache.cassandra.dht.RandomPartitioner");
    assert_eq!(info.token, node_token);
    assert_eq!(info.host_id, e.host_id);
    assert_eq!(info.mode, "NORMAL");
    assert_eq!(info.memtable_operations, 1);
    assert_eq!(info.schema_version, node.storage.schema_version().to_string());
    assert!(info.rss_bytes.unwrap_or(0) > 0, "VmRSS read from /proc: {info:?}");
    assert_eq!(cluster.name, "Admin Test Cluster");
    assert_eq!(cluster.snitch, "org.apache.cassandra.locator.SimpleSnitch");
    assert_eq!(cluster.schema_versions.len(), 1);
    assert_eq!(endpoints.endpoints, ["127.0.0.1"]);
    assert_eq!(endpoints.token, expected_token);

    assert!(!drain.already_drained);
    assert_eq!(
        drain.flushed,
        [
            "ks.cf",
            "ks.other",
            "system.hints",
            "system.local",
            "system.paxos",
            "system.peers",
            "system.schema_columnfamilies",
            "system.schema_keyspaces",
            "system_auth.role_permissions",
            "system_auth.roles",
            "system_distributed.parent_repair_history",
            "system_distributed.repair_history",
            "system_schema.aggregates",
            "system_schema.columns",
            "system_schema.dropped_columns",
            "system_schema.functions",
            "system_schema.indexes",
            "system_schema.keyspaces",
            "system_schema.tables",
            "system_schema.triggers",
            "system_schema.types",
            "system_schema.views",
            "system_traces.events",
            "system_traces.sessions",
        ]
    );
    assert_eq!(progress.last().map(|p| p.what.as_str()), Some("drained"));
    assert_eq!(node.storage.cf_stats("ks", "cf").expect("cf").sstable_count as usize, 1);
    // The engine now refuses writes; reads still work.
    assert!(matches!(write(&node.storage, "cf", "b"), Err(StorageError::ShuttingDown)));

    let (flush, again, net) = blocking(move || {
        let mut c = Client::connect("127.0.0.1", port, WAIT).expect("connects");
        let none = &mut |_: &Progress| {};
        let flush = c.call(&Request::Flush { keyspace: None, cfs: vec![] }, none);
        let again: DrainResult = c.call_as(&Request::Drain, none).expect("second drain");
        let net: NetStatsResult = c.call_as(&Request::NetStats, none).expect("netstats");
        (flush, again, net)
    })
    .await;
    assert!(matches!(flush, Err(ToolError::Node(ErrorReply { kind: ErrorKind::Drained, .. }))), "{flush:?}");
    assert!(again.already_drained);
    assert_eq!(net.mode, "DRAINED");
    assert!(net.sending.is_empty() && net.receiving.is_empty());

    stop_tx.send(true).expect("server listening for shutdown");
    tokio::time::timeout(WAIT, server).await.expect("serve returns on shutdown").expect("serve task");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_tcp_clients_get_one_final_line_per_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (_stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(serve(listener, open_node(dir.path()), stop_rx));

    let (first, second, long, after) = blocking(move || {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connects");
        s.set_read_timeout(Some(WAIT)).expect("timeout");
        let mut r = StdBufReader::new(s.try_clone().expect("clone"));
        let mut line = || {
            let mut l = String::new();
            r.read_line(&mut l).expect("reply");
            l
        };
        s.write_all(b"{\"op\":\"net_stats\"\n").expect("send");
        let first = line();
        s.write_all(b"{\"op\":\"net_stats\"}\n").expect("send");
        let second = line();
        s.write_all(&vec![b'{'; MAX_REQUEST_LINE + 2]).expect("send");
        s.write_all(b"\n{\"op\":\"version\"}\n").expect("send");
        let long = line();
        let after = line();
        s.shutdown(std::net::Shutdown::Write).expect("half close");
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).expect("clean close");
        assert!(rest.is_empty(), "nothing after the last reply");
        (first, second, long, after)
    })
    .await;
    assert!(first.starts_with("{\"error\":{\"kind\":\"bad_request\""), "{first}");
    assert!(second.ends_with('\n'));
    let net: NetStatsResult = ok(&Reply::decode_line(second.trim_end().as_bytes()).expect("reply"));
    assert_eq!(net, NetStatsResult { mode: "NORMAL".into(), sending: vec![], receiving: vec![] });
    assert!(long.starts_with("{\"error\":{\"kind\":\"bad_request\""), "{long}");
    let v: VersionResult = ok(&Reply::decode_line(after.trim_end().as_bytes()).expect("reply"));
    assert_eq!(v.protocol_version, PROTOCOL_VERSION);
}

/// [`open_node`] with a Thrift server, listening on a free port of 127.0.0.1.
async fn open_node_serving_thrift(dir: &Path) -> Arc<Node> {
    use crate::thrift::handler::ThriftContext;
    use crate::thrift::server::ThriftServer;
    use crate::thrift::ServeOptions;
    let bare = open_node(dir);
    let ctx = Arc::new(ThriftContext {
        coordinator: bare.coordinator.clone(),
        cql: Arc::new(cql::Executor::new(bare.coordinator.clone())),
        authenticator: Arc::new(crate::auth::Authenticator::AllowAll),
        config_file: None,
    });
    let thrift =
        Arc::new(ThriftServer::new("127.0.0.1:0", ctx, ServeOptions { max_message_bytes: 1 << 20, event_loops: 1 }));
    assert!(thrift.start().await.expect("thrift listens"));
    Arc::new(Node {
        storage: bare.storage.clone(),
        coordinator: bare.coordinator.clone(),
        service: None,
        thrift: Some(thrift),
        native: None,
    })
}

fn status(r: &Reply) -> (bool, bool) {
    let s: ServiceStatus = ok(r);
    (s.running, s.changed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thrift_is_stopped_and_started_again_each_request_idempotent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let node = open_node_serving_thrift(dir.path()).await;
    let thrift = node.thrift.clone().expect("a thrift server");
    let addr = thrift.local_addr().await.expect("listening");
    let state = AdminState::new(node);
    let info = |replies: &[Reply]| -> InfoResult { ok(&replies[0]) };

    let replies = exchange(&state, b"{\"op\":\"status_thrift\"}\n{\"op\":\"info\"}\n").await;
    assert_eq!(status(&replies[0]), (true, false));
    assert!(info(&replies[1..]).thrift_active);

    let replies = exchange(
        &state,
        b"{\"op\":\"disable_thrift\"}\n{\"op\":\"disable_thrift\"}\n{\"op\":\"status_thrift\"}\n{\"op\":\"info\"}\n",
    )
    .await;
    let got: Vec<(bool, bool)> = replies[..3].iter().map(status).collect();
    assert_eq!(got, [(false, true), (false, false), (false, false)]);
    assert!(!info(&replies[3..]).thrift_active);
    let refused = blocking(move || std::net::TcpStream::connect(addr).map(|_| ())).await;
    assert!(refused.is_err(), "the thrift port still accepts connections");

    let replies = exchange(&state, b"{\"op\":\"enable_thrift\"}\n{\"op\":\"enable_thrift\"}\n").await;
    let got: Vec<(bool, bool)> = replies.iter().map(status).collect();
    assert_eq!(got, [(true, true), (true, false)]);
    assert_eq!(thrift.local_addr().await, Some(addr), "listening on the same address again");
    blocking(move || std::net::TcpStream::connect(addr)).await.expect("the thrift port accepts again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drained_node_does_not_start_thrift_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = AdminState::new(open_node_serving_thrift(dir.path()).await);
    let replies =
        exchange(&state, b"{\"op\":\"disable_thrift\"}\n{\"op\":\"drain\"}\n{\"op\":\"enable_thrift\"}\n").await;
    let finals = finals(&replies);
    assert_eq!(status(finals[0]), (false, true));
    assert!(matches!(finals[1], Reply::Ok(_)), "{:?}", finals[1]);
    assert!(
        matches!(finals[2], Reply::Error(e) if e.kind == ErrorKind::Drained
            && e.message == "enablethrift: unable to start thrift because the node was drained"),
        "{:?}",
        finals[2]
    );
    assert!(!state.node.thrift.as_ref().expect("a thrift server").is_running());
}

#[tokio::test]
async fn the_toggles_name_what_a_node_runs_without() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = AdminState::new(open_node(dir.path()));
    let replies = exchange(
        &state,
        b"{\"op\":\"status_gossip\"}\n{\"op\":\"disable_gossip\"}\n{\"op\":\"enable_gossip\"}\n\
          {\"op\":\"status_thrift\"}\n{\"op\":\"disable_thrift\"}\n{\"op\":\"enable_thrift\"}\n{\"op\":\"info\"}\n",
    )
    .await;
    let expected = [
        "statusgossip: this node runs without the cluster service",
        "disablegossip: this node runs without the cluster service",
        "enablegossip: this node runs without the cluster service",
        "statusthrift: this node runs without a Thrift server",
        "disablethrift: this node runs without a Thrift server",
        "enablethrift: this node runs without a Thrift server",
    ];
    for (r, message) in replies.iter().zip(expected) {
        assert!(matches!(r, Reply::Error(e) if e.kind == ErrorKind::NotSupported && e.message == message), "{r:?}");
    }
    let info: InfoResult = ok(&replies[6]);
    assert!(!info.gossip_active && !info.thrift_active, "{info:?}");
}
