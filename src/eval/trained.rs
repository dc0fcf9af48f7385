//! [`PatternEval`]: the trained evaluation, the default of every search.
//!
//! The stored slot weights are expanded once into a full table per phase (one entry
//! per feature index, self-symmetric readings duplicated), so an evaluation is the
//! feature indices of [`super::features`], one table read each and a sum. Cloning
//! shares the tables.

use std::sync::{Arc, OnceLock};

use super::features::{feature_set, FeatureSet, InstanceIndices, COUNTS};
#[cfg(any(feature = "cli", feature = "testing", test))]
use super::features::{Indices, FEATURES};
use super::weights::{phase_of, Weights, WeightsError, SCALE};
use super::{Evaluator, IncrementalEvaluator};
use crate::board::Board;
use crate::square::Square;

/// The trained evaluation: patterns and counts, weighted per phase.
#[derive(Clone, Debug)]
pub struct PatternEval {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    set: &'static FeatureSet,
    /// `phases × set.full_len` weights.
    table: Vec<i16>,
    bias: Vec<i32>,
    /// Empties (0..=60) → phase.
    phase: [u8; 61],
    #[cfg_attr(not(any(feature = "cli", feature = "testing", test)), allow(dead_code))]
    phases: usize,
    probcut: Vec<f32>,
    probcut_depths: usize,
    /// The search-leaf correction per empties, weight units.
    leaf_correction: [i32; 61],
    digest: u32,
    note: String,
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// One feature's share of an evaluation.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub(crate) struct Contribution {
    /// The feature's name (a pattern's or a count's).
    #[serde(rename = "pattern")]
    pub feature: &'static str,
    /// The squares a pattern instance reads (none for a count).
    pub squares: Vec<crate::Square>,
    /// Its weight, in discs.
    pub discs: f64,
}

impl PatternEval {
    /// The evaluation of stored weights.
    pub fn new(weights: &Weights) -> PatternEval {
        let set = feature_set();
        let phases = weights.phases;
        let mut table = vec![0i16; phases * set.full_len];
        let mut bias = vec![0i32; phases];
        for phase in 0..phases {
            let w = weights.phase(phase);
            bias[phase] = w[0] as i32;
            let out = &mut table[phase * set.full_len..(phase + 1) * set.full_len];
            for (i, v) in out.iter_mut().enumerate() {
                *v = w[1 + set.canonical_slot(i as u32) as usize];
            }
        }
        let mut phase = [0u8; 61];
        for (e, p) in phase.iter_mut().enumerate() {
            *p = phase_of(e as u32, phases) as u8;
        }
        PatternEval {
            inner: Arc::new(Inner {
                set,
                table,
                bias,
                phase,
                phases,
                probcut: weights.probcut.clone(),
                probcut_depths: weights.probcut_depths,
                leaf_correction: std::array::from_fn(|e| i32::from(weights.leaf_correction_at(e as u32))),
                digest: weights.digest(),
                note: weights.note.clone(),
            }),
        }
    }

    /// The bundled weights (decoded once per process).
    pub fn bundled() -> PatternEval {
        static EVAL: OnceLock<PatternEval> = OnceLock::new();
        EVAL.get_or_init(|| PatternEval::new(&Weights::bundled())).clone()
    }

    /// The evaluation of a weight file.
    pub(crate) fn load(path: &std::path::Path) -> Result<PatternEval, WeightsError> {
        Ok(PatternEval::new(&Weights::load(path)?))
    }

    /// CRC-32 of the weight file: which evaluation this is.
    pub fn digest(&self) -> u32 {
        self.inner.digest
    }

    /// The search-leaf correction at `empties`, in discs (see
    /// [`Weights::leaf_correction`]).
    pub fn leaf_correction(&self, empties: u32) -> f64 {
        f64::from(self.inner.leaf_correction[empties.min(60) as usize]) / f64::from(SCALE)
    }

    /// How the weights were made.
    pub fn note(&self) -> &str {
        &self.inner.note
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// Number of phases of the weights.
    pub(crate) fn phases(&self) -> usize {
        self.inner.phases
    }

    /// The phase of a position with `empties` empty squares.
    #[inline]
    pub(crate) fn phase_of(&self, empties: u32) -> usize {
        self.inner.phase[empties.min(60) as usize] as usize
    }

    /// The bias and the phase's weight table.
    #[inline]
    fn phase_table(&self, board: &Board) -> (i32, &[i16]) {
        let inner = &*self.inner;
        let phase = self.phase_of(board.empty_count());
        (inner.bias[phase], &inner.table[phase * inner.set.full_len..(phase + 1) * inner.set.full_len])
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The bias, the phase's weight table and the feature indices into it.
    fn lookup(&self, board: &Board) -> (i32, &[i16], Indices) {
        let (bias, table) = self.phase_table(board);
        let mut idx = [0u32; FEATURES];
        self.inner.set.indices(board, &mut idx);
        (bias, table, idx)
    }

    crate::cpu::dispatched! {
        /// The sum in 1/[`SCALE`] discs, unclamped: a static evaluation read afresh, in
        /// one copy (`crate::cpu`) from the indices to the sum.
        pub(crate) fn raw(&self, board: &Board) -> i32 = raw_body / raw_v3, raw_v4, raw_base;
    }

    #[inline(always)]
    fn raw_body(&self, board: &Board) -> i32 {
        self.raw_features_body(board, &self.inner.set.instance_indices_body(board))
    }

    crate::cpu::dispatched! {
        /// [`PatternEval::raw`] from the pattern indices of `board`.
        pub(crate) fn raw_features(&self, board: &Board, features: &InstanceIndices) -> i32
            = raw_features_body / raw_features_v3, raw_features_v4, raw_features_base;
    }

    #[inline(always)]
    fn raw_features_body(&self, board: &Board, features: &InstanceIndices) -> i32 {
        let set = self.inner.set;
        let (bias, table) = self.phase_table(board);
        let mut counts = [0u32; COUNTS.len()];
        set.count_indices(board, &mut counts);
        let patterns: i32 = set
            .instances
            .iter()
            .zip(&features.player)
            .map(|(inst, &index)| table[(inst.offset + index as u32) as usize] as i32)
            .sum();
        bias + patterns + counts.iter().map(|&i| table[i as usize] as i32).sum::<i32>()
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The bias and each feature's contribution, in discs.
    pub(crate) fn explain(&self, board: &Board) -> (f64, Vec<Contribution>) {
        let (bias, table, idx) = self.lookup(board);
        let parts = idx
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let (feature, mask) = self.inner.set.describe(k);
                Contribution {
                    feature,
                    squares: crate::board::Squares(mask).collect(),
                    discs: table[i as usize] as f64 / SCALE as f64,
                }
            })
            .collect();
        (bias as f64 / SCALE as f64, parts)
    }
}

/// A raw sum rounded to whole discs inside (−64, 64).
#[inline]
fn rounded(raw: i32) -> i32 {
    (raw + SCALE / 2).div_euclid(SCALE).clamp(-63, 63)
}

impl Evaluator for PatternEval {
    fn identity(&self) -> Option<u32> {
        Some(self.digest())
    }

    #[inline]
    fn evaluate(&self, board: &Board) -> i32 {
        rounded(self.raw(board))
    }

    fn discs(&self, board: &Board) -> f64 {
        self.raw(board) as f64 / SCALE as f64
    }

    fn name(&self) -> &'static str {
        "pattern"
    }

    fn after_best_reply(&self, board: &Board, replies: u64) -> i32 {
        super::after_best_reply_incremental(self, board, replies)
    }

    fn probcut_sigma(&self, empties: u32, depth: u32) -> Option<f32> {
        let inner = &*self.inner;
        let d = depth as usize;
        if d >= inner.probcut_depths {
            return None;
        }
        let s = inner.probcut[self.phase_of(empties) * inner.probcut_depths + d];
        (s > 0.0).then_some(s)
    }
}

impl IncrementalEvaluator for PatternEval {
    type Features = InstanceIndices;

    fn features(&self, board: &Board) -> InstanceIndices {
        self.inner.set.instance_indices(board)
    }

    #[inline]
    fn after_move(&self, before: &InstanceIndices, square: Square, flips: u64) -> InstanceIndices {
        self.inner.set.after_move(before, square, flips)
    }

    #[inline]
    fn after_pass(&self, before: &InstanceIndices) -> InstanceIndices {
        self.inner.set.after_pass(before)
    }

    #[inline]
    fn evaluate_features(&self, board: &Board, features: &InstanceIndices) -> i32 {
        rounded(self.raw_features(board, features))
    }

    #[inline]
    fn evaluate_leaf(&self, board: &Board, features: &InstanceIndices) -> i32 {
        let correction = self.inner.leaf_correction[board.empty_count().min(60) as usize];
        rounded(self.raw_features(board, features) + correction)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symmetry::Transform;
    use crate::testutil::random_games;

    #[test]
    fn the_bundled_weights_load_and_are_symmetric() {
        let eval = PatternEval::bundled();
        let mut distinct = std::collections::HashSet::new();
        for b in random_games(33, 40) {
            let v = eval.raw(&b);
            distinct.insert(v);
            for t in Transform::ALL {
                assert_eq!(eval.raw(&t.board(&b)), v, "{b:?} under {t:?}");
            }
            assert!((-63..=63).contains(&eval.evaluate(&b)));
        }
        // A trained evaluation tells positions apart.
        assert!(distinct.len() > 500, "{} distinct values", distinct.len());
    }

    /// The evaluation by its definition: every pattern read square by square in
    /// every distinct image, each reading's weight looked up through the slot folding,
    /// the counts, the bias.
    fn naive_raw(eval: &PatternEval, board: &Board) -> i32 {
        use crate::eval::features::PATTERNS;
        let inner = &*eval.inner;
        let set = inner.set;
        let phase = eval.phase_of(board.empty_count());
        let weight = |full: u32| inner.table[phase * set.full_len + full as usize] as i32;
        let mut sum = inner.bias[phase];
        for (pi, pattern) in PATTERNS.iter().enumerate() {
            let mut seen = Vec::new();
            for t in Transform::ALL {
                let squares: Vec<u32> = pattern.squares.iter().map(|&s| t.bits(1u64 << s).trailing_zeros()).collect();
                let mask = squares.iter().fold(0u64, |m, &s| m | 1 << s);
                if seen.contains(&mask) {
                    continue;
                }
                seen.push(mask);
                let index: u32 = squares
                    .iter()
                    .enumerate()
                    .map(|(j, &s)| {
                        3u32.pow(j as u32) * ((board.player >> s & 1) + 2 * (board.opponent >> s & 1)) as u32
                    })
                    .sum();
                sum += weight(set.pattern_offsets[pi] + index);
            }
        }
        let mut counts = [0u32; COUNTS.len()];
        set.count_indices(board, &mut counts);
        sum + counts.iter().map(|&i| weight(i)).sum::<i32>()
    }

    /// Every copy of the leaf evaluation this CPU can run (`crate::cpu`) is the
    /// definition.
    #[test]
    fn every_copy_this_cpu_runs_evaluates_by_the_definition() {
        use crate::cpu::{level, Level};
        let eval = PatternEval::bundled();
        for b in random_games(37, 10) {
            let features = eval.inner.set.instance_indices(&b);
            let want = naive_raw(&eval, &b);
            assert_eq!(eval.raw_features_base(&b, &features), want);
            #[cfg(target_arch = "x86_64")]
            {
                if level() >= Level::V3 {
                    // SAFETY: the CPU has the v3 features (checked just above).
                    assert_eq!(unsafe { eval.raw_features_v3(&b, &features) }, want);
                }
                if level() >= Level::V4 {
                    // SAFETY: the CPU has the v4 features.
                    assert_eq!(unsafe { eval.raw_features_v4(&b, &features) }, want);
                }
            }
        }
    }

    #[test]
    fn the_evaluation_is_its_definition_read_afresh_or_carried_along_a_game() {
        let eval = PatternEval::bundled();
        let mut carried = None;
        let mut previous = Board::START;
        let (mut moves, mut passes) = (0, 0);
        for b in random_games(36, 30) {
            let naive = naive_raw(&eval, &b);
            assert_eq!(eval.raw(&b), naive, "{b:?}");
            // Carry the indices from the previous position when it is the parent.
            let parent = carried.filter(|_| b.empty_count() + 1 == previous.empty_count());
            let features = match parent {
                Some(f) => {
                    moves += 1;
                    let sq = crate::Square::new(
                        (b.opponent & !(previous.player | previous.opponent)).trailing_zeros() as u8
                    );
                    eval.after_move(&f, sq, previous.flips(sq))
                }
                None if b.empty_count() == previous.empty_count() && b == previous.pass() => {
                    passes += 1;
                    eval.after_pass(&carried.unwrap())
                }
                None => eval.features(&b),
            };
            assert_eq!(eval.raw_features(&b, &features), naive, "{b:?}");
            assert_eq!(eval.evaluate_features(&b, &features), eval.evaluate(&b));
            carried = Some(features);
            previous = b;
        }
        assert!(moves > 1500 && passes > 0, "{moves} moves and {passes} passes carried");
    }

    #[test]
    fn explain_sums_to_the_evaluation() {
        let eval = PatternEval::bundled();
        for b in random_games(34, 5) {
            let (bias, parts) = eval.explain(&b);
            assert_eq!(parts.len(), FEATURES);
            let sum: f64 = bias + parts.iter().map(|c| c.discs).sum::<f64>();
            assert!((sum - eval.discs(&b)).abs() < 1e-9);
        }
    }

    #[test]
    fn arbitrary_weights_keep_exact_symmetry() {
        // Random weights: symmetry comes from the slot folding, not from training.
        let mut w = Weights::zero(crate::eval::weights::DEFAULT_PHASES);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for v in w.values.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *v = (x % 2001) as i16 - 1000;
        }
        let eval = PatternEval::new(&w);
        for b in random_games(35, 20) {
            let v = eval.raw(&b);
            for t in Transform::ALL {
                assert_eq!(eval.raw(&t.board(&b)), v);
            }
        }
    }
}
