//! How far an evaluation (static, or through a search of a given depth) is from the
//! targets of labeled positions: mean absolute error and sign agreement per phase.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use super::dataset::{Dataset, Labeled};
use super::{Progress, ProgressFn, Stage};
use crate::eval::weights::{phase_empties, PHASES};
use crate::eval::Evaluator;
use crate::search::{Limits, Search, Selectivity, TranspositionTable};

/// Error of one phase.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PhaseError {
    /// The phase.
    pub phase: usize,
    /// Empties it covers (most, least).
    pub empties: (u32, u32),
    /// Positions measured.
    pub positions: usize,
    /// Mean absolute error, in discs.
    pub mae: f64,
    /// Share of positions with a non-zero target whose score has the target's sign.
    pub sign_agreement: f64,
}

/// What to measure.
#[derive(Clone, Copy, Debug)]
pub struct MeasureConfig {
    /// Search depth (0: the static evaluation).
    pub depth: u32,
    /// Multi-ProbCut selectivity of the search (`None`: full width).
    pub selectivity: Option<Selectivity>,
    /// Only positions whose target is exact.
    pub exact_only: bool,
}

/// The score of `board` by `eval` searched to `depth` (0: static) with a fresh table.
pub fn scored<E: Evaluator>(eval: &E, tt: &mut TranspositionTable, l: &Labeled, config: &MeasureConfig) -> i32 {
    if config.depth == 0 {
        return eval.evaluate(&l.board);
    }
    tt.clear();
    let stop = AtomicBool::new(false);
    let limits = Limits { depth: Some(config.depth), selectivity: config.selectivity, ..Limits::default() };
    Search::new(eval, tt, &stop, 1).run(&l.board, limits, false).score().unwrap_or(0)
}

/// Per-phase error of `eval` on `data` (in parallel on the current rayon pool).
pub fn error_by_phase<E: Evaluator>(
    eval: &E,
    data: &Dataset,
    config: &MeasureConfig,
    progress: ProgressFn,
) -> Vec<PhaseError> {
    let total = data.phases.iter().flatten().filter(|l| l.exact || !config.exact_only).count() as u64;
    let done = AtomicU64::new(0);
    (0..PHASES)
        .map(|phase| {
            let rows: Vec<Labeled> = data
                .phases
                .get(phase)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .copied()
                .filter(|l| l.exact || !config.exact_only)
                .collect();
            let results: Vec<(i32, i32)> = rows
                .par_chunks(16)
                .flat_map_iter(|chunk| {
                    let mut tt = TranspositionTable::new(4);
                    let out: Vec<(i32, i32)> = chunk
                        .iter()
                        .map(|l| {
                            let v = scored(eval, &mut tt, l, config);
                            let n = done.fetch_add(1, Relaxed) + 1;
                            if n.is_multiple_of(64) || n == total {
                                progress(Progress { stage: Stage::Measure, done: n, total });
                            }
                            (v, l.target as i32)
                        })
                        .collect();
                    out
                })
                .collect();
            let n = results.len().max(1) as f64;
            let mae = results.iter().map(|(v, t)| (v - t).abs() as f64).sum::<f64>() / n;
            let signed: Vec<&(i32, i32)> = results.iter().filter(|(_, t)| *t != 0).collect();
            let agree = signed.iter().filter(|(v, t)| v.signum() == t.signum()).count() as f64;
            PhaseError {
                phase,
                empties: phase_empties(phase),
                positions: results.len(),
                mae,
                sign_agreement: agree / signed.len().max(1) as f64,
            }
        })
        .collect()
}
