//! Which SSTables a column family's strategy merges next, and where the result goes: the
//! decisions of Cassandra's size-tiered, leveled and time-window strategies, taken over plain
//! facts about each SSTable so that they can be tested without files.

use std::collections::BTreeMap;

use crate::dht::DecoratedKey;

use super::options::{CompactionOptions, SizeTiered, Strategy};

/// What a strategy looks at of one SSTable.
#[derive(Clone, Debug)]
pub(crate) struct Facts {
    pub generation: u64,
    pub first: DecoratedKey,
    pub last: DecoratedKey,
    /// Bytes of partitions.
    pub bytes: u64,
    pub level: u32,
    pub max_timestamp: i64,
    pub min_timestamp: i64,
    pub max_local_deletion_time: i32,
    pub cells: u64,
    pub tombstones: u64,
    /// Seconds since it was written.
    pub age_seconds: u64,
    /// Another compaction is working on it.
    pub busy: bool,
}

impl Facts {
    fn overlaps(&self, first: &DecoratedKey, last: &DecoratedKey) -> bool {
        self.first <= *last && *first <= self.last
    }
}

/// Where a compaction's output goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Output {
    pub level: Placement,
    /// A new output SSTable is started once one holds this many bytes of partitions.
    pub max_sstable_bytes: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Placement {
    At(u32),
    /// Level 1 first, then 2, ...: level L takes `fanout`^L SSTables (a major compaction under
    /// the leveled strategy).
    Fill {
        fanout: u64,
    },
}

impl Output {
    pub(crate) const ONE_SSTABLE: Output = Output { level: Placement::At(0), max_sstable_bytes: None };
}

/// The next compaction of a column family, by generations.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Plan {
    Merge {
        inputs: Vec<u64>,
        output: Output,
    },
    /// Compact this SSTable alone, to purge its tombstones; its level stays.
    PurgeTombstones {
        input: u64,
        level: u32,
    },
    /// Delete these whole: all they hold expired before gc_before, and shadows nothing older
    /// elsewhere (Cassandra's fully expired SSTables).
    Drop(Vec<u64>),
}

/// Level 0 SSTables beyond this many are size-tiered among themselves first (Cassandra's
/// `MAX_COMPACTING_L0`).
const MAX_L0: usize = 32;

/// What one pass of background compaction should do next, if anything. `gc_before` is when a
/// tombstone must have been written to be purgeable; `memtable_min_timestamp` the oldest write
/// still in memory.
pub(crate) fn next(
    sstables: &[Facts],
    options: &CompactionOptions,
    (min, max): (usize, usize),
    gc_before: i32,
    memtable_min_timestamp: i64,
) -> Option<Plan> {
    let free: Vec<&Facts> = sstables.iter().filter(|s| !s.busy).collect();
    let plan = match options.strategy {
        Strategy::SizeTiered => size_tiered(&free, &options.size_tiered, min, max),
        Strategy::Leveled { sstable_size, fanout } => leveled(sstables, options, sstable_size, fanout, min, max),
        Strategy::TimeWindow { window_seconds, timestamp_units_per_second } => {
            let expired = fully_expired(sstables, gc_before, memtable_min_timestamp);
            if !expired.is_empty() {
                return Some(Plan::Drop(expired));
            }
            time_window(&free, options, window_seconds * timestamp_units_per_second, min, max)
        }
        Strategy::DateTiered { base, max_window, max_age } => {
            let expired = fully_expired(sstables, gc_before, memtable_min_timestamp);
            if !expired.is_empty() {
                return Some(Plan::Drop(expired));
            }
            let now = sstables.iter().map(|s| s.max_timestamp).max()?;
            date_tiered_buckets(&free, now, base, max_window, max_age, min)
                .into_iter()
                .find_map(|(bucket, threshold)| size_tiered(&bucket, &options.size_tiered, threshold, max))
        }
    };
    plan.or_else(|| tombstone_heavy(sstables, options))
}

/// How many compactions are due, as Cassandra's `pending tasks` estimates them.
pub(crate) fn pending(sstables: &[Facts], options: &CompactionOptions, (min, max): (usize, usize)) -> u64 {
    let free: Vec<&Facts> = sstables.iter().filter(|s| !s.busy).collect();
    match options.strategy {
        Strategy::SizeTiered => tiers(&free, &options.size_tiered).iter().filter(|t| t.len() >= min).count() as u64,
        Strategy::Leveled { sstable_size, fanout } => {
            let levels = effective_levels(sstables);
            let mut n = (levels[0].len() as u64) / (max.max(1) as u64);
            for (l, members) in levels.iter().enumerate().skip(1) {
                let bytes: u64 = members.iter().map(|s| s.bytes).sum();
                let room = level_capacity(l as u32, sstable_size, fanout);
                n += bytes.saturating_sub(room).div_ceil(sstable_size.max(1));
            }
            n + u64::from(levels[0].len() >= min)
        }
        Strategy::DateTiered { base, max_window, max_age } => {
            let Some(now) = sstables.iter().map(|s| s.max_timestamp).max() else { return 0 };
            date_tiered_buckets(&free, now, base, max_window, max_age, min)
                .iter()
                .filter(|(bucket, threshold)| tiers(bucket, &options.size_tiered).iter().any(|t| t.len() >= *threshold))
                .count() as u64
        }
        Strategy::TimeWindow { window_seconds, timestamp_units_per_second } => {
            let windows = by_window(&free, window_seconds * timestamp_units_per_second);
            let newest = windows.keys().next_back().copied();
            windows
                .iter()
                .map(|(w, members)| {
                    if Some(*w) == newest {
                        tiers(members, &options.size_tiered).iter().filter(|t| t.len() >= min).count() as u64
                    } else {
                        u64::from(members.len() >= 2)
                    }
                })
                .sum()
        }
    }
}

// ----- size-tiered -----

/// Groups SSTables of similar size: each tier holds sizes within `bucket_low..=bucket_high`
/// times its average (all those under `min_sstable_size` share a tier), smallest first.
pub(crate) fn tiers<'a>(sstables: &[&'a Facts], o: &SizeTiered) -> Vec<Vec<&'a Facts>> {
    let mut sorted = sstables.to_vec();
    sorted.sort_by_key(|s| (s.bytes, s.generation));
    // (average size, members)
    let mut tiers: Vec<(u64, Vec<&Facts>)> = Vec::new();
    for s in sorted {
        let size = s.bytes;
        let fits = tiers.last().is_some_and(|(avg, _)| {
            let avg = *avg as f64;
            (size as f64 >= avg * o.bucket_low && size as f64 <= avg * o.bucket_high)
                || (size < o.min_sstable_size && avg < o.min_sstable_size as f64)
        });
        match tiers.last_mut() {
            Some((avg, members)) if fits => {
                members.push(s);
                *avg = members.iter().map(|m| m.bytes).sum::<u64>() / members.len() as u64;
            }
            _ => tiers.push((size, vec![s])),
        }
    }
    tiers.into_iter().map(|(_, members)| members).collect()
}

fn size_tiered(free: &[&Facts], o: &SizeTiered, min: usize, max: usize) -> Option<Plan> {
    let tier = tiers(free, o).into_iter().find(|t| t.len() >= min)?;
    Some(Plan::Merge { inputs: tier.iter().take(max).map(|s| s.generation).collect(), output: Output::ONE_SSTABLE })
}

// ----- leveled -----

fn level_capacity(level: u32, sstable_size: u64, fanout: u64) -> u64 {
    sstable_size.saturating_mul(fanout.saturating_pow(level))
}

/// The SSTables by level, levels 1 and up sorted by first key. An SSTable overlapping another of
/// its level (≥ 1) counts as level 0 here, as Cassandra sends it back there: levels only
/// overlap after a crash in the middle of a compaction, or after files were copied in.
fn effective_levels(sstables: &[Facts]) -> Vec<Vec<&Facts>> {
    let top = sstables.iter().map(|s| s.level as usize).max().unwrap_or(0);
    let mut levels: Vec<Vec<&Facts>> = vec![Vec::new(); top + 2];
    let mut by_level: BTreeMap<u32, Vec<&Facts>> = BTreeMap::new();
    for s in sstables {
        by_level.entry(s.level).or_default().push(s);
    }
    for (level, mut members) in by_level {
        if level == 0 {
            levels[0].extend(members);
            continue;
        }
        // Oldest first keeps its place; a newer one overlapping it goes back to level 0.
        members.sort_by_key(|s| s.generation);
        let mut kept: Vec<&Facts> = Vec::new();
        for s in members {
            if kept.iter().any(|k| k.overlaps(&s.first, &s.last)) {
                levels[0].push(s);
            } else {
                kept.push(s);
            }
        }
        kept.sort_by(|a, b| a.first.cmp(&b.first));
        levels[level as usize] = kept;
    }
    levels
}

/// SSTables per level (0 to 8, or more if there are), with each level's capacity in SSTables:
/// 4 for level 0, `fanout`^L above.
pub(crate) fn level_counts(sstables: &[Facts], fanout: u64) -> Vec<(u64, u64)> {
    let mut levels = effective_levels(sstables);
    while levels.len() > 9 && levels.last().is_some_and(Vec::is_empty) {
        levels.pop();
    }
    levels.resize(levels.len().max(9), Vec::new());
    levels
        .iter()
        .enumerate()
        .map(|(l, members)| (members.len() as u64, if l == 0 { 4 } else { fanout.saturating_pow(l as u32) }))
        .collect()
}

fn span(members: &[&Facts]) -> Option<(DecoratedKey, DecoratedKey)> {
    let first = members.iter().map(|s| &s.first).min()?.clone();
    let last = members.iter().map(|s| &s.last).max()?.clone();
    Some((first, last))
}

/// Cassandra's leveled strategy, simplified where it only tunes: level L ≥ 1 over its capacity
/// (`sstable_size` × `fanout`^L) sends its oldest SSTable, with what it overlaps in L + 1, to
/// L + 1 (highest level first); level 0 goes to level 1, with what it overlaps there, once it
/// holds `min` SSTables or more than one SSTable's worth of data; more than 32 SSTables in
/// level 0 are size-tiered among themselves first. Output SSTables are `sstable_size` each.
fn leveled(
    all: &[Facts],
    o: &CompactionOptions,
    sstable_size: u64,
    fanout: u64,
    min: usize,
    max: usize,
) -> Option<Plan> {
    let levels = effective_levels(all);
    let output = |level| Output { level: Placement::At(level), max_sstable_bytes: Some(sstable_size) };
    let free_l0: Vec<&Facts> = levels[0].iter().copied().filter(|s| !s.busy).collect();
    if free_l0.len() > MAX_L0 {
        if let Some(Plan::Merge { inputs, .. }) = size_tiered(&free_l0, &o.size_tiered, min, max) {
            return Some(Plan::Merge { inputs, output: Output::ONE_SSTABLE });
        }
    }
    for l in (1..levels.len()).rev() {
        let bytes: u64 = levels[l].iter().map(|s| s.bytes).sum();
        if bytes as f64 <= level_capacity(l as u32, sstable_size, fanout) as f64 * 1.001 {
            continue;
        }
        let mut oldest: Vec<&Facts> = levels[l].iter().copied().filter(|s| !s.busy).collect();
        oldest.sort_by_key(|s| s.generation);
        let next_level = levels.get(l + 1).map(Vec::as_slice).unwrap_or_default();
        for s in oldest {
            let overlapping: Vec<&Facts> =
                next_level.iter().copied().filter(|n| n.overlaps(&s.first, &s.last)).collect();
            if overlapping.iter().any(|n| n.busy) {
                continue;
            }
            let inputs = std::iter::once(s).chain(overlapping).map(|f| f.generation).collect();
            return Some(Plan::Merge { inputs, output: output(l as u32 + 1) });
        }
    }
    // Level 0: oldest first, while none of them is being compacted (their order matters for
    // nothing here, but a half of level 0 left behind could overlap what goes up).
    if levels[0].iter().any(|s| s.busy) || free_l0.is_empty() {
        return None;
    }
    let mut l0 = free_l0;
    l0.sort_by_key(|s| s.generation);
    l0.truncate(MAX_L0);
    let bytes: u64 = l0.iter().map(|s| s.bytes).sum();
    if l0.len() < min && bytes <= sstable_size {
        return None;
    }
    let (first, last) = span(&l0)?;
    let level1 = levels.get(1).map(Vec::as_slice).unwrap_or_default();
    let overlapping: Vec<&Facts> = level1.iter().copied().filter(|n| n.overlaps(&first, &last)).collect();
    if overlapping.iter().any(|n| n.busy) {
        return None;
    }
    let inputs = l0.into_iter().chain(overlapping).map(|f| f.generation).collect();
    Some(Plan::Merge { inputs, output: output(1) })
}

// ----- time-window -----

/// The window an SSTable belongs to: that of its newest cell (in timestamp units).
fn by_window<'a>(sstables: &[&'a Facts], window: i64) -> BTreeMap<i64, Vec<&'a Facts>> {
    let mut windows: BTreeMap<i64, Vec<&Facts>> = BTreeMap::new();
    for s in sstables {
        windows.entry(s.max_timestamp.div_euclid(window.max(1))).or_default().push(s);
    }
    windows
}

/// Cassandra's time-window strategy: the newest window is size-tiered; an older window with two
/// or more SSTables is merged into one (at most `max` at a time), newest window first.
fn time_window(free: &[&Facts], o: &CompactionOptions, window: i64, min: usize, max: usize) -> Option<Plan> {
    let windows = by_window(free, window);
    let newest = *windows.keys().next_back()?;
    for (w, members) in windows.iter().rev() {
        if *w == newest {
            if let Some(plan) = size_tiered(members, &o.size_tiered, min, max) {
                return Some(plan);
            }
        } else if members.len() >= 2 {
            let mut smallest = members.clone();
            smallest.sort_by_key(|s| (s.bytes, s.generation));
            let inputs = smallest.iter().take(max).map(|s| s.generation).collect();
            return Some(Plan::Merge { inputs, output: Output::ONE_SSTABLE });
        }
    }
    None
}

// ----- date-tiered -----

/// A window of Cassandra's date-tiered strategy: timestamps `t` with `t / size == div`.
#[derive(Clone, Copy, Debug)]
struct Target {
    size: i64,
    div: i64,
}

impl Target {
    fn compare(&self, timestamp: i64) -> std::cmp::Ordering {
        self.div.cmp(&timestamp.div_euclid(self.size))
    }

    /// The window before this one: as large, unless this one starts a window `factor` times
    /// larger (which must fit `max_window`).
    fn older(&self, factor: i64, max_window: i64) -> Target {
        if self.div.rem_euclid(factor) > 0 || self.size.saturating_mul(factor) > max_window {
            Target { size: self.size, div: self.div - 1 }
        } else {
            Target { size: self.size * factor, div: self.div.div_euclid(factor) - 1 }
        }
    }
}

/// Cassandra's date-tiered buckets, newest first, each with the SSTables a merge of it needs:
/// SSTables (newest cell no older than `max_age` before `now`, the newest cell of all) go by
/// their oldest cell into windows of `base`, older ones `factor` (`min_threshold`) times larger
/// in turn, up to `max_window`. The newest window merges with `factor` SSTables, older ones with
/// two.
fn date_tiered_buckets<'a>(
    free: &[&'a Facts],
    now: i64,
    base: i64,
    max_window: i64,
    max_age: i64,
    factor: usize,
) -> Vec<(Vec<&'a Facts>, usize)> {
    let factor = factor.max(2) as i64;
    let base = base.max(1);
    let mut files: Vec<&Facts> =
        free.iter().copied().filter(|s| s.max_timestamp >= now.saturating_sub(max_age)).collect();
    files.sort_by(|a, b| b.min_timestamp.cmp(&a.min_timestamp).then(b.generation.cmp(&a.generation)));
    let incoming = Target { size: base, div: now.div_euclid(base) };
    let mut target = incoming;
    let mut buckets = Vec::new();
    let mut i = 0;
    while i < files.len() {
        match target.compare(files[i].min_timestamp) {
            // Newer than the window (only ever the newest SSTables, past `now`'s window).
            std::cmp::Ordering::Less => i += 1,
            // Older: the windows before; once they stop growing, straight to the file's.
            std::cmp::Ordering::Greater if target.size.saturating_mul(factor) > max_window => {
                target.div = files[i].min_timestamp.div_euclid(target.size);
            }
            std::cmp::Ordering::Greater => target = target.older(factor, max_window),
            std::cmp::Ordering::Equal => {
                let mut bucket = Vec::new();
                while i < files.len() && target.compare(files[i].min_timestamp).is_eq() {
                    bucket.push(files[i]);
                    i += 1;
                }
                let first = incoming.compare(bucket[0].min_timestamp).is_eq();
                buckets.push((bucket, if first { factor as usize } else { 2 }));
            }
        }
    }
    buckets
}

/// SSTables whose every cell and tombstone became purgeable before `gc_before`, and whose data
/// is newer than anything else holding their keys (so no tombstone of theirs still hides
/// something): Cassandra drops these whole.
fn fully_expired(sstables: &[Facts], gc_before: i32, memtable_min_timestamp: i64) -> Vec<u64> {
    let candidates: Vec<&Facts> =
        sstables.iter().filter(|s| !s.busy && s.max_local_deletion_time < gc_before).collect();
    candidates
        .iter()
        .filter(|c| {
            c.max_timestamp < memtable_min_timestamp
                && sstables.iter().filter(|o| o.generation != c.generation && o.overlaps(&c.first, &c.last)).all(|o| {
                    candidates.iter().any(|e| e.generation == o.generation) || c.max_timestamp < o.min_timestamp
                })
        })
        .map(|c| c.generation)
        .collect()
}

// ----- any strategy -----

/// With nothing else to do: the oldest SSTable whose tombstones are more than
/// `tombstone_threshold` of its cells, written at least `tombstone_compaction_interval` ago, is
/// compacted alone so its purgeable tombstones go (Cassandra's single-SSTable tombstone
/// compaction, with the tombstone share counted over all tombstones, not only purgeable ones).
fn tombstone_heavy(sstables: &[Facts], o: &CompactionOptions) -> Option<Plan> {
    let s = sstables
        .iter()
        .filter(|s| !s.busy && s.cells > 0 && s.age_seconds >= o.tombstone_compaction_interval)
        .filter(|s| s.tombstones as f64 / s.cells as f64 > o.tombstone_threshold)
        .min_by_key(|s| s.generation)?;
    Some(Plan::PurgeTombstones { input: s.generation, level: s.level })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dht::Token;

    const MB: u64 = 1 << 20;

    fn key(b: u8) -> DecoratedKey {
        DecoratedKey::new(Token::from_bytes(&[b]), vec![b])
    }

    fn sstable(generation: u64, first: u8, last: u8, bytes: u64, level: u32) -> Facts {
        Facts {
            generation,
            first: key(first),
            last: key(last),
            bytes,
            level,
            max_timestamp: 1,
            min_timestamp: 1,
            max_local_deletion_time: i32::MAX,
            cells: 100,
            tombstones: 0,
            age_seconds: 0,
            busy: false,
        }
    }

    fn lcs(sstable_mb: u64) -> CompactionOptions {
        CompactionOptions {
            strategy: Strategy::Leveled { sstable_size: sstable_mb * MB, fanout: 10 },
            ..Default::default()
        }
    }

    fn merge(inputs: &[u64], level: u32, split: Option<u64>) -> Option<Plan> {
        Some(Plan::Merge {
            inputs: inputs.to_vec(),
            output: Output { level: Placement::At(level), max_sstable_bytes: split },
        })
    }

    #[test]
    fn size_tiered_merges_the_first_tier_with_enough_members() {
        let s =
            [sstable(1, 0, 9, MB, 0), sstable(2, 0, 9, MB, 0), sstable(3, 0, 9, 200 * MB, 0), sstable(4, 0, 9, MB, 0)];
        let o = CompactionOptions::default();
        assert_eq!(next(&s, &o, (4, 32), 0, i64::MAX), None);
        assert_eq!(next(&s, &o, (3, 32), 0, i64::MAX), merge(&[1, 2, 4], 0, None));
        assert_eq!(next(&s, &o, (3, 2), 0, i64::MAX), merge(&[1, 2], 0, None));
        let mut busy = s.clone();
        busy[1].busy = true;
        assert_eq!(next(&busy, &o, (3, 32), 0, i64::MAX), None);
    }

    #[test]
    fn leveled_sends_level_0_up_with_what_it_overlaps_in_level_1() {
        let o = lcs(1);
        let mut s = vec![sstable(1, 10, 20, MB, 1), sstable(2, 30, 40, MB, 1), sstable(3, 50, 60, MB, 1)];
        s.push(sstable(4, 15, 18, MB / 8, 0));
        assert_eq!(next(&s, &o, (4, 32), 0, i64::MAX), None, "one small SSTable waits in level 0");
        s.push(sstable(5, 12, 14, MB / 8, 0));
        s.push(sstable(6, 33, 34, MB / 8, 0));
        s.push(sstable(7, 16, 16, MB / 8, 0));
        // Level 0 spans 12..34: level 1's 10..20 and 30..40 take part, 50..60 does not.
        assert_eq!(next(&s, &o, (4, 32), 0, i64::MAX), merge(&[4, 5, 6, 7, 1, 2], 1, Some(MB)));
    }

    #[test]
    fn leveled_moves_the_oldest_sstable_of_a_full_level_up() {
        let o = lcs(1);
        // Level 1 holds 10 MB at most; 11 SSTables of 1 MB overflow it.
        let mut s: Vec<Facts> = (0..11).map(|i| sstable(20 - i as u64, i * 10, i * 10 + 5, MB, 1)).collect();
        s.push(sstable(30, 50, 58, MB, 2));
        s.push(sstable(31, 100, 120, MB, 2));
        // The oldest in level 1 is generation 10 (keys 100..105): it overlaps 100..120 in level 2.
        assert_eq!(next(&s, &o, (4, 32), 0, i64::MAX), merge(&[10, 31], 2, Some(MB)));
        // With that one busy, the next oldest: generation 11, keys 90..95, overlapping nothing.
        if let Some(f) = s.iter_mut().find(|f| f.generation == 31) {
            f.busy = true;
        }
        assert_eq!(next(&s, &o, (4, 32), 0, i64::MAX), merge(&[11], 2, Some(MB)));
    }

    #[test]
    fn an_sstable_overlapping_its_level_counts_as_level_0() {
        let s = [sstable(1, 10, 20, MB, 1), sstable(2, 15, 25, MB, 1), sstable(3, 30, 40, MB, 1)];
        let levels = effective_levels(&s);
        let gens = |l: usize| levels[l].iter().map(|f| f.generation).collect::<Vec<_>>();
        assert_eq!((gens(0), gens(1)), (vec![2], vec![1, 3]));
    }

    #[test]
    fn time_window_merges_each_past_window_into_one() {
        let window = 3_600 * 1_000_000i64;
        let o = CompactionOptions {
            strategy: Strategy::TimeWindow { window_seconds: 3_600, timestamp_units_per_second: 1_000_000 },
            ..Default::default()
        };
        let at = |generation, hour: i64| Facts {
            max_timestamp: hour * window + 5,
            min_timestamp: hour * window,
            ..sstable(generation, 0, 9, MB, 0)
        };
        let s = [at(1, 10), at(2, 11), at(3, 12), at(4, 12), at(5, 11)];
        // Window 12 is the newest: two SSTables are too few to size-tier; window 11 has two.
        assert_eq!(next(&s, &o, (4, 32), 0, i64::MAX), merge(&[2, 5], 0, None));
        let s = [at(1, 10), at(2, 11), at(3, 12), at(4, 12), at(5, 12), at(6, 12)];
        assert_eq!(next(&s, &o, (4, 32), 0, i64::MAX), merge(&[3, 4, 5, 6], 0, None));
        assert_eq!(next(&s[..2], &o, (4, 32), 0, i64::MAX), None);
    }

    #[test]
    fn date_tiered_merges_the_newest_window_at_min_threshold_and_older_ones_in_pairs() {
        // Windows of 10 units growing 4 times per tier, up to 160; now = 1000.
        let o = CompactionOptions {
            strategy: Strategy::DateTiered { base: 10, max_window: 160, max_age: 10_000 },
            ..Default::default()
        };
        let at = |generation, min_ts: i64, max_ts: i64| Facts {
            min_timestamp: min_ts,
            max_timestamp: max_ts,
            ..sstable(generation, 0, 9, MB, 0)
        };
        // Newest window [1000, 1010): three SSTables, under min_threshold 4. The windows before
        // are [990, 1000), [980, 990), [970, 980), then [880, 960) of 40 ... : 965 and 963 share
        // [960, 970); 900 and 890 share [880, 920) of 40.
        let s = [
            at(1, 1001, 1001),
            at(2, 1002, 1002),
            at(3, 1003, 1003),
            at(4, 965, 966),
            at(5, 963, 964),
            at(6, 900, 901),
            at(7, 890, 891),
        ];
        assert_eq!(next(&s, &o, (4, 32), 0, i64::MAX), merge(&[4, 5], 0, None));
        let mut busy = s.to_vec();
        busy[3].busy = true;
        assert_eq!(next(&busy, &o, (4, 32), 0, i64::MAX), merge(&[6, 7], 0, None));
        // A fourth SSTable in the newest window: it goes first.
        let mut more = s.to_vec();
        more.push(at(8, 1004, 1004));
        assert_eq!(next(&more, &o, (4, 32), 0, i64::MAX), merge(&[1, 2, 3, 8], 0, None));
        // An SSTable older than max_age is left alone.
        let o_young = CompactionOptions {
            strategy: Strategy::DateTiered { base: 10, max_window: 160, max_age: 50 },
            ..Default::default()
        };
        assert_eq!(next(&s, &o_young, (4, 32), 0, i64::MAX), merge(&[4, 5], 0, None));
        assert_eq!(
            next(&s[..3].iter().chain(&s[5..]).cloned().collect::<Vec<_>>(), &o_young, (4, 32), 0, i64::MAX),
            None
        );
        // A timestamp far in the past does not walk the windows one by one.
        let far = [at(1, 1000, 1000), at(2, i64::MIN / 2, i64::MIN / 2 + 1), at(3, i64::MIN / 2 + 2, i64::MIN / 2 + 3)];
        let o_ageless = CompactionOptions {
            strategy: Strategy::DateTiered { base: 10, max_window: 160, max_age: i64::MAX },
            ..Default::default()
        };
        assert_eq!(next(&far, &o_ageless, (4, 32), 0, i64::MAX), merge(&[2, 3], 0, None));
    }

    #[test]
    fn a_fully_expired_sstable_is_dropped_unless_it_may_shadow_older_data() {
        let o = CompactionOptions {
            strategy: Strategy::TimeWindow { window_seconds: 3_600, timestamp_units_per_second: 1_000_000 },
            ..Default::default()
        };
        let expired =
            Facts { max_local_deletion_time: 100, min_timestamp: 50, max_timestamp: 60, ..sstable(1, 0, 9, MB, 0) };
        let newer = Facts { min_timestamp: 70, max_timestamp: 80, ..sstable(2, 0, 9, MB, 0) };
        assert_eq!(next(&[expired.clone(), newer.clone()], &o, (4, 32), 200, i64::MAX), Some(Plan::Drop(vec![1])));
        assert_eq!(next(std::slice::from_ref(&expired), &o, (4, 32), 100, i64::MAX), None, "not yet past gc_before");
        assert_eq!(next(std::slice::from_ref(&expired), &o, (4, 32), 200, 55), None, "a memtable holds older writes");
        let older = Facts { min_timestamp: 10, max_timestamp: 20, ..sstable(3, 5, 5, MB, 0) };
        assert_eq!(next(&[expired.clone(), older], &o, (4, 32), 200, i64::MAX), None, "it may shadow older data");
        let older_elsewhere = Facts { min_timestamp: 10, max_timestamp: 20, ..sstable(3, 20, 30, MB, 0) };
        assert_eq!(next(&[expired, older_elsewhere], &o, (4, 32), 200, i64::MAX), Some(Plan::Drop(vec![1])));
    }

    #[test]
    fn a_tombstone_heavy_sstable_is_compacted_alone_once_old_enough() {
        let o = CompactionOptions::default();
        let heavy = Facts { tombstones: 30, age_seconds: 90_000, ..sstable(1, 0, 9, MB, 2) };
        assert_eq!(
            next(std::slice::from_ref(&heavy), &o, (4, 32), 0, i64::MAX),
            Some(Plan::PurgeTombstones { input: 1, level: 2 })
        );
        let young = Facts { age_seconds: 10, ..heavy.clone() };
        assert_eq!(next(&[young], &o, (4, 32), 0, i64::MAX), None);
        let light = Facts { tombstones: 20, ..heavy };
        assert_eq!(next(&[light], &o, (4, 32), 0, i64::MAX), None);
    }
}
