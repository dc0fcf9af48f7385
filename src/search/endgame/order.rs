//! How the solver orders moves: fastest first (fewest opponent replies, corners
//! counted double) with tie-breaks, the evaluation far from the end, and, at the last
//! few empties, the squares themselves by parity and class.

use super::super::moves::{insert_sorted, MoveList, OrderedMove};
use super::super::tt::{TableKey, TranspositionTable};
use crate::board::{flips, Board, Squares};
use crate::square::Square;

/// Squares by how good a move there usually is, the shallowest searches' order within
/// a parity class: corners, the centre's diagonal and the rest of the centre, edges,
/// the second ring, C and X squares (FFO #20–39 on one thread: 194.2 M nodes in
/// square-number order, 176.3 M in this one).
const SQUARE_CLASSES: [u64; 7] = [
    0x8100_0000_0000_0081,
    0x0000_2400_0024_0000,
    0x0000_1824_2418_0000,
    0x3C00_8181_8181_003C,
    0x003C_4242_4242_3C00,
    0x4281_0000_0000_8142,
    0x0042_0000_0000_4200,
];

/// Quadrant masks for parity ordering.
const QUADRANTS: [u64; 4] =
    [0x0000_0000_0F0F_0F0F, 0x0000_0000_F0F0_F0F0, 0x0F0F_0F0F_0000_0000, 0xF0F0_F0F0_0000_0000];

/// Squares in quadrants holding an odd number of empties.
#[inline]
pub(super) fn odd_quadrants(empty: u64) -> u64 {
    let mut odd = 0;
    for q in QUADRANTS {
        if (empty & q).count_ones() & 1 == 1 {
            odd |= q;
        }
    }
    odd
}

/// Each square's place in [`SQUARE_CLASSES`].
const SQUARE_CLASS: [u8; 64] = {
    let mut table = [0; 64];
    let mut c = 0;
    while c < SQUARE_CLASSES.len() {
        let mut sq = 0;
        while sq < 64 {
            if SQUARE_CLASSES[c] & (1 << sq) != 0 {
                table[sq] = c as u8;
            }
            sq += 1;
        }
        c += 1;
    }
    table
};

/// The most squares [`by_parity_and_class`] orders: the empties of a node of 4.
pub(super) const PARITY_ORDER_MAX: usize = 4;

/// The squares of `set` (at most [`PARITY_ORDER_MAX`]): those in `odd` first, each part
/// in [`SQUARE_CLASSES`] order; and how many there are.
#[inline]
pub(super) fn by_parity_and_class(set: u64, odd: u64) -> ([Square; PARITY_ORDER_MAX], usize) {
    let mut out = [(0u8, Square::new(0)); PARITY_ORDER_MAX];
    let mut n = 0;
    for sq in Squares(set) {
        let key = SQUARE_CLASS[sq.index()] + if odd & sq.bit() != 0 { 0 } else { 8 };
        insert_sorted(&mut out, n, (key, sq), |&(k, _)| k);
        n += 1;
    }
    (out.map(|(_, sq)| sq), n)
}

/// The ordering cost of leaving the opponent `replies` (fastest first): 64 per reply, a
/// corner reply counting double.
#[inline]
pub(super) fn replies_cost(replies: u64) -> i32 {
    (replies.count_ones() + (replies & crate::board::masks::CORNERS).count_ones()) as i32 * 64
}

/// The moves of a node with ordering costs attached (sorted by the caller): the
/// table's move first, then fewest opponent replies (a reply on a corner counts
/// double, 64 per reply), ties broken by `tiebreak(position after the move, move,
/// its replies)`, into `list` (empty). With `tt`, each child's table bucket is
/// prefetched. Generic so that each ordering compiles to its own loop: this runs at
/// every node. The list is filled in place: returned by value from the branches of a
/// choice of ordering, its 1.5 KiB were copied at every node (1% of a solve's time).
#[inline]
pub(super) fn ordered_moves(
    list: &mut MoveList,
    board: &Board,
    moves: u64,
    tt_move: Option<Square>,
    tt: Option<&TranspositionTable>,
    tiebreak: impl Fn(&Board, Square, u64) -> i32,
) {
    for sq in Squares(moves) {
        let f = flips(board.player, board.opponent, sq);
        let child = board.play_flips(sq, f);
        if let Some(tt) = tt {
            tt.prefetch(TableKey::of(&child));
        }
        let replies = child.legal_moves();
        let cost = if Some(sq) == tt_move { i32::MIN } else { replies_cost(replies) + tiebreak(&child, sq, replies) };
        list.push(OrderedMove { square: sq, flips: f, cost, replies });
    }
}

/// Fastest-first ties: potential mobility, corners taken, an odd quadrant.
#[inline]
pub(super) fn fastest_first(
    list: &mut MoveList,
    board: &Board,
    moves: u64,
    tt_move: Option<Square>,
    tt: Option<&TranspositionTable>,
) {
    let odd = odd_quadrants(board.empties());
    ordered_moves(list, board, moves, tt_move, tt, |child, sq, _| {
        let potential = crate::board::adjacent_empties(child.opponent, child.empties()).count_ones() as i32;
        let corner_stab = (child.opponent & crate::board::masks::CORNERS).count_ones() as i32;
        potential * 4 - corner_stab * 32 - if odd & sq.bit() != 0 { 8 } else { 0 }
    })
}

/// A sorted list's entry for a move whose cost is not yet known (the buffers of the
/// table-less searches start filled with it).
pub(super) const NO_MOVE: OrderedMove = OrderedMove { square: Square::new(0), flips: 0, cost: 0, replies: 0 };
