//! The search-leaf correction ([`Weights::leaf_correction`]): what a midgame search
//! adds to the evaluation of its leaves so that its score does not lean toward the
//! side that makes its last choice.
//!
//! Why a search leans: at a leaf's parent, the side to move takes the move whose leaf
//! the evaluation scores worst for the other side. The evaluation errs by several
//! discs either way, so the leaf taken is, more often than not, one it underrates for
//! its side to move: a depth-d search's score leans toward whoever moves at ply d, and
//! swings with the parity of d. Measured on the held-out games of 2013–2015 with the
//! weights before any correction (2σ, no solve, 1,215 positions at 24 empties and
//! 1,214 at 23, exact scores), the signed error for the side to move was −0.7 to −1.0
//! discs at every even depth from 4 to 12 and +0.1 to +0.9 at every odd depth, while
//! the static evaluation of the same positions errs by −0.3; at 36 empties, scores of
//! consecutive depths differ by 1.3–1.4 discs on average, alternately up and down.
//!
//! A correction `c(e)` added to every leaf with `e` empties shifts a search's score by
//! `+c` when the leaf's side to move is the root's (even depth, no pass) and by `−c`
//! otherwise, which is what cancels the swing. It is measured in two ways and refined
//! over a few rounds, each searching with the correction of the round before:
//! - **against exact scores**, at leaf empties that searches from neighbouring sets of
//!   exact positions reach ([`EXACT_EMPTIES`]: 24, where WTHOR's theoretical scores are
//!   exact, and 23, 22, 21, solved): a depth-d search from r empties and a
//!   depth-(d − 1) one from r − 1 end at the same leaf empties with opposite signs, so
//!   half the difference of their signed errors is the leaf's lean, free of any lean
//!   common to both;
//! - **by the swing**, everywhere else (the midgame, where no exact score exists): the
//!   mean difference between the scores of depths d + 1 and d from the same position
//!   is the sum of the leans at the two leaf empties, so a quarter of the two sums
//!   that contain one leaf empties count is its lean, if the lean changes slowly with
//!   the empties (the exact measurements show where it does not: at 8–19 empties the
//!   odd counts lean 0.3–0.7 disc more than the even ones).
//!
//! A lean by leaf empties alone is a model, and 20 empties shows its limit. With the
//! bundled weights at calibrate's 1.5σ, the exact pairs that end there (only shallow
//! ones do: depths 4/3, 3/2, 2/1) read it over-corrected: +0.49, +0.35, +0.45 disc on
//! calibrate's 800 positions a count of 2008–2010, +0.55, +0.48, +0.44 on 300 a count
//! of the held-out 2013–2015 (standard error about 0.12), while the swing of deeper
//! searches (depths 4–11 from 24–31 empties) finds the leans at 19 and 20 right
//! together (−0.01 ± 0.09). At 18 and 19 pairs of different depths agree within
//! their noise (18: +0.09, −0.10, +0.07; 19: 0.00, +0.25, +0.15 on 2008–2010). The
//! lean of a leaf reached by shallow searches differs; the correction follows the
//! deeper ones (pairs below `min_depth`, 4, are left out).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::labels::{LabelStore, LabelStoreError};
use super::positions::{game_positions, GamePosition, TrainGame, THEORETICAL_EMPTIES};
use super::trainer::TrainError;
use super::{stage_count, ProgressFn, Stage};
use crate::board::Board;
use crate::eval::weights::{LEAF_ENTRIES, MAX_LEAF_CORRECTION, SCALE};
use crate::eval::{PatternEval, Weights};
use crate::search::batch::map_with_tables;
use crate::search::tt::TableError;
use crate::search::{Limits, Search, Selectivity, TranspositionTable, Width};
use crate::setting::{check, OutOfRange, Setting};
use crate::work::StopHandle;

/// How to measure.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CalibrateConfig {
    /// The measuring searches' width: full, or Multi-ProbCut at a selectivity.
    pub width: Width,
    /// Deepest search from the exact positions.
    pub max_exact_depth: u32,
    /// Deepest search from the swing positions.
    pub max_swing_depth: u32,
    /// Shallowest search measured (shallower ones lean differently, and the leaves
    /// of deep searches are what is corrected).
    pub min_depth: u32,
    /// Measure-and-correct rounds.
    pub rounds: u32,
    /// Table per search, MiB.
    pub hash_mib: usize,
    /// Exact positions at each of 24, 23, 22 and 21 empties (those below 24 are
    /// solved), spread evenly over the games.
    pub exact_positions: usize,
    /// Positions per number of empties (12–59) for the swing between depths.
    pub swing_positions: usize,
}

impl Default for CalibrateConfig {
    fn default() -> Self {
        CalibrateConfig {
            width: Selectivity::from_sigmas(1.5).map_or(Width::Full, Width::Selective),
            max_exact_depth: 14,
            max_swing_depth: 12,
            min_depth: 4,
            rounds: 3,
            hash_mib: 8,
            exact_positions: 800,
            swing_positions: 60,
        }
    }
}

impl CalibrateConfig {
    /// Checks the ranges; the message names the setting.
    pub fn validate(&self) -> Result<(), OutOfRange> {
        let depths = self.min_depth..=20;
        if !(1..=19).contains(&self.min_depth)
            || !depths.contains(&self.max_exact_depth)
            || !depths.contains(&self.max_swing_depth)
        {
            return Err(OutOfRange::new(
                Setting::CalibrationDepths,
                format!("{}, {} and {}", self.min_depth, self.max_exact_depth, self.max_swing_depth),
                "1 to 19 (shallowest) and up to 20 (exact, swing) with the shallowest below both",
            ));
        }
        check(Setting::Rounds, self.rounds, 1..=10)?;
        Ok(())
    }
}

/// The positions a calibration searches.
#[derive(Clone, Debug, Default)]
pub(crate) struct CalibrationData {
    /// Positions with their exact scores for the side to move; two numbers of empties
    /// of opposite parity are needed for the exact measurement (24 and 21).
    pub exact: Vec<(Board, i32)>,
    /// Positions of every stage of the game, for the swing.
    pub swing: Vec<Board>,
}

/// Empties of the exact positions: 24, where WTHOR's theoretical scores are exact, and
/// its neighbours 23, 22 and 21 (solved), so that searches one ply apart in depth from
/// neighbouring sets end at the same leaves (searches of very different depths lean by
/// different amounts, and a pair of them would read that as a lean of the leaf).
pub(crate) const EXACT_EMPTIES: [u32; 4] = [THEORETICAL_EMPTIES, 23, 22, 21];

impl CalibrationData {
    /// From games: up to `exact_per_count` positions at each of `EXACT_EMPTIES` (those
    /// below 24 solved through `labels`, which keeps the solves), and up to
    /// `swing_per_empties` positions of every number of empties from 12 to 59, each
    /// spread evenly over the games.
    pub(crate) fn from_games(
        games: &[TrainGame],
        exact_per_count: usize,
        swing_per_empties: usize,
        labels: &mut LabelStore,
        order: &PatternEval,
        stop: &AtomicBool,
        progress: ProgressFn,
    ) -> Result<CalibrationData, LabelStoreError> {
        let positions = game_positions(games);
        let spread = |empties: u32, n: usize| -> Vec<&GamePosition> {
            let at: Vec<&GamePosition> = positions.iter().filter(|p| p.board.empty_count() == empties).collect();
            let step = (at.len() / n.max(1)).max(1);
            at.into_iter().step_by(step).take(n).collect()
        };
        let mut exact: Vec<(Board, i32)> =
            spread(EXACT_EMPTIES[0], exact_per_count).iter().map(|p| (p.board, i32::from(p.theoretical))).collect();
        let to_solve: Vec<Board> =
            EXACT_EMPTIES[1..].iter().flat_map(|&e| spread(e, exact_per_count)).map(|p| p.board).collect();
        labels.solve_missing(&to_solve, order, stop, progress)?;
        exact.extend(to_solve.iter().filter_map(|b| labels.exact(b).map(|v| (*b, i32::from(v)))));
        let swing = (12..=59).flat_map(|e| spread(e, swing_per_empties)).map(|p| p.board).collect();
        Ok(CalibrationData { exact, swing })
    }
}

/// One round's measurement: the lean at each leaf empties count, in discs for the
/// leaf's side to move (negative: underrated), and where it came from.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LeafLean {
    /// Empties at the leaf.
    pub empties: u32,
    /// The lean measured with the correction of the round.
    pub lean: f64,
    /// Measured against exact scores (else by the swing).
    pub exact: bool,
    /// Searches behind it.
    pub samples: u64,
}

/// What a calibration found.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Calibration {
    /// The correction per empties (0..=60), weight units.
    pub correction: Vec<i16>,
    /// Each round's measurement (the last one measures the correction before its
    /// own last update).
    pub rounds: Vec<Vec<LeafLean>>,
    /// The weights with the correction, their note saying how it was measured.
    #[serde(skip)]
    pub weights: Weights,
    /// Exact positions searched.
    pub exact_positions: usize,
    /// Swing positions searched.
    pub swing_positions: usize,
}

/// Fewest searches behind a measurement that is used.
const MIN_SAMPLES: u64 = 40;

/// Measures the lean of `weights`' searches on `data` and fits the correction
/// (starting from the weights' own), round after round. Deterministic: every position
/// is searched from a cleared table, whatever the thread count.
pub(crate) fn fit_leaf_correction(
    weights: &Weights,
    data: &CalibrationData,
    config: &CalibrateConfig,
    stop: &AtomicBool,
    progress: ProgressFn,
) -> Result<(Vec<i16>, Vec<Vec<LeafLean>>), TableError> {
    let mut correction: Vec<i32> = (0..LEAF_ENTRIES).map(|e| i32::from(weights.leaf_correction_at(e as u32))).collect();
    let mut rounds = Vec::new();
    let total = u64::from(config.rounds) * (data.exact.len() + data.swing.len()) as u64;
    let count = stage_count(Stage::Calibrate, total, 16, progress);
    for _ in 0..config.rounds {
        let mut w = weights.clone();
        w.leaf_correction = to_stored(&correction);
        let eval = PatternEval::new(&w);
        let tick = || count.add(1);
        let exact = exact_leans(&eval, &data.exact, config, stop, &tick)?;
        let swing = swing_leans(&eval, &data.swing, config, stop, &tick)?;
        if stop.load(Relaxed) {
            break;
        }
        let leans = combine(&exact, &swing);
        for l in &leans {
            correction[l.empties as usize] -= (l.lean * f64::from(SCALE)).round() as i32;
        }
        fill_unmeasured(&mut correction, &leans);
        rounds.push(leans);
    }
    count.finish();
    Ok((to_stored(&correction), rounds))
}

/// Calibrates `weights`' search-leaf correction on positions of `games`: picks the
/// exact and swing positions `config` asks for (solving those below 24 empties through
/// `store`, which keeps the solves), then measures and corrects round after round,
/// starting from the weights' own correction. Runs on the current rayon pool and is
/// deterministic whatever its size. A set `stop` ends it with [`TrainError::Stopped`]
/// (the solves made so far kept in `store`).
pub fn calibrate(
    weights: &Weights,
    games: &[TrainGame],
    config: &CalibrateConfig,
    store: &mut LabelStore,
    stop: &StopHandle,
    progress: ProgressFn,
) -> Result<Calibration, TrainError> {
    let stop = stop.flag();
    config.validate()?;
    let order = PatternEval::new(weights);
    let data = CalibrationData::from_games(
        games,
        config.exact_positions,
        config.swing_positions,
        store,
        &order,
        stop,
        progress,
    )?;
    let (correction, rounds) = fit_leaf_correction(weights, &data, config, stop, progress)?;
    if stop.load(Relaxed) {
        return Err(TrainError::Stopped);
    }
    let mut calibrated = weights.clone();
    calibrated.leaf_correction = correction.clone();
    let width = match config.width {
        Width::Full => "full width".to_string(),
        Width::Selective(s) => format!("selectivity {}", s.sigmas()),
    };
    calibrated.set_note(format!(
        "{}\nsearch-leaf correction: thorbook calibrate, {} exact and {} swing positions of {} games, {} rounds, \
         {width}",
        calibrated.note(),
        data.exact.len(),
        data.swing.len(),
        games.len(),
        config.rounds,
    ));
    Ok(Calibration {
        correction,
        rounds,
        weights: calibrated,
        exact_positions: data.exact.len(),
        swing_positions: data.swing.len(),
    })
}

fn to_stored(correction: &[i32]) -> Vec<i16> {
    let max = i32::from(MAX_LEAF_CORRECTION);
    correction.iter().map(|&c| i16::try_from(c.clamp(-max, max)).unwrap_or(0)).collect()
}

/// Empties counts no measurement reached take the nearest measured one's correction.
fn fill_unmeasured(correction: &mut [i32], leans: &[LeafLean]) {
    let (Some(lo), Some(hi)) = (leans.first().map(|l| l.empties), leans.last().map(|l| l.empties)) else { return };
    let (lo, hi) = (lo as usize, hi as usize);
    let (first, last) = (correction[lo], correction[hi]);
    correction[..lo].fill(first);
    correction[hi + 1..].fill(last);
}

/// Scores of `board` at depths 1..=max (index d − 1), `None` where the search was
/// exact or stopped.
fn depth_scores(
    eval: &PatternEval,
    tt: &mut TranspositionTable,
    board: &Board,
    max: u32,
    selectivity: Option<Selectivity>,
    stop: &AtomicBool,
) -> Vec<Option<i32>> {
    tt.clear();
    (1..=max.min(board.empty_count().saturating_sub(2)))
        .map(|d| {
            let limits = Limits { depth: Some(d), selectivity, ..Limits::default() };
            let r = Search::new(eval, tt, stop, 1).run(board, limits, false);
            (!r.exact && r.depth == d && !stop.load(Relaxed)).then(|| r.score()).flatten()
        })
        .collect()
}

/// Sum and count per key.
#[derive(Clone, Copy, Default)]
struct Mean {
    sum: f64,
    n: u64,
}

impl Mean {
    fn add(&mut self, x: f64) {
        self.sum += x;
        self.n += 1;
    }

    fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }
}

/// [`depth_scores`] of every board, in parallel, a table per worker.
fn all_depth_scores(
    eval: &PatternEval,
    boards: &[Board],
    max: u32,
    config: &CalibrateConfig,
    stop: &AtomicBool,
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<Vec<Option<i32>>>, TableError> {
    map_with_tables(boards, config.hash_mib, |table, board| {
        let scores = depth_scores(eval, table.get()?, board, max, config.width.selectivity(), stop);
        tick();
        Ok(scores)
    })
}

/// Signed error per (root empties, depth), from searches of the exact positions;
/// then the lean per leaf empties from pairs of opposite depth parity.
fn exact_leans(
    eval: &PatternEval,
    exact: &[(Board, i32)],
    config: &CalibrateConfig,
    stop: &AtomicBool,
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<LeafLean>, TableError> {
    let boards: Vec<Board> = exact.iter().map(|&(b, _)| b).collect();
    let scores = all_depth_scores(eval, &boards, config.max_exact_depth, config, stop, tick)?;
    // errors[root empties][depth]
    let mut errors = vec![[Mean::default(); 21]; 61];
    for (&(board, value), scores) in exact.iter().zip(&scores) {
        let e = board.empty_count() as usize;
        for (i, s) in scores.iter().enumerate() {
            if let Some(s) = s {
                errors[e][i + 1].add(f64::from(s - value));
            }
        }
    }
    Ok(leans_from_errors(&errors, config.min_depth))
}

/// The lean per leaf empties from signed errors per (root empties, depth): half the
/// difference between neighbouring roots' searches that end at the same leaf.
fn leans_from_errors(errors: &[[Mean; 21]], min_depth: u32) -> Vec<LeafLean> {
    let mut out = Vec::new();
    for leaf in 1..=60u32 {
        // Pairs of neighbouring roots (r, r − 1) whose searches end at `leaf`.
        let mut sum = 0.0;
        let mut weight = 0.0;
        let mut samples = 0;
        for r in leaf + 2..=60 {
            let (d1, d2) = ((r - leaf) as usize, (r - 1 - leaf) as usize);
            if d1 > 20 || d2 < min_depth as usize {
                continue;
            }
            let (a, b) = (errors[r as usize][d1], errors[r as usize - 1][d2]);
            if a.n < MIN_SAMPLES || b.n < MIN_SAMPLES {
                continue;
            }
            // E(r, d) = m + s(d)·lean with s(d) = +1 at even depth: m, about the same
            // at depths d and d − 1, cancels.
            let s = if d1 % 2 == 0 { 1.0 } else { -1.0 };
            let w = a.n.min(b.n) as f64;
            sum += w * s * (a.mean() - b.mean()) / 2.0;
            weight += w;
            samples += a.n + b.n;
        }
        if weight > 0.0 {
            out.push(LeafLean { empties: leaf, lean: sum / weight, exact: true, samples });
        }
    }
    out
}

/// The swing sums T(e) = lean(e) + lean(e − 1), from consecutive depths of the same
/// positions; then each empties count's lean from the two sums that contain it.
fn swing_leans(
    eval: &PatternEval,
    positions: &[Board],
    config: &CalibrateConfig,
    stop: &AtomicBool,
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<LeafLean>, TableError> {
    let scores = all_depth_scores(eval, positions, config.max_swing_depth, config, stop, tick)?;
    let mut sums = vec![Mean::default(); 61];
    for (board, scores) in positions.iter().zip(&scores) {
        let e = board.empty_count();
        for d in config.min_depth..scores.len() as u32 {
            if let (Some(a), Some(b)) = (scores[d as usize - 1], scores[d as usize]) {
                // v(d + 1) − v(d) = −s(d)·T(e − d).
                let s = if d % 2 == 0 { 1.0 } else { -1.0 };
                sums[(e - d) as usize].add(-s * f64::from(b - a));
            }
        }
    }
    Ok(leans_from_swing(&sums))
}

/// The lean per leaf empties from the swing sums T(e) = lean(e) + lean(e − 1): a
/// quarter of the two sums that contain it.
fn leans_from_swing(sums: &[Mean]) -> Vec<LeafLean> {
    let mut out = Vec::new();
    for leaf in 1..60usize {
        let (t0, t1) = (sums[leaf], sums[leaf + 1]);
        let measured: Vec<Mean> = [t0, t1].into_iter().filter(|t| t.n >= MIN_SAMPLES).collect();
        if measured.is_empty() {
            continue;
        }
        let lean = measured.iter().map(Mean::mean).sum::<f64>() / measured.len() as f64 / 2.0;
        let samples = measured.iter().map(|t| t.n).sum();
        out.push(LeafLean { empties: leaf as u32, lean, exact: false, samples });
    }
    out
}

/// The exact measurement where there is one, the swing elsewhere, by empties.
fn combine(exact: &[LeafLean], swing: &[LeafLean]) -> Vec<LeafLean> {
    let mut out: Vec<LeafLean> = exact.to_vec();
    out.extend(swing.iter().filter(|s| !exact.iter().any(|x| x.empties == s.empties)).cloned());
    out.sort_by_key(|l| l.empties);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean(x: f64, n: u64) -> Mean {
        Mean { sum: x * n as f64, n }
    }

    /// Signed errors made of a lean per leaf empties, with the parity of the depth,
    /// and a lean common to every search: the pairs find the leaf's lean, not the
    /// common one.
    #[test]
    fn exact_pairs_recover_the_lean_of_each_leaf() {
        let lean = |e: u32| -0.4 - 0.05 * f64::from(e % 7) - if e % 2 == 1 { 0.3 } else { 0.0 };
        let mut errors = vec![[Mean::default(); 21]; 61];
        for r in [24u32, 23, 22, 21] {
            for d in 1..=14u32 {
                let s = if d % 2 == 0 { 1.0 } else { -1.0 };
                errors[r as usize][d as usize] = mean(-0.2 + s * lean(r - d), 100);
            }
        }
        let found = leans_from_errors(&errors, 4);
        assert_eq!(found.first().map(|l| l.empties), Some(8));
        assert_eq!(found.last().map(|l| l.empties), Some(19));
        for l in &found {
            assert!((l.lean - lean(l.empties)).abs() < 1e-9, "{l:?} against {}", lean(l.empties));
        }
    }

    /// A slowly changing lean is found from the swing sums; too few samples, nothing.
    #[test]
    fn the_swing_recovers_a_smooth_lean() {
        let lean = |e: usize| -0.5 - 0.01 * e as f64;
        let mut sums = vec![Mean::default(); 61];
        for (e, s) in sums.iter_mut().enumerate().skip(20) {
            *s = mean(lean(e) + lean(e - 1), 50);
        }
        let found = leans_from_swing(&sums);
        assert_eq!(found.first().map(|l| l.empties), Some(19));
        for l in found.iter().filter(|l| l.empties > 20) {
            assert!((l.lean - lean(l.empties as usize)).abs() < 1e-9, "{l:?}");
        }
        sums[40] = mean(0.0, MIN_SAMPLES - 1);
        sums[41] = mean(0.0, MIN_SAMPLES - 1);
        assert!(!leans_from_swing(&sums).iter().any(|l| l.empties == 40));
    }
}
