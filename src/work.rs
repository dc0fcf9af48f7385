//! Long work, one convention: one [`StopHandle`] taken by every interruptible pipeline
//! (book builds and growth, self-play, labelling, batch reviews, the explorer's
//! server, a search), so that a GUI's button, Ctrl-C in the command line and Python's
//! signal check stop each the same way; and progress reported through a callback of
//! type `&(dyn Fn(Event) + Sync)`, called from any worker thread, with [`Progress`] as
//! the event of a pipeline that has no richer one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A request to stop, shared by whoever asks and the work that watches it. The work
/// finishes what is under way (a search returns its best so far, a build its leaves
/// in hand), keeps what is done, and returns: a stopped pipeline resumes where it was.
/// Clones share one request.
#[derive(Clone, Debug, Default)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    /// A handle nobody has asked to stop yet.
    pub fn new() -> StopHandle {
        StopHandle::default()
    }

    /// Asks the work to stop (from any thread; a signal handler may call it).
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether a stop was asked for.
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Withdraws the request, so that the next work runs (an engine between
    /// searches).
    pub fn reset(&self) {
        self.0.store(false, Ordering::Relaxed);
    }

    /// The flag the work polls.
    pub(crate) fn flag(&self) -> &AtomicBool {
        &self.0
    }

    /// The shared flag, for work that keeps it (an engine, a server).
    pub(crate) fn shared(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }

    /// The handle of a flag the crate already shares.
    pub(crate) fn of(flag: Arc<AtomicBool>) -> StopHandle {
        StopHandle(flag)
    }
}

/// How far long work has come: `done` of `total` units (positions, games, plies),
/// `done` never beyond `total`. The event of a pipeline with nothing richer to say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Units finished.
    pub done: u64,
    /// Units in all.
    pub total: u64,
}

impl Progress {
    /// `done` of `total`.
    pub(crate) fn new(done: u64, total: u64) -> Progress {
        Progress { done, total }
    }
}

/// Which part of a run one process does: shard `index` (from 0) of `of` consecutive
/// shards, whose outputs concatenated in order are the whole run's. The default is the
/// whole run, one shard of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Shard {
    /// This shard, from 0.
    pub index: u64,
    /// How many shards the run is cut into (at least 1).
    pub of: u64,
}

impl Shard {
    /// Shard `index` of `of` (checked where a run takes it).
    pub fn new(index: u64, of: u64) -> Shard {
        Shard { index, of }
    }
}

impl Default for Shard {
    fn default() -> Shard {
        Shard { index: 0, of: 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_request() {
        let a = StopHandle::new();
        let b = a.clone();
        assert!(!b.is_stopped());
        a.stop();
        assert!(b.is_stopped() && b.flag().load(Ordering::Relaxed));
        b.reset();
        assert!(!a.is_stopped());
        assert!(Arc::ptr_eq(&a.shared(), &StopHandle::of(b.shared()).shared()));
    }
}
