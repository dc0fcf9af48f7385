//! The FFO's WTHOR archives: the byte formats ([`ThorFile`], its [`Header`] and
//! [`RawGame`] records), replay with pass inference ([`replay()`]), and a loaded,
//! indexed, searchable database ([`ThorDatabase`]).
//!
//! Every problem found in a file is an [`Anomaly`] that names the file, the record, the
//! byte offset and the ply, so a damaged archive is reported precisely and the rest of
//! the data still loads.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

pub(crate) mod database;
pub(crate) mod export;
pub(crate) mod format;
pub(crate) mod ggf;
pub(crate) mod replay;
mod source;
pub(crate) mod text;

use std::fmt;

use serde::Serialize;
use thiserror::Error;

use crate::board::Color;
use crate::square::Square;

pub use database::{
    FileSummary, GameFilter, GameId, LoadOptions, MoveStats, PositionStats, Reach, SortKey, ThorDatabase, ThorGame,
};
pub use export::{Dropped, GameText, WthorExport};
pub use format::{FileKind, GameRecord, Header, RawGame, Records, ThorFile};
pub use ggf::GgfError;
pub use replay::{encode_square, replay, GameFault, Outcome, Replay};
pub use source::{bundled_sources, expand_paths, Compression, Source, SourceFormat};
pub use text::{SkipReason, TextFormat};

/// What is wrong with a file or a game record.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnomalyKind {
    /// The file cannot be read.
    #[error("cannot read: {message}")]
    Io {
        /// The system's message.
        message: String,
    },
    /// Shorter than the 16-byte header.
    #[error("{len} bytes, shorter than the 16-byte header")]
    TooShort {
        /// File length.
        len: usize,
    },
    /// A solitaire file (P2 = 1), whose records are not games.
    #[error("a solitaire file (P2 = 1): its records are puzzles, not games; not supported")]
    Solitaire,
    /// P1 is not 0, 8 or 10.
    #[error("board size P1 = {p1} is not a WTHOR board size (0 or 8 for 8x8, 10 for 10x10)")]
    BoardSize {
        /// The header's P1.
        p1: u8,
    },
    /// The record count in the header disagrees with the file size.
    #[error(
        "header says {declared} records of {record_len} bytes ({expected} bytes in all), the file has {actual} bytes"
    )]
    SizeMismatch {
        /// N1 or N2.
        declared: usize,
        /// Bytes per record.
        record_len: usize,
        /// Size the header implies.
        expected: usize,
        /// Actual size.
        actual: usize,
    },
    /// A move byte that is not `10 * row + col` with both in 1..=8.
    #[error("move byte {byte} is not a square")]
    NotASquare {
        /// The byte.
        byte: u8,
    },
    /// The move list has a zero followed by more moves.
    #[error("a zero ends the move list but move byte {next} follows it")]
    ZeroInMiddle {
        /// The first non-zero byte after the zero.
        next: u8,
    },
    /// A move on an occupied square.
    #[error("{square} is already occupied")]
    Occupied {
        /// The square.
        square: Square,
    },
    /// A move that flips nothing.
    #[error("{square} is not legal for {color}")]
    Illegal {
        /// The square.
        square: Square,
        /// The side that had to move.
        color: Color,
    },
    /// Moves after both sides ran out of moves.
    #[error("{square} is played after the game ended")]
    AfterGameOver {
        /// The square.
        square: Square,
    },
    /// A finished game whose stored score is not the replayed one.
    #[error("stored black score {stored} but the final position gives black {replayed}")]
    ScoreMismatch {
        /// Stored real score.
        stored: u8,
        /// Black's discs with empties to the winner after replay.
        replayed: u8,
    },
    /// A score above 64.
    #[error("{field} score {value} is above 64")]
    ScoreOutOfRange {
        /// `real` or `theoretical`.
        field: &'static str,
        /// The value.
        value: u8,
    },
    /// A player id beyond `WTHOR.JOU`.
    #[error("{side} player id {id} is beyond the {count} players of the player file")]
    UnknownPlayer {
        /// `black` or `white`.
        side: &'static str,
        /// The id.
        id: u16,
        /// Players known.
        count: usize,
    },
    /// Text that does not parse (GGF, a transcript, JSON).
    #[error("{message}")]
    Syntax {
        /// What is wrong.
        message: String,
    },
    /// A move given for the colour not to move, when the side to move has a move.
    #[error("a move for {found} where {expected} is to move")]
    WrongSide {
        /// The side to move.
        expected: Color,
        /// The colour the source gives.
        found: Color,
    },
    /// A pass written where the side to move has a move.
    #[error("a pass for {color}, who has a legal move")]
    PassWithMoves {
        /// The side to move.
        color: Color,
    },
    /// A file none of the readers recognises.
    #[error("not a game archive thorbook reads (WTHOR, GGF, transcripts, JSON lines; plain, .gz or .bz2)")]
    UnknownFormat,
    /// A tournament id beyond `WTHOR.TRN`.
    #[error("tournament id {id} is beyond the {count} tournaments of the tournament file")]
    UnknownTournament {
        /// The id.
        id: u16,
        /// Tournaments known.
        count: usize,
    },
}

/// A problem found in a file: where (file, record, byte, ply) and what.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize)]
pub struct Anomaly {
    /// The file's name as given.
    pub file: String,
    /// 0-based record index, for record-level problems of WTHOR files.
    pub record: Option<usize>,
    /// 1-based line, for text files (where the game starts).
    pub line: Option<u32>,
    /// Byte offset in the file (in the decompressed text of a compressed file).
    pub offset: Option<usize>,
    /// 1-based ply: the index in the stored move list (WTHOR stores no passes; text
    /// sources count the passes they write).
    pub ply: Option<usize>,
    /// What is wrong.
    #[serde(flatten)]
    pub kind: AnomalyKind,
}

impl Anomaly {
    /// A problem of the whole file.
    pub(crate) fn file(name: &str, kind: AnomalyKind) -> Anomaly {
        Anomaly { file: name.to_string(), record: None, line: None, offset: None, ply: None, kind }
    }

    /// A problem on line `line` of a text file, at byte `offset`, at `ply` if given.
    pub(crate) fn at_line(name: &str, line: u32, offset: usize, ply: Option<usize>, kind: AnomalyKind) -> Anomaly {
        Anomaly { file: name.to_string(), record: None, line: Some(line), offset: Some(offset), ply, kind }
    }

    /// A problem of game record `record` of a `.wtb` file, at `ply` (1-based) if given.
    pub(crate) fn game(name: &str, record: usize, ply: Option<usize>, kind: AnomalyKind) -> Anomaly {
        let base = format::HEADER_LEN + record * format::GAME_RECORD_LEN;
        let offset = match ply {
            Some(p) => base + format::MOVES_OFFSET + p - 1,
            None => base,
        };
        Anomaly { file: name.to_string(), record: Some(record), line: None, offset: Some(offset), ply, kind }
    }
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(r) = self.record {
            write!(f, ": record {r}")?;
        }
        if let Some(l) = self.line {
            write!(f, ": line {l}")?;
        }
        if let Some(o) = self.offset {
            write!(f, " (byte {o})")?;
        }
        if let Some(p) = self.ply {
            write!(f, ", ply {p}")?;
        }
        write!(f, ": {}", self.kind)
    }
}

/// Errors that stop loading a database.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ThorError {
    /// A file or game is damaged and `--strict` was asked for, or a file cannot be
    /// read at all.
    #[error("{0}")]
    Anomaly(#[from] Anomaly),
    /// A path that does not exist or holds no WTHOR files.
    #[error("{path}: {message}")]
    Path {
        /// The path given.
        path: String,
        /// What is wrong with it.
        message: String,
    },
}
