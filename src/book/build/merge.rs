//! Merging books into one: per position the better leaf and the larger game counts,
//! values backed up again by the merged header's rule, and the header's parameters
//! combined. [`merge_into`] streams any number of books in key order (a k-way merge)
//! to a file, in memory that holds no record (see [`super::stream`]); the in-memory
//! merge of two books is kept only as the tests' reference for it.

use std::collections::BinaryHeap;
use std::path::Path;

use super::backup::Reached;
use super::stream::{BookFile, StreamError, Written};
use crate::board::Board;
use crate::book::format::{BuildParams, Record};
use crate::book::Book;

/// A merged book: its records in key order and the parameters its header states.
#[cfg(test)]
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Merged {
    /// Records in key order.
    pub records: Vec<Record>,
    /// The header's parameters.
    pub params: BuildParams,
}

#[cfg(test)]
impl Merged {
    /// The book file's bytes.
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>, crate::book::format::BookError> {
        crate::book::format::Writer::write_all(&self.records, self.params)
    }
}

impl BuildParams {
    /// The parameters a merge of books built with `a` and `b` states: the larger
    /// collection ply, depth and exact threshold (a merged book holds positions and
    /// leaves of both), the most selective width (full width only if both were), the
    /// smaller game threshold, and the evaluation only when one evaluation scored
    /// both (else none, digest 0).
    pub(crate) fn merged(a: BuildParams, b: BuildParams) -> BuildParams {
        BuildParams {
            max_ply: a.max_ply.max(b.max_ply),
            depth: a.depth.max(b.depth),
            exact_at: a.exact_at.max(b.exact_at),
            selectivity_tenths: match (a.selectivity_tenths, b.selectivity_tenths) {
                (0, t) | (t, 0) => t,
                (x, y) => x.min(y),
            },
            min_games: a.min_games.min(b.min_games),
            eval_digest: if a.eval_digest == b.eval_digest { a.eval_digest } else { 0 },
            // The corrected rule when either book used it (so that any order agrees).
            back_up: if a.back_up.byte() >= b.back_up.byte() { a.back_up } else { b.back_up },
        }
    }
}

/// Merges two books in memory (the reference [`merge_into`] is tested against). Per
/// position: a leaf beats none, an exact leaf beats a searched one, then the deeper
/// leaf, then the less selective, then the higher leaf score, then the lower move
/// code; game counts come from the record with more games (then more wins, then more
/// draws). Values are then backed up again by the merged header's rule over the
/// positions reachable from the start; others keep the value of the record chosen.
/// Every choice depends only on the two records, so `merge(a, b)` and `merge(b, a)`
/// are the same book; the header's parameters are `BuildParams::merged`.
#[cfg(test)]
pub(crate) fn merge<A: AsRef<[u8]>, B: AsRef<[u8]>>(a: &Book<A>, b: &Book<B>) -> Merged {
    let mut by_key: std::collections::BTreeMap<u64, Record> = a.records().map(|r| (r.key, r)).collect();
    for r in b.records() {
        by_key.entry(r.key).and_modify(|old| *old = combine(*old, r)).or_insert(r);
    }
    let mut records: Vec<Record> = by_key.into_values().collect();
    let params = BuildParams::merged(a.params(), b.params());
    super::backup::back_up_records(&mut records, [Board::START], params.back_up, Reached::KeepOthers);
    Merged { records, params }
}

/// The record of a position two books hold: the better leaf (a leaf beats none, exact
/// beats searched, then deeper, less selective, higher score, lower move code), the
/// counts of the record with more games (then wins, then draws), the value of the
/// record first by both. Ties keep `old`; every order of the books gives one result.
fn combine(old: Record, r: Record) -> Record {
    let leaf_rank = |x: &Record| {
        let level = x.leaf_level().map(|l| l.rank());
        (level, x.leaf_score, std::cmp::Reverse(x.leaf_move))
    };
    let count_rank = |x: &Record| (x.games, x.wins, x.draws);
    let leaf = if leaf_rank(&r) > leaf_rank(&old) { r } else { old };
    let counts = if count_rank(&r) > count_rank(&old) { r } else { old };
    let first = (leaf_rank(&r), count_rank(&r)) > (leaf_rank(&old), count_rank(&old));
    let value = if first { r.value } else { old.value };
    Record { games: counts.games, wins: counts.wins, draws: counts.draws, value, ..leaf }
}

/// Merges `books` (any number) into the book file `output`. Per position: a leaf beats
/// none, an exact leaf beats a searched one, then the deeper leaf, the less selective,
/// the higher leaf score, the lower move code; game counts come from the record with
/// more games (then wins, then draws); the values are backed up again by the merged
/// header's rule over the positions reachable from the start. Every choice depends
/// only on the records, so any order of the books gives the same file. The books are
/// read once, in key order, side by side; the values are backed up over compact
/// arrays. Returns what was written and the header's parameters.
pub fn merge_into<D: AsRef<[u8]>>(books: &[&Book<D>], output: &Path) -> Result<(Written, BuildParams), StreamError> {
    let params = books.iter().map(|b| b.params()).reduce(BuildParams::merged).unwrap_or_default();
    let mut file = BookFile::create(output, params)?;
    // The next record of each book, smallest key first (then book order).
    let mut heads: BinaryHeap<std::cmp::Reverse<(u64, usize, usize)>> = BinaryHeap::new();
    for (b, book) in books.iter().enumerate() {
        if !book.is_empty() {
            heads.push(std::cmp::Reverse((book.record(0).key, b, 0)));
        }
    }
    let mut pending: Option<Record> = None;
    while let Some(std::cmp::Reverse((_, b, i))) = heads.pop() {
        let r = books[b].record(i);
        if i + 1 < books[b].len() {
            heads.push(std::cmp::Reverse((books[b].record(i + 1).key, b, i + 1)));
        }
        pending = Some(match pending {
            Some(p) if p.key == r.key => combine(p, r),
            Some(p) => {
                file.push(&p)?;
                r
            }
            None => r,
        });
    }
    if let Some(p) = pending {
        file.push(&p)?;
    }
    Ok((file.finish(&[Board::START], Reached::KeepOthers)?, params))
}
