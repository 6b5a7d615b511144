//! The command line: cassandra-cli's options (CliOptions.java) read the way its commons-cli
//! `GnuParser` reads them, plus sibyl-cli's own (`-e`, `--continue-on-error`, `--schema-wait`).
//!
//! GnuParser's rules, kept so users' existing invocations work: an option may be written with one
//! dash or two, by its short or its long name (`-h`, `--host`, `-host`, `--h`); a value follows
//! as the next argument, after `=` (`--host=h`, `-port=9160`) or joined to a one-letter option
//! (`-p9160`); the next argument is not taken as a value when it is itself an option; one pair of
//! surrounding quotes is stripped from values; an argument that is no option is refused
//! ("Unknown argument: X").

/// `sibyl-cli --help`.
pub const USAGE: &str = "\
Usage: sibyl-cli [options]
  -h, --host HOST          node to connect to at start-up (default 127.0.0.1)
  -p, --port PORT          Thrift port (default 9160)
  -k, --keyspace KEYSPACE  keyspace to use after connecting
  -u, --username USER      user name to log in with
  -pw, --password PASS     password to log in with (default empty)
  -f, --file FILE          run the statements in FILE, then exit
  -e, --execute STMTS      run STMTS (separated by ';'), then exit
  -B, --batch              batch mode: read statements from standard input, the first failed
                           statement is fatal, output is suppressed unless -v is given
  -v, --verbose            with -B, print the statements' output
  --unframed               use the unframed transport (the node accepts both)
  --schema-mwt SECS        how long schema changes wait for agreement (default 10)
  --schema-wait SECS       the same as --schema-mwt
  --continue-on-error      with -f, -e or -B, go on after a failed statement
  --debug                  accepted for cassandra-cli compatibility (no stack traces to show)
  --jmxport PORT           accepted and ignored (describe shows no JMX statistics); also
                           --jmx-username, --jmx-password
  -?, --help               show this help

Options take one dash or two, and a value after a space, after '=' or (one-letter options)
joined: -host localhost -port 9160, --host=localhost, -p9160.

With -f or -e, the first failed statement stops the run (as cassandra-cli does) unless
--continue-on-error is given, and errors are shown as 'Line N => message', N counting
statements; the exit status is 4 if a statement failed. Statements piped into standard input
without -B run as typed ones do: errors are printed and the run goes on. A failed start-up
connection or -k keyspace is reported and the statements run anyway (they can 'connect').";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub host: String,
    pub port: u16,
    pub keyspace: Option<String>,
    /// User and password to log in with: `-u` without `-pw` logs in with an empty password and
    /// `-pw` without `-u` as user `default`, as cassandra-cli does.
    pub credentials: Option<(String, String)>,
    pub file: Option<String>,
    pub execute: Option<String>,
    pub batch: bool,
    pub verbose: bool,
    pub framed: bool,
    pub continue_on_error: bool,
    /// Seconds schema changes wait for agreement.
    pub schema_wait: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            // CliOptions.DEFAULT_HOST.
            host: "127.0.0.1".into(),
            port: thrift_idl::DEFAULT_RPC_PORT,
            keyspace: None,
            credentials: None,
            file: None,
            execute: None,
            batch: false,
            verbose: false,
            framed: true,
            continue_on_error: false,
            schema_wait: 10,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opt {
    Host,
    Port,
    Username,
    Password,
    Keyspace,
    File,
    Execute,
    Batch,
    Verbose,
    Unframed,
    Debug,
    JmxIgnored,
    SchemaWait,
    ContinueOnError,
    Help,
}

/// One option: short and long name, and whether it takes a value.
struct Spec {
    short: Option<&'static str>,
    long: &'static str,
    takes_value: bool,
    opt: Opt,
}

const fn spec(short: Option<&'static str>, long: &'static str, takes_value: bool, opt: Opt) -> Spec {
    Spec { short, long, takes_value, opt }
}

const SPECS: &[Spec] = &[
    spec(Some("h"), "host", true, Opt::Host),
    spec(Some("p"), "port", true, Opt::Port),
    spec(Some("u"), "username", true, Opt::Username),
    spec(Some("pw"), "password", true, Opt::Password),
    spec(Some("k"), "keyspace", true, Opt::Keyspace),
    spec(Some("f"), "file", true, Opt::File),
    spec(Some("e"), "execute", true, Opt::Execute),
    spec(Some("B"), "batch", false, Opt::Batch),
    spec(Some("v"), "verbose", false, Opt::Verbose),
    spec(None, "unframed", false, Opt::Unframed),
    spec(None, "debug", false, Opt::Debug),
    // cassandra-cli has no short form of --jmxport; `-j` is accepted as well since it costs nothing.
    spec(Some("j"), "jmxport", true, Opt::JmxIgnored),
    spec(None, "jmx-username", true, Opt::JmxIgnored),
    spec(None, "jmx-password", true, Opt::JmxIgnored),
    spec(None, "schema-mwt", true, Opt::SchemaWait),
    spec(None, "schema-wait", true, Opt::SchemaWait),
    spec(None, "continue-on-error", false, Opt::ContinueOnError),
    spec(Some("?"), "help", false, Opt::Help),
];

/// The option named `name` (no leading dashes), by short or long name, case-sensitively.
fn find(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.short == Some(name) || s.long == name)
}

/// `--name` or `-name` without its dashes; `None` when `arg` is not an option word.
fn strip_dashes(arg: &str) -> Option<&str> {
    let name = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    (!name.is_empty()).then_some(name)
}

/// commons-cli's `stripLeadingAndTrailingQuotes`: one `"` at each end.
fn strip_quotes(v: &str) -> String {
    let v = v.strip_prefix('"').unwrap_or(v);
    v.strip_suffix('"').unwrap_or(v).to_string()
}

/// Parses the arguments after the program name. `Ok(None)` means `--help`.
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
    let mut o = Options::default();
    let (mut username, mut password) = (None, None);
    let mut it = args.into_iter().peekable();
    while let Some(arg) = it.next() {
        if arg == "--" {
            // Everything after `--` is a plain argument, and cassandra-cli takes none.
            return match it.next() {
                Some(rest) => Err(format!("Unknown argument: {rest}")),
                None => break,
            };
        }
        let Some(name) = strip_dashes(&arg) else {
            return Err(format!("Unknown argument: {arg}"));
        };
        let (spec, inline) = if let Some(s) = find(name) {
            (s, None)
        } else if let Some((s, v)) = name.split_once('=').and_then(|(n, v)| find(n).map(|s| (s, v))) {
            (s, Some(v.to_string()))
        } else {
            // `-p9160`: a one-letter option with its value joined (GnuParser tries the first
            // two characters of the argument).
            let joined = arg
                .strip_prefix('-')
                .filter(|rest| !rest.starts_with('-'))
                .and_then(|rest| rest.char_indices().nth(1).map(|(i, _)| rest.split_at(i)))
                .and_then(|(first, value)| find(first).filter(|s| s.takes_value).map(|s| (s, value.to_string())));
            match joined {
                Some((s, v)) => (s, Some(v)),
                None => return Err(format!("Unrecognized option: {arg}")),
            }
        };
        let value = if spec.takes_value {
            let v = match inline {
                Some(v) => v,
                // The next argument, unless it is an option itself.
                None => match it.peek() {
                    Some(next) if !strip_dashes(next).is_some_and(|n| find(n).is_some()) => {
                        it.next().unwrap_or_default()
                    }
                    _ => return Err(format!("Missing argument for option: {}", spec.short.unwrap_or(spec.long))),
                },
            };
            strip_quotes(&v)
        } else if inline.is_some() {
            return Err(format!("Option --{} takes no value", spec.long));
        } else {
            String::new()
        };
        match spec.opt {
            Opt::Host => o.host = value,
            Opt::Port => o.port = value.parse().map_err(|_| format!("bad port '{value}'"))?,
            Opt::Username => username = Some(value),
            Opt::Password => password = Some(value),
            Opt::Keyspace => o.keyspace = Some(value),
            Opt::File => o.file = Some(value),
            Opt::Execute => o.execute = Some(value),
            Opt::Batch => o.batch = true,
            Opt::Verbose => o.verbose = true,
            Opt::Unframed => o.framed = false,
            Opt::Debug | Opt::JmxIgnored => {}
            Opt::SchemaWait => {
                o.schema_wait = value.parse().map_err(|_| format!("bad --{} '{value}'", spec.long))?;
            }
            Opt::ContinueOnError => o.continue_on_error = true,
            Opt::Help => return Ok(None),
        }
    }
    if o.file.is_some() && o.execute.is_some() {
        return Err("-f and -e cannot be used together".into());
    }
    if username.is_some() || password.is_some() {
        o.credentials = Some((username.unwrap_or_else(|| "default".into()), password.unwrap_or_default()));
    }
    Ok(Some(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Options>, String> {
        parse_args(args.iter().map(|a| a.to_string()))
    }

    fn opts(args: &[&str]) -> Options {
        match parse(args) {
            Ok(Some(o)) => o,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn single_dash_long_options_and_joined_values() {
        let o = opts(&["-host", "node1", "-port", "9161", "-keyspace", "ks", "-file", "s.txt", "-batch"]);
        assert_eq!((o.host.as_str(), o.port, o.keyspace.as_deref()), ("node1", 9161, Some("ks")));
        assert_eq!((o.file.as_deref(), o.batch), (Some("s.txt"), true));
        let o = opts(&["--host=h2", "-p9162", "--keyspace=\"quoted\""]);
        assert_eq!((o.host.as_str(), o.port, o.keyspace.as_deref()), ("h2", 9162, Some("quoted")));
        let o = opts(&["-h", "h3", "--port", "9163", "-port=9164", "-kKS"]);
        assert_eq!((o.host.as_str(), o.port, o.keyspace.as_deref()), ("h3", 9164, Some("KS")));
        let o = opts(&["--h", "h4", "-B"]);
        assert_eq!(o.host, "h4");
        assert!(o.batch);
        assert_eq!(opts(&[]), Options::default());
        assert_eq!(Options::default().host, "127.0.0.1");
    }

    #[test]
    fn cassandra_cli_options_are_accepted() {
        let o = opts(&["--schema-mwt", "30", "--jmxport", "7199", "-j", "7199", "--debug", "-v", "--unframed"]);
        assert_eq!(o.schema_wait, 30);
        assert!(o.verbose && !o.framed);
        assert_eq!(opts(&["--schema-wait=5"]).schema_wait, 5);
        assert_eq!(opts(&["-jmx-username", "a", "--jmx-password", "b"]), Options::default());
        assert!(opts(&["-verbose"]).verbose);
        assert_eq!(parse(&["-?"]), Ok(None));
        assert_eq!(parse(&["--help"]), Ok(None));
    }

    #[test]
    fn credentials_default_like_cassandra_cli() {
        assert_eq!(opts(&["-u", "jsmith"]).credentials, Some(("jsmith".into(), String::new())));
        assert_eq!(opts(&["-pw", "secret"]).credentials, Some(("default".into(), "secret".into())));
        assert_eq!(opts(&["-u", "a", "-pw", "b"]).credentials, Some(("a".into(), "b".into())));
        assert_eq!(opts(&["--username=a", "-password", "b"]).credentials, Some(("a".into(), "b".into())));
        assert_eq!(opts(&[]).credentials, None);
    }

    #[test]
    fn bad_command_lines() {
        assert_eq!(parse(&["-x"]), Err("Unrecognized option: -x".into()));
        assert_eq!(parse(&["stray"]), Err("Unknown argument: stray".into()));
        assert_eq!(parse(&["--", "x"]), Err("Unknown argument: x".into()));
        assert_eq!(parse(&["-h"]), Err("Missing argument for option: h".into()));
        // The next argument is an option, not the value.
        assert_eq!(parse(&["-k", "-B"]), Err("Missing argument for option: k".into()));
        assert!(parse(&["-p", "many"]).is_err());
        assert!(parse(&["--batch=yes"]).is_err());
        assert!(parse(&["-f", "a", "-e", "b"]).is_err());
        // A value that merely starts with '-' is still a value.
        assert_eq!(opts(&["-e", "-1"]).execute.as_deref(), Some("-1"));
    }
}
