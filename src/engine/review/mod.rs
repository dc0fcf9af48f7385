//! Game review: every decision of a game scored against the book, a search or the
//! exact solver, in one unit — the disc difference for the side to move — so that the
//! values stay comparable where the game leaves the book or enters the solver's range.
//!
//! For each position where the side to move chose among two moves or more, the review
//! gives the position's value (its best move's), the played move's value and the loss
//! between them, and says where the values come from ([`ValueSource`]) and how far
//! they can be believed ([`Confidence`]). The sources, in order of preference:
//!
//! - **book**: the position is in the book and the played move is one of its moves
//!   (a book child or the searched leaf move); the values are the book's backed-up
//!   ones, with the book's trust grade;
//! - **exact**: the engine's settings solve the position (its empties are at most the
//!   level's or `--exact-at`'s threshold); every move is solved;
//! - **search**: otherwise, every move searched with a full window at the engine's
//!   settings.
//!
//! Each search starts from an empty transposition table, so a position's review
//! depends only on the position and the settings: it equals `thorbook analyze` of the
//! same position at the same settings, whichever game reached it. (lichess's analysis
//! board reviews positions the same way.) That is what lets an [`AnalysisStore`] keep
//! each searched position's values for every later review through it. A move found
//! better than the book's best counts as no loss, as lichess counts a move its engine
//! preferred.

mod batch;
mod graph;
mod store;

pub use batch::{review_games, BatchError};
pub use store::AnalysisStore;

use crate::work::Progress;
use serde::Serialize;
use store::StoredAnalysis;

use super::{Engine, Game, GameError};
use crate::board::Color;
use crate::book::query::book_moves;
use crate::book::trust::Grade;
use crate::eval::IncrementalEvaluator;
use crate::fileio::IoError;
use crate::position::Position;
use crate::square::Move;

/// Where a reviewed value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ValueSource {
    /// The book's backed-up values.
    Book,
    /// A full-window search of every move at the engine's settings.
    Search,
    /// The exact solver.
    Exact,
}

impl std::fmt::Display for ValueSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ValueSource::Book => "book",
            ValueSource::Search => "search",
            ValueSource::Exact => "exact",
        })
    }
}

/// How far a reviewed value can be believed, written as the book writes its grades:
/// `exact`, `≥` (at least this: decided by a solved line while a searched option
/// remains), `±N` (a book value whose deciding leaf errs by about N discs), or
/// `depth D` (a search to that depth).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
#[non_exhaustive]
pub enum Confidence {
    /// Proven: solved to the end.
    Exact,
    /// A book grade (`≥`, `±N`) of a value that is not proven.
    Book(Grade),
    /// A midgame search of this depth.
    Depth(u32),
}

impl std::fmt::Display for Confidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Confidence::Exact => f.write_str("exact"),
            Confidence::Book(grade) => grade.fmt(f),
            Confidence::Depth(d) => write!(f, "depth {d}"),
        }
    }
}

impl From<Confidence> for String {
    fn from(c: Confidence) -> String {
        c.to_string()
    }
}

/// One reviewed decision.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct PlyReview {
    /// 1-based index of the move in the game (passes counted).
    pub ply: usize,
    /// Empty squares before the move.
    pub empties: u32,
    /// Who played it.
    pub side_to_move: Color,
    /// The move played.
    #[serde(rename = "move")]
    pub mv: Move,
    /// The position's value before the move: its best move's, disc difference for the
    /// side to move.
    pub value: i32,
    /// Where `value` and `played_value` come from.
    pub source: ValueSource,
    /// How far `value` can be believed.
    pub trust: Confidence,
    /// The best move.
    pub best_move: Move,
    /// Its value (equal to `value`).
    pub best_value: i32,
    /// The played move's value, for the side that played it.
    pub played_value: i32,
    /// Discs lost by the move: `best_value - played_value`, never below 0.
    pub loss: i32,
}

/// One side's totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SideSummary {
    /// Decisions reviewed (positions with two legal moves or more).
    pub moves: usize,
    /// Of those, where the best move (or one as good) was played.
    pub best_moves: usize,
    /// Discs lost over the game.
    pub discs_lost: i32,
    /// Average loss per decision.
    pub average_loss: f64,
    /// Percentage of decisions where nothing was lost.
    pub accuracy: f64,
}

/// A reviewed game.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct GameReview {
    /// Every decision in order (forced moves and passes are left out).
    pub plies: Vec<PlyReview>,
    /// The plies where the game was decided most, biggest loss first (at most 5, only
    /// those that lost something).
    pub worst: Vec<usize>,
    /// The first ply whose values are not the book's (`None`: the book covered every
    /// decision, or never one).
    pub left_book_at: Option<usize>,
    /// Black's totals.
    pub black: SideSummary,
    /// White's totals.
    pub white: SideSummary,
    /// The final disc difference for black, if the game ended.
    pub black_result: Option<i32>,
    /// Whether the review was stopped before the end (by the engine's stop flag); the
    /// plies reviewed until then are kept.
    pub interrupted: bool,
    /// Positions searched for this review.
    pub searched: usize,
    /// Positions whose values came from the store instead.
    pub from_store: usize,
}

impl GameReview {
    /// The totals as `review --json`'s summary line and the explorer's `/api/review`
    /// give them (the CLI adds the game's record).
    #[cfg(feature = "explorer")]
    pub(crate) fn summary_json(&self) -> serde_json::Value {
        serde_json::json!({
            "decisions": self.plies.len(),
            "black": self.black,
            "white": self.white,
            "worst": self.worst,
            "left_book_at": self.left_book_at,
            "black_result": self.black_result,
            "interrupted": self.interrupted,
            "searched": self.searched,
            "from_store": self.from_store,
        })
    }
}

/// Why a game cannot be reviewed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewError {
    /// A move of the game is not legal (named with its ply).
    #[error(transparent)]
    Game(#[from] GameError),
    /// The analysis store could not be written.
    #[error("analysis store {0}")]
    Store(#[from] IoError),
}

/// The review of `moves` played from `start`, with `engine`'s book and settings.
/// `store` gives the values of positions searched before at the same settings, and
/// keeps those searched now (an evaluation without an [`identity`] is never stored).
/// `progress` is called after each decision (decisions done of all). A pass may be written or
/// left out. Stopped through [`Engine::stop_handle`], it returns the plies reviewed so
/// far with `interrupted` set.
///
/// [`identity`]: crate::eval::Evaluator::identity
pub fn review_game<E: IncrementalEvaluator>(
    engine: &mut Engine<E>,
    start: &Position,
    moves: &[Move],
    store: Option<&AnalysisStore>,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<GameReview, ReviewError> {
    // Replay first: an illegal move is an error before any search is spent.
    let mut game = Game::new(*start);
    for &mv in moves {
        game.play_inferring_pass(mv)?;
    }
    // Positions before each move, passes (written or inferred) included: a ply is an
    // index into the game as played.
    let decisions: Vec<(usize, Position, Move)> = game
        .positions()
        .into_iter()
        .zip(game.moves())
        .enumerate()
        .filter(|(_, (p, _))| p.board.legal_moves().count_ones() >= 2)
        .map(|(i, (p, mv))| (i + 1, p, mv))
        .collect();
    let settings = store.and_then(|_| settings_key(engine));
    let store = store.zip(settings.as_deref());
    let total = decisions.len();
    let mut reviewer = Reviewer { engine, store, searched: 0, from_store: 0 };
    let mut plies = Vec::with_capacity(total);
    let mut interrupted = false;
    for (done, &(ply, p, mv)) in decisions.iter().enumerate() {
        // A stop between positions (a book one searches nothing to notice it in).
        let reviewed = if reviewer.engine.stopped() { None } else { reviewer.position(&p, mv, ply)? };
        let Some(r) = reviewed else {
            interrupted = true;
            break;
        };
        plies.push(r);
        progress(Progress::new(done as u64 + 1, total as u64));
    }
    let (searched, from_store) = (reviewer.searched, reviewer.from_store);
    let mut review = summarise(plies, game.is_over().then(|| game.black_score()), interrupted);
    (review.searched, review.from_store) = (searched, from_store);
    Ok(review)
}

/// What a stored analysis is keyed by besides the position: everything that changes a
/// value. `None` when the evaluation cannot say what it is.
fn settings_key<E: IncrementalEvaluator>(engine: &Engine<E>) -> Option<String> {
    let eval = engine.eval.identity()?;
    Some(format!("thorbook {} | {:?} | eval {eval:08x}", env!("CARGO_PKG_VERSION"), engine.strength()))
}

struct Reviewer<'a, E: IncrementalEvaluator> {
    engine: &'a mut Engine<E>,
    /// The store and the settings key.
    store: Option<(&'a AnalysisStore, &'a str)>,
    searched: usize,
    from_store: usize,
}

impl<E: IncrementalEvaluator> Reviewer<'_, E> {
    /// The review of the move `mv` in `pos` (two legal moves or more); `None` when the
    /// engine was stopped during its search.
    fn position(&mut self, pos: &Position, mv: Move, ply: usize) -> Result<Option<PlyReview>, ReviewError> {
        let empties = pos.board.empty_count();
        let in_book = self.engine.book().map(|b| book_moves(b, pos)).unwrap_or_default();
        // (best move, its value, the played move's value, source, confidence)
        let (best_move, best, played, source, trust) = match (in_book.first(), in_book.iter().find(|b| b.mv == mv)) {
            (Some(best), Some(played)) => {
                let trust = if best.trust.exact { Confidence::Exact } else { Confidence::Book(best.trust.grade) };
                (best.mv, best.score, played.score, ValueSource::Book, trust)
            }
            _ => {
                let Some(analysis) = self.analysis(pos)? else { return Ok(None) };
                let Some(&(best_move, best)) = analysis.moves.first() else { return Ok(None) };
                let Some(&(_, played)) = analysis.moves.iter().find(|(m, _)| *m == mv) else { return Ok(None) };
                let (source, trust) = if analysis.exact {
                    (ValueSource::Exact, Confidence::Exact)
                } else {
                    (ValueSource::Search, Confidence::Depth(analysis.depth))
                };
                (best_move, best, played, source, trust)
            }
        };
        Ok(Some(PlyReview {
            ply,
            empties,
            side_to_move: pos.side,
            mv,
            value: best,
            source,
            trust,
            best_move,
            best_value: best,
            played_value: played,
            loss: (best - played).max(0),
        }))
    }

    /// Every move's value in `pos`: from the store, or searched (and stored); `None`
    /// when the engine was stopped.
    fn analysis(&mut self, pos: &Position) -> Result<Option<StoredAnalysis>, ReviewError> {
        if let Some(found) = self.store.and_then(|(store, settings)| store.get(settings, &pos.board)) {
            self.from_store += 1;
            return Ok(Some(found));
        }
        // A fresh table for each position: the review of a position is its own.
        self.engine.new_game();
        let limits = self.engine.strength().limits(&pos.board);
        let result = self.engine.search_all_moves(pos, limits);
        if self.engine.stopped() {
            return Ok(None);
        }
        self.searched += 1;
        let analysis = StoredAnalysis {
            depth: result.depth,
            exact: result.exact,
            moves: result.moves.iter().map(|m| (m.mv, m.score)).collect(),
        };
        if let Some((store, settings)) = self.store {
            store.put(settings, &pos.board, &analysis)?;
        }
        Ok(Some(analysis))
    }
}

fn summarise(plies: Vec<PlyReview>, black_result: Option<i32>, interrupted: bool) -> GameReview {
    let side = |color: Color| {
        let mine: Vec<&PlyReview> = plies.iter().filter(|p| p.side_to_move == color).collect();
        let moves = mine.len();
        let best_moves = mine.iter().filter(|p| p.loss == 0).count();
        let discs_lost = mine.iter().map(|p| p.loss).sum::<i32>();
        let share = |n: f64| if moves == 0 { 0.0 } else { n / moves as f64 };
        SideSummary {
            moves,
            best_moves,
            discs_lost,
            average_loss: share(f64::from(discs_lost)),
            accuracy: 100.0 * share(best_moves as f64),
        }
    };
    let mut worst: Vec<&PlyReview> = plies.iter().filter(|p| p.loss > 0).collect();
    // Biggest loss first; the earlier ply first among equal losses.
    worst.sort_by_key(|p| (std::cmp::Reverse(p.loss), p.ply));
    let worst = worst.iter().take(5).map(|p| p.ply).collect();
    let left_book_at = match plies.first() {
        Some(first) if first.source == ValueSource::Book => {
            plies.iter().find(|p| p.source != ValueSource::Book).map(|p| p.ply)
        }
        _ => None,
    };
    GameReview {
        black: side(Color::Black),
        white: side(Color::White),
        worst,
        left_book_at,
        black_result,
        interrupted,
        plies,
        searched: 0,
        from_store: 0,
    }
}
