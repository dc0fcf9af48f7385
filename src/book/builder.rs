//! [`Builder`]: the whole book build as one library call — collect, checkpoint, score,
//! back up, write — reporting progress through a callback, so the command line, a GUI
//! or a server drive the same pipeline and only render its events.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::backup::{back_up_records, Reached};
use super::build::{self, BuildConfig, BuildError, GameLine, Leaf, LeafSearch, Node};
use super::checkpoint::{BuildIdentity, Checkpoint};
use super::format::{BuildParams, Record, Writer};
use super::leaflog::LockRefused;
use super::{walk, Book};
use crate::board::Board;
use crate::fileio::atomic_write;
use crate::fileio::IoError;

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
    /// The book's bytes, as written.
    pub bytes: Vec<u8>,
}

/// The leaves of an earlier book that a new build can take without searching: a
/// leaf depends only on its position, which of its moves lead into the book, and the
/// search settings, so a position whose moves into the book are the same in both node
/// sets keeps its leaf (what makes `book update` equal a full rebuild).
#[derive(Clone, Debug, Default)]
pub struct PreviousBook {
    /// Canonical board and record of every position reachable in the earlier book.
    positions: HashMap<u64, (Board, Record)>,
    params: BuildParams,
}

impl PreviousBook {
    /// The positions of `book` reachable from the start, with its header.
    pub fn new<D: AsRef<[u8]>>(book: &Book<D>) -> PreviousBook {
        let positions =
            walk(book).into_iter().filter_map(|(key, board)| book.get(key).map(|r| (key, (board, r)))).collect();
        PreviousBook { positions, params: book.params() }
    }

    /// Positions held.
    pub(crate) fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Whether leaves searched as the previous book's were can be reused under
    /// `params`, the new build's header: the same depth, exact threshold, selectivity
    /// and evaluation. Checked before anything is collected, so that an update with
    /// other settings fails at once.
    pub(crate) fn check_search(&self, params: &BuildParams) -> Result<(), BuildError> {
        let (a, b) = (&self.params, params);
        let same = (a.depth, a.exact_at, a.selectivity_tenths, a.eval_digest)
            == (b.depth, b.exact_at, b.selectivity_tenths, b.eval_digest);
        if !same {
            return Err(BuildError::Previous { previous: *a, wanted: *b });
        }
        Ok(())
    }

    /// The leaves of `nodes` (sorted by key) that can be reused under `params`, the
    /// new build's header; an error when the earlier book was searched otherwise.
    pub(crate) fn reusable(
        &self,
        nodes: &[build::Node],
        params: &BuildParams,
    ) -> Result<HashMap<u64, Leaf>, BuildError> {
        self.check_search(params)?;
        let in_new = |k: u64| nodes.binary_search_by_key(&k, |n| n.key).is_ok();
        let in_old = |k: u64| self.positions.contains_key(&k);
        let into = |board: &Board, in_book: &dyn Fn(u64) -> bool| -> Vec<crate::square::Move> {
            board.successors().filter(|(_, child)| in_book(child.canonical_key())).map(|(mv, _)| mv).collect()
        };
        Ok(nodes
            .iter()
            .filter_map(|n| {
                let (board, r) = self.positions.get(&n.key)?;
                (into(board, &in_old) == into(&n.board, &in_new)).then(|| (n.key, Leaf::from_record(r)))
            })
            .collect())
    }
}

/// Builds a book file from games, resumably.
#[derive(Clone, Debug)]
pub struct Builder {
    config: BuildConfig,
    output: PathBuf,
    resume: bool,
    previous: Option<PreviousBook>,
}

impl Builder {
    /// A build of `config` into `output` (its checkpoint is `output.checkpoint`).
    pub fn new(config: BuildConfig, output: impl Into<PathBuf>) -> Builder {
        Builder { config, output: output.into(), resume: false, previous: None }
    }

    /// Continues from the checkpoint of an interrupted build of the same inputs (a
    /// checkpoint of other inputs is an error, and is left untouched).
    pub fn resume(mut self, resume: bool) -> Builder {
        self.resume = resume;
        self
    }

    /// Takes the leaves of `previous` where they are still valid ([`PreviousBook`]):
    /// an update searches only the positions that are new or whose moves into the book
    /// changed, and writes the book a full build would.
    pub fn previous(mut self, previous: Option<PreviousBook>) -> Builder {
        self.previous = previous;
        self
    }

    /// The checkpoint file.
    pub fn checkpoint_path(&self) -> PathBuf {
        Checkpoint::path_for(&self.output)
    }

    /// What it builds.
    pub(crate) fn config(&self) -> &BuildConfig {
        &self.config
    }

    /// The output file.
    pub(crate) fn output(&self) -> &Path {
        &self.output
    }

    /// Runs the build on a pool of the settings' thread count; `progress` is called
    /// from worker threads. Every setting is checked (and one table allocated) before
    /// any work; the book is written atomically and the checkpoint removed at the end.
    pub fn run(&self, games: &[GameLine], progress: &(dyn Fn(BuildEvent) + Sync)) -> Result<BuildSummary, BuildError> {
        let start = Instant::now();
        let search = self.leaf_search()?;
        let nodes = build::collect(games, self.config.max_ply, self.config.min_games)?;
        self.run_nodes(start, &search, games, nodes, progress)
    }

    /// The leaf search (its evaluation loaded once), checked against the previous
    /// book's before any work.
    fn leaf_search(&self) -> Result<LeafSearch, BuildError> {
        let config = &self.config;
        let search = config.leaf_search()?;
        if let Some(previous) = &self.previous {
            previous.check_search(&search.params(config.max_ply, config.min_games))?;
        }
        Ok(search)
    }

    /// Learns `games` into `book` the way Edax and Zebra grow their books from the
    /// games they play: every position of each game's line up to the ply limit joins
    /// the book (the game counts of those already in it grow), so that where a game
    /// left the book a new position gets a searched leaf; the leaves of the book's
    /// positions whose moves into the book are unchanged are reused (give the builder
    /// the book as [`Builder::previous`]); then values are backed up.
    ///
    /// Every position of a line joins, whatever the game minimum: the book does not
    /// know how many games reached the positions it left out. For a book built with a
    /// minimum of 1, learning games equals `update` with the book's archives and them.
    pub fn learn<D: AsRef<[u8]>>(
        &self,
        book: &Book<D>,
        games: &[GameLine],
        progress: &(dyn Fn(BuildEvent) + Sync),
    ) -> Result<BuildSummary, BuildError> {
        let start = Instant::now();
        let search = self.leaf_search()?;
        let mut nodes = build::collect(games, self.config.max_ply, 1)?;
        let mut index: HashMap<u64, usize> = nodes.iter().enumerate().map(|(i, n)| (n.key, i)).collect();
        for (key, board) in walk(book) {
            let Some(r) = book.get(key) else { continue };
            let i = *index.entry(key).or_insert_with(|| {
                nodes.push(Node { key, board, games: 0, wins: 0, draws: 0 });
                nodes.len() - 1
            });
            let n = &mut nodes[i];
            n.games = n.games.saturating_add(r.games);
            n.wins = n.wins.saturating_add(r.wins);
            n.draws = n.draws.saturating_add(u32::from(r.draws));
        }
        nodes.sort_unstable_by_key(|n| n.key);
        self.run_nodes(start, &search, games, nodes, progress)
    }

    /// Scores, backs up and writes `nodes` (collected from `games`).
    fn run_nodes(
        &self,
        start: Instant,
        search: &LeafSearch,
        games: &[GameLine],
        nodes: Vec<Node>,
        progress: &(dyn Fn(BuildEvent) + Sync),
    ) -> Result<BuildSummary, BuildError> {
        let config = &self.config;
        progress(BuildEvent::Collected { positions: nodes.len(), games: games.len() });
        let ckpt_path = self.checkpoint_path();
        let identity = BuildIdentity::new(games, &nodes, search);
        let resuming = self.resume && ckpt_path.exists();
        let (ckpt, mut done) = Checkpoint::open(&ckpt_path, config, search, &identity, resuming)?;
        if let Some(refused) = ckpt.lock_refused() {
            progress(BuildEvent::LockRefused(refused));
        }
        if resuming {
            progress(BuildEvent::Resumed { scored: done.len() });
        } else if self.resume {
            progress(BuildEvent::NoCheckpoint);
        }
        if let Some(previous) = &self.previous {
            let reused = previous.reusable(&nodes, &search.params(config.max_ply, config.min_games))?;
            progress(BuildEvent::Reused { leaves: reused.len() });
            done.extend(reused);
        }
        let io = |source: std::io::Error, path: &Path| BuildError::Io(IoError::new(path, source));
        let total = nodes.iter().filter(|n| !done.contains_key(&n.key)).count() as u64;
        let search_start = Instant::now();
        let leaves = search.pool()?.install(|| {
            build::score_nodes(&nodes, search, &done, Some(&ckpt), &|done, total| {
                progress(BuildEvent::Scored { done, total })
            })
        })?;
        let search_time = search_start.elapsed();
        let mut records = build::records(&nodes, &leaves);
        back_up_records(&mut records, [Board::START], config.back_up, Reached::DropOthers);
        let bytes = Writer::write_all(&records, config.params()?)?;
        atomic_write(&self.output, &bytes).map_err(|e| io(e, &self.output))?;
        // The book is safely written; a stale checkpoint only costs disk space.
        ckpt.remove();
        Ok(BuildSummary {
            positions: records.len(),
            games: games.len(),
            searched: total,
            search_time,
            total_time: start.elapsed(),
            bytes,
        })
    }
}
