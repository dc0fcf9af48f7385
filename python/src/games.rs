//! Archives: `read_games`, the `Games` selection and its `Game`s, filters, statistics,
//! export and the positions dataset of the games.

use std::path::PathBuf;
use std::sync::Arc;

use numpy::{IntoPyArray, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use thorbook::dataset::GamePositions;
use thorbook::thor::{
    bundled_sources, expand_paths, Anomaly, GameFilter, GameId, GameText, LoadOptions, Outcome, SortKey, Source,
    ThorDatabase, ThorGame,
};
use thorbook::Color;

use crate::errors;
use crate::position::{move_name, position_arg, Position};

/// Reads game archives: a path, a list of paths, or folders of them (WTHOR ``.wtb``
/// with the ``.JOU``/``.TRN`` beside it, GGF plain or ``.bz2``/``.gz``, transcripts,
/// JSON lines; recognised by content). ``None`` reads the archives bundled with
/// thorbook (2013–2015). Damaged games and files are skipped with an
/// ``ArchiveWarning`` (a ``UserWarning``) saying how many, and listed in
/// ``anomalies``; when nothing valid was read from damaged input, ``ArchiveError``
/// is raised, as the command line fails; ``strict=True`` raises ``ArchiveError`` at
/// the first damage. Ctrl-C raises ``KeyboardInterrupt``.
#[pyfunction]
#[pyo3(signature = (paths = None, *, strict = false))]
pub(crate) fn read_games(py: Python<'_>, paths: Option<&Bound<'_, PyAny>>, strict: bool) -> PyResult<Games> {
    let paths: Option<Vec<PathBuf>> = match paths {
        None => None,
        Some(p) if p.is_none() => None,
        Some(p) => Some(match p.extract::<PathBuf>() {
            Ok(one) => vec![one],
            Err(_) => p.extract::<Vec<PathBuf>>()?,
        }),
    };
    let loaded = crate::run::abandonable(py, move || -> Result<(ThorDatabase, Vec<Anomaly>), Failure> {
        let mut unreadable = Vec::new();
        let sources = match paths {
            None => bundled_sources(),
            Some(paths) => {
                let mut sources = Vec::new();
                for p in expand_paths(&paths).map_err(Failure::Thor)? {
                    match Source::open(&p) {
                        Ok(s) => sources.push(s),
                        Err(a) if strict => return Err(Failure::Anomaly(a)),
                        Err(a) => unreadable.push(a),
                    }
                }
                sources
            }
        };
        let options = LoadOptions::default().with_strict(strict).with_index(true);
        let db = ThorDatabase::load(&sources, options).map_err(Failure::Thor)?;
        Ok((db, unreadable))
    })?;
    let (db, unreadable) = loaded.map_err(|f| match f {
        Failure::Thor(e) => errors::thor(&e),
        Failure::Anomaly(a) => errors::anomaly(&a),
    })?;
    let damaged: Vec<&Anomaly> = unreadable.iter().chain(db.anomalies()).collect();
    if let Some(first) = damaged.first() {
        if db.games().is_empty() {
            let err = errors::anomaly(first);
            let message = format!("nothing valid was read: {} damaged ({first})", damaged.len());
            err.value(py).setattr("args", (message,))?;
            return Err(err);
        }
        let message = format!(
            "skipped {} damaged games or files (the first: {first}); Games.anomalies lists them, strict=True raises",
            damaged.len()
        );
        let warning = py.import("thorbook._errors")?.getattr("ArchiveWarning")?;
        PyErr::warn(py, &warning, &std::ffi::CString::new(message).unwrap_or_default(), 1)?;
    }
    let mut games = Games::all(Arc::new(db));
    games.unreadable = Arc::new(unreadable);
    Ok(games)
}

/// Why archives could not be read, carried out of the reading thread.
enum Failure {
    Thor(thorbook::thor::ThorError),
    Anomaly(Anomaly),
}

/// Games read from archives, or a selection of them (``filter``, ``sorted``,
/// slicing): a sequence of ``Game`` in the order read, as ``collections.abc.Sequence``
/// (``len``, indexing, slicing, iteration, ``reversed``, ``in``, ``index``,
/// ``count``). A selection shares the games read: it costs its indices only.
/// Pickles and deep-copies by value (its games, as JSON lines).
#[pyclass(frozen, module = "thorbook")]
pub(crate) struct Games {
    pub(crate) db: Arc<ThorDatabase>,
    pub(crate) ids: Arc<Vec<GameId>>,
    /// Files that could not be read at all (without `strict`).
    unreadable: Arc<Vec<Anomaly>>,
    /// For games unpickled: each game's file and record as it was first read (the
    /// database's own are the pickled text's: `NAME (unpickled)` and its lines).
    pub(crate) origins: Option<Arc<Vec<(String, u32)>>>,
    /// For games unpickled: the anomalies of the reading they came from, as JSON.
    pub(crate) pickled_anomalies: Option<Arc<String>>,
}

/// One game: its moves, players, tournament, year and results. Equal to another game
/// with the same moves, players, tournament, year, results, file and record;
/// pickles and copies by value.
#[pyclass(frozen, module = "thorbook")]
pub(crate) struct Game {
    db: Arc<ThorDatabase>,
    id: GameId,
    pub(crate) origins: Option<Arc<Vec<(String, u32)>>>,
}

impl Games {
    pub(crate) fn all(db: Arc<ThorDatabase>) -> Games {
        let ids = Arc::new(db.game_ids().collect());
        Games { db, ids, unreadable: Arc::default(), origins: None, pickled_anomalies: None }
    }

    /// A selection of the same games read.
    fn with_ids(&self, ids: Vec<GameId>) -> Games {
        Games {
            db: self.db.clone(),
            ids: Arc::new(ids),
            unreadable: self.unreadable.clone(),
            origins: self.origins.clone(),
            pickled_anomalies: self.pickled_anomalies.clone(),
        }
    }

    /// The selected games.
    pub(crate) fn games(&self) -> Vec<ThorGame> {
        self.ids.iter().map(|&id| *self.db.game(id).expect("a selection holds ids of its own database")).collect()
    }

    pub(crate) fn game(&self, i: usize) -> Game {
        Game { db: self.db.clone(), id: self.ids[i], origins: self.origins.clone() }
    }

    /// The state a pickle holds: the games as JSON lines, and the anomalies.
    fn state(&self, py: Python<'_>) -> PyResult<(String, String)> {
        let lines = self.db.write_games(&self.ids, GameText::Jsonl);
        // JSON lines name each game's file and record: an unpickled game's are its
        // original ones, kept in `origins`.
        let lines = match &self.origins {
            None => lines,
            Some(origins) => {
                lines
                    .lines()
                    .zip(self.ids.iter())
                    .map(|(line, id)| with_origin(line, &origins[id.index()]))
                    .collect::<Vec<_>>()
                    .join("\n")
                    + "\n"
            }
        };
        let anomalies = match &self.pickled_anomalies {
            Some(a) => (**a).clone(),
            None => {
                let all: Vec<&Anomaly> = self.unreadable.iter().chain(self.db.anomalies()).collect();
                serde_json::to_string(&all).map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?
            }
        };
        let _ = py;
        Ok((lines, anomalies))
    }
}

/// A JSON line with its `file` and `record` replaced.
fn with_origin(line: &str, (file, record): &(String, u32)) -> String {
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(mut v) => {
            v["file"] = file.clone().into();
            v["record"] = (*record).into();
            v.to_string()
        }
        Err(_) => line.to_string(),
    }
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Finished => "finished",
        Outcome::FinishedEarly => "finished_early",
        Outcome::Unfinished => "unfinished",
    }
}

fn text_format(format: &str) -> PyResult<GameText> {
    match format {
        "transcript" => Ok(GameText::Transcript),
        "jsonl" => Ok(GameText::Jsonl),
        "ggf" => Ok(GameText::Ggf),
        "csv" => Ok(GameText::Csv),
        other => Err(errors::setting(format!("format {other:?}: transcript, csv, jsonl, ggf (or wtb to export)"))),
    }
}

#[pymethods]
impl Games {
    fn __len__(&self) -> usize {
        self.ids.len()
    }

    /// A game by index, or a selection by slice.
    fn __getitem__(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(slice) = index.cast::<pyo3::types::PySlice>() {
            let s = slice.indices(self.ids.len() as isize)?;
            let mut ids = Vec::with_capacity(s.slicelength);
            let mut i = s.start;
            for _ in 0..s.slicelength {
                ids.push(self.ids[i as usize]);
                i += s.step;
            }
            return Ok(Py::new(py, self.with_ids(ids))?.into_any());
        }
        let i: isize = index.extract()?;
        let len = self.ids.len() as isize;
        let at = if i < 0 { i + len } else { i };
        if !(0..len).contains(&at) {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!("game {i} of {len}")));
        }
        Ok(Py::new(py, self.game(at as usize))?.into_any())
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let games: Vec<Game> = (0..slf.ids.len()).map(|i| slf.game(i)).collect();
        Ok(PyList::new(py, games.into_iter().map(|g| Py::new(py, g)).collect::<PyResult<Vec<_>>>()?)?
            .try_iter()?
            .into_any()
            .unbind())
    }

    /// An iterator from the last game to the first, as `reversed` gives for a list
    /// (`games[::-1]` is the reversed selection as `Games`).
    fn __reversed__(slf: PyRef<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let games: Vec<Game> = (0..slf.ids.len()).rev().map(|i| slf.game(i)).collect();
        Ok(PyList::new(py, games.into_iter().map(|g| Py::new(py, g)).collect::<PyResult<Vec<_>>>()?)?
            .try_iter()?
            .into_any()
            .unbind())
    }

    /// Whether a game equal to ``game`` is in the selection.
    fn __contains__(&self, game: &Bound<'_, PyAny>) -> bool {
        let Ok(game) = game.cast::<Game>() else { return false };
        let game = game.get();
        if Arc::ptr_eq(&game.db, &self.db) {
            return self.ids.contains(&game.id);
        }
        (0..self.ids.len()).any(|i| self.game(i).same_as(game))
    }

    /// The index of the first game equal to ``game`` at ``start`` or after and before
    /// ``stop`` (``ValueError`` when there is none), as ``list.index``.
    #[pyo3(signature = (game, start = 0, stop = None))]
    fn index(&self, game: &Bound<'_, Game>, start: isize, stop: Option<isize>) -> PyResult<usize> {
        let game = game.get();
        let len = self.ids.len() as isize;
        let clamp = |i: isize| (if i < 0 { i + len } else { i }).clamp(0, len) as usize;
        let (start, stop) = (clamp(start), clamp(stop.unwrap_or(len)));
        (start..stop.max(start))
            .find(|&i| self.game(i).same_as(game))
            .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("the game is not in the selection"))
    }

    /// How many games equal ``game``.
    fn count(&self, game: &Bound<'_, Game>) -> usize {
        let game = game.get();
        (0..self.ids.len()).filter(|&i| self.game(i).same_as(game)).count()
    }

    fn __repr__(&self) -> String {
        format!("<Games: {} of {} read>", self.ids.len(), self.db.games().len())
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String, String))> {
        let rebuild = py.import("thorbook._thorbook")?.getattr("_games_from_state")?;
        Ok((rebuild, self.state(py)?))
    }

    /// A selection is never changed in place: its copy is itself.
    fn __copy__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// Games are immutable and share nothing mutable: a deep copy is the selection.
    fn __deepcopy__<'py>(slf: PyRef<'py, Self>, _memo: &Bound<'py, PyAny>) -> PyRef<'py, Self> {
        slf
    }

    /// The games passing every filter given, as ``thor games`` selects them: a
    /// ``player`` (case-insensitive substring of a name) with an optional ``color``
    /// (``"black"``/``"white"``), a ``tournament`` substring, ``years`` (an inclusive
    /// ``(first, last)`` pair or one year), a ``position`` the game passes through (a
    /// ``Position`` or moves; symmetric images count).
    #[pyo3(signature = (*, player = None, color = None, tournament = None, years = None, position = None))]
    fn filter(
        &self,
        py: Python<'_>,
        player: Option<String>,
        color: Option<&str>,
        tournament: Option<String>,
        years: Option<&Bound<'_, PyAny>>,
        position: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Games> {
        let filter = game_filter(player, color, tournament, years, position)?;
        let db = self.db.clone();
        let ids = self.ids.clone();
        let kept = py.detach(move || {
            let chosen: std::collections::HashSet<usize> = db.select(&filter).into_iter().map(GameId::index).collect();
            ids.iter().copied().filter(|id| chosen.contains(&id.index())).collect::<Vec<_>>()
        });
        Ok(self.with_ids(kept))
    }

    /// The selected games ordered by ``key``: ``"year"`` (oldest first), ``"black"``,
    /// ``"white"``, ``"tournament"`` (by name) or ``"score"`` (most black discs
    /// first); stable, as ``thor games --sort``.
    #[pyo3(signature = (key = "year"))]
    fn sorted(&self, key: &str) -> PyResult<Games> {
        let key: SortKey = key.parse().map_err(errors::setting)?;
        let mut ids = (*self.ids).clone();
        self.db.sort_games(&mut ids, key);
        Ok(self.with_ids(ids))
    }

    /// The statistics of a position (default: the start) over the selected games, as
    /// ``thor stats --json``: games, wins, draws, black's average and median discs,
    /// and each move played with its share and results (symmetric images merged).
    #[pyo3(signature = (position = None))]
    fn stats<'py>(&self, py: Python<'py>, position: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let pos = position_arg(position)?;
        let db = if self.ids.len() == self.db.games().len() {
            self.db.clone()
        } else {
            let mut db = (*self.db).clone();
            let keep: std::collections::HashSet<(u32, u32)> = self.games().iter().map(|g| (g.file, g.record)).collect();
            db.retain(|g| keep.contains(&(g.file, g.record)));
            Arc::new(db)
        };
        let stats = py.detach(|| db.stats(&pos, &GameFilter::default()));
        let value = errors::to_python(py, &stats)?;
        value.set_item("opening", crate::position::opening_name(position, &pos))?;
        Ok(value)
    }

    /// Writes the selected games to ``path``, as ``thor export`` does: ``"transcript"``,
    /// ``"csv"``, ``"jsonl"``, ``"ggf"``, or ``"wtb"`` (a WTHOR file, ``STEM_YEAR.wtb``
    /// per year when the games span several, with ``STEM.JOU`` and ``STEM.TRN``
    /// beside). Each file is written atomically and durably: a failed export leaves no
    /// partial file. Returns the paths written.
    #[pyo3(signature = (path, format = "transcript"))]
    fn export(&self, py: Python<'_>, path: PathBuf, format: &str) -> PyResult<Vec<PathBuf>> {
        if format == "wtb" {
            let written = py.detach(|| {
                let export = self.db.to_wthor(&self.ids);
                export.write_at(&path).map(|files| files.into_iter().map(|(p, _)| p).collect::<Vec<_>>())
            });
            return written.map_err(|e| errors::io(&e));
        }
        let format = text_format(format)?;
        py.detach(|| self.db.write_games_to(&self.ids, format, &path)).map_err(|e| errors::io(&e))?;
        Ok(vec![path])
    }

    /// The selected games as text in ``format`` (``"transcript"``, ``"csv"``,
    /// ``"jsonl"``, ``"ggf"``), a line each, as ``thor export`` prints them.
    fn to_text(&self, py: Python<'_>, format: &str) -> PyResult<String> {
        let format = text_format(format)?;
        Ok(py.detach(|| self.db.write_games(&self.ids, format)))
    }

    /// A table of the selected games as a dict of equal-length columns (give it to
    /// ``pandas.DataFrame``): year, tournament, black_player, white_player,
    /// black_discs (black's discs at the end), theoretical_black_discs (black's discs
    /// under perfect play from ``theoretical_empties``), theoretical_empties, outcome,
    /// moves, file, record. Unknown values are ``None``.
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let games: Vec<Game> = (0..self.ids.len()).map(|i| self.game(i)).collect();
        let table = PyDict::new(py);
        table.set_item("year", games.iter().map(|g| g.year()).collect::<Vec<_>>())?;
        table.set_item("tournament", games.iter().map(|g| g.tournament()).collect::<Vec<_>>())?;
        table.set_item("black_player", games.iter().map(|g| g.black_player()).collect::<Vec<_>>())?;
        table.set_item("white_player", games.iter().map(|g| g.white_player()).collect::<Vec<_>>())?;
        table.set_item("black_discs", games.iter().map(|g| g.black_discs()).collect::<Vec<_>>())?;
        table.set_item(
            "theoretical_black_discs",
            games.iter().map(|g| g.theoretical_black_discs()).collect::<Vec<_>>(),
        )?;
        table.set_item("theoretical_empties", games.iter().map(|g| g.theoretical_empties()).collect::<Vec<_>>())?;
        table.set_item("outcome", games.iter().map(|g| g.outcome()).collect::<Vec<_>>())?;
        table.set_item("moves", games.iter().map(|g| g.transcript()).collect::<Vec<_>>())?;
        table.set_item("file", games.iter().map(|g| g.file()).collect::<Vec<_>>())?;
        table.set_item("record", games.iter().map(|g| g.record()).collect::<Vec<_>>())?;
        Ok(table)
    }

    /// Every position of the selected games from which a move or a pass was played,
    /// as a dict of numpy arrays (one row per position, game then ply order): player
    /// and opponent (``uint64`` bitboards of the side to move and the other),
    /// white_to_move, ply, empties, move (0–63, 64 = pass), legal (``uint64`` mask),
    /// final_score and theoretical_score (``int8`` disc differences for the side to
    /// move) with final_known/theoretical_known, and game (index in this selection).
    /// ``planes=2`` or ``3`` adds ``planes``, ``uint8`` N×planes×8×8 (mine, theirs,
    /// legal). Built on all cores, the GIL released.
    #[pyo3(signature = (*, planes = None))]
    fn positions<'py>(&self, py: Python<'py>, planes: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyDict>> {
        let planes: Option<u8> = match planes {
            None => None,
            Some(p) if p.is_none() => None,
            Some(p) => match p.extract::<i64>() {
                Ok(n @ (2 | 3)) => Some(n as u8),
                _ => return Err(errors::setting("planes is 2 (mine, theirs) or 3 (and the legal moves)")),
            },
        };
        let games = self.games();
        let (rows, planes) = py.detach(|| {
            let rows = GamePositions::of_games(&games);
            let planes = planes
                .map(|n| thorbook::dataset::planes(&rows.player, &rows.opponent, (n == 3).then_some(&rows.legal[..])));
            (rows, planes)
        });
        let n = rows.len();
        let out = PyDict::new(py);
        if let Some(p) = planes {
            let per = p.len() / n.max(1) / 64;
            out.set_item("planes", p.into_pyarray(py).reshape([n, per, 8, 8])?)?;
        }
        let GamePositions {
            player,
            opponent,
            white_to_move,
            ply,
            empties,
            played,
            legal,
            final_score,
            final_known,
            theoretical_score,
            theoretical_known,
            game,
            ..
        } = rows;
        out.set_item("player", player.into_pyarray(py))?;
        out.set_item("opponent", opponent.into_pyarray(py))?;
        out.set_item("white_to_move", white_to_move.into_pyarray(py))?;
        out.set_item("ply", ply.into_pyarray(py))?;
        out.set_item("empties", empties.into_pyarray(py))?;
        out.set_item("move", played.into_pyarray(py))?;
        out.set_item("legal", legal.into_pyarray(py))?;
        out.set_item("final_score", final_score.into_pyarray(py))?;
        out.set_item("final_known", final_known.into_pyarray(py))?;
        out.set_item("theoretical_score", theoretical_score.into_pyarray(py))?;
        out.set_item("theoretical_known", theoretical_known.into_pyarray(py))?;
        out.set_item("game", game.into_pyarray(py))?;
        Ok(out)
    }

    /// What was skipped as damaged while reading: a list of dicts (file, record, line,
    /// offset, ply, kind, …), as ``thor check --json`` lists them.
    #[getter]
    fn anomalies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(pickled) = &self.pickled_anomalies {
            return errors::json(py, pickled);
        }
        let all: Vec<&Anomaly> = self.unreadable.iter().chain(self.db.anomalies()).collect();
        errors::to_python(py, &all)
    }

    /// The files read, each a dict (name, format, games, …) as ``thor info --json``.
    #[getter]
    fn files<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        errors::to_python(py, &self.db.files())
    }

    /// The players' names.
    #[getter]
    fn players(&self) -> Vec<String> {
        self.db.players().to_vec()
    }

    /// The tournaments' names.
    #[getter]
    fn tournaments(&self) -> Vec<String> {
        self.db.tournaments().to_vec()
    }
}

fn game_filter(
    player: Option<String>,
    color: Option<&str>,
    tournament: Option<String>,
    years: Option<&Bound<'_, PyAny>>,
    position: Option<&Bound<'_, PyAny>>,
) -> PyResult<GameFilter> {
    let mut filter = GameFilter::default();
    filter.player_color = match color {
        None => None,
        Some("black") => Some(Color::Black),
        Some("white") => Some(Color::White),
        Some(other) => return Err(errors::setting(format!("color {other:?}: \"black\" or \"white\""))),
    };
    if filter.player_color.is_some() && player.is_none() {
        return Err(errors::setting("color needs a player"));
    }
    filter.player = player;
    filter.tournament = tournament;
    let year = |y: i128| errors::int_arg::<u16>("a year", y, 0, 9999);
    filter.years = match years {
        None => None,
        Some(y) => Some(match y.extract::<i128>() {
            Ok(one) => (year(one)?, year(one)?),
            Err(_) => {
                let (a, b): (i128, i128) =
                    y.extract().map_err(|_| errors::setting("years is a year or a (first, last) pair of years"))?;
                let (a, b) = (year(a)?, year(b)?);
                if a > b {
                    return Err(errors::setting(format!("years ({a}, {b}): the first is after the last")));
                }
                (a, b)
            }
        }),
    };
    filter.position = match position {
        None => None,
        Some(p) => Some(position_arg(Some(p))?),
    };
    Ok(filter)
}

impl Game {
    fn game(&self) -> &ThorGame {
        // The database is shared, never changed, and made this id.
        self.db.game(self.id).expect("a game holds an id of its own database")
    }

    /// Equal games: the same moves, players, tournament, year, results, file and
    /// record.
    fn same_as(&self, other: &Game) -> bool {
        self.key() == other.key()
    }

    #[allow(clippy::type_complexity)]
    fn key(
        &self,
    ) -> (String, Option<String>, Option<String>, Option<String>, Option<u16>, Option<u8>, Option<u8>, String, u32)
    {
        (
            self.transcript(),
            self.black_player(),
            self.white_player(),
            self.tournament(),
            self.year(),
            self.black_discs(),
            self.theoretical_black_discs(),
            self.file(),
            self.record(),
        )
    }
}

#[pymethods]
impl Game {
    /// The moves as stored (no passes): ``["f5", "d6", …]``.
    #[getter]
    fn moves(&self) -> Vec<String> {
        let t = self.game().transcript();
        t.as_bytes().chunks(2).map(|c| String::from_utf8_lossy(c).into_owned()).collect()
    }

    /// The moves with the passes the replay inferred (``"pass"``).
    #[getter]
    fn moves_with_passes(&self) -> Vec<String> {
        self.game().moves_with_passes().into_iter().map(move_name).collect()
    }

    /// The moves as one string, ``"f5d6c3…"``.
    #[getter]
    fn transcript(&self) -> String {
        self.game().transcript()
    }

    /// The black player's name (``None`` when the source has none).
    #[getter]
    fn black_player(&self) -> Option<String> {
        let g = self.game();
        g.black.map(|_| self.db.black_name(g))
    }

    /// The white player's name.
    #[getter]
    fn white_player(&self) -> Option<String> {
        let g = self.game();
        g.white.map(|_| self.db.white_name(g))
    }

    /// The tournament (GGF: the place).
    #[getter]
    fn tournament(&self) -> Option<String> {
        let g = self.game();
        g.tournament.map(|_| self.db.tournament_name(g))
    }

    /// The year, when the source gives one.
    #[getter]
    fn year(&self) -> Option<u16> {
        self.game().known_year()
    }

    /// Black's disc count at the end (empties to the winner, 0 to 64), when known:
    /// WTHOR's stored score. ``black_discs - 32`` is half black's disc difference.
    #[getter]
    fn black_discs(&self) -> Option<u8> {
        self.game().black_discs()
    }

    /// Black's disc count under perfect play from ``theoretical_empties`` empty
    /// squares (WTHOR's theoretical score), when known.
    #[getter]
    fn theoretical_black_discs(&self) -> Option<u8> {
        self.game().theoretical_discs()
    }

    /// The empty squares at which the theoretical score was computed (WTHOR's P3:
    /// 24 in every file of the archives).
    #[getter]
    fn theoretical_empties(&self) -> Option<u8> {
        let d = self.game().depth;
        (d > 0).then_some(d)
    }

    /// ``"finished"``, ``"finished_early"`` (neither side could move before 60 moves)
    /// or ``"unfinished"``.
    #[getter]
    fn outcome(&self) -> &'static str {
        outcome_name(self.game().outcome())
    }

    /// The file the game was read from.
    #[getter]
    fn file(&self) -> String {
        match &self.origins {
            Some(origins) => origins[self.id.index()].0.clone(),
            None => self.db.files()[self.game().file as usize].name.clone(),
        }
    }

    /// 0-based record index in a WTHOR file; 1-based line of a text file.
    #[getter]
    fn record(&self) -> u32 {
        match &self.origins {
            Some(origins) => origins[self.id.index()].1,
            None => self.game().record,
        }
    }

    /// The positions of the game, from the start to the final position.
    fn positions(&self) -> PyResult<Vec<Position>> {
        let mut pos = thorbook::Position::START;
        let mut out = vec![Position::from(pos)];
        for (i, mv) in self.game().moves_with_passes().into_iter().enumerate() {
            pos = pos.try_play(mv).map_err(|e| errors::illegal(&e.at(i + 1)))?;
            out.push(Position::from(pos));
        }
        Ok(out)
    }

    /// The game reviewed move by move against the book (``book``: ``"bundled"``, a
    /// path, or ``None``), a search at ``level`` and the exact solver (from ``exact_at``
    /// empties, else the level's threshold): a ``Review``, whose ``plies`` are arrays
    /// for a DataFrame and whose ``svg()`` a notebook shows. ``store`` (a path) keeps
    /// each searched position's values for later reviews.
    #[pyo3(
        signature = (*, level = 8, exact_at = None, book = Some(std::path::PathBuf::from("bundled")), store = None, progress = None),
        text_signature = "($self, *, level=8, exact_at=None, book='bundled', store=None, progress=None)"
    )]
    fn review(
        &self,
        py: Python<'_>,
        level: i128,
        exact_at: Option<i128>,
        book: Option<std::path::PathBuf>,
        store: Option<std::path::PathBuf>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<crate::review::Review> {
        crate::review::review_moves(py, self.game().moves_with_passes(), level, exact_at, book, store, progress)
    }

    /// The position after the last move.
    fn final_position(&self) -> Position {
        Position::from(self.game().final_position())
    }

    /// The game as ``format`` text (``"transcript"``, ``"jsonl"``, ``"ggf"``).
    #[pyo3(signature = (format = "jsonl"))]
    fn to_text(&self, format: &str) -> PyResult<String> {
        Ok(self.db.write_game(self.game(), text_format(format)?))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Game>().is_ok_and(|o| self.same_as(o.get()))
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.key().hash(&mut h);
        h.finish()
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let games = Games {
            db: self.db.clone(),
            ids: Arc::new(vec![self.id]),
            unreadable: Arc::default(),
            origins: self.origins.clone(),
            pickled_anomalies: Some(Arc::new("[]".to_string())),
        };
        let rebuild = py.import("thorbook._thorbook")?.getattr("_game_from_state")?;
        Ok((rebuild, (games.state(py)?.0,)))
    }

    /// A game is immutable: its copy is itself.
    fn __copy__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __deepcopy__<'py>(slf: PyRef<'py, Self>, _memo: &Bound<'py, PyAny>) -> PyRef<'py, Self> {
        slf
    }

    fn __repr__(&self) -> String {
        let g = self.game();
        let name = |n: Option<String>| n.unwrap_or_else(|| "?".to_string());
        let score = g.black_discs().map_or("?".to_string(), |b| format!("{}-{}", b, 64 - b));
        format!(
            "<Game {} {} vs {} {}: {}>",
            g.known_year().map_or("?".into(), |y| y.to_string()),
            name(self.black_player()),
            name(self.white_player()),
            score,
            g.transcript()
        )
    }
}
