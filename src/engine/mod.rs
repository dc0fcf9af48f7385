//! The playing engine: the book-then-search player ([`Engine`]) that the protocols
//! ([`gtp`], [`nboard`]), terminal play (`thorbook play`), engine matches
//! ([`matches`](mod@matches)) and self-play ([`selfplay`]) drive, with its validated
//! configuration ([`EngineConfig`]) and a game record ([`Game`]); its clock
//! management is its own.
//!
//! An [`Engine`] owns the optional book, the transposition table (kept across the moves
//! of a game, cleared by [`Engine::new_game`]), the evaluator and a thread pool. It never
//! panics when a search is cut short: whenever a legal move exists it returns one.

pub(crate) mod clock;
pub(crate) mod game;
pub mod ggf;
pub mod gtp;
pub mod matches;
pub mod nboard;
#[cfg(any(feature = "cli", feature = "testing", test))]
pub(crate) mod play;
mod ponder;
pub mod review;
pub mod selfplay;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clock::MoveBudget;

use serde::Serialize;

use crate::board::Board;
use crate::book::query::{book_line, book_moves, choose_move, BookChoice, BookMove};
use crate::book::{Book, OpenError};
use crate::eval::{AnyEval, IncrementalEvaluator, WeightsError};
use crate::fileio::Bytes;
use crate::position::Position;
use crate::search::{
    Limits, Resolved, Search, SearchResult, Settings, SettingsError, Strength, TableKey, TranspositionTable,
};
use crate::setting::{check, OutOfRange, Setting};
use crate::square::Move;

use crate::book::BookSource;
pub use game::{Game, GameError};

/// A validated engine configuration: how hard to search ([`Settings`]: level, limits,
/// table, threads, evaluation) and how to use the book. Build it from command-line
/// arguments with the CLI's `TryFrom`, or set the fields directly: [`Engine::new`]
/// checks every range.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct EngineConfig {
    /// Level, depth, exact threshold, width, budgets, table size, threads, evaluation.
    pub search: Settings,
    /// The book consulted before searching.
    pub book: BookSource,
    /// How book moves are picked: randomness among the near-best, and the loss beyond
    /// which the engine searches instead of playing a book move.
    pub book_choice: BookChoice,
    /// Seed of the book's random choices.
    pub seed: u64,
    /// Think on the opponent's time when playing under a clock (GTP, NBoard).
    pub ponder: bool,
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            search: Settings::default(),
            book: BookSource::Bundled,
            book_choice: BookChoice::default(),
            seed: 0,
            ponder: true,
        }
    }
}

/// A configuration or engine that cannot be made, or a position it cannot play.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A search setting out of range, or a table that cannot be allocated.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A book setting out of range.
    #[error(transparent)]
    Setting(#[from] OutOfRange),
    /// The evaluation's weight file.
    #[error(transparent)]
    Eval(#[from] WeightsError),
    /// The book.
    #[error(transparent)]
    Book(#[from] OpenError),
    /// The thread pool.
    #[error("cannot start {threads} search threads")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// Why not.
        source: rayon::ThreadPoolBuildError,
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
    pub(crate) fn validate(&self) -> Result<(), EngineError> {
        self.resolve().map(drop)
    }

    /// Checks every range and resolves the search settings.
    fn resolve(&self) -> Result<Resolved, EngineError> {
        let BookChoice { randomness, max_loss, max_drop } = self.book_choice;
        check(Setting::BookMaxDrop, max_drop, 0..=128)?;
        check(Setting::BookRandomness, randomness, 0..=128)?;
        check(Setting::BookMaxLoss, max_loss, 0..=64)?;
        Ok(self.search.resolve()?)
    }
}

/// What a ponder search found.
#[derive(Clone, Debug)]
struct Pondered {
    board: Board,
    limits: Limits,
    /// Its last finished iteration.
    result: SearchResult,
    /// Whether it ran to its end rather than being stopped.
    finished: bool,
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
#[non_exhaustive]
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
    #[serde(serialize_with = "crate::square::serialize_moves")]
    pub pv: Vec<Move>,
    /// Nodes searched.
    pub nodes: u64,
    /// Time taken (`seconds` in JSON).
    #[serde(rename = "seconds", serialize_with = "ser_secs")]
    pub time: Duration,
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
pub struct Engine<E: IncrementalEvaluator = AnyEval> {
    config: EngineConfig,
    /// What the configuration's settings resolve to, or what a protocol set since.
    strength: Strength,
    /// What a move under a clock is searched with: `None` when a level or depth was
    /// given (it caps the search), otherwise deepening until the clock's share.
    clock_strength: Option<Strength>,
    /// The last ponder search's result: its position, limits and deepest iteration.
    pondered: Option<Pondered>,
    book: Option<Book<Bytes>>,
    tt: TranspositionTable,
    eval: E,
    pool: rayon::ThreadPool,
    stop: Arc<AtomicBool>,
    rng: u64,
}

impl Engine<AnyEval> {
    /// An engine with the evaluation its configuration names.
    pub fn new(config: EngineConfig) -> Result<Engine<AnyEval>, EngineError> {
        let eval = config.search.eval.load()?;
        Engine::with_evaluator(config, eval)
    }
}

impl<E: IncrementalEvaluator> Engine<E> {
    /// An engine with the given evaluation; checks the configuration, opens the book,
    /// allocates the table and starts the threads.
    pub fn with_evaluator(config: EngineConfig, eval: E) -> Result<Engine<E>, EngineError> {
        let resolved = config.resolve()?;
        let book = config.book.open()?;
        let tt = resolved.table()?;
        let threads = resolved.threads();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|source| EngineError::Threads { threads, source })?;
        let (rng, strength) = (config.seed, resolved.strength());
        let clock_strength = config.search.clock_strength();
        Ok(Engine {
            config,
            strength,
            clock_strength,
            pondered: None,
            book,
            tt,
            eval,
            pool,
            stop: Arc::new(AtomicBool::new(false)),
            rng,
        })
    }

    /// The configuration the engine was made with ([`Engine::strength`] is what moves
    /// are searched with now, after any [`Engine::set_strength`]).
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The book, if any.
    pub fn book(&self) -> Option<&Book<Bytes>> {
        self.book.as_ref()
    }

    /// Changes the depth, exact threshold and budgets (the table is kept).
    pub fn set_strength(&mut self, strength: Strength) {
        self.strength = strength;
        self.clock_strength = None;
    }

    /// The depth, exact threshold and budgets each move is searched with.
    pub fn strength(&self) -> Strength {
        self.strength
    }

    /// Seeds the book's random choices afresh (self-play seeds each game by its index).
    pub(crate) fn reseed(&mut self, seed: u64) {
        self.rng = seed;
    }

    /// Forgets the previous game: clears the table.
    pub fn new_game(&mut self) {
        self.tt.clear();
        self.pondered = None;
    }

    /// The engine's move in `pos` under its configured limits.
    pub fn choose(&mut self, pos: &Position) -> Result<EngineMove, EngineError> {
        self.choose_with_time(pos, None)
    }

    /// The engine's move under a clock's `budget` for it, when given: without an
    /// explicit level or depth the search deepens until the budget; with one, the
    /// level caps the search and the budget only limits it.
    pub(crate) fn choose_with_time(
        &mut self,
        pos: &Position,
        budget: Option<MoveBudget>,
    ) -> Result<EngineMove, EngineError> {
        let start = Instant::now();
        let board = pos.board;
        if board.is_game_over() {
            return Err(EngineError::GameOver { score: board.final_score() });
        }
        let moves = board.legal_moves();
        if moves.count_ones() <= 1 {
            let mv = crate::square::Square::lowest(moves).map_or(Move::Pass, Move::Place);
            let child = pos.try_play(mv).expect("the only legal move, or a forced pass");
            let score = self.table_value(&child.board).map_or_else(|| -self.eval.evaluate(&child.board), |s| -s);
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
        let limits = match budget {
            Some(b) => self.under_clock().clock_limits(board.empty_count(), b.limit, b.target),
            None => self.strength.limits(&board),
        };
        if let Some(m) = self.book_move(pos, &limits) {
            return Ok(EngineMove { time: start.elapsed(), ..m });
        }
        let hit = self.pondered.take().filter(|p| p.board == board && p.limits.selectivity == limits.selectivity);
        let r = match hit {
            // A ponder hit that finished the search this move asks: its result is what
            // this search would find (it began from the same table), found already.
            // An exact result is as good as any search can give.
            Some(p)
                if p.result.exact
                    || (p.finished && p.limits.depth == limits.depth && p.limits.exact == limits.exact) =>
            {
                p.result
            }
            // Under a budget, the deeper of the ponder's and this search's results.
            Some(Pondered { result: p, .. }) if limits.time.is_some() || limits.target.is_some() => {
                let r = self.search(pos, limits);
                if (p.exact && !r.exact) || (p.exact == r.exact && p.depth > r.depth) {
                    SearchResult { nodes: r.nodes, ..p }
                } else {
                    r
                }
            }
            _ => self.search(pos, limits),
        };
        // A search of a position with a legal move always returns one (see `Search::run`).
        let best = r.moves[0];
        Ok(EngineMove {
            mv: best.mv,
            score: best.score,
            source: MoveSource::Search,
            depth: r.depth,
            exact: r.exact,
            pv: r.pv,
            nodes: r.nodes,
            time: start.elapsed(),
        })
    }

    /// Every legal move of `pos` with a full-window score under `limits` (the
    /// configured ones when `None`), and the book's view.
    pub fn analyze(&mut self, pos: &Position, limits: Option<Limits>) -> Analysis {
        let book = self.book.as_ref().map(|b| book_moves(b, pos)).unwrap_or_default();
        let line = self.book.as_ref().map(|b| book_line(b, pos, 60)).unwrap_or_default();
        let limits = limits.unwrap_or_else(|| self.strength.limits(&pos.board));
        let search = self.search_all_moves(pos, limits);
        // The book line is the best move's PV only when it starts with that move (book
        // ties can be broken another way than the search's).
        let pv = if search.best_move().is_some_and(|best| line.first() == Some(&best)) {
            line.clone()
        } else {
            search.pv.clone()
        };
        Analysis { book, book_line: line, search, pv }
    }

    /// The flag that stops the engine's search in progress (from a signal handler or
    /// another thread): the search returns what its last finished iteration found (a
    /// legal move at least). The engine never clears it: a stopped engine's next
    /// searches stop at once until it is cleared (`store(false)`).
    pub fn stop_handle(&self) -> crate::work::StopHandle {
        crate::work::StopHandle::of(self.stop.clone())
    }

    /// What a move under a clock is searched with.
    fn under_clock(&self) -> Strength {
        self.clock_strength.unwrap_or(self.strength)
    }

    /// Thinks on the opponent's time: searches `pos` as a move under a clock would be
    /// searched, with no budget, until the stop flag is set or the search ends,
    /// keeping what it finds in the table. Returns whether the search ended by itself
    /// (pondering it again would find nothing new).
    pub(crate) fn ponder(&mut self, pos: &Position) -> bool {
        if pos.board.is_game_over() || self.stopped() {
            return true;
        }
        let limits = Limits { time: None, nodes: None, ..self.under_clock().limits(&pos.board) };
        let result = self.search(pos, limits);
        let finished = !self.stopped();
        // A stopped search's result is its last finished iteration (with a better root
        // move its unfinished one found, which only a budgeted move takes).
        self.pondered =
            (result.depth > 0 || result.exact).then_some(Pondered { board: pos.board, limits, result, finished });
        finished
    }

    /// Whether the stop flag is set.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A search of `pos` on the engine's threads and table, for its best move and
    /// value (and principal variation).
    pub fn search(&mut self, pos: &Position, limits: Limits) -> SearchResult {
        self.run_search(pos, limits, false)
    }

    /// A search of `pos` for the value of every legal move ([`SearchResult::moves`],
    /// best first), as an analysis board shows them: each move is searched with a full
    /// window, so this costs more than [`Engine::search`].
    pub fn search_all_moves(&mut self, pos: &Position, limits: Limits) -> SearchResult {
        self.run_search(pos, limits, true)
    }

    fn run_search(&mut self, pos: &Position, limits: Limits, all_moves: bool) -> SearchResult {
        let (eval, tt, stop, threads) = (&self.eval, &self.tt, &*self.stop, self.config.search.threads);
        self.pool.install(|| Search::new(eval, tt, stop, threads).run(&pos.board, limits, all_moves))
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The transposition table's size in bytes (the size asked for, or the largest power
    /// of two buckets below it).
    pub(crate) fn table_bytes(&self) -> usize {
        self.tt.size_bytes()
    }

    /// The value the table holds for a position (both bounds equal, from a search of
    /// any depth or width): a better guess than the static evaluation, not an exact
    /// score (a forced move reports `exact: false`).
    fn table_value(&self, board: &crate::board::Board) -> Option<i32> {
        self.tt.probe(TableKey::of(board)).filter(|e| e.lower == e.upper).map(|e| e.lower)
    }

    /// A book move for `pos`, if the book has one worth playing (see [`choose_move`]),
    /// with the line through the book after it. A leaf move is not played when the
    /// engine's own search of the position (`limits`) is surely deeper: the leaf is a
    /// search of the same position, shallower (held out, a depth-14 leaf's value errs
    /// by 1.10 discs where the level-10 search of its position errs by 0.71).
    fn book_move(&mut self, pos: &Position, limits: &Limits) -> Option<EngineMove> {
        let book = self.book.as_ref()?;
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let chosen = choose_move(book, pos, self.config.book_choice, crate::zobrist::mix64(self.rng))?;
        if chosen.leaf && searches_deeper(limits, &chosen) {
            return None;
        }
        let after = pos.try_play(chosen.mv).expect("choose_move checks legality");
        let mut pv = vec![chosen.mv];
        pv.extend(book_line(book, &after, 59));
        Some(EngineMove {
            mv: chosen.mv,
            score: chosen.score,
            source: MoveSource::Book,
            depth: chosen.depth.map_or(0, u32::from),
            exact: chosen.exact,
            pv,
            nodes: 0,
            time: Duration::ZERO,
        })
    }
}

/// Whether a search under `limits` certainly goes deeper than the leaf search that
/// scored `leaf`: a fixed depth beyond it, or an exact solve of a leaf that is not.
/// Under a time or node budget the depth reached is unknown, and the book is kept.
fn searches_deeper(limits: &Limits, leaf: &BookMove) -> bool {
    if limits.time.is_some() || limits.nodes.is_some() || leaf.exact {
        return false;
    }
    limits.exact || limits.depth.is_some_and(|d| d > leaf.depth.map_or(0, u32::from))
}

/// The longest protocol line read, in bytes: far beyond any real one (an NBoard `set
/// game` of a whole game with clocks is under 2 KB), small enough that a stream
/// without newlines cannot grow the reader's memory without end.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// A protocol line longer than [`MAX_LINE`]: skipped to its end and answered as an
/// error, the session going on.
#[derive(Debug, thiserror::Error)]
#[error("line {line} is longer than {max} bytes; it is ignored", max = MAX_LINE)]
pub(crate) struct LineTooLong {
    /// The line's 1-based number in the input.
    pub(crate) line: u64,
}

impl LineTooLong {
    /// The over-long line `e` reports, if that is what it is (else a real read error).
    fn of(e: &std::io::Error) -> Option<&LineTooLong> {
        e.get_ref().and_then(|inner| inner.downcast_ref())
    }
}

/// A protocol loop's line as read: the text, or `None` for an over-long line once
/// `answer` has answered it (the session goes on); a real read error ends the session.
pub(crate) fn protocol_line(
    line: std::io::Result<String>,
    answer: impl FnOnce(&LineTooLong) -> std::io::Result<()>,
) -> std::io::Result<Option<String>> {
    match line {
        Ok(text) => Ok(Some(text)),
        Err(e) => match LineTooLong::of(&e) {
            Some(too_long) => answer(too_long).map(|()| None),
            None => Err(e),
        },
    }
}

/// The lines of a protocol's input, CR-LF or LF, as text: bytes that are not UTF-8
/// become U+FFFD, so a garbled line is answered as a bad command and the session goes
/// on, instead of ending it as `BufRead::lines` would; a line over [`MAX_LINE`] is read
/// no further than that and comes as a [`LineTooLong`] error, after which the lines go
/// on.
fn protocol_lines(mut input: impl std::io::BufRead) -> impl Iterator<Item = std::io::Result<String>> {
    use std::io::{BufRead, Read};
    let mut number = 0u64;
    std::iter::from_fn(move || {
        number += 1;
        let mut bytes = Vec::new();
        match (&mut input).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut bytes) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) => return Some(Err(e)),
        }
        if bytes.len() > MAX_LINE && bytes.last() != Some(&b'\n') {
            // Skip to the end of the line without keeping it.
            loop {
                let buf = match input.fill_buf() {
                    Ok(buf) => buf,
                    Err(e) => return Some(Err(e)),
                };
                if buf.is_empty() {
                    break;
                }
                let (used, end) = buf.iter().position(|&b| b == b'\n').map_or((buf.len(), false), |i| (i + 1, true));
                input.consume(used);
                if end {
                    break;
                }
            }
            return Some(Err(std::io::Error::new(std::io::ErrorKind::InvalidData, LineTooLong { line: number })));
        }
        let text = String::from_utf8_lossy(bytes.strip_suffix(b"\n").unwrap_or(&bytes));
        Some(Ok(text.strip_suffix('\r').unwrap_or(&text).to_string()))
    })
}
