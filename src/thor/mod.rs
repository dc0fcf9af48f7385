//! The FFO's WTHOR archives and the other game sources: the byte formats (the
//! crate-private record layer: files, headers, records), replay with pass inference,
//! and a loaded, indexed, searchable database ([`ThorDatabase`]) whose games
//! ([`ThorGame`]) are read through accessors. WTHOR files are written through
//! [`ThorDatabase::to_wthor`], as bytes.
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
#[cfg(test)]
mod tests;
pub(crate) mod text;

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;
use thiserror::Error;

use crate::board::Color;
use crate::square::{ParseError, Square};

#[cfg(any(feature = "explorer", test))]
pub(crate) use database::parse_years;
pub use database::{
    FileSummary, GameFilter, GameId, LoadOptions, MoveStats, PositionStats, Reach, SortKey, SortKeyError, ThorDatabase,
    ThorGame,
};
pub use export::{Dropped, GameText, WthorExport, WthorFile};
pub use format::{FileKind, Header};
pub use ggf::GgfError;

pub use replay::Outcome;
pub use source::{bundled_sources, expand_paths, Compression, Source, SourceFormat};
pub use text::{SkipReason, TextFormat};

/// What is wrong with a file or a game record.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AnomalyKind {
    /// The file cannot be read, or its compressed data stops.
    #[error("{step}: {}", io_text(*error, *os_error))]
    Io {
        /// What was being done.
        step: IoStep,
        /// The system's error kind.
        #[serde(serialize_with = "as_text")]
        error: std::io::ErrorKind,
        /// The operating system's error code, when there is one.
        os_error: Option<i32>,
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
    #[error("{fault}")]
    Syntax {
        /// What is wrong.
        #[serde(rename = "message", serialize_with = "as_text")]
        fault: TextFault,
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

/// What a reader was doing when the system failed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum IoStep {
    /// Opening or reading the file.
    Read,
    /// Decompressing it.
    Decompress,
    /// Reading on, part way through (the data stops).
    Continue,
}

impl fmt::Display for IoStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoStep::Read => "cannot read",
            IoStep::Decompress => "cannot decompress",
            IoStep::Continue => "the data stops",
        })
    }
}

impl AnomalyKind {
    /// The anomaly of an I/O error met while doing `step`.
    pub(crate) fn io(step: IoStep, e: &std::io::Error) -> AnomalyKind {
        AnomalyKind::Io { step, error: e.kind(), os_error: e.raw_os_error() }
    }
}

/// The system's words for an I/O error: the OS's message when there is a code.
fn io_text(kind: std::io::ErrorKind, os_error: Option<i32>) -> String {
    os_error.map_or_else(|| kind.to_string(), |code| std::io::Error::from_raw_os_error(code).to_string())
}

/// Serializes a value as its `Display` text.
fn as_text<T: fmt::Display, S: serde::Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

/// What is wrong with a game's text (GGF, a transcript, a JSON line).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TextFault {
    /// No `(;` where a GGF game should start.
    #[error("no `(;` game start")]
    NoGameStart,
    /// A GGF game without its closing `;)`.
    #[error("the game does not end with `;)`")]
    Unterminated,
    /// Something other than a tag inside a GGF game.
    #[error("expected a tag such as `PB[name]`")]
    ExpectedTag,
    /// A tag's value without its `]`.
    #[error("a tag is not closed by `]`")]
    UnclosedTag,
    /// An escape that splits a character.
    #[error("a tag's value has a bad escape")]
    BadEscape,
    /// An empty `BO` tag.
    #[error("empty BO tag")]
    EmptyBoardTag,
    /// A board size other than 8.
    #[error("BO: the board size is not 8")]
    BoardSize,
    /// A `BO` board that does not parse.
    #[error("BO: {0}")]
    Board(ParseError),
    /// A `BO` tag without the side to move.
    #[error("BO has no side to move after its 64 squares")]
    NoSide,
    /// Text after a `BO` tag's side to move.
    #[error("BO has text after the side to move")]
    AfterSide,
    /// A GGF game of another game than Othello.
    #[error("the game (GM) is not Othello")]
    NotOthello,
    /// A GGF board type other than 8x8.
    #[error("the board type (TY) is not 8x8")]
    NotEightByEight,
    /// A `RE` tag that is not a result.
    #[error("RE is not a result")]
    Result,
    /// A move that does not parse (at the anomaly's ply).
    #[error("not a move")]
    NotAMove,
    /// A move that does not parse, at `ply`.
    #[error("ply {ply}: not a move")]
    NotAMoveAt {
        /// 1-based ply.
        ply: usize,
    },
    /// A move that cannot be played, at `ply`.
    #[error("ply {ply}: {source}")]
    Play {
        /// 1-based ply.
        ply: usize,
        /// Why.
        source: crate::position::MoveError,
    },
    /// A move for the colour not to move, at `ply`, when the side to move has a move.
    #[error("ply {ply}: a move for {found} where {expected} is to move")]
    WrongSide {
        /// 1-based ply.
        ply: usize,
        /// The side to move.
        expected: Color,
        /// The colour the game gives.
        found: Color,
    },
    /// A transcript word that is neither moves nor a result.
    #[error("a word is neither moves nor a result")]
    NotMovesNorResult,
    /// Text after a transcript's result.
    #[error("text follows the result")]
    AfterResult,
    /// A line that is not JSON.
    #[error("not JSON")]
    NotJson,
    /// A JSON line without its `moves` string.
    #[error("no `moves` string")]
    NoMovesField,
    /// A `moves` string that does not parse.
    #[error("moves: {0}")]
    Moves(ParseError),
    /// Text between GGF games.
    #[error("text outside a game")]
    OutsideGame,
    /// A GGF game cut by the end of the file.
    #[error("the game is cut: no `;)` before the end of the file")]
    Cut,
}

/// A problem found in a file: where (file, record, byte, ply) and what.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize)]
#[non_exhaustive]
pub struct Anomaly {
    /// The file's path as given (the bundled archives' names for theirs).
    pub file: PathBuf,
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
        Anomaly { file: name.into(), record: None, line: None, offset: None, ply: None, kind }
    }

    /// A problem on line `line` of a text file, at byte `offset`, at `ply` if given.
    pub(crate) fn at_line(name: &str, line: u32, offset: usize, ply: Option<usize>, kind: AnomalyKind) -> Anomaly {
        Anomaly { file: name.into(), record: None, line: Some(line), offset: Some(offset), ply, kind }
    }

    /// A problem of game record `record` of a `.wtb` file, at `ply` (1-based) if given.
    pub(crate) fn game(name: &str, record: usize, ply: Option<usize>, kind: AnomalyKind) -> Anomaly {
        let base = format::HEADER_LEN + record * format::GAME_RECORD_LEN;
        let offset = match ply {
            Some(p) => base + format::MOVES_OFFSET + p - 1,
            None => base,
        };
        Anomaly { file: name.into(), record: Some(record), line: None, offset: Some(offset), ply, kind }
    }
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
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
    /// A path that cannot be listed or read.
    #[error(transparent)]
    Io(#[from] crate::fileio::IoError),
    /// A path that does not exist.
    #[error("{}: no such file or directory", path.display())]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// A directory that holds no game archives.
    #[error("{}: directory holds no game archives (WTHOR, GGF, transcripts, JSON lines)", dir.display())]
    NoArchives {
        /// The directory given.
        dir: PathBuf,
    },
}
