//! Reading a book: [`Book`] over its bytes (a `Vec`, the bundled static slice or a
//! memory map), each probe checking the blocks it reads; where it comes from
//! ([`BookSource`]); and the walks over the positions a book reaches from a start
//! ([`walk`], [`known_boards`]), which export, revaluation and audits share.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use super::format::{self, BookError, BookRegion, BuildParams, CountsFault, FieldFault, Record};
use crate::board::Board;
use crate::fileio::IoError;
use crate::fileio::{read_mapped, Bytes};
use crate::square::Move;
use crate::symmetry::Transform;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

/// A book over bytes: a `Vec<u8>`, a static slice (the bundled book) or a memory map.
///
/// Opening checks the header and the file's size only, in constant time. Reads check
/// what they touch: a probe verifies every block of records it reads against the
/// block's checksum, once per block for the life of the `Book`, and never returns a
/// record from a damaged block. It answers as if the position were not in the book and
/// keeps the error, which [`Book::damage`] reports, so that a caller can say so.
/// [`Book::verify`] checks the whole file, and marks every block as verified.
pub struct Book<D: AsRef<[u8]>> {
    data: D,
    header: format::BookHeader,
    checks: BlockChecks,
}

/// Where a record's game counts come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CountsFrom {
    /// The record itself.
    Record,
    /// The count table.
    Table,
    /// The count table, which does not hold them: damage.
    Missing,
}

/// Which blocks of a book have been verified, and the first damage found.
struct BlockChecks {
    /// One bit per block of records, and one for the count table.
    verified: Box<[AtomicU64]>,
    damage: OnceLock<BookError>,
}

impl BlockChecks {
    fn new(blocks: u64) -> BlockChecks {
        let words = usize::try_from((blocks + 1).div_ceil(64)).unwrap_or(0);
        BlockChecks { verified: (0..words).map(|_| AtomicU64::new(0)).collect(), damage: OnceLock::new() }
    }

    fn is_verified(&self, block: usize) -> bool {
        self.verified.get(block / 64).is_some_and(|w| w.load(Relaxed) & (1 << (block % 64)) != 0)
    }

    fn mark(&self, block: usize) {
        if let Some(w) = self.verified.get(block / 64) {
            w.fetch_or(1 << (block % 64), Relaxed);
        }
    }

    fn mark_all(&self) {
        for w in self.verified.iter() {
            w.store(u64::MAX, Relaxed);
        }
    }
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
    /// fingerprint (not the records: probes check the blocks they read, and
    /// [`Book::verify`] the whole file).
    pub fn open(data: D) -> Result<Book<D>, BookError> {
        let header = format::BookHeader::decode(data.as_ref())?;
        // Probes read a block here and there; scans ask for their windows.
        crate::fileio::random_access(data.as_ref());
        let checks = BlockChecks::new(header.blocks());
        Ok(Book { data, header, checks })
    }

    /// Opens and verifies the whole file.
    pub fn open_verified(data: D) -> Result<Book<D>, BookError> {
        let book = Book::open(data)?;
        book.verify()?;
        Ok(book)
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        // `open` checked that the records fit in the file, so the count fits.
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
    pub(crate) fn size_bytes(&self) -> usize {
        self.data.as_ref().len()
    }

    /// The first damage a read found (a block whose checksum fails, a count table that
    /// disagrees with its records), if any: those reads answered "not in the book".
    pub fn damage(&self) -> Option<&BookError> {
        self.checks.damage.get()
    }

    /// A 64-bit digest that names the book's contents (the input of a resumable or
    /// planned growth, or of a fix), read in O(blocks): the header (which holds the
    /// counts, the settings and the CRC-32 of the block checksum table) and the block
    /// checksum table, which checksums every record. A version 1 or 2 book has no
    /// table: its records are digested instead. The pipelines that record it verify
    /// the whole book once when they start, so the checksums are the records'.
    pub(crate) fn identity(&self) -> u64 {
        let mut d = crate::fileio::Digest::new();
        let bytes = self.data.as_ref();
        d.update(&bytes[..format::HEADER_LEN]);
        if self.header.version >= 3 {
            d.update(&bytes[self.header.table_range()]);
        } else {
            for r in self.records() {
                d.update(&r.to_wide_bytes());
            }
        }
        d.finish()
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The whole file.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.data.as_ref()
    }

    /// The file's format version (1 to 3).
    pub fn version(&self) -> u32 {
        self.header.version
    }

    fn view(&self) -> View<'_> {
        View { bytes: self.data.as_ref(), header: &self.header, checks: &self.checks }
    }

    /// Record `i` (0-based, in key order), read without checks.
    pub(crate) fn record(&self, i: usize) -> Record {
        self.view().record(i)
    }

    /// All records in key order, read without checks: call [`Book::verify`] first (every
    /// command that reads a whole book does).
    pub fn records(&self) -> impl Iterator<Item = Record> + '_ {
        self.view().records()
    }

    /// The record with canonical key `key`, read from verified blocks only (see
    /// [`Book`]).
    ///
    /// Zobrist keys are uniform, so a few interpolation steps land next to the record
    /// (about 2 reads instead of log2 N); binary search finishes, which bounds the
    /// worst case whatever the keys.
    pub fn get(&self, key: u64) -> Option<Record> {
        self.view().get(key)
    }

    /// [`Book::get`] with the record's index in key order.
    pub(crate) fn find(&self, key: u64) -> Option<(usize, Record)> {
        self.view().find(key)
    }

    /// Starts reading (without waiting) the blocks where probes of the children of
    /// `board` will land: a query walks lines a ply at a time, and the ten or so cold
    /// reads of a position's children then overlap instead of following each other.
    pub(crate) fn prefetch_children(&self, board: &Board) {
        let view = self.view();
        for (_, child) in board.successors() {
            view.prefetch(child.canonical().0.key());
        }
    }

    /// The book's knowledge of `board` (any orientation), if it is a book position.
    #[inline]
    pub fn probe(&self, board: &Board) -> Option<BookHit> {
        let (canon, transform) = board.canonical();
        self.get(canon.key()).map(|record| BookHit { record, transform })
    }

    /// Checks the whole file — every block's checksum (in parallel), strictly
    /// increasing keys, fields in range, the count table against its records — and
    /// marks every block verified.
    pub fn verify(&self) -> Result<(), BookError> {
        self.view().verify()
    }
}

/// Records a scan asks the kernel to read ahead at a time (4 MiB of 16-byte records).
const SCAN_WINDOW: usize = 1 << 18;

/// A book's bytes with its header and checks: what reads work on (`Copy` and `Sync`
/// whatever holds the bytes, so that verification runs on every core).
#[derive(Clone, Copy)]
struct View<'a> {
    bytes: &'a [u8],
    header: &'a format::BookHeader,
    checks: &'a BlockChecks,
}

impl<'a> View<'a> {
    fn len(&self) -> usize {
        usize::try_from(self.header.count).unwrap_or(usize::MAX)
    }

    fn records_bytes(&self) -> &'a [u8] {
        &self.bytes[self.header.records_range()]
    }

    fn record_bytes(&self, i: usize) -> &'a [u8] {
        let len = self.header.record_len();
        &self.records_bytes()[i * len..(i + 1) * len]
    }

    /// Record `i` (0-based, in key order), read without checks.
    fn record(&self, i: usize) -> Record {
        self.decode(i).0
    }

    /// Record `i`, and where its game counts came from.
    fn decode(&self, i: usize) -> (Record, CountsFrom) {
        let bytes = self.record_bytes(i);
        match self.header.version {
            3.. => {
                let (r, elsewhere) = Record::from_compact_bytes(bytes);
                if !elsewhere {
                    return (r, CountsFrom::Record);
                }
                match self.large_counts(r.key) {
                    Some(counts) => (r.with_counts(counts), CountsFrom::Table),
                    None => (r, CountsFrom::Missing),
                }
            }
            version => {
                let mut r = Record::from_wide_bytes(bytes);
                if version == 1 && !r.leaf_move.is_none() && !r.leaf_exact() {
                    // Version 1 had one selectivity for the whole book, in the header.
                    r.leaf_selectivity = self.header.params.selectivity_tenths;
                }
                (r, CountsFrom::Record)
            }
        }
    }

    /// The count table's entry for `key`.
    fn large_counts(&self, key: u64) -> Option<format::Counts> {
        let table = &self.bytes[self.header.counts_range()];
        let entry = |i: usize| &table[i * format::COUNTS_LEN..(i + 1) * format::COUNTS_LEN];
        let key_of = |i: usize| u64::from_le_bytes(entry(i)[0..8].try_into().unwrap_or_default());
        let i = format::find_key(table.len() / format::COUNTS_LEN, key_of, key)?;
        let e = entry(i);
        let word = |at: usize| u32::from_le_bytes(e[at..at + 4].try_into().unwrap_or_default());
        let draws = u16::from_le_bytes(e[16..18].try_into().unwrap_or_default());
        Some(format::Counts { games: word(8), wins: word(12), draws })
    }

    #[inline]
    fn key_at(&self, i: usize) -> u64 {
        let at = i * self.header.record_len();
        u64::from_le_bytes(self.records_bytes()[at..at + 8].try_into().unwrap_or_default())
    }

    /// All records in key order, read without checks: call [`Book::verify`] first (every
    /// command that reads a whole book does).
    fn records(&self) -> impl Iterator<Item = Record> + 'a {
        let view = *self;
        (0..self.len()).map(move |i| {
            if i % SCAN_WINDOW == 0 {
                // Read ahead by hand (the map is read at random): the window after
                // this one, and this one at the start.
                let first = if i == 0 { 0 } else { i + SCAN_WINDOW };
                view.will_need(first..(i + 2 * SCAN_WINDOW).min(view.len()));
            }
            view.record(i)
        })
    }

    /// Asks the kernel to read records `range` ahead.
    fn will_need(&self, range: std::ops::Range<usize>) {
        let len = self.header.record_len();
        if range.start < range.end {
            crate::fileio::will_need(&self.records_bytes()[range.start * len..range.end * len]);
        }
    }

    /// Checks block `block` (the count table for the block after the last), once.
    fn check_block(&self, block: usize) -> Result<(), BookError> {
        if self.checks.is_verified(block) {
            return Ok(());
        }
        let bytes = self.bytes;
        let h = self.header;
        let result = if h.version < 3 {
            self.will_need(0..self.len());
            let computed = crc32fast::hash(self.records_bytes());
            if computed == h.checksum {
                Ok(())
            } else {
                Err(BookError::RecordChecksum { what: "record", stored: h.checksum, computed })
            }
        } else {
            let blocks = usize::try_from(h.blocks()).unwrap_or(usize::MAX);
            let (what, range) = if block < blocks {
                let std::ops::Range { start: first, end } = self.block_records(block);
                let start = h.records_range().start;
                let range = start + first * format::RECORD_LEN..start + end * format::RECORD_LEN;
                (BookRegion::Block { block: block as u64, first: first as u64, end: end as u64 }, range)
            } else {
                (BookRegion::CountTable, h.counts_range())
            };
            let table = &bytes[h.table_range()];
            let at = block * format::CHECKSUM_LEN;
            let stored = u32::from_le_bytes(table[at..at + format::CHECKSUM_LEN].try_into().unwrap_or_default());
            if format::block_checksum(&bytes[range.clone()]) == stored {
                Ok(())
            } else {
                Err(BookError::Block { what, start: range.start as u64, end: range.end as u64 })
            }
        };
        match result {
            Ok(()) => {
                self.checks.mark(block);
                Ok(())
            }
            Err(e) => {
                let _ = self.checks.damage.set(e.clone());
                Err(e)
            }
        }
    }

    /// Advises the kernel to read the block where a lookup of `key` lands first (the
    /// first interpolation guess of [`format::find_key`]; the guess is close, so the
    /// block is nearly always the record's), unless this book has checked that block
    /// already: it was read then, and a warm probe must not pay a system call.
    fn prefetch(&self, key: u64) {
        let n = self.len();
        if n == 0 {
            return;
        }
        let Some(guess) = format::interpolate(0..n, self.key_at(0), self.key_at(n - 1), key) else { return };
        let block = self.block_of(guess);
        if !self.checks.is_verified(block) {
            self.will_need(self.block_records(block));
        }
    }

    /// The records of block `block` (a book before version 3 is one block).
    fn block_records(&self, block: usize) -> std::ops::Range<usize> {
        if self.header.version < 3 {
            return 0..self.len();
        }
        let per = 1usize << self.header.block_log2;
        (block * per).min(self.len())..((block + 1) * per).min(self.len())
    }

    /// The block record `i` is in.
    fn block_of(&self, i: usize) -> usize {
        if self.header.version < 3 {
            0
        } else {
            i >> self.header.block_log2
        }
    }

    /// The record with canonical key `key`, read from verified blocks only (see
    /// [`Book`]).
    ///
    /// Zobrist keys are uniform, so a few interpolation steps land next to the record
    /// (about 2 reads instead of log2 N); binary search finishes, which bounds the
    /// worst case whatever the keys.
    fn get(&self, key: u64) -> Option<Record> {
        self.find(key).map(|(_, r)| r)
    }

    /// [`View::get`] with the record's index.
    fn find(&self, key: u64) -> Option<(usize, Record)> {
        let damaged = std::cell::Cell::new(false);
        let key_at = |i: usize| {
            if self.check_block(self.block_of(i)).is_err() {
                damaged.set(true);
            }
            self.key_at(i)
        };
        let found = format::find_key(self.len(), key_at, key);
        if damaged.get() {
            return None;
        }
        let i = found?;
        let (record, counts) = self.decode(i);
        if counts == CountsFrom::Record {
            return Some((i, record));
        }
        // The counts were looked up in the count table: it must be intact, and hold them.
        self.check_block(usize::try_from(self.header.blocks()).ok()?).ok()?;
        if counts == CountsFrom::Missing {
            let what = FieldFault::CountsMissing;
            let _ = self.checks.damage.set(BookError::Field { index: i as u64, key, what });
            return None;
        }
        Some((i, record))
    }

    /// Checks the whole file — every block's checksum (in parallel), strictly
    /// increasing keys, fields in range, the count table against its records — and
    /// marks every block verified.
    fn verify(&self) -> Result<(), BookError> {
        use rayon::prelude::*;
        let h = self.header;
        if h.version >= 3 {
            let computed = crc32fast::hash(&self.bytes[h.table_range()]);
            if computed != h.checksum {
                return Err(BookError::RecordChecksum { what: "block table", stored: h.checksum, computed });
            }
        }
        let blocks = usize::try_from(h.blocks()).unwrap_or(usize::MAX);
        let per_block = if h.version >= 3 { 1usize << h.block_log2 } else { self.len().max(1) };
        // The count table first, so that records can be decoded with their counts.
        if h.version >= 3 {
            self.check_block(blocks)?;
            self.verify_count_table()?;
        }
        // A window at a time, the next one read ahead while this one is checked (the
        // map is read at random).
        let window = (SCAN_WINDOW / per_block).max(1);
        let records_of = |blocks: std::ops::Range<usize>| {
            (blocks.start * per_block).min(self.len())..(blocks.end * per_block).min(self.len())
        };
        self.will_need(records_of(0..window));
        let mut escaped = 0u64;
        for first in (0..blocks).step_by(window) {
            let end = (first + window).min(blocks);
            self.will_need(records_of(end..end + window));
            let counts = (first..end)
                .into_par_iter()
                .map(|b| {
                    self.check_block(b)?;
                    self.verify_records(self.block_records(b))
                })
                .collect::<Result<Vec<u64>, BookError>>()?;
            escaped += counts.iter().sum::<u64>();
        }
        if escaped != h.large_counts {
            let at = h.counts_range().start as u64;
            let what = CountsFault::Entries { declared: h.large_counts, found: escaped };
            return Err(BookError::Counts { index: 0, at, what });
        }
        self.checks.mark_all();
        Ok(())
    }

    /// Checks records `range` (order, including against the record before it, and
    /// fields); the number of them whose counts are in the count table.
    fn verify_records(&self, range: std::ops::Range<usize>) -> Result<u64, BookError> {
        let mut prev = range.start.checked_sub(1).map(|i| self.key_at(i));
        let mut escaped = 0;
        for i in range {
            let (r, counts) = self.decode(i);
            let field = |what: FieldFault| BookError::Field { index: i as u64, key: r.key, what };
            if prev.is_some_and(|p| p >= r.key) {
                return Err(BookError::Order { index: i as u64, key: r.key });
            }
            prev = Some(r.key);
            match counts {
                CountsFrom::Missing => return Err(field(FieldFault::CountsMissing)),
                CountsFrom::Table => escaped += 1,
                CountsFrom::Record => {}
            }
            if self.header.version >= 3 && Record::compact_stray_counts(self.record_bytes(i)) {
                return Err(field(FieldFault::StrayCounts));
            }
            if !(-64..=64).contains(&r.value) || !(-64..=64).contains(&r.leaf_score) {
                return Err(field(FieldFault::Score { value: r.value, leaf_score: r.leaf_score }));
            }
            if !r.leaf_move.is_valid() {
                return Err(field(FieldFault::LeafMove { code: r.leaf_move.byte() }));
            }
            if r.wins as u64 + r.draws as u64 > r.games as u64 {
                return Err(field(FieldFault::Counts { wins: r.wins, draws: r.draws, games: r.games }));
            }
        }
        Ok(escaped)
    }

    /// Checks the count table's own order and reserved bytes.
    fn verify_count_table(&self) -> Result<(), BookError> {
        let range = self.header.counts_range();
        let table = &self.bytes[range.clone()];
        let mut prev = None;
        for (i, e) in table.chunks_exact(format::COUNTS_LEN).enumerate() {
            let at = (range.start + i * format::COUNTS_LEN) as u64;
            let bad = |what: CountsFault| BookError::Counts { index: i as u64, at, what };
            let key = u64::from_le_bytes(e[0..8].try_into().unwrap_or_default());
            if prev.is_some_and(|p| p >= key) {
                return Err(bad(CountsFault::Order));
            }
            prev = Some(key);
            if e[18..20] != [0, 0] {
                return Err(bad(CountsFault::Reserved));
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

impl std::fmt::Display for BookSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BookSource::None => f.write_str("(none)"),
            BookSource::Bundled => f.write_str("(bundled)"),
            BookSource::File(path) => path.display().fmt(f),
        }
    }
}

/// A book that cannot be opened, with the file it came from.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The file cannot be read.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The header is damaged or of another version.
    #[error("book {from}: {source}")]
    Format {
        /// The book: the bundled one or a file.
        from: BookSource,
        /// What is wrong with it.
        #[source]
        source: BookError,
    },
}

impl BookSource {
    /// Opens the book in constant time (header, sizes, fingerprint; [`Book::verify`]
    /// checks the records); `None` for [`BookSource::None`].
    pub fn open(&self) -> Result<Option<Book<Bytes>>, OpenError> {
        let bytes = match self {
            BookSource::None => return Ok(None),
            BookSource::Bundled => Bytes::from_static(bundled_bytes()),
            BookSource::File(p) => read_mapped(p).map_err(IoError::at(p))?,
        };
        Book::open(bytes).map(Some).map_err(|source| OpenError::Format { from: self.clone(), source })
    }
}

/// The bytes of the book built from the bundled archives, embedded in the binary.
fn bundled_bytes() -> &'static [u8] {
    include_bytes!("../../data/book.tbk")
}

/// The bundled book.
pub fn bundled() -> Result<Book<&'static [u8]>, BookError> {
    Book::open(bundled_bytes())
}

/// The book positions reachable from the start through book positions, by key, with
/// their canonical boards (the file stores keys only; boards are found by play).
pub(crate) fn walk<D: AsRef<[u8]>>(book: &Book<D>) -> HashMap<u64, Board> {
    walk_from(book, Board::START)
}

/// The book positions reachable from `start` through book positions (see [`walk`]).
pub(crate) fn walk_from<D: AsRef<[u8]>>(book: &Book<D>, start: Board) -> HashMap<u64, Board> {
    let mut seen = HashMap::new();
    for_each_reachable(book, start, &mut |_, board, record| {
        seen.insert(record.key, board);
    });
    seen
}

/// Calls `each(index, canonical board, record)` once for every book position reachable
/// from `start` through book positions, in depth-first order. Memory is a bit a record
/// and the walk's stack (about the ply limit times the moves a position has), so it
/// serves books of 10^8 positions: the file stores keys only, and boards are found by
/// play.
pub(crate) fn for_each_reachable<D: AsRef<[u8]>>(
    book: &Book<D>,
    start: Board,
    each: &mut dyn FnMut(usize, Board, Record),
) {
    let mut seen = vec![0u64; book.len().div_ceil(64)];
    let filter = KeyFilter::new(book);
    let mut stack = vec![start];
    while let Some(b) = stack.pop() {
        let canon = b.canonical().0;
        let key = canon.key();
        if !filter.may_hold(key) {
            continue;
        }
        let Some((i, record)) = book.find(key) else { continue };
        if seen[i / 64] >> (i % 64) & 1 == 1 {
            continue;
        }
        seen[i / 64] |= 1 << (i % 64);
        each(i, canon, record);
        stack.extend(canon.successors().map(|(_, child)| child));
    }
}

/// A bit for each slot of a table about eight times the book's size, set where a key
/// of the book falls: most children of a book position are not in the book, and one
/// read of this table rules out 9 in 10 of them where a search of the mapped file reads
/// it five or six times. Only for large books (small walks do not pay for the table).
struct KeyFilter {
    bits: Vec<u64>,
    shift: u32,
}

impl KeyFilter {
    /// Books below this size are searched directly.
    const MIN_RECORDS: usize = 1 << 20;

    fn new<D: AsRef<[u8]>>(book: &Book<D>) -> KeyFilter {
        if book.len() < Self::MIN_RECORDS {
            return KeyFilter { bits: Vec::new(), shift: 64 };
        }
        let slots = (book.len() * 8).next_power_of_two();
        let shift = 64 - slots.trailing_zeros();
        let bits = vec![0u64; slots / 64];
        let mut filter = KeyFilter { bits, shift };
        for r in book.records() {
            let slot = filter.slot(r.key);
            filter.bits[slot / 64] |= 1 << (slot % 64);
        }
        filter
    }

    /// Whether the book may hold `key` (always, without a table).
    fn may_hold(&self, key: u64) -> bool {
        if self.bits.is_empty() {
            return true;
        }
        let slot = self.slot(key);
        self.bits[slot / 64] >> (slot % 64) & 1 == 1
    }

    /// The slot of `key`: its top bits.
    #[expect(clippy::cast_possible_truncation, reason = "below the slot count, a usize")]
    fn slot(&self, key: u64) -> usize {
        (key >> self.shift) as usize
    }
}

/// The boards of the book's positions, found by play from the start: through book
/// positions, and across up to [`BRIDGE_PLIES`] positions outside the book, since a
/// position reached by transposition from two rarer lines (each below a build's
/// minimum game count) is in the book while its parents are not.
pub(crate) fn known_boards<D: AsRef<[u8]>>(book: &Book<D>) -> HashMap<u64, Board> {
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
pub(crate) const BRIDGE_PLIES: usize = 2;
