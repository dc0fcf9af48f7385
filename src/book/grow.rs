//! Growing a book beyond the lines people played, by deviation (in the manner of
//! Edax's and Egaroucid's `deviate`): walk the book from a position letting one side at
//! a time play moves within `error` discs of the best and within a cumulative `budget`,
//! and expand the leaves met inside those bounds — play the leaf move, add the child
//! with its own leaf search, re-score the parent's next-best move leaving the book —
//! then back the values up by negamax and walk again, until nothing is left to expand
//! or the position or time budget is spent.
//!
//! Determinism: the work goes in *rounds* of at most `round_size` leaves (`Round`:
//! the leaves in key order, or most influential first for deepening), each leaf search
//! on one thread with a fresh transposition table, and a round's searches see only the
//! book as it was before the round plus the children the round adds. The result
//! therefore depends on the book and the settings, not on the thread count, on
//! interruptions or on where the searches ran: the book is written after every round
//! and a resumed run picks up from it, and a round planned as shards
//! ([`super::cluster::plan`]) is the same computation as a local one.
//!
//! Draw policy: most main lines are draws under perfect play, and a walk that treats
//! a draw like any other score never asks what else a side could try. With a
//! `contempt` of C discs, the deviating side values a drawn score as −C, so drawing
//! lines count as C discs below a draw in the error and budget checks (moves that win
//! are preferred, and alternatives to a drawing best line within `error` of −C are
//! explored).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use thiserror::Error;

use super::build::stream::{StreamError, Written};
use super::build::{score_leaf, BuildError, Leaf, LeafSearch, LeafSpec};
use super::format::{BookError, BuildParams};
use super::tree::{below, write_changed, Target};
use super::Book;
use crate::board::Board;
use crate::fileio::{atomic_write, read_mapped, Bytes, IoError};
use crate::parallel_count::ParallelCount;
use crate::search::Settings;
use crate::setting::{check, OutOfRange, Setting};
use crate::square::Move;

/// Leaves per round unless told otherwise (a setting, not the machine's choice: the
/// result depends on it).
pub const ROUND_SIZE: usize = 256;
/// The largest round.
pub(crate) const MAX_ROUND_SIZE: usize = 10_000_000;

/// What to expand.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GrowthConfig {
    /// A move is followed when it scores within this many discs of the best.
    pub error: i32,
    /// The losses of the deviating side along a line add up to at most this.
    pub budget: i32,
    /// A drawn score counts as this many discs lost for the deviating side.
    pub contempt: i32,
    /// Stop after adding this many positions.
    pub max_positions: Option<usize>,
    /// Stop starting rounds after this long.
    pub time: Option<Duration>,
    /// Leaves per round (default 256): larger rounds give a cluster more to
    /// search side by side, smaller ones back values up more often.
    pub round_size: usize,
    /// Positions deeper than this ply (60 − empties) are not expanded.
    pub max_ply: u32,
    /// How new leaves are searched, over the book's own leaf settings (explicit values
    /// first, then the level's, then what the book's header records).
    pub search: Settings,
    /// What to do with the leaves inside the bounds: expand them (deviation), or search
    /// them again at `search`'s level where they were searched less deeply (deepening).
    pub growth: Growth,
}

impl Default for GrowthConfig {
    /// Lines within 2 discs a move and 4 a line, to ply 40, no contempt, no limit but
    /// the bounds, rounds of 256 leaves, the default search: a deviation.
    fn default() -> GrowthConfig {
        GrowthConfig {
            error: 2,
            budget: 4,
            contempt: 0,
            max_positions: None,
            time: None,
            round_size: ROUND_SIZE,
            max_ply: 40,
            search: super::build::leaf_settings(),
            growth: Growth::Deviate,
        }
    }
}

/// How a book grows inside the error bounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Growth {
    /// Add the positions the leaves lead to (`book deviate`).
    #[default]
    Deviate,
    /// Search the leaves again at a deeper level, most influential first: the least
    /// loss from the best line, then the shallowest (`book deepen`).
    Deepen,
}

impl GrowthConfig {
    /// Checks every range; the message names the setting.
    pub(crate) fn validate(&self) -> Result<(), GrowthError> {
        check(Setting::Error, self.error, 0..=64)?;
        check(Setting::Budget, self.budget, 0..=128)?;
        check(Setting::Contempt, self.contempt, 0..=64)?;
        check(Setting::MaxPly, self.max_ply, 1..=60)?;
        if self.max_positions == Some(0) {
            return Err(OutOfRange::new(Setting::MaxPositions, 0, "at least 1").into());
        }
        check(Setting::RoundSize, self.round_size, 1..=MAX_ROUND_SIZE)?;
        Ok(())
    }
}

/// What a running deviation reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrowthEvent {
    /// A round starts: `leaves` to expand, the book holding `positions`.
    Round {
        /// Round number of this call (from 1).
        number: u64,
        /// Leaves in this round.
        leaves: usize,
        /// Book positions before it.
        positions: usize,
    },
    /// Searches done in the current round (of `total`).
    Searched {
        /// Done.
        done: u64,
        /// To do.
        total: u64,
    },
    /// `--resume` was asked for but no interrupted run of this output exists: the
    /// deviation starts afresh.
    NothingToResume,
    /// A round is written: the book has `positions`, the start position `root_value`.
    Written {
        /// Positions now.
        positions: usize,
        /// Value of the walk's starting position, for its side to move.
        root_value: i32,
    },
}

/// Why the deviation stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum StopReason {
    /// Every leaf inside the bounds is expanded.
    Complete,
    /// `max_positions` reached.
    Positions,
    /// The time is up.
    Time,
    /// The stop flag ([`Grower::stop_on`]) was set: the book of the rounds finished is
    /// written, and a resumed run continues.
    Interrupted,
}

/// A finished deviation.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GrowthSummary {
    /// Positions of the input book.
    pub before: usize,
    /// Positions now.
    pub after: usize,
    /// Value of the starting position before and after.
    pub root_before: i32,
    /// After.
    pub root_after: i32,
    /// Rounds run by this call.
    pub rounds: u64,
    /// Leaf searches run by this call.
    pub searches: u64,
    /// Why it stopped.
    pub stop: StopReason,
    /// Wall time.
    pub elapsed: Duration,
    /// The book written.
    pub written: Written,
}

/// An input of a growth that its resume state records, one line each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrowthInput {
    /// The state's format, the kind of growth or the round size.
    Kind,
    /// The input book.
    Book,
    /// The position grown from.
    From,
    /// The error window, budget, contempt or last ply.
    Limits,
    /// The leaf search's settings.
    Search,
}

impl GrowthInput {
    const LINES: [GrowthInput; 5] =
        [GrowthInput::Kind, GrowthInput::Book, GrowthInput::From, GrowthInput::Limits, GrowthInput::Search];

    /// The first input on which two identities differ, or `None` when they are equal.
    fn first_difference(found: &str, want: &str) -> Option<GrowthInput> {
        if found == want {
            return None;
        }
        let differs = found.lines().zip(want.lines()).position(|(a, b)| a != b);
        // Same lines but a different count: a state of another format.
        Some(differs.and_then(|i| GrowthInput::LINES.get(i).copied()).unwrap_or(GrowthInput::Kind))
    }
}

impl std::fmt::Display for GrowthInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GrowthInput::Kind => "another kind of growth or round size",
            GrowthInput::Book => "another input book",
            GrowthInput::From => "another starting position",
            GrowthInput::Limits => "another error window, budget, contempt or last ply",
            GrowthInput::Search => "other leaf-search settings",
        })
    }
}

/// Why a deviation failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum GrowthError {
    /// The starting position is not in the book.
    #[error("the starting position is not in the book")]
    NotInBook,
    /// A deepening without the level (or depth) to deepen to.
    #[error("a deepening needs the level (or depth) to deepen its leaves to")]
    NoTarget,
    /// The resume state does not match.
    #[error("{}: made by a growth with {field} than this one: start afresh instead of resuming", path.display())]
    Resume {
        /// The state file.
        path: std::path::PathBuf,
        /// The first input that differs.
        field: GrowthInput,
    },
    /// Writing the book failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The records cannot form a book.
    #[error(transparent)]
    Book(#[from] BookError),
    /// The leaf settings cannot be used.
    #[error(transparent)]
    Search(#[from] BuildError),
    /// A deviation setting out of range.
    #[error(transparent)]
    Setting(#[from] OutOfRange),
}

/// A leaf to expand: the position (its key and canonical board) and the key of the
/// position its leaf move leads to; for deepening, `child` is 0 and `loss`/`ply` say
/// how influential the leaf is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    parent: u64,
    child: u64,
    loss: i32,
    ply: u32,
    board: Board,
}

/// What a walk carries: the best budget each position was visited with, the leaves
/// found, the level deepening raises them to.
struct Walk {
    seen: HashMap<(u64, bool), i32>,
    found: BTreeSet<Candidate>,
    target: Option<Target>,
}

impl Candidate {
    fn min_by_influence(self, other: Candidate) -> Candidate {
        if (other.loss, other.ply) < (self.loss, self.ply) {
            other
        } else {
            self
        }
    }
}

/// Deviates a book, writing `output` after every batch (atomically). With `resume`,
/// an existing `output` made by an interrupted run with the same settings from the same
/// book is continued (its state file `output.deviate` says so).
pub struct Grower {
    config: GrowthConfig,
    from: Board,
    output: PathBuf,
    resume: bool,
    /// Set from outside (Ctrl-C in a notebook) to stop between leaf searches.
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Grower {
    /// Deviation of the book from position `from` (the start position for a whole book).
    pub fn new(config: GrowthConfig, from: Board, output: impl Into<PathBuf>) -> Grower {
        Grower { config, from, output: output.into(), resume: false, stop: None }
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The growth's settings.
    pub(crate) fn config(&self) -> &GrowthConfig {
        &self.config
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// Where the grown book goes.
    pub(crate) fn output(&self) -> &Path {
        &self.output
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The position the walks start from.
    pub(crate) fn from(&self) -> Board {
        self.from
    }

    /// Stops between leaf searches once `stop` is set ([`StopReason::Interrupted`]): the
    /// book of the rounds finished is written, and `resume` searches the round in
    /// progress again.
    pub fn stop_on(mut self, stop: crate::work::StopHandle) -> Grower {
        self.stop = Some(stop.shared());
        self
    }

    /// Continue an interrupted run.
    pub fn resume(mut self, resume: bool) -> Grower {
        self.resume = resume;
        self
    }

    /// The state file beside the output.
    pub(crate) fn state_path(&self) -> PathBuf {
        let mut s = self.output.as_os_str().to_owned();
        s.push(".deviate");
        PathBuf::from(s)
    }

    /// What the state file must hold for a run to be resumed: the input book and the settings.
    /// One line per [`GrowthInput`], in its order.
    pub(crate) fn identity<D: AsRef<[u8]>>(&self, book: &Book<D>, search: &LeafSpec) -> String {
        let c = &self.config;
        format!(
            "thorbook deviate 4 {:?} round {}\ninput {:016x} {}\nfrom {:016x} {:016x}\nerror {} budget {} contempt {} max_ply {}\n{}\n",
            c.growth,
            c.round_size,
            book.identity(),
            book.len(),
            self.from.player,
            self.from.opponent,
            c.error,
            c.budget,
            c.contempt,
            c.max_ply,
            search.identity(),
        )
    }

    /// The leaf search of a growth of `input`: the config's settings over what the
    /// input's header records.
    /// A deepening needs the level (or depth) to deepen to: the header's would change
    /// nothing.
    pub(crate) fn leaf_search<D: AsRef<[u8]>>(&self, input: &Book<D>) -> Result<LeafSearch, GrowthError> {
        self.config.validate()?;
        let s = &self.config.search;
        if self.config.growth == Growth::Deepen && s.level.is_none() && s.depth.is_none() {
            return Err(GrowthError::NoTarget);
        }
        Ok(LeafSearch::new(&self.config.search, LeafSpec::recorded(&input.params()))?)
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The next round on `book`: `tried` holds the leaves earlier rounds deepened (they
    /// are not tried again), `added` the leaves earlier rounds took (counted against
    /// `max_positions`). What a shard plan computes as a local run does.
    pub(crate) fn next_round<D: AsRef<[u8]>>(
        &self,
        book: &Book<D>,
        search: &LeafSpec,
        tried: &BTreeSet<u64>,
        added: usize,
    ) -> Result<Next, GrowthError> {
        self.config.validate()?;
        if book.probe(&self.from).is_none() {
            return Err(GrowthError::NotInBook);
        }
        Ok(self.round(book, search, tried, added))
    }

    /// Writes the book a round makes of `book` to `path`, as a stream: `leaves[i]` is
    /// the leaf search of `round.jobs[i]`; values are backed up again from the start
    /// and from the walk's start. The header is `book`'s with the round's leaf settings
    /// where they are deeper.
    pub(crate) fn finish_round<D: AsRef<[u8]>>(
        &self,
        book: &Book<D>,
        search: &LeafSpec,
        round: &Round,
        leaves: &[Leaf],
        path: &Path,
    ) -> Result<Written, GrowthError> {
        let changes: Vec<(u64, Leaf)> = round.jobs.iter().map(|j| j.0).zip(leaves.iter().copied()).collect();
        let params = self.params(book.params(), search);
        Ok(write_changed(book, &changes, params, &[Board::START, self.from], path)?)
    }

    /// Writes the book as a growth that stops before its first round leaves it (its
    /// header changed only) to `path`.
    pub(crate) fn unchanged<D: AsRef<[u8]>>(
        &self,
        book: &Book<D>,
        search: &LeafSpec,
        path: &Path,
    ) -> Result<Written, GrowthError> {
        Ok(write_changed(book, &[], self.params(book.params(), search), &[], path)?)
    }

    /// Runs on the current rayon pool; `progress` is called from worker threads. Each
    /// round reads the book the last one wrote and writes the next as a stream.
    pub fn run<D: AsRef<[u8]>>(
        &self,
        input: &Book<D>,
        progress: &(dyn Fn(GrowthEvent) + Sync),
    ) -> Result<GrowthSummary, GrowthError> {
        let start = Instant::now();
        let io = |path: &Path, source: std::io::Error| GrowthError::Io(IoError::new(path, source));
        let search = self.leaf_search(input)?;
        let pool = search.pool()?;
        let identity = self.identity(input, &search);
        let state_path = self.state_path();
        let open_output = || -> Result<Book<Bytes>, GrowthError> {
            Ok(Book::open(read_mapped(&self.output).map_err(|e| io(&self.output, e))?)?)
        };
        // Every round reads the book the last one wrote: the output, which starts as
        // the input (or as an interrupted run left it, when resuming).
        let mut book = if self.resume && state_path.exists() && self.output.exists() {
            let text = std::fs::read_to_string(&state_path).map_err(|e| io(&state_path, e))?;
            if let Some(field) = GrowthInput::first_difference(&text, &identity) {
                return Err(GrowthError::Resume { path: state_path.clone(), field });
            }
            let book = open_output()?;
            book.verify()?;
            book
        } else {
            if self.resume {
                progress(GrowthEvent::NothingToResume);
            }
            self.unchanged(input, &search, &self.output)?;
            open_output()?
        };
        // Deviation only adds positions: what the written book has beyond the input.
        let mut added = book.len().saturating_sub(input.len());
        let root_before = input.probe(&self.from).ok_or(GrowthError::NotInBook)?.value();
        let before = input.len();
        let mut rounds = 0u64;
        let mut searches = 0u64;
        // Leaves deepened by this run are not tried again (a time budget may leave one
        // below the target).
        let mut tried: BTreeSet<u64> = BTreeSet::new();
        let stop = loop {
            if self.config.time.is_some_and(|t| start.elapsed() >= t) {
                break StopReason::Time;
            }
            if self.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
                break StopReason::Interrupted;
            }
            let round = match self.round(&book, &search, &tried, added) {
                Next::Round(round) => round,
                Next::Stop(reason) => break reason,
            };
            rounds += 1;
            progress(GrowthEvent::Round { number: rounds, leaves: round.leaves, positions: book.len() });
            if self.config.growth == Growth::Deepen {
                tried.extend(round.jobs.iter().map(|j| j.0));
            }
            let stopped = || self.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
            let Some(leaves) = pool.install(|| search_round(&book, &round, &search, &stopped, progress))? else {
                // Stopped within the round: the book of the rounds before stands, and a
                // resumed run searches this round again.
                rounds -= 1;
                break StopReason::Interrupted;
            };
            pool.install(|| self.finish_round(&book, &search, &round, &leaves, &self.output))?;
            searches += leaves.len() as u64;
            added += round.leaves;
            atomic_write(&state_path, identity.as_bytes()).map_err(|e| io(&state_path, e))?;
            book = open_output()?;
            progress(GrowthEvent::Written {
                positions: book.len(),
                root_value: book.probe(&self.from).map_or(root_before, |h| h.value()),
            });
        };
        if stop == StopReason::Complete {
            // Nothing is left to resume.
            let _ = std::fs::remove_file(&state_path);
        } else {
            atomic_write(&state_path, identity.as_bytes()).map_err(|e| io(&state_path, e))?;
        }
        Ok(GrowthSummary {
            before,
            after: book.len(),
            root_before,
            root_after: book.probe(&self.from).map_or(root_before, |h| h.value()),
            rounds,
            searches,
            stop,
            elapsed: start.elapsed(),
            written: Written { positions: book.len() as u64, bytes: book.size_bytes() as u64 },
        })
    }

    /// The next round on `book`, or why there is none.
    fn round<D: AsRef<[u8]>>(&self, book: &Book<D>, search: &LeafSpec, tried: &BTreeSet<u64>, added: usize) -> Next {
        if self.config.max_positions.is_some_and(|m| added >= m) {
            return Next::Stop(StopReason::Positions);
        }
        let deepen = self.config.growth == Growth::Deepen;
        let mut chosen = self.candidates(book, deepen.then(|| Target::of(search)));
        chosen.retain(|c| !tried.contains(&c.parent));
        if chosen.is_empty() {
            return Next::Stop(StopReason::Complete);
        }
        let room = self.config.max_positions.map_or(usize::MAX, |m| m - added);
        chosen.truncate(self.config.round_size.min(room));
        let jobs = if deepen {
            let mut jobs: Vec<(u64, Board)> = chosen.iter().map(|c| (c.parent, c.board)).collect();
            jobs.sort_unstable_by_key(|j| j.0);
            jobs
        } else {
            expansion_jobs(book, &chosen)
        };
        Next::Round(Round { leaves: chosen.len(), jobs })
    }

    /// The header of the grown book: the input's, with the deviation's leaf settings
    /// where they are deeper.
    fn params(&self, input: BuildParams, search: &LeafSpec) -> BuildParams {
        let p = search.params(input.max_ply.into(), input.min_games);
        BuildParams {
            depth: input.depth.max(p.depth),
            exact_at: input.exact_at.max(p.exact_at),
            eval_digest: if input.eval_digest == p.eval_digest { p.eval_digest } else { 0 },
            selectivity_tenths: if input.selectivity_tenths == p.selectivity_tenths { p.selectivity_tenths } else { 0 },
            ..input
        }
    }

    /// The leaves to expand, in key order of (parent, child), each child once.
    fn candidates<D: AsRef<[u8]>>(&self, book: &Book<D>, target: Option<Target>) -> Vec<Candidate> {
        let from_board = self.from.canonical().0;
        let mut w = Walk { seen: HashMap::new(), found: BTreeSet::new(), target };
        for deviating_side_moves_first in [true, false] {
            w.seen.clear();
            self.walk(book, from_board, deviating_side_moves_first, 0, &mut w);
        }
        let found = w.found;
        if self.config.growth == Growth::Deepen {
            // Each leaf once, at its least loss; the most influential first.
            let mut best: HashMap<u64, Candidate> = HashMap::new();
            for c in found {
                best.entry(c.parent).and_modify(|b| *b = (*b).min_by_influence(c)).or_insert(c);
            }
            let mut list: Vec<Candidate> = best.into_values().collect();
            list.sort_by_key(|c| (c.loss, c.ply, c.parent));
            return list;
        }
        let mut children = BTreeSet::new();
        found.into_iter().filter(|c: &Candidate| children.insert(c.child)).collect()
    }

    /// The walk: at `board` (canonical, in the book), `deviating` says whether the side
    /// to move is the one allowed to deviate; `spent` is its loss so far.
    fn walk<D: AsRef<[u8]>>(&self, book: &Book<D>, board: Board, deviating: bool, spent: i32, w: &mut Walk) {
        let (seen, target) = (&mut w.seen, w.target);
        let key = board.key();
        // Visit a position again only with budget left over compared with before.
        match seen.get(&(key, deviating)) {
            Some(&s) if s <= spent => return,
            _ => {
                seen.insert((key, deviating), spent);
            }
        }
        let Some(record) = book.get(key) else { return };
        let value = |key: u64| book.get(key).map(|r| i32::from(r.value));
        if board.is_game_over() || 60 - board.empty_count() >= self.config.max_ply {
            return;
        }
        let view = |s: i32| if deviating && s == 0 { -self.config.contempt } else { s };
        // The best option, which is the value under negamax; a corrected back-up stores
        // less than it, and losses are counted from what the side can play.
        let leaf = record.leaf().map(|_| i32::from(record.leaf_score));
        let children = board.successors().filter_map(|(_, c)| value(c.canonical().0.key()).map(|v| -v));
        let best = view(children.chain(leaf).max().unwrap_or(i32::from(record.value)));
        let allowed = |score: i32| -> Option<i32> {
            let loss = (best - view(score)).max(0);
            let ok =
                if deviating { loss <= self.config.error && spent + loss <= self.config.budget } else { loss == 0 };
            ok.then_some(loss)
        };
        for (_, child) in board.successors() {
            let canon = child.canonical().0;
            let Some(v) = value(canon.key()) else { continue };
            if let Some(loss) = allowed(-v) {
                self.walk(book, canon, !deviating, if deviating { spent + loss } else { spent }, w);
            }
        }
        if let Some(mv) = record.leaf() {
            if self.config.growth == Growth::Deepen {
                if let Some(loss) = allowed(record.leaf_score as i32) {
                    if target.is_some_and(|t| below(&record, &board, t)) {
                        let ply = 60 - board.empty_count();
                        w.found.insert(Candidate { parent: key, child: 0, loss: spent + loss, ply, board });
                    }
                }
                return;
            }
            if allowed(record.leaf_score as i32).is_some() {
                let child = match mv {
                    Move::Pass => board.pass(),
                    Move::Place(sq) => match board.play(sq) {
                        Some(c) => c,
                        None => return,
                    },
                };
                let child_key = child.canonical().0.key();
                if book.get(child_key).is_none() {
                    w.found.insert(Candidate { parent: key, child: child_key, loss: 0, ply: 0, board });
                }
            }
        }
    }
}

/// A round of growth: the leaves it takes and the leaf searches they need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Round {
    /// Leaves taken (what `max_positions` counts).
    pub leaves: usize,
    /// The positions to search, in key order: for a deviation the new children and
    /// every book position whose leaf move leads into one; for a deepening the leaves.
    pub jobs: Vec<(u64, Board)>,
}

impl Round {
    /// Whether the round adds or searches `key` (the searches treat these positions as
    /// in the book, beside the book's own).
    pub(crate) fn contains(&self, key: u64) -> bool {
        self.jobs.binary_search_by_key(&key, |j| j.0).is_ok()
    }
}

/// What comes next in a growth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Another round.
    Round(Round),
    /// None: why.
    Stop(StopReason),
}

/// The searches of a deviation round: the new children's leaves and the next-best
/// leaves of every book position whose leaf move now leads into the book (the round's
/// parents, and any other position transposing into a new child, found by unmaking the
/// moves that lead to each new child: the book's boards are not held).
fn expansion_jobs<D: AsRef<[u8]>>(book: &Book<D>, chosen: &[Candidate]) -> Vec<(u64, Board)> {
    let leaf_child = |board: &Board, mv: Option<Move>| match mv {
        Some(Move::Place(sq)) => board.play(sq),
        Some(Move::Pass) => Some(board.pass()),
        None => None,
    };
    let mut jobs: BTreeMap<u64, Board> = BTreeMap::new();
    for c in chosen {
        let record = book.get(c.parent);
        if let Some(child) = record.and_then(|r| leaf_child(&c.board, r.leaf())) {
            jobs.insert(c.child, child.canonical().0);
        }
    }
    let new_children: BTreeMap<u64, Board> = jobs.clone();
    for child in new_children.values() {
        for (_, before) in child.predecessors() {
            let parent = before.canonical().0;
            let key = parent.key();
            let Some(record) = book.get(key) else { continue };
            let leads_in =
                leaf_child(&parent, record.leaf()).is_some_and(|c| new_children.contains_key(&c.canonical().0.key()));
            if leads_in {
                jobs.insert(key, parent);
            }
        }
    }
    jobs.into_iter().collect()
}

/// Searches a round's positions in parallel on the current pool (moves into the book
/// or into the round excluded).
/// The round's leaves, or `None` when `stopped` turned true before they were all
/// searched (checked between leaves, so a stop waits for at most one leaf search per
/// thread).
fn search_round<D: AsRef<[u8]> + Sync>(
    book: &Book<D>,
    round: &Round,
    search: &LeafSearch,
    stopped: &(dyn Fn() -> bool + Sync),
    progress: &(dyn Fn(GrowthEvent) + Sync),
) -> Result<Option<Vec<Leaf>>, BuildError> {
    let in_book = |key: u64| book.get(key).is_some() || round.contains(key);
    let total = u64::try_from(round.jobs.len()).unwrap_or(u64::MAX);
    let count = ParallelCount::new(total, 1, |done, total| progress(GrowthEvent::Searched { done, total }));
    let leaves = search.par_map(&round.jobs, |&(_, board), tt| {
        if stopped() {
            return None;
        }
        let leaf = score_leaf(&board, &in_book, search, tt);
        count.add(1);
        Some(leaf)
    })?;
    count.finish();
    Ok(leaves.into_iter().collect())
}

/// A streamed book's errors as a growth's.
impl From<StreamError> for GrowthError {
    fn from(e: StreamError) -> GrowthError {
        match e {
            StreamError::Book(e) => GrowthError::Book(e),
            StreamError::Io(e) => GrowthError::Io(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The searches of a deviation round found by unmaking moves into each new child
    /// are those a scan of every book position's leaf finds (the bundled book).
    #[test]
    fn expansion_jobs_equal_a_scan_of_every_leaf() {
        let book = crate::book::bundled().unwrap();
        let boards = crate::book::walk(&book);
        assert_eq!(boards.len(), book.len());
        // Every leaf leading out of the book, by the child it leads to.
        let mut into: BTreeMap<u64, (Board, BTreeSet<u64>)> = BTreeMap::new();
        for (&key, board) in &boards {
            let record = book.get(key).unwrap();
            let child = match record.leaf() {
                Some(Move::Place(sq)) => board.play(sq).unwrap(),
                Some(Move::Pass) => board.pass(),
                None => continue,
            };
            let child = child.canonical().0;
            if book.get(child.key()).is_none() {
                into.entry(child.key()).or_insert((child, BTreeSet::new())).1.insert(key);
            }
        }
        let shared = into.values().filter(|(_, parents)| parents.len() > 1).count();
        assert!(into.len() > 10_000 && shared > 100, "{} children, {shared} with several parents", into.len());
        let mut checked = 0;
        for (i, (&child, (_, parents))) in into.iter().enumerate() {
            if i % 7 != 0 && parents.len() == 1 {
                continue;
            }
            let first = *parents.iter().next().unwrap();
            let chosen = Candidate { parent: first, child, loss: 0, ply: 0, board: boards[&first] };
            let jobs = expansion_jobs(&book, &[chosen]);
            let mut expected: Vec<u64> = parents.iter().copied().chain([child]).collect();
            expected.sort_unstable();
            assert_eq!(jobs.iter().map(|j| j.0).collect::<Vec<_>>(), expected, "into {child:#x}");
            for (key, board) in jobs {
                assert_eq!(board.key(), key);
            }
            checked += 1;
        }
        assert!(checked > 2_000, "{checked}");
    }
}
