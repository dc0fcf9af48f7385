//! The transposition table: fixed size (set in MiB), buckets of four 16-byte slots in
//! one cache line, depth- and age-aware replacement, shared lock-free between threads.
//!
//! A slot stores the key XOR the data word, so a torn write by another thread reads as
//! a miss instead of a wrong entry. Bounds, not a value and a flag, are kept: a search
//! that fails low stores an upper bound, one that fails high a lower bound, and a
//! second search of the same position at the same depth tightens them. An entry records
//! the selectivity it was searched with: a selective (Multi-ProbCut) result never
//! answers a wider search ([`TtEntry::answers`]). Its move is the one that refuted the
//! position or proved its value; a search that failed low keeps the move stored
//! before it.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

use super::moves::OrderedMove;
use crate::board::Board;
use crate::square::Square;
use crate::zobrist::mix64;

/// A position's key in the table: a hash of its two bitboards made of a few
/// multiplications. Not [`Board::key`], the Zobrist key that books and label stores keep
/// on disk: its 16 lookups span 32 KiB of byte tables, two thirds of this machine's
/// level-1 data cache; this one reads no memory (whether the cache or the instructions
/// saved are what made it faster was not measured). Time to depth 24 at 1σ, 30 Thor
/// positions at 36 empties, one thread (`scripts/search_speed.sh 24 1.0 1 36 30`),
/// alternated: 5.73 / 5.56 s with the Zobrist key against 5.12 / 4.95 s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct TableKey(u64);

impl TableKey {
    /// The key of `board` (relative to the side to move, as the board is).
    #[inline]
    pub(crate) fn of(board: &Board) -> TableKey {
        // Each product by an odd constant is a bijection of one side's discs; the
        // rotation keeps a board and its pass (the sides exchanged) apart; `mix64`
        // spreads every bit over the bucket index and the check word.
        let p = board.player.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let o = board.opponent.wrapping_mul(0xD6E8_FEB8_6659_FD93).rotate_left(29);
        TableKey(mix64(p ^ o))
    }
}

/// What the table knows of a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TtEntry {
    /// Score is at least this.
    pub(crate) lower: i32,
    /// Score is at most this.
    pub(crate) upper: i32,
    /// Best move found, if any.
    pub(crate) best: Option<Square>,
    /// Depth searched (≥ empties means to the end).
    pub(crate) depth: u8,
    /// Multi-ProbCut selectivity of the search, tenths of a standard deviation (0: full
    /// width; an exact result is full width).
    pub(crate) selectivity: u8,
}

impl TtEntry {
    /// Whether the entry's bounds may answer a search to `depth` at `selectivity`
    /// (tenths, 0 for full width): searched at least as deep and at least as wide — a
    /// full-width entry answers any search, a selective one only a search at most as
    /// selective (a larger number of σ cuts less), never a full-width or exact one.
    #[inline]
    pub(crate) fn answers(&self, depth: u32, selectivity: u8) -> bool {
        u32::from(self.depth) >= depth
            && (self.selectivity == 0 || (selectivity != 0 && self.selectivity >= selectivity))
    }

    /// Whether this entry is at least as good an answer as one of `depth` at `selectivity`.
    fn covers(&self, depth: u8, selectivity: u8) -> bool {
        self.answers(u32::from(depth), selectivity)
    }
}

#[derive(Default)]
struct Slot {
    check: AtomicU64,
    data: AtomicU64,
}

#[repr(align(64))]
#[derive(Default)]
struct Bucket {
    slots: [Slot; 4],
}

/// A shared, fixed-size transposition table.
pub(crate) struct TranspositionTable {
    buckets: TableMemory,
    mask: u64,
    age: AtomicU8,
}

/// The table's buckets in zeroed memory mapped from the system, with huge pages asked
/// for: a probe is a random access into hundreds of MiB, and with 4 KiB pages most
/// probes also miss the TLB (depth 12 full width from a 13-ply position: 1.00–1.03 s
/// in a `Vec`, 0.91 s here, with the system's transparent huge pages on `madvise`).
///
/// Every thread writes the buckets through shared references to their atomics, so the
/// slice must be made from a pointer that may write to the whole mapping: `MmapRaw`'s
/// comes from the mapping itself. (A pointer taken from `MmapMut`'s `&[u8]` may only
/// read, and an atomic store through it is undefined behaviour, which Miri reports.)
struct TableMemory {
    map: memmap2::MmapRaw,
    len: usize,
}

impl TableMemory {
    fn new(len: usize) -> std::io::Result<TableMemory> {
        let mut map = memmap2::MmapOptions::new().len(len * std::mem::size_of::<Bucket>()).map_anon()?;
        // Advice only: a system without transparent huge pages gets small ones. (Miri
        // does not model the call.)
        #[cfg(all(target_os = "linux", not(miri)))]
        let _ = map.advise(memmap2::Advice::HugePage);
        // Touch every page now, so that the search does not wait for them.
        for page in map.chunks_mut(4096) {
            page[0] = 0;
        }
        Ok(TableMemory { map: memmap2::MmapRaw::from(map), len })
    }

    fn buckets(&self) -> &[Bucket] {
        // SAFETY: alignment and size: the map is page-aligned (more than a bucket's 64
        // bytes) and holds `len` buckets' bytes. Validity: a bucket is atomics only,
        // for which the zeroed bytes of a fresh map and any bytes written through them
        // are valid. Aliasing: the pointer has the mapping's own provenance (read and
        // write), the map is never accessed other than through slices made here, and
        // every write goes through the atomics' interior mutability, so shared slices
        // on many threads at once are sound. The map lives as long as the borrow.
        unsafe { std::slice::from_raw_parts(self.map.as_mut_ptr().cast::<Bucket>(), self.len) }
    }
}

const NO_MOVE: u64 = 0xFF;

/// The largest table accepted, in MiB (1 TiB): beyond any machine this runs on, and
/// small enough that the size in bytes cannot overflow.
pub(crate) const MAX_TABLE_MIB: usize = 1 << 20;

/// A table that cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// Zero or absurdly large.
    #[error("a transposition table of {mib} MiB is out of range (1 to {MAX_TABLE_MIB} MiB)")]
    Size {
        /// The size asked for.
        mib: usize,
    },
    /// More than the system has free.
    #[error("a transposition table of {mib} MiB is more than the {available} MiB of memory available")]
    MoreThanAvailable {
        /// The size asked for.
        mib: usize,
        /// `MemAvailable` of the system, in MiB.
        available: usize,
    },
    /// The allocator refused.
    #[error("cannot allocate a transposition table of {mib} MiB")]
    Allocation {
        /// The size asked for.
        mib: usize,
    },
}

/// The memory the system reports available (Linux `MemAvailable`), in MiB; `None`
/// where that cannot be read. Checked before allocating because an over-committed
/// table is killed by the kernel when first touched, not refused by the allocator.
fn available_memory_mib() -> Option<usize> {
    // Miri isolates the program from the file system.
    if cfg!(miri) {
        return None;
    }
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

fn pack(lower: i32, upper: i32, best: Option<Square>, depth: u8, selectivity: u8, age: u8) -> u64 {
    (lower as i8 as u8 as u64)
        | (upper as i8 as u8 as u64) << 8
        | best.map_or(NO_MOVE, |s| s.index() as u64) << 16
        | (depth as u64) << 24
        | (age as u64) << 32
        | (selectivity as u64) << 40
}

fn unpack(d: u64) -> (TtEntry, u8) {
    let best = (d >> 16) as u8;
    (
        TtEntry {
            lower: d as u8 as i8 as i32,
            upper: (d >> 8) as u8 as i8 as i32,
            best: Square::try_new(best),
            depth: (d >> 24) as u8,
            selectivity: (d >> 40) as u8,
        },
        (d >> 32) as u8,
    )
}

impl TranspositionTable {
    /// A table of `mib` MiB, or the largest power of two buckets below it.
    ///
    /// # Panics
    /// When the memory cannot be had; use [`TranspositionTable::try_new`] for sizes a
    /// user chose. Tests only: the library sizes tables through `try_new`.
    #[cfg(test)]
    pub(crate) fn new(mib: usize) -> TranspositionTable {
        TranspositionTable::try_new(mib).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A table of one bucket (four entries, each probe of the search colliding with
    /// every other): the smallest table there is, for tests that scores do not depend
    /// on what the table keeps.
    #[cfg(test)]
    pub(crate) fn one_bucket() -> TranspositionTable {
        let buckets = TableMemory::new(1).expect("one bucket");
        TranspositionTable { buckets, mask: 0, age: AtomicU8::new(0) }
    }

    /// Checks a size without allocating: 1..=[`MAX_TABLE_MIB`] MiB.
    pub(crate) fn check_size(mib: usize) -> Result<(), TableError> {
        if mib == 0 || mib > MAX_TABLE_MIB {
            return Err(TableError::Size { mib });
        }
        Ok(())
    }

    /// A table of `mib` MiB (the largest power of two buckets not above it: exactly
    /// `mib` when it is a power of two), or an error naming the size when it is larger
    /// than `MAX_TABLE_MIB`, than the memory the system reports available, or than the
    /// allocator will give.
    pub(crate) fn try_new(mib: usize) -> Result<TranspositionTable, TableError> {
        TranspositionTable::check_size(mib)?;
        let n = TranspositionTable::buckets_for(mib);
        let allocated_mib = (n * std::mem::size_of::<Bucket>()).div_ceil(1 << 20);
        if let Some(available) = available_memory_mib() {
            if allocated_mib > available {
                return Err(TableError::MoreThanAvailable { mib, available });
            }
        }
        let buckets = TableMemory::new(n).map_err(|_| TableError::Allocation { mib })?;
        Ok(TranspositionTable { buckets, mask: n as u64 - 1, age: AtomicU8::new(0) })
    }

    /// Buckets a table of `mib` MiB holds: the largest power of two that fits.
    fn buckets_for(mib: usize) -> usize {
        let n = ((mib << 20) / std::mem::size_of::<Bucket>()).max(1);
        1 << n.ilog2()
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// Size in bytes.
    pub(crate) fn size_bytes(&self) -> usize {
        self.buckets.len * std::mem::size_of::<Bucket>()
    }

    /// Entries it holds (four a bucket).
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.buckets.len * 4
    }

    /// Starts a new search: older entries become preferred victims.
    pub(crate) fn new_search(&self) {
        self.age.fetch_add(1, Relaxed);
    }

    /// Empties the table.
    pub(crate) fn clear(&mut self) {
        for bucket in self.buckets.buckets() {
            for slot in &bucket.slots {
                slot.check.store(0, Relaxed);
                slot.data.store(0, Relaxed);
            }
        }
    }

    #[inline]
    fn bucket(&self, TableKey(key): TableKey) -> &Bucket {
        // High bits pick the bucket; the check word stores the whole key.
        &self.buckets.buckets()[((key >> 20) & self.mask) as usize]
    }

    /// Starts loading `key`'s bucket into the cache, so that a probe soon after does
    /// not wait for memory: a probe is a random access into a table far larger than
    /// the cache, and most of a midgame node's own time went to waiting for it.
    #[inline]
    pub(crate) fn prefetch(&self, key: TableKey) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let bucket: *const Bucket = self.bucket(key);
            // SAFETY: a prefetch is a hint: it never faults and reads nothing the
            // program sees, and the pointer is to a bucket of the live table anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bucket.cast()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// Enhanced transposition cutoff: the bound of a child of `board` (among `moves`)
    /// whose entry, searched to `depth` at `selectivity`, already refutes `board` at
    /// `beta`, so that `board` need search nothing; `None` when no entry does.
    #[inline]
    pub(crate) fn refuting_child(
        &self,
        board: &Board,
        moves: &[OrderedMove],
        depth: u32,
        selectivity: u8,
        beta: i32,
    ) -> Option<i32> {
        moves.iter().find_map(|m| {
            let e = self.probe(TableKey::of(&board.play_flips(m.square, m.flips)))?;
            (e.answers(depth, selectivity) && -e.upper >= beta).then_some(-e.upper)
        })
    }

    /// The entry for `key`, if stored.
    #[inline]
    pub(crate) fn probe(&self, key: TableKey) -> Option<TtEntry> {
        for slot in &self.bucket(key).slots {
            let data = slot.data.load(Relaxed);
            if slot.check.load(Relaxed) ^ data == key.0 && data != 0 {
                return Some(unpack(data).0);
            }
        }
        None
    }

    /// Stores the result of a search of `key` to `depth` at `selectivity` (tenths, 0:
    /// full width) within (`alpha`, `beta`) that returned `score` with best move `best`.
    /// An entry that answers more searches (deeper, or as deep and wider) is kept.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn store(
        &self,
        key: TableKey,
        depth: u8,
        selectivity: u8,
        alpha: i32,
        beta: i32,
        score: i32,
        best: Option<Square>,
    ) {
        let age = self.age.load(Relaxed);
        let (mut lower, mut upper) = (-64, 64);
        if score > alpha {
            lower = score;
        }
        if score < beta {
            upper = score;
        }
        let bucket = self.bucket(key);
        let TableKey(key) = key;
        let mut victim = &bucket.slots[0];
        let mut victim_worth = i32::MAX;
        for slot in &bucket.slots {
            let data = slot.data.load(Relaxed);
            let check = slot.check.load(Relaxed);
            if check ^ data == key && data != 0 {
                let (old, _) = unpack(data);
                if old.covers(depth, selectivity) && (old.depth > depth || old.selectivity != selectivity) {
                    return; // keep the result that answers more
                }
                if old.depth == depth && old.selectivity == selectivity {
                    lower = lower.max(old.lower);
                    upper = upper.min(old.upper);
                    if lower > upper {
                        // Inconsistent (a different search path): trust the new bounds.
                        (lower, upper) =
                            (if score > alpha { score } else { -64 }, if score < beta { score } else { 64 });
                    }
                }
                // A search that failed low searched every move and refuted none: the
                // move that scored highest is a poor guess next to a move that once
                // refuted the position or proved its value, so it replaces none (FFO
                // #20–39 on one thread: 104.1 M nodes keeping the last search's move
                // whatever its result, 98.4 M so; 98.6 M storing no move for a fail low
                // at all).
                let best = if score <= alpha { old.best.or(best) } else { best.or(old.best) };
                let d = pack(lower, upper, best, depth, selectivity, age);
                slot.data.store(d, Relaxed);
                slot.check.store(key ^ d, Relaxed);
                return;
            }
            let (old, old_age) = unpack(data);
            // Worth keeping: depth, minus a large penalty for entries of past searches.
            let worth = if data == 0 { i32::MIN } else { old.depth as i32 - if old_age != age { 256 } else { 0 } };
            if worth < victim_worth {
                victim_worth = worth;
                victim = slot;
            }
        }
        let d = pack(lower, upper, best, depth, selectivity, age);
        victim.data.store(d, Relaxed);
        victim.check.store(key ^ d, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct boards (random games' positions and the same boards with the sides
    /// exchanged) get distinct keys: a collision among 177,462 boards would be a flaw of
    /// the hash, not chance (about one in 10^9 for 64 random bits). And their buckets
    /// spread as random ones would: about 10.8 keys a bucket, Poisson-like, where a
    /// random index leaves about 0.3 of 16,384 buckets empty and none above 33 keys.
    #[test]
    fn distinct_boards_get_distinct_table_keys() {
        let boards: std::collections::HashSet<Board> =
            crate::testutil::random_games(48, 1600).into_iter().flat_map(|b| [b, b.pass()]).collect();
        assert!(boards.len() > 150_000, "{} boards", boards.len());
        let keys: std::collections::HashSet<TableKey> = boards.iter().map(TableKey::of).collect();
        assert_eq!(keys.len(), boards.len());
        let tt = TranspositionTable::new(1);
        let mut load = std::collections::HashMap::new();
        for key in &keys {
            *load.entry(std::ptr::from_ref(tt.bucket(*key))).or_insert(0u32) += 1;
        }
        let empty = (1 << 14) - load.len();
        let fullest = load.values().max().copied().unwrap_or(0);
        assert!(empty <= 8 && fullest <= 33, "{empty} buckets empty, the fullest holds {fullest}");
    }

    #[test]
    fn store_probe_and_tighten() {
        let tt = TranspositionTable::new(1);
        assert_eq!(tt.size_bytes(), 1 << 20);
        let key = TableKey(0x1234_5678_9abc_def0);
        assert_eq!(tt.probe(key), None);
        let sq = Square::new(19);
        tt.store(key, 10, 0, -5, 5, 3, Some(sq));
        assert_eq!(tt.probe(key), Some(TtEntry { lower: 3, upper: 3, best: Some(sq), depth: 10, selectivity: 0 }));
        // Fail high then fail low at the same depth: bounds intersect.
        let k2 = TableKey(key.0 ^ 0xFFFF);
        tt.store(k2, 8, 0, 0, 1, 4, None);
        tt.store(k2, 8, 0, 10, 11, 9, Some(sq));
        assert_eq!(tt.probe(k2), Some(TtEntry { lower: 4, upper: 9, best: Some(sq), depth: 8, selectivity: 0 }));
        // A shallower result does not overwrite a deeper one.
        tt.store(k2, 2, 0, -64, 64, -20, None);
        assert_eq!(tt.probe(k2).unwrap().depth, 8);
        // Negative scores survive packing.
        tt.store(TableKey(key.0 ^ 1), 3, 0, -64, 64, -64, None);
        assert_eq!(tt.probe(TableKey(key.0 ^ 1)).unwrap().lower, -64);
    }

    #[test]
    fn a_selective_entry_never_answers_a_wider_search() {
        let tt = TranspositionTable::new(1);
        let key = TableKey(0x0bad_cafe_0000_1234);
        tt.store(key, 12, 15, -64, 64, 7, None);
        let e = tt.probe(key).unwrap();
        assert_eq!(e.selectivity, 15);
        assert!(e.answers(12, 15) && e.answers(10, 11), "a search at most as selective");
        assert!(!e.answers(12, 0), "a full-width search");
        assert!(!e.answers(12, 20), "a wider selective search");
        assert!(!e.answers(13, 15), "a deeper search");
        // A full-width result of the same depth replaces it and answers everything.
        tt.store(key, 12, 0, -64, 64, 5, None);
        let e = tt.probe(key).unwrap();
        assert_eq!((e.lower, e.selectivity), (5, 0));
        assert!(e.answers(12, 0) && e.answers(12, 15));
        // A selective result of the same depth does not replace the full-width one.
        tt.store(key, 12, 15, -64, 64, 9, None);
        assert_eq!(tt.probe(key).unwrap().lower, 5);
    }

    /// Threads prefetching, storing and probing one small table at once, then clearing
    /// it: what Miri checks for the table's `unsafe` (`cargo +nightly miri test --lib
    /// tt::`).
    #[test]
    fn threads_store_and_probe_one_table_at_once() {
        let mut tt = TranspositionTable::new(1);
        let keys = |t: u64| (0..64u64).map(move |i| TableKey(mix64(t << 32 | i)));
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let tt = &tt;
                s.spawn(move || {
                    for (i, key) in keys(t).enumerate() {
                        tt.prefetch(key);
                        tt.store(key, 4, 0, -64, 64, i as i32 % 64, None);
                        // Another thread may have replaced it; a hit is the entry stored.
                        if let Some(e) = tt.probe(key) {
                            assert_eq!((e.depth, e.lower), (4, i as i32 % 64));
                        }
                    }
                });
            }
        });
        let found = (0..3).flat_map(keys).filter(|&k| tt.probe(k).is_some()).count();
        assert!(found > 150, "{found} of 192 entries kept");
        tt.clear();
        assert_eq!((0..3).flat_map(keys).filter(|&k| tt.probe(k).is_some()).count(), 0);
    }

    #[test]
    fn a_table_holds_the_size_asked_for() {
        for (mib, buckets) in [(1, 1 << 14), (64, 1 << 20), (100, 1 << 20), (128, 1 << 21)] {
            let tt = TranspositionTable::new(mib);
            assert_eq!(tt.entries(), buckets * 4, "{mib} MiB");
            assert!(tt.size_bytes() <= mib << 20);
        }
        assert_eq!(TranspositionTable::new(64).size_bytes(), 64 << 20);
        assert!(matches!(TranspositionTable::try_new(0), Err(TableError::Size { mib: 0 })));
    }
}
