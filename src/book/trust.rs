//! How far a book value can be trusted: the leaf that decides it (found by following
//! the book's best option down to a leaf: its search level and how far below it lies),
//! whether the value is proven (every option below it solved to the end), and a grade
//! a player reads at a glance ([`Trust`]).

use std::collections::HashMap;

use serde::Serialize;

use super::build::backup::{leaf_sd, LeafInput};
use super::format::{LeafLevel, Record};
use super::Book;
use crate::board::Board;

/// The leaf a book value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Decider {
    /// How its score was found (a finished game's final score reads as exact); `None`
    /// when the book holds no option for the line (a damaged book).
    pub level: Option<LeafLevel>,
    /// Plies from the position down to it (0: the position's own leaf).
    pub plies_below: u32,
    /// Empty squares at it.
    pub empties: u32,
}

/// The leaf that decides the value of `board` (a book position, any orientation): at
/// each position the best of its leaf and its book children (the leaf on a tie), down
/// to a leaf.
pub(crate) fn decider<D: AsRef<[u8]>>(book: &Book<D>, board: &Board) -> Decider {
    deciding_leaf(|key| book.get(key), |b| book.prefetch_children(b), board).0
}

/// [`decider`] over any lookup of records by key, with the canonical board of the
/// position whose leaf decides; `prefetch` is told each position whose children are
/// about to be looked up.
pub(crate) fn deciding_leaf(
    get: impl Fn(u64) -> Option<Record>,
    prefetch: impl Fn(&Board),
    board: &Board,
) -> (Decider, Board) {
    let mut b = board.canonical().0;
    let mut plies = 0;
    loop {
        let Some(r) = get(b.key()) else {
            return (Decider { level: None, plies_below: plies, empties: b.empty_count() }, b);
        };
        prefetch(&b);
        let leaf = LeafInput::of(&r).contribution(&b);
        let best_child = b
            .successors()
            .filter_map(|(_, c)| {
                let canon = c.canonical().0;
                get(canon.key()).map(|cr| (-i32::from(cr.value), canon))
            })
            .max_by_key(|(v, c)| (*v, std::cmp::Reverse(c.key())));
        match (leaf, best_child) {
            (Some(l), Some((c, _))) if l >= c => return (at_leaf(&r, &b, plies), b),
            (Some(_), None) => return (at_leaf(&r, &b, plies), b),
            (_, Some((_, child))) if plies < 120 => {
                b = child;
                plies += 1;
            }
            _ => return (Decider { level: None, plies_below: plies, empties: b.empty_count() }, b),
        }
    }
}

fn at_leaf(r: &Record, b: &Board, plies: u32) -> Decider {
    let level = if b.is_game_over() {
        LeafLevel { depth: 0, selectivity_tenths: 0, exact: true }
    } else {
        LeafLevel { depth: r.leaf_depth, selectivity_tenths: r.leaf_selectivity, exact: r.leaf_exact() }
    };
    Decider { level: Some(level), plies_below: plies, empties: b.empty_count() }
}

/// Whether the value of `board` (a book position) is proven: its leaf, if it has one,
/// was solved to the end and so was every option of every book position below it.
/// `memo` keeps answers between calls.
pub(crate) fn proven<D: AsRef<[u8]>>(book: &Book<D>, board: &Board, memo: &mut HashMap<u64, bool>) -> bool {
    let b = board.canonical().0;
    let key = b.key();
    if let Some(&p) = memo.get(&key) {
        return p;
    }
    let Some(r) = book.get(key) else { return false };
    let mut ok = r.leaf_move.is_none() || r.leaf_exact();
    if ok {
        book.prefetch_children(&b);
        for (_, child) in b.successors() {
            if book.probe(&child).is_some() && !proven(book, &child, memo) {
                ok = false;
                break;
            }
        }
    }
    memo.insert(key, ok);
    ok
}

/// How far one value can be trusted, as `book query`, `analyze` and the explorer show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Trust {
    /// The value is proven: every option below it was solved to the end.
    pub exact: bool,
    /// The search depth of the leaf that decides it (0 for a solved one).
    pub leaf_depth: u8,
    /// Plies from the position down to that leaf.
    pub leaf_below: u32,
    /// Standard deviation of that leaf's score, discs (`leaf_sd`): 0 when proven.
    pub uncertainty: f64,
    /// The trust in a word: `exact`, `≥`, `±N` or `?` ([`Grade`]).
    pub grade: Grade,
}

/// How far a value can be trusted, in a word, as `book query`, `analyze`, reviews and
/// the explorer write it (and their JSON, as a string).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grade {
    /// `exact`: proven, every option below it solved to the end.
    Exact,
    /// `≥`: decided by a solved leaf while a searched option remains, so the true value
    /// is at least this.
    AtLeast,
    /// `±N`: decided by a searched leaf whose score errs by about N discs (one standard
    /// deviation, rounded, at least 1).
    Within(u8),
    /// `?`: no leaf decides it (its uncertainty reads 0).
    Unknown,
}

impl std::fmt::Display for Grade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, so that the tables' widths (`{:>6}`) apply.
        match self {
            Grade::Exact => f.pad("exact"),
            Grade::AtLeast => f.pad("≥"),
            Grade::Within(n) => f.pad(&format!("±{n}")),
            Grade::Unknown => f.pad("?"),
        }
    }
}

impl Serialize for Grade {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Trust {
    /// The trust of a position's value (`board`, a book position, any orientation).
    pub(crate) fn of_position<D: AsRef<[u8]>>(book: &Book<D>, board: &Board, memo: &mut HashMap<u64, bool>) -> Trust {
        let d = decider(book, board);
        let exact = proven(book, board, memo);
        let sd = match (exact, d.level) {
            (true, _) => 0.0,
            (false, Some(level)) => leaf_sd(level),
            (false, None) => f64::NAN,
        };
        Trust::new(exact, d.level.map_or(0, |l| if l.exact { 0 } else { l.depth }), d.plies_below, sd)
    }

    /// Whether the value of `board` is proven, without the search for its deciding leaf
    /// (`leaf_depth` and `leaf_below` 0, the uncertainty unknown unless proven).
    pub(crate) fn proven_only<D: AsRef<[u8]>>(book: &Book<D>, board: &Board, memo: &mut HashMap<u64, bool>) -> Trust {
        let exact = proven(book, board, memo);
        Trust::new(exact, 0, 0, if exact { 0.0 } else { f64::NAN })
    }

    /// The trust of a leaf's score.
    pub(crate) fn of_leaf(level: LeafLevel) -> Trust {
        Trust::new(level.exact, if level.exact { 0 } else { level.depth }, 0, leaf_sd(level))
    }

    fn new(exact: bool, leaf_depth: u8, leaf_below: u32, uncertainty: f64) -> Trust {
        let grade = if exact {
            Grade::Exact
        } else if uncertainty == 0.0 {
            Grade::AtLeast
        } else if uncertainty.is_finite() {
            // Clamped into u8's range just before: the cast cannot truncate.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Grade::Within(uncertainty.round().clamp(1.0, 255.0) as u8)
        } else {
            Grade::Unknown
        };
        Trust {
            exact,
            leaf_depth,
            leaf_below,
            // Hundredths: the table it comes from holds tenths, and a reader should see
            // 1.6, not 1.5999999999999999.
            uncertainty: if uncertainty.is_finite() { (uncertainty * 100.0).round() / 100.0 } else { 0.0 },
            grade,
        }
    }
}
