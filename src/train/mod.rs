//! Training the evaluation: positions from games and self-play, deduplicated by
//! canonical board ([`TrainGame`](dataset::TrainGame),
//! [`SelfPlayConfig`](selfplay::SelfPlayConfig)); targets from exact solves, the WTHOR
//! theoretical scores and searches, kept in a resumable label store
//! ([`LabelStore`](labels::LabelStore)); ridge regression per phase by preconditioned
//! conjugate gradient (`fit`); bootstrapping rounds that relabel the midgame with the
//! last round's evaluation and keep a round only when the held-out error falls
//! ([`Trainer`](trainer::Trainer)); Multi-ProbCut σ fitted from the trained
//! evaluation's own searches ([`ProbCutConfig`](probcut::ProbCutConfig)); the
//! correction that keeps searches from leaning toward the side that moves last
//! ([`calibrate`]); and error measurements against exact scores on held-out games
//! ([`measure_error`](measure::measure_error)).
//!
//! Sits above `search` (solves and label searches need it) and below `book` and
//! `engine`, which only consume the weights.

pub(crate) mod calibrate;
pub(crate) mod dataset;
pub(crate) mod fit;
pub(crate) mod labeljob;
pub(crate) mod labels;
pub(crate) mod measure;
pub(crate) mod probcut;
pub(crate) mod selfplay;
pub(crate) mod trainer;

pub(crate) use dataset::LabelKind;

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

/// Progress of a long training step: `done` of `total` units of `stage`.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Progress {
    /// What is running.
    pub stage: Stage,
    /// Units done.
    pub done: u64,
    /// Units in all.
    pub total: u64,
}

/// The steps of training.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// Playing self-play games (unit: games).
    SelfPlay,
    /// Solving positions exactly (unit: positions).
    Solve,
    /// Labelling positions by search (unit: positions).
    Search,
    /// Fitting the phases (unit: phases).
    Fit,
    /// Measuring search scores for ProbCut (unit: positions).
    ProbCut,
    /// Measuring the search-leaf correction (unit: positions searched).
    Calibrate,
    /// Measuring error (unit: positions).
    Measure,
}

impl Stage {
    /// A label for progress bars.
    pub fn label(self) -> &'static str {
        match self {
            Stage::SelfPlay => "self-play",
            Stage::Solve => "exact solves",
            Stage::Search => "label searches",
            Stage::Fit => "fitting phases",
            Stage::ProbCut => "probcut searches",
            Stage::Calibrate => "leaf calibration",
            Stage::Measure => "measuring",
        }
    }
}

/// A progress callback (called from worker threads).
pub(crate) type ProgressFn<'a> = &'a (dyn Fn(Progress) + Sync);

/// A count of `stage`'s units shared by parallel workers: reported each time it passes
/// a multiple of `every`, and its end once, by [`ParallelCount::finish`] after the
/// workers joined. A worker's report can be overtaken by a later one; were the end
/// reported by a worker, an earlier count could arrive after it and look like a new
/// stage to a progress meter.
pub(crate) struct ParallelCount<'a> {
    stage: Stage,
    total: u64,
    every: u64,
    done: AtomicU64,
    progress: ProgressFn<'a>,
}

impl<'a> ParallelCount<'a> {
    pub(crate) fn new(stage: Stage, total: u64, every: u64, progress: ProgressFn<'a>) -> Self {
        ParallelCount { stage, total, every: every.max(1), done: AtomicU64::new(0), progress }
    }

    /// Counts `n` more units (from any worker); reports below the end only.
    pub(crate) fn add(&self, n: u64) {
        let done = self.done.fetch_add(n, Relaxed) + n;
        if done < self.total && done / self.every != (done - n) / self.every {
            (self.progress)(Progress { stage: self.stage, done, total: self.total });
        }
    }

    /// The units counted so far.
    pub(crate) fn done(&self) -> u64 {
        self.done.load(Relaxed)
    }

    /// Reports the count as it ends (the whole total unless stopped), after every worker.
    pub(crate) fn finish(&self) {
        if self.total > 0 {
            (self.progress)(Progress { stage: self.stage, done: self.done(), total: self.total });
        }
    }
}

/// The bundled archives' games that carry a theoretical score, for the tests.
#[cfg(test)]
pub(crate) fn bundled_games() -> Vec<dataset::TrainGame> {
    let options = crate::thor::LoadOptions { strict: true, index: false };
    let db = crate::thor::ThorDatabase::load(&crate::thor::bundled_sources(), options).unwrap();
    db.games.iter().filter_map(dataset::TrainGame::from_thor).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use rayon::prelude::*;

    use super::*;

    /// Counts `total` units in parallel, `per_add` at a time, and returns the reports in
    /// the order they arrived.
    fn reports(total: u64, every: u64, per_add: u64) -> Vec<u64> {
        let seen = Mutex::new(Vec::new());
        let record = |p: Progress| seen.lock().unwrap().push(p.done);
        let count = ParallelCount::new(Stage::SelfPlay, total, every, &record);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        pool.install(|| (0..total / per_add).into_par_iter().for_each(|_| count.add(per_add)));
        count.finish();
        seen.into_inner().unwrap()
    }

    #[test]
    fn the_end_is_reported_once_and_last_whatever_the_workers_order() {
        for _ in 0..20 {
            let got = reports(10_000, 64, 1);
            // Every multiple of 64 below the end once, then the end.
            assert_eq!(got.len(), 10_000 / 64 + 1);
            assert_eq!(got.last(), Some(&10_000));
            assert!(got[..got.len() - 1].iter().all(|&d| d < 10_000 && d % 64 == 0), "{got:?}");
        }
    }

    #[test]
    fn an_add_of_many_units_reports_once_when_it_passes_a_multiple() {
        // Adds of 50 pass a multiple of 64 at 100, 150 (128), 200 (192), ...
        let mut got = reports(1_000, 64, 50);
        got.sort_unstable();
        let crossings = (1..20u64).filter(|k| (k * 50) / 64 != ((k - 1) * 50) / 64).count();
        assert_eq!(got.len(), crossings + 1, "{got:?}");
        assert_eq!(got.last(), Some(&1_000));
    }
}
