//! A log of finished searches for runs that take hours (an audit, a fix): each result
//! is appended as it finishes, checksummed entry by entry, so that a run interrupted
//! at any moment resumes with every finished search kept and nothing searched twice.
//!
//! Layout: a 32-byte header — magic `TBLEAFL2`, the run's identity (u64: a digest of
//! everything the results depend on), the searches' selectivity in tenths (u8), 15 zero
//! bytes — then entries of 16 bytes as build checkpoints store them (key u64, move,
//! score i8, depth, flags, CRC-32 of those 12 bytes). A cut-short last entry (a kill
//! while writing) is dropped and overwritten; a damaged entry elsewhere is an error
//! naming its byte. Every append reaches the file before the next search starts, and
//! the first failed write stops the run.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::build::{decode_leaf_entry, encode_leaf_entry, Leaf, LEAF_ENTRY};
use crate::fileio::IoError;

const MAGIC: &[u8; 8] = b"TBLEAFL2";
/// Logs whose identity was two CRC-32s: refused, naming the cause.
const OLD_MAGIC: &[u8; 8] = b"TBLEAFL1";
const HEADER: usize = 32;

/// Why a log cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeafLogError {
    /// Reading or writing it failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// It belongs to another run, or is not a log.
    #[error("{}: {message}", path.display())]
    Foreign {
        /// The file.
        path: std::path::PathBuf,
        /// What differs.
        message: String,
    },
    /// An entry before the end is damaged.
    #[error("{}: entry {index} (byte {byte}): {message}: the log is damaged; remove it to start afresh", path.display())]
    Damaged {
        /// The file.
        path: std::path::PathBuf,
        /// The entry.
        index: usize,
        /// Its first byte.
        byte: usize,
        /// What is wrong.
        message: String,
    },
}

/// An open log, appended to by any thread.
pub(crate) struct LeafLog {
    path: PathBuf,
    file: Mutex<File>,
}

impl LeafLog {
    /// Opens the log of the run `identity` at `path`: with `resume`, an existing log of
    /// the same run is continued and its results returned; without, or when there is
    /// none, a new log is started.
    pub(crate) fn open(
        path: &Path,
        identity: u64,
        selectivity: u8,
        resume: bool,
    ) -> Result<(LeafLog, HashMap<u64, Leaf>), LeafLogError> {
        let io = |source| LeafLogError::from(IoError::new(path, source));
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..16].copy_from_slice(&identity.to_le_bytes());
        header[16] = selectivity;
        if resume && path.exists() {
            let mut bytes = Vec::new();
            File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)).map_err(io)?;
            let (done, whole) = LeafLog::read(path, &bytes, &header)?;
            let mut file = OpenOptions::new().write(true).open(path).map_err(io)?;
            file.set_len(whole as u64).map_err(io)?;
            std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0)).map_err(io)?;
            return Ok((LeafLog { path: path.to_path_buf(), file: Mutex::new(file) }, done));
        }
        let mut file = File::create(path).map_err(io)?;
        file.write_all(&header).and_then(|()| file.sync_data()).map_err(io)?;
        Ok((LeafLog { path: path.to_path_buf(), file: Mutex::new(file) }, HashMap::new()))
    }

    /// The results of a log's bytes (`name` for errors) made with `header`, and the
    /// length of its whole entries (a cut-short last one is left out).
    fn read(name: &Path, bytes: &[u8], header: &[u8; HEADER]) -> Result<(HashMap<u64, Leaf>, usize), LeafLogError> {
        if bytes.len() >= 8 && &bytes[..8] == OLD_MAGIC {
            return Err(LeafLogError::Foreign {
                path: name.to_path_buf(),
                message: "made by an older thorbook (another log format): remove it, or start afresh".into(),
            });
        }
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            return Err(LeafLogError::Foreign {
                path: name.to_path_buf(),
                message: "not a thorbook search log".into(),
            });
        }
        if bytes[..HEADER] != header[..] {
            return Err(LeafLogError::Foreign {
                path: name.to_path_buf(),
                message: "made by another run (another book, settings or sample): remove it, or start afresh".into(),
            });
        }
        let mut done = HashMap::new();
        let whole = (bytes.len() - HEADER) / LEAF_ENTRY;
        for (index, e) in bytes[HEADER..HEADER + whole * LEAF_ENTRY].chunks_exact(LEAF_ENTRY).enumerate() {
            let (key, leaf) = decode_leaf_entry(e, header[16]).map_err(|message| LeafLogError::Damaged {
                path: name.to_path_buf(),
                index,
                byte: HEADER + index * LEAF_ENTRY,
                message,
            })?;
            done.insert(key, leaf);
        }
        Ok((done, HEADER + whole * LEAF_ENTRY))
    }

    /// Reads log bytes as a resumed run would, taking the run's identity from the
    /// bytes themselves (for the fuzz target): the results, or why not.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn parse(bytes: &[u8]) -> Result<HashMap<u64, Leaf>, LeafLogError> {
        let mut header = [0u8; HEADER];
        let n = bytes.len().min(HEADER);
        header[..n].copy_from_slice(&bytes[..n]);
        header[17..].fill(0);
        LeafLog::read(Path::new("log"), bytes, &header).map(|(done, _)| done)
    }

    /// Appends a result.
    pub(crate) fn append(&self, key: u64, leaf: &Leaf) -> Result<(), LeafLogError> {
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(&encode_leaf_entry(key, leaf)).map_err(|source| IoError::new(&self.path, source).into())
    }

    /// Makes every appended result durable (for a log written in one go, not appended
    /// to by a run).
    pub(crate) fn sync(&self) -> Result<(), LeafLogError> {
        let f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.sync_data().map_err(|source| IoError::new(&self.path, source).into())
    }

    /// Removes the log (the run is finished and its result safely written).
    pub(crate) fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::format::LeafMove;

    #[test]
    fn a_log_resumes_its_own_run_only_and_drops_a_cut_entry() {
        let dir = std::env::temp_dir().join(format!("thorbook-leaflog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.log");
        let leaf = |score| Leaf { mv: LeafMove::from_byte(19), score, depth: 12, exact: false, selectivity: 15 };
        let (log, done) = LeafLog::open(&path, 7, 15, true).unwrap();
        assert!(done.is_empty());
        log.append(1, &leaf(3)).unwrap();
        log.append(2, &leaf(-4)).unwrap();
        drop(log);
        // A kill in the middle of a third entry.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&[9; 5]).unwrap();
        drop(f);
        let (log, done) = LeafLog::open(&path, 7, 15, true).unwrap();
        assert_eq!(done.len(), 2);
        assert_eq!(done[&2], leaf(-4));
        log.append(3, &leaf(0)).unwrap();
        drop(log);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), (HEADER + 3 * LEAF_ENTRY) as u64);
        assert!(matches!(LeafLog::open(&path, 8, 15, true), Err(LeafLogError::Foreign { .. })));
        // A damaged entry before the end is an error naming its byte.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[HEADER + LEAF_ENTRY + 3] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        match LeafLog::open(&path, 7, 15, true) {
            Err(LeafLogError::Damaged { index: 1, byte, .. }) => assert_eq!(byte, HEADER + LEAF_ENTRY),
            other => panic!("{:?}", other.map(|(_, d)| d)),
        }
        // Without resume, a new log.
        let (_, done) = LeafLog::open(&path, 7, 15, false).unwrap();
        assert!(done.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
