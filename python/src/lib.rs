//! `thorbook` for Python: the library's public API, wrapped for notebooks and training
//! pipelines. Every call goes through the public Rust surface (`api/public-api.txt`);
//! nothing here reaches the crate's internals, so what Python users can do is what the
//! Rust API offers.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use thorbook::board::Squares;
use thorbook::square::{Move, Square};
use thorbook::{Color, Position as RsPosition, Transform};

/// An Othello position: the discs and the side to move. Immutable: `play` and
/// `pass_` return new positions.
#[pyclass(frozen, eq, hash, module = "thorbook")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Position {
    inner: RsPosition,
}

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A move given as `"f5"`, `"pass"`/`"PA"`, or a square index 0..=63 (64: pass).
fn parse_move(mv: &Bound<'_, PyAny>) -> PyResult<Move> {
    if let Ok(index) = mv.extract::<u8>() {
        return match index {
            64 => Ok(Move::Pass),
            i => Square::try_new(i)
                .map(Move::Place)
                .ok_or_else(|| value_error(format!("{i} is not a square index (0..=63, 64 a pass)"))),
        };
    }
    let text: String = mv.extract()?;
    text.parse::<Move>().map_err(|e| value_error(format!("{text:?}: {e}")))
}

fn move_index(mv: Move) -> u8 {
    match mv {
        Move::Place(sq) => sq.index() as u8,
        Move::Pass => 64,
    }
}

#[pymethods]
impl Position {
    /// The start position, or the position after `moves` (`"f5d6c3"`, passes
    /// inferred) from it.
    #[new]
    #[pyo3(signature = (moves = ""))]
    fn new(moves: &str) -> PyResult<Position> {
        RsPosition::from_moves(moves).map(|inner| Position { inner }).map_err(value_error)
    }

    /// The position of FFO/Edax board text: 64 squares of `X`, `O`, `-` then the side
    /// to move.
    #[staticmethod]
    fn from_board_text(text: &str) -> PyResult<Position> {
        RsPosition::parse_board_text(text).map(|inner| Position { inner }).map_err(value_error)
    }

    /// The legal moves of the side to move as `"f5"` strings (empty when it must pass).
    fn legal_moves(&self) -> Vec<String> {
        Squares(self.inner.board.legal_moves()).map(|sq| sq.to_string()).collect()
    }

    /// The legal moves as a 64-bit mask of square indices (a1 = 0, h8 = 63).
    fn legal_mask(&self) -> u64 {
        self.inner.board.legal_moves()
    }

    /// The position after `mv` (`"f5"`, a square index, or `"pass"` when the side to
    /// move has no move); `ValueError` when it is not legal.
    fn play(&self, mv: &Bound<'_, PyAny>) -> PyResult<Position> {
        let mv = parse_move(mv)?;
        self.inner.try_play(mv, 1).map(|inner| Position { inner }).map_err(value_error)
    }

    /// The position after the side to move passes.
    fn pass_(&self) -> Position {
        Position { inner: self.inner.pass() }
    }

    /// Whether neither side can move.
    fn is_game_over(&self) -> bool {
        self.inner.board.is_game_over()
    }

    /// Whether the side to move has no legal move (but the game goes on or is over).
    fn must_pass(&self) -> bool {
        self.inner.board.legal_moves() == 0
    }

    /// `"black"` or `"white"`.
    #[getter]
    fn side_to_move(&self) -> &'static str {
        match self.inner.side {
            Color::Black => "black",
            Color::White => "white",
        }
    }

    /// Black's discs as a 64-bit mask.
    #[getter]
    fn black(&self) -> u64 {
        self.inner.black()
    }

    /// White's discs as a 64-bit mask.
    #[getter]
    fn white(&self) -> u64 {
        self.inner.white()
    }

    /// (black discs, white discs).
    fn discs(&self) -> (u32, u32) {
        (self.inner.black().count_ones(), self.inner.white().count_ones())
    }

    /// Empty squares.
    #[getter]
    fn empties(&self) -> u32 {
        self.inner.board.empty_count()
    }

    /// The Zobrist key of the board as the side to move sees it.
    fn key(&self) -> u64 {
        self.inner.board.key()
    }

    /// The key shared by the board's 8 symmetric images (what books are keyed by).
    fn canonical_key(&self) -> u64 {
        self.inner.board.canonical_key()
    }

    /// The 8 symmetric images of the position (the identity first).
    fn symmetries(&self) -> Vec<Position> {
        Transform::ALL
            .into_iter()
            .map(|t| Position { inner: RsPosition { board: t.board(&self.inner.board), side: self.inner.side } })
            .collect()
    }

    /// The board as FFO/Edax text (`X` black, `O` white, `-` empty, then the side).
    fn board_text(&self) -> String {
        self.inner.to_board_text()
    }

    fn __str__(&self) -> String {
        self.inner.diagram()
    }

    fn __repr__(&self) -> String {
        format!("Position.from_board_text({:?})", self.inner.to_board_text())
    }
}

/// The square index of a move string (`"f5"` is 37, a pass 64).
#[pyfunction]
fn move_to_index(mv: &Bound<'_, PyAny>) -> PyResult<u8> {
    parse_move(mv).map(move_index)
}

/// The native module; `thorbook/__init__.py` re-exports it.
#[pymodule]
fn _thorbook(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Position>()?;
    m.add_function(wrap_pyfunction!(move_to_index, m)?)?;
    Ok(())
}
