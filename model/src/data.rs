//! Cells, tombstones and partitions: the values every other module moves around.
//!
//! Cassandra's rules live here: which of two versions of a column wins, what a tombstone shadows,
//! when an expiring column turns into a tombstone and when a tombstone may be forgotten.
//!
//! Times: `timestamp` and `marked_at` are the client's microseconds; `local_*` times are the
//! node's clock in seconds since the Unix epoch, as Cassandra keeps them.
//!
//! Super column families store each subcolumn as one cell whose name is
//! `[u16 BE length of super column name][super column name][subcolumn name]` (see
//! [`compose_super`]), so a partition is always one sorted list of cells. A super column deletion
//! is a range tombstone over that super column.
//!
//! Counter cells hold a counter context ([`crate::counter`]) and reconcile by merging contexts,
//! not by picking a winner; a counter's tombstone beats it whatever the timestamps (Cassandra's
//! rule since 2.1, CASSANDRA-7346): a counter removed and then incremented again stays removed
//! until the tombstone is purged, one of the cases Cassandra documents as undefined.

use std::cmp::Ordering;

use crate::counter;
use crate::error::CorruptData;

/// When a tombstone was written (client µs) and when it was written locally (node seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeletionTime {
    pub marked_at: i64,
    pub local_deletion_time: i32,
}

impl DeletionTime {
    /// No deletion at all.
    pub const LIVE: DeletionTime = DeletionTime { marked_at: i64::MIN, local_deletion_time: i32::MAX };

    pub fn new(marked_at: i64, local_deletion_time: i32) -> DeletionTime {
        DeletionTime { marked_at, local_deletion_time }
    }

    pub fn is_live(&self) -> bool {
        self.marked_at == i64::MIN
    }

    /// True when data written at `timestamp` is shadowed by this deletion.
    pub fn deletes(&self, timestamp: i64) -> bool {
        !self.is_live() && timestamp <= self.marked_at
    }

    /// The later of two deletions.
    pub fn max(self, other: DeletionTime) -> DeletionTime {
        if other.marked_at > self.marked_at
            || (other.marked_at == self.marked_at && other.local_deletion_time > self.local_deletion_time)
        {
            other
        } else {
            self
        }
    }

    /// A tombstone may be dropped once its local deletion time is before `gc_before`.
    pub fn purgeable(&self, gc_before: i32) -> bool {
        !self.is_live() && self.local_deletion_time < gc_before
    }
}

/// What a cell is, besides its name, value and timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellKind {
    /// A plain column.
    Live,
    /// A column with a TTL: live until `expires_at` (node seconds), then a tombstone. 64 bits, so
    /// an expiry past 2038 (a 20-year TTL given after 2018) is kept as it is, not capped.
    Expiring { ttl: i32, expires_at: i64 },
    /// A deleted column; `local_deletion_time` is node seconds.
    Tombstone { local_deletion_time: i32 },
    /// A counter: the value is a counter context ([`crate::counter`]); the timestamp is that of
    /// its latest increment (for row and range tombstones to compare with).
    Counter,
    /// An increment of a counter on its way to the replica that leads it, which turns it into a
    /// [`CellKind::Counter`] cell holding its own new shard. The value is empty. The engine
    /// never stores one (the engine's `Storage::apply` refuses it).
    CounterUpdate { delta: i64 },
}

impl CellKind {
    /// See [`Cell::is_live`].
    pub fn is_live(self, now: i32) -> bool {
        match self {
            CellKind::Live | CellKind::Counter | CellKind::CounterUpdate { .. } => true,
            CellKind::Expiring { expires_at, .. } => i64::from(now) < expires_at,
            CellKind::Tombstone { .. } => false,
        }
    }

    /// See [`Cell::local_deletion_time`].
    pub fn local_deletion_time(self) -> Option<i32> {
        match self {
            CellKind::Live | CellKind::Counter | CellKind::CounterUpdate { .. } => None,
            CellKind::Expiring { expires_at, .. } => Some(i32::try_from(expires_at).unwrap_or(i32::MAX)),
            CellKind::Tombstone { local_deletion_time } => Some(local_deletion_time),
        }
    }
}

/// One version of a column as reconciling sees it (its name aside), borrowed from wherever it
/// is stored.
#[derive(Clone, Copy, Debug)]
pub struct Version<'a> {
    pub timestamp: i64,
    pub kind: CellKind,
    pub value: &'a [u8],
}

/// One column version: Cassandra's Column / ExpiringColumn / DeletedColumn.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    pub name: Vec<u8>,
    pub value: Vec<u8>,
    pub timestamp: i64,
    pub kind: CellKind,
}

impl Cell {
    pub fn live(name: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>, timestamp: i64) -> Cell {
        Cell { name: name.into(), value: value.into(), timestamp, kind: CellKind::Live }
    }

    /// A column that lives for `ttl` seconds from `now` (node seconds).
    pub fn expiring(name: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>, timestamp: i64, ttl: i32, now: i32) -> Cell {
        let expires_at = i64::from(now) + i64::from(ttl);
        Cell { name: name.into(), value: value.into(), timestamp, kind: CellKind::Expiring { ttl, expires_at } }
    }

    pub fn tombstone(name: impl Into<Vec<u8>>, timestamp: i64, now: i32) -> Cell {
        Cell { name: name.into(), value: Vec::new(), timestamp, kind: CellKind::Tombstone { local_deletion_time: now } }
    }

    /// A counter cell holding `context` ([`crate::counter`]).
    pub fn counter(name: impl Into<Vec<u8>>, context: Vec<u8>, timestamp: i64) -> Cell {
        Cell { name: name.into(), value: context, timestamp, kind: CellKind::Counter }
    }

    /// An increment by `delta` (negative to decrement) of counter `name`, for its leader.
    pub fn counter_update(name: impl Into<Vec<u8>>, delta: i64, timestamp: i64) -> Cell {
        Cell { name: name.into(), value: Vec::new(), timestamp, kind: CellKind::CounterUpdate { delta } }
    }

    /// True when the cell reads as a value at `now` (not deleted, not expired).
    pub fn is_live(&self, now: i32) -> bool {
        self.kind.is_live(now)
    }

    /// The node time from which this cell counts as a tombstone, if it is or will become one; an
    /// expiry past what 32-bit node seconds hold reads as their largest (node time never gets there).
    pub fn local_deletion_time(&self) -> Option<i32> {
        self.kind.local_deletion_time()
    }

    /// What reconciling this cell with another version looks at.
    pub fn version(&self) -> Version<'_> {
        Version { timestamp: self.timestamp, kind: self.kind, value: &self.value }
    }

    /// True when compaction may forget this cell: a tombstone (or expired column) older than
    /// `gc_before`.
    pub fn purgeable(&self, now: i32, gc_before: i32) -> bool {
        !self.is_live(now) && self.local_deletion_time().is_some_and(|t| t < gc_before)
    }

    /// Approximate heap footprint, for memtable accounting.
    pub fn size(&self) -> usize {
        self.name.len() + self.value.len() + 32
    }

    pub fn is_counter_update(&self) -> bool {
        matches!(self.kind, CellKind::CounterUpdate { .. })
    }
}

/// Reconciles two versions of the same column, by Cassandra's rules: the higher timestamp wins;
/// on a tie a tombstone beats a live column; between two live columns the greater value wins;
/// between equal values the one that lives longer wins. Two counters merge their contexts
/// (see [`resolve`]).
pub fn reconcile(a: Cell, b: Cell) -> Cell {
    match resolve(&a, &b) {
        Resolution::First => a,
        Resolution::Second => b,
        Resolution::Merged(c) => c,
    }
}

/// What reconciling two versions of one column gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolution {
    First,
    Second,
    /// Neither as it is: two counters' contexts merged, or two increments summed.
    Merged(Cell),
}

/// Reconciles two versions of one column (see [`reconcile`]) without taking them.
///
/// Counters: two counter cells merge their contexts shard by shard ([`counter::merge`]) and
/// keep the later timestamp; a tombstone beats a counter whatever the timestamps (Cassandra's
/// rule since 2.1); two increments of one counter in one write are summed.
pub fn resolve(a: &Cell, b: &Cell) -> Resolution {
    match (a.kind, b.kind) {
        (CellKind::Counter, CellKind::Counter) => {
            if a.value == b.value {
                return if b.timestamp > a.timestamp { Resolution::Second } else { Resolution::First };
            }
            Resolution::Merged(Cell::counter(
                a.name.clone(),
                counter::merge(&a.value, &b.value),
                a.timestamp.max(b.timestamp),
            ))
        }
        (CellKind::CounterUpdate { delta: x }, CellKind::CounterUpdate { delta: y }) => {
            Resolution::Merged(Cell::counter_update(a.name.clone(), x.wrapping_add(y), a.timestamp.max(b.timestamp)))
        }
        (CellKind::Tombstone { .. }, CellKind::Counter | CellKind::CounterUpdate { .. }) => Resolution::First,
        (CellKind::Counter | CellKind::CounterUpdate { .. }, CellKind::Tombstone { .. }) => Resolution::Second,
        _ if prefer_second(a, b) => Resolution::Second,
        _ => Resolution::First,
    }
}

/// True when `b` wins over `a` by the rules of plain columns (see [`reconcile`]); counters need
/// [`resolve`].
pub fn prefer_second(a: &Cell, b: &Cell) -> bool {
    second_version_wins(a.version(), b.version())
}

/// [`prefer_second`] for versions however they are stored.
#[inline]
pub fn second_version_wins(a: Version<'_>, b: Version<'_>) -> bool {
    match a.timestamp.cmp(&b.timestamp) {
        Ordering::Less => return true,
        Ordering::Greater => return false,
        Ordering::Equal => {}
    }
    let a_dead = matches!(a.kind, CellKind::Tombstone { .. });
    let b_dead = matches!(b.kind, CellKind::Tombstone { .. });
    match (a_dead, b_dead) {
        (false, true) => return true,
        (true, false) => return false,
        (true, true) => return b.kind.local_deletion_time() > a.kind.local_deletion_time(),
        (false, false) => {}
    }
    match a.value.cmp(b.value) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => {
            let life = |c: &Version<'_>| match c.kind {
                CellKind::Expiring { expires_at, .. } => expires_at,
                _ => i64::MAX,
            };
            life(&b) > life(&a)
        }
    }
}

/// Deletes every cell whose name lies between `start` and `end` (inclusive) and whose timestamp
/// is at most `deletion.marked_at`. Bounds follow Thrift slice semantics: an empty bound is open,
/// and in a super column family a bound whose subcolumn part is empty covers the whole super
/// column (see [`crate::comparator::CellComparator::compare_with_bound`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RangeTombstone {
    pub start: Vec<u8>,
    pub end: Vec<u8>,
    pub deletion: DeletionTime,
}

/// The data of one partition (row) of one column family: Cassandra's `ColumnFamily` object.
/// Used for memtable contents, SSTable partitions, mutations and read results alike.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Row {
    /// Row-level tombstone (`DeletionTime::LIVE` if none).
    pub deletion: DeletionTime,
    pub range_tombstones: Vec<RangeTombstone>,
    /// Sorted by the column family's comparator, names unique.
    pub cells: Vec<Cell>,
}

impl Default for DeletionTime {
    fn default() -> Self {
        DeletionTime::LIVE
    }
}

impl Row {
    pub fn new() -> Row {
        Row::default()
    }

    pub fn is_empty(&self) -> bool {
        self.deletion.is_live() && self.range_tombstones.is_empty() && self.cells.is_empty()
    }

    /// Approximate heap footprint, for memtable accounting.
    pub fn size(&self) -> usize {
        self.cells.iter().map(Cell::size).sum::<usize>()
            + self.range_tombstones.iter().map(|r| r.start.len() + r.end.len() + 24).sum::<usize>()
            + 24
    }
}

/// Name of subcolumn `sub` of super column `super_name`, as stored in a super column family.
pub fn compose_super(super_name: &[u8], sub: &[u8]) -> Vec<u8> {
    let mut name = Vec::with_capacity(2 + super_name.len() + sub.len());
    // Super column names are at most 65535 bytes: the front end validates that.
    name.extend_from_slice(&(super_name.len().min(u16::MAX as usize) as u16).to_be_bytes());
    name.extend_from_slice(super_name);
    name.extend_from_slice(sub);
    name
}

/// Splits a super column family cell name into (super column name, subcolumn name).
/// A name too short for its length prefix reads as all super column name (never panics).
pub fn split_super(name: &[u8]) -> (&[u8], &[u8]) {
    if name.len() < 2 {
        return (name, &[]);
    }
    let len = u16::from_be_bytes([name[0], name[1]]) as usize;
    let rest = &name[2..];
    if len > rest.len() {
        return (rest, &[]);
    }
    rest.split_at(len)
}

// ---------------------------------------------------------------------------------------------
// Binary codec shared by the commit log and SSTables.
//
// Byte order: big-endian throughout.
//   cell  := flags:u8 name_len:u16 name value_len:u32 value timestamp:i64 [ttl:i32 expires_at:i32]
//            [local_deletion_time:i32] [ttl:i32 expires_at:i64] [delta:i64]
//            flags: 0 = live, 1 = expiring (ttl, expires_at:i32 follow), 2 = tombstone (ldt follows),
//                   3 = expiring past 2038 (ttl, expires_at:i64 follow; written only for an expiry
//                       that i32 does not hold, so such cells are encoded as before),
//                   4 = counter (value is a counter context, checked when decoded),
//                   5 = counter update (empty value, delta follows; only in messages to a leader)
//            Flags 3 to 5 appear from commit log record version 2 and SSTable format b on.
//   deletion := marked_at:i64 local_deletion_time:i32
//   range tombstone := start_len:u16 start end_len:u16 end deletion
//   row := deletion rt_count:u32 rt* cell_count:u32 cell*
// ---------------------------------------------------------------------------------------------

const CELL_LIVE: u8 = 0;
const CELL_EXPIRING: u8 = 1;
const CELL_TOMBSTONE: u8 = 2;
const CELL_EXPIRING_LONG: u8 = 3;
const CELL_COUNTER: u8 = 4;
const CELL_COUNTER_UPDATE: u8 = 5;

#[inline]
pub fn encode_deletion(d: &DeletionTime, out: &mut Vec<u8>) {
    out.extend_from_slice(&d.marked_at.to_be_bytes());
    out.extend_from_slice(&d.local_deletion_time.to_be_bytes());
}

pub fn encode_cell(c: &Cell, out: &mut Vec<u8>) {
    let flags = match c.kind {
        CellKind::Live => CELL_LIVE,
        CellKind::Expiring { expires_at, .. } if i32::try_from(expires_at).is_err() => CELL_EXPIRING_LONG,
        CellKind::Expiring { .. } => CELL_EXPIRING,
        CellKind::Tombstone { .. } => CELL_TOMBSTONE,
        CellKind::Counter => CELL_COUNTER,
        CellKind::CounterUpdate { .. } => CELL_COUNTER_UPDATE,
    };
    out.push(flags);
    out.extend_from_slice(&(c.name.len() as u16).to_be_bytes());
    out.extend_from_slice(&c.name);
    out.extend_from_slice(&(c.value.len() as u32).to_be_bytes());
    out.extend_from_slice(&c.value);
    out.extend_from_slice(&c.timestamp.to_be_bytes());
    match c.kind {
        CellKind::Live | CellKind::Counter => {}
        CellKind::CounterUpdate { delta } => out.extend_from_slice(&delta.to_be_bytes()),
        CellKind::Expiring { ttl, expires_at } => {
            out.extend_from_slice(&ttl.to_be_bytes());
            match i32::try_from(expires_at) {
                Ok(short) => out.extend_from_slice(&short.to_be_bytes()),
                Err(_) => out.extend_from_slice(&expires_at.to_be_bytes()),
            }
        }
        CellKind::Tombstone { local_deletion_time } => {
            out.extend_from_slice(&local_deletion_time.to_be_bytes());
        }
    }
}

pub fn encode_range_tombstone(rt: &RangeTombstone, out: &mut Vec<u8>) {
    out.extend_from_slice(&(rt.start.len() as u16).to_be_bytes());
    out.extend_from_slice(&rt.start);
    out.extend_from_slice(&(rt.end.len() as u16).to_be_bytes());
    out.extend_from_slice(&rt.end);
    encode_deletion(&rt.deletion, out);
}

/// Bytes [`encode_cell`] writes for `c`.
pub fn encoded_cell_len(c: &Cell) -> usize {
    let tail = match c.kind {
        CellKind::Live | CellKind::Counter => 0,
        CellKind::CounterUpdate { .. } => 8,
        CellKind::Expiring { expires_at, .. } if i32::try_from(expires_at).is_err() => 12,
        CellKind::Expiring { .. } => 8,
        CellKind::Tombstone { .. } => 4,
    };
    1 + 2 + c.name.len() + 4 + c.value.len() + 8 + tail
}

/// Bytes [`encode_row`] writes for `row`: a caller allocating for exactly that avoids a
/// reallocation when it keeps the bytes in a boxed slice.
pub fn encoded_row_len(row: &Row) -> usize {
    12 + 4
        + row.range_tombstones.iter().map(|rt| 2 + rt.start.len() + 2 + rt.end.len() + 12).sum::<usize>()
        + 4
        + row.cells.iter().map(encoded_cell_len).sum::<usize>()
}

pub fn encode_row(row: &Row, out: &mut Vec<u8>) {
    encode_deletion(&row.deletion, out);
    out.extend_from_slice(&(row.range_tombstones.len() as u32).to_be_bytes());
    for rt in &row.range_tombstones {
        encode_range_tombstone(rt, out);
    }
    out.extend_from_slice(&(row.cells.len() as u32).to_be_bytes());
    for c in &row.cells {
        encode_cell(c, out);
    }
}

/// A cursor over bytes that reports truncation as an error instead of panicking.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], CorruptData> {
        if self.remaining() < n {
            return Err(CorruptData::Truncated { at: self.pos, wanted: n });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], CorruptData> {
        let s = self.bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    #[inline]
    pub fn u8(&mut self) -> Result<u8, CorruptData> {
        Ok(self.array::<1>()?[0])
    }
    #[inline]
    pub fn u16(&mut self) -> Result<u16, CorruptData> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    #[inline]
    pub fn u32(&mut self) -> Result<u32, CorruptData> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    #[inline]
    pub fn u64(&mut self) -> Result<u64, CorruptData> {
        Ok(u64::from_be_bytes(self.array()?))
    }
    #[inline]
    pub fn i32(&mut self) -> Result<i32, CorruptData> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    #[inline]
    pub fn i64(&mut self) -> Result<i64, CorruptData> {
        Ok(i64::from_be_bytes(self.array()?))
    }
    /// A u16-length-prefixed byte string.
    #[inline]
    pub fn short_bytes(&mut self) -> Result<&'a [u8], CorruptData> {
        let n = self.u16()? as usize;
        self.bytes(n)
    }
    /// A u32-length-prefixed byte string.
    #[inline]
    pub fn long_bytes(&mut self) -> Result<&'a [u8], CorruptData> {
        let n = self.u32()? as usize;
        self.bytes(n)
    }
}

#[inline]
pub fn decode_deletion(r: &mut Reader<'_>) -> Result<DeletionTime, CorruptData> {
    Ok(DeletionTime { marked_at: r.i64()?, local_deletion_time: r.i32()? })
}

pub fn decode_cell(r: &mut Reader<'_>) -> Result<Cell, CorruptData> {
    let (name, v) = decode_cell_version(r)?;
    Ok(Cell { name: name.to_vec(), value: v.value.to_vec(), timestamp: v.timestamp, kind: v.kind })
}

/// One encoded cell's name and version, borrowed from the bytes (nothing copied).
pub fn decode_cell_version<'a>(r: &mut Reader<'a>) -> Result<(&'a [u8], Version<'a>), CorruptData> {
    let flags = r.u8()?;
    let name = r.short_bytes()?;
    let value = r.long_bytes()?;
    let timestamp = r.i64()?;
    let kind = match flags {
        CELL_LIVE => CellKind::Live,
        CELL_EXPIRING => CellKind::Expiring { ttl: r.i32()?, expires_at: i64::from(r.i32()?) },
        CELL_EXPIRING_LONG => CellKind::Expiring { ttl: r.i32()?, expires_at: r.i64()? },
        CELL_TOMBSTONE => CellKind::Tombstone { local_deletion_time: r.i32()? },
        CELL_COUNTER => {
            counter::validate(value)?;
            CellKind::Counter
        }
        CELL_COUNTER_UPDATE => CellKind::CounterUpdate { delta: r.i64()? },
        other => return Err(CorruptData::BadValue { what: "cell flags", value: other as u64 }),
    };
    Ok((name, Version { timestamp, kind, value }))
}

pub fn decode_range_tombstone(r: &mut Reader<'_>) -> Result<RangeTombstone, CorruptData> {
    let start = r.short_bytes()?.to_vec();
    let end = r.short_bytes()?.to_vec();
    let deletion = decode_deletion(r)?;
    Ok(RangeTombstone { start, end, deletion })
}

pub fn decode_row(r: &mut Reader<'_>) -> Result<Row, CorruptData> {
    let deletion = decode_deletion(r)?;
    let n = r.u32()? as usize;
    // Never trust a count to size an allocation: each entry is at least a few bytes.
    let mut range_tombstones = Vec::with_capacity(n.min(r.remaining() / 16));
    for _ in 0..n {
        range_tombstones.push(decode_range_tombstone(r)?);
    }
    let n = r.u32()? as usize;
    let mut cells = Vec::with_capacity(n.min(r.remaining() / 15));
    for _ in 0..n {
        cells.push(decode_cell(r)?);
    }
    Ok(Row { deletion, range_tombstones, cells })
}

/// Current node time in seconds since the Unix epoch, as Cassandra's `localDeletionTime`.
///
/// Read from the kernel's coarse clock on Linux: it trails the precise one by at most a
/// scheduler tick (a few milliseconds), nothing at the resolution of a second, and costs a fifth
/// as much (6 against 31 ns on the benchmark machine), paid by every read for its TTL checks.
pub fn now_seconds() -> i32 {
    let secs = coarse_unix_seconds().unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
    });
    secs.min(i32::MAX as u64) as i32
}

#[cfg(target_os = "linux")]
fn coarse_unix_seconds() -> Option<u64> {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut now) };
    if rc == 0 {
        u64::try_from(now.tv_sec).ok()
    } else {
        None
    }
}

#[cfg(not(target_os = "linux"))]
fn coarse_unix_seconds() -> Option<u64> {
    None
}

/// Current time in microseconds since the Unix epoch (the usual client timestamp).
pub fn now_micros() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros() as i64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn higher_timestamp_wins() {
        let a = Cell::live("c", "old", 1);
        let b = Cell::live("c", "new", 2);
        assert_eq!(reconcile(a.clone(), b.clone()).value, b"new");
        assert_eq!(reconcile(b, a).value, b"new");
    }

    #[test]
    fn tombstone_wins_tie() {
        let a = Cell::live("c", "v", 5);
        let d = Cell::tombstone("c", 5, 100);
        assert!(matches!(reconcile(a.clone(), d.clone()).kind, CellKind::Tombstone { .. }));
        assert!(matches!(reconcile(d, a).kind, CellKind::Tombstone { .. }));
    }

    #[test]
    fn greater_value_wins_tie() {
        let a = Cell::live("c", "a", 5);
        let b = Cell::live("c", "b", 5);
        assert_eq!(reconcile(a.clone(), b.clone()).value, b"b");
        assert_eq!(reconcile(b, a).value, b"b");
    }

    #[test]
    fn expiring_cell_dies_at_expiry() {
        let c = Cell::expiring("c", "v", 1, 10, 1000);
        assert!(c.is_live(1009));
        assert!(!c.is_live(1010));
        assert!(!c.purgeable(1010, 1010));
        assert!(c.purgeable(1011, 1011));
    }

    #[test]
    fn an_expiry_past_2038_is_kept_whole() {
        // 2030-01-01 plus 20 years: past i32::MAX seconds (2038-01-19T03:14:07Z).
        let now = 1_893_456_000;
        let c = Cell::expiring("c", "v", 1, 630_720_000, now);
        assert_eq!(c.kind, CellKind::Expiring { ttl: 630_720_000, expires_at: 2_524_176_000 });
        assert!(c.is_live(i32::MAX), "still live at the last second 32-bit node time holds");
        assert!(!c.purgeable(i32::MAX, i32::MAX));
        let mut bytes = Vec::new();
        encode_cell(&c, &mut bytes);
        assert_eq!(bytes.first(), Some(&CELL_EXPIRING_LONG));
        assert_eq!(decode_cell(&mut Reader::new(&bytes)), Ok(c));
        // An expiry i32 holds is written as the formats before wrote it: flag 1, 4 bytes.
        let short = Cell::expiring("c", "v", 1, 60, now);
        let mut short_bytes = Vec::new();
        encode_cell(&short, &mut short_bytes);
        assert_eq!((short_bytes.first(), short_bytes.len() + 4), (Some(&CELL_EXPIRING), bytes.len()));
        assert_eq!(decode_cell(&mut Reader::new(&short_bytes)), Ok(short));
    }

    #[test]
    fn super_names_round_trip() {
        let n = compose_super(b"sc", b"sub");
        assert_eq!(split_super(&n), (&b"sc"[..], &b"sub"[..]));
        assert_eq!(split_super(&compose_super(b"", b"")), (&b""[..], &b""[..]));
        // Garbage never panics.
        let _ = split_super(&[0xff, 0xff, 1]);
        let _ = split_super(&[7]);
    }

    #[test]
    fn row_codec_round_trips_and_rejects_truncation() {
        let row = Row {
            deletion: DeletionTime::new(7, 8),
            range_tombstones: vec![RangeTombstone {
                start: b"a".to_vec(),
                end: b"b".to_vec(),
                deletion: DeletionTime::new(3, 4),
            }],
            cells: vec![Cell::live("x", "1", 1), Cell::expiring("y", "2", 2, 60, 100), Cell::tombstone("z", 3, 5)],
        };
        let mut buf = Vec::new();
        encode_row(&row, &mut buf);
        assert_eq!(buf.len(), encoded_row_len(&row));
        assert_eq!(decode_row(&mut Reader::new(&buf)).expect("decodes"), row);
        for cut in 0..buf.len() {
            assert!(decode_row(&mut Reader::new(&buf[..cut])).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn encoded_length_is_what_the_codec_writes() {
        let cells = [
            Cell::live("x", "12", 1),
            Cell::expiring("y", "2", 2, 60, 100),
            Cell {
                kind: CellKind::Expiring { ttl: 60, expires_at: i64::from(i32::MAX) + 1 },
                ..Cell::live("y", "", 2)
            },
            Cell::tombstone("z", 3, 5),
            Cell::counter("c", crate::counter::single(node(1), 1, 300), 5),
            Cell::counter_update("u", -4, 6),
        ];
        for c in &cells {
            let mut buf = Vec::new();
            encode_cell(c, &mut buf);
            assert_eq!(buf.len(), encoded_cell_len(c), "{c:?}");
        }
        let row = Row { deletion: DeletionTime::new(1, 2), range_tombstones: Vec::new(), cells: cells.to_vec() };
        let mut buf = Vec::new();
        encode_row(&row, &mut buf);
        assert_eq!(buf.len(), encoded_row_len(&row));
    }

    fn node(n: u8) -> uuid::Uuid {
        uuid::Uuid::from_bytes([n; 16])
    }

    /// The exact bytes of the two counter cell kinds: the format others read them in.
    #[test]
    fn golden_counter_cells() {
        let cell = Cell::counter("c", crate::counter::single(node(0xab), 1, 300), 5);
        let mut buf = Vec::new();
        encode_cell(&cell, &mut buf);
        let golden: Vec<u8> = [
            &[4u8, 0, 1, b'c', 0, 0, 0, 32][..],
            &[0xab; 16],
            &1i64.to_be_bytes(),
            &300i64.to_be_bytes(),
            &5i64.to_be_bytes(),
        ]
        .concat();
        assert_eq!(buf, golden);
        assert_eq!(decode_cell(&mut Reader::new(&buf)).expect("decodes"), cell);

        let update = Cell::counter_update("c", -2, 9);
        let mut buf = Vec::new();
        encode_cell(&update, &mut buf);
        let golden: Vec<u8> =
            [&[5u8, 0, 1, b'c', 0, 0, 0, 0][..], &9i64.to_be_bytes(), &(-2i64).to_be_bytes()].concat();
        assert_eq!(buf, golden);
        assert_eq!(decode_cell(&mut Reader::new(&buf)).expect("decodes"), update);
        for cut in 0..buf.len() {
            assert!(decode_cell(&mut Reader::new(&buf[..cut])).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn a_damaged_counter_context_is_refused_when_read() {
        let mut cell = Cell::counter("c", crate::counter::single(node(1), 1, 1), 5);
        cell.value.pop();
        let mut buf = Vec::new();
        encode_cell(&cell, &mut buf);
        assert!(matches!(
            decode_cell(&mut Reader::new(&buf)),
            Err(CorruptData::BadValue { what: "counter context length", value: 31 })
        ));
    }

    #[test]
    fn counters_merge_and_their_tombstones_always_win() {
        let a = Cell::counter("c", crate::counter::single(node(1), 2, 10), 5);
        let b = Cell::counter("c", crate::counter::single(node(2), 1, 3), 7);
        let merged = reconcile(a.clone(), b.clone());
        assert_eq!(merged.timestamp, 7);
        assert_eq!(crate::counter::total(&merged.value), 13);
        assert_eq!(reconcile(b.clone(), a.clone()), merged);
        // An older version of node 1's shard changes nothing: never summed.
        let older = Cell::counter("c", crate::counter::single(node(1), 1, 4), 9);
        assert_eq!(crate::counter::total(&reconcile(merged.clone(), older).value), 13);
        // A tombstone wins even when older than the counter.
        let dead = Cell::tombstone("c", 1, 100);
        assert_eq!(reconcile(merged.clone(), dead.clone()), dead);
        assert_eq!(reconcile(dead.clone(), merged), dead);
        // Two increments of one counter in one write add up.
        let sum = reconcile(Cell::counter_update("c", 2, 1), Cell::counter_update("c", -5, 3));
        assert_eq!(sum, Cell::counter_update("c", -3, 3));
        assert!(sum.is_live(0) && !sum.purgeable(0, i32::MAX));
    }

    #[test]
    fn now_seconds_is_the_wall_clock_second() {
        let unix = || {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("a clock after 1970").as_secs()
                as i64
        };
        let before = unix();
        let now = i64::from(now_seconds());
        let after = unix();
        // The coarse clock may trail by a tick, across a second's boundary at most.
        assert!(before - 1 <= now && now <= after, "{before} {now} {after}");
    }
}
