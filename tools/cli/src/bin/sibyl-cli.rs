//! `sibyl-cli`: a cassandra-cli compatible shell for Sibyl.
//!
//! ```text
//! sibyl-cli [-h HOST] [-p PORT] [-k KEYSPACE] [-u USER -pw PASS] [-f FILE | -e "STATEMENTS"] [--batch]
//! ```
//!
//! Exit status: 0 on success, 1 for bad arguments or an unreadable file, 2 when the connection
//! given on the command line cannot be made (batch modes only), 4 when a statement failed
//! (cassandra-cli's code).

use std::io::{Read, Write};
use std::process::ExitCode;

use sibyl_cli::cli::help::BANNER;
use sibyl_cli::cli::shell::{self, run_batch};
use sibyl_cli::cli::Session;

const USAGE: &str = "\
Usage: sibyl-cli [options]
  -h, --host HOST          node to connect to (default localhost)
  -p, --port PORT          Thrift port (default 9160)
  -k, --keyspace KEYSPACE  keyspace to use after connecting
  -u, --username USER      user name to log in with
  -pw, --password PASS     password to log in with
  -f, --file FILE          run the statements in FILE, then exit
  -e, --execute STMTS      run STMTS (separated by ';'), then exit
  -B, --batch              read statements from standard input without prompts
  --continue-on-error      in batch modes, go on after a failed statement
  --schema-wait SECS       how long schema changes wait for agreement (default 10)
  -?, --help               show this help

Batch modes stop at the first failed statement (as cassandra-cli does) unless
--continue-on-error is given; the exit status is 4 if any statement failed.";

struct Options {
    host: String,
    port: u16,
    keyspace: Option<String>,
    username: Option<String>,
    password: Option<String>,
    file: Option<String>,
    execute: Option<String>,
    batch: bool,
    continue_on_error: bool,
    schema_wait: u64,
}

fn parse_args(args: Vec<String>) -> Result<Option<Options>, String> {
    let mut o = Options {
        host: "localhost".into(),
        port: thrift_idl::DEFAULT_RPC_PORT,
        keyspace: None,
        username: None,
        password: None,
        file: None,
        execute: None,
        batch: false,
        continue_on_error: false,
        schema_wait: 10,
    };
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--host" => o.host = value(&arg)?,
            "-p" | "--port" => {
                let v = value(&arg)?;
                o.port = v.parse().map_err(|_| format!("bad port '{v}'"))?;
            }
            "-k" | "--keyspace" => o.keyspace = Some(value(&arg)?),
            "-u" | "--username" => o.username = Some(value(&arg)?),
            "-pw" | "--password" => o.password = Some(value(&arg)?),
            "-f" | "--file" => o.file = Some(value(&arg)?),
            "-e" | "--execute" => o.execute = Some(value(&arg)?),
            "-B" | "--batch" => o.batch = true,
            "--continue-on-error" => o.continue_on_error = true,
            "--schema-wait" => {
                let v = value(&arg)?;
                o.schema_wait = v.parse().map_err(|_| format!("bad --schema-wait '{v}'"))?;
            }
            "-?" | "--help" => return Ok(None),
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    if o.file.is_some() && o.execute.is_some() {
        return Err("-f and -e cannot be used together".into());
    }
    if o.username.is_some() != o.password.is_some() {
        return Err("-u and -pw go together".into());
    }
    Ok(Some(o))
}

fn main() -> ExitCode {
    let opts = match parse_args(std::env::args().skip(1).collect()) {
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
    // Batch input: a file, -e, --batch, or standard input that is not a terminal.
    let script = if let Some(path) = &opts.file {
        match std::fs::read_to_string(path) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("sibyl-cli: cannot read {path}: {e}");
                return ExitCode::from(1);
            }
        }
    } else if let Some(e) = &opts.execute {
        Some(e.clone())
    } else if opts.batch || !shell::stdin_is_terminal() {
        let mut s = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut s) {
            eprintln!("sibyl-cli: cannot read standard input: {e}");
            return ExitCode::from(1);
        }
        Some(s)
    } else {
        None
    };

    let mut session = Session::new(Box::new(std::io::BufWriter::new(std::io::stdout())));
    session.set_schema_wait(std::time::Duration::from_secs(opts.schema_wait));
    if let (Some(u), Some(p)) = (&opts.username, &opts.password) {
        session.set_credentials(u, p);
    }
    if script.is_none() {
        println!("Welcome to the Sibyl CLI (cassandra-cli compatible), version {}.\n", env!("CARGO_PKG_VERSION"));
        println!("{BANNER}\n");
    }
    let connected = match session.connect(&opts.host, opts.port) {
        Ok(()) => true,
        Err(e) => {
            let _ = session.flush();
            eprintln!("{e}");
            false
        }
    };
    if connected {
        if let Some(ks) = &opts.keyspace {
            if let Err(e) = session.use_keyspace(ks, None) {
                let _ = session.flush();
                eprintln!("{e}");
                if script.is_some() {
                    return ExitCode::from(2);
                }
            }
        }
    }
    let _ = session.flush();

    match script {
        Some(script) => {
            if !connected {
                return ExitCode::from(2);
            }
            let mut err = std::io::stderr();
            let outcome = run_batch(&mut session, &script, opts.continue_on_error, &mut err);
            let _ = err.flush();
            if outcome.failed > 0 {
                ExitCode::from(4)
            } else {
                ExitCode::SUCCESS
            }
        }
        None => match shell::run_interactive(&mut session) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("sibyl-cli: {e}");
                ExitCode::from(1)
            }
        },
    }
}
