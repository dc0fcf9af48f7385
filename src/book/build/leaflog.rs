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
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use byteorder::{ByteOrder, LittleEndian as LE};

use super::error::EntryFault;
use super::Leaf;
use crate::book::format::LeafMove;
use crate::fileio::{self, LockRefused, TryLockFault};

/// Why a file of scored positions cannot be read: the caller says what its header
/// means and names the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EntriesFault {
    /// Its header is not the one expected (another run, format or file): `found` is as
    /// much of it as there is.
    Header {
        /// The bytes where the header belongs.
        found: Vec<u8>,
    },
    /// An entry before the end is damaged.
    Damaged {
        /// The entry.
        index: usize,
        /// Its first byte.
        byte: usize,
        /// What is wrong.
        fault: EntryFault,
    },
}

/// The entries of a file of scored positions whose header must be `header`, each read
/// by `decode`, and the length of its whole entries. A file cut before its header was
/// whole (a prefix of it: killed while being created) holds nothing; a cut-off last
/// entry (killed while appending) is left out. Build checkpoints, shard checkpoints
/// and search logs are all read here.
pub(crate) fn parse_entries(
    bytes: &[u8],
    header: &[u8],
    decode: impl Fn(&[u8]) -> Result<(u64, Leaf), EntryFault>,
) -> Result<(HashMap<u64, Leaf>, usize), EntriesFault> {
    if bytes.len() < header.len() && header.starts_with(bytes) {
        return Ok((HashMap::new(), 0));
    }
    if bytes.len() < header.len() || bytes[..header.len()] != *header {
        return Err(EntriesFault::Header { found: bytes[..bytes.len().min(header.len())].to_vec() });
    }
    let whole = (bytes.len() - header.len()) / LEAF_ENTRY;
    let mut done = HashMap::with_capacity(whole);
    for (index, e) in bytes[header.len()..header.len() + whole * LEAF_ENTRY].chunks_exact(LEAF_ENTRY).enumerate() {
        let (key, leaf) = decode(e).map_err(|fault| EntriesFault::Damaged {
            index,
            byte: header.len() + index * LEAF_ENTRY,
            fault,
        })?;
        done.insert(key, leaf);
    }
    Ok((done, header.len() + whole * LEAF_ENTRY))
}

/// Why a file of scored positions cannot be opened.
#[derive(Debug)]
pub(crate) enum OpenFault {
    /// Reading, writing or locking it failed.
    Io(std::io::Error),
    /// Another process holds its lock: a run is appending to it.
    Locked,
    /// Its contents.
    Entries(EntriesFault),
}

/// A file of scored positions, appended to by any thread: a build's checkpoint, a
/// shard's checkpoint or a search log. It is locked while open, so that two runs never
/// append to one file, and every entry is checksummed ([`encode_leaf_entry`]). Where
/// the file system refuses locks (Lustre mounted without `flock`, NFS without a lock
/// manager) it is used unlocked and says so ([`LeafFile::lock_refused`]): the run goes
/// on, and its caller warns.
pub(crate) struct LeafFile {
    path: PathBuf,
    file: Mutex<File>,
    lock_refused: Option<LockRefused>,
}

impl LeafFile {
    /// Opens the file at `path` with `header`, locked: with `resume`, an existing file
    /// is continued (cut to its whole entries) and its entries returned, each read by
    /// `decode`; without, or when there is none, a new file is started.
    pub(crate) fn open(
        path: &Path,
        header: &[u8],
        resume: bool,
        decode: impl Fn(&[u8]) -> Result<(u64, Leaf), EntryFault>,
    ) -> Result<(LeafFile, HashMap<u64, Leaf>), OpenFault> {
        let mut file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(OpenFault::Io)?;
        // Where the file system cannot lock, refusing to run would make it unusable:
        // the caller warns and its freshness rule guards.
        let lock_refused = match fileio::try_lock(&file) {
            Ok(lock) => lock.refused(),
            Err(TryLockFault::Busy) => return Err(OpenFault::Locked),
            Err(TryLockFault::Io(e)) => return Err(OpenFault::Io(e)),
        };
        let (done, whole) = if resume {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).map_err(OpenFault::Io)?;
            parse_entries(&bytes, header, decode).map_err(OpenFault::Entries)?
        } else {
            (HashMap::new(), 0)
        };
        if whole < header.len() {
            file.set_len(0).map_err(OpenFault::Io)?;
            file.seek(SeekFrom::Start(0)).map_err(OpenFault::Io)?;
            file.write_all(header).and_then(|()| file.sync_data()).map_err(OpenFault::Io)?;
        } else {
            file.set_len(whole as u64).map_err(OpenFault::Io)?;
            file.seek(SeekFrom::End(0)).map_err(OpenFault::Io)?;
        }
        Ok((LeafFile { path: path.to_path_buf(), file: Mutex::new(file), lock_refused }, done))
    }

    /// Why the file is not locked, when the file system refused the lock.
    pub(crate) fn lock_refused(&self) -> Option<LockRefused> {
        self.lock_refused
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends a result.
    pub(crate) fn append(&self, key: u64, leaf: &Leaf) -> std::io::Result<()> {
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(&encode_leaf_entry(key, leaf))
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// Makes every appended result durable.
    pub(crate) fn sync(&self) -> std::io::Result<()> {
        let f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.sync_data()
    }

    /// Removes the file (its run is finished and the result safely written) while it is
    /// still locked, so that no run resumes from it in between.
    pub(crate) fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(any(feature = "cli", feature = "testing", test))]
const MAGIC: &[u8; 8] = b"TBLEAFL2";
#[cfg(any(feature = "cli", feature = "testing", test))]
/// Logs whose identity was two CRC-32s: refused, naming the cause.
const OLD_MAGIC: &[u8; 8] = b"TBLEAFL1";
#[cfg(any(feature = "cli", feature = "testing", test))]
const HEADER: usize = 32;

#[cfg(any(feature = "cli", feature = "testing", test))]
/// Why a log cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeafLogError {
    /// Reading or writing it failed.
    #[error(transparent)]
    Io(#[from] fileio::IoError),
    /// It belongs to another run, or is not a log.
    #[error("{}: {why}", path.display())]
    Foreign {
        /// The file.
        path: std::path::PathBuf,
        /// Whose it is.
        why: ForeignLog,
    },
    /// Another run holds its lock: it is appending to the log.
    #[error("{}: another run is using it (it is locked)", path.display())]
    Locked {
        /// The file.
        path: std::path::PathBuf,
    },
    /// An entry before the end is damaged.
    #[error("{}: entry {index} (byte {byte}): {fault}: the log is damaged; remove it to start afresh", path.display())]
    Damaged {
        /// The file.
        path: std::path::PathBuf,
        /// The entry.
        index: usize,
        /// Its first byte.
        byte: usize,
        /// What is wrong.
        fault: EntryFault,
    },
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// Why a search log is not this run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ForeignLog {
    /// Written by an older thorbook, in another format.
    #[error("made by an older thorbook (another log format): remove it, or start afresh")]
    OlderFormat,
    /// Not a search log at all.
    #[error("not a thorbook search log")]
    NotALog,
    /// Another run's log (another book, settings or sample).
    #[error("made by another run (another book, settings or sample): remove it, or start afresh")]
    OtherRun,
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// An open search log.
pub(crate) struct LeafLog(LeafFile);

#[cfg(any(feature = "cli", feature = "testing", test))]
impl LeafLog {
    /// Opens the log of the run `identity` at `path` (locked while open): with
    /// `resume`, an existing log of the same run is continued and its results
    /// returned; without, or when there is none, a new log is started.
    pub(crate) fn open(
        path: &Path,
        identity: u64,
        selectivity: u8,
        resume: bool,
    ) -> Result<(LeafLog, HashMap<u64, Leaf>), LeafLogError> {
        let header = LeafLog::header(identity, selectivity);
        match LeafFile::open(path, &header, resume, |e| decode_leaf_entry(e, selectivity)) {
            Ok((file, done)) => Ok((LeafLog(file), done)),
            Err(OpenFault::Io(source)) => Err(fileio::IoError::new(path, source).into()),
            Err(OpenFault::Locked) => Err(LeafLogError::Locked { path: path.to_path_buf() }),
            Err(OpenFault::Entries(fault)) => Err(LeafLog::explain(path, fault)),
        }
    }

    fn header(identity: u64, selectivity: u8) -> [u8; HEADER] {
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..16].copy_from_slice(&identity.to_le_bytes());
        header[16] = selectivity;
        header
    }

    /// What a fault of the log at `path` means.
    fn explain(path: &Path, fault: EntriesFault) -> LeafLogError {
        let foreign = |why| LeafLogError::Foreign { path: path.to_path_buf(), why };
        match fault {
            EntriesFault::Header { found } if found.starts_with(OLD_MAGIC) => foreign(ForeignLog::OlderFormat),
            EntriesFault::Header { found } if found.len() < 8 || found[..8] != MAGIC[..] => {
                foreign(ForeignLog::NotALog)
            }
            EntriesFault::Header { .. } => foreign(ForeignLog::OtherRun),
            EntriesFault::Damaged { index, byte, fault } => {
                LeafLogError::Damaged { path: path.to_path_buf(), index, byte, fault }
            }
        }
    }

    /// Reads log bytes as a resumed run would, taking the run's identity from the
    /// bytes themselves (for the fuzz target): the results, or why not.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn parse(bytes: &[u8]) -> Result<HashMap<u64, Leaf>, LeafLogError> {
        let identity = bytes.get(8..16).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
        let selectivity = bytes.get(16).copied().unwrap_or(0);
        let header = LeafLog::header(identity, selectivity);
        parse_entries(bytes, &header, |e| decode_leaf_entry(e, selectivity))
            .map(|(done, _)| done)
            .map_err(|fault| LeafLog::explain(Path::new("log"), fault))
    }

    /// The file, for [`search_logged`](super::search::search_logged).
    pub(crate) fn file(&self) -> &LeafFile {
        &self.0
    }

    /// Appends a result.
    pub(crate) fn append(&self, key: u64, leaf: &Leaf) -> Result<(), LeafLogError> {
        self.0.append(key, leaf).map_err(|source| fileio::IoError::new(self.0.path(), source).into())
    }

    /// Makes every appended result durable (for a log written in one go, not appended
    /// to by a run).
    pub(crate) fn sync(&self) -> Result<(), LeafLogError> {
        self.0.sync().map_err(|source| fileio::IoError::new(self.0.path(), source).into())
    }

    /// Why the log is not locked, when the file system refused the lock.
    pub(crate) fn lock_refused(&self) -> Option<LockRefused> {
        self.0.lock_refused()
    }

    /// Removes the log (the run is finished and its result safely written).
    pub(crate) fn remove(self) {
        self.0.remove();
    }
}

/// Bytes of a scored position as checkpoints and shard files store it.
pub(crate) const LEAF_ENTRY: usize = 16;

/// A scored position as checkpoints and shard files store it: key u64, leaf move,
/// score, depth, flags (bit 0: exact), then the CRC-32 of those 12 bytes, so that a
/// damaged entry is found wherever it is.
pub(crate) fn encode_leaf_entry(key: u64, leaf: &Leaf) -> [u8; LEAF_ENTRY] {
    let mut e = [0u8; LEAF_ENTRY];
    LE::write_u64(&mut e[..8], key);
    e[8] = leaf.mv.byte();
    e[9] = leaf.score.to_le_bytes()[0];
    e[10] = leaf.depth;
    e[11] = u8::from(leaf.exact);
    let crc = crc32fast::hash(&e[..12]);
    LE::write_u32(&mut e[12..16], crc);
    e
}

/// Reads an entry of [`encode_leaf_entry`], checking its checksum, move and score; a
/// searched (not exact) leaf takes `selectivity`, which the file's header records.
pub(crate) fn decode_leaf_entry(e: &[u8], selectivity: u8) -> Result<(u64, Leaf), EntryFault> {
    if crc32fast::hash(&e[..12]) != LE::read_u32(&e[12..16]) {
        return Err(EntryFault::Checksum);
    }
    let (mv, score) = (LeafMove::from_byte(e[8]), i8::from_le_bytes([e[9]]));
    if !mv.is_valid() || !(-64..=64).contains(&score) {
        return Err(EntryFault::Range { code: mv.byte(), score });
    }
    let exact = e[11] & 1 != 0;
    let selectivity = if !mv.is_none() && !exact { selectivity } else { 0 };
    Ok((LE::read_u64(&e[..8]), Leaf { mv, score, depth: e[10], exact, selectivity }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::format::LeafMove;

    /// One rule for every file of scored positions: a file cut inside its header (a
    /// prefix of it) holds nothing; anything else short or different is the caller's
    /// header fault; a cut last entry is left out; a damaged one names its byte.
    #[test]
    fn every_leaf_file_reads_a_short_file_alike() {
        let header = *b"HEADER-OF-SIXTEEN-BYTES!";
        let leaf = Leaf { mv: LeafMove::from_byte(19), score: -3, depth: 7, exact: false, selectivity: 0 };
        let decode = |e: &[u8]| decode_leaf_entry(e, 0);
        for cut in 0..header.len() {
            assert_eq!(parse_entries(&header[..cut], &header, decode), Ok((HashMap::new(), 0)), "cut at {cut}");
        }
        assert!(matches!(parse_entries(b"HEADS", &header, decode), Err(EntriesFault::Header { .. })));
        let mut bytes = header.to_vec();
        bytes.extend_from_slice(&encode_leaf_entry(5, &leaf));
        bytes.extend_from_slice(&encode_leaf_entry(6, &leaf)[..9]);
        let (done, whole) = parse_entries(&bytes, &header, decode).unwrap();
        assert_eq!((done.len(), done[&5], whole), (1, leaf, header.len() + LEAF_ENTRY));
        bytes[header.len() + 2] ^= 1;
        assert!(matches!(
            parse_entries(&bytes, &header, decode),
            Err(EntriesFault::Damaged { index: 0, byte: 24, .. })
        ));
        // The build checkpoint and the shard checkpoint follow the same rule.
        let want = [0u8; crate::book::build::checkpoint::CHECKPOINT_HEADER];
        assert!(crate::book::build::checkpoint::Checkpoint::parse(&want[..10], &want).unwrap().is_empty());
        let shard = [0u8; crate::book::cluster::plan::shard::SHARD_HEADER];
        assert!(crate::book::cluster::plan::shard::parse_partial(&shard[..10], &shard, decode).unwrap().is_empty());
    }

    /// A second opener of a file of scored positions is refused while the first holds it.
    #[test]
    fn a_leaf_file_is_locked_while_open() {
        let dir = std::env::temp_dir().join(format!("thorbook-leaffile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let decode = |e: &[u8]| decode_leaf_entry(e, 0);
        let (first, _) = LeafFile::open(&path, b"H", false, decode).unwrap();
        assert!(matches!(LeafFile::open(&path, b"H", true, decode), Err(OpenFault::Locked)));
        first.remove();
        assert!(!path.exists());
        assert!(LeafFile::open(&path, b"H", true, decode).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_leaf_file_goes_on_unlocked_where_the_file_system_refuses_locks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let decode = |e: &[u8]| decode_leaf_entry(e, 0);
        let leaf = Leaf { mv: LeafMove::from_byte(19), score: -3, depth: 7, exact: false, selectivity: 0 };
        std::fs::write(&path, b"").unwrap();
        crate::fileio::inject_lock_refusal(&path, Some(libc::ENOLCK));
        let (file, _) = LeafFile::open(&path, b"H", false, decode).unwrap();
        assert_eq!(file.lock_refused(), Some(LockRefused { os_error: Some(libc::ENOLCK) }));
        file.append(5, &leaf).unwrap();
        file.sync().unwrap();
        // A failure that is not a refusal stops the open.
        crate::fileio::inject_lock_refusal(&path, Some(libc::EIO));
        assert!(
            matches!(LeafFile::open(&path, b"H", true, decode), Err(OpenFault::Io(e)) if e.raw_os_error() == Some(libc::EIO))
        );
        crate::fileio::inject_lock_refusal(&path, None);
        drop(file);
        let (file, done) = LeafFile::open(&path, b"H", true, decode).unwrap();
        assert_eq!(file.lock_refused(), None);
        assert_eq!(done, HashMap::from([(5, leaf)]));
    }

    #[test]
    fn a_log_resumes_its_own_run_only_and_drops_a_cut_entry() {
        let dir = std::env::temp_dir().join(format!("thorbook-leaflog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.log");
        let leaf = |score| Leaf { mv: LeafMove::from_byte(19), score, depth: 12, exact: false, selectivity: 15 };
        let (log, done) = LeafLog::open(&path, 7, 15, true).unwrap();
        assert!(done.is_empty());
        assert!(matches!(LeafLog::open(&path, 7, 15, true), Err(LeafLogError::Locked { .. })));
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
