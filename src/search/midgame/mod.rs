//! Midgame search: negamax with principal-variation search, the shared transposition
//! table, move ordering (table move, then shallow-search or mobility ordering),
//! aspiration windows and iterative deepening under a depth, node or time limit.
//! The trained evaluation's pattern indices are carried from the root move by move
//! ([`IncrementalEvaluator`]). With more than one thread, a node from
//! `SPLIT_MIN_DEPTH` searches its first move alone and the others in parallel (young
//! brothers wait, shared with the solver: [`super::split`]).
//! When the remaining depth reaches the number of empty squares, the search goes to
//! the end: selective passes first ([`end`]), then the exact endgame solver, so deep
//! enough searches return proven scores.

mod end;

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use std::time::{Duration, Instant};

use super::endgame::{RootMove, Solver};
use super::moves::{MoveList, OrderedMove};
use super::split::{self, SplitSearch};
use super::tt::{TableKey, TranspositionTable};
use super::{table_pv, NodeBudget};
use crate::board::{flips, Board, Squares};
use crate::eval::{Evaluator, IncrementalEvaluator};
use crate::square::{Move, Square};

/// When to stop searching.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
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
/// search must be to cut (1.0 ≈ 84% of cuts right, 2.0 ≈ 98%). Kept in tenths, the
/// unit book headers, checkpoints and logs record, so that what a search ran with is
/// what its file says (and limits compare exactly).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Selectivity(u8);

impl Selectivity {
    /// `t` standard deviations, from 0.1 to 10, rounded to tenths; `None` outside
    /// that range or for a value that is not a number.
    pub fn from_sigmas(t: f32) -> Option<Selectivity> {
        let tenths = (t * 10.0).round();
        // In range, so the conversion is exact.
        (t.is_finite() && (1.0..=100.0).contains(&tenths)).then_some(Selectivity(tenths as u8))
    }

    /// The number of standard deviations.
    pub fn sigmas(self) -> f32 {
        f32::from(self.0) / 10.0
    }

    /// In tenths of a standard deviation, as files store it (1 to 100).
    pub fn tenths(self) -> u8 {
        self.0
    }

    /// From tenths of a standard deviation: `None` for 0 (full width) and beyond
    /// 10 σ.
    pub const fn from_tenths(tenths: u8) -> Option<Selectivity> {
        if tenths >= 1 && tenths <= 100 {
            Some(Selectivity(tenths))
        } else {
            None
        }
    }
}

/// As the command line's `--selectivity` takes it: `1.5` (σ).
impl std::fmt::Display for Selectivity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.sigmas())
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
#[non_exhaustive]
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
/// Depth from which that shallow search is one ply deep rather than the evaluation of
/// the child. Time to a fixed depth at 1.0 σ on one thread (`scripts/search_speed.sh`,
/// the clock's selectivity), from depth 8 against from 12: depth 16 at 36 empties, 100
/// positions, 3.65–3.79 s against 3.23–3.32 (26.9 M nodes against 23.5 M); depth 18,
/// 40 positions at 28 / 36 / 44 empties, 1.65 / 2.42 / 2.96 s against 1.42 / 2.16 /
/// 2.69; depth 20 at 1.5 σ, 9.32 s against 8.97; from 16 or never, the same as from
/// 12. The held-out error at depths 12 and 14 did not change (2.79 / 2.57 discs, 2,440
/// positions of 2011–2015 at 24 empties, at 1.0 σ); FFO #20–39 (`thorbook solve`, whose
/// seeding iterations order by it): 109.1 M nodes, 5.5 s against 104.1 M, 5.4 s. In 4 s
/// games (400, no book, one thread each) it measured even: 165–68–167, Elo −2 (95% −33
/// .. +29), as a gain of this size would.
const SORT_DEEPER_MIN_DEPTH: u32 = 12;
/// The enhanced transposition cutoff is tried from this depth. Time to a fixed depth
/// on one thread, 30 Thor positions at 36 empties (`scripts/search_speed.sh D S 1 36
/// 30`), two runs each, without it / from depth 4 / 6 / 8: depth 24 at 1σ 6.15, 6.08 /
/// 6.04, 5.96 / 5.87, 5.77 / 5.88, 5.69 s (68.3 / 65.6 / 64.5 / 64.8 M nodes); depth 20
/// at 2σ 16.86, 17.37 / — / 16.67, 17.29 / 16.30, 16.81 s (177.0 / 172.0 / 172.6 M).
/// Before the table's buckets were prefetched its probes cost more than it saved.
const ETC_MIN_DEPTH: u32 = 8;
/// In an exact search, the midgame iterations stop this many plies short of the end;
/// they only seed the table (best moves) for the exact solve. See [`EXACT_SEED_SELECTIVITY`].
const EXACT_JUMP: u32 = 8;
/// ... and never go deeper than this: beyond it the seeding costs more than it saves.
const EXACT_SEED_MAX_DEPTH: u32 = 12;
/// The seeding iterations are selective (Multi-ProbCut at this many σ): a selective
/// search reaches deeper for its cost, and its best moves order the solve as well as
/// a full-width search's. FFO #20–39 on one thread (`thorbook solve`), nodes and time:
/// full width to depth 10 (10 short of the end), 170.7 M, 6.7 s; at 1.5σ to depth 12
/// (8 short), 109.9 M, 4.6 s; 1.3σ 107.6 M, 4.5 s; 1.1σ 131.5 M, 5.3 s; 1.7σ 125.3 M;
/// at 1.5σ to depth 14, 113.2 M, 5.1 s; to 16 (6 short), 126.7 M, 6.9 s; full width
/// to depth 12 or 14, 193.8 M and 201.0 M. On 12 hard Thor positions of 24–26
/// empties (`scripts/hard-thor-24-26.obf`): 4.06 G nodes, 169 s full width; 2.72 G,
/// 127 s at 1.5σ.
const EXACT_SEED_SELECTIVITY: Selectivity = match Selectivity::from_tenths(15) {
    Some(s) => s,
    None => panic!("1.5σ is a valid selectivity"),
};
/// From this depth a node's moves after the first are searched in parallel (with
/// more than one thread): shallower nodes cost less than sharing them. Time to depth
/// 20 at 2σ, 10 Thor positions at 36 empties, 2 threads (`scripts/search_speed.sh 20
/// 2.0 2`): 15.8–16.0 s splitting from depth 5, 15.5 from 7, 15.7–16.1 from 9.
const SPLIT_MIN_DEPTH: u32 = 7;
/// Nodes between time checks.
const CHECK_INTERVAL: u64 = 2048;

/// An iteration of [`Search::run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Iteration {
    /// To this depth, short of the end.
    Midgame(u32),
    /// The selective pass of this index in [`end::end_passes`], to the end.
    Pass(usize),
    /// To the end, exactly.
    Exact,
}

impl Iteration {
    /// The first iteration to the end: the first pass, if any.
    fn to_end(passes: &[Selectivity]) -> Iteration {
        if passes.is_empty() {
            Iteration::Exact
        } else {
            Iteration::Pass(0)
        }
    }
}

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
        for flag in &self.cut_flags {
            h.add_cut_flag(flag.clone());
        }
        h
    }

    /// Reports this searcher's and its solver's new nodes to the shared budget.
    fn report_nodes(&mut self) {
        self.budget.spend(self.nodes - self.reported);
        self.reported = self.nodes;
        self.solver.report_nodes();
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
            if SplitSearch::must_stop(self) {
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
        let passes = end::end_passes(empties);
        // Small exact searches go straight to the end; others deepen first.
        let mut iteration =
            if limits.exact && empties <= 14 { Iteration::to_end(passes) } else { Iteration::Midgame(1) };
        loop {
            let moves = match iteration {
                Iteration::Midgame(depth) => {
                    // An exact search's midgame iterations only seed the solve.
                    self.selectivity = if limits.exact { Some(EXACT_SEED_SELECTIVITY) } else { limits.selectivity };
                    self.root(board, depth, result.score(), all_moves)
                }
                Iteration::Pass(i) => self.end_pass(board, passes[i], result.score(), all_moves),
                Iteration::Exact => {
                    self.selectivity = None;
                    self.solve_exact(board, result.score().unwrap_or(0), all_moves)
                }
            };
            let exact = iteration == Iteration::Exact;
            if self.aborted || self.solver.aborted() {
                if !exact && !all_moves {
                    adopt_unfinished(&mut result, &moves);
                }
                break;
            }
            result.moves = moves;
            result.depth = match iteration {
                Iteration::Midgame(depth) => depth,
                _ => empties,
            };
            result.exact = exact;
            if exact || matches!(iteration, Iteration::Midgame(d) if d >= max_depth) {
                break;
            }
            if limits.target.is_some_and(|target| start.elapsed() * 2 >= target) {
                break;
            }
            iteration = match iteration {
                // Near the end, jump straight to the end (it is cheaper than the
                // midgame iterations it would replace).
                Iteration::Midgame(depth)
                    if depth + 1 >= empties
                        || limits.exact && (depth + EXACT_JUMP >= empties || depth >= EXACT_SEED_MAX_DEPTH) =>
                {
                    Iteration::to_end(passes)
                }
                Iteration::Midgame(depth) => Iteration::Midgame(depth + 1),
                Iteration::Pass(i) if i + 1 < passes.len() => Iteration::Pass(i + 1),
                _ => Iteration::Exact,
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
        let tt_move = self.tt.probe(TableKey::of(board)).and_then(|e| e.best);
        let ordered = self.order(board, &features, moves, depth, tt_move);
        let node = MidgameNode { features: &features, depth };
        let mut out = split::root(self, board, &node, ordered.as_slice(), alpha, beta, all);
        if self.stopped() {
            return out;
        }
        out.sort_by_key(|m| std::cmp::Reverse(m.score));
        // A restricted root is not the position's true value: keep it out of the table.
        if let (Some(RootMove { mv: Move::Place(sq), score }), 0) = (out.first().copied(), self.root_exclude) {
            self.tt.store(TableKey::of(board), depth as u8, self.width(), alpha, beta, score, Some(sq));
        }
        out
    }

    /// Principal-variation search to `depth` plies. A search to the end (`depth` the
    /// empties) is a selective pass's ([`end`]) above [`end::END_HANDOFF`] empties and
    /// the exact solver's everywhere else; depth falls by a ply with every disc played,
    /// so a search that starts short of the end stays short of it.
    fn pvs(&mut self, board: &Board, features: &E::Features, mut alpha: i32, beta: i32, depth: u32) -> i32 {
        let empties = board.empty_count();
        if depth >= empties && (empties <= end::END_HANDOFF || self.selectivity.is_none()) {
            return self.solve_node(board, alpha, beta);
        }
        self.nodes += 1;
        if self.check() {
            return 0;
        }
        if depth == 0 {
            return self.eval.evaluate_leaf(board, features);
        }
        let key = TableKey::of(board);
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
        let mut moves = moves;
        let tt_move = entry.and_then(|e| e.best).filter(|sq| moves & sq.bit() != 0);
        // The table's move before the others are generated and ordered (Edax and
        // Egaroucid do the same): where it refutes the node, as it mostly does in a
        // null-window search, the ordering's shallow searches are never paid.
        let searched_first = match tt_move {
            Some(sq) if depth >= 2 => {
                let f = flips(board.player, board.opponent, sq);
                let child = board.play_flips(sq, f);
                let v = -self.pvs(&child, &self.eval.after_move(features, sq, f), -beta, -alpha, depth - 1);
                if self.stopped() {
                    return 0;
                }
                best = v;
                best_move = Some(sq);
                alpha = alpha.max(v);
                moves &= !sq.bit();
                if v >= beta || moves == 0 {
                    self.tt.store(key, depth as u8, self.width(), alpha0, beta, best, best_move);
                    return best;
                }
                1
            }
            _ => 0,
        };
        let ordered = self.order(board, features, moves, depth, if searched_first == 1 { None } else { tt_move });
        if depth >= ETC_MIN_DEPTH {
            // Enhanced transposition cutoff (the children's buckets were prefetched as
            // they were listed).
            if let Some(v) = self.tt.refuting_child(board, ordered.as_slice(), depth - 1, self.width(), beta) {
                return v;
            }
        }
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
        let n = ordered.len() + searched_first;
        for (i, &OrderedMove { square: sq, flips: f, .. }) in ordered.iter().enumerate() {
            let node = MidgameNode { features, depth };
            if split::splits_now(self, board, &node, i + searched_first, n) {
                let (v, mv) = split::split(self, board, &node, &ordered.as_slice()[i..], alpha, beta);
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
            let v = if i + searched_first == 0 {
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
        if depth >= empties {
            return self.end_probcut(board, features, alpha, t);
        }
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
        if depth >= board.empty_count() {
            return self.order_to_end(board, features, moves, tt_move);
        }
        let mut list = MoveList::new();
        for sq in Squares(moves) {
            let f = flips(board.player, board.opponent, sq);
            let child = board.play_flips(sq, f);
            if depth >= 2 {
                // The child will probe the table: start loading its bucket now.
                self.tt.prefetch(TableKey::of(&child));
            }
            let cost = if Some(sq) == tt_move {
                i32::MIN
            } else if depth >= SORT_BY_SEARCH_MIN_DEPTH {
                let d = if depth >= SORT_DEEPER_MIN_DEPTH { 2 } else { 1 };
                self.pvs(&child, &self.eval.after_move(features, sq, f), -64, 64, d - 1) * 16
            } else {
                // Near the leaves the opponent's mobility alone: evaluating every child
                // for its order cost more time than the nodes it saved (measured with
                // the trained evaluation: 40% less time to depth 9 for 2% more nodes).
                child.legal_moves().count_ones() as i32
            };
            list.push(OrderedMove { square: sq, flips: f, cost, replies: 0 });
        }
        list.sort();
        list
    }
}

/// What the children of a midgame node share at a split: the node's features and the
/// depth it is searched to.
pub(crate) struct MidgameNode<'n, F> {
    features: &'n F,
    depth: u32,
}

impl<E: IncrementalEvaluator> SplitSearch for Search<'_, E> {
    type Node<'n> = MidgameNode<'n, E::Features>;

    fn worth_splitting(&self, _: &Board, node: &MidgameNode<'_, E::Features>) -> bool {
        self.threads > 1 && node.depth >= SPLIT_MIN_DEPTH
    }

    fn child(
        &mut self,
        board: &Board,
        node: &MidgameNode<'_, E::Features>,
        mv: &OrderedMove,
        alpha: i32,
        beta: i32,
    ) -> i32 {
        let features = self.eval.after_move(node.features, mv.square, mv.flips);
        -self.pvs(&board.play_flips(mv.square, mv.flips), &features, -beta, -alpha, node.depth - 1)
    }

    fn helper(&self) -> Self {
        Search::helper(self)
    }

    fn add_cut_flag(&mut self, flag: Arc<AtomicBool>) {
        // The solver this searcher hands the last plies to works under it too.
        self.solver.add_cut_flag(flag.clone());
        self.cut_flags.push(flag);
    }

    fn must_stop(&self) -> bool {
        self.stop.load(Relaxed)
            || self.budget.exhausted()
            || self.cut_flags.iter().any(|f| f.load(Relaxed))
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    fn stopped(&self) -> bool {
        Search::stopped(self)
    }

    fn abort(&mut self) {
        self.aborted = true;
    }

    fn finish(&mut self) -> u64 {
        self.report_nodes();
        self.total_nodes()
    }

    fn absorb(&mut self, nodes: u64) {
        // The helper reported its nodes itself.
        self.nodes += nodes;
        self.reported += nodes;
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
