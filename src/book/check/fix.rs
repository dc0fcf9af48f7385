//! Fixing a book (what Edax's `fix` and Egaroucid's book fix do): check the values of
//! the positions on the lines the book plays against a search at a given level, and
//! where a value is contradicted by more than a threshold, search again at that level
//! the leaves that decide it, then back the values up, round after round.
//!
//! **Which positions are checked.** Those an audit's walk finds ([`super::audit`]):
//! every book position reached from the start (or `from`) through book moves within
//! `error` discs of each position's best option, at plies `min_ply..=max_ply`, in
//! order of ply (the most influential first) then key, at most `max_positions` of them.
//! Each is searched once, without the book, at the fix's level.
//!
//! **What is searched again.** For every checked position whose value differs from its
//! check by more than `threshold` discs: its own leaf (the best move leaving the book:
//! a better move the book lacks shows there) and the leaf that decides its value (the
//! end of the book's best line below it: an overrated line shows there), wherever one
//! is below the fix's level. The values are then backed up and the positions checked
//! again against the new values: a position whose best line changed gets its new
//! deciding leaf searched in the next round. It stops when no contradicted position
//! has a leaf left to search, or at the budget. Under a time budget the checks stop at
//! half the time left, so that rounds run, and when the rounds end early the next pass
//! checks more positions.
//!
//! Every search is on one thread from a cleared table, and a round's searches see the
//! book as it was before the round, so the fixed book depends only on the book and the
//! settings (and, under a time limit, on how far the fix got). The book is written after every round and the checks are kept in a log
//! (`OUT.fix`), so an interrupted fix resumes with `resume` to the identical book.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::audit::{candidates, search_logged, AuditConfig, Candidate, Checks, ChecksKind};
use crate::board::Board;
use crate::book::build::leaflog::{LeafLog, LeafLogError};
use crate::book::build::stream::{StreamError, Written};
use crate::book::build::{score_leaf, BuildError, Leaf, LeafSearch, LeafSpec};
use crate::book::format::BookError;
use crate::book::tree::{below, write_changed, Target};
use crate::book::trust::deciding_leaf;
use crate::book::Book;
use crate::fileio::LockRefused;
use crate::fileio::{read_mapped, Bytes, IoError};
use crate::parallel_count::ParallelCount;
use crate::position::Position;
use crate::search::Settings;
use crate::setting::{check, OutOfRange, Setting};

/// What to fix, and how.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FixConfig {
    /// The search that checks values and searches leaves again (a level, usually).
    pub search: Settings,
    /// A value contradicted by more than this many discs is fixed.
    pub threshold: i32,
    /// The walk follows book moves within this many discs of a position's best option.
    pub error: i32,
    /// Plies (60 − empties) of the positions checked.
    pub min_ply: u32,
    /// ...
    pub max_ply: u32,
    /// Positions checked at most.
    pub max_positions: Option<usize>,
    /// Stop after this long: the checks stop at half of it, rounds start until the end
    /// (a round under way finishes).
    pub time: Option<Duration>,
    /// Where the walk starts.
    pub from: Position,
}

impl Default for FixConfig {
    /// Values contradicted by more than 2 discs, on lines within 2 discs of the best,
    /// plies 0..=30 from the start, no limit, the default search.
    fn default() -> FixConfig {
        FixConfig {
            search: Settings::default(),
            threshold: 2,
            error: 2,
            min_ply: 0,
            max_ply: 30,
            max_positions: None,
            time: None,
            from: Position::START,
        }
    }
}

impl FixConfig {
    /// A fix at `search` of the positions within 2 discs of the best lines at plies
    /// 0..=30, contradicted by more than 2 discs.
    #[cfg(test)]
    pub fn new(search: Settings) -> FixConfig {
        FixConfig { search, ..FixConfig::default() }
    }

    fn walk(&self) -> AuditConfig {
        AuditConfig {
            from: self.from,
            min_ply: self.min_ply,
            max_ply: self.max_ply,
            error: self.error,
            ..AuditConfig::new(self.search.clone())
        }
    }

    /// Checks the ranges; the error names the setting (the walk's are an audit's).
    pub(crate) fn validate(&self) -> Result<(), OutOfRange> {
        check(Setting::Threshold, self.threshold, 0..=64)?;
        if self.max_positions == Some(0) {
            return Err(OutOfRange::new(Setting::MaxPositions, 0, "at least 1"));
        }
        self.walk().validate()
    }
}

/// Why a fix failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FixError {
    /// A setting out of range.
    #[error(transparent)]
    Setting(#[from] OutOfRange),
    /// The walk's start is not in the book.
    #[error("the position to fix from is not in the book")]
    NotInBook,
    /// The search settings cannot be used.
    #[error(transparent)]
    Search(#[from] BuildError),
    /// The log of checks.
    #[error(transparent)]
    Log(#[from] LeafLogError),
    /// The state of an interrupted fix does not match.
    #[error("{}: {message}", path.display())]
    Resume {
        /// The state file.
        path: std::path::PathBuf,
        /// What differs.
        message: String,
    },
    /// Writing the book failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The records cannot form a book.
    #[error(transparent)]
    Book(#[from] BookError),
}

/// What a running fix reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FixEvent {
    /// The file system refused to lock the search log: the run goes on unlocked, and
    /// nothing stops a second run from appending to it (start none).
    LockRefused(LockRefused),
    /// Positions checked so far (of `total` left to check: those in a resumed fix's log
    /// are not checked again).
    Checked {
        /// Done.
        done: u64,
        /// To do.
        total: u64,
    },
    /// A round starts: `contradicted` positions, `leaves` to search.
    Round {
        /// Round number of this call (from 1).
        number: u64,
        /// Checked positions contradicted by more than the threshold.
        contradicted: usize,
        /// Leaves searched in this round.
        leaves: usize,
    },
    /// Searches done in the current round (of `total`).
    Searched {
        /// Done.
        done: u64,
        /// To do.
        total: u64,
    },
}

/// Why the fix stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum FixStop {
    /// No contradicted position has a leaf left below the fix's level.
    Complete,
    /// The time is up.
    Time,
}

/// A finished fix.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FixSummary {
    /// Positions checked.
    pub checked: usize,
    /// Of those, contradicted by more than the threshold before the fix (under a time
    /// limit, a position checked in a later pass is measured against the book as the
    /// earlier passes left it).
    pub contradicted_before: usize,
    /// ... and after.
    pub contradicted_after: usize,
    /// Mean absolute difference between checked values and their checks, before.
    pub mae_before: f64,
    /// ... and after.
    pub mae_after: f64,
    /// Rounds run by this call.
    pub rounds: u64,
    /// Leaves searched again by this call.
    pub searches: u64,
    /// Why it stopped.
    pub stop: FixStop,
    /// Wall time.
    pub elapsed: Duration,
    /// The book written.
    pub written: Written,
}

/// Fixes a book, writing `output` after every round (atomically, as a stream: the book
/// is never held in memory).
pub struct Fixer {
    config: FixConfig,
    output: PathBuf,
    resume: bool,
}

impl Fixer {
    /// A fix of the book into `output`.
    pub fn new(config: FixConfig, output: impl Into<PathBuf>) -> Fixer {
        Fixer { config, output: output.into(), resume: false }
    }

    /// Continue an interrupted run.
    pub fn resume(mut self, resume: bool) -> Fixer {
        self.resume = resume;
        self
    }

    /// The log of checks beside the output (also the run's state).
    pub fn log_path(&self) -> PathBuf {
        let mut s = self.output.as_os_str().to_owned();
        s.push(".fix");
        PathBuf::from(s)
    }

    /// The fix's search, the positions it checks (the shallowest first) and the identity
    /// of its log.
    fn chosen<D: AsRef<[u8]>>(&self, input: &Book<D>) -> Result<(LeafSearch, Vec<Candidate>, u64), FixError> {
        let c = &self.config;
        c.validate()?;
        let search = LeafSearch::new(&c.search, LeafSpec::recorded(&input.params()))?;
        let mut chosen = match candidates(input, &c.walk()) {
            Ok(found) => found,
            Err(_) => return Err(FixError::NotInBook),
        };
        chosen.sort_by_key(|k| (60 - k.position.board.empty_count(), k.key));
        chosen.truncate(c.max_positions.unwrap_or(usize::MAX));
        let identity = fix_identity(input, &chosen, c, &search);
        Ok((search, chosen, identity))
    }

    /// The fix's checks of `input`, for planning them in shards: assembled into
    /// [`Fixer::log_path`], a run with `resume` finds them there and goes on to its
    /// rounds.
    pub fn checks<D: AsRef<[u8]>>(&self, input: &Book<D>) -> Result<Checks, FixError> {
        let (search, chosen, identity) = self.chosen(input)?;
        let mut positions: Vec<(u64, Board)> = chosen.iter().map(Candidate::job).collect();
        positions.sort_unstable_by_key(|&(key, _)| key);
        let eval = self.config.search.eval.clone();
        Ok(Checks { kind: ChecksKind::Fix, positions, search, eval, identity, log: self.log_path() })
    }

    /// Runs the fix on the current rayon pool; `progress` is called from worker threads.
    pub fn run<D: AsRef<[u8]>>(
        &self,
        input: &Book<D>,
        progress: &(dyn Fn(FixEvent) + Sync),
    ) -> Result<FixSummary, FixError> {
        let start = Instant::now();
        let c = &self.config;
        let (search, chosen, identity) = self.chosen(input)?;
        let target = Target::of(&search);
        let log_path = self.log_path();
        // The log alone resumes the checks; the output resumes the rounds (it starts as
        // the input, so a fix stopped while checking resumes from an unchanged book).
        let resuming = self.resume && log_path.exists();
        let (log, mut checks) = LeafLog::open(&log_path, identity, search.selectivity_tenths(), resuming)?;
        if let Some(refused) = log.lock_refused() {
            progress(FixEvent::LockRefused(refused));
        }
        let io = |path: &Path, source: std::io::Error| FixError::Io(IoError::new(path, source));
        let open_output = || -> Result<Book<Bytes>, FixError> {
            Ok(Book::open(read_mapped(&self.output).map_err(|e| io(&self.output, e))?)?)
        };
        let params = input.params();
        // Every round reads the book the last one wrote: the output, which starts as
        // the input.
        let mut book = if resuming && self.output.exists() {
            let book = open_output()?;
            book.verify()?;
            if book.len() != input.len() {
                return Err(FixError::Resume {
                    path: self.output.clone(),
                    message: "not a fix of this book: start afresh instead of resuming".into(),
                });
            }
            book
        } else {
            write_changed(input, &[], params, &[], &self.output)?;
            open_output()?
        };
        let roots = [Board::START, c.from.board];
        let pool = search.pool()?;
        let over_time = || c.time.is_some_and(|t| start.elapsed() >= t);
        let mut tried: BTreeSet<u64> = BTreeSet::new();
        let mut checked: Vec<(u64, Board, i32)> = Vec::new();
        let (mut contradicted_before, mut differences_before) = (0usize, 0.0f64);
        let mut rounds = 0u64;
        let mut searches = 0u64;
        // Passes of checks then rounds. Under a time limit the checks of a pass stop at
        // half the time left (a fix that spent its budget checking would search nothing
        // again) and, when the rounds end early, the next pass checks more; without one
        // a single pass checks everything.
        let stop = loop {
            let todo: Vec<(u64, Board)> =
                chosen.iter().filter(|k| !checks.contains_key(&k.key)).map(Candidate::job).collect();
            let checks_until = c.time.map(|t| {
                let elapsed = start.elapsed();
                elapsed + t.saturating_sub(elapsed) / 2
            });
            let checks_over_time = || checks_until.is_some_and(|t| start.elapsed() >= t);
            let todo: Vec<&(u64, Board)> = todo.iter().collect();
            let found = search_logged(&pool, &todo, &search, Some(&log), &checks_over_time, &|done, total| {
                progress(FixEvent::Checked { done, total })
            })?;
            checks.extend(found);
            // The positions this pass adds, measured against the book as it stands.
            let known: HashSet<u64> = checked.iter().map(|&(k, _, _)| k).collect();
            let new: Vec<(u64, Board, i32)> = chosen
                .iter()
                .filter(|k| !known.contains(&k.key))
                .filter_map(|k| checks.get(&k.key).map(|l| (k.key, k.job().1, i32::from(l.score))))
                .collect();
            let added = new.len();
            let (found, mean) = contradictions(&book, &new, c.threshold);
            contradicted_before += found.len();
            differences_before += mean * new.len() as f64;
            checked.extend(new);
            let pass = loop {
                if over_time() {
                    break FixStop::Time;
                }
                let (contradicted, _) = contradictions(&book, &checked, c.threshold);
                let mut jobs: BTreeMap<u64, Board> = BTreeMap::new();
                for &(_, board, _) in &contradicted {
                    let (_, leaf_board) = deciding_leaf(|k| book.get(k), |_| {}, &board);
                    for b in [board, leaf_board] {
                        let k = b.key();
                        if !tried.contains(&k) && book.get(k).is_some_and(|r| below(&r, &b, target)) {
                            jobs.insert(k, b);
                        }
                    }
                }
                if jobs.is_empty() {
                    break FixStop::Complete;
                }
                rounds += 1;
                let jobs: Vec<(u64, Board)> = jobs.into_iter().collect();
                progress(FixEvent::Round { number: rounds, contradicted: contradicted.len(), leaves: jobs.len() });
                let count = ParallelCount::new(jobs.len() as u64, 1, |done, total| {
                    progress(FixEvent::Searched { done, total });
                });
                let leaves = pool.install(|| {
                    search.par_map(&jobs, |&(_, board), tt| {
                        let leaf = score_leaf(&board, &|k| book.get(k).is_some(), &search, tt);
                        count.add(1);
                        leaf
                    })
                })?;
                count.finish();
                tried.extend(jobs.iter().map(|&(key, _)| key));
                searches += leaves.len() as u64;
                let changes: Vec<(u64, Leaf)> = jobs.iter().map(|&(key, _)| key).zip(leaves).collect();
                pool.install(|| write_changed(&book, &changes, params, &roots, &self.output))?;
                book = open_output()?;
            };
            if checked.len() == chosen.len() || pass == FixStop::Time {
                break pass;
            }
            if added == 0 {
                // Too little time left for a check.
                break FixStop::Time;
            }
        };
        // Positions left unchecked leave the fix unfinished, whatever the rounds found.
        let stop = if checked.len() < chosen.len() { FixStop::Time } else { stop };
        let before = (contradicted_before, differences_before / checked.len().max(1) as f64);
        let after = contradictions(&book, &checked, c.threshold);
        if stop == FixStop::Complete {
            log.remove();
        }
        Ok(FixSummary {
            checked: checked.len(),
            contradicted_before: before.0,
            contradicted_after: after.0.len(),
            mae_before: before.1,
            mae_after: after.1,
            rounds,
            searches,
            stop,
            elapsed: start.elapsed(),
            written: Written { positions: book.len() as u64, bytes: book.size_bytes() as u64 },
        })
    }
}

/// The checked positions whose value differs from their check by more than
/// `threshold`, and the mean absolute difference over all checked.
fn contradictions<D: AsRef<[u8]>>(
    book: &Book<D>,
    checked: &[(u64, Board, i32)],
    threshold: i32,
) -> (Vec<(u64, Board, i32)>, f64) {
    let mut out = Vec::new();
    let mut sum = 0.0;
    for &(key, board, score) in checked {
        let Some(value) = book.get(key).map(|r| i32::from(r.value)) else { continue };
        sum += f64::from((value - score).abs());
        if (value - score).abs() > threshold {
            out.push((key, board, score));
        }
    }
    (out, sum / checked.len().max(1) as f64)
}

/// What names a fix run: the input book, the positions checked and the settings.
fn fix_identity<D: AsRef<[u8]>>(input: &Book<D>, chosen: &[Candidate], c: &FixConfig, search: &LeafSearch) -> u64 {
    // The audit's identity names the positions and the search (its time budget too).
    let text = format!(
        "fix 3 book {:016x} positions {:016x} threshold {}",
        input.identity(),
        super::audit::identity(chosen, search),
        c.threshold
    );
    crate::fileio::Digest::of(text.as_bytes())
}

/// A streamed book's errors as a fix's.
impl From<StreamError> for FixError {
    fn from(e: StreamError) -> FixError {
        match e {
            StreamError::Book(e) => FixError::Book(e),
            StreamError::Io(e) => FixError::Io(e),
        }
    }
}
