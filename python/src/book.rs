//! `Book`: an opening book, memory-mapped; its queries, and building one from games.

use std::path::PathBuf;
use std::sync::Arc;

use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use thorbook::book::{
    self as rsbook, BookSource, BuildConfig, BuildEvent, Builder, GameLine, Grower, Growth, GrowthConfig, GrowthEvent,
    UpdateChoices,
};
use thorbook::fileio::Bytes;
use thorbook::search::Level;
use thorbook::work::StopHandle;

use crate::errors;
use crate::games::Games;
use crate::position::{move_name, position_arg};
use crate::run::job;

/// An opening book: ``Book.open(path)`` maps a file (O(1), the pages read on
/// demand), ``Book.bundled()`` is the book shipped with thorbook. Pickles by what
/// reopens it: its path, or the bundled book.
#[pyclass(frozen, module = "thorbook")]
pub(crate) struct Book {
    pub(crate) inner: Arc<rsbook::Book<Bytes>>,
    /// Where it came from (the engine opens its own mapping of it).
    pub(crate) source: BookSource,
}

fn open(source: BookSource) -> PyResult<Book> {
    match source.open() {
        Ok(Some(book)) => Ok(Book { inner: Arc::new(book), source }),
        Ok(None) => Err(errors::setting("no book")),
        Err(e) => Err(errors::open(file_of(&source), &e)),
    }
}

/// The file a book came from (`None` for the bundled one).
fn file_of(source: &BookSource) -> Option<&std::path::Path> {
    match source {
        BookSource::File(p) => Some(p),
        _ => None,
    }
}

/// A level given from Python.
fn level(value: i128) -> PyResult<Level> {
    Level::new(errors::int_arg("level", value, 1, 14)?).map_err(errors::setting)
}

#[pymethods]
impl Book {
    /// Opens a book file (``BookFileError`` naming the damage when the header is
    /// damaged or of another version; records are checked as they are read).
    #[staticmethod]
    fn open(path: PathBuf) -> PyResult<Book> {
        open(BookSource::File(path))
    }

    /// The book bundled with thorbook.
    #[staticmethod]
    fn bundled() -> PyResult<Book> {
        open(BookSource::Bundled)
    }

    /// Checks every record's checksum and the key order (``BookFileError`` at the
    /// first damage).
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.inner.verify()).map_err(|e| errors::book(file_of(&self.source), &e))
    }

    /// Positions in the book.
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __contains__(&self, position: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.probe(&position_arg(Some(position))?.board).is_some())
    }

    fn __repr__(&self) -> String {
        format!("<Book {}: {} positions>", self.source, self.inner.len())
    }

    /// Pickles as its path (or the bundled book): unpickling opens it again.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let cls = py.get_type::<Book>();
        Ok(match &self.source {
            BookSource::File(p) => (cls.getattr("open")?, (p.clone(),).into_pyobject(py)?.into_any()),
            _ => (cls.getattr("bundled")?, pyo3::types::PyTuple::empty(py).into_any()),
        })
    }

    /// A book is read-only: its copy is itself.
    fn __copy__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __deepcopy__<'py>(slf: PyRef<'py, Self>, _memo: &Bound<'py, PyAny>) -> PyRef<'py, Self> {
        slf
    }

    /// The book value of a position (discs for the side to move), or ``None`` when
    /// it is not a book position. Symmetric images count.
    fn probe(&self, position: &Bound<'_, PyAny>) -> PyResult<Option<i32>> {
        Ok(self.inner.probe(&position_arg(Some(position))?.board).map(|hit| hit.value()))
    }

    /// Book values of many positions given as bitboard columns: a dict of ``value``
    /// (``int16``) and ``known`` (``bool``).
    fn probe_many<'py>(
        &self,
        py: Python<'py>,
        player: PyReadonlyArray1<'py, u64>,
        opponent: PyReadonlyArray1<'py, u64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let boards = crate::data::boards_of(&player, &opponent)?;
        let values: Vec<Option<i32>> =
            py.detach(|| boards.iter().map(|b| self.inner.probe(b).map(|h| h.value())).collect());
        let out = PyDict::new(py);
        out.set_item("value", values.iter().map(|v| v.unwrap_or(0) as i16).collect::<Vec<_>>().into_pyarray(py))?;
        out.set_item("known", values.iter().map(Option::is_some).collect::<Vec<_>>().into_pyarray(py))?;
        Ok(out)
    }

    /// What the book says of a position, as ``book query --json`` prints it: its value,
    /// games, and every move with its score, games, win rate and trust grade.
    #[pyo3(signature = (position = None))]
    fn query<'py>(&self, py: Python<'py>, position: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let pos = position_arg(position)?;
        let query = py.detach(|| rsbook::query(&self.inner, &pos));
        let value = errors::to_python(py, &query)?;
        value.set_item("opening", crate::position::opening_name(position, &pos))?;
        Ok(value)
    }

    /// The book's moves of a position (``query(position)["moves"]``), best first.
    #[pyo3(signature = (position = None))]
    fn moves<'py>(&self, py: Python<'py>, position: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let pos = position_arg(position)?;
        let moves = py.detach(|| rsbook::book_moves(&self.inner, &pos));
        errors::to_python(py, &moves)
    }

    /// The principal line through the book from a position: its best move at each
    /// book position, ending with the leaf move.
    #[pyo3(signature = (position = None, max_len = 60))]
    fn line(&self, position: Option<&Bound<'_, PyAny>>, max_len: usize) -> PyResult<Vec<String>> {
        let pos = position_arg(position)?;
        Ok(rsbook::book_line(&self.inner, &pos, max_len).into_iter().map(move_name).collect())
    }

    /// How the book was built: ply limit, minimum games, leaf depth, exact threshold,
    /// selectivity, back-up rule, evaluation digest.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let p = self.inner.params();
        let d = PyDict::new(py);
        d.set_item("max_ply", p.max_ply)?;
        d.set_item("min_games", p.min_games)?;
        d.set_item("depth", p.depth)?;
        d.set_item("exact_at", p.exact_at)?;
        d.set_item("selectivity_tenths", p.selectivity_tenths)?;
        d.set_item("back_up", p.back_up.to_string())?;
        d.set_item("eval_digest", p.eval_digest)?;
        Ok(d.into_any())
    }

    /// Builds a book of ``games`` (a ``Games``) into ``path``: the positions reached by
    /// at least ``min_games`` games up to ``max_ply``, each leaf searched at ``level``
    /// on all cores, the values backed up by negamax. ``progress(done, total)`` is
    /// called as leaves are scored (a ``tqdm``'s ``update`` fits through a lambda).
    /// The build checkpoints beside ``path``; ``resume=True`` continues an interrupted
    /// one. Returns the new book.
    #[staticmethod]
    #[pyo3(signature = (games, path, *, level = 8, max_ply = 20, min_games = 2, resume = false, progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn build(
        py: Python<'_>,
        games: &Games,
        path: PathBuf,
        level: i128,
        max_ply: i128,
        min_games: i128,
        resume: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Book> {
        let level = self::level(level)?;
        let mut config = BuildConfig::default();
        config.max_ply = errors::int_arg("max_ply", max_ply, 1, 60)?;
        config.min_games = errors::int_arg("min_games", min_games, 1, i128::from(u32::MAX))?;
        config.search = config.search.with_level(level);
        run_build(py, config, games, path, resume, progress, Over::Games)
    }

    /// This book with ``games`` added, written to ``path``: the positions the new games
    /// reach are added, the leaves whose position and moves are unchanged are kept and
    /// the rest searched (at ``level``, else as the book's header records). Returns the
    /// new book.
    #[pyo3(signature = (games, path, *, level = None, resume = false, progress = None))]
    fn update(
        &self,
        py: Python<'_>,
        games: &Games,
        path: PathBuf,
        level: Option<i128>,
        resume: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Book> {
        let config = self.update_config(level, &path)?;
        run_build(py, config, games, path, resume, progress, Over::Update(&self.inner))
    }

    /// This book taught by ``games``, written to ``path``: the positions of each game
    /// that leaves the book are added along the game (its whole line), as ``book
    /// learn``. Returns the new book.
    #[pyo3(signature = (games, path, *, level = None, resume = false, progress = None))]
    fn learn(
        &self,
        py: Python<'_>,
        games: &Games,
        path: PathBuf,
        level: Option<i128>,
        resume: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Book> {
        let config = self.update_config(level, &path)?;
        run_build(py, config, games, path, resume, progress, Over::Learn(&self.inner))
    }

    /// This book grown without games into ``path``, as ``book deviate``/``deepen``: the
    /// lines within ``error`` discs a move and ``budget`` a line are expanded to
    /// ``max_ply`` (``deepen=True``: their leaves searched again at ``level``), round
    /// by round, until nothing is left in the bounds, ``max_positions`` were added or
    /// ``seconds`` have passed. ``progress`` (a callable ``f(done, total)`` or a
    /// ``tqdm`` bar) counts each round's leaves. Ctrl-C stops it between leaf searches
    /// and raises ``KeyboardInterrupt``: the book of the rounds finished is written,
    /// and ``resume=True`` continues. Returns the new book.
    #[pyo3(signature = (path, *, error = 2, budget = 4, max_ply = 40, level = None, deepen = false, max_positions = None, seconds = None, resume = false, progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn grow(
        &self,
        py: Python<'_>,
        path: PathBuf,
        error: i128,
        budget: i128,
        max_ply: i128,
        level: Option<i128>,
        deepen: bool,
        max_positions: Option<i128>,
        seconds: Option<f64>,
        resume: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Book> {
        let mut config = GrowthConfig::default();
        config.error = errors::int_arg("error", error, 0, 64)?;
        config.budget = errors::int_arg("budget", budget, 0, 128)?;
        config.max_ply = errors::int_arg("max_ply", max_ply, 1, 60)?;
        config.max_positions =
            max_positions.map(|m| errors::int_arg("max_positions", m, 1, i128::from(u64::MAX))).transpose()?;
        config.time = crate::engine::seconds("seconds", seconds)?;
        if let Some(level) = level {
            config.search = config.search.with_level(self::level(level)?);
        }
        config.growth = if deepen { Growth::Deepen } else { Growth::Deviate };
        let stop = StopHandle::new();
        let grower = Grower::new(config, thorbook::Position::START.board, &path).resume(resume).stop_on(stop.clone());
        let book = &*self.inner;
        // Rounds count their leaves from 0: the bar counts every round's, the total
        // growing as rounds are planned.
        let rounds = std::sync::Mutex::new((0u64, 0u64));
        let result = job(py, &stop, progress, |report| {
            grower.run(book, &|event| match event {
                GrowthEvent::Round { .. } => {
                    let mut r = rounds.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    *r = (r.0 + r.1, 0);
                }
                GrowthEvent::Searched { done, total } => {
                    let base = {
                        let mut r = rounds.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        r.1 = total;
                        r.0
                    };
                    report.report(base + done, base + total);
                }
                _ => {}
            })
        })?;
        let summary = result.map_err(|e| errors::growth(&e, &path))?;
        if summary.stop == thorbook::book::StopReason::Interrupted {
            // Ctrl-C's flag was set by `job`'s own signal check only when it raised; a
            // stop from elsewhere still ends the call as an interruption.
            return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
                "the growth was interrupted: the rounds finished are written (resume=True continues)",
            ));
        }
        open(BookSource::File(path))
    }
}

impl Book {
    /// The configuration of an update or a learning of this book: as its header
    /// records, the leaves searched at `level` when given.
    fn update_config(&self, level: Option<i128>, output: &std::path::Path) -> PyResult<BuildConfig> {
        let mut choices = UpdateChoices::default();
        if let Some(level) = level {
            choices.search = choices.search.with_level(self::level(level)?);
        }
        BuildConfig::update_of(&self.inner.params(), choices).map_err(|e| errors::build(&e, output))
    }
}

/// What a build starts from besides its games.
enum Over<'b> {
    /// Nothing: a new book.
    Games,
    /// An earlier book, whose still-valid leaves are kept.
    Update(&'b rsbook::Book<Bytes>),
    /// A book taught the games' lines.
    Learn(&'b rsbook::Book<Bytes>),
}

/// Builds `path` from `games` (over `over`), Ctrl-C stopping it between leaves (the
/// checkpoint keeps them for `resume`), and opens the result.
fn run_build(
    py: Python<'_>,
    config: BuildConfig,
    games: &Games,
    path: PathBuf,
    resume: bool,
    progress: Option<Py<PyAny>>,
    over: Over<'_>,
) -> PyResult<Book> {
    let lines: Vec<GameLine> = games.games().iter().map(GameLine::from).collect();
    let stop = StopHandle::new();
    let builder = Builder::new(config, &path).resume(resume).stop_on(stop.clone());
    let result = job(py, &stop, progress, |report| {
        let events = |event| {
            if let BuildEvent::Scored { done, total } = event {
                report.report(done, total);
            }
        };
        match over {
            Over::Games => builder.run(&lines, &events),
            Over::Update(old) => builder.update(old, &lines, &events),
            Over::Learn(old) => builder.learn(old, &lines, &events),
        }
    })?;
    result.map_err(|e| errors::build(&e, &path))?;
    open(BookSource::File(path))
}
