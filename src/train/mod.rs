//! Training the pattern evaluation from games: targets from the WTHOR theoretical
//! scores and exact solves ([`dataset`]), ridge regression per phase by
//! preconditioned conjugate gradient ([`fit`]), Multi-ProbCut σ fitted from the
//! trained evaluation's own searches ([`probcut`]), and error measurements against
//! exact scores on held-out games ([`measure`]).
//!
//! Sits above `search` (exact solves and the searches that fit ProbCut need it) and
//! below `book` and `engine`, which only consume the weights.

pub mod dataset;
pub mod fit;
pub mod measure;
pub mod probcut;

pub use dataset::{Dataset, Labeling, TrainGame};
pub use fit::{train, PhaseReport, TrainConfig, TrainReport};

/// Progress of a long training step: `done` of `total` units of `stage`.
#[derive(Clone, Copy, Debug)]
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
pub enum Stage {
    /// Replaying games and solving their endgames (unit: games).
    Collect,
    /// Fitting the phases (unit: phases).
    Fit,
    /// Measuring search scores for ProbCut (unit: positions).
    ProbCut,
    /// Measuring error (unit: positions).
    Measure,
}

impl Stage {
    /// A label for progress bars.
    pub fn label(self) -> &'static str {
        match self {
            Stage::Collect => "collecting",
            Stage::Fit => "fitting phases",
            Stage::ProbCut => "probcut searches",
            Stage::Measure => "measuring",
        }
    }
}

/// A progress callback (called from worker threads).
pub type ProgressFn<'a> = &'a (dyn Fn(Progress) + Sync);
