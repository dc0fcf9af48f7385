//! Game review for Python: `Game.review` (one game, a `Review` with its plies as
//! arrays, its summary and its value graph as SVG for a notebook) and `review_games`
//! (many games in parallel, one table of arrays for a DataFrame).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use thorbook::book::BookSource;
use thorbook::engine::review::{
    review_game, review_games as rs_review_games, AnalysisStore, BatchError, GameReview, PlyReview, ReviewError,
    SideSummary,
};
use thorbook::engine::{Engine as RsEngine, EngineConfig, GameError};
use thorbook::search::{Level, Settings};
use thorbook::square::Move;
use thorbook::work::StopHandle;

use crate::errors;
use crate::run::job;

/// The engine a review uses: `level`, `exact_at` (solve from that many empties),
/// `book` (`"bundled"`, a path, or `None`), one search thread.
fn config(level: i128, exact_at: Option<i128>, book: Option<PathBuf>) -> PyResult<EngineConfig> {
    let level: u8 = errors::int_arg("level", level, 1, 14)?;
    let mut search = Settings::default()
        .with_level(Level::new(level).map_err(|e| errors::setting(e.to_string()))?)
        .with_threads(1)
        .with_hash_mib(64);
    if let Some(e) = exact_at {
        search = search.with_exact_at(errors::int_arg("exact_at", e, 0, 60)?);
    }
    let mut config = EngineConfig::default();
    config.search = search;
    config.book = match book {
        None => BookSource::None,
        Some(p) if p.as_os_str() == "bundled" => BookSource::Bundled,
        Some(p) => BookSource::File(p),
    };
    Ok(config)
}

fn store(path: Option<PathBuf>) -> PyResult<Option<AnalysisStore>> {
    path.map(|p| AnalysisStore::open(&p).map_err(|e| errors::io(&e))).transpose()
}

fn review_error(e: &ReviewError) -> PyErr {
    match e {
        ReviewError::Game(GameError::Play(p)) => errors::illegal(p),
        ReviewError::Store(io) => errors::io(io),
        other => errors::setting(other.to_string()),
    }
}

/// The columns of reviewed plies, one entry per decision.
#[derive(Default)]
struct Columns {
    game: Vec<u32>,
    ply: Vec<u16>,
    empties: Vec<u8>,
    side_to_move: Vec<&'static str>,
    mv: Vec<String>,
    value: Vec<i8>,
    source: Vec<String>,
    trust: Vec<String>,
    best_move: Vec<String>,
    best_value: Vec<i8>,
    played_value: Vec<i8>,
    loss: Vec<i8>,
}

fn small(v: i32) -> i8 {
    // Values are disc differences: within ±64.
    i8::try_from(v.clamp(-64, 64)).unwrap_or(0)
}

impl Columns {
    fn push(&mut self, game: u32, p: &PlyReview) {
        self.game.push(game);
        self.ply.push(u16::try_from(p.ply).unwrap_or(u16::MAX));
        self.empties.push(u8::try_from(p.empties).unwrap_or(u8::MAX));
        self.side_to_move.push(if p.side_to_move == thorbook::Color::Black { "black" } else { "white" });
        self.mv.push(p.mv.to_string());
        self.value.push(small(p.value));
        self.source.push(p.source.to_string());
        self.trust.push(p.trust.to_string());
        self.best_move.push(p.best_move.to_string());
        self.best_value.push(small(p.best_value));
        self.played_value.push(small(p.played_value));
        self.loss.push(small(p.loss));
    }

    /// A dict of numpy arrays (strings as numpy's unicode arrays); `game` only when
    /// asked for.
    fn into_dict(self, py: Python<'_>, with_game: bool) -> PyResult<Bound<'_, PyDict>> {
        use numpy::IntoPyArray;
        let np = py.import("numpy")?;
        let strings = |v: Vec<String>| np.call_method1("array", (v, "U"));
        let d = PyDict::new(py);
        if with_game {
            d.set_item("game", self.game.into_pyarray(py))?;
        }
        d.set_item("ply", self.ply.into_pyarray(py))?;
        d.set_item("empties", self.empties.into_pyarray(py))?;
        d.set_item("side_to_move", np.call_method1("array", (self.side_to_move, "U"))?)?;
        d.set_item("move", strings(self.mv)?)?;
        d.set_item("value", self.value.into_pyarray(py))?;
        d.set_item("source", strings(self.source)?)?;
        d.set_item("trust", strings(self.trust)?)?;
        d.set_item("best_move", strings(self.best_move)?)?;
        d.set_item("best_value", self.best_value.into_pyarray(py))?;
        d.set_item("played_value", self.played_value.into_pyarray(py))?;
        d.set_item("loss", self.loss.into_pyarray(py))?;
        Ok(d)
    }
}

fn side_dict<'py>(py: Python<'py>, s: &SideSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("moves", s.moves)?;
    d.set_item("best_moves", s.best_moves)?;
    d.set_item("discs_lost", s.discs_lost)?;
    d.set_item("average_loss", s.average_loss)?;
    d.set_item("accuracy", s.accuracy)?;
    Ok(d)
}

/// A reviewed game: ``plies`` (a dict of arrays: ply, empties, side_to_move, move,
/// value, source, trust, best_move, best_value, played_value, loss — values in discs
/// for the side to move, ``pandas.DataFrame(review.plies)`` makes a table), ``summary``
/// (each side's discs lost and accuracy, the worst plies, where the game left the book)
/// and ``svg()``, the value along the game from black's side, which a notebook shows.
#[pyclass(frozen, module = "thorbook")]
pub(crate) struct Review {
    inner: GameReview,
}

#[pymethods]
impl Review {
    /// The decisions as a dict of numpy arrays, one entry per decision.
    #[getter]
    fn plies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut c = Columns::default();
        self.inner.plies.iter().for_each(|p| c.push(0, p));
        c.into_dict(py, false)
    }

    /// Totals: ``black`` and ``white`` (moves, best_moves, discs_lost, average_loss,
    /// accuracy), ``worst`` (plies, biggest loss first), ``left_book_at``,
    /// ``black_result``, ``searched`` and ``from_store`` (positions), ``interrupted``.
    #[getter]
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = &self.inner;
        let d = PyDict::new(py);
        d.set_item("decisions", r.plies.len())?;
        d.set_item("black", side_dict(py, &r.black)?)?;
        d.set_item("white", side_dict(py, &r.white)?)?;
        d.set_item("worst", r.worst.clone())?;
        d.set_item("left_book_at", r.left_book_at)?;
        d.set_item("black_result", r.black_result)?;
        d.set_item("searched", r.searched)?;
        d.set_item("from_store", r.from_store)?;
        d.set_item("interrupted", r.interrupted)?;
        Ok(d)
    }

    /// The value along the game (black's view), book, search and exact stretches in
    /// their colours, the moves that lost most marked: an SVG document.
    fn svg(&self) -> String {
        self.inner.value_graph_svg()
    }

    /// What a notebook shows: the graph.
    fn _repr_svg_(&self) -> String {
        self.svg()
    }

    fn __len__(&self) -> usize {
        self.inner.plies.len()
    }

    fn __repr__(&self) -> String {
        let r = &self.inner;
        format!(
            "<Review of {} decisions: black lost {} discs, white {}{}>",
            r.plies.len(),
            r.black.discs_lost,
            r.white.discs_lost,
            r.left_book_at.map_or(String::new(), |p| format!(", out of the book at ply {p}"))
        )
    }
}

/// Reviews one game's moves; Ctrl-C raises ``KeyboardInterrupt``.
pub(crate) fn review_moves(
    py: Python<'_>,
    moves: Vec<Move>,
    level: i128,
    exact_at: Option<i128>,
    book: Option<PathBuf>,
    store_path: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Review> {
    let config = config(level, exact_at, book.clone())?;
    let store = store(store_path)?;
    let mut engine = RsEngine::new(config)
        .map_err(|e| errors::engine(&e, book.as_deref().filter(|p| p.as_os_str() != "bundled")))?;
    let stop = engine.stop_handle();
    let reviewed = job(py, &stop, progress, |report| {
        review_game(&mut engine, &thorbook::Position::START, &moves, store.as_ref(), &|p| {
            report.report(p.done, p.total)
        })
    })?;
    let inner = reviewed.map_err(|e| review_error(&e))?;
    if inner.interrupted {
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err("the review was interrupted"));
    }
    Ok(Review { inner })
}

/// ``review_games(games, *, level=8, exact_at=None, book="bundled", store=None,
/// jobs=None, progress=None)``: every game reviewed, in parallel (``jobs`` games at once,
/// one per core by default), as one dict of numpy arrays with a row per decision and a
/// ``game`` column (the game's index in ``games``): ``pandas.DataFrame(...)`` of it is
/// the whole table. ``store`` (a path) keeps each searched position's values, so a
/// second call searches nothing again.
#[pyfunction]
#[pyo3(
    signature = (games, *, level = 8, exact_at = None, book = Some(PathBuf::from("bundled")), store = None, jobs = None, progress = None),
    text_signature = "(games, *, level=8, exact_at=None, book='bundled', store=None, jobs=None, progress=None)"
)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn review_games<'py>(
    py: Python<'py>,
    games: &Bound<'py, crate::games::Games>,
    level: i128,
    exact_at: Option<i128>,
    book: Option<PathBuf>,
    store: Option<PathBuf>,
    jobs: Option<i128>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let config = config(level, exact_at, book)?;
    let store = self::store(store)?;
    let jobs = match jobs {
        Some(j) => errors::int_arg("jobs", j, 1, 4096)?,
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    let moves: Vec<Vec<Move>> = games.get().games().iter().map(|g| g.moves_with_passes()).collect();
    let total = moves.len() as u64;
    let stop = StopHandle::new();
    let reviews: Mutex<Vec<(usize, GameReview)>> = Mutex::new(Vec::with_capacity(moves.len()));
    let done = AtomicU64::new(0);
    let result = job(py, &stop, progress, |report| {
        rs_review_games(&config, &moves, jobs, store.as_ref(), &stop, &|i, r| {
            reviews.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((i, r));
            report.report(done.fetch_add(1, Relaxed) + 1, total);
            true
        })
    })?;
    result.map_err(|e| match e {
        BatchError::Game { index, source } => {
            let err = review_error(&source);
            let _ = err.value(py).setattr("game", index);
            err
        }
        BatchError::Engine(e) => errors::engine(&e, None),
        other => errors::setting(other.to_string()),
    })?;
    let mut reviews = reviews.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    reviews.sort_by_key(|(i, _)| *i);
    let mut c = Columns::default();
    for (i, r) in &reviews {
        let game = u32::try_from(*i).unwrap_or(u32::MAX);
        r.plies.iter().for_each(|p| c.push(game, p));
    }
    c.into_dict(py, true)
}
