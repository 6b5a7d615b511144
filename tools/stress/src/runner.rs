//! Runs the load: `--threads` connections, each an asynchronous task with one request in
//! flight, all on one tokio thread; a reporter on the calling thread that samples every second;
//! the pacing of `--rate` ([`crate::pacer`]); and the stop rules (count, duration, too many
//! consecutive errors). The same runner, key generator, values and histograms serve both
//! protocols; only [`Conn`] differs.
//!
//! Why one thread: the load generator shares the machine's cores with the server it measures,
//! and one OS thread per blocking connection spent most of its CPU waking threads up. An event
//! loop over all connections (as `redis-benchmark` has) costs about half as much per request.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

use tokio::sync::Semaphore;

use super::client::{self, ClientError, ConnectOptions, OpError, SchemaAction};
use super::cql::{self, CqlConn, CqlReply};
use super::keys::{key_of, KeyGenerator};
use super::pacer::{self, Pacer};
use super::resp::{RespConn, RespReply};
use super::settings::{Operation, Protocol, Settings, StopCondition, WriteCall};
use super::stats::{process_cpu_seconds, process_sleeps, Interval, LatencySummary, Summary, WorkerStats};
use super::wire::AsyncConn;

/// How often progress is sampled.
pub const INTERVAL: Duration = Duration::from_secs(1);
/// Random bytes each worker keeps to cut values from.
const VALUE_POOL: usize = 64 * 1024;

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Client(#[from] ClientError),
    #[error("cannot start the I/O thread: {0}")]
    Spawn(std::io::Error),
    #[error("cannot start the pacer thread: {0}")]
    Pacer(std::io::Error),
    #[error("cannot start the tokio runtime: {0}")]
    Runtime(std::io::Error),
}

/// A finished run: its summary and the per-second samples.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub summary: Summary,
    pub intervals: Vec<Interval>,
    /// What was done to the Thrift schema (`None` for RESP, which has none).
    pub schema: Option<SchemaAction>,
}

/// One connection of either protocol, with one request in flight.
pub enum Conn {
    Thrift(AsyncConn),
    Resp(RespConn),
    Cql(CqlConn),
}

impl Conn {
    /// Opens a connection ready for the load (Thrift: with the keyspace set).
    pub async fn open(settings: &Settings, opts: &ConnectOptions) -> Result<Conn, ClientError> {
        match settings.protocol {
            Protocol::Thrift => Ok(Conn::Thrift(client::connect_to_keyspace_async(opts, &settings.keyspace).await?)),
            Protocol::Resp => RespConn::connect(&opts.host, opts.port, opts.timeout)
                .await
                .map(Conn::Resp)
                .map_err(|source| ClientError::Connect { addr: format!("{}:{}", opts.host, opts.port), source }),
            Protocol::Cql => {
                CqlConn::connect(&opts.host, opts.port, opts.timeout, &settings.keyspace, settings.columns)
                    .await
                    .map(Conn::Cql)
                    .map_err(|source| ClientError::Cql { addr: format!("{}:{}", opts.host, opts.port), source })
            }
        }
    }

    /// Writes one row (Thrift: `values` as columns `C0..`; RESP: `SET key values[0]`).
    async fn insert(&mut self, key: &[u8], values: Vec<Vec<u8>>, s: &Settings) -> Result<(), OpError> {
        match self {
            Conn::Thrift(c) => match s.write_call {
                // Settings allow this call with one column only.
                WriteCall::Insert => {
                    let value = values.into_iter().next().unwrap_or_default();
                    client::insert_column_async(c, key, value, s.consistency).await
                }
                WriteCall::BatchMutate => client::insert_row_async(c, key, values, s.consistency).await,
            },
            Conn::Resp(c) => {
                let value = values.first().map(Vec::as_slice).unwrap_or_default();
                match c.set(key, value).await? {
                    RespReply::Status => Ok(()),
                    other => Err(unexpected_resp("SET", other)),
                }
            }
            Conn::Cql(c) => match c.insert(key, &values, s.consistency).await? {
                CqlReply::Void => Ok(()),
                other => Err(unexpected_cql("INSERT", other)),
            },
        }
    }

    /// Reads one row; a missing row is an error.
    async fn read(&mut self, key: &[u8], s: &Settings) -> Result<(), OpError> {
        match self {
            Conn::Thrift(c) => client::read_row_async(c, key, s.columns, s.consistency).await,
            Conn::Resp(c) => match c.get(key).await? {
                RespReply::Bulk(_) => Ok(()),
                RespReply::Nil => Err(OpError::Empty("GET found no value (key not written?)")),
                other => Err(unexpected_resp("GET", other)),
            },
            Conn::Cql(c) => match c.read(key, s.consistency).await? {
                CqlReply::Rows(n) if n > 0 => Ok(()),
                CqlReply::Rows(_) => Err(OpError::Empty("SELECT found no row (key not written?)")),
                other => Err(unexpected_cql("SELECT", other)),
            },
        }
    }
}

fn unexpected_resp(command: &str, reply: RespReply) -> OpError {
    match reply {
        RespReply::Error(why) => OpError::RespServer(why),
        other => OpError::RespServer(format!("unexpected reply to {command}: {other:?}")),
    }
}

fn unexpected_cql(statement: &str, reply: CqlReply) -> OpError {
    match reply {
        CqlReply::Error { code, message } => OpError::CqlServer(format!("error 0x{code:04x}: {message}")),
        other => OpError::CqlServer(format!("unexpected reply to {statement}: {other:?}")),
    }
}

/// State shared by the workers.
struct Shared {
    settings: Settings,
    keys: KeyGenerator,
    /// Operations handed out so far (count mode).
    claimed: AtomicU64,
    deadline: Option<Instant>,
    stop: AtomicBool,
    abort_reason: Mutex<Option<String>>,
    consecutive_errors: AtomicU64,
    finished: AtomicUsize,
    connect: ConnectOptions,
}

impl Shared {
    /// Whether the run was stopped or its time is up.
    fn over(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Takes the next operation slot, or `false` when the run is over.
    fn next_slot(&self) -> bool {
        if self.over() {
            return false;
        }
        match self.settings.stop {
            StopCondition::Count(n) => self.claimed.fetch_add(1, Ordering::Relaxed) < n,
            StopCondition::Duration(_) => true,
        }
    }

    fn abort(&self, reason: String) {
        let mut r = self.abort_reason.lock();
        if r.is_none() {
            *r = Some(reason);
        }
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Connects, creates the schema if needed, runs the load and returns its figures. `progress`
/// is called once per interval (and once for the last, partial one).
pub fn run(settings: &Settings, mut progress: impl FnMut(&Interval)) -> Result<RunResult, RunError> {
    let connect = ConnectOptions {
        host: settings.host.clone(),
        port: settings.port,
        framed: settings.framed,
        timeout: settings.timeout,
    };
    let schema = match settings.protocol {
        Protocol::Thrift => {
            let mut c = client::connect(&connect)?;
            Some(client::ensure_schema(&mut c, &settings.keyspace, settings.replication_factor)?)
        }
        Protocol::Resp => None,
        Protocol::Cql => {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(RunError::Runtime)?;
            let made = rt.block_on(cql::ensure_schema(
                &connect.host,
                connect.port,
                connect.timeout,
                &settings.keyspace,
                settings.replication_factor,
                settings.columns,
            ));
            let addr = format!("{}:{}", connect.host, connect.port);
            Some(made.map_err(|source| ClientError::Cql { addr, source })?)
        }
    };
    // One thread drives every connection: see the module comment.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(RunError::Runtime)?;
    // All connections are opened before the clock starts, so a refused connection is a setup
    // error and connection set-up time is not measured.
    let clients = rt.block_on(async {
        let mut clients = Vec::with_capacity(settings.threads);
        for _ in 0..settings.threads {
            clients.push(Conn::open(settings, &connect).await?);
        }
        Ok::<_, ClientError>(clients)
    })?;

    let cpu_before = process_cpu_seconds();
    let sleeps_before = process_sleeps();
    let start = Instant::now();
    let shared = Arc::new(Shared {
        settings: settings.clone(),
        keys: KeyGenerator::new(settings.distribution, settings.num_keys, settings.stdev),
        claimed: AtomicU64::new(0),
        deadline: match settings.stop {
            StopCondition::Duration(d) => Some(start + d),
            StopCondition::Count(_) => None,
        },
        stop: AtomicBool::new(false),
        abort_reason: Mutex::new(None),
        consecutive_errors: AtomicU64::new(0),
        finished: AtomicUsize::new(0),
        connect,
    });
    let pacer = match settings.rate {
        Some(rate) => {
            let sh = shared.clone();
            let threads = settings.threads;
            let p = Pacer::start(rate, move || sh.over() || sh.finished.load(Ordering::Acquire) >= threads)
                .map_err(RunError::Pacer)?;
            Some(p)
        }
        None => None,
    };
    let permits = pacer.as_ref().map(Pacer::permits);
    let slots: Vec<Arc<Mutex<WorkerStats>>> =
        (0..settings.threads).map(|_| Arc::new(Mutex::new(WorkerStats::default()))).collect();
    let io = {
        let shared = shared.clone();
        let slots = slots.clone();
        thread::Builder::new()
            .name("stress-io".into())
            .spawn(move || {
                rt.block_on(async move {
                    let mut tasks = Vec::with_capacity(clients.len());
                    for (c, stats) in clients.into_iter().zip(slots) {
                        let sh = shared.clone();
                        let permits = permits.clone();
                        tasks.push(tokio::spawn(async move {
                            worker(&sh, c, &stats, permits.as_deref()).await;
                            sh.finished.fetch_add(1, Ordering::Release);
                        }));
                    }
                    for t in tasks {
                        let _ = t.await;
                    }
                })
            })
            .map_err(RunError::Spawn)?
    };

    let mut totals = WorkerStats::default();
    let mut intervals = Vec::new();
    let mut interval_start = start;
    loop {
        let all_done = wait_interval(&shared, interval_start + INTERVAL, settings.threads, &io);
        let now = Instant::now();
        let mut interval = WorkerStats::default();
        for s in &slots {
            s.lock().drain_into(&mut interval);
        }
        let dt = now.duration_since(interval_start).as_secs_f64();
        let lat = LatencySummary::of(&interval.latency);
        let sample = Interval {
            t_s: now.duration_since(start).as_secs_f64(),
            ops: interval.ops,
            op_rate: if dt > 0.0 { interval.ops as f64 / dt } else { 0.0 },
            mean_ms: lat.mean_ms,
            p99_ms: lat.p99_ms,
            errors: interval.errors,
            total_ops: totals.ops + interval.ops,
            total_errors: totals.errors + interval.errors,
        };
        interval.drain_into(&mut totals);
        // A final sliver (the last requests finishing just after a tick) gives a meaningless
        // rate; it counts in the totals but is not shown or plotted.
        let sliver = all_done && !intervals.is_empty() && dt < INTERVAL.as_secs_f64() / 4.0;
        if !sliver {
            progress(&sample);
            intervals.push(sample);
        }
        interval_start = now;
        if all_done {
            break;
        }
    }
    let _ = io.join();
    drop(pacer);
    let client_cpu_s = match (cpu_before, process_cpu_seconds()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let client_sleeps = match (sleeps_before, process_sleeps()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    let elapsed = interval_start.duration_since(start).as_secs_f64();
    let aborted = shared.abort_reason.lock().clone();
    let mut summary = Summary::new(
        settings.title.clone(),
        settings.operation.to_string(),
        settings.describe(),
        &totals,
        elapsed,
        aborted,
    );
    summary.protocol = settings.protocol.name().to_string();
    summary.target_rate = settings.rate;
    summary.client_cpu_s = client_cpu_s;
    summary.client_sleeps = client_sleeps;
    Ok(RunResult { summary, intervals, schema })
}

/// Sleeps until `until` or until every worker is done (or the I/O thread ended, which it only
/// does early if it panicked); returns whether they all are.
fn wait_interval(shared: &Shared, until: Instant, threads: usize, io: &thread::JoinHandle<()>) -> bool {
    loop {
        if shared.finished.load(Ordering::Acquire) >= threads || io.is_finished() {
            return true;
        }
        let now = Instant::now();
        if now >= until {
            return false;
        }
        thread::sleep((until - now).min(Duration::from_millis(20)));
    }
}

async fn worker(shared: &Shared, first: Conn, stats: &Mutex<WorkerStats>, permits: Option<&Semaphore>) {
    let s = &shared.settings;
    let mut rng = StdRng::from_entropy();
    let mut pool = vec![0u8; VALUE_POOL.max(s.value_size * 2)];
    rng.fill_bytes(&mut pool);
    let mut conn: Option<Conn> = Some(first);
    loop {
        let Some(c) = conn.as_mut() else {
            // The previous request broke the connection: open a new one before taking a slot,
            // so that the count of operations stays exact. Failures count as errors (and so
            // end the run after --max-consecutive-errors of them).
            match Conn::open(s, &shared.connect).await {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    record_error(shared, stats, &format!("reconnect failed: {e}"));
                    if shared.over() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            continue;
        };
        if !shared.next_slot() {
            break;
        }
        if let Some(permits) = permits {
            if !pacer::next_permit(permits).await {
                break;
            }
        }
        let op = match s.operation {
            Operation::Mixed => {
                if rng.gen_range(0..s.ratio.write + s.ratio.read) < s.ratio.write {
                    Operation::Insert
                } else {
                    Operation::Read
                }
            }
            other => other,
        };
        let key = key_of(shared.keys.next_index(&mut rng));
        let began = Instant::now();
        let result = match op {
            Operation::Insert | Operation::Mixed => {
                let values = (0..s.columns)
                    .map(|_| {
                        let at = rng.gen_range(0..=pool.len() - s.value_size);
                        pool[at..at + s.value_size].to_vec()
                    })
                    .collect();
                c.insert(&key, values, s).await
            }
            Operation::Read => c.read(&key, s).await,
            // Settings refuse these two with RESP.
            Operation::Range => match c {
                Conn::Thrift(c) => client::range_rows_async(c, key, s.range_rows, s.columns, s.consistency).await,
                Conn::Resp(_) | Conn::Cql(_) => Err(OpError::Empty("range is not implemented over RESP or CQL")),
            },
            Operation::CounterAdd => match c {
                Conn::Thrift(c) => client::counter_add_async(c, &key, s.columns, s.consistency).await,
                Conn::Resp(_) | Conn::Cql(_) => Err(OpError::Empty("counter_add is not implemented over RESP or CQL")),
            },
        };
        let micros = began.elapsed().as_micros() as u64;
        match result {
            Ok(()) => {
                shared.consecutive_errors.store(0, Ordering::Relaxed);
                stats.lock().success(op.name(), micros);
            }
            Err(e) => {
                if e.breaks_connection() {
                    conn = None;
                }
                record_error(shared, stats, &format!("{}: {}", op.name(), e.describe()));
            }
        }
    }
}

fn record_error(shared: &Shared, stats: &Mutex<WorkerStats>, what: &str) {
    stats.lock().failure(what);
    let n = shared.consecutive_errors.fetch_add(1, Ordering::Relaxed) + 1;
    let max = shared.settings.max_consecutive_errors;
    if n >= max {
        shared.abort(format!("{n} consecutive errors (limit {max}, see --max-consecutive-errors); last: {what}"));
    }
}
