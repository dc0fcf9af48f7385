//! Changing a book round by round (a growth round, a fix round) as a stream: the input
//! book's records are read in key order with the round's leaves merged in, written by
//! [`BookFile`] and valued by the one back-up ([`super::build::backup`]) from compact arrays,
//! so that a round holds its own leaves, never the book. Also the level a deepening or
//! a fix raises leaves to.

use std::path::Path;

use super::build::backup::Reached;
use super::build::stream::{BookFile, StreamError, Written};
use super::build::{leaf_record, Leaf, LeafSpec};
use super::format::{BuildParams, Counts, LeafLevel, Record};
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
    // At most this many: every leaf may be a new position.
    out.reserve(book.len() + leaves.len());
    let mut records = book.records().peekable();
    for &(key, leaf) in leaves {
        while let Some(record) = records.next_if(|r| r.key < key) {
            out.push(&record)?;
        }
        let record = match records.next_if(|r| r.key == key) {
            Some(mut searched_again) => {
                leaf.store_in(&mut searched_again);
                searched_again
            }
            // A position the round adds.
            None => leaf_record(key, Counts { games: 0, wins: 0, draws: 0 }, &leaf),
        };
        out.push(&record)?;
    }
    for record in records {
        out.push(&record)?;
    }
    out.finish(roots, Reached::KeepOthers)
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
