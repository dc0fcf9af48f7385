//! Arrays for learning: every position of a set of games, synthetic games of uniformly
//! random moves (the Othello-GPT recipe), board planes, and labels — exact scores,
//! searches at a level, book values with their trust. Everything comes as columns
//! (one `Vec` per field, row `i` of each belonging together), is built on rayon's pool
//! and is the same for any number of threads.
//!
//! Squares are numbered a1 = 0, b1 = 1, …, h8 = 63 (`row * 8 + column`); a move column
//! holds a square, [`PASS`] or [`PADDING`].

use crate::work::{Progress, StopHandle};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use rayon::prelude::*;

use crate::board::{Board, Color};
use crate::book::trust::Trust;
use crate::book::Book;
use crate::eval::PatternEval;
use crate::parallel_count::ParallelCount;
use crate::playout::play_out;
use crate::rng::Draws;
use crate::search::batch::{label_in_batches, solve_work, WorkerTables};
use crate::search::{exact_score, Level, Search, Settings, TableError, TranspositionTable};
use crate::square::{Move, Square};
use crate::thor::ThorGame;

/// The move column's code of a pass.
pub const PASS: u8 = 64;
/// The token after a synthetic game's end (its remaining tokens up to 60).
pub const PADDING: u8 = 65;
/// Tokens per synthetic game: the most moves a game can have (passes are not tokens:
/// the side to move follows from the board).
pub const GAME_TOKENS: usize = 60;

/// Games per parallel task: large enough that a task outweighs its scheduling.
const GAMES_PER_TASK: usize = 256;

/// Every position of some games from which a move or a pass was played, in game order
/// then ply order (a game's final position, where nothing is played, is not a row).
/// Scores are disc differences for the side to move, empties counted for the winner.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GamePositions {
    /// The side to move's discs.
    pub player: Vec<u64>,
    /// The other side's discs.
    pub opponent: Vec<u64>,
    /// Whether white is to move.
    pub white_to_move: Vec<bool>,
    /// Plies played before the position, passes counted.
    pub ply: Vec<u8>,
    /// Empty squares.
    pub empties: Vec<u8>,
    /// The move played: a square, or [`PASS`].
    pub played: Vec<u8>,
    /// The side to move's legal moves.
    pub legal: Vec<u64>,
    /// The game's final disc difference (0 where unknown).
    pub final_score: Vec<i8>,
    /// Whether the game's result is known.
    pub final_known: Vec<bool>,
    /// The game's theoretical score: the result of perfect play from the position with
    /// the archive's depth of empties (0 where the source has none).
    pub theoretical_score: Vec<i8>,
    /// Whether the source gives a theoretical score.
    pub theoretical_known: Vec<bool>,
    /// Index of the game in the slice given.
    pub game: Vec<u32>,
}

/// Mutable windows of the columns of [`GamePositions`], split per task.
struct PositionRows<'a> {
    player: &'a mut [u64],
    opponent: &'a mut [u64],
    white_to_move: &'a mut [bool],
    ply: &'a mut [u8],
    empties: &'a mut [u8],
    played: &'a mut [u8],
    legal: &'a mut [u64],
    final_score: &'a mut [i8],
    final_known: &'a mut [bool],
    theoretical_score: &'a mut [i8],
    theoretical_known: &'a mut [bool],
    game: &'a mut [u32],
}

/// Splits the first `n` elements off a window, leaving the rest.
fn take<'a, T>(rest: &mut &'a mut [T], n: usize) -> &'a mut [T] {
    let (head, tail) = std::mem::take(rest).split_at_mut(n);
    *rest = tail;
    head
}

impl<'a> PositionRows<'a> {
    fn split_off_front(&mut self, n: usize) -> PositionRows<'a> {
        PositionRows {
            player: take(&mut self.player, n),
            opponent: take(&mut self.opponent, n),
            white_to_move: take(&mut self.white_to_move, n),
            ply: take(&mut self.ply, n),
            empties: take(&mut self.empties, n),
            played: take(&mut self.played, n),
            legal: take(&mut self.legal, n),
            final_score: take(&mut self.final_score, n),
            final_known: take(&mut self.final_known, n),
            theoretical_score: take(&mut self.theoretical_score, n),
            theoretical_known: take(&mut self.theoretical_known, n),
            game: take(&mut self.game, n),
        }
    }
}

/// Black's disc difference from black's disc count (empties to the winner).
fn black_difference(black_discs: u8) -> i8 {
    // 0..=64 discs: the difference is in -64..=64.
    (2 * i16::from(black_discs) - 64) as i8
}

impl GamePositions {
    /// The positions of `games`. Each game is replayed once; no row allocates.
    pub fn of_games(games: &[ThorGame]) -> GamePositions {
        let rows_of = |g: &ThorGame| usize::from(g.move_count()) + usize::from(g.passes());
        let task_rows: Vec<usize> = games.chunks(GAMES_PER_TASK).map(|c| c.iter().map(rows_of).sum()).collect();
        let total = task_rows.iter().sum();
        let mut out = GamePositions {
            player: vec![0; total],
            opponent: vec![0; total],
            white_to_move: vec![false; total],
            ply: vec![0; total],
            empties: vec![0; total],
            played: vec![0; total],
            legal: vec![0; total],
            final_score: vec![0; total],
            final_known: vec![false; total],
            theoretical_score: vec![0; total],
            theoretical_known: vec![false; total],
            game: vec![0; total],
        };
        let mut rest = PositionRows {
            player: &mut out.player,
            opponent: &mut out.opponent,
            white_to_move: &mut out.white_to_move,
            ply: &mut out.ply,
            empties: &mut out.empties,
            played: &mut out.played,
            legal: &mut out.legal,
            final_score: &mut out.final_score,
            final_known: &mut out.final_known,
            theoretical_score: &mut out.theoretical_score,
            theoretical_known: &mut out.theoretical_known,
            game: &mut out.game,
        };
        let windows: Vec<PositionRows> = task_rows.iter().map(|&n| rest.split_off_front(n)).collect();
        windows.into_par_iter().zip(games.par_chunks(GAMES_PER_TASK)).enumerate().for_each(|(task, (rows, chunk))| {
            let mut r = 0;
            for (i, g) in chunk.iter().enumerate() {
                let index = (task * GAMES_PER_TASK + i) as u32;
                let final_black = g.black_discs().map(black_difference);
                let theoretical_black = g.theoretical_discs().map(black_difference);
                let mut ply = 0u8;
                g.visit_positions(|pos, mv| {
                    let Some(mv) = mv else { return };
                    let sign = if pos.side == Color::White { -1 } else { 1 };
                    rows.player[r] = pos.board.player;
                    rows.opponent[r] = pos.board.opponent;
                    rows.white_to_move[r] = pos.side == Color::White;
                    rows.ply[r] = ply;
                    rows.empties[r] = pos.board.empty_count() as u8;
                    rows.played[r] = move_code(mv);
                    rows.legal[r] = pos.board.legal_moves();
                    rows.final_score[r] = final_black.map_or(0, |d| sign * d);
                    rows.final_known[r] = final_black.is_some();
                    rows.theoretical_score[r] = theoretical_black.map_or(0, |d| sign * d);
                    rows.theoretical_known[r] = theoretical_black.is_some();
                    rows.game[r] = index;
                    r += 1;
                    ply += 1;
                });
            }
            debug_assert_eq!(r, rows.game.len(), "a game's rows are its moves and passes");
        });
        out
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.game.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.game.is_empty()
    }
}

/// A move's code in the move columns.
fn move_code(mv: Move) -> u8 {
    match mv {
        Move::Place(sq) => sq.index() as u8,
        Move::Pass => PASS,
    }
}

/// Board planes for convolutional nets: for each row, the side to move's discs, the
/// other side's, and (given `legal`) the legal moves, each an 8×8 plane of 0/1 with
/// `[rank][file]` from a1 — `rows × planes × 64` bytes, row-major.
pub fn planes(player: &[u64], opponent: &[u64], legal: Option<&[u64]>) -> Vec<u8> {
    let count = player.len().min(opponent.len()).min(legal.map_or(usize::MAX, <[u64]>::len));
    let per_row = if legal.is_some() { 3 } else { 2 };
    let mut out = vec![0u8; count * per_row * 64];
    out.par_chunks_mut(per_row * 64).enumerate().for_each(|(i, row)| {
        let masks = [player[i], opponent[i], legal.map_or(0, |l| l[i])];
        for (plane, mask) in row.chunks_mut(64).zip(masks) {
            for (sq, cell) in plane.iter_mut().enumerate() {
                *cell = ((mask >> sq) & 1) as u8;
            }
        }
    });
    out
}

/// How [`RandomGames::boards`] encodes a square.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoardEncoding {
    /// 0 empty, 1 black, 2 white.
    BlackWhite,
    /// 0 empty, 1 the side to move next's disc, 2 the other side's (after a pass is
    /// forced, the side to move next is the one that just moved; after the game's end,
    /// the side that did not play last).
    MineTheirs,
}

/// Games of uniformly random legal moves, [`GAME_TOKENS`] tokens each: the squares
/// played, then [`PADDING`] after the game's end. Passes are not tokens: when a side
/// has no move the other plays again, which the board shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RandomGames {
    /// `games × 60` squares (0–63) and padding.
    pub tokens: Vec<u8>,
    /// Moves of each game (tokens before the padding).
    pub lengths: Vec<u8>,
    /// Black's final disc difference of each game.
    pub final_score: Vec<i8>,
    /// When asked for: `games × 60 × 64`, the board after each token (the final board
    /// repeated after the end), in the encoding asked for.
    pub boards: Vec<u8>,
    /// When asked for: `games × 60`, the legal moves of the side to move after each
    /// token (0 after the end).
    pub legal: Vec<u64>,
}

/// Mutable windows of the columns of [`RandomGames`] (an absent column is empty).
struct GameRows<'a> {
    tokens: &'a mut [u8],
    lengths: &'a mut [u8],
    final_score: &'a mut [i8],
    boards: &'a mut [u8],
    legal: &'a mut [u64],
}

/// Games `first..first + count` of the stream of random games under `seed`. Game `i`
/// depends only on `seed` and `i`, so batches of any size concatenate to the same set.
pub fn random_games(seed: u64, first: u64, count: usize, boards: Option<BoardEncoding>, legal: bool) -> RandomGames {
    play_games(seed, first, count, boards, legal, || (), |_, draws, _, moves, _| Some(random_square(draws, moves)))
}

/// Which games [`self_play_games`] plays, and what it hands over with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SelfPlayGames {
    /// The seed of the random opening moves.
    pub seed: u64,
    /// The first game's number in the stream of this seed.
    pub first: u64,
    /// How many games.
    pub count: usize,
    /// How hard each move after the random ones is searched.
    pub level: Level,
    /// Moves drawn uniformly at the start of each game, so that games differ.
    pub random_plies: u32,
    /// Each position's board as planes, when wanted ([`RandomGames::boards`]).
    pub boards: Option<BoardEncoding>,
    /// Each position's legal moves too ([`RandomGames::legal`]).
    pub legal: bool,
}

impl Default for SelfPlayGames {
    /// No game yet: seed 0 from game 0, the default level, 8 random plies, no boards
    /// or legal moves.
    fn default() -> SelfPlayGames {
        SelfPlayGames {
            seed: 0,
            first: 0,
            count: 0,
            level: Level::default(),
            random_plies: 8,
            boards: None,
            legal: false,
        }
    }
}

/// Games `first..first + count` of self-play at `level` (the bundled evaluation, one
/// thread per game, every core busy), in the form of [`random_games`]: the first
/// `random_plies` moves are drawn uniformly under `seed` so that games differ, the
/// rest are the search's best. Each game starts from an empty table, so game `i`
/// depends only on `seed`, `i`, the level and `random_plies`.
pub fn self_play_games(
    games: &SelfPlayGames,
    stop: &StopHandle,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<RandomGames, LabelError> {
    let SelfPlayGames { seed, first, count, level, random_plies, boards, legal } = *games;
    let progress = &|done, total| progress(Progress::new(done, total));
    let stop = stop.flag();
    let strength = Settings::at_level(level).effective_strength()?;
    let eval = PatternEval::bundled();
    let started = AtomicU64::new(0);
    let tables = WorkerTables::new(stop);
    let games = play_games(
        seed,
        first,
        count,
        boards,
        legal,
        || TranspositionTable::try_new(LABEL_TABLE_MIB),
        |tt, draws, board, moves, ply| {
            let tt = tables.table(tt)?;
            if stop.load(Relaxed) {
                return None;
            }
            if ply == 0 {
                tt.clear();
                // Reported as games start (the last report, `count`, when all finished).
                let begun = started.fetch_add(1, Relaxed);
                if begun > 0 && begun.is_multiple_of(16) {
                    progress(begun, count as u64);
                }
            }
            if ply < random_plies {
                return Some(random_square(draws, moves));
            }
            let result = Search::new(&eval, &*tt, stop, 1).run(board, strength.limits(board), false);
            match result.best_move() {
                Some(Move::Place(sq)) if !stop.load(Relaxed) => Some(sq),
                _ => None,
            }
        },
    );
    tables.finish()?;
    unless_stopped(stop)?;
    progress(count as u64, count as u64);
    Ok(games)
}

/// A uniformly drawn square of `moves` (not empty).
fn random_square(draws: &mut Draws, moves: u64) -> Square {
    nth_square(moves, draws.below(u64::from(moves.count_ones())) as u32)
}

/// Plays games `first..first + count` in parallel, `choose(state, draws, board, moves,
/// ply)` picking each move (`ply` counts the moves played, passes not counted; `None`
/// abandons the game, whose tokens stop there); each task has a `state` of `init`.
fn play_games<S>(
    seed: u64,
    first: u64,
    count: usize,
    boards: Option<BoardEncoding>,
    legal: bool,
    init: impl Fn() -> S + Sync + Send,
    choose: impl Fn(&mut S, &mut Draws, &Board, u64, u32) -> Option<Square> + Sync + Send,
) -> RandomGames {
    let board_len = if boards.is_some() { GAME_TOKENS * 64 } else { 0 };
    let legal_len = if legal { GAME_TOKENS } else { 0 };
    let mut out = RandomGames {
        tokens: vec![PADDING; count * GAME_TOKENS],
        lengths: vec![0; count],
        final_score: vec![0; count],
        boards: vec![0; count * board_len],
        legal: vec![0; count * legal_len],
    };
    let mut rest = GameRows {
        tokens: &mut out.tokens,
        lengths: &mut out.lengths,
        final_score: &mut out.final_score,
        boards: &mut out.boards,
        legal: &mut out.legal,
    };
    // Self-play games are long: smaller tasks keep both cores busy to the end.
    let per_task = if count < 4 * GAMES_PER_TASK { 8 } else { GAMES_PER_TASK };
    let mut windows = Vec::with_capacity(count.div_ceil(per_task));
    let mut start = 0;
    while start < count {
        let n = per_task.min(count - start);
        windows.push((
            start,
            GameRows {
                tokens: take(&mut rest.tokens, n * GAME_TOKENS),
                lengths: take(&mut rest.lengths, n),
                final_score: take(&mut rest.final_score, n),
                boards: take(&mut rest.boards, n * board_len),
                legal: take(&mut rest.legal, n * legal_len),
            },
        ));
        start += n;
    }
    windows.into_par_iter().for_each_init(init, |state, (start, rows)| {
        for g in 0..rows.lengths.len() {
            let mut draws = Draws::for_game(seed, first + (start + g) as u64);
            let tokens = &mut rows.tokens[g * GAME_TOKENS..][..GAME_TOKENS];
            let mut board_rows = (board_len > 0).then(|| rows.boards[g * board_len..][..board_len].chunks_mut(64));
            let mut legal_rows = legal.then(|| rows.legal[g * legal_len..][..legal_len].iter_mut());
            let (mut black_to_move, mut len) = (true, 0);
            let board = play_out(
                Board::START,
                |board, moves, ply| {
                    // A game has at most 60 moves: the bound only keeps the rows in range.
                    if ply as usize >= GAME_TOKENS {
                        return None;
                    }
                    choose(state, &mut draws, board, moves, ply)
                },
                |played| {
                    let after = &played.after;
                    tokens[len] = played.square.index() as u8;
                    len += 1;
                    black_to_move ^= !played.passed;
                    if let Some(rows) = board_rows.as_mut() {
                        encode(
                            after,
                            black_to_move,
                            boards.unwrap_or(BoardEncoding::BlackWhite),
                            rows.next().unwrap_or_default(),
                        );
                    }
                    if let Some(rows) = legal_rows.as_mut() {
                        if let Some(cell) = rows.next() {
                            *cell = after.legal_moves();
                        }
                    }
                },
            );
            rows.lengths[g] = len as u8;
            let score = board.final_score();
            rows.final_score[g] = (if black_to_move { score } else { -score }) as i8;
            // The final board stays on the padding's rows (the legal moves stay 0).
            if let Some(rows) = board_rows.as_mut() {
                for row in rows {
                    encode(&board, black_to_move, boards.unwrap_or(BoardEncoding::BlackWhite), row);
                }
            }
        }
    });
    out
}

/// The `n`-th (0-based) set square of `mask`, which has more than `n`.
fn nth_square(mut mask: u64, n: u32) -> Square {
    for _ in 0..n {
        mask &= mask - 1;
    }
    Square::new(mask.trailing_zeros() as u8)
}

/// Writes `board` (the side to move's view, black to move or not) into 64 cells.
fn encode(board: &Board, black_to_move: bool, encoding: BoardEncoding, cells: &mut [u8]) {
    let (ones, twos) = match encoding {
        BoardEncoding::MineTheirs => (board.player, board.opponent),
        BoardEncoding::BlackWhite if black_to_move => (board.player, board.opponent),
        BoardEncoding::BlackWhite => (board.opponent, board.player),
    };
    for (sq, cell) in cells.iter_mut().enumerate() {
        *cell = ((ones >> sq) & 1) as u8 | (((twos >> sq) & 1) as u8) << 1;
    }
}

/// Why labelling stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabelError {
    /// The stop flag was set.
    #[error("labelling was interrupted")]
    Interrupted,
    /// A worker's table could not be had.
    #[error(transparent)]
    Table(#[from] TableError),
    /// The level's settings are inconsistent.
    #[error(transparent)]
    Settings(#[from] crate::search::SettingsError),
}

/// A labelling worker's table (cleared before each search at a level).
const LABEL_TABLE_MIB: usize = 4;

/// [`LabelError::Interrupted`] once `stop` is set: how parallel work that ended
/// without an error of its own tells a stop from a finish.
fn unless_stopped(stop: &AtomicBool) -> Result<(), LabelError> {
    if stop.load(Relaxed) {
        Err(LabelError::Interrupted)
    } else {
        Ok(())
    }
}

/// Labels `boards` in parallel batches of about equal `work`, each worker with a table
/// of its own, reporting `(done, total)` as batches finish; [`LabelError::Interrupted`]
/// once `stop` is set.
fn label_all<T: Send + Default + Clone>(
    boards: &[Board],
    work: impl Fn(&Board) -> u64,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
    label: impl Fn(&mut TranspositionTable, &Board) -> Option<T> + Sync,
) -> Result<Vec<T>, LabelError> {
    let count = ParallelCount::new(boards.len() as u64, 1, progress);
    let out = Mutex::new(vec![T::default(); boards.len()]);
    label_in_batches(boards, work, LABEL_TABLE_MIB, stop, label, |batch, labels| {
        let n = labels.len() as u64;
        let mut out = out.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for (cell, label) in out[batch].iter_mut().zip(labels) {
            *cell = label;
        }
        drop(out);
        count.add(n);
    })?;
    unless_stopped(stop)?;
    count.finish();
    Ok(out.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner))
}

/// The exact score (disc difference for the side to move, perfect play by both) of
/// every board with at most `max_empties` empties; `None` for the others.
pub fn exact_scores(
    boards: &[Board],
    max_empties: u32,
    stop: &StopHandle,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Vec<Option<i8>>, LabelError> {
    let progress = &|done, total| progress(Progress::new(done, total));
    let stop = stop.flag();
    let order = PatternEval::bundled();
    let work = |b: &Board| if b.empty_count() > max_empties { 1 } else { solve_work(b) };
    label_all(boards, work, stop, progress, |tt, board| {
        if board.empty_count() > max_empties {
            return Some(None);
        }
        exact_score(&order, tt, stop, board).map(|score| Some(score as i8))
    })
}

/// The score of a search at `level` (the bundled evaluation, one thread) of every
/// board, in discs for the side to move; exact where the level solves. Each search
/// starts from an empty table, so a score depends only on the board and the level.
pub fn search_scores(
    boards: &[Board],
    level: Level,
    stop: &StopHandle,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Vec<i16>, LabelError> {
    let progress = &|done, total| progress(Progress::new(done, total));
    let stop = stop.flag();
    let strength = Settings::at_level(level).effective_strength()?;
    let eval = PatternEval::bundled();
    label_all(
        boards,
        |_| 1,
        stop,
        progress,
        |tt, board| {
            if board.is_game_over() {
                return Some(board.final_score() as i16);
            }
            tt.clear();
            let result = Search::new(&eval, &*tt, stop, 1).run(board, strength.limits(board), false);
            (!stop.load(Relaxed)).then(|| result.score().unwrap_or(0) as i16)
        },
    )
}

/// A book's value of a position with how far it can be trusted.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct BookLabel {
    /// The book value, discs for the side to move.
    pub value: i32,
    /// Its trust, as `book query` shows it.
    pub trust: Trust,
}

/// The book value and trust of every board that is a book position (`None` for the
/// others), in parallel.
pub fn book_labels<D: AsRef<[u8]> + Sync>(book: &Book<D>, boards: &[Board]) -> Vec<Option<BookLabel>> {
    boards
        .par_iter()
        .map_init(std::collections::HashMap::new, |memo, board| {
            let hit = book.probe(board)?;
            Some(BookLabel { value: hit.value(), trust: Trust::of_position(book, board, memo) })
        })
        .collect()
}

#[cfg(test)]
mod tests;
