//! Positions files: collected positions in key order (magic, count, 40 bytes a
//! position, CRC-32 of all before), written once and read as a checked stream — a
//! plan's `nodes.bin` and a build's positions waiting to be scored — and
//! [`PositionsError`], why collecting, writing or reading them failed.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use byteorder::{ByteOrder, LittleEndian as LE};

#[cfg(any(feature = "cli", feature = "testing", test))]
use super::checkpoint::PositionsDigest;
use super::{BuildError, Node};
use crate::board::Board;
use crate::fileio::IoError;

/// Why positions could not be collected, written or read; each names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum PositionsError {
    /// A game's move is not legal, or two boards share a key.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A file could not be read or written.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The collection's buffer cannot be allocated.
    #[error("cannot allocate the {} MiB buffer that collects the positions: give a smaller sort budget", bytes >> 20)]
    Memory {
        /// Its size.
        bytes: usize,
    },
    /// A positions file (or a sorted run of one) is unusable.
    #[error("{}: {fault}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        fault: PositionsFault,
    },
}

impl PositionsError {
    /// `fault` in the positions file at `path`.
    pub(crate) fn file(path: &Path, fault: PositionsFault) -> PositionsError {
        PositionsError::File { path: path.to_path_buf(), fault }
    }
}

/// What is wrong with a positions file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum PositionsFault {
    /// Not a positions file.
    #[error("not a thorbook positions file (byte 0)")]
    NotPositions,
    /// A positions file of the wrong length.
    #[error("{len} bytes, expected {expected} for {count} positions (truncated?)")]
    PositionsLength {
        /// Its length.
        len: u64,
        /// The length its count needs.
        expected: u64,
        /// The count in its header.
        count: u64,
    },
    /// The file's checksum does not match.
    #[error("checksum mismatch (damaged)")]
    Checksum,
    /// A position is invalid.
    #[error("position {index}: {problem}")]
    Position {
        /// Its index.
        index: u64,
        /// What is wrong.
        problem: &'static str,
    },
    /// Not the count of positions expected (a plan's `plan.json` gives it).
    #[cfg(any(feature = "cli", feature = "testing", test))]
    #[error(
        "not the positions this plan was made with (their count, digest or shards' sizes differ from plan.json's)"
    )]
    NotThePlans,
}

/// An I/O failure on `path`.
pub(crate) fn io(path: &Path) -> impl Fn(std::io::Error) -> PositionsError + '_ {
    move |source| PositionsError::Io(IoError::new(path, source))
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// The positions file in a plan's directory.
pub(crate) const NODES_FILE: &str = "nodes.bin";
const NODES_MAGIC: &[u8; 8] = b"TBNODES1";
const NODE_LEN: usize = 40;

#[cfg(any(feature = "cli", feature = "testing", test))]
/// Writes a positions file: magic, count, 40 bytes a position, CRC-32 of all before.
pub(crate) fn write_nodes(path: &Path, nodes: &[Node]) -> Result<(), PositionsError> {
    let mut out = NodeWriter::create(path)?;
    for n in nodes {
        out.push(n)?;
    }
    out.finish()
}

/// A positions file written a position at a time (the count, which comes first, is
/// written last); put in place atomically by [`NodeWriter::finish`].
pub(crate) struct NodeWriter {
    path: PathBuf,
    out: crate::fileio::AtomicFile,
    crc: crc32fast::Hasher,
    count: u64,
}

impl NodeWriter {
    pub(crate) fn create(path: &Path) -> Result<NodeWriter, PositionsError> {
        let mut out = crate::fileio::AtomicFile::create(path).map_err(io(path))?;
        out.write_all(NODES_MAGIC).map_err(io(path))?;
        out.write_all(&[0; 8]).map_err(io(path))?;
        Ok(NodeWriter { path: path.to_path_buf(), out, crc: crc32fast::Hasher::new(), count: 0 })
    }

    pub(crate) fn push(&mut self, n: &Node) -> Result<(), PositionsError> {
        let mut b = [0u8; NODE_LEN];
        b[..NODE_FIELDS].copy_from_slice(&encode_node(n));
        self.crc.update(&b);
        self.count += 1;
        self.out.write_all(&b).map_err(io(&self.path))
    }

    pub(crate) fn finish(mut self) -> Result<(), PositionsError> {
        let count = self.count.to_le_bytes();
        let mut crc = crc32fast::Hasher::new();
        crc.update(NODES_MAGIC);
        crc.update(&count);
        crc.combine(&self.crc);
        let path = &self.path;
        self.out.write_at(8, &count).map_err(io(path))?;
        self.out.write_all(&crc.finalize().to_le_bytes()).map_err(io(path))?;
        self.out.write_all(&[0; 4]).map_err(io(path))?;
        self.out.commit().map_err(io(path))
    }
}

/// A positions file read as a stream, each position checked (board, key, order) and
/// the checksum at the end.
pub(crate) struct NodeReader<R = std::io::BufReader<File>> {
    path: PathBuf,
    reader: R,
    count: u64,
    read: u64,
    crc: crc32fast::Hasher,
    last: Option<u64>,
}

impl NodeReader {
    pub(crate) fn open(path: &Path) -> Result<NodeReader, PositionsError> {
        let file = File::open(path).map_err(io(path))?;
        let len = file.metadata().map_err(io(path))?.len();
        NodeReader::start(path, std::io::BufReader::with_capacity(1 << 20, file), len)
    }
}

#[cfg(any(test, feature = "testing"))]
impl<'b> NodeReader<&'b [u8]> {
    /// A positions file's `bytes` (`path` names it in errors).
    pub(crate) fn from_bytes(path: &Path, bytes: &'b [u8]) -> Result<NodeReader<&'b [u8]>, PositionsError> {
        NodeReader::start(path, bytes, bytes.len() as u64)
    }
}

impl<R: Read> NodeReader<R> {
    /// Reads and checks the header of a positions file of `len` bytes.
    fn start(path: &Path, mut reader: R, len: u64) -> Result<NodeReader<R>, PositionsError> {
        let bad = |fault: PositionsFault| PositionsError::file(path, fault);
        let mut head = [0u8; 16];
        if len < 24 || reader.read_exact(&mut head).is_err() || &head[..8] != NODES_MAGIC {
            return Err(bad(PositionsFault::NotPositions));
        }
        let count = LE::read_u64(&head[8..16]);
        let expected = count.checked_mul(NODE_LEN as u64).and_then(|n| n.checked_add(24));
        if expected != Some(len) {
            return Err(bad(PositionsFault::PositionsLength { len, expected: expected.unwrap_or(0), count }));
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(&head);
        Ok(NodeReader { path: path.to_path_buf(), reader, count, read: 0, crc, last: None })
    }

    fn bad(&self, fault: PositionsFault) -> PositionsError {
        PositionsError::file(&self.path, fault)
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// Checks that the file holds `positions` positions (its header and length agree,
    /// which `start` checked), without reading them.
    pub(crate) fn expect_count(&self, positions: usize) -> Result<(), PositionsError> {
        if self.count == positions as u64 {
            Ok(())
        } else {
            Err(self.bad(PositionsFault::NotThePlans))
        }
    }

    /// The next position; `None` after the last, whose checksum is then checked.
    pub(crate) fn next(&mut self) -> Result<Option<Node>, PositionsError> {
        if self.read == self.count {
            let mut tail = [0u8; 8];
            self.reader.read_exact(&mut tail).map_err(io(&self.path))?;
            if self.crc.clone().finalize() != LE::read_u32(&tail[..4]) {
                return Err(self.bad(PositionsFault::Checksum));
            }
            self.read += 1;
            return Ok(None);
        }
        if self.read > self.count {
            return Ok(None);
        }
        let mut b = [0u8; NODE_LEN];
        self.reader.read_exact(&mut b).map_err(io(&self.path))?;
        self.crc.update(&b);
        let i = self.read;
        self.read += 1;
        let node = decode_node(&b).map_err(|problem| self.bad(PositionsFault::Position { index: i, problem }))?;
        if self.last.is_some_and(|k| k >= node.key) {
            return Err(self.bad(PositionsFault::Position { index: i, problem: "keys out of order" }));
        }
        self.last = Some(node.key);
        Ok(Some(node))
    }
}

/// The bytes of a position's fields (key, player, opponent, games, wins, draws), as
/// `nodes.bin` (then 4 zero bytes) and a plan's collection runs store them.
pub(crate) const NODE_FIELDS: usize = 36;

/// A position's [`NODE_FIELDS`] bytes.
pub(crate) fn encode_node(n: &Node) -> [u8; NODE_FIELDS] {
    let mut b = [0u8; NODE_FIELDS];
    LE::write_u64(&mut b[0..8], n.key);
    LE::write_u64(&mut b[8..16], n.board.player);
    LE::write_u64(&mut b[16..24], n.board.opponent);
    LE::write_u32(&mut b[24..28], n.games);
    LE::write_u32(&mut b[28..32], n.wins);
    LE::write_u32(&mut b[32..36], n.draws);
    b
}

/// Decodes and checks a position's fields (a board, and its key).
pub(crate) fn decode_node(b: &[u8]) -> Result<Node, &'static str> {
    let board =
        Board::new(LE::read_u64(&b[8..16]), LE::read_u64(&b[16..24])).ok_or("a square holds discs of both sides")?;
    let node = Node {
        key: LE::read_u64(&b[0..8]),
        board,
        games: LE::read_u32(&b[24..28]),
        wins: LE::read_u32(&b[28..32]),
        draws: LE::read_u32(&b[32..36]),
    };
    if node.key != board.key() {
        return Err("its key does not match its board");
    }
    Ok(node)
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// Reads every position of a positions file through `each`, checking it all; returns
/// the positions' digest.
pub(crate) fn read_nodes(path: &Path, each: &mut dyn FnMut(&Node)) -> Result<u64, PositionsError> {
    let mut reader = NodeReader::open(path)?;
    let mut digest = PositionsDigest::default();
    while let Some(node) = reader.next()? {
        digest.add(&node);
        each(&node);
    }
    Ok(digest.finish())
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// The positions `range` of a positions file the plan has opened (and checked), whose
/// keys are `keys`.
pub(crate) fn read_node_range(
    path: &Path,
    range: std::ops::Range<usize>,
    keys: &[u64],
) -> Result<Vec<Node>, PositionsError> {
    use std::io::{Seek, SeekFrom};
    let bad = |fault: PositionsFault| PositionsError::file(path, fault);
    let mut file = File::open(path).map_err(io(path))?;
    file.seek(SeekFrom::Start(16 + (range.start * NODE_LEN) as u64)).map_err(io(path))?;
    let mut bytes = vec![0u8; range.len() * NODE_LEN];
    file.read_exact(&mut bytes).map_err(io(path))?;
    let mut nodes = Vec::with_capacity(range.len());
    for (i, b) in range.zip(bytes.chunks_exact(NODE_LEN)) {
        let index = i as u64;
        let node = decode_node(b).map_err(|problem| bad(PositionsFault::Position { index, problem }))?;
        if node.key != keys[i] {
            return Err(bad(PositionsFault::Position { index, problem: "changed since the plan was opened" }));
        }
        nodes.push(node);
    }
    Ok(nodes)
}
