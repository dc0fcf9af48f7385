//! Fitting the weights: per phase, ridge least squares over the feature slots, solved
//! by conjugate gradient with a Jacobi preconditioner.
//!
//! Each position is a row with one 1 per feature it reads (its pattern instances'
//! slots, its counts' entries) and the bias; the unknowns are the phase's slot
//! weights. Phases are fitted from the end of the game to the start, each regularised
//! toward its already fitted neighbour (`λ‖w − w_next‖²`) and started from it: slots a
//! phase rarely sees keep the neighbour's value instead of noise. A phase also learns
//! from the positions up to `window` empties beyond its own, each such row weighted
//! `neighbour_weight`: the neighbours fill in the rare pattern configurations. Each
//! number of empties in the fit gets an intercept of its own and only the phase's own
//! is kept as its bias, so the neighbours lend their patterns but not their level
//! (with one phase per ply, odd and even numbers of empties get levels of their own;
//! with two plies a phase, the parity count tells them apart). Sums run in a fixed number of chunks reduced in a fixed order, so the
//! result does not depend on the thread count.

use std::ops::RangeInclusive;

use rayon::prelude::*;

use super::measure::{ErrorStats, PositionErrors};
use super::positions::{Dataset, Labeled};
use super::{Progress, ProgressFn, Stage};
use crate::eval::features::{feature_set, FEATURES};
use crate::eval::weights::{phase_empties, phase_of, Weights, DEFAULT_PHASES, MAX_PHASES, SCALE};
use crate::eval::PatternEval;
use crate::setting::{check, OutOfRange, Setting};

/// Training settings.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TrainConfig {
    /// Phases (1..=60): 60 is one per ply.
    pub phases: usize,
    /// Ridge strength toward the neighbouring phase, in positions' worth.
    pub lambda: f64,
    /// Conjugate-gradient iterations per phase.
    pub iterations: usize,
    /// A phase also learns from the positions with up to this many empties more or
    /// fewer than its own.
    pub window: u32,
    /// The weight of those neighbouring positions' rows (a phase's own weigh 1).
    pub neighbour_weight: f64,
    /// Features left out (their weights stay 0), by name: for measuring what a
    /// feature is worth.
    pub without: Vec<String>,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            phases: DEFAULT_PHASES,
            lambda: 3.0,
            iterations: 60,
            window: 2,
            neighbour_weight: 0.5,
            without: Vec::new(),
        }
    }
}

impl TrainConfig {
    /// Checks every setting; the message names the one at fault.
    pub(crate) fn validate(&self) -> Result<(), OutOfRange> {
        if !(1..=MAX_PHASES).contains(&self.phases) || 60 % self.phases != 0 {
            return Err(OutOfRange::new(Setting::Phases, self.phases, "a divisor of 60"));
        }
        if !(self.lambda.is_finite() && self.lambda > 0.0) {
            return Err(OutOfRange::new(Setting::Lambda, self.lambda, "a positive number"));
        }
        check(Setting::Iterations, self.iterations, 1..=10_000)?;
        check(Setting::Window, self.window, 0..=10)?;
        if !(self.neighbour_weight.is_finite() && (0.0..=1.0).contains(&self.neighbour_weight)) {
            return Err(OutOfRange::new(Setting::NeighbourWeight, self.neighbour_weight, "from 0 to 1"));
        }
        let known: Vec<&str> = feature_set().feature_slots().iter().map(|f| f.name).collect();
        if let Some(bad) = self.without.iter().find(|w| !known.contains(&w.as_str())) {
            return Err(OutOfRange::new(
                Setting::Features,
                format!("`{bad}`"),
                format!("one of the feature names ({})", known.join(", ")),
            ));
        }
        Ok(())
    }
}

/// What training measured for one number of empties.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct EmptiesReport {
    /// Empty squares.
    pub empties: u32,
    /// The phase they belong to.
    pub phase: usize,
    /// Training positions and the error on them (the stored, rounded weights).
    pub train: ErrorStats,
    /// Validation positions and the error on them.
    pub validation: ErrorStats,
    /// Validation positions with exact targets and the error on them.
    pub validation_exact: ErrorStats,
}

/// The result of training.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct TrainReport {
    /// Phases of the weights.
    pub phases: usize,
    /// Per number of empties, the start of the game (60) first.
    pub empties: Vec<EmptiesReport>,
}

impl TrainReport {
    /// Mean absolute error over the validation positions with exact targets and at
    /// least `min_empties` empties, each position weighing the same (a few solves at
    /// 25 empties that a measurement left in the label store must not weigh as much as
    /// the thousands of exact scores at 24): the figure a bootstrapping round must
    /// lower to be kept. `None` without such positions.
    pub(crate) fn exact_validation_mae(&self, min_empties: u32) -> Option<f64> {
        let rows = self.empties.iter().filter(|r| r.empties >= min_empties).map(|r| &r.validation_exact);
        let (sum, n) = rows.fold((0.0, 0), |(sum, n), s| (sum + s.mae * s.positions as f64, n + s.positions));
        (n > 0).then(|| sum / n as f64)
    }
}

/// Number of chunks the sums are split into (fixed for determinism).
const CHUNKS: usize = 16;

/// Fits weights on `train` and measures them on `validation`. (`train` is taken
/// mutably only because [`train_backward`] shares the code; its rows are left as
/// they are.)
pub(crate) fn train(
    train: &mut Dataset,
    validation: &Dataset,
    config: &TrainConfig,
    progress: ProgressFn,
) -> (Weights, TrainReport) {
    let keep = |_: &mut Dataset, _: RangeInclusive<u32>, _: &Weights| Ok::<(), std::convert::Infallible>(());
    match train_backward(train, validation, config, progress, keep) {
        Ok(fitted) => fitted,
        Err(never) => match never {},
    }
}

/// Fits as [`train`] does, but first lets `relabel` rewrite the rows a phase is
/// about to learn from (`empties`: its own numbers of empties and its window's),
/// given the weights fitted so far — every phase nearer the end of the game than
/// this one, this one and earlier ones still 0. That is how labels flow backward: a
/// search from a phase's positions whose leaves lie in phases already fitted labels
/// them with what those phases learnt.
pub(crate) fn train_backward<E>(
    train: &mut Dataset,
    validation: &Dataset,
    config: &TrainConfig,
    progress: ProgressFn,
    mut relabel: impl FnMut(&mut Dataset, RangeInclusive<u32>, &Weights) -> Result<(), E>,
) -> Result<(Weights, TrainReport), E> {
    let set = feature_set();
    let slots = set.slot_count;
    let unknowns = slots + 1; // the bias is the last unknown
    let phases = config.phases;
    // Unknowns left out stay at 0: a zero preconditioner keeps conjugate gradient off them.
    let mut free = vec![true; unknowns];
    for f in set.feature_slots() {
        if config.without.iter().any(|w| w == f.name) {
            free[f.slots].fill(false);
        }
    }
    let mut weights = Weights::zero(phases);
    let mut prior = vec![0f64; unknowns];
    for phase in (0..phases).rev() {
        let (hi, lo) = phase_empties(phase, phases);
        let from = lo.saturating_sub(config.window).max(1);
        let to = (hi + config.window).min(60);
        relabel(train, from..=to, &weights)?;
        // Rows, their weights, and which intercept each uses: the phase's own bias
        // (`slots`) for its own empties, one more per neighbouring number of empties.
        let mut rows: Vec<(Labeled, f64, u32)> = Vec::new();
        let mut intercepts = slots as u32;
        for e in from..=to {
            let own = (lo..=hi).contains(&e);
            let w = if own { 1.0 } else { config.neighbour_weight };
            if w > 0.0 && !train.at(e).is_empty() {
                let intercept = if own {
                    slots as u32
                } else {
                    intercepts += 1;
                    intercepts
                };
                rows.extend(train.at(e).iter().map(|l| (*l, w * f64::from(l.weight), intercept)));
            }
        }
        let solution = if rows.is_empty() {
            prior.clone()
        } else {
            let mut start = prior.clone();
            // Neighbours' intercepts start from the prior bias too.
            start.resize(intercepts as usize + 1, prior[slots]);
            let mut free = free.clone();
            free.resize(intercepts as usize + 1, true);
            let mut solution = fit_phase(&rows, &start, &free, config);
            solution.truncate(unknowns);
            solution
        };
        let out = weights.phase_mut(phase);
        out[0] = quantize(solution[slots]);
        for (o, w) in out[1..].iter_mut().zip(&solution[..slots]) {
            *o = quantize(*w);
        }
        prior = solution;
        progress(Progress { stage: Stage::Fit, done: (phases - phase) as u64, total: phases as u64 });
    }
    let report = report(&PatternEval::new(&weights), train, validation);
    Ok((weights, report))
}

/// The error of `eval` on `train` and `validation`, per number of empties.
pub(crate) fn report(eval: &PatternEval, train: &Dataset, validation: &Dataset) -> TrainReport {
    let stats = |rows: &[Labeled]| PositionErrors::static_errors(eval, rows).stats();
    let empties = (1..=60u32)
        .rev()
        .map(|e| {
            let exact: Vec<Labeled> = validation.at(e).iter().copied().filter(Labeled::exact).collect();
            EmptiesReport {
                empties: e,
                phase: phase_of(e, eval.phases()),
                train: stats(train.at(e)),
                validation: stats(validation.at(e)),
                validation_exact: stats(&exact),
            }
        })
        .collect();
    TrainReport { phases: eval.phases(), empties }
}

fn quantize(w: f64) -> i16 {
    (w * SCALE as f64).round().clamp(i16::MIN as f64, i16::MAX as f64) as i16
}

/// Each row's unknowns: its features' slots and its intercept.
type Row = [u32; FEATURES + 1];

fn row_slots(rows: &[(Labeled, f64, u32)]) -> Vec<Row> {
    let set = feature_set();
    rows.par_iter()
        .map(|&(l, _, intercept)| {
            let mut idx = [0u32; FEATURES];
            set.indices(&l.board, &mut idx);
            let mut out = [intercept; FEATURES + 1];
            for (o, i) in out.iter_mut().zip(idx) {
                *o = set.canonical_slot(i);
            }
            out
        })
        .collect()
}

/// `Aᵀ u` (summed in fixed chunks, reduced in order).
fn transpose_times(rows: &[Row], u: &[f64], unknowns: usize) -> Vec<f64> {
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
fn times(rows: &[Row], v: &[f64]) -> Vec<f64> {
    rows.par_iter().map(|r| r.iter().map(|&s| v[s as usize]).sum()).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Minimises `Σ wᵢ (Aᵢ w − yᵢ)² + λ‖w − prior‖²` over the free unknowns for one
/// phase's rows.
fn fit_phase(rows: &[(Labeled, f64, u32)], prior: &[f64], free: &[bool], config: &TrainConfig) -> Vec<f64> {
    let unknowns = prior.len();
    let a = row_slots(rows);
    let row_weight: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let lambda = config.lambda;
    // Solve for d = w − prior: (AᵀWA + λI) d = AᵀW(y − A·prior).
    let predicted = times(&a, prior);
    let residual: Vec<f64> = rows.iter().zip(&predicted).map(|((l, w, _), p)| w * (f64::from(l.target) - p)).collect();
    let mut r = transpose_times(&a, &residual, unknowns);
    let counts = transpose_times(&a, &row_weight, unknowns);
    let precondition: Vec<f64> =
        counts.iter().zip(free).map(|(c, &f)| if f { 1.0 / (c + lambda) } else { 0.0 }).collect();
    let mut d = vec![0f64; unknowns];
    let mut z: Vec<f64> = r.iter().zip(&precondition).map(|(x, m)| x * m).collect();
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    for _ in 0..config.iterations {
        if rz <= 1e-12 {
            break;
        }
        let ap: Vec<f64> = times(&a, &p).iter().zip(&row_weight).map(|(x, w)| x * w).collect();
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
    prior.iter().zip(&d).zip(free).map(|((w, x), &f)| if f { w + x } else { 0.0 }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Evaluator;
    use crate::testutil::random_games;

    /// The held-out error a bootstrapping round is judged by weighs every position the
    /// same: ten solves at 25 empties with 20 discs of error barely move a thousand
    /// exact scores at 24 with 5, and positions below the threshold do not count.
    #[test]
    fn the_held_out_error_weighs_positions_not_numbers_of_empties() {
        let row = |empties: u32, positions: usize, mae: f64| EmptiesReport {
            empties,
            phase: 0,
            train: ErrorStats::default(),
            validation: ErrorStats::default(),
            validation_exact: ErrorStats { positions, mae, ..ErrorStats::default() },
        };
        let report = TrainReport {
            phases: 30,
            empties: vec![row(25, 10, 20.0), row(24, 1000, 5.0), row(23, 0, 0.0), row(10, 500, 1.0)],
        };
        let mae = report.exact_validation_mae(19).unwrap();
        assert!((mae - 5200.0 / 1010.0).abs() < 1e-9, "{mae}");
        assert_eq!(report.exact_validation_mae(26), None);
    }
    use crate::train::positions::LabelKind;

    /// Positions labelled by a known function of the board (disc difference plus
    /// corners, plus 3 discs when the number of empties is odd): training must learn
    /// it far better than the zero evaluation, parity included.
    fn labelled(seed: u64, games: usize) -> Dataset {
        let rows = random_games(seed, games).into_iter().filter(|b| b.legal_moves() != 0).map(|b| {
            let discs = b.player.count_ones() as i32 - b.opponent.count_ones() as i32;
            let corners = (b.player & crate::board::masks::CORNERS).count_ones() as i32
                - (b.opponent & crate::board::masks::CORNERS).count_ones() as i32;
            let parity = 3 * (b.empty_count() as i32 % 2);
            Labeled {
                board: b,
                target: (discs / 2 + 6 * corners + parity).clamp(-64, 64) as i8,
                kind: LabelKind::Exact,
                weight: 1.0,
            }
        });
        Dataset::from_positions(rows)
    }

    #[test]
    fn training_is_deterministic_and_learns_parity() {
        let mut train_set = labelled(1, 300);
        let validation = labelled(2, 100);
        let config = TrainConfig { iterations: 15, ..TrainConfig::default() };
        let (w1, report) = train(&mut train_set, &validation, &config, &|_| {});
        let (w2, _) = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| train(&mut train_set, &validation, &config, &|_| {}));
        assert_eq!(w1, w2, "training depends on the thread count");
        let zero = PatternEval::new(&Weights::zero(60));
        let trained = PatternEval::new(&w1);
        for e in 12..=48 {
            let v = validation.at(e);
            let before = PositionErrors::static_errors(&zero, v).stats().mae;
            let r = report.empties.iter().find(|r| r.empties == e).unwrap();
            assert!(
                r.validation.mae < 0.75 * before,
                "{e}: validation MAE {:.2} not below {before:.2}",
                r.validation.mae
            );
            // The parity term is learnt, not averaged away: no signed error of 1.5 discs.
            assert!(r.validation.signed.abs() < 1.5, "{e} empties: signed error {:.2}", r.validation.signed);
        }
        // Saving and loading gives the same evaluations.
        let reloaded = PatternEval::new(&Weights::from_bytes(std::path::Path::new("w"), &w1.to_bytes()).unwrap());
        for l in validation.iter().take(500) {
            assert_eq!(reloaded.evaluate(&l.board), trained.evaluate(&l.board));
        }
    }

    /// A row weighing 2 is the row counted twice: weighted least squares against the
    /// unweighted fit of the rows repeated, the same conjugate-gradient steps up to
    /// rounding. And the weights do move the fit (else the test could not fail).
    #[test]
    fn a_row_weighing_two_fits_as_the_row_twice() {
        let base = labelled(4, 120);
        let heavy = |i: usize| i.is_multiple_of(3);
        let mut weighted = Dataset::default();
        let mut repeated = Dataset::default();
        for (e, rows) in base.by_empties.iter().enumerate() {
            for (i, l) in rows.iter().enumerate() {
                weighted.by_empties[e].push(Labeled { weight: if heavy(i) { 2.0 } else { 1.0 }, ..*l });
                repeated.by_empties[e].push(*l);
                if heavy(i) {
                    repeated.by_empties[e].push(*l);
                }
            }
        }
        let config = TrainConfig { iterations: 10, ..TrainConfig::default() };
        let (w, _) = train(&mut weighted, &Dataset::default(), &config, &|_| {});
        let (r, _) = train(&mut repeated, &Dataset::default(), &config, &|_| {});
        let (plain, _) = train(&mut base.clone(), &Dataset::default(), &config, &|_| {});
        let (mut differ, mut moved, mut total) = (0, 0, 0);
        for phase in 0..w.phases {
            for ((a, b), c) in w.phase(phase).iter().zip(r.phase(phase)).zip(plain.phase(phase)) {
                assert!((i32::from(*a) - i32::from(*b)).abs() <= 1, "phase {phase}: {a} against {b}");
                differ += usize::from(a != b);
                moved += usize::from(a != c);
                total += 1;
            }
        }
        // Rounding may tip a quantised weight across a half in a few slots only.
        assert!(differ * 1000 < total, "{differ} of {total} weights differ");
        assert!(moved > 100, "the row weights changed only {moved} of {total} weights");
    }

    #[test]
    fn a_feature_left_out_keeps_zero_weights() {
        let mut train_set = labelled(3, 100);
        let config =
            TrainConfig { iterations: 5, without: vec!["mobility".into(), "row3".into()], ..Default::default() };
        config.validate().unwrap();
        let (w, _) = train(&mut train_set, &Dataset::default(), &config, &|_| {});
        let slots = feature_set().feature_slots();
        for name in ["mobility", "row3"] {
            let range = slots.iter().find(|f| f.name == name).unwrap().slots.clone();
            for phase in 0..w.phases {
                assert!(w.phase(phase)[1 + range.start..1 + range.end].iter().all(|&x| x == 0), "{name} {phase}");
            }
        }
        let used = slots.iter().find(|f| f.name == "potential").unwrap().slots.clone();
        assert!(w.phase(w.phases * 2 / 3)[1 + used.start..1 + used.end].iter().any(|&x| x != 0));
        let bad = TrainConfig { without: vec!["nonsense".into()], ..Default::default() };
        assert!(bad.validate().unwrap_err().to_string().contains("got `nonsense`"));
        assert!(TrainConfig { phases: 7, ..Default::default() }.validate().is_err());
    }
}
