//! [`PatternEval`]: the trained evaluation, the default of every search.
//!
//! The stored slot weights are expanded once into a full table per phase (one entry
//! per feature index, self-symmetric readings duplicated), so an evaluation is the
//! feature indices of [`super::features`], one table read each and a sum. Cloning
//! shares the tables.

use std::sync::{Arc, OnceLock};

use super::features::{feature_set, FeatureSet, Indices, FEATURES};
use super::weights::{phase_of, Weights, WeightsError, SCALE};
use super::Evaluator;
use crate::board::Board;

/// The bundled weights (gzip), trained by `thorbook train` on the Thor archives; see
/// the README for the command that rebuilds them.
static BUNDLED: &[u8] = include_bytes!("../../data/eval.tbe.gz");

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
    phases: usize,
    probcut: Vec<f32>,
    probcut_depths: usize,
    digest: u32,
    note: String,
}

/// One feature's share of an evaluation.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Contribution {
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
                digest: weights.digest(),
                note: weights.note.clone(),
            }),
        }
    }

    /// The bundled weights (decoded once per process).
    pub fn bundled() -> PatternEval {
        static EVAL: OnceLock<PatternEval> = OnceLock::new();
        EVAL.get_or_init(|| {
            let w =
                Weights::from_bytes("bundled weights", BUNDLED).expect("the bundled weights are checked by the tests");
            PatternEval::new(&w)
        })
        .clone()
    }

    /// The evaluation of a weight file.
    pub fn load(path: &std::path::Path) -> Result<PatternEval, WeightsError> {
        Ok(PatternEval::new(&Weights::load(path)?))
    }

    /// CRC-32 of the weight file: which evaluation this is.
    pub fn digest(&self) -> u32 {
        self.inner.digest
    }

    /// How the weights were made.
    pub fn note(&self) -> &str {
        &self.inner.note
    }

    /// Number of phases of the weights.
    pub fn phases(&self) -> usize {
        self.inner.phases
    }

    /// The phase of a position with `empties` empty squares.
    #[inline]
    pub fn phase_of(&self, empties: u32) -> usize {
        self.inner.phase[empties.min(60) as usize] as usize
    }

    /// The bias, the phase's weight table and the feature indices into it.
    #[inline]
    fn lookup(&self, board: &Board) -> (i32, &[i16], Indices) {
        let inner = &*self.inner;
        let phase = self.phase_of(board.empty_count());
        let table = &inner.table[phase * inner.set.full_len..(phase + 1) * inner.set.full_len];
        let mut idx = [0u32; FEATURES];
        inner.set.indices(board, &mut idx);
        (inner.bias[phase], table, idx)
    }

    /// The sum in 1/[`SCALE`] discs, unclamped.
    #[inline]
    pub fn raw(&self, board: &Board) -> i32 {
        let (bias, table, idx) = self.lookup(board);
        bias + idx.iter().map(|&i| table[i as usize] as i32).sum::<i32>()
    }

    /// The bias and each feature's contribution, in discs.
    pub fn explain(&self, board: &Board) -> (f64, Vec<Contribution>) {
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

impl Evaluator for PatternEval {
    #[inline]
    fn evaluate(&self, board: &Board) -> i32 {
        (self.raw(board) + SCALE / 2).div_euclid(SCALE).clamp(-63, 63)
    }

    fn discs(&self, board: &Board) -> f64 {
        self.raw(board) as f64 / SCALE as f64
    }

    fn name(&self) -> &'static str {
        "pattern"
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
