//! A book held in memory while it is changed (a growth round, a fix): canonical
//! boards with their records, the positions whose boards are unknown kept aside, the
//! one back-up ([`super::backup`]) over all of them, and the encoding into a book.

use std::collections::BTreeMap;

use super::backup::{back_up_records, BackUpRule, Reached};
use super::build::LeafSpec;
use super::format::{BookError, BuildParams, LeafLevel, Record, Writer};
use super::interchange::known_boards;
use super::Book;
use crate::board::Board;

/// A book being grown: canonical boards with their records.
pub(crate) struct Tree {
    pub(crate) nodes: BTreeMap<u64, (Board, Record)>,
    /// Records whose boards are unknown (not reachable from the start): kept as they are.
    pub(crate) opaque: BTreeMap<u64, Record>,
}

impl Tree {
    pub(crate) fn from_book<D: AsRef<[u8]>>(book: &Book<D>) -> Tree {
        let boards = known_boards(book);
        let mut nodes = BTreeMap::new();
        let mut opaque = BTreeMap::new();
        for r in book.records() {
            match boards.get(&r.key) {
                Some(b) => {
                    nodes.insert(r.key, (*b, r));
                }
                None => {
                    opaque.insert(r.key, r);
                }
            }
        }
        Tree { nodes, opaque }
    }

    /// The record of `key`, board known or not.
    pub(crate) fn record(&self, key: u64) -> Option<Record> {
        self.nodes.get(&key).map(|(_, r)| *r).or_else(|| self.opaque.get(&key).copied())
    }

    pub(crate) fn contains(&self, key: u64) -> bool {
        self.nodes.contains_key(&key) || self.opaque.contains_key(&key)
    }

    pub(crate) fn value(&self, key: u64) -> Option<i32> {
        self.nodes.get(&key).map(|(_, r)| r.value as i32)
    }

    /// Recomputes every value by the one back-up, walking from every known board.
    pub(crate) fn back_up(&mut self, rule: BackUpRule) {
        let mut records: Vec<Record> =
            self.nodes.values().map(|(_, r)| *r).chain(self.opaque.values().copied()).collect();
        records.sort_unstable_by_key(|r| r.key);
        let roots: Vec<Board> = self.nodes.values().map(|(b, _)| *b).collect();
        back_up_records(&mut records, roots, rule, Reached::KeepOthers);
        for r in records {
            if let Some(entry) = self.nodes.get_mut(&r.key) {
                entry.1.value = r.value;
            }
        }
    }

    pub(crate) fn encode(&self, params: BuildParams) -> Result<Vec<u8>, BookError> {
        let mut all: Vec<&Record> = self.nodes.values().map(|(_, r)| r).chain(self.opaque.values()).collect();
        all.sort_by_key(|r| r.key);
        let mut w = Writer::new(params);
        for r in all {
            w.push(r)?;
        }
        Ok(w.finish())
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
