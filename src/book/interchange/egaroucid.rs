//! Egaroucid's `.egbk3` books.

use byteorder::{ByteOrder, LittleEndian as LE};

use super::{
    byte_of, check_header, deepest_ply, exchange_level, leaf_from_level, position_count, signed, ImportFault,
    InterchangeError, Location, Parsed, Shortfall,
};
use crate::board::{masks, Board};
use crate::book::format::{BuildParams, LeafMove, Record};
use crate::square::Square;

pub(super) const EGAROUCID_MAGIC: &[u8; 9] = b"DICUORAGE";
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
pub(super) fn write_egaroucid(positions: &[(Board, Record)]) -> Result<(Vec<u8>, usize), InterchangeError> {
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

pub(super) fn parse_egaroucid(bytes: &[u8]) -> Result<Parsed, InterchangeError> {
    const F: &str = "Egaroucid .egbk3";
    let declared = check_header(bytes, F, EGAROUCID_HEADER, 9, EGAROUCID_VERSION, 10)?;
    let body = &bytes[EGAROUCID_HEADER..];
    let expected = declared as u64 * EGAROUCID_RECORD as u64;
    if (body.len() as u64) < expected {
        let index = body.len() / EGAROUCID_RECORD;
        return Err(InterchangeError::Truncated {
            format: F,
            at: Location::Record { index: index as u64, byte: (EGAROUCID_HEADER + index * EGAROUCID_RECORD) as u64 },
            what: Shortfall::Positions { declared: declared as u64, found: index as u64 },
        });
    }
    if body.len() as u64 > expected {
        return Err(InterchangeError::Invalid {
            format: F,
            at: Location::Record { index: declared as u64, byte: EGAROUCID_HEADER as u64 + expected },
            what: ImportFault::TrailingBytes { extra: body.len() as u64 - expected, declared: declared as u64 },
        });
    }
    let mut entries = Vec::with_capacity(declared);
    for (index, rec) in body.chunks_exact(EGAROUCID_RECORD).enumerate() {
        let start = EGAROUCID_HEADER + index * EGAROUCID_RECORD;
        let bad = |off: usize, what: ImportFault| InterchangeError::Invalid {
            format: F,
            at: Location::Record { index: index as u64, byte: (start + off) as u64 },
            what,
        };
        let board = Board::new(LE::read_u64(&rec[0..8]), LE::read_u64(&rec[8..16]))
            .ok_or_else(|| bad(0, ImportFault::BothColours))?;
        if board.empties() & masks::CENTER != 0 {
            return Err(bad(0, ImportFault::EmptyCentre));
        }
        let value = signed(rec[16]);
        if !(-64..=64).contains(&value) {
            return Err(bad(16, ImportFault::Score { field: "value", score: value.into() }));
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
                _ => return Err(bad(23, ImportFault::MoveCode { code: c.into() })),
            },
        };
        if leaf.is_some() && !(-64..=64).contains(&leaf_score) {
            return Err(bad(22, ImportFault::Score { field: "leaf score", score: leaf_score.into() }));
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
