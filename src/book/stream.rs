//! Books written as a stream: records go to disk in key order as they come (from
//! shards being assembled, from books being merged), and the values are backed up
//! afterwards from compact arrays — 10 bytes a position (key, leaf) plus a value byte
//! and two bits, and a key table of 4 bytes a bucket — instead of the records and boards
//! a book held in memory before. Assembling 50.9 million positions peaked at 1.07 GiB
//! (the plan's own keys included: about 22 bytes a position).
//!
//! The back-up is the negamax of [`super::build::negamax`] (a position's value is the
//! best of its leaf and minus its book children's values), walked from the start
//! position, where the boards come from: records carry no board.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::build::leaf_score;
use super::format::{
    find_key, stored_score, BookError, BookHeader, BuildParams, LeafMove, Record, HEADER_LEN, RECORD_LEN, VERSION,
};
use crate::board::Board;
use crate::fileio::AtomicFile;

/// What happens to values and unreachable positions when a streamed book is finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackUp {
    /// Positions reachable from the start get negamax values; the others keep theirs
    /// (a merge: a book may hold positions whose boards are unknown).
    Reachable,
    /// As `Reachable`, and positions not reachable from the start are dropped (an
    /// assembled build, as [`super::build::reachable`]).
    DropUnreachable,
}

/// Why a streamed book could not be written.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// A record out of key order.
    #[error(transparent)]
    Book(#[from] BookError),
    /// Reading or writing a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// A book being written record by record in key order ([`BookFile::push`]), finished
/// by [`BookFile::finish`], which backs the values up and puts the file in place
/// atomically. Dropped unfinished, it leaves nothing behind.
pub struct BookFile {
    path: PathBuf,
    spool_path: PathBuf,
    spool: BufWriter<File>,
    params: BuildParams,
    keys: Vec<u64>,
    /// Per position: the leaf move's byte (high) and the leaf score (low).
    leaves: Vec<u16>,
}

/// A written book.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Positions in it.
    pub positions: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

impl BookFile {
    /// Starts the book that [`BookFile::finish`] writes to `path`; records wait in a
    /// spool file beside it.
    pub fn create(path: &Path, params: BuildParams) -> Result<BookFile, StreamError> {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let spool_path = dir.join(format!(".{name}.{}.spool", std::process::id()));
        let file = File::create(&spool_path).map_err(io(&spool_path))?;
        Ok(BookFile {
            path: path.to_path_buf(),
            spool_path,
            spool: BufWriter::with_capacity(1 << 20, file),
            params,
            keys: Vec::new(),
            leaves: Vec::new(),
        })
    }

    /// Appends a record; its key must be above every key before it.
    pub fn push(&mut self, record: &Record) -> Result<(), StreamError> {
        if self.keys.last().is_some_and(|&k| k >= record.key) {
            return Err(BookError::Order { index: self.keys.len() as u64, key: record.key }.into());
        }
        self.spool.write_all(&record.to_bytes()).map_err(io(&self.spool_path))?;
        self.keys.push(record.key);
        self.leaves.push(u16::from_le_bytes([record.leaf_score.to_le_bytes()[0], record.leaf_move.byte()]));
        Ok(())
    }

    /// Positions pushed so far.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True before the first record.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Backs the values up, writes the book (header last) and puts it in place.
    pub fn finish(mut self, back_up: BackUp) -> Result<Written, StreamError> {
        self.spool.flush().map_err(io(&self.spool_path))?;
        let values = Values::compute(&self.keys, &self.leaves);
        let mut out = AtomicFile::create(&self.path).map_err(io(&self.path))?;
        out.write_all(&[0; HEADER_LEN]).map_err(io(&self.path))?;
        let spool = File::open(&self.spool_path).map_err(io(&self.spool_path))?;
        let mut reader = BufReader::with_capacity(1 << 20, spool);
        let mut crc = crc32fast::Hasher::new();
        let mut record = [0u8; RECORD_LEN];
        let mut count = 0u64;
        for i in 0..self.keys.len() {
            reader.read_exact(&mut record).map_err(io(&self.spool_path))?;
            if !values.reached(i) && back_up == BackUp::DropUnreachable {
                continue;
            }
            if let Some(v) = values.value(i) {
                record[8] = v.to_le_bytes()[0];
            }
            crc.update(&record);
            out.write_all(&record).map_err(io(&self.path))?;
            count += 1;
        }
        let header = BookHeader { version: VERSION, count, params: self.params, records_crc: crc.finalize() };
        out.write_at(0, &header.encode()).map_err(io(&self.path))?;
        out.commit().map_err(io(&self.path))?;
        let _ = std::fs::remove_file(&self.spool_path);
        Ok(Written { positions: count, bytes: HEADER_LEN as u64 + count * RECORD_LEN as u64 })
    }
}

impl Drop for BookFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.spool_path);
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> StreamError + '_ {
    move |source| StreamError::Io { path: path.display().to_string(), source }
}

/// Negamax values of the positions reachable from the start.
struct Values {
    values: Vec<i8>,
    /// Bit per position: reached from the start.
    reached: Vec<u64>,
    /// Bit per position: has a value (a leaf or a child with one).
    valued: Vec<u64>,
}

fn bit(bits: &[u64], i: usize) -> bool {
    bits[i / 64] >> (i % 64) & 1 == 1
}

fn set(bits: &mut [u64], i: usize) {
    bits[i / 64] |= 1 << (i % 64);
}

impl Values {
    fn compute(keys: &[u64], leaves: &[u16]) -> Values {
        let words = keys.len().div_ceil(64);
        let mut v = Values { values: vec![0; keys.len()], reached: vec![0; words], valued: vec![0; words] };
        let index = KeyIndex::new(keys);
        let start = Board::START.canonical().0;
        if let Some(i) = index.find(start.key()) {
            v.visit(&index, leaves, i, &start);
        }
        v
    }

    fn reached(&self, i: usize) -> bool {
        bit(&self.reached, i)
    }

    fn value(&self, i: usize) -> Option<i8> {
        bit(&self.valued, i).then(|| self.values[i])
    }

    /// The value of position `i` with canonical board `board`: depth-first, each
    /// position once (the game graph has no cycles; the depth is at most 60 moves
    /// and the passes between them).
    fn visit(&mut self, keys: &KeyIndex, leaves: &[u16], i: usize, board: &Board) -> Option<i8> {
        if self.reached(i) {
            return self.value(i);
        }
        set(&mut self.reached, i);
        let [score, mv] = leaves[i].to_le_bytes();
        let mut best = leaf_score(board, LeafMove::from_byte(mv), i8::from_le_bytes([score]));
        for (_, child) in board.successors() {
            let canon = child.canonical().0;
            if let Some(j) = keys.find(canon.key()) {
                if let Some(c) = self.visit(keys, leaves, j, &canon) {
                    let c = -i32::from(c);
                    best = Some(best.map_or(c, |b| b.max(c)));
                }
            }
        }
        let value = best.map(|b| stored_score(b.clamp(-64, 64)));
        if let Some(v) = value {
            self.values[i] = v;
            set(&mut self.valued, i);
        }
        value
    }
}

/// Sorted keys with a table of where each run of leading bits starts: a lookup reads
/// one table entry and, on average, under two keys — two cache misses where a search
/// of 50 million keys takes five or more (the back-up makes about ten lookups a
/// position).
struct KeyIndex<'a> {
    keys: &'a [u64],
    /// `starts[b]`: the first key whose top `bits` bits are `b` or more.
    starts: Vec<u32>,
    bits: u32,
}

impl<'a> KeyIndex<'a> {
    fn new(keys: &'a [u64]) -> KeyIndex<'a> {
        // About one key a bucket, and indices that fit in 32 bits (else no table).
        let bits = if u32::try_from(keys.len()).is_ok() { keys.len().max(2).ilog2().min(32) } else { 0 };
        let mut starts = Vec::new();
        if bits > 0 {
            starts = Vec::with_capacity((1usize << bits) + 1);
            let mut i = 0usize;
            for bucket in 0..(1u64 << bits) {
                while i < keys.len() && keys[i] >> (64 - bits) < bucket {
                    i += 1;
                }
                starts.push(u32::try_from(i).expect("fewer than 2^32 keys"));
            }
            starts.push(u32::try_from(keys.len()).expect("fewer than 2^32 keys"));
        }
        KeyIndex { keys, starts, bits }
    }

    fn find(&self, key: u64) -> Option<usize> {
        if self.bits == 0 {
            return find_key(self.keys.len(), |i| self.keys[i], key);
        }
        let bucket = usize::try_from(key >> (64 - self.bits)).expect("below 2^32");
        let (lo, hi) = (self.starts[bucket] as usize, self.starts[bucket + 1] as usize);
        self.keys[lo..hi].iter().position(|&k| k == key).map(|j| lo + j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(key: u64) -> Record {
        Record {
            key,
            value: 5,
            leaf_move: LeafMove::NONE,
            leaf_score: 5,
            leaf_depth: 0,
            games: 1,
            wins: 0,
            draws: 0,
            flags: 0,
            leaf_selectivity: 0,
        }
    }

    #[test]
    fn records_out_of_order_are_refused_and_an_unfinished_book_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("thorbook-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("b.tbk");
        let mut book = BookFile::create(&path, BuildParams::default()).unwrap();
        book.push(&record(10)).unwrap();
        assert!(matches!(book.push(&record(10)), Err(StreamError::Book(BookError::Order { index: 1, key: 10 }))));
        assert!(book.push(&record(3)).is_err());
        drop(book);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "a dropped book left files");
        // Finished: unreachable positions keep their values or are dropped.
        let mut book = BookFile::create(&path, BuildParams::default()).unwrap();
        for k in [1, 2, 3] {
            book.push(&record(k)).unwrap();
        }
        let kept = book.finish(BackUp::Reachable).unwrap();
        assert_eq!(kept, Written { positions: 3, bytes: (HEADER_LEN + 3 * RECORD_LEN) as u64 });
        let b = super::super::Book::open_verified(std::fs::read(&path).unwrap()).unwrap();
        assert!(b.records().all(|r| r.value == 5));
        let mut book = BookFile::create(&path, BuildParams::default()).unwrap();
        book.push(&record(1)).unwrap();
        assert_eq!(book.finish(BackUp::DropUnreachable).unwrap().positions, 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
