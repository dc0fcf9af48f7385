//! Training the evaluation: positions from games and self-play, deduplicated by
//! canonical board ([`TrainGame`](positions::TrainGame),
//! [`SelfPlayPositions`](selfplay::SelfPlayPositions)); targets from exact solves, the WTHOR
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
pub(crate) mod fit;
pub(crate) mod labels;
pub(crate) mod measure;
pub(crate) mod positions;
pub(crate) mod probcut;
pub(crate) mod selfplay;
pub(crate) mod trainer;

pub(crate) use positions::LabelKind;

use crate::parallel_count::ParallelCount;

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

/// A [`ParallelCount`] of `stage`'s units reported as [`Progress`].
pub(crate) fn stage_count<'a>(
    stage: Stage,
    total: u64,
    every: u64,
    progress: ProgressFn<'a>,
) -> ParallelCount<impl Fn(u64, u64) + Sync + 'a> {
    ParallelCount::new(total, every, move |done, total| progress(Progress { stage, done, total }))
}

/// The bundled archives' games that carry a theoretical score, for the tests.
#[cfg(test)]
pub(crate) fn bundled_games() -> Vec<positions::TrainGame> {
    let options = crate::thor::LoadOptions { strict: true, index: false };
    let db = crate::thor::ThorDatabase::load(&crate::thor::bundled_sources(), options).unwrap();
    db.games.iter().filter_map(positions::TrainGame::from_thor).collect()
}
