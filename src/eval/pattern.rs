//! The pattern set of the trained evaluation: which squares each pattern reads, its
//! symmetric instances on the board, and the ternary index of an instance.
//!
//! A pattern is a list of squares in a fixed digit order; a position gives each
//! square a digit (0 empty, 1 the side to move's disc, 2 the other's) and the
//! pattern's index is `Σ digit_j · 3^j`. Each pattern is read at every distinct image
//! of its squares under the 8 board symmetries (its *instances*), and all instances
//! share one weight table. A pattern that maps onto itself under some symmetry (an
//! edge reversed, a diagonal read backwards) has equal weights for the two readings:
//! [`PatternSet::canonical_slot`] folds them into one trained weight, so the
//! evaluation of a position and of its 8 images are identical.
//!
//! Indices are computed from the bitboards directly: each instance gathers its
//! squares' bits with a parallel bit extract (one `pext` per side on CPUs with
//! BMI2) and a small per-instance table turns the gathered bits into the ternary
//! index in the pattern's digit order.

use std::sync::OnceLock;

use crate::symmetry::Transform;

/// A pattern: a name and its squares (bit indices, A1 = 0), digit 0 first.
#[derive(Clone, Copy, Debug)]
pub struct Pattern {
    /// Short name for `thorbook eval --verbose`.
    pub name: &'static str,
    /// Squares in digit order.
    pub squares: &'static [u8],
}

/// The patterns, in the order of the weight file (changing them is a new file version).
pub const PATTERNS: [Pattern; 11] = [
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
];

/// Number of pattern instances on the board (all symmetric images).
pub const INSTANCES: usize = 46;

/// One instance: where its squares are and how to index its weights.
#[derive(Clone, Copy, Debug)]
pub struct Instance {
    /// Which pattern ([`PATTERNS`] index).
    pub pattern: u8,
    /// The instance's squares as a bitboard.
    pub mask: u64,
    /// Offset of this pattern's weights in a phase's full table.
    pub offset: u32,
    /// Offset of this instance's bits → ternary table in [`PatternSet::ternary`].
    table: u32,
}

/// The pattern set's derived tables, built once.
#[derive(Debug)]
pub struct PatternSet {
    /// The 46 instances, grouped by pattern.
    pub instances: [Instance; INSTANCES],
    /// Gathered bits → ternary index, per instance (digit 1 = set bit).
    ternary: Vec<u16>,
    /// Full index (pattern offset + ternary index) → trained weight slot; two readings
    /// of a self-symmetric pattern share a slot.
    slots: Vec<u32>,
    /// Number of distinct trained weights (slots), the bias excluded.
    pub slot_count: usize,
    /// Size of a phase's full table (Σ 3^len).
    pub full_len: usize,
    /// Offset of each pattern in the full table.
    pub offsets: [u32; PATTERNS.len()],
}

/// The shared tables.
pub fn pattern_set() -> &'static PatternSet {
    static SET: OnceLock<PatternSet> = OnceLock::new();
    SET.get_or_init(PatternSet::build)
}

/// Parallel bit extract: the bits of `x` at the set bits of `mask`, packed low.
#[inline(always)]
pub fn pext(x: u64, mask: u64) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "bmi2"))]
    {
        // SAFETY: the target feature is enabled at compile time.
        unsafe { core::arch::x86_64::_pext_u64(x, mask) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "bmi2")))]
    {
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
}

fn pow3(n: usize) -> usize {
    3usize.pow(n as u32)
}

impl PatternSet {
    fn build() -> PatternSet {
        let mut offsets = [0u32; PATTERNS.len()];
        let mut full_len = 0usize;
        for (i, p) in PATTERNS.iter().enumerate() {
            offsets[i] = full_len as u32;
            full_len += pow3(p.squares.len());
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
                instances.push(Instance { pattern: pi as u8, mask, offset: offsets[pi], table });
            }
        }
        let instances: [Instance; INSTANCES] = instances.try_into().expect("the pattern set has 46 instances");

        // Slots: an index and its images under the pattern's self-symmetries share one.
        let mut slots = vec![0u32; full_len];
        let mut slot_count = 0u32;
        for (pi, p) in PATTERNS.iter().enumerate() {
            let perms = self_symmetries(p.squares);
            let base = offsets[pi] as usize;
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
        PatternSet { instances, ternary, slots, slot_count: slot_count as usize, full_len, offsets }
    }

    /// The full-table indices (pattern offset + ternary index) of the 46 instances.
    #[inline]
    pub fn indices(&self, player: u64, opponent: u64, out: &mut [u32; INSTANCES]) {
        for (o, inst) in out.iter_mut().zip(&self.instances) {
            let t = &self.ternary[inst.table as usize..];
            let p = t[pext(player, inst.mask) as usize] as u32;
            let q = t[pext(opponent, inst.mask) as usize] as u32;
            *o = inst.offset + p + 2 * q;
        }
    }

    /// The trained weight slot of a full-table index.
    #[inline]
    pub fn canonical_slot(&self, full_index: u32) -> u32 {
        self.slots[full_index as usize]
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
        let set = pattern_set();
        let per_pattern: Vec<usize> =
            (0..PATTERNS.len()).map(|p| set.instances.iter().filter(|i| i.pattern as usize == p).count()).collect();
        assert_eq!(per_pattern, [4, 4, 8, 4, 4, 4, 2, 4, 4, 4, 4]);
        assert_eq!(set.full_len, 2 * 59049 + 19683 + 4 * 6561 + 2187 + 729 + 243 + 81);
        // Every instance covers as many squares as its pattern.
        for inst in &set.instances {
            assert_eq!(inst.mask.count_ones() as usize, PATTERNS[inst.pattern as usize].squares.len());
        }
    }

    #[test]
    fn pext_matches_the_definition() {
        for (x, m) in
            [(0xF0F0u64, 0xFF00u64), (u64::MAX, 0x8100_0000_0000_0081), (0x1234_5678_9ABC_DEF0, 0x0F0F_0F0F_0F0F_0F0F)]
        {
            let mut naive = 0;
            for (k, s) in crate::board::Squares(m).enumerate() {
                naive |= (x >> s.index() & 1) << k;
            }
            assert_eq!(pext(x, m), naive);
        }
    }

    #[test]
    fn identity_instances_index_like_the_definition() {
        let set = pattern_set();
        for b in crate::testutil::random_games(5, 60) {
            let mut idx = [0u32; INSTANCES];
            set.indices(b.player, b.opponent, &mut idx);
            // The first instance of each pattern is the identity reading.
            for (pi, p) in PATTERNS.iter().enumerate() {
                let first = set.instances.iter().position(|i| i.pattern as usize == pi).unwrap();
                assert_eq!(
                    idx[first] as usize - set.offsets[pi] as usize,
                    naive_index(b.player, b.opponent, p.squares)
                );
            }
        }
    }

    #[test]
    fn slots_fold_reversed_readings() {
        let set = pattern_set();
        // An edge read from either end shares a slot: A1 mine ↔ H1 mine.
        let edge = set.offsets[0];
        assert_eq!(set.canonical_slot(edge + 1), set.canonical_slot(edge + 3u32.pow(7)));
        assert_ne!(set.canonical_slot(edge + 1), set.canonical_slot(edge + 3));
        // The 2×5 corner has no self-symmetry: every index is its own slot.
        let c25 = set.offsets[2];
        assert_ne!(set.canonical_slot(c25 + 1), set.canonical_slot(c25 + 3u32.pow(5)));
        assert!(set.slot_count < set.full_len);
    }
}
