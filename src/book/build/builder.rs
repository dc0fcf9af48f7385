//! [`Builder`]: the whole book build as one library call — collect, checkpoint, score,
//! back up, write — reporting progress through a callback, so the command line, a GUI
//! or a server drive the same pipeline and only render its events.
//!
//! A build runs in bounded memory, as a one-shard plan would: positions are collected
//! by the external sort ([`super::collect::Collector`]) into a positions file
//! beside the output, scored from it a chunk at a time, and written through the
//! streamed writer ([`super::stream::BookFile`]), which backs the values up from
//! compact arrays. An update or a learning reads the earlier book where it lies
//! (mapped), a bit a record for its walk: about 25 bytes a position in all.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::backup::Reached;
use super::checkpoint::{games_digest, BuildIdentity, Checkpoint, PositionsDigest};
use super::collect::Collector;
use super::nodes::{NodeReader, NodeWriter, PositionsError};
use super::stream::{BookFile, StreamError};
use super::{leaf, BuildConfig, BuildError, GameLine, Leaf, LeafSearch, Node};
use crate::board::Board;
use crate::book::format::BuildParams;
use crate::book::{for_each_reachable, Book};
use crate::fileio::IoError;
use crate::fileio::LockRefused;

/// What a running build reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildEvent {
    /// Positions were collected from the games.
    Collected {
        /// Distinct positions kept.
        positions: usize,
        /// Games read.
        games: usize,
    },
    /// A checkpoint of the same build was found: these positions need no search.
    Resumed {
        /// Positions already scored.
        scored: usize,
    },
    /// `--resume` was asked for but there is no checkpoint: the build starts afresh.
    NoCheckpoint,
    /// The file system refused to lock the checkpoint: the run goes on unlocked, and
    /// nothing stops a second run from appending to it (start none).
    LockRefused(LockRefused),
    /// Leaves taken from the previous book as they are (an update).
    Reused {
        /// Positions whose leaf needs no search.
        leaves: usize,
    },
    /// Scoring progress: `done` of `total` positions searched in this run.
    Scored {
        /// Searched so far.
        done: u64,
        /// To search in this run.
        total: u64,
    },
}

/// What a finished build did.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BuildSummary {
    /// Positions in the book.
    pub positions: usize,
    /// Games they came from.
    pub games: usize,
    /// Positions searched by this run (the others came from the checkpoint).
    pub searched: u64,
    /// Time spent searching.
    pub search_time: Duration,
    /// Wall time of the whole build.
    pub total_time: Duration,
    /// The book's size in bytes, as written.
    pub size: u64,
}

/// The memory the collection's buffer may take in a build, update or learning: with
/// the keys and the back-up's arrays (about 25 bytes a position) and the earlier book's
/// pages, a book of 2 x 10^7 positions stays under 1 GiB.
const BUILD_SORT_BUDGET: usize = 256 << 20;

/// Positions scored per pass of the leaf searches: enough to keep every thread busy,
/// few enough that a pass's boards take about 10 MB.
const CHUNK: usize = 1 << 18;

/// Builds a book file from games, resumably.
#[derive(Clone, Debug)]
pub struct Builder {
    config: BuildConfig,
    output: PathBuf,
    resume: bool,
    /// Set from outside (Ctrl-C in a notebook) to stop between leaves.
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// What a build starts from besides its games.
enum Base<'b, D: AsRef<[u8]>> {
    /// Nothing: every leaf is searched.
    Games,
    /// An earlier book whose leaves are taken where still valid.
    Update(&'b Book<D>),
    /// A book whose positions and counts join the games' (and whose leaves are taken
    /// where still valid).
    Learn(&'b Book<D>),
}

// By hand: a derive would ask `D: Copy`, and only the reference is copied.
impl<D: AsRef<[u8]>> Clone for Base<'_, D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<D: AsRef<[u8]>> Copy for Base<'_, D> {}

impl<D: AsRef<[u8]>> Base<'_, D> {
    fn book(&self) -> Option<&Book<D>> {
        match *self {
            Base::Games => None,
            Base::Update(book) | Base::Learn(book) => Some(book),
        }
    }
}

impl Builder {
    /// A build of `config` into `output` (its checkpoint is `output.checkpoint`).
    pub fn new(config: BuildConfig, output: impl Into<PathBuf>) -> Builder {
        Builder { config, output: output.into(), resume: false, stop: None }
    }

    /// Continues from the checkpoint of an interrupted build of the same inputs (a
    /// checkpoint of other inputs is an error, and is left untouched).
    pub fn resume(mut self, resume: bool) -> Builder {
        self.resume = resume;
        self
    }

    /// Stops the build between leaves once `stop` is set: it then fails with
    /// [`BuildError::Interrupted`], the leaves searched kept in the checkpoint.
    pub fn stop_on(mut self, stop: crate::work::StopHandle) -> Builder {
        self.stop = Some(stop.shared());
        self
    }

    /// The checkpoint file.
    pub fn checkpoint_path(&self) -> PathBuf {
        Checkpoint::path_for(&self.output)
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// What it builds.
    pub(crate) fn config(&self) -> &BuildConfig {
        &self.config
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The output file.
    pub(crate) fn output(&self) -> &Path {
        &self.output
    }

    /// Runs the build on a pool of the settings' thread count; `progress` is called
    /// from worker threads. Every setting is checked (and one table allocated) before
    /// any work; the book is written atomically and the checkpoint removed at the end.
    pub fn run(&self, games: &[GameLine], progress: &(dyn Fn(BuildEvent) + Sync)) -> Result<BuildSummary, BuildError> {
        self.execute::<&[u8]>(games, Base::Games, progress)
    }

    /// Builds from `games` (every archive the new book comes from, old and new) over
    /// `previous`, an earlier book: a leaf depends only on its position, which of its
    /// moves lead into the book, and the search settings, so a position of `previous`
    /// (reachable from the start) whose moves into the book are the same in both keeps
    /// its leaf, and only the positions that are new or whose moves into the book
    /// changed are searched. The book written is the one a full build writes. An
    /// error before any work when `previous` was searched with other settings.
    pub fn update<D: AsRef<[u8]> + Sync>(
        &self,
        previous: &Book<D>,
        games: &[GameLine],
        progress: &(dyn Fn(BuildEvent) + Sync),
    ) -> Result<BuildSummary, BuildError> {
        self.execute(games, Base::Update(previous), progress)
    }

    /// Learns `games` into `book` the way Edax and Zebra grow their books from the
    /// games they play: every position of each game's line up to the ply limit joins
    /// the book (the game counts of those already in it grow), so that where a game
    /// left the book a new position gets a searched leaf; the leaves of the book's
    /// positions whose moves into the book are unchanged are reused (as
    /// [`Builder::update`] does); then values are backed up.
    ///
    /// Every position of a line joins, whatever the game minimum: the book does not
    /// know how many games reached the positions it left out. For a book built with a
    /// minimum of 1, learning games equals `update` with the book's archives and them.
    pub fn learn<D: AsRef<[u8]> + Sync>(
        &self,
        book: &Book<D>,
        games: &[GameLine],
        progress: &(dyn Fn(BuildEvent) + Sync),
    ) -> Result<BuildSummary, BuildError> {
        self.execute(games, Base::Learn(book), progress)
    }

    /// The leaf search (its evaluation loaded once), checked against the earlier
    /// book's before any work: its leaves are reusable only if searched alike.
    fn leaf_search(&self, previous: Option<&BuildParams>) -> Result<LeafSearch, BuildError> {
        let config = &self.config;
        let search = config.leaf_search()?;
        if let Some(a) = previous {
            let b = search.params(config.max_ply, config.min_games);
            let same = (a.depth, a.exact_at, a.selectivity_tenths, a.eval_digest)
                == (b.depth, b.exact_at, b.selectivity_tenths, b.eval_digest);
            if !same {
                return Err(BuildError::Previous { previous: *a, wanted: b });
            }
        }
        Ok(search)
    }

    /// Collects, scores, backs up and writes.
    fn execute<D: AsRef<[u8]> + Sync>(
        &self,
        games: &[GameLine],
        base: Base<'_, D>,
        progress: &(dyn Fn(BuildEvent) + Sync),
    ) -> Result<BuildSummary, BuildError> {
        let start = Instant::now();
        let config = &self.config;
        let previous = base.book().map(|book| book.params());
        let search = self.leaf_search(previous.as_ref())?;
        let pool = search.pool()?;
        let nodes = Spool::beside(&self.output);
        let mut collected = pool.install(|| self.collect(games, base, &nodes.0))?;
        progress(BuildEvent::Collected { positions: collected.keys.len(), games: games.len() });

        let ckpt_path = self.checkpoint_path();
        let identity = BuildIdentity::of(games_digest(games), collected.digest, &search);
        let resuming = self.resume && ckpt_path.exists();
        let (ckpt, done) = Checkpoint::open(&ckpt_path, config, &search, &identity, resuming)?;
        if let Some(refused) = ckpt.lock_refused() {
            progress(BuildEvent::LockRefused(refused));
        }
        if resuming {
            progress(BuildEvent::Resumed { scored: done.len() });
        } else if self.resume {
            progress(BuildEvent::NoCheckpoint);
        }

        // Which positions keep the earlier book's leaf, found in a first pass over the
        // positions so that the progress has its total before any search.
        let keys = &collected.keys;
        // Keys are uniform: interpolation finds one in a few reads where bisection of
        // 10^7 keys misses the cache 20 times.
        let in_new = |k: u64| crate::book::format::find_key(keys.len(), |i| keys[i], k).is_some();
        let reuse = match base.book() {
            Some(book) => {
                let reuse = Reuse::new(book, keys, collected.reachable.take());
                let mut reader = NodeReader::open(&nodes.0).map_err(spool_error)?;
                let mut taken = vec![0u64; keys.len().div_ceil(64)];
                // A chunk of positions (a multiple of 64) at a time, in parallel.
                let mut first = 0;
                loop {
                    let chunk = read_chunk(&mut reader)?;
                    if chunk.is_empty() {
                        break;
                    }
                    let words: Vec<u64> = pool.install(|| {
                        chunk
                            .par_chunks(64)
                            .map(|nodes| {
                                let reusable = |n: &Node| !done.contains_key(&n.key) && reuse.reusable(n);
                                nodes.iter().enumerate().fold(0u64, |w, (b, n)| w | u64::from(reusable(n)) << b)
                            })
                            .collect()
                    });
                    taken[first / 64..first / 64 + words.len()].copy_from_slice(&words);
                    first += chunk.len();
                }
                let leaves = taken.iter().map(|w| w.count_ones() as usize).sum();
                progress(BuildEvent::Reused { leaves });
                Some((reuse, taken))
            }
            None => None,
        };
        let taken = |i: usize| reuse.as_ref().is_some_and(|(_, t)| t[i / 64] >> (i % 64) & 1 == 1);
        let total = (0..keys.len()).filter(|&i| !done.contains_key(&keys[i]) && !taken(i)).count() as u64;

        // Score a chunk at a time, in key order, into the streamed writer.
        let search_start = Instant::now();
        let params = config.params()?;
        let mut book = BookFile::with_known_keys(&self.output, params, keys).map_err(stream_error)?;
        book.reserve(keys.len());
        let mut reader = NodeReader::open(&nodes.0).map_err(spool_error)?;
        let (mut index, mut searched) = (0usize, 0u64);
        let none = HashMap::new();
        loop {
            let chunk = read_chunk(&mut reader)?;
            if chunk.is_empty() {
                break;
            }
            let jobs: Vec<&Node> = chunk
                .iter()
                .enumerate()
                .filter(|&(j, n)| !done.contains_key(&n.key) && !taken(index + j))
                .map(|(_, n)| n)
                .collect();
            let base = searched;
            let stopped = || self.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
            let found = pool.install(|| {
                let in_book = &in_new;
                let score = |n: &&Node, tt: &mut crate::search::TranspositionTable| {
                    leaf::score_leaf(&n.board, in_book, &search, tt)
                };
                super::search::search_logged(
                    &jobs,
                    &|n| n.key,
                    &search,
                    &none,
                    Some(&ckpt),
                    &stopped,
                    &score,
                    &|d, _| progress(BuildEvent::Scored { done: base + d, total }),
                )
            })?;
            if stopped() {
                return Err(BuildError::Interrupted);
            }
            searched += found.len() as u64;
            let mut found = found.into_iter();
            for (j, n) in chunk.iter().enumerate() {
                let leaf = if let Some(leaf) = done.get(&n.key) {
                    *leaf
                } else if taken(index + j) {
                    // Found reusable by the first pass: only the record is read again.
                    let (reuse, _) = reuse.as_ref().expect("taken leaves come from a book");
                    reuse.kept_leaf(n.key).expect("a leaf found reusable in the first pass")
                } else {
                    // A stopped search returned above, so every job has its leaf, in job order.
                    found.next().expect("a leaf for every job").1
                };
                book.push(&leaf::record(n, &leaf)).map_err(stream_error)?;
            }
            index += chunk.len();
        }
        let search_time = search_start.elapsed();
        drop(nodes);
        let written = pool.install(|| book.finish(&[Board::START], Reached::DropOthers)).map_err(stream_error)?;
        // The book is safely written; a stale checkpoint only costs disk space.
        ckpt.remove();
        Ok(BuildSummary {
            positions: usize::try_from(written.positions).unwrap_or(usize::MAX),
            games: games.len(),
            searched: total,
            search_time,
            total_time: start.elapsed(),
            size: written.bytes,
        })
    }

    /// Collects the positions of `games` (with a learning, the book's too) into the
    /// positions file `path`: their keys and digest.
    fn collect<D: AsRef<[u8]> + Sync>(
        &self,
        games: &[GameLine],
        base: Base<'_, D>,
        path: &Path,
    ) -> Result<Collection, BuildError> {
        let (max_ply, min_games) = match base {
            // Every position of a learned line joins (see `learn`).
            Base::Learn(_) => (self.config.max_ply, 1),
            _ => (self.config.max_ply, self.config.min_games),
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        let run = || -> Result<Collection, PositionsError> {
            let mut collector = Collector::new(dir, BUILD_SORT_BUDGET)?;
            for (g, game) in games.iter().enumerate() {
                collector.add_game(g, game, max_ply)?;
            }
            let mut reachable = None;
            if let Base::Learn(book) = base {
                let (mut failed, mut seen) = (None, vec![0u64; book.len().div_ceil(64)]);
                for_each_reachable(book, Board::START, &mut |i, board, r| {
                    seen[i / 64] |= 1 << (i % 64);
                    let node = Node { key: r.key, board, games: r.games, wins: r.wins, draws: u32::from(r.draws) };
                    if failed.is_none() {
                        failed = collector.add(node).err();
                    }
                });
                if let Some(e) = failed {
                    return Err(e);
                }
                reachable = Some(seen);
            }
            let mut out = NodeWriter::create(path)?;
            let (mut keys, mut digest) = (Vec::new(), PositionsDigest::default());
            collector.finish(min_games, &mut |n| {
                keys.push(n.key);
                digest.add(n);
                out.push(n)
            })?;
            out.finish()?;
            keys.shrink_to_fit();
            Ok(Collection { keys, digest: digest.finish(), reachable })
        };
        run().map_err(spool_error)
    }
}

/// The next [`CHUNK`] positions of the positions file (fewer at its end).
fn read_chunk(reader: &mut NodeReader) -> Result<Vec<Node>, BuildError> {
    let mut chunk = Vec::with_capacity(CHUNK);
    while chunk.len() < CHUNK {
        match reader.next().map_err(spool_error)? {
            Some(n) => chunk.push(n),
            None => break,
        }
    }
    Ok(chunk)
}

/// The collected positions: their keys in order (the positions themselves wait in the
/// positions file) and their digest.
struct Collection {
    keys: Vec<u64>,
    digest: u64,
    /// A learning's book positions reachable from the start, a bit a record.
    reachable: Option<Vec<u64>>,
}

/// The earlier book's leaves, taken where the moves into the book are unchanged.
struct Reuse<'b, D: AsRef<[u8]>> {
    book: &'b Book<D>,
    /// The book's positions reachable from the start, a bit a record: only their leaves
    /// were searched with the book's positions around them.
    reachable: Vec<u64>,
    /// The positions in one book and not the other (new, or left out): a leaf is
    /// reusable when none of its position's children is among them. Found by one
    /// merge of the two key orders, so that checking a child is a lookup in this small
    /// set, not a search of both books.
    changed: HashSet<u64>,
}

impl<'b, D: AsRef<[u8]>> Reuse<'b, D> {
    /// The earlier `book` against the new build's `keys` (in order); `reachable` when
    /// the collection walked the book already.
    fn new(book: &'b Book<D>, keys: &[u64], reachable: Option<Vec<u64>>) -> Reuse<'b, D> {
        let reachable = reachable.unwrap_or_else(|| {
            let mut reachable = vec![0u64; book.len().div_ceil(64)];
            for_each_reachable(book, Board::START, &mut |i, _, _| reachable[i / 64] |= 1 << (i % 64));
            reachable
        });
        let is_reachable = |i: usize| reachable[i / 64] >> (i % 64) & 1 == 1;
        let mut old = (0..book.len()).filter(|&i| is_reachable(i)).map(|i| book.record(i).key).peekable();
        let mut new = keys.iter().copied().peekable();
        let mut changed = HashSet::new();
        loop {
            match (old.peek().copied(), new.peek().copied()) {
                (Some(a), Some(b)) if a == b => {
                    old.next();
                    new.next();
                }
                (Some(a), b) if b.is_none_or(|b| a < b) => {
                    changed.insert(a);
                    old.next();
                }
                (_, Some(b)) => {
                    changed.insert(b);
                    new.next();
                }
                (_, None) => break,
            }
        }
        Reuse { book, reachable, changed }
    }

    /// Whether the earlier book's leaf of `n` can be kept: `n` is a reachable position
    /// of that book and its moves into it are its moves into the new one.
    fn reusable(&self, n: &Node) -> bool {
        let reachable = self.book.find(n.key).is_some_and(|(i, _)| self.reachable[i / 64] >> (i % 64) & 1 == 1);
        reachable && n.board.successors().all(|(_, child)| !self.changed.contains(&child.canonical_key()))
    }

    /// The earlier book's leaf of the position `key`.
    fn kept_leaf(&self, key: u64) -> Option<Leaf> {
        self.book.get(key).map(|r| Leaf::from_record(&r))
    }
}

/// A positions file beside the output, removed when dropped.
struct Spool(PathBuf);

impl Spool {
    fn beside(output: &Path) -> Spool {
        Spool(crate::fileio::work_path(output, "positions"))
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A failure of the collection or of its files, as a build's error: the games' and
/// the settings' errors as they are, a file's as an I/O error naming it. (A damaged
/// positions file or sorted run is the build's own file gone bad under it: the fault
/// is kept as the I/O error's message.)
fn spool_error(e: PositionsError) -> BuildError {
    match e {
        PositionsError::Build(e) => e,
        PositionsError::Io(e) => BuildError::Io(e),
        PositionsError::Memory { bytes } => BuildError::Memory { bytes },
        PositionsError::File { path, fault } => {
            BuildError::Io(IoError::new(path, std::io::Error::new(std::io::ErrorKind::InvalidData, fault.to_string())))
        }
    }
}

fn stream_error(e: StreamError) -> BuildError {
    match e {
        StreamError::Book(e) => BuildError::Book(e),
        StreamError::Io(e) => BuildError::Io(e),
    }
}
