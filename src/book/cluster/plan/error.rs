//! Why a plan, a shard or an assembly failed: [`PlanError`], whose kinds say what is
//! wrong ([`PlanFault`] for the plan's own files, [`ShardFault`] for a shard's) and
//! which file.

use std::path::{Path, PathBuf};

use crate::book::build::BuildError;
use crate::book::format::BookError;
use crate::fileio::IoError;
use crate::setting::OutOfRange;

/// Why a plan, a shard or an assembly failed; each names the file and what is wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The settings or the games.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A setting out of range (shards, threads, a growth's settings).
    #[error(transparent)]
    Setting(#[from] OutOfRange),
    /// A file could not be read or written.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The growth a round belongs to cannot go on.
    #[error(transparent)]
    Growth(crate::book::grow::GrowthError),
    /// A file of the plan (its `plan.json`, positions, a round's input book, a run's
    /// log) is unusable.
    #[error("{}: {fault}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        fault: PlanFault,
    },
    /// A shard is missing, foreign, incomplete or damaged.
    #[error("shard {index} ({}): {fault}", path.display())]
    Shard {
        /// The shard's index.
        index: u32,
        /// Its file.
        path: PathBuf,
        /// What is wrong.
        fault: ShardFault,
    },
    /// A shard index out of range.
    #[error("shard index {index} is out of range: the plan has {shards} shards (0 to {})", shards.saturating_sub(1))]
    Index {
        /// The index asked for.
        index: u32,
        /// The plan's shard count.
        shards: u32,
    },
    /// The collection's buffer cannot be allocated.
    #[error("cannot allocate the {} MiB buffer that collects the positions: give a smaller sort budget", bytes >> 20)]
    Memory {
        /// Its size.
        bytes: usize,
    },
}

impl From<crate::book::build::nodes::PositionsError> for PlanError {
    fn from(e: crate::book::build::nodes::PositionsError) -> PlanError {
        use crate::book::build::nodes::PositionsError;
        match e {
            PositionsError::Build(e) => PlanError::Build(e),
            PositionsError::Io(e) => PlanError::Io(e),
            PositionsError::Memory { bytes } => PlanError::Memory { bytes },
            PositionsError::File { path, fault } => PlanError::File { path, fault: PlanFault::Positions(fault) },
        }
    }
}

impl PlanError {
    /// `fault` in the plan's file at `path`.
    pub(crate) fn file(path: &Path, fault: PlanFault) -> PlanError {
        PlanError::File { path: path.to_path_buf(), fault }
    }
}

/// What is wrong with a plan's file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanFault {
    /// Not JSON of a thorbook plan (the parser's message).
    #[error("not a thorbook plan: {0}")]
    NotAPlan(String),
    /// A plan of another format version.
    #[error("format `{found}` is not `{expected}`: made by another thorbook version; plan again with this one")]
    Format {
        /// The format the file states.
        found: String,
        /// The format this build reads and writes.
        expected: &'static str,
    },
    /// A digest or a count in the plan disagrees with its settings or positions.
    #[error("the plan's settings or positions do not match its digest (edited or damaged)")]
    DigestMismatch,
    /// The evaluation file changed since the plan was made.
    #[error("the evaluation {eval} changed since the plan was made (digest {now:08x} now, {planned} planned): restore it, or plan again")]
    EvalChanged {
        /// The evaluation as the plan names it.
        eval: String,
        /// Its digest now.
        now: u32,
        /// The digest the plan recorded.
        planned: String,
    },
    /// The directory holds a plan of other inputs, settings, shards or output.
    #[error("this directory holds another plan (other inputs, settings, shards or output): use another directory, or remove it to start over")]
    OtherPlan,
    /// The directory holds a growth planned in rounds.
    #[error("this directory holds a growth planned in rounds: use another directory")]
    HoldsGrowth,
    /// A growth's first round directory holds a plan of another kind.
    #[error("holds a plan that is not a round of a growth: use another work directory")]
    NotARound,
    /// The directory holds a finished growth.
    #[error("this directory holds a finished growth (its book: {}): use another directory, or remove it", .0.display())]
    FinishedGrowth(PathBuf),
    /// The growth needed no round: its book is written.
    #[error("the growth planned here needed no round: {} is written", .0.display())]
    NoRoundNeeded(PathBuf),
    /// A time limit, which would make the results depend on the machines.
    #[error("a time limit cannot be planned (the results would depend on the machines): give a level, a depth, a node budget or a number of positions")]
    TimeLimit,
    /// Nothing to search.
    #[error("no position to search")]
    NoPositions,
    /// The positions file is unusable, or not the one the plan was made with.
    #[error(transparent)]
    Positions(#[from] crate::book::build::nodes::PositionsFault),
    /// Positions out of key order.
    #[error("the positions are not in strictly increasing key order")]
    KeysOutOfOrder,
    /// A path JSON cannot hold.
    #[error("a plan can only name paths that are valid UTF-8: choose another name")]
    NotUtf8,
    /// A shard's position is not the next in the positions file.
    #[error("position {key:016x} of shard {shard} is not next in the positions file")]
    NotNext {
        /// The position's key.
        key: u64,
        /// The shard.
        shard: u32,
    },
    /// A round's input book is not the one it was planned from.
    #[error("this is not the book round {0} was planned from (its digest differs)")]
    NotInputBook(u32),
    /// A book the plan reads (its copy of the input, a round's book) cannot be used.
    #[error(transparent)]
    Book(BookError),
    /// The book given to grow is damaged.
    #[error("the input book: {0}")]
    InputBook(BookError),
    /// A run's log holds the searches of another run.
    #[error("holds the searches of another run (another book, sample or settings): remove it, or assemble into another file")]
    ForeignLog,
    /// The run whose log it is is appending to it now.
    #[error("its run is appending to it now (it is locked): assemble when the run has stopped")]
    LogLocked,
    /// A run's log is damaged.
    #[error("entry {index} (byte {byte}): {fault}: the log is damaged; remove it and assemble again")]
    DamagedLog {
        /// The entry.
        index: u64,
        /// Its offset.
        byte: u64,
        /// What is wrong.
        fault: crate::book::EntryFault,
    },
    /// JSON that could not be written or read back (the parser's message).
    #[error("{0}")]
    Json(String),
}

/// What is wrong with a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShardFault {
    /// Not run yet.
    #[error("missing")]
    Missing,
    /// Started, not finished (a checkpoint exists).
    #[error("not finished (a checkpoint exists)")]
    Unfinished,
    /// Not a shard file, or cut before its trailer.
    #[error("not a thorbook shard file (byte 0), or truncated")]
    NotAShard,
    /// A shard of another plan.
    #[error("of another plan (digest {found:016x}, this plan {plan:016x})")]
    OtherPlan {
        /// The digest it names.
        found: u64,
        /// This plan's.
        plan: u64,
    },
    /// Its header names another shard or shard count.
    #[error("its header names another shard (byte 16)")]
    OtherShard,
    /// Of the wrong length for its positions.
    #[error("{len} bytes, expected {expected} for {positions} positions (truncated or extended)")]
    Length {
        /// Its length.
        len: u64,
        /// The length its positions need.
        expected: u64,
        /// Its positions.
        positions: u64,
    },
    /// No valid trailer where it belongs.
    #[error("byte {0}: no valid trailer")]
    NoTrailer(u64),
    /// The entries' checksum does not match.
    #[error("entries checksum mismatch (damaged)")]
    Checksum,
    /// An entry is invalid.
    #[error("entry {index} (byte {byte}): {problem}")]
    Entry {
        /// The entry.
        index: u64,
        /// Its offset.
        byte: u64,
        /// What is wrong.
        problem: crate::book::EntryFault,
    },
    /// Another runner holds its checkpoint's lock.
    #[error(
        "another runner is running it (its checkpoint is locked): two runners of one shard would tear the checkpoint"
    )]
    Locked,
    /// Its checkpoint belongs to another plan or shard.
    #[error("its checkpoint is of another plan or shard: remove it to run the shard")]
    ForeignCheckpoint,
    /// Its checkpoint is damaged.
    #[error("checkpoint entry {index} (byte {byte}): {problem}: the checkpoint is damaged, remove it to run the shard afresh")]
    DamagedCheckpoint {
        /// The entry.
        index: u64,
        /// Its offset.
        byte: u64,
        /// What is wrong.
        problem: crate::book::EntryFault,
    },
}

/// A closure that wraps an I/O error on `path` as a plan error.
pub(super) fn io(path: &Path) -> impl Fn(std::io::Error) -> PlanError + '_ {
    move |source| PlanError::Io(IoError::new(path, source))
}
