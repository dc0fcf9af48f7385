//! Long calls off the GIL that Ctrl-C can stop: the work runs on a scoped thread while
//! the calling thread waits for it and, every few tens of milliseconds, lets Python
//! look at its signals.

use std::sync::atomic::Ordering::Relaxed;

use std::sync::mpsc;
use std::time::Duration;
use thorbook::work::StopHandle;

use pyo3::prelude::*;

/// How often a waiting call lets Python handle signals: Ctrl-C's latency.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `work` with the GIL released. When a signal handler raises (Ctrl-C's
/// `KeyboardInterrupt`), `stop` is set, the work is waited for, and the exception is
/// returned beside its result: the caller decides whether a stopped result is worth
/// returning (a search's best move so far) or the exception is raised.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    stop: &StopHandle,
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
                        stop.stop();
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

/// Runs `work` on a thread of its own with the GIL released, for work that cannot be
/// told to stop (reading archives): Ctrl-C raises `KeyboardInterrupt` at once, and the
/// thread finishes on its own, its result dropped. `work` must have no effect beyond
/// its result.
pub(crate) fn abandonable<T: Send + 'static>(py: Python<'_>, work: impl FnOnce() -> T + Send + 'static) -> PyResult<T> {
    let (tx, rx) = mpsc::channel::<T>();
    std::thread::Builder::new()
        .name("thorbook-read".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
    let rx = std::sync::Mutex::new(rx);
    py.detach(|| loop {
        let received = rx.lock().unwrap_or_else(std::sync::PoisonError::into_inner).recv_timeout(SIGNAL_POLL);
        match received {
            Ok(out) => return Ok(out),
            Err(mpsc::RecvTimeoutError::Timeout) => Python::attach(|py| py.check_signals())?,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err("the reading thread failed"))
            }
        }
    })
}

/// The exception `signal` (Ctrl-C's `KeyboardInterrupt`, or a limit's `TimeoutError`)
/// carrying what was found before it as its `partial` attribute: a partial result on
/// request, never instead of the exception.
pub(crate) fn with_partial(py: Python<'_>, signal: PyErr, partial: &Bound<'_, PyAny>) -> PyErr {
    let _ = signal.value(py).setattr("partial", partial);
    signal
}

/// Reports progress to Python (any thread: it takes the GIL): a callback `f(done,
/// total)` or a `tqdm`-compatible object;
/// an exception it raises stops the work through `stop` and is kept for the caller.
pub(crate) struct Progress<'a> {
    callback: Option<Py<PyAny>>,
    stop: &'a StopHandle,
    error: std::sync::Mutex<Option<PyErr>>,
    /// What a `tqdm`-like object was last told.
    last: std::sync::atomic::AtomicU64,
}

impl<'a> Progress<'a> {
    pub(crate) fn new(callback: Option<Py<PyAny>>, stop: &'a StopHandle) -> Progress<'a> {
        Progress { callback, stop, error: std::sync::Mutex::new(None), last: std::sync::atomic::AtomicU64::new(0) }
    }

    /// Reports `done` of `total`: a callable is called with both; an object with an
    /// `update` method (a `tqdm` bar) gets its `total` set and the increment.
    pub(crate) fn report(&self, done: u64, total: u64) {
        let Some(cb) = &self.callback else { return };
        Python::attach(|py| {
            let cb = cb.bind(py);
            let called = if cb.is_callable() {
                cb.call1((done, total)).map(drop)
            } else {
                let last = self.last.fetch_max(done, Relaxed);
                cb.setattr("total", total)
                    .and_then(|()| cb.call_method1("update", (done.saturating_sub(last),)).map(drop))
            };
            if let Err(e) = called {
                self.stop.stop();
                self.error.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(e);
            }
        });
    }

    /// The exception the callback raised, if any.
    pub(crate) fn take_error(&self) -> Option<PyErr> {
        self.error.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }
}

/// Runs a long job off the GIL, `work` given the progress reporter of `progress`.
/// Ctrl-C, or an exception the progress callback raised, stops it through `stop` and
/// is the error; else the job's own result is returned for the caller to map.
pub(crate) fn job<T: Send>(
    py: Python<'_>,
    stop: &StopHandle,
    progress: Option<Py<PyAny>>,
    work: impl FnOnce(&Progress<'_>) -> T + Send,
) -> PyResult<T> {
    let report = Progress::new(progress, stop);
    let (out, signal) = interruptible(py, stop, || work(&report));
    match signal.or_else(|| report.take_error()) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
