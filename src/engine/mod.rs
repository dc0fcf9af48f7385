//! The playing engine: the book-then-search player ([`Engine`]) that the protocols
//! ([`gtp`], [`nboard`]), terminal play ([`play`]) and engine matches ([`matches`])
//! drive, with its validated configuration ([`EngineConfig`]), playing [`level`]s, a
//! game record ([`game`]) and a time manager ([`clock`]).
//!
//! An [`Engine`] owns the optional book, the transposition table (kept across the moves
//! of a game, cleared by [`Engine::new_game`]), the evaluator and a thread pool. It never
//! panics when a search is cut short: whenever a legal move exists it returns one.

pub mod clock;
pub mod game;
pub mod ggf;
pub mod gtp;
pub mod level;
pub mod matches;
pub mod nboard;
pub mod play;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::book::query::{book_line, book_moves, BookMove};
use crate::book::{Book, BookError};
use crate::eval::{ClassicEval, Evaluator};
use crate::fileio::{read_mapped, Bytes};
use crate::position::Position;
use crate::search::tt::TableError;
use crate::search::{Limits, Search, SearchResult, TranspositionTable};
use crate::square::{format_moves, Move};

pub use game::{Game, GameError};
pub use level::{Level, LevelSpec};

/// Where the engine's book comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum BookSource {
    /// No book: always search.
    None,
    /// The book bundled in the binary (`data/book.tbk`).
    #[default]
    Bundled,
    /// A book file, memory-mapped.
    File(PathBuf),
}

/// How strong and how long the search is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strength {
    /// Midgame depth limit (`None`: until the time or node budget).
    pub depth: Option<u32>,
    /// Solve exactly at this many empties or fewer.
    pub exact_at: u32,
    /// Time budget per move.
    pub time: Option<Duration>,
    /// Node budget per move.
    pub nodes: Option<u64>,
}

impl Strength {
    /// The strength of a level: its depth and exact threshold, no budget.
    pub fn level(level: Level) -> Strength {
        let spec = level.spec();
        Strength { depth: Some(spec.depth), exact_at: spec.exact_at, time: None, nodes: None }
    }

    /// The empties from which a search of about `budget` can solve exactly: the time
    /// an exact solve takes grows about 3× per empty square (FFO #20–39: 0.1–0.5 s at
    /// 20 empties on one thread).
    pub fn exact_at_for_time(budget: Duration) -> u32 {
        match budget.as_secs_f64() {
            t if t < 0.05 => 14,
            t if t < 0.2 => 16,
            t if t < 0.6 => 18,
            t if t < 2.0 => 20,
            t if t < 8.0 => 22,
            _ => 24,
        }
    }

    /// The search limits for a position with `empties` empty squares, the time budget
    /// replaced by `time` when given (a clock's share of the remaining time).
    pub fn limits(&self, empties: u32, time: Option<Duration>) -> Limits {
        let time = time.or(self.time);
        let exact_at = match (time, self.time) {
            // A clock's budget differs from move to move: size the exact solve to it.
            (Some(t), None) => Strength::exact_at_for_time(t),
            _ => self.exact_at,
        };
        Limits { depth: self.depth, nodes: self.nodes, time, exact: empties <= exact_at, exclude: 0 }
    }
}

impl Default for Strength {
    fn default() -> Strength {
        Strength::level(Level::DEFAULT)
    }
}

/// A validated engine configuration. Build it from command-line arguments with the
/// CLI's `TryFrom`, or set the fields directly and call [`EngineConfig::validate`]
/// (which [`Engine::new`] does).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineConfig {
    /// The level it was made from, for display (`None`: explicit limits).
    pub level: Option<Level>,
    /// Depth, exact threshold and budgets.
    pub strength: Strength,
    /// Search threads (1..=256).
    pub threads: usize,
    /// Transposition table size in MiB.
    pub hash_mib: usize,
    /// The book consulted before searching.
    pub book: BookSource,
    /// Play among book moves within this many discs of the best (0: the best).
    pub book_randomness: i32,
    /// A book move that loses by more than this many discs (its value below
    /// −`book_max_loss`) is not played: the engine searches instead, looking for better.
    pub book_max_loss: i32,
    /// Seed of the book's random choices.
    pub seed: u64,
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            level: Some(Level::DEFAULT),
            strength: Strength::default(),
            threads: 1,
            hash_mib: 64,
            book: BookSource::Bundled,
            book_randomness: 0,
            book_max_loss: 64,
            seed: 0,
        }
    }
}

/// The largest thread count accepted.
pub const MAX_THREADS: usize = 256;

/// A configuration or engine that cannot be made, or a position it cannot play.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A setting out of range.
    #[error("{0}")]
    Config(String),
    /// The transposition table.
    #[error(transparent)]
    Table(#[from] TableError),
    /// The book file.
    #[error("book {path}: {source}")]
    Book {
        /// The file.
        path: String,
        /// What is wrong with it.
        #[source]
        source: BookError,
    },
    /// The book file cannot be read.
    #[error("book {path}: {source}")]
    BookIo {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The thread pool.
    #[error("cannot start {threads} search threads: {message}")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// Why not.
        message: String,
    },
    /// There is no move to choose.
    #[error("the game is over ({score:+} for the side to move): there is no move")]
    GameOver {
        /// Final disc difference for the side to move.
        score: i32,
    },
}

impl EngineConfig {
    /// Checks every range; the error names the setting.
    pub fn validate(&self) -> Result<(), EngineError> {
        let bad = |m: String| Err(EngineError::Config(m));
        if !(1..=MAX_THREADS).contains(&self.threads) {
            return bad(format!("threads must be 1..={MAX_THREADS}, got {}", self.threads));
        }
        if let Some(d) = self.strength.depth {
            if !(1..=60).contains(&d) {
                return bad(format!("depth must be 1..=60, got {d}"));
            }
        }
        if self.strength.exact_at > 60 {
            return bad(format!("exact-at must be 0..=60 empties, got {}", self.strength.exact_at));
        }
        if self.strength.nodes == Some(0) {
            return bad("a node budget must be at least 1".into());
        }
        if !(0..=128).contains(&self.book_randomness) {
            return bad(format!("book randomness must be 0..=128 discs, got {}", self.book_randomness));
        }
        if !(0..=64).contains(&self.book_max_loss) {
            return bad(format!("book max loss must be 0..=64 discs, got {}", self.book_max_loss));
        }
        if self.hash_mib == 0 || self.hash_mib > crate::search::tt::MAX_TABLE_MIB {
            return Err(TableError::Size { mib: self.hash_mib }.into());
        }
        Ok(())
    }
}

/// Where a chosen move comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MoveSource {
    /// The opening book.
    Book,
    /// A search.
    Search,
    /// The only legal move (or a pass), played without searching.
    Forced,
}

/// The engine's move and what it knows of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EngineMove {
    /// The move (a pass when the side to move has none).
    #[serde(rename = "move")]
    pub mv: Move,
    /// Expected final disc difference for the side to move.
    pub score: i32,
    /// Book, search or forced.
    pub source: MoveSource,
    /// Depth of the last completed iteration (0: the search was cut short before the
    /// first one and the move comes from move ordering); the leaf depth for book moves.
    pub depth: u32,
    /// True when the score is proven (exact search, or an exact book leaf).
    pub exact: bool,
    /// Principal variation from the move, through the book where it knows the line.
    #[serde(serialize_with = "ser_moves")]
    pub pv: Vec<Move>,
    /// Nodes searched.
    pub nodes: u64,
    /// Time taken.
    #[serde(serialize_with = "ser_secs")]
    pub time: Duration,
}

fn ser_moves<S: serde::Serializer>(m: &[Move], s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_moves(m))
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Every legal move of a position scored: the book's view and a search.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Book moves and leaf, best first (empty when the position is not in the book).
    pub book: Vec<BookMove>,
    /// The principal line through the book.
    pub book_line: Vec<Move>,
    /// The search: every root move with a full-window score, best first.
    pub search: SearchResult,
    /// Principal variation of the best move, through the book when the book and the
    /// search agree on it.
    pub pv: Vec<Move>,
}

/// The book-then-search player.
pub struct Engine<E: Evaluator = ClassicEval> {
    config: EngineConfig,
    book: Option<Book<Bytes>>,
    tt: TranspositionTable,
    eval: E,
    pool: rayon::ThreadPool,
    stop: AtomicBool,
    rng: u64,
}

impl Engine<ClassicEval> {
    /// An engine with the classic evaluation.
    pub fn new(config: EngineConfig) -> Result<Engine<ClassicEval>, EngineError> {
        Engine::with_evaluator(config, ClassicEval)
    }
}

/// Opens the configured book in constant time (header and sizes; the records' checksum
/// is `book verify`'s job, and every move the book suggests is checked before use).
pub fn open_book(source: &BookSource) -> Result<Option<Book<Bytes>>, EngineError> {
    match source {
        BookSource::None => Ok(None),
        BookSource::Bundled => Book::open(Bytes::Static(crate::book::bundled_bytes()))
            .map(Some)
            .map_err(|source| EngineError::Book { path: "(bundled)".into(), source }),
        BookSource::File(p) => {
            let path = p.display().to_string();
            let bytes = read_mapped(p).map_err(|source| EngineError::BookIo { path: path.clone(), source })?;
            Book::open(bytes).map(Some).map_err(|source| EngineError::Book { path, source })
        }
    }
}

impl<E: Evaluator> Engine<E> {
    /// An engine with the given evaluation; checks the configuration, opens the book,
    /// allocates the table and starts the threads.
    pub fn with_evaluator(config: EngineConfig, eval: E) -> Result<Engine<E>, EngineError> {
        config.validate()?;
        let book = open_book(&config.book)?;
        let tt = TranspositionTable::try_new(config.hash_mib)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads)
            .build()
            .map_err(|e| EngineError::Threads { threads: config.threads, message: e.to_string() })?;
        let rng = config.seed;
        Ok(Engine { config, book, tt, eval, pool, stop: AtomicBool::new(false), rng })
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The book, if any.
    pub fn book(&self) -> Option<&Book<Bytes>> {
        self.book.as_ref()
    }

    /// Changes the depth, exact threshold and budgets (the table is kept).
    pub fn set_strength(&mut self, strength: Strength, level: Option<Level>) {
        self.config.strength = strength;
        self.config.level = level;
    }

    /// Forgets the previous game: clears the table.
    pub fn new_game(&mut self) {
        self.tt.clear();
    }

    /// The engine's move in `pos` under its configured limits.
    pub fn choose(&mut self, pos: &Position) -> Result<EngineMove, EngineError> {
        self.choose_with_time(pos, None)
    }

    /// The engine's move, with the time budget replaced by `time` when given (a
    /// clock's share of the time left).
    pub fn choose_with_time(&mut self, pos: &Position, time: Option<Duration>) -> Result<EngineMove, EngineError> {
        let start = Instant::now();
        let board = pos.board;
        if board.is_game_over() {
            return Err(EngineError::GameOver { score: board.final_score() });
        }
        let moves = board.legal_moves();
        if moves.count_ones() <= 1 {
            let mv = crate::square::Square::lowest(moves).map_or(Move::Pass, Move::Place);
            let child = pos.try_play(mv, 1).expect("the only legal move, or a forced pass");
            let score = self.table_score(&child.board).map_or_else(|| -self.eval.evaluate(&child.board), |s| -s);
            return Ok(EngineMove {
                mv,
                score,
                source: MoveSource::Forced,
                depth: 0,
                exact: false,
                pv: vec![mv],
                nodes: 0,
                time: start.elapsed(),
            });
        }
        if let Some(m) = self.book_move(pos) {
            return Ok(EngineMove { time: start.elapsed(), ..m });
        }
        let limits = self.config.strength.limits(board.empty_count(), time);
        let r = self.search(pos, limits, false);
        let best = r.moves.first().copied().expect("a search of a position with legal moves returns one");
        Ok(EngineMove {
            mv: best.mv,
            score: best.score,
            source: MoveSource::Search,
            depth: r.depth,
            exact: r.exact,
            pv: r.pv.clone(),
            nodes: r.nodes,
            time: start.elapsed(),
        })
    }

    /// Every legal move of `pos` with a full-window score under `limits` (the
    /// configured ones when `None`), and the book's view.
    pub fn analyze(&mut self, pos: &Position, limits: Option<Limits>) -> Analysis {
        let book = self.book.as_ref().map(|b| book_moves(b, pos)).unwrap_or_default();
        let line = self.book.as_ref().map(|b| book_line(b, pos, 60)).unwrap_or_default();
        let limits = limits.unwrap_or_else(|| self.config.strength.limits(pos.board.empty_count(), None));
        let search = self.search(pos, limits, true);
        let pv = if !line.is_empty() && book.first().map(|m| m.mv) == search.best_move() {
            line.clone()
        } else {
            search.pv.clone()
        };
        Analysis { book, book_line: line, search, pv }
    }

    /// A search of `pos` on the engine's threads and table.
    pub fn search(&mut self, pos: &Position, limits: Limits, all_moves: bool) -> SearchResult {
        let (eval, tt, stop, threads) = (&self.eval, &self.tt, &self.stop, self.config.threads);
        self.pool.install(|| Search::new(eval, tt, stop, threads).run(&pos.board, limits, all_moves))
    }

    /// The table's exact knowledge of a position's score, if any.
    fn table_score(&self, board: &crate::board::Board) -> Option<i32> {
        self.tt.probe(board.key()).filter(|e| e.lower == e.upper).map(|e| e.lower)
    }

    /// A book move for `pos`, if the book has one worth playing: among the moves
    /// within the randomness of the best, none losing by more than the allowed
    /// margin, every one checked legal (a damaged book cannot make the engine play
    /// an illegal move).
    fn book_move(&mut self, pos: &Position) -> Option<EngineMove> {
        let book = self.book.as_ref()?;
        let moves: Vec<BookMove> = book_moves(book, pos)
            .into_iter()
            .filter(|m| pos.try_play(m.mv, 1).is_ok() && m.score >= -self.config.book_max_loss)
            .collect();
        let best = moves.first()?.score;
        let near: Vec<&BookMove> = moves.iter().filter(|m| m.score >= best - self.config.book_randomness).collect();
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let pick = if near.len() > 1 { (splitmix(self.rng) % near.len() as u64) as usize } else { 0 };
        let chosen = near[pick];
        let after = pos.try_play(chosen.mv, 1).ok()?;
        let mut pv = vec![chosen.mv];
        pv.extend(book_line(book, &after, 59));
        Some(EngineMove {
            mv: chosen.mv,
            score: chosen.score,
            source: MoveSource::Book,
            depth: chosen.depth as u32,
            exact: chosen.exact,
            pv,
            nodes: 0,
            time: Duration::ZERO,
        })
    }
}

/// A 64-bit mix of a counter (SplitMix64's finaliser): the book's random choices.
fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
