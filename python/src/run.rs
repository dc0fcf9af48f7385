//! Long calls off the GIL that Ctrl-C can stop: the work runs on a scoped thread while
//! the calling thread waits for it and, every few tens of milliseconds, lets Python
//! look at its signals.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc;
use std::time::Duration;

use pyo3::prelude::*;

/// How often a waiting call lets Python handle signals: Ctrl-C's latency.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `work` with the GIL released. When a signal handler raises (Ctrl-C's
/// `KeyboardInterrupt`), `stop` is set, the work is waited for, and the exception is
/// returned beside its result: the caller decides whether a stopped result is worth
/// returning (a search's best move so far) or the exception is raised.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    stop: &AtomicBool,
    work: impl FnOnce() -> T + Send,
) -> (T, Option<PyErr>) {
    py.detach(|| {
        std::thread::scope(|scope| {
            let (done_tx, done_rx) = mpsc::channel::<()>();
            let worker = scope.spawn(move || {
                let out = work();
                let _ = done_tx.send(());
                out
            });
            let mut signal = None;
            while let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(SIGNAL_POLL) {
                if signal.is_none() {
                    if let Err(e) = Python::attach(|py| py.check_signals()) {
                        stop.store(true, Relaxed);
                        signal = Some(e);
                    }
                }
            }
            match worker.join() {
                Ok(out) => (out, signal),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    })
}

/// Calls a Python progress callback `f(done, total)` (any thread: it takes the GIL);
/// an exception it raises stops the work through `stop` and is kept for the caller.
pub(crate) struct Progress<'a> {
    callback: Option<Py<PyAny>>,
    stop: &'a AtomicBool,
    error: std::sync::Mutex<Option<PyErr>>,
}

impl<'a> Progress<'a> {
    pub(crate) fn new(callback: Option<Py<PyAny>>, stop: &'a AtomicBool) -> Progress<'a> {
        Progress { callback, stop, error: std::sync::Mutex::new(None) }
    }

    pub(crate) fn report(&self, done: u64, total: u64) {
        let Some(cb) = &self.callback else { return };
        Python::attach(|py| {
            if let Err(e) = cb.call1(py, (done, total)) {
                self.stop.store(true, Relaxed);
                self.error.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(e);
            }
        });
    }

    /// The exception the callback raised, if any.
    pub(crate) fn take_error(&self) -> Option<PyErr> {
        self.error.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }
}
