"""The shapes of the dicts thorbook returns, as ``TypedDict`` s: what an editor
completes and a type checker checks. The keys are those of the command line's
``--json`` for the same question."""

import sys
from typing import List, Optional

if sys.version_info >= (3, 11):
    from typing import Literal, NotRequired, TypedDict
else:  # pragma: no cover - Python 3.9 and 3.10
    from typing_extensions import Literal, NotRequired, TypedDict


class SearchResult(TypedDict):
    """A search (``Engine.search``, ``Engine.solve``): the best move (``None`` when the
    side to move must pass and the search says so by ``"pass"``), its score in discs for
    the side to move, the depth reached, whether the score is exact, nodes, seconds and
    the principal variation."""

    move: Optional[str]
    score: Optional[int]
    depth: int
    exact: bool
    nodes: int
    seconds: float
    pv: List[str]


class BestMove(TypedDict):
    """The engine's move (``Engine.best_move``): a ``SearchResult`` and where it came
    from."""

    move: str
    score: int
    depth: int
    exact: bool
    nodes: int
    seconds: float
    pv: List[str]
    source: Literal["book", "search", "forced"]


class Trust(TypedDict):
    """How far a book value can be believed: ``exact`` (proven), the depth of the leaf
    that decides it and how far below it lies, the standard deviation of that leaf's
    score in discs (``None`` when no searched leaf decides), and the grade shown."""

    exact: bool
    leaf_depth: int
    leaf_below: int
    uncertainty: Optional[float]
    grade: str


class BookMove(TypedDict):
    """One move of a book position (``Book.moves``, ``Book.query``)."""

    move: str
    score: int
    in_book: bool
    leaf: bool
    depth: Optional[int]
    exact: bool
    games: int
    black_win_rate: Optional[float]
    trust: Trust


class BookQuery(TypedDict):
    """What a book says of a position (``Book.query``), as ``book query --json``."""

    board: str
    side_to_move: Literal["black", "white"]
    in_book: bool
    value: Optional[int]
    games: int
    moves: List[BookMove]
    not_in_book: List[str]
    line: str
    opening: Optional[str]


class MoveStats(TypedDict):
    """One move played from a position in the archives (``Games.stats``)."""

    move: str
    games: int
    share: float
    black_wins: int
    draws: int
    black_win_rate: Optional[float]
    average_black_discs: Optional[float]


class PositionStats(TypedDict):
    """The games that reach a position (``Games.stats``), as ``thor stats --json``:
    results from black's side, black's final disc counts, and every move played."""

    games: int
    results_unknown: int
    black_wins: int
    draws: int
    white_wins: int
    average_black_discs: Optional[float]
    median_black_discs: Optional[float]
    ended_here: int
    moves: List[MoveStats]
    opening: NotRequired[Optional[str]]


class BookParams(TypedDict):
    """How a book was built (``Book.params``)."""

    max_ply: int
    min_games: int
    depth: int
    exact_at: int
    selectivity_tenths: int
    back_up: str
    eval_digest: int


__all__ = [
    "BestMove",
    "BookMove",
    "BookParams",
    "BookQuery",
    "MoveStats",
    "PositionStats",
    "SearchResult",
    "Trust",
]
