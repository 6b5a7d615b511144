//! Startup and shutdown of the `sibyl` daemon.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cluster::coordinator::{Coordinator, Settings};
use cluster::Executor;
use cluster::{check_held_tokens, check_new_tokens, wait_to_settle, SettleWait, TokenConflict};
use cluster::{Announcement, StorageService};
use membership::locator::snitch;
use membership::{LocalInfo, Membership};
use messaging::{MessagingService, NetConfig, Timeouts};
use model::dht::{Partitioner, Token};
use storage::engine::{DiskAccess, Storage, StorageConfig, SyncMode};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::{info, warn};

use crate::auth::Authenticator;
use crate::config::{self, CommitLogSync, Config, DiskAccessMode};
use crate::native::{NativeContext, NativeOptions, NativeService};
use crate::node::Node;
use crate::thrift::handler::ThriftContext;
use crate::thrift::server::{ThriftServer, ThriftServerError};
use crate::thrift::ServeOptions;

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
    #[error("cannot listen for native transport clients on {addr}: {source}")]
    NativeBind { addr: String, source: std::io::Error },
    #[error("cannot listen for thrift clients on {addr}: {source}")]
    Bind { addr: String, source: std::io::Error },
    #[error("cannot listen for admin clients (sibyltool) on {addr}: {source}")]
    AdminBind { addr: String, source: std::io::Error },
    #[error("{0}")]
    Runtime(std::io::Error),
    #[error("snitch: {0}")]
    Snitch(String),
    #[error("internode messaging: {0}")]
    Messaging(String),
    #[error("bootstrap: {0}")]
    Bootstrap(String),
    #[error("{0}")]
    TokenConflict(TokenConflict),
}

/// The engine's settings from the node's configuration.
pub fn storage_config(config: &Config, partitioner: Partitioner) -> StorageConfig {
    let mut dirs = config.data_file_directories.iter().cloned();
    let data_dir = dirs.next().unwrap_or_else(|| PathBuf::from("data"));
    let mut sc = StorageConfig::new(data_dir, config.commit_log_directory.clone());
    // Each column family has a directory in every one; new SSTables go to the roomiest.
    sc.extra_data_dirs = dirs.collect();
    sc.sync = match config.commit_log_sync {
        CommitLogSync::Periodic { period_ms } => SyncMode::Periodic { period: Duration::from_millis(period_ms.max(1)) },
        CommitLogSync::Batch { window_ms } => {
            SyncMode::Batch { window: Duration::from_secs_f64(window_ms.max(0.0) / 1000.0) }
        }
    };
    sc.segment_size = (config.commit_log_rotation_threshold_mb.max(1) as u64) << 20;
    sc.commitlog_total_space = u64::from(config.commit_log_total_space_mb.max(1)) << 20;
    sc.snapshot_before_compaction = config.snapshot_before_compaction;
    sc.auto_snapshot = config.auto_snapshot;
    sc.compaction_throughput_mb_per_sec = config.compaction_throughput_mb_per_sec;
    sc.incremental_backups = config.incremental_backups;
    sc.partitioner = partitioner;
    sc.memtable_flush_bytes = (config.memtable_throughput_mb.max(1) as usize) << 20;
    sc.memtable_flush_operations =
        (config.memtable_operations_millions * 1e6).round().clamp(1.0, usize::MAX as f64) as usize;
    sc.memtable_flush_after = Duration::from_secs(u64::from(config.memtable_flush_after_minutes.max(1)) * 60);
    sc.index_interval = config.index_interval.max(1) as usize;
    sc.column_index_size = config.column_index_size_kb.max(1).saturating_mul(1024);
    sc.large_partition_warning = config.row_warning_threshold_mb.max(1).saturating_mul(1 << 20);
    sc.block_cache_bytes = (config.block_cache_size_mb as usize) << 20;
    sc.disk_access = match config.disk_access_mode {
        // As Cassandra decides `auto`: map where the address space is large enough.
        DiskAccessMode::Auto if cfg!(target_pointer_width = "64") => DiskAccess::Mmap,
        DiskAccessMode::Auto => DiskAccess::Standard,
        DiskAccessMode::Mmap => DiskAccess::Mmap,
        DiskAccessMode::MmapIndexOnly => DiskAccess::MmapIndexOnly,
        DiskAccessMode::Standard => DiskAccess::Standard,
    };
    sc.initial_keyspaces = config.keyspaces.clone();
    sc
}

/// Loads the configuration, opens the engine, joins the cluster, serves Thrift until
/// SIGTERM/SIGINT, then flushes and exits.
pub fn run(config_path: &Path) -> Result<(), StartupError> {
    // Loading logs the configuration's warnings.
    let config =
        config::load(config_path).map_err(|source| StartupError::Config { path: config_path.to_path_buf(), source })?;
    let partitioner =
        Partitioner::from_class_name(&config.partitioner).map_err(|e| StartupError::Partitioner(e.to_string()))?;
    let conf_dir = config_path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let authenticator = Authenticator::for_config(&config, &conf_dir).map_err(|e| StartupError::Auth(e.to_string()))?;
    let local = config.listen_endpoint;
    let snitch = snitch::from_class_name(&config.endpoint_snitch, &conf_dir, local)
        .map_err(|e| StartupError::Snitch(e.to_string()))?;

    info!(config = %config_path.display(), cluster = %config.cluster_name, endpoint = %local, "starting sibyl");
    let engine_config = storage_config(&config, partitioner);
    info!(disk_access = ?engine_config.disk_access, block_cache_mb = config.block_cache_size_mb, "opening the storage engine");
    let storage = Storage::open(engine_config)?;
    storage.check_cluster_name(&config.cluster_name)?;
    // system_auth shows the authenticator's users as this start read them.
    storage.replace_auth_users(&authenticator.system_auth_users())?;
    let state = storage.local_state();
    let saved = saved_tokens(&state.tokens, partitioner)?;
    let host_id = state.host_id.to_string();

    // As Cassandra: a seed never bootstraps, nor does a node that joined before.
    let is_seed = config.seed_endpoints.contains(&config.listen_endpoint);
    let bootstrap = saved.is_none() && config.auto_bootstrap && !is_seed;

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(StartupError::Runtime)?;
    let addr = format!("{}:{}", config.thrift_address, config.thrift_port);
    let admin_addr = (config.admin_address.clone(), config.admin_port);
    runtime.block_on(async move {
        let mut net = NetConfig::new(local, config.cluster_name.clone());
        net.timeouts = Timeouts {
            read: Duration::from_millis(config.read_request_timeout_ms.max(1)),
            range: Duration::from_millis(config.range_request_timeout_ms.max(1)),
            write: Duration::from_millis(config.write_request_timeout_ms.max(1)),
            counter_write: Duration::from_millis(config.write_request_timeout_ms.max(1)),
            truncate: Duration::from_millis(config.truncate_request_timeout_ms.max(1)),
            request: Duration::from_millis(config.rpc_timeout_ms.max(1)),
        };
        net.outbound_bind_any = config.outbound_bind_any;
        let timeouts = net.timeouts.clone();
        let messaging = MessagingService::start(net).await.map_err(|e| StartupError::Messaging(e.to_string()))?;
        let info = LocalInfo {
            cluster_name: config.cluster_name.clone(),
            rpc_address: config.thrift_address.clone(),
            host_id: host_id.clone(),
        };
        let membership = Arc::new(Membership::new(local, info, partitioner, snitch, Vec::new()));
        let announcement = Announcement {
            cluster_name: config.cluster_name.clone(),
            seeds: config.seed_endpoints.clone(),
            generation: state.generation,
            phi_convict_threshold: config.phi_convict_threshold as f64,
            rpc_address: config.thrift_address.clone(),
            host_id,
            release_version: env!("CARGO_PKG_VERSION").to_string(),
            hint_throttle_kb: config.hinted_handoff_throttle_kb,
            ring_delay: Duration::from_millis(config.ring_delay_ms),
            bootstrapping: bootstrap,
        };
        let service = StorageService::start(storage.clone(), membership.clone(), messaging.clone(), &announcement);
        let tokens = match saved {
            Some(tokens) => {
                warn_if_initial_token_changed(&config, partitioner, &tokens);
                tokens
            }
            None => {
                // A first start learns the ring before it takes tokens, and takes none that
                // another node holds.
                let alone = config.seed_endpoints.iter().all(|s| *s == config.listen_endpoint);
                if !alone && !service.learn_ring(Duration::from_millis(config.ring_delay_ms)).await {
                    warn!("no seed answered within RingDelayInMillis; joining with the ring known so far");
                }
                let tokens = first_tokens(&config, partitioner, &service).await?;
                let view = service.gossip_view();
                let ring = membership.ring();
                if let Err(conflict) = check_new_tokens(partitioner, &ring, &view, local, &tokens, bootstrap) {
                    return Err(refuse_to_join(&service, &messaging, conflict).await);
                }
                tokens
            }
        };
        let save_tokens =
            |tokens: &[Token]| storage.save_tokens(tokens.iter().map(|t| partitioner.token_to_string(t)).collect());
        if !bootstrap {
            save_tokens(&tokens)?;
            service.join(tokens.clone());
        }

        let executor = Executor::for_this_machine("sibyl-exec").map_err(StartupError::Runtime)?;
        let settings = Settings {
            timeouts,
            hinted_handoff: config.hinted_handoff_enabled,
            max_hint_window: Duration::from_millis(config.max_hint_window_ms),
            stream_throughput_megabits: config.stream_throughput_outbound_megabits_per_sec,
        };
        let coordinator = Coordinator::new(
            storage.clone(),
            executor,
            membership,
            messaging.clone(),
            service.schema_sync().clone(),
            settings,
        );
        if bootstrap {
            bootstrap_data(&config, &service, &coordinator, &tokens).await?;
            // Saved only now: a node stopped during its bootstrap bootstraps again.
            save_tokens(&tokens)?;
            service.join(tokens);
        }
        let limits = cql::exec::Limits {
            batch_size_warn_bytes: u64::from(config.batch_size_warn_threshold_kb) << 10,
            batch_size_fail_bytes: u64::from(config.batch_size_fail_threshold_kb) << 10,
            unlogged_batch_across_partitions_warn: config.unlogged_batch_across_partitions_warn_threshold as usize,
        };
        let cql = Arc::new(cql::Executor::with_limits(coordinator.clone(), limits));
        let authenticator = Arc::new(authenticator);
        let native_ctx = Arc::new(NativeContext::new(
            coordinator.clone(),
            cql.clone(),
            authenticator.clone(),
            (config.native_transport_max_frame_size_mb.max(1) as usize) << 20,
            config.native_transport_port,
        ));
        let ctx = Arc::new(ThriftContext {
            coordinator: coordinator.clone(),
            cql,
            authenticator,
            config_file: Some(config_path.to_path_buf()),
        });
        let options = ServeOptions {
            max_message_bytes: (config.thrift_max_message_length_mb.max(1) as usize) << 20,
            event_loops: config.thrift_event_loops as usize,
        };
        let thrift = Arc::new(ThriftServer::new(addr, ctx, options));
        let native = config.start_native_transport.then(|| {
            let addr = format!("{}:{}", config.native_transport_address, config.native_transport_port);
            let options = NativeOptions {
                max_connections: config.native_transport_max_concurrent_connections.map(|n| n as usize),
                event_loops: config.thrift_event_loops as usize,
            };
            Arc::new(NativeService::new(addr, native_ctx, options))
        });
        let node = Arc::new(Node {
            storage: storage.clone(),
            coordinator,
            service: Some(service.clone()),
            thrift: Some(thrift.clone()),
            native: native.clone(),
        });

        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let admin_listener = TcpListener::bind((admin_addr.0.as_str(), admin_addr.1))
            .await
            .map_err(|source| StartupError::AdminBind { addr: format!("{}:{}", admin_addr.0, admin_addr.1), source })?;
        let admin = tokio::spawn(crate::admin::serve(admin_listener, node.clone(), shutdown_rx));
        info!("Admin interface (sibyltool) listening on {}:{}", admin_addr.0, admin_addr.1);
        // Clients only once this node knows the ring it routes their requests with.
        wait_to_settle(&settle_wait(&config), || service.gossip_view()).await;
        let tokens = node.coordinator.membership().local_tokens();
        if let Err(conflict) = check_held_tokens(partitioner, &service.gossip_view(), &tokens) {
            let _ = shutdown_tx.send(true);
            let _ = admin.await;
            return Err(refuse_to_join(&service, &messaging, conflict).await);
        }
        // The native port opens with the Thrift one, just before it: a client that saw the
        // Thrift port ready finds this one too.
        match &native {
            Some(native) => {
                native.start().await.map_err(|e| StartupError::NativeBind { addr: e.addr, source: e.source })?;
            }
            None => info!("Not starting native transport as requested (StartNativeTransport is false)"),
        }
        // Logs "Listening for thrift clients on ...", the line that says the node is ready.
        thrift.start().await.map_err(|e| match e {
            ThriftServerError::Bind { addr, source } => StartupError::Bind { addr, source },
            other => StartupError::Runtime(std::io::Error::other(other)),
        })?;
        wait_for_signal().await;
        info!("shutting down: announcing it to the cluster, then flushing memtables");
        let told = service.shutdown();
        let _ = shutdown_tx.send(true);
        if let Some(native) = &native {
            native.stop().await;
        }
        thrift.close().await;
        let _ = admin.await;
        // Like Cassandra's two gossip intervals of grace after announcing the shutdown.
        service.wait_for_announcement(&told).await;
        messaging.shutdown();
        let s = storage.clone();
        match tokio::task::spawn_blocking(move || s.shutdown()).await {
            Ok(Ok(())) => info!("shutdown complete"),
            Ok(Err(e)) => warn!(error = %e, "shutdown flush failed; the commit log will be replayed at next start"),
            Err(e) => warn!(error = %e, "shutdown task failed"),
        }
        Ok(())
    })
}

/// Stops a start that would take another node's token: the shutdown is announced (peers that
/// saw this node mark it down at once), nothing else changes.
async fn refuse_to_join(
    service: &StorageService,
    messaging: &MessagingService,
    conflict: TokenConflict,
) -> StartupError {
    tracing::error!("{conflict}");
    let told = service.shutdown();
    service.wait_for_announcement(&told).await;
    messaging.shutdown();
    StartupError::TokenConflict(conflict)
}

/// The settle wait's settings from the configuration.
fn settle_wait(config: &Config) -> SettleWait {
    let s = config.gossip_settle;
    SettleWait {
        min_wait: Duration::from_millis(s.min_wait_ms),
        poll_interval: Duration::from_millis(s.poll_interval_ms.max(1)),
        polls_required: s.polls_required.max(1),
        force_after_polls: (s.force_after_polls > 0).then(|| u32::try_from(s.force_after_polls).unwrap_or(u32::MAX)),
        skip: s.force_after_polls == 0,
    }
}

/// A restart keeps the tokens saved at the first start, as Cassandra does, whatever
/// InitialToken says now; a different InitialToken gets a warning.
fn warn_if_initial_token_changed(config: &Config, partitioner: Partitioner, saved: &[Token]) {
    if config.initial_tokens.is_empty() {
        return;
    }
    let mut configured: Vec<Option<Token>> =
        config.initial_tokens.iter().map(|t| partitioner.token_from_string(t).ok()).collect();
    let mut kept: Vec<Option<Token>> = saved.iter().cloned().map(Some).collect();
    configured.sort();
    kept.sort();
    if configured != kept {
        let saved: Vec<String> = saved.iter().map(|t| partitioner.token_to_string(t)).collect();
        warn!(
            "InitialToken {} differs from the token(s) this node took at its first start ({}); keeping those \
             (`sibyltool move` moves a node to another token)",
            config.initial_tokens.join(","),
            saved.join(",")
        );
    }
}

/// The tokens this node took on an earlier start, if any.
fn saved_tokens(saved: &[String], partitioner: Partitioner) -> Result<Option<Vec<Token>>, StartupError> {
    if saved.is_empty() {
        return Ok(None);
    }
    let tokens = saved
        .iter()
        .map(|t| {
            partitioner.token_from_string(t).map_err(|e| StartupError::Partitioner(format!("saved token {t:?}: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(tokens))
}

/// `AutoBootstrap` on a node's first start: once it knows the ring, it announces its tokens as
/// bootstrapping, gives every node `RingDelayInMillis` to hear of it (from then on writes of
/// its ranges reach it too), waits for the schema, and fetches its ranges' data from their
/// current replicas. Alone in the ring, there is nothing to fetch.
async fn bootstrap_data(
    config: &Config,
    service: &StorageService,
    coordinator: &Coordinator,
    tokens: &[Token],
) -> Result<(), StartupError> {
    let ring_delay = Duration::from_millis(config.ring_delay_ms);
    let schema_wait = ring_delay.max(Duration::from_secs(30));
    if !service.wait_for_ring(ring_delay.max(Duration::from_secs(5))).await {
        warn!("AutoBootstrap: no other node in the ring; joining without fetching data");
        return Ok(());
    }
    service.announce_bootstrap(tokens);
    tokio::time::sleep(ring_delay).await;
    service.wait_for_schema_agreement(schema_wait).await.map_err(StartupError::Bootstrap)?;
    let fetched = coordinator
        .fetch_pending_ranges(|what| info!("bootstrap: {what}"))
        .await
        .map_err(|e| StartupError::Bootstrap(e.to_string()))?;
    info!(partitions = fetched.partitions, "bootstrap: fetched this node's ranges");
    Ok(())
}

/// A first start's tokens: `InitialToken` (a comma-separated list for several), else chosen
/// in the ring learned so far.
async fn first_tokens(
    config: &Config,
    partitioner: Partitioner,
    service: &StorageService,
) -> Result<Vec<Token>, StartupError> {
    if !config.initial_tokens.is_empty() {
        return config
            .initial_tokens
            .iter()
            .map(|t| {
                partitioner.token_from_string(t).map_err(|e| StartupError::Partitioner(format!("InitialToken: {e}")))
            })
            .collect();
    }
    // The ring was learned already (see `run`).
    let tokens = service.choose_tokens(config.num_tokens.max(1) as usize, Duration::ZERO).await;
    info!(tokens = ?tokens.iter().map(|t| partitioner.token_to_string(t)).collect::<Vec<_>>(), "chose tokens");
    Ok(tokens)
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
