//! Opening books: reading and probing a book straight from its bytes ([`Book`]), and
//! everything made from or into one:
//! - [`format`](mod@format): the file layout, [`Record`] and [`format::LeafMove`];
//! - [`build`]: what a build is made of ([`BuildConfig`], the games' lines, the leaf
//!   search), and the [`Builder`] pipeline that runs it (collecting positions, leaf
//!   searches, the checkpoint, the back-up);
//! - [`deviate`]: growing a book beyond the played lines, or deepening its leaves, in rounds;
//! - [`merge()`] and [`merge_into`]: books into one;
//! - [`revalue`]: the one back-up of values by a
//!   [`BackUpRule`], which every book written goes through (as a stream of records
//!   with values backed up after: assembly, merge);
//! - [`plan`]: builds and growth rounds split into shards that run anywhere, and
//!   [`slurm`]: running them as Slurm job arrays;
//! - [`query`]: the moves of a position, the book line, the engine's choice;
//! - [`Trust`]: how far a value can be trusted (its deciding leaf, proven or not);
//! - [`audit`]: a book's values against deeper searches on the lines it plays, [`fix`]:
//!   searching again the leaves behind the values a deeper search contradicts, each
//!   with a log that lets such long runs resume;
//! - [`interchange`]: thorbook text, Edax and Egaroucid books, in and out.
//!
//! Positions are stored once per symmetry class, under the Zobrist key of their
//! canonical image, relative to the side to move. A probe canonicalises the board,
//! finds the key, and maps the stored leaf move back to the board's orientation.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

pub mod audit;
pub(crate) mod backup;
pub mod build;
pub(crate) mod builder;
pub mod deviate;
pub mod fix;
pub mod format;
pub mod interchange;
pub(crate) mod leaflog;
pub(crate) mod merge;
pub mod plan;
pub mod query;
pub mod slurm;
pub(crate) mod stream;
pub(crate) mod tree;
pub(crate) mod trust;

use std::collections::HashMap;
use std::path::PathBuf;

use crate::board::Board;
use crate::fileio::IoError;
use crate::fileio::{read_mapped, Bytes};
use crate::square::Move;
use crate::symmetry::Transform;

pub use backup::{revalue, BackUpRule};
pub use build::{BuildConfig, UpdateChoices};
pub use builder::{BuildEvent, BuildSummary, Builder, PreviousBook};
pub use format::{BookError, BuildParams, LeafLevel, LeafMove, Record};
pub use leaflog::LeafLogError;
pub use merge::{merge, merge_into, Merged};
pub use stream::{StreamError, Written};
pub use trust::{Decider, Trust};

/// A book over bytes: a `Vec<u8>`, a static slice (the bundled book) or a memory map.
/// Opening checks the header and size only (constant time); [`Book::verify`] checks
/// every record.
pub struct Book<D: AsRef<[u8]>> {
    data: D,
    header: format::BookHeader,
}

/// A position found in the book, seen from the probed board's orientation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BookHit {
    /// The stored record (canonical orientation).
    pub record: Record,
    /// The transform from the probed board onto the canonical one.
    pub transform: Transform,
}

impl BookHit {
    /// Negamax value for the side to move.
    pub fn value(&self) -> i32 {
        self.record.value as i32
    }

    /// The best move leaving the book, in the probed board's orientation.
    pub fn leaf_move(&self) -> Option<Move> {
        self.record.leaf().map(|m| self.transform.inverse().apply_move(m))
    }
}

impl<D: AsRef<[u8]>> Book<D> {
    /// Opens a book, checking magic, version, header checksum, sizes and the Zobrist
    /// fingerprint (not the records: see [`Book::verify`]).
    pub fn open(data: D) -> Result<Book<D>, BookError> {
        let header = format::BookHeader::decode(data.as_ref())?;
        Ok(Book { data, header })
    }

    /// Opens and verifies every record.
    pub fn open_verified(data: D) -> Result<Book<D>, BookError> {
        let book = Book::open(data)?;
        book.verify()?;
        Ok(book)
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        // `open` checked that count × 24 bytes is the file's size, so it fits.
        usize::try_from(self.header.count).unwrap_or(usize::MAX)
    }

    /// True for a book without positions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How the book was built.
    pub fn params(&self) -> BuildParams {
        self.header.params
    }

    /// Size of the file in bytes.
    pub fn size_bytes(&self) -> usize {
        self.data.as_ref().len()
    }

    /// A 64-bit digest of the records as they decode (what names a book as the input
    /// of a resumable or planned growth).
    pub(crate) fn records_digest(&self) -> u64 {
        let mut d = crate::fileio::Digest::new();
        for r in self.records() {
            d.update(&r.to_bytes());
        }
        d.finish()
    }

    /// The whole file.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.data.as_ref()
    }

    fn records_bytes(&self) -> &[u8] {
        &self.data.as_ref()[format::HEADER_LEN..]
    }

    /// Record `i` (0-based, in key order).
    pub fn record(&self, i: usize) -> Record {
        let at = i * format::RECORD_LEN;
        let mut r = Record::decode(&self.records_bytes()[at..at + format::RECORD_LEN]);
        if self.header.version == 1 && !r.leaf_move.is_none() && !r.leaf_exact() {
            // Version 1 had one selectivity for the whole book, in the header.
            r.leaf_selectivity = self.header.params.selectivity_tenths;
        }
        r
    }

    /// The file's format version (1 or 2).
    pub fn version(&self) -> u32 {
        self.header.version
    }

    #[inline]
    fn key_at(&self, i: usize) -> u64 {
        let at = i * format::RECORD_LEN;
        u64::from_le_bytes(self.records_bytes()[at..at + 8].try_into().expect("8 bytes"))
    }

    /// All records in key order.
    pub fn records(&self) -> impl Iterator<Item = Record> + '_ {
        (0..self.len()).map(|i| self.record(i))
    }

    /// The record with canonical key `key`.
    ///
    /// Zobrist keys are uniform, so a few interpolation steps land next to the record
    /// (about 2 reads instead of log2 N); binary search finishes, which bounds the
    /// worst case whatever the keys.
    pub fn get(&self, key: u64) -> Option<Record> {
        format::find_key(self.len(), |i| self.key_at(i), key).map(|i| self.record(i))
    }

    /// The book's knowledge of `board` (any orientation), if it is a book position.
    #[inline]
    pub fn probe(&self, board: &Board) -> Option<BookHit> {
        let (canon, transform) = board.canonical();
        self.get(canon.key()).map(|record| BookHit { record, transform })
    }

    /// Checks every record: checksum, strictly increasing keys, fields in range.
    pub fn verify(&self) -> Result<(), BookError> {
        let computed = crc32fast::hash(self.records_bytes());
        if computed != self.header.records_crc {
            return Err(BookError::RecordChecksum { stored: self.header.records_crc, computed });
        }
        let mut prev = None;
        for (i, r) in self.records().enumerate() {
            let field = |what: String| BookError::Field { index: i as u64, key: r.key, what };
            if prev.is_some_and(|p| p >= r.key) {
                return Err(BookError::Order { index: i as u64, key: r.key });
            }
            prev = Some(r.key);
            if !(-64..=64).contains(&r.value) || !(-64..=64).contains(&r.leaf_score) {
                return Err(field(format!("value {} or leaf score {} outside -64..64", r.value, r.leaf_score)));
            }
            if !r.leaf_move.is_valid() {
                return Err(field(format!("leaf move code {} is not a square, a pass or none", r.leaf_move.byte())));
            }
            if r.wins as u64 + r.draws as u64 > r.games as u64 {
                return Err(field(format!("{} wins and {} draws exceed {} games", r.wins, r.draws, r.games)));
            }
        }
        Ok(())
    }
}

/// Where a book comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum BookSource {
    /// No book.
    None,
    /// The book bundled in the binary (`data/book.tbk`).
    #[default]
    Bundled,
    /// A book file, memory-mapped.
    File(PathBuf),
}

/// A book that cannot be opened, with the file it came from.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The file cannot be read.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The header is damaged or of another version.
    #[error("book {path}: {source}")]
    Format {
        /// The file (`(bundled)` for the embedded book).
        path: String,
        /// What is wrong with it.
        #[source]
        source: BookError,
    },
}

impl BookSource {
    /// Opens the book in constant time (header, sizes, fingerprint; [`Book::verify`]
    /// checks the records); `None` for [`BookSource::None`].
    pub fn open(&self) -> Result<Option<Book<Bytes>>, OpenError> {
        let (path, bytes) = match self {
            BookSource::None => return Ok(None),
            BookSource::Bundled => ("(bundled)".to_string(), Bytes::Static(bundled_bytes())),
            BookSource::File(p) => {
                let path = p.display().to_string();
                let bytes = read_mapped(p).map_err(IoError::at(p))?;
                (path, bytes)
            }
        };
        Book::open(bytes).map(Some).map_err(|source| OpenError::Format { path, source })
    }
}

/// The bytes of the book built from the bundled archives, embedded in the binary.
pub(crate) fn bundled_bytes() -> &'static [u8] {
    include_bytes!("../../data/book.tbk")
}

/// The bundled book.
pub fn bundled() -> Result<Book<&'static [u8]>, BookError> {
    Book::open(bundled_bytes())
}

/// The book positions reachable from the start through book positions, by key, with
/// their canonical boards (the file stores keys only; boards are found by play).
pub fn walk<D: AsRef<[u8]>>(book: &Book<D>) -> HashMap<u64, Board> {
    walk_from(book, Board::START)
}

/// The book positions reachable from `start` through book positions (see [`walk`]).
pub(crate) fn walk_from<D: AsRef<[u8]>>(book: &Book<D>, start: Board) -> HashMap<u64, Board> {
    let mut seen = HashMap::new();
    let mut stack = vec![start];
    while let Some(b) = stack.pop() {
        let canon = b.canonical().0;
        let key = canon.key();
        if seen.contains_key(&key) || book.get(key).is_none() {
            continue;
        }
        seen.insert(key, canon);
        stack.extend(canon.successors().map(|(_, child)| child));
    }
    seen
}
