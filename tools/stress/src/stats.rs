//! Measurements: latency histograms (HdrHistogram, microseconds), per-second intervals and the
//! final summary.
//!
//! Each worker records into its own [`WorkerStats`] behind its own mutex; the reporting thread
//! drains them once per second, so workers never contend with each other.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency tracked, in microseconds (one hour); slower requests are recorded as this.
const MAX_LATENCY_US: u64 = 3_600_000_000;
/// Distinct error kinds kept by name; more are lumped under [`OTHER_ERRORS`], because error
/// messages may carry keys and would otherwise grow without bound.
const MAX_ERROR_KINDS: usize = 32;
pub const OTHER_ERRORS: &str = "(other errors)";

/// A latency histogram in microseconds with 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    // Constant bounds that satisfy the crate's rules (1 ≤ low, high ≥ 2·low, sigfig ≤ 5).
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("constant histogram bounds are valid")
}

fn ms(us: f64) -> f64 {
    us / 1000.0
}

/// Latency figures in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct LatencySummary {
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

impl LatencySummary {
    /// Figures of a histogram in microseconds; all zero when it is empty.
    pub fn of(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let q = |p: f64| ms(h.value_at_quantile(p) as f64);
        LatencySummary {
            mean_ms: ms(h.mean()),
            p50_ms: q(0.5),
            p95_ms: q(0.95),
            p99_ms: q(0.99),
            p999_ms: q(0.999),
            max_ms: ms(h.max() as f64),
        }
    }
}

/// One line of progress: what happened during one interval (about a second).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Seconds since the start at the end of this interval.
    pub t_s: f64,
    /// Successful operations in the interval.
    pub ops: u64,
    /// Successful operations per second in the interval.
    pub op_rate: f64,
    pub mean_ms: f64,
    pub p99_ms: f64,
    /// Failed operations in the interval.
    pub errors: u64,
    /// Successful operations since the start.
    pub total_ops: u64,
    /// Failed operations since the start.
    pub total_errors: u64,
}

/// What one worker measured since the last drain.
#[derive(Debug, Clone)]
pub struct WorkerStats {
    pub latency: Histogram<u64>,
    pub ops: u64,
    pub errors: u64,
    pub error_kinds: BTreeMap<String, u64>,
    /// Successful operations per kind (`insert`, `read`, ...), for mixed runs.
    pub ops_by_kind: BTreeMap<&'static str, u64>,
}

impl Default for WorkerStats {
    fn default() -> Self {
        WorkerStats {
            latency: new_histogram(),
            ops: 0,
            errors: 0,
            error_kinds: BTreeMap::new(),
            ops_by_kind: BTreeMap::new(),
        }
    }
}

impl WorkerStats {
    pub fn success(&mut self, kind: &'static str, micros: u64) {
        self.latency.saturating_record(micros.clamp(1, MAX_LATENCY_US));
        self.ops += 1;
        *self.ops_by_kind.entry(kind).or_default() += 1;
    }

    pub fn failure(&mut self, what: &str) {
        self.errors += 1;
        add_error_kind(&mut self.error_kinds, what, 1);
    }

    /// Moves everything into `into` and starts afresh (keeping the histogram's memory).
    pub fn drain_into(&mut self, into: &mut WorkerStats) {
        // Both histograms have the same bounds, so adding cannot fail.
        let _ = into.latency.add(&self.latency);
        self.latency.reset();
        into.ops += std::mem::take(&mut self.ops);
        into.errors += std::mem::take(&mut self.errors);
        for (k, n) in std::mem::take(&mut self.error_kinds) {
            add_error_kind(&mut into.error_kinds, &k, n);
        }
        for (k, n) in std::mem::take(&mut self.ops_by_kind) {
            *into.ops_by_kind.entry(k).or_default() += n;
        }
    }
}

fn add_error_kind(kinds: &mut BTreeMap<String, u64>, what: &str, n: u64) {
    if let Some(c) = kinds.get_mut(what) {
        *c += n;
    } else if kinds.len() < MAX_ERROR_KINDS {
        kinds.insert(what.to_string(), n);
    } else {
        *kinds.entry(OTHER_ERRORS.to_string()).or_default() += n;
    }
}

/// The result of a run (also the `--json` output; the benchmark script reads `op_rate` and the
/// latency fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub title: String,
    pub operation: String,
    pub description: String,
    /// Successful operations.
    pub ops: u64,
    /// Failed operations (errors from the server, timeouts, broken connections, reads that
    /// found no row).
    pub errors: u64,
    pub elapsed_s: f64,
    /// Successful operations per second over the whole run.
    pub op_rate: f64,
    #[serde(flatten)]
    pub latency: LatencySummary,
    pub ops_by_kind: BTreeMap<String, u64>,
    /// Error counts by kind (exception and message).
    pub error_kinds: BTreeMap<String, u64>,
    /// Why the run stopped before its count or duration, if it did.
    pub aborted: Option<String>,
    /// `thrift` or `resp` (empty in reports written before RESP existed).
    #[serde(default)]
    pub protocol: String,
    /// The `--rate` asked for, if any; compare with `op_rate`.
    #[serde(default)]
    pub target_rate: Option<f64>,
    /// CPU time (user + system) the load generator itself used while the load ran, in seconds:
    /// what the client took from the cores it shares with the server. `None` without `/proc`.
    #[serde(default)]
    pub client_cpu_s: Option<f64>,
    /// Times the load generator's threads went to sleep waiting (voluntary context switches)
    /// while the load ran: each one is a wakeup some reply had to pay for in the kernel.
    /// `None` without `/proc`.
    #[serde(default)]
    pub client_sleeps: Option<u64>,
}

/// User + system CPU time of this process so far, in seconds, from `/proc/self/stat`; `None`
/// where that file is missing or unreadable.
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    cpu_seconds_of_stat(&stat, clock_ticks_per_second())
}

/// Fields 14 and 15 (utime, stime, in clock ticks) of a `/proc/PID/stat` line. The command
/// name (field 2) may hold spaces and parentheses, so counting starts after its last `)`.
fn cpu_seconds_of_stat(stat: &str, ticks_per_second: f64) -> Option<f64> {
    let after_name = stat.get(stat.rfind(')')? + 1..)?;
    // Field 3 is the first after the name: utime (14) and stime (15) are its 12th and 13th.
    let mut fields = after_name.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / ticks_per_second)
}

/// Voluntary context switches of every thread of this process so far, from
/// `/proc/self/task/*/status`; `None` where those files are missing or unreadable.
pub fn process_sleeps() -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        // A thread that ended since the listing has no status left to read: skip it.
        if let Ok(status) = std::fs::read_to_string(task.path().join("status")) {
            total += voluntary_switches_of_status(&status)?;
        }
    }
    Some(total)
}

/// The `voluntary_ctxt_switches` line of a `/proc/.../status` file.
fn voluntary_switches_of_status(status: &str) -> Option<u64> {
    status.lines().find_map(|l| l.strip_prefix("voluntary_ctxt_switches:")).and_then(|v| v.trim().parse().ok())
}

/// `sysconf(_SC_CLK_TCK)`, which is 100 on every Linux architecture the tool is built for;
/// reading it would need libc for one constant.
fn clock_ticks_per_second() -> f64 {
    100.0
}

impl Summary {
    pub fn new(
        title: String,
        operation: String,
        description: String,
        totals: &WorkerStats,
        elapsed_s: f64,
        aborted: Option<String>,
    ) -> Summary {
        Summary {
            title,
            operation,
            description,
            ops: totals.ops,
            errors: totals.errors,
            elapsed_s,
            op_rate: if elapsed_s > 0.0 { totals.ops as f64 / elapsed_s } else { 0.0 },
            latency: LatencySummary::of(&totals.latency),
            ops_by_kind: totals.ops_by_kind.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            error_kinds: totals.error_kinds.clone(),
            aborted,
            protocol: String::new(),
            target_rate: None,
            client_cpu_s: None,
            client_sleeps: None,
        }
    }

    /// The human-readable end-of-run report.
    pub fn to_text(&self) -> String {
        let l = &self.latency;
        let mut s = String::new();
        s.push_str(&format!("Results ({}):\n", self.title));
        s.push_str(&format!("  Op rate                   : {:>12.0} op/s\n", self.op_rate));
        if let Some(target) = self.target_rate {
            s.push_str(&format!("  Target rate               : {target:>12.0} op/s\n"));
        }
        s.push_str(&format!("  Operations                : {:>12}\n", self.ops));
        for (k, n) in &self.ops_by_kind {
            if self.ops_by_kind.len() > 1 {
                s.push_str(&format!("    {k:<24}: {n:>12}\n"));
            }
        }
        s.push_str(&format!("  Latency mean              : {:>12.3} ms\n", l.mean_ms));
        s.push_str(&format!("  Latency median            : {:>12.3} ms\n", l.p50_ms));
        s.push_str(&format!("  Latency 95th percentile   : {:>12.3} ms\n", l.p95_ms));
        s.push_str(&format!("  Latency 99th percentile   : {:>12.3} ms\n", l.p99_ms));
        s.push_str(&format!("  Latency 99.9th percentile : {:>12.3} ms\n", l.p999_ms));
        s.push_str(&format!("  Latency max               : {:>12.3} ms\n", l.max_ms));
        s.push_str(&format!("  Total errors              : {:>12}\n", self.errors));
        for (k, n) in &self.error_kinds {
            s.push_str(&format!("    {n:>8} x {k}\n"));
        }
        s.push_str(&format!("  Total operation time      : {:>12.3} s\n", self.elapsed_s));
        if let Some(cpu) = self.client_cpu_s.filter(|_| self.ops > 0) {
            s.push_str(&format!("  Client CPU per operation  : {:>12.2} us\n", cpu * 1e6 / self.ops as f64));
        }
        if let Some(sleeps) = self.client_sleeps.filter(|_| self.ops > 0) {
            s.push_str(&format!("  Client sleeps per operation: {:>11.4}\n", sleeps as f64 / self.ops as f64));
        }
        if let Some(why) = &self.aborted {
            s.push_str(&format!("  STOPPED EARLY: {why}\n"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        // 3 significant digits: values are within 0.1% of what was recorded.
        (a - b).abs() <= b.abs() * 0.001 + 1e-9
    }

    #[test]
    fn summary_of_known_latencies() {
        let mut w = WorkerStats::default();
        // 1..=1000 ms in steps of 1 ms.
        for i in 1..=1000u64 {
            w.success("insert", i * 1000);
        }
        w.failure("InvalidRequestException: boom");
        w.failure("InvalidRequestException: boom");
        let mut total = WorkerStats::default();
        w.drain_into(&mut total);
        assert_eq!(w.ops, 0);
        assert!(w.latency.is_empty());

        let s = Summary::new("t".into(), "insert".into(), "d".into(), &total, 2.0, None);
        assert_eq!(s.ops, 1000);
        assert_eq!(s.errors, 2);
        assert_eq!(s.op_rate, 500.0);
        assert!(close(s.latency.mean_ms, 500.5), "{:?}", s.latency);
        assert!(close(s.latency.p50_ms, 500.0), "{:?}", s.latency);
        assert!(close(s.latency.p95_ms, 950.0), "{:?}", s.latency);
        assert!(close(s.latency.p99_ms, 990.0), "{:?}", s.latency);
        assert!(close(s.latency.p999_ms, 999.0), "{:?}", s.latency);
        assert!(close(s.latency.max_ms, 1000.0), "{:?}", s.latency);
        assert_eq!(s.error_kinds.get("InvalidRequestException: boom"), Some(&2));
        assert_eq!(s.ops_by_kind.get("insert"), Some(&1000));

        let text = s.to_text();
        assert!(text.contains("Op rate"), "{text}");
        assert!(text.contains("2 x InvalidRequestException: boom"), "{text}");

        // The JSON the benchmark script reads has flat latency fields.
        let json: serde_json::Value = serde_json::to_value(&s).unwrap();
        assert_eq!(json["op_rate"], 500.0);
        assert!(json["p99_ms"].as_f64().is_some_and(|v| close(v, 990.0)));
    }

    #[test]
    fn cpu_time_is_read_after_the_command_name() {
        // A command name with spaces and a parenthesis must not shift the fields.
        let stat = "4242 (my (odd) prog) S 1 2 3 4 5 6 7 8 9 10 250 130 0 0 20 0 1 0 100 0 0";
        assert_eq!(cpu_seconds_of_stat(stat, 100.0), Some(3.8));
        assert_eq!(cpu_seconds_of_stat("4242 (x) S 1 2", 100.0), None);
        assert_eq!(cpu_seconds_of_stat("no name here", 100.0), None);
        // This process has used some CPU by now, and the figure only grows.
        let a = process_cpu_seconds().expect("/proc/self/stat is readable on Linux");
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let b = process_cpu_seconds().unwrap();
        assert!(b >= a && b > 0.0, "{a} then {b}");
    }

    #[test]
    fn sleeps_are_read_from_the_status_line() {
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t1234\nnonvoluntary_ctxt_switches:\t7\n";
        assert_eq!(voluntary_switches_of_status(status), Some(1234));
        assert_eq!(voluntary_switches_of_status("Name:\tx\n"), None);
        // Sleeping makes this process's count grow.
        let a = process_sleeps().expect("/proc/self/task is readable on Linux");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = process_sleeps().unwrap();
        assert!(b > a, "{a} then {b}");
    }

    #[test]
    fn empty_histogram_summarises_to_zero() {
        let s = LatencySummary::of(&new_histogram());
        assert_eq!(s, LatencySummary::default());
        let s = Summary::new("t".into(), "read".into(), "d".into(), &WorkerStats::default(), 0.0, None);
        assert_eq!(s.op_rate, 0.0);
    }

    #[test]
    fn error_kinds_are_bounded() {
        let mut w = WorkerStats::default();
        for i in 0..100 {
            w.failure(&format!("error about key {i}"));
        }
        assert_eq!(w.errors, 100);
        assert_eq!(w.error_kinds.len(), MAX_ERROR_KINDS + 1);
        assert_eq!(w.error_kinds.get(OTHER_ERRORS), Some(&(100 - MAX_ERROR_KINDS as u64)));
    }

    #[test]
    fn huge_latencies_saturate_instead_of_failing() {
        let mut w = WorkerStats::default();
        w.success("read", u64::MAX);
        w.success("read", 0);
        assert_eq!(w.ops, 2);
        assert!(LatencySummary::of(&w.latency).max_ms >= MAX_LATENCY_US as f64 / 1000.0 * 0.999);
    }
}
