//! Training positions and their targets.
//!
//! A WTHOR game stores black's theoretical score: its disc count under perfect play
//! from the position with 24 empties (P3). That value is exact for that position.
//! For the positions before and after it, it is only an approximation, and a biased
//! one: between the position and 24 empties the players err, and each error lowers
//! the true value of the side that made it. From a position with an odd number of
//! empties, the side to move (white, in a game without passes) has made one more
//! move than the other side on the way to 24 empties (or will have, after it), so
//! the theoretical score understates its value by one move's loss on average. In the
//! Thor games that loss is about 2.3 discs (exact solves at 19 and 21 empties of
//! training games against their theoretical score; see docs/training.md), and it is the
//! parity bias the evaluation used to learn: white to move looked 2–3 discs worse
//! than it was, at every stage, whatever the phases.
//!
//! So each position records how many moves' loss its theoretical score understates
//! for the side to move ([`GamePosition::understated_moves`], counted move by move so
//! passes are right), and `label_positions` adds that many times a measured
//! per-move loss. Better still are exact solves near the end and deeper searches in
//! the midgame ([`super::labels`]), which take precedence.
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
pub(crate) const THEORETICAL_EMPTIES: u32 = 24;

/// A game to learn from.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainGame {
    /// Moves from the start, passes included.
    pub moves: Vec<Move>,
    /// Black's theoretical disc count at `THEORETICAL_EMPTIES` empties.
    pub theoretical: u8,
    /// How much its positions weigh in the fit (1 by default): a position reached by
    /// several games weighs the mean of theirs, so a population can count for less
    /// without losing its positions (`train --tournament-weight`).
    pub weight: f32,
}

impl TrainGame {
    /// From a replayed game, when its source gives the theoretical score at
    /// `THEORETICAL_EMPTIES` empties (WTHOR's P3 = 24): the labels come from it.
    pub fn from_thor(game: &ThorGame) -> Option<TrainGame> {
        let theoretical = game.theoretical_discs().filter(|_| u32::from(game.depth) == THEORETICAL_EMPTIES)?;
        Some(TrainGame { moves: game.moves_with_passes(), theoretical, weight: 1.0 })
    }

    /// Every position of the game with its theoretical score for the side to move
    /// (positions where the side to move must pass or the game is over left out);
    /// empty when the game is illegal or never reaches 24 empties.
    pub(crate) fn positions(&self) -> Vec<GameTarget> {
        // Each position with the moves (not passes) black and white made before it.
        let mut positions = Vec::with_capacity(61);
        let mut made = [0i32; 2];
        let mut board = Board::START;
        let mut black = true;
        let theoretical_black = 2 * i32::from(self.theoretical) - 64;
        let mut at_24 = None;
        for mv in self.moves.iter().copied().map(Some).chain([None]) {
            if board.empty_count() == THEORETICAL_EMPTIES {
                at_24 = Some(made);
            }
            if board.legal_moves() != 0 {
                let theoretical = if black { theoretical_black } else { -theoretical_black };
                positions.push((board, theoretical, black, made));
            }
            board = match mv {
                None => break,
                Some(Move::Pass) => board.pass(),
                Some(Move::Place(sq)) => match board.play(sq) {
                    Some(b) => b,
                    None => return Vec::new(),
                },
            };
            if matches!(mv, Some(Move::Place(_))) {
                made[usize::from(!black)] += 1;
            }
            black = !black;
        }
        let Some(at_24) = at_24 else { return Vec::new() };
        positions
            .into_iter()
            .map(|(board, theoretical, black, made)| {
                // Before 24 empties the side to move's own losses are still to come and the
                // other side's count for it; after, the other side's losses since 24 are
                // its gain and its own count against it. Both read the same: its moves
                // from here to 24 empties minus the other side's (negative counts after).
                let (me, other) = if black { (0, 1) } else { (1, 0) };
                let to_24 = |side: usize| at_24[side] - made[side];
                GameTarget { board, theoretical, understated_moves: to_24(me) - to_24(other), black }
            })
            .collect()
    }
}

/// One position of one game and its theoretical target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GameTarget {
    /// The position.
    pub board: Board,
    /// The game's theoretical score for the side to move.
    pub theoretical: i32,
    /// How many moves' loss the theoretical score understates the value of the side
    /// to move by: between this position and 24 empties, its moves minus the other
    /// side's when 24 empties is still to come, the other side's minus its own after.
    pub understated_moves: i32,
    /// Black is to move (a pass changes which colour moves at a number of empties).
    pub black: bool,
}

/// A distinct position of the training games.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct GamePosition {
    /// The canonical board.
    pub board: Board,
    /// The mean theoretical score for the side to move over the games reaching it
    /// (each counting its weight), rounded.
    pub theoretical: i8,
    /// The mean over those games of `GameTarget::understated_moves` (weighted the same).
    pub understated_moves: f32,
    /// Games reaching it.
    pub games: u32,
    /// The mean of those games' weights: the row's weight in the fit.
    pub weight: f32,
}

impl GamePosition {
    /// True when the theoretical score is exact here (24 empties).
    pub(crate) fn theoretical_is_exact(&self) -> bool {
        self.board.empty_count() == THEORETICAL_EMPTIES
    }

    /// The theoretical target raised by `move_loss` discs per understated move, rounded
    /// and kept within ±64.
    pub(crate) fn corrected_target(&self, move_loss: f64) -> i8 {
        let t = f64::from(self.theoretical) + move_loss * f64::from(self.understated_moves);
        t.round().clamp(-64.0, 64.0) as i8
    }
}

/// Every distinct position (by canonical board) of `games` where the side to move
/// has a legal move, in the order of their first appearance (game by game, ply by
/// ply): the order, like the content, does not depend on the thread count, and the
/// positions of a game stay together (its endgame solves share a table).
pub(crate) fn game_positions(games: &[TrainGame]) -> Vec<GamePosition> {
    let per_game: Vec<Vec<GameTarget>> = games
        .par_iter()
        .map(|g| g.positions().into_iter().map(|t| GameTarget { board: t.board.canonical().0, ..t }).collect())
        .collect();
    // Board → (weighted sums of targets and of understated moves, games, sum of the
    // games' weights, order of first appearance). A game weighing w counts as w games.
    let mut merged: HashMap<Board, (f64, f64, u32, f64, usize)> = HashMap::new();
    let weighted = per_game.into_iter().zip(games).flat_map(|(ts, g)| ts.into_iter().map(move |t| (t, g.weight)));
    for (t, weight) in weighted {
        let w = f64::from(weight);
        let next = merged.len();
        let e = merged.entry(t.board).or_insert((0.0, 0.0, 0, 0.0, next));
        e.0 += w * f64::from(t.theoretical);
        e.1 += w * f64::from(t.understated_moves);
        e.2 += 1;
        e.3 += w;
    }
    let mut out: Vec<(usize, GamePosition)> = merged
        .into_iter()
        .map(|(board, (targets, understated, games, weights, first))| {
            let theoretical = (targets / weights).round() as i8;
            let understated_moves = (understated / weights) as f32;
            let weight = (weights / f64::from(games)) as f32;
            (first, GamePosition { board, theoretical, understated_moves, games, weight })
        })
        .collect();
    out.sort_unstable_by_key(|(first, _)| *first);
    out.into_iter().map(|(_, p)| p).collect()
}

/// Where a target comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LabelKind {
    /// An exact solve, or the theoretical score at 24 empties.
    Exact,
    /// A midgame search.
    Search,
    /// The games' theoretical score away from 24 empties (an approximation).
    Theoretical,
}

/// A position and its target: the final disc differential for the side to move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Labeled {
    /// The position (side to move has a legal move).
    pub board: Board,
    /// Target score for the side to move.
    pub target: i8,
    /// Where the target comes from.
    pub kind: LabelKind,
    /// Its weight in the fit (1 unless its games weigh otherwise).
    pub weight: f32,
}

impl Labeled {
    /// True when the target is exact.
    pub(crate) fn exact(&self) -> bool {
        self.kind == LabelKind::Exact
    }
}

/// Labeled positions grouped by their number of empties.
#[derive(Clone, Debug)]
pub(crate) struct Dataset {
    /// `by_empties[e]`: the positions with `e` empties (0..=60).
    pub(crate) by_empties: Vec<Vec<Labeled>>,
}

impl Default for Dataset {
    fn default() -> Dataset {
        Dataset { by_empties: vec![Vec::new(); 61] }
    }
}

impl Dataset {
    /// Groups positions by empties, keeping their order.
    pub(crate) fn from_positions(positions: impl IntoIterator<Item = Labeled>) -> Dataset {
        let mut set = Dataset::default();
        for l in positions {
            set.by_empties[l.board.empty_count() as usize].push(l);
        }
        set
    }

    /// The positions with `empties` empties.
    pub(crate) fn at(&self, empties: u32) -> &[Labeled] {
        self.by_empties.get(empties as usize).map_or(&[], Vec::as_slice)
    }

    /// Every position, most empties first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Labeled> {
        self.by_empties.iter().rev().flatten()
    }
}

/// The training rows of `games` and `extra` positions (canonical boards) with the
/// best target the store holds for each: an exact solve, else the theoretical score
/// where it is exact (24 empties), else a search of `search`, else — for positions of
/// the games — their theoretical score corrected by `move_loss` discs per understated
/// move ([`GamePosition::corrected_target`]; 0 keeps it as it is). Extra positions
/// without an exact or search label are left out.
pub(crate) fn label_positions(
    games: &[GamePosition],
    extra: &[Board],
    store: &LabelStore,
    search: Option<SearchSpec>,
    move_loss: f64,
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
            (p.corrected_target(move_loss), LabelKind::Theoretical)
        };
        Labeled { board: p.board, target, kind, weight: p.weight }
    });
    let from_extra = extra.iter().filter_map(|b| {
        let (target, kind) = match store.exact(b) {
            Some(t) => (t, LabelKind::Exact),
            None => (searched(b)?, LabelKind::Search),
        };
        Some(Labeled { board: *b, target, kind, weight: 1.0 })
    });
    Dataset::from_positions(from_games.chain(from_extra))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game of lowest-square moves with a made-up theoretical score of 40 (black
    /// +16), played to `until` empties.
    fn lowest_square_game(until: u32) -> TrainGame {
        let mut game = TrainGame { moves: Vec::new(), theoretical: 40, weight: 1.0 };
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
        assert_eq!((positions[0].board, positions[0].theoretical), (Board::START, 16));
        assert_eq!(positions[1].theoretical, -16);
        assert!(positions.iter().all(|t| t.board.legal_moves() != 0));
        // Understated moves against a count over the move list: the side to move's
        // placed discs minus the other side's between the position and 24 empties (the
        // other way round after it); without a pass in between, 1 exactly when the
        // empties are odd.
        let mut plies = Vec::new(); // (board, black to move) before each move, and at the end
        let mut pos = crate::Position::START;
        for mv in &game.moves {
            plies.push((pos.board, pos.side == crate::Color::Black));
            pos = pos.play_sequence(&[*mv]).unwrap();
        }
        plies.push((pos.board, pos.side == crate::Color::Black));
        let at_24 = plies.iter().position(|p| p.0.empty_count() == 24).unwrap();
        let mut with_pass = 0;
        for t in &positions {
            let i = plies.iter().position(|p| p.0 == t.board).unwrap();
            let span = i.min(at_24)..i.max(at_24);
            let placed_by = |black: bool| {
                span.clone().filter(|&k| game.moves[k] != Move::Pass && plies[k].1 == black).count() as i32
            };
            let (mine, theirs) = (placed_by(plies[i].1), placed_by(!plies[i].1));
            let expected = if i <= at_24 { mine - theirs } else { theirs - mine };
            assert_eq!(t.understated_moves, expected, "{} empties", t.board.empty_count());
            if game.moves[span].contains(&Move::Pass) {
                with_pass += 1;
            } else {
                assert_eq!(t.understated_moves, (t.board.empty_count() % 2) as i32);
            }
        }
        assert!(with_pass > 0, "the test game has a pass between a position and 24 empties");
        // A game cut before 24 empties teaches nothing.
        let mut short = game.clone();
        short.moves.truncate(20);
        assert!(short.positions().is_empty());
    }

    #[test]
    fn positions_are_merged_over_symmetries_and_games() {
        let a = lowest_square_game(20);
        // The same game mirrored (every move through one symmetry), with another score.
        let t = crate::symmetry::Transform::Transpose;
        let b = TrainGame { moves: a.moves.iter().map(|&m| t.apply_move(m)).collect(), theoretical: 30, weight: 0.5 };
        let merged = game_positions(&[a.clone(), b.clone()]);
        assert_eq!(merged.len(), a.positions().len());
        // Black +16 (weight 1) and black −4 (weight 0.5) average to (16 − 2) / 1.5 =
        // +9.3 for black, and the row weighs the games' mean weight.
        let start = merged.iter().find(|p| p.board == Board::START.canonical().0).unwrap();
        assert_eq!((start.theoretical, start.games), (9, 2));
        assert!(merged.iter().all(|p| p.weight == 0.75));
        // With equal weights, the plain mean (+6).
        let even = TrainGame { weight: 1.0, ..b.clone() };
        let start = game_positions(&[a.clone(), even]).into_iter().find(|p| p.board == Board::START.canonical().0);
        assert_eq!(start.map(|p| (p.theoretical, p.weight)), Some((6, 1.0)));
        // The same positions whatever the order of the games, in order of appearance.
        let mut swapped = game_positions(&[b, a.clone()]);
        let mut sorted = merged.clone();
        swapped.sort_unstable_by_key(|p| p.board);
        sorted.sort_unstable_by_key(|p| p.board);
        assert_eq!(swapped, sorted);
        let first: Vec<Board> = a.positions().iter().map(|t| t.board.canonical().0).collect();
        assert_eq!(merged.iter().map(|p| p.board).collect::<Vec<_>>(), first);
    }
}
