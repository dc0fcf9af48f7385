//! The label store as the commands open it: kept labels counted, a batch cut short
//! by an interrupted run and a file system that cannot lock each reported.

use std::path::{Path, PathBuf};

use crate::train::labels::LabelStore;

/// Warns that a store's last batch was cut short by an interrupted run (and so is not
/// read), saying what `then` happens to its labels.
pub(super) fn warn_cut_short(path: &std::path::Path, store: &LabelStore, then: &str) {
    if store.dropped_bytes() > 0 {
        eprintln!(
            "{}: {} bytes of a batch cut short at the end (an interrupted run) are not read{then}",
            path.display(),
            store.dropped_bytes()
        );
    }
}

/// Opens the label store (in memory without a file), saying what it holds.
pub(super) fn open_labels(path: Option<&PathBuf>) -> anyhow::Result<LabelStore> {
    let Some(path) = path else { return Ok(LabelStore::in_memory()) };
    let store = LabelStore::open(path)?;
    warn_cut_short(path, &store, "; they are labelled again");
    warn_lock_refused(path, &store);
    if store.exact_len() + store.search_len() > 0 {
        eprintln!(
            "{}: {} exact and {} search labels kept from earlier runs",
            path.display(),
            store.exact_len(),
            store.search_len()
        );
    }
    Ok(store)
}

/// Warns that the label store at `path` is used unlocked, when its file system
/// refused the lock: appends from several processes are then not serialised.
pub(super) fn warn_lock_refused(path: &Path, store: &LabelStore) {
    if let Some(refused) = store.lock_refused() {
        eprintln!(
            "warning: {}: {refused}: the store is appended to unlocked; give each process its own store \
             (--labels with {{index}}) and merge them with `labels merge`",
            path.display()
        );
    }
}
