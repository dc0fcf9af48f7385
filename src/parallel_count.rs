//! A count of work shared by parallel workers and reported to a progress callback:
//! the one way the library's parallel loops count what they finished.
//!
//! Workers report as they go, so one worker's report can be overtaken by another's;
//! were the end reported by a worker, an earlier count could arrive after it and look
//! like a new stage to a progress meter (the CLI's) or a step back (a notebook's bar).
//! Here workers report only counts below the end, and the end comes once, from
//! [`ParallelCount::finish`], after the workers joined.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// `done` of `total` units, reported through `report(done, total)` each time the count
/// passes a multiple of `every`, and at its end by [`ParallelCount::finish`].
pub(crate) struct ParallelCount<F: Fn(u64, u64) + Sync> {
    total: u64,
    every: u64,
    done: AtomicU64,
    report: F,
}

impl<F: Fn(u64, u64) + Sync> ParallelCount<F> {
    pub(crate) fn new(total: u64, every: u64, report: F) -> Self {
        ParallelCount { total, every: every.max(1), done: AtomicU64::new(0), report }
    }

    /// Counts `n` more units (from any worker); reports below the end only.
    pub(crate) fn add(&self, n: u64) {
        let done = self.done.fetch_add(n, Relaxed) + n;
        if done < self.total && done / self.every != (done - n) / self.every {
            (self.report)(done, self.total);
        }
    }

    /// The units counted so far.
    pub(crate) fn done(&self) -> u64 {
        self.done.load(Relaxed)
    }

    /// Reports the count as it ends (the whole total unless stopped), after every worker.
    pub(crate) fn finish(&self) {
        if self.total > 0 {
            (self.report)(self.done(), self.total);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use rayon::prelude::*;

    use super::*;

    /// Counts `total` units in parallel, `per_add` at a time, and returns the reports in
    /// the order they arrived.
    fn reports(total: u64, every: u64, per_add: u64) -> Vec<u64> {
        let seen = Mutex::new(Vec::new());
        let count = ParallelCount::new(total, every, |done, _| seen.lock().unwrap().push(done));
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        pool.install(|| (0..total / per_add).into_par_iter().for_each(|_| count.add(per_add)));
        count.finish();
        seen.into_inner().unwrap()
    }

    #[test]
    fn the_end_is_reported_once_and_last_whatever_the_workers_order() {
        for _ in 0..20 {
            let got = reports(10_000, 64, 1);
            // Every multiple of 64 below the end once, then the end.
            assert_eq!(got.len(), 10_000 / 64 + 1);
            assert_eq!(got.last(), Some(&10_000));
            assert!(got[..got.len() - 1].iter().all(|&d| d < 10_000 && d % 64 == 0), "{got:?}");
        }
    }

    #[test]
    fn an_add_of_many_units_reports_once_when_it_passes_a_multiple() {
        // Adds of 50 reach 50, 100, ..., 950 below the end; of those, 100 passes 64,
        // 150 passes 128, 200 passes 192, ...: 14 of them cross a multiple of 64.
        let mut got = reports(1_000, 64, 50);
        got.sort_unstable();
        assert_eq!(got, [100, 150, 200, 300, 350, 400, 450, 550, 600, 650, 750, 800, 850, 900, 1_000]);
    }
}
