//! Books written as a stream: records go to disk in key order as they come (from
//! shards being assembled, from books being merged), and the values are backed up
//! afterwards from compact arrays — 13 bytes a position (key, leaf) plus a value byte
//! and three bits (four more bytes under the corrected rule), and a key table of 4 bytes
//! a bucket — instead of the records and boards
//! a book held in memory before. Assembling 99.0 million positions peaked at 1.59 GiB
//! (the plan's own keys, which the book borrows, included: about 17 bytes a position).
//!
//! The values come from the one back-up ([`super::backup`]), walked from the start
//! position, where the boards come from (records carry no board), on every core.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::backup::{LeafInput, Reached, Values};
use crate::board::Board;
use crate::book::format::{BookError, BuildParams, Encoder, Record, HEADER_LEN, RECORD_LEN, WIDE_RECORD_LEN};
use crate::fileio::AtomicFile;
use crate::fileio::IoError;

/// Why a streamed book could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// A record out of key order.
    #[error(transparent)]
    Book(#[from] BookError),
    /// Reading or writing a file.
    #[error(transparent)]
    Io(#[from] IoError),
}

/// A book being written record by record in key order ([`BookFile::push`]), finished
/// by [`BookFile::finish`], which backs the values up and puts the file in place
/// atomically. Dropped unfinished, it leaves nothing behind.
pub(crate) struct BookFile<'k> {
    path: PathBuf,
    spool_path: PathBuf,
    spool: BufWriter<File>,
    params: BuildParams,
    keys: Keys<'k>,
    leaves: Vec<LeafInput>,
}

/// The keys of the records pushed: gathered as they come, or known beforehand (an
/// assembly's plan holds them already: a second copy would be 8 bytes a position).
enum Keys<'k> {
    Gathered(Vec<u64>),
    Known { keys: &'k [u64], pushed: usize },
}

impl Keys<'_> {
    fn pushed(&self) -> &[u64] {
        match self {
            Keys::Gathered(keys) => keys,
            Keys::Known { keys, pushed } => &keys[..*pushed],
        }
    }
}

/// A written book.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Positions in it.
    pub positions: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

impl<'k> BookFile<'k> {
    /// Starts the book that [`BookFile::finish`] writes to `path`; records wait in a
    /// spool file beside it.
    pub(crate) fn create(path: &Path, params: BuildParams) -> Result<BookFile<'static>, StreamError> {
        BookFile::with_keys(path, params, Keys::Gathered(Vec::new()))
    }

    /// [`BookFile::create`] for records whose keys are `keys`, in order: a record with
    /// another key is refused.
    pub(crate) fn with_known_keys(
        path: &Path,
        params: BuildParams,
        keys: &'k [u64],
    ) -> Result<BookFile<'k>, StreamError> {
        BookFile::with_keys(path, params, Keys::Known { keys, pushed: 0 })
    }

    fn with_keys(path: &Path, params: BuildParams, keys: Keys<'k>) -> Result<BookFile<'k>, StreamError> {
        let spool_path = crate::fileio::work_path(path, "spool");
        let file = File::create(&spool_path).map_err(io(&spool_path))?;
        Ok(BookFile {
            path: path.to_path_buf(),
            spool_path,
            spool: BufWriter::with_capacity(1 << 20, file),
            params,
            keys,
            leaves: Vec::new(),
        })
    }

    /// Makes room for `records` more records in the compact arrays, so that a caller
    /// that knows how many come does not pay the arrays' doubling (up to twice the
    /// memory while they move).
    pub(crate) fn reserve(&mut self, records: usize) {
        if let Keys::Gathered(keys) = &mut self.keys {
            keys.reserve_exact(records);
        }
        self.leaves.reserve_exact(records);
    }

    /// Appends a record; its key must be above every key before it.
    pub(crate) fn push(&mut self, record: &Record) -> Result<(), StreamError> {
        let index = self.leaves.len();
        let refused = BookError::Order { index: index as u64, key: record.key };
        match &mut self.keys {
            Keys::Gathered(keys) => {
                if keys.last().is_some_and(|&k| k >= record.key) {
                    return Err(refused.into());
                }
                keys.push(record.key);
            }
            Keys::Known { keys, pushed } => {
                if keys.get(index) != Some(&record.key) {
                    return Err(refused.into());
                }
                *pushed += 1;
            }
        }
        self.spool.write_all(&record.to_wide_bytes()).map_err(io(&self.spool_path))?;
        self.leaves.push(LeafInput::of(record));
        Ok(())
    }

    /// Backs the values up walking from `roots` (none: the values stay as pushed) on
    /// the threads of the rayon pool it is called in (every core outside one: the
    /// bytes are the same for any count), writes the book (header last) and puts it in
    /// place.
    pub(crate) fn finish(mut self, roots: &[Board], others: Reached) -> Result<Written, StreamError> {
        self.spool.flush().map_err(io(&self.spool_path))?;
        let keys = self.keys.pushed();
        let threads = rayon::current_num_threads();
        let values = Values::compute(keys, &self.leaves, roots.iter().copied(), self.params.back_up, threads);
        let mut out = AtomicFile::create(&self.path).map_err(io(&self.path))?;
        out.write_all(&[0; HEADER_LEN]).map_err(io(&self.path))?;
        let spool = File::open(&self.spool_path).map_err(io(&self.spool_path))?;
        let mut reader = BufReader::with_capacity(1 << 20, spool);
        let mut encoder = Encoder::new(self.params);
        let mut wide = [0u8; WIDE_RECORD_LEN];
        for i in 0..keys.len() {
            reader.read_exact(&mut wide).map_err(io(&self.spool_path))?;
            if !values.reached(i) && others == Reached::DropOthers {
                continue;
            }
            let mut record = Record::from_wide_bytes(&wide);
            if let Some(v) = values.value(i) {
                record.value = v;
            }
            out.write_all(&encoder.push(&record)?).map_err(io(&self.path))?;
        }
        let positions = encoder.count();
        let (trailer, header) = encoder.finish();
        out.write_all(&trailer).map_err(io(&self.path))?;
        out.write_at(0, &header).map_err(io(&self.path))?;
        out.commit().map_err(io(&self.path))?;
        let _ = std::fs::remove_file(&self.spool_path);
        let bytes = (HEADER_LEN + trailer.len()) as u64 + positions * RECORD_LEN as u64;
        Ok(Written { positions, bytes })
    }
}

impl Drop for BookFile<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.spool_path);
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> StreamError + '_ {
    move |source| StreamError::Io(IoError::new(path, source))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::format::LeafMove;

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
        let kept = book.finish(&[Board::START], Reached::KeepOthers).unwrap();
        let expected =
            crate::book::format::Writer::write_all(&[record(1), record(2), record(3)], BuildParams::default());
        assert_eq!(kept, Written { positions: 3, bytes: expected.unwrap().len() as u64 });
        let b = crate::book::Book::open_verified(std::fs::read(&path).unwrap()).unwrap();
        assert!(b.records().all(|r| r.value == 5));
        let mut book = BookFile::create(&path, BuildParams::default()).unwrap();
        book.push(&record(1)).unwrap();
        assert_eq!(book.finish(&[Board::START], Reached::DropOthers).unwrap().positions, 0);
        // Known keys: the records must come with exactly those keys, in order.
        let keys = [2, 5, 9];
        let mut book = BookFile::with_known_keys(&path, BuildParams::default(), &keys).unwrap();
        book.push(&record(2)).unwrap();
        assert!(matches!(book.push(&record(9)), Err(StreamError::Book(BookError::Order { index: 1, key: 9 }))));
        book.push(&record(5)).unwrap();
        let first_two = book.finish(&[Board::START], Reached::KeepOthers).unwrap();
        let expected = crate::book::format::Writer::write_all(&[record(2), record(5)], BuildParams::default());
        assert!(std::fs::read(&path).unwrap() == expected.unwrap() && first_two.positions == 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
