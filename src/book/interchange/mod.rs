//! Moving books between programs: thorbook's text export, Edax's binary `book.dat`
//! (Edax 4.4–4.6) and text export, and Egaroucid's `.egbk3`. Every format is read by
//! content, not by file name, into the same thorbook records, and every mapping
//! (levels, pass positions, counts, what a format cannot hold) is documented in
//! `book-format.md`. A damaged or foreign file is a located error, never a silently
//! empty or partial book.
//!
//! This module owns detection, the errors, and what the formats share (levels, leaves,
//! pass records); each format's reader and writer is in its own file: `text` (thorbook
//! text), `edax` (binary and text), `egaroucid`.

use std::collections::BTreeMap;
use std::fmt;

use byteorder::{ByteOrder, LittleEndian as LE};
use thiserror::Error;

use super::build::backup::{back_up_records, Reached};
use super::format::{stored_score, BookError, BuildParams, LeafMove, Record, Writer, FLAG_LEAF_EXACT};
use super::Book;
use crate::board::Board;
use crate::square::{ParseError, Square};

mod edax;
mod egaroucid;
mod text;

use edax::{parse_edax, parse_edax_text, write_edax, EDAX_MAGIC};
use egaroucid::{parse_egaroucid, write_egaroucid, EGAROUCID_MAGIC};
use text::{parse_text, write_text, TEXT_FIRST_LINE};

/// A book file format thorbook reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum BookFormat {
    /// thorbook's own binary book (`.tbk`, any version it reads).
    Thorbook,
    /// thorbook's text export (`book export --format text`).
    Text,
    /// Edax's binary book (`book.dat`, Edax 4.4–4.6, file version 4).
    EdaxBinary,
    /// Edax's text export (`book export` in Edax: `board,level,move,score` lines).
    EdaxText,
    /// Egaroucid's `.egbk3` (magic `DICUORAGE`, version 3).
    Egaroucid,
}

/// A short name for messages.
impl std::fmt::Display for BookFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl BookFormat {
    /// A short name for messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BookFormat::Thorbook => "thorbook book",
            BookFormat::Text => "thorbook text export",
            BookFormat::EdaxBinary => "Edax book.dat",
            BookFormat::EdaxText => "Edax text export",
            BookFormat::Egaroucid => "Egaroucid .egbk3",
        }
    }

    /// Recognises a book by its first bytes.
    pub(crate) fn detect(bytes: &[u8]) -> Result<BookFormat, InterchangeError> {
        if bytes.starts_with(&super::format::MAGIC) {
            return Ok(BookFormat::Thorbook);
        }
        if bytes.starts_with(EDAX_MAGIC) {
            return Ok(BookFormat::EdaxBinary);
        }
        if bytes.starts_with(EGAROUCID_MAGIC) {
            return Ok(BookFormat::Egaroucid);
        }
        if bytes.starts_with(TEXT_FIRST_LINE.as_bytes()) {
            return Ok(BookFormat::Text);
        }
        let first_line = bytes.split(|&b| b == b'\n').find(|l| !l.iter().all(u8::is_ascii_whitespace));
        if let Some(line) = first_line {
            if line.len() > 67 && line[..64].iter().all(|b| b"XOxo-.".contains(b)) && line[64] == b' ' {
                return Ok(BookFormat::EdaxText);
            }
        }
        let mut start = [0u8; 16];
        let n = bytes.len().min(16);
        start[..n].copy_from_slice(&bytes[..n]);
        Err(InterchangeError::Unrecognised { start, len: u8::try_from(n).unwrap_or(16) })
    }
}

/// Where in a file a fault is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// A binary record: its index and the byte where it starts.
    Record {
        /// 0-based position index.
        index: u64,
        /// Byte offset of the field at fault.
        byte: u64,
    },
    /// A byte of a header.
    Header {
        /// Byte offset.
        byte: u64,
    },
    /// A text line (1-based).
    Line(u64),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Record { index, byte } => write!(f, "position {index} (byte {byte})"),
            Location::Header { byte } => write!(f, "header byte {byte}"),
            Location::Line(n) => write!(f, "line {n}"),
        }
    }
}

/// Why a book cannot be imported or exported.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum InterchangeError {
    /// Not a format thorbook knows.
    #[error(
        "not a book thorbook recognises (starts with {:?}); expected a thorbook book or text export, \
         an Edax book.dat or text export, or an Egaroucid .egbk3",
        printable(&start[..usize::from(*len)])
    )]
    Unrecognised {
        /// The file's first bytes (up to 16).
        start: [u8; 16],
        /// How many of `start` the file has.
        len: u8,
    },
    /// The file ends inside a header or a position.
    #[error("{format}: truncated at {at}: {what}")]
    Truncated {
        /// The format being read.
        format: &'static str,
        /// Where.
        at: Location,
        /// What is missing.
        what: Shortfall,
    },
    /// A field is wrong.
    #[error("{format}: {at}: {what}")]
    Invalid {
        /// The format being read.
        format: &'static str,
        /// Where.
        at: Location,
        /// What is wrong.
        what: ImportFault,
    },
    /// Two different positions with the same Zobrist key.
    #[error("Zobrist key collision: {key:#018x} is the key of two different positions; the book cannot hold both")]
    KeyCollision {
        /// The key.
        key: u64,
    },
    /// The thorbook book being read or written is damaged.
    #[error(transparent)]
    Book(#[from] BookError),
    /// The book has more positions than the format's count field can hold.
    #[error("{format}: {positions} positions, more than the format can count (at most {max})")]
    TooLarge {
        /// The format.
        format: &'static str,
        /// Positions to write.
        positions: usize,
        /// The format's limit.
        max: i64,
    },
}

/// Bytes as text, `.` for anything not a printable ASCII character.
fn printable(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| if b.is_ascii_graphic() { b as char } else { '.' }).collect()
}

/// What a truncated book file lacks.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shortfall {
    /// The file is shorter than the format's header.
    #[error("the header is {needed} bytes, the file has {found}")]
    Header {
        /// The header's length.
        needed: usize,
        /// The file's.
        found: usize,
    },
    /// The file ends inside a position.
    #[error("the file ends inside a position")]
    Position,
    /// The file ends inside a position's list of moves.
    #[error("the file ends inside a position's moves")]
    Moves,
    /// Fewer positions than the header announces.
    #[error("the header announces {declared} positions, the file holds {found}")]
    Positions {
        /// Announced.
        declared: u64,
        /// Present.
        found: u64,
    },
}

/// What is wrong with a field of an imported book.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImportFault {
    /// A format version this reader does not know.
    #[error("version {found}, thorbook reads version {reads}")]
    Version {
        /// The file's.
        found: u8,
        /// The one this reader knows.
        reads: u8,
    },
    /// A negative position count in the header.
    #[error("negative position count {count}")]
    NegativeCount {
        /// The stored count.
        count: i32,
    },
    /// Bytes after the positions the header announces.
    #[error("{extra} bytes after the {declared} positions the header announces")]
    TrailingBytes {
        /// Bytes in excess.
        extra: u64,
        /// Positions announced.
        declared: u64,
    },
    /// A text format that is not UTF-8.
    #[error("not UTF-8 text")]
    NotUtf8,
    /// A file with no positions.
    #[error("no positions")]
    Empty,
    /// A square with discs of both sides.
    #[error("a square holds discs of both sides")]
    BothColours,
    /// A position whose centre is not full.
    #[error("a centre square is empty: not an Othello position")]
    EmptyCentre,
    /// A move code that is not a legal move, a pass or none.
    #[error("move code {code} is not a legal move, a pass or none")]
    MoveCode {
        /// The stored code.
        code: i16,
    },
    /// A move that is not legal in its position.
    #[error("move {square} is not legal in this position")]
    IllegalMove {
        /// The move.
        square: Square,
    },
    /// A score outside -64..=64.
    #[error("{field} {score} outside -64..64")]
    Score {
        /// Which score: "value" or "leaf score".
        field: &'static str,
        /// The stored score.
        score: i16,
    },
    /// A position with neither a value nor a leaf to take one from.
    #[error("value {value} outside -64..64 and no leaf to take one from")]
    ValueWithoutLeaf {
        /// The stored value.
        value: i16,
    },
    /// More games than thorbook counts.
    #[error("{wins} wins, {draws} draws and {losses} losses: more than 2^32 - 1 games")]
    TooManyGames {
        /// Wins.
        wins: u32,
        /// Draws.
        draws: u32,
        /// Losses.
        losses: u32,
    },
    /// More wins and draws than games.
    #[error("{wins} wins and {draws} draws exceed {games} games")]
    Counts {
        /// Wins.
        wins: u32,
        /// Draws.
        draws: u16,
        /// Games.
        games: u32,
    },
    /// A line with the wrong number of fields.
    #[error("expected {expected} fields, found {found}")]
    Fields {
        /// What the format expects.
        expected: &'static str,
        /// Fields on the line.
        found: usize,
    },
    /// A field that does not parse.
    #[error("{field} is not {expected}")]
    Syntax {
        /// The field.
        field: &'static str,
        /// What it should be.
        expected: &'static str,
    },
    /// A number outside its field's range.
    #[error("{field} {value} is not from {lo} to {hi}")]
    Range {
        /// The field.
        field: &'static str,
        /// The number read.
        value: i64,
        /// Smallest allowed.
        lo: i64,
        /// Largest allowed.
        hi: i64,
    },
    /// A parameter line names a parameter this format does not have.
    #[error("unknown parameter (expected max_ply, depth, exact_at, selectivity, min_games or eval)")]
    UnknownParameter,
    /// A key that is not the given board's.
    #[error("key {key:016x} is not the key of the canonical board given")]
    KeyMismatch {
        /// The stored key.
        key: u64,
    },
    /// A board or move field that does not parse.
    #[error("{field}: {source}")]
    Text {
        /// The field.
        field: &'static str,
        /// Why.
        source: ParseError,
    },
}

/// A signed byte as stored: the same bits.
fn signed(byte: u8) -> i8 {
    i8::from_le_bytes([byte])
}

/// The byte that stores a signed value: the same bits.
fn byte_of(value: i8) -> u8 {
    value.to_le_bytes()[0]
}

/// A position count as the Edax and Egaroucid headers store it (an i32).
fn position_count(format: &'static str, positions: usize) -> Result<i32, InterchangeError> {
    i32::try_from(positions).map_err(|_| InterchangeError::TooLarge { format, positions, max: i32::MAX.into() })
}

/// The deepest ply of the boards read: the book's `max_ply`.
fn deepest_ply(entries: &[(Option<Board>, Record)]) -> u8 {
    let ply = entries.iter().filter_map(|(b, _)| b.map(|b| 60u32.saturating_sub(b.empty_count()))).max();
    u8::try_from(ply.unwrap_or(0)).unwrap_or(60)
}

/// A book read from another format, as a thorbook book.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The thorbook book file.
    pub bytes: Vec<u8>,
    /// What the input was.
    pub format: BookFormat,
    /// Positions in the book.
    pub positions: usize,
    /// Positions read from the input (before duplicates were dropped and pass positions added).
    pub read: usize,
    /// Positions of the input repeated (in any orientation); the first was kept.
    pub duplicates: usize,
    /// Pass positions added because the format leaves them out (Egaroucid).
    pub passes_added: usize,
}

/// A book written in another format.
#[derive(Clone, Debug)]
pub struct Exported {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// Positions written.
    pub positions: usize,
    /// Book positions that are not reachable from the start through the book: their
    /// boards are unknown (a thorbook book stores keys), so formats that store boards
    /// cannot carry them.
    pub unreachable: usize,
    /// Pass positions left out because the format folds them (Egaroucid).
    pub passes_folded: usize,
}

/// The formats `book export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// thorbook text.
    Text,
    /// Edax `book.dat`, with the date to put in its header.
    Edax(EdaxDate),
    /// Egaroucid `.egbk3`.
    Egaroucid,
}

/// The date in an Edax book header (Edax shows it; it does not affect reading).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct EdaxDate {
    /// Year.
    pub year: i16,
    /// Month 1..=12.
    pub month: u8,
    /// Day 1..=31.
    pub day: u8,
    /// Hour.
    pub hour: u8,
    /// Minute.
    pub minute: u8,
    /// Second.
    pub second: u8,
}

impl EdaxDate {
    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// Now, in UTC.
    pub(crate) fn now() -> EdaxDate {
        let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let days = i64::try_from(secs / 86_400).unwrap_or_default();
        let rem = secs % 86_400;
        let (year, month, day) = crate::fileio::civil_from_days(days);
        let year = i16::try_from(year).unwrap_or(i16::MAX);
        let (month, day) = (u8::try_from(month).unwrap_or(1), u8::try_from(day).unwrap_or(1));
        EdaxDate {
            year,
            month,
            day,
            hour: (rem / 3600) as u8,
            minute: (rem % 3600 / 60) as u8,
            second: (rem % 60) as u8,
        }
    }
}

/// Reads a book in any format thorbook knows, recognised by content.
pub fn import(bytes: &[u8]) -> Result<Imported, InterchangeError> {
    let format = BookFormat::detect(bytes)?;
    let parsed = match format {
        BookFormat::Thorbook => return import_thorbook(bytes),
        BookFormat::Text => parse_text(bytes)?,
        BookFormat::EdaxBinary => parse_edax(bytes)?,
        BookFormat::EdaxText => parse_edax_text(bytes)?,
        BookFormat::Egaroucid => parse_egaroucid(bytes)?,
    };
    parsed.into_book(format)
}

/// Writes `book` in `format`.
pub fn export<D: AsRef<[u8]>>(book: &Book<D>, format: ExportFormat) -> Result<Exported, InterchangeError> {
    book.verify()?;
    let boards = crate::book::probe::known_boards(book);
    let unreachable = book.len() - boards.len();
    let mut positions: Vec<(Board, Record)> =
        boards.iter().map(|(&key, &board)| (board, book.get(key).expect("walk finds book positions"))).collect();
    positions.sort_by_key(|(_, r)| r.key);
    Ok(match format {
        ExportFormat::Text => {
            let text = write_text(book, &boards);
            Exported { bytes: text.into_bytes(), positions: book.len(), unreachable: 0, passes_folded: 0 }
        }
        ExportFormat::Edax(date) => {
            let bytes = write_edax(&positions, date)?;
            Exported { bytes, positions: positions.len(), unreachable, passes_folded: 0 }
        }
        ExportFormat::Egaroucid => {
            let (bytes, written) = write_egaroucid(&positions)?;
            Exported { bytes, positions: written, unreachable, passes_folded: positions.len() - written }
        }
    })
}

/// Positions read from a file: canonical boards (where the format has them) and records.
struct Parsed {
    /// Records with their boards, or `None` for a text line with an unknown board.
    entries: Vec<(Option<Board>, Record)>,
    params: BuildParams,
    read: usize,
    /// The format stores values already backed up (else they come from negamax here).
    values_stored: bool,
    /// The format leaves out pass positions: add them back.
    passes_folded: bool,
}

impl Parsed {
    fn into_book(self, format: BookFormat) -> Result<Imported, InterchangeError> {
        let mut by_key: BTreeMap<u64, (Option<Board>, Record)> = BTreeMap::new();
        let mut duplicates = 0;
        for (board, record) in self.entries {
            match by_key.get(&record.key) {
                Some((Some(old), _)) if board.is_some_and(|b| b != *old) => {
                    return Err(InterchangeError::KeyCollision { key: record.key })
                }
                Some(_) => duplicates += 1,
                None => {
                    by_key.insert(record.key, (board, record));
                }
            }
        }
        let mut passes_added = 0;
        if self.passes_folded {
            let mut added = Vec::new();
            for (board, _) in by_key.values() {
                let Some(board) = board else { continue };
                for (_, child) in board.successors() {
                    if !child.must_pass() {
                        continue;
                    }
                    let (canon, _) = child.canonical();
                    let after = canon.pass().canonical().0;
                    if by_key.contains_key(&canon.key()) {
                        continue;
                    }
                    if let Some((_, next)) = by_key.get(&after.key()) {
                        added.push((canon, pass_record(canon.key(), next)));
                    }
                }
            }
            for (board, record) in added {
                if by_key.insert(record.key, (Some(board), record)).is_none() {
                    passes_added += 1;
                }
            }
        }
        let mut records: Vec<Record> = by_key.values().map(|(_, r)| *r).collect();
        if !self.values_stored {
            // The one format without values (Edax's text export) stores every board and
            // reads each value as its leaf's score: every board is a root of the back-up.
            let roots: Vec<Board> = by_key.values().filter_map(|(b, _)| *b).collect();
            back_up_records(&mut records, roots, self.params.back_up, Reached::KeepOthers);
        }
        let mut writer = Writer::new(self.params);
        for record in &records {
            writer.push(record)?;
        }
        let positions = by_key.len();
        Ok(Imported { bytes: writer.finish(), format, positions, read: self.read, duplicates, passes_added })
    }
}

/// The record of a pass position synthesised in front of `next`, the position after the
/// pass, as a build would have made it: the same games went through both.
fn pass_record(key: u64, next: &Record) -> Record {
    let games = next.games;
    Record {
        key,
        value: next.value.saturating_neg(),
        leaf_move: LeafMove::NONE,
        leaf_score: 0,
        leaf_depth: 0,
        games,
        wins: games.saturating_sub(next.wins).saturating_sub(u32::from(next.draws)),
        draws: next.draws,
        flags: FLAG_LEAF_EXACT,
        leaf_selectivity: 0,
    }
}

/// The record for a position without a leaf move: every move is in the book, or the
/// game is over (then the leaf score is the final score), as the builder makes it.
fn no_leaf(board: &Board) -> (LeafMove, i8, u8, u8) {
    let score = if board.is_game_over() { stored_score(board.final_score()) } else { 0 };
    (LeafMove::NONE, score, 0, FLAG_LEAF_EXACT)
}

fn import_thorbook(bytes: &[u8]) -> Result<Imported, InterchangeError> {
    let book = Book::open_verified(bytes)?;
    let mut writer = Writer::new(book.params());
    for r in book.records() {
        writer.push(&r)?;
    }
    let positions = book.len();
    Ok(Imported {
        bytes: writer.finish(),
        format: BookFormat::Thorbook,
        positions,
        read: positions,
        duplicates: 0,
        passes_added: 0,
    })
}

/// Checks a binary header: its length, the version byte at `version_at`, and a
/// non-negative i32 position count at `count_at`, which it returns.
fn check_header(
    bytes: &[u8],
    format: &'static str,
    header_len: usize,
    version_at: usize,
    version: u8,
    count_at: usize,
) -> Result<usize, InterchangeError> {
    if bytes.len() < header_len {
        return Err(InterchangeError::Truncated {
            format,
            at: Location::Header { byte: bytes.len() as u64 },
            what: Shortfall::Header { needed: header_len, found: bytes.len() },
        });
    }
    if bytes[version_at] != version {
        return Err(InterchangeError::Invalid {
            format,
            at: Location::Header { byte: version_at as u64 },
            what: ImportFault::Version { found: bytes[version_at], reads: version },
        });
    }
    let declared = LE::read_i32(&bytes[count_at..count_at + 4]);
    usize::try_from(declared).map_err(|_| InterchangeError::Invalid {
        format,
        at: Location::Header { byte: count_at as u64 },
        what: ImportFault::NegativeCount { count: declared },
    })
}

/// Text as UTF-8, or an error naming the line where it stops being so.
fn utf8<'a>(bytes: &'a [u8], format: &'static str) -> Result<&'a str, InterchangeError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        InterchangeError::Invalid { format, at: Location::Line(line), what: ImportFault::NotUtf8 }
    })
}

/// The level other programs store for a leaf: its depth, or 60 (their level that
/// solves exactly) for an exact leaf.
fn exchange_level(r: &Record) -> u8 {
    if r.leaf_exact() && !r.leaf_move.is_none() {
        EXACT_LEVEL
    } else {
        r.leaf_depth.min(EXACT_LEVEL)
    }
}

/// The (leaf move, score, depth, flags) of a record read from another program, whose
/// leaf was searched at `level`: a level reaching the position's empties is an exact
/// solve (depth = empties), any other a search of that depth; no move is no leaf.
fn leaf_from_level(board: &Board, leaf_move: LeafMove, score: i8, level: u8) -> (LeafMove, i8, u8, u8) {
    if leaf_move.is_none() {
        return no_leaf(board);
    }
    let empties = board.empty_count();
    if level as u32 >= empties {
        (leaf_move, score, u8::try_from(empties).unwrap_or(64), FLAG_LEAF_EXACT)
    } else {
        (leaf_move, score, level, 0)
    }
}

/// The level of Edax and Egaroucid that solves every position exactly.
const EXACT_LEVEL: u8 = 60;
