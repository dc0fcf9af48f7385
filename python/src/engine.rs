//! `Engine`: the book, then a search — best moves, analyses, exact solves and the
//! static evaluation, the GIL released and Ctrl-C returning what was found.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use thorbook::book::BookSource;
use thorbook::engine::{Engine as RsEngine, EngineConfig, MoveSource};
use thorbook::eval::{AnyEval, Evaluator, PatternEval};
use thorbook::search::{Level, Limits, SearchResult, Settings};

use crate::book::Book;
use crate::errors;
use crate::position::{move_name, Position};
use crate::run::interruptible;

/// The engine: the book first, then iterative deepening with the trained evaluation
/// and the exact solver. ``Engine(level=10, book="bundled")``; ``book`` is a ``Book``,
/// a path, ``"bundled"`` (the default, as the command line) or ``None``. ``time`` (seconds), ``nodes`` and ``depth`` bound
/// each search unless a call gives its own. Searches release the GIL; Ctrl-C stops
/// one and the call returns the best move found so far.
#[pyclass(module = "thorbook")]
pub(crate) struct Engine {
    inner: RsEngine<AnyEval>,
    stop: Arc<AtomicBool>,
    eval: PatternEval,
}

fn result_dict<'py>(py: Python<'py>, r: &SearchResult, interrupted: bool) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("move", r.best_move().map(move_name))?;
    d.set_item("score", r.score())?;
    d.set_item("depth", r.depth)?;
    d.set_item("exact", r.exact)?;
    d.set_item("nodes", r.nodes)?;
    d.set_item("seconds", r.elapsed.as_secs_f64())?;
    d.set_item("pv", r.pv.iter().copied().map(move_name).collect::<Vec<_>>())?;
    d.set_item("interrupted", interrupted)?;
    Ok(d)
}

/// Seconds given from Python as a duration (`SettingError` when negative or not finite).
pub(crate) fn seconds(s: Option<f64>) -> PyResult<Option<Duration>> {
    s.map(|s| Duration::try_from_secs_f64(s).map_err(|_| errors::setting(format!("time {s}: seconds, at least 0"))))
        .transpose()
}

impl Engine {
    /// The limits of a search of `pos`: the engine's, with the call's bounds over them.
    fn limits(
        &self,
        pos: &thorbook::Position,
        time: Option<f64>,
        nodes: Option<u64>,
        depth: Option<u32>,
    ) -> PyResult<Limits> {
        let mut limits = self.inner.strength().limits(pos.board.empty_count(), seconds(time)?);
        if nodes.is_some() {
            limits.nodes = nodes;
        }
        if let Some(d) = depth {
            if d == 0 {
                return Err(errors::setting("depth 0: at least 1"));
            }
            limits.depth = Some(d);
            limits.exact = limits.exact && d >= pos.board.empty_count();
        }
        Ok(limits)
    }
}

/// The book an engine consults: a `Book`, or a path (`"bundled"`: the bundled one).
#[derive(FromPyObject)]
enum BookArg<'py> {
    Book(Bound<'py, Book>),
    Path(std::path::PathBuf),
}

#[pymethods]
impl Engine {
    #[new]
    #[pyo3(signature = (level = 10, *, book = Some(BookArg::Path("bundled".into())), threads = 1, hash_mib = 64, time = None, nodes = None, depth = None, seed = 0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        level: u8,
        book: Option<BookArg<'_>>,
        threads: usize,
        hash_mib: usize,
        time: Option<f64>,
        nodes: Option<u64>,
        depth: Option<u32>,
        seed: u64,
    ) -> PyResult<Engine> {
        let level = Level::new(level).map_err(errors::setting)?;
        let mut search = Settings::at_level(level).with_threads(threads).with_hash_mib(hash_mib);
        if let Some(t) = seconds(time)? {
            search = search.with_time(t);
        }
        if let Some(n) = nodes {
            search = search.with_nodes(n);
        }
        if let Some(d) = depth {
            search = search.with_depth(d);
        }
        let mut config = EngineConfig::default();
        config.search = search;
        config.seed = seed;
        config.book = match book {
            None => BookSource::None,
            Some(BookArg::Book(b)) => b.get().source.clone(),
            Some(BookArg::Path(p)) if p.as_os_str() == "bundled" => BookSource::Bundled,
            Some(BookArg::Path(p)) => BookSource::File(p),
        };
        let name = config.book.to_string();
        let inner = RsEngine::new(config).map_err(|e| match e {
            thorbook::engine::EngineError::Book(open) => errors::open(&name, &open),
            other => errors::setting(other),
        })?;
        let stop = inner.stop_handle();
        Ok(Engine { inner, stop, eval: PatternEval::bundled() })
    }

    /// The engine's move in ``position``: from the book when it has one worth playing,
    /// else searched. A dict: move, score (discs for the side to move), depth, exact,
    /// nodes, seconds, pv, source (``"book"``, ``"search"``, ``"forced"``).
    fn best_move<'py>(&mut self, py: Python<'py>, position: &Position) -> PyResult<Bound<'py, PyDict>> {
        let pos = position.inner;
        if pos.board.is_game_over() {
            return Err(errors::setting("the game is over: there is no move"));
        }
        self.stop.store(false, Relaxed);
        let inner = &mut self.inner;
        let (chosen, signal) = interruptible(py, &self.stop, || inner.choose(&pos));
        let m = chosen.map_err(errors::setting)?;
        let d = PyDict::new(py);
        d.set_item("move", move_name(m.mv))?;
        d.set_item("score", m.score)?;
        d.set_item("depth", m.depth)?;
        d.set_item("exact", m.exact)?;
        d.set_item("nodes", m.nodes)?;
        d.set_item("seconds", m.time.as_secs_f64())?;
        d.set_item("pv", m.pv.iter().copied().map(move_name).collect::<Vec<_>>())?;
        let source = match m.source {
            MoveSource::Book => "book",
            MoveSource::Search => "search",
            MoveSource::Forced => "forced",
        };
        d.set_item("source", source)?;
        d.set_item("interrupted", signal.is_some())?;
        Ok(d)
    }

    /// A search of ``position`` (no book) under the engine's limits or the ones given:
    /// ``time`` in seconds, ``nodes``, ``depth``. A dict: move, score, depth, exact,
    /// nodes, seconds, pv, interrupted.
    #[pyo3(signature = (position, *, time = None, nodes = None, depth = None))]
    fn search<'py>(
        &mut self,
        py: Python<'py>,
        position: &Position,
        time: Option<f64>,
        nodes: Option<u64>,
        depth: Option<u32>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let pos = position.inner;
        let limits = self.limits(&pos, time, nodes, depth)?;
        self.stop.store(false, Relaxed);
        let inner = &mut self.inner;
        let (r, signal) = interruptible(py, &self.stop, || inner.search(&pos, limits, false));
        result_dict(py, &r, signal.is_some())
    }

    /// Every legal move of ``position`` with a full-window score (discs for the side
    /// to move), best first: a list of ``(move, score)``.
    #[pyo3(signature = (position, *, time = None, nodes = None, depth = None))]
    fn analyze(
        &mut self,
        py: Python<'_>,
        position: &Position,
        time: Option<f64>,
        nodes: Option<u64>,
        depth: Option<u32>,
    ) -> PyResult<Vec<(String, i32)>> {
        let pos = position.inner;
        let limits = self.limits(&pos, time, nodes, depth)?;
        self.stop.store(false, Relaxed);
        let inner = &mut self.inner;
        let (a, _) = interruptible(py, &self.stop, || inner.analyze(&pos, Some(limits)));
        Ok(a.search.moves.iter().map(|m| (move_name(m.mv), m.score)).collect())
    }

    /// The exact score of ``position`` (disc difference for the side to move under
    /// perfect play) and a best line: a dict as ``search``'s with ``exact`` true, unless
    /// Ctrl-C stopped it (``interrupted``: the score is then not exact).
    fn solve<'py>(&mut self, py: Python<'py>, position: &Position) -> PyResult<Bound<'py, PyDict>> {
        let pos = position.inner;
        let limits = Limits { exact: true, ..Limits::default() };
        self.stop.store(false, Relaxed);
        let inner = &mut self.inner;
        let (r, signal) = interruptible(py, &self.stop, || inner.search(&pos, limits, false));
        let d = result_dict(py, &r, signal.is_some())?;
        if pos.board.is_game_over() {
            d.set_item("score", pos.board.final_score())?;
            d.set_item("exact", true)?;
        }
        Ok(d)
    }

    /// The static evaluation of ``position`` (the bundled weights), in discs for the
    /// side to move.
    fn evaluate(&self, position: &Position) -> f64 {
        self.eval.discs(&position.inner.board)
    }

    /// Forgets the previous game (clears the table).
    fn new_game(&mut self) {
        self.inner.new_game();
    }
}
