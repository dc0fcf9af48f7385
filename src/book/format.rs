//! The book file: a 64-byte header, fixed-width 16-byte records sorted by key, a table
//! of the game counts too large for a record, and a checksum per block of records, read
//! straight from a memory map (no parsing, no index: a probe is a search over the
//! sorted keys, which checks the blocks it reads); and the one encoder every writer
//! uses. The layout is specified in `book-format.md`; this module is its reference
//! implementation.

use byteorder::{ByteOrder, LittleEndian as LE};

mod error;
#[cfg(test)]
mod tests;
use crate::board::Board;
use crate::square::{Move, Square};
pub use error::{BookError, BookRegion, CountsFault, FieldFault};

/// File magic.
pub(crate) const MAGIC: [u8; 8] = *b"THORBOOK";
/// Format version this code writes. Versions 1 and 2 (24-byte records) are still read.
pub(crate) const VERSION: u32 = 3;
/// The oldest version this code reads.
pub(crate) const OLDEST_VERSION: u32 = 1;
/// Header bytes.
pub(crate) const HEADER_LEN: usize = 64;
/// Bytes per record (version 3).
pub(crate) const RECORD_LEN: usize = 16;
/// Bytes per record of versions 1 and 2: also the lossless form in which a book being
/// written spools its records, and what a book's records digest is made of.
pub(crate) const WIDE_RECORD_LEN: usize = 24;
/// Bytes per entry of the count table (the game counts too large for a record).
pub(crate) const COUNTS_LEN: usize = 20;
/// Bytes per entry of the block checksum table (a CRC-32).
pub(crate) const CHECKSUM_LEN: usize = 4;
/// Records per checksummed block, as a power of two: 256 records, 4 KiB, a page, so
/// that a probe checks what it reads (a page or two) and no more: with 64 KiB blocks a
/// `book query` on a 10^8-position book hashed 468 MB of blocks for its few thousand
/// probes.
pub(crate) const BLOCK_LOG2: u8 = 8;
/// The block sizes a reader accepts (a power of two of records).
pub(crate) const BLOCK_LOG2_RANGE: std::ops::RangeInclusive<u8> = 4..=24;
const HEADER_LEN_U32: u32 = 64;
const RECORD_LEN_U32: u32 = 16;

/// Leaf flag: the leaf score is exact (solved to the end).
pub const FLAG_LEAF_EXACT: u8 = 1;

/// Bytes 11..16 of a version 3 record, one 40-bit little-endian field: the leaf's
/// level (depth, exact flag, selectivity) and the game counts. Games of
/// [`COUNTS_ELSEWHERE`] say that the counts are in the count table instead (and the
/// record's wins and draws are 0).
const DEPTH_BITS: u32 = 6;
const EXACT_SHIFT: u32 = 6;
const SELECTIVITY_SHIFT: u32 = 7;
const SELECTIVITY_BITS: u32 = 7;
const GAMES_SHIFT: u32 = 14;
const GAMES_BITS: u32 = 10;
const WINS_SHIFT: u32 = 24;
const WINS_BITS: u32 = 10;
const DRAWS_SHIFT: u32 = 34;
const DRAWS_BITS: u32 = 6;
const COUNTS_ELSEWHERE: u64 = (1 << GAMES_BITS) - 1;

/// Bits `shift..shift + bits` of `field`.
fn bits(field: u64, shift: u32, bits: u32) -> u64 {
    (field >> shift) & ((1 << bits) - 1)
}

/// The best move leaving the book from a position, as stored (byte 9 of a record): a
/// square of the canonical orientation (0..64), a pass (64), or none (255: every move
/// is in the book, or the game is over). It keeps the stored byte as it is — a
/// damaged book's too, so records round-trip byte for byte; [`Record::leaf`] reads
/// only the valid codes and [`Book::verify`](super::Book::verify) refuses the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LeafMove(u8);

impl LeafMove {
    /// No move leaves the book (every move is in it, or the game is over). Public with
    /// `PASS` and `From<Square>` so that a record of every kind can be written outside
    /// the crate, `Record`'s fields being public.
    pub const NONE: LeafMove = LeafMove(255);
    /// The side to move passes.
    pub const PASS: LeafMove = LeafMove(64);

    /// A move (in canonical orientation).
    pub(crate) fn of(mv: Move) -> LeafMove {
        match mv {
            Move::Pass => LeafMove::PASS,
            Move::Place(sq) => LeafMove(sq.byte()),
        }
    }

    /// The stored byte, whatever it holds.
    pub(crate) const fn from_byte(byte: u8) -> LeafMove {
        LeafMove(byte)
    }

    /// The byte to store.
    pub(crate) const fn byte(self) -> u8 {
        self.0
    }

    /// Whether no move leaves the book.
    pub(crate) fn is_none(self) -> bool {
        self == LeafMove::NONE
    }

    /// Whether the code is a square, a pass or none.
    pub(crate) fn is_valid(self) -> bool {
        self.0 <= LeafMove::PASS.0 || self.is_none()
    }

    /// The move; `None` for no move and for a code that is not valid.
    pub(crate) fn get(self) -> Option<Move> {
        match self {
            LeafMove::PASS => Some(Move::Pass),
            LeafMove(code) => Square::try_new(code).map(Move::Place),
        }
    }
}

impl From<Square> for LeafMove {
    fn from(sq: Square) -> LeafMove {
        LeafMove(sq.byte())
    }
}

/// Where record `index` starts in a book file of the current version.
pub(crate) fn record_offset(index: u64) -> u64 {
    (HEADER_LEN as u64).saturating_add(index.saturating_mul(RECORD_LEN as u64))
}

/// A disc score as a record stores it. Scores come from searches and final disc counts,
/// which stay within −64..=64; the clamp keeps a record valid whatever it is given.
pub(crate) fn stored_score(score: i32) -> i8 {
    i8::try_from(score.clamp(-64, 64)).unwrap_or_default()
}

/// How the book was built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
pub struct BuildParams {
    /// Positions were collected up to this ply (moves and passes from the start).
    pub max_ply: u8,
    /// Leaves were searched to this depth (0: by time).
    pub depth: u8,
    /// Positions with at most this many empties were solved exactly.
    pub exact_at: u8,
    /// Positions reached by fewer games were left out.
    pub min_games: u32,
    /// Multi-ProbCut selectivity of the leaf searches in tenths of a standard
    /// deviation (0: full width).
    pub selectivity_tenths: u8,
    /// Digest of the evaluation that scored the leaves (the weight file's CRC-32;
    /// 0: not recorded, as in books written before this field).
    pub eval_digest: u32,
    /// How the values were backed up from the leaves.
    pub back_up: BackUpRule,
}

/// One book position, as stored (canonical orientation, side-to-move relative).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Zobrist key of the canonical board.
    pub key: u64,
    /// Negamax value for the side to move: the best of the leaf and the book children.
    pub value: i8,
    /// The best move that leaves the book (canonical orientation): 0..64 a square,
    /// a pass, or none.
    pub leaf_move: LeafMove,
    /// Score of the leaf move for the side to move.
    pub leaf_score: i8,
    /// Depth of the leaf search (0..=63 in a version 3 book).
    pub leaf_depth: u8,
    /// Games that reached the position.
    pub games: u32,
    /// Of those, games won by the side to move.
    pub wins: u32,
    /// Drawn games.
    pub draws: u16,
    /// Bit 0: the leaf score is exact ([`Record::leaf_exact`]); the other bits are 0 (a
    /// version 3 book has no room for them).
    pub flags: u8,
    /// Multi-ProbCut selectivity of the leaf search in tenths of a standard deviation
    /// (0: full width; at most 127 in a version 3 book). Version 1 files have no such
    /// field: a reader gives their leaves the header's selectivity.
    pub leaf_selectivity: u8,
}

/// The game counts of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    pub games: u32,
    pub wins: u32,
    pub draws: u16,
}

impl Record {
    /// Decodes the 24 bytes of a version 1 or 2 record (or of a spooled one).
    pub(crate) fn from_wide_bytes(b: &[u8]) -> Record {
        Record {
            key: LE::read_u64(&b[0..8]),
            value: i8::from_le_bytes([b[8]]),
            leaf_move: LeafMove::from_byte(b[9]),
            leaf_score: i8::from_le_bytes([b[10]]),
            leaf_depth: b[11],
            games: LE::read_u32(&b[12..16]),
            wins: LE::read_u32(&b[16..20]),
            draws: LE::read_u16(&b[20..22]),
            flags: b[22],
            leaf_selectivity: b[23],
        }
    }

    /// The record's 24 bytes in the version 2 layout: every field as it is, whatever it
    /// holds.
    pub(crate) fn to_wide_bytes(self) -> [u8; WIDE_RECORD_LEN] {
        let mut b = [0u8; WIDE_RECORD_LEN];
        LE::write_u64(&mut b[0..8], self.key);
        b[8] = self.value.to_le_bytes()[0];
        b[9] = self.leaf_move.byte();
        b[10] = self.leaf_score.to_le_bytes()[0];
        b[11] = self.leaf_depth;
        LE::write_u32(&mut b[12..16], self.games);
        LE::write_u32(&mut b[16..20], self.wins);
        LE::write_u16(&mut b[20..22], self.draws);
        b[22] = self.flags;
        b[23] = self.leaf_selectivity;
        b
    }

    /// The record's 16 bytes in the version 3 layout, and whether its counts go to the
    /// count table; `Err` names a field the layout cannot hold.
    pub(crate) fn to_compact_bytes(self) -> Result<([u8; RECORD_LEN], bool), FieldFault> {
        let fits = |value: u64, bits: u32| value < (1 << bits);
        if !fits(self.leaf_depth.into(), DEPTH_BITS) {
            return Err(FieldFault::LeafDepth { depth: self.leaf_depth });
        }
        if !fits(self.leaf_selectivity.into(), SELECTIVITY_BITS) {
            return Err(FieldFault::Selectivity { tenths: self.leaf_selectivity });
        }
        if self.flags & !FLAG_LEAF_EXACT != 0 {
            return Err(FieldFault::Flags { flags: self.flags });
        }
        let mut field = u64::from(self.leaf_depth)
            | u64::from(self.leaf_exact()) << EXACT_SHIFT
            | u64::from(self.leaf_selectivity) << SELECTIVITY_SHIFT;
        let (games, wins, draws) = (u64::from(self.games), u64::from(self.wins), u64::from(self.draws));
        let inline = games < COUNTS_ELSEWHERE && fits(wins, WINS_BITS) && fits(draws, DRAWS_BITS);
        field |= if inline {
            games << GAMES_SHIFT | wins << WINS_SHIFT | draws << DRAWS_SHIFT
        } else {
            COUNTS_ELSEWHERE << GAMES_SHIFT
        };
        let mut b = [0u8; RECORD_LEN];
        LE::write_u64(&mut b[0..8], self.key);
        b[8] = self.value.to_le_bytes()[0];
        b[9] = self.leaf_move.byte();
        b[10] = self.leaf_score.to_le_bytes()[0];
        LE::write_uint(&mut b[11..16], field, 5);
        Ok((b, !inline))
    }

    /// Decodes the 16 bytes of a version 3 record; `true` when its counts are in the
    /// count table (the record's are then 0).
    pub(crate) fn from_compact_bytes(b: &[u8]) -> (Record, bool) {
        let field = LE::read_uint(&b[11..16], 5);
        let elsewhere = bits(field, GAMES_SHIFT, GAMES_BITS) == COUNTS_ELSEWHERE;
        let count = |shift, width| if elsewhere { 0 } else { bits(field, shift, width) };
        let record = Record {
            key: LE::read_u64(&b[0..8]),
            value: i8::from_le_bytes([b[8]]),
            leaf_move: LeafMove::from_byte(b[9]),
            leaf_score: i8::from_le_bytes([b[10]]),
            leaf_depth: u8::try_from(bits(field, 0, DEPTH_BITS)).unwrap_or_default(),
            games: u32::try_from(count(GAMES_SHIFT, GAMES_BITS)).unwrap_or_default(),
            wins: u32::try_from(count(WINS_SHIFT, WINS_BITS)).unwrap_or_default(),
            draws: u16::try_from(count(DRAWS_SHIFT, DRAWS_BITS)).unwrap_or_default(),
            flags: if bits(field, EXACT_SHIFT, 1) == 1 { FLAG_LEAF_EXACT } else { 0 },
            leaf_selectivity: u8::try_from(bits(field, SELECTIVITY_SHIFT, SELECTIVITY_BITS)).unwrap_or_default(),
        };
        (record, elsewhere)
    }

    /// Whether a version 3 record whose counts are in the count table has nonzero wins
    /// or draws (no thorbook writes one).
    pub(crate) fn compact_stray_counts(b: &[u8]) -> bool {
        let field = LE::read_uint(&b[11..16], 5);
        bits(field, GAMES_SHIFT, GAMES_BITS) == COUNTS_ELSEWHERE && field >> WINS_SHIFT != 0
    }

    /// The same record with these counts.
    pub(crate) fn with_counts(self, c: Counts) -> Record {
        Record { games: c.games, wins: c.wins, draws: c.draws, ..self }
    }

    /// The leaf move in canonical orientation.
    pub fn leaf(&self) -> Option<Move> {
        self.leaf_move.get()
    }

    /// Whether the leaf score is exact.
    pub fn leaf_exact(&self) -> bool {
        self.flags & FLAG_LEAF_EXACT != 0
    }

    /// The leaf's search settings, if there is a leaf.
    pub(crate) fn leaf_level(&self) -> Option<LeafLevel> {
        (!self.leaf_move.is_none()).then_some(LeafLevel {
            depth: self.leaf_depth,
            selectivity_tenths: self.leaf_selectivity,
            exact: self.leaf_exact(),
        })
    }
}

/// How deeply a leaf was searched: what the book stores of the search that scored it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct LeafLevel {
    /// Search depth in plies.
    pub depth: u8,
    /// Multi-ProbCut selectivity in tenths of a standard deviation (0: full width).
    pub selectivity_tenths: u8,
    /// Solved to the end (then depth and selectivity do not matter).
    pub exact: bool,
}

impl LeafLevel {
    /// An order on how much a leaf is worth: exact beats searched, then the deeper,
    /// then the less selective (full width, 0, counts as the least selective).
    pub(crate) fn rank(&self) -> (bool, u8, u8) {
        let width = if self.selectivity_tenths == 0 { u8::MAX } else { self.selectivity_tenths };
        (self.exact, self.depth, width)
    }
}

impl std::fmt::Display for LeafLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.exact, self.selectivity_tenths) {
            (true, _) => write!(f, "exact"),
            (false, 0) => write!(f, "depth {}", self.depth),
            (false, t) => write!(f, "depth {} at {:.1}σ", self.depth, t as f32 / 10.0),
        }
    }
}

/// The index of `key` among `len` keys in increasing order (`key_at(i)` the i-th).
/// Zobrist keys are uniform, so a few interpolation steps land next to it (about 2
/// reads instead of log2 N); bisection finishes, which bounds the worst case whatever
/// the keys.
pub(crate) fn find_key(len: usize, key_at: impl Fn(usize) -> u64, key: u64) -> Option<usize> {
    let (mut lo, mut hi) = (0usize, len);
    for _ in 0..3 {
        if hi - lo < 16 {
            break;
        }
        let guess = interpolate(lo..hi, key_at(lo), key_at(hi - 1), key)?;
        match key_at(guess).cmp(&key) {
            std::cmp::Ordering::Less => lo = guess + 1,
            std::cmp::Ordering::Greater => hi = guess,
            std::cmp::Ordering::Equal => return Some(guess),
        }
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match key_at(mid).cmp(&key) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Some(mid),
        }
    }
    None
}

/// Where `key` would lie among the keys at `range` (not empty), the first `first` and
/// the last `last`, if they were spread evenly: [`find_key`]'s interpolation step;
/// `None` when `key` is outside them.
pub(crate) fn interpolate(range: std::ops::Range<usize>, first: u64, last: u64, key: u64) -> Option<usize> {
    let (first, last, k) = (u128::from(first), u128::from(last), u128::from(key));
    if k < first || k > last {
        return None;
    }
    let step = (k - first) * (range.len() - 1) as u128 / (last - first).max(1);
    Some(range.start + usize::try_from(step).expect("at most the range's length"))
}

/// The Zobrist fingerprint stored in every book: the key of the start position.
pub(crate) fn fingerprint() -> u64 {
    Board::START.key()
}

/// The header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BookHeader {
    /// Format version of the file.
    pub version: u32,
    /// Number of records.
    pub count: u64,
    /// Build parameters.
    pub params: BuildParams,
    /// Entries in the count table (version 3; 0 before).
    pub large_counts: u64,
    /// Records per block, as a power of two (version 3).
    pub block_log2: u8,
    /// CRC-32 of the records (versions 1 and 2) or of the block checksum table (3).
    pub checksum: u32,
}

impl BookHeader {
    /// Bytes per record in this file.
    pub(crate) fn record_len(&self) -> usize {
        if self.version >= 3 {
            RECORD_LEN
        } else {
            WIDE_RECORD_LEN
        }
    }

    /// Checksummed blocks of records: a version 3 file has one per 2^`block_log2`
    /// records; the records of an older file are one block under the header's CRC-32.
    pub(crate) fn blocks(&self) -> u64 {
        if self.version >= 3 {
            self.count.div_ceil(1u64 << self.block_log2)
        } else {
            1
        }
    }

    /// The file's length as the header states it (saturating, for a damaged header).
    fn file_len(&self) -> u64 {
        let records = self.count.saturating_mul(self.record_len() as u64);
        let tables = if self.version >= 3 {
            let table = self.blocks().saturating_add(1).saturating_mul(CHECKSUM_LEN as u64);
            self.large_counts.saturating_mul(COUNTS_LEN as u64).saturating_add(table)
        } else {
            0
        };
        (HEADER_LEN as u64).saturating_add(records).saturating_add(tables)
    }

    /// Where the records are.
    pub(crate) fn records_range(&self) -> std::ops::Range<usize> {
        HEADER_LEN..HEADER_LEN + len_of(self.count, self.record_len())
    }

    /// Where the count table is (empty before version 3).
    pub(crate) fn counts_range(&self) -> std::ops::Range<usize> {
        let start = self.records_range().end;
        start..start + len_of(self.large_counts, COUNTS_LEN)
    }

    /// Where the block checksum table is (empty before version 3).
    pub(crate) fn table_range(&self) -> std::ops::Range<usize> {
        let start = self.counts_range().end;
        let entries = if self.version >= 3 { self.blocks() + 1 } else { 0 };
        start..start + len_of(entries, CHECKSUM_LEN)
    }

    /// The 64 header bytes (of the version this code writes).
    pub(crate) fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        LE::write_u32(&mut b[8..12], VERSION);
        LE::write_u32(&mut b[12..16], HEADER_LEN_U32);
        LE::write_u32(&mut b[16..20], RECORD_LEN_U32);
        LE::write_u64(&mut b[20..28], self.count);
        LE::write_u64(&mut b[28..36], fingerprint());
        b[36] = self.params.max_ply;
        b[37] = self.params.depth;
        b[38] = self.params.exact_at;
        b[39] = self.params.selectivity_tenths;
        LE::write_u32(&mut b[40..44], self.params.min_games);
        LE::write_u32(&mut b[44..48], self.params.eval_digest);
        b[48] = self.params.back_up.byte();
        b[49] = self.block_log2;
        LE::write_u32(&mut b[52..56], u32::try_from(self.large_counts).unwrap_or(u32::MAX));
        LE::write_u32(&mut b[56..60], self.checksum);
        let crc = crc32fast::hash(&b[..60]);
        LE::write_u32(&mut b[60..64], crc);
        b
    }

    /// Checks and decodes a header; `bytes` is the whole file.
    pub(crate) fn decode(bytes: &[u8]) -> Result<BookHeader, BookError> {
        if bytes.len() < HEADER_LEN {
            return Err(BookError::TooShort { len: bytes.len() });
        }
        let b = &bytes[..HEADER_LEN];
        if b[0..8] != MAGIC {
            return Err(BookError::Magic { found: b[0..8].try_into().unwrap_or_default() });
        }
        let version = LE::read_u32(&b[8..12]);
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return Err(BookError::Version { found: version });
        }
        let stored = LE::read_u32(&b[60..64]);
        let computed = crc32fast::hash(&b[..60]);
        if stored != computed {
            return Err(BookError::HeaderChecksum { stored, computed });
        }
        let (block_log2, large_counts) = if version >= 3 {
            if !BLOCK_LOG2_RANGE.contains(&b[49]) {
                return Err(BookError::BlockSize { found: b[49] });
            }
            (b[49], u64::from(LE::read_u32(&b[52..56])))
        } else {
            (0, 0)
        };
        let back_up = BackUpRule::from_byte(b[48]).ok_or(BookError::BackUpRule { found: b[48] })?;
        let header = BookHeader {
            version,
            count: LE::read_u64(&b[20..28]),
            params: BuildParams {
                max_ply: b[36],
                depth: b[37],
                exact_at: b[38],
                selectivity_tenths: b[39],
                min_games: LE::read_u32(&b[40..44]),
                eval_digest: LE::read_u32(&b[44..48]),
                back_up,
            },
            large_counts,
            block_log2,
            checksum: LE::read_u32(&b[56..60]),
        };
        let record_len = LE::read_u32(&b[16..20]);
        let header_len = LE::read_u32(&b[12..16]);
        let expected = header.file_len();
        if record_len as usize != header.record_len() || header_len != HEADER_LEN_U32 || expected != bytes.len() as u64
        {
            let count = header.count;
            return Err(BookError::Size { count, record_len, expected, actual: bytes.len() as u64 });
        }
        let found = LE::read_u64(&b[28..36]);
        if found != fingerprint() {
            return Err(BookError::Fingerprint { found, expected: fingerprint() });
        }
        Ok(header)
    }
}

/// `n` entries of `len` bytes (saturating: a header's sizes are checked against the
/// file's before any range is used).
fn len_of(n: u64, len: usize) -> usize {
    usize::try_from(n).map_or(usize::MAX, |n| n.saturating_mul(len))
}

/// The checksum of one block of records or of the count table: a CRC-32, which finds
/// every burst of damage up to 32 bits and misses other damage once in 2^32 — for
/// damage, not identity (digests that name a book are 64-bit).
pub(crate) fn block_checksum(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// Encodes a book's records in strictly increasing key order (an out-of-order or
/// repeated key, or a field the layout cannot hold, is refused, never silently
/// reordered, dropped or cut) and makes what follows them — the count table and the
/// block checksums — and the header. [`Writer`] (in memory) and the streamed book
/// writer both go through it, so every book thorbook writes has the same bytes.
pub(crate) struct Encoder {
    params: BuildParams,
    last: Option<u64>,
    count: u64,
    /// The current block's record bytes.
    block: Vec<u8>,
    /// The checksums of the blocks completed.
    table: Vec<u8>,
    /// The count table.
    counts: Vec<u8>,
}

impl Encoder {
    /// A book with these build parameters.
    pub(crate) fn new(params: BuildParams) -> Encoder {
        Encoder {
            params,
            last: None,
            count: 0,
            block: Vec::with_capacity(RECORD_LEN << BLOCK_LOG2),
            table: Vec::new(),
            counts: Vec::new(),
        }
    }

    /// The record's bytes, to go after the previous record's.
    pub(crate) fn push(&mut self, record: &Record) -> Result<[u8; RECORD_LEN], BookError> {
        if self.last.is_some_and(|k| k >= record.key) {
            return Err(BookError::Order { index: self.count, key: record.key });
        }
        let index = self.count;
        let field = |what| BookError::Field { index, key: record.key, what };
        let (bytes, elsewhere) = record.to_compact_bytes().map_err(field)?;
        if elsewhere {
            if self.counts.len() / COUNTS_LEN >= u32::MAX as usize {
                return Err(field(FieldFault::CountTableFull));
            }
            let mut entry = [0u8; COUNTS_LEN];
            LE::write_u64(&mut entry[0..8], record.key);
            LE::write_u32(&mut entry[8..12], record.games);
            LE::write_u32(&mut entry[12..16], record.wins);
            LE::write_u16(&mut entry[16..18], record.draws);
            self.counts.extend_from_slice(&entry);
        }
        self.block.extend_from_slice(&bytes);
        if self.block.len() == RECORD_LEN << BLOCK_LOG2 {
            self.end_block();
        }
        self.last = Some(record.key);
        self.count += 1;
        Ok(bytes)
    }

    fn end_block(&mut self) {
        self.table.extend_from_slice(&block_checksum(&self.block).to_le_bytes());
        self.block.clear();
    }

    /// Records pushed so far.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// The bytes that follow the records (the count table, then the block checksum
    /// table), and the header.
    pub(crate) fn finish(mut self) -> (Vec<u8>, [u8; HEADER_LEN]) {
        if !self.block.is_empty() {
            self.end_block();
        }
        self.table.extend_from_slice(&block_checksum(&self.counts).to_le_bytes());
        let header = BookHeader {
            version: VERSION,
            count: self.count,
            params: self.params,
            large_counts: (self.counts.len() / COUNTS_LEN) as u64,
            block_log2: BLOCK_LOG2,
            checksum: crc32fast::hash(&self.table),
        };
        let mut trailer = self.counts;
        trailer.extend_from_slice(&self.table);
        (trailer, header.encode())
    }
}

/// Writes a book in memory through the [`Encoder`]: records go in one at a time in
/// strictly increasing key order; [`Writer::finish`] puts the header in front and the
/// tables behind. Every book thorbook produces — build, merge, import, deviation — goes
/// through it or through the streamed writer, which shares the encoder.
pub(crate) struct Writer {
    encoder: Encoder,
    body: Vec<u8>,
}

impl Writer {
    /// A book with these build parameters.
    pub(crate) fn new(params: BuildParams) -> Writer {
        Writer { encoder: Encoder::new(params), body: Vec::new() }
    }

    /// Appends a record; its key must be above every key before it.
    pub(crate) fn push(&mut self, record: &Record) -> Result<(), BookError> {
        let bytes = self.encoder.push(record)?;
        self.body.extend_from_slice(&bytes);
        Ok(())
    }

    /// The complete file.
    pub(crate) fn finish(self) -> Vec<u8> {
        let (trailer, header) = self.encoder.finish();
        let mut out = Vec::with_capacity(HEADER_LEN + self.body.len() + trailer.len());
        out.extend_from_slice(&header);
        out.extend_from_slice(&self.body);
        out.extend_from_slice(&trailer);
        out
    }

    /// A complete file from records already sorted by key.
    pub(crate) fn write_all(records: &[Record], params: BuildParams) -> Result<Vec<u8>, BookError> {
        let mut w = Writer::new(params);
        for r in records {
            w.push(r)?;
        }
        Ok(w.finish())
    }
}

/// How a position's value is made from its options: its leaf's score and minus each
/// book child's value. Books record it (header byte 48).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackUpRule {
    /// The best option: plain negamax (books written before the rule was recorded).
    #[default]
    Negamax,
    /// The best option less what the best of several noisy estimates is expected to
    /// exceed its own true value by (the winner's curse). Each option is an estimate
    /// with a standard deviation — a searched leaf's from its depth, width and empties
    /// (`leaf_sd`), an exact leaf's 0, a child's from its own back-up —; the options'
    /// expected maximum `E` comes from Clark's formulas for the maximum of normal
    /// variables (taken two at a time, best first), and the value is `2·max − E`: the
    /// best option less `E − max`. The position's deviation is that of the maximum.
    Corrected,
}

impl BackUpRule {
    /// The header byte.
    pub(crate) fn byte(self) -> u8 {
        match self {
            BackUpRule::Negamax => 0,
            BackUpRule::Corrected => 1,
        }
    }

    /// From the header byte; `None` for a rule this build does not know.
    pub(crate) fn from_byte(byte: u8) -> Option<BackUpRule> {
        match byte {
            0 => Some(BackUpRule::Negamax),
            1 => Some(BackUpRule::Corrected),
            _ => None,
        }
    }

    /// The name people write (`negamax`, `corrected`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            BackUpRule::Negamax => "negamax",
            BackUpRule::Corrected => "corrected",
        }
    }
}

/// The name people write (`negamax`, `corrected`), as the command line takes it.
impl std::fmt::Display for BackUpRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
