//! What can be wrong with a book file: the header, a block, a record's fields, the
//! count table, each named by where it is.

use thiserror::Error;

use super::{record_offset, DEPTH_BITS, HEADER_LEN, OLDEST_VERSION, SELECTIVITY_BITS, VERSION};

/// What is wrong with a book file.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum BookError {
    /// Shorter than a header.
    #[error("{len} bytes, shorter than the {HEADER_LEN}-byte header: not a thorbook book, or truncated")]
    TooShort {
        /// File length.
        len: usize,
    },
    /// Wrong magic.
    #[error("not a thorbook book (magic {:?}, expected \"THORBOOK\")", String::from_utf8_lossy(found))]
    Magic {
        /// The first 8 bytes.
        found: [u8; 8],
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
        "header says {count} records of {record_len} bytes ({expected} bytes in all, with the tables), the file has {actual} bytes"
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
    /// A block size this reader does not accept.
    #[error("header byte 49: blocks of 2^{found} records, this thorbook reads 2^4 to 2^24")]
    BlockSize {
        /// The stored exponent.
        found: u8,
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
    /// The checksum of the records (versions 1 and 2) or of the block checksum table
    /// (version 3) fails.
    #[error("{what} checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the {what} is damaged")]
    RecordChecksum {
        /// What the checksum covers: "record" or "block table".
        what: &'static str,
        /// Stored.
        stored: u32,
        /// Computed.
        computed: u32,
    },
    /// A block of records, or the count table, fails its checksum.
    #[error("{what} (bytes {start}..{end}) fails its checksum: the book is damaged there")]
    Block {
        /// The block, or the count table.
        what: BookRegion,
        /// Its first byte.
        start: u64,
        /// One past its last byte.
        end: u64,
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
        what: FieldFault,
    },
    /// The count table disagrees with the records.
    #[error("count table entry {index} (byte {at}): {what}")]
    Counts {
        /// Entry index.
        index: u64,
        /// Its first byte in the file.
        at: u64,
        /// What is wrong.
        what: CountsFault,
    },
}

/// A part of a book that a block checksum covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BookRegion {
    /// A block of records.
    Block {
        /// The block's index.
        block: u64,
        /// Its first record.
        first: u64,
        /// One past its last record.
        end: u64,
    },
    /// The table of large game counts.
    CountTable,
}

impl std::fmt::Display for BookRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BookRegion::Block { block, first, end } => write!(f, "block {block} (records {first}..{end})"),
            BookRegion::CountTable => f.write_str("the count table"),
        }
    }
}

/// What is wrong with one record's fields.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldFault {
    /// Its counts are marked as kept in the count table, which lacks them.
    #[error("its game counts are not in the count table")]
    CountsMissing,
    /// Wins or draws beside counts marked as kept in the count table.
    #[error("wins or draws beside counts kept in the count table")]
    StrayCounts,
    /// A score outside -64..=64.
    #[error("value {value} or leaf score {leaf_score} outside -64..64")]
    Score {
        /// The backed-up value.
        value: i8,
        /// The leaf's own score.
        leaf_score: i8,
    },
    /// A leaf move byte that is neither a square, a pass nor none.
    #[error("leaf move code {code} is not a square, a pass or none")]
    LeafMove {
        /// The stored byte.
        code: u8,
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
    /// A leaf depth the compact layout cannot hold.
    #[error("leaf depth {depth} does not fit in {DEPTH_BITS} bits")]
    LeafDepth {
        /// The depth.
        depth: u8,
    },
    /// A leaf selectivity the compact layout cannot hold.
    #[error("leaf selectivity of {tenths} tenths does not fit in {SELECTIVITY_BITS} bits")]
    Selectivity {
        /// The selectivity in tenths.
        tenths: u8,
    },
    /// Flag bits this format does not define.
    #[error("flags {flags:#04x}: bits other than the exact flag")]
    Flags {
        /// The flags byte.
        flags: u8,
    },
    /// More records with large counts than the count table can index.
    #[error("more positions with large game counts than a count table holds")]
    CountTableFull,
}

/// What is wrong with the count table.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum CountsFault {
    /// An entry's key is not above the previous one's.
    #[error("its key is not above the previous entry's")]
    Order,
    /// Reserved bytes are not zero.
    #[error("reserved bytes set")]
    Reserved,
    /// The table's length disagrees with the records that point into it.
    #[error("{declared} entries for {found} records whose counts it holds")]
    Entries {
        /// Entries the header declares.
        declared: u64,
        /// Records marked as having their counts in the table.
        found: u64,
    },
}
