//! Squares, moves and their notation.
//!
//! Squares are numbered in FFO order: A1 = 0, B1 = 1, … H1 = 7, A2 = 8, … H8 = 63
//! (bit `i` of a bitboard is square `i`). Columns are letters `a`..`h`, rows digits
//! `1`..`8`. A [`Move`] is a square or a pass. [`ParseError`] is the one error of
//! every text notation (squares, moves, move sequences, board text).
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// One of the 64 squares, A1 = 0 … H8 = 63.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Square(u8);

impl Square {
    /// All squares in index order.
    pub const ALL: [Square; 64] = {
        let mut all = [Square(0); 64];
        let mut i = 0;
        while i < 64 {
            #[expect(clippy::cast_possible_truncation, reason = "i < 64 (a const context has no try_from)")]
            let index = i as u8;
            all[i] = Square(index);
            i += 1;
        }
        all
    };

    /// The square with index `index` (0..64).
    ///
    /// # Panics
    /// If `index >= 64`; use [`Square::try_new`] for unchecked input.
    #[track_caller]
    pub const fn new(index: u8) -> Square {
        assert!(index < 64, "square index out of range");
        Square(index)
    }

    /// The square with index `index`, or `None` when it is not below 64.
    pub const fn try_new(index: u8) -> Option<Square> {
        if index < 64 {
            Some(Square(index))
        } else {
            None
        }
    }

    /// The square at column `col` (0 = a) and row `row` (0 = 1), both below 8.
    pub const fn from_coords(col: u8, row: u8) -> Option<Square> {
        if col < 8 && row < 8 {
            Some(Square(row * 8 + col))
        } else {
            None
        }
    }

    /// Index 0..64.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Index 0..64 as a byte (how files store a square).
    #[inline]
    pub(crate) const fn byte(self) -> u8 {
        self.0
    }

    /// Column 0..8 (0 = a).
    #[inline]
    pub const fn col(self) -> u8 {
        self.0 & 7
    }

    /// Row 0..8 (0 = row 1).
    #[inline]
    pub const fn row(self) -> u8 {
        self.0 >> 3
    }

    /// The single-bit bitboard of this square.
    #[inline]
    pub const fn bit(self) -> u64 {
        1u64 << self.0
    }

    /// The lowest square set in a non-empty bitboard.
    #[inline]
    pub(crate) fn lowest(bits: u64) -> Option<Square> {
        if bits == 0 {
            None
        } else {
            #[expect(clippy::cast_possible_truncation, reason = "a non-zero u64 has fewer than 64 trailing zeros")]
            let index = bits.trailing_zeros() as u8;
            Some(Square(index))
        }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, so that widths and alignment (`{:<5}`) apply as they do to a string.
        let name = [b'a' + self.col(), b'1' + self.row()];
        f.pad(std::str::from_utf8(&name).expect("a1..h8 is ASCII"))
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl serde::Serialize for Square {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl serde::Serialize for Move {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl FromStr for Square {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Square, ParseError> {
        let b = s.as_bytes();
        if b.len() == 2 {
            let col = b[0].to_ascii_lowercase().wrapping_sub(b'a');
            let row = b[1].wrapping_sub(b'1');
            if let Some(sq) = Square::from_coords(col, row) {
                return Ok(sq);
            }
        }
        Err(ParseError::Square)
    }
}

/// A move: a disc placed on a square, or a pass.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Move {
    /// Place a disc on the square.
    Place(Square),
    /// No legal move: the turn goes to the opponent.
    Pass,
}

impl Move {
    /// The square, or `None` for a pass.
    pub fn square(self) -> Option<Square> {
        match self {
            Move::Place(sq) => Some(sq),
            Move::Pass => None,
        }
    }
}

impl From<Square> for Move {
    fn from(sq: Square) -> Move {
        Move::Place(sq)
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Move::Place(sq) => sq.fmt(f),
            Move::Pass => f.pad("pass"),
        }
    }
}

impl FromStr for Move {
    type Err = ParseError;

    /// `a1`..`h8` in either case, or `pass`, `ps`, `pa` (any case), or `--`.
    fn from_str(s: &str) -> Result<Move, ParseError> {
        let lower = s.to_ascii_lowercase();
        match lower.as_str() {
            "pass" | "ps" | "pa" | "--" => Ok(Move::Pass),
            _ => s.parse::<Square>().map(Move::Place).map_err(|_| ParseError::Move),
        }
    }
}

/// Splits a move sequence written `f5d6c3`, `f5 d6 c3`, `F5-D6-C3` or `f5,d6` into moves.
///
/// Each move is two characters, or a pass word (`pass`, `ps`, `pa`); separators are
/// whitespace, commas, dashes between moves and dots. The error names the position
/// (1-based token index) of the first token that is not a move.
pub fn parse_move_sequence(text: &str) -> Result<Vec<Move>, ParseError> {
    let mut moves = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || c == ',' || c == '.' || c == '-' && !matches!(chars.get(i + 1), Some('-')) {
            i += 1;
            continue;
        }
        let rest: String = chars[i..].iter().take(4).collect::<String>().to_ascii_lowercase();
        if rest.starts_with("pass") {
            moves.push(Move::Pass);
            i += 4;
            continue;
        }
        let token: String = chars[i..chars.len().min(i + 2)].iter().collect();
        match token.parse::<Move>() {
            Ok(mv) => {
                moves.push(mv);
                i += 2;
            }
            Err(_) => return Err(ParseError::Sequence { index: moves.len() + 1, column: i + 1 }),
        }
    }
    Ok(moves)
}

/// Serializes moves as one string of [`format_moves`] (`serialize_with` for JSON that
/// shows a line as the command line writes it).
pub(crate) fn serialize_moves<S: serde::Serializer>(moves: &[Move], s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_moves(moves))
}

/// Writes moves as a compact transcript, e.g. `f5d6c3` (a pass is written `ps`).
pub fn format_moves(moves: &[Move]) -> String {
    let mut s = String::with_capacity(moves.len() * 2);
    for mv in moves {
        match mv {
            Move::Place(sq) => s.push_str(&sq.to_string()),
            Move::Pass => s.push_str("ps"),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation_round_trips() {
        for sq in Square::ALL {
            assert_eq!(sq.to_string().parse::<Square>().unwrap(), sq);
            assert_eq!(sq.to_string().to_uppercase().parse::<Square>().unwrap(), sq);
        }
        assert_eq!("a1".parse::<Square>().unwrap().index(), 0);
        assert_eq!("h8".parse::<Square>().unwrap().index(), 63);
        assert_eq!("F5".parse::<Square>().unwrap().index(), 4 * 8 + 5);
        // Widths apply as to strings (the command line's tables rely on it).
        let f5 = Move::Place("f5".parse().unwrap());
        assert_eq!(format!("{f5:<4}|{:>5}|{f5}", Move::Pass), "f5  | pass|f5");
    }

    #[test]
    fn bad_squares_are_errors() {
        for bad in ["", "a", "i1", "a9", "a0", "11", "f5x", "é1"] {
            assert!(bad.parse::<Square>().is_err(), "{bad}");
        }
    }

    #[test]
    fn sequences_parse_in_all_spellings() {
        let want: Vec<Move> = ["f5", "d6", "c3"].iter().map(|s| s.parse().unwrap()).collect();
        for text in ["f5d6c3", "f5 d6 c3", "F5-D6-C3", "f5,d6,c3", " F5d6 C3 "] {
            assert_eq!(parse_move_sequence(text).unwrap(), want, "{text}");
        }
        let with_pass = parse_move_sequence("f5 pass d6 PS c3 pa --").unwrap();
        assert_eq!(with_pass.iter().filter(|m| **m == Move::Pass).count(), 4);
    }

    #[test]
    fn bad_sequence_names_the_token() {
        let err = parse_move_sequence("f5d6z9c3").unwrap_err();
        assert_eq!(err, ParseError::Sequence { index: 3, column: 5 });
        assert_eq!(err.to_string(), "move 3 (character 5) is not a square or a pass");
    }
}

/// Text that is not a square, a move, a move sequence or a board.
///
/// Like `std`'s parse errors, it says what is wrong and where, not the text itself:
/// the caller holds the text (clap, for one, quotes the value it was given).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ParseError {
    /// Not `a1`..`h8`.
    #[error("not a square (expected a1..h8)")]
    Square,
    /// Not a square or a pass word.
    #[error("not a move (expected a1..h8 or pass)")]
    Move,
    /// A token of a move sequence is not a move.
    #[error("move {index} (character {column}) is not a square or a pass")]
    Sequence {
        /// 1-based index of the move in the sequence.
        index: usize,
        /// 1-based character where it starts.
        column: usize,
    },
    /// A board string is malformed.
    #[error("board text: {0}")]
    Board(BoardTextFault),
}

/// What is wrong with board text (64 squares, then the side to move).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BoardTextFault {
    /// Nothing follows the 64 squares.
    #[error("the side to move (X or O) is missing after the 64 squares")]
    MissingSide,
    /// The word after the squares is not a side.
    #[error("the side to move is not X, O, black or white")]
    Side,
    /// A character that is not a disc or an empty square.
    #[error("character {column} (`{found}`) at square {square} is not X, O or -")]
    Character {
        /// 1-based character index in the text.
        column: usize,
        /// The character.
        found: char,
        /// The square it stands for.
        square: Square,
    },
    /// The text ends before the 64th square.
    #[error("only {found} squares, expected 64")]
    Squares {
        /// Squares read.
        found: usize,
    },
}
