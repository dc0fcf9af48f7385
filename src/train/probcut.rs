//! Fitting Multi-ProbCut: how far a deep search's score strays from its shallow
//! companion's (`probcut_shallow`), measured with the trained evaluation's own
//! full-width searches on sample positions of every number of empties.
//!
//! The measured standard deviations per (empties, depth) are smoothed by a
//! least-squares plane `σ = a + b·depth + c·empties` (weighted by sample count),
//! which also gives the depths deeper than were measured; the table holds it per
//! phase of the weights and per depth.

use std::sync::atomic::AtomicBool;

use rayon::prelude::*;

use super::positions::Dataset;
use super::{stage_count, ProgressFn, Stage};
use crate::eval::weights::phase_empties;
use crate::eval::IncrementalEvaluator;
use crate::search::midgame::{probcut_shallow, PROBCUT_MIN_DEPTH};
use crate::search::{Limits, Search, TableError, TranspositionTable};

/// Deep depths the table covers (0..PROBCUT_DEPTHS).
pub(crate) const PROBCUT_DEPTHS: usize = 32;

/// How to fit.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProbCutConfig {
    /// Sample positions per number of empties.
    pub positions_per_empties: usize,
    /// Deepest search measured.
    pub max_measured_depth: u32,
}

impl Default for ProbCutConfig {
    fn default() -> Self {
        ProbCutConfig { positions_per_empties: 30, max_measured_depth: 8 }
    }
}

/// The fitted table, as the weight file stores it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ProbCutTable {
    /// σ in discs, `sigma[phase * depths + depth]`; 0 where no cut applies.
    pub sigma: Vec<f32>,
    /// Depths per phase.
    pub depths: usize,
    /// The plane `σ = a + b·depth + c·empties`.
    pub plane: [f64; 3],
}

/// A measuring worker's table.
pub(crate) const TABLE_MIB: usize = 8;

/// Measures search scores on sample positions of `data` and fits the table for
/// weights of `phases` phases, each worker with a table of `table_mib` (one that cannot
/// be had is the error).
pub(crate) fn fit_probcut<E: IncrementalEvaluator>(
    eval: &E,
    phases: usize,
    data: &Dataset,
    config: &ProbCutConfig,
    progress: ProgressFn,
    table_mib: usize,
) -> Result<ProbCutTable, TableError> {
    let max_depth = config.max_measured_depth;
    let samples: Vec<_> = (1..=60u32)
        .flat_map(|empties| {
            let rows = data.at(empties);
            let step = (rows.len() / config.positions_per_empties.max(1)).max(1);
            rows.iter().step_by(step).take(config.positions_per_empties).map(|l| l.board)
        })
        .collect();
    let count = stage_count(Stage::ProbCut, samples.len() as u64, 1, progress);
    // Per sample: scores at depths 1..=max (index = depth), where the search is not exact.
    let chunks: Vec<Vec<(u32, Vec<i32>)>> = samples
        .par_chunks(8)
        .map(|chunk| {
            let mut tt = TranspositionTable::try_new(table_mib)?;
            let stop = AtomicBool::new(false);
            let out: Vec<_> = chunk
                .iter()
                .map(|&board| {
                    tt.clear();
                    let empties = board.empty_count();
                    let mut v = vec![0; max_depth as usize + 1];
                    for d in 1..=max_depth.min(empties.saturating_sub(1)) {
                        let limits = Limits { depth: Some(d), ..Limits::default() };
                        v[d as usize] =
                            Search::new(eval, &tt, &stop, 1).run(&board, limits, false).score().unwrap_or(0);
                    }
                    count.add(1);
                    (empties, v)
                })
                .collect();
            Ok(out)
        })
        .collect::<Result<_, TableError>>()?;
    count.finish();
    let scores: Vec<(u32, Vec<i32>)> = chunks.into_iter().flatten().collect();
    // Cells: (depth, empties, σ, count).
    let mut cells = Vec::new();
    for d in PROBCUT_MIN_DEPTH..=max_depth {
        let s = probcut_shallow(d) as usize;
        for empties in d + 1..=60 {
            let diffs: Vec<f64> =
                scores.iter().filter(|(e, _)| *e == empties).map(|(_, v)| f64::from(v[d as usize] - v[s])).collect();
            if diffs.len() >= 8 {
                let var = diffs.iter().map(|x| x * x).sum::<f64>() / diffs.len() as f64;
                cells.push((f64::from(d), f64::from(empties), var.sqrt(), diffs.len() as f64));
            }
        }
    }
    let plane = fit_plane(&cells);
    let mut sigma = vec![0f32; phases * PROBCUT_DEPTHS];
    for phase in 0..phases {
        let (hi, lo) = phase_empties(phase, phases);
        let e = f64::from(hi + lo) / 2.0;
        for d in PROBCUT_MIN_DEPTH as usize..PROBCUT_DEPTHS {
            if (d as u32) < lo {
                let s = plane[0] + plane[1] * d as f64 + plane[2] * e;
                sigma[phase * PROBCUT_DEPTHS + d] = s.clamp(0.5, 24.0) as f32;
            }
        }
    }
    Ok(ProbCutTable { sigma, depths: PROBCUT_DEPTHS, plane })
}

/// Weighted least squares of `σ = a + b·depth + c·empties` over (depth, empties, σ, weight).
fn fit_plane(cells: &[(f64, f64, f64, f64)]) -> [f64; 3] {
    let mut m = [[0f64; 3]; 3];
    let mut r = [0f64; 3];
    for &(d, e, s, w) in cells {
        let x = [1.0, d, e];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] += w * x[i] * x[j];
            }
            r[i] += w * x[i] * s;
        }
    }
    solve3(m, r).unwrap_or([4.0, 0.0, 0.0])
}

/// Solves a 3×3 system by Gaussian elimination with partial pivoting.
fn solve3(mut m: [[f64; 3]; 3], mut r: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[pivot][col].abs() < 1e-9 {
            return None;
        }
        m.swap(col, pivot);
        r.swap(col, pivot);
        for row in col + 1..3 {
            let f = m[row][col] / m[col][col];
            let pivot_row = m[col];
            for (x, p) in m[row][col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= f * p;
            }
            r[row] -= f * r[col];
        }
    }
    let mut x = [0f64; 3];
    for i in (0..3).rev() {
        x[i] = (r[i] - (i + 1..3).map(|k| m[i][k] * x[k]).sum::<f64>()) / m[i][i];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plane_is_recovered() {
        let cells: Vec<_> = (3..9)
            .flat_map(|d| {
                (10..50).step_by(5).map(move |e| (d as f64, e as f64, 1.5 + 0.3 * d as f64 + 0.05 * e as f64, 10.0))
            })
            .collect();
        let p = fit_plane(&cells);
        assert!((p[0] - 1.5).abs() < 1e-6 && (p[1] - 0.3).abs() < 1e-6 && (p[2] - 0.05).abs() < 1e-6, "{p:?}");
    }

    #[test]
    fn a_table_that_cannot_be_had_is_an_error_not_a_panic() {
        use crate::train::positions::{LabelKind, Labeled};
        let mut rng = crate::testutil::Rng(3);
        let positions = (0..16).map(|_| Labeled {
            board: crate::testutil::random_position(&mut rng, 30),
            target: 0,
            kind: LabelKind::Exact,
            weight: 1.0,
        });
        let data = Dataset::from_positions(positions);
        let eval = crate::eval::PatternEval::bundled();
        let got = fit_probcut(&eval, 30, &data, &ProbCutConfig::default(), &|_| {}, 0);
        assert!(matches!(got, Err(TableError::Size { mib: 0 })));
        assert!(fit_probcut(
            &eval,
            30,
            &data,
            &ProbCutConfig { max_measured_depth: 3, ..Default::default() },
            &|_| {},
            1
        )
        .is_ok());
    }
}
