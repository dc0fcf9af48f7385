//! Move lists for the search: a fixed-capacity buffer of moves with their flips and an
//! ordering cost, shared by the midgame search and the endgame solver.
//!
//! The buffer holds [`MAX_MOVES`] entries, enough for any board (one move per empty
//! square), yet is not initialised up front: nodes have a handful of moves, and
//! zero-filling 64 entries at every node of the solver cost 2% of its instructions
//! (callgrind, FFO #1–19). Only the first `len` entries are ever read.

use std::mem::MaybeUninit;

use crate::square::Square;

/// Room for the legal moves of any board: at most one per empty square, and a board
/// with a move has at most 60 empties. Reachable positions have at most 33, but any
/// board text can be searched, so the lists never assume fewer.
pub(crate) const MAX_MOVES: usize = 64;

/// A move with what ordering needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OrderedMove {
    /// Where the disc goes.
    pub square: Square,
    /// The discs it flips.
    pub flips: u64,
    /// Lower is searched first.
    pub cost: i32,
    /// The opponent's legal moves after it, where the list's builder counted them to
    /// order the moves (the solver: its child then need not generate them again); 0
    /// where it did not (the midgame search, which never reads them).
    pub replies: u64,
}

/// Up to [`MAX_MOVES`] moves, in push order until [`MoveList::sort`].
pub(crate) struct MoveList {
    items: [MaybeUninit<OrderedMove>; MAX_MOVES],
    len: usize,
}

impl MoveList {
    /// An empty list (nothing is written to the buffer).
    #[inline]
    pub(crate) fn new() -> MoveList {
        MoveList { items: [const { MaybeUninit::uninit() }; MAX_MOVES], len: 0 }
    }

    /// Appends a move.
    ///
    /// # Panics
    /// Past [`MAX_MOVES`] moves, which no board has.
    #[inline]
    pub(crate) fn push(&mut self, m: OrderedMove) {
        self.items[self.len].write(m);
        self.len += 1;
    }

    /// Number of moves.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The moves.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[OrderedMove] {
        // SAFETY: `push` initialised every entry below `len`, and `OrderedMove` is
        // `Copy` (no drop, any bit pattern written by `push` stays valid).
        unsafe { std::slice::from_raw_parts(self.items.as_ptr().cast::<OrderedMove>(), self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [OrderedMove] {
        // SAFETY: as in `as_slice`.
        unsafe { std::slice::from_raw_parts_mut(self.items.as_mut_ptr().cast::<OrderedMove>(), self.len) }
    }

    /// Sorts by cost, lowest first; equal costs keep their order (insertion sort: the
    /// lists are short).
    #[inline]
    pub(crate) fn sort(&mut self) {
        let moves = self.as_mut_slice();
        for i in 1..moves.len() {
            insert_sorted(moves, i, moves[i], |m| m.cost);
        }
    }

    /// The moves in order.
    #[inline]
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, OrderedMove> {
        self.as_slice().iter()
    }
}

/// Inserts `item` into `items[..len]`, sorted by `key` (lowest first, equal keys in
/// the order inserted), which then sorts `items[..=len]`: the insertion sort of the
/// short move and square lists of a node, built while they are filled or afterwards.
///
/// # Panics
/// If `items` has no room past `len`.
#[inline]
pub(crate) fn insert_sorted<T: Copy, K: PartialOrd>(items: &mut [T], len: usize, item: T, key: impl Fn(&T) -> K) {
    let k = key(&item);
    let mut j = len;
    while j > 0 && key(&items[j - 1]) > k {
        items[j] = items[j - 1];
        j -= 1;
    }
    items[j] = item;
}

impl Default for MoveList {
    fn default() -> MoveList {
        MoveList::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_list_sorts_stably() {
        let mut list = MoveList::new();
        assert_eq!(list.len(), 0);
        for i in 0..MAX_MOVES {
            list.push(OrderedMove { square: Square::new(i as u8), flips: i as u64, cost: (i % 3) as i32, replies: 0 });
        }
        list.sort();
        let got: Vec<(i32, u8)> = list.iter().map(|m| (m.cost, m.square.index() as u8)).collect();
        let mut want: Vec<(i32, u8)> = (0..MAX_MOVES as u8).map(|i| ((i % 3) as i32, i)).collect();
        want.sort_by_key(|&(c, _)| c);
        assert_eq!(got, want);
        assert_eq!(list.len(), MAX_MOVES);
    }
}
