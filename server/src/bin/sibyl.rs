//! `sibyl --config PATH`: runs one Sibyl node.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// jemalloc rather than glibc's malloc: a node's memtables grow and shrink by the gigabyte in
/// small pieces from several threads, where glibc's per-thread arenas fragment and grow their
/// heaps one mprotect at a time (3% of the server's CPU under bench/redis-vs-sibyl.sh).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(name = "sibyl", version, about = "A Cassandra-compatible database server speaking the Thrift API")]
struct Args {
    /// Path to storage-conf.xml (Cassandra 0.6 format).
    #[arg(long, short = 'c', default_value = "conf/storage-conf.xml")]
    config: PathBuf,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("SIBYL_LOG").unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stdout)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .init();
    let args = Args::parse();
    match server::daemon::run(&args.config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("sibyl: {e}");
            ExitCode::from(1)
        }
    }
}
