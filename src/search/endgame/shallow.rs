//! The solver's last plies: null-window searches of 1–7 empty squares without a table,
//! where most nodes of any solve are (FFO #20–39: 78% of the nodes have 4 empties or
//! fewer, 95% 7 or fewer).
//!
//! - 5–[`SHALLOW_MAX`] empties: a stability cut-off, then the moves sorted by the
//!   opponent's replies, a quadrant with an odd number of empties breaking ties (each
//!   child takes the replies counted for it as its own moves);
//! - 1–4 empties: a stability cut-off at 4, then dedicated code over the explicit
//!   empty squares in parity and class order, with no move generation (a square is
//!   tried where an opponent disc is next to it and it flips something), and the last
//!   move's flips counted from tables ([`last_flip_count`]).
//!
//! Compiling this layer once per CPU level with move generation and flips inlined
//! (`crate::cpu::dispatched!`) instead of calling the kernels' dispatchers made it no
//! faster (FFO #20–39, one thread, 6 runs each: median 3.45 s against 3.29 s).

use super::order::{by_parity_and_class, odd_quadrants, replies_cost, NO_MOVE};
use super::{stability_cut, Solver, SHALLOW_MAX};
use crate::board::{flips, last_flip_count, legal_moves, Board, Squares};
use crate::search::moves::{insert_sorted, OrderedMove};
use crate::square::Square;

/// Sorting the moves by the opponent's replies pays from 5 empties: FFO #20–39 on one
/// thread, with the selective passes of `midgame::end`, 69.2 M nodes sorting from 6
/// and 64.7 M from 5 (3.70 s and 3.83 s); in the first measures, before the passes,
/// 176.3 M ordered by parity and square class alone, 151.1 M sorting at 7, 135.8 M at
/// 6 and 7 (in no more time), 125.2 M from 5 but 5% slower; the sorted search's
/// potential-mobility tie-break gave 136.1 M, slower.
/// The squares around each square: a move there flips something only if one of them
/// holds an opponent disc, which is checked before the flips are computed (at the last
/// empties many squares are not a move for the side to move).
static NEIGHBOURS: [u64; 64] = {
    let mut t = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (r, c) = ((sq / 8) as i32, (sq % 8) as i32);
        let mut dr = -1;
        while dr <= 1 {
            let mut dc = -1;
            while dc <= 1 {
                let (rr, cc) = (r + dr, c + dc);
                if (dr != 0 || dc != 0) && rr >= 0 && rr < 8 && cc >= 0 && cc < 8 {
                    t[sq] |= 1 << (rr * 8 + cc);
                }
                dc += 1;
            }
            dr += 1;
        }
        sq += 1;
    }
    t
};

/// The discs of `o` that `p` flips by playing the empty square `sq`: [`flips`]
/// after the cheap check that an opponent disc is next to it.
#[inline]
fn flips_near(p: u64, o: u64, sq: Square) -> u64 {
    if NEIGHBOURS[sq.index()] & o == 0 {
        return 0;
    }
    flips(p, o, sq)
}

impl Solver<'_> {
    /// Null-window search of 1–[`SHALLOW_MAX`] empties without a table: the score if it
    /// is ≤ alpha (an upper bound), or a lower bound above alpha.
    #[inline]
    pub(super) fn nws_shallow(&mut self, p: u64, o: u64, alpha: i32, empties: u32) -> i32 {
        self.nws_shallow_moves(p, o, alpha, empties, None)
    }

    /// [`Solver::nws_shallow`] where the parent may know the legal moves already (its
    /// sorting generated them).
    pub(super) fn nws_shallow_moves(&mut self, p: u64, o: u64, alpha: i32, empties: u32, known: Option<u64>) -> i32 {
        if empties <= 4 {
            return self.solve_small(p, o, alpha, known);
        }
        self.nodes += 1;
        if let Some(upper) = stability_cut(p, o, alpha, empties) {
            return upper;
        }
        let moves = known.unwrap_or_else(|| legal_moves(p, o));
        if moves == 0 {
            if legal_moves(o, p) == 0 {
                return Board { player: p, opponent: o }.final_score();
            }
            return -self.nws_shallow_moves(o, p, -alpha - 1, empties, None);
        }
        // Fastest first, an odd quadrant breaking ties; each child's moves are the
        // replies counted here, so it need not generate them again.
        let odd = odd_quadrants(!(p | o));
        let mut list = [NO_MOVE; SHALLOW_MAX as usize];
        for (n, sq) in Squares(moves).enumerate() {
            let f = flips(p, o, sq);
            let replies = legal_moves(o ^ f, p | f | sq.bit());
            let cost = replies_cost(replies) - if odd & sq.bit() != 0 { 8 } else { 0 };
            insert_sorted(&mut list, n, OrderedMove { square: sq, flips: f, cost, replies }, |m| m.cost);
        }
        let mut best = -65;
        for &m in &list[..moves.count_ones() as usize] {
            let (cp, co) = (o ^ m.flips, p | m.flips | m.square.bit());
            let v = -self.nws_shallow_moves(cp, co, -alpha - 1, empties - 1, Some(m.replies));
            if v > best {
                best = v;
                if v > alpha {
                    return v;
                }
            }
        }
        best
    }

    /// 1–4 empties, the squares in parity and square-class order. At 4, a stability
    /// cut-off first, as from 5 (FFO #20–39 on one thread: 2.5% fewer nodes in no
    /// more time; 27% fewer on a hard 24-empty Thor position, whose sides hold many
    /// stable discs; a cut counts as a node).
    #[inline]
    fn solve_small(&mut self, p: u64, o: u64, alpha: i32, known: Option<u64>) -> i32 {
        let empty = !(p | o);
        let (order, n) = by_parity_and_class(empty, odd_quadrants(empty));
        if n == 4 {
            if let Some(upper) = stability_cut(p, o, alpha, 4) {
                self.nodes += 1;
                return upper;
            }
        }
        match n {
            4 => self.solve4(p, o, alpha, [order[0], order[1], order[2], order[3]], known.unwrap_or(!0)),
            3 => self.solve3(p, o, alpha, order[0], order[1], order[2]),
            2 => self.solve2(p, o, alpha, order[0], order[1]),
            1 => self.solve1(p, o, order[0]),
            _ => Board { player: p, opponent: o }.final_score(),
        }
    }

    /// Four empties: each side's moves by [`Solver::moves4`], the opponent's after a pass.
    /// `legal` holds the side to move's moves when the parent counted them (all
    /// squares otherwise): the others are not tried.
    #[inline]
    fn solve4(&mut self, p: u64, o: u64, alpha: i32, sq: [Square; 4], legal: u64) -> i32 {
        self.nodes += 1;
        if let Some(v) = self.moves4(p, o, alpha, sq, legal) {
            return v;
        }
        // A pass: the opponent's node (counted when it has a move, as every node is).
        match self.moves4(o, p, -alpha - 1, sq, !0) {
            Some(v) => {
                self.nodes += 1;
                -v
            }
            None => Board { player: p, opponent: o }.final_score(),
        }
    }

    /// The best of `p`'s moves on four empties (`None` when it has none), stopping at
    /// the first above alpha; squares outside `legal` are not tried.
    #[inline]
    fn moves4(&mut self, p: u64, o: u64, alpha: i32, sq: [Square; 4], legal: u64) -> Option<i32> {
        let mut best = -65;
        for i in 0..4 {
            let x = sq[i];
            if legal & x.bit() == 0 {
                continue;
            }
            let f = flips_near(p, o, x);
            if f != 0 {
                let rest = match i {
                    0 => [sq[1], sq[2], sq[3]],
                    1 => [sq[0], sq[2], sq[3]],
                    2 => [sq[0], sq[1], sq[3]],
                    _ => [sq[0], sq[1], sq[2]],
                };
                let v = -self.solve3(o ^ f, p | f | x.bit(), -alpha - 1, rest[0], rest[1], rest[2]);
                if v > best {
                    best = v;
                    if v > alpha {
                        return Some(v);
                    }
                }
            }
        }
        (best > -65).then_some(best)
    }

    /// Three empties, as four.
    #[inline]
    fn solve3(&mut self, p: u64, o: u64, alpha: i32, a: Square, b: Square, c: Square) -> i32 {
        self.nodes += 1;
        if let Some(v) = self.moves3(p, o, alpha, a, b, c) {
            return v;
        }
        match self.moves3(o, p, -alpha - 1, a, b, c) {
            Some(v) => {
                self.nodes += 1;
                -v
            }
            None => Board { player: p, opponent: o }.final_score(),
        }
    }

    #[inline]
    fn moves3(&mut self, p: u64, o: u64, alpha: i32, a: Square, b: Square, c: Square) -> Option<i32> {
        let mut best = -65;
        for (x, y, z) in [(a, b, c), (b, a, c), (c, a, b)] {
            let f = flips_near(p, o, x);
            if f != 0 {
                let v = -self.solve2(o ^ f, p | f | x.bit(), -alpha - 1, y, z);
                if v > best {
                    best = v;
                    if v > alpha {
                        return Some(v);
                    }
                }
            }
        }
        (best > -65).then_some(best)
    }

    /// Two empties, as four.
    #[inline]
    fn solve2(&mut self, p: u64, o: u64, alpha: i32, a: Square, b: Square) -> i32 {
        self.nodes += 1;
        if let Some(v) = self.moves2(p, o, alpha, a, b) {
            return v;
        }
        match self.moves2(o, p, -alpha - 1, a, b) {
            Some(v) => {
                self.nodes += 1;
                -v
            }
            None => Board { player: p, opponent: o }.final_score(),
        }
    }

    #[inline]
    fn moves2(&mut self, p: u64, o: u64, alpha: i32, a: Square, b: Square) -> Option<i32> {
        let mut best = -65;
        let f = flips_near(p, o, a);
        if f != 0 {
            best = -self.solve1(o ^ f, p | f | a.bit(), b);
            if best > alpha {
                return Some(best);
            }
        }
        let f = flips_near(p, o, b);
        if f != 0 {
            return Some(best.max(-self.solve1(o ^ f, p | f | b.bit(), a)));
        }
        (best > -65).then_some(best)
    }

    /// One empty square: the last move decides everything.
    #[inline]
    fn solve1(&mut self, p: u64, o: u64, x: Square) -> i32 {
        self.nodes += 1;
        let discs = p.count_ones() as i32;
        let n = last_flip_count(p, x) as i32;
        if n > 0 {
            return 2 * (discs + n + 1) - 64;
        }
        let n = last_flip_count(o, x) as i32;
        if n > 0 {
            return 2 * (discs - n) - 64;
        }
        // Nobody can play: 63 discs, the empty square goes to the winner.
        if 2 * discs > 63 {
            2 * discs - 62
        } else {
            2 * discs - 64
        }
    }
}
