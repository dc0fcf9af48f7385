//! Shards: which positions each scores ([`shard_of`]), running one with its
//! checkpoint, and reading, checking and reporting its files.
//!
//! - `shard-IIII.tbs`: header (32 bytes: magic `TBSHARD1`, plan digest u64, index
//!   u32, shard count u32, positions in the shard u64), entries (16 bytes: key u64,
//!   leaf move, score, depth, flags (bit 0 exact), CRC-32 of the first 12 bytes),
//!   trailer (24 bytes: magic `TBSHDEND`, entry count u64, CRC-32 of the entries,
//!   4 zero bytes);
//! - `shard-IIII.partial`: the header and the entries found so far, in any order.

use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use byteorder::{ByteOrder, LittleEndian as LE};

use super::error::{io, PlanError, PlanFault, ShardFault};
use super::{Plan, Work};
use crate::book::build::leaflog::{EntriesFault, LeafFile, OpenFault};
use crate::book::build::nodes::{read_node_range, NODES_FILE};
use crate::book::build::{self, Leaf, Node};
use crate::book::EntryFault;
use crate::fileio::atomic_write;
use crate::fileio::LockRefused;
use crate::search::MAX_THREADS;
use crate::setting::{check, Setting};

const SHARD_MAGIC: &[u8; 8] = b"TBSHARD1";
const SHARD_END: &[u8; 8] = b"TBSHDEND";
pub(crate) const SHARD_HEADER: usize = 32;
const ENTRY: usize = crate::book::build::leaflog::LEAF_ENTRY;
const TRAILER: usize = 24;

/// The shard of `key` among `shards`: the key's slice of the 64-bit key space, so each
/// shard holds a contiguous key range.
pub fn shard_of(key: u64, shards: u32) -> u32 {
    u32::try_from(((key >> 32) * u64::from(shards)) >> 32).expect("below shards")
}

/// Who runs a shard, recorded beside its checkpoint (`shard-IIII.runner`) when the run
/// starts and removed with the checkpoint when the shard is written: the scheduler's
/// job, the host and process, and whether the file system granted the checkpoint's
/// lock. Where it did, a checkpoint nobody holds is a stopped shard; where it did not,
/// `submit` asks the scheduler about the job (and without one, a recent checkpoint is
/// presumed running).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Runner {
    /// The Slurm job (`ID` or `ID_TASK`), when the runner was one.
    pub job: Option<String>,
    /// The host it ran on.
    pub host: String,
    /// Its process id.
    pub pid: u32,
    /// Whether it holds the checkpoint's lock (false: the file system refused it).
    pub locked: bool,
}

const RUNNER_MAGIC: &str = "thorbook shard runner 1";

impl Runner {
    fn to_text(&self) -> String {
        format!(
            "{RUNNER_MAGIC}\njob {}\nhost {}\npid {}\nlock {}\n",
            self.job.as_deref().unwrap_or("-"),
            self.host,
            self.pid,
            if self.locked { "held" } else { "refused" }
        )
    }

    /// A record as [`Runner::to_text`] writes it; `None` for anything else (a record
    /// cut or from another version says nothing, as if there were none).
    fn parse(text: &str) -> Option<Runner> {
        let mut lines = text.lines();
        if lines.next()? != RUNNER_MAGIC {
            return None;
        }
        let mut field = |name: &str| lines.next()?.strip_prefix(name)?.strip_prefix(' ').map(str::to_string);
        let job = field("job")?;
        let host = field("host")?;
        let pid = field("pid")?.parse().ok()?;
        let locked = match field("lock")?.as_str() {
            "held" => true,
            "refused" => false,
            _ => return None,
        };
        Some(Runner { job: (job != "-").then_some(job), host, pid, locked })
    }
}

/// This machine's host name, as the kernel has it (Slurm's clusters run Linux);
/// "unknown" where it cannot be read.
pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// A shard's state on disk.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ShardState {
    /// Complete and intact.
    Done,
    /// Being run: a runner holds its checkpoint's lock; `scored` of its positions are
    /// checkpointed, the last `idle` ago.
    Running {
        /// Positions scored.
        scored: u64,
        /// Since the last write.
        idle: Duration,
    },
    /// Started and not seen running (no runner holds its checkpoint's lock here):
    /// `scored` of its positions are checkpointed; `idle` is the time since its file
    /// last changed; `runner` is the record its last runner left, when it left one.
    /// Where locks work (here and for that runner, on this host), the shard has
    /// stopped; elsewhere only the scheduler (or the idle time) can tell.
    Partial {
        /// Positions scored.
        scored: u64,
        /// Since the last write.
        idle: Duration,
        /// Its last runner's record.
        runner: Option<Runner>,
        /// Whether this host could test the checkpoint's lock (false: the file system
        /// refuses locks here).
        lockable: bool,
    },
    /// Not started.
    Missing,
    /// Its file is foreign, truncated or damaged (the message says which).
    Damaged(String),
}

impl ShardState {
    /// For a started shard nobody is seen holding (`Partial`): whether its lock can be
    /// believed, so that the shard has stopped. It can where this host could test the
    /// lock and the shard's last runner (when it left a record) held it on this host:
    /// some cluster file systems refuse locks, and some lock per node.
    pub(crate) fn lock_tells(&self, here: &str) -> bool {
        matches!(self, ShardState::Partial { runner, lockable: true, .. }
            if runner.as_ref().is_none_or(|r| r.locked && r.host == here))
    }
}

/// One shard's line in [`Plan::status`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
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
            ShardState::Partial { scored, .. } | ShardState::Running { scored, .. } => scored,
            _ => 0,
        }
    }
}

/// What a shard run reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShardEvent {
    /// The file system refused to lock the checkpoint: the run goes on unlocked, and
    /// nothing stops a second run from appending to it (start none).
    LockRefused(LockRefused),
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

impl Plan {
    /// The complete file of shard `index`.
    pub fn shard_path(&self, index: u32) -> PathBuf {
        self.dir.join(format!("shard-{index:04}.tbs"))
    }

    pub(super) fn partial_path(&self, index: u32) -> PathBuf {
        self.dir.join(format!("shard-{index:04}.partial"))
    }

    fn runner_path(&self, index: u32) -> PathBuf {
        self.dir.join(format!("shard-{index:04}.runner"))
    }

    /// The record of shard `index`'s last runner, when there is one.
    pub fn runner(&self, index: u32) -> Option<Runner> {
        Runner::parse(&std::fs::read_to_string(self.runner_path(index)).ok()?)
    }

    /// The positions of every shard, in O(shards) from the sizes the plan records
    /// (`shard_range` of each would be quadratic in the shard count).
    fn shard_ranges(&self) -> Vec<std::ops::Range<usize>> {
        if self.file.shard_positions.is_empty() {
            return (0..self.file.shards).map(|i| self.shard_range(i)).collect();
        }
        let mut start = 0usize;
        let sizes = self.file.shard_positions.iter().map(|&s| usize::try_from(s).unwrap_or(usize::MAX));
        sizes
            .map(|size| {
                let range = start..start.saturating_add(size);
                start = range.end;
                range
            })
            .collect()
    }

    /// The positions of shard `index`: a range of the plan's, in key order (from the
    /// shards' sizes the plan records, else from its keys, read at opening then).
    pub(super) fn shard_range(&self, index: u32) -> std::ops::Range<usize> {
        let sizes = &self.file.shard_positions;
        if !sizes.is_empty() {
            let size = |s: &u64| usize::try_from(*s).unwrap_or(usize::MAX);
            let start: usize = sizes.iter().take(index as usize).map(size).sum();
            return start..start + sizes.get(index as usize).map_or(0, size);
        }
        let (keys, shards) = (self.loaded_keys(), self.file.shards);
        let start = keys.partition_point(|&k| shard_of(k, shards) < index);
        let end = keys.partition_point(|&k| shard_of(k, shards) <= index);
        start..end
    }

    /// The positions shard `index` searches (read from the positions file for a build).
    pub(super) fn shard_nodes(&self, index: u32) -> Result<Vec<Node>, PlanError> {
        let range = self.shard_range(index);
        match &self.work {
            Work::Round(r) => Ok(r.round.jobs[range]
                .iter()
                .map(|&(key, board)| Node { key, board, games: 0, wins: 0, draws: 0 })
                .collect()),
            Work::Checks(c) => Ok(c.nodes[range].to_vec()),
            Work::Build => Ok(read_node_range(&self.dir.join(NODES_FILE), range, self.keys()?)?),
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

    pub(super) fn check_index(&self, index: u32) -> Result<(), PlanError> {
        if index >= self.file.shards {
            return Err(PlanError::Index { index, shards: self.file.shards });
        }
        Ok(())
    }

    /// Runs shard `index` outside a scheduler: [`Plan::run_shard_as`] with no job.
    #[cfg(test)]
    pub fn run_shard(
        &self,
        index: u32,
        threads: Option<usize>,
        progress: &(dyn Fn(ShardEvent) + Sync),
    ) -> Result<(), PlanError> {
        self.run_shard_as(index, threads, None, progress)
    }

    /// Runs shard `index` on `threads` threads (when `None`: every core of the machine
    /// it runs on, never the planning host's) as the scheduler's `job`, when it is one:
    /// skipped when its file is complete and intact, resumed from its checkpoint when
    /// one exists (a damaged complete file is scored again).
    ///
    /// The checkpoint is locked for the whole run, so a second runner of the same shard
    /// fails at once ([`ShardFault::Locked`]) instead of appending to the same file;
    /// where the file system refuses locks the run goes on after a
    /// [`ShardEvent::LockRefused`]. The runner's record ([`Runner`]) is written beside
    /// the checkpoint. The first write that fails stops the run (no further position is
    /// searched) and is the error.
    pub fn run_shard_as(
        &self,
        index: u32,
        threads: Option<usize>,
        job: Option<&str>,
        progress: &(dyn Fn(ShardEvent) + Sync),
    ) -> Result<(), PlanError> {
        self.check_index(index)?;
        // Its leaf searches ask which moves lead to positions of the plan.
        self.keys()?;
        let final_path = self.shard_path(index);
        if final_path.exists() && self.read_shard(index).is_ok() {
            progress(ShardEvent::AlreadyDone);
            return Ok(());
        }
        let threads = match threads {
            Some(t) => {
                check(Setting::Threads, t, 1..=MAX_THREADS)?;
                t
            }
            None => crate::search::default_threads(),
        };
        let search = build::LeafSearch::with_eval(&self.search, threads, self.load_eval()?);
        let (file, done) = self.open_partial(index)?;
        if let Some(refused) = file.lock_refused() {
            progress(ShardEvent::LockRefused(refused));
        }
        let runner = Runner {
            job: job.map(str::to_string),
            host: host_name(),
            pid: std::process::id(),
            locked: file.lock_refused().is_none(),
        };
        let runner_path = self.runner_path(index);
        atomic_write(&runner_path, runner.to_text().as_bytes()).map_err(io(&runner_path))?;
        if !done.is_empty() {
            progress(ShardEvent::Resumed { scored: done.len() as u64 });
        }
        let mine = self.shard_nodes(index)?;
        let in_book = |k: u64| self.in_book(k);
        let score = |node: &Node, tt: &mut crate::search::TranspositionTable| match &self.work {
            // A check searches the whole position: the book is what it checks.
            Work::Checks(_) => build::search_position(&node.board, 0, &search, tt),
            Work::Build | Work::Round(_) => build::score_leaf(&node.board, &in_book, &search, tt),
        };
        let all = search.pool()?.install(|| {
            let key_of = |n: &Node| n.key;
            crate::book::build::search::search_logged(
                &mine,
                &key_of,
                &search,
                &done,
                Some(&file),
                &|| false,
                &score,
                &|done, total| progress(ShardEvent::Scored { done, total }),
            )
        })?;
        // The shard's positions are in key order, and so are their leaves.
        self.write_shard_file(index, &all)?;
        // The shard is safely written; a stale checkpoint only costs disk space. It is
        // removed while still locked, so no runner resumes from it in between.
        let _ = std::fs::remove_file(&runner_path);
        file.remove();
        Ok(())
    }

    /// The plan's evaluation, loaded and checked against the digest it recorded: a
    /// weight file changed since the plan was made is refused by name.
    fn load_eval(&self) -> Result<crate::eval::AnyEval, PlanError> {
        let eval = self.file.eval.source().load().map_err(|e| PlanError::Build(e.into()))?;
        if eval.digest() != self.search.eval_digest {
            return Err(PlanError::file(
                &self.dir.join(super::PLAN_FILE),
                PlanFault::EvalChanged {
                    eval: self.file.eval.describe(),
                    now: eval.digest(),
                    planned: self.file.eval_digest.clone(),
                },
            ));
        }
        Ok(eval)
    }

    /// Writes the complete file of shard `index` from its leaves in key order.
    fn write_shard_file(&self, index: u32, all: &[(u64, Leaf)]) -> Result<(), PlanError> {
        let final_path = self.shard_path(index);
        let mut bytes = Vec::with_capacity(SHARD_HEADER + all.len() * ENTRY + TRAILER);
        bytes.extend_from_slice(&self.header(index));
        for (key, leaf) in all {
            bytes.extend_from_slice(&crate::book::build::leaflog::encode_leaf_entry(*key, leaf));
        }
        let crc = crc32fast::hash(&bytes[SHARD_HEADER..]);
        bytes.extend_from_slice(SHARD_END);
        bytes.extend_from_slice(&(all.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes.extend_from_slice(&[0; 4]);
        atomic_write(&final_path, &bytes).map_err(io(&final_path))
    }

    /// Opens shard `index`'s checkpoint for appending, created with its header when
    /// absent, and locks it; returns it with the leaves it holds. A checkpoint of
    /// another plan or shard is an error (it is not overwritten); a cut-off last entry
    /// is cut off the file.
    fn open_partial(&self, index: u32) -> Result<(LeafFile, HashMap<u64, Leaf>), PlanError> {
        let path = self.partial_path(index);
        let shard_err = |fault: ShardFault| PlanError::Shard { index, path: path.clone(), fault };
        LeafFile::open(&path, &self.header(index), true, |e| self.decode_entry(index, e)).map_err(|fault| match fault {
            OpenFault::Io(e) => io(&path)(e),
            OpenFault::Locked => shard_err(ShardFault::Locked),
            OpenFault::Entries(fault) => shard_err(partial_fault(fault)),
        })
    }

    /// Checks an entry ([`crate::book::build::leaflog::decode_leaf_entry`]) and that its key is a position
    /// of this shard.
    fn decode_entry(&self, index: u32, e: &[u8]) -> Result<(u64, Leaf), EntryFault> {
        let (key, leaf) = crate::book::build::leaflog::decode_leaf_entry(e, self.search.selectivity_tenths())?;
        if shard_of(key, self.file.shards) != index || self.index_of(key).is_none() {
            return Err(EntryFault::Stranger { key });
        }
        Ok((key, leaf))
    }

    /// The leaves of a complete shard file, in key order, after every check.
    pub(super) fn read_shard(&self, index: u32) -> Result<Vec<(u64, Leaf)>, PlanError> {
        let path = self.shard_path(index);
        let shard_err = |fault: ShardFault| PlanError::Shard { index, path: path.clone(), fault };
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let partial = self.partial_path(index).exists();
                return Err(shard_err(if partial { ShardFault::Unfinished } else { ShardFault::Missing }));
            }
            Err(e) => return Err(io(&path)(e)),
        };
        // Every entry must be a position of the plan.
        self.keys()?;
        parse_shard(&bytes, &self.header(index), self.shard_range(index).len(), |e| self.decode_entry(index, e))
            .map_err(shard_err)
    }

    /// Every shard's state. A complete shard file is verified in full once; while its
    /// length and modification time stay the same it is trusted after that (the plan
    /// directory's `verified` file remembers it), so that following a run of large
    /// shards reads no shard twice. Assembly verifies every shard again.
    pub fn status(&self) -> Vec<ShardStatus> {
        let cache_path = self.dir.join(VERIFIED_FILE);
        let cached = read_verified(&cache_path, self.digest);
        let mut verified = HashMap::new();
        let states = (0..self.file.shards)
            .zip(self.shard_ranges())
            .map(|(index, range)| {
                let positions = range.len() as u64;
                let state = if let Ok(meta) = std::fs::metadata(self.shard_path(index)) {
                    let stamp = file_stamp(&meta);
                    if let Some(stamp) = stamp.filter(|s| cached.get(&index) == Some(s)) {
                        verified.insert(index, stamp);
                        ShardState::Done
                    } else {
                        match self.read_shard(index) {
                            Ok(_) => {
                                // A file changed within the file system's timestamp
                                // granularity of now could change again unseen (as
                                // git's index knows): only older ones are remembered.
                                if let Some(stamp) = stamp.filter(|&(_, nanos)| settled(nanos)) {
                                    verified.insert(index, stamp);
                                }
                                ShardState::Done
                            }
                            Err(e) => ShardState::Damaged(e.to_string()),
                        }
                    }
                } else if let Ok(meta) = std::fs::metadata(self.partial_path(index)) {
                    let scored = meta.len().saturating_sub(SHARD_HEADER as u64) / ENTRY as u64;
                    let idle = meta.modified().ok().and_then(|m| SystemTime::now().duration_since(m).ok());
                    let idle = idle.unwrap_or_default();
                    match locked(&self.partial_path(index)) {
                        Some(true) => ShardState::Running { scored, idle },
                        lock => {
                            ShardState::Partial { scored, idle, runner: self.runner(index), lockable: lock.is_some() }
                        }
                    }
                } else {
                    ShardState::Missing
                };
                ShardStatus { index, positions, state }
            })
            .collect();
        if verified != cached {
            // A cache is an optimisation: a directory it cannot be written to costs
            // the next status a full check, nothing else.
            let _ = atomic_write(&cache_path, write_verified(self.digest, &verified).as_bytes());
        }
        states
    }
}

/// The file in a plan directory that remembers the shards `status` verified.
const VERIFIED_FILE: &str = "verified";

/// What identifies a shard file's contents cheaply: its length and modification time
/// (nanoseconds since the epoch); none where the file system gives no time.
fn file_stamp(meta: &std::fs::Metadata) -> Option<(u64, u128)> {
    let modified = meta.modified().ok()?.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    Some((meta.len(), modified.as_nanos()))
}

/// Whether a modification time (nanoseconds since the epoch) is over two seconds old.
fn settled(nanos: u128) -> bool {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .is_ok_and(|now| now.as_nanos().saturating_sub(nanos) > Duration::from_secs(2).as_nanos())
}

/// The verified shards the cache at `path` lists for the plan `digest` (none when it
/// is absent, of another plan or unreadable): shard → stamp.
fn read_verified(path: &std::path::Path, digest: u64) -> HashMap<u32, (u64, u128)> {
    let Ok(text) = std::fs::read_to_string(path) else { return HashMap::new() };
    let mut lines = text.lines();
    if lines.next() != Some(format!("thorbook verified shards 1 {digest:016x}").as_str()) {
        return HashMap::new();
    }
    lines
        .filter_map(|l| {
            let mut f = l.split(' ');
            let (index, len, nanos) = (f.next()?.parse().ok()?, f.next()?.parse().ok()?, f.next()?.parse().ok()?);
            Some((index, (len, nanos)))
        })
        .collect()
}

fn write_verified(digest: u64, verified: &HashMap<u32, (u64, u128)>) -> String {
    let mut rows: Vec<_> = verified.iter().collect();
    rows.sort_unstable();
    let mut text = format!("thorbook verified shards 1 {digest:016x}\n");
    for (index, (len, nanos)) in rows {
        text.push_str(&format!("{index} {len} {nanos}\n"));
    }
    text
}

/// Whether a runner holds the lock of the checkpoint at `path` (a shared lock cannot be
/// had; it is released at once when it can): `Some(true)` held, `Some(false)` free,
/// `None` when the file system refuses locks here.
fn locked(path: &std::path::Path) -> Option<bool> {
    match File::open(path) {
        Ok(f) => crate::fileio::held_elsewhere(&f),
        // Gone since it was seen (the shard was just written): nothing holds it.
        Err(_) => Some(false),
    }
}

/// The leaves of a complete shard file's `bytes` whose header must be `header` and
/// which holds `positions` entries, in strictly increasing key order, each checked by
/// `decode`; then the trailer's count and checksum.
pub(crate) fn parse_shard(
    bytes: &[u8],
    header: &[u8; SHARD_HEADER],
    positions: usize,
    decode: impl Fn(&[u8]) -> Result<(u64, Leaf), EntryFault>,
) -> Result<Vec<(u64, Leaf)>, ShardFault> {
    if bytes.len() < SHARD_HEADER + TRAILER || &bytes[..8] != SHARD_MAGIC {
        return Err(ShardFault::NotAShard);
    }
    let (found, plan) = (LE::read_u64(&bytes[8..16]), LE::read_u64(&header[8..16]));
    if found != plan {
        return Err(ShardFault::OtherPlan { found, plan });
    }
    if bytes[..SHARD_HEADER] != header[..] {
        return Err(ShardFault::OtherShard);
    }
    let trailer_at = positions.checked_mul(ENTRY).and_then(|n| n.checked_add(SHARD_HEADER));
    let expected_len = trailer_at.and_then(|t| t.checked_add(TRAILER));
    let (Some(trailer_at), true) = (trailer_at, expected_len == Some(bytes.len())) else {
        return Err(ShardFault::Length {
            len: bytes.len() as u64,
            expected: expected_len.map_or(u64::MAX, |n| n as u64),
            positions: positions as u64,
        });
    };
    let t = &bytes[trailer_at..];
    if &t[..8] != SHARD_END || LE::read_u64(&t[8..16]) != positions as u64 {
        return Err(ShardFault::NoTrailer(trailer_at as u64));
    }
    if crc32fast::hash(&bytes[SHARD_HEADER..trailer_at]) != LE::read_u32(&t[16..20]) {
        return Err(ShardFault::Checksum);
    }
    let mut leaves = Vec::with_capacity(positions);
    for (i, e) in bytes[SHARD_HEADER..trailer_at].chunks_exact(ENTRY).enumerate() {
        let at = SHARD_HEADER + i * ENTRY;
        let entry = |problem: EntryFault| ShardFault::Entry { index: i as u64, byte: at as u64, problem };
        let (key, leaf) = decode(e).map_err(entry)?;
        if leaves.last().is_some_and(|&(k, _)| k >= key) {
            return Err(entry(EntryFault::Order));
        }
        leaves.push((key, leaf));
    }
    Ok(leaves)
}

/// The leaves of a shard's checkpoint `bytes` (entries in any order, each checked by
/// `decode`), which must start with `header`; a checkpoint cut before its header was
/// whole holds nothing, and a cut-off last entry is dropped.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn parse_partial(
    bytes: &[u8],
    header: &[u8; SHARD_HEADER],
    decode: impl Fn(&[u8]) -> Result<(u64, Leaf), EntryFault>,
) -> Result<HashMap<u64, Leaf>, ShardFault> {
    crate::book::build::leaflog::parse_entries(bytes, header, decode).map(|(done, _)| done).map_err(partial_fault)
}

/// What a fault of a shard's checkpoint means.
fn partial_fault(fault: EntriesFault) -> ShardFault {
    match fault {
        EntriesFault::Header { .. } => ShardFault::ForeignCheckpoint,
        EntriesFault::Damaged { index, byte, fault } => {
            ShardFault::DamagedCheckpoint { index: index as u64, byte: byte as u64, problem: fault }
        }
    }
}
