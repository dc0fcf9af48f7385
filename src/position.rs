//! [`Position`]: a [`Board`] with the absolute colour of the side to move, its text
//! forms (FFO/Edax 64-character boards, a readable diagram) and checked play of move
//! sequences with errors that name the ply.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use std::fmt;
use std::str::FromStr;

use crate::board::{Board, Color, Squares};
use thiserror::Error;

use crate::square::{parse_move_sequence, BoardTextFault, Move, ParseError, Square};

/// A board plus who is to move, in absolute colours.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Position {
    /// The board relative to the side to move.
    pub board: Board,
    /// The colour of `board.player`.
    pub side: Color,
}

impl Default for Position {
    fn default() -> Self {
        Position::START
    }
}

impl Position {
    /// The start position, black to move.
    pub const START: Position = Position { board: Board::START, side: Color::Black };

    /// A position from absolute disc sets.
    pub fn from_colors(black: u64, white: u64, side: Color) -> Option<Position> {
        let board = match side {
            Color::Black => Board::new(black, white)?,
            Color::White => Board::new(white, black)?,
        };
        Some(Position { board, side })
    }

    /// Black's discs.
    pub fn black(&self) -> u64 {
        match self.side {
            Color::Black => self.board.player,
            Color::White => self.board.opponent,
        }
    }

    /// White's discs.
    pub fn white(&self) -> u64 {
        match self.side {
            Color::Black => self.board.opponent,
            Color::White => self.board.player,
        }
    }

    /// The position after a pass.
    pub fn pass(&self) -> Position {
        Position { board: self.board.pass(), side: !self.side }
    }

    /// Plays `mv`, checking it.
    pub fn try_play(&self, mv: Move) -> Result<Position, MoveError> {
        match mv {
            Move::Pass => {
                if self.board.legal_moves() != 0 {
                    Err(MoveError::PassWithMoves { color: self.side })
                } else if self.board.opponent_moves() == 0 {
                    Err(MoveError::GameOver { mv })
                } else {
                    Ok(self.pass())
                }
            }
            Move::Place(sq) => match self.board.play(sq) {
                Some(board) => Ok(Position { board, side: !self.side }),
                None if self.board.is_game_over() => Err(MoveError::GameOver { mv }),
                None => Err(MoveError::Illegal { mv, color: self.side }),
            },
        }
    }

    /// The position in which `mv` is played when move lists leave passes out (WTHOR
    /// transcripts, NBoard GUIs, openings files): after the side to move's pass when it
    /// has no legal move but its opponent has and `mv` is not a pass; else `self`. The
    /// one rule by which every reader infers a pass.
    pub fn with_inferred_pass(&self, mv: Move) -> Position {
        if mv != Move::Pass && self.board.must_pass() {
            self.pass()
        } else {
            *self
        }
    }

    /// The position in which `color` moves next: `self` when it is to move, the
    /// position after the forced pass of the side to move otherwise (protocols that name
    /// the colour of each move, like GTP, leave passes out); `None` when `color` is not
    /// to move and the side to move has a move (or the game is over).
    pub(crate) fn for_side(&self, color: Color) -> Option<Position> {
        if color == self.side {
            Some(*self)
        } else {
            self.board.must_pass().then(|| self.pass())
        }
    }

    /// Plays a sequence from `self`. Passes may be written explicitly or left out
    /// ([`Position::with_inferred_pass`]).
    pub fn play_sequence(&self, moves: &[Move]) -> Result<Position, PlayError> {
        let mut pos = *self;
        for (i, &mv) in moves.iter().enumerate() {
            pos = pos.with_inferred_pass(mv).try_play(mv).map_err(|e| e.at(i + 1))?;
        }
        Ok(pos)
    }

    /// The position reached from the start by a move sequence such as `f5d6c3`.
    pub fn from_moves(text: &str) -> Result<Position, PositionError> {
        let moves = parse_move_sequence(text)?;
        Ok(Position::START.play_sequence(&moves)?)
    }

    /// Parses FFO/Edax board text: 64 squares A1, B1, … H8 then the side to move, in
    /// the board-text alphabet (`parse_squares`, `parse_side`). Anything after the
    /// side (e.g. `;` and scored moves in `.obf` files) is ignored.
    pub fn parse_board_text(text: &str) -> Result<Position, ParseError> {
        let (black, white, rest) = parse_squares(text)?;
        let side_word = rest.split(|c: char| c.is_whitespace() || c == ';').find(|w| !w.is_empty());
        let side = match side_word {
            Some(w) => parse_side(w)?,
            None => return Err(ParseError::Board(BoardTextFault::MissingSide)),
        };
        Ok(Position::from_colors(black, white, side).expect("a square holds one colour"))
    }

    /// The 64 squares A1 … H8 as characters, with the symbols given (board text, GGF).
    pub(crate) fn squares_text(&self, black_char: char, white_char: char, empty_char: char) -> String {
        let (black, white) = (self.black(), self.white());
        Square::ALL
            .iter()
            .map(|sq| {
                if black & sq.bit() != 0 {
                    black_char
                } else if white & sq.bit() != 0 {
                    white_char
                } else {
                    empty_char
                }
            })
            .collect()
    }

    /// FFO/Edax board text: 64 squares then a space and `X` or `O`.
    pub fn to_board_text(&self) -> String {
        let mut s = self.squares_text('X', 'O', '-');
        s.push(' ');
        s.push(self.side.symbol());
        s
    }

    /// A readable diagram: `X` black, `O` white, `.` empty, `*` legal moves.
    pub fn diagram(&self) -> String {
        let (black, white) = (self.black(), self.white());
        let legal = self.board.legal_moves();
        let mut s = String::from("  a b c d e f g h\n");
        for row in 0..8u8 {
            s.push((b'1' + row) as char);
            for col in 0..8u8 {
                let bit = 1u64 << (row * 8 + col);
                s.push(' ');
                s.push(if black & bit != 0 {
                    'X'
                } else if white & bit != 0 {
                    'O'
                } else if legal & bit != 0 {
                    '*'
                } else {
                    '.'
                });
            }
            s.push(' ');
            s.push((b'1' + row) as char);
            s.push('\n');
        }
        s.push_str("  a b c d e f g h\n");
        s
    }

    /// Legal moves as squares, lowest index first.
    pub fn legal_squares(&self) -> Vec<Square> {
        Squares(self.board.legal_moves()).collect()
    }
}

impl FromStr for Position {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Position, ParseError> {
        Position::parse_board_text(s)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_board_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_text_errors_count_characters() {
        let text = format!("-é{}", "-".repeat(62));
        let err = Position::parse_board_text(&text).unwrap_err().to_string();
        assert!(err.contains("character 2 (`é`) at square b1"), "{err}");
        // An ideographic space (3 bytes, whitespace, skipped) before the fault: the `?`
        // is the 4th character but the 6th byte.
        let text = format!("\u{3000}-X?{}", "-".repeat(61));
        let err = Position::parse_board_text(&text).unwrap_err().to_string();
        assert!(err.contains("character 4 (`?`) at square c1"), "{err}");
    }

    #[test]
    fn board_text_round_trips() {
        let pos = Position::from_moves("f5d6c3d3c4").unwrap();
        let text = pos.to_board_text();
        assert_eq!(text.len(), 66);
        assert_eq!(Position::parse_board_text(&text).unwrap(), pos);
        assert_eq!(
            Position::START.to_board_text(),
            format!("{}OX{}XO{} X", "-".repeat(27), "-".repeat(6), "-".repeat(27))
        );
    }

    #[test]
    fn obf_lines_parse() {
        let line = "--XXXXX--OOOXX-O-OOOXXOX-OXOXOXXOXXXOXXX--XOXOXX-XXXOOO--OOOOO-- X; G8:+18; H1:+12;";
        let pos = Position::parse_board_text(line).unwrap();
        assert_eq!(pos.side, Color::Black);
        assert_eq!(pos.board.empty_count(), 14);
    }

    #[test]
    fn illegal_move_names_ply_move_and_colour() {
        let err = Position::from_moves("f5d6c3d3c4f4c5b3c2a1").unwrap_err();
        assert_eq!(err.to_string(), "ply 10: a1 is not legal for white");
        let err = Position::from_moves("f5 f5").unwrap_err();
        assert_eq!(err.to_string(), "ply 2: f5 is not legal for white");
        let err = Position::from_moves("f5 pass").unwrap_err();
        assert_eq!(err.to_string(), "ply 2: white cannot pass, it has a legal move");
        let err = Position::from_moves("f5 q7").unwrap_err();
        assert_eq!(err.to_string(), "move 2 (character 4) is not a square or a pass");
    }

    #[test]
    fn malformed_board_text_is_an_error() {
        assert!(Position::parse_board_text("XO-").unwrap_err().to_string().contains("only 3 squares"));
        let bad = format!("{}Z{} X", "-".repeat(10), "-".repeat(53));
        assert!(Position::parse_board_text(&bad).unwrap_err().to_string().contains("square c2"));
        let no_side = "-".repeat(64);
        assert!(Position::parse_board_text(&no_side).unwrap_err().to_string().contains("side to move"));
    }

    #[test]
    fn diagram_marks_legal_moves() {
        let d = Position::START.diagram();
        assert_eq!(d.matches('*').count(), 4);
        assert!(d.contains("4 . . * O X . . . 4"), "{d}");
        assert!(d.contains("5 . . . X O * . . 5"), "{d}");
    }
}

/// The colour a board-text character stands for: `Some(Some(colour))` for a disc,
/// `Some(None)` for an empty square, `None` for a character outside the alphabet.
///
/// The one board-text alphabet, for every reader (FFO/Edax board text, `.obf`
/// problems, GGF `BO`, Edax book text, the CLI's `--board`): black `X x * B b`, white
/// `O o 0 W w`, empty `- . _`.
pub(crate) fn square_char(c: char) -> Option<Option<Color>> {
    match c {
        'X' | 'x' | '*' | 'B' | 'b' => Some(Some(Color::Black)),
        'O' | 'o' | '0' | 'W' | 'w' => Some(Some(Color::White)),
        '-' | '.' | '_' => Some(None),
        _ => None,
    }
}

/// The side to move in board text: a disc character of the alphabet ([`square_char`])
/// or `black` / `white`, in any case.
pub(crate) fn parse_side(word: &str) -> Result<Color, ParseError> {
    let mut chars = word.chars();
    let colour = match (chars.next(), chars.next()) {
        (Some(c), None) => square_char(c).flatten(),
        _ if word.eq_ignore_ascii_case("black") => Some(Color::Black),
        _ if word.eq_ignore_ascii_case("white") => Some(Color::White),
        _ => None,
    };
    colour.ok_or(ParseError::Board(BoardTextFault::Side))
}

/// The 64 squares A1 … H8 at the start of `text` in the board-text alphabet
/// ([`square_char`]; whitespace between them ignored): black's and white's discs, and
/// the text after the 64th square. Errors name the character (counted in
/// characters, not bytes) and the square.
pub(crate) fn parse_squares(text: &str) -> Result<(u64, u64, &str), ParseError> {
    let (mut black, mut white, mut n) = (0u64, 0u64, 0usize);
    for (at, (byte, c)) in text.char_indices().enumerate() {
        if c.is_whitespace() {
            continue;
        }
        let sq = Square::ALL[n];
        match square_char(c) {
            Some(Some(Color::Black)) => black |= sq.bit(),
            Some(Some(Color::White)) => white |= sq.bit(),
            Some(None) => {}
            None => return Err(ParseError::Board(BoardTextFault::Character { column: at + 1, found: c, square: sq })),
        }
        n += 1;
        if n == 64 {
            return Ok((black, white, &text[byte + c.len_utf8()..]));
        }
    }
    Err(ParseError::Board(BoardTextFault::Squares { found: n }))
}

/// A move that cannot be played in the position it was given for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MoveError {
    /// The square is occupied or flips nothing.
    #[error("{mv} is not legal for {color}")]
    Illegal {
        /// The move attempted.
        mv: Move,
        /// The side that tried it.
        color: Color,
    },
    /// A pass while the side to move has a legal move.
    #[error("{color} cannot pass, it has a legal move")]
    PassWithMoves {
        /// The side that tried to pass.
        color: Color,
    },
    /// A move after the end of the game.
    #[error("the game is over, {mv} cannot be played")]
    GameOver {
        /// The move attempted.
        mv: Move,
    },
}

impl MoveError {
    /// This error as the move at `ply` (1-based) of a sequence.
    pub fn at(self, ply: usize) -> PlayError {
        PlayError { ply, cause: self }
    }
}

/// A move of a sequence that cannot be played: which, and why. The one place a ply is
/// written into a message ("ply 9: b4 is not legal for black"), so that errors wrapping
/// it name the ply once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("ply {ply}: {cause}")]
#[non_exhaustive]
pub struct PlayError {
    /// 1-based ply in the sequence being played.
    pub ply: usize,
    /// Why the move cannot be played (in the message, so not also its source).
    pub cause: MoveError,
}

/// Parsing then playing: the errors of `Position::from_moves`-style entry points.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PositionError {
    /// Malformed text.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A move that is not legal.
    #[error(transparent)]
    Play(#[from] PlayError),
}
