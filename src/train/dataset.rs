//! Training positions and their targets.
//!
//! A WTHOR game stores black's theoretical score: its disc count under perfect play
//! from the position with 24 empties (P3). That value is exact for that position.
//! For the positions before and after it, it is only an approximation, and a biased
//! one: between the position and move 36 the players err, and each error lowers the
//! true value of the side that made it. From a position with an odd number of
//! empties, the side to move (white, in a game without passes) has made one more
//! move than the other side on the way to 24 empties (or will have, after it), so
//! the theoretical score understates its value by about one move's error — about 3
//! discs in the Thor games. Hence the better targets: exact solves near the end, and
//! deeper searches ([`super::labels`]) in the midgame.
//!
//! Positions are deduplicated by canonical board (the evaluation is the same for all
//! 8 images): a position reached in many games is one training row, whose
//! theoretical target is the mean over those games.

use std::collections::HashMap;

use rayon::prelude::*;

use super::labels::{LabelStore, SearchSpec};
use crate::board::Board;
use crate::square::Move;
use crate::thor::ThorGame;

/// Empties at which WTHOR's theoretical score is exact.
pub const THEORETICAL_EMPTIES: u32 = 24;

/// A game to learn from.
#[derive(Clone, Debug)]
pub struct TrainGame {
    /// Moves from the start, passes included.
    pub moves: Vec<Move>,
    /// Black's theoretical disc count at [`THEORETICAL_EMPTIES`] empties.
    pub theoretical: u8,
}

impl TrainGame {
    /// From a replayed Thor game.
    pub fn from_thor(game: &ThorGame) -> TrainGame {
        TrainGame { moves: game.moves_with_passes(), theoretical: game.raw.theoretical_score }
    }

    /// Every position of the game with its theoretical score for the side to move
    /// (positions where the side to move must pass or the game is over left out);
    /// empty when the game is illegal or never reaches 24 empties.
    pub fn positions(&self) -> Vec<(Board, i32)> {
        let mut positions = Vec::with_capacity(61);
        let mut board = Board::START;
        let mut black = true;
        let theoretical_black = 2 * i32::from(self.theoretical) - 64;
        let mut reaches_24 = false;
        for mv in self.moves.iter().copied().map(Some).chain([None]) {
            reaches_24 |= board.empty_count() == THEORETICAL_EMPTIES;
            if board.legal_moves() != 0 {
                positions.push((board, if black { theoretical_black } else { -theoretical_black }));
            }
            board = match mv {
                None => break,
                Some(Move::Pass) => board.pass(),
                Some(Move::Place(sq)) => match board.play(sq) {
                    Some(b) => b,
                    None => return Vec::new(),
                },
            };
            black = !black;
        }
        if reaches_24 {
            positions
        } else {
            Vec::new()
        }
    }
}

/// A distinct position of the training games.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GamePosition {
    /// The canonical board.
    pub board: Board,
    /// The mean theoretical score for the side to move over the games reaching it,
    /// rounded.
    pub theoretical: i8,
    /// Games reaching it.
    pub games: u32,
}

impl GamePosition {
    /// True when the theoretical score is exact here (24 empties).
    pub fn theoretical_is_exact(&self) -> bool {
        self.board.empty_count() == THEORETICAL_EMPTIES
    }
}

/// Every distinct position (by canonical board) of `games` where the side to move
/// has a legal move, most empties first, then by board: the order, like the content,
/// does not depend on the games' order or the thread count.
pub fn game_positions(games: &[TrainGame]) -> Vec<GamePosition> {
    let per_game: Vec<Vec<(Board, i32)>> =
        games.par_iter().map(|g| g.positions().into_iter().map(|(b, t)| (b.canonical().0, t)).collect()).collect();
    let mut merged: HashMap<Board, (i64, u32)> = HashMap::new();
    for (board, target) in per_game.into_iter().flatten() {
        let e = merged.entry(board).or_default();
        e.0 += i64::from(target);
        e.1 += 1;
    }
    let mut out: Vec<GamePosition> = merged
        .into_iter()
        .map(|(board, (sum, games))| {
            let mean = (sum as f64 / f64::from(games)).round() as i8;
            GamePosition { board, theoretical: mean, games }
        })
        .collect();
    out.sort_unstable_by_key(|p| (std::cmp::Reverse(p.board.empty_count()), p.board));
    out
}

/// Where a target comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LabelKind {
    /// An exact solve, or the theoretical score at 24 empties.
    Exact,
    /// A midgame search.
    Search,
    /// The games' theoretical score away from 24 empties (an approximation).
    Theoretical,
}

/// A position and its target: the final disc differential for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Labeled {
    /// The position (side to move has a legal move).
    pub board: Board,
    /// Target score for the side to move.
    pub target: i8,
    /// Where the target comes from.
    pub kind: LabelKind,
}

impl Labeled {
    /// True when the target is exact.
    pub fn exact(&self) -> bool {
        self.kind == LabelKind::Exact
    }
}

/// Labeled positions grouped by their number of empties.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// `by_empties[e]`: the positions with `e` empties (0..=60).
    pub by_empties: Vec<Vec<Labeled>>,
}

impl Default for Dataset {
    fn default() -> Dataset {
        Dataset { by_empties: vec![Vec::new(); 61] }
    }
}

impl Dataset {
    /// Groups positions by empties, keeping their order.
    pub fn from_positions(positions: impl IntoIterator<Item = Labeled>) -> Dataset {
        let mut set = Dataset::default();
        for l in positions {
            set.by_empties[l.board.empty_count() as usize].push(l);
        }
        set
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.by_empties.iter().map(Vec::len).sum()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The positions with `empties` empties.
    pub fn at(&self, empties: u32) -> &[Labeled] {
        self.by_empties.get(empties as usize).map_or(&[], Vec::as_slice)
    }

    /// Every position, most empties first.
    pub fn iter(&self) -> impl Iterator<Item = &Labeled> {
        self.by_empties.iter().rev().flatten()
    }
}

/// The training rows of `games` and `extra` positions (canonical boards) with the
/// best target the store holds for each: an exact solve, else the theoretical score
/// where it is exact (24 empties), else a search of `search`, else — for positions of
/// the games — their theoretical score. Extra positions without an exact or search
/// label are left out.
pub fn label_positions(
    games: &[GamePosition],
    extra: &[Board],
    store: &LabelStore,
    search: Option<SearchSpec>,
) -> Dataset {
    let searched = |b: &Board| search.and_then(|s| store.searched(b, s));
    let from_games = games.iter().map(|p| {
        let (target, kind) = if let Some(t) = store.exact(&p.board) {
            (t, LabelKind::Exact)
        } else if p.theoretical_is_exact() {
            (p.theoretical, LabelKind::Exact)
        } else if let Some(t) = searched(&p.board) {
            (t, LabelKind::Search)
        } else {
            (p.theoretical, LabelKind::Theoretical)
        };
        Labeled { board: p.board, target, kind }
    });
    let from_extra = extra.iter().filter_map(|b| {
        let (target, kind) = match store.exact(b) {
            Some(t) => (t, LabelKind::Exact),
            None => (searched(b)?, LabelKind::Search),
        };
        Some(Labeled { board: *b, target, kind })
    });
    Dataset::from_positions(from_games.chain(from_extra))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game of lowest-square moves with a made-up theoretical score of 40 (black
    /// +16), played to `until` empties.
    fn lowest_square_game(until: u32) -> TrainGame {
        let mut game = TrainGame { moves: Vec::new(), theoretical: 40 };
        let mut b = crate::Position::START;
        while b.board.empty_count() > until && !b.board.is_game_over() {
            let mv = match b.board.legal_moves() {
                0 => Move::Pass,
                m => Move::Place(crate::Square::new(m.trailing_zeros() as u8)),
            };
            game.moves.push(mv);
            b = b.play_sequence(&[mv]).unwrap();
        }
        game
    }

    #[test]
    fn targets_follow_the_side_to_move() {
        let game = lowest_square_game(20);
        let positions = game.positions();
        assert_eq!(positions[0], (Board::START, 16));
        assert_eq!(positions[1].1, -16);
        assert!(positions.iter().all(|(b, _)| b.legal_moves() != 0));
        // A game cut before 24 empties teaches nothing.
        let mut short = game.clone();
        short.moves.truncate(20);
        assert!(short.positions().is_empty());
    }

    #[test]
    fn positions_are_merged_over_symmetries_and_games() {
        let a = lowest_square_game(20);
        // The same game mirrored (every move through one symmetry), with another score.
        let t = crate::symmetry::Transform::TRANSPOSE;
        let b = TrainGame { moves: a.moves.iter().map(|&m| t.apply_move(m)).collect(), theoretical: 30 };
        let merged = game_positions(&[a.clone(), b.clone()]);
        assert_eq!(merged.len(), a.positions().len());
        // Black +16 and black −4 average to +6 for black.
        let start = merged.iter().find(|p| p.board == Board::START.canonical().0).unwrap();
        assert_eq!((start.theoretical, start.games), (6, 2));
        assert_eq!(game_positions(&[b, a]), merged, "the order of the games does not matter");
        assert!(merged.windows(2).all(|w| w[0].board.empty_count() >= w[1].board.empty_count()));
    }
}
