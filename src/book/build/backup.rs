//! The one back-up of book values. Every book thorbook writes — a build, a shard
//! assembly, a merge, a growth round, an import — gets its values here, by one rule
//! over the positions in key order:
//!
//! - a position's value is the best of its leaf's score (when a move leaves the book,
//!   or the final score of a finished game) and minus the value of each of its book
//!   children;
//! - the boards come from a board provider: a walk from the start position (a
//!   thorbook book stores keys, not boards), or the boards a growth or an import
//!   already knows; every position reached from one of them is valued, depth first,
//!   each once;
//! - a position no walk reaches keeps the value it has (a build's assembly drops it
//!   instead, see [`Reached`]).
//!
//! The arrays are compact — a key, four bytes of leaf and a value byte a position,
//! two bits, and a key table of 4 bytes a bucket — so that books of tens of millions
//! of positions back up without their records in memory.

use std::sync::atomic::{AtomicI8, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::board::Board;
use crate::book::format::{find_key, stored_score, BackUpRule, LeafLevel, LeafMove, Record};
use crate::search::MAX_MOVES;

/// What the back-up reads of a position's leaf: its move, score and how it was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LeafInput {
    /// The move leaving the book (or none).
    pub(crate) mv: LeafMove,
    /// Its score for the side to move (the final score of a finished game).
    pub(crate) score: i8,
    /// Depth of its search.
    pub(crate) depth: u8,
    /// Its selectivity, tenths of a standard deviation (0: full width).
    pub(crate) selectivity: u8,
    /// Solved to the end.
    pub(crate) exact: bool,
}

impl LeafInput {
    /// The leaf of a record.
    pub(crate) fn of(record: &Record) -> LeafInput {
        LeafInput {
            mv: record.leaf_move,
            score: record.leaf_score,
            depth: record.leaf_depth,
            selectivity: record.leaf_selectivity,
            exact: record.leaf_exact(),
        }
    }

    /// The score the leaf contributes at `board`: its score if a move leaves the book,
    /// the final score if the game is over, nothing if every move stays in the book.
    pub(crate) fn contribution(&self, board: &Board) -> Option<i32> {
        (!self.mv.is_none() || board.is_game_over()).then_some(i32::from(self.score))
    }

    /// The standard deviation of the score it contributes ([`leaf_sd`]); a finished
    /// game's score (no leaf move) has none.
    fn sd(&self) -> f64 {
        if self.mv.is_none() {
            return 0.0;
        }
        leaf_sd(LeafLevel { depth: self.depth, selectivity_tenths: self.selectivity, exact: self.exact })
    }
}

/// The standard deviation, in discs, of a leaf's score around the true value, by its
/// level: measured (`book audit` of held-out positions against deeper searches, and
/// exact scores near the end) for the bundled evaluation; exact leaves have none.
pub(crate) fn leaf_sd(level: LeafLevel) -> f64 {
    if level.exact {
        return 0.0;
    }
    // Depth 14 at 1.5σ errs by about 2 discs in the midgame, depth 18 at 2σ by 1.5.
    (3.4 - 0.1 * f64::from(level.depth)).clamp(1.0, 4.0)
}

/// An option's estimate: a mean and a standard deviation, discs.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Estimate {
    mean: f64,
    sd: f64,
}

/// Clark's moments of max(X, Y) for independent normal X, Y.
fn clark_max(x: Estimate, y: Estimate) -> Estimate {
    let theta = (x.sd * x.sd + y.sd * y.sd).sqrt();
    if theta < 1e-9 {
        return if x.mean >= y.mean { x } else { y };
    }
    let a = (x.mean - y.mean) / theta;
    let (cdf, cdf_neg, pdf) =
        (normal_cdf(a), normal_cdf(-a), (-a * a / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt());
    let mean = x.mean * cdf + y.mean * cdf_neg + theta * pdf;
    let second = (x.mean * x.mean + x.sd * x.sd) * cdf
        + (y.mean * y.mean + y.sd * y.sd) * cdf_neg
        + (x.mean + y.mean) * theta * pdf;
    Estimate { mean, sd: (second - mean * mean).max(0.0).sqrt() }
}

/// The standard normal distribution function (Abramowitz and Stegun 7.1.26 through
/// erf: absolute error below 1.5e-7).
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// The value of a position from its options under `rule`; `None` without options.
fn combine(rule: BackUpRule, options: &mut [Estimate]) -> Option<Estimate> {
    let best = options.iter().map(|o| o.mean).fold(f64::NEG_INFINITY, f64::max);
    if options.is_empty() {
        return None;
    }
    match rule {
        BackUpRule::Negamax => Some(Estimate { mean: best, sd: 0.0 }),
        BackUpRule::Corrected => {
            options.sort_by(|a, b| b.mean.total_cmp(&a.mean).then(a.sd.total_cmp(&b.sd)));
            let e = options[1..].iter().fold(options[0], |acc, &o| clark_max(acc, o));
            Some(Estimate { mean: (2.0 * best - e.mean).clamp(-64.0, 64.0), sd: e.sd })
        }
    }
}

/// Which positions a back-up reached, and their values. Atomics, so that several
/// threads can walk at once (see [`Values::compute`]); each position is valued once.
pub(crate) struct Values {
    values: Vec<AtomicI8>,
    /// The corrected rule's estimates (mean i16, deviation u16 << 16) in 1/64 disc;
    /// empty for negamax.
    estimates: Vec<AtomicU32>,
    rule: BackUpRule,
    /// Bit per position: reached from a root (and claimed by the walk that values it).
    reached: Vec<AtomicU64>,
    /// Bit per position: has a value (a leaf or a child with one).
    valued: Vec<AtomicU64>,
    /// Bit per position: its walk is finished (its value, if any, is in place).
    done: Vec<AtomicU64>,
}

/// What becomes of positions no walk reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reached {
    /// They stay, with the values they have (a merge, a growth, an import: a book may
    /// hold positions whose boards are unknown).
    KeepOthers,
    /// They are dropped (a build: play cannot find them through the book, and formats
    /// that store boards could not carry them).
    DropOthers,
}

fn bit(bits: &[AtomicU64], i: usize) -> bool {
    bits[i / 64].load(Ordering::Acquire) >> (i % 64) & 1 == 1
}

/// Sets bit `i`; whether it was set already.
fn set(bits: &[AtomicU64], i: usize) -> bool {
    let mask = 1 << (i % 64);
    bits[i / 64].fetch_or(mask, Ordering::AcqRel) & mask != 0
}

fn bits_for(n: usize) -> Vec<AtomicU64> {
    (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect()
}

/// Plies below the roots where a walk on several threads splits: the distinct book
/// positions there are shared out, each valued (with everything below it) by one
/// thread, then the positions above are valued from them.
const SPLIT_PLIES: usize = 6;

const UNITS: f64 = 64.0;

/// `x` in units of `1/scale`, rounded: values stay within ±64 discs and deviations
/// within a few discs, so the conversion is exact (and saturates if it were not).
#[allow(clippy::cast_possible_truncation)]
fn units(x: f64, scale: f64) -> i32 {
    (x * scale).round() as i32
}

impl Values {
    /// Backs up the values of the positions with sorted, distinct `keys` and their
    /// `leaves` (`leaves[i]` the leaf of `keys[i]`) by `rule`, walking from every board
    /// of `roots` that is a book position (canonical or not), on `threads` threads.
    ///
    /// A position's value depends only on the positions below it, so the result is the
    /// same for any thread count. With several threads the book positions
    /// [`SPLIT_PLIES`] below the roots are shared out; a thread that reaches a position
    /// another is valuing waits for it, which cannot deadlock: the game graph has no
    /// cycles, so two walks never wait for each other.
    pub(crate) fn compute(
        keys: &[u64],
        leaves: &[LeafInput],
        roots: impl IntoIterator<Item = Board>,
        rule: BackUpRule,
        threads: usize,
    ) -> Values {
        debug_assert_eq!(keys.len(), leaves.len());
        let n = keys.len();
        let estimates =
            if rule == BackUpRule::Negamax { Vec::new() } else { (0..n).map(|_| AtomicU32::new(0)).collect() };
        let v = Values {
            values: (0..n).map(|_| AtomicI8::new(0)).collect(),
            estimates,
            rule,
            reached: bits_for(n),
            valued: bits_for(n),
            done: bits_for(n),
        };
        let index = KeyIndex::new(keys);
        let roots: Vec<(usize, Board)> = roots
            .into_iter()
            .filter_map(|root| {
                let canon = root.canonical().0;
                index.find(canon.key()).map(|i| (i, canon))
            })
            .collect();
        if threads > 1 {
            let split = split_positions(&index, &roots, SPLIT_PLIES);
            let next = AtomicUsize::new(0);
            std::thread::scope(|scope| {
                for _ in 0..threads {
                    scope.spawn(|| {
                        while let Some(&(i, board)) = split.get(next.fetch_add(1, Ordering::Relaxed)) {
                            v.visit(&index, leaves, i, &board);
                        }
                    });
                }
            });
        }
        for (i, canon) in roots {
            v.visit(&index, leaves, i, &canon);
        }
        v
    }

    /// Whether position `i` was reached from a root.
    pub(crate) fn reached(&self, i: usize) -> bool {
        bit(&self.reached, i)
    }

    /// The backed-up value of position `i`; `None` when it was not reached, or has
    /// neither a leaf nor a valued child (a book cut short: it keeps its value).
    pub(crate) fn value(&self, i: usize) -> Option<i8> {
        bit(&self.valued, i).then(|| self.values[i].load(Ordering::Relaxed))
    }

    fn estimate(&self, i: usize) -> Option<Estimate> {
        if !bit(&self.valued, i) {
            return None;
        }
        Some(match self.estimates.get(i) {
            Some(e) => {
                let e = e.load(Ordering::Relaxed);
                let [m0, m1, s0, s1] = e.to_le_bytes();
                let (mean, sd) = (i16::from_le_bytes([m0, m1]), u16::from_le_bytes([s0, s1]));
                Estimate { mean: f64::from(mean) / UNITS, sd: f64::from(sd) / UNITS }
            }
            None => Estimate { mean: f64::from(self.values[i].load(Ordering::Relaxed)), sd: 0.0 },
        })
    }

    /// The estimate of position `i` with canonical board `board`: depth first, each
    /// position once (the game graph has no cycles; the depth is at most 60 moves and
    /// the passes between them).
    fn visit(&self, keys: &KeyIndex, leaves: &[LeafInput], i: usize, board: &Board) -> Option<Estimate> {
        if bit(&self.done, i) {
            return self.estimate(i);
        }
        if set(&self.reached, i) {
            // Another thread is valuing it (this one cannot be: no cycles).
            while !bit(&self.done, i) {
                std::thread::yield_now();
            }
            return self.estimate(i);
        }
        // The leaf and every legal move: at most one more than the most moves a position has.
        let mut options = [Estimate { mean: 0.0, sd: 0.0 }; MAX_MOVES + 1];
        let mut n = 0;
        if let Some(score) = leaves[i].contribution(board) {
            options[n] = Estimate { mean: f64::from(score), sd: leaves[i].sd() };
            n += 1;
        }
        for (_, child) in board.successors() {
            let canon = child.canonical().0;
            if let Some(j) = keys.find(canon.key()) {
                if let Some(c) = self.visit(keys, leaves, j, &canon) {
                    if let Some(slot) = options.get_mut(n) {
                        *slot = Estimate { mean: -c.mean, sd: c.sd };
                        n += 1;
                    }
                }
            }
        }
        if let Some(e) = combine(self.rule, &mut options[..n]) {
            self.values[i].store(stored_score(units(e.mean.round(), 1.0)), Ordering::Relaxed);
            if let Some(slot) = self.estimates.get(i) {
                let mean = i16::try_from(units(e.mean, UNITS)).unwrap_or_default();
                let sd = u16::try_from(units(e.sd, UNITS).clamp(0, i32::from(u16::MAX))).unwrap_or(u16::MAX);
                let [m0, m1] = mean.to_le_bytes();
                let [s0, s1] = sd.to_le_bytes();
                slot.store(u32::from_le_bytes([m0, m1, s0, s1]), Ordering::Relaxed);
            }
            set(&self.valued, i);
        }
        // Release: whoever sees it done sees the value.
        set(&self.done, i);
        self.estimate(i)
    }
}

/// The distinct book positions `plies` below `roots` (breadth first, in the order
/// found), where a walk on several threads splits.
fn split_positions(keys: &KeyIndex, roots: &[(usize, Board)], plies: usize) -> Vec<(usize, Board)> {
    let mut level: Vec<(usize, Board)> = roots.to_vec();
    for _ in 0..plies {
        let mut seen = std::collections::HashSet::new();
        let mut next = Vec::new();
        for (_, board) in &level {
            for (_, child) in board.successors() {
                let canon = child.canonical().0;
                if let Some(j) = keys.find(canon.key()) {
                    if seen.insert(j) {
                        next.push((j, canon));
                    }
                }
            }
        }
        level = next;
    }
    level
}

/// Backs up the values of `records` (in key order) in place by `rule`, walking from
/// `roots`, and applies `others` to the positions no walk reaches.
pub(crate) fn back_up_records(
    records: &mut Vec<Record>,
    roots: impl IntoIterator<Item = Board>,
    rule: BackUpRule,
    others: Reached,
) {
    let keys: Vec<u64> = records.iter().map(|r| r.key).collect();
    let leaves: Vec<LeafInput> = records.iter().map(LeafInput::of).collect();
    let values = Values::compute(&keys, &leaves, roots, rule, 1);
    for (i, r) in records.iter_mut().enumerate() {
        if let Some(v) = values.value(i) {
            r.value = v;
        }
    }
    if others == Reached::DropOthers {
        let mut i = 0;
        records.retain(|_| {
            i += 1;
            values.reached(i - 1)
        });
    }
}

/// Sorted keys with a table of where each run of leading bits starts: a lookup reads
/// one table entry and, on average, under two keys — two cache misses where a search
/// of 50 million keys takes five or more (the back-up makes about ten lookups a
/// position).
struct KeyIndex<'a> {
    keys: &'a [u64],
    /// `starts[b]`: the first key whose top `bits` bits are `b` or more.
    starts: Vec<u32>,
    bits: u32,
}

impl<'a> KeyIndex<'a> {
    fn new(keys: &'a [u64]) -> KeyIndex<'a> {
        // About one key a bucket, and indices that fit in 32 bits (else no table).
        let bits = if u32::try_from(keys.len()).is_ok() { keys.len().max(2).ilog2().min(32) } else { 0 };
        let mut starts = Vec::new();
        if bits > 0 {
            starts = Vec::with_capacity((1usize << bits) + 1);
            let mut i = 0usize;
            for bucket in 0..(1u64 << bits) {
                while i < keys.len() && keys[i] >> (64 - bits) < bucket {
                    i += 1;
                }
                starts.push(u32::try_from(i).expect("fewer than 2^32 keys"));
            }
            starts.push(u32::try_from(keys.len()).expect("fewer than 2^32 keys"));
        }
        KeyIndex { keys, starts, bits }
    }

    fn find(&self, key: u64) -> Option<usize> {
        if self.bits == 0 {
            return find_key(self.keys.len(), |i| self.keys[i], key);
        }
        let bucket = usize::try_from(key >> (64 - self.bits)).expect("below 2^32");
        let (lo, hi) = (self.starts[bucket] as usize, self.starts[bucket + 1] as usize);
        self.keys[lo..hi].iter().position(|&k| k == key).map(|j| lo + j)
    }
}

/// `book` with its values backed up again by `rule` (walking from every board the book
/// lets play find, as a growth does), the rule recorded in its header.
pub fn revalue<D: AsRef<[u8]>>(
    book: &crate::book::Book<D>,
    rule: BackUpRule,
) -> Result<Vec<u8>, crate::book::BookError> {
    let boards = crate::book::probe::known_boards(book);
    let mut records: Vec<Record> = book.records().collect();
    back_up_records(&mut records, boards.into_values(), rule, Reached::KeepOthers);
    crate::book::format::Writer::write_all(&records, crate::book::BuildParams { back_up: rule, ..book.params() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk on several threads values and reaches exactly what one thread does,
    /// under both rules, on the bundled book (88,066 positions, transpositions and
    /// passes included); and what it computes is the book's own values.
    #[test]
    fn a_walk_on_several_threads_equals_the_walk_on_one() {
        let book = crate::book::bundled().unwrap();
        let records: Vec<Record> = book.records().collect();
        let keys: Vec<u64> = records.iter().map(|r| r.key).collect();
        let leaves: Vec<LeafInput> = records.iter().map(LeafInput::of).collect();
        for rule in [BackUpRule::Negamax, BackUpRule::Corrected] {
            let one = Values::compute(&keys, &leaves, [Board::START], rule, 1);
            let reached = (0..keys.len()).filter(|&i| one.reached(i)).count();
            assert!(reached > 80_000, "{reached}");
            for threads in [2, 3, 8] {
                let many = Values::compute(&keys, &leaves, [Board::START], rule, threads);
                for i in 0..keys.len() {
                    assert_eq!(
                        (one.reached(i), one.value(i)),
                        (many.reached(i), many.value(i)),
                        "{rule:?}, {threads} threads, position {i}"
                    );
                    assert_eq!(one.estimate(i).map(|e| (e.mean, e.sd)), many.estimate(i).map(|e| (e.mean, e.sd)));
                }
            }
            if rule == book.params().back_up {
                assert!((0..keys.len()).all(|i| one.value(i).is_none_or(|v| v == records[i].value)));
            }
        }
    }

    fn est(mean: f64, sd: f64) -> Estimate {
        Estimate { mean, sd }
    }

    #[test]
    fn clarks_maximum_of_two_normals_has_the_known_moments() {
        // max of two independent standard normals: mean 1/sqrt(pi), variance 1 - 1/pi.
        let m = clark_max(est(0.0, 1.0), est(0.0, 1.0));
        assert!((m.mean - 1.0 / std::f64::consts::PI.sqrt()).abs() < 1e-6, "{m:?}");
        assert!((m.sd * m.sd - (1.0 - 1.0 / std::f64::consts::PI)).abs() < 1e-6, "{m:?}");
        // Far apart, the larger alone; without deviations, the larger exactly.
        let far = clark_max(est(10.0, 1.0), est(-10.0, 1.0));
        assert!((far.mean - 10.0).abs() < 1e-9 && (far.sd - 1.0).abs() < 1e-6);
        assert_eq!(clark_max(est(3.0, 0.0), est(5.0, 0.0)), est(5.0, 0.0));
        for (x, want) in [(0.0, 0.5), (1.0, 0.841_344_746), (-1.96, 0.024_997_895), (3.0, 0.998_650_102)] {
            assert!((normal_cdf(x) - want).abs() < 2e-7, "Φ({x})");
        }
    }

    #[test]
    fn the_corrected_rule_takes_the_winners_curse_off_near_ties_only() {
        let value = |options: &[Estimate]| combine(BackUpRule::Corrected, &mut options.to_vec()).unwrap();
        // One option, or exact ones: the best option, as negamax.
        assert_eq!(value(&[est(4.0, 2.0)]).mean, 4.0);
        assert_eq!(value(&[est(4.0, 0.0), est(-2.0, 0.0), est(1.0, 0.0)]).mean, 4.0);
        // Two equal noisy options: the best less the expected excess of their maximum.
        let tie = value(&[est(0.0, 2.0), est(0.0, 2.0)]);
        let excess = 2.0 * std::f64::consts::SQRT_2 / (2.0 * std::f64::consts::PI).sqrt();
        assert!((tie.mean + excess).abs() < 1e-6, "{tie:?}");
        // A clear best option is hardly touched; more near-equal options, more off.
        assert!(value(&[est(6.0, 2.0), est(-6.0, 2.0)]).mean > 5.99);
        let three = value(&[est(0.0, 2.0), est(0.0, 2.0), est(0.0, 2.0)]).mean;
        assert!(three < tie.mean, "{three} against {}", tie.mean);
        assert_eq!(combine(BackUpRule::Negamax, &mut [est(0.0, 2.0), est(1.0, 2.0)]).unwrap().mean, 1.0);
        assert!(combine(BackUpRule::Corrected, &mut []).is_none());
    }
}
