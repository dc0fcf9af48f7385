//! Many positions searched in parallel, a transposition table per worker: the one
//! home of that loop. [`map_with_tables`] for work that returns a result per item
//! (book leaves, self-play games, error measurement, calibration), and
//! [`label_in_batches`] for labelling that can stop midway, in batches of about equal
//! work (the label store and the Python datasets).

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

use rayon::prelude::*;

use super::{TableError, TranspositionTable};
use crate::board::Board;

/// The work a batch aims at, in units of one search or one solve of 12 empties or
/// fewer: a batch is the unit of progress, seconds of one thread's work (64 solves of
/// 18 empties, one of 24). Its size hardly matters to speed: 918 solves at 18 empties
/// through `label_exact` on 2 cores took 12.8–16.9 s in batches of 64 and 14.2–14.6 s
/// in batches of 4, run to run.
pub(crate) const BATCH_WORK: u64 = 4096;

/// The work of solving `board` exactly, in [`BATCH_WORK`]'s units: each empty square
/// beyond 12 doubles it (a solve of 24 empties or more is a batch of its own).
pub(crate) fn solve_work(board: &Board) -> u64 {
    1 << board.empty_count().saturating_sub(12).min(20)
}

/// `boards` cut into consecutive batches (their index ranges) of about [`BATCH_WORK`]
/// units of `work` each, smaller when there is little work: at least four batches a
/// thread of the current pool where the boards allow, so that a few hard positions do
/// not all fall to one thread.
fn batches(boards: &[Board], work: impl Fn(&Board) -> u64) -> Vec<Range<usize>> {
    let total: u64 = boards.iter().map(&work).sum();
    let per_thread = 4 * rayon::current_num_threads() as u64;
    let target = (total / per_thread).clamp(1, BATCH_WORK);
    let mut out = Vec::new();
    let (mut start, mut sum) = (0, 0u64);
    for (i, board) in boards.iter().enumerate() {
        sum += work(board);
        if sum >= target {
            out.push(start..i + 1);
            (start, sum) = (i + 1, 0);
        }
    }
    if start < boards.len() {
        out.push(start..boards.len());
    }
    out
}

/// A worker's table, made the first time the worker needs one (a loop whose items
/// need no search, as a static measurement, makes none). A table that cannot be had
/// is the error of every item that asks for it.
pub(crate) struct WorkerTable {
    mib: usize,
    made: Option<Result<TranspositionTable, TableError>>,
}

impl WorkerTable {
    /// The worker's table of the loop's size.
    pub(crate) fn get(&mut self) -> Result<&mut TranspositionTable, TableError> {
        let mib = self.mib;
        self.made.get_or_insert_with(|| TranspositionTable::try_new(mib)).as_mut().map_err(|e| e.clone())
    }
}

/// `work(table, item)` for every item, in parallel on the current rayon pool, each
/// worker with a table of `table_mib` MiB of its own (kept from item to item, so that
/// `work` clears it where a search must not depend on the one before); the results in
/// the items' order, or the first error.
pub(crate) fn map_with_tables<I, R, E>(
    items: I,
    table_mib: usize,
    work: impl Fn(&mut WorkerTable, I::Item) -> Result<R, E> + Sync + Send,
) -> Result<Vec<R>, E>
where
    I: IntoParallelIterator,
    R: Send,
    E: Send,
{
    items.into_par_iter().map_init(|| WorkerTable { mib: table_mib, made: None }, work).collect()
}

/// The tables of parallel workers, one each, made lazily by rayon's `*_init`: the first
/// that cannot be had sets `stop`, so that every worker ends, and is the error.
pub(crate) struct WorkerTables<'s> {
    stop: &'s AtomicBool,
    failure: Mutex<Option<TableError>>,
}

impl<'s> WorkerTables<'s> {
    pub(crate) fn new(stop: &'s AtomicBool) -> WorkerTables<'s> {
        WorkerTables { stop, failure: Mutex::new(None) }
    }

    /// A worker's table as `made`, or `None` after recording why there is none.
    pub(crate) fn table<'t>(
        &self,
        made: &'t mut Result<TranspositionTable, TableError>,
    ) -> Option<&'t mut TranspositionTable> {
        match made {
            Ok(tt) => Some(tt),
            Err(e) => {
                self.failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(e.clone());
                self.stop.store(true, Relaxed);
                None
            }
        }
    }

    /// The first table that could not be had, if any.
    pub(crate) fn finish(self) -> Result<(), TableError> {
        match self.failure.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Labels `boards` in [`batches`] of their `work`, on the current rayon pool, each
/// worker with a table of `table_mib` MiB: `label(table, board)` for the boards of a
/// batch in order (`None`: stopped), then `done(batch, labels)` with the labels of the
/// batch's first boards (all of them unless it stopped midway). No batch starts once
/// `stop` is set; a table that cannot be had sets it and is the error.
pub(crate) fn label_in_batches<R: Send>(
    boards: &[Board],
    work: impl Fn(&Board) -> u64,
    table_mib: usize,
    stop: &AtomicBool,
    label: impl Fn(&mut TranspositionTable, &Board) -> Option<R> + Sync,
    done: impl Fn(Range<usize>, Vec<R>) + Sync,
) -> Result<(), TableError> {
    let tables = WorkerTables::new(stop);
    batches(boards, work).into_par_iter().for_each_init(
        || TranspositionTable::try_new(table_mib),
        |made, batch| {
            if stop.load(Relaxed) {
                return;
            }
            let Some(tt) = tables.table(made) else { return };
            let labels: Vec<R> = boards[batch.clone()].iter().map_while(|b| label(tt, b)).collect();
            if !labels.is_empty() {
                done(batch, labels);
            }
        },
    );
    tables.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{random_position, Rng};

    fn boards(empties: &[u32]) -> Vec<Board> {
        let mut rng = Rng(12);
        empties.iter().map(|&e| random_position(&mut rng, e)).collect()
    }

    #[test]
    fn batches_cover_the_boards_in_order_and_weigh_their_work() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        // Many light boards: batches of BATCH_WORK; a few heavy ones: one a batch;
        // a few light ones: at least four batches a thread where there are boards.
        let light = vec![boards(&[10])[0]; 40_000];
        let heavy = boards(&[24, 24, 24, 10, 10, 24]);
        let few = boards(&[10; 20]);
        let mixed = boards(&[10, 10, 16, 10, 18, 10, 10, 10, 22, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10]);
        for set in [&light, &heavy, &few, &mixed] {
            let cut = pool.install(|| batches(set, solve_work));
            let joined: Vec<usize> = cut.iter().flat_map(Clone::clone).collect();
            assert_eq!(joined, (0..set.len()).collect::<Vec<_>>(), "every board once, in order");
            assert!(cut.iter().all(|b| !b.is_empty()));
        }
        let cut = |set: &[Board]| pool.install(|| batches(set, solve_work));
        assert!(cut(&light).iter().all(|b| b.len() <= BATCH_WORK as usize));
        assert_eq!(cut(&light).len(), 40_000usize.div_ceil(BATCH_WORK as usize));
        assert_eq!(cut(&heavy), vec![0..1, 1..2, 2..3, 3..6], "a heavy board ends a batch");
        assert_eq!(cut(&few).len(), 10, "20 boards on 2 threads: batches of 20 / 8 = 2");
        // Each batch ends on the board that brings it to the target, and only the last
        // may fall short of it.
        let total: u64 = mixed.iter().map(solve_work).sum();
        let target = (total / 8).clamp(1, BATCH_WORK);
        let work = |r: Range<usize>| r.map(|i| solve_work(&mixed[i])).sum::<u64>();
        let mixed_cut = cut(&mixed);
        for (k, b) in mixed_cut.iter().enumerate() {
            assert!(work(b.start..b.end - 1) < target, "{b:?}");
            assert!(work(b.clone()) >= target || k == mixed_cut.len() - 1, "{b:?}");
        }
        assert!(mixed.iter().zip(&[10, 10, 16, 10, 18, 10, 10, 10, 22]).all(|(b, &e)| b.empty_count() == e));
        // Searches weigh one each.
        assert_eq!(pool.install(|| batches(&heavy, |_| 1)).len(), 6);
    }

    #[test]
    fn labels_reach_done_once_each_and_a_stop_or_a_missing_table_ends_the_work() {
        let set = boards(&[10; 500]);
        let stop = AtomicBool::new(false);
        let seen = Mutex::new(vec![0u32; set.len()]);
        label_in_batches(
            &set,
            |_| 1,
            1,
            &stop,
            |_, b| Some(b.empty_count()),
            |batch, labels| {
                assert_eq!(batch.len(), labels.len());
                let mut seen = seen.lock().unwrap();
                for (i, l) in batch.zip(labels) {
                    assert_eq!(l, 10);
                    seen[i] += 1;
                }
            },
        )
        .unwrap();
        assert!(seen.into_inner().unwrap().iter().all(|&n| n == 1));
        // A label that stops midway: the batch's labels so far reach `done`, and no
        // later batch starts.
        let calls = Mutex::new(Vec::new());
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let labelled = std::sync::atomic::AtomicUsize::new(0);
        one.install(|| {
            label_in_batches(
                &set,
                |_| 1,
                1,
                &stop,
                |_, _| {
                    if labelled.fetch_add(1, Relaxed) == 3 {
                        stop.store(true, Relaxed);
                        return None;
                    }
                    Some(())
                },
                |batch, labels| calls.lock().unwrap().push((batch, labels.len())),
            )
        })
        .unwrap();
        let first = one.install(|| batches(&set, |_| 1))[0].clone();
        assert_eq!(calls.into_inner().unwrap(), vec![(first, 3)]);
        // A table that cannot be had is the error, and stops the work.
        stop.store(false, Relaxed);
        let err =
            label_in_batches(&set, |_| 1, usize::MAX, &stop, |_, _| Some(()), |_, _| panic!("no table, no label"));
        assert!(err.is_err() && stop.load(Relaxed));
    }
}
