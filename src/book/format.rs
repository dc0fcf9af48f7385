//! The book file: a 64-byte header, then fixed-width 24-byte records sorted by key,
//! read straight from a memory map (no parsing, no index: a probe is a search over the
//! sorted keys), and the one writer that produces it. The layout is specified in
//! `book-format.md`; this module is its reference implementation.

use byteorder::{ByteOrder, LittleEndian as LE};
use thiserror::Error;

use super::backup::BackUpRule;
use crate::board::Board;
use crate::square::{Move, Square};

/// File magic.
pub(crate) const MAGIC: [u8; 8] = *b"THORBOOK";
/// Format version this code writes. Version 1 (no per-leaf selectivity) is still read.
pub(crate) const VERSION: u32 = 2;
/// The oldest version this code reads.
pub(crate) const OLDEST_VERSION: u32 = 1;
/// Header bytes.
pub(crate) const HEADER_LEN: usize = 64;
/// Bytes per record.
pub(crate) const RECORD_LEN: usize = 24;
const HEADER_LEN_U32: u32 = 64;
const RECORD_LEN_U32: u32 = 24;

/// Leaf flag: the leaf score is exact (solved to the end).
pub const FLAG_LEAF_EXACT: u8 = 1;
/// The best move leaving the book from a position, as stored (byte 9 of a record): a
/// square of the canonical orientation (0..64), a pass (64), or none (255: every move
/// is in the book, or the game is over). It keeps the stored byte as it is — a
/// damaged book's too, so records round-trip byte for byte; [`Record::leaf`] reads
/// only the valid codes and [`Book::verify`](super::Book::verify) refuses the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LeafMove(u8);

impl LeafMove {
    /// No move leaves the book.
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
    pub const fn from_byte(byte: u8) -> LeafMove {
        LeafMove(byte)
    }

    /// The byte to store.
    pub const fn byte(self) -> u8 {
        self.0
    }

    /// Whether no move leaves the book.
    pub fn is_none(self) -> bool {
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

/// Where record `index` starts in a book file.
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
    /// Depth of the leaf search.
    pub leaf_depth: u8,
    /// Games that reached the position.
    pub games: u32,
    /// Of those, games won by the side to move.
    pub wins: u32,
    /// Drawn games.
    pub draws: u16,
    /// [`FLAG_LEAF_EXACT`] and reserved bits.
    pub flags: u8,
    /// Multi-ProbCut selectivity of the leaf search in tenths of a standard deviation
    /// (0: full width). Version 1 files have no such field: a reader gives their leaves
    /// the header's selectivity.
    pub leaf_selectivity: u8,
}

impl Record {
    /// Decodes 24 bytes.
    pub(crate) fn decode(b: &[u8]) -> Record {
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

    /// Appends its 24 bytes.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bytes());
    }

    /// The record's 24 bytes.
    pub(crate) fn to_bytes(self) -> [u8; RECORD_LEN] {
        let mut b = [0u8; RECORD_LEN];
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

/// What is wrong with a book file.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum BookError {
    /// Shorter than a header.
    #[error("{len} bytes, shorter than the {HEADER_LEN}-byte header: not a thorbook book, or truncated")]
    TooShort {
        /// File length.
        len: usize,
    },
    /// Wrong magic.
    #[error("not a thorbook book (magic {found:?}, expected \"THORBOOK\")")]
    Magic {
        /// The first 8 bytes.
        found: String,
    },
    /// Another format version.
    #[error("book format version {found}, this thorbook reads versions {OLDEST_VERSION} to {VERSION}: rebuild with `thorbook book build`")]
    Version {
        /// The file's version.
        found: u32,
    },
    /// The header's own checksum fails.
    #[error("header checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the header is damaged")]
    HeaderChecksum {
        /// Stored.
        stored: u32,
        /// Computed.
        computed: u32,
    },
    /// Record size or count disagree with the file.
    #[error(
        "header says {count} records of {record_len} bytes ({expected} bytes in all), the file has {actual} bytes"
    )]
    Size {
        /// Records declared.
        count: u64,
        /// Record size declared.
        record_len: u32,
        /// Size implied.
        expected: u64,
        /// Actual size.
        actual: u64,
    },
    /// The keys were made with other Zobrist constants.
    #[error("the book's Zobrist fingerprint {found:#018x} is not this thorbook's {expected:#018x}: rebuild the book")]
    Fingerprint {
        /// Stored.
        found: u64,
        /// Ours.
        expected: u64,
    },
    /// The values were backed up by a rule this build does not know.
    #[error("header byte 48: back-up rule {found}, unknown to this thorbook (0 negamax, 1 corrected): a newer thorbook wrote it")]
    BackUpRule {
        /// The stored byte.
        found: u8,
    },
    /// The records' checksum fails.
    #[error("record checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the records are damaged")]
    RecordChecksum {
        /// Stored.
        stored: u32,
        /// Computed.
        computed: u32,
    },
    /// Keys out of order or repeated.
    #[error("record {index} (byte {}): key {key:#018x} is not above the previous key: the records are damaged", record_offset(*index))]
    Order {
        /// Record index.
        index: u64,
        /// Its key.
        key: u64,
    },
    /// A field out of range.
    #[error("record {index} (byte {}, key {key:#018x}): {what}", record_offset(*index))]
    Field {
        /// Record index.
        index: u64,
        /// Its key.
        key: u64,
        /// What is wrong.
        what: String,
    },
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
        let (klo, khi) = (u128::from(key_at(lo)), u128::from(key_at(hi - 1)));
        let k = u128::from(key);
        if k < klo || k > khi {
            return None;
        }
        let span = (khi - klo).max(1);
        let step = (k - klo) * (hi - 1 - lo) as u128 / span;
        let guess = lo + usize::try_from(step).expect("at most hi - 1 - lo");
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
    /// CRC-32 of the record bytes.
    pub records_crc: u32,
}

impl BookHeader {
    /// The 64 header bytes.
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
        LE::write_u32(&mut b[56..60], self.records_crc);
        let crc = crc32fast::hash(&b[..60]);
        LE::write_u32(&mut b[60..64], crc);
        b
    }

    /// Checks and decodes a header; `file_len` is the whole file's size.
    pub(crate) fn decode(bytes: &[u8]) -> Result<BookHeader, BookError> {
        if bytes.len() < HEADER_LEN {
            return Err(BookError::TooShort { len: bytes.len() });
        }
        let b = &bytes[..HEADER_LEN];
        if b[0..8] != MAGIC {
            return Err(BookError::Magic { found: String::from_utf8_lossy(&b[0..8]).into_owned() });
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
        let record_len = LE::read_u32(&b[16..20]);
        let header_len = LE::read_u32(&b[12..16]) as u64;
        let count = LE::read_u64(&b[20..28]);
        let expected = header_len.saturating_add(count.saturating_mul(record_len as u64));
        if record_len as usize != RECORD_LEN || header_len != HEADER_LEN as u64 || expected != bytes.len() as u64 {
            return Err(BookError::Size { count, record_len, expected, actual: bytes.len() as u64 });
        }
        let found = LE::read_u64(&b[28..36]);
        if found != fingerprint() {
            return Err(BookError::Fingerprint { found, expected: fingerprint() });
        }
        let back_up = BackUpRule::from_byte(b[48]).ok_or(BookError::BackUpRule { found: b[48] })?;
        Ok(BookHeader {
            version,
            count,
            params: BuildParams {
                max_ply: b[36],
                depth: b[37],
                exact_at: b[38],
                selectivity_tenths: b[39],
                min_games: LE::read_u32(&b[40..44]),
                eval_digest: LE::read_u32(&b[44..48]),
                back_up,
            },
            records_crc: LE::read_u32(&b[56..60]),
        })
    }
}

/// Writes a book: records go in one at a time in strictly increasing key order (an
/// out-of-order or repeated key is refused, never silently reordered or dropped) and
/// are checksummed as they go; [`Writer::finish`] puts the header in front. Every
/// book thorbook produces — build, merge, import, deviation — goes through it.
pub(crate) struct Writer {
    params: BuildParams,
    body: Vec<u8>,
    crc: crc32fast::Hasher,
    last: Option<u64>,
    count: u64,
}

impl Writer {
    /// A book with these build parameters.
    pub(crate) fn new(params: BuildParams) -> Writer {
        Writer { params, body: Vec::new(), crc: crc32fast::Hasher::new(), last: None, count: 0 }
    }

    /// Appends a record; its key must be above every key before it.
    pub(crate) fn push(&mut self, record: &Record) -> Result<(), BookError> {
        if self.last.is_some_and(|k| k >= record.key) {
            return Err(BookError::Order { index: self.count, key: record.key });
        }
        let at = self.body.len();
        record.encode_into(&mut self.body);
        self.crc.update(&self.body[at..]);
        self.last = Some(record.key);
        self.count += 1;
        Ok(())
    }

    /// The complete file.
    pub(crate) fn finish(self) -> Vec<u8> {
        let header =
            BookHeader { version: VERSION, count: self.count, params: self.params, records_crc: self.crc.finalize() };
        let mut out = Vec::with_capacity(HEADER_LEN + self.body.len());
        out.extend_from_slice(&header.encode());
        out.extend_from_slice(&self.body);
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
