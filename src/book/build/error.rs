//! Why a build fails: [`BuildError`], with the faults of a checkpoint
//! ([`CheckpointFault`]) and of a leaf file's entries ([`EntryFault`]) it names. At
//! the bottom of `build`, so that every step of a build can fail with it.

use thiserror::Error;

use crate::board::{Board, Color};
use crate::book::format::{BookError, BuildParams};
use crate::fileio::IoError;
use crate::position::Position;
use crate::search::tt::TableError;
use crate::search::SettingsError;
use crate::setting::OutOfRange;

/// Why a build failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The previous book of an update was searched with other settings.
    #[error(
        "the previous book's leaves were searched at {}, this build asks {}: its leaves cannot be reused \
         (rebuild instead)",
        LeafParams(previous),
        LeafParams(wanted)
    )]
    Previous {
        /// The previous book's header.
        previous: BuildParams,
        /// This build's.
        wanted: BuildParams,
    },
    /// Two different positions with the same key.
    #[error(
        "Zobrist key collision: {key:#018x} is the key of both {} and {}; the book cannot hold both",
        board_text(a),
        board_text(b)
    )]
    KeyCollision {
        /// The key.
        key: u64,
        /// One board.
        a: Board,
        /// The other.
        b: Board,
    },
    /// A game's move is not legal.
    #[error("game {game}: {source}")]
    Game {
        /// Index of the game in the input.
        game: usize,
        /// The error.
        source: crate::position::PlayError,
    },
    /// The checkpoint cannot be used.
    #[error("checkpoint {}: {why}", path.display())]
    Checkpoint {
        /// Its path.
        path: std::path::PathBuf,
        /// What is wrong.
        why: CheckpointFault,
    },
    /// The records cannot form a book (out of order or repeated keys).
    #[error("writing the book: {0}")]
    Book(#[from] BookError),
    /// A file could not be written.
    #[error(transparent)]
    Io(#[from] IoError),
    /// A setting out of range.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A build setting out of range.
    #[error(transparent)]
    Setting(#[from] OutOfRange),
    /// The leaf searches' threads cannot be started.
    #[error("cannot start {threads} threads")]
    Threads {
        /// The thread count asked for.
        threads: usize,
        /// The system's reason.
        source: rayon::ThreadPoolBuildError,
    },
    /// Neither a depth nor a budget: a deviation of a book scored by time, without a
    /// depth or a level.
    #[error("the leaf search has no depth (the book was scored by time): give a depth or a level")]
    NoDepth,
    /// The evaluation cannot be loaded.
    #[error(transparent)]
    Eval(#[from] crate::eval::WeightsError),
    /// The buffer that collects the positions cannot be allocated.
    #[error("cannot allocate the {} MiB buffer that collects the positions", bytes >> 20)]
    Memory {
        /// Its size.
        bytes: usize,
    },
    /// The stop flag ([`Builder::stop_on`](crate::book::Builder::stop_on)) was set: the
    /// leaves searched so far are in the checkpoint, and a resumed build continues.
    #[error("the build was interrupted (resume it to continue)")]
    Interrupted,
}

/// A board as FFO text, black to move (for messages).
fn board_text(board: &Board) -> String {
    Position { board: *board, side: Color::Black }.to_board_text()
}

/// The leaf-search half of a book header, as an error message shows it.
struct LeafParams<'a>(&'a BuildParams);

impl std::fmt::Display for LeafParams<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.0;
        write!(
            f,
            "depth {} exact-at {} selectivity {} (tenths) with evaluation {:08x}",
            p.depth, p.exact_at, p.selectivity_tenths, p.eval_digest
        )
    }
}

impl From<TableError> for BuildError {
    fn from(e: TableError) -> BuildError {
        BuildError::Settings(SettingsError::Table(e))
    }
}

/// What is wrong with one entry of a file of scored positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryFault {
    /// Its checksum fails.
    #[error("checksum mismatch")]
    Checksum,
    /// A move code or score out of range.
    #[error("move code {code} and score {score} out of range")]
    Range {
        /// The move byte.
        code: u8,
        /// The score.
        score: i8,
    },
    /// A key that is not one of the file's positions.
    #[error("key {key:016x} is not a position of this shard")]
    Stranger {
        /// The key.
        key: u64,
    },
    /// A key not above the previous entry's (where entries are sorted).
    #[error("keys out of order")]
    Order,
}

/// Why a build's checkpoint cannot be resumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointFault {
    /// Another build holds its lock.
    #[error("another build is using it (it is locked)")]
    Locked,
    /// An entry before the end is damaged.
    #[error("entry {index} (byte {byte}): {fault}: the checkpoint is damaged: build afresh instead of resuming")]
    Damaged {
        /// The entry.
        index: usize,
        /// Its first byte.
        byte: usize,
        /// What is wrong with it.
        fault: EntryFault,
    },
    /// Written by an older thorbook.
    #[error("made by an older thorbook (another checkpoint format): build afresh instead of resuming")]
    OlderFormat,
    /// Not a checkpoint.
    #[error("not a thorbook checkpoint (byte 0)")]
    NotACheckpoint,
    /// Made by a build that differs from this one in `field`.
    #[error("made from {field} than this build: build afresh instead of resuming")]
    Differs {
        /// The first input that differs.
        field: BuildInput,
    },
    /// Reserved header bytes are set.
    #[error("its header is damaged (reserved bytes are not zero): build afresh instead of resuming")]
    Reserved,
}

/// An input of a build that its checkpoint records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildInput {
    /// Last ply, depth, exact threshold, selectivity, game minimum.
    Parameters,
    /// The time per leaf.
    TimePerLeaf,
    /// The evaluation's weights.
    Evaluation,
    /// The transposition table's size.
    TableSize,
    /// The node budget per leaf.
    NodeBudget,
    /// The games (archives).
    Games,
    /// The positions.
    Positions,
}

impl std::fmt::Display for BuildInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BuildInput::Parameters => {
                "other build parameters (last ply, depth, exact threshold, selectivity, game minimum)"
            }
            BuildInput::TimePerLeaf => "another time per leaf",
            BuildInput::Evaluation => "another evaluation (weights digest)",
            BuildInput::TableSize => "another table size",
            BuildInput::NodeBudget => "another node budget",
            BuildInput::Games => "other games (archives)",
            BuildInput::Positions => "another set of positions",
        })
    }
}
