//! `sibyl-stress`: load generator for Sibyl's Thrift API (and Redis' RESP, for comparisons). The work is done by this package's
//! library (`sibyl_stress`); this file parses the command line, prints the progress lines and the
//! summary, and sets the exit status.
//!
//! Exit status: 0 when the run completed (errors, if any, are in the summary), 1 when it could
//! not start (bad options, no server, schema refused), 2 when it stopped early after too many
//! consecutive errors, 3 when the run completed but the HTML report could not be written.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Parser;
use sibyl_stress::report::{self, RunRecord};
use sibyl_stress::runner::{self, RunResult};
use sibyl_stress::settings::Args;
use sibyl_stress::stats::Interval;

/// jemalloc, as the daemon uses: the generated Thrift structs a request is encoded from and its
/// reply decoded into are a dozen small allocations each, and glibc's malloc and free were 5%
/// of the load generator's CPU, on the cores it shares with the server it measures.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn progress_line(i: &Interval) -> String {
    format!(
        "{:>7.1}s {:>11} ops {:>9.0} op/s  mean {:>8.3} ms  p99 {:>8.3} ms  errors {}",
        i.t_s, i.total_ops, i.op_rate, i.mean_ms, i.p99_ms, i.total_errors
    )
}

fn main() -> ExitCode {
    let args = Args::parse();
    let json = args.json;
    let quiet = args.quiet;
    let graph = args.graph.clone();
    let settings = match args.into_settings() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sibyl-stress: {e}");
            return ExitCode::from(1);
        }
    };
    let tty = std::io::stderr().is_terminal();
    eprintln!("sibyl-stress: {}", settings.describe());
    let mut printed_partial = false;
    let result = runner::run(&settings, |i| {
        if quiet {
            return;
        }
        let line = progress_line(i);
        let mut err = std::io::stderr().lock();
        if tty {
            let _ = write!(err, "\r{line}\x1b[K");
            printed_partial = true;
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    });
    if printed_partial {
        eprintln!();
    }
    let RunResult { summary, intervals, schema } = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sibyl-stress: {e}");
            return ExitCode::from(1);
        }
    };
    if let (false, Some(schema)) = (json, schema) {
        eprintln!("schema: {schema:?}");
    }
    if json {
        match serde_json::to_string(&summary) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("sibyl-stress: cannot encode summary: {e}"),
        }
    } else {
        print!("{}", summary.to_text());
    }
    let mut code = 0u8;
    if let Some(why) = &summary.aborted {
        eprintln!("sibyl-stress: stopped early: {why}");
        code = 2;
    }
    if let Some(path) = graph {
        let finished_at = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        match report::append_run(&path, RunRecord { finished_at, summary, intervals }) {
            Ok(n) => eprintln!("sibyl-stress: report {} now shows {n} run(s)", path.display()),
            Err(e) => {
                eprintln!("sibyl-stress: {e}");
                if code == 0 {
                    code = 3;
                }
            }
        }
    }
    ExitCode::from(code)
}
