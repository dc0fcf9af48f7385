//! What the trained evaluation reads from a position, and where each reading's weight
//! sits in a phase's weight table.
//!
//! Two kinds of features:
//! - **patterns**: a list of squares in a fixed digit order; a position gives each
//!   square a digit (0 empty, 1 the side to move's disc, 2 the other's) and the
//!   pattern's index is `Σ digit_j · 3^j`. Each pattern is read at every distinct
//!   image of its squares under the 8 board symmetries (its *instances*), and all
//!   instances share one weight table. A pattern that maps onto itself under some
//!   symmetry (an edge reversed, a diagonal read backwards) has equal weights for the
//!   two readings: `FeatureSet::canonical_slot` folds them into one trained weight,
//!   so the evaluation of a position and of its 8 images are identical.
//! - **counts** (`Count`): small numbers about the whole position — both sides'
//!   mobility and potential mobility, the parity of the empties and of the empty
//!   quadrants — each looked up in a table of its own (one weight per pair of values),
//!   so the fit learns any shape of effect, interactions included. Counts are the same
//!   in all 8 images by construction.
//!
//! Which features are here was measured: each candidate was kept only for the held-out
//! error it removed (`thorbook train --without NAME` retrains without one). Stable edge
//! discs, the disc count and two more 10-square corner patterns (a corner's triangle,
//! two edges from a corner) removed none; the triangle and a diagonal cross, tried
//! again on backward labels, fitted the training positions better and the held-out ones
//! no better (0.03–0.05 disc with a stronger ridge), and on the bundled weights' data
//! held out 0.04–0.07 disc better and measured nothing in play (−17 Elo, −48 .. +14),
//! at 11–13% more time per search node. Parity removed none with one phase per ply but
//! is what tells the two plies of a phase apart with 30 phases, which measured as well
//! as 60 at half the size; docs/research/2026-11-23-evaluation-targets-and-the-parity-bias.md gives the figures.
//!
//! Pattern indices come from the bitboards directly: each instance gathers its
//! squares' bits with a parallel bit extract (one `pext` per side on CPUs with BMI2)
//! and a small per-instance table turns the gathered bits into the ternary index in
//! the pattern's digit order. The search does that once, at its root, and then keeps
//! [`InstanceIndices`] up to date move by move (`FeatureSet::after_move`): a move
//! changes only the digits of the squares it places and flips, and each square's
//! digit weights in every instance are one precomputed row of `LANES` small
//! integers, so the update is a few whole-row additions the compiler vectorises.

#[cfg(any(feature = "cli", feature = "testing", test))]
use std::ops::Range;
use std::sync::OnceLock;

use crate::board::{adjacent_empties, legal_moves, Board};
use crate::symmetry::Transform;

/// A pattern: a name and its squares (bit indices, A1 = 0), digit 0 first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pattern {
    #[cfg_attr(not(any(feature = "cli", feature = "testing", test)), allow(dead_code))]
    /// Short name for `thorbook eval --verbose` and `train --without`.
    pub name: &'static str,
    /// Squares in digit order.
    pub squares: &'static [u8],
}

/// The patterns, in the order of the weight file (changing them is a new feature set).
pub(crate) const PATTERNS: [Pattern; 12] = [
    Pattern { name: "edge+2x", squares: &[0, 1, 2, 3, 4, 5, 6, 7, 9, 14] },
    Pattern { name: "corner3x3", squares: &[0, 1, 2, 8, 9, 10, 16, 17, 18] },
    Pattern { name: "corner2x5", squares: &[0, 1, 2, 3, 4, 8, 9, 10, 11, 12] },
    Pattern { name: "row2", squares: &[8, 9, 10, 11, 12, 13, 14, 15] },
    Pattern { name: "row3", squares: &[16, 17, 18, 19, 20, 21, 22, 23] },
    Pattern { name: "row4", squares: &[24, 25, 26, 27, 28, 29, 30, 31] },
    Pattern { name: "diag8", squares: &[0, 9, 18, 27, 36, 45, 54, 63] },
    Pattern { name: "diag7", squares: &[1, 10, 19, 28, 37, 46, 55] },
    Pattern { name: "diag6", squares: &[2, 11, 20, 29, 38, 47] },
    Pattern { name: "diag5", squares: &[3, 12, 21, 30, 39] },
    Pattern { name: "diag4", squares: &[4, 13, 22, 31] },
    // A1 C1 D1 E1 F1 H1 C2 D2 E2 F2: both corners of an edge and the block between.
    Pattern { name: "edge-block", squares: &[0, 2, 3, 4, 5, 7, 10, 11, 12, 13] },
];

/// A feature counted over the whole position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Count {
    /// (legal moves of the side to move, of the other side), each capped at 31.
    Mobility,
    /// Potential mobility: (empty squares next to the other side's discs, next to the
    /// side to move's discs), each capped at 47.
    Potential,
    /// Quadrants with an odd number of empty squares (0..=4) and the parity of all
    /// empties: who gets the last move of each region.
    Parity,
}

/// The counts, in the order of the weight file.
pub(crate) const COUNTS: [Count; 3] = [Count::Mobility, Count::Potential, Count::Parity];

const MOBILITY_CAP: u32 = 32;
const POTENTIAL_CAP: u32 = 48;

impl Count {
    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// Short name for `thorbook eval --verbose` and `train --without`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Count::Mobility => "mobility",
            Count::Potential => "potential",
            Count::Parity => "parity",
        }
    }

    /// Entries in its weight table.
    pub(crate) fn size(self) -> u32 {
        match self {
            Count::Mobility => MOBILITY_CAP * MOBILITY_CAP,
            Count::Potential => POTENTIAL_CAP * POTENTIAL_CAP,
            Count::Parity => 10,
        }
    }
}

/// Number of pattern instances on the board (all symmetric images).
pub(crate) const INSTANCES: usize = 50;
#[cfg(any(feature = "cli", feature = "testing", test))]
/// Features read per position: every pattern instance, then every count.
pub(crate) const FEATURES: usize = INSTANCES + COUNTS.len();

/// The quadrants a1–d4, e1–h4, a5–d8, e5–h8.
const QUADRANTS: [u64; 4] =
    [0x0000_0000_0F0F_0F0F, 0x0000_0000_F0F0_F0F0, 0x0F0F_0F0F_0000_0000, 0xF0F0_F0F0_0000_0000];

#[cfg(any(feature = "cli", feature = "testing", test))]
/// Every feature's index for one position: `FEATURES` entries into a phase's table.
pub(crate) type Indices = [u32; FEATURES];

/// Lanes of [`InstanceIndices`]: the instances rounded up to whole vector registers
/// (the lanes past [`INSTANCES`] stay 0).
pub(crate) const LANES: usize = 64;

/// Every pattern instance's ternary index (within its pattern, without the pattern's
/// offset) read from both sides' points of view. The side not to move's reading is
/// kept so that a move — which hands the turn over — is an addition, not a re-read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct InstanceIndices {
    /// Digit 1 = the side to move's disc, 2 = the other side's.
    pub(crate) player: [u16; LANES],
    /// Digit 1 = the other side's disc, 2 = the side to move's.
    pub(crate) opponent: [u16; LANES],
}

impl Default for InstanceIndices {
    /// The indices of the empty board.
    fn default() -> Self {
        InstanceIndices { player: [0; LANES], opponent: [0; LANES] }
    }
}

/// One instance: where its squares are and how to index its weights.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Instance {
    #[cfg_attr(not(any(feature = "cli", feature = "testing", test)), allow(dead_code))]
    /// Which pattern (`PATTERNS` index).
    pub pattern: u8,
    /// The instance's squares as a bitboard.
    pub mask: u64,
    /// Offset of this pattern's weights in a phase's full table.
    pub offset: u32,
    /// Offset of this instance's bits → ternary table in [`FeatureSet::ternary`].
    table: u32,
}

/// The feature set's derived tables, built once.
#[derive(Debug)]
pub(crate) struct FeatureSet {
    /// The pattern instances, grouped by pattern.
    pub instances: [Instance; INSTANCES],
    /// Gathered bits → ternary index, per instance (digit 1 = set bit).
    ternary: Vec<u16>,
    /// Full index → trained weight slot; two readings of a self-symmetric pattern
    /// share a slot.
    slots: Vec<u32>,
    /// Number of distinct trained weights (slots), the bias excluded.
    pub slot_count: usize,
    /// Size of a phase's full table (Σ 3^len over patterns, then every count's size).
    pub full_len: usize,
    #[cfg_attr(not(any(feature = "cli", feature = "testing", test)), allow(dead_code))]
    /// Offset of each pattern in the full table.
    pub pattern_offsets: [u32; PATTERNS.len()],
    /// Offset of each count in the full table.
    pub count_offsets: [u32; COUNTS.len()],
    /// Square → the weight of its digit in each instance's index (0 where the
    /// instance does not read it).
    digit_weights: [[u16; LANES]; 64],
}

/// The shared tables.
pub(crate) fn feature_set() -> &'static FeatureSet {
    static SET: OnceLock<FeatureSet> = OnceLock::new();
    SET.get_or_init(FeatureSet::build)
}

/// Parallel bit extract: the bits of `x` at the set bits of `mask`, packed low. One
/// instruction where the CPU runs BMI2's `pext` fast ([`crate::cpu::fast_pext`],
/// asked at run time), else [`pext_portable`]. (The evaluation asks once per position,
/// in `FeatureSet::instance_indices`; this is the tests' reference.)
#[cfg(test)]
pub(crate) fn pext(x: u64, mask: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::fast_pext() {
        // SAFETY: fast_pext() checked at run time that the CPU has BMI2.
        return unsafe { core::arch::x86_64::_pext_u64(x, mask) };
    }
    pext_portable(x, mask)
}

/// BMI2's `pext` bit by bit, for any CPU. The tests compare it with the instruction on
/// every machine that has it.
#[inline]
pub(crate) fn pext_portable(x: u64, mask: u64) -> u64 {
    let mut m = mask;
    let mut out = 0u64;
    let mut bit = 1u64;
    while m != 0 {
        let low = m & m.wrapping_neg();
        if x & low != 0 {
            out |= bit;
        }
        bit <<= 1;
        m &= m - 1;
    }
    out
}

fn pow3(n: usize) -> usize {
    3usize.pow(n as u32)
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// A feature by name: which slots (bias excluded) its weights occupy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FeatureSlots {
    /// The feature's name.
    pub name: &'static str,
    /// Its slots.
    pub slots: Range<usize>,
}

impl FeatureSet {
    fn build() -> FeatureSet {
        let mut pattern_offsets = [0u32; PATTERNS.len()];
        let mut full_len = 0usize;
        for (i, p) in PATTERNS.iter().enumerate() {
            pattern_offsets[i] = full_len as u32;
            full_len += pow3(p.squares.len());
        }
        let mut count_offsets = [0u32; COUNTS.len()];
        for (i, c) in COUNTS.iter().enumerate() {
            count_offsets[i] = full_len as u32;
            full_len += c.size() as usize;
        }
        let mut instances = Vec::with_capacity(INSTANCES);
        let mut ternary = Vec::new();
        for (pi, p) in PATTERNS.iter().enumerate() {
            let mut seen = Vec::new();
            for t in Transform::ALL {
                let squares: Vec<u8> = p.squares.iter().map(|&s| t.bits(1u64 << s).trailing_zeros() as u8).collect();
                let mask = squares.iter().fold(0u64, |m, &s| m | 1u64 << s);
                if seen.contains(&mask) {
                    continue;
                }
                seen.push(mask);
                // The k-th lowest set bit of `mask` is which digit of the pattern?
                let mut by_bit: Vec<(u8, usize)> = squares.iter().enumerate().map(|(d, &s)| (s, d)).collect();
                by_bit.sort_unstable();
                let table = ternary.len() as u32;
                for gathered in 0..1usize << squares.len() {
                    let mut idx = 0usize;
                    for (k, &(_, digit)) in by_bit.iter().enumerate() {
                        if gathered >> k & 1 != 0 {
                            idx += pow3(digit);
                        }
                    }
                    ternary.push(idx as u16);
                }
                instances.push(Instance { pattern: pi as u8, mask, offset: pattern_offsets[pi], table });
            }
        }
        let instances: [Instance; INSTANCES] =
            instances.try_into().unwrap_or_else(|v: Vec<Instance>| panic!("{} pattern instances", v.len()));

        // Slots: an index and its images under the pattern's self-symmetries share one;
        // every count entry is a slot of its own.
        let mut slots = vec![0u32; full_len];
        let mut slot_count = 0u32;
        for (pi, p) in PATTERNS.iter().enumerate() {
            let perms = self_symmetries(p.squares);
            let base = pattern_offsets[pi] as usize;
            for idx in 0..pow3(p.squares.len()) {
                let canonical = perms.iter().map(|perm| permute_index(idx, perm)).min().unwrap_or(idx).min(idx);
                if canonical == idx {
                    slots[base + idx] = slot_count;
                    slot_count += 1;
                } else {
                    slots[base + idx] = slots[base + canonical];
                }
            }
        }
        for slot in &mut slots[count_offsets[0] as usize..] {
            *slot = slot_count;
            slot_count += 1;
        }
        // A square's digit weight in an instance is the ternary value of the gathered
        // bit it lands on.
        let mut digit_weights = [[0u16; LANES]; 64];
        for (lane, inst) in instances.iter().enumerate() {
            for (rank, sq) in crate::board::Squares(inst.mask).enumerate() {
                digit_weights[sq.index()][lane] = ternary[inst.table as usize + (1 << rank)];
            }
        }
        FeatureSet {
            instances,
            ternary,
            slots,
            slot_count: slot_count as usize,
            full_len,
            pattern_offsets,
            count_offsets,
            digit_weights,
        }
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The full-table indices of every feature of a position: the pattern instances,
    /// then the counts.
    #[inline]
    pub(crate) fn indices(&self, board: &Board, out: &mut Indices) {
        let read = self.instance_indices(board);
        for ((slot, inst), &index) in out.iter_mut().zip(&self.instances).zip(&read.player) {
            *slot = inst.offset + index as u32;
        }
        let counts: &mut [u32; COUNTS.len()] =
            (&mut out[INSTANCES..]).try_into().expect("the counts follow the instances");
        self.count_indices(board, counts);
    }

    crate::cpu::dispatched! {
        /// Every instance's index read from the bitboards.
        pub(crate) fn instance_indices(&self, board: &Board) -> InstanceIndices
            = instance_indices_body / instance_indices_v3, instance_indices_v4, instance_indices_base;
    }

    #[inline(always)]
    pub(super) fn instance_indices_body(&self, board: &Board) -> InstanceIndices {
        // One check of the CPU for the 100 extracts, not one each.
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::fast_pext() {
            // SAFETY: fast_pext() checked at run time that the CPU has BMI2.
            return self.instance_indices_with(board, |x, m| unsafe { core::arch::x86_64::_pext_u64(x, m) });
        }
        self.instance_indices_with(board, pext_portable)
    }

    /// [`FeatureSet::instance_indices`] with a given bit extract (the tests pass
    /// [`pext_portable`]).
    #[inline(always)]
    pub(crate) fn instance_indices_with(&self, board: &Board, extract: impl Fn(u64, u64) -> u64) -> InstanceIndices {
        let (p, o) = (board.player, board.opponent);
        let mut out = InstanceIndices::default();
        for (lane, inst) in self.instances.iter().enumerate() {
            let t = &self.ternary[inst.table as usize..];
            let a = t[extract(p, inst.mask) as usize];
            let b = t[extract(o, inst.mask) as usize];
            out.player[lane] = a + 2 * b;
            out.opponent[lane] = b + 2 * a;
        }
        out
    }

    crate::cpu::dispatched! {
        /// The indices after the side to move places a disc on `square` and flips
        /// `flips`: read from the other side, who moves next. The x86-64-v3 copy adds
        /// 16 lanes an instruction where the baseline adds 8.
        pub(crate) fn after_move(&self, before: &InstanceIndices, square: crate::Square, flips: u64) -> InstanceIndices
            = after_move_body / after_move_v3, after_move_v4, after_move_base;
    }

    #[inline(always)]
    fn after_move_body(&self, before: &InstanceIndices, square: crate::Square, flips: u64) -> InstanceIndices {
        // Placed: 0 → 1 for the mover, 0 → 2 for the other; flipped: 2 → 1 for the
        // mover, 1 → 2 for the other. Lanes wrap harmlessly: every result is a valid
        // index below 3^10.
        let mut flipped = [0u16; LANES];
        for sq in crate::board::Squares(flips) {
            let w = &self.digit_weights[sq.index()];
            for (f, &d) in flipped.iter_mut().zip(w) {
                *f = f.wrapping_add(d);
            }
        }
        let placed = &self.digit_weights[square.index()];
        let mut out = InstanceIndices::default();
        for lane in 0..LANES {
            out.player[lane] =
                before.opponent[lane].wrapping_add(placed[lane].wrapping_mul(2)).wrapping_add(flipped[lane]);
            out.opponent[lane] = before.player[lane].wrapping_add(placed[lane]).wrapping_sub(flipped[lane]);
        }
        out
    }

    /// The indices after a pass: the same reading, the other way round.
    #[inline]
    pub(crate) fn after_pass(&self, before: &InstanceIndices) -> InstanceIndices {
        InstanceIndices { player: before.opponent, opponent: before.player }
    }

    /// The full-table indices of the counts (mobility, potential mobility, parity).
    #[inline]
    pub(crate) fn count_indices(&self, board: &Board, out: &mut [u32; COUNTS.len()]) {
        let (p, o) = (board.player, board.opponent);
        let empty = !(p | o);
        let [mobility, potential, parity] = self.count_offsets;
        let mp = legal_moves(p, o).count_ones().min(MOBILITY_CAP - 1);
        let mo = legal_moves(o, p).count_ones().min(MOBILITY_CAP - 1);
        out[0] = mobility + mp * MOBILITY_CAP + mo;
        let pp = adjacent_empties(o, empty).count_ones().min(POTENTIAL_CAP - 1);
        let po = adjacent_empties(p, empty).count_ones().min(POTENTIAL_CAP - 1);
        out[1] = potential + pp * POTENTIAL_CAP + po;
        let odd = QUADRANTS.iter().map(|q| (empty & q).count_ones() & 1).sum::<u32>();
        out[2] = parity + odd + 5 * (empty.count_ones() & 1);
    }

    /// The trained weight slot of a full-table index.
    #[inline]
    pub(crate) fn canonical_slot(&self, full_index: u32) -> u32 {
        self.slots[full_index as usize]
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The name of feature `k` of [`FeatureSet::indices`] and the squares it reads
    /// (none for a count).
    pub(crate) fn describe(&self, k: usize) -> (&'static str, u64) {
        match self.instances.get(k) {
            Some(inst) => (PATTERNS[inst.pattern as usize].name, inst.mask),
            None => (COUNTS[k - INSTANCES].name(), 0),
        }
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// Every feature's name and the slots it owns, patterns first.
    pub(crate) fn feature_slots(&self) -> Vec<FeatureSlots> {
        let ends: Vec<u32> = self
            .pattern_offsets
            .iter()
            .chain(&self.count_offsets)
            .skip(1)
            .copied()
            .chain([self.full_len as u32])
            .collect();
        let names = PATTERNS.iter().map(|p| p.name).chain(COUNTS.iter().map(|c| c.name()));
        self.pattern_offsets
            .iter()
            .chain(&self.count_offsets)
            .zip(ends)
            .zip(names)
            .map(|((&start, end), name)| {
                let first = self.slots[start as usize] as usize;
                // Slots are numbered in increasing index order, so the last index's
                // slot or a smaller one is the feature's highest.
                let last = self.slots[start as usize..end as usize].iter().copied().max().unwrap_or(0) as usize;
                FeatureSlots { name, slots: first..last + 1 }
            })
            .collect()
    }
}

/// Digit permutations of a pattern's self-symmetries: `perm[j]` is the digit that
/// square `j` moves to.
fn self_symmetries(squares: &[u8]) -> Vec<Vec<usize>> {
    let mask = squares.iter().fold(0u64, |m, &s| m | 1u64 << s);
    let mut out = Vec::new();
    for t in Transform::ALL.into_iter().skip(1) {
        if t.bits(mask) != mask {
            continue;
        }
        let perm: Vec<usize> = squares
            .iter()
            .map(|&s| {
                let image = t.bits(1u64 << s).trailing_zeros() as u8;
                squares.iter().position(|&q| q == image).expect("the image is in the pattern")
            })
            .collect();
        if perm.iter().enumerate().any(|(j, &d)| j != d) {
            out.push(perm);
        }
    }
    out
}

/// The index of the same configuration read with digit `j` moved to `perm[j]`.
fn permute_index(mut idx: usize, perm: &[usize]) -> usize {
    let mut out = 0;
    for &target in perm {
        out += (idx % 3) * pow3(target);
        idx /= 3;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Squares;
    use crate::testutil::{naive_flips, naive_moves, random_games, random_position, Rng};

    /// The ternary index computed square by square, the definition.
    fn naive_index(player: u64, opponent: u64, squares: &[u8]) -> usize {
        squares
            .iter()
            .enumerate()
            .map(|(j, &s)| pow3(j) * (player >> s & 1) as usize + 2 * pow3(j) * (opponent >> s & 1) as usize)
            .sum()
    }

    #[test]
    fn instance_counts_and_table_sizes() {
        let set = feature_set();
        let per_pattern: Vec<usize> =
            (0..PATTERNS.len()).map(|p| set.instances.iter().filter(|i| i.pattern as usize == p).count()).collect();
        assert_eq!(per_pattern, [4, 4, 8, 4, 4, 4, 2, 4, 4, 4, 4, 4]);
        let patterns: usize = PATTERNS.iter().map(|p| pow3(p.squares.len())).sum();
        assert_eq!(patterns, 3 * 59049 + 19683 + 4 * 6561 + 2187 + 729 + 243 + 81);
        assert_eq!(set.full_len, patterns + COUNTS.iter().map(|c| c.size() as usize).sum::<usize>());
        // Every instance covers as many squares as its pattern.
        for inst in &set.instances {
            assert_eq!(inst.mask.count_ones() as usize, PATTERNS[inst.pattern as usize].squares.len());
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(200))]

        /// Indices carried move by move along a random game (passes included) equal
        /// the indices read afresh at every position and at every legal child. (The
        /// search keeps one copy per frame, so leaving a child needs no undo.)
        #[test]
        fn incremental_indices_follow_random_games(seed: u64) {
            let set = feature_set();
            let mut rng = Rng(seed);
            let mut board = Board::START;
            let mut carried = set.instance_indices(&board);
            loop {
                proptest::prop_assert_eq!(carried, set.instance_indices(&board), "{:?}", board);
                let moves = naive_moves(board.player, board.opponent);
                if moves == 0 {
                    if naive_moves(board.opponent, board.player) == 0 {
                        break;
                    }
                    carried = set.after_pass(&carried);
                    board = board.pass();
                    continue;
                }
                // Every legal child, then on along one of them.
                for sq in Squares(moves) {
                    let f = naive_flips(board.player, board.opponent, sq);
                    let child = Board { player: board.opponent & !f, opponent: board.player | f | sq.bit() };
                    proptest::prop_assert_eq!(set.after_move(&carried, sq, f), set.instance_indices(&child));
                }
                let sq = rng.pick(moves);
                let f = naive_flips(board.player, board.opponent, sq);
                carried = set.after_move(&carried, sq, f);
                board = Board { player: board.opponent & !f, opponent: board.player | f | sq.bit() };
            }
        }

        /// The portable bit extract equals the fast one (the BMI2 instruction where
        /// the build has it), and so do the indices read with either.
        #[test]
        fn portable_extract_equals_the_fast_path(x: u64, mask: u64, seed: u64) {
            proptest::prop_assert_eq!(pext_portable(x, mask), pext(x, mask));
            let set = feature_set();
            let board = random_position(&mut Rng(seed), 4 + (seed % 57) as u32);
            proptest::prop_assert_eq!(set.instance_indices_with(&board, pext_portable), set.instance_indices(&board));
        }
    }

    /// Every copy of the index kernels this CPU can run (`crate::cpu`) equals the
    /// baseline copy, on random positions and every legal child.
    #[test]
    fn every_copy_this_cpu_runs_reads_the_same_indices() {
        use crate::cpu::{level, Level};
        let set = feature_set();
        let mut rng = Rng(11);
        for empties in (4..=60).step_by(4) {
            let board = random_position(&mut rng, empties);
            let base = set.instance_indices_base(&board);
            assert_eq!(base, set.instance_indices_with(&board, pext_portable));
            for sq in Squares(naive_moves(board.player, board.opponent)) {
                let f = naive_flips(board.player, board.opponent, sq);
                let after = set.after_move_base(&base, sq, f);
                #[cfg(target_arch = "x86_64")]
                {
                    if level() >= Level::V3 {
                        // SAFETY: the CPU has the v3 features (checked just above).
                        assert_eq!(unsafe { set.after_move_v3(&base, sq, f) }, after);
                    }
                    if level() >= Level::V4 {
                        // SAFETY: the CPU has the v4 features.
                        assert_eq!(unsafe { set.after_move_v4(&base, sq, f) }, after);
                    }
                }
            }
            #[cfg(target_arch = "x86_64")]
            {
                if level() >= Level::V3 {
                    // SAFETY: as above.
                    assert_eq!(unsafe { set.instance_indices_v3(&board) }, base);
                }
                if level() >= Level::V4 {
                    // SAFETY: as above.
                    assert_eq!(unsafe { set.instance_indices_v4(&board) }, base);
                }
            }
        }
    }

    #[test]
    fn pext_matches_the_definition() {
        for (x, m) in
            [(0xF0F0u64, 0xFF00u64), (u64::MAX, 0x8100_0000_0000_0081), (0x1234_5678_9ABC_DEF0, 0x0F0F_0F0F_0F0F_0F0F)]
        {
            let mut naive = 0;
            for (k, s) in Squares(m).enumerate() {
                naive |= (x >> s.index() & 1) << k;
            }
            assert_eq!(pext(x, m), naive);
        }
    }

    #[test]
    fn identity_instances_index_like_the_definition() {
        let set = feature_set();
        for b in random_games(5, 60) {
            let mut idx = [0u32; FEATURES];
            set.indices(&b, &mut idx);
            // The first instance of each pattern is the identity reading.
            for (pi, p) in PATTERNS.iter().enumerate() {
                let first = set.instances.iter().position(|i| i.pattern as usize == pi).unwrap();
                assert_eq!(
                    idx[first] as usize - set.pattern_offsets[pi] as usize,
                    naive_index(b.player, b.opponent, p.squares)
                );
            }
        }
    }

    #[test]
    fn counts_match_their_definitions() {
        let set = feature_set();
        for b in random_games(6, 40) {
            let mut idx = [0u32; FEATURES];
            set.indices(&b, &mut idx);
            let value = |k: usize| idx[INSTANCES + k] - set.count_offsets[k];
            let (p, o) = (b.player, b.opponent);
            let empty = !(p | o);
            let mp = naive_moves(p, o).count_ones().min(31);
            let mo = naive_moves(o, p).count_ones().min(31);
            assert_eq!(value(0), mp * 32 + mo);
            // Potential mobility by walking every empty square's neighbours.
            let near = |discs: u64| {
                Squares(empty)
                    .filter(|s| {
                        let (c, r) = (s.col() as i32, s.row() as i32);
                        (-1..=1).any(|dc| {
                            (-1..=1).any(|dr| {
                                let (x, y) = (c + dc, r + dr);
                                (dc, dr) != (0, 0)
                                    && (0..8).contains(&x)
                                    && (0..8).contains(&y)
                                    && discs >> (y * 8 + x) & 1 != 0
                            })
                        })
                    })
                    .count() as u32
            };
            assert_eq!(value(1), near(o).min(47) * 48 + near(p).min(47));
            let odd: u32 = QUADRANTS.iter().map(|q| (empty & q).count_ones() % 2).sum();
            assert_eq!(value(2), odd + 5 * (empty.count_ones() % 2));
        }
    }

    #[test]
    fn every_feature_is_the_same_in_all_8_images() {
        let set = feature_set();
        for b in random_games(7, 40) {
            let mut base = [0u32; FEATURES];
            set.indices(&b, &mut base);
            let mut base_slots: Vec<u32> = base.iter().map(|&i| set.canonical_slot(i)).collect();
            base_slots.sort_unstable();
            for t in Transform::ALL {
                let mut idx = [0u32; FEATURES];
                set.indices(&t.board(&b), &mut idx);
                // Counts are the same feature by feature; pattern instances trade places.
                assert_eq!(idx[INSTANCES..], base[INSTANCES..], "{t:?}");
                let mut slots: Vec<u32> = idx.iter().map(|&i| set.canonical_slot(i)).collect();
                slots.sort_unstable();
                assert_eq!(slots, base_slots, "{b:?} under {t:?}");
            }
        }
    }

    #[test]
    fn slots_fold_reversed_readings_and_features_own_disjoint_slots() {
        let set = feature_set();
        // An edge read from either end shares a slot: A1 mine ↔ H1 mine.
        let edge = set.pattern_offsets[0];
        assert_eq!(set.canonical_slot(edge + 1), set.canonical_slot(edge + 3u32.pow(7)));
        assert_ne!(set.canonical_slot(edge + 1), set.canonical_slot(edge + 3));
        // The 2×5 corner has no self-symmetry: every index is its own slot.
        let c25 = set.pattern_offsets[2];
        assert_ne!(set.canonical_slot(c25 + 1), set.canonical_slot(c25 + 3u32.pow(5)));
        assert!(set.slot_count < set.full_len);
        let ranges = set.feature_slots();
        assert_eq!(ranges.len(), PATTERNS.len() + COUNTS.len());
        assert_eq!(ranges[0].slots.start, 0);
        assert_eq!(ranges.last().unwrap().slots.end, set.slot_count);
        for w in ranges.windows(2) {
            assert_eq!(w[0].slots.end, w[1].slots.start, "{w:?}");
        }
        assert_eq!(ranges.iter().find(|r| r.name == "mobility").unwrap().slots.len(), 32 * 32);
    }
}
