//! A game in progress: the start position, the moves played (passes inferred where a
//! side had to pass), undo, and the final result. The protocols, terminal play and the
//! match runner all keep their games here.

use crate::board::Color;
use crate::position::PlayError;
use crate::position::Position;
use crate::square::Move;

/// One turn: the move played, and whether a pass of the other side was inferred
/// before it (the side named had no legal move, so the turn came back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Turn {
    mv: Move,
    inferred_pass: bool,
    before: Position,
}

/// A game from a start position, with checked moves and undo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    start: Position,
    turns: Vec<Turn>,
    current: Position,
}

/// Why a move cannot be added to a game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GameError {
    /// Not legal in the current position.
    #[error(transparent)]
    Play(#[from] PlayError),
    /// The colour named is not the one to move, and the side to move has a move.
    #[error("it is {to_move}'s turn, not {named}'s")]
    NotYourTurn {
        /// The side to move.
        to_move: Color,
        /// The side named by the command.
        named: Color,
    },
}

impl Default for Game {
    fn default() -> Game {
        Game::new(Position::START)
    }
}

impl Game {
    /// A game from `start`.
    pub fn new(start: Position) -> Game {
        Game { start, turns: Vec::new(), current: start }
    }

    /// The start position.
    pub fn start(&self) -> Position {
        self.start
    }

    /// The current position.
    pub fn position(&self) -> Position {
        self.current
    }

    /// The moves played, passes included (inferred ones too), in order.
    pub fn moves(&self) -> Vec<Move> {
        let mut out = Vec::with_capacity(self.turns.len());
        for t in &self.turns {
            if t.inferred_pass {
                out.push(Move::Pass);
            }
            out.push(t.mv);
        }
        out
    }

    /// The positions before each move of [`Game::moves`], then the current one.
    pub fn positions(&self) -> Vec<Position> {
        let mut out = Vec::with_capacity(self.turns.len() + 1);
        for t in &self.turns {
            out.push(t.before);
            if t.inferred_pass {
                out.push(t.before.pass());
            }
        }
        out.push(self.current);
        out
    }

    /// Number of turns played (inferred passes are part of the turn after them).
    pub fn len(&self) -> usize {
        self.turns.len()
    }

    /// True before the first move.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// True when neither side can move.
    pub fn is_over(&self) -> bool {
        self.current.board.is_game_over()
    }

    /// Plays `mv` for the side to move (a pass only when it has no legal move).
    pub fn play(&mut self, mv: Move) -> Result<(), GameError> {
        let next = self.current.try_play(mv).map_err(|e| e.at(self.ply() + 1))?;
        self.turns.push(Turn { mv, inferred_pass: false, before: self.current });
        self.current = next;
        Ok(())
    }

    /// Plays `mv`, first inferring the pass of the side to move when it has no legal
    /// move and `mv` is not a pass (move lists that leave passes out: WTHOR, NBoard
    /// GUIs, openings files).
    pub(crate) fn play_inferring_pass(&mut self, mv: Move) -> Result<(), GameError> {
        self.play_for(self.current.with_inferred_pass(mv).side, mv)
    }

    /// Plays `mv` for `color`. When `color` is not to move but the side to move has no
    /// legal move, its pass is inferred first (GTP engines and WTHOR transcripts leave
    /// passes out). A pass for a side that must pass is accepted too.
    pub fn play_for(&mut self, color: Color, mv: Move) -> Result<(), GameError> {
        let pos = self.current;
        let mover = self.position_for(color)?;
        let inferred_pass = mover != pos;
        let next = mover.try_play(mv).map_err(|e| e.at(self.ply() + 1 + usize::from(inferred_pass)))?;
        self.turns.push(Turn { mv, inferred_pass, before: pos });
        self.current = next;
        Ok(())
    }

    /// The position in which `color` moves next: the current one, or the one after the
    /// pass of the side to move when that side has no legal move.
    pub(crate) fn position_for(&self, color: Color) -> Result<Position, GameError> {
        let pos = self.current;
        pos.for_side(color).ok_or(GameError::NotYourTurn { to_move: pos.side, named: color })
    }

    /// Takes back the last turn (with the pass inferred before it); `None` at the start.
    pub fn undo(&mut self) -> Option<Move> {
        let t = self.turns.pop()?;
        self.current = t.before;
        Some(t.mv)
    }

    /// Plies played, passes counted.
    pub fn ply(&self) -> usize {
        self.turns.iter().map(|t| 1 + t.inferred_pass as usize).sum()
    }

    /// Black's disc count minus white's, empty squares to the winner (the WTHOR and
    /// federation rule); meaningful as a result once [`Game::is_over`].
    pub fn black_score(&self) -> i32 {
        let s = self.current.board.final_score();
        match self.current.side {
            Color::Black => s,
            Color::White => -s,
        }
    }

    /// The result as GTP writes it: `B+N`, `W+N` or `0`.
    pub fn result_text(&self) -> String {
        match self.black_score() {
            0 => "0".to_string(),
            s if s > 0 => format!("B+{s}"),
            s => format!("W+{}", -s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn play_undo_and_result() {
        let mut g = Game::default();
        g.play("f5".parse().unwrap()).unwrap();
        assert_eq!(g.position().side, Color::White);
        assert!(matches!(g.play_for(Color::Black, "d6".parse().unwrap()), Err(GameError::NotYourTurn { .. })));
        assert!(g.play("f5".parse().unwrap()).is_err());
        assert_eq!(g.undo(), Some("f5".parse().unwrap()));
        assert_eq!(g.position(), Position::START);
        assert_eq!(g.undo(), None);

        let mut g = Game::new(Position::parse_board_text(&format!("XO{} X", "-".repeat(62))).unwrap());
        g.play("c1".parse().unwrap()).unwrap();
        assert!(g.is_over());
        assert_eq!(g.black_score(), 64);
        assert_eq!(g.result_text(), "B+64");
    }

    #[test]
    fn passes_are_inferred_recorded_and_undone_with_their_move() {
        let board = crate::testutil::random_games(7, 200)
            .into_iter()
            .find(|b| b.must_pass() && !b.is_game_over())
            .expect("random games reach positions where the side to move must pass");
        let start = Position { board, side: Color::Black };
        let mv = Move::Place(crate::square::Square::lowest(board.pass().legal_moves()).unwrap());
        let mut g = Game::new(start);
        assert_eq!(g.position_for(Color::White).unwrap(), start.pass());
        assert!(matches!(g.play_for(Color::Black, mv), Err(GameError::Play(_))), "black has no move");
        g.play_for(Color::White, mv).unwrap();
        assert_eq!(g.moves(), vec![Move::Pass, mv]);
        assert_eq!(g.positions(), vec![start, start.pass(), start.pass().try_play(mv).unwrap()]);
        assert_eq!(g.ply(), 2);
        let mut h = Game::new(start);
        h.play_inferring_pass(mv).unwrap();
        assert_eq!(h, g);
        assert_eq!(g.undo(), Some(mv));
        assert_eq!((g.position(), g.ply()), (start, 0));
    }
}
