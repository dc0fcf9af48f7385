//! A build's identity (the digests of its games and positions) and its checkpoint:
//! the file `book build --resume` continues from, refused by name when it was made from
//! other inputs or settings.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use byteorder::{ByteOrder, LittleEndian as LE};

use super::error::{BuildInput, CheckpointFault};
use super::leaflog::{decode_leaf_entry, EntriesFault, LeafFile, OpenFault};
use super::{BuildConfig, BuildError, GameLine, Leaf, LeafSearch, LeafSpec, Node};
use crate::fileio::{Digest, IoError};
use crate::square::Square;

/// What a build is made from: a checkpoint is resumed only by the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BuildIdentity {
    /// Digest of the games (moves and scores) the positions were collected from.
    pub games: u64,
    /// Digest of the collected positions (keys, boards, game and win counts).
    pub positions: u64,
    /// Digest of the leaf searches' evaluation.
    pub eval: u32,
}

impl BuildIdentity {
    /// The identity of a build from the digests of its games and positions.
    pub(crate) fn of(games: u64, positions: u64, search: &LeafSpec) -> BuildIdentity {
        BuildIdentity { games, positions, eval: search.eval_digest }
    }
}

/// The digest of a build's games: their count, then their moves and results, in order.
pub(crate) fn games_digest(games: &[GameLine]) -> u64 {
    let mut g = GamesDigest::new(games.len());
    for line in games {
        g.add(line);
    }
    g.finish()
}

/// [`games_digest`] a game at a time, for games read as a stream (their count known
/// first).
pub(crate) struct GamesDigest(Digest);

impl GamesDigest {
    /// The digest of `count` games, to be added.
    pub(crate) fn new(count: usize) -> GamesDigest {
        let mut g = Digest::new();
        g.update(&(count as u64).to_le_bytes());
        GamesDigest(g)
    }

    /// Adds the next game.
    pub(crate) fn add(&mut self, line: &GameLine) {
        // The moves' bytes without allocating (a digest does not depend on how its
        // input is split).
        for chunk in line.moves.chunks(64) {
            let mut bytes = [0u8; 64];
            for (b, m) in bytes.iter_mut().zip(chunk) {
                *b = m.square().map_or(64, Square::byte);
            }
            self.0.update(&bytes[..chunk.len()]);
        }
        // 255 (no score) cannot be a disc count: an unknown result digests apart.
        self.0.update(&[255, line.black_score.unwrap_or(255)]);
    }

    /// The digest.
    pub(crate) fn finish(self) -> u64 {
        self.0.finish()
    }
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// The digest of collected positions: keys, boards and counts.
pub(crate) fn positions_digest(nodes: &[Node]) -> u64 {
    let mut p = PositionsDigest::default();
    for n in nodes {
        p.add(n);
    }
    p.finish()
}

/// [`positions_digest`] a position at a time, for positions read as a stream.
#[derive(Default)]
pub(crate) struct PositionsDigest(Digest);

impl PositionsDigest {
    /// Adds the next position.
    pub(crate) fn add(&mut self, n: &Node) {
        let mut b = [0u8; 32];
        LE::write_u64(&mut b[..8], n.key);
        LE::write_u64(&mut b[8..16], n.board.player);
        LE::write_u64(&mut b[16..24], n.board.opponent);
        LE::write_u32(&mut b[24..28], n.games);
        LE::write_u32(&mut b[28..32], n.wins);
        self.0.update(&b);
    }

    /// The digest.
    pub(crate) fn finish(self) -> u64 {
        self.0.finish()
    }
}

/// Checkpoint file: a 64-byte header (magic, every setting that changes a leaf, and
/// the build's identity), then one entry per scored position (16 bytes: key, leaf move, score, depth, flags, CRC-32 of those), appended as
/// positions finish.
///
/// Header: magic `TBCKPT06` (8); max ply, depth (0: none), exact-at, selectivity in
/// tenths (1 each); min games (u32); time per position in ms (u32, 0: none);
/// evaluation digest (u32); table size in MiB (u32); node budget (u64, 0: none); games
/// digest (u64); positions digest (u64); 8 zero bytes.
pub(crate) struct Checkpoint;

const CHECKPOINT_MAGIC: &[u8; 8] = b"TBCKPT06";
pub(crate) const CHECKPOINT_HEADER: usize = 64;

fn checkpoint_header(config: &BuildConfig, search: &LeafSearch, identity: &BuildIdentity) -> [u8; CHECKPOINT_HEADER] {
    build_identity_bytes(config.max_ply, config.min_games, search, identity)
}

/// Everything a build's leaves depend on, as 64 bytes (the checkpoint's header; a
/// sharded plan's digest covers the same bytes): the header parameters, time, node
/// budget, table size, evaluation, and the digests of the games and positions.
pub(crate) fn build_identity_bytes(
    max_ply: u32,
    min_games: u32,
    search: &LeafSpec,
    identity: &BuildIdentity,
) -> [u8; CHECKPOINT_HEADER] {
    let p = search.params(max_ply, min_games);
    let mut h = [0u8; CHECKPOINT_HEADER];
    h[..8].copy_from_slice(CHECKPOINT_MAGIC);
    h[8] = p.max_ply;
    h[9] = p.depth;
    h[10] = p.exact_at;
    h[11] = p.selectivity_tenths;
    LE::write_u32(&mut h[12..16], p.min_games);
    let millis = search.strength.time.map_or(0, |t| u32::try_from(t.as_millis()).unwrap_or(u32::MAX));
    LE::write_u32(&mut h[16..20], millis);
    LE::write_u32(&mut h[20..24], identity.eval);
    LE::write_u32(&mut h[24..28], u32::try_from(search.hash_mib).unwrap_or(u32::MAX));
    LE::write_u64(&mut h[32..40], search.strength.nodes.unwrap_or(0));
    LE::write_u64(&mut h[40..48], identity.games);
    LE::write_u64(&mut h[48..56], identity.positions);
    h
}

impl Checkpoint {
    /// The checkpoint path for a book path.
    pub(crate) fn path_for(book: &Path) -> PathBuf {
        let mut s = book.as_os_str().to_owned();
        s.push(".checkpoint");
        PathBuf::from(s)
    }

    /// Opens the build's checkpoint at `path`, locked: with `resume`, the leaves of an
    /// existing checkpoint made from the same inputs with the same parameters (any
    /// difference is refused, naming what differs); without, a new one.
    pub(crate) fn open(
        path: &Path,
        config: &BuildConfig,
        search: &LeafSearch,
        identity: &BuildIdentity,
        resume: bool,
    ) -> Result<(LeafFile, HashMap<u64, Leaf>), BuildError> {
        let want = checkpoint_header(config, search, identity);
        let err = |why| BuildError::Checkpoint { path: path.to_path_buf(), why };
        LeafFile::open(path, &want, resume, |e| decode_leaf_entry(e, want[11])).map_err(|fault| match fault {
            OpenFault::Io(source) => BuildError::Io(IoError::new(path, source)),
            OpenFault::Locked => err(CheckpointFault::Locked),
            OpenFault::Entries(fault) => err(Checkpoint::explain(fault, &want)),
        })
    }

    /// The leaves of a checkpoint's `bytes`, which must start with the header `want`
    /// (the build's); a cut-off last entry is dropped.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn parse(bytes: &[u8], want: &[u8; CHECKPOINT_HEADER]) -> Result<HashMap<u64, Leaf>, CheckpointFault> {
        // Every leaf of the checkpoint was searched with this build's selectivity (it is
        // part of the header), so entries need not repeat it.
        super::leaflog::parse_entries(bytes, want, |e| decode_leaf_entry(e, want[11]))
            .map(|(done, _)| done)
            .map_err(|fault| Checkpoint::explain(fault, want))
    }

    /// What a fault of a checkpoint made for the header `want` means.
    fn explain(fault: EntriesFault, want: &[u8; CHECKPOINT_HEADER]) -> CheckpointFault {
        let found = match fault {
            EntriesFault::Damaged { index, byte, fault } => return CheckpointFault::Damaged { index, byte, fault },
            EntriesFault::Header { found } => found,
        };
        if found.len() >= 8
            && matches!(&found[..8], b"TBCKPT01" | b"TBCKPT02" | b"TBCKPT03" | b"TBCKPT04" | b"TBCKPT05")
        {
            return CheckpointFault::OlderFormat;
        }
        if found.len() < CHECKPOINT_HEADER || &found[..8] != CHECKPOINT_MAGIC {
            return CheckpointFault::NotACheckpoint;
        }
        // Each input's bytes in the header, in the order a difference is reported.
        const FIELDS: [(std::ops::Range<usize>, BuildInput); 7] = [
            (8..16, BuildInput::Parameters),
            (16..20, BuildInput::TimePerLeaf),
            (20..24, BuildInput::Evaluation),
            (24..28, BuildInput::TableSize),
            (32..40, BuildInput::NodeBudget),
            (40..48, BuildInput::Games),
            (48..56, BuildInput::Positions),
        ];
        match FIELDS.iter().find(|(range, _)| found[range.clone()] != want[range.clone()]) {
            Some(&(_, field)) => CheckpointFault::Differs { field },
            // The reserved bytes (28..32, 56..64) are zero in every checkpoint written.
            None => CheckpointFault::Reserved,
        }
    }
}
