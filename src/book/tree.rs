//! Changing a book round by round (a growth round, a fix round) as a stream: the input
//! book's records are read in key order with the round's leaves merged in, written by
//! [`BookFile`] and valued by the one back-up ([`super::backup`]) from compact arrays,
//! so that a round holds its own leaves, never the book. Also the level a deepening or
//! a fix raises leaves to.

use std::path::Path;

use super::backup::Reached;
use super::build::{Leaf, LeafSpec};
use super::format::{BuildParams, LeafLevel, LeafMove, Record};
use super::stream::{BookFile, StreamError, Written};
use super::Book;
use crate::board::Board;

/// Writes `book` with `leaves` (sorted by key, each key once) stored in it to `path`:
/// a book position gets its new leaf, any other key becomes a position valued at its
/// leaf (with no games). With `roots`, the values are backed up walking from them (a
/// position no walk reaches keeps its value); with none, the values are kept as they
/// are. The header is `params`.
pub(crate) fn write_changed<D: AsRef<[u8]>>(
    book: &Book<D>,
    leaves: &[(u64, Leaf)],
    params: BuildParams,
    roots: &[Board],
    path: &Path,
) -> Result<Written, StreamError> {
    let mut out = BookFile::create(path, params)?;
    let mut records = book.records().peekable();
    let mut leaves = leaves.iter().peekable();
    loop {
        let (book_key, leaf) = (records.peek().map(|r| r.key), leaves.peek().map(|&&(key, leaf)| (key, leaf)));
        let record = match (book_key, leaf) {
            (None, None) => break,
            // A book position searched again.
            (Some(k), Some((key, leaf))) if k == key => {
                leaves.next();
                let Some(mut record) = records.next() else { break };
                leaf.store_in(&mut record);
                record
            }
            // A position the round adds.
            (Some(_), Some((key, leaf))) | (None, Some((key, leaf))) if book_key.is_none_or(|k| key < k) => {
                leaves.next();
                let mut record = new_position(key);
                leaf.store_in(&mut record);
                record.value = record.leaf_score;
                record
            }
            _ => {
                let Some(record) = records.next() else { break };
                record
            }
        };
        out.push(&record)?;
    }
    out.finish(roots, Reached::KeepOthers)
}

/// The record of a position a round adds, before its leaf is stored.
fn new_position(key: u64) -> Record {
    Record {
        key,
        value: 0,
        leaf_move: LeafMove::NONE,
        leaf_score: 0,
        leaf_depth: 0,
        games: 0,
        wins: 0,
        draws: 0,
        flags: 0,
        leaf_selectivity: 0,
    }
}

/// The level a deepening or a fix raises leaves to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target {
    rank: (bool, u8, u8),
    exact_at: u32,
}

impl Target {
    pub(crate) fn of(search: &LeafSpec) -> Target {
        let level = LeafLevel {
            depth: search.strength.depth.map_or(0, |d| u8::try_from(d).unwrap_or(u8::MAX)),
            selectivity_tenths: search.selectivity_tenths(),
            exact: false,
        };
        Target { rank: level.rank(), exact_at: search.strength.exact_at.unwrap_or(0) }
    }
}

/// Whether a searched leaf is below the target: searched less deeply, or not solved
/// where the target solves.
pub(crate) fn below(r: &Record, board: &Board, t: Target) -> bool {
    match r.leaf_level() {
        Some(level) if !level.exact => board.empty_count() <= t.exact_at || level.rank() < t.rank,
        _ => false,
    }
}
