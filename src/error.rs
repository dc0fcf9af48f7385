//! Errors of the board layer: notation that does not parse, moves that are not legal.
//!
//! Each names what was wrong and where (token, character or ply), so the CLI can print it
//! as is. Errors of other layers (Thor files, books) live in their own modules.

use thiserror::Error;

use crate::board::Color;
use crate::square::Move;

/// Text that is not a square, a move, a move sequence or a board.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseError {
    /// Not `a1`..`h8`.
    #[error("`{0}` is not a square (expected a1..h8)")]
    Square(String),
    /// Not a square or a pass word.
    #[error("`{0}` is not a move (expected a1..h8 or pass)")]
    Move(String),
    /// A token of a move sequence is not a move.
    #[error("move {index}: `{token}` is not a square or a pass")]
    Sequence {
        /// 1-based index of the token in the sequence.
        index: usize,
        /// The offending text.
        token: String,
    },
    /// A board string is malformed.
    #[error("board text: {0}")]
    Board(String),
}

/// A move that cannot be played in the position it was given for.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlayError {
    /// The square is occupied or flips nothing.
    #[error("ply {ply}: {mv} is not legal for {color}")]
    Illegal {
        /// 1-based ply in the sequence being played.
        ply: usize,
        /// The move attempted.
        mv: Move,
        /// The side that tried it.
        color: Color,
    },
    /// A pass while the side to move has a legal move.
    #[error("ply {ply}: {color} cannot pass, it has a legal move")]
    PassWithMoves {
        /// 1-based ply.
        ply: usize,
        /// The side that tried to pass.
        color: Color,
    },
    /// A move after the end of the game.
    #[error("ply {ply}: the game is over, {mv} cannot be played")]
    GameOver {
        /// 1-based ply.
        ply: usize,
        /// The move attempted.
        mv: Move,
    },
}

/// Parsing then playing: the errors of `Position::from_moves`-style entry points.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PositionError {
    /// Malformed text.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A move that is not legal.
    #[error(transparent)]
    Play(#[from] PlayError),
}
