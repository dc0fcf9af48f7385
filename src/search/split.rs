//! Young brothers wait, once for both searches: the midgame search and the endgame
//! solver split a node's moves between threads through the same code, over the small
//! [`SplitSearch`] trait (search one child with a window, make a helper for another
//! thread, stop).
//!
//! The rules, the same for both:
//! - **When.** A node splits once its first move was searched without a cut (a node
//!   whose first move did not cut is probably one where every move must be searched),
//!   when at least two moves remain and [`SplitSearch::worth_splitting`] says the node
//!   is large enough; a root likewise.
//! - **How.** The remaining moves get a null window at alpha, in parallel: one helper
//!   a thread, each taking the next move of the list in its order when it is free, so
//!   that the likeliest refutations go first (rayon's halving of the list gave the
//!   second thread the worst moves, which a refutation makes wasted work). The first
//!   to reach beta refutes the node and stops the others (a flag each helper checks);
//!   at a PV node the moves above alpha are searched again with the full window, one
//!   after the other. A root's bounds are searched without stopping each other (every
//!   root move must be searched), and only those above alpha are searched again.
//! - **Stops.** A split is finished when every helper finished or when one refuted
//!   the node: a refutation is a complete result even if other helpers were stopped
//!   by a stop from outside at the same time (the searcher sees that stop at its next
//!   check). Any other stopped helper leaves the split unfinished, and the searcher
//!   is marked stopped, so that nothing from it is used or stored.
//! - **Helpers** start only if no stop applies yet, and stop when any split above
//!   them is refuted.
//!
//! Until this module the two searches had a copy each, which differed in these
//! points without anyone having chosen: the solver also discarded a refuted split
//! when a stop came at the same time, checked every stop before starting a helper
//! (the midgame only the node budget), and its root split only from its minimum
//! size, where the midgame's root split at any depth. The solver searched three moves
//! alone before splitting, the midgame one; one is better for both (FFO #20–39, two
//! threads, `cargo bench --bench solve`: after three moves 2.89 s, after two 2.69–2.73
//! s, after one 2.50 s, for 4.41–4.58 s on one thread).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use rayon::prelude::*;

use super::moves::OrderedMove;
use super::RootMove;
use crate::board::Board;
use crate::square::{Move, Square};

/// A search whose nodes can be split between threads.
pub(crate) trait SplitSearch: Sized + Sync {
    /// What the children of a node share besides the board (the midgame's features and
    /// depth; nothing for the solver).
    type Node<'n>: Sync;

    /// Whether the node is large enough to split and there is more than one thread.
    fn worth_splitting(&self, board: &Board, node: &Self::Node<'_>) -> bool;

    /// The score of `mv` for the side to move at `board` within (`alpha`, `beta`),
    /// fail-soft: the negated search of the child.
    fn child(&mut self, board: &Board, node: &Self::Node<'_>, mv: &OrderedMove, alpha: i32, beta: i32) -> i32;

    /// A searcher for another thread: the same table, evaluation, limits and stop
    /// flag, and the cut flags of the splits this one works under.
    fn helper(&self) -> Self;

    /// Adds a cut flag this helper works under: a refuted split above stops it (and
    /// whatever searches it runs, such as the midgame's solver).
    fn add_cut_flag(&mut self, flag: Arc<AtomicBool>);

    /// Whether a stop applies now: the stop flag, the deadline, the node budget or a
    /// refuted split above.
    fn must_stop(&self) -> bool;

    /// Whether this searcher was stopped: its results are meaningless.
    fn stopped(&self) -> bool;

    /// Marks this searcher stopped.
    fn abort(&mut self);

    /// Reports this finished helper's nodes to the shared budget; returns all it visited.
    fn finish(&mut self) -> u64;

    /// Counts the nodes of a finished helper (which reported them itself).
    fn absorb(&mut self, nodes: u64);
}

/// Moves a node searches alone, one after the other, before the rest may be split.
const SEARCHED_ALONE: usize = 1;

/// Whether a node splits now, after `searched` of its `n` moves were searched alone
/// without a cut.
#[inline]
pub(crate) fn splits_now<S: SplitSearch>(s: &S, board: &Board, node: &S::Node<'_>, searched: usize, n: usize) -> bool {
    searched == SEARCHED_ALONE && n >= searched + 2 && s.worth_splitting(board, node)
}

/// Searches `moves` in parallel, each with the window (`alpha`, `beta`); `None` where
/// a search was stopped. With `cut_at`, the first move scoring that much or more
/// refutes the node and stops the others (their `None` is then expected); any other
/// stop marks `s` stopped.
pub(crate) fn parallel_children<S: SplitSearch>(
    s: &mut S,
    board: &Board,
    node: &S::Node<'_>,
    moves: &[OrderedMove],
    alpha: i32,
    beta: i32,
    cut_at: Option<i32>,
) -> Vec<Option<i32>> {
    let cut = Arc::new(AtomicBool::new(false));
    // The moves are handed out in their order, one at a time, to whichever worker is
    // free: the likeliest refutations are searched first, and a worker that joins late
    // takes the next move rather than the worst half of the list.
    let next = AtomicUsize::new(0);
    let workers = rayon::current_num_threads().min(moves.len());
    let parent = &*s;
    let done: Vec<(Vec<(usize, i32)>, u64)> = (0..workers)
        .into_par_iter()
        .map(|_| {
            let mut h = parent.helper();
            if cut_at.is_some() {
                h.add_cut_flag(cut.clone());
            }
            let mut scores = Vec::new();
            // `must_stop` reads the node's cut flag too (pushed above when a move can refute).
            while !h.must_stop() {
                let i = next.fetch_add(1, Relaxed);
                let Some(m) = moves.get(i) else { break };
                let v = h.child(board, node, m, alpha, beta);
                if h.stopped() {
                    break;
                }
                if cut_at.is_some_and(|c| v >= c) {
                    cut.store(true, Relaxed);
                }
                scores.push((i, v));
            }
            (scores, h.finish())
        })
        .collect();
    let mut out = vec![None; moves.len()];
    for (scores, nodes) in done {
        s.absorb(nodes);
        for (i, v) in scores {
            out[i] = Some(v);
        }
    }
    if !cut.load(Relaxed) && out.iter().any(Option::is_none) {
        s.abort();
    }
    out
}

/// Young brothers wait at an inner node: `moves` (the node's moves after those
/// searched alone, which did not cut) searched in parallel with a null window at
/// `alpha`; then, at a PV node, the moves that beat alpha searched again with the full
/// window, one after the other. Returns the best score and move among `moves`
/// (fail-soft; no move when every one was stopped), or stops.
pub(crate) fn split<S: SplitSearch>(
    s: &mut S,
    board: &Board,
    node: &S::Node<'_>,
    moves: &[OrderedMove],
    mut alpha: i32,
    beta: i32,
) -> (i32, Option<Square>) {
    let split_alpha = alpha;
    let bounds = parallel_children(s, board, node, moves, alpha, alpha + 1, Some(beta));
    let mut best = (-65, None);
    if s.stopped() {
        return best;
    }
    for (bound, m) in bounds.into_iter().zip(moves) {
        // No value: a sibling refuted the node and stopped this one.
        let Some(mut v) = bound else { continue };
        if v > split_alpha && v < beta {
            // A lower bound only (a PV node): the value is searched for again.
            if alpha > split_alpha {
                v = s.child(board, node, m, alpha, alpha + 1);
            }
            if v > alpha && v < beta && !s.stopped() {
                v = s.child(board, node, m, alpha, beta);
            }
            if s.stopped() {
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

/// The moves of a root, `list` in order, with the window (`alpha`, `beta`): the first
/// with the full window; the others with a null window at the best so far, searched
/// again when they beat it — their bounds computed in parallel once the first has set
/// alpha, when the root is worth splitting. With `all`, every move gets its score
/// within the window (in parallel when worth splitting). Returns the scores in search
/// order, cut short where `s` stopped (the caller sorts them).
pub(crate) fn root<S: SplitSearch>(
    s: &mut S,
    board: &Board,
    node: &S::Node<'_>,
    list: &[OrderedMove],
    alpha: i32,
    beta: i32,
    all: bool,
) -> Vec<RootMove> {
    let parallel = list.len() > 2 && s.worth_splitting(board, node);
    let mut out = Vec::with_capacity(list.len());
    if all && parallel {
        for (v, m) in parallel_children(s, board, node, list, alpha, beta, None).into_iter().zip(list) {
            out.extend(v.map(|score| RootMove { mv: Move::Place(m.square), score }));
        }
        return out;
    }
    // Upper bounds of the later moves and the alpha they were searched with.
    let mut bounds = Vec::new();
    let mut bounds_alpha = alpha;
    let mut a = alpha;
    for (i, m) in list.iter().enumerate() {
        if i == 1 && parallel && !all {
            bounds = parallel_children(s, board, node, &list[1..], a, a + 1, None);
            bounds_alpha = a;
        }
        let known = bounds.get(i.wrapping_sub(1)).copied().flatten().filter(|&v| v <= bounds_alpha);
        let v = if i == 0 || all {
            s.child(board, node, m, a, beta)
        } else if let Some(v) = known {
            v
        } else {
            let v = s.child(board, node, m, a, a + 1);
            if v > a && v < beta && !s.stopped() {
                s.child(board, node, m, a, beta)
            } else {
                v
            }
        };
        if s.stopped() {
            return out;
        }
        out.push(RootMove { mv: Move::Place(m.square), score: v });
        if !all && v > a {
            a = v;
            if v >= beta {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! The split against plain alpha-beta over synthetic trees, and its stop rules,
    //! through a searcher that only knows the tree.

    use super::*;
    use crate::zobrist::mix64;

    /// A uniform tree: `WIDTH` children a node, leaf values from a hash of the node.
    const WIDTH: u64 = 5;

    struct TreeNode {
        id: u64,
        depth: u32,
    }

    #[derive(Default)]
    struct TreeSearch {
        stopped: bool,
        nodes: u64,
        cut_flags: Vec<Arc<AtomicBool>>,
        /// The move (by square index) whose search is stopped from outside.
        stop_at: Option<usize>,
        /// The moves (by square index) whose searches started, shared by the helpers.
        started: Arc<std::sync::Mutex<Vec<usize>>>,
        /// Each child search takes this long (so that two threads overlap).
        delay: Option<std::time::Duration>,
    }

    fn child_id(id: u64, i: usize) -> u64 {
        id * WIDTH + 1 + i as u64
    }

    /// Plain fail-soft alpha-beta: the reference.
    fn negamax(id: u64, depth: u32, mut alpha: i32, beta: i32) -> i32 {
        if depth == 0 {
            return (mix64(id) % 129) as i32 - 64;
        }
        let mut best = -65;
        for i in 0..WIDTH as usize {
            let v = -negamax(child_id(id, i), depth - 1, -beta, -alpha);
            best = best.max(v);
            alpha = alpha.max(v);
            if v >= beta {
                break;
            }
        }
        best
    }

    impl SplitSearch for TreeSearch {
        type Node<'n> = TreeNode;

        fn worth_splitting(&self, _: &Board, _: &TreeNode) -> bool {
            true
        }

        fn child(&mut self, _: &Board, node: &TreeNode, mv: &OrderedMove, alpha: i32, beta: i32) -> i32 {
            self.nodes += 1;
            self.started.lock().unwrap().push(mv.square.index());
            if let Some(d) = self.delay {
                std::thread::sleep(d);
            }
            if self.stop_at == Some(mv.square.index()) {
                self.stopped = true;
                return 0;
            }
            -negamax(child_id(node.id, mv.square.index()), node.depth - 1, -beta, -alpha)
        }

        fn helper(&self) -> Self {
            TreeSearch {
                stop_at: self.stop_at,
                cut_flags: self.cut_flags.clone(),
                started: self.started.clone(),
                delay: self.delay,
                ..TreeSearch::default()
            }
        }

        fn add_cut_flag(&mut self, flag: Arc<AtomicBool>) {
            self.cut_flags.push(flag);
        }

        fn must_stop(&self) -> bool {
            self.cut_flags.iter().any(|f| f.load(Relaxed))
        }

        fn stopped(&self) -> bool {
            self.stopped
        }

        fn abort(&mut self) {
            self.stopped = true;
        }

        fn finish(&mut self) -> u64 {
            self.nodes
        }

        fn absorb(&mut self, nodes: u64) {
            self.nodes += nodes;
        }
    }

    fn moves() -> Vec<OrderedMove> {
        (0..WIDTH as u8).map(|i| OrderedMove { square: Square::new(i), flips: 0, cost: 0, replies: 0 }).collect()
    }

    fn two_threads<T: Send>(f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap().install(f)
    }

    /// Fail-soft agreement: exact inside the window, the right side of it outside.
    fn agrees(got: i32, want: i32, alpha: i32, beta: i32) -> bool {
        if want <= alpha {
            got <= alpha
        } else if want >= beta {
            got >= beta
        } else {
            got == want
        }
    }

    #[test]
    fn a_split_node_scores_as_plain_alpha_beta_does() {
        let board = Board { player: 0, opponent: 0 };
        let list = moves();
        two_threads(|| {
            for id in 1..200u64 {
                let node = TreeNode { id: mix64(id) >> 8, depth: 3 };
                let (alpha, beta) = match id % 3 {
                    0 => (-64, 64),
                    1 => (-3, -2),
                    _ => (-10, 10),
                };
                let want = negamax(node.id, 3, alpha, beta);
                // As a node does: its first move alone, then the split.
                let mut s = TreeSearch::default();
                let first = s.child(&board, &node, &list[0], alpha, beta);
                let got = if first >= beta {
                    first
                } else {
                    let (v, mv) = split(&mut s, &board, &node, &list[1..], alpha.max(first), beta);
                    assert!(mv.is_some());
                    first.max(v)
                };
                assert!(!s.stopped());
                assert!(agrees(got, want, alpha, beta), "tree {id}: {got} against {want} in ({alpha}, {beta})");
            }
        });
    }

    #[test]
    fn a_root_scores_its_best_move_exactly_and_with_all_every_move() {
        let board = Board { player: 0, opponent: 0 };
        let list = moves();
        two_threads(|| {
            for id in 1..100u64 {
                let node = TreeNode { id: mix64(id) >> 8, depth: 3 };
                let exact: Vec<i32> = (0..list.len()).map(|i| -negamax(child_id(node.id, i), 2, -64, 64)).collect();
                let mut s = TreeSearch::default();
                let out = root(&mut s, &board, &node, &list, -64, 64, false);
                let best = out.iter().map(|m| m.score).max().unwrap();
                assert_eq!(best, *exact.iter().max().unwrap(), "tree {id}");
                // The others are upper bounds (they failed low against the best so far).
                for m in &out {
                    let Move::Place(sq) = m.mv else { panic!("a pass") };
                    assert!(m.score >= exact[sq.index()], "tree {id}: a bound below the score");
                }
                let all = root(&mut TreeSearch::default(), &board, &node, &list, -64, 64, true);
                let mut got: Vec<(usize, i32)> = all
                    .iter()
                    .map(|m| match m.mv {
                        Move::Place(sq) => (sq.index(), m.score),
                        Move::Pass => panic!("a pass"),
                    })
                    .collect();
                got.sort();
                assert_eq!(got, exact.iter().copied().enumerate().collect::<Vec<_>>(), "tree {id}");
            }
        });
    }

    /// A split of the moves after the first at a small tree's node (id 7, depth 2)
    /// with the window (`alpha`, `beta`), on two threads.
    fn split_on_two_threads(s: &mut TreeSearch, alpha: i32, beta: i32) -> (i32, Option<Square>) {
        let board = Board { player: 0, opponent: 0 };
        let list = moves();
        two_threads(|| split(s, &board, &TreeNode { id: 7, depth: 2 }, &list[1..], alpha, beta))
    }

    #[test]
    fn a_helper_stopped_from_outside_leaves_the_split_unfinished() {
        // No move refutes a window of (63, 64) on these leaves (all below 64): every
        // helper must finish, and the stopped one cannot.
        let mut s = TreeSearch { stop_at: Some(3), ..TreeSearch::default() };
        split_on_two_threads(&mut s, 63, 64);
        assert!(s.stopped(), "a split with a stopped helper and no refutation is unfinished");
    }

    #[test]
    fn a_refuted_split_is_a_result_even_when_a_sibling_was_stopped() {
        // A window of (−65, −64): any score refutes, so the first helper to finish
        // refutes the node, whatever happened to the stopped one.
        let mut s = TreeSearch { stop_at: Some(4), ..TreeSearch::default() };
        let (v, mv) = split_on_two_threads(&mut s, -65, -64);
        assert!(!s.stopped(), "the refutation stands");
        assert!(v >= -64 && mv.is_some_and(|sq| sq.index() != 4));
    }

    #[test]
    fn a_split_hands_its_moves_out_in_order() {
        // A window of (−65, −64): the first move to finish refutes the node. The moves
        // started must be the first ones of the list, in order, whichever thread took
        // them: a thread that joins takes the next move, not the worst ones at the end
        // of the list.
        let mut s = TreeSearch { delay: Some(std::time::Duration::from_millis(20)), ..TreeSearch::default() };
        let (_, mv) = split_on_two_threads(&mut s, -65, -64);
        assert!(!s.stopped() && mv.is_some());
        let mut started = s.started.lock().unwrap().clone();
        started.sort();
        assert!(started.len() < moves().len() - 1, "the refutation stopped the later moves: {started:?}");
        assert_eq!(started, (1..=started.len()).collect::<Vec<_>>(), "moves started out of order");
    }
}
