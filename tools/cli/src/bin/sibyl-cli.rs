//! `sibyl-cli`: a cassandra-cli compatible shell for Sibyl.
//!
//! ```text
//! sibyl-cli [-h HOST] [-p PORT] [-k KEYSPACE] [-u USER [-pw PASS]] [-f FILE | -e "STATEMENTS" | -B [-v]]
//! ```
//!
//! The options are cassandra-cli's, read as it reads them (`-host h -port 9160`, `--port=9160`,
//! `-p9160`; see [`sibyl_cli::cli::options`]). Exit status: 0 on success, 1 for bad arguments or
//! unreadable input, 4 when a statement of `-f`, `-e` or `-B` failed (cassandra-cli's code). As in
//! cassandra-cli, a start-up connection or `-k` keyspace that fails is reported and the
//! statements run anyway.

use std::io::Write;
use std::process::ExitCode;

use sibyl_cli::cli::help::BANNER;
use sibyl_cli::cli::options::{parse_args, USAGE};
use sibyl_cli::cli::shell::{self, run_script, RunMode};
use sibyl_cli::cli::Session;

/// Where the statements come from.
enum Input {
    /// `-f` (read whole) or `-e`.
    Script(String),
    /// Standard input that is not a terminal, or `-B`.
    Stdin { batch: bool },
    /// The interactive shell.
    Terminal,
}

fn main() -> ExitCode {
    let opts = match parse_args(std::env::args().skip(1)) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("sibyl-cli: {e}\n\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    let input = if let Some(path) = &opts.file {
        match std::fs::read_to_string(path) {
            Ok(s) => Input::Script(s),
            Err(e) => {
                eprintln!("sibyl-cli: cannot read {path}: {e}");
                return ExitCode::from(1);
            }
        }
    } else if let Some(e) = &opts.execute {
        Input::Script(e.clone())
    } else if opts.batch {
        Input::Stdin { batch: true }
    } else if !shell::stdin_is_terminal() {
        Input::Stdin { batch: false }
    } else {
        Input::Terminal
    };

    let mut session = Session::new(Box::new(std::io::BufWriter::new(std::io::stdout())));
    session.set_schema_wait(std::time::Duration::from_secs(opts.schema_wait));
    session.set_framed(opts.framed);
    if let Some((u, p)) = &opts.credentials {
        session.set_credentials(u, p);
    }
    // CliMain.main: a failed start-up connection (or -k keyspace) is printed and the session goes
    // on; its statements say "Not connected to a cassandra instance." or can `connect`.
    match session.connect(&opts.host, opts.port) {
        Ok(()) => {
            if let Some(ks) = &opts.keyspace {
                if let Err(e) = session.use_keyspace(ks, None) {
                    let _ = session.flush();
                    eprintln!("{e}");
                }
            }
        }
        Err(e) => {
            let _ = session.flush();
            eprintln!("{e}");
        }
    }
    let _ = session.flush();
    // -B without -v: cassandra-cli closes its output after connecting.
    if matches!(input, Input::Stdin { batch: true }) && !opts.verbose {
        session.set_output(Box::new(std::io::sink()));
    }
    // cassandra-cli prints its banner for everything but -f (-B's is silenced with the rest).
    let banner = match input {
        Input::Script(_) => false,
        Input::Stdin { batch } => !batch || opts.verbose,
        Input::Terminal => true,
    };
    if banner {
        println!("Welcome to the Sibyl CLI (cassandra-cli compatible), version {}.\n", env!("CARGO_PKG_VERSION"));
        println!("{BANNER}\n");
    }

    let mut err = std::io::stderr();
    let (outcome, fatal) = match input {
        Input::Script(script) => {
            (run_script(&mut session, script.as_bytes(), RunMode::file(opts.continue_on_error), &mut err), true)
        }
        Input::Stdin { batch } => {
            let mode = if batch { RunMode::batch(opts.continue_on_error) } else { RunMode::piped() };
            (run_script(&mut session, std::io::stdin().lock(), mode, &mut err), batch)
        }
        Input::Terminal => {
            return match shell::run_interactive(&mut session) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("sibyl-cli: {e}");
                    ExitCode::from(1)
                }
            };
        }
    };
    let _ = err.flush();
    match outcome {
        Ok(o) if fatal && o.failed > 0 => ExitCode::from(4),
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sibyl-cli: cannot read the statements: {e}");
            ExitCode::from(1)
        }
    }
}
