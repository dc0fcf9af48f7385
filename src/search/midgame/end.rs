//! Selective searches to the end of the game, run between the midgame iterations that
//! seed an exact solve and the solve itself (Edax and Egaroucid do the same: Edax at
//! 73%, 87%, 95% and 98% before 100%, Egaroucid at 88% then 100%).
//!
//! A pass searches every line to the end, as the solve does, but cuts a null-window
//! node when a shallow search says, with the pass's confidence, on which side of the
//! window the exact score lies (Multi-ProbCut; [`end_sigma`] gives the spread of the
//! exact score around the shallow search's). Nodes of [`END_HANDOFF`] empties or fewer
//! are the exact solver's in every pass. A pass costs a fraction of the solve and
//! leaves in the table, for the nodes it searched, the move that refuted each or
//! proved its value at the real depth; the solve then tries those first and starts
//! from a narrow window around the pass's score. FFO #20–39 on one thread
//! (`thorbook solve`): 98.4 M nodes without a pass, 64.7 M after one at 1.5σ.
//!
//! The nodes of a pass are ordered fastest first (fewest opponent replies), from
//! [`END_EVAL_ORDER_MIN`] empties with the evaluation after the opponent's best reply
//! as well: the order the solver uses far from the end, with the evaluation read
//! incrementally.

use super::{Search, Selectivity};
use crate::board::{adjacent_empties, flips, masks, Board, Squares};
use crate::eval::IncrementalEvaluator;
use crate::search::endgame::RootMove;
use crate::search::moves::{MoveList, OrderedMove};
use crate::search::tt::TableKey;
use crate::square::Square;

/// At this many empties and fewer, a node searched to the end is the exact solver's,
/// also in a selective pass: below, a shallow search to decide a cut costs more than
/// the exact search it would save. FFO #20–39 on one thread, one pass at 1.5σ: 73.8 M
/// nodes handing off at 8, 75.7 M at 10, 78.7 M at 12, 83.9 M at 14 (in 3.9–4.4 s,
/// the fewer nodes the less time).
pub(crate) const END_HANDOFF: u32 = 8;

/// From this many empties a pass orders its moves with the evaluation too; below,
/// fastest first alone, as the solver does there (FFO #20–39 on one thread: 64.7 M
/// nodes in 3.68 s ordering every node with the evaluation, 65.1 M in 3.37 s from 12,
/// 65.4 M from 14).
const END_EVAL_ORDER_MIN: u32 = 12;

/// Passes run from this many empties (below, the exact solve alone is as fast).
const PASSES_MIN_EMPTIES: u32 = 16;

/// One pass at 1.5σ; from [`TWO_PASSES_MIN_EMPTIES`] empties, a second at 2.5σ.
/// FFO #20–39 on one thread: one pass at 1.5σ everywhere 65.1 M nodes (at 1.1σ 73.5 M,
/// at 2.0σ 84.4 M; 1.1σ then 2.0σ 65.9 M, 0.8σ then 1.5σ 77.7 M), a second at 2.5σ
/// from 24 empties 63.6 M (from 22, 64.4 M). Four hard positions of 24–25 empties
/// (`scripts/hard-thor-24-26.obf`): 517 M nodes after one pass at 1.5σ, 439 M after
/// 1.5σ and 2.5σ, 440 M after 1.1σ and 2.0σ.
const PASSES: [Selectivity; 2] = match (Selectivity::from_tenths(15), Selectivity::from_tenths(25)) {
    (Some(a), Some(b)) => [a, b],
    _ => panic!("valid selectivities"),
};

/// From this many empties an exact search runs both passes.
const TWO_PASSES_MIN_EMPTIES: u32 = 24;

/// The selective passes before an exact search of a position of `empties` empties.
pub(super) fn end_passes(empties: u32) -> &'static [Selectivity] {
    match empties {
        e if e >= TWO_PASSES_MIN_EMPTIES => &PASSES,
        e if e >= PASSES_MIN_EMPTIES => &PASSES[..1],
        _ => &[],
    }
}

/// The shallow search that decides a pass's cut at `empties`: about a quarter of
/// the empties, of the parity of the position's own (an evaluation after the same
/// side's move errs the same way).
fn end_probcut_depth(empties: u32) -> u32 {
    let d = empties / 4;
    if (empties - d) % 2 == 1 {
        d.saturating_sub(1)
    } else {
        d
    }
}

/// How far short of a cut's bound the static evaluation may lie for the cut's
/// shallow search to be tried (see [`Search::end_probcut`]).
const PROBCUT_GATE: i32 = 3;

/// The standard deviation, in discs, of the exact score around a full-width search of
/// `depth` plies with the bundled evaluation: 7.43 − 0.38 × depth, fitted on 1,347
/// Thor positions of 12–24 empties from 2000–2012 (exact solves, and searches of depth
/// 0 to 10) by least squares over the cells, weighted by their counts; the number of
/// empties made no difference (−0.009 a disc an empty). The spread falls from 7.5 at
/// depth 0 to 3.8 at depth 10.
fn end_sigma(depth: u32) -> f32 {
    7.43 - 0.38 * depth as f32
}

impl<E: IncrementalEvaluator> Search<'_, E> {
    /// Multi-ProbCut at a null-window node searched to the end at `empties` empties:
    /// the bound a shallow search predicts with the pass's confidence `t` (σ), rounded
    /// to the parity of a final score (always even), or `None`.
    pub(super) fn end_probcut(&mut self, board: &Board, features: &E::Features, alpha: i32, t: f32) -> Option<i32> {
        let empties = board.empty_count();
        let depth = end_probcut_depth(empties);
        let margin = ((t * end_sigma(depth)).ceil() as i32).max(1);
        let beta = alpha + 1;
        let high = beta + margin;
        // A shallow search is tried only on the side of the window where the static
        // evaluation already lies nearly as far out as the cut needs (Egaroucid's
        // gate): elsewhere it rarely cuts, and most of its cost would be wasted (FFO
        // #20–39 on one thread: 60.2 M nodes trying both sides everywhere, 57.9 M and
        // 3.5% less time within 3 discs, 58.4 M within 6, 58.8 M within 0).
        let guess = self.eval.evaluate_features(board, features);
        if high < 64 && guess >= high - PROBCUT_GATE && self.pvs(board, features, high - 1, high, depth) >= high {
            return Some(beta + (beta & 1));
        }
        let low = alpha - margin;
        if low > -64 && guess <= low + PROBCUT_GATE && self.pvs(board, features, low, low + 1, depth) <= low {
            return Some(alpha - (alpha & 1));
        }
        None
    }

    /// The moves of a node searched to the end, best first: the table's move, then
    /// fewest opponent replies (a corner reply counting double), ties broken as the
    /// solver breaks them (potential mobility, corners taken) below
    /// [`END_EVAL_ORDER_MIN`] empties and by the evaluation after the opponent's best
    /// reply from there.
    pub(super) fn order_to_end(
        &mut self,
        board: &Board,
        features: &E::Features,
        moves: u64,
        tt_move: Option<Square>,
    ) -> MoveList {
        let with_eval = board.empty_count() >= END_EVAL_ORDER_MIN;
        let mut list = MoveList::new();
        for sq in Squares(moves) {
            let f = flips(board.player, board.opponent, sq);
            let child = board.play_flips(sq, f);
            self.tt.prefetch(TableKey::of(&child));
            let replies = child.legal_moves();
            let cost = if Some(sq) == tt_move {
                i32::MIN
            } else {
                let mobility = (replies.count_ones() + (replies & masks::CORNERS).count_ones()) as i32 * 64;
                if with_eval {
                    let after = self.eval.after_move(features, sq, f);
                    mobility - best_reply_value(self.eval, &child, &after, replies) * 16
                } else {
                    let potential = adjacent_empties(child.opponent, child.empties()).count_ones() as i32;
                    let corners = (child.opponent & masks::CORNERS).count_ones() as i32;
                    mobility + potential * 4 - corners * 32
                }
            };
            list.push(OrderedMove { square: sq, flips: f, cost, replies });
        }
        list.sort();
        list
    }

    /// The exact solve of the root, from a window of ±2 around `guess` (the last
    /// iteration's score), opened on the side it fails to; with `all`, every move
    /// with the full window.
    pub(super) fn solve_exact(&mut self, board: &Board, guess: i32, all: bool) -> Vec<RootMove> {
        if all {
            return self.solver.solve_root(board, -64, 64, true);
        }
        let (mut lo, mut hi) = ((guess - 2).max(-64), (guess + 2).min(64));
        loop {
            let moves = self.solver.solve_root(board, lo, hi, false);
            let Some(best) = moves.first().filter(|_| !self.stopped()) else { return moves };
            // A fail-soft bound: the score is at most (at least) it.
            if best.score <= lo && lo > -64 {
                (lo, hi) = (-64, best.score + 1);
            } else if best.score >= hi && hi < 64 {
                (lo, hi) = (best.score - 1, 64);
            } else {
                return moves;
            }
        }
    }

    /// A node searched to the end at or below [`END_HANDOFF`] empties, or any such node
    /// of the exact search: the solver's, with the window (`alpha`, `beta`).
    pub(super) fn solve_node(&mut self, board: &Board, alpha: i32, beta: i32) -> i32 {
        if beta == alpha + 1 {
            self.solver.nws(board, alpha)
        } else {
            self.solver.pvs(board, alpha, beta).0
        }
    }

    /// A selective pass's iteration at the root: every line to the end at `selectivity`.
    pub(super) fn end_pass(
        &mut self,
        board: &Board,
        selectivity: Selectivity,
        guess: Option<i32>,
        all: bool,
    ) -> Vec<RootMove> {
        self.selectivity = Some(selectivity);
        self.root(board, board.empty_count(), guess, all)
    }
}

/// The value of `child` for the side that moved into it after the best reply of the
/// side to move, by the static evaluation of each reply (incremental from the child's
/// features); after its pass when it has none.
fn best_reply_value<E: IncrementalEvaluator>(eval: &E, child: &Board, features: &E::Features, replies: u64) -> i32 {
    if replies == 0 {
        return eval.evaluate_features(&child.pass(), &eval.after_pass(features));
    }
    let mut best = i32::MAX;
    for sq in Squares(replies) {
        let f = child.flips(sq);
        best = best.min(eval.evaluate_features(&child.play_flips(sq, f), &eval.after_move(features, sq, f)));
    }
    best
}
