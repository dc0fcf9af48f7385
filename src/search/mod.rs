//! Search: the exact endgame solver, the midgame principal-variation search with
//! iterative deepening and time control, the shared transposition table (all
//! crate-private: programs search through [`crate::engine::Engine`]), and how hard
//! to search: playing [`Level`]s and the [`Settings`] every command and pipeline
//! shares, checked once into what a search runs with
//! ([`Settings::effective_strength`] tells it).

pub(crate) mod batch;
pub(crate) mod endgame;
pub(crate) mod level;
pub(crate) mod midgame;
pub(crate) mod moves;
#[cfg(any(feature = "cli", feature = "testing", test))]
pub(crate) mod problems;
pub(crate) mod settings;
pub(crate) mod split;
pub(crate) mod tt;

pub use endgame::RootMove;
#[cfg(any(feature = "cli", feature = "testing", test))]
pub(crate) use endgame::Solved;
pub(crate) use endgame::Solver;
pub use level::Level;
pub(crate) use midgame::Search;
pub use midgame::{Limits, SearchResult, Selectivity};
pub(crate) use moves::MAX_MOVES;
#[cfg(any(feature = "cli", feature = "testing", test))]
pub(crate) use settings::MAX_THREADS;
pub(crate) use settings::{default_threads, Resolved};
pub use settings::{Settings, SettingsError, Strength, Width};
pub use tt::TableError;
pub(crate) use tt::{TableKey, TranspositionTable};

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::board::Board;
use crate::square::Move;

/// A node budget shared by every thread of one search: each searcher adds the nodes it
/// has visited every few thousand nodes and when it finishes, and all stop once the
/// total reaches the limit — so a split's helpers draw on one budget instead of each
/// getting what was left.
#[derive(Debug)]
pub(crate) struct NodeBudget {
    limit: u64,
    spent: AtomicU64,
}

impl NodeBudget {
    /// A budget of `limit` nodes (`u64::MAX`: none).
    pub(crate) fn new(limit: u64) -> Arc<NodeBudget> {
        Arc::new(NodeBudget { limit, spent: AtomicU64::new(0) })
    }

    /// Adds `nodes` spent.
    #[inline]
    pub(crate) fn spend(&self, nodes: u64) {
        if nodes > 0 && self.limit != u64::MAX {
            self.spent.fetch_add(nodes, Relaxed);
        }
    }

    /// Whether the nodes reported so far reach the limit.
    #[inline]
    pub(crate) fn exhausted(&self) -> bool {
        self.limit != u64::MAX && self.spent.load(Relaxed) >= self.limit
    }
}

/// The principal variation stored in the table from `board`: best moves while the
/// table has them (at most `max_len`), passes included.
pub(crate) fn table_pv(tt: &TranspositionTable, board: &Board, max_len: usize) -> Vec<Move> {
    let mut pv = Vec::new();
    let mut b = *board;
    while pv.len() < max_len {
        let moves = b.legal_moves();
        if moves == 0 {
            if b.opponent_moves() == 0 {
                break;
            }
            pv.push(Move::Pass);
            b = b.pass();
            continue;
        }
        let Some(sq) = tt.probe(TableKey::of(&b)).and_then(|e| e.best) else { break };
        if moves & sq.bit() == 0 {
            break;
        }
        pv.push(Move::Place(sq));
        b = b.play(sq).expect("checked legal");
    }
    pv
}

/// From this many empties an exact label is solved as `solve` solves a problem: short
/// selective searches seed the move order and an aspiration window around their score
/// (`labels solve` on WTH_2014, CPU time against the full-window solve: ×0.94 at 16
/// empties, ×0.90 at 18, ×0.81 at 20, ×0.73 at 22, ×0.72 at 24; none at 14). Below it
/// the full-window solve is as fast and needs no evaluation beyond the move order.
pub(crate) const SEEDED_SOLVE_FROM: u32 = 16;

/// The exact score of `board` for the side to move (perfect play by both), on one
/// thread with `tt`, by the faster route for its size (see [`SEEDED_SOLVE_FROM`]);
/// `eval` only orders moves and seeds, so the score does not depend on it. `None` once
/// `stop` is set.
pub(crate) fn exact_score<E: crate::eval::IncrementalEvaluator>(
    eval: &E,
    tt: &TranspositionTable,
    stop: &std::sync::atomic::AtomicBool,
    board: &Board,
) -> Option<i32> {
    if board.empty_count() < SEEDED_SOLVE_FROM {
        let mut solver = Solver::new(tt, stop, 1).with_eval(eval);
        let score = solver.solve(board, -64, 64).score;
        return (!solver.aborted()).then_some(score);
    }
    let result = Search::new(eval, tt, stop, 1).run(board, Limits { exact: true, ..Limits::default() }, false);
    match result.moves.first() {
        _ if !result.exact => None,
        Some(best) => Some(best.score),
        None => Some(board.final_score()),
    }
}

#[cfg(test)]
mod precedence_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod truth_tests;
