//! Building a book from games: collect every position up to a ply limit (merged over
//! the 8 symmetries, full boards kept so a key collision is an error, never a silent
//! merge), score each position's best move leaving the book with a deep search in
//! parallel, back the values up by negamax over the book graph, and produce the
//! records. Finished searches are appended to a checkpoint file as they complete
//! ([`super::checkpoint`], in the leaf-file codec of [`super::leaflog`]), so a build
//! that is interrupted resumes without redoing them.
//!
//! Scoring is deterministic at a fixed depth: every position is searched on one
//! thread with its own fresh transposition table, so neither the thread count nor an
//! interruption changes the book. (`--time-per-position` is not deterministic.)

use std::sync::atomic::AtomicBool;

use thiserror::Error;

use super::backup::BackUpRule;
use super::format::{stored_score, BookError, BuildParams, Counts, LeafMove, Record, FLAG_LEAF_EXACT};
use crate::board::{Board, Color, Squares};
use crate::eval::AnyEval;
use crate::fileio::IoError;
use crate::position::Position;
use crate::search::batch::map_with_tables;
use crate::search::tt::TableError;
use crate::search::{Search, Selectivity, Settings, SettingsError, Strength, TranspositionTable};
use crate::setting::{check, OutOfRange, Setting};
use crate::square::Move;

/// What to build: which positions, and how each leaf is searched.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BuildConfig {
    /// Collect positions up to this many plies (moves and passes) from the start, 1..=60.
    pub max_ply: u32,
    /// Leave out positions reached by fewer games (at least 1).
    pub min_games: u32,
    /// How each leaf is searched, over `BuildConfig::LEAF_FALLBACK` (explicit values
    /// first, then the level's). `threads` leaf searches run side by side, each on one
    /// thread with a table of its own of `hash_mib`.
    pub search: Settings,
    /// How the values are backed up from the leaves.
    pub back_up: BackUpRule,
}

/// What an update of a book may change; every `None` keeps what the book's header
/// records ([`BuildConfig::update_of`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct UpdateChoices {
    /// Collect positions up to this ply.
    pub max_ply: Option<u32>,
    /// Keep positions reached by at least this many games.
    pub min_games: Option<u32>,
    /// How values are backed up.
    pub back_up: Option<BackUpRule>,
    /// How new leaves are searched: explicit values (depth, exact threshold, width)
    /// over the level's when `search.level` is set, else over the header's; table,
    /// threads and evaluation as given.
    pub search: Settings,
}

/// How leaves are searched unless told otherwise: the default level on every core,
/// each search with a 4 MiB table. A leaf search starts from an empty table, and
/// clearing the default 64 MiB one before each leaf costs more than the search.
pub(crate) fn leaf_settings() -> Settings {
    Settings::default().with_hash_mib(4).with_threads(crate::search::default_threads())
}

impl Default for UpdateChoices {
    /// Everything as the book records; the leaves searched on every core, each search
    /// with a 4 MiB table.
    fn default() -> UpdateChoices {
        UpdateChoices { max_ply: None, min_games: None, back_up: None, search: leaf_settings() }
    }
}

impl Default for BuildConfig {
    /// The bundled book's collection (ply 20, 2 games) with the default leaf search.
    fn default() -> BuildConfig {
        BuildConfig { max_ply: 20, min_games: 2, search: leaf_settings(), back_up: BackUpRule::default() }
    }
}

impl BuildConfig {
    /// The build that updates a book whose header is `params`: the header's ply limit,
    /// game minimum, back-up rule and leaf search (depth, exact threshold, width)
    /// unless `choices` says otherwise, so that the book's leaves stay reusable (the
    /// [`Builder`](super::Builder) refuses, before it collects anything, a search or
    /// evaluation under which they are not).
    pub fn update_of(params: &BuildParams, choices: UpdateChoices) -> Result<BuildConfig, BuildError> {
        let UpdateChoices { max_ply, min_games, back_up, search } = choices;
        let recorded = LeafSpec::recorded(params);
        let search = match search.level {
            Some(_) => search,
            None => Settings {
                depth: search.depth.or(recorded.depth),
                exact_at: search.exact_at.or(recorded.exact_at),
                width: search.width.or(Some(crate::search::Width::of(recorded.selectivity))),
                ..search
            },
        };
        search.validate()?;
        Ok(BuildConfig {
            max_ply: max_ply.unwrap_or(u32::from(params.max_ply)),
            min_games: min_games.unwrap_or(params.min_games),
            search,
            back_up: back_up.unwrap_or(params.back_up),
        })
    }

    /// The leaf search where neither an explicit setting nor a level says otherwise:
    /// depth 8, exact at 22 empties, full width.
    pub(crate) const LEAF_FALLBACK: Strength =
        Strength { depth: Some(8), exact_at: Some(22), time: None, nodes: None, selectivity: None };

    /// Checks every setting and loads the evaluation: the leaf search of this build.
    pub(crate) fn leaf_search(&self) -> Result<LeafSearch, BuildError> {
        check(Setting::MaxPly, self.max_ply, 1..=60)?;
        if self.min_games == 0 {
            return Err(OutOfRange::new(Setting::MinGames, 0, "at least 1").into());
        }
        LeafSearch::new(&self.search, BuildConfig::LEAF_FALLBACK)
    }

    /// The parameters the book's header records (checked as [`BuildConfig::leaf_search`]).
    pub(crate) fn params(&self) -> Result<BuildParams, BuildError> {
        Ok(BuildParams { back_up: self.back_up, ..self.leaf_search()?.params(self.max_ply, self.min_games) })
    }
}

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
    pub(crate) fn level(&self) -> super::format::LeafLevel {
        let p = self.params(0, 0);
        super::format::LeafLevel { depth: p.depth, selectivity_tenths: p.selectivity_tenths, exact: false }
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

/// A game to learn from: its moves (passes included) and black's final disc count.
#[derive(Clone, Debug)]
pub struct GameLine {
    /// Moves from the start, passes included.
    pub moves: Vec<Move>,
    /// Black's final discs (empties to the winner); `None` when the source does not
    /// know the result (a game lost on time, a transcript without one). Such a game
    /// counts towards the games reaching a position, not towards its wins or draws.
    pub black_score: Option<u8>,
}

/// A replayed Thor game's line.
impl From<&crate::thor::ThorGame> for GameLine {
    fn from(game: &crate::thor::ThorGame) -> GameLine {
        GameLine { moves: game.moves_with_passes(), black_score: game.black_discs() }
    }
}

/// A collected position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    /// Zobrist key of `board`.
    pub key: u64,
    /// The canonical board.
    pub board: Board,
    /// Games through it.
    pub games: u32,
    /// Won by the side to move.
    pub wins: u32,
    /// Drawn.
    pub draws: u32,
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

/// Why a build failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The previous book of an update was searched with other settings.
    #[error(
        "the previous book's leaves were searched at {}, this build asks {}: its leaves cannot be reused \
         (rebuild instead)",
        LeafParams(previous),
        LeafParams(wanted)
    )]
    Previous {
        /// The previous book's header.
        previous: BuildParams,
        /// This build's.
        wanted: BuildParams,
    },
    /// Two different positions with the same key.
    #[error(
        "Zobrist key collision: {key:#018x} is the key of both {} and {}; the book cannot hold both",
        board_text(a),
        board_text(b)
    )]
    KeyCollision {
        /// The key.
        key: u64,
        /// One board.
        a: Board,
        /// The other.
        b: Board,
    },
    /// A game's move is not legal.
    #[error("game {game}: {source}")]
    Game {
        /// Index of the game in the input.
        game: usize,
        /// The error.
        source: crate::position::PlayError,
    },
    /// The checkpoint cannot be used.
    #[error("checkpoint {}: {why}", path.display())]
    Checkpoint {
        /// Its path.
        path: std::path::PathBuf,
        /// What is wrong.
        why: super::checkpoint::CheckpointFault,
    },
    /// The records cannot form a book (out of order or repeated keys).
    #[error("writing the book: {0}")]
    Book(#[from] BookError),
    /// A file could not be written.
    #[error(transparent)]
    Io(#[from] IoError),
    /// A setting out of range.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A build setting out of range.
    #[error(transparent)]
    Setting(#[from] OutOfRange),
    /// The leaf searches' threads cannot be started.
    #[error("cannot start {threads} threads")]
    Threads {
        /// The thread count asked for.
        threads: usize,
        /// The system's reason.
        source: rayon::ThreadPoolBuildError,
    },
    /// Neither a depth nor a budget: a deviation of a book scored by time, without a
    /// depth or a level.
    #[error("the leaf search has no depth (the book was scored by time): give a depth or a level")]
    NoDepth,
    /// The evaluation cannot be loaded.
    #[error(transparent)]
    Eval(#[from] crate::eval::WeightsError),
    /// The buffer that collects the positions cannot be allocated.
    #[error("cannot allocate the {} MiB buffer that collects the positions", bytes >> 20)]
    Memory {
        /// Its size.
        bytes: usize,
    },
    /// The stop flag ([`Builder::stop_on`](super::Builder::stop_on)) was set: the
    /// leaves searched so far are in the checkpoint, and a resumed build continues.
    #[error("the build was interrupted (resume it to continue)")]
    Interrupted,
}

/// A board as FFO text, black to move (for messages).
fn board_text(board: &Board) -> String {
    Position { board: *board, side: Color::Black }.to_board_text()
}

/// The leaf-search half of a book header, as an error message shows it.
struct LeafParams<'a>(&'a BuildParams);

impl std::fmt::Display for LeafParams<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.0;
        write!(
            f,
            "depth {} exact-at {} selectivity {} (tenths) with evaluation {:08x}",
            p.depth, p.exact_at, p.selectivity_tenths, p.eval_digest
        )
    }
}

impl From<TableError> for BuildError {
    fn from(e: TableError) -> BuildError {
        BuildError::Settings(SettingsError::Table(e))
    }
}

impl BuildError {
    /// Two positions of one key, as the error that stops a build.
    pub(crate) fn collision(a: &Node, b: &Node) -> BuildError {
        BuildError::KeyCollision { key: a.key, a: a.board, b: b.board }
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
    let limits = crate::search::Limits { exclude, ..search.strength.limits(&board) };
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

/// The leaves of a build's `nodes` (sorted by key), scored by the logged search loop
/// ([`super::leaflog::search_logged`]): each position's moves into the other nodes
/// stay in the book.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn score_nodes(
    nodes: &[Node],
    search: &LeafSearch,
    done: &std::collections::HashMap<u64, Leaf>,
    log: Option<&super::leaflog::LeafFile>,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Vec<Leaf>, BuildError> {
    let in_book = |k: u64| nodes.binary_search_by_key(&k, |n| n.key).is_ok();
    let score = |node: &Node, tt: &mut TranspositionTable| score_leaf(&node.board, &in_book, search, tt);
    let key_of = |n: &Node| n.key;
    let leaves = super::leaflog::search_logged(nodes, &key_of, search, done, log, &|| false, &score, progress)?;
    // Nothing stops the loop, so every node has its leaf.
    Ok(leaves.into_iter().map(|(_, leaf)| leaf).collect())
}

/// The book records of nodes and their leaves, valued at their leaves until the
/// back-up ([`super::backup`]) gives them their values.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn records(nodes: &[Node], leaves: &[Leaf]) -> Vec<Record> {
    nodes.iter().zip(leaves).map(|(n, l)| record(n, l)).collect()
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
