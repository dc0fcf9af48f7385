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
//! records to the book and backs the values up as they stream.
//!
//! Deviation and deepening are planned a round at a time ([`Plan::create_rounds`]): a
//! round's plan lists the leaf searches of one `Round` of the local
//! [`Grower`](crate::book::grow::Grower), its assembly writes the round's book and plans the next round from it,
//! and the last writes the output — the same book as the local run.
//!
//! An audit's searches, or a fix's checks, are planned as one set of whole-position
//! searches ([`Plan::create_checks`], in `checks.rs`): the assembly writes their
//! results into the run's log, where the audit or fix, run with resume, finds them.
//!
//! Each leaf search starts from a cleared table on one thread and depends only on the
//! position, which of its moves stay in the book and the settings, so the assembled
//! book is byte-identical to [`Builder`](crate::book::Builder)'s for any number of shards and
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

use std::borrow::Borrow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::board::Board;
use crate::book::build::backup::Reached;
use crate::book::build::checkpoint::BuildIdentity;
use crate::book::build::collect;
use crate::book::build::stream::{BookFile, StreamError};
use crate::book::build::{self, BuildConfig, GameLine, LeafSpec};
use crate::book::format::BuildParams;
use crate::fileio::atomic_write;

use crate::setting::{check, Setting};

mod checks;
mod error;
mod rounds;
pub(crate) mod shard;
pub(crate) mod spec;

pub use error::{PlanError, PlanFault};
pub use rounds::{AfterRound, Finished, Planned};
pub(crate) use shard::host_name;
pub use shard::{shard_of, ShardEvent, ShardState, ShardStatus};

use crate::book::build::nodes::{read_nodes, NodeReader, NodeWriter, NODES_FILE};
use error::io;
use rounds::{finished, last_round, RoundWork};
use spec::{hex, plan_digest, to_json, utf8_paths, PlanFile, PlanKind};

/// The plan file in a work directory.
pub(crate) const PLAN_FILE: &str = "plan.json";
/// The most shards a plan may have (Slurm's default `MaxArraySize` is 1001).
pub(crate) const MAX_SHARDS: u32 = 100_000;

/// `shards` within 1..=[`MAX_SHARDS`].
fn check_shards(shards: u32) -> Result<(), PlanError> {
    Ok(check(Setting::Shards, shards, 1..=MAX_SHARDS)?)
}

/// What a plan computes.
enum Work {
    /// The leaves of a build.
    Build,
    /// One round of a growth.
    Round(Box<RoundWork>),
    /// The whole-position searches of an audit or a fix.
    Checks(Box<checks::ChecksWork>),
}

/// How many of `keys` (in order) each of `shards` shards holds.
fn shard_sizes(keys: &[u64], shards: u32) -> Vec<u64> {
    let mut sizes = vec![0u64; shards as usize];
    for &k in keys {
        if let Some(n) = sizes.get_mut(shard_of(k, shards) as usize) {
            *n += 1;
        }
    }
    sizes
}

/// A sharded book build: the plan of a work directory, its positions and leaf search.
pub struct Plan {
    dir: PathBuf,
    file: PlanFile,
    /// The keys of the positions (all a shard needs of the others: 8 bytes each). A
    /// build plan that records its shards' sizes reads them (and checks its positions
    /// file) only when a shard runs or is verified, or the plan is assembled; other
    /// plans at opening. See [`Plan::keys`].
    keys: OnceLock<Vec<u64>>,
    /// What the searches depend on; a shard loads the evaluation when it runs, so that
    /// reporting on a plan or assembling it loads none and allocates no table.
    search: LeafSpec,
    digest: u64,
    work: Work,
}

/// What [`Plan::assemble`] wrote.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Assembled {
    /// Positions in the book.
    pub positions: u64,
    /// The book's size in bytes.
    pub size: u64,
    /// For a round: what comes next.
    pub after: Option<AfterRound>,
}

impl Plan {
    /// Plans a build of `games` under `config` in `shards` shards into `dir` (created if
    /// needed), the book to be assembled to `output`. Planning the same build again
    /// in the same directory is a no-op that returns the existing plan; a directory
    /// holding another plan is refused. The games are read once, as a stream, and the
    /// positions collected in bounded memory (768 MiB for the
    /// buffer; see [`Plan::create_build_with_budget`]). The binary gives the budget
    /// (`--sort-mib`); tests and the synthetic plans take the default.
    #[cfg(test)]
    pub fn create_build<I>(
        dir: &Path,
        games: I,
        config: &BuildConfig,
        shards: u32,
        output: &Path,
    ) -> Result<Plan, PlanError>
    where
        I: IntoIterator,
        I::Item: Borrow<GameLine>,
        I::IntoIter: ExactSizeIterator,
    {
        Plan::create_build_with_budget(dir, games, config, shards, output, collect::DEFAULT_SORT_BUDGET)
    }

    /// `Plan::create_build` (tests' shorthand) with the positions collected in a
    /// buffer of at most `sort_budget` bytes: when it fills, sorted runs are spilled to
    /// `dir` and merged after (the plan is the same for any budget).
    pub fn create_build_with_budget<I>(
        dir: &Path,
        games: I,
        config: &BuildConfig,
        shards: u32,
        output: &Path,
        sort_budget: usize,
    ) -> Result<Plan, PlanError>
    where
        I: IntoIterator,
        I::Item: Borrow<GameLine>,
        I::IntoIter: ExactSizeIterator,
    {
        let plan_path = dir.join(PLAN_FILE);
        check_shards(shards)?;
        utf8_paths(&[dir, output])?;
        let search = config.leaf_search()?;
        let search = search.spec().clone();
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let games = games.into_iter();
        let mut games_digest = crate::book::build::checkpoint::GamesDigest::new(games.len());
        let mut positions_digest = crate::book::build::checkpoint::PositionsDigest::default();
        let mut keys = Vec::new();
        let mut nodes_out = NodeWriter::create(&dir.join(NODES_FILE))?;
        let mut game_count = 0usize;
        let games = games.inspect(|g| {
            games_digest.add(g.borrow());
            game_count += 1;
        });
        collect::collect(games, config.max_ply, config.min_games, dir, sort_budget, &mut |n: &build::Node| {
            positions_digest.add(n);
            keys.push(n.key);
            nodes_out.push(n)
        })?;
        let identity = BuildIdentity {
            games: games_digest.finish(),
            positions: positions_digest.finish(),
            eval: search.eval_digest,
        };
        let digest = plan_digest(config.max_ply, config.min_games, &search, &identity, shards);
        let output = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
        let file = PlanFile {
            shard_positions: shard_sizes(&keys, shards),
            max_ply: config.max_ply,
            min_games: config.min_games,
            games: game_count,
            games_digest: hex(identity.games),
            back_up: config.back_up,
            ..PlanFile::searched(
                PlanKind::Build,
                shards,
                output,
                &search,
                &config.search.eval,
                keys.len(),
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
            return Err(PlanError::file(&plan_path, PlanFault::OtherPlan));
        }
        nodes_out.finish()?;
        let json = to_json(&file, &plan_path)?;
        atomic_write(&plan_path, json.as_bytes()).map_err(io(&plan_path))?;
        Ok(Plan { dir: dir.to_path_buf(), file, keys: OnceLock::from(keys), search, digest, work: Work::Build })
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
                return Err(PlanError::file(dir, PlanFault::NoRoundNeeded(f.output)));
            }
        }
        Plan::open_dir(dir)
    }

    fn open_dir(dir: &Path) -> Result<Plan, PlanError> {
        let plan_path = dir.join(PLAN_FILE);
        let bad = |fault: PlanFault| PlanError::file(&plan_path, fault);
        let text = std::fs::read_to_string(&plan_path).map_err(io(&plan_path))?;
        let file = PlanFile::parse(&plan_path, &text)?;
        let nodes_path = dir.join(NODES_FILE);
        let eval_digest = u32::from_str_radix(&file.eval_digest, 16).map_err(|_| bad(PlanFault::DigestMismatch))?;
        let search = LeafSpec::recorded_in_plan(file.strength(), file.hash_mib, eval_digest)?;
        if file.round.is_some() || file.checks.is_some() {
            // A round's or checks' searches are few and kept.
            let mut nodes = Vec::new();
            read_nodes(&nodes_path, &mut |n| nodes.push(*n))?;
            if let Some(round) = &file.round {
                return Plan::open_round(dir, file.clone(), round.clone(), nodes, search);
            }
            if let Some(c) = &file.checks {
                return Plan::open_checks(dir, file.clone(), c.clone(), nodes, search);
            }
        }
        // A build's positions are identified by the plan's digest over their digest
        // (checked here against the plan's own fields, and against the positions file
        // when its keys are read); the games' is taken from the plan (a shard does not
        // read the archives).
        let hex_field = |field: &str| u64::from_str_radix(field, 16).map_err(|_| bad(PlanFault::DigestMismatch));
        let identity = BuildIdentity {
            games: hex_field(&file.games_digest)?,
            positions: hex_field(&file.positions_digest)?,
            eval: search.eval_digest,
        };
        let digest = plan_digest(file.max_ply, file.min_games, &search, &identity, file.shards);
        let sizes_fit = file.shard_positions.is_empty()
            || (file.shard_positions.len() == file.shards as usize
                && file.shard_positions.iter().sum::<u64>() == file.positions as u64);
        if hex(digest) != file.digest || !sizes_fit {
            return Err(bad(PlanFault::DigestMismatch));
        }
        NodeReader::open(&nodes_path)?.expect_count(file.positions)?;
        let plan = Plan { dir: dir.to_path_buf(), file, keys: OnceLock::new(), search, digest, work: Work::Build };
        if plan.file.shard_positions.is_empty() {
            plan.keys()?;
        }
        Ok(plan)
    }

    /// The plan's keys, read from its positions file the first time (every position
    /// checked, and their digest against the plan's, and the shards' sizes).
    fn keys(&self) -> Result<&[u64], PlanError> {
        if let Some(keys) = self.keys.get() {
            return Ok(keys);
        }
        let nodes_path = self.dir.join(NODES_FILE);
        let mut keys = Vec::new();
        keys.try_reserve_exact(self.file.positions)
            .map_err(|_| PlanError::Memory { bytes: self.file.positions * 8 })?;
        let digest = read_nodes(&nodes_path, &mut |n| keys.push(n.key))?;
        let sizes = &self.file.shard_positions;
        if hex(digest) != self.file.positions_digest
            || keys.len() != self.file.positions
            || !(sizes.is_empty() || shard_sizes(&keys, self.file.shards) == *sizes)
        {
            return Err(PlanError::file(
                &nodes_path,
                PlanFault::Positions(crate::book::build::nodes::PositionsFault::NotThePlans),
            ));
        }
        Ok(self.keys.get_or_init(|| keys))
    }

    /// The keys, which every path that needs them has read first.
    fn loaded_keys(&self) -> &[u64] {
        self.keys.get().map_or(&[], Vec::as_slice)
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
        self.file.positions
    }

    /// The index of `key` among the plan's positions (its keys read first).
    fn index_of(&self, key: u64) -> Option<usize> {
        let keys = self.loaded_keys();
        crate::book::format::find_key(keys.len(), |i| keys[i], key)
    }

    /// Where assembly writes the book unless told otherwise.
    pub fn output(&self) -> &Path {
        &self.file.output
    }

    /// The plan's digest, which every shard file names.
    pub fn digest(&self) -> u64 {
        self.digest
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
            let mut leaves = Vec::with_capacity(self.positions());
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
            StreamError::Io(e) => PlanError::Io(e),
        };
        let mut book = BookFile::with_known_keys(out, params, self.keys()?).map_err(stream_error)?;
        let nodes_path = self.dir.join(NODES_FILE);
        let mut nodes = NodeReader::open(&nodes_path)?;
        for index in 0..self.file.shards {
            for (key, leaf) in self.read_shard(index)? {
                let node = nodes
                    .next()?
                    .filter(|n| n.key == key)
                    .ok_or_else(|| PlanError::file(&nodes_path, PlanFault::NotNext { key, shard: index }))?;
                book.push(&build::record(&node, &leaf)).map_err(stream_error)?;
            }
        }
        let written = book.finish(&[Board::START], Reached::DropOthers).map_err(stream_error)?;
        Ok(Assembled { positions: written.positions, size: written.bytes, after: None })
    }
}

#[cfg(test)]
mod tests;
