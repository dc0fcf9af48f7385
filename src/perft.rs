//! Perft: counting the leaves of the game tree to a fixed depth, the standard check
//! (and speed test) of move generation.
//!
//! Convention (the one the published Othello counts use): a pass is a ply, and a
//! finished game counts as one leaf at every greater depth. The last ply is counted in
//! bulk: at depth 1 the leaves are the number of legal moves.

use rayon::prelude::*;

use crate::board::{Board, Kernels, Squares};

/// Leaves of the tree below `board` at `depth` plies, on the calling thread.
pub fn perft(board: &Board, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    // The kernels' level is chosen once for the whole count (`board::Kernels`).
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(k) = crate::board::V4Kernels::new() {
            return perft_inner(k, board, depth);
        }
        if let Some(k) = crate::board::V3Kernels::new() {
            return perft_inner(k, board, depth);
        }
    }
    perft_inner(crate::board::BaselineKernels, board, depth)
}

fn perft_inner<K: Kernels>(k: K, board: &Board, depth: u32) -> u64 {
    let moves = k.legal_moves(board.player, board.opponent);
    if moves == 0 {
        if depth == 1 {
            return 1;
        }
        let passed = board.pass();
        return if k.legal_moves(passed.player, passed.opponent) == 0 { 1 } else { perft_inner(k, &passed, depth - 1) };
    }
    if depth == 1 {
        return moves.count_ones() as u64;
    }
    let mut total = 0;
    if depth == 2 {
        for sq in Squares(moves) {
            let child = board.play_flips(sq, k.flips(board.player, board.opponent, sq));
            // A child without moves is one leaf whether it passes or the game ends.
            total += k.legal_moves(child.player, child.opponent).count_ones().max(1) as u64;
        }
        return total;
    }
    for sq in Squares(moves) {
        total += perft_inner(k, &board.play_flips(sq, k.flips(board.player, board.opponent, sq)), depth - 1);
    }
    total
}

/// The same count spread over the current rayon pool: the tree is expanded breadth
/// first until there are enough subtrees to balance, which are then counted in parallel.
pub fn perft_parallel(board: &Board, depth: u32) -> u64 {
    const MIN_TASKS: usize = 256;
    // (board, remaining depth) frontier; leaves reached early are counted directly.
    let mut frontier = vec![*board];
    let mut remaining = depth;
    let mut settled = 0u64;
    while remaining > 4 && frontier.len() < MIN_TASKS {
        let mut next = Vec::with_capacity(frontier.len() * 10);
        for b in &frontier {
            let moves = b.legal_moves();
            if moves == 0 {
                let passed = b.pass();
                if passed.legal_moves() == 0 {
                    settled += 1;
                } else {
                    next.push(passed);
                }
                continue;
            }
            next.extend(Squares(moves).map(|sq| b.play_flips(sq, b.flips(sq))));
        }
        frontier = next;
        remaining -= 1;
    }
    settled + frontier.par_iter().map(|b| perft(b, remaining)).sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symmetry::Transform;
    use crate::testutil::Rng;

    /// Published counts from the start position (pass = ply).
    pub(crate) const START_COUNTS: [u64; 12] =
        [1, 4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288, 24571284, 212258800];

    #[test]
    fn start_position_counts_through_depth_9() {
        for (depth, &want) in START_COUNTS.iter().enumerate().take(10) {
            assert_eq!(perft(&Board::START, depth as u32), want, "depth {depth}");
        }
    }

    /// Each copy of the kernels this CPU runs counts the published leaves (the copy
    /// `perft` chose is one of them).
    #[test]
    fn every_kernel_level_this_cpu_runs_counts_the_published_leaves() {
        let want = START_COUNTS[8];
        assert_eq!(perft_inner(crate::board::BaselineKernels, &Board::START, 8), want);
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(k) = crate::board::V3Kernels::new() {
                assert_eq!(perft_inner(k, &Board::START, 8), want);
            }
            if let Some(k) = crate::board::V4Kernels::new() {
                assert_eq!(perft_inner(k, &Board::START, 8), want);
            }
        }
    }

    #[test]
    fn parallel_equals_serial() {
        for depth in [1, 5, 7, 8] {
            assert_eq!(perft_parallel(&Board::START, depth), perft(&Board::START, depth));
        }
    }

    #[test]
    fn perft_of_every_image_equals_the_original() {
        let mut rng = Rng(1234);
        for empties in [50, 40, 30, 20, 12] {
            let b = crate::testutil::random_position(&mut rng, empties);
            let want = perft(&b, 5);
            for t in Transform::ALL {
                assert_eq!(perft(&t.board(&b), 5), want, "{t:?} {b:?}");
            }
        }
    }
}
