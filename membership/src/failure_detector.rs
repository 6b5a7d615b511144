//! The phi-accrual failure detector (Cassandra's `gms.FailureDetector` and `ArrivalWindow`).
//!
//! Gossip reports an endpoint every time its heartbeat (or any newer state) reaches us. Per
//! endpoint we keep a bounded window of the intervals between those reports; the suspicion level
//! after `t` of silence is `phi = PHI_FACTOR * t / mean(intervals)`, Cassandra's exponential
//! simplification of Hayashibara's phi. An endpoint is convicted when phi passes the configured
//! `phi_convict_threshold` (storage-conf's `PhiConvictThreshold`, default 8). With heartbeats
//! arriving every second that is about `8 * ln 10 ≈ 18.4` seconds of silence.
//!
//! The detector is a plain value driven with an explicit clock (`now: Instant` on every call), so
//! tests and the simulated cluster control time.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::Endpoint;

/// Turns `t / mean` into phi: `-log10(e^(-t/mean)) = (t/mean) / ln 10` (Cassandra's
/// `FailureDetector.PHI_FACTOR`).
pub const PHI_FACTOR: f64 = 1.0 / std::f64::consts::LN_10;

/// Storage-conf's `PhiConvictThreshold` default (Cassandra's `phi_convict_threshold: 8`).
pub const DEFAULT_PHI_CONVICT_THRESHOLD: f64 = 8.0;

/// Intervals kept per endpoint (Cassandra's `FailureDetector.SAMPLE_SIZE`).
pub const SAMPLE_SIZE: usize = 1000;

/// The interval a window starts with, before any real interval is known: Cassandra's
/// `INITIAL_VALUE_NANOS`, `cassandra.fd_initial_value_ms`, which defaults to twice the gossip
/// interval. Erring high means a slow first conviction rather than a flapping one.
pub const INITIAL_INTERVAL: Duration = Duration::from_secs(2);

/// Longer intervals are not recorded (Cassandra's `ArrivalWindow.MAX_INTERVAL_IN_NANO`,
/// `cassandra.fd_max_interval_ms`, defaulting to the initial value): after a partition we would
/// rather convict quickly next time than learn that silence is normal.
pub const MAX_INTERVAL: Duration = INITIAL_INTERVAL;

/// A gap this long between two interpretations means this process itself stalled (GC, SIGSTOP,
/// an overloaded host), and nobody is convicted until it has run this long again (Cassandra's
/// `cassandra.max_local_pause_in_ms`, default 5000).
pub const MAX_LOCAL_PAUSE: Duration = Duration::from_secs(5);

/// The recent inter-arrival intervals of one endpoint (Cassandra's `ArrivalWindow`).
#[derive(Debug, Clone)]
struct ArrivalWindow {
    /// Intervals in nanoseconds, oldest first, at most [`SAMPLE_SIZE`].
    intervals: VecDeque<u64>,
    /// Sum of `intervals`: at most `SAMPLE_SIZE * MAX_INTERVAL` nanoseconds, far below `u64::MAX`.
    sum_nanos: u64,
    last_arrival: Instant,
}

impl ArrivalWindow {
    /// A window opened by its first report, which records no real interval yet: like Cassandra,
    /// it starts from [`INITIAL_INTERVAL`].
    fn new(first_arrival: Instant) -> Self {
        let mut window = ArrivalWindow { intervals: VecDeque::new(), sum_nanos: 0, last_arrival: first_arrival };
        window.push(duration_nanos(INITIAL_INTERVAL));
        window
    }

    fn push(&mut self, nanos: u64) {
        if self.intervals.len() >= SAMPLE_SIZE {
            if let Some(oldest) = self.intervals.pop_front() {
                self.sum_nanos -= oldest;
            }
        }
        self.intervals.push_back(nanos);
        self.sum_nanos += nanos;
    }

    fn add(&mut self, now: Instant, ep: Endpoint) {
        let interval = now.saturating_duration_since(self.last_arrival);
        if interval <= MAX_INTERVAL {
            self.push(duration_nanos(interval));
        } else {
            tracing::trace!(%ep, ?interval, "failure detector: ignoring interval above the maximum");
        }
        // A clock that went backwards must not move the last arrival back with it.
        self.last_arrival = self.last_arrival.max(now);
    }

    fn mean_nanos(&self) -> f64 {
        // Never empty: the window starts with INITIAL_INTERVAL and only replaces entries.
        self.sum_nanos as f64 / self.intervals.len().max(1) as f64
    }

    fn phi(&self, now: Instant) -> f64 {
        let silence = now.saturating_duration_since(self.last_arrival).as_nanos() as f64;
        let mean = self.mean_nanos();
        if mean <= 0.0 {
            // Every recorded interval was zero (reports within the same instant): any silence at
            // all is then infinitely suspicious, no silence is not suspicious.
            return if silence > 0.0 { f64::INFINITY } else { 0.0 };
        }
        PHI_FACTOR * silence / mean
    }
}

fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Phi-accrual failure detection over every endpoint gossip has reported.
#[derive(Debug, Clone)]
pub struct FailureDetector {
    phi_convict_threshold: f64,
    windows: HashMap<Endpoint, ArrivalWindow>,
    /// When [`FailureDetector::interpret`] last ran, to notice our own pauses.
    last_interpret: Option<Instant>,
    /// When we last noticed a local pause of more than [`MAX_LOCAL_PAUSE`].
    last_pause: Option<Instant>,
}

impl Default for FailureDetector {
    fn default() -> Self {
        FailureDetector::new(DEFAULT_PHI_CONVICT_THRESHOLD)
    }
}

impl FailureDetector {
    /// A detector convicting at `phi_convict_threshold`. Range checks on the configured value
    /// (Cassandra accepts 5..=16) belong to the configuration loader.
    pub fn new(phi_convict_threshold: f64) -> Self {
        FailureDetector { phi_convict_threshold, windows: HashMap::new(), last_interpret: None, last_pause: None }
    }

    pub fn phi_convict_threshold(&self) -> f64 {
        self.phi_convict_threshold
    }

    /// Records that `ep` was heard from at `now` (a newer heartbeat or state reached us).
    pub fn report(&mut self, ep: Endpoint, now: Instant) {
        match self.windows.get_mut(&ep) {
            Some(window) => window.add(now, ep),
            None => {
                self.windows.insert(ep, ArrivalWindow::new(now));
            }
        }
    }

    /// The suspicion level of `ep` at `now`, or `None` if it was never reported.
    pub fn phi(&self, ep: &Endpoint, now: Instant) -> Option<f64> {
        self.windows.get(ep).map(|w| w.phi(now))
    }

    /// The mean of `ep`'s recorded intervals, or `None` if it was never reported.
    pub fn mean_interval(&self, ep: &Endpoint) -> Option<Duration> {
        self.windows.get(ep).map(|w| Duration::from_nanos(w.mean_nanos() as u64))
    }

    /// How many intervals `ep`'s window holds (at most [`SAMPLE_SIZE`]).
    pub fn sample_count(&self, ep: &Endpoint) -> usize {
        self.windows.get(ep).map_or(0, |w| w.intervals.len())
    }

    /// Whether `ep`'s phi at `now` is above the threshold. An endpoint never reported is not
    /// convicted: there is nothing to measure its silence from.
    pub fn is_convicted(&self, ep: &Endpoint, now: Instant) -> bool {
        self.phi(ep, now).is_some_and(|phi| phi > self.phi_convict_threshold)
    }

    /// The gossiper's periodic check of one endpoint (Cassandra's `interpret`): like
    /// [`FailureDetector::is_convicted`], but refuses to convict anyone while this process is
    /// recovering from a pause of its own longer than [`MAX_LOCAL_PAUSE`], since the silence it
    /// measured may be ours. Returns the phi when `ep` is convicted.
    pub fn interpret(&mut self, ep: &Endpoint, now: Instant) -> Option<f64> {
        let window = self.windows.get(ep)?;
        let since_last = self.last_interpret.map(|last| now.saturating_duration_since(last));
        self.last_interpret = Some(now);
        if since_last.is_some_and(|gap| gap > MAX_LOCAL_PAUSE) {
            tracing::warn!(gap = ?since_last, "not marking nodes down due to a local pause");
            self.last_pause = Some(now);
            return None;
        }
        if self.last_pause.is_some_and(|pause| now.saturating_duration_since(pause) < MAX_LOCAL_PAUSE) {
            tracing::debug!("still not marking nodes down due to a local pause");
            return None;
        }
        let phi = window.phi(now);
        if phi > self.phi_convict_threshold {
            tracing::debug!(%ep, phi, threshold = self.phi_convict_threshold, "failure detector convicts");
            Some(phi)
        } else {
            None
        }
    }

    /// Forgets when it last judged: gossip was stopped on purpose and starts again, and the gap
    /// since is no pause of this process that should hold convictions back.
    pub fn forget_last_interpret(&mut self) {
        self.last_interpret = None;
        self.last_pause = None;
    }

    /// Forgets `ep`'s history (it left, or restarted and its intervals must be learned again).
    pub fn remove(&mut self, ep: &Endpoint) {
        self.windows.remove(ep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(port: u16) -> Endpoint {
        Endpoint::from(([127, 0, 0, 1], port))
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// Reports `ep` every `every` from `start`, `count` times; returns the last report time.
    fn report_regularly(
        fd: &mut FailureDetector,
        ep: Endpoint,
        start: Instant,
        every: Duration,
        count: u32,
    ) -> Instant {
        let mut at = start;
        for i in 0..count {
            at = start + every * i;
            fd.report(ep, at);
        }
        at
    }

    #[test]
    fn unknown_endpoint_has_no_phi_and_is_not_convicted() {
        let mut fd = FailureDetector::default();
        let t0 = Instant::now();
        assert_eq!(fd.phi(&ep(1), t0), None);
        assert!(!fd.is_convicted(&ep(1), t0 + secs(3600.0)));
        assert_eq!(fd.interpret(&ep(1), t0 + secs(3600.0)), None);
    }

    #[test]
    fn first_report_starts_from_the_initial_interval() {
        let mut fd = FailureDetector::default();
        let t0 = Instant::now();
        fd.report(ep(1), t0);
        assert_eq!(fd.mean_interval(&ep(1)), Some(INITIAL_INTERVAL));
        assert_eq!(fd.sample_count(&ep(1)), 1);
        // phi after one initial mean of silence is exactly PHI_FACTOR.
        let phi = fd.phi(&ep(1), t0 + INITIAL_INTERVAL).unwrap_or(f64::NAN);
        assert!((phi - PHI_FACTOR).abs() < 1e-9, "phi {phi}");
    }

    #[test]
    fn phi_grows_linearly_with_silence() {
        let mut fd = FailureDetector::default();
        let t0 = Instant::now();
        let last = report_regularly(&mut fd, ep(1), t0, secs(1.0), 50);
        let phi = |t: f64| fd.phi(&ep(1), last + secs(t)).unwrap_or(f64::NAN);
        assert_eq!(phi(0.0), 0.0);
        let one = phi(1.0);
        assert!(one > 0.0);
        for k in [2.0, 5.0, 10.0, 20.0] {
            let ratio = phi(k) / one;
            assert!((ratio - k).abs() < 1e-9, "phi({k}) / phi(1) = {ratio}");
        }
    }

    #[test]
    fn intervals_update_the_mean() {
        let mut fd = FailureDetector::default();
        let t0 = Instant::now();
        // Initial 2 s plus nine intervals of 1 s: mean 1.1 s.
        let last = report_regularly(&mut fd, ep(1), t0, secs(1.0), 10);
        assert_eq!(fd.sample_count(&ep(1)), 10);
        assert_eq!(fd.mean_interval(&ep(1)), Some(Duration::from_millis(1100)));
        // Two 500 ms intervals more: (2 + 9 + 1) / 12 = 1 s.
        fd.report(ep(1), last + secs(0.5));
        fd.report(ep(1), last + secs(1.0));
        assert_eq!(fd.mean_interval(&ep(1)), Some(secs(1.0)));
        // The same silence is less suspicious than it was when the mean was larger.
        let phi = fd.phi(&ep(1), last + secs(11.0)).unwrap_or(f64::NAN);
        assert!((phi - PHI_FACTOR * 10.0).abs() < 1e-9, "phi {phi}");
    }

    #[test]
    fn window_is_bounded_and_forgets_the_initial_interval() {
        let mut fd = FailureDetector::default();
        let t0 = Instant::now();
        report_regularly(&mut fd, ep(1), t0, secs(0.5), SAMPLE_SIZE as u32 + 10);
        assert_eq!(fd.sample_count(&ep(1)), SAMPLE_SIZE);
        assert_eq!(fd.mean_interval(&ep(1)), Some(secs(0.5)));
    }

    #[test]
    fn silence_over_the_threshold_convicts() {
        let mut fd = FailureDetector::new(8.0);
        let t0 = Instant::now();
        // Enough one-second intervals that the initial 2 s no longer matters much: mean 1.001 s.
        let last = report_regularly(&mut fd, ep(1), t0, secs(1.0), SAMPLE_SIZE as u32);
        let mean = fd.mean_interval(&ep(1)).unwrap_or_default().as_secs_f64();
        assert!((mean - 1.001).abs() < 1e-6, "mean {mean}");
        // Conviction once t > 8 * ln 10 * mean ≈ 18.43 s.
        let limit = 8.0 * std::f64::consts::LN_10 * mean;
        assert!(!fd.is_convicted(&ep(1), last + secs(limit - 0.01)));
        assert!(fd.is_convicted(&ep(1), last + secs(limit + 0.01)));
        assert!(!fd.is_convicted(&ep(1), last + secs(18.0)));
        assert!(fd.is_convicted(&ep(1), last + secs(19.0)));
        // A lower threshold convicts sooner: 5 * ln 10 ≈ 11.5 s.
        let mut low = FailureDetector::new(5.0);
        let last = report_regularly(&mut low, ep(1), t0, secs(1.0), SAMPLE_SIZE as u32);
        assert!(!low.is_convicted(&ep(1), last + secs(11.0)));
        assert!(low.is_convicted(&ep(1), last + secs(12.0)));
        // A new report ends the conviction.
        low.report(ep(1), last + secs(12.0));
        assert!(!low.is_convicted(&ep(1), last + secs(12.5)));
    }

    #[test]
    fn a_large_gap_is_not_recorded_as_an_interval() {
        let mut fd = FailureDetector::default();
        let t0 = Instant::now();
        let last = report_regularly(&mut fd, ep(1), t0, secs(1.0), 10);
        let before = (fd.sample_count(&ep(1)), fd.mean_interval(&ep(1)));
        // Ten seconds of silence (a partition), then the endpoint is heard again.
        fd.report(ep(1), last + secs(10.0));
        assert_eq!((fd.sample_count(&ep(1)), fd.mean_interval(&ep(1))), before);
        // ...but the silence is measured from the new arrival.
        assert_eq!(fd.phi(&ep(1), last + secs(10.0)), Some(0.0));
        // An interval of exactly MAX_INTERVAL still counts.
        fd.report(ep(1), last + secs(10.0) + MAX_INTERVAL);
        assert_eq!(fd.sample_count(&ep(1)), before.0 + 1);
    }

    #[test]
    fn remove_forgets_the_history() {
        let mut fd = FailureDetector::default();
        let t0 = Instant::now();
        let last = report_regularly(&mut fd, ep(1), t0, secs(1.0), 10);
        fd.remove(&ep(1));
        assert_eq!(fd.phi(&ep(1), last + secs(100.0)), None);
        assert_eq!(fd.sample_count(&ep(1)), 0);
        fd.report(ep(1), last + secs(100.0));
        assert_eq!(fd.mean_interval(&ep(1)), Some(INITIAL_INTERVAL));
    }

    #[test]
    fn interpret_convicts_like_is_convicted() {
        let mut fd = FailureDetector::new(8.0);
        let t0 = Instant::now();
        let last = report_regularly(&mut fd, ep(1), t0, secs(1.0), 100);
        // Interpret every second, as the gossiper does.
        let mut convicted_at = None;
        for s in 1..40 {
            if let Some(phi) = fd.interpret(&ep(1), last + secs(f64::from(s))) {
                assert!(phi > 8.0);
                convicted_at = Some(s);
                break;
            }
        }
        // mean = (2 + 99) / 100 = 1.01 s, limit 18.6 s.
        assert_eq!(convicted_at, Some(19));
    }

    #[test]
    fn a_local_pause_suspends_convictions() {
        let mut fd = FailureDetector::new(8.0);
        let t0 = Instant::now();
        let last = report_regularly(&mut fd, ep(1), t0, secs(1.0), 100);
        assert_eq!(fd.interpret(&ep(1), last), None);
        // We were frozen for 30 s: phi is far over the threshold, but the pause is ours.
        let woke = last + secs(30.0);
        assert!(fd.is_convicted(&ep(1), woke));
        assert_eq!(fd.interpret(&ep(1), woke), None);
        // Still suspended within MAX_LOCAL_PAUSE of waking up...
        assert_eq!(fd.interpret(&ep(1), woke + secs(1.0)), None);
        assert_eq!(fd.interpret(&ep(1), woke + secs(4.0)), None);
        // ...and convicting again after it.
        assert!(fd.interpret(&ep(1), woke + secs(5.0)).is_some());
    }
}
