//! What a stress run does: the command line (`Args`), checked and turned into [`Settings`].
//!
//! Parsing of the small value languages (`write=1,read=3`, `30s`, `QUORUM`) lives here too, so
//! it can be tested without starting anything.

use std::fmt;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use serde::{Deserialize, Serialize};
use thrift_idl::ConsistencyLevel;

/// The longest `--duration` accepted. A load generator left running for days by a typo (`30h`
/// for `30s`) fills disks; anything longer is better split into several runs.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);
/// Upper bound on `--threads`: each thread holds a connection and the server a task for it.
pub const MAX_THREADS: usize = 1024;
/// Upper bound on `--value-size`: stays well below the server's default 15 MB frame limit.
pub const MAX_VALUE_SIZE: usize = 1 << 20;
/// Upper bound on `--columns` per row in one operation.
pub const MAX_COLUMNS: u32 = 10_000;
/// Upper bound on `--rate`: far above what one client thread can send, so only typos hit it.
pub const MAX_RATE: f64 = 100_000_000.0;

/// One kind of request sent to the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// `batch_mutate` of `--columns` columns into one row of `Standard1`.
    Insert,
    /// `get_slice` of the first `--columns` columns of one row of `Standard1`.
    Read,
    /// Inserts and reads in the proportion of `--mixed-ratio`.
    Mixed,
    /// `get_range_slices` of `--range-rows` rows starting at a generated key.
    Range,
    /// `batch_mutate` of counter increments into one row of `Counter1`.
    #[value(name = "counter_add", alias = "counter-add")]
    CounterAdd,
}

impl Operation {
    pub fn name(self) -> &'static str {
        match self {
            Operation::Insert => "insert",
            Operation::Read => "read",
            Operation::Mixed => "mixed",
            Operation::Range => "range",
            Operation::CounterAdd => "counter_add",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The Thrift call an insert makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum WriteCall {
    /// `batch_mutate` of the row's `--columns` columns, as cassandra-stress sends.
    #[value(name = "batch_mutate", alias = "batch-mutate")]
    BatchMutate,
    /// `insert` of one column (`--columns 1`), as pycassa sends a one-column write: the Thrift
    /// counterpart of Redis' `SET`.
    Insert,
}

impl WriteCall {
    pub fn name(self) -> &'static str {
        match self {
            WriteCall::BatchMutate => "batch_mutate",
            WriteCall::Insert => "insert",
        }
    }
}

/// The wire protocol spoken to the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Cassandra's Thrift API (binary protocol), to Sibyl or Cassandra.
    Thrift,
    /// Redis' protocol: insert is `SET key value`, read is `GET key`; one value per key.
    Resp,
    /// Cassandra's native protocol (v4): prepared INSERT and SELECT of a CQL table, as
    /// cassandra-stress sends.
    Cql,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Thrift => "thrift",
            Protocol::Resp => "resp",
            Protocol::Cql => "cql",
        }
    }

    /// The port a server of this protocol listens on by default.
    pub fn default_port(self) -> u16 {
        match self {
            Protocol::Thrift => 9160,
            Protocol::Resp => 6379,
            Protocol::Cql => 9042,
        }
    }
}

/// How the row key of each operation is chosen among `0..num_keys`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Every key equally likely.
    Uniform,
    /// Normal around the middle key, `--stdev` × num_keys wide; hot keys in the middle.
    Gaussian,
    /// 0, 1, 2, ... shared by all threads (wrapping at num_keys): with `--count` = num_keys
    /// every key is written exactly once.
    Sequential,
}

impl Distribution {
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Gaussian => "gaussian",
            Distribution::Sequential => "sequential",
        }
    }
}

/// Relative weights of writes and reads in a mixed run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MixedRatio {
    pub write: u32,
    pub read: u32,
}

impl Default for MixedRatio {
    fn default() -> Self {
        MixedRatio { write: 1, read: 1 }
    }
}

impl fmt::Display for MixedRatio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "write={},read={}", self.write, self.read)
    }
}

/// When a run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopCondition {
    /// After this many operations (successful or not) were attempted.
    Count(u64),
    /// After this much time.
    Duration(Duration),
}

impl fmt::Display for StopCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopCondition::Count(n) => write!(f, "count {n}"),
            StopCondition::Duration(d) => write!(f, "duration {}s", d.as_secs_f64()),
        }
    }
}

/// Why a command line was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    #[error("mixed ratio '{0}': expected e.g. write=1,read=3")]
    RatioSyntax(String),
    #[error("mixed ratio: unknown operation '{0}' (use write and read)")]
    RatioUnknownOp(String),
    #[error("mixed ratio: '{0}' is given twice")]
    RatioDuplicate(String),
    #[error("mixed ratio: weight '{0}' is not a whole number")]
    RatioWeight(String),
    #[error("mixed ratio: at least one weight must be above zero")]
    RatioAllZero,
    #[error("duration '{0}': expected a number with an optional unit ms, s, m or h (e.g. 30s)")]
    DurationSyntax(String),
    #[error("duration {given}: must be above zero and at most {max}s")]
    DurationRange { given: String, max: u64 },
    #[error(
        "unknown consistency level '{0}' (ONE, TWO, THREE, QUORUM, LOCAL_QUORUM, EACH_QUORUM, ALL, ANY, LOCAL_ONE)"
    )]
    Consistency(String),
    #[error("{what} must be between {min} and {max}, not {given}")]
    OutOfRange { what: &'static str, min: u64, max: u64, given: u64 },
    #[error("--stdev must be a fraction above 0 and at most 1, not {0}")]
    Stdev(f64),
    #[error("--count {count} is larger than --num-keys {num_keys} with the sequential distribution: keys would be written twice")]
    SequentialOverflow { count: u64, num_keys: u64 },
    #[error("--operation {0} has no RESP equivalent (use insert, read or mixed with --protocol resp)")]
    RespOperation(Operation),
    #[error("--operation {0} is not implemented over CQL (use insert, read or mixed with --protocol cql)")]
    CqlOperation(Operation),
    #[error("--protocol resp writes one value per key: --columns must be 1, not {0}")]
    RespColumns(u32),
    #[error("--write-call insert writes one column: --columns must be 1, not {0}")]
    InsertColumns(u32),
    #[error("--rate must be a number of operations per second above 0 and at most {max}, not {given}")]
    Rate { given: f64, max: f64 },
}

/// Parses `write=1,read=3` (also `insert=` for `write=`). Missing names weigh 0.
pub fn parse_ratio(s: &str) -> Result<MixedRatio, SettingsError> {
    let mut write = None;
    let mut read = None;
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, weight) = part.split_once('=').ok_or_else(|| SettingsError::RatioSyntax(s.to_string()))?;
        let weight: u32 = weight.trim().parse().map_err(|_| SettingsError::RatioWeight(weight.trim().to_string()))?;
        let slot = match name.trim().to_ascii_lowercase().as_str() {
            "write" | "insert" => &mut write,
            "read" => &mut read,
            other => return Err(SettingsError::RatioUnknownOp(other.to_string())),
        };
        if slot.replace(weight).is_some() {
            return Err(SettingsError::RatioDuplicate(name.trim().to_string()));
        }
    }
    if write.is_none() && read.is_none() {
        return Err(SettingsError::RatioSyntax(s.to_string()));
    }
    let ratio = MixedRatio { write: write.unwrap_or(0), read: read.unwrap_or(0) };
    if ratio.write == 0 && ratio.read == 0 {
        return Err(SettingsError::RatioAllZero);
    }
    Ok(ratio)
}

/// Parses `500ms`, `30s`, `5m`, `2h` or a bare number of seconds; at most [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<Duration, SettingsError> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| SettingsError::DurationSyntax(s.to_string()))?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(SettingsError::DurationSyntax(s.to_string())),
    };
    if !(seconds > 0.0 && seconds <= MAX_DURATION.as_secs_f64()) {
        return Err(SettingsError::DurationRange { given: s.to_string(), max: MAX_DURATION.as_secs() });
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Consistency level names as Cassandra spells them (case-insensitive).
pub fn parse_consistency(s: &str) -> Result<ConsistencyLevel, SettingsError> {
    Ok(match s.trim().to_ascii_uppercase().as_str() {
        "ONE" => ConsistencyLevel::ONE,
        "TWO" => ConsistencyLevel::TWO,
        "THREE" => ConsistencyLevel::THREE,
        "QUORUM" => ConsistencyLevel::QUORUM,
        "LOCAL_QUORUM" => ConsistencyLevel::LOCAL_QUORUM,
        "EACH_QUORUM" => ConsistencyLevel::EACH_QUORUM,
        "ALL" => ConsistencyLevel::ALL,
        "ANY" => ConsistencyLevel::ANY,
        "LOCAL_ONE" => ConsistencyLevel::LOCAL_ONE,
        _ => return Err(SettingsError::Consistency(s.to_string())),
    })
}

/// `sibyl-stress` command line.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "sibyl-stress",
    version,
    about = "Load generator for Sibyl (and any Cassandra Thrift server), in the spirit of cassandra-stress"
)]
pub struct Args {
    /// Server address.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Protocol spoken: Cassandra's Thrift API, its native protocol (CQL) or Redis' RESP.
    #[arg(long, value_enum, default_value_t = Protocol::Thrift)]
    pub protocol: Protocol,
    /// Server port (default: 9160 for Thrift, 9042 for CQL, 6379 for RESP).
    #[arg(long)]
    pub port: Option<u16>,
    /// What each operation does.
    #[arg(long, value_enum, default_value_t = Operation::Insert)]
    pub operation: Operation,
    /// The Thrift call of each insert (of --operation insert and mixed).
    #[arg(long, value_enum, default_value_t = WriteCall::BatchMutate)]
    pub write_call: WriteCall,
    /// Weights of writes and reads for --operation mixed.
    #[arg(long, default_value = "write=1,read=1", value_parser = parse_ratio)]
    pub mixed_ratio: MixedRatio,
    /// Number of distinct row keys.
    #[arg(long, default_value_t = 100_000)]
    pub num_keys: u64,
    /// Columns written (or read) per row (default: 5 for Thrift; RESP has one value per key).
    #[arg(long)]
    pub columns: Option<u32>,
    /// Bytes per column value.
    #[arg(long, default_value_t = 34)]
    pub value_size: usize,
    /// How keys are chosen.
    #[arg(long, value_enum, default_value_t = Distribution::Uniform)]
    pub distribution: Distribution,
    /// Standard deviation of the gaussian distribution, as a fraction of --num-keys.
    #[arg(long, default_value_t = 0.1)]
    pub stdev: f64,
    /// Client threads, each with its own connection.
    #[arg(long, default_value_t = 50)]
    pub threads: usize,
    /// Consistency level of every request.
    #[arg(long, default_value = "ONE", value_parser = parse_consistency)]
    pub consistency: ConsistencyLevel,
    /// Stop after this many operations (default: --num-keys).
    #[arg(long, conflicts_with = "duration")]
    pub count: Option<u64>,
    /// Stop after this long (e.g. 30s, 5m; at most 24h).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Target operations per second over all connections, paced evenly (default: as fast as
    /// the server answers). See the `pacer` module for how.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Keyspace used, created when missing: with column families Standard1 and Counter1 for
    /// Thrift (default "Stress"), with the table standard1 for CQL (default "stress_cql":
    /// cassandra-stress's "keyspace1" is refused where the sample configuration's "Keyspace1"
    /// exists, since keyspace names are unique regardless of case).
    #[arg(long)]
    pub keyspace: Option<String>,
    /// Replication factor of the keyspace when it is created.
    #[arg(long, default_value_t = 1)]
    pub replication_factor: u32,
    /// Rows asked for by each --operation range.
    #[arg(long, default_value_t = 10)]
    pub range_rows: u32,
    /// Append this run to an HTML report (created if missing; earlier runs are kept).
    #[arg(long)]
    pub graph: Option<std::path::PathBuf>,
    /// Name of this run in the report and the JSON summary.
    #[arg(long)]
    pub title: Option<String>,
    /// Framed transport (the default, as Cassandra's clients use).
    #[arg(long, overrides_with = "unframed")]
    pub framed: bool,
    /// Unframed (buffered) transport, as Cassandra 0.6's default.
    #[arg(long, overrides_with = "framed")]
    pub unframed: bool,
    /// Socket timeout per request, in seconds; a request that takes longer counts as an error.
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
    /// Stop early after this many errors in a row (across all threads).
    #[arg(long, default_value_t = 100)]
    pub max_consecutive_errors: u64,
    /// Print the final summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// No per-second progress lines on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// A checked stress run description.
#[derive(Debug, Clone)]
pub struct Settings {
    pub protocol: Protocol,
    pub host: String,
    pub port: u16,
    pub operation: Operation,
    pub write_call: WriteCall,
    pub ratio: MixedRatio,
    pub num_keys: u64,
    pub columns: u32,
    pub value_size: usize,
    pub distribution: Distribution,
    pub stdev: f64,
    pub threads: usize,
    pub consistency: ConsistencyLevel,
    pub stop: StopCondition,
    /// Target operations per second over all connections; `None` runs flat out.
    pub rate: Option<f64>,
    pub keyspace: String,
    pub replication_factor: u32,
    pub range_rows: u32,
    pub framed: bool,
    pub timeout: Duration,
    pub max_consecutive_errors: u64,
    pub title: String,
}

fn in_range(what: &'static str, given: u64, min: u64, max: u64) -> Result<(), SettingsError> {
    if given < min || given > max {
        return Err(SettingsError::OutOfRange { what, min, max, given });
    }
    Ok(())
}

impl Args {
    /// Checks the numbers and fills in defaults that depend on other options.
    pub fn into_settings(self) -> Result<Settings, SettingsError> {
        in_range("--num-keys", self.num_keys, 1, 10_000_000_000)?;
        let columns = self.columns.unwrap_or(match self.protocol {
            Protocol::Thrift | Protocol::Cql => 5,
            Protocol::Resp => 1,
        });
        in_range("--columns", u64::from(columns), 1, u64::from(MAX_COLUMNS))?;
        if self.protocol == Protocol::Resp {
            if !matches!(self.operation, Operation::Insert | Operation::Read | Operation::Mixed) {
                return Err(SettingsError::RespOperation(self.operation));
            }
            if columns != 1 {
                return Err(SettingsError::RespColumns(columns));
            }
        }
        if self.protocol == Protocol::Cql
            && !matches!(self.operation, Operation::Insert | Operation::Read | Operation::Mixed)
        {
            return Err(SettingsError::CqlOperation(self.operation));
        }
        if self.protocol == Protocol::Thrift && self.write_call == WriteCall::Insert && columns != 1 {
            return Err(SettingsError::InsertColumns(columns));
        }
        if let Some(rate) = self.rate {
            if !(rate > 0.0 && rate <= MAX_RATE) {
                return Err(SettingsError::Rate { given: rate, max: MAX_RATE });
            }
        }
        in_range("--value-size", self.value_size as u64, 0, MAX_VALUE_SIZE as u64)?;
        in_range("--threads", self.threads as u64, 1, MAX_THREADS as u64)?;
        in_range("--replication-factor", u64::from(self.replication_factor), 1, 100)?;
        in_range("--range-rows", u64::from(self.range_rows), 1, 100_000)?;
        in_range("--timeout", self.timeout, 1, 3600)?;
        in_range("--max-consecutive-errors", self.max_consecutive_errors, 1, u64::MAX)?;
        if !(self.stdev > 0.0 && self.stdev <= 1.0) {
            return Err(SettingsError::Stdev(self.stdev));
        }
        let stop = match (self.count, self.duration) {
            (_, Some(d)) => StopCondition::Duration(d),
            (Some(n), None) => {
                in_range("--count", n, 1, u64::MAX)?;
                StopCondition::Count(n)
            }
            (None, None) => StopCondition::Count(self.num_keys),
        };
        if let (StopCondition::Count(count), Distribution::Sequential, Operation::Insert) =
            (stop, self.distribution, self.operation)
        {
            // Not an error for other operations: reading keys twice is fine.
            if count > self.num_keys {
                return Err(SettingsError::SequentialOverflow { count, num_keys: self.num_keys });
            }
        }
        let title = self.title.unwrap_or_else(|| format!("{} x{}", self.operation, self.threads));
        Ok(Settings {
            protocol: self.protocol,
            host: self.host,
            port: self.port.unwrap_or(self.protocol.default_port()),
            operation: self.operation,
            write_call: self.write_call,
            ratio: self.mixed_ratio,
            num_keys: self.num_keys,
            columns,
            value_size: self.value_size,
            distribution: self.distribution,
            stdev: self.stdev,
            threads: self.threads,
            consistency: self.consistency,
            stop,
            rate: self.rate,
            keyspace: self.keyspace.unwrap_or_else(|| {
                match self.protocol {
                    Protocol::Cql => "stress_cql",
                    Protocol::Thrift | Protocol::Resp => "Stress",
                }
                .to_string()
            }),
            replication_factor: self.replication_factor,
            range_rows: self.range_rows,
            framed: !self.unframed,
            timeout: Duration::from_secs(self.timeout),
            max_consecutive_errors: self.max_consecutive_errors,
            title,
        })
    }
}

impl Settings {
    /// One line saying what this run does, for the console and the report.
    pub fn describe(&self) -> String {
        let op = match self.operation {
            Operation::Mixed => format!("mixed ({})", self.ratio),
            Operation::Range => format!("range ({} rows)", self.range_rows),
            other => other.to_string(),
        };
        // Which call writes, where the Thrift run writes and sends something else than the default.
        let op = match (self.protocol, self.operation, self.write_call) {
            (Protocol::Thrift, Operation::Insert | Operation::Mixed, WriteCall::Insert) => format!("{op} (by insert)"),
            _ => op,
        };
        let rate = match self.rate {
            Some(r) => format!(", paced at {r} op/s"),
            None => String::new(),
        };
        match self.protocol {
            Protocol::Thrift => format!(
                "{op} on {}:{} (thrift, {}), keyspace {} RF {}, {} threads, {} keys {}, {} columns x {} B, CL {}, {}{rate}",
                self.host,
                self.port,
                if self.framed { "framed" } else { "unframed" },
                self.keyspace,
                self.replication_factor,
                self.threads,
                self.num_keys,
                self.distribution.name(),
                self.columns,
                self.value_size,
                consistency_name(self.consistency),
                self.stop
            ),
            Protocol::Cql => format!(
                "{op} on {}:{} (cql, prepared), table {}.{} RF {}, {} threads, {} keys {}, {} columns x {} B, CL {}, {}{rate}",
                self.host,
                self.port,
                self.keyspace,
                crate::cql::TABLE,
                self.replication_factor,
                self.threads,
                self.num_keys,
                self.distribution.name(),
                self.columns,
                self.value_size,
                consistency_name(self.consistency),
                self.stop
            ),
            Protocol::Resp => format!(
                "{op} on {}:{} (resp), {} threads, {} keys {}, {} B values, {}{rate}",
                self.host,
                self.port,
                self.threads,
                self.num_keys,
                self.distribution.name(),
                self.value_size,
                self.stop
            ),
        }
    }
}

/// Cassandra's name of a consistency level.
pub fn consistency_name(cl: ConsistencyLevel) -> String {
    match cl {
        ConsistencyLevel::ONE => "ONE".into(),
        ConsistencyLevel::TWO => "TWO".into(),
        ConsistencyLevel::THREE => "THREE".into(),
        ConsistencyLevel::QUORUM => "QUORUM".into(),
        ConsistencyLevel::LOCAL_QUORUM => "LOCAL_QUORUM".into(),
        ConsistencyLevel::EACH_QUORUM => "EACH_QUORUM".into(),
        ConsistencyLevel::ALL => "ALL".into(),
        ConsistencyLevel::ANY => "ANY".into(),
        ConsistencyLevel::LOCAL_ONE => "LOCAL_ONE".into(),
        other => format!("level {}", other.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_parses_both_orders_and_aliases() {
        assert_eq!(parse_ratio("write=1,read=3"), Ok(MixedRatio { write: 1, read: 3 }));
        assert_eq!(parse_ratio(" read = 2 , insert=5 "), Ok(MixedRatio { write: 5, read: 2 }));
        assert_eq!(parse_ratio("READ=4"), Ok(MixedRatio { write: 0, read: 4 }));
    }

    #[test]
    fn ratio_errors_are_specific() {
        assert_eq!(parse_ratio("write=1,delete=2"), Err(SettingsError::RatioUnknownOp("delete".into())));
        assert_eq!(parse_ratio("write=1,write=2"), Err(SettingsError::RatioDuplicate("write".into())));
        assert_eq!(parse_ratio("write=x"), Err(SettingsError::RatioWeight("x".into())));
        assert_eq!(parse_ratio("write=0,read=0"), Err(SettingsError::RatioAllZero));
        assert_eq!(parse_ratio("write"), Err(SettingsError::RatioSyntax("write".into())));
        assert_eq!(parse_ratio(""), Err(SettingsError::RatioSyntax(String::new())));
        assert!(matches!(parse_ratio("write=-1"), Err(SettingsError::RatioWeight(_))));
    }

    #[test]
    fn durations_with_units_and_bounds() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("24h"), Ok(MAX_DURATION));
        assert!(matches!(parse_duration("25h"), Err(SettingsError::DurationRange { .. })));
        assert!(matches!(parse_duration("0s"), Err(SettingsError::DurationRange { .. })));
        assert!(matches!(parse_duration("10 parsecs"), Err(SettingsError::DurationSyntax(_))));
        assert!(matches!(parse_duration("s"), Err(SettingsError::DurationSyntax(_))));
    }

    #[test]
    fn consistency_names_round_trip() {
        for name in ["ONE", "TWO", "THREE", "QUORUM", "LOCAL_QUORUM", "EACH_QUORUM", "ALL", "ANY", "LOCAL_ONE"] {
            let cl = parse_consistency(&name.to_lowercase()).unwrap();
            assert_eq!(consistency_name(cl), name);
        }
        assert_eq!(parse_consistency("one"), Ok(ConsistencyLevel::ONE));
        assert!(parse_consistency("SERIAL").is_err());
    }

    fn args(extra: &[&str]) -> Args {
        let mut v = vec!["sibyl-stress"];
        v.extend_from_slice(extra);
        Args::try_parse_from(v).unwrap()
    }

    #[test]
    fn command_line_defaults_and_checks() {
        let s = args(&[]).into_settings().unwrap();
        assert_eq!(s.stop, StopCondition::Count(100_000));
        assert!(s.framed);
        assert_eq!(s.consistency, ConsistencyLevel::ONE);

        let s = args(&["--operation", "counter_add", "--unframed", "--duration", "5s", "--consistency", "quorum"])
            .into_settings()
            .unwrap();
        assert_eq!(s.operation, Operation::CounterAdd);
        assert!(!s.framed);
        assert_eq!(s.stop, StopCondition::Duration(Duration::from_secs(5)));
        assert_eq!(s.consistency, ConsistencyLevel::QUORUM);

        let s = args(&["--operation", "mixed", "--mixed-ratio", "write=1,read=3"]).into_settings().unwrap();
        assert_eq!(s.ratio, MixedRatio { write: 1, read: 3 });

        assert!(Args::try_parse_from(["sibyl-stress", "--count", "5", "--duration", "5s"]).is_err());
        assert!(Args::try_parse_from(["sibyl-stress", "--duration", "48h"]).is_err());
        assert!(matches!(
            args(&["--threads", "0"]).into_settings(),
            Err(SettingsError::OutOfRange { what: "--threads", .. })
        ));
        assert!(matches!(
            args(&["--distribution", "sequential", "--num-keys", "10", "--count", "11"]).into_settings(),
            Err(SettingsError::SequentialOverflow { count: 11, num_keys: 10 })
        ));
        assert!(matches!(args(&["--stdev", "0"]).into_settings(), Err(SettingsError::Stdev(_))));
    }

    #[test]
    fn protocol_sets_port_and_columns_defaults_and_limits_operations() {
        let s = args(&[]).into_settings().unwrap();
        assert_eq!((s.protocol, s.port, s.columns, s.rate), (Protocol::Thrift, 9160, 5, None));
        let s = args(&["--protocol", "resp"]).into_settings().unwrap();
        assert_eq!((s.protocol, s.port, s.columns), (Protocol::Resp, 6379, 1));
        assert!(s.describe().contains("(resp)"), "{}", s.describe());
        let s = args(&["--protocol", "resp", "--port", "7000", "--operation", "mixed"]).into_settings().unwrap();
        assert_eq!((s.port, s.operation), (7000, Operation::Mixed));
        assert_eq!(
            args(&["--protocol", "resp", "--operation", "range"]).into_settings().unwrap_err(),
            SettingsError::RespOperation(Operation::Range)
        );
        assert_eq!(
            args(&["--protocol", "resp", "--columns", "2"]).into_settings().unwrap_err(),
            SettingsError::RespColumns(2)
        );
    }

    #[test]
    fn write_call_insert_takes_one_column() {
        assert_eq!(args(&[]).into_settings().unwrap().write_call, WriteCall::BatchMutate);
        assert_eq!(
            args(&["--write-call", "insert"]).into_settings().unwrap_err(),
            SettingsError::InsertColumns(5),
            "five columns by default"
        );
        let s = args(&["--write-call", "insert", "--columns", "1", "--operation", "mixed"]).into_settings().unwrap();
        assert_eq!(s.write_call, WriteCall::Insert);
        assert!(s.describe().starts_with("mixed (write=1,read=1) (by insert) on"), "{}", s.describe());
        let s = args(&["--write-call", "batch-mutate", "--columns", "1"]).into_settings().unwrap();
        assert_eq!(s.write_call, WriteCall::BatchMutate);
        assert!(!s.describe().contains("by insert"), "{}", s.describe());
    }

    #[test]
    fn rate_must_be_positive_and_finite() {
        let s = args(&["--rate", "2500.5"]).into_settings().unwrap();
        assert_eq!(s.rate, Some(2500.5));
        assert!(s.describe().contains("paced at 2500.5 op/s"), "{}", s.describe());
        for bad in ["0", "-5", "NaN", "inf", "1e12"] {
            assert!(
                matches!(args(&[&format!("--rate={bad}")]).into_settings(), Err(SettingsError::Rate { .. })),
                "--rate {bad}"
            );
        }
    }
}
