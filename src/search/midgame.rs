//! Midgame search: negamax with principal-variation search, the shared transposition
//! table, move ordering (table move, then shallow-search or mobility ordering),
//! aspiration windows and iterative deepening under a depth, node or time limit.
//! The trained evaluation's pattern indices are carried from the root move by move
//! ([`IncrementalEvaluator`]). With more than one thread, a node from
//! `SPLIT_MIN_DEPTH` searches its first move alone and the others in parallel (young
//! brothers wait), the first to refute the node stopping its siblings.
//! When the remaining depth reaches the number of empty squares, the exact endgame
//! solver takes over, so deep enough searches return proven scores.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use rayon::prelude::*;
use std::time::{Duration, Instant};

use super::endgame::{RootMove, Solver};
use super::moves::{MoveList, OrderedMove};
use super::tt::TranspositionTable;
use super::{table_pv, NodeBudget};
use crate::board::{flips, Board, Squares};
use crate::eval::{Evaluator, IncrementalEvaluator};
use crate::square::{Move, Square};

/// When to stop searching.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Maximum depth in plies (`None`: until another limit, or exact).
    pub depth: Option<u32>,
    /// Node budget.
    pub nodes: Option<u64>,
    /// Time budget: the search stops at this time at the latest. Without a `target` it
    /// deepens until this time (the last, unfinished iteration still counts when it
    /// has found a better root move).
    pub time: Option<Duration>,
    /// The time the search aims to take (a clock's share for this move): no iteration
    /// starts after half of it has passed, since the next one would cost at least as
    /// much again. `time` stays the hard stop.
    pub target: Option<Duration>,
    /// Search to the end of the game (exact score).
    pub exact: bool,
    /// Root moves not to search (a book builder looks for the best move leaving the
    /// book). The result lists only the other moves; empty if none is left.
    pub exclude: u64,
    /// Multi-ProbCut: cut a null-window node when a shallow search is this many
    /// standard deviations beyond the window (`None`: search every move). Exact
    /// solves are never cut.
    pub selectivity: Option<Selectivity>,
}

/// Multi-ProbCut confidence: how many standard deviations beyond the window a shallow
/// search must be to cut (1.0 ≈ 84% of cuts right, 2.0 ≈ 98%). Kept in hundredths so
/// that limits compare exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Selectivity(u16);

impl Selectivity {
    /// `t` standard deviations, 0.1..=10.
    pub fn from_sigmas(t: f32) -> Option<Selectivity> {
        (t.is_finite() && (0.1..=10.0).contains(&t)).then(|| Selectivity((t * 100.0).round() as u16))
    }

    /// `hundredths` of a standard deviation, 10..=1000.
    pub(crate) const fn from_hundredths(hundredths: u16) -> Option<Selectivity> {
        if hundredths >= 10 && hundredths <= 1000 {
            Some(Selectivity(hundredths))
        } else {
            None
        }
    }

    /// The number of standard deviations.
    pub(crate) fn sigmas(self) -> f32 {
        self.0 as f32 / 100.0
    }

    /// In tenths of a standard deviation, rounded, as book files store it (1..=100).
    pub(crate) fn tenths(self) -> u8 {
        u8::try_from(((self.0 + 5) / 10).max(1)).unwrap_or(u8::MAX)
    }

    /// From tenths of a standard deviation as stored: `None` for 0 (full width) and
    /// beyond 10 σ.
    pub(crate) fn from_tenths(tenths: u8) -> Option<Selectivity> {
        (1..=100).contains(&tenths).then(|| Selectivity(u16::from(tenths) * 10))
    }
}

/// Multi-ProbCut is tried at this remaining depth and above.
pub(crate) const PROBCUT_MIN_DEPTH: u32 = 3;

/// The shallow companion depth of a ProbCut at `depth`: about half of it, with the
/// same parity (evaluations at odd and even depths differ systematically).
pub(crate) fn probcut_shallow(depth: u32) -> u32 {
    let mut s = depth / 2;
    if (depth - s) % 2 == 1 {
        s -= 1;
    }
    s.max(1)
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// The root moves with scores, best first (scores of moves other than the best may
    /// be bounds unless all moves were asked for).
    pub moves: Vec<RootMove>,
    /// Depth of the last completed iteration; 0 when the search was stopped before
    /// the first one completed and the moves are ordered by the static evaluation.
    pub depth: u32,
    /// True when the scores are exact (the search reached the end of the game).
    pub exact: bool,
    /// Nodes searched.
    pub nodes: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Principal variation from the root.
    pub pv: Vec<Move>,
}

impl SearchResult {
    /// The best move, if the game is not over.
    pub fn best_move(&self) -> Option<Move> {
        self.moves.first().map(|m| m.mv)
    }

    /// The best score.
    pub fn score(&self) -> Option<i32> {
        self.moves.first().map(|m| m.score)
    }
}

/// Takes from an iteration stopped before it finished the root move it found better
/// than the last iteration's best: `partial` lists the moves it completed, in the
/// order searched, the last best first. A later move scoring above the first was
/// searched again with an open window, so it is better at the deeper depth; scores
/// of moves that did not beat the first are bounds and tell nothing.
fn adopt_unfinished(result: &mut SearchResult, partial: &[RootMove]) {
    let (Some(first), Some(best)) = (partial.first(), partial.iter().max_by_key(|m| m.score)) else {
        return;
    };
    if best.mv == first.mv || best.score <= first.score || result.moves.is_empty() {
        return;
    }
    let best = *best;
    result.moves.retain(|m| m.mv != best.mv);
    result.moves.insert(0, best);
}

/// Depth below which moves are ordered by mobility rather than by a shallow search.
const SORT_BY_SEARCH_MIN_DEPTH: u32 = 4;
/// In an exact search, the midgame iterations stop this many plies short of the end;
/// they only seed the table's move ordering for the exact solve. FFO #20–39 on one
/// thread, with today's solver: 165.1 M nodes, 8.4–8.5 s stopping 14 plies short;
/// 157.4 M, 7.9–8.1 s at 12; 135.8 M, 7.0–7.7 s at 10 (with the solver before its
/// shallow searches were sorted, 8 and 11 were within 2% of 10, and seeding past
/// depth 10 cost more time than it saved).
const EXACT_JUMP: u32 = 10;
/// ... and never go deeper than this: beyond it the seeding costs more than it saves.
const EXACT_SEED_MAX_DEPTH: u32 = 10;
/// From this depth a node's moves after the first are searched in parallel (with
/// more than one thread): shallower nodes cost less than sharing them. Time to depth
/// 20 at 2σ, 10 Thor positions at 36 empties, 2 threads (`scripts/search_speed.sh 20
/// 2.0 2`): 15.8–16.0 s splitting from depth 5, 15.5 from 7, 15.7–16.1 from 9.
const SPLIT_MIN_DEPTH: u32 = 7;
/// ... when it has at least this many moves.
const SPLIT_MIN_MOVES: usize = 3;
/// Nodes between time checks.
const CHECK_INTERVAL: u64 = 2048;

/// A midgame searcher for one thread.
pub(crate) struct Search<'a, E: IncrementalEvaluator> {
    eval: &'a E,
    tt: &'a TranspositionTable,
    solver: Solver<'a>,
    nodes: u64,
    next_check: u64,
    deadline: Option<Instant>,
    /// The node budget, shared with the solver and every helper.
    budget: Arc<NodeBudget>,
    /// Nodes of `nodes` already reported to the budget.
    reported: u64,
    aborted: bool,
    stop: &'a AtomicBool,
    threads: usize,
    root_exclude: u64,
    selectivity: Option<Selectivity>,
    /// Flags of the splits this searcher works under: set when a sibling refuted the
    /// node, so that this searcher's work would be thrown away.
    cut_flags: Vec<Arc<AtomicBool>>,
}

impl<'a, E: IncrementalEvaluator> Search<'a, E> {
    /// A searcher over a shared table; `threads` is passed to the endgame solver.
    pub(crate) fn new(eval: &'a E, tt: &'a TranspositionTable, stop: &'a AtomicBool, threads: usize) -> Self {
        Search {
            eval,
            tt,
            solver: Solver::new(tt, stop, threads).with_eval(eval),
            nodes: 0,
            next_check: CHECK_INTERVAL,
            deadline: None,
            budget: NodeBudget::new(u64::MAX),
            reported: 0,
            aborted: false,
            stop,
            threads,
            root_exclude: 0,
            selectivity: None,
            cut_flags: Vec::new(),
        }
    }

    /// A searcher for another thread, with the same table, limits and stop flag.
    fn helper(&self) -> Search<'a, E> {
        let mut h = Search::new(self.eval, self.tt, self.stop, self.threads);
        h.deadline = self.deadline;
        h.budget = self.budget.clone();
        h.solver.deadline = self.deadline;
        h.solver.share_budget(self.budget.clone());
        h.selectivity = self.selectivity;
        h.cut_flags = self.cut_flags.clone();
        h
    }

    /// Reports this searcher's and its solver's new nodes to the shared budget.
    fn report_nodes(&mut self) {
        self.budget.spend(self.nodes - self.reported);
        self.reported = self.nodes;
        self.solver.report_nodes();
    }

    /// Searches `moves` from `board` in parallel, each with the window (`alpha`,
    /// `beta`); `None` where a search was stopped. With `cut_at`, the first move
    /// scoring that much or more refutes the node and stops the others (their `None`
    /// is then expected); any other stop marks this search stopped.
    #[allow(clippy::too_many_arguments)]
    fn parallel_children(
        &mut self,
        board: &Board,
        features: &E::Features,
        moves: &[OrderedMove],
        alpha: i32,
        beta: i32,
        depth: u32,
        cut_at: Option<i32>,
    ) -> Vec<Option<i32>> {
        let cut = Arc::new(AtomicBool::new(false));
        let results: Vec<(Option<i32>, u64)> = moves
            .par_iter()
            .map(|m| {
                if cut.load(Relaxed) {
                    return (None, 0);
                }
                let mut h = self.helper();
                if cut_at.is_some() {
                    h.cut_flags.push(cut.clone());
                }
                if h.budget.exhausted() {
                    return (None, 0);
                }
                let child_features = h.eval.after_move(features, m.square, m.flips);
                let v = -h.pvs(&board.play_flips(m.square, m.flips), &child_features, -beta, -alpha, depth - 1);
                h.report_nodes();
                let stopped = h.aborted || h.solver.aborted();
                if !stopped && cut_at.is_some_and(|c| v >= c) {
                    cut.store(true, Relaxed);
                }
                ((!stopped).then_some(v), h.total_nodes())
            })
            .collect();
        let refuted = cut.load(Relaxed);
        results
            .into_iter()
            .map(|(v, n)| {
                // The helper reported its nodes itself.
                self.nodes += n;
                self.reported += n;
                if v.is_none() && !refuted {
                    self.aborted = true;
                }
                v
            })
            .collect()
    }

    /// Young brothers wait: the moves after a node's first, which did not cut, searched
    /// in parallel with a null window at `alpha`; then, at a PV node, the moves that
    /// beat alpha searched again with the full window, one after the other. Returns the
    /// best score and move among `moves` (fail-soft), or stops.
    #[allow(clippy::too_many_arguments)]
    fn split(
        &mut self,
        board: &Board,
        features: &E::Features,
        moves: &[OrderedMove],
        mut alpha: i32,
        beta: i32,
        depth: u32,
    ) -> (i32, Option<Square>) {
        let split_alpha = alpha;
        let bounds = self.parallel_children(board, features, moves, alpha, alpha + 1, depth, Some(beta));
        let mut best = (-65, None);
        if self.stopped() {
            return best;
        }
        for (bound, m) in bounds.into_iter().zip(moves) {
            // No value: a sibling refuted the node and stopped this one.
            let Some(mut v) = bound else { continue };
            if v > split_alpha && v < beta {
                // A lower bound only (a PV node): the value is searched for again.
                let child = board.play_flips(m.square, m.flips);
                let cf = self.eval.after_move(features, m.square, m.flips);
                if alpha > split_alpha {
                    v = -self.pvs(&child, &cf, -alpha - 1, -alpha, depth - 1);
                }
                if v > alpha && v < beta && !self.stopped() {
                    v = -self.pvs(&child, &cf, -beta, -alpha, depth - 1);
                }
                if self.stopped() {
                    return best;
                }
            }
            if v > best.0 {
                best = (v, Some(m.square));
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

    /// Whether this search or its solver was stopped: the values just returned are
    /// meaningless and nothing may be stored from them.
    #[inline]
    fn stopped(&self) -> bool {
        self.aborted || self.solver.aborted()
    }

    fn total_nodes(&self) -> u64 {
        self.nodes + self.solver.nodes
    }

    #[inline]
    fn check(&mut self) -> bool {
        if self.nodes >= self.next_check {
            self.next_check = self.nodes + CHECK_INTERVAL;
            self.report_nodes();
            if self.stop.load(Relaxed)
                || self.budget.exhausted()
                || self.cut_flags.iter().any(|f| f.load(Relaxed))
                || self.deadline.is_some_and(|d| Instant::now() >= d)
            {
                self.aborted = true;
            }
        }
        self.stopped()
    }

    /// Iterative deepening from `board` under `limits`. With `all_moves`, every root
    /// move gets a score with a full window at each depth (for analysis), otherwise
    /// only the best move's score is exact.
    pub(crate) fn run(&mut self, board: &Board, limits: Limits, all_moves: bool) -> SearchResult {
        let start = Instant::now();
        self.tt.new_search();
        self.deadline = limits.time.map(|t| start + t);
        self.budget = NodeBudget::new(limits.nodes.unwrap_or(u64::MAX));
        self.reported = self.nodes;
        self.solver.deadline = self.deadline;
        self.solver.share_budget(self.budget.clone());
        self.solver.root_exclude = limits.exclude;
        self.root_exclude = limits.exclude;
        self.selectivity = limits.selectivity;
        let empties = board.empty_count();
        let max_depth = if limits.exact { 60 } else { limits.depth.unwrap_or(60) }.max(1);
        let mut result = SearchResult {
            moves: Vec::new(),
            depth: 0,
            exact: false,
            nodes: 0,
            elapsed: Duration::ZERO,
            pv: Vec::new(),
        };
        let legal = board.legal_moves();
        if board.is_game_over() || (legal != 0 && legal & !limits.exclude == 0) {
            result.exact = board.is_game_over();
            return result;
        }
        let mut depth = if limits.exact && empties <= 14 { empties } else { 1 };
        loop {
            let exact = depth >= empties;
            let moves = if exact {
                let prev = result.score().unwrap_or(0);
                self.solve_exact(board, prev, all_moves)
            } else {
                self.root(board, depth, result.score(), all_moves)
            };
            if self.aborted || self.solver.aborted() {
                if !exact && !all_moves {
                    adopt_unfinished(&mut result, &moves);
                }
                break;
            }
            result.moves = moves;
            result.depth = depth.min(empties);
            result.exact = exact;
            if exact || depth >= max_depth {
                break;
            }
            if limits.target.is_some_and(|target| start.elapsed() * 2 >= target) {
                break;
            }
            // Near the end, jump straight to the exact solve (it is cheaper than the
            // midgame iterations it would replace).
            depth = if limits.exact && (depth + EXACT_JUMP >= empties || depth >= EXACT_SEED_MAX_DEPTH) {
                empties
            } else {
                depth + 1
            };
        }
        if result.moves.is_empty() {
            // Stopped before the first iteration completed (a node budget of 1, a zero
            // time budget): there is still a legal move to return.
            result.moves = static_order(board, legal & !limits.exclude, self.eval);
            result.depth = 0;
            result.exact = false;
        }
        result.nodes = self.total_nodes();
        result.elapsed = start.elapsed();
        result.pv = match result.best_move() {
            Some(mv) => {
                let mut pv = vec![mv];
                if let Some(child) = play(board, mv) {
                    pv.extend(table_pv(self.tt, &child, result.depth.saturating_sub(1) as usize));
                }
                pv
            }
            None => Vec::new(),
        };
        result
    }

    /// The exact solve of the root, with an aspiration window around `guess`.
    fn solve_exact(&mut self, board: &Board, guess: i32, all: bool) -> Vec<RootMove> {
        if all {
            return self.solver.solve_root(board, -64, 64, true);
        }
        let (lo, hi) = ((guess - 2).max(-64), (guess + 2).min(64));
        let moves = self.solver.solve_root(board, lo, hi, false);
        match moves.first() {
            Some(m) if m.score > lo && m.score < hi => moves,
            _ => self.solver.solve_root(board, -64, 64, false),
        }
    }

    /// One iteration at the root, with an aspiration window around the last score.
    fn root(&mut self, board: &Board, depth: u32, guess: Option<i32>, all: bool) -> Vec<RootMove> {
        if let (Some(g), false) = (guess, all) {
            let (lo, hi) = ((g - 4).max(-64), (g + 4).min(64));
            let moves = self.root_window(board, depth, lo, hi, false);
            match moves.first() {
                Some(m) if m.score > lo && m.score < hi => return moves,
                _ if self.stopped() => return moves,
                _ => {}
            }
        }
        self.root_window(board, depth, -64, 64, all)
    }

    fn root_window(&mut self, board: &Board, depth: u32, alpha: i32, beta: i32, all: bool) -> Vec<RootMove> {
        let legal = board.legal_moves();
        let moves = legal & !self.root_exclude;
        let features = self.eval.features(board);
        if legal == 0 {
            let v = -self.pvs(&board.pass(), &self.eval.after_pass(&features), -beta, -alpha, depth);
            return vec![RootMove { mv: Move::Pass, score: v }];
        }
        let tt_move = self.tt.probe(board.key()).and_then(|e| e.best);
        let ordered = self.order(board, &features, moves, depth, tt_move);
        let list = ordered.as_slice();
        let parallel = self.threads > 1 && list.len() > 2;
        let mut out = Vec::with_capacity(list.len());
        if all && parallel {
            // Analysis: every move with the full window, independent of each other.
            for (v, m) in self.parallel_children(board, &features, list, alpha, beta, depth, None).into_iter().zip(list)
            {
                out.extend(v.map(|score| RootMove { mv: Move::Place(m.square), score }));
            }
        } else {
            // Upper bounds of the later moves, searched in parallel once the first move
            // has set alpha, and the alpha they were searched with.
            let mut bounds = Vec::new();
            let mut bounds_alpha = alpha;
            let mut a = alpha;
            for (i, &OrderedMove { square: sq, flips: f, .. }) in list.iter().enumerate() {
                if i == 1 && parallel && !all {
                    bounds = self.parallel_children(board, &features, &list[1..], a, a + 1, depth, None);
                    bounds_alpha = a;
                }
                let known = bounds.get(i.wrapping_sub(1)).copied().flatten().filter(|&v| v <= bounds_alpha);
                let child = board.play_flips(sq, f);
                let cf = self.eval.after_move(&features, sq, f);
                let v = if i == 0 || all {
                    -self.pvs(&child, &cf, -beta, -a, depth - 1)
                } else if let Some(v) = known {
                    v
                } else {
                    let v = -self.pvs(&child, &cf, -a - 1, -a, depth - 1);
                    if v > a && v < beta && !self.stopped() {
                        -self.pvs(&child, &cf, -beta, -a, depth - 1)
                    } else {
                        v
                    }
                };
                if self.stopped() {
                    return out;
                }
                out.push(RootMove { mv: Move::Place(sq), score: v });
                if !all && v > a {
                    a = v;
                    if v >= beta {
                        break;
                    }
                }
            }
        }
        if self.stopped() {
            return out;
        }
        out.sort_by_key(|m| std::cmp::Reverse(m.score));
        // A restricted root is not the position's true value: keep it out of the table.
        if let (Some(RootMove { mv: Move::Place(sq), score }), 0) = (out.first().copied(), self.root_exclude) {
            self.tt.store(board.key(), depth as u8, self.width(), alpha, beta, score, Some(sq));
        }
        out
    }

    /// Principal-variation search to `depth` plies, short of the end: an iteration
    /// that reaches the end is the solver's (`solve_exact`), and depth falls by a ply
    /// with every disc played, so `depth < empties` holds throughout.
    fn pvs(&mut self, board: &Board, features: &E::Features, mut alpha: i32, beta: i32, depth: u32) -> i32 {
        self.nodes += 1;
        if self.check() {
            return 0;
        }
        let empties = board.empty_count();
        debug_assert!(depth < empties, "a midgame search reaching the end is the solver's");
        if depth == 0 {
            return self.eval.evaluate_leaf(board, features);
        }
        let key = board.key();
        let entry = self.tt.probe(key);
        if let Some(e) = entry {
            if e.answers(depth, self.width()) {
                if e.lower >= beta || e.lower == e.upper {
                    return e.lower;
                }
                if e.upper <= alpha {
                    return e.upper;
                }
            }
        }
        let moves = board.legal_moves();
        if moves == 0 {
            if board.opponent_moves() == 0 {
                return board.final_score();
            }
            return -self.pvs(&board.pass(), &self.eval.after_pass(features), -beta, -alpha, depth);
        }
        if beta == alpha + 1 && depth >= PROBCUT_MIN_DEPTH {
            if let Some(v) = self.probcut(board, features, alpha, depth, empties) {
                return v;
            }
        }
        let alpha0 = alpha;
        let mut best = -65;
        let mut best_move = None;
        let ordered = self.order(board, features, moves, depth, entry.and_then(|e| e.best));
        if depth == 1 {
            // The children are leaves: their values are exact whatever the window, so
            // each is evaluated once, here, with no null-window search to repeat.
            for &OrderedMove { square: sq, flips: f, .. } in ordered.iter() {
                self.nodes += 1;
                let v = -self.eval.evaluate_leaf(&board.play_flips(sq, f), &self.eval.after_move(features, sq, f));
                if v > best {
                    best = v;
                    best_move = Some(sq);
                    if v >= beta {
                        break;
                    }
                }
            }
            if self.check() {
                return 0;
            }
            self.tt.store(key, 1, self.width(), alpha0, beta, best, best_move);
            return best;
        }
        let n = ordered.len();
        for (i, &OrderedMove { square: sq, flips: f, .. }) in ordered.iter().enumerate() {
            if i == 1 && self.threads > 1 && depth >= SPLIT_MIN_DEPTH && n >= SPLIT_MIN_MOVES {
                let (v, mv) = self.split(board, features, &ordered.as_slice()[1..], alpha, beta, depth);
                if self.stopped() {
                    return 0;
                }
                if v > best {
                    best = v;
                    best_move = mv;
                }
                break;
            }
            let child = board.play_flips(sq, f);
            let cf = self.eval.after_move(features, sq, f);
            let v = if i == 0 {
                -self.pvs(&child, &cf, -beta, -alpha, depth - 1)
            } else {
                let v = -self.pvs(&child, &cf, -alpha - 1, -alpha, depth - 1);
                if v > alpha && v < beta {
                    -self.pvs(&child, &cf, -beta, -alpha, depth - 1)
                } else {
                    v
                }
            };
            if self.stopped() {
                return 0;
            }
            if v > best {
                best = v;
                best_move = Some(sq);
                if v > alpha {
                    alpha = v;
                    if v >= beta {
                        break;
                    }
                }
            }
        }
        self.tt.store(key, depth as u8, self.width(), alpha0, beta, best, best_move);
        best
    }

    /// The selectivity entries of this search record and need (tenths; 0: full width).
    #[inline]
    fn width(&self) -> u8 {
        self.selectivity.map_or(0, Selectivity::tenths)
    }

    /// Multi-ProbCut at a null-window node: a shallow search far enough beyond the
    /// window predicts the deep result; returns the bound it predicts.
    fn probcut(&mut self, board: &Board, features: &E::Features, alpha: i32, depth: u32, empties: u32) -> Option<i32> {
        let t = self.selectivity?.sigmas();
        let sigma = self.eval.probcut_sigma(empties, depth)?;
        let margin = ((t * sigma).round() as i32).max(1);
        let shallow = probcut_shallow(depth);
        let beta = alpha + 1;
        let high = beta + margin;
        if high < 64 && self.pvs(board, features, high - 1, high, shallow) >= high {
            return Some(beta);
        }
        let low = alpha - margin;
        if low > -64 && self.pvs(board, features, low, low + 1, shallow) <= low {
            return Some(alpha);
        }
        None
    }

    /// Moves ordered best first, without allocating: the table's move, then by a
    /// shallow search (deep nodes) or by the opponent's mobility (shallow nodes).
    fn order(
        &mut self,
        board: &Board,
        features: &E::Features,
        moves: u64,
        depth: u32,
        tt_move: Option<Square>,
    ) -> MoveList {
        let mut list = MoveList::new();
        for sq in Squares(moves) {
            let f = flips(board.player, board.opponent, sq);
            let child = board.play_flips(sq, f);
            let cost = if Some(sq) == tt_move {
                i32::MIN
            } else if depth >= SORT_BY_SEARCH_MIN_DEPTH {
                let d = if depth >= 8 { 2 } else { 1 };
                self.pvs(&child, &self.eval.after_move(features, sq, f), -64, 64, d - 1) * 16
            } else {
                // Near the leaves the opponent's mobility alone: evaluating every child
                // for its order cost more time than the nodes it saved (measured with
                // the trained evaluation: 40% less time to depth 9 for 2% more nodes).
                child.legal_moves().count_ones() as i32
            };
            list.push(OrderedMove { square: sq, flips: f, cost });
        }
        list.sort();
        list
    }
}

/// The moves of `board` (a pass when `moves` is empty) scored by the static evaluation
/// of the position after them, best first: the answer when no iteration completed.
fn static_order<E: Evaluator>(board: &Board, moves: u64, eval: &E) -> Vec<RootMove> {
    if moves == 0 {
        return vec![RootMove { mv: Move::Pass, score: -eval.evaluate(&board.pass()) }];
    }
    let mut out: Vec<RootMove> = Squares(moves)
        .map(|sq| RootMove { mv: Move::Place(sq), score: -eval.evaluate(&board.play_flips(sq, board.flips(sq))) })
        .collect();
    out.sort_by_key(|m| std::cmp::Reverse(m.score));
    out
}

fn play(board: &Board, mv: Move) -> Option<Board> {
    match mv {
        Move::Pass => Some(board.pass()),
        Move::Place(sq) => board.play(sq),
    }
}
