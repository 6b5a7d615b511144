//! What the admin interface's operations share: the node's mode and operations lock
//! ([`AdminState`]), the typed error every operation answers with ([`OpError`]), and the helpers
//! that keep progress lines coming while a step runs.

use std::future::Future;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use admin_protocol::*;
use cluster::coordinator::{CoordinatorError, DrainError, OperationEvent, OperationMode, OperationStep};
use cluster::StorageService;
use storage::engine::CompactionInterrupted;
use storage::StorageError;
use tokio::io::AsyncWrite;

use super::reply::{ReplyWriter, HEARTBEAT};
use crate::node::Node;

/// Operation mode, as `info` and `netstats` print it.
pub(super) const MODE_NORMAL: u8 = 0;
pub(super) const MODE_DRAINING: u8 = 1;
pub(super) const MODE_DRAINED: u8 = 2;
pub(super) const MODE_LEAVING: u8 = 3;
pub(super) const MODE_DECOMMISSIONED: u8 = 4;
pub(super) const MODE_MOVING: u8 = 5;

/// The admin interface's view of the node.
pub struct AdminState {
    pub node: Arc<Node>,
    started: Instant,
    mode: AtomicU8,
    /// Flush and compact hold it shared, drain exclusively: a drain waits for running
    /// operations, and operations after it see the drained mode.
    pub(super) ops_lock: tokio::sync::RwLock<()>,
}

impl AdminState {
    pub fn new(node: Arc<Node>) -> AdminState {
        AdminState {
            node,
            started: Instant::now(),
            mode: AtomicU8::new(MODE_NORMAL),
            ops_lock: tokio::sync::RwLock::new(()),
        }
    }

    /// One of the `MODE_*` constants.
    pub(super) fn mode(&self) -> u8 {
        self.mode.load(Ordering::SeqCst)
    }

    /// How long since the admin interface started (`info`'s uptime).
    pub(super) fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Takes the mode a cluster-layer operation reports (see [`follow`]).
    fn mirror(&self, mode: OperationMode) {
        let mode = match mode {
            OperationMode::Normal => MODE_NORMAL,
            OperationMode::Draining => MODE_DRAINING,
            OperationMode::Drained => MODE_DRAINED,
            OperationMode::Leaving => MODE_LEAVING,
            OperationMode::Decommissioned => MODE_DECOMMISSIONED,
            OperationMode::Moving => MODE_MOVING,
        };
        self.mode.store(mode, Ordering::SeqCst);
    }

    pub(super) fn mode_name(&self) -> &'static str {
        match self.mode.load(Ordering::SeqCst) {
            MODE_NORMAL => "NORMAL",
            MODE_DRAINING => "DRAINING",
            MODE_LEAVING => "LEAVING",
            MODE_DECOMMISSIONED => "DECOMMISSIONED",
            MODE_MOVING => "MOVING",
            _ => "DRAINED",
        }
    }

    pub(super) fn check_not_drained(&self, op: &'static str) -> Result<(), OpError> {
        match self.mode.load(Ordering::SeqCst) {
            // A move holds the operations lock until it ends: what waited for it runs after.
            MODE_NORMAL | MODE_MOVING => Ok(()),
            MODE_LEAVING | MODE_DECOMMISSIONED => Err(OpError::Left(op)),
            _ => Err(OpError::Drained(op)),
        }
    }
}

/// Why an operation failed.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    #[error("{0}")]
    Storage(StorageError),
    /// A compaction, cleanup or scrub that a `stop` request stopped (Cassandra's words).
    #[error("{0}")]
    Interrupted(CompactionInterrupted),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    NotBuilt(String),
    #[error("{0}: the node is drained (restart it to flush, compact or accept writes again)")]
    Drained(&'static str),
    /// Something else the drained (or draining) node refuses, said in full.
    #[error("{0}")]
    DrainedNode(String),
    #[error("{0}: the node is leaving the ring or has left it (decommission)")]
    Left(&'static str),
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Internal(String),
}

impl From<StorageError> for OpError {
    fn from(e: StorageError) -> OpError {
        match CompactionInterrupted::of(&e) {
            Some(interrupted) => OpError::Interrupted(interrupted.clone()),
            None => OpError::Storage(e),
        }
    }
}

impl From<CoordinatorError> for OpError {
    fn from(e: CoordinatorError) -> OpError {
        match e {
            CoordinatorError::Storage(e) => OpError::from(e),
            other => OpError::Unavailable(other.to_string()),
        }
    }
}

impl From<DrainError> for OpError {
    fn from(e: DrainError) -> OpError {
        match e {
            DrainError::Storage(e) => OpError::from(e),
            DrainError::Task(e) => OpError::Internal(format!("admin task failed: {e}")),
        }
    }
}

impl OpError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            OpError::Storage(StorageError::UnknownKeyspace(_)) => ErrorKind::UnknownKeyspace,
            OpError::Storage(StorageError::UnknownColumnFamily { .. }) => ErrorKind::UnknownColumnFamily,
            OpError::Storage(
                StorageError::InvalidSnapshotTag { .. }
                | StorageError::SnapshotExists { .. }
                | StorageError::InvalidImport { .. }
                | StorageError::UnknownIndex { .. }
                | StorageError::Dht(_),
            ) => ErrorKind::BadRequest,
            OpError::Storage(_) => ErrorKind::Storage,
            OpError::Interrupted(_) => ErrorKind::Interrupted,
            OpError::BadRequest(_) => ErrorKind::BadRequest,
            OpError::NotBuilt(_) => ErrorKind::NotSupported,
            OpError::Drained(_) | OpError::DrainedNode(_) | OpError::Left(_) => ErrorKind::Drained,
            OpError::Unavailable(_) => ErrorKind::Unavailable,
            OpError::Internal(_) => ErrorKind::Internal,
        }
    }
}

/// Column families named by a request, as (keyspace, name) in that order: those named of
/// `keyspace`, every one of it when none is, every one of the node without a keyspace. Every
/// name is checked before any work starts.
pub(super) fn select_stores(
    node: &Node,
    keyspace: Option<&str>,
    cfs: &[String],
) -> Result<Vec<(String, String)>, OpError> {
    let storage = &node.storage;
    let mut stores = match keyspace {
        None if !cfs.is_empty() => return Err(OpError::BadRequest("column families need their keyspace".into())),
        None => storage.column_families(),
        Some(k) => {
            let ks = storage.keyspace(k).ok_or_else(|| StorageError::UnknownKeyspace(k.into()))?;
            let names: Vec<&str> = if cfs.is_empty() {
                ks.cf_defs.iter().map(|d| d.name.as_str()).collect()
            } else {
                cfs.iter().map(String::as_str).collect()
            };
            let mut selected = Vec::new();
            for n in names {
                storage.cf_metadata(k, n)?;
                selected.push((k.to_string(), n.to_string()));
            }
            selected
        }
    };
    stores.sort();
    stores.dedup();
    Ok(stores)
}

/// The node's gossip and ring service, which `op` needs.
pub(super) fn cluster_service<'n>(node: &'n Node, op: &str) -> Result<&'n Arc<StorageService>, OpError> {
    node.service.as_ref().ok_or_else(|| OpError::NotBuilt(format!("{op}: this node runs without the cluster service")))
}

/// Several directories (one per data directory) in one string field: ", " between them.
pub(super) fn join_paths(paths: &[std::path::PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// Runs `f` on the blocking pool, repeating `progress` every [`HEARTBEAT`] until it returns.
pub(super) async fn run_blocking<W, T, F>(out: &mut ReplyWriter<W>, progress: &Progress, f: F) -> Result<T, OpError>
where
    W: AsyncWrite + Unpin,
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    run_blocking_every(out, progress, HEARTBEAT, f).await
}

pub(crate) async fn run_blocking_every<W, T, F>(
    out: &mut ReplyWriter<W>,
    progress: &Progress,
    every: Duration,
    f: F,
) -> Result<T, OpError>
where
    W: AsyncWrite + Unpin,
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let joined = with_heartbeat(out, progress, every, tokio::task::spawn_blocking(f)).await;
    joined.map_err(|e| OpError::Internal(format!("admin task failed: {e}")))
}

/// Awaits `work`, repeating `progress` every `every` until it is done.
pub(super) async fn with_heartbeat<W, T>(
    out: &mut ReplyWriter<W>,
    progress: &Progress,
    every: Duration,
    work: impl Future<Output = T>,
) -> T
where
    W: AsyncWrite + Unpin,
{
    tokio::pin!(work);
    let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            done = &mut work => return done,
            _ = beat.tick() => out.progress(progress.clone()).await,
        }
    }
}

/// The callback a cluster-layer operation reports to: it writes the node's mode, so it lives as
/// long as the borrow of the [`AdminState`].
type Reporter<'s> = Box<dyn FnMut(OperationEvent) + Send + 's>;

/// Runs one of the cluster layer's long operations (drain, decommission, move, removenode):
/// `operation` starts it with the callback it reports to. The modes it reports become the
/// node's at once; its steps become progress lines on `out`, each repeated every [`HEARTBEAT`]
/// while it lasts, as the steps run here are ([`with_heartbeat`]).
pub(super) async fn follow<'s, W, T, F>(
    state: &'s AdminState,
    out: &mut ReplyWriter<W>,
    operation: impl FnOnce(Reporter<'s>) -> F,
) -> T
where
    W: AsyncWrite + Unpin,
    F: Future<Output = T>,
{
    follow_every(state, out, HEARTBEAT, operation).await
}

/// [`follow`], repeating a lasting step every `every`.
async fn follow_every<'s, W, T, F>(
    state: &'s AdminState,
    out: &mut ReplyWriter<W>,
    every: Duration,
    operation: impl FnOnce(Reporter<'s>) -> F,
) -> T
where
    W: AsyncWrite + Unpin,
    F: Future<Output = T>,
{
    let progress_of = |step: OperationStep| Progress { done: step.done, total: step.total, what: step.what };
    // Unbounded: the callback must not wait, and an operation has a few steps per range.
    let (steps, mut reported) = tokio::sync::mpsc::unbounded_channel();
    let operation = operation(Box::new(move |event| match event {
        OperationEvent::Mode(mode) => state.mirror(mode),
        // The receiver outlives the operation, so the send cannot fail.
        OperationEvent::Step(step) => drop(steps.send(step)),
    }));
    tokio::pin!(operation);
    let mut lasting: Option<Progress> = None;
    let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            // Steps first, so that each is written before the operation's end is seen.
            biased;
            Some(step) = reported.recv() => {
                let lasts = step.lasts;
                let progress = progress_of(step);
                out.progress(progress.clone()).await;
                lasting = lasts.then_some(progress);
                beat.reset();
            }
            done = &mut operation => {
                while let Ok(step) = reported.try_recv() {
                    out.progress(progress_of(step)).await;
                }
                return done;
            }
            _ = beat.tick(), if lasting.is_some() => {
                if let Some(progress) = &lasting {
                    out.progress(progress.clone()).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use admin_protocol::{Progress, Reply};
    use cluster::coordinator::{OperationEvent, OperationMode, OperationStep};

    use super::super::reply::ReplyWriter;
    use super::super::tests::open_node_with;
    use super::{follow_every, AdminState, MODE_MOVING};

    fn step(done: u64, what: &str, lasts: bool) -> OperationEvent {
        OperationEvent::Step(OperationStep { done, total: 3, what: what.into(), lasts })
    }

    /// A cluster-layer operation's steps reach the client as the admin's own do: a lasting one
    /// repeated until the next step, one said once never repeated, every one written before the
    /// operation's answer; and its modes are the node's from the moment it reports them.
    #[tokio::test]
    async fn an_operations_steps_become_progress_lines_and_its_modes_the_nodes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = AdminState::new(open_node_with(dir.path(), |_| {}));
        let mut out = ReplyWriter::new(Vec::new());
        let every = Duration::from_millis(40);
        let state_seen = &state;
        let answer = follow_every(&state, &mut out, every, |mut report| async move {
            report(OperationEvent::Mode(OperationMode::Moving));
            assert_eq!(state_seen.mode(), MODE_MOVING, "the mode is taken at once");
            report(step(0, "waiting", true));
            tokio::time::sleep(every * 8).await;
            report(step(1, "handing over", false));
            tokio::time::sleep(every * 4).await;
            report(step(3, "done", false));
            7
        })
        .await;
        assert_eq!(answer, 7);
        let text = String::from_utf8(out.write).expect("UTF-8");
        let lines: Vec<Progress> = text
            .lines()
            .map(|l| match Reply::decode_line(l.as_bytes()) {
                Ok(Reply::Progress(p)) => p,
                other => panic!("not a progress line: {other:?}"),
            })
            .collect();
        let whats: Vec<&str> = lines.iter().map(|p| p.what.as_str()).collect();
        let waiting = whats.iter().take_while(|w| **w == "waiting").count();
        assert!((3..=12).contains(&waiting), "{waiting} lines of the lasting step: {text}");
        assert_eq!(whats[waiting..], ["handing over", "done"], "{text}");
        assert_eq!(lines.last(), Some(&Progress { done: 3, total: 3, what: "done".into() }));
    }
}
