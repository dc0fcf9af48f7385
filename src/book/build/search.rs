//! The leaf searches of a build, an audit or a fix as one loop: in parallel, each
//! finished leaf appended to a log (the checkpoint, the audit's or fix's log) as it
//! completes, so that a stopped run resumes without searching it again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

use super::error::BuildError;
use super::leaf::{Leaf, LeafSearch};
use super::leaflog::LeafFile;
use crate::fileio::IoError;
use crate::parallel_count::ParallelCount;

/// The leaves of a build's `nodes` (sorted by key), scored by the logged search loop
/// ([`super::leaflog::search_logged`]): each position's moves into the other nodes
/// stay in the book.
#[cfg(test)]
pub(crate) fn score_nodes(
    nodes: &[super::Node],
    search: &LeafSearch,
    done: &std::collections::HashMap<u64, Leaf>,
    log: Option<&super::leaflog::LeafFile>,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Vec<Leaf>, BuildError> {
    let in_book = |k: u64| nodes.binary_search_by_key(&k, |n| n.key).is_ok();
    let score = |node: &super::Node, tt: &mut crate::search::TranspositionTable| {
        super::leaf::score_leaf(&node.board, &in_book, search, tt)
    };
    let key_of = |n: &super::Node| n.key;
    let leaves = search_logged(nodes, &key_of, search, done, log, &|| false, &score, progress)?;
    // Nothing stops the loop, so every node has its leaf.
    Ok(leaves.into_iter().map(|(_, leaf)| leaf).collect())
}

/// The one logged search loop (builds, shards, audits and fixes): `score(job, table)`
/// for every job whose key `done` does not hold, in parallel on the current rayon
/// pool, each worker with a table of its own; each new result is appended to `log`
/// before it counts, so an interrupted run resumes from the log. `stop` ends the
/// work early (the searches under way finish and are kept); `progress` gets (done,
/// total) over the jobs left to search. The first failed write stops the work with
/// its error: nothing searched after it could be kept. Returns the results of `done`
/// for the jobs it holds, then the new ones, each as (key, leaf), in job order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search_logged<T: Sync>(
    jobs: &[T],
    key_of: &(dyn Fn(&T) -> u64 + Sync),
    search: &LeafSearch,
    done: &HashMap<u64, Leaf>,
    log: Option<&LeafFile>,
    stop: &(dyn Fn() -> bool + Sync),
    score: &(dyn Fn(&T, &mut crate::search::TranspositionTable) -> Leaf + Sync),
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Vec<(u64, Leaf)>, BuildError> {
    let total = jobs.iter().filter(|j| !done.contains_key(&key_of(j))).count() as u64;
    let count = ParallelCount::new(total, 1, progress);
    let failed = AtomicBool::new(false);
    let write_error = Mutex::new(None);
    let results = search.par_map(jobs, |job, tt| {
        let key = key_of(job);
        if let Some(&leaf) = done.get(&key) {
            return Some((key, leaf));
        }
        if failed.load(Relaxed) || stop() {
            return None;
        }
        let leaf = score(job, tt);
        if let Some(Err(e)) = log.map(|log| log.append(key, &leaf)) {
            failed.store(true, Relaxed);
            write_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
            return None;
        }
        count.add(1);
        Some((key, leaf))
    })?;
    count.finish();
    if let (Some(e), Some(log)) = (write_error.into_inner().unwrap_or_else(|p| p.into_inner()), log) {
        return Err(BuildError::Io(IoError::new(log.path(), e)));
    }
    Ok(results.into_iter().flatten().collect())
}
