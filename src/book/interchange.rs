//! Moving books between programs: thorbook's text export, Edax's binary `book.dat`
//! (Edax 4.4–4.6) and text export, and Egaroucid's `.egbk3`. Every format is read by
//! content, not by file name, into the same thorbook records, and every mapping
//! (levels, pass positions, counts, what a format cannot hold) is documented in
//! `book-format.md`. A damaged or foreign file is a located error, never a silently
//! empty or partial book.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use byteorder::{ByteOrder, LittleEndian as LE};
use thiserror::Error;

use super::build::{leaf_score, negamax};
use super::format::{stored_score, BookError, BuildParams, LeafMove, Record, Writer, FLAG_LEAF_EXACT};
use super::{walk, walk_from, Book};
use crate::board::{masks, Board, Color};
use crate::position::{parse_side, parse_squares, Position};
use crate::square::{Move, Square};

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

impl BookFormat {
    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            BookFormat::Thorbook => "thorbook book",
            BookFormat::Text => "thorbook text export",
            BookFormat::EdaxBinary => "Edax book.dat",
            BookFormat::EdaxText => "Edax text export",
            BookFormat::Egaroucid => "Egaroucid .egbk3",
        }
    }

    /// Recognises a book by its first bytes.
    pub fn detect(bytes: &[u8]) -> Result<BookFormat, InterchangeError> {
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
        let shown: String =
            bytes.iter().take(16).map(|&b| if b.is_ascii_graphic() { b as char } else { '.' }).collect();
        Err(InterchangeError::Unrecognised { start: shown })
    }
}

/// Where in a file a fault is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
pub enum InterchangeError {
    /// Not a format thorbook knows.
    #[error(
        "not a book thorbook recognises (starts with {start:?}); expected a thorbook book or text export, \
         an Edax book.dat or text export, or an Egaroucid .egbk3"
    )]
    Unrecognised {
        /// The first bytes, printable.
        start: String,
    },
    /// The file ends inside a header or a position.
    #[error("{format}: truncated at {at}: {what}")]
    Truncated {
        /// The format being read.
        format: &'static str,
        /// Where.
        at: Location,
        /// What was being read.
        what: String,
    },
    /// A field is wrong.
    #[error("{format}: {at}: {what}")]
    Invalid {
        /// The format being read.
        format: &'static str,
        /// Where.
        at: Location,
        /// What is wrong.
        what: String,
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
    /// Now, in UTC.
    pub fn now() -> EdaxDate {
        let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let days = i64::try_from(secs / 86_400).unwrap_or_default();
        let rem = secs % 86_400;
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = u8::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
        let month = u8::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
        let year = i16::try_from(yoe + era * 400 + i64::from(month <= 2)).unwrap_or(i16::MAX);
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
    let boards = known_boards(book);
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
        if !self.values_stored {
            let leaf_of =
                |key: u64| by_key.get(&key).map(|(b, r)| b.and_then(|b| leaf_score(&b, r.leaf_move, r.leaf_score)));
            let mut memo = HashMap::new();
            let values: Vec<(u64, Option<i32>)> = by_key
                .iter()
                .map(|(&k, (b, r))| {
                    let v = match b {
                        Some(b) => negamax(b, &leaf_of, &mut memo),
                        None => Some(r.leaf_score as i32),
                    };
                    (k, v)
                })
                .collect();
            for (k, v) in values {
                if let (Some(v), Some(entry)) = (v, by_key.get_mut(&k)) {
                    entry.1.value = stored_score(v);
                }
            }
        }
        let mut writer = Writer::new(self.params);
        for (_, record) in by_key.values() {
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

/// The boards of the book's positions, found by play from the start: through book
/// positions, and across up to [`BRIDGE_PLIES`] positions outside the book, since a
/// position reached by transposition from two rarer lines (each below a build's
/// minimum game count) is in the book while its parents are not.
pub fn known_boards<D: AsRef<[u8]>>(book: &Book<D>) -> HashMap<u64, Board> {
    let mut found = walk(book);
    if found.len() == book.len() {
        // Every position is reachable through the book (always so for built books).
        return found;
    }
    let mut frontier: Vec<Board> = found.values().copied().collect();
    let mut outside: std::collections::HashSet<u64> = std::collections::HashSet::new();
    for _ in 0..BRIDGE_PLIES {
        let mut next = Vec::new();
        for board in frontier {
            for (_, child) in board.successors() {
                let canon = child.canonical().0;
                let key = canon.key();
                if book.get(key).is_some() || found.contains_key(&key) || !outside.insert(key) {
                    continue;
                }
                next.push(canon);
            }
        }
        // Book positions one ply past the new outside positions, and everything in the
        // book below them.
        for board in &next {
            for (_, child) in board.successors() {
                let canon = child.canonical().0;
                if book.get(canon.key()).is_some() && !found.contains_key(&canon.key()) {
                    found.extend(walk_from(book, canon));
                }
            }
        }
        if found.len() == book.len() {
            break;
        }
        frontier = next;
    }
    found
}

/// Non-book plies [`known_boards`] crosses between book positions.
pub const BRIDGE_PLIES: usize = 2;

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
            what: format!("the header is {header_len} bytes, the file has {}", bytes.len()),
        });
    }
    if bytes[version_at] != version {
        return Err(InterchangeError::Invalid {
            format,
            at: Location::Header { byte: version_at as u64 },
            what: format!("version {}, thorbook reads version {version}", bytes[version_at]),
        });
    }
    let declared = LE::read_i32(&bytes[count_at..count_at + 4]);
    usize::try_from(declared).map_err(|_| InterchangeError::Invalid {
        format,
        at: Location::Header { byte: count_at as u64 },
        what: format!("negative position count {declared}"),
    })
}

/// Text as UTF-8, or an error naming the line where it stops being so.
fn utf8<'a>(bytes: &'a [u8], format: &'static str) -> Result<&'a str, InterchangeError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        InterchangeError::Invalid { format, at: Location::Line(line), what: "not UTF-8 text".into() }
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

// ---- thorbook text ----

const TEXT_FIRST_LINE: &str = "# thorbook book export";

fn write_text<D: AsRef<[u8]>>(book: &Book<D>, boards: &HashMap<u64, Board>) -> String {
    let p = book.params();
    let mut text = format!(
        "{TEXT_FIRST_LINE}: key value leaf_move leaf_score leaf_depth exact games wins draws board leaf_selectivity\n\
         # params max_ply={} depth={} exact_at={} selectivity={} min_games={} eval={:08x}\n",
        p.max_ply, p.depth, p.exact_at, p.selectivity_tenths, p.min_games, p.eval_digest
    );
    for r in book.records() {
        let leaf = match r.leaf_move {
            LeafMove::NONE => "-".to_string(),
            m => r.leaf().map_or(format!("?{}", m.byte()), |mv| mv.to_string()),
        };
        let board = boards
            .get(&r.key)
            .map_or("?".to_string(), |b| Position { board: *b, side: Color::Black }.to_board_text()[..64].to_string());
        text.push_str(&format!(
            "{:016x} {} {} {} {} {} {} {} {} {} {}\n",
            r.key,
            r.value,
            leaf,
            r.leaf_score,
            r.leaf_depth,
            r.leaf_exact() as u8,
            r.games,
            r.wins,
            r.draws,
            board,
            r.leaf_selectivity
        ));
    }
    text
}

/// A whole number in `lo..=hi` (a range inside `T`'s), or what is wrong with it.
fn bounded_number<T: TryFrom<i64>>(text: &str, name: &str, lo: i64, hi: i64) -> Result<T, String> {
    let v: i64 = text.parse().map_err(|_| format!("{name} `{text}` is not a number"))?;
    if !(lo..=hi).contains(&v) {
        return Err(format!("{name} {v} is outside {lo}..={hi}"));
    }
    T::try_from(v).map_err(|_| format!("{name} {v} does not fit its field"))
}

fn parse_text(bytes: &[u8]) -> Result<Parsed, InterchangeError> {
    const F: &str = "thorbook text export";
    let text = utf8(bytes, F)?;
    let mut params = BuildParams::default();
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = Location::Line(i as u64 + 1);
        let bad = |what: String| InterchangeError::Invalid { format: F, at, what };
        if let Some(rest) = line.strip_prefix("# params ") {
            for kv in rest.split_whitespace() {
                let (k, v) = kv.split_once('=').ok_or_else(|| bad(format!("`{kv}` is not key=value")))?;
                let byte = |v: &str| v.parse::<u8>().map_err(|_| bad(format!("`{k}` must be 0..=255, got `{v}`")));
                match k {
                    "max_ply" => params.max_ply = byte(v)?,
                    "depth" => params.depth = byte(v)?,
                    "exact_at" => params.exact_at = byte(v)?,
                    "selectivity" => params.selectivity_tenths = byte(v)?,
                    "min_games" => {
                        params.min_games =
                            v.parse().map_err(|_| bad(format!("`min_games` must be a u32, got `{v}`")))?
                    }
                    "eval" => {
                        params.eval_digest = u32::from_str_radix(v, 16)
                            .map_err(|_| bad(format!("`eval` must be 8 hex digits, got `{v}`")))?
                    }
                    _ => return Err(bad(format!("unknown parameter `{k}`"))),
                }
            }
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 9 {
            return Err(bad(format!("expected at least 9 fields, found {}", f.len())));
        }
        let leaf_move = match f[2] {
            "-" => LeafMove::NONE,
            m => LeafMove::of(m.parse::<Move>().map_err(|e| bad(format!("leaf move: {e}")))?),
        };
        let board = match f.get(9) {
            Some(&"?") | None => None,
            Some(b) => {
                let pos = Position::parse_board_text(&format!("{b} X")).map_err(|e| bad(format!("board: {e}")))?;
                Some(pos.board)
            }
        };
        let key = u64::from_str_radix(f[0], 16).map_err(|_| bad(format!("key `{}` is not 16 hex digits", f[0])))?;
        if let Some(b) = board {
            if b.key() != key || b.canonical().0 != b {
                return Err(bad(format!("key {key:016x} is not the key of the canonical board given")));
            }
        }
        let record = Record {
            key,
            value: bounded_number(f[1], "value", -64, 64).map_err(&bad)?,
            leaf_move,
            leaf_score: bounded_number(f[3], "leaf score", -64, 64).map_err(&bad)?,
            leaf_depth: bounded_number(f[4], "leaf depth", 0, 255).map_err(&bad)?,
            flags: if bounded_number::<u8>(f[5], "exact flag", 0, 1).map_err(&bad)? == 1 { FLAG_LEAF_EXACT } else { 0 },
            games: bounded_number(f[6], "games", 0, u32::MAX.into()).map_err(&bad)?,
            wins: bounded_number(f[7], "wins", 0, u32::MAX.into()).map_err(&bad)?,
            draws: bounded_number(f[8], "draws", 0, u16::MAX.into()).map_err(&bad)?,
            leaf_selectivity: match f.get(10) {
                Some(_) => bounded_number(f[10], "leaf selectivity", 0, 255).map_err(&bad)?,
                // Exports of version-1 books had no such column: the header's selectivity.
                None if !leaf_move.is_none() && f[5] != "1" => params.selectivity_tenths,
                None => 0,
            },
        };
        if u64::from(record.wins) + u64::from(record.draws) > u64::from(record.games) {
            return Err(bad(format!("{} wins and {} draws exceed {} games", record.wins, record.draws, record.games)));
        }
        entries.push((board, record));
    }
    let read = entries.len();
    Ok(Parsed { entries, params, read, values_stored: true, passes_folded: false })
}

// ---- Edax ----

/// `EDAX` then `BOOK` as little-endian u32s, as Edax writes them.
const EDAX_MAGIC: &[u8; 8] = b"XADEKOOB";
/// The file version Edax 4.4–4.6 write and read.
const EDAX_VERSION: u8 = 4;
/// The release byte written (Edax reads but ignores it).
const EDAX_RELEASE: u8 = 4;
/// Header: magic (8), version, release, date (8: year i16, month, day, hour, minute,
/// second, one padding byte), options (5 × i32: level, n_empties, midgame_error,
/// endcut_error, verbosity), position count (i32).
const EDAX_HEADER: usize = 42;
/// Fixed part of a position: boards (16), wins, draws, losses, lines (16), value,
/// lower, upper (6), link count, level (2).
const EDAX_POSITION: usize = 40;
const EDAX_PASS: u8 = 64;
const EDAX_NOMOVE: u8 = 65;
/// Edax's `-SCORE_INF`: the score of a missing leaf.
const EDAX_NO_SCORE: i8 = -127;
/// Edax's defaults for the error bounds of its book (midgame, endgame cut).
const EDAX_MIDGAME_ERROR: i16 = 2;
const EDAX_ENDCUT_ERROR: i16 = 1;

/// Edax's book lines: the moves from a position into the book (with minus the
/// child's value) and, separately, its leaf.
fn links(board: &Board, value_of: &impl Fn(u64) -> Option<i8>) -> Vec<(i8, u8)> {
    let mut out = Vec::new();
    for (mv, child) in board.successors() {
        if let Some(v) = value_of(child.canonical().0.key()) {
            let code = match mv {
                Move::Place(sq) => sq.byte(),
                Move::Pass => EDAX_PASS,
            };
            out.push((v.saturating_neg(), code));
        }
    }
    out
}

/// Score bounds as Edax keeps them: a searched leaf is within ± the midgame error,
/// an exact one is exact; a position's bounds are the best of its leaf's and its
/// children's (negated).
fn edax_bounds(
    board: &Board,
    by_key: &HashMap<u64, (Board, Record)>,
    memo: &mut HashMap<u64, (i16, i16)>,
) -> (i16, i16) {
    let key = board.key();
    if let Some(&b) = memo.get(&key) {
        return b;
    }
    let record = &by_key[&key].1;
    let (mut lower, mut upper) = match leaf_score(board, record.leaf_move, record.leaf_score) {
        Some(s) => {
            let s = i16::from(stored_score(s));
            let error = if record.leaf_exact() { 0 } else { EDAX_MIDGAME_ERROR };
            (s - error, s + error)
        }
        None => (i16::from(EDAX_NO_SCORE), i16::from(EDAX_NO_SCORE)),
    };
    for (_, child) in board.successors() {
        let canon = child.canonical().0;
        if by_key.contains_key(&canon.key()) {
            let (cl, cu) = edax_bounds(&canon, by_key, memo);
            lower = lower.max(-cu);
            upper = upper.max(-cl);
        }
    }
    memo.insert(key, (lower, upper));
    (lower, upper)
}

fn write_edax(positions: &[(Board, Record)], date: EdaxDate) -> Result<Vec<u8>, InterchangeError> {
    let count = position_count("Edax book.dat", positions.len())?;
    let by_key: HashMap<u64, (Board, Record)> = positions.iter().map(|(b, r)| (r.key, (*b, *r))).collect();
    let value_of = |k: u64| by_key.get(&k).map(|(_, r)| r.value);
    let mut out = Vec::with_capacity(EDAX_HEADER + positions.len() * (EDAX_POSITION + 8));
    out.extend_from_slice(EDAX_MAGIC);
    out.push(EDAX_VERSION);
    out.push(EDAX_RELEASE);
    let mut d = [0u8; 8];
    LE::write_i16(&mut d[0..2], date.year);
    d[2..7].copy_from_slice(&[date.month, date.day, date.hour, date.minute, date.second]);
    out.extend_from_slice(&d);
    let level = i32::from(positions.iter().map(|(_, r)| exchange_level(r)).max().unwrap_or(0));
    let deepest = i32::try_from(positions.iter().map(|(b, _)| b.empty_count()).min().unwrap_or(60)).unwrap_or(60);
    let (midgame_error, endcut_error) = (i32::from(EDAX_MIDGAME_ERROR), i32::from(EDAX_ENDCUT_ERROR));
    for v in [level, deepest, midgame_error, endcut_error, 0, count] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let mut memo = HashMap::new();
    for (board, r) in positions {
        let (lower, upper) = edax_bounds(board, &by_key, &mut memo);
        let links = links(board, &value_of);
        let mut fixed = [0u8; EDAX_POSITION];
        LE::write_u64(&mut fixed[0..8], board.player);
        LE::write_u64(&mut fixed[8..16], board.opponent);
        let losses = r.games.saturating_sub(r.wins).saturating_sub(u32::from(r.draws));
        LE::write_u32(&mut fixed[16..20], r.wins);
        LE::write_u32(&mut fixed[20..24], u32::from(r.draws));
        LE::write_u32(&mut fixed[24..28], losses);
        LE::write_u32(&mut fixed[28..32], r.games);
        let value = i16::from(r.value);
        LE::write_i16(&mut fixed[32..34], value);
        LE::write_i16(&mut fixed[34..36], lower.min(value));
        LE::write_i16(&mut fixed[36..38], upper.max(value));
        fixed[38] = u8::try_from(links.len()).expect("a board has at most 64 moves");
        fixed[39] = exchange_level(r);
        out.extend_from_slice(&fixed);
        for (score, mv) in &links {
            out.extend_from_slice(&[byte_of(*score), *mv]);
        }
        let linked = |code: u8| links.iter().any(|&(_, m)| m == code);
        let (score, mv) = match r.leaf_move {
            LeafMove::NONE if board.is_game_over() => (r.leaf_score, EDAX_NOMOVE),
            LeafMove::NONE => (EDAX_NO_SCORE, EDAX_NOMOVE),
            m if linked(if m == LeafMove::PASS { EDAX_PASS } else { m.byte() }) => (EDAX_NO_SCORE, EDAX_NOMOVE),
            LeafMove::PASS => (r.leaf_score, EDAX_PASS),
            m => (r.leaf_score, m.byte()),
        };
        out.extend_from_slice(&[byte_of(score), mv]);
    }
    Ok(out)
}

fn parse_edax(bytes: &[u8]) -> Result<Parsed, InterchangeError> {
    const F: &str = "Edax book.dat (Edax 4.4–4.6)";
    let declared = check_header(bytes, F, EDAX_HEADER, 8, EDAX_VERSION, 38)?;
    let level = LE::read_i32(&bytes[18..22]);
    let mut entries = Vec::with_capacity(declared.min(1 << 20));
    let mut at = EDAX_HEADER;
    let mut index = 0u64;
    while at < bytes.len() {
        let loc = |byte: usize| Location::Record { index, byte: byte as u64 };
        let truncated = |what: &str| InterchangeError::Truncated { format: F, at: loc(bytes.len()), what: what.into() };
        let bad = |byte: usize, what: String| InterchangeError::Invalid { format: F, at: loc(byte), what };
        if bytes.len() - at < EDAX_POSITION + 2 {
            return Err(truncated("the file ends inside a position"));
        }
        let p = &bytes[at..at + EDAX_POSITION];
        let n_links = p[38] as usize;
        let end = at + EDAX_POSITION + 2 * n_links + 2;
        if end > bytes.len() {
            return Err(truncated("the file ends inside a position's moves"));
        }
        let board = Board::new(LE::read_u64(&p[0..8]), LE::read_u64(&p[8..16]))
            .ok_or_else(|| bad(at, "a square holds discs of both sides".into()))?;
        if board.empties() & masks::CENTER != 0 {
            return Err(bad(at, "a centre square is empty: not an Othello position".into()));
        }
        let (canon, t) = board.canonical();
        let to_canon = |code: u8, byte: usize| -> Result<LeafMove, InterchangeError> {
            match code {
                EDAX_PASS => Ok(LeafMove::PASS),
                EDAX_NOMOVE => Ok(LeafMove::NONE),
                c => match Square::try_new(c) {
                    Some(sq) if board.is_legal(sq) => Ok(LeafMove::from(t.square(sq))),
                    _ => Err(bad(byte, format!("move code {c} is not a legal move, a pass (64) or none (65)"))),
                },
            }
        };
        for l in 0..n_links {
            let byte = at + EDAX_POSITION + 2 * l;
            to_canon(bytes[byte + 1], byte + 1)?;
        }
        let leaf_at = end - 2;
        let leaf_move = to_canon(bytes[leaf_at + 1], leaf_at + 1)?;
        let leaf_score = signed(bytes[leaf_at]);
        let value = LE::read_i16(&p[32..34]);
        let position_level = p[39];
        let (wins, draws, losses) = (LE::read_u32(&p[16..20]), LE::read_u32(&p[20..24]), LE::read_u32(&p[24..28]));
        if !leaf_move.is_none() && !(-64..=64).contains(&leaf_score) {
            return Err(bad(leaf_at, format!("leaf score {leaf_score} outside -64..64")));
        }
        let (leaf_move, leaf_score, leaf_depth, flags) = leaf_from_level(&canon, leaf_move, leaf_score, position_level);
        // A position without a backed-up value (Edax's -SCORE_INF) takes its leaf's.
        let value = match i8::try_from(value) {
            Ok(v) if (-64..=64).contains(&v) => v,
            _ if !leaf_move.is_none() || canon.is_game_over() => leaf_score,
            _ => return Err(bad(at + 32, format!("value {value} outside -64..64 and no leaf to take one from"))),
        };
        // thorbook counts games in a u32, like Edax each of the three.
        let games = wins.checked_add(draws).and_then(|n| n.checked_add(losses)).ok_or_else(|| {
            bad(at + 16, format!("{wins} wins, {draws} draws and {losses} losses: more than 2^32 - 1 games"))
        })?;
        entries.push((
            Some(canon),
            Record {
                key: canon.key(),
                value,
                leaf_move,
                leaf_score,
                leaf_depth,
                games,
                wins,
                draws: u16::try_from(draws).unwrap_or(u16::MAX),
                flags,
                leaf_selectivity: 0,
            },
        ));
        at = end;
        index += 1;
    }
    if usize::try_from(index) != Ok(declared) {
        return Err(InterchangeError::Truncated {
            format: F,
            at: Location::Header { byte: 38 },
            what: format!("the header announces {declared} positions, the file holds {index}"),
        });
    }
    let params = BuildParams {
        depth: u8::try_from(level.clamp(0, 60)).unwrap_or_default(),
        exact_at: 0,
        max_ply: deepest_ply(&entries),
        ..BuildParams::default()
    };
    let read = entries.len();
    Ok(Parsed { entries, params, read, values_stored: true, passes_folded: false })
}

fn parse_edax_text(bytes: &[u8]) -> Result<Parsed, InterchangeError> {
    const F: &str = "Edax text export";
    let text = utf8(bytes, F)?;
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = Location::Line(i as u64 + 1);
        let bad = |what: String| InterchangeError::Invalid { format: F, at, what };
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 4 {
            return Err(bad(format!("expected `board,level,move,score`, found {} fields", fields.len())));
        }
        let (black, white, side) = parse_squares(fields[0]).map_err(|e| bad(e.to_string()))?;
        let board = match parse_side(side.trim()).map_err(|e| bad(e.to_string()))? {
            Color::Black => Board { player: black, opponent: white },
            Color::White => Board { player: white, opponent: black },
        };
        if board.empties() & masks::CENTER != 0 {
            return Err(bad("a centre square is empty: not an Othello position".into()));
        }
        let level: u8 = fields[1]
            .parse()
            .ok()
            .filter(|&l| l <= 60)
            .ok_or_else(|| bad(format!("level `{}` is not 0..=60", fields[1])))?;
        let (canon, t) = board.canonical();
        let leaf_move = match fields[2].to_ascii_lowercase().as_str() {
            "--" | "" => LeafMove::NONE,
            "ps" | "pa" | "pass" => LeafMove::PASS,
            m => {
                let sq: Square = m.parse().map_err(|_| bad(format!("move `{m}` is not a square, PS or --")))?;
                if !board.is_legal(sq) {
                    return Err(bad(format!("move {m} is not legal in this position")));
                }
                LeafMove::from(t.square(sq))
            }
        };
        let score: i32 = fields[3].parse().map_err(|_| bad(format!("score `{}` is not a number", fields[3])))?;
        // Edax writes -127 for the score of a position without a leaf.
        let leaf_move = if (-64..=64).contains(&score) { leaf_move } else { LeafMove::NONE };
        let (leaf_move, leaf_score, leaf_depth, flags) = leaf_from_level(&canon, leaf_move, stored_score(score), level);
        entries.push((
            Some(canon),
            Record {
                key: canon.key(),
                value: leaf_score,
                leaf_move,
                leaf_score,
                leaf_depth,
                games: 0,
                wins: 0,
                draws: 0,
                flags,
                leaf_selectivity: 0,
            },
        ));
    }
    if entries.is_empty() {
        return Err(InterchangeError::Invalid { format: F, at: Location::Line(1), what: "no positions".into() });
    }
    let read = entries.len();
    Ok(Parsed { entries, params: BuildParams::default(), read, values_stored: false, passes_folded: false })
}

// ---- Egaroucid ----

const EGAROUCID_MAGIC: &[u8; 9] = b"DICUORAGE";
const EGAROUCID_VERSION: u8 = 3;
const EGAROUCID_HEADER: usize = 14;
const EGAROUCID_RECORD: usize = 25;
const EGAROUCID_PASS: i8 = 64;
const EGAROUCID_NOMOVE: i8 = 65;
const EGAROUCID_UNDEFINED_MOVE: i8 = 125;
const EGAROUCID_UNDEFINED_SCORE: i8 = -126;

/// Egaroucid numbers squares from the other end (bit 63 is a1). The 180° turn that
/// maps one numbering onto the other is one of the 8 symmetries, so the set of images
/// of a position is the same in both and a canonical board is written unchanged: it
/// denotes the turned position, which is the same book position, and moves keep their
/// bit numbers. Only the names of squares differ, never the bits.
fn write_egaroucid(positions: &[(Board, Record)]) -> Result<(Vec<u8>, usize), InterchangeError> {
    let kept: Vec<&(Board, Record)> = positions.iter().filter(|(b, _)| !b.must_pass()).collect();
    let count = position_count("Egaroucid .egbk3", kept.len())?;
    let mut out = Vec::with_capacity(EGAROUCID_HEADER + kept.len() * EGAROUCID_RECORD);
    out.extend_from_slice(EGAROUCID_MAGIC);
    out.push(EGAROUCID_VERSION);
    out.extend_from_slice(&count.to_le_bytes());
    for (board, r) in &kept {
        let mut b = [0u8; EGAROUCID_RECORD];
        LE::write_u64(&mut b[0..8], board.player);
        LE::write_u64(&mut b[8..16], board.opponent);
        b[16] = byte_of(r.value);
        let level = exchange_level(r);
        b[17] = level;
        LE::write_u32(&mut b[18..22], r.games);
        let (score, mv) = match r.leaf_move {
            LeafMove::NONE if board.is_game_over() => (r.leaf_score, EGAROUCID_NOMOVE),
            LeafMove::NONE => (EGAROUCID_UNDEFINED_SCORE, EGAROUCID_NOMOVE),
            LeafMove::PASS => (r.leaf_score, EGAROUCID_PASS),
            // A verified book's other codes are squares (below 64).
            m => (r.leaf_score, i8::try_from(m.byte()).unwrap_or(EGAROUCID_NOMOVE)),
        };
        b[22] = byte_of(score);
        b[23] = byte_of(mv);
        b[24] = level;
        out.extend_from_slice(&b);
    }
    Ok((out, kept.len()))
}

fn parse_egaroucid(bytes: &[u8]) -> Result<Parsed, InterchangeError> {
    const F: &str = "Egaroucid .egbk3";
    let declared = check_header(bytes, F, EGAROUCID_HEADER, 9, EGAROUCID_VERSION, 10)?;
    let body = &bytes[EGAROUCID_HEADER..];
    let expected = declared as u64 * EGAROUCID_RECORD as u64;
    if (body.len() as u64) < expected {
        let index = body.len() / EGAROUCID_RECORD;
        return Err(InterchangeError::Truncated {
            format: F,
            at: Location::Record { index: index as u64, byte: (EGAROUCID_HEADER + index * EGAROUCID_RECORD) as u64 },
            what: format!(
                "the header announces {declared} positions of {EGAROUCID_RECORD} bytes, the file holds {index}"
            ),
        });
    }
    if body.len() as u64 > expected {
        return Err(InterchangeError::Invalid {
            format: F,
            at: Location::Record { index: declared as u64, byte: EGAROUCID_HEADER as u64 + expected },
            what: format!("{} bytes after the {declared} positions the header announces", body.len() as u64 - expected),
        });
    }
    let mut entries = Vec::with_capacity(declared);
    for (index, rec) in body.chunks_exact(EGAROUCID_RECORD).enumerate() {
        let start = EGAROUCID_HEADER + index * EGAROUCID_RECORD;
        let bad = |off: usize, what: String| InterchangeError::Invalid {
            format: F,
            at: Location::Record { index: index as u64, byte: (start + off) as u64 },
            what,
        };
        let board = Board::new(LE::read_u64(&rec[0..8]), LE::read_u64(&rec[8..16]))
            .ok_or_else(|| bad(0, "a square holds discs of both sides".into()))?;
        if board.empties() & masks::CENTER != 0 {
            return Err(bad(0, "a centre square is empty: not an Othello position".into()));
        }
        let value = signed(rec[16]);
        if !(-64..=64).contains(&value) {
            return Err(bad(16, format!("value {value} outside -64..64")));
        }
        let level = signed(rec[17]);
        let (leaf_score, leaf_code, leaf_level) = (signed(rec[22]), signed(rec[23]), signed(rec[24]));
        let (canon, t) = board.canonical();
        let leaf = match leaf_code {
            EGAROUCID_NOMOVE | EGAROUCID_UNDEFINED_MOVE | -1 => None,
            _ if leaf_score == EGAROUCID_UNDEFINED_SCORE => None,
            EGAROUCID_PASS if board.must_pass() => Some(LeafMove::PASS),
            c => match u8::try_from(c).ok().and_then(Square::try_new) {
                Some(sq) if board.is_legal(sq) => Some(LeafMove::from(t.square(sq))),
                _ => return Err(bad(23, format!("leaf move code {c} is not a legal move, a pass or none"))),
            },
        };
        if leaf.is_some() && !(-64..=64).contains(&leaf_score) {
            return Err(bad(22, format!("leaf score {leaf_score} outside -64..64")));
        }
        let lv = u8::try_from(if leaf_level > 0 { leaf_level } else { level.max(0) }).unwrap_or_default();
        let (leaf_move, leaf_score, leaf_depth, flags) =
            leaf_from_level(&canon, leaf.unwrap_or(LeafMove::NONE), leaf_score, lv);
        entries.push((
            Some(canon),
            Record {
                key: canon.key(),
                value,
                leaf_move,
                leaf_score,
                leaf_depth,
                games: LE::read_u32(&rec[18..22]),
                wins: 0,
                draws: 0,
                flags,
                leaf_selectivity: 0,
            },
        ));
    }
    let read = entries.len();
    let max_ply = deepest_ply(&entries);
    Ok(Parsed {
        entries,
        params: BuildParams { max_ply, ..BuildParams::default() },
        read,
        values_stored: true,
        passes_folded: true,
    })
}
