//! The exact endgame solver: the final disc differential (empties to the winner) under
//! perfect play, or only win/draw/loss.
//!
//! Layers by number of empty squares, because the best technique changes with the
//! size of the tree:
//! - 1–`SHALLOW_MAX` empties: null-window search without a table ([`shallow`]);
//! - above: null-window search with a transposition table (bounds and best move),
//!   fastest-first ordering (fewest opponent replies first, corners counted double,
//!   potential mobility as tie-break, the table's move before all; from
//!   [`EVAL_ORDER_MIN`] empties the evaluation after the opponent's best reply
//!   instead of the tie-breaks), stability
//!   cut-offs, and, with more than one thread, the remaining moves of a node split
//!   between threads once its first move has been searched (young brothers wait,
//!   shared with the midgame search: [`super::split`]).
//!
//! PV nodes use principal-variation search: the first move with the full window, the
//! others with a null window and a re-search when they fail high.
//!
//! Where the time goes (FFO #20–39, one thread, `perf record` at 3dd5b48, shares of
//! the whole run): `flips` 15% (the moves of the small solvers and of every
//! ordering), `ordered` 12% and `nws_moves` 10% (with the table, key and ETC inlined),
//! `legal_moves` 10% (the replies counted to order moves), the 5–6-empty searches 9%,
//! the evaluation 9% (ordering from [`EVAL_ORDER_MIN`] empties and the selective
//! passes), the 1–4-empty solvers 6%, the midgame seeding and passes' own nodes 5%,
//! and 12% the system zeroing the table's pages before the first problem (outside the
//! times `solve` reports).
//! The last move of a game counts its flips with `last_flip_count` (a table per
//! line) instead of finding them.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

mod order;
mod shallow;

use super::moves::{MoveList, OrderedMove};
use super::split::{self, SplitSearch};
use super::tt::{TableKey, TranspositionTable};
use super::NodeBudget;
use crate::board::{flips, legal_moves, Board, Squares};
use crate::eval::Evaluator;
use crate::square::{Move, Square};
use crate::stability::stable_discs;
use order::{fastest_first, ordered_moves};

/// Above this many empties the solver uses the transposition table and sorted moves.
pub(crate) const SHALLOW_MAX: u32 = 6;
/// From this many empties, children are looked up in the table before searching
/// (FFO #20–39 on one thread: 245.5 M nodes from 14 empties, 237.4 M from 11 in no
/// more time; from 9, 231.7 M but slower; with today's seeding, 112.2 M from 13,
/// 109.9 M from 11, 107.5 M from 9, all within 2% of 4.6 s).
const ETC_MIN: u32 = 11;
/// From this many empties a node's moves may be split between threads.
const SPLIT_MIN: u32 = 14;
/// From this many empties moves are ordered with the evaluation (after the opponent's
/// best reply) too. FFO #20–39 on one thread, with the seeding of
/// `midgame::EXACT_SEED_SELECTIVITY`: from 12, 101.7 M nodes in 5.26 s; from 13,
/// 106.4 M, 4.84 s; from 14, 109.9 M, 4.58 s; from 16, 121.4 M, 4.58 s.
pub(crate) const EVAL_ORDER_MIN: u32 = 14;
/// Nodes between checks of the stop flag.
const STOP_CHECK_INTERVAL: u64 = 1024;

/// Alpha from which a stability cut-off is worth trying, by empties (a cut needs
/// many stable opponent discs, so low alphas never cut).
const STABILITY_THRESHOLD: [i32; 61] = {
    let mut t = [99; 61];
    let mut e = 4;
    while e <= 60 {
        let v = 2 * e as i32 - 2;
        t[e] = if v > 64 { 64 } else { v };
        e += 1;
    }
    t
};

/// The stability cut-off: the score's upper bound from the opponent's stable discs,
/// when it is at most `alpha`. Counting stable discs is costly, so it is done only
/// from [`STABILITY_THRESHOLD`] and when the opponent has discs enough.
#[inline]
fn stability_cut(p: u64, o: u64, alpha: i32, empties: u32) -> Option<i32> {
    // Stable discs are at most all the opponent's: with too few, no cut is possible.
    if alpha < STABILITY_THRESHOLD[empties as usize] || 64 - 2 * o.count_ones() as i32 > alpha {
        return None;
    }
    let upper = 64 - 2 * stable_discs(o, p).count_ones() as i32;
    (upper <= alpha).then_some(upper)
}

/// The solver's state for one thread: shared table, own node counter.
pub(crate) struct Solver<'a> {
    tt: &'a TranspositionTable,
    stop: &'a AtomicBool,
    /// Nodes visited by this solver (and the helpers it spawned).
    pub(crate) nodes: u64,
    threads: usize,
    next_check: u64,
    aborted: bool,
    /// Stop at this time (checked every few thousand nodes).
    pub(crate) deadline: Option<Instant>,
    /// The node budget, shared with the helpers of its splits and the search above.
    budget: Arc<NodeBudget>,
    /// Nodes of `nodes` already reported to the budget.
    reported: u64,
    /// Flags of the splits this solver works under: set when a sibling refuted the node.
    cut_flags: Vec<Arc<AtomicBool>>,
    /// Orders moves at [`EVAL_ORDER_MIN`] empties and above (none: fastest-first only).
    eval: Option<&'a dyn Evaluator>,
    /// Root moves [`Solver::solve_root`] skips.
    pub(crate) root_exclude: u64,
}

/// A root move with its score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootMove {
    /// The move.
    pub mv: Move,
    /// Its score for the side to move: exact when inside the window it was searched
    /// with, otherwise a bound.
    pub score: i32,
}

/// The result of an exact search of one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Solved {
    /// Exact score for the side to move (or −1/0/+1 in win/loss/draw mode, scaled as
    /// the window it was searched with).
    pub(crate) score: i32,
    /// A best move (`Pass` when the side to move must pass, `None` when the game is over).
    pub(crate) best: Option<Move>,
}

impl<'a> Solver<'a> {
    /// A solver over a shared table; `threads` > 1 enables node splitting on the
    /// current rayon pool.
    pub(crate) fn new(tt: &'a TranspositionTable, stop: &'a AtomicBool, threads: usize) -> Solver<'a> {
        Solver {
            tt,
            stop,
            nodes: 0,
            threads,
            next_check: STOP_CHECK_INTERVAL,
            aborted: false,
            deadline: None,
            budget: NodeBudget::new(u64::MAX),
            reported: 0,
            cut_flags: Vec::new(),
            eval: None,
            root_exclude: 0,
        }
    }

    /// Orders moves far from the end with `eval` as well as by mobility: the
    /// evaluation predicts which move is best where mobility alone guesses poorly.
    pub(crate) fn with_eval(mut self, eval: &'a dyn Evaluator) -> Solver<'a> {
        self.eval = Some(eval);
        self
    }

    /// The moves of a node with ordering costs (sorted by the caller).
    #[inline]
    fn ordered(&self, board: &Board, moves: u64, tt_move: Option<Square>) -> MoveList {
        // Children that will probe the table (above the table-less shallow search)
        // start loading their buckets as they are listed.
        let tt = (board.empty_count() > SHALLOW_MAX + 1).then_some(self.tt);
        let mut list = MoveList::new();
        match self.eval {
            // The evaluation after the opponent's best reply, one disc weighing a
            // quarter of a reply: a move's static value misjudges it more often (FFO
            // #20–39 on one thread: 267.9 M nodes ordered by the static value, 245.5 M
            // by the reply's, in the same time; weights of 8 and 32 did worse).
            Some(eval) if board.empty_count() >= EVAL_ORDER_MIN => {
                ordered_moves(&mut list, board, moves, tt_move, tt, |child, _, replies| {
                    -eval.after_best_reply(child, replies) * 16
                })
            }
            _ => fastest_first(&mut list, board, moves, tt_move, tt),
        }
        list
    }

    /// True once the stop flag was seen; results after that are meaningless.
    pub(crate) fn aborted(&self) -> bool {
        self.aborted
    }

    /// Draw on `budget`, shared with other searchers.
    pub(crate) fn share_budget(&mut self, budget: Arc<NodeBudget>) {
        self.budget = budget;
        self.reported = self.nodes;
    }

    /// Reports the nodes visited since the last report to the budget.
    #[inline]
    pub(crate) fn report_nodes(&mut self) {
        self.budget.spend(self.nodes - self.reported);
        self.reported = self.nodes;
    }

    /// Counts a finished helper's nodes (it reported them itself).
    fn merge_helper_nodes(&mut self, nodes: u64) {
        self.nodes += nodes;
        self.reported += nodes;
    }

    /// Whether a stop was asked for: flag, deadline, node budget, or a refuted split above.
    fn must_stop(&self) -> bool {
        self.stop.load(Relaxed)
            || self.budget.exhausted()
            || self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.cut_flags.iter().any(|f| f.load(Relaxed))
    }

    #[inline]
    fn check_stop(&mut self) -> bool {
        if self.nodes >= self.next_check {
            self.next_check = self.nodes + STOP_CHECK_INTERVAL;
            self.report_nodes();
            if self.must_stop() {
                self.aborted = true;
            }
        }
        self.aborted
    }

    /// Exact score of `board` within (`alpha`, `beta`) (fail-soft), and a best move.
    pub(crate) fn solve(&mut self, board: &Board, alpha: i32, beta: i32) -> Solved {
        let moves = self.solve_root(board, alpha, beta, false);
        match moves.first() {
            Some(m) => Solved { score: m.score, best: Some(m.mv) },
            None => Solved { score: board.final_score(), best: None },
        }
    }

    /// Searches the root moves, best first. With `all`, every move gets an exact score
    /// within the window (otherwise only the best is exact, the others are upper
    /// bounds). Empty when the game is over; a single `Pass` when the side must pass.
    pub(crate) fn solve_root(&mut self, board: &Board, alpha: i32, beta: i32, all: bool) -> Vec<RootMove> {
        let moves = board.legal_moves();
        if moves == 0 {
            if board.opponent_moves() == 0 {
                return Vec::new();
            }
            let v = -self.pvs(&board.pass(), -beta, -alpha).0;
            return vec![RootMove { mv: Move::Pass, score: v }];
        }
        self.nodes += 1;
        let tt_move = self.tt.probe(TableKey::of(board)).and_then(|e| e.best);
        let mut list = self.ordered(board, moves & !self.root_exclude, tt_move);
        list.sort();
        let mut out = split::root(self, board, &(), list.as_slice(), alpha, beta, all);
        // Stable sort: among equal scores, the first searched (the exact one) stays first.
        out.sort_by_key(|m| std::cmp::Reverse(m.score));
        // A stopped root has not seen every move: its best is no bound on the position.
        if self.aborted {
            return out;
        }
        if let (Some(first), 0) = (out.first(), self.root_exclude) {
            if let Move::Place(sq) = first.mv {
                self.tt.store(TableKey::of(board), board.empty_count() as u8, 0, alpha, beta, first.score, Some(sq));
            }
        }
        out
    }

    /// Principal-variation search of a node with a full window.
    pub(crate) fn pvs(&mut self, board: &Board, mut alpha: i32, beta: i32) -> (i32, Option<Square>) {
        self.nodes += 1;
        let empties = board.empty_count();
        if empties <= SHALLOW_MAX {
            return (self.pvs_small(board.player, board.opponent, alpha, beta), None);
        }
        let key = TableKey::of(board);
        let mut tt_move = None;
        if let Some(e) = self.tt.probe(key) {
            tt_move = e.best;
            if e.answers(empties, 0) {
                if e.lower == e.upper || e.lower >= beta {
                    return (e.lower, e.best);
                }
                if e.upper <= alpha {
                    return (e.upper, e.best);
                }
            }
        }
        let moves = board.legal_moves();
        if moves == 0 {
            if board.opponent_moves() == 0 {
                return (board.final_score(), None);
            }
            let (v, _) = self.pvs(&board.pass(), -beta, -alpha);
            return (-v, None);
        }
        let mut list = self.ordered(board, moves, tt_move);
        list.sort();
        let alpha0 = alpha;
        let mut best = -65;
        let mut best_move = None;
        for (i, m) in list.iter().enumerate() {
            let child = board.play_flips(m.square, m.flips);
            let v = if i == 0 {
                -self.pvs(&child, -beta, -alpha).0
            } else {
                let v = -self.nws_moves(&child, -alpha - 1, Some(m.replies));
                if v > alpha && v < beta && !self.aborted {
                    -self.pvs(&child, -beta, -alpha).0
                } else {
                    v
                }
            };
            if self.aborted {
                return (0, None);
            }
            if v > best {
                best = v;
                best_move = Some(m.square);
                if v > alpha {
                    alpha = v;
                    if v >= beta {
                        break;
                    }
                }
            }
        }
        self.tt.store(key, empties as u8, 0, alpha0, beta, best, best_move);
        (best, best_move)
    }

    /// Full-window search of a small position: the first move with the window, the
    /// others with a null window, re-searched when they fall inside it.
    fn pvs_small(&mut self, p: u64, o: u64, mut alpha: i32, beta: i32) -> i32 {
        self.nodes += 1;
        let moves = legal_moves(p, o);
        if moves == 0 {
            if legal_moves(o, p) == 0 {
                return Board { player: p, opponent: o }.final_score();
            }
            return -self.pvs_small(o, p, -beta, -alpha);
        }
        let empties = (!(p | o)).count_ones();
        let mut best = -65;
        for (i, sq) in Squares(moves).enumerate() {
            let f = flips(p, o, sq);
            let (cp, co) = (o ^ f, p | f | sq.bit());
            let mut v;
            if i == 0 {
                v = -self.pvs_small(cp, co, -beta, -alpha);
            } else {
                v = -self.nws_shallow(cp, co, -alpha - 1, empties - 1);
                if v > alpha && v < beta {
                    v = -self.pvs_small(cp, co, -beta, -alpha);
                }
            }
            if v > best {
                best = v;
                if v > alpha {
                    alpha = v;
                    if v >= beta {
                        break;
                    }
                }
            }
        }
        best
    }

    /// Null-window search: the score if it is ≤ alpha (an upper bound), or a lower
    /// bound above alpha.
    pub(crate) fn nws(&mut self, board: &Board, alpha: i32) -> i32 {
        self.nws_moves(board, alpha, None)
    }

    /// [`Solver::nws`] where the parent may know the legal moves already (its ordering
    /// counted them).
    fn nws_moves(&mut self, board: &Board, alpha: i32, known: Option<u64>) -> i32 {
        let empties = board.empty_count();
        if empties <= SHALLOW_MAX {
            return self.nws_shallow_moves(board.player, board.opponent, alpha, empties, known);
        }
        self.nodes += 1;
        if self.check_stop() {
            return 0;
        }
        let (p, o) = (board.player, board.opponent);
        if let Some(upper) = stability_cut(p, o, alpha, empties) {
            return upper;
        }
        let key = TableKey::of(board);
        let mut tt_move = None;
        if let Some(e) = self.tt.probe(key) {
            tt_move = e.best;
            if e.answers(empties, 0) {
                if e.upper <= alpha {
                    return e.upper;
                }
                if e.lower > alpha {
                    return e.lower;
                }
            }
        }
        let mut moves = known.unwrap_or_else(|| legal_moves(p, o));
        if moves == 0 {
            if legal_moves(o, p) == 0 {
                return board.final_score();
            }
            return -self.nws(&board.pass(), -alpha - 1);
        }
        let mut best = -65;
        let mut best_move = None;
        // Below ETC_MIN, where no child is looked up first, the table's move is searched
        // before the others are listed and ordered, as Edax and Egaroucid do: where it
        // refutes the node, their ordering is never paid. (FFO #20–39 on one thread,
        // 917b4dd, which added it with two other changes, against 4914d26, three rounds: the
        // same 63.49 M nodes, 3.22 s against 3.21 s median: no gain measured either way.)
        let mut searched = 0;
        if let Some(sq) = tt_move.filter(|sq| empties < ETC_MIN && moves & sq.bit() != 0) {
            let v = -self.nws(&board.play_flips(sq, flips(p, o, sq)), -alpha - 1);
            (best, best_move, searched) = (v, Some(sq), 1);
            moves &= !sq.bit();
            if v > alpha || moves == 0 {
                if self.aborted {
                    return 0;
                }
                self.tt.store(key, empties as u8, 0, alpha, alpha + 1, best, best_move);
                return best;
            }
        }
        let mut list = self.ordered(board, moves, tt_move);
        if empties >= ETC_MIN {
            // Enhanced transposition cutoff (the children's buckets were prefetched as
            // they were listed).
            if let Some(v) = self.tt.refuting_child(board, list.as_slice(), empties - 1, 0, alpha + 1) {
                return v;
            }
        }
        list.sort();
        let n = list.len() + searched;
        for (i, m) in list.iter().enumerate() {
            let v = -self.nws_moves(&board.play_flips(m.square, m.flips), -alpha - 1, Some(m.replies));
            if v > best {
                best = v;
                best_move = Some(m.square);
                if v > alpha {
                    break;
                }
            }
            if split::splits_now(self, board, &(), searched + i + 1, n) {
                // The first moves did not cut: the others are searched in parallel.
                if let (v, Some(sq)) = split::split(self, board, &(), &list.as_slice()[i + 1..], alpha, alpha + 1) {
                    if v > best {
                        best = v;
                        best_move = Some(sq);
                    }
                }
                break;
            }
        }
        if self.aborted {
            return 0;
        }
        self.tt.store(key, empties as u8, 0, alpha, alpha + 1, best, best_move);
        best
    }
}

impl SplitSearch for Solver<'_> {
    type Node<'n> = ();

    fn worth_splitting(&self, board: &Board, _: &()) -> bool {
        self.threads > 1 && board.empty_count() >= SPLIT_MIN
    }

    fn child(&mut self, board: &Board, _: &(), mv: &OrderedMove, alpha: i32, beta: i32) -> i32 {
        let child = board.play_flips(mv.square, mv.flips);
        if beta == alpha + 1 {
            -self.nws_moves(&child, -beta, Some(mv.replies))
        } else {
            -self.pvs(&child, -beta, -alpha).0
        }
    }

    fn helper(&self) -> Self {
        let mut helper = Solver::new(self.tt, self.stop, self.threads);
        helper.eval = self.eval;
        helper.deadline = self.deadline;
        helper.budget = self.budget.clone();
        helper.cut_flags = self.cut_flags.clone();
        helper
    }

    fn add_cut_flag(&mut self, flag: Arc<AtomicBool>) {
        self.cut_flags.push(flag);
    }

    fn must_stop(&self) -> bool {
        Solver::must_stop(self)
    }

    fn stopped(&self) -> bool {
        self.aborted
    }

    fn abort(&mut self) {
        self.aborted = true;
    }

    fn finish(&mut self) -> u64 {
        self.report_nodes();
        self.nodes
    }

    fn absorb(&mut self, nodes: u64) {
        self.merge_helper_nodes(nodes);
    }
}
