//! Datasets for learning: synthetic games, planes, and labels (exact, search, book).

use std::borrow::Cow;

use numpy::{IntoPyArray, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use thorbook::board::Board;
use thorbook::dataset::{self, BoardEncoding};
use thorbook::search::Level;
use thorbook::work::StopHandle;

use crate::book::Book;
use crate::errors;
use crate::run::job;

/// ``n`` games of uniformly random legal moves (the Othello-GPT recipe), game ``i``
/// drawn from ``seed`` and ``first + i`` only (so batches concatenate to the same
/// set): a dict of numpy arrays —
/// ``tokens`` (``uint8`` n×60: squares 0–63, a1 = 0, h8 = 63; 65 pads after the end;
/// passes are not tokens, the other side simply plays again), ``lengths``, and
/// ``black_disc_difference`` (black's discs minus white's at the end, empties to the
/// winner, ``int8``). ``boards="black_white"`` (0 empty, 1 black, 2 white) or
/// ``"mine_theirs"`` (relative to the side to move next) adds ``boards``, ``uint8``
/// n×60×64, the board after each token; ``legal=True`` adds ``legal``, ``uint64``
/// n×60, the legal moves after each token. Made on every core, the GIL released;
/// Ctrl-C raises ``KeyboardInterrupt``.
#[pyfunction]
#[pyo3(signature = (n, *, seed = 0, first = 0, boards = None, legal = false))]
pub(crate) fn random_games<'py>(
    py: Python<'py>,
    n: i128,
    seed: i128,
    first: i128,
    boards: Option<&str>,
    legal: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let n: usize = errors::int_arg("n", n, 0, i128::from(u32::MAX))?;
    let seed: u64 = errors::int_arg("seed", seed, 0, i128::from(u64::MAX))?;
    let first: u64 = errors::int_arg("first", first, 0, i128::from(u64::MAX) - n as i128)?;
    let encoding = encoding(n, boards)?;
    let stop = StopHandle::new();
    let games = job(py, &stop, None, |_| {
        // In chunks, so that Ctrl-C is seen between them: game `i` depends on `i`
        // only, so the chunks concatenate to the set made at once.
        let mut all = dataset::random_games(seed, first, 0, encoding, legal);
        let mut done = 0usize;
        while done < n && !stop.is_stopped() {
            let count = RANDOM_CHUNK.min(n - done);
            let chunk = dataset::random_games(seed, first + done as u64, count, encoding, legal);
            all.tokens.extend_from_slice(&chunk.tokens);
            all.lengths.extend_from_slice(&chunk.lengths);
            all.final_score.extend_from_slice(&chunk.final_score);
            all.boards.extend_from_slice(&chunk.boards);
            all.legal.extend_from_slice(&chunk.legal);
            done += count;
        }
        all
    })?;
    games_dict(py, games, n, encoding.is_some(), legal)
}

/// Games made between two looks at Ctrl-C (about a tenth of a second of work).
const RANDOM_CHUNK: usize = 100_000;

/// The board encoding a `boards=` argument names, for `n` games.
fn encoding(n: usize, boards: Option<&str>) -> PyResult<Option<BoardEncoding>> {
    let encoding = match boards {
        None => None,
        Some("black_white") => Some(BoardEncoding::BlackWhite),
        Some("mine_theirs") => Some(BoardEncoding::MineTheirs),
        Some(other) => return Err(errors::setting(format!("boards={other:?}: \"black_white\" or \"mine_theirs\""))),
    };
    if encoding.is_some() && n.checked_mul(dataset::GAME_TOKENS * 64).is_none_or(|b| b > (1 << 40)) {
        return Err(errors::setting(format!("{n} games' boards would not fit in memory: ask for batches")));
    }
    Ok(encoding)
}

/// Synthetic games as a dict of numpy arrays.
fn games_dict(
    py: Python<'_>,
    games: dataset::RandomGames,
    n: usize,
    with_boards: bool,
    legal: bool,
) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    let dataset::RandomGames { tokens, lengths, final_score, boards, legal: legal_masks, .. } = games;
    out.set_item("tokens", tokens.into_pyarray(py).reshape([n, dataset::GAME_TOKENS])?)?;
    out.set_item("lengths", lengths.into_pyarray(py))?;
    out.set_item("black_disc_difference", final_score.into_pyarray(py))?;
    if with_boards {
        out.set_item("boards", boards.into_pyarray(py).reshape([n, dataset::GAME_TOKENS, 64])?)?;
    }
    if legal {
        out.set_item("legal", legal_masks.into_pyarray(py).reshape([n, dataset::GAME_TOKENS])?)?;
    }
    Ok(out)
}

/// A column as a slice: borrowed when contiguous, else copied (a reversed or strided
/// view).
pub(crate) fn column<'a>(array: &'a PyReadonlyArray1<'_, u64>) -> Cow<'a, [u64]> {
    match array.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(array.as_array().iter().copied().collect()),
    }
}

/// The boards of two bitboard columns of equal length, checked (no square of both).
pub(crate) fn boards_of(
    player: &PyReadonlyArray1<'_, u64>,
    opponent: &PyReadonlyArray1<'_, u64>,
) -> PyResult<Vec<Board>> {
    let (p, o) = (column(player), column(opponent));
    if p.len() != o.len() {
        return Err(errors::setting(format!("player has {} rows, opponent {}", p.len(), o.len())));
    }
    boards(&p, &o)
}

/// ``n`` games of self-play at ``level`` (1–14; the bundled evaluation, one thread per
/// game, every core busy), in the form of ``random_games``: the first
/// ``random_plies`` moves are drawn uniformly so that games differ (they are
/// ``random_games``' own first moves), the rest are the search's best. Game ``i``
/// depends only on ``seed``, ``first + i``, the level and ``random_plies``.
/// ``progress`` as for the labels; Ctrl-C stops it (``KeyboardInterrupt``).
#[pyfunction]
#[pyo3(signature = (n, *, level = 4, random_plies = 8, seed = 0, first = 0, boards = None, legal = false, progress = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn selfplay_games<'py>(
    py: Python<'py>,
    n: i128,
    level: i128,
    random_plies: i128,
    seed: i128,
    first: i128,
    boards: Option<&str>,
    legal: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let n: usize = errors::int_arg("n", n, 0, i128::from(u32::MAX))?;
    let level = Level::new(errors::int_arg("level", level, 1, 14)?).map_err(errors::setting)?;
    let random_plies: u32 = errors::int_arg("random_plies", random_plies, 0, 60)?;
    let seed: u64 = errors::int_arg("seed", seed, 0, i128::from(u64::MAX))?;
    let first: u64 = errors::int_arg("first", first, 0, i128::from(u64::MAX) - n as i128)?;
    let encoding = encoding(n, boards)?;
    let stop = StopHandle::new();
    let games = job(py, &stop, progress, |report| {
        let mut games = dataset::SelfPlayGames::default();
        (games.seed, games.first, games.count, games.level) = (seed, first, n, level);
        (games.random_plies, games.boards, games.legal) = (random_plies, encoding, legal);
        dataset::self_play_games(&games, &stop, &|p| report.report(p.done, p.total))
    })?
    .map_err(|e| errors::label(&e))?;
    games_dict(py, games, n, encoding.is_some(), legal)
}

/// Board planes for convolutional nets: ``uint8`` N×2×8×8 (the side to move's discs,
/// the other's), or N×3×8×8 with ``legal``; ``[rank][file]`` from a1.
#[pyfunction]
#[pyo3(signature = (player, opponent, legal = None))]
pub(crate) fn planes<'py>(
    py: Python<'py>,
    player: PyReadonlyArray1<'py, u64>,
    opponent: PyReadonlyArray1<'py, u64>,
    legal: Option<PyReadonlyArray1<'py, u64>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (p, o) = (column(&player), column(&opponent));
    let l = legal.as_ref().map(column);
    if p.len() != o.len() || l.as_ref().is_some_and(|l| l.len() != p.len()) {
        return Err(errors::setting("player, opponent and legal have different numbers of rows"));
    }
    let n = p.len();
    let per = if l.is_some() { 3 } else { 2 };
    let out = py.detach(|| dataset::planes(&p, &o, l.as_deref()));
    Ok(out.into_pyarray(py).reshape([n, per, 8, 8])?.into_any())
}

/// The boards of two bitboard columns, checked (no square of both).
fn boards(p: &[u64], o: &[u64]) -> PyResult<Vec<Board>> {
    p.iter()
        .zip(o)
        .enumerate()
        .map(|(i, (&p, &o))| {
            Board::new(p, o).ok_or_else(|| errors::setting(format!("row {i}: player and opponent overlap")))
        })
        .collect()
}

/// The most empties ``label_exact`` solves: a position of 29 empties takes about 200
/// CPU-seconds, and each square more about twice that.
const LABEL_EXACT_MAX_EMPTIES: i128 = 30;

/// Exact scores (disc difference for the side to move, perfect play) of the positions
/// with at most ``max_empties`` empties (at most 30: a solve at 30 empties takes
/// minutes, each square more twice that), by the solver on all cores: a dict of
/// ``score`` (``int8``) and ``known`` (``bool``, false above ``max_empties``).
/// ``progress`` is a callable ``f(done, total)`` or a ``tqdm`` bar; Ctrl-C raises
/// ``KeyboardInterrupt``.
#[pyfunction]
#[pyo3(signature = (player, opponent, *, max_empties = 20, progress = None))]
pub(crate) fn label_exact<'py>(
    py: Python<'py>,
    player: PyReadonlyArray1<'py, u64>,
    opponent: PyReadonlyArray1<'py, u64>,
    max_empties: i128,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let max_empties: u32 = errors::int_arg("max_empties", max_empties, 0, LABEL_EXACT_MAX_EMPTIES)?;
    let boards = boards_of(&player, &opponent)?;
    let stop = StopHandle::new();
    let scores = job(py, &stop, progress, |report| {
        dataset::exact_scores(&boards, max_empties, &stop, &|p| report.report(p.done, p.total))
    })?
    .map_err(|e| errors::label(&e))?;
    let out = PyDict::new(py);
    out.set_item("score", scores.iter().map(|s| s.unwrap_or(0)).collect::<Vec<i8>>().into_pyarray(py))?;
    out.set_item("known", scores.iter().map(Option::is_some).collect::<Vec<bool>>().into_pyarray(py))?;
    Ok(out)
}

/// Scores of a search at ``level`` (1–14, the bundled evaluation, one thread per
/// position, every core busy) in discs for the side to move (``int16``); each search
/// starts from an empty table, so a score depends only on the position and level.
/// ``progress`` and Ctrl-C as for ``label_exact``.
#[pyfunction]
#[pyo3(signature = (player, opponent, *, level = 10, progress = None))]
pub(crate) fn label_search<'py>(
    py: Python<'py>,
    player: PyReadonlyArray1<'py, u64>,
    opponent: PyReadonlyArray1<'py, u64>,
    level: i128,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let level = Level::new(errors::int_arg("level", level, 1, 14)?).map_err(errors::setting)?;
    let boards = boards_of(&player, &opponent)?;
    let stop = StopHandle::new();
    let scores = job(py, &stop, progress, |report| {
        dataset::search_scores(&boards, level, &stop, &|p| report.report(p.done, p.total))
    })?
    .map_err(|e| errors::label(&e))?;
    Ok(scores.into_pyarray(py).into_any())
}

/// Book values of the positions (``int16``, discs for the side to move) with their
/// trust: ``known`` (a book position), ``exact`` (proven), ``uncertainty`` (the
/// standard deviation in discs of the deciding leaf's score: 0 when proven, NaN when
/// unknown) and ``leaf_depth``.
#[pyfunction]
pub(crate) fn label_book<'py>(
    py: Python<'py>,
    book: &Book,
    player: PyReadonlyArray1<'py, u64>,
    opponent: PyReadonlyArray1<'py, u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let boards = boards_of(&player, &opponent)?;
    let labels = py.detach(|| dataset::book_labels(&book.inner, &boards));
    let out = PyDict::new(py);
    let value: Vec<i16> = labels.iter().map(|l| l.as_ref().map_or(0, |l| l.value as i16)).collect();
    let known: Vec<bool> = labels.iter().map(Option::is_some).collect();
    let exact: Vec<bool> = labels.iter().map(|l| l.as_ref().is_some_and(|l| l.trust.exact)).collect();
    let sd: Vec<f32> = labels.iter().map(|l| l.as_ref().map_or(f32::NAN, |l| l.trust.uncertainty as f32)).collect();
    let depth: Vec<u8> = labels.iter().map(|l| l.as_ref().map_or(0, |l| l.trust.leaf_depth)).collect();
    out.set_item("value", value.into_pyarray(py))?;
    out.set_item("known", known.into_pyarray(py))?;
    out.set_item("exact", exact.into_pyarray(py))?;
    out.set_item("uncertainty", sd.into_pyarray(py))?;
    out.set_item("leaf_depth", depth.into_pyarray(py))?;
    Ok(out)
}
