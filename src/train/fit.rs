//! Fitting the weights: per phase, ridge least squares over the pattern slots,
//! solved by conjugate gradient with a Jacobi preconditioner.
//!
//! Each position is a row with 47 ones (its 46 instances' slots and the bias); the
//! unknowns are the phase's slot weights. Phases are fitted from the end of the game
//! to the start, each regularised toward its already fitted neighbour (`λ‖w −
//! w_next‖²`) and started from it: slots a phase rarely sees keep the neighbour's
//! value instead of noise, which also smooths the weights across phases. Sums run in
//! a fixed number of chunks reduced in a fixed order, so the result does not depend
//! on the thread count.

use rayon::prelude::*;

use super::dataset::{Dataset, Labeled};
use super::{Progress, ProgressFn, Stage};
use crate::eval::pattern::{pattern_set, INSTANCES};
use crate::eval::weights::{phase_empties, Weights, PHASES, SCALE};
use crate::eval::PatternEval;

/// Training settings.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    /// Ridge strength toward the neighbouring phase, in positions' worth.
    pub lambda: f64,
    /// Conjugate-gradient iterations per phase.
    pub iterations: usize,
    /// Each phase also learns from this many neighbouring phases on each side.
    pub window: usize,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig { lambda: 3.0, iterations: 60, window: 1 }
    }
}

/// What training measured for one phase.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PhaseReport {
    /// The phase.
    pub phase: usize,
    /// Empties it covers (most, least).
    pub empties: (u32, u32),
    /// Training positions.
    pub train_positions: usize,
    /// Mean absolute error on them, in discs (the stored, rounded weights).
    pub train_mae: f64,
    /// Validation positions.
    pub validation_positions: usize,
    /// Mean absolute error on them, in discs.
    pub validation_mae: f64,
    /// Validation positions whose target is exact.
    pub validation_exact: usize,
    /// Mean absolute error on those.
    pub validation_exact_mae: f64,
}

/// The result of training.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TrainReport {
    /// Per phase, start of the game first.
    pub phases: Vec<PhaseReport>,
}

/// Number of chunks the sums are split into (fixed for determinism).
const CHUNKS: usize = 16;

/// Fits weights on `train` and measures them on `validation`.
pub fn train(
    train: &Dataset,
    validation: &Dataset,
    config: &TrainConfig,
    progress: ProgressFn,
) -> (Weights, TrainReport) {
    let set = pattern_set();
    let slots = set.slot_count;
    let unknowns = slots + 1; // the bias is the last unknown
    let mut weights = Weights::zero();
    let mut prior = vec![0f64; unknowns];
    for phase in (0..PHASES).rev() {
        let lo = phase.saturating_sub(config.window);
        let hi = (phase + config.window).min(PHASES - 1);
        let rows: Vec<Labeled> = (lo..=hi).flat_map(|p| train.phases.get(p).into_iter().flatten().copied()).collect();
        let solution = if rows.is_empty() { prior.clone() } else { fit_phase(&rows, &prior, config) };
        let out = &mut weights.values[phase * (1 + slots)..(phase + 1) * (1 + slots)];
        out[0] = quantize(solution[slots]);
        for (o, w) in out[1..].iter_mut().zip(&solution[..slots]) {
            *o = quantize(*w);
        }
        prior = solution;
        progress(Progress { stage: Stage::Fit, done: (PHASES - phase) as u64, total: PHASES as u64 });
    }
    let eval = PatternEval::new(&weights);
    let phases = (0..PHASES)
        .map(|phase| {
            let t = train.phases.get(phase).map_or(&[][..], Vec::as_slice);
            let v = validation.phases.get(phase).map_or(&[][..], Vec::as_slice);
            let exact: Vec<Labeled> = v.iter().copied().filter(|l| l.exact).collect();
            PhaseReport {
                phase,
                empties: phase_empties(phase),
                train_positions: t.len(),
                train_mae: mae(&eval, t),
                validation_positions: v.len(),
                validation_mae: mae(&eval, v),
                validation_exact: exact.len(),
                validation_exact_mae: mae(&eval, &exact),
            }
        })
        .collect();
    (weights, TrainReport { phases })
}

/// Mean absolute error of the static evaluation (unrounded) over `rows`, in discs.
pub fn mae(eval: &PatternEval, rows: &[Labeled]) -> f64 {
    if rows.is_empty() {
        return 0.0;
    }
    let sum: f64 = rows.par_iter().map(|l| (eval.discs(&l.board) - l.target as f64).abs()).sum();
    sum / rows.len() as f64
}

fn quantize(w: f64) -> i16 {
    (w * SCALE as f64).round().clamp(i16::MIN as f64, i16::MAX as f64) as i16
}

/// Each row's 47 unknowns: its instances' slots and the bias.
fn row_slots(rows: &[Labeled]) -> Vec<[u32; INSTANCES + 1]> {
    let set = pattern_set();
    rows.par_iter()
        .map(|l| {
            let mut idx = [0u32; INSTANCES];
            set.indices(l.board.player, l.board.opponent, &mut idx);
            let mut out = [set.slot_count as u32; INSTANCES + 1];
            for (o, i) in out.iter_mut().zip(idx) {
                *o = set.canonical_slot(i);
            }
            out
        })
        .collect()
}

/// `Aᵀ u` (summed in fixed chunks, reduced in order).
fn transpose_times(rows: &[[u32; INSTANCES + 1]], u: &[f64], unknowns: usize) -> Vec<f64> {
    let chunk = rows.len().div_ceil(CHUNKS).max(1);
    let parts: Vec<Vec<f64>> = rows
        .par_chunks(chunk)
        .zip(u.par_chunks(chunk))
        .map(|(rs, us)| {
            let mut acc = vec![0f64; unknowns];
            for (r, &x) in rs.iter().zip(us) {
                for &s in r {
                    acc[s as usize] += x;
                }
            }
            acc
        })
        .collect();
    let mut out = vec![0f64; unknowns];
    for p in parts {
        for (o, v) in out.iter_mut().zip(p) {
            *o += v;
        }
    }
    out
}

/// `A v`.
fn times(rows: &[[u32; INSTANCES + 1]], v: &[f64]) -> Vec<f64> {
    rows.par_iter().map(|r| r.iter().map(|&s| v[s as usize]).sum()).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Minimises `‖A w − y‖² + λ‖w − prior‖²` for one phase's rows.
fn fit_phase(rows: &[Labeled], prior: &[f64], config: &TrainConfig) -> Vec<f64> {
    let unknowns = prior.len();
    let a = row_slots(rows);
    let lambda = config.lambda;
    // Solve for d = w − prior: (AᵀA + λI) d = Aᵀ(y − A·prior).
    let predicted = times(&a, prior);
    let residual: Vec<f64> = rows.iter().zip(&predicted).map(|(l, p)| l.target as f64 - p).collect();
    let mut r = transpose_times(&a, &residual, unknowns);
    let ones = vec![1f64; a.len()];
    let counts = transpose_times(&a, &ones, unknowns);
    let precondition: Vec<f64> = counts.iter().map(|c| 1.0 / (c + lambda)).collect();
    let mut d = vec![0f64; unknowns];
    let mut z: Vec<f64> = r.iter().zip(&precondition).map(|(x, m)| x * m).collect();
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    for _ in 0..config.iterations {
        if rz <= 1e-12 {
            break;
        }
        let ap = times(&a, &p);
        let mut q = transpose_times(&a, &ap, unknowns);
        for (qi, pi) in q.iter_mut().zip(&p) {
            *qi += lambda * pi;
        }
        let alpha = rz / dot(&p, &q);
        for i in 0..unknowns {
            d[i] += alpha * p[i];
            r[i] -= alpha * q[i];
            z[i] = r[i] * precondition[i];
        }
        let rz_next = dot(&r, &z);
        let beta = rz_next / rz;
        rz = rz_next;
        for (pi, zi) in p.iter_mut().zip(&z) {
            *pi = zi + beta * *pi;
        }
    }
    prior.iter().zip(&d).map(|(w, x)| w + x).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Evaluator;
    use crate::testutil::random_games;

    /// Positions labelled by a known function of the board (disc difference plus
    /// corners): training must learn it far better than the zero evaluation.
    fn labelled(seed: u64, games: usize) -> Dataset {
        let rows = random_games(seed, games).into_iter().filter(|b| b.legal_moves() != 0).map(|b| {
            let discs = b.player.count_ones() as i32 - b.opponent.count_ones() as i32;
            let corners = (b.player & crate::board::masks::CORNERS).count_ones() as i32
                - (b.opponent & crate::board::masks::CORNERS).count_ones() as i32;
            Labeled { board: b, target: (discs / 2 + 6 * corners).clamp(-64, 64) as i8, exact: true }
        });
        Dataset::from_positions(rows)
    }

    #[test]
    fn training_is_deterministic_and_learns() {
        let train_set = labelled(1, 300);
        let validation = labelled(2, 100);
        let config = TrainConfig { lambda: 2.0, iterations: 15, window: 1 };
        let (w1, report) = train(&train_set, &validation, &config, &|_| {});
        let (w2, _) = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| train(&train_set, &validation, &config, &|_| {}));
        assert_eq!(w1, w2, "training depends on the thread count");
        let zero = PatternEval::new(&Weights::zero());
        let trained = PatternEval::new(&w1);
        for p in 4..PHASES - 2 {
            let v = &validation.phases[p];
            let before = mae(&zero, v);
            let after = report.phases[p].validation_mae;
            assert!(after < 0.75 * before, "phase {p}: validation MAE {after:.2} not below {before:.2}");
        }
        // Saving and loading gives the same evaluations.
        let reloaded = PatternEval::new(&Weights::from_bytes("w", &w1.to_bytes()).unwrap());
        for l in validation.phases.iter().flatten().take(500) {
            assert_eq!(reloaded.evaluate(&l.board), trained.evaluate(&l.board));
        }
    }
}
