//! thorbook's own text export: one record a line with its board, lossless (export
//! then import gives the same bytes).

use std::collections::HashMap;

use super::{utf8, ImportFault, InterchangeError, Location, Parsed};
use crate::board::{Board, Color};
use crate::book::format::{BackUpRule, BuildParams, LeafMove, Record, FLAG_LEAF_EXACT};
use crate::book::Book;
use crate::position::Position;
use crate::square::Move;

pub(super) const TEXT_FIRST_LINE: &str = "# thorbook book export";

pub(super) fn write_text<D: AsRef<[u8]>>(book: &Book<D>, boards: &HashMap<u64, Board>) -> String {
    let p = book.params();
    let mut text = format!(
        "{TEXT_FIRST_LINE}: key value leaf_move leaf_score leaf_depth exact games wins draws board leaf_selectivity\n\
         # params max_ply={} depth={} exact_at={} selectivity={} min_games={} eval={:08x} back_up={}\n",
        p.max_ply, p.depth, p.exact_at, p.selectivity_tenths, p.min_games, p.eval_digest, p.back_up
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
fn bounded_number<T: TryFrom<i64>>(text: &str, field: &'static str, lo: i64, hi: i64) -> Result<T, ImportFault> {
    let value: i64 = text.parse().map_err(|_| ImportFault::Syntax { field, expected: "a number" })?;
    let range = ImportFault::Range { field, value, lo, hi };
    if !(lo..=hi).contains(&value) {
        return Err(range);
    }
    // `lo..=hi` lies inside `T`'s range, so this holds; the error is the range's.
    T::try_from(value).map_err(|_| range)
}

pub(super) fn parse_text(bytes: &[u8]) -> Result<Parsed, InterchangeError> {
    const F: &str = "thorbook text export";
    let text = utf8(bytes, F)?;
    let mut params = BuildParams::default();
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = Location::Line(i as u64 + 1);
        let bad = |what: ImportFault| InterchangeError::Invalid { format: F, at, what };
        if let Some(rest) = line.strip_prefix("# params ") {
            for kv in rest.split_whitespace() {
                let (k, v) = kv
                    .split_once('=')
                    .ok_or_else(|| bad(ImportFault::Syntax { field: "a parameter", expected: "key=value" }))?;
                let byte = |field| bounded_number(v, field, 0, 255).map_err(&bad);
                match k {
                    "max_ply" => params.max_ply = byte("max_ply")?,
                    "depth" => params.depth = byte("depth")?,
                    "exact_at" => params.exact_at = byte("exact_at")?,
                    "selectivity" => params.selectivity_tenths = byte("selectivity")?,
                    "min_games" => {
                        params.min_games = bounded_number(v, "min_games", 0, u32::MAX.into()).map_err(&bad)?
                    }
                    "eval" => {
                        params.eval_digest = u32::from_str_radix(v, 16)
                            .map_err(|_| bad(ImportFault::Syntax { field: "eval", expected: "8 hex digits" }))?
                    }
                    "back_up" => {
                        params.back_up = match v {
                            "negamax" => BackUpRule::Negamax,
                            "corrected" => BackUpRule::Corrected,
                            _ => {
                                return Err(bad(ImportFault::Syntax {
                                    field: "back_up",
                                    expected: "negamax or corrected",
                                }))
                            }
                        }
                    }
                    _ => return Err(bad(ImportFault::UnknownParameter)),
                }
            }
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 9 {
            return Err(bad(ImportFault::Fields { expected: "at least 9", found: f.len() }));
        }
        let leaf_move = match f[2] {
            "-" => LeafMove::NONE,
            m => {
                LeafMove::of(m.parse::<Move>().map_err(|source| bad(ImportFault::Text { field: "leaf move", source }))?)
            }
        };
        let board = match f.get(9) {
            Some(&"?") | None => None,
            Some(b) => {
                let pos = Position::parse_board_text(&format!("{b} X"))
                    .map_err(|source| bad(ImportFault::Text { field: "board", source }))?;
                Some(pos.board)
            }
        };
        let key = u64::from_str_radix(f[0], 16)
            .map_err(|_| bad(ImportFault::Syntax { field: "key", expected: "16 hex digits" }))?;
        if let Some(b) = board {
            if b.key() != key || b.canonical().0 != b {
                return Err(bad(ImportFault::KeyMismatch { key }));
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
            return Err(bad(ImportFault::Counts { wins: record.wins, draws: record.draws, games: record.games }));
        }
        entries.push((board, record));
    }
    let read = entries.len();
    Ok(Parsed { entries, params, read, values_stored: true, passes_folded: false })
}
