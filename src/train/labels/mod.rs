//! The label store: every label training and measurement ever computed — exact solves
//! and searches by a given evaluation — kept in an append-only file keyed by the
//! canonical board, so nothing is computed twice and an interrupted labelling resumes
//! where it stopped.
//!
//! File layout (little-endian): the magic `TBKLABL2`, then chunks, each
//! `count: u32`, `count` records of 24 bytes, and the CRC-32 of the count and the
//! records. A record: player (u64) and opponent (u64) of the canonical board, the
//! score for the side to move (i8), the source (1 exact solve, 2 search), the search
//! depth and selectivity in tenths of σ (0: full width), and the digest of the
//! evaluation that searched (0 for a solve).
//!
//! Labelling appends a chunk and syncs it as each batch of positions finishes. A chunk
//! cut short at the end of the file (the process was killed while writing it) is
//! dropped on reading and overwritten by the next append; damage anywhere else is an
//! error naming the byte.
//!
//! The solves that need a cluster run as a job cut into shards, each with a store of
//! its own ([`shard`]); the stores merged are the one store.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

pub(crate) mod shard;

use super::{stage_count, Progress, ProgressFn, Stage};
use crate::board::Board;
use crate::eval::{AnyEval, IncrementalEvaluator, PatternEval};
use crate::fileio::{self, IoError, LockRefused, TryLockFault};
use crate::search::batch::{label_in_batches, solve_work};
use crate::search::{exact_score, Limits, Search, Selectivity, TranspositionTable};

/// File magic (the version is its last byte).
const MAGIC: &[u8; 8] = b"TBKLABL2";
/// Bytes per record.
pub(crate) const RECORD: usize = 24;
/// A solving worker's table.
const SOLVE_TABLE_MIB: usize = 16;
/// A searching worker's table.
const SEARCH_TABLE_MIB: usize = 2;

/// How a midgame search labels a position: depth and selectivity, with the
/// evaluation it searches with recorded by digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct SearchSpec {
    /// Midgame depth in plies (1..=60; a search reaching the end is exact).
    pub depth: u8,
    /// Multi-ProbCut selectivity (`None`: full width).
    pub selectivity: Option<Selectivity>,
    /// Digest of the evaluation searching ([`crate::eval::AnyEval::digest`]).
    pub eval: u32,
}

impl SearchSpec {
    fn selectivity_tenths(self) -> u8 {
        self.selectivity.map_or(0, Selectivity::tenths)
    }
}

/// A damaged label store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabelStoreError {
    /// The file could not be read or written.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The bytes are not a valid store.
    #[error("{file}: byte {offset}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// Byte offset of the fault.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// A worker's transposition table could not be allocated.
    #[error(transparent)]
    Table(#[from] crate::search::TableError),
    /// Two stores being merged label one position differently: exact solves and
    /// searches of one spec are deterministic, so one of the files is wrong.
    #[error(
        "{file}: position {player:016x} {opponent:016x} (player, opponent bitboards) is labelled {score:+} \
         there and {earlier:+} in {earlier_file} ({what})"
    )]
    Conflict {
        /// The file read last.
        file: String,
        /// The side to move's discs.
        player: u64,
        /// The other side's discs.
        opponent: u64,
        /// Its label in `file`.
        score: i8,
        /// The file that labelled it first.
        earlier_file: String,
        /// Its label there.
        earlier: i8,
        /// Which label: "exact" or the search's spec.
        what: String,
    },
}

/// Labels by canonical board: exact scores, and search scores per search setting.
#[derive(Debug, Default)]
pub struct LabelStore {
    exact: HashMap<Board, i8>,
    search: HashMap<(Board, SearchSpec), i8>,
    /// The file appended to, with the length of its valid part.
    file: Option<(PathBuf, u64)>,
    /// Bytes of a chunk cut short that reading dropped.
    dropped: u64,
    /// Set once the file system refused the file's lock: appends go on unlocked,
    /// guarded by re-reading whatever another process appended since.
    lock_refused: Option<LockRefused>,
}

impl LabelStore {
    /// A store in memory only.
    pub fn in_memory() -> LabelStore {
        LabelStore::default()
    }

    /// Opens (or creates) the store file at `path` and reads every label in it.
    pub fn open(path: &Path) -> Result<LabelStore, LabelStoreError> {
        let name = path.display().to_string();
        let io = |source| LabelStoreError::from(IoError::new(path, source));
        let mut store = LabelStore::default();
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io(e)),
        };
        let valid = if bytes.is_empty() { 0 } else { store.read(&name, &bytes)? };
        store.dropped = (bytes.len() - valid) as u64;
        if !bytes.is_empty() {
            // Asked now so that a file system that cannot lock is reported before the
            // work starts, not after; a lock busy with another appender is no fault.
            let f = OpenOptions::new().read(true).write(true).open(path).map_err(io)?;
            match fileio::try_lock(&f) {
                Ok(lock) => store.lock_refused = lock.refused(),
                Err(TryLockFault::Busy) => {}
                Err(TryLockFault::Io(e)) => return Err(io(e)),
            }
        }
        store.file = Some((path.to_path_buf(), valid as u64));
        Ok(store)
    }

    /// Reads `bytes` (a whole file) into the store; returns the length of the valid
    /// part.
    pub(crate) fn read(&mut self, file: &str, bytes: &[u8]) -> Result<usize, LabelStoreError> {
        if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err(LabelStoreError::Invalid {
                file: file.to_string(),
                offset: 0,
                message: "not a thorbook label store (magic TBKLABL2)".into(),
            });
        }
        self.read_chunks(file, bytes, MAGIC.len())
    }

    /// Reads the chunks of `bytes` from offset `at` on; returns where the valid part
    /// ends (a chunk cut short at the very end is not part of it).
    fn read_chunks(&mut self, file: &str, bytes: &[u8], mut at: usize) -> Result<usize, LabelStoreError> {
        let invalid = |offset: usize, message: &str| LabelStoreError::Invalid {
            file: file.to_string(),
            offset,
            message: message.to_string(),
        };
        while at < bytes.len() {
            let Some(count) = bytes.get(at..at + 4) else { break };
            let count = u32::from_le_bytes(count.try_into().expect("4 bytes")) as usize;
            let end = count.checked_mul(RECORD).and_then(|n| n.checked_add(at + 8));
            let Some(end) = end.filter(|&e| e <= bytes.len()) else { break };
            let stored = u32::from_le_bytes(bytes[end - 4..end].try_into().expect("4 bytes"));
            if crc32fast::hash(&bytes[at..end - 4]) != stored {
                if end == bytes.len() {
                    break;
                }
                return Err(invalid(at, "chunk checksum mismatch (damaged store: delete it to label again)"));
            }
            for (i, r) in bytes[at + 4..end - 4].chunks_exact(RECORD).enumerate() {
                let offset = at + 4 + i * RECORD;
                let player = u64::from_le_bytes(r[0..8].try_into().expect("8 bytes"));
                let opponent = u64::from_le_bytes(r[8..16].try_into().expect("8 bytes"));
                let board = Board::new(player, opponent).ok_or_else(|| invalid(offset, "overlapping discs"))?;
                let score = i8::from_le_bytes([r[16]]);
                if !(-64..=64).contains(&score) {
                    return Err(invalid(offset + 16, "score out of range (not from -64 to 64)"));
                }
                match r[17] {
                    1 => {
                        self.exact.insert(board, score);
                    }
                    2 => {
                        let selectivity = match r[19] {
                            0 => None,
                            t => Some(Selectivity::from_tenths(t).ok_or_else(|| invalid(offset + 19, "selectivity"))?),
                        };
                        let eval = u32::from_le_bytes(r[20..24].try_into().expect("4 bytes"));
                        self.search.insert((board, SearchSpec { depth: r[18], selectivity, eval }), score);
                    }
                    _ => return Err(invalid(offset + 17, "unknown label source")),
                }
            }
            at = end;
        }
        Ok(at)
    }

    /// Why the store's file is used unlocked, when its file system refused the lock.
    pub(crate) fn lock_refused(&self) -> Option<LockRefused> {
        self.lock_refused
    }

    /// Bytes at the end of the file that held a chunk cut short (dropped on reading).
    pub(crate) fn dropped_bytes(&self) -> u64 {
        self.dropped
    }

    /// Exact labels held.
    pub(crate) fn exact_len(&self) -> usize {
        self.exact.len()
    }

    /// Search labels held.
    pub(crate) fn search_len(&self) -> usize {
        self.search.len()
    }

    /// The exact score of a canonical board, if solved.
    pub fn exact(&self, board: &Board) -> Option<i8> {
        self.exact.get(board).copied()
    }

    /// Every search label: board, spec, score.
    #[cfg(test)]
    pub(crate) fn search_labels(&self) -> impl Iterator<Item = (Board, SearchSpec, i8)> + '_ {
        self.search.iter().map(|(&(board, spec), &score)| (board, spec, score))
    }

    /// The score of a canonical board by a search, if made.
    pub(crate) fn searched(&self, board: &Board, spec: SearchSpec) -> Option<i8> {
        self.search.get(&(*board, spec)).copied()
    }

    /// Appends labels to the file (if any) and to memory.
    fn append(&mut self, labels: &[(Board, i8, Option<SearchSpec>)]) -> Result<(), LabelStoreError> {
        if let Some((path, mut valid)) = self.file.clone() {
            let name = path.display().to_string();
            let io = |source| LabelStoreError::from(IoError::new(&path, source));
            let mut bytes = Vec::with_capacity(8 + labels.len() * RECORD);
            encode_chunk(labels, &mut bytes);
            let mut f =
                OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&path).map_err(io)?;
            // Several processes may share a store: one appends at a time, and chunks
            // another appended since this one last looked are read in first.
            let lock = fileio::lock(&f).map_err(io)?;
            self.lock_refused = self.lock_refused.or(lock.refused());
            let len = f.metadata().map_err(io)?.len();
            if valid == 0 && len == 0 {
                f.write_all(MAGIC).map_err(io)?;
                valid = MAGIC.len() as u64;
            } else if len != valid {
                let mut all = Vec::new();
                f.seek(SeekFrom::Start(0)).map_err(io)?;
                f.read_to_end(&mut all).map_err(io)?;
                let from = usize::try_from(valid).unwrap_or(usize::MAX);
                let end = if from == 0 { self.read(&name, &all)? } else { self.read_chunks(&name, &all, from)? };
                valid = end as u64;
            }
            // Overwrite a chunk cut short by a kill, if any.
            f.seek(SeekFrom::Start(valid)).map_err(io)?;
            f.write_all(&bytes).map_err(io)?;
            f.set_len(valid + bytes.len() as u64).map_err(io)?;
            f.sync_data().map_err(io)?;
            fileio::unlock(&f, lock).map_err(io)?;
            self.file = Some((path, valid + bytes.len() as u64));
        }
        for &(board, score, spec) in labels {
            match spec {
                None => self.exact.insert(board, score),
                Some(s) => self.search.insert((board, s), score),
            };
        }
        Ok(())
    }

    /// Solves exactly every canonical board of `boards` the store lacks (in parallel
    /// on the current rayon pool), appending as it goes. Boards are solved in the
    /// order given, each thread keeping its table from one to the next: give the
    /// positions of a game one after the other and each solve starts from what the
    /// previous one found (an exact score does not depend on the table). `order` only
    /// speeds the solves up. When `stop` is set, the solves under way are abandoned
    /// and every finished one is kept.
    pub(crate) fn solve_missing(
        &mut self,
        boards: &[Board],
        order: &PatternEval,
        stop: &AtomicBool,
        progress: ProgressFn,
    ) -> Result<usize, LabelStoreError> {
        let missing = distinct(boards.iter().filter(|b| !self.exact.contains_key(b)));
        self.label(&missing, Stage::Solve, SOLVE_TABLE_MIB, stop, progress, |tt, board| {
            exact_score(order, tt, stop, board).map(|score| (score, None))
        })
    }

    /// Labels by a search of `spec` with `eval` (whose digest `spec` names) every
    /// canonical board of `boards` the store lacks, appending as it goes. Each search
    /// starts from an empty table, so a label depends only on the board, the spec and
    /// the evaluation, never on which thread or in which order it was made.
    pub(crate) fn search_missing<E: IncrementalEvaluator>(
        &mut self,
        boards: &[Board],
        spec: SearchSpec,
        eval: &E,
        stop: &AtomicBool,
        progress: ProgressFn,
    ) -> Result<usize, LabelStoreError> {
        let missing = distinct(boards.iter().filter(|b| !self.search.contains_key(&(**b, spec))));
        let limits = Limits { depth: Some(u32::from(spec.depth)), selectivity: spec.selectivity, ..Limits::default() };
        self.label(&missing, Stage::Search, SEARCH_TABLE_MIB, stop, progress, |tt, board| {
            tt.clear();
            let result = Search::new(eval, tt, stop, 1).run(board, limits, false);
            // A search stopped before its last iteration is not the label asked for.
            let complete = result.exact || result.depth >= u32::from(spec.depth);
            (complete && !stop.load(Relaxed)).then(|| (result.score().unwrap_or(0), Some(spec)))
        })
    }

    /// Runs `label` over `boards` in batches of about equal work, in parallel, each
    /// thread with a table of its own; appends each finished batch, so a kill loses
    /// at most the batches under way. `label` returns `None` for a position it
    /// abandoned on `stop`.
    /// Each worker allocates a table of `table_mib`; one that cannot be had stops the
    /// labelling with the error (what was labelled is kept).
    #[allow(clippy::too_many_arguments)]
    fn label(
        &mut self,
        boards: &[Board],
        stage: Stage,
        table_mib: usize,
        stop: &AtomicBool,
        progress: ProgressFn,
        label: impl Fn(&mut TranspositionTable, &Board) -> Option<(i32, Option<SearchSpec>)> + Sync,
    ) -> Result<usize, LabelStoreError> {
        let total = boards.len() as u64;
        let count = stage_count(stage, total, 1, progress);
        let store = Mutex::new((&mut *self, None::<LabelStoreError>));
        progress(Progress { stage, done: 0, total });
        let work = |b: &Board| if stage == Stage::Solve { solve_work(b) } else { 1 };
        let labelled = label_in_batches(boards, work, table_mib, stop, label, |batch, labels| {
            let labels: Vec<(Board, i8, Option<SearchSpec>)> = boards[batch]
                .iter()
                .zip(labels)
                .map(|(b, (score, spec))| (*b, i8::try_from(score.clamp(-64, 64)).expect("a disc score"), spec))
                .collect();
            let mut guard = store.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if guard.1.is_none() {
                if let Err(e) = guard.0.append(&labels) {
                    guard.1 = Some(e);
                    stop.store(true, Relaxed);
                }
            }
            drop(guard);
            count.add(labels.len() as u64);
        });
        count.finish();
        let (_, error) = store.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        labelled?;
        match error {
            Some(e) => Err(e),
            None => Ok(usize::try_from(count.done()).unwrap_or(usize::MAX)),
        }
    }
}

/// The evaluation that orders the solver's moves for `eval`: itself when trained, else
/// the bundled weights (the classic evaluation orders worse and an exact score does not
/// depend on the order).
pub(crate) fn solve_order(eval: &AnyEval) -> PatternEval {
    match eval {
        AnyEval::Pattern(e) => e.clone(),
        AnyEval::Classic(_) => PatternEval::bundled(),
    }
}

/// Records per chunk of a store written whole ([`LabelStore::write_to`]).
const WRITE_CHUNK: usize = 1 << 16;

/// What a store holds, by number of empties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LabelCounts {
    /// Exact labels at each number of empties (index 0..=60).
    pub exact: [usize; 61],
    /// Search labels per spec, at each number of empties.
    pub search: Vec<(SearchSpec, [usize; 61])>,
}

impl LabelStore {
    /// Adds every label of `other` (read from `other_file`) to this store in memory
    /// (`self_file` names it in errors); a position both label differently is an
    /// error and leaves this store with the labels merged before it. Returns the
    /// labels that were new.
    pub(crate) fn merge(
        &mut self,
        self_file: &str,
        other: &LabelStore,
        other_file: &str,
    ) -> Result<usize, LabelStoreError> {
        let conflict = |board: &Board, score: i8, earlier: i8, what: String| LabelStoreError::Conflict {
            file: other_file.to_string(),
            player: board.player,
            opponent: board.opponent,
            score,
            earlier_file: self_file.to_string(),
            earlier,
            what,
        };
        let mut added = 0;
        let mut exact: Vec<_> = other.exact.iter().collect();
        exact.sort_unstable();
        for (board, &score) in exact {
            match self.exact.insert(*board, score) {
                Some(earlier) if earlier != score => {
                    self.exact.insert(*board, earlier);
                    return Err(conflict(board, score, earlier, "exact".into()));
                }
                Some(_) => {}
                None => added += 1,
            }
        }
        let mut search: Vec<_> = other.search.iter().collect();
        search.sort_unstable();
        for (&(board, spec), &score) in search {
            match self.search.insert((board, spec), score) {
                Some(earlier) if earlier != score => {
                    self.search.insert((board, spec), earlier);
                    return Err(conflict(&board, score, earlier, format!("{spec:?}")));
                }
                Some(_) => {}
                None => added += 1,
            }
        }
        Ok(added)
    }

    /// Writes every label to a new store file at `path`, atomically and durably:
    /// exact labels then search labels, each sorted, so that stores holding the same
    /// labels are the same bytes however they were made.
    pub(crate) fn write_to(&self, path: &Path) -> Result<(), LabelStoreError> {
        let mut exact: Vec<_> = self.exact.iter().map(|(&b, &s)| (b, s, None)).collect();
        exact.sort_unstable_by_key(|&(b, _, _)| b);
        let mut search: Vec<_> = self.search.iter().map(|(&(b, spec), &s)| (b, s, Some(spec))).collect();
        search.sort_unstable_by_key(|&(b, _, spec)| (b, spec));
        let mut bytes = Vec::with_capacity(MAGIC.len() + (exact.len() + search.len()) * RECORD + 1024);
        bytes.extend_from_slice(MAGIC);
        for chunk in exact.chunks(WRITE_CHUNK).chain(search.chunks(WRITE_CHUNK)) {
            encode_chunk(chunk, &mut bytes);
        }
        crate::fileio::atomic_write(path, &bytes).map_err(|e| IoError::new(path, e))?;
        Ok(())
    }

    /// What the store holds, by number of empties.
    pub(crate) fn counts(&self) -> LabelCounts {
        let mut exact = [0; 61];
        for board in self.exact.keys() {
            exact[board.empty_count() as usize] += 1;
        }
        let mut search: std::collections::BTreeMap<SearchSpec, [usize; 61]> = std::collections::BTreeMap::new();
        for (board, spec) in self.search.keys() {
            search.entry(*spec).or_insert([0; 61])[board.empty_count() as usize] += 1;
        }
        LabelCounts { exact, search: search.into_iter().collect() }
    }
}

/// Appends one chunk holding `labels` to `bytes`.
fn encode_chunk(labels: &[(Board, i8, Option<SearchSpec>)], bytes: &mut Vec<u8>) {
    let start = bytes.len();
    let count = u32::try_from(labels.len()).expect("chunks are small");
    bytes.extend_from_slice(&count.to_le_bytes());
    for &(board, score, spec) in labels {
        bytes.extend_from_slice(&board.player.to_le_bytes());
        bytes.extend_from_slice(&board.opponent.to_le_bytes());
        bytes.extend_from_slice(&score.to_le_bytes());
        match spec {
            None => bytes.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0]),
            Some(s) => {
                bytes.extend_from_slice(&[2, s.depth, s.selectivity_tenths()]);
                bytes.extend_from_slice(&s.eval.to_le_bytes());
            }
        }
    }
    let crc = crc32fast::hash(&bytes[start..]);
    bytes.extend_from_slice(&crc.to_le_bytes());
}

/// The boards once each, in the order of their first appearance (the solves of a
/// game's positions stay together and share a table).
fn distinct<'b>(boards: impl Iterator<Item = &'b Board>) -> Vec<Board> {
    let mut seen = std::collections::HashSet::new();
    boards.filter(|b| seen.insert(**b)).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::PatternEval;
    use crate::search::batch::BATCH_WORK;
    use crate::search::Solver;
    use crate::testutil::{random_position, Rng};

    fn boards(seed: u64, n: usize, empties: u32) -> Vec<Board> {
        let mut rng = Rng(seed);
        (0..n).map(|_| random_position(&mut rng, empties).canonical().0).collect()
    }

    #[test]
    fn a_table_that_cannot_be_had_stops_labelling_with_an_error() {
        let mut store = LabelStore::in_memory();
        let stop = AtomicBool::new(false);
        let got = store.label(&boards(4, 8, 10), Stage::Solve, 0, &stop, &|_| {}, |_, _| Some((0, None)));
        assert!(matches!(got, Err(LabelStoreError::Table(crate::search::TableError::Size { mib: 0 }))), "{got:?}");
        assert_eq!(store.exact_len(), 0);
    }

    #[test]
    fn labels_survive_a_reopen_and_are_not_computed_twice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.bin");
        let eval = PatternEval::bundled();
        let stop = AtomicBool::new(false);
        let endgames = boards(1, 300, 10);
        let midgames = boards(2, 40, 30);
        let spec = SearchSpec { depth: 3, selectivity: None, eval: eval.digest() };
        let mut store = LabelStore::open(&path).unwrap();
        assert_eq!(store.solve_missing(&endgames, &eval, &stop, &|_| {}).unwrap(), 300);
        assert_eq!(store.search_missing(&midgames, spec, &eval, &stop, &|_| {}).unwrap(), 40);
        let reopened = LabelStore::open(&path).unwrap();
        assert_eq!((reopened.exact_len(), reopened.search_len()), (300, 40));
        for b in &endgames {
            let tt = TranspositionTable::new(1);
            let exact = Solver::new(&tt, &stop, 1).solve(b, -64, 64).score;
            assert_eq!(reopened.exact(b).map(i32::from), Some(exact));
        }
        for b in &midgames {
            assert_eq!(reopened.searched(b, spec), store.searched(b, spec));
            assert!(reopened.searched(b, SearchSpec { depth: 4, ..spec }).is_none());
        }
        let mut reopened = reopened;
        assert_eq!(reopened.solve_missing(&endgames, &eval, &stop, &|_| {}).unwrap(), 0);
    }

    #[test]
    fn two_stores_on_one_file_append_in_turn_and_see_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.bin");
        let eval = PatternEval::bundled();
        let stop = AtomicBool::new(false);
        let (first, second) = (boards(5, 100, 9), boards(6, 100, 10));
        let mut a = LabelStore::open(&path).unwrap();
        let mut b = LabelStore::open(&path).unwrap();
        a.solve_missing(&first, &eval, &stop, &|_| {}).unwrap();
        // `b` opened before `a` wrote: it reads `a`'s chunks in before appending its own.
        assert_eq!(b.solve_missing(&second, &eval, &stop, &|_| {}).unwrap(), 100);
        assert_eq!(b.exact_len(), 200);
        let all = LabelStore::open(&path).unwrap();
        assert_eq!((all.exact_len(), all.dropped_bytes()), (200, 0));
        for p in first.iter().chain(&second) {
            assert!(all.exact(p).is_some());
        }
    }

    #[test]
    fn a_store_appends_unlocked_where_the_file_system_refuses_locks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.bin");
        let eval = PatternEval::bundled();
        let stop = AtomicBool::new(false);
        let (first, second) = (boards(11, 40, 9), boards(12, 40, 10));
        // Lustre without `-o flock` answers ENOSYS; NFS without a lock manager ENOLCK.
        std::fs::write(&path, b"").unwrap();
        for (errno, batch) in [(libc::ENOSYS, &first), (libc::ENOLCK, &second)] {
            crate::fileio::inject_lock_refusal(&path, Some(errno));
            let mut store = LabelStore::open(&path).unwrap();
            assert_eq!(store.solve_missing(batch, &eval, &stop, &|_| {}).unwrap(), 40);
            assert_eq!(store.lock_refused(), Some(LockRefused { os_error: Some(errno) }));
        }
        crate::fileio::inject_lock_refusal(&path, Some(libc::EIO));
        let failed = LabelStore::open(&path).unwrap_err();
        assert!(matches!(&failed, LabelStoreError::Io(e) if e.source.raw_os_error() == Some(libc::EIO)), "{failed:?}");
        crate::fileio::inject_lock_refusal(&path, None);
        let all = LabelStore::open(&path).unwrap();
        assert_eq!((all.exact_len(), all.dropped_bytes(), all.lock_refused()), (80, 0, None));
    }

    #[test]
    fn merged_stores_are_the_same_bytes_however_made_and_conflicts_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let eval = PatternEval::bundled();
        let stop = AtomicBool::new(false);
        let (endgames, midgames) = (boards(7, 120, 9), boards(8, 30, 32));
        let spec = SearchSpec { depth: 3, selectivity: None, eval: eval.digest() };
        // One store made in one go; two made from halves in the other order.
        let mut whole = LabelStore::in_memory();
        whole.solve_missing(&endgames, &eval, &stop, &|_| {}).unwrap();
        whole.search_missing(&midgames, spec, &eval, &stop, &|_| {}).unwrap();
        let (mut a, mut b) = (LabelStore::in_memory(), LabelStore::in_memory());
        a.solve_missing(&endgames[60..], &eval, &stop, &|_| {}).unwrap();
        b.solve_missing(&endgames[..70], &eval, &stop, &|_| {}).unwrap();
        b.search_missing(&midgames, spec, &eval, &stop, &|_| {}).unwrap();
        let mut merged = LabelStore::in_memory();
        assert_eq!(merged.merge("", &a, "a").unwrap(), 60);
        assert_eq!(merged.merge("a", &b, "b").unwrap(), 60 + 30, "the 10 shared solves are not new");
        let (p, q) = (dir.path().join("whole.tbl"), dir.path().join("merged.tbl"));
        whole.write_to(&p).unwrap();
        merged.write_to(&q).unwrap();
        assert!(std::fs::read(&p).unwrap() == std::fs::read(&q).unwrap(), "same labels, different bytes");
        let reread = LabelStore::open(&q).unwrap();
        assert_eq!(reread.counts(), whole.counts());
        for e in &endgames {
            assert_eq!(reread.exact(e), whole.exact(e));
        }
        for m in &midgames {
            assert_eq!(reread.searched(m, spec), whole.searched(m, spec));
        }
        // A store that disagrees is refused, naming the position and both files, and
        // nothing of it is half-kept for that position.
        let mut wrong = LabelStore::in_memory();
        let bad = endgames[65];
        let truth = whole.exact(&bad).unwrap();
        wrong.append(&[(bad, if truth == 64 { 62 } else { truth + 2 }, None)]).unwrap();
        let err = merged.merge("a, b", &wrong, "wrong.tbl").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("wrong.tbl: position ") && text.contains("in a, b (exact)"), "{text}");
        assert_eq!(merged.exact(&bad), Some(truth));
    }

    #[test]
    fn search_labels_do_not_depend_on_threads_or_order() {
        let eval = PatternEval::bundled();
        let stop = AtomicBool::new(false);
        let midgames = boards(3, 64, 34);
        let spec = SearchSpec { depth: 4, selectivity: Selectivity::from_sigmas(1.5), eval: eval.digest() };
        let mut a = LabelStore::in_memory();
        a.search_missing(&midgames, spec, &eval, &stop, &|_| {}).unwrap();
        let mut reversed = midgames.clone();
        reversed.reverse();
        let mut b = LabelStore::in_memory();
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| b.search_missing(&reversed, spec, &eval, &stop, &|_| {}))
            .unwrap();
        for m in &midgames {
            assert_eq!(a.searched(m, spec), b.searched(m, spec));
        }
    }

    #[test]
    fn a_chunk_cut_short_is_dropped_and_overwritten_and_damage_is_located() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.bin");
        let eval = PatternEval::bundled();
        let stop = AtomicBool::new(false);
        // On one thread, 4 batches' work of light solves: 4 chunks of a full batch.
        let chunk = usize::try_from(BATCH_WORK).unwrap();
        let endgames = boards(4, 4 * chunk, 8);
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let solve = |store: &mut LabelStore| one.install(|| store.solve_missing(&endgames, &eval, &stop, &|_| {}));
        solve(&mut LabelStore::open(&path).unwrap()).unwrap();
        let full = std::fs::read(&path).unwrap();
        let chunk_len = 8 + chunk * RECORD;
        assert_eq!(full.len(), MAGIC.len() + 4 * chunk_len);
        // Killed while writing the last chunk: the others survive.
        std::fs::write(&path, &full[..full.len() - 100]).unwrap();
        let mut store = LabelStore::open(&path).unwrap();
        assert_eq!(store.exact_len(), 3 * chunk);
        assert_eq!(store.dropped_bytes(), (chunk_len - 100) as u64);
        assert_eq!(solve(&mut store).unwrap(), chunk);
        // The cut bytes were overwritten, not left behind the new chunks.
        let reopened = LabelStore::open(&path).unwrap();
        assert_eq!((reopened.exact_len(), reopened.dropped_bytes()), (4 * chunk, 0));
        // A flipped bit in the first chunk is damage, located.
        let mut bad = std::fs::read(&path).unwrap();
        bad[MAGIC.len() + 30] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        let err = LabelStore::open(&path).unwrap_err().to_string();
        assert!(err.contains("byte 8: chunk checksum mismatch"), "{err}");
        std::fs::write(&path, b"something else").unwrap();
        assert!(LabelStore::open(&path).unwrap_err().to_string().contains("byte 0: not a thorbook label store"));
    }
}
