//! The one back-up of book values. Every book thorbook writes — a build, a shard
//! assembly, a merge, a growth round, an import — gets its values here, by one rule
//! over the positions in key order:
//!
//! - a position's value is the best of its leaf's score (when a move leaves the book,
//!   or the final score of a finished game) and minus the value of each of its book
//!   children;
//! - the boards come from a board provider: a walk from the start position (a
//!   thorbook book stores keys, not boards), or the boards a growth or an import
//!   already knows; every position reached from one of them is valued, depth first,
//!   each once;
//! - a position no walk reaches keeps the value it has (a build's assembly drops it
//!   instead, see [`Reached`]).
//!
//! The arrays are compact — a key, four bytes of leaf and a value byte a position,
//! two bits, and a key table of 4 bytes a bucket — so that books of tens of millions
//! of positions back up without their records in memory.

use super::format::{find_key, stored_score, LeafMove, Record};
use crate::board::Board;

/// What the back-up reads of a position's leaf: its move, score and how it was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeafInput {
    /// The move leaving the book (or none).
    pub mv: LeafMove,
    /// Its score for the side to move (the final score of a finished game).
    pub score: i8,
}

impl LeafInput {
    /// The leaf of a record.
    pub fn of(record: &Record) -> LeafInput {
        LeafInput { mv: record.leaf_move, score: record.leaf_score }
    }

    /// The score the leaf contributes at `board`: its score if a move leaves the book,
    /// the final score if the game is over, nothing if every move stays in the book.
    pub fn contribution(&self, board: &Board) -> Option<i32> {
        (!self.mv.is_none() || board.is_game_over()).then_some(i32::from(self.score))
    }
}

/// Which positions a back-up reached, and their values.
pub struct Values {
    values: Vec<i8>,
    /// Bit per position: reached from a root.
    reached: Vec<u64>,
    /// Bit per position: has a value (a leaf or a child with one).
    valued: Vec<u64>,
}

/// What becomes of positions no walk reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reached {
    /// They stay, with the values they have (a merge, a growth, an import: a book may
    /// hold positions whose boards are unknown).
    KeepOthers,
    /// They are dropped (a build: play cannot find them through the book, and formats
    /// that store boards could not carry them).
    DropOthers,
}

fn bit(bits: &[u64], i: usize) -> bool {
    bits[i / 64] >> (i % 64) & 1 == 1
}

fn set(bits: &mut [u64], i: usize) {
    bits[i / 64] |= 1 << (i % 64);
}

impl Values {
    /// Backs up the values of the positions with sorted, distinct `keys` and their
    /// `leaves` (`leaves[i]` the leaf of `keys[i]`), walking from every board of
    /// `roots` that is a book position (canonical or not).
    pub fn compute(keys: &[u64], leaves: &[LeafInput], roots: impl IntoIterator<Item = Board>) -> Values {
        debug_assert_eq!(keys.len(), leaves.len());
        let words = keys.len().div_ceil(64);
        let mut v = Values { values: vec![0; keys.len()], reached: vec![0; words], valued: vec![0; words] };
        let index = KeyIndex::new(keys);
        for root in roots {
            let canon = root.canonical().0;
            if let Some(i) = index.find(canon.key()) {
                v.visit(&index, leaves, i, &canon);
            }
        }
        v
    }

    /// Whether position `i` was reached from a root.
    pub fn reached(&self, i: usize) -> bool {
        bit(&self.reached, i)
    }

    /// The backed-up value of position `i`; `None` when it was not reached, or has
    /// neither a leaf nor a valued child (a book cut short: it keeps its value).
    pub fn value(&self, i: usize) -> Option<i8> {
        bit(&self.valued, i).then(|| self.values[i])
    }

    /// The value of position `i` with canonical board `board`: depth first, each
    /// position once (the game graph has no cycles; the depth is at most 60 moves and
    /// the passes between them).
    fn visit(&mut self, keys: &KeyIndex, leaves: &[LeafInput], i: usize, board: &Board) -> Option<i8> {
        if self.reached(i) {
            return self.value(i);
        }
        set(&mut self.reached, i);
        let mut best = leaves[i].contribution(board);
        for (_, child) in board.successors() {
            let canon = child.canonical().0;
            if let Some(j) = keys.find(canon.key()) {
                if let Some(c) = self.visit(keys, leaves, j, &canon) {
                    let c = -i32::from(c);
                    best = Some(best.map_or(c, |b| b.max(c)));
                }
            }
        }
        let value = best.map(stored_score);
        if let Some(v) = value {
            self.values[i] = v;
            set(&mut self.valued, i);
        }
        value
    }
}

/// Backs up the values of `records` (in key order) in place, walking from `roots`,
/// and applies `others` to the positions no walk reaches.
pub fn back_up_records(records: &mut Vec<Record>, roots: impl IntoIterator<Item = Board>, others: Reached) {
    let keys: Vec<u64> = records.iter().map(|r| r.key).collect();
    let leaves: Vec<LeafInput> = records.iter().map(LeafInput::of).collect();
    let values = Values::compute(&keys, &leaves, roots);
    for (i, r) in records.iter_mut().enumerate() {
        if let Some(v) = values.value(i) {
            r.value = v;
        }
    }
    if others == Reached::DropOthers {
        let mut i = 0;
        records.retain(|_| {
            i += 1;
            values.reached(i - 1)
        });
    }
}

/// Sorted keys with a table of where each run of leading bits starts: a lookup reads
/// one table entry and, on average, under two keys — two cache misses where a search
/// of 50 million keys takes five or more (the back-up makes about ten lookups a
/// position).
struct KeyIndex<'a> {
    keys: &'a [u64],
    /// `starts[b]`: the first key whose top `bits` bits are `b` or more.
    starts: Vec<u32>,
    bits: u32,
}

impl<'a> KeyIndex<'a> {
    fn new(keys: &'a [u64]) -> KeyIndex<'a> {
        // About one key a bucket, and indices that fit in 32 bits (else no table).
        let bits = if u32::try_from(keys.len()).is_ok() { keys.len().max(2).ilog2().min(32) } else { 0 };
        let mut starts = Vec::new();
        if bits > 0 {
            starts = Vec::with_capacity((1usize << bits) + 1);
            let mut i = 0usize;
            for bucket in 0..(1u64 << bits) {
                while i < keys.len() && keys[i] >> (64 - bits) < bucket {
                    i += 1;
                }
                starts.push(u32::try_from(i).expect("fewer than 2^32 keys"));
            }
            starts.push(u32::try_from(keys.len()).expect("fewer than 2^32 keys"));
        }
        KeyIndex { keys, starts, bits }
    }

    fn find(&self, key: u64) -> Option<usize> {
        if self.bits == 0 {
            return find_key(self.keys.len(), |i| self.keys[i], key);
        }
        let bucket = usize::try_from(key >> (64 - self.bits)).expect("below 2^32");
        let (lo, hi) = (self.starts[bucket] as usize, self.starts[bucket + 1] as usize);
        self.keys[lo..hi].iter().position(|&k| k == key).map(|j| lo + j)
    }
}
