//! Games written as text: GGF archives (GGS's `Othello.*.ggf`, one game per line, or
//! games spread over lines as NBoard writes them), transcripts (one game per line:
//! `f5d6c3…` or `F5 D6 C3 …`, an optional result after the moves), Logistello's
//! `.gam` book games (`+d3-c3+c4…: -04 10`) and JSON lines (thorbook's
//! `thor export --format jsonl` and `match --games-out`).
//!
//! Each reader streams its input line by line, so a compressed archive of millions of
//! games is never held whole in memory: what is kept per game is its move bytes, its
//! replay and ids into the file's own name tables. Every game is replayed as it is
//! read. A game that is damaged (cut, malformed, an illegal move) is an [`Anomaly`]
//! naming the file, the line, the byte and the ply; a game that is sound but not one
//! an 8×8 book can use (10×10, a random start, anti-Othello) is counted under its
//! [`SkipReason`].
// Input handling: every narrowing or sign-changing conversion is checked.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;

use rayon::prelude::*;
use serde::Serialize;

use super::database::ThorGame;
use super::format::RawGame;
use super::ggf::{self, GgfError, Tag};
use super::replay::{encode_square, Outcome, Replay};
use super::{Anomaly, AnomalyKind, IoStep, TextFault};
use crate::board::Color;
use crate::position::Position;
use crate::square::Move;

/// Why a sound game was left out: it is not a game an 8×8 book from the standard
/// start can use.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SkipReason {
    /// `GM` names another game.
    NotOthello,
    /// A board of another size (`TY[10]`, `BO[10 …]`).
    BoardSize(u8),
    /// GGS's random starts (`TY[8r18]`): the first moves are not played.
    RandomStart,
    /// A start position other than the standard one.
    NonStandardStart,
    /// Anti-Othello (`TY[a8]`): the moves aim the other way.
    AntiOthello,
    /// A komi game (`TY[k8]`): its result is not a disc count.
    Komi,
    /// Another variant letter in `TY`.
    Variant(char),
    /// No move was played (a game aborted at once).
    NoMoves,
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::NotOthello => write!(f, "not Othello"),
            SkipReason::BoardSize(n) => write!(f, "{n}x{n} board"),
            SkipReason::RandomStart => write!(f, "random start"),
            SkipReason::NonStandardStart => write!(f, "non-standard start"),
            SkipReason::AntiOthello => write!(f, "anti-Othello"),
            SkipReason::Komi => write!(f, "komi"),
            SkipReason::Variant(c) => write!(f, "variant `{c}`"),
            SkipReason::NoMoves => write!(f, "without a move"),
        }
    }
}

/// What one text file held.
#[derive(Default)]
pub(crate) struct TextFile {
    /// The games, as the database keeps them (file 0, `record` the line; names and
    /// events as ids into `names` and `events`): a million games are held once.
    pub games: Vec<ThorGame>,
    /// Player names, by the ids the games use.
    pub names: Vec<String>,
    /// Event (tournament, server) names.
    pub events: Vec<String>,
    pub anomalies: Vec<Anomaly>,
    pub skipped: BTreeMap<SkipReason, usize>,
}

/// The text formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TextFormat {
    /// GGF games.
    Ggf,
    /// One game per line as moves.
    Transcript,
    /// One JSON object per line with a `moves` field.
    Jsonl,
    /// Logistello's book games (`.gam`): one game per line, each move with its
    /// colour's sign (`+d3-c3+c4…`), then `:` and black's disc difference.
    Logistello,
}

/// A line-by-line reader that keeps the line number and byte offset and decodes each
/// line as UTF-8 (Latin-1 names in old files are kept as replacement characters).
struct Lines<R> {
    input: R,
    buf: Vec<u8>,
    line: u32,
    offset: usize,
}

impl<R: BufRead> Lines<R> {
    /// The next line without its end, its number and byte offset; `Err` for a read
    /// error (a cut or corrupt compressed stream).
    fn next_line(&mut self) -> Option<Result<(String, u32, usize), std::io::Error>> {
        self.buf.clear();
        match self.input.read_until(b'\n', &mut self.buf) {
            Ok(0) => None,
            Ok(n) => {
                let at = self.offset;
                self.offset += n;
                self.line = self.line.saturating_add(1);
                let text = String::from_utf8_lossy(&self.buf);
                Some(Ok((text.trim_end_matches(['\n', '\r']).to_string(), self.line, at)))
            }
            Err(e) => Some(Err(e)),
        }
    }
}

/// Builds a [`TextFile`]: interns names, records anomalies against the file's name.
struct Collector<'a> {
    name: &'a str,
    out: TextFile,
    names: HashMap<String, u32>,
    events: HashMap<String, u32>,
}

/// What a source says about a game besides its moves.
#[derive(Default)]
struct Facts<'t> {
    black: Option<&'t str>,
    white: Option<&'t str>,
    event: Option<&'t str>,
    year: Option<u16>,
    /// Black's disc difference as stated (`+12`, `38-26` …).
    result: Option<i32>,
    theoretical: Option<(u8, u8)>,
}

/// A name id of one table in another: `table[id]` (ids a merge gave the names).
fn remap(table: &[Option<u32>], id: Option<u32>) -> Option<u32> {
    id.and_then(|i| table.get(i as usize).copied().flatten())
}

/// Joins the names of a part of the games (`names`, `events`) into whole tables
/// (`players`, `tournaments`, each a name index and its list) and rewrites the part's
/// games to the whole's ids.
pub(crate) fn join_names(
    games: &mut [ThorGame],
    (names, events): (&[String], &[String]),
    players: (&mut HashMap<String, u32>, &mut Vec<String>),
    tournaments: (&mut HashMap<String, u32>, &mut Vec<String>),
) {
    let players: Vec<Option<u32>> = names.iter().map(|n| intern(players.0, players.1, n)).collect();
    let events: Vec<Option<u32>> = events.iter().map(|n| intern(tournaments.0, tournaments.1, n)).collect();
    for g in games {
        g.black = remap(&players, g.black);
        g.white = remap(&players, g.white);
        g.tournament = remap(&events, g.tournament);
    }
}

/// The id of `name` in `list` (found through `table`), adding it when new; `None` for
/// a name that says nothing (empty, `?`). Control characters become spaces: a name is
/// text, and written into a GGF line a NUL or a line break would make the file one no
/// reader takes.
pub(crate) fn intern(table: &mut HashMap<String, u32>, list: &mut Vec<String>, name: &str) -> Option<u32> {
    let cleaned;
    let name = if name.contains(char::is_control) {
        cleaned = name.replace(char::is_control, " ");
        cleaned.trim()
    } else {
        name
    };
    if name.is_empty() || name == "?" {
        return None;
    }
    if let Some(&id) = table.get(name) {
        return Some(id);
    }
    let id = u32::try_from(list.len()).ok()?;
    list.push(name.to_string());
    table.insert(name.to_string(), id);
    Some(id)
}

impl<'a> Collector<'a> {
    fn new(name: &'a str) -> Self {
        Collector { name, out: TextFile::default(), names: HashMap::new(), events: HashMap::new() }
    }

    /// Adds what another collector read of the same file after this one's records.
    fn absorb(&mut self, mut part: TextFile) {
        join_names(
            &mut part.games,
            (&part.names, &part.events),
            (&mut self.names, &mut self.out.names),
            (&mut self.events, &mut self.out.events),
        );
        self.out.games.append(&mut part.games);
        self.out.anomalies.extend(part.anomalies);
        for (reason, n) in part.skipped {
            *self.out.skipped.entry(reason).or_default() += n;
        }
    }

    fn anomaly(&mut self, line: u32, offset: usize, ply: Option<usize>, kind: AnomalyKind) {
        self.out.anomalies.push(Anomaly::at_line(self.name, line, offset, ply, kind));
    }

    fn syntax(&mut self, line: u32, offset: usize, fault: TextFault) {
        self.anomaly(line, offset, None, AnomalyKind::Syntax { fault });
    }

    fn skip(&mut self, reason: SkipReason) {
        *self.out.skipped.entry(reason).or_default() += 1;
    }

    /// Replays `moves` (each with the colour the source gave it, if any, and the byte
    /// where it is written) and adds the game, or records why it cannot be.
    fn add(&mut self, line: u32, line_offset: usize, moves: &[(Option<Color>, Move, usize)], facts: Facts<'_>) {
        if moves.iter().all(|m| m.1 == Move::Pass) {
            return self.skip(SkipReason::NoMoves);
        }
        let mut pos = Position::START;
        let mut bytes = [0u8; 60];
        let mut placed = 0;
        // The game as WTHOR's replay sees it: passes are those before a placed move
        // (written or not), and it ends at the last placed move.
        let (mut passes, mut last) = (0u8, Position::START);
        for (i, &(color, mv, at)) in moves.iter().enumerate() {
            let fault = |kind| (i + 1, at, kind);
            let step = (|| {
                if pos.board.is_game_over() {
                    return match mv {
                        // A pass written after the last move changes nothing.
                        Move::Pass => Ok(None),
                        Move::Place(square) => Err(fault(AnomalyKind::AfterGameOver { square })),
                    };
                }
                if let Some(c) = color {
                    if c != pos.side {
                        // A source that names colours may leave a forced pass out.
                        match pos.for_side(c) {
                            Some(p) if mv != Move::Pass => pos = p,
                            _ => return Err(fault(AnomalyKind::WrongSide { expected: pos.side, found: c })),
                        }
                    }
                }
                match mv {
                    Move::Pass if pos.board.legal_moves() != 0 => {
                        Err(fault(AnomalyKind::PassWithMoves { color: pos.side }))
                    }
                    Move::Pass => Ok(Some(pos.pass())),
                    Move::Place(square) => {
                        let at_pos = pos.with_inferred_pass(mv);
                        match at_pos.board.play(square) {
                            Some(board) => {
                                bytes[placed] = encode_square(square);
                                placed += 1;
                                passes += u8::from(at_pos.side != last.side);
                                last = Position { board, side: !at_pos.side };
                                Ok(Some(last))
                            }
                            None if at_pos.board.empties() & square.bit() == 0 => {
                                Err(fault(AnomalyKind::Occupied { square }))
                            }
                            None => Err(fault(AnomalyKind::Illegal { square, color: at_pos.side })),
                        }
                    }
                }
            })();
            match step {
                Ok(Some(next)) => pos = next,
                Ok(None) => {}
                Err((ply, at, kind)) => return self.anomaly(line, at, Some(ply), kind),
            }
        }
        let mut raw = RawGame { tournament: 0, black: 0, white: 0, black_score: 0, theoretical_score: 0, moves: bytes };
        let move_count = u8::try_from(placed).unwrap_or(60);
        let replay = Replay { move_count, passes, outcome: Outcome::at(&last.board), last };
        let (replayed, finished) = (replay.black_final_discs(), replay.outcome.is_finished());
        let stated = match facts.result {
            Some(diff) if finished => {
                // Some servers leave the empties of an early finish uncounted.
                let plain = i32::try_from(pos.black().count_ones()).unwrap_or(0)
                    - i32::try_from(pos.white().count_ones()).unwrap_or(0);
                let full = 2 * i32::from(replayed) - 64;
                if diff != plain && diff != full {
                    let stated = u8::try_from((64 + diff.clamp(-64, 64)) / 2).unwrap_or(0);
                    return self.anomaly(
                        line,
                        line_offset,
                        None,
                        AnomalyKind::ScoreMismatch { stored: stated, replayed },
                    );
                }
                Some(replayed)
            }
            Some(diff) if (-64..=64).contains(&diff) && diff.rem_euclid(2) == 0 => u8::try_from((64 + diff) / 2).ok(),
            Some(_) => None,
            None => finished.then_some(replayed),
        };
        raw.black_score = stated.unwrap_or(32);
        let depth = facts.theoretical.map(|(score, depth)| {
            raw.theoretical_score = score;
            depth
        });
        let black = facts.black.and_then(|n| intern(&mut self.names, &mut self.out.names, n));
        let white = facts.white.and_then(|n| intern(&mut self.names, &mut self.out.names, n));
        let event = facts.event.and_then(|n| intern(&mut self.events, &mut self.out.events, n));
        self.out.games.push(ThorGame {
            file: 0,
            record: line,
            year: facts.year.unwrap_or(0),
            depth: depth.unwrap_or(0),
            black,
            white,
            tournament: event,
            result_known: stated.is_some(),
            raw,
            replay,
        });
    }
}

/// What the splitter hands the parsers: a record (a GGF game, a line), or a problem
/// found while splitting.
enum Item {
    Record { text: String, line: u32, offset: usize },
    Problem { line: u32, offset: usize, kind: AnomalyKind },
}

/// Records handed over at a time, and parsed by one task.
const BATCH: usize = 4096;
const TASK: usize = 256;

/// Reads text games of `format` from `input`; `name` labels anomalies. One thread
/// reads (and decompresses) and splits the text into records while the others parse
/// and replay batches of them; the result is the same as reading in one pass.
pub(crate) fn read(name: &str, format: TextFormat, input: impl BufRead + Send) -> TextFile {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Item>>(4);
    std::thread::scope(|scope| {
        let splitter = scope.spawn(move || {
            let mut lines = Lines { input, buf: Vec::new(), line: 0, offset: 0 };
            let mut batch = Vec::with_capacity(BATCH);
            let mut emit = |item| {
                batch.push(item);
                if batch.len() == BATCH {
                    // A closed receiver only means the reader gave up: nothing to do.
                    let _ = tx.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
                }
            };
            match format {
                TextFormat::Ggf => split_ggf(&mut lines, &mut emit),
                TextFormat::Transcript | TextFormat::Jsonl | TextFormat::Logistello => {
                    split_lines(&mut lines, &mut emit)
                }
            }
            if !batch.is_empty() {
                let _ = tx.send(batch);
            }
        });
        let mut whole = Collector::new(name);
        for batch in rx {
            let parts: Vec<TextFile> = batch
                .par_chunks(TASK)
                .map(|items| {
                    let mut c = Collector::new(name);
                    for item in items {
                        parse_item(&mut c, format, item);
                    }
                    c.out
                })
                .collect();
            for part in parts {
                whole.absorb(part);
            }
        }
        // Joined, not only finished: a scope waits for its threads' closures, not for
        // the threads to exit, and a thread still running its thread-locals'
        // destructors after `read` returned is what LeakSanitizer reported under the
        // fuzzers (32 bytes from `__cxa_thread_atexit_impl`, now and then).
        if let Err(panic) = splitter.join() {
            std::panic::resume_unwind(panic);
        }
        whole.out
    })
}

fn parse_item(c: &mut Collector<'_>, format: TextFormat, item: &Item) {
    match item {
        Item::Problem { line, offset, kind } => c.anomaly(*line, *offset, None, kind.clone()),
        Item::Record { text, line, offset } => match format {
            TextFormat::Ggf => ggf_game(c, text, *line, *offset),
            TextFormat::Transcript => transcript_line(c, text, *line, *offset),
            TextFormat::Jsonl => json_line(c, text, *line, *offset),
            TextFormat::Logistello => logistello_line(c, text, *line, *offset),
        },
    }
}

fn read_failed(line: u32, offset: usize, e: &std::io::Error) -> Item {
    Item::Problem { line, offset, kind: AnomalyKind::io(IoStep::Continue, e) }
}

fn split_lines<R: BufRead>(lines: &mut Lines<R>, emit: &mut dyn FnMut(Item)) {
    while let Some(next) = lines.next_line() {
        match next {
            Ok((text, line, offset)) => emit(Item::Record { text, line, offset }),
            Err(e) => return emit(read_failed(lines.line.saturating_add(1), lines.offset, &e)),
        }
    }
}

/// A transcript line: moves (pairs like `f5`, `F5`, passes `PA`, `ps`, `--`, with
/// or without spaces), then optionally a result (`+12`, `-4`, `0`, `38-26`, `B+12`,
/// `W+4`, `draw`). Blank lines and lines starting `#`, `%` or `;` are comments.
fn transcript_line(c: &mut Collector<'_>, text: &str, line: u32, offset: usize) {
    let trimmed = text.trim_start();
    if trimmed.is_empty() || trimmed.starts_with(['#', '%', ';']) {
        return;
    }
    let mut moves = Vec::with_capacity(64);
    let mut words = Vec::new();
    let mut pos = 0;
    for word in text.split_whitespace() {
        let at = pos + text[pos..].find(word).unwrap_or(0);
        pos = at + word.len();
        words.push((word, at));
    }
    let mut rest = words.as_slice();
    while let Some(&(word, at)) = rest.first() {
        match split_moves(word) {
            Some(ms) => moves.extend(ms.into_iter().enumerate().map(|(k, m)| (None, m, offset + at + 2 * k))),
            None => break,
        }
        rest = &rest[1..];
    }
    let result = match rest {
        [] => None,
        [(word, at)] => match parse_result(word) {
            Some(r) => Some(r),
            None => return c.syntax(line, offset + at, TextFault::NotMovesNorResult),
        },
        [_, (_, at), ..] => return c.syntax(line, offset + at, TextFault::AfterResult),
    };
    // A result alone is a game without a move (as a WTHOR record may be).
    c.add(line, offset, &moves, Facts { result, ..Facts::default() });
}

/// A word of moves (`f5d6c3`, `F5`, `PA`, `--`), or `None` when it is not all moves.
fn split_moves(word: &str) -> Option<Vec<Move>> {
    let b = word.as_bytes();
    if !b.len().is_multiple_of(2) || b.is_empty() {
        return None;
    }
    b.chunks(2).map(|pair| std::str::from_utf8(pair).ok()?.parse::<Move>().ok()).collect()
}

/// A result as black's disc difference.
fn parse_result(word: &str) -> Option<i32> {
    let lower = word.to_ascii_lowercase();
    if lower == "draw" || lower == "=" {
        return Some(0);
    }
    if let Some(n) = lower.strip_prefix("b+") {
        return n.parse::<i32>().ok().filter(|n| (0..=64).contains(n));
    }
    if let Some(n) = lower.strip_prefix("w+") {
        return n.parse::<i32>().ok().filter(|n| (0..=64).contains(n)).map(|n| -n);
    }
    if let Some((b, w)) = lower.split_once('-').filter(|(b, _)| !b.is_empty()) {
        let (b, w) = (b.parse::<i32>().ok()?, w.parse::<i32>().ok()?);
        return ((0..=64).contains(&b) && (0..=64).contains(&w) && b + w <= 64).then(|| {
            // Empties go to the winner, as WTHOR counts.
            let empties = 64 - b - w;
            let b = b + if b > w {
                empties
            } else if b == w {
                empties / 2
            } else {
                0
            };
            2 * b - 64
        });
    }
    lower.parse::<i32>().ok().filter(|n| (-64..=64).contains(n))
}

/// A line of Logistello's book (`.gam`): `+d3-c3+c4…: -04 10`. Each move carries its
/// colour (`+` black, `-` white), so a pass is two moves of one sign in a row; after
/// the `:` comes black's disc difference at the end, then a number Logistello kept
/// for itself (always 10 in the published book), which is ignored. Blank lines and
/// lines starting `#`, `%` or `;` are comments.
fn logistello_line(c: &mut Collector<'_>, text: &str, line: u32, offset: usize) {
    let trimmed = text.trim_start();
    if trimmed.is_empty() || trimmed.starts_with(['#', '%', ';']) {
        return;
    }
    let lead = text.len() - trimmed.len();
    let (moves_text, tail) = match trimmed.split_once(':') {
        Some((m, t)) => (m.trim_end(), Some(t)),
        None => (trimmed.trim_end(), None),
    };
    let bytes = moves_text.as_bytes();
    let mut moves = Vec::with_capacity(61);
    let mut at = 0;
    while at < bytes.len() {
        let byte = offset + lead + at;
        let color = match bytes[at] {
            b'+' => Color::Black,
            b'-' => Color::White,
            _ => return c.syntax(line, byte, TextFault::NotAMoveAt { ply: moves.len() + 1 }),
        };
        let square = moves_text.get(at + 1..at + 3).and_then(|sq| sq.parse::<Move>().ok());
        match square {
            Some(mv @ Move::Place(_)) => moves.push((Some(color), mv, byte)),
            _ => return c.syntax(line, byte, TextFault::NotAMoveAt { ply: moves.len() + 1 }),
        }
        at += 3;
    }
    let result = match tail.map(str::split_whitespace).and_then(|mut words| words.next()) {
        None => None,
        Some(word) => match word.parse::<i32>().ok().filter(|d| (-64..=64).contains(d)) {
            Some(diff) => Some(diff),
            None => {
                let at = offset + lead + moves_text.len() + text[lead + moves_text.len()..].find(word).unwrap_or(0);
                return c.syntax(line, at, TextFault::Result);
            }
        },
    };
    c.add(line, offset, &moves, Facts { result, ..Facts::default() });
}

/// A JSON line: `moves` (required), and what else thorbook writes: `black`, `white`,
/// `tournament`, `year`, `black_score` (black's discs; in `match --games-out`, which
/// has `a_color`, black's disc difference), `theoretical_score`, `theoretical_depth`.
fn json_line(c: &mut Collector<'_>, text: &str, line: u32, offset: usize) {
    if text.trim().is_empty() {
        return;
    }
    let v: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return c.syntax(line, offset + e.column().saturating_sub(1), TextFault::NotJson),
    };
    let Some(moves_text) = v.get("moves").and_then(|m| m.as_str()) else {
        return c.syntax(line, offset, TextFault::NoMovesField);
    };
    let moves = match crate::square::parse_move_sequence(moves_text) {
        Ok(m) => m,
        Err(e) => return c.syntax(line, offset, TextFault::Moves(e)),
    };
    let str_field = |k: &str| v.get(k).and_then(|x| x.as_str()).filter(|s| !s.is_empty());
    let int_field = |k: &str| v.get(k).and_then(serde_json::Value::as_i64);
    let small = |k: &str| int_field(k).and_then(|x| u8::try_from(x).ok()).filter(|&x| x <= 64);
    // Out of range is no result (`add` checks a stated result against the board).
    let result = match int_field("black_score") {
        Some(diff) if v.get("a_color").is_some() => i32::try_from(diff).ok().filter(|d| (-64..=64).contains(d)),
        Some(discs) => i32::try_from(discs).ok().filter(|d| (0..=64).contains(d)).map(|d| 2 * d - 64),
        None => None,
    };
    let theoretical = small("theoretical_score").zip(small("theoretical_depth"));
    let facts = Facts {
        black: str_field("black"),
        white: str_field("white"),
        event: str_field("tournament"),
        year: int_field("year").and_then(|y| u16::try_from(y).ok()),
        result,
        theoretical,
    };
    let moves: Vec<_> = moves.into_iter().map(|m| (None, m, offset)).collect();
    c.add(line, offset, &moves, facts);
}

fn split_ggf<R: BufRead>(lines: &mut Lines<R>, emit: &mut dyn FnMut(Item)) {
    let outside =
        |line, offset| Item::Problem { line, offset, kind: AnomalyKind::Syntax { fault: TextFault::OutsideGame } };
    // A game may span lines: text from its `(;` is kept until its `;)`.
    let mut pending = String::new();
    let (mut start_line, mut start_offset) = (0u32, 0usize);
    loop {
        let (text, line, offset) = match lines.next_line() {
            Some(Ok(l)) => l,
            Some(Err(e)) => {
                emit(read_failed(lines.line.saturating_add(1), lines.offset, &e));
                break;
            }
            None => break,
        };
        let mut rest = text.as_str();
        let mut rest_offset = offset;
        if !pending.is_empty() {
            pending.push('\n');
            let already = pending.len();
            pending.push_str(rest);
            match ggf::game_end(pending.as_bytes(), 0) {
                Some(end) => {
                    let mut game = std::mem::take(&mut pending);
                    game.truncate(end);
                    emit(Item::Record { text: game, line: start_line, offset: start_offset });
                    let used = end - already;
                    rest = &rest[used.min(rest.len())..];
                    rest_offset += used;
                }
                None => continue,
            }
        }
        while let Some(at) = rest.find("(;") {
            if !rest[..at].trim().is_empty() {
                emit(outside(line, rest_offset));
            }
            match ggf::game_end(rest.as_bytes(), at) {
                Some(end) => {
                    emit(Item::Record { text: rest[at..end].to_string(), line, offset: rest_offset + at });
                    rest_offset += end;
                    rest = &rest[end..];
                }
                None => {
                    pending = rest[at..].to_string();
                    (start_line, start_offset) = (line, rest_offset + at);
                    rest = "";
                }
            }
        }
        if !rest.trim().is_empty() {
            emit(outside(line, rest_offset));
        }
    }
    if !pending.is_empty() {
        emit(Item::Problem {
            line: start_line,
            offset: start_offset,
            kind: AnomalyKind::Syntax { fault: TextFault::Cut },
        });
    }
}

/// The year of a GGF date: `2003.09.13_20:40:34.UTC`, `2014-02-21 20:52:27 GMT`, or
/// seconds since 1970.
fn ggf_year(date: &str) -> Option<u16> {
    let date = date.trim();
    let digits = date.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 4 && matches!(date.as_bytes().get(4), Some(b'.' | b'-' | b'/') | None) {
        return date[..4].parse().ok();
    }
    if digits >= 9 && digits == date.len() {
        let days = date.parse::<i64>().ok()? / 86_400;
        return u16::try_from(crate::fileio::civil_from_days(days).0).ok();
    }
    None
}

/// What `TY` says: the board size and variant letters (`8`, `s8r20`, `k8`, `a10`).
fn ggf_type(ty: &str) -> Result<(), SkipReason> {
    let ty = ty.trim();
    let digits: String = ty.chars().skip_while(|c| !c.is_ascii_digit()).take_while(char::is_ascii_digit).collect();
    let size = digits.parse::<u8>().unwrap_or(8);
    if size != 8 {
        return Err(SkipReason::BoardSize(size));
    }
    for ch in ty.chars().filter(char::is_ascii_alphabetic) {
        match ch.to_ascii_lowercase() {
            // Synchro games are two ordinary games played at once.
            's' => {}
            'r' => return Err(SkipReason::RandomStart),
            'a' => return Err(SkipReason::AntiOthello),
            'k' => return Err(SkipReason::Komi),
            other => return Err(SkipReason::Variant(other)),
        }
    }
    Ok(())
}

/// GGS's result: black's disc difference (`+30.000`, `-2`), `None` for `?` or a game
/// decided otherwise (`:t` time, `:r` resignation, `:s` by agreement).
fn ggf_result(re: &str) -> Result<Option<i32>, ()> {
    let re = re.trim();
    if re.is_empty() || re == "?" || re.contains(':') {
        return Ok(None);
    }
    let value: f64 = re.parse().map_err(|_| ())?;
    if !(-64.0..=64.0).contains(&value) || value.fract() != 0.0 {
        return Err(());
    }
    // In range and whole: the conversion is exact.
    #[allow(clippy::cast_possible_truncation)]
    Ok(Some(value as i32))
}

fn ggf_game(c: &mut Collector<'_>, game: &str, line: u32, offset: usize) {
    let tags = match ggf::tags(game, 0) {
        Ok((tags, _)) => tags,
        Err(GgfError { offset: at, fault, .. }) => return c.syntax(line, offset + at, fault),
    };
    let find = |name: &str| tags.iter().find(|t| t.name == name);
    if find("GM").is_some_and(|t| !t.value.trim().eq_ignore_ascii_case("othello")) {
        return c.skip(SkipReason::NotOthello);
    }
    if let Some(Err(reason)) = find("TY").map(|t| ggf_type(&t.value)) {
        return c.skip(reason);
    }
    if let Some(bo) = find("BO") {
        let size = bo.value.split_whitespace().next().unwrap_or("");
        if size != "8" {
            return match size.parse::<u8>() {
                Ok(n) => c.skip(SkipReason::BoardSize(n)),
                Err(_) => c.syntax(line, offset + bo.offset, TextFault::BoardSize),
            };
        }
        match ggf::parse_board(&bo.value, bo.offset) {
            Ok(p) if p == Position::START => {}
            Ok(_) => return c.skip(SkipReason::NonStandardStart),
            Err(e) => return c.syntax(line, offset + e.offset, e.fault),
        }
    }
    let result = match find("RE").map(|t| (ggf_result(&t.value), t)) {
        Some((Ok(r), _)) => r,
        Some((Err(()), t)) => return c.syntax(line, offset + t.offset, TextFault::Result),
        None => None,
    };
    let mut moves = Vec::with_capacity(64);
    for Tag { name, value, offset: at } in &tags {
        let color = match *name {
            "B" => Color::Black,
            "W" => Color::White,
            _ => continue,
        };
        // `f5/eval/time`: the move is what comes before the first `/`.
        let word = value.split('/').next().unwrap_or("").trim();
        match word.parse::<Move>() {
            Ok(mv) => moves.push((Some(color), mv, offset + at)),
            Err(_) => {
                let ply = moves.len() + 1;
                return c.anomaly(line, offset + at, Some(ply), AnomalyKind::Syntax { fault: TextFault::NotAMove });
            }
        }
    }
    let text = |name| find(name).map(|t: &Tag<'_>| t.value.trim()).filter(|v| !v.is_empty());
    let facts = Facts {
        black: text("PB"),
        white: text("PW"),
        event: text("PC"),
        year: text("DT").and_then(ggf_year),
        result,
        theoretical: None,
    };
    c.add(line, offset, &moves, facts);
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
