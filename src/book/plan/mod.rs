//! Book computation split into shards that run anywhere (one machine, a Slurm array,
//! Kubernetes indexed jobs) and are assembled into the same book a single process
//! would write.
//!
//! A *plan* is a work directory holding `plan.json` (every setting, the inputs'
//! identity, the number of shards and the plan's digest) and `nodes.bin` (the
//! collected positions). Shard `i` scores the positions whose key falls in its slice
//! of the key space ([`shard_of`]: contiguous key ranges, so the shards' results are
//! already in key order), checkpointing each leaf to `shard-IIII.partial` as it goes;
//! when done it writes `shard-IIII.tbs` (entries sorted by key, a trailer with their
//! count and checksum) and removes the partial file. [`Plan::assemble`] checks that
//! every shard is present, of this plan, complete and intact, then streams the
//! records to the book and backs the values up ([`super::stream`]).
//!
//! Deviation and deepening are planned a round at a time ([`Plan::create_rounds`]): a
//! round's plan lists the leaf searches of one `Round` of the local
//! [`Deviator`], its assembly writes the round's book and plans the next round from it,
//! and the last writes the output — the same book as the local run.
//!
//! An audit's searches, or a fix's checks, are planned as one set of whole-position
//! searches ([`Plan::create_checks`], in `checks.rs`): the assembly writes their
//! results into the run's log, where the audit or fix, run with resume, finds them.
//!
//! Each leaf search starts from a cleared table on one thread and depends only on the
//! position, which of its moves stay in the book and the settings, so the assembled
//! book is byte-identical to [`Builder`](super::Builder)'s for any number of shards and
//! threads — when the leaves are limited by depth or nodes; a time budget makes them
//! depend on the machine's speed (see `book-format.md`).
//!
//! Files, each versioned and checksummed:
//! - `shard-IIII.tbs`: header (32 bytes: magic `TBSHARD1`, plan digest u64, index
//!   u32, shard count u32, positions in the shard u64), entries (16 bytes: key u64,
//!   leaf move, score, depth, flags (bit 0 exact), CRC-32 of the first 12 bytes),
//!   trailer (24 bytes: magic `TBSHDEND`, entry count u64, CRC-32 of the entries,
//!   4 zero bytes);
//! - `shard-IIII.partial`: the header and the entries found so far, in any order.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use byteorder::{ByteOrder, LittleEndian as LE};
use serde::{Deserialize, Serialize};

use super::backup::{BackUpRule, Reached};
use super::build::{
    self, build_identity_bytes, positions_digest, BuildConfig, BuildError, BuildIdentity, GameLine, Leaf, LeafSearch,
    Node, PositionsDigest,
};
use super::deviate::{DeviateConfig, Deviator, Growth, Next, Round, StopReason};
use super::format::BuildParams;
use super::stream::{BookFile, StreamError};
use super::Book;
use crate::board::Board;
use crate::eval::EvalSource;
use crate::fileio::{atomic_write, read_mapped, Bytes, Digest};
use crate::search::{Selectivity, Strength, MAX_THREADS};

mod checks;

/// The plan file in a work directory.
pub(crate) const PLAN_FILE: &str = "plan.json";
const NODES_FILE: &str = "nodes.bin";
const PLAN_FORMAT: &str = "thorbook plan 1";
const NODES_MAGIC: &[u8; 8] = b"TBNODES1";
const NODE_LEN: usize = 40;
const SHARD_MAGIC: &[u8; 8] = b"TBSHARD1";
const SHARD_END: &[u8; 8] = b"TBSHDEND";
const SHARD_HEADER: usize = 32;
const ENTRY: usize = build::LEAF_ENTRY;
const TRAILER: usize = 24;
/// The most shards a plan may have (Slurm's default `MaxArraySize` is 1001).
pub(crate) const MAX_SHARDS: u32 = 100_000;

/// The shard of `key` among `shards`: the key's slice of the 64-bit key space, so each
/// shard holds a contiguous key range.
pub fn shard_of(key: u64, shards: u32) -> u32 {
    u32::try_from(((key >> 32) * u64::from(shards)) >> 32).expect("below shards")
}

/// Why a plan, a shard or an assembly failed; each names the file and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The settings or the games.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The plan itself is unusable.
    #[error("{path}: {message}")]
    Plan {
        /// The plan or nodes file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A shard is missing, foreign, incomplete or damaged.
    #[error("shard {index} ({path}): {message}")]
    Shard {
        /// The shard's index.
        index: u32,
        /// Its file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A shard index out of range.
    #[error("shard index {index} is out of range: the plan has {shards} shards (0..={})", shards - 1)]
    Index {
        /// The index asked for.
        index: u32,
        /// The plan's shard count.
        shards: u32,
    },
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> PlanError + '_ {
    move |source| PlanError::Io { path: path.display().to_string(), source }
}

/// The evaluation as the plan names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum EvalName {
    Bundled,
    Classic,
    File(PathBuf),
}

impl EvalName {
    fn of(source: &EvalSource) -> EvalName {
        match source {
            EvalSource::Bundled => EvalName::Bundled,
            EvalSource::Classic => EvalName::Classic,
            EvalSource::File(p) => EvalName::File(std::path::absolute(p).unwrap_or_else(|_| p.clone())),
        }
    }

    fn source(&self) -> EvalSource {
        match self {
            EvalName::Bundled => EvalSource::Bundled,
            EvalName::Classic => EvalSource::Classic,
            EvalName::File(p) => EvalSource::File(p.clone()),
        }
    }
}

/// `plan.json`: readable, and everything a shard needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct PlanFile {
    format: String,
    kind: String,
    shards: u32,
    output: PathBuf,
    max_ply: u32,
    min_games: u32,
    depth: Option<u32>,
    exact_at: Option<u32>,
    selectivity_tenths: u8,
    time_nanos: Option<u64>,
    nodes: Option<u64>,
    hash_mib: usize,
    threads: usize,
    eval: EvalName,
    eval_digest: String,
    games: usize,
    games_digest: String,
    positions: usize,
    positions_digest: String,
    digest: String,
    /// How the assembly backs values up (plans made before the rule was recorded:
    /// negamax).
    #[serde(default, skip_serializing_if = "is_negamax")]
    back_up: BackUpRule,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    round: Option<RoundFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checks: Option<checks::ChecksFile>,
}

impl PlanFile {
    /// A plan of `kind` whose `positions` (with their digest) are searched by
    /// `search` with the evaluation `eval`: the fields every kind fills alike; the
    /// rest are a build's defaults for the kind to override.
    #[allow(clippy::too_many_arguments)]
    fn searched(
        kind: &str,
        shards: u32,
        output: PathBuf,
        search: &LeafSearch,
        eval: &EvalSource,
        positions: usize,
        positions_digest: u64,
        digest: u64,
    ) -> PlanFile {
        let s = search.strength;
        PlanFile {
            format: PLAN_FORMAT.into(),
            kind: kind.into(),
            shards,
            output,
            max_ply: 0,
            min_games: 0,
            depth: s.depth,
            exact_at: s.exact_at,
            selectivity_tenths: search.selectivity_tenths(),
            time_nanos: s.time.map(|t| u64::try_from(t.as_nanos()).unwrap_or(u64::MAX)),
            nodes: s.nodes,
            hash_mib: search.hash_mib,
            threads: search.threads,
            eval: EvalName::of(eval),
            eval_digest: format!("{:08x}", search.eval.digest()),
            games: 0,
            games_digest: String::new(),
            positions,
            positions_digest: hex(positions_digest),
            digest: hex(digest),
            back_up: BackUpRule::default(),
            round: None,
            checks: None,
        }
    }
}

fn is_negamax(rule: &BackUpRule) -> bool {
    *rule == BackUpRule::Negamax
}

/// The part of `plan.json` a round of a deviation or a deepening adds: the growth's
/// settings (the leaf search is the plan's), where the round stands and its input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct RoundFile {
    growth: String,
    number: u32,
    /// The round's input book, relative to the rounds directory.
    input: PathBuf,
    input_digest: String,
    from_player: String,
    from_opponent: String,
    error: i32,
    budget: i32,
    contempt: i32,
    max_ply: u32,
    round_size: usize,
    max_positions: Option<usize>,
    /// Leaves taken by the rounds before this one (counted against `max_positions`).
    leaves_before: usize,
    /// Leaves this round takes.
    leaves: usize,
    /// Where the last round's book goes.
    book: PathBuf,
}

/// The file a rounds directory gets when its growth is over.
const FINISHED_FILE: &str = "finished.json";
/// The input book copied into a rounds directory.
const INPUT_FILE: &str = "input.tbk";
/// A round's book, in its own directory.
const ROUND_BOOK: &str = "book.tbk";

/// What a plan computes.
enum Work {
    /// The leaves of a build.
    Build,
    /// One round of a growth.
    Round(Box<RoundWork>),
    /// The whole-position searches of an audit or a fix.
    Checks(Box<checks::ChecksWork>),
}

/// A round's inputs, opened.
struct RoundWork {
    rounds_dir: PathBuf,
    file: RoundFile,
    deviator: Deviator,
    input: Book<Bytes>,
    round: Round,
}

/// How a growth stood when its last round was assembled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finished {
    /// Rounds run.
    pub rounds: u32,
    /// Why it stopped.
    pub stop: StopReason,
    /// The book written.
    pub output: PathBuf,
}

/// What follows the assembly of a round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AfterRound {
    /// The next round is planned (`book shard` and `book assemble` of the same
    /// directory run it).
    Next {
        /// Its number.
        number: u32,
        /// Leaves it takes.
        leaves: usize,
        /// Leaf searches it needs.
        searches: usize,
    },
    /// The growth is over and its book written.
    Finished(Finished),
}

/// What planning a growth gives.
pub enum Planned {
    /// Its first round.
    Round(Box<Plan>),
    /// Nothing to do: the book (the input with the growth's header) is written.
    Finished(Finished),
}

/// A sharded book build: the plan of a work directory, its positions and leaf search.
pub struct Plan {
    dir: PathBuf,
    file: PlanFile,
    /// The keys of the positions (all a shard needs of the others: 8 bytes each).
    keys: Vec<u64>,
    search: LeafSearch,
    digest: u64,
    work: Work,
}

/// A shard's state on disk.
#[derive(Clone, Debug, PartialEq)]
pub enum ShardState {
    /// Complete and intact.
    Done,
    /// Started: `scored` of its positions are checkpointed; `idle` is the time since
    /// its file last changed (a shard that stays idle has died: run it again).
    Partial {
        /// Positions scored.
        scored: u64,
        /// Since the last write.
        idle: Duration,
    },
    /// Not started.
    Missing,
    /// Its file is foreign, truncated or damaged (the message says which).
    Damaged(String),
}

/// One shard's line in [`Plan::status`].
#[derive(Clone, Debug, PartialEq)]
pub struct ShardStatus {
    /// The index.
    pub index: u32,
    /// Positions it scores.
    pub positions: u64,
    /// Its state.
    pub state: ShardState,
}

impl ShardStatus {
    /// Positions scored: all of a done shard's, a running one's checkpointed ones.
    pub(crate) fn scored(&self) -> u64 {
        match self.state {
            ShardState::Done => self.positions,
            ShardState::Partial { scored, .. } => scored,
            _ => 0,
        }
    }
}

/// What a shard run reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardEvent {
    /// The shard was already complete and intact: nothing to do.
    AlreadyDone,
    /// Leaves found in its checkpoint.
    Resumed {
        /// Positions already scored.
        scored: u64,
    },
    /// Progress: `done` of `total` positions of this run.
    Scored {
        /// Searched so far.
        done: u64,
        /// To search in this run.
        total: u64,
    },
}

/// What [`Plan::assemble`] wrote.
#[derive(Clone, Debug)]
pub struct Assembled {
    /// Positions in the book.
    pub positions: u64,
    /// The book's size in bytes.
    pub size: u64,
    /// For a round: what comes next.
    pub after: Option<AfterRound>,
}

fn hex(v: u64) -> String {
    format!("{v:016x}")
}

impl Plan {
    /// Plans a build of `games` under `config` in `shards` shards into `dir` (created if
    /// needed), the book to be assembled to `output`. Planning the same build again
    /// in the same directory is a no-op that returns the existing plan; a directory
    /// holding another plan is refused.
    pub fn create_build(
        dir: &Path,
        games: &[GameLine],
        config: &BuildConfig,
        shards: u32,
        output: &Path,
    ) -> Result<Plan, PlanError> {
        let plan_path = dir.join(PLAN_FILE);
        if !(1..=MAX_SHARDS).contains(&shards) {
            return Err(PlanError::Plan {
                path: plan_path.display().to_string(),
                message: format!("shards must be 1..={MAX_SHARDS}, got {shards}"),
            });
        }
        utf8_paths(&[dir, output])?;
        let search = config.leaf_search()?;
        let nodes = build::collect(games, config.max_ply, config.min_games)?;
        let identity = BuildIdentity::new(games, &nodes, &search);
        let digest = plan_digest(config.max_ply, config.min_games, &search, &identity, shards);
        let output = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
        let file = PlanFile {
            max_ply: config.max_ply,
            min_games: config.min_games,
            games: games.len(),
            games_digest: hex(identity.games),
            back_up: config.back_up,
            ..PlanFile::searched(
                "build",
                shards,
                output,
                &search,
                &config.search.eval,
                nodes.len(),
                identity.positions,
                digest,
            )
        };
        if plan_path.exists() {
            let existing = Plan::open(dir)?;
            if existing.digest == digest && existing.file.output == file.output && existing.file.back_up == file.back_up
            {
                return Ok(existing);
            }
            return Err(PlanError::Plan {
                path: plan_path.display().to_string(),
                message: "this directory holds another plan (other inputs, settings, shards or output): \
                          use another directory, or remove it to start over"
                    .into(),
            });
        }
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        write_nodes(&dir.join(NODES_FILE), &nodes)?;
        let json = to_json(&file, &plan_path)?;
        atomic_write(&plan_path, json.as_bytes()).map_err(io(&plan_path))?;
        let keys = nodes.iter().map(|n| n.key).collect();
        Ok(Plan { dir: dir.to_path_buf(), file, keys, search, digest, work: Work::Build })
    }

    /// Opens the plan of `dir`, checking its positions, its evaluation and its digest.
    /// For a growth planned in rounds (`dir` holds `round-NNNN` directories), the
    /// current round: the last one planned.
    pub fn open(dir: &Path) -> Result<Plan, PlanError> {
        if !dir.join(PLAN_FILE).exists() {
            if let Some(last) = last_round(dir)? {
                return Plan::open_dir(&last);
            }
            if let Some(f) = finished(dir)? {
                return Err(PlanError::Plan {
                    path: dir.display().to_string(),
                    message: format!("the growth planned here needed no round: {} is written", f.output.display()),
                });
            }
        }
        Plan::open_dir(dir)
    }

    fn open_dir(dir: &Path) -> Result<Plan, PlanError> {
        let plan_path = dir.join(PLAN_FILE);
        let bad = |message: String| PlanError::Plan { path: plan_path.display().to_string(), message };
        let text = std::fs::read_to_string(&plan_path).map_err(io(&plan_path))?;
        let file: PlanFile = serde_json::from_str(&text).map_err(|e| bad(format!("not a thorbook plan: {e}")))?;
        let kind_ok = match file.kind.as_str() {
            "build" => file.round.is_none() && file.checks.is_none(),
            "round" => file.round.is_some() && file.checks.is_none(),
            checks::KIND => file.round.is_none() && file.checks.is_some(),
            _ => false,
        };
        if file.format != PLAN_FORMAT || !kind_ok {
            return Err(bad(format!(
                "format `{}` kind `{}` is not `{PLAN_FORMAT}` build, round or checks",
                file.format, file.kind
            )));
        }
        if !(1..=MAX_SHARDS).contains(&file.shards) {
            return Err(bad(format!("shards must be 1..={MAX_SHARDS}, got {}", file.shards)));
        }
        let nodes_path = dir.join(NODES_FILE);
        // A round's or checks' searches are few and kept; a build's positions are
        // streamed, only their keys kept.
        let kept = file.round.is_some() || file.checks.is_some();
        let mut round_nodes = Vec::new();
        let mut keys = Vec::new();
        let positions = read_nodes(&nodes_path, &mut |n| {
            keys.push(n.key);
            if kept {
                round_nodes.push(*n);
            }
        })?;
        let strength = Strength {
            depth: file.depth,
            exact_at: file.exact_at,
            time: file.time_nanos.map(Duration::from_nanos),
            nodes: file.nodes,
            selectivity: Selectivity::from_tenths(file.selectivity_tenths),
        };
        if !(1..=MAX_THREADS).contains(&file.threads) {
            return Err(bad(format!("threads must be 1..={MAX_THREADS}, got {}", file.threads)));
        }
        let search = LeafSearch::from_strength(strength, file.hash_mib, file.threads, &file.eval.source())?;
        // Every kind names its evaluation: a file changed since shows here, by name.
        if format!("{:08x}", search.eval.digest()) != file.eval_digest {
            return Err(bad(format!(
                "the evaluation {:?} now has digest {:08x}, the plan was made with {}",
                file.eval,
                search.eval.digest(),
                file.eval_digest
            )));
        }
        if let Some(round) = &file.round {
            return Plan::open_round(dir, file.clone(), round.clone(), round_nodes, search);
        }
        if let Some(c) = &file.checks {
            return Plan::open_checks(dir, file.clone(), c.clone(), round_nodes, search);
        }
        // The positions' identity is checked by the digest below; the games' is taken
        // from the plan (a shard does not read the archives).
        let games = u64::from_str_radix(&file.games_digest, 16).map_err(|_| bad("games_digest is not hex".into()))?;
        let identity = BuildIdentity { games, positions, eval: search.eval.digest() };
        let digest = plan_digest(file.max_ply, file.min_games, &search, &identity, file.shards);
        if hex(digest) != file.digest || keys.len() != file.positions {
            return Err(bad("the plan's settings or positions do not match its digest (edited or damaged)".into()));
        }
        Ok(Plan { dir: dir.to_path_buf(), file, keys, search, digest, work: Work::Build })
    }

    /// Whether a leaf search treats `key` as a book position: the plan's positions,
    /// and for a round the input book's too.
    fn in_book(&self, key: u64) -> bool {
        self.index_of(key).is_some() || matches!(&self.work, Work::Round(r) if r.input.get(key).is_some())
    }

    /// The plan's directory (for a growth in rounds, the current round's).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// For a round of a growth: its number.
    pub fn round(&self) -> Option<u32> {
        match &self.work {
            Work::Round(r) => Some(r.file.number),
            Work::Build | Work::Checks(_) => None,
        }
    }

    /// For a growth in rounds: whether it is over (its book written).
    pub fn finished(&self) -> Result<Option<Finished>, PlanError> {
        match &self.work {
            Work::Round(r) => finished(&r.rounds_dir),
            Work::Build | Work::Checks(_) => Ok(None),
        }
    }

    /// Shards in the plan.
    pub fn shards(&self) -> u32 {
        self.file.shards
    }

    /// Positions in the plan.
    pub fn positions(&self) -> usize {
        self.keys.len()
    }

    fn index_of(&self, key: u64) -> Option<usize> {
        super::format::find_key(self.keys.len(), |i| self.keys[i], key)
    }

    /// Where assembly writes the book unless told otherwise.
    pub fn output(&self) -> &Path {
        &self.file.output
    }

    /// The plan's digest, which every shard file names.
    pub fn digest(&self) -> u64 {
        self.digest
    }

    /// The complete file of shard `index`.
    pub fn shard_path(&self, index: u32) -> PathBuf {
        self.dir.join(format!("shard-{index:04}.tbs"))
    }

    fn partial_path(&self, index: u32) -> PathBuf {
        self.dir.join(format!("shard-{index:04}.partial"))
    }

    /// The positions of shard `index`: a range of the plan's, in key order.
    fn shard_range(&self, index: u32) -> std::ops::Range<usize> {
        let shards = self.file.shards;
        let start = self.keys.partition_point(|&k| shard_of(k, shards) < index);
        let end = self.keys.partition_point(|&k| shard_of(k, shards) <= index);
        start..end
    }

    /// The positions shard `index` searches (read from the positions file for a build).
    fn shard_nodes(&self, index: u32) -> Result<Vec<Node>, PlanError> {
        let range = self.shard_range(index);
        match &self.work {
            Work::Round(r) => Ok(r.round.jobs[range]
                .iter()
                .map(|&(key, board)| Node { key, board, games: 0, wins: 0, draws: 0 })
                .collect()),
            Work::Checks(c) => Ok(c.nodes[range].to_vec()),
            Work::Build => read_node_range(&self.dir.join(NODES_FILE), range, &self.keys),
        }
    }

    fn header(&self, index: u32) -> [u8; SHARD_HEADER] {
        let mut h = [0u8; SHARD_HEADER];
        h[..8].copy_from_slice(SHARD_MAGIC);
        LE::write_u64(&mut h[8..16], self.digest);
        LE::write_u32(&mut h[16..20], index);
        LE::write_u32(&mut h[20..24], self.file.shards);
        LE::write_u64(&mut h[24..32], self.shard_range(index).len() as u64);
        h
    }

    fn check_index(&self, index: u32) -> Result<(), PlanError> {
        if index >= self.file.shards {
            return Err(PlanError::Index { index, shards: self.file.shards });
        }
        Ok(())
    }

    /// Runs shard `index` on `threads` threads (the plan's when `None`): skipped when
    /// its file is complete and intact, resumed from its checkpoint when one exists
    /// (a damaged complete file is scored again).
    pub fn run_shard(
        &self,
        index: u32,
        threads: Option<usize>,
        progress: &(dyn Fn(ShardEvent) + Sync),
    ) -> Result<(), PlanError> {
        self.check_index(index)?;
        let final_path = self.shard_path(index);
        if final_path.exists() && self.read_shard(index).is_ok() {
            progress(ShardEvent::AlreadyDone);
            return Ok(());
        }
        let mut search = self.search.clone();
        if let Some(t) = threads {
            if !(1..=MAX_THREADS).contains(&t) {
                return Err(
                    BuildError::Threads { threads: t, message: format!("threads must be 1..={MAX_THREADS}") }.into()
                );
            }
            search.threads = t;
        }
        let partial = self.partial_path(index);
        let done = self.read_partial(index)?;
        if !done.is_empty() {
            progress(ShardEvent::Resumed { scored: done.len() as u64 });
        }
        let file = self.open_partial(index, partial.exists())?;
        let mine = self.shard_nodes(index)?;
        let in_book = |k: u64| self.in_book(k);
        let todo: Vec<&Node> = mine.iter().filter(|n| !done.contains_key(&n.key)).collect();
        let total = todo.len() as u64;
        let counter = AtomicU64::new(0);
        let write_error = Mutex::new(None);
        let found = search.pool()?.install(|| {
            search.par_map(&todo, |node, tt| {
                let leaf = match &self.work {
                    // A check searches the whole position: the book is what it checks.
                    Work::Checks(_) => build::search_position(&node.board, 0, &search, tt),
                    Work::Build | Work::Round(_) => build::score_leaf(&node.board, &in_book, &search, tt),
                };
                let mut f = file.lock().unwrap_or_else(|p| p.into_inner());
                if let Err(e) = f.write_all(&build::encode_leaf_entry(node.key, &leaf)) {
                    write_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                }
                drop(f);
                progress(ShardEvent::Scored { done: counter.fetch_add(1, Ordering::Relaxed) + 1, total });
                (node.key, leaf)
            })
        })?;
        if let Some(e) = write_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(io(&partial)(e));
        }
        let mut all: Vec<(u64, Leaf)> = done.into_iter().chain(found).collect();
        all.sort_unstable_by_key(|(k, _)| *k);
        self.write_shard_file(index, &all)?;
        // The shard is safely written; a stale checkpoint only costs disk space.
        let _ = std::fs::remove_file(&partial);
        Ok(())
    }

    /// Writes the complete file of shard `index` from its leaves in key order.
    fn write_shard_file(&self, index: u32, all: &[(u64, Leaf)]) -> Result<(), PlanError> {
        let final_path = self.shard_path(index);
        let mut bytes = Vec::with_capacity(SHARD_HEADER + all.len() * ENTRY + TRAILER);
        bytes.extend_from_slice(&self.header(index));
        for (key, leaf) in all {
            bytes.extend_from_slice(&build::encode_leaf_entry(*key, leaf));
        }
        let crc = crc32fast::hash(&bytes[SHARD_HEADER..]);
        bytes.extend_from_slice(SHARD_END);
        bytes.extend_from_slice(&(all.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes.extend_from_slice(&[0; 4]);
        atomic_write(&final_path, &bytes).map_err(io(&final_path))
    }

    /// Writes shard `index` complete with the leaves `leaf` gives instead of searches:
    /// synthetic plans for measuring assembly at scale.
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn write_unsearched_shard(&self, index: u32, leaf: impl Fn(&Node) -> Leaf) -> Result<(), PlanError> {
        self.check_index(index)?;
        let all: Vec<(u64, Leaf)> = self.shard_nodes(index)?.iter().map(|n| (n.key, leaf(n))).collect();
        self.write_shard_file(index, &all)
    }

    /// The leaves of a partial shard file (none without one). A file of another plan
    /// or shard is an error (it is not overwritten); a cut-off last entry is dropped.
    fn read_partial(&self, index: u32) -> Result<HashMap<u64, Leaf>, PlanError> {
        let path = self.partial_path(index);
        let mut bytes = Vec::new();
        match File::open(&path) {
            Ok(mut f) => f.read_to_end(&mut bytes).map_err(io(&path))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
            Err(e) => return Err(io(&path)(e)),
        };
        let shard_err = |message: String| PlanError::Shard { index, path: path.display().to_string(), message };
        if bytes.len() < SHARD_HEADER {
            // Cut off before its header was whole: nothing was scored.
            return Ok(HashMap::new());
        }
        if bytes[..SHARD_HEADER] != self.header(index) {
            return Err(shard_err("its checkpoint is of another plan or shard: remove it to run the shard".into()));
        }
        let whole = (bytes.len() - SHARD_HEADER) / ENTRY * ENTRY;
        let mut done = HashMap::new();
        for (i, e) in bytes[SHARD_HEADER..SHARD_HEADER + whole].chunks_exact(ENTRY).enumerate() {
            let (key, leaf) = self.decode_entry(index, e).map_err(|m| {
                shard_err(format!(
                    "checkpoint entry {i} (byte {}): {m}: the checkpoint is damaged, remove it to run the shard \
                         afresh",
                    SHARD_HEADER + i * ENTRY
                ))
            })?;
            done.insert(key, leaf);
        }
        Ok(done)
    }

    /// Opens the checkpoint for appending (a new file with its header, or the old one
    /// cut to whole entries).
    fn open_partial(&self, index: u32, append: bool) -> Result<Mutex<File>, PlanError> {
        let path = self.partial_path(index);
        let file = if append {
            let f = OpenOptions::new().append(true).open(&path).map_err(io(&path))?;
            let len = f.metadata().map_err(io(&path))?.len();
            let header = SHARD_HEADER as u64;
            if len < header {
                f.set_len(0).map_err(io(&path))?;
                let mut f = f;
                f.write_all(&self.header(index)).map_err(io(&path))?;
                f
            } else {
                f.set_len(header + (len - header) / ENTRY as u64 * ENTRY as u64).map_err(io(&path))?;
                f
            }
        } else {
            let mut f = File::create(&path).map_err(io(&path))?;
            f.write_all(&self.header(index)).map_err(io(&path))?;
            f
        };
        Ok(Mutex::new(file))
    }

    /// Checks an entry ([`build::decode_leaf_entry`]) and that its key is a position
    /// of this shard.
    fn decode_entry(&self, index: u32, e: &[u8]) -> Result<(u64, Leaf), String> {
        let (key, leaf) = build::decode_leaf_entry(e, self.search.selectivity_tenths())?;
        if shard_of(key, self.file.shards) != index || self.index_of(key).is_none() {
            return Err(format!("key {key:016x} is not a position of this shard"));
        }
        Ok((key, leaf))
    }

    /// The leaves of a complete shard file, in key order, after every check.
    fn read_shard(&self, index: u32) -> Result<Vec<(u64, Leaf)>, PlanError> {
        let path = self.shard_path(index);
        let shard_err = |message: String| PlanError::Shard { index, path: path.display().to_string(), message };
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let partial = self.partial_path(index).exists();
                return Err(shard_err(if partial { "not finished (a checkpoint exists)" } else { "missing" }.into()));
            }
            Err(e) => return Err(io(&path)(e)),
        };
        if bytes.len() < SHARD_HEADER + TRAILER || &bytes[..8] != SHARD_MAGIC {
            return Err(shard_err("not a thorbook shard file (byte 0), or truncated".into()));
        }
        if LE::read_u64(&bytes[8..16]) != self.digest {
            return Err(shard_err(format!(
                "of another plan (digest {:016x}, this plan {:016x})",
                LE::read_u64(&bytes[8..16]),
                self.digest
            )));
        }
        if bytes[..SHARD_HEADER] != self.header(index) {
            return Err(shard_err("its header names another shard (byte 16)".into()));
        }
        let expected = self.shard_range(index).len();
        let trailer_at = SHARD_HEADER + expected * ENTRY;
        if bytes.len() != trailer_at + TRAILER {
            return Err(shard_err(format!(
                "{} bytes, expected {} for {expected} positions (truncated or extended)",
                bytes.len(),
                trailer_at + TRAILER
            )));
        }
        let t = &bytes[trailer_at..];
        if &t[..8] != SHARD_END || LE::read_u64(&t[8..16]) != expected as u64 {
            return Err(shard_err(format!("byte {trailer_at}: no valid trailer")));
        }
        if crc32fast::hash(&bytes[SHARD_HEADER..trailer_at]) != LE::read_u32(&t[16..20]) {
            return Err(shard_err("entries checksum mismatch (damaged)".into()));
        }
        let mut leaves = Vec::with_capacity(expected);
        for (i, e) in bytes[SHARD_HEADER..trailer_at].chunks_exact(ENTRY).enumerate() {
            let at = SHARD_HEADER + i * ENTRY;
            let (key, leaf) =
                self.decode_entry(index, e).map_err(|m| shard_err(format!("entry {i} (byte {at}): {m}")))?;
            if leaves.last().is_some_and(|&(k, _)| k >= key) {
                return Err(shard_err(format!("entry {i} (byte {at}): keys out of order")));
            }
            leaves.push((key, leaf));
        }
        Ok(leaves)
    }

    /// Every shard's state.
    pub fn status(&self) -> Vec<ShardStatus> {
        (0..self.file.shards)
            .map(|index| {
                let positions = self.shard_range(index).len() as u64;
                let state = if self.shard_path(index).exists() {
                    match self.read_shard(index) {
                        Ok(_) => ShardState::Done,
                        Err(e) => ShardState::Damaged(e.to_string()),
                    }
                } else if let Ok(meta) = std::fs::metadata(self.partial_path(index)) {
                    let scored = meta.len().saturating_sub(SHARD_HEADER as u64) / ENTRY as u64;
                    let idle = meta.modified().ok().and_then(|m| SystemTime::now().duration_since(m).ok());
                    ShardState::Partial { scored, idle: idle.unwrap_or_default() }
                } else {
                    ShardState::Missing
                };
                ShardStatus { index, positions, state }
            })
            .collect()
    }

    /// Checks every shard (all of them: the error names the first that fails), backs
    /// the values up and writes the book atomically to `output` (the plan's when
    /// `None`).
    ///
    /// A round's book goes into its directory; then the next round is planned from it,
    /// or, when the growth is over, the book is written to the plan's output (or
    /// `output`) and the rounds directory marked finished.
    pub fn assemble(&self, output: Option<&Path>) -> Result<Assembled, PlanError> {
        if let Work::Checks(c) = &self.work {
            return self.assemble_checks(c, output);
        }
        if let Work::Round(r) = &self.work {
            let mut leaves = Vec::with_capacity(self.keys.len());
            for index in 0..self.file.shards {
                leaves.extend(self.read_shard(index)?.into_iter().map(|(_, leaf)| leaf));
            }
            return self.assemble_round(r, &leaves, output);
        }
        // Shards and positions both in key order: one pass over each, a shard in
        // memory at a time, the book streamed to disk (see `stream`).
        let out = output.unwrap_or(&self.file.output);
        let params =
            BuildParams { back_up: self.file.back_up, ..self.search.params(self.file.max_ply, self.file.min_games) };
        let stream_error = |e: StreamError| match e {
            StreamError::Book(e) => PlanError::Build(e.into()),
            StreamError::Io { path, source } => PlanError::Io { path, source },
        };
        let mut book = BookFile::create(out, params).map_err(stream_error)?;
        let nodes_path = self.dir.join(NODES_FILE);
        let mut nodes = NodeReader::open(&nodes_path)?;
        for index in 0..self.file.shards {
            for (key, leaf) in self.read_shard(index)? {
                let node = nodes.next()?.filter(|n| n.key == key).ok_or_else(|| PlanError::Plan {
                    path: nodes_path.display().to_string(),
                    message: format!("position {key:016x} of shard {index} is not next in the positions file"),
                })?;
                book.push(&build::record(&node, &leaf)).map_err(stream_error)?;
            }
        }
        let written = book.finish(Reached::DropOthers).map_err(stream_error)?;
        Ok(Assembled { positions: written.positions, size: written.bytes, after: None })
    }
}

fn plan_digest(max_ply: u32, min_games: u32, search: &LeafSearch, identity: &BuildIdentity, shards: u32) -> u64 {
    let mut d = Digest::new();
    d.update(PLAN_FORMAT.as_bytes());
    d.update(&build_identity_bytes(max_ply, min_games, search, identity));
    d.update(&shards.to_le_bytes());
    d.finish()
}

/// Writes a positions file: magic, count, 40 bytes a position, CRC-32 of all before.
fn write_nodes(path: &Path, nodes: &[Node]) -> Result<(), PlanError> {
    let mut out = crate::fileio::AtomicFile::create(path).map_err(io(path))?;
    let mut crc = crc32fast::Hasher::new();
    let mut put = |out: &mut crate::fileio::AtomicFile, bytes: &[u8]| {
        crc.update(bytes);
        out.write_all(bytes)
    };
    put(&mut out, NODES_MAGIC).map_err(io(path))?;
    put(&mut out, &(nodes.len() as u64).to_le_bytes()).map_err(io(path))?;
    for n in nodes {
        let mut b = [0u8; NODE_LEN];
        LE::write_u64(&mut b[0..8], n.key);
        LE::write_u64(&mut b[8..16], n.board.player);
        LE::write_u64(&mut b[16..24], n.board.opponent);
        LE::write_u32(&mut b[24..28], n.games);
        LE::write_u32(&mut b[28..32], n.wins);
        LE::write_u32(&mut b[32..36], n.draws);
        put(&mut out, &b).map_err(io(path))?;
    }
    let crc = crc.finalize();
    out.write_all(&crc.to_le_bytes()).map_err(io(path))?;
    out.write_all(&[0; 4]).map_err(io(path))?;
    out.commit().map_err(io(path))
}

/// A positions file read as a stream, each position checked (board, key, order) and
/// the checksum at the end.
struct NodeReader {
    path: PathBuf,
    reader: std::io::BufReader<File>,
    count: u64,
    read: u64,
    crc: crc32fast::Hasher,
    last: Option<u64>,
}

impl NodeReader {
    fn open(path: &Path) -> Result<NodeReader, PlanError> {
        let bad = |message: String| PlanError::Plan { path: path.display().to_string(), message };
        let file = File::open(path).map_err(io(path))?;
        let len = file.metadata().map_err(io(path))?.len();
        let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
        let mut head = [0u8; 16];
        if len < 24 || reader.read_exact(&mut head).is_err() || &head[..8] != NODES_MAGIC {
            return Err(bad("not a thorbook positions file (byte 0)".into()));
        }
        let count = LE::read_u64(&head[8..16]);
        let expected = count.checked_mul(NODE_LEN as u64).and_then(|n| n.checked_add(24));
        if expected != Some(len) {
            return Err(bad(format!(
                "{len} bytes, expected {} for {count} positions (truncated?)",
                expected.unwrap_or(0)
            )));
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(&head);
        Ok(NodeReader { path: path.to_path_buf(), reader, count, read: 0, crc, last: None })
    }

    fn bad(&self, message: String) -> PlanError {
        PlanError::Plan { path: self.path.display().to_string(), message }
    }

    /// The next position; `None` after the last, whose checksum is then checked.
    fn next(&mut self) -> Result<Option<Node>, PlanError> {
        if self.read == self.count {
            let mut tail = [0u8; 8];
            self.reader.read_exact(&mut tail).map_err(io(&self.path))?;
            if self.crc.clone().finalize() != LE::read_u32(&tail[..4]) {
                return Err(self.bad("checksum mismatch (damaged)".into()));
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
        let node = decode_node(&b).map_err(|m| self.bad(format!("position {i}: {m}")))?;
        if self.last.is_some_and(|k| k >= node.key) {
            return Err(self.bad(format!("position {i}: keys out of order")));
        }
        self.last = Some(node.key);
        Ok(Some(node))
    }
}

fn decode_node(b: &[u8]) -> Result<Node, String> {
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
        return Err("its key does not match its board".into());
    }
    Ok(node)
}

/// Reads every position of a positions file through `each`, checking it all; returns
/// the positions' digest.
fn read_nodes(path: &Path, each: &mut dyn FnMut(&Node)) -> Result<u64, PlanError> {
    let mut reader = NodeReader::open(path)?;
    let mut digest = PositionsDigest::default();
    while let Some(node) = reader.next()? {
        digest.add(&node);
        each(&node);
    }
    Ok(digest.finish())
}

/// The positions `range` of a positions file the plan has opened (and checked), whose
/// keys are `keys`.
fn read_node_range(path: &Path, range: std::ops::Range<usize>, keys: &[u64]) -> Result<Vec<Node>, PlanError> {
    use std::io::{Seek, SeekFrom};
    let bad = |message: String| PlanError::Plan { path: path.display().to_string(), message };
    let mut file = File::open(path).map_err(io(path))?;
    file.seek(SeekFrom::Start(16 + (range.start * NODE_LEN) as u64)).map_err(io(path))?;
    let mut bytes = vec![0u8; range.len() * NODE_LEN];
    file.read_exact(&mut bytes).map_err(io(path))?;
    let mut nodes = Vec::with_capacity(range.len());
    for (i, b) in range.zip(bytes.chunks_exact(NODE_LEN)) {
        let node = decode_node(b).map_err(|m| bad(format!("position {i}: {m}")))?;
        if node.key != keys[i] {
            return Err(bad(format!("position {i}: changed since the plan was opened")));
        }
        nodes.push(node);
    }
    Ok(nodes)
}

/// The directory of round `number` in a rounds directory.
fn round_dir(rounds_dir: &Path, number: u32) -> PathBuf {
    rounds_dir.join(format!("round-{number:04}"))
}

/// The last round planned in `dir`, if it holds rounds.
fn last_round(dir: &Path) -> Result<Option<PathBuf>, PlanError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut last: Option<u32> = None;
    for entry in entries {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name();
        let number = name.to_str().and_then(|n| n.strip_prefix("round-")).and_then(|n| n.parse::<u32>().ok());
        if let Some(n) = number {
            if entry.path().join(PLAN_FILE).exists() && last.is_none_or(|l| n > l) {
                last = Some(n);
            }
        }
    }
    Ok(last.map(|n| round_dir(dir, n)))
}

/// The finish of the growth planned in `rounds_dir`, once it is over.
fn finished(rounds_dir: &Path) -> Result<Option<Finished>, PlanError> {
    let path = rounds_dir.join(FINISHED_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| PlanError::Plan { path: path.display().to_string(), message: format!("unreadable: {e}") }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(&path)(e)),
    }
}

fn round_digest(identity: &str, round: &RoundFile, nodes: &[Node], shards: u32) -> u64 {
    let mut d = Digest::new();
    d.update(PLAN_FORMAT.as_bytes());
    d.update(b"round");
    d.update(identity.as_bytes());
    for v in [round.number as u64, round.leaves_before as u64, round.leaves as u64] {
        d.update(&v.to_le_bytes());
    }
    d.update(&round.max_positions.map_or(u64::MAX, |m| m as u64).to_le_bytes());
    d.update(&positions_digest(nodes).to_le_bytes());
    d.update(&shards.to_le_bytes());
    d.finish()
}

fn opened_book(path: &Path) -> Result<Book<Bytes>, PlanError> {
    let bytes = read_mapped(path).map_err(io(path))?;
    Book::open(bytes).map_err(|e| PlanError::Plan { path: path.display().to_string(), message: e.to_string() })
}

impl Plan {
    /// Plans a deviation or a deepening (`config.growth`) of the book at `input`, from
    /// position `from`, in rounds of `shards` shards each in `dir` (created if needed):
    /// the input is copied to `dir/input.tbk` and the first round planned into
    /// `dir/round-0001`. Each round's assembly plans the next from its book; the last
    /// one writes `output`. The rounds compute exactly what
    /// [`Deviator::run`] does locally with the same settings. A time limit is refused
    /// (the result would depend on the machines). Planning the same growth again is a
    /// no-op that returns the current round.
    pub fn create_rounds<D: AsRef<[u8]>>(
        dir: &Path,
        book: &Book<D>,
        config: DeviateConfig,
        from: Board,
        shards: u32,
        output: &Path,
    ) -> Result<Planned, PlanError> {
        let bad = |message: String| PlanError::Plan { path: dir.join(PLAN_FILE).display().to_string(), message };
        if !(1..=MAX_SHARDS).contains(&shards) {
            return Err(bad(format!("shards must be 1..={MAX_SHARDS}, got {shards}")));
        }
        if config.time.is_some() {
            return Err(bad("a time limit cannot be planned (the result would depend on the machines): \
                            use --max-positions"
                .into()));
        }
        utf8_paths(&[dir, output])?;
        let output = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
        book.verify().map_err(|e| bad(format!("the input book: {e}")))?;
        let deviator = Deviator::new(config, from, &output);
        let input = dir.join(INPUT_FILE);
        let search = deviator.leaf_search(book).map_err(deviate_error(&input))?;
        let first = round_dir(dir, 1);
        if first.join(PLAN_FILE).exists() {
            let existing = Plan::open_dir(&first)?;
            let Work::Round(r) = &existing.work else {
                return Err(PlanError::Plan {
                    path: first.join(PLAN_FILE).display().to_string(),
                    message: "holds a plan that is not a round of a growth: use another work directory".into(),
                });
            };
            let same = r.file.input_digest == hex(book.records_digest())
                && r.deviator.identity(book, &search) == deviator.identity(book, &search)
                && r.file.max_positions == deviator.config().max_positions
                && existing.file.shards == shards
                && r.file.book == output;
            if !same {
                return Err(bad("this directory holds another plan (other input, settings, shards or output): \
                                use another directory, or remove it to start over"
                    .into()));
            }
            return Ok(Planned::Round(Box::new(Plan::open(dir)?)));
        }
        if dir.join(PLAN_FILE).exists() || dir.join(INPUT_FILE).exists() {
            let what = match finished(dir)? {
                Some(f) => format!("a finished growth (its book: {})", f.output.display()),
                None => "another plan".to_string(),
            };
            return Err(bad(format!("this directory holds {what}: use another directory, or remove it")));
        }
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        atomic_write(&input, book.bytes()).map_err(io(&input))?;
        let book = opened_book(&input)?;
        let next = deviator.next_round(&book, &search, &Default::default(), 0).map_err(deviate_error(&input))?;
        match next {
            Next::Round(round) => {
                let plan = Plan::write_round(dir, 1, INPUT_FILE.as_ref(), &book, &deviator, &search, round, 0, shards)?;
                Ok(Planned::Round(Box::new(plan)))
            }
            Next::Stop(stop) => {
                let bytes = deviator.unchanged(&book, &search).map_err(deviate_error(&input))?;
                Ok(Planned::Finished(finish(dir, 0, stop, &output, &bytes)?))
            }
        }
    }

    /// Writes the plan of round `number` into its directory.
    #[allow(clippy::too_many_arguments)]
    fn write_round(
        rounds_dir: &Path,
        number: u32,
        input_rel: &Path,
        input: &Book<Bytes>,
        deviator: &Deviator,
        search: &LeafSearch,
        round: Round,
        leaves_before: usize,
        shards: u32,
    ) -> Result<Plan, PlanError> {
        let dir = round_dir(rounds_dir, number);
        let c = deviator.config();
        let nodes: Vec<Node> =
            round.jobs.iter().map(|&(key, board)| Node { key, board, games: 0, wins: 0, draws: 0 }).collect();
        let from = deviator.from();
        let round_file = RoundFile {
            growth: match c.growth {
                Growth::Deviate => "deviate".into(),
                Growth::Deepen => "deepen".into(),
            },
            number,
            input: input_rel.to_path_buf(),
            input_digest: hex(input.records_digest()),
            from_player: hex(from.player),
            from_opponent: hex(from.opponent),
            error: c.error,
            budget: c.budget,
            contempt: c.contempt,
            max_ply: c.max_ply,
            round_size: c.round_size,
            max_positions: c.max_positions,
            leaves_before,
            leaves: round.leaves,
            book: deviator.output().to_path_buf(),
        };
        let identity = deviator.identity(input, search);
        let digest = round_digest(&identity, &round_file, &nodes, shards);
        let p = input.params();
        let output = std::path::absolute(dir.join(ROUND_BOOK)).unwrap_or_else(|_| dir.join(ROUND_BOOK));
        let file = PlanFile {
            max_ply: p.max_ply.into(),
            min_games: p.min_games,
            // A round's assembly backs up through the growth, which keeps the input's rule.
            back_up: p.back_up,
            round: Some(round_file),
            ..PlanFile::searched(
                "round",
                shards,
                output,
                search,
                &c.search.eval,
                nodes.len(),
                positions_digest(&nodes),
                digest,
            )
        };
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        write_nodes(&dir.join(NODES_FILE), &nodes)?;
        let plan_path = dir.join(PLAN_FILE);
        let json = to_json(&file, &plan_path)?;
        atomic_write(&plan_path, json.as_bytes()).map_err(io(&plan_path))?;
        Plan::open_dir(&dir)
    }

    /// Opens a round's plan: its input book (which must be the one it was planned
    /// from), the growth's settings, its searches.
    fn open_round(
        dir: &Path,
        file: PlanFile,
        rf: RoundFile,
        nodes: Vec<Node>,
        search: LeafSearch,
    ) -> Result<Plan, PlanError> {
        let plan_path = dir.join(PLAN_FILE);
        let bad = |message: String| PlanError::Plan { path: plan_path.display().to_string(), message };
        let rounds_dir = dir.parent().map(Path::to_path_buf).unwrap_or_default();
        let input_path = rounds_dir.join(&rf.input);
        let input = opened_book(&input_path)?;
        if hex(input.records_digest()) != rf.input_digest {
            return Err(PlanError::Plan {
                path: input_path.display().to_string(),
                message: format!("this is not the book round {} was planned from (its digest differs)", rf.number),
            });
        }
        let growth = match rf.growth.as_str() {
            "deviate" => Growth::Deviate,
            "deepen" => Growth::Deepen,
            g => return Err(bad(format!("growth `{g}` is not deviate or deepen"))),
        };
        let hex_u64 = |t: &str| u64::from_str_radix(t, 16).map_err(|_| bad(format!("`{t}` is not hex")));
        let from = Board::new(hex_u64(&rf.from_player)?, hex_u64(&rf.from_opponent)?)
            .ok_or_else(|| bad("the starting position holds discs of both sides on a square".into()))?;
        let config = DeviateConfig {
            error: rf.error,
            budget: rf.budget,
            contempt: rf.contempt,
            max_positions: rf.max_positions,
            time: None,
            max_ply: rf.max_ply,
            search: crate::search::Settings { eval: file.eval.source(), ..Default::default() },
            growth,
            round_size: rf.round_size,
        };
        config.validate().map_err(|e| bad(e.to_string()))?;
        let deviator = Deviator::new(config, from, &rf.book);
        let identity = deviator.identity(&input, &search);
        let digest = round_digest(&identity, &rf, &nodes, file.shards);
        if hex(digest) != file.digest || nodes.len() != file.positions {
            return Err(bad("the plan's settings or positions do not match its digest (edited or damaged)".into()));
        }
        let jobs = nodes.iter().map(|n| (n.key, n.board)).collect();
        let keys = nodes.iter().map(|n| n.key).collect();
        let round = Round { leaves: rf.leaves, jobs };
        let work = Work::Round(Box::new(RoundWork { rounds_dir, file: rf, deviator, input, round }));
        Ok(Plan { dir: dir.to_path_buf(), file, keys, search, digest, work })
    }

    /// Writes a round's book into its directory and plans the next round, or finishes.
    fn assemble_round(&self, r: &RoundWork, leaves: &[Leaf], output: Option<&Path>) -> Result<Assembled, PlanError> {
        let deviate = deviate_error(&self.dir);
        let bytes = r.deviator.finish_round(&r.input, &self.search, &r.round, leaves).map_err(&deviate)?;
        let book_path = self.dir.join(ROUND_BOOK);
        atomic_write(&book_path, &bytes).map_err(io(&book_path))?;
        let book = opened_book(&book_path)?;
        let positions = book.len() as u64;
        let size = bytes.len() as u64;
        let number = r.file.number;
        let next_dir = round_dir(&r.rounds_dir, number + 1);
        // Assembling again after the next round was planned replans nothing.
        if next_dir.join(PLAN_FILE).exists() {
            let next = Plan::open_dir(&next_dir)?;
            let after =
                AfterRound::Next { number: number + 1, leaves: next.round_leaves(), searches: next.positions() };
            return Ok(Assembled { positions, size, after: Some(after) });
        }
        let mut tried = std::collections::BTreeSet::new();
        if r.deviator.config().growth == Growth::Deepen {
            for n in 1..=number {
                read_nodes(&round_dir(&r.rounds_dir, n).join(NODES_FILE), &mut |node| {
                    tried.insert(node.key);
                })?;
            }
        }
        let added = r.file.leaves_before + r.file.leaves;
        let after = match r.deviator.next_round(&book, &self.search, &tried, added).map_err(&deviate)? {
            Next::Round(round) => {
                let rel = PathBuf::from(format!("round-{number:04}")).join(ROUND_BOOK);
                let next = Plan::write_round(
                    &r.rounds_dir,
                    number + 1,
                    &rel,
                    &book,
                    &r.deviator,
                    &self.search,
                    round,
                    added,
                    self.file.shards,
                )?;
                AfterRound::Next { number: number + 1, leaves: next.round_leaves(), searches: next.positions() }
            }
            Next::Stop(stop) => {
                let out = output.unwrap_or(&r.file.book);
                AfterRound::Finished(finish(&r.rounds_dir, number, stop, out, &bytes)?)
            }
        };
        Ok(Assembled { positions, size, after: Some(after) })
    }

    fn round_leaves(&self) -> usize {
        match &self.work {
            Work::Round(r) => r.round.leaves,
            Work::Build | Work::Checks(_) => 0,
        }
    }
}

/// Writes a growth's book and marks its rounds directory finished.
fn finish(
    rounds_dir: &Path,
    rounds: u32,
    stop: StopReason,
    output: &Path,
    bytes: &[u8],
) -> Result<Finished, PlanError> {
    atomic_write(output, bytes).map_err(io(output))?;
    let done = Finished { rounds, stop, output: output.to_path_buf() };
    let path = rounds_dir.join(FINISHED_FILE);
    let json = to_json(&done, &path)?;
    atomic_write(&path, json.as_bytes()).map_err(io(&path))?;
    Ok(done)
}

/// A plan's files name paths in JSON text, which holds UTF-8 only: a path that is not
/// is refused before anything is written.
fn utf8_paths(paths: &[&Path]) -> Result<(), PlanError> {
    match paths.iter().find(|p| p.to_str().is_none()) {
        Some(p) => Err(PlanError::Plan {
            path: p.display().to_string(),
            message: "a plan can only name paths that are valid UTF-8: choose another name".into(),
        }),
        None => Ok(()),
    }
}

/// `value` as the JSON of the file at `path`.
fn to_json<T: Serialize>(value: &T, path: &Path) -> Result<String, PlanError> {
    serde_json::to_string_pretty(value)
        .map_err(|e| PlanError::Plan { path: path.display().to_string(), message: format!("cannot be written: {e}") })
}

fn deviate_error(path: &Path) -> impl Fn(super::deviate::DeviateError) -> PlanError + '_ {
    move |e| match e {
        super::deviate::DeviateError::Search(e) => PlanError::Build(e),
        e => PlanError::Plan { path: path.display().to_string(), message: e.to_string() },
    }
}
