//! Solving a set of endgame problems (an `.obf` file's positions): each position solved
//! exactly (or to win/draw/loss), checked against the scores the problem lists, with
//! per-position results and totals. The pipeline behind `thorbook solve`, reusable by
//! benchmarks and GUIs.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::{table_pv, Limits, Search, Settings, SettingsError, Solved, Solver, TranspositionTable};
use crate::eval::{AnyEval, WeightsError};
use crate::obf::Problem;
use crate::square::{format_moves, Move};

/// What to find for each problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Goal {
    /// The exact disc score and a best move.
    #[default]
    Exact,
    /// Only win, draw or loss (scores are reported as -1, 0 or +1).
    WinDrawLoss,
}

/// Why a problem set cannot be solved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProblemSetError {
    /// The settings are out of range or the table cannot be allocated.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The evaluation (which orders moves) cannot be loaded.
    #[error(transparent)]
    Eval(#[from] WeightsError),
    /// The thread pool could not be started.
    #[error("cannot start {threads} threads: {source}")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// Why.
        source: rayon::ThreadPoolBuildError,
    },
}

/// One problem's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProblemResult {
    /// The problem's line in its file.
    pub line: usize,
    /// Empty squares.
    pub empties: u32,
    /// The move found (`PS` when the side to move must pass).
    pub best_move: String,
    /// The score found, for the side to move (its sign only under [`Goal::WinDrawLoss`]).
    pub score: i32,
    /// The best score the problem lists, if it lists any (its sign under WLD).
    pub expected_score: Option<i32>,
    /// Whether the score found is the listed one.
    pub score_ok: Option<bool>,
    /// Whether the move found is among the listed best moves (exact goal only).
    pub move_ok: Option<bool>,
    /// Nodes searched.
    pub nodes: u64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Nodes per second.
    pub nodes_per_second: f64,
    /// The principal variation from the table.
    pub pv: String,
}

/// The sums over a set.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ProblemTotals {
    /// Problems solved.
    pub positions: usize,
    /// Nodes over all problems.
    pub nodes: u64,
    /// Seconds over all problems.
    pub seconds: f64,
    /// Problems whose score differs from the listed one.
    pub wrong_scores: usize,
    /// Problems whose move is not a listed best move.
    pub wrong_moves: usize,
    /// The run was stopped (its stop handle) before the last problem was solved.
    pub interrupted: bool,
}

impl ProblemTotals {
    /// Nodes per second over the set.
    pub(crate) fn nodes_per_second(&self) -> f64 {
        self.nodes as f64 / self.seconds.max(1e-9)
    }

    fn add(&mut self, r: &ProblemResult) {
        self.positions += 1;
        self.nodes += r.nodes;
        self.seconds += r.seconds;
        self.wrong_scores += usize::from(r.score_ok == Some(false));
        self.wrong_moves += usize::from(r.move_ok == Some(false));
    }
}

/// Solves problems one after the other with one table (cleared of nothing between
/// problems: each starts a new search generation) on `settings.threads` threads.
pub struct ProblemSolver {
    stop: Arc<AtomicBool>,
    tt: TranspositionTable,
    eval: AnyEval,
    pool: rayon::ThreadPool,
    threads: usize,
    goal: Goal,
}

impl ProblemSolver {
    /// A solver with the table size, threads and evaluation of `settings` (its depth
    /// and time settings do not apply: problems are solved to the end).
    pub fn new(settings: &Settings, goal: Goal) -> Result<ProblemSolver, ProblemSetError> {
        let resolved = settings.resolve()?;
        let tt = resolved.table()?;
        let eval = resolved.eval().load()?;
        let threads = resolved.threads();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|source| ProblemSetError::Threads { threads, source })?;
        Ok(ProblemSolver { stop: Arc::new(AtomicBool::new(false)), tt, eval, pool, threads, goal })
    }

    /// The flag that stops the solver (from a signal handler or another thread): the
    /// problem being solved is abandoned and [`ProblemSolver::run`] returns.
    pub(crate) fn stop_handle(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Solves one problem (not exactly once the stop handle is set: check it).
    pub fn solve(&self, p: &Problem) -> ProblemResult {
        let board = p.position.board;
        let wld = self.goal == Goal::WinDrawLoss;
        let stop = &*self.stop;
        self.tt.new_search();
        let start = Instant::now();
        let (solved, nodes) = self.pool.install(|| {
            if wld {
                let mut solver = Solver::new(&self.tt, stop, self.threads).with_eval(&self.eval);
                let r = solver.solve(&board, -1, 1);
                (r, solver.nodes)
            } else {
                let mut search = Search::new(&self.eval, &self.tt, stop, self.threads);
                let r = search.run(&board, Limits { exact: true, ..Limits::default() }, false);
                let best = r.moves.first().map(|m| Solved { score: m.score, best: Some(m.mv) });
                (best.unwrap_or(Solved { score: board.final_score(), best: None }), r.nodes)
            }
        });
        let seconds = start.elapsed().as_secs_f64();
        let expected = p.best_score().map(|s| if wld { s.signum() } else { s });
        let score = if wld { solved.score.signum() } else { solved.score };
        let best = solved.best.unwrap_or(Move::Pass);
        ProblemResult {
            line: p.line,
            empties: board.empty_count(),
            best_move: best.to_string(),
            score,
            expected_score: expected,
            score_ok: expected.map(|e| e == score),
            move_ok: if p.scores.is_empty() || wld { None } else { Some(p.best_moves().contains(&best)) },
            nodes,
            seconds,
            nodes_per_second: nodes as f64 / seconds.max(1e-9),
            pv: format_moves(&table_pv(&self.tt, &board, 60)),
        }
    }

    /// Solves every problem in order, handing each result to `on_result` as it is
    /// found, and returns the totals. Once the stop handle is set, the problem being
    /// solved is dropped and the totals of those solved come back `interrupted`.
    pub fn run(&self, problems: &[Problem], on_result: &mut dyn FnMut(&ProblemResult)) -> ProblemTotals {
        let mut totals = ProblemTotals::default();
        for p in problems {
            let r = self.solve(p);
            if self.stop.load(Relaxed) {
                totals.interrupted = true;
                break;
            }
            totals.add(&r);
            on_result(&r);
        }
        totals
    }
}
