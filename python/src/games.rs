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
/// thorbook (2013–2015). Damaged games are skipped and listed in ``anomalies``;
/// ``strict=True`` raises ``ArchiveError`` at the first instead.
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
    let loaded = py.detach(move || -> Result<(ThorDatabase, Vec<Anomaly>), PyErr> {
        let mut unreadable = Vec::new();
        let sources = match paths {
            None => bundled_sources(),
            Some(paths) => {
                let mut sources = Vec::new();
                for p in expand_paths(&paths).map_err(|e| errors::thor(&e))? {
                    match Source::open(&p) {
                        Ok(s) => sources.push(s),
                        Err(a) if strict => return Err(errors::anomaly(&a)),
                        Err(a) => unreadable.push(a),
                    }
                }
                sources
            }
        };
        let options = LoadOptions::default().with_strict(strict).with_index(true);
        let db = ThorDatabase::load(&sources, options).map_err(|e| errors::thor(&e))?;
        Ok((db, unreadable))
    })?;
    let (db, unreadable) = loaded;
    let mut games = Games::all(Arc::new(db));
    games.unreadable = Arc::new(unreadable);
    Ok(games)
}

/// Games read from archives, or a selection of them (``filter``, slicing): a sequence
/// of ``Game`` in the order read.
#[pyclass(frozen, module = "thorbook")]
pub(crate) struct Games {
    pub(crate) db: Arc<ThorDatabase>,
    pub(crate) ids: Arc<Vec<GameId>>,
    /// Files that could not be read at all (without `strict`).
    unreadable: Arc<Vec<Anomaly>>,
}

/// One game: its moves, players, tournament, year and scores.
#[pyclass(frozen, module = "thorbook")]
pub(crate) struct Game {
    db: Arc<ThorDatabase>,
    id: GameId,
}

impl Games {
    fn all(db: Arc<ThorDatabase>) -> Games {
        let ids = Arc::new(db.game_ids().collect());
        Games { db, ids, unreadable: Arc::default() }
    }

    /// The selected games.
    pub(crate) fn games(&self) -> Vec<ThorGame> {
        self.ids.iter().map(|&id| *self.db.game(id)).collect()
    }

    fn game(&self, i: usize) -> Game {
        Game { db: self.db.clone(), id: self.ids[i] }
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
            let games = Games { db: self.db.clone(), ids: Arc::new(ids), unreadable: self.unreadable.clone() };
            return Ok(Py::new(py, games)?.into_any());
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

    fn __repr__(&self) -> String {
        format!("<Games: {} of {} read>", self.ids.len(), self.db.games().len())
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
        Ok(Games { db: self.db.clone(), ids: Arc::new(kept), unreadable: self.unreadable.clone() })
    }

    /// The selected games ordered by ``key``: ``"year"`` (oldest first), ``"black"``,
    /// ``"white"``, ``"tournament"`` (by name) or ``"score"`` (highest black score
    /// first); stable, as ``thor games --sort``.
    #[pyo3(signature = (key = "year"))]
    fn sorted(&self, key: &str) -> PyResult<Games> {
        let key: SortKey = key.parse().map_err(errors::setting)?;
        let mut ids = (*self.ids).clone();
        self.db.sort_games(&mut ids, key);
        Ok(Games { db: self.db.clone(), ids: Arc::new(ids), unreadable: self.unreadable.clone() })
    }

    /// The statistics of a position (default: the start) over the selected games, as
    /// ``thor stats --json``: games, wins, draws, average and median scores, and each
    /// move played with its share and results (symmetric images merged).
    #[pyo3(signature = (position = None))]
    fn stats<'py>(&self, py: Python<'py>, position: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let pos = position_arg(position)?;
        let db = if self.ids.len() == self.db.games().len() {
            self.db.clone()
        } else {
            let mut db = (*self.db).clone();
            let keep: std::collections::HashSet<(u32, u32)> =
                self.ids.iter().map(|&id| (self.db.game(id).file, self.db.game(id).record)).collect();
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
    /// beside). Each file is written atomically and durably. Returns the paths written.
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
    /// ``pandas.DataFrame``): year, tournament, black, white, black_score,
    /// theoretical_score, theoretical_depth, outcome, moves, file, record. Unknown
    /// values are ``None``.
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let db = &self.db;
        let games: Vec<&ThorGame> = self.ids.iter().map(|&id| db.game(id)).collect();
        let table = PyDict::new(py);
        table.set_item("year", games.iter().map(|g| g.known_year()).collect::<Vec<_>>())?;
        table.set_item(
            "tournament",
            games.iter().map(|g| g.tournament.map(|_| db.tournament_name(g))).collect::<Vec<_>>(),
        )?;
        table.set_item("black", games.iter().map(|g| g.black.map(|_| db.black_name(g))).collect::<Vec<_>>())?;
        table.set_item("white", games.iter().map(|g| g.white.map(|_| db.white_name(g))).collect::<Vec<_>>())?;
        table.set_item("black_score", games.iter().map(|g| g.black_discs()).collect::<Vec<_>>())?;
        table.set_item("theoretical_score", games.iter().map(|g| g.theoretical_discs()).collect::<Vec<_>>())?;
        table.set_item(
            "theoretical_depth",
            games.iter().map(|g| (g.depth > 0).then_some(g.depth)).collect::<Vec<_>>(),
        )?;
        table.set_item("outcome", games.iter().map(|g| outcome_name(g.outcome())).collect::<Vec<_>>())?;
        table.set_item("moves", games.iter().map(|g| g.transcript()).collect::<Vec<_>>())?;
        table.set_item("file", games.iter().map(|g| db.files()[g.file as usize].name.clone()).collect::<Vec<_>>())?;
        table.set_item("record", games.iter().map(|g| g.record).collect::<Vec<_>>())?;
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
    fn positions<'py>(&self, py: Python<'py>, planes: Option<u8>) -> PyResult<Bound<'py, PyDict>> {
        if !matches!(planes, None | Some(2) | Some(3)) {
            return Err(errors::setting("planes is 2 (mine, theirs) or 3 (and the legal moves)"));
        }
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
    filter.years = match years {
        None => None,
        Some(y) => Some(match y.extract::<u16>() {
            Ok(one) => (one, one),
            Err(_) => {
                let (a, b): (u16, u16) = y.extract()?;
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
        self.db.game(self.id)
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

    /// Black's name (``None`` when the source has none).
    #[getter]
    fn black(&self) -> Option<String> {
        let g = self.game();
        g.black.map(|_| self.db.black_name(g))
    }

    /// White's name.
    #[getter]
    fn white(&self) -> Option<String> {
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

    /// Black's discs at the end (empties to the winner), when known.
    #[getter]
    fn black_score(&self) -> Option<u8> {
        self.game().black_discs()
    }

    /// Black's discs under perfect play from ``theoretical_depth`` empties, when known.
    #[getter]
    fn theoretical_score(&self) -> Option<u8> {
        self.game().theoretical_discs()
    }

    /// The empties at which the theoretical score was computed.
    #[getter]
    fn theoretical_depth(&self) -> Option<u8> {
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
        self.db.files()[self.game().file as usize].name.clone()
    }

    /// 0-based record index in a WTHOR file; 1-based line of a text file.
    #[getter]
    fn record(&self) -> u32 {
        self.game().record
    }

    /// The positions of the game, from the start to the final position.
    fn positions(&self) -> PyResult<Vec<Position>> {
        let mut pos = thorbook::Position::START;
        let mut out = vec![Position::from(pos)];
        for (i, mv) in self.game().moves_with_passes().into_iter().enumerate() {
            pos = pos.try_play(mv, i + 1).map_err(|e| errors::illegal(&e))?;
            out.push(Position::from(pos));
        }
        Ok(out)
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

    fn __repr__(&self) -> String {
        let g = self.game();
        let name = |n: Option<String>| n.unwrap_or_else(|| "?".to_string());
        let score = g.black_discs().map_or("?".to_string(), |b| format!("{}-{}", b, 64 - b));
        format!(
            "<Game {} {} vs {} {}: {}>",
            g.known_year().map_or("?".into(), |y| y.to_string()),
            name(self.black()),
            name(self.white()),
            score,
            g.transcript()
        )
    }
}
