//! Startup and shutdown of the `sibyl` daemon.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cluster::coordinator::{Coordinator, LocalNode};
use storage::dht::Partitioner;
use storage::engine::{Storage, StorageConfig, SyncMode};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::{info, warn};

use crate::auth::Authenticator;
use crate::config::{self, CommitLogSync, Config};
use crate::node::Node;
use crate::thrift::handler::ThriftContext;
use crate::thrift::ServeOptions;

/// Until the cluster layer places nodes, every node reports itself in one data centre and rack,
/// as Cassandra's SimpleSnitch does.
const DATACENTER: &str = "datacenter1";
const RACK: &str = "rack1";
const SNITCH: &str = "org.apache.cassandra.locator.SimpleSnitch";

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("{path}: {source}")]
    Config { path: PathBuf, source: config::ConfigError },
    #[error("{0}")]
    Storage(#[from] storage::StorageError),
    #[error("authenticator: {0}")]
    Auth(String),
    #[error("partitioner: {0}")]
    Partitioner(String),
    #[error("cannot listen for thrift clients on {addr}: {source}")]
    Bind { addr: String, source: std::io::Error },
    #[error("cannot listen for admin clients (sibyltool) on {addr}: {source}")]
    AdminBind { addr: String, source: std::io::Error },
    #[error("{0}")]
    Runtime(std::io::Error),
}

/// The engine's settings from the node's configuration.
pub fn storage_config(config: &Config, partitioner: Partitioner) -> StorageConfig {
    let data_dir = config.data_file_directories.first().cloned().unwrap_or_else(|| PathBuf::from("data"));
    if config.data_file_directories.len() > 1 {
        warn!("several DataFileDirectory entries: only the first ({}) is used for now", data_dir.display());
    }
    let mut sc = StorageConfig::new(data_dir, config.commit_log_directory.clone());
    sc.sync = match config.commit_log_sync {
        CommitLogSync::Periodic { period_ms } => SyncMode::Periodic { period: Duration::from_millis(period_ms.max(1)) },
        CommitLogSync::Batch { window_ms } => {
            SyncMode::Batch { window: Duration::from_secs_f64(window_ms.max(0.0) / 1000.0) }
        }
    };
    sc.segment_size = (config.commit_log_rotation_threshold_mb.max(1) as u64) << 20;
    sc.partitioner = partitioner;
    sc.memtable_flush_bytes = (config.memtable_throughput_mb.max(1) as usize) << 20;
    sc.index_interval = config.index_interval.max(1) as usize;
    sc.block_cache_bytes = (config.block_cache_size_mb as usize) << 20;
    sc.initial_keyspaces = config.keyspaces.clone();
    sc
}

/// Loads the configuration, opens the engine, serves Thrift until SIGTERM/SIGINT, then flushes
/// and exits.
pub fn run(config_path: &Path) -> Result<(), StartupError> {
    let config =
        config::load(config_path).map_err(|source| StartupError::Config { path: config_path.to_path_buf(), source })?;
    for w in &config.warnings {
        warn!("{}: {w}", config_path.display());
    }
    let partitioner =
        Partitioner::from_class_name(&config.partitioner).map_err(|e| StartupError::Partitioner(e.to_string()))?;
    let conf_dir = config_path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let authenticator = Authenticator::for_config(&config, &conf_dir).map_err(|e| StartupError::Auth(e.to_string()))?;

    info!(config = %config_path.display(), cluster = %config.cluster_name, "starting sibyl");
    let storage = Storage::open(storage_config(&config, partitioner))?;
    let local_token = local_token(&storage, &config, partitioner)?;
    let local = LocalNode {
        cluster_name: config.cluster_name.clone(),
        listen_address: config.listen_address.clone(),
        rpc_address: config.thrift_address.clone(),
        token: local_token,
        datacenter: DATACENTER.into(),
        rack: RACK.into(),
        snitch: SNITCH.into(),
    };
    let coordinator = Coordinator::single_node(storage.clone(), local).map_err(StartupError::Runtime)?;
    let node = Arc::new(Node { storage: storage.clone(), coordinator: coordinator.clone() });
    let thrift = Arc::new(ThriftContext { coordinator, authenticator, config_file: Some(config_path.to_path_buf()) });
    let options = ServeOptions {
        max_message_bytes: (config.thrift_max_message_length_mb.max(1) as usize) << 20,
        event_loops: config.thrift_event_loops as usize,
    };

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(StartupError::Runtime)?;
    let addr = format!("{}:{}", config.thrift_address, config.thrift_port);
    let admin_addr = format!("{}:{}", config.admin_address, config.admin_port);
    runtime.block_on(async move {
        let listener =
            TcpListener::bind(&addr).await.map_err(|source| StartupError::Bind { addr: addr.clone(), source })?;
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let admin_listener = TcpListener::bind(&admin_addr)
            .await
            .map_err(|source| StartupError::AdminBind { addr: admin_addr.clone(), source })?;
        let admin = tokio::spawn(crate::admin::serve(admin_listener, node.clone(), shutdown_rx.clone()));
        info!("Admin interface (sibyltool) listening on {admin_addr}");
        let server = tokio::spawn(crate::thrift::serve(listener, thrift, options, shutdown_rx));
        info!("Listening for thrift clients on {addr}");
        wait_for_signal().await;
        info!("shutting down: flushing memtables");
        let _ = shutdown_tx.send(true);
        let _ = server.await;
        let _ = admin.await;
        let s = storage.clone();
        match tokio::task::spawn_blocking(move || s.shutdown()).await {
            Ok(Ok(())) => info!("shutdown complete"),
            Ok(Err(e)) => warn!(error = %e, "shutdown flush failed; the commit log will be replayed at next start"),
            Err(e) => warn!(error = %e, "shutdown task failed"),
        }
        Ok(())
    })
}

/// The token this node owns: the one saved at first start, else `InitialToken`, else random.
fn local_token(
    storage: &Storage,
    config: &Config,
    partitioner: Partitioner,
) -> Result<storage::dht::Token, StartupError> {
    if let Some(saved) = storage.saved_token() {
        return partitioner.token_from_string(&saved).map_err(|e| StartupError::Partitioner(e.to_string()));
    }
    let token = match config.initial_token.as_deref().filter(|t| !t.is_empty()) {
        Some(t) => {
            partitioner.token_from_string(t).map_err(|e| StartupError::Partitioner(format!("InitialToken: {e}")))?
        }
        None => partitioner.random_token(&mut rand::thread_rng()),
    };
    storage.save_token(partitioner.token_to_string(&token))?;
    Ok(token)
}

async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    match (term, int) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
