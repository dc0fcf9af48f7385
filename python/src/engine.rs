//! `Engine`: the book, then a search — best moves, analyses, exact solves and the
//! static evaluation, the GIL released and Ctrl-C returning what was found.

use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use thorbook::book::BookSource;
use thorbook::engine::{Engine as RsEngine, EngineConfig, MoveSource};
use thorbook::eval::{AnyEval, Evaluator, PatternEval};
use thorbook::search::{Level, Limits, SearchResult, Settings};
use thorbook::work::StopHandle;

use crate::book::Book;
use crate::errors;
use crate::position::{move_name, Position};
use crate::run::{interruptible, with_partial};

/// The engine: the book first, then iterative deepening with the trained evaluation
/// and the exact solver. ``Engine(level=10, book="bundled")``; ``book`` is a ``Book``,
/// a path, ``"bundled"`` (the default, as the command line) or ``None``. ``time``
/// (seconds), ``nodes`` and ``depth`` bound each search unless a call gives its own.
/// Searches release the GIL; Ctrl-C raises ``KeyboardInterrupt``, whose ``partial``
/// attribute holds what the search had found. Pickles by its settings (a new engine,
/// its table empty).
#[pyclass(module = "thorbook")]
pub(crate) struct Engine {
    inner: RsEngine<AnyEval>,
    stop: StopHandle,
    eval: PatternEval,
    /// The settings it was made with, for pickling.
    settings: EngineArgs,
}

/// What an engine was made with: its constructor's arguments.
#[derive(Clone)]
struct EngineArgs {
    level: u8,
    book: BookSource,
    threads: usize,
    hash_mib: usize,
    time: Option<f64>,
    nodes: Option<u64>,
    depth: Option<u32>,
    seed: u64,
}

fn result_dict<'py>(py: Python<'py>, r: &SearchResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("move", r.best_move().map(move_name))?;
    d.set_item("score", r.score())?;
    d.set_item("depth", r.depth)?;
    d.set_item("exact", r.exact)?;
    d.set_item("nodes", r.nodes)?;
    d.set_item("seconds", r.elapsed.as_secs_f64())?;
    d.set_item("pv", r.pv.iter().copied().map(move_name).collect::<Vec<_>>())?;
    Ok(d)
}

/// Seconds given from Python as a duration (`SettingError` when negative or not finite).
pub(crate) fn seconds(name: &str, s: Option<f64>) -> PyResult<Option<Duration>> {
    s.map(|s| {
        Duration::try_from_secs_f64(s)
            .map_err(|_| errors::setting(format!("{name} must be a number of seconds from 0, got {s}")))
    })
    .transpose()
}

/// The most empties solved without a limit: beyond, a solve takes hours (each square
/// about doubles it, and 29 empties took 198 CPU-seconds).
const SOLVE_UNLIMITED_EMPTIES: u32 = 36;

impl Engine {
    /// The limits of a search of `pos`: the engine's, with the call's bounds over them.
    fn limits(
        &self,
        pos: &thorbook::Position,
        time: Option<f64>,
        nodes: Option<i128>,
        depth: Option<i128>,
    ) -> PyResult<Limits> {
        let strength = self.inner.strength();
        let mut limits = match seconds("time", time)? {
            Some(time) => strength.limits_within(&pos.board, time),
            None => strength.limits(&pos.board),
        };
        if let Some(n) = nodes {
            limits.nodes = Some(errors::int_arg("nodes", n, 1, i128::from(u64::MAX))?);
        }
        if let Some(d) = depth {
            let d: u32 = errors::int_arg("depth", d, 1, 60)?;
            limits.depth = Some(d);
            limits.exact = limits.exact && d >= pos.board.empty_count();
        }
        Ok(limits)
    }

    /// Runs a search of `pos`, Ctrl-C raising `KeyboardInterrupt` with the result so far
    /// as its `partial`.
    fn run_search<'py>(&mut self, py: Python<'py>, pos: thorbook::Position, limits: Limits) -> PyResult<SearchResult> {
        self.stop.reset();
        let inner = &mut self.inner;
        let (r, signal) = interruptible(py, &self.stop, || inner.search(&pos, limits));
        match signal {
            Some(e) => Err(with_partial(py, e, result_dict(py, &r)?.as_any())),
            None => Ok(r),
        }
    }
}

/// The book an engine consults: a `Book`, or a path (`"bundled"`: the bundled one).
#[derive(FromPyObject)]
enum BookArg<'py> {
    Book(Bound<'py, Book>),
    Path(std::path::PathBuf),
}

fn book_file(source: &BookSource) -> Option<&std::path::Path> {
    match source {
        BookSource::File(p) => Some(p),
        _ => None,
    }
}

#[pymethods]
impl Engine {
    #[new]
    #[pyo3(signature = (level = 10, *, book = Some(BookArg::Path("bundled".into())), threads = 1, hash_mib = 64, time = None, nodes = None, depth = None, seed = 0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        level: i128,
        book: Option<BookArg<'_>>,
        threads: i128,
        hash_mib: i128,
        time: Option<f64>,
        nodes: Option<i128>,
        depth: Option<i128>,
        seed: i128,
    ) -> PyResult<Engine> {
        let settings = EngineArgs {
            level: errors::int_arg("level", level, 1, 14)?,
            book: match book {
                None => BookSource::None,
                Some(BookArg::Book(b)) => b.get().source.clone(),
                Some(BookArg::Path(p)) if p.as_os_str() == "bundled" => BookSource::Bundled,
                Some(BookArg::Path(p)) => BookSource::File(p),
            },
            threads: errors::int_arg("threads", threads, 0, 65535)?,
            hash_mib: errors::int_arg("hash_mib", hash_mib, 0, 1 << 40)?,
            time,
            nodes: nodes.map(|n| errors::int_arg("nodes", n, 1, i128::from(u64::MAX))).transpose()?,
            depth: depth.map(|d| errors::int_arg("depth", d, 1, 60)).transpose()?,
            seed: errors::int_arg("seed", seed, 0, i128::from(u64::MAX))?,
        };
        Engine::with_settings(settings)
    }

    /// The engine's move in ``position``: from the book when it has one worth playing,
    /// else searched. A ``BestMove`` dict: move, score (discs for the side to move),
    /// depth, exact, nodes, seconds, pv, source (``"book"``, ``"search"``,
    /// ``"forced"``). ``MoveError`` when the game is over.
    fn best_move<'py>(&mut self, py: Python<'py>, position: &Position) -> PyResult<Bound<'py, PyDict>> {
        let pos = position.inner;
        if pos.board.is_game_over() {
            return Err(errors::no_move(format!(
                "the game is over ({:+} for the side to move): there is no move",
                pos.board.final_score()
            )));
        }
        self.stop.reset();
        let inner = &mut self.inner;
        let (chosen, signal) = interruptible(py, &self.stop, || inner.choose(&pos));
        let book = self.settings.book.clone();
        let m = chosen.map_err(|e| errors::engine(&e, book_file(&book)))?;
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
        match signal {
            Some(e) => Err(with_partial(py, e, d.as_any())),
            None => Ok(d),
        }
    }

    /// A search of ``position`` (no book) under the engine's limits or the ones given:
    /// ``time`` in seconds, ``nodes``, ``depth``. A ``SearchResult`` dict: move, score,
    /// depth, exact, nodes, seconds, pv.
    #[pyo3(signature = (position, *, time = None, nodes = None, depth = None))]
    fn search<'py>(
        &mut self,
        py: Python<'py>,
        position: &Position,
        time: Option<f64>,
        nodes: Option<i128>,
        depth: Option<i128>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let pos = position.inner;
        let limits = self.limits(&pos, time, nodes, depth)?;
        let r = self.run_search(py, pos, limits)?;
        result_dict(py, &r)
    }

    /// Every legal move of ``position`` with a full-window score (discs for the side
    /// to move), best first: a list of ``(move, score)``. Ctrl-C raises
    /// ``KeyboardInterrupt`` with the last finished iteration's scores as ``partial``.
    #[pyo3(signature = (position, *, time = None, nodes = None, depth = None))]
    fn analyze<'py>(
        &mut self,
        py: Python<'py>,
        position: &Position,
        time: Option<f64>,
        nodes: Option<i128>,
        depth: Option<i128>,
    ) -> PyResult<Vec<(String, i32)>> {
        let pos = position.inner;
        let limits = self.limits(&pos, time, nodes, depth)?;
        self.stop.reset();
        let inner = &mut self.inner;
        let (a, signal) = interruptible(py, &self.stop, || inner.analyze(&pos, Some(limits)));
        let scores: Vec<(String, i32)> = a.search.moves.iter().map(|m| (move_name(m.mv), m.score)).collect();
        match signal {
            Some(e) => Err(with_partial(py, e, &scores.clone().into_pyobject(py)?.into_any())),
            None => Ok(scores),
        }
    }

    /// The exact score of ``position`` (disc difference for the side to move under
    /// perfect play) and a best line: a ``SearchResult`` with ``exact`` true. ``time``
    /// (seconds) and ``nodes`` bound it: reaching one before the proof raises
    /// ``TimeoutError`` with the best found so far as ``partial``. Without a bound,
    /// positions of more than 36 empties are refused (``SettingError``): their solve
    /// takes hours to years. Ctrl-C raises ``KeyboardInterrupt`` (``partial`` too).
    #[pyo3(signature = (position, *, time = None, nodes = None))]
    fn solve<'py>(
        &mut self,
        py: Python<'py>,
        position: &Position,
        time: Option<f64>,
        nodes: Option<i128>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let pos = position.inner;
        let empties = pos.board.empty_count();
        if time.is_none() && nodes.is_none() && empties > SOLVE_UNLIMITED_EMPTIES {
            return Err(errors::setting(format!(
                "an exact solve of {empties} empties takes hours to years: give time= or nodes=, or solve at \
                 {SOLVE_UNLIMITED_EMPTIES} empties or fewer"
            )));
        }
        let mut limits = Limits::default();
        limits.exact = true;
        limits.time = seconds("time", time)?;
        limits.nodes = nodes.map(|n| errors::int_arg("nodes", n, 1, i128::from(u64::MAX))).transpose()?;
        let r = self.run_search(py, pos, limits)?;
        let d = result_dict(py, &r)?;
        if pos.board.is_game_over() {
            d.set_item("score", pos.board.final_score())?;
            d.set_item("exact", true)?;
        } else if !r.exact {
            let e = pyo3::exceptions::PyTimeoutError::new_err(format!(
                "no exact score of {empties} empties within the limit (the best found so far is in .partial)"
            ));
            return Err(with_partial(py, e, d.as_any()));
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

    /// Pickles as the settings it was made with: unpickling makes a new engine.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyDict>,))> {
        let s = &self.settings;
        let d = PyDict::new(py);
        d.set_item("level", s.level)?;
        match &s.book {
            BookSource::None => d.set_item("book", py.None())?,
            BookSource::Bundled => d.set_item("book", "bundled")?,
            BookSource::File(p) => d.set_item("book", p)?,
        }
        d.set_item("threads", s.threads)?;
        d.set_item("hash_mib", s.hash_mib)?;
        d.set_item("time", s.time)?;
        d.set_item("nodes", s.nodes)?;
        d.set_item("depth", s.depth)?;
        d.set_item("seed", s.seed)?;
        let rebuild = py.import("thorbook._thorbook")?.getattr("_engine_from_settings")?;
        Ok((rebuild, (d,)))
    }

    fn __repr__(&self) -> String {
        format!("<Engine level {} book {}>", self.settings.level, self.settings.book)
    }
}

impl Engine {
    fn with_settings(s: EngineArgs) -> PyResult<Engine> {
        let level = Level::new(s.level).map_err(errors::setting)?;
        let mut search = Settings::at_level(level).with_threads(s.threads).with_hash_mib(s.hash_mib);
        if let Some(t) = seconds("time", s.time)? {
            search = search.with_time(t);
        }
        if let Some(n) = s.nodes {
            search = search.with_nodes(n);
        }
        if let Some(d) = s.depth {
            search = search.with_depth(d);
        }
        let mut config = EngineConfig::default();
        config.search = search;
        config.seed = s.seed;
        config.book = s.book.clone();
        let inner = RsEngine::new(config).map_err(|e| errors::engine(&e, book_file(&s.book)))?;
        let stop = inner.stop_handle();
        Ok(Engine { inner, stop, eval: PatternEval::bundled(), settings: s })
    }
}

/// The engine a pickle holds: its settings.
#[pyfunction]
pub(crate) fn _engine_from_settings(settings: &Bound<'_, PyDict>) -> PyResult<Engine> {
    let get = |key: &str| settings.get_item(key).ok().flatten();
    let book = match get("book") {
        None => BookSource::Bundled,
        Some(b) if b.is_none() => BookSource::None,
        Some(b) => {
            let p: std::path::PathBuf = b.extract()?;
            if p.as_os_str() == "bundled" {
                BookSource::Bundled
            } else {
                BookSource::File(p)
            }
        }
    };
    let int =
        |key: &str| -> PyResult<Option<i128>> { get(key).filter(|v| !v.is_none()).map(|v| v.extract()).transpose() };
    Engine::with_settings(EngineArgs {
        level: errors::int_arg("level", int("level")?.unwrap_or(10), 1, 14)?,
        book,
        threads: errors::int_arg("threads", int("threads")?.unwrap_or(1), 0, 65535)?,
        hash_mib: errors::int_arg("hash_mib", int("hash_mib")?.unwrap_or(64), 1, 1 << 40)?,
        time: get("time").filter(|v| !v.is_none()).map(|v| v.extract()).transpose()?,
        nodes: int("nodes")?.map(|n| errors::int_arg("nodes", n, 1, i128::from(u64::MAX))).transpose()?,
        depth: int("depth")?.map(|d| errors::int_arg("depth", d, 1, 60)).transpose()?,
        seed: errors::int_arg("seed", int("seed")?.unwrap_or(0), 0, i128::from(u64::MAX))?,
    })
}
