//! The compaction strategies a column family may name, and their options, checked with
//! Cassandra's rules and words (3.11's `validateOptions` of each strategy).
//!
//! A client's definition is checked strictly ([`CompactionOptions::parse`]); a stored one is
//! read leniently ([`CompactionOptions::of`]): a definition saved by an older build, which checked
//! less, must still load, with defaults in place of what does not parse.

use std::collections::BTreeMap;

use crate::schema::CfDef;

/// The package Cassandra's strategies live in; a short class name is read as one of them.
pub const PACKAGE: &str = "org.apache.cassandra.db.compaction";

/// Size-tiered compaction's options (also used by leveled compaction in level 0 and by
/// time-window compaction in the newest window).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeTiered {
    /// SSTables smaller than this all share one tier. Default 50 MiB.
    pub min_sstable_size: u64,
    /// A tier holds SSTables within `bucket_low..=bucket_high` times its average size.
    pub bucket_low: f64,
    pub bucket_high: f64,
}

impl Default for SizeTiered {
    fn default() -> Self {
        SizeTiered { min_sstable_size: 50 << 20, bucket_low: 0.5, bucket_high: 1.5 }
    }
}

/// How a column family's SSTables are merged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Strategy {
    SizeTiered,
    /// Level 0 takes flushes; level L ≥ 1 holds SSTables of about `sstable_size` bytes that do
    /// not overlap each other, `fanout`^L of them at most.
    Leveled {
        sstable_size: u64,
        fanout: u64,
    },
    /// SSTables are grouped by the window their newest cell falls in; each past window is
    /// merged into one SSTable, the current one size-tiered.
    /// Cassandra's date-tiered strategy (2.0.11 to 3.11; deprecated in 3.8 for time windows),
    /// all sizes in timestamp units: windows of `base`, each older tier's `min_threshold` times
    /// larger up to `max_window`; SSTables whose newest cell is older than `max_age` are left
    /// alone.
    DateTiered {
        base: i64,
        max_window: i64,
        max_age: i64,
    },
    TimeWindow {
        window_seconds: i64,
        /// Cell timestamps per second (the `timestamp_resolution`; clients write microseconds).
        timestamp_units_per_second: i64,
    },
}

/// A column family's compaction settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompactionOptions {
    pub strategy: Strategy,
    pub size_tiered: SizeTiered,
    /// Background compaction runs (`enabled`); a major compaction runs regardless.
    pub enabled: bool,
    /// An SSTable with more than this share of tombstones is compacted alone when nothing else
    /// is due, ...
    pub tombstone_threshold: f64,
    /// ... and it is at least this many seconds old.
    pub tombstone_compaction_interval: u64,
}

impl Default for CompactionOptions {
    fn default() -> Self {
        CompactionOptions {
            strategy: Strategy::SizeTiered,
            size_tiered: SizeTiered::default(),
            enabled: true,
            tombstone_threshold: 0.2,
            tombstone_compaction_interval: 86_400,
        }
    }
}

/// Options every strategy understands.
const COMMON: &[&str] = &[
    "tombstone_threshold",
    "tombstone_compaction_interval",
    "unchecked_tombstone_compaction",
    "enabled",
    "min_threshold",
    "max_threshold",
];
const SIZE_TIERED: &[&str] = &["min_sstable_size", "bucket_low", "bucket_high"];
const LEVELED: &[&str] = &["sstable_size_in_mb", "fanout_size"];
const DATE_TIERED: &[&str] = &[
    "timestamp_resolution",
    "base_time_seconds",
    "max_sstable_age_days",
    "max_window_size_seconds",
    "expired_sstable_check_frequency_seconds",
];
const TIME_WINDOW: &[&str] = &[
    "compaction_window_unit",
    "compaction_window_size",
    "timestamp_resolution",
    "expired_sstable_check_frequency_seconds",
];

impl CompactionOptions {
    /// The column family's settings, read leniently (see the module's comment).
    pub fn of(cf: &CfDef) -> CompactionOptions {
        match Self::parse(&cf.compaction_strategy, &cf.compaction_strategy_options) {
            Ok(options) => options,
            Err(e) => {
                tracing::warn!(keyspace = %cf.keyspace, cf = %cf.name, error = %e,
                               "compaction options not understood; size-tiered compaction with defaults");
                CompactionOptions::default()
            }
        }
    }

    /// `name` with Cassandra's package in front when it has none.
    pub fn full_class_name(name: &str) -> String {
        if name.contains('.') {
            name.to_string()
        } else {
            format!("{PACKAGE}.{name}")
        }
    }

    /// Checks a strategy class and its options as Cassandra does, in its words.
    pub fn parse(class: &str, options: &BTreeMap<String, String>) -> Result<CompactionOptions, String> {
        let class = Self::full_class_name(class);
        let simple = class.rsplit('.').next().unwrap_or(&class);
        let known: &[&[&str]] = match simple {
            "SizeTieredCompactionStrategy" => &[COMMON, SIZE_TIERED],
            "LeveledCompactionStrategy" => &[COMMON, SIZE_TIERED, LEVELED],
            "TimeWindowCompactionStrategy" => &[COMMON, SIZE_TIERED, TIME_WINDOW],
            "DateTieredCompactionStrategy" => &[COMMON, SIZE_TIERED, DATE_TIERED],
            _ => return Err(format!("Unable to find compaction strategy class '{class}'")),
        };
        if !class.starts_with(PACKAGE) || class[PACKAGE.len()..].matches('.').count() != 1 {
            return Err(format!("Unable to find compaction strategy class '{class}'"));
        }

        let mut out = CompactionOptions::default();
        if let Some(v) = options.get("tombstone_threshold") {
            let t: f64 = v.trim().parse().map_err(|_| not_an_int(v, "tombstone_threshold"))?;
            if t < 0.0 {
                return Err(format!("tombstone_threshold must be greater than 0, but was {t:.6}"));
            }
            out.tombstone_threshold = t;
        }
        if let Some(v) = options.get("tombstone_compaction_interval") {
            let i: i64 = v.trim().parse().map_err(|_| not_an_int(v, "tombstone_compaction_interval"))?;
            if i < 0 {
                return Err(format!("tombstone_compaction_interval must be greater than 0, but was {i}"));
            }
            out.tombstone_compaction_interval = i as u64;
        }
        if let Some(v) = options.get("unchecked_tombstone_compaction") {
            if !is_boolean(v) {
                return Err(format!("'unchecked_tombstone_compaction' should be either 'true' or 'false', not '{v}'"));
            }
        }
        if let Some(v) = options.get("enabled") {
            if !is_boolean(v) {
                return Err(format!("enabled should either be 'true' or 'false', not {v}"));
            }
            out.enabled = v.eq_ignore_ascii_case("true");
        }
        for key in ["min_threshold", "max_threshold"] {
            if let Some(v) = options.get(key) {
                v.trim().parse::<i32>().map_err(|_| not_an_int(v, key))?;
            }
        }
        out.size_tiered = size_tiered(options)?;
        out.strategy = match simple {
            "LeveledCompactionStrategy" => leveled(options)?,
            "TimeWindowCompactionStrategy" => time_window(options)?,
            "DateTieredCompactionStrategy" => date_tiered(options)?,
            _ => Strategy::SizeTiered,
        };

        let unknown: Vec<&str> =
            options.keys().map(String::as_str).filter(|k| !known.iter().any(|set| set.contains(k))).collect();
        if !unknown.is_empty() {
            return Err(format!("Properties specified [{}] are not understood by {simple}", unknown.join(", ")));
        }
        Ok(out)
    }
}

fn size_tiered(options: &BTreeMap<String, String>) -> Result<SizeTiered, String> {
    let mut out = SizeTiered::default();
    if let Some(v) = options.get("min_sstable_size") {
        let size: i64 = v.trim().parse().map_err(|_| not_an_int(v, "min_sstable_size"))?;
        if size < 0 {
            return Err(format!("min_sstable_size must be non negative: {size}"));
        }
        out.min_sstable_size = size as u64;
    }
    for (key, slot) in [("bucket_low", &mut out.bucket_low), ("bucket_high", &mut out.bucket_high)] {
        if let Some(v) = options.get(key) {
            *slot = v.trim().parse().map_err(|_| format!("{v} is not a parsable float for {key}"))?;
        }
    }
    if out.bucket_high <= out.bucket_low {
        return Err(format!(
            "bucket_high value ({}) is less than or equal to the bucket_low value ({})",
            java_double(out.bucket_high),
            java_double(out.bucket_low)
        ));
    }
    Ok(out)
}

fn leveled(options: &BTreeMap<String, String>) -> Result<Strategy, String> {
    let mut sstable_mb = 160i64;
    let mut fanout = 10i64;
    for (key, slot) in [("sstable_size_in_mb", &mut sstable_mb), ("fanout_size", &mut fanout)] {
        if let Some(v) = options.get(key) {
            let n: i32 = v.trim().parse().map_err(|_| not_an_int(v, key))?;
            if n < 1 {
                return Err(format!("{key} must be larger than 0, but was {n}"));
            }
            *slot = i64::from(n);
        }
    }
    Ok(Strategy::Leveled { sstable_size: (sstable_mb as u64) << 20, fanout: fanout as u64 })
}

fn time_window(options: &BTreeMap<String, String>) -> Result<Strategy, String> {
    let resolution = match options.get("timestamp_resolution") {
        None => 1_000_000,
        Some(v) => match v.as_str() {
            "SECONDS" => 1,
            "MILLISECONDS" => 1_000,
            "MICROSECONDS" => 1_000_000,
            "NANOSECONDS" => 1_000_000_000,
            _ => return Err(format!("{v} is not valid for timestamp_resolution")),
        },
    };
    let unit_seconds = match options.get("compaction_window_unit") {
        None => 86_400,
        Some(v) => match v.as_str() {
            "MINUTES" => 60,
            "HOURS" => 3_600,
            "DAYS" => 86_400,
            _ => return Err(format!("{v} is not valid for compaction_window_unit")),
        },
    };
    let size = match options.get("compaction_window_size") {
        None => 1,
        Some(v) => {
            let n: i32 = v.trim().parse().map_err(|_| not_an_int(v, "compaction_window_size"))?;
            if n < 1 {
                return Err(format!("{n} must be greater than 1 for compaction_window_size"));
            }
            i64::from(n)
        }
    };
    if let Some(v) = options.get("expired_sstable_check_frequency_seconds") {
        let n: i64 = v.trim().parse().map_err(|_| not_an_int(v, "expired_sstable_check_frequency_seconds"))?;
        if n < 0 {
            return Err(format!("Invalid negative value {n} for expired_sstable_check_frequency_seconds"));
        }
    }
    Ok(Strategy::TimeWindow { window_seconds: unit_seconds * size, timestamp_units_per_second: resolution })
}

fn date_tiered(options: &BTreeMap<String, String>) -> Result<Strategy, String> {
    // Timestamp units per second, as a fraction (units coarser than a second are allowed).
    let (per, per_seconds) = match options.get("timestamp_resolution").map(String::as_str) {
        None | Some("MICROSECONDS") => (1_000_000i64, 1i64),
        Some("NANOSECONDS") => (1_000_000_000, 1),
        Some("MILLISECONDS") => (1_000, 1),
        Some("SECONDS") => (1, 1),
        Some("MINUTES") => (1, 60),
        Some("HOURS") => (1, 3_600),
        Some("DAYS") => (1, 86_400),
        Some(v) => return Err(format!("timestamp_resolution {v} is not valid")),
    };
    let units = |seconds: f64| ((seconds * per as f64 / per_seconds as f64).round() as i64).max(1);
    let max_age_days: f64 = match options.get("max_sstable_age_days") {
        None => 365_000.0,
        Some(v) => v.trim().parse().map_err(|_| not_an_int(v, "max_sstable_age_days"))?,
    };
    if max_age_days < 0.0 {
        return Err(format!("max_sstable_age_days must be non-negative: {max_age_days:.2}"));
    }
    let seconds = |key: &str, default: i64| -> Result<i64, String> {
        match options.get(key) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| not_an_int(v, key)),
        }
    };
    let base = seconds("base_time_seconds", 60)?;
    if base <= 0 {
        return Err(format!("base_time_seconds must be greater than 0, but was {base}"));
    }
    let max_window = seconds("max_window_size_seconds", 86_400)?;
    for (key, value) in [
        ("max_window_size_seconds", max_window),
        ("expired_sstable_check_frequency_seconds", seconds("expired_sstable_check_frequency_seconds", 600)?),
    ] {
        if value < 0 {
            return Err(format!("{key} must not be negative, but was {value}"));
        }
    }
    Ok(Strategy::DateTiered {
        base: units(base as f64),
        max_window: units(max_window as f64),
        max_age: units((max_age_days * 86_400.0).min(1e15)),
    })
}

fn not_an_int(value: &str, key: &str) -> String {
    format!("{value} is not a parsable int (base10) for {key}")
}

fn is_boolean(v: &str) -> bool {
    v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false")
}

/// A double as Java's `Double.toString` writes the usual ones (`1.0`, not `1`).
fn java_double(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e7 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn err(class: &str, pairs: &[(&str, &str)]) -> String {
        CompactionOptions::parse(class, &opts(pairs)).expect_err("refused")
    }

    #[test]
    fn strategies_are_named_short_or_in_full() {
        let lcs = CompactionOptions::parse("LeveledCompactionStrategy", &opts(&[("sstable_size_in_mb", "5")]));
        assert_eq!(lcs.map(|o| o.strategy), Ok(Strategy::Leveled { sstable_size: 5 << 20, fanout: 10 }));
        let twcs = CompactionOptions::parse(
            "org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy",
            &opts(&[("compaction_window_unit", "HOURS"), ("compaction_window_size", "6")]),
        );
        assert_eq!(
            twcs.map(|o| o.strategy),
            Ok(Strategy::TimeWindow { window_seconds: 6 * 3600, timestamp_units_per_second: 1_000_000 })
        );
        assert_eq!(CompactionOptions::parse("SizeTieredCompactionStrategy", &BTreeMap::new()), Ok(Default::default()));
        assert_eq!(
            err("Bogus", &[]),
            "Unable to find compaction strategy class 'org.apache.cassandra.db.compaction.Bogus'"
        );
        assert_eq!(
            err("com.example.MyStrategy", &[]),
            "Unable to find compaction strategy class 'com.example.MyStrategy'"
        );
        let dtcs = CompactionOptions::parse("DateTieredCompactionStrategy", &opts(&[("base_time_seconds", "3600")]));
        assert_eq!(
            dtcs.map(|o| o.strategy),
            Ok(Strategy::DateTiered {
                base: 3_600_000_000,
                max_window: 86_400_000_000,
                max_age: 365_000 * 86_400_000_000
            })
        );
        let dtcs = "DateTieredCompactionStrategy";
        assert_eq!(err(dtcs, &[("base_time_seconds", "0")]), "base_time_seconds must be greater than 0, but was 0");
        assert_eq!(err(dtcs, &[("max_sstable_age_days", "-1")]), "max_sstable_age_days must be non-negative: -1.00");
        assert_eq!(err(dtcs, &[("timestamp_resolution", "WEEKS")]), "timestamp_resolution WEEKS is not valid");
        assert_eq!(
            err(dtcs, &[("compaction_window_unit", "DAYS")]),
            "Properties specified [compaction_window_unit] are not understood by DateTieredCompactionStrategy"
        );
    }

    #[test]
    fn bad_options_get_cassandras_words() {
        let stcs = "SizeTieredCompactionStrategy";
        let lcs = "LeveledCompactionStrategy";
        let twcs = "TimeWindowCompactionStrategy";
        assert_eq!(
            err(stcs, &[("abc", "-54.54")]),
            "Properties specified [abc] are not understood by SizeTieredCompactionStrategy"
        );
        assert_eq!(
            err(lcs, &[("compaction_window_size", "4")]),
            "Properties specified [compaction_window_size] are not understood by LeveledCompactionStrategy"
        );
        assert_eq!(
            err(twcs, &[("dog", "3")]),
            "Properties specified [dog] are not understood by TimeWindowCompactionStrategy"
        );
        assert_eq!(
            err(stcs, &[("tombstone_threshold", "-0.4")]),
            "tombstone_threshold must be greater than 0, but was -0.400000"
        );
        assert_eq!(
            err(lcs, &[("unchecked_tombstone_compaction", "maybe")]),
            "'unchecked_tombstone_compaction' should be either 'true' or 'false', not 'maybe'"
        );
        assert_eq!(err(lcs, &[("enabled", "certainly")]), "enabled should either be 'true' or 'false', not certainly");
        assert_eq!(err(stcs, &[("min_sstable_size", "-1")]), "min_sstable_size must be non negative: -1");
        assert_eq!(
            err(stcs, &[("bucket_high", "0.5")]),
            "bucket_high value (0.5) is less than or equal to the bucket_low value (0.5)"
        );
        assert_eq!(err(stcs, &[("bucket_low", "x")]), "x is not a parsable float for bucket_low");
        assert_eq!(err(lcs, &[("sstable_size_in_mb", "-5")]), "sstable_size_in_mb must be larger than 0, but was -5");
        assert_eq!(
            err(lcs, &[("sstable_size_in_mb", "big")]),
            "big is not a parsable int (base10) for sstable_size_in_mb"
        );
        assert_eq!(
            err(twcs, &[("compaction_window_unit", "SECONDS")]),
            "SECONDS is not valid for compaction_window_unit"
        );
        assert_eq!(
            err(twcs, &[("compaction_window_size", "-8")]),
            "-8 must be greater than 1 for compaction_window_size"
        );
        assert_eq!(err(twcs, &[("timestamp_resolution", "WEEKS")]), "WEEKS is not valid for timestamp_resolution");
    }

    #[test]
    fn a_stored_definition_that_no_longer_parses_still_compacts_size_tiered() {
        let mut cf = CfDef::new("ks", "cf");
        cf.compaction_strategy_options = opts(&[("made_up", "1")]);
        assert_eq!(CompactionOptions::of(&cf), CompactionOptions::default());
        cf.compaction_strategy = "LeveledCompactionStrategy".into();
        cf.compaction_strategy_options = opts(&[("enabled", "false")]);
        let o = CompactionOptions::of(&cf);
        assert!(!o.enabled);
        assert_eq!(o.strategy, Strategy::Leveled { sstable_size: 160 << 20, fanout: 10 });
    }
}
