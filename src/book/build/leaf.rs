//! A book's leaf: the best move leaving the book from a position, and its search
//! ([`LeafSpec`], what names it; [`LeafSearch`], the spec with its evaluation and
//! threads). Each leaf is searched on one thread from a cleared table, so that a book
//! is the same for any thread count and after an interruption.

use std::sync::atomic::AtomicBool;

use super::error::BuildError;
use super::Node;
use crate::board::{Board, Squares};
use crate::book::format::{stored_score, BackUpRule, BuildParams, Counts, LeafMove, Record, FLAG_LEAF_EXACT};
use crate::eval::AnyEval;
use crate::search::batch::map_with_tables;
use crate::search::{Search, Selectivity, Settings, Strength, TranspositionTable};

/// What every leaf search of a book depends on besides the position and which of its
/// moves stay in the book: the strength, the table size and the evaluation's digest.
/// It is all a plan needs to name its searches and write its book; only a run that
/// searches loads the evaluation ([`LeafSearch`]).
#[derive(Clone, Debug)]
pub(crate) struct LeafSpec {
    /// Depth, exact threshold, width and budgets.
    pub(crate) strength: Strength,
    /// Table per search, MiB.
    pub(crate) hash_mib: usize,
    /// The evaluation's digest ([`AnyEval::digest`]).
    pub(crate) eval_digest: u32,
}

/// How every leaf of a book is searched, resolved from [`Settings`] and checked: its
/// [`LeafSpec`] (which it derefs to), the threads that search side by side and the
/// loaded evaluation. At a fixed depth or node budget a leaf's result depends on
/// nothing else: each leaf is searched on one thread from a cleared table.
#[derive(Clone, Debug)]
pub(crate) struct LeafSearch {
    spec: LeafSpec,
    /// Leaf searches side by side.
    pub(crate) threads: usize,
    /// The evaluation.
    pub(crate) eval: AnyEval,
}

// A leaf search is its spec with an evaluation and threads: everything that names the
// searches reads the spec through the search.
impl std::ops::Deref for LeafSearch {
    type Target = LeafSpec;

    fn deref(&self) -> &LeafSpec {
        &self.spec
    }
}

impl LeafSearch {
    /// `settings` over `fallback`, validated, the evaluation loaded and one table
    /// allocated as a trial, so that a size the system cannot give fails before any
    /// work is done.
    pub(crate) fn new(settings: &Settings, fallback: Strength) -> Result<LeafSearch, BuildError> {
        let resolved = settings.resolve_over(fallback)?;
        drop(resolved.table()?);
        let strength = resolved.strength();
        if strength.depth.is_none() && strength.time.is_none() && strength.nodes.is_none() {
            return Err(BuildError::NoDepth);
        }
        let eval = resolved.eval().load()?;
        let spec = LeafSpec { strength, hash_mib: resolved.hash_mib(), eval_digest: eval.digest() };
        Ok(LeafSearch { spec, threads: resolved.threads(), eval })
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The search `spec` names, on `threads` threads, with `eval` (which the caller
    /// checked has the spec's digest).
    pub(crate) fn with_eval(spec: &LeafSpec, threads: usize, eval: AnyEval) -> LeafSearch {
        LeafSearch { spec: spec.clone(), threads, eval }
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The spec alone.
    pub(crate) fn spec(&self) -> &LeafSpec {
        &self.spec
    }
}

impl LeafSpec {
    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The spec of a resolved `strength` (as a plan records it) with an evaluation of
    /// digest `eval_digest`. The table size is checked, not allocated: opening a plan
    /// to report on it or assemble it must not take a search's memory.
    pub(crate) fn recorded_in_plan(
        strength: Strength,
        hash_mib: usize,
        eval_digest: u32,
    ) -> Result<LeafSpec, BuildError> {
        TranspositionTable::check_size(hash_mib)?;
        if strength.depth.is_none() && strength.time.is_none() && strength.nodes.is_none() {
            return Err(BuildError::NoDepth);
        }
        Ok(LeafSpec { strength, hash_mib, eval_digest })
    }

    /// Every setting a search's result depends on, as text: the part of a resumable
    /// run's identity (deviation state, audit and fix logs) that names the search.
    pub(crate) fn identity(&self) -> String {
        let p = self.params(0, 0);
        format!(
            "depth {} exact_at {} selectivity {} eval {:08x} hash {} nodes {} time_ms {}",
            p.depth,
            p.exact_at,
            p.selectivity_tenths,
            p.eval_digest,
            self.hash_mib,
            self.strength.nodes.unwrap_or(0),
            self.strength.time.map_or(0, |t| t.as_millis()),
        )
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The level a leaf of this search records (not exact: a search may end exact, the
    /// setting does not say).
    pub(crate) fn level(&self) -> crate::book::format::LeafLevel {
        let p = self.params(0, 0);
        crate::book::format::LeafLevel { depth: p.depth, selectivity_tenths: p.selectivity_tenths, exact: false }
    }

    /// The parameters a book built with this search records in its header.
    pub(crate) fn params(&self, max_ply: u32, min_games: u32) -> BuildParams {
        BuildParams {
            max_ply: max_ply.min(255) as u8,
            depth: self.strength.depth.map_or(0, |d| d.min(255) as u8),
            exact_at: self.strength.exact_at.map_or(0, |e| e.min(255) as u8),
            min_games,
            eval_digest: self.eval_digest,
            selectivity_tenths: self.selectivity_tenths(),
            back_up: BackUpRule::default(),
        }
    }

    /// The width as books record it: tenths of a standard deviation, 0 for full width.
    pub(crate) fn selectivity_tenths(&self) -> u8 {
        self.strength.selectivity.map_or(0, Selectivity::tenths)
    }

    /// The strength a book's header records: what a deviation of it searches by default.
    pub(crate) fn recorded(params: &BuildParams) -> Strength {
        Strength {
            depth: (params.depth > 0).then_some(u32::from(params.depth)),
            exact_at: Some(u32::from(params.exact_at)),
            time: None,
            nodes: None,
            selectivity: Selectivity::from_tenths(params.selectivity_tenths),
        }
    }
}

impl LeafSearch {
    /// A pool of `threads` workers for the leaf searches.
    pub(crate) fn pool(&self) -> Result<rayon::ThreadPool, BuildError> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(self.threads)
            .build()
            .map_err(|source| BuildError::Threads { threads: self.threads, source })
    }

    /// `score(job, table)` for every job, in parallel on the current rayon pool, each
    /// worker with a table of its own; a table that cannot be allocated stops the work
    /// with an error.
    pub(crate) fn par_map<T: Sync, R: Send>(
        &self,
        jobs: &[T],
        score: impl Fn(&T, &mut TranspositionTable) -> R + Sync + Send,
    ) -> Result<Vec<R>, BuildError> {
        map_with_tables(jobs, self.hash_mib, |table, job| Ok(score(job, table.get()?)))
    }
}

/// The best move leaving the book from a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// The move (canonical orientation), a pass, or none.
    pub mv: LeafMove,
    /// Score for the side to move.
    pub score: i8,
    /// Search depth.
    pub depth: u8,
    /// Solved to the end.
    pub exact: bool,
    /// Multi-ProbCut selectivity of the search, tenths of a standard deviation (0: full width).
    pub selectivity: u8,
}

impl Leaf {
    /// Stores the leaf in a record's leaf fields (the inverse of [`Leaf::from_record`]).
    pub(crate) fn store_in(&self, r: &mut Record) {
        r.leaf_move = self.mv;
        r.leaf_score = self.score;
        r.leaf_depth = self.depth;
        r.flags = if self.exact { FLAG_LEAF_EXACT } else { 0 };
        r.leaf_selectivity = self.selectivity;
    }

    /// The leaf a record stores (what [`record`] wrote from it).
    pub(crate) fn from_record(r: &Record) -> Leaf {
        Leaf {
            mv: r.leaf_move,
            score: r.leaf_score,
            depth: r.leaf_depth,
            exact: r.leaf_exact(),
            selectivity: r.leaf_selectivity,
        }
    }
}

/// The moves of `board` whose children are book positions, as a square set.
fn moves_into_book(board: &Board, in_book: &impl Fn(u64) -> bool) -> u64 {
    let mut set = 0;
    for sq in Squares(board.legal_moves()) {
        let child = board.play(sq).expect("legal");
        if in_book(child.canonical_key()) {
            set |= sq.bit();
        }
    }
    set
}

/// Scores the best move leaving the book from `board` (canonical), searching only the
/// moves whose children are not book positions. The search starts from a cleared
/// table, so its result depends on nothing searched before (what makes a book the same
/// for any thread count and after an interruption).
pub(crate) fn score_leaf(
    board: &Board,
    in_book: &impl Fn(u64) -> bool,
    search: &LeafSearch,
    tt: &mut TranspositionTable,
) -> Leaf {
    let none = Leaf { mv: LeafMove::NONE, score: 0, depth: 0, exact: true, selectivity: 0 };
    let legal = board.legal_moves();
    if legal == 0 {
        let passed = board.pass();
        if passed.legal_moves() == 0 {
            return Leaf {
                mv: LeafMove::NONE,
                score: stored_score(board.final_score()),
                depth: 0,
                exact: true,
                selectivity: 0,
            };
        }
        if in_book(passed.canonical_key()) {
            return none;
        }
        let child = search_position(&passed, 0, search, tt);
        return Leaf { mv: LeafMove::PASS, score: -child.score, ..child };
    }
    let exclude = moves_into_book(board, in_book);
    if exclude == legal {
        return none;
    }
    search_position(board, exclude, search, tt)
}

/// The search of `board` (its moves in `exclude` left out) at `search`'s settings, on
/// one thread from a cleared table: its best move and score as a leaf. A position
/// without a move to search gives no move, score 0.
pub(crate) fn search_position(board: &Board, exclude: u64, search: &LeafSearch, tt: &mut TranspositionTable) -> Leaf {
    tt.clear();
    let stop = AtomicBool::new(false);
    let limits = crate::search::Limits { exclude, ..search.strength.limits(board) };
    let r = Search::new(&search.eval, tt, &stop, 1).run(board, limits, false);
    match r.moves.first() {
        Some(m) => Leaf {
            mv: LeafMove::of(m.mv),
            score: stored_score(m.score),
            depth: r.depth.min(255) as u8,
            exact: r.exact,
            selectivity: if r.exact { 0 } else { search.selectivity_tenths() },
        },
        None => Leaf { mv: LeafMove::NONE, score: 0, depth: 0, exact: true, selectivity: 0 },
    }
}

/// The book record of a position with its leaf, valued at the leaf.
pub(crate) fn record(n: &Node, leaf: &Leaf) -> Record {
    let draws = u16::try_from(n.draws).unwrap_or(u16::MAX);
    leaf_record(n.key, Counts { games: n.games, wins: n.wins, draws }, leaf)
}

/// The record of a position with nothing below it in the book (yet): its leaf, valued
/// at the leaf's score.
pub(crate) fn leaf_record(key: u64, counts: Counts, leaf: &Leaf) -> Record {
    let mut r = Record {
        key,
        value: leaf.score,
        leaf_move: LeafMove::NONE,
        leaf_score: 0,
        leaf_depth: 0,
        games: 0,
        wins: 0,
        draws: 0,
        flags: 0,
        leaf_selectivity: 0,
    }
    .with_counts(counts);
    leaf.store_in(&mut r);
    r
}
