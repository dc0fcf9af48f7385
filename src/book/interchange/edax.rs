//! Edax's binary `book.dat` (Edax 4.4–4.6) and its text export (`board,level,move,score`).

use std::collections::HashMap;

use byteorder::{ByteOrder, LittleEndian as LE};

use super::{
    byte_of, check_header, deepest_ply, exchange_level, leaf_from_level, position_count, signed, utf8, EdaxDate,
    ImportFault, InterchangeError, Location, Parsed, Shortfall,
};
use crate::board::{masks, Board, Color};
use crate::book::build::backup::LeafInput;
use crate::book::format::{stored_score, BuildParams, LeafMove, Record};
use crate::position::{parse_side, parse_squares};
use crate::square::{Move, Square};

/// `EDAX` then `BOOK` as little-endian u32s, as Edax writes them.
pub(super) const EDAX_MAGIC: &[u8; 8] = b"XADEKOOB";
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
    let (mut lower, mut upper) = match LeafInput::of(record).contribution(board) {
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

pub(super) fn write_edax(positions: &[(Board, Record)], date: EdaxDate) -> Result<Vec<u8>, InterchangeError> {
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

pub(super) fn parse_edax(bytes: &[u8]) -> Result<Parsed, InterchangeError> {
    const F: &str = "Edax book.dat (Edax 4.4–4.6)";
    let declared = check_header(bytes, F, EDAX_HEADER, 8, EDAX_VERSION, 38)?;
    let level = LE::read_i32(&bytes[18..22]);
    let mut entries = Vec::with_capacity(declared.min(1 << 20));
    let mut at = EDAX_HEADER;
    let mut index = 0u64;
    while at < bytes.len() {
        let loc = |byte: usize| Location::Record { index, byte: byte as u64 };
        let truncated = |what| InterchangeError::Truncated { format: F, at: loc(bytes.len()), what };
        let bad = |byte: usize, what: ImportFault| InterchangeError::Invalid { format: F, at: loc(byte), what };
        if bytes.len() - at < EDAX_POSITION + 2 {
            return Err(truncated(Shortfall::Position));
        }
        let p = &bytes[at..at + EDAX_POSITION];
        let n_links = p[38] as usize;
        let end = at + EDAX_POSITION + 2 * n_links + 2;
        if end > bytes.len() {
            return Err(truncated(Shortfall::Moves));
        }
        let board = Board::new(LE::read_u64(&p[0..8]), LE::read_u64(&p[8..16]))
            .ok_or_else(|| bad(at, ImportFault::BothColours))?;
        if board.empties() & masks::CENTER != 0 {
            return Err(bad(at, ImportFault::EmptyCentre));
        }
        let (canon, t) = board.canonical();
        let to_canon = |code: u8, byte: usize| -> Result<LeafMove, InterchangeError> {
            match code {
                EDAX_PASS => Ok(LeafMove::PASS),
                EDAX_NOMOVE => Ok(LeafMove::NONE),
                c => match Square::try_new(c) {
                    Some(sq) if board.is_legal(sq) => Ok(LeafMove::from(t.square(sq))),
                    _ => Err(bad(byte, ImportFault::MoveCode { code: c.into() })),
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
            return Err(bad(leaf_at, ImportFault::Score { field: "leaf score", score: leaf_score.into() }));
        }
        let (leaf_move, leaf_score, leaf_depth, flags) = leaf_from_level(&canon, leaf_move, leaf_score, position_level);
        // A position without a backed-up value (Edax's -SCORE_INF) takes its leaf's.
        let value = match i8::try_from(value) {
            Ok(v) if (-64..=64).contains(&v) => v,
            _ if !leaf_move.is_none() || canon.is_game_over() => leaf_score,
            _ => return Err(bad(at + 32, ImportFault::ValueWithoutLeaf { value })),
        };
        // thorbook counts games in a u32, like Edax each of the three.
        let games = wins
            .checked_add(draws)
            .and_then(|n| n.checked_add(losses))
            .ok_or_else(|| bad(at + 16, ImportFault::TooManyGames { wins, draws, losses }))?;
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
            what: Shortfall::Positions { declared: declared as u64, found: index },
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

pub(super) fn parse_edax_text(bytes: &[u8]) -> Result<Parsed, InterchangeError> {
    const F: &str = "Edax text export";
    let text = utf8(bytes, F)?;
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = Location::Line(i as u64 + 1);
        let bad = |what: ImportFault| InterchangeError::Invalid { format: F, at, what };
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 4 {
            return Err(bad(ImportFault::Fields { expected: "4 (board,level,move,score)", found: fields.len() }));
        }
        let board_text = |source| bad(ImportFault::Text { field: "board", source });
        let (black, white, side) = parse_squares(fields[0]).map_err(board_text)?;
        let board = match parse_side(side.trim()).map_err(board_text)? {
            Color::Black => Board { player: black, opponent: white },
            Color::White => Board { player: white, opponent: black },
        };
        if board.empties() & masks::CENTER != 0 {
            return Err(bad(ImportFault::EmptyCentre));
        }
        let level: u8 = fields[1]
            .parse()
            .ok()
            .filter(|&l| l <= 60)
            .ok_or_else(|| bad(ImportFault::Syntax { field: "level", expected: "0 to 60" }))?;
        let (canon, t) = board.canonical();
        let leaf_move = match fields[2].to_ascii_lowercase().as_str() {
            "--" | "" => LeafMove::NONE,
            "ps" | "pa" | "pass" => LeafMove::PASS,
            m => {
                let sq: Square = m
                    .parse()
                    .map_err(|_| bad(ImportFault::Syntax { field: "move", expected: "a square, PS or --" }))?;
                if !board.is_legal(sq) {
                    return Err(bad(ImportFault::IllegalMove { square: sq }));
                }
                LeafMove::from(t.square(sq))
            }
        };
        let score: i32 =
            fields[3].parse().map_err(|_| bad(ImportFault::Syntax { field: "score", expected: "a number" }))?;
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
        return Err(InterchangeError::Invalid { format: F, at: Location::Line(1), what: ImportFault::Empty });
    }
    let read = entries.len();
    Ok(Parsed { entries, params: BuildParams::default(), read, values_stored: false, passes_folded: false })
}
