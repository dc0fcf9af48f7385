//! `Position`: an immutable Othello position, its moves, symmetries and drawing.

use pyo3::prelude::*;

use thorbook::board::{Board, Squares};
use thorbook::square::{Move, Square};
use thorbook::{Color, Position as RsPosition, PositionError, Transform};

use crate::errors;

/// An Othello position: the discs and the side to move. Immutable and hashable:
/// ``play`` and ``pass_`` return new positions; positions pickle and copy.
/// ``Position()`` is the start; ``Position("f5d6c3")`` the position after those moves
/// (passes inferred): ``InvalidMoveError`` for text that is not moves,
/// ``IllegalMoveError`` (with its ``ply``) for a move that is not legal.
#[pyclass(frozen, eq, hash, module = "thorbook")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Position {
    pub(crate) inner: RsPosition,
}

impl From<RsPosition> for Position {
    fn from(inner: RsPosition) -> Position {
        Position { inner }
    }
}

/// The exception of a move sequence that cannot be read or played: an
/// `InvalidMoveError` for text that is not moves, an `IllegalMoveError` (with its ply)
/// for a move that is not legal where it comes.
pub(crate) fn position_error(e: PositionError) -> PyErr {
    match &e {
        PositionError::Play(p) => errors::illegal(p),
        _ => errors::invalid_move(e.to_string()),
    }
}

/// A move given as ``"f5"``, ``"pass"``/``"PA"``, or a square index from 0 to 63 (64:
/// a pass); anything else is an `InvalidMoveError`.
pub(crate) fn parse_move(mv: &Bound<'_, PyAny>) -> PyResult<Move> {
    if let Ok(index) = mv.extract::<i128>() {
        return match index {
            64 => Ok(Move::Pass),
            i => u8::try_from(i)
                .ok()
                .and_then(Square::try_new)
                .map(Move::Place)
                .ok_or_else(|| errors::invalid_move(format!("{i} is not a square index (0 to 63, 64 a pass)"))),
        };
    }
    let Ok(text) = mv.extract::<String>() else {
        let kind = mv.get_type().name().map_or_else(|_| "?".to_string(), |n| n.to_string());
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "a move is a string such as \"f5\" or a square index, not {kind}"
        )));
    };
    text.parse::<Move>().map_err(|e| errors::invalid_move(format!("{text:?}: {e}")))
}

/// A move's name: ``"f5"`` or ``"pass"``.
pub(crate) fn move_name(mv: Move) -> String {
    match mv {
        Move::Place(sq) => sq.to_string(),
        Move::Pass => "pass".to_string(),
    }
}

/// The position a Python argument names: a ``Position``, a move string, or ``None``
/// (the start).
pub(crate) fn position_arg(arg: Option<&Bound<'_, PyAny>>) -> PyResult<RsPosition> {
    match arg {
        None => Ok(RsPosition::START),
        Some(a) if a.is_none() => Ok(RsPosition::START),
        Some(a) => match a.cast::<Position>() {
            Ok(p) => Ok(p.get().inner),
            Err(_) => {
                let moves: String = a.extract()?;
                RsPosition::from_moves(&moves).map_err(position_error)
            }
        },
    }
}

/// The opening's name as the command line gives it: by the line when the argument
/// is moves (the longest named prefix), else by the position.
pub(crate) fn opening_name(arg: Option<&Bound<'_, PyAny>>, pos: &RsPosition) -> Option<&'static str> {
    let by_line = arg
        .and_then(|a| a.extract::<String>().ok())
        .map(|text| thorbook::square::parse_move_sequence(&text).ok().and_then(|m| thorbook::openings::name_line(&m)));
    match by_line {
        Some(named) => named.map(|o| o.name),
        None => thorbook::openings::at(&pos.board).map(|o| o.name),
    }
}

#[pymethods]
impl Position {
    #[new]
    #[pyo3(signature = (moves = ""))]
    fn new(moves: &str) -> PyResult<Position> {
        RsPosition::from_moves(moves).map(Position::from).map_err(position_error)
    }

    /// The position of FFO/Edax board text: 64 squares of ``X``, ``O``, ``-`` (a1 to
    /// h8, row by row), then the side to move.
    /// ``InvalidPositionError`` (a ``ValueError``) when the text is not a position.
    #[staticmethod]
    fn from_board_text(text: &str) -> PyResult<Position> {
        RsPosition::parse_board_text(text)
            .map(Position::from)
            .map_err(|e| Python::attach(|py| errors::raise(py, "InvalidPositionError", e.to_string(), &[])))
    }

    /// The position of two bitboards — the side to move's discs and the other's, as
    /// the dataset columns hold them — and the side to move.
    #[staticmethod]
    #[pyo3(signature = (player, opponent, white_to_move = false))]
    fn from_bitboards(player: u64, opponent: u64, white_to_move: bool) -> PyResult<Position> {
        let board = Board::new(player, opponent).ok_or_else(|| {
            Python::attach(|py| errors::raise(py, "InvalidPositionError", "the two bitboards overlap".into(), &[]))
        })?;
        Ok(Position { inner: RsPosition { board, side: if white_to_move { Color::White } else { Color::Black } } })
    }

    /// The legal moves of the side to move as ``"f5"`` strings, a1 first (empty when
    /// it must pass or the game is over).
    fn legal_moves(&self) -> Vec<String> {
        Squares(self.inner.board.legal_moves()).map(|sq| sq.to_string()).collect()
    }

    /// The legal moves as a 64-bit mask of square indices (a1 = 0, h8 = 63).
    fn legal_mask(&self) -> u64 {
        self.inner.board.legal_moves()
    }

    /// Whether ``mv`` (a move string or index) is legal here.
    fn is_legal(&self, mv: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.try_play(parse_move(mv)?).is_ok())
    }

    /// The position after ``mv`` (``"f5"``, a square index, or ``"pass"`` when the side
    /// to move has no move); ``IllegalMoveError`` when it is not legal.
    fn play(&self, mv: &Bound<'_, PyAny>) -> PyResult<Position> {
        let mv = parse_move(mv)?;
        self.inner.try_play(mv).map(Position::from).map_err(|e| errors::illegal_move(&e))
    }

    /// The position after the side to move passes (``IllegalMoveError`` when it has a
    /// move).
    fn pass_(&self) -> PyResult<Position> {
        self.inner.try_play(Move::Pass).map(Position::from).map_err(|e| errors::illegal_move(&e))
    }

    /// Whether neither side can move.
    fn is_game_over(&self) -> bool {
        self.inner.board.is_game_over()
    }

    /// Whether the side to move has no legal move while the other has one.
    fn must_pass(&self) -> bool {
        self.inner.board.must_pass()
    }

    /// ``"black"`` or ``"white"``.
    #[getter]
    fn side_to_move(&self) -> &'static str {
        match self.inner.side {
            Color::Black => "black",
            Color::White => "white",
        }
    }

    /// Black's discs as a bitboard (bit *i* is square *i*, a1 = 0).
    #[getter]
    fn black_bitboard(&self) -> u64 {
        self.inner.black()
    }

    /// White's discs as a bitboard.
    #[getter]
    fn white_bitboard(&self) -> u64 {
        self.inner.white()
    }

    /// The side to move's discs as a bitboard (the datasets' ``player`` column).
    #[getter]
    fn player(&self) -> u64 {
        self.inner.board.player
    }

    /// The other side's discs as a bitboard (the datasets' ``opponent`` column).
    #[getter]
    fn opponent(&self) -> u64 {
        self.inner.board.opponent
    }

    /// The disc counts ``(black, white)``.
    fn discs(&self) -> (u32, u32) {
        (self.inner.black().count_ones(), self.inner.white().count_ones())
    }

    /// Empty squares.
    #[getter]
    fn empties(&self) -> u32 {
        self.inner.board.empty_count()
    }

    /// The final disc difference for the side to move, empties to the winner (the
    /// score of a finished game).
    fn final_score(&self) -> i32 {
        self.inner.board.final_score()
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

    /// The image of the 8 with the smallest key: the same for every symmetric position.
    fn canonical(&self) -> Position {
        let (board, _) = self.inner.board.canonical();
        Position { inner: RsPosition { board, side: self.inner.side } }
    }

    /// The board as FFO/Edax text (``X`` black, ``O`` white, ``-`` empty, then the side).
    fn board_text(&self) -> String {
        self.inner.to_board_text()
    }

    /// The board as an SVG drawing, legal moves marked (``last_move`` ringed).
    #[pyo3(signature = (last_move = None))]
    #[allow(clippy::wrong_self_convention)] // Python methods take `&self`.
    fn to_svg(&self, last_move: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        let last = last_move.map(parse_move).transpose()?;
        Ok(self.inner.to_svg(last))
    }

    /// What a notebook draws.
    fn _repr_svg_(&self) -> String {
        self.inner.to_svg(None)
    }

    fn __str__(&self) -> String {
        self.inner.diagram()
    }

    fn __repr__(&self) -> String {
        format!("Position.from_board_text({:?})", self.inner.to_board_text())
    }

    /// Pickles as its board text (what ``repr`` shows).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let from_text = py.get_type::<Position>().getattr("from_board_text")?;
        Ok((from_text, (self.inner.to_board_text(),)))
    }

    /// A position is immutable: its copy is itself.
    fn __copy__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __deepcopy__<'py>(slf: PyRef<'py, Self>, _memo: &Bound<'py, PyAny>) -> PyRef<'py, Self> {
        slf
    }
}

/// The square index of a move (``"f5"`` is 37, a pass 64).
#[pyfunction]
pub(crate) fn move_to_index(mv: &Bound<'_, PyAny>) -> PyResult<u8> {
    parse_move(mv).map(|mv| match mv {
        Move::Place(sq) => sq.index() as u8,
        Move::Pass => 64,
    })
}

/// The move of a square index (37 is ``"f5"``, 64 ``"pass"``).
#[pyfunction]
pub(crate) fn index_to_move(index: &Bound<'_, PyAny>) -> PyResult<String> {
    parse_move(index).map(move_name)
}
