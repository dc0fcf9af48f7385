"""thorbook: Othello (Reversi) positions, WTHOR/GGF archives, datasets for learning,
opening books and an engine, at Rust speed.

Squares are numbered a1 = 0, b1 = 1, …, h8 = 63 (``row * 8 + column``); moves are
``"f5"`` strings or those indices, 64 a pass. A *score* is always a disc difference
for the side to move at the end of the game (empty squares to the winner); a count of
discs is named ``…_discs``; bitboards are ``uint64`` masks named ``…_bitboard`` or
``player``/``opponent``.

Every call that runs for long releases the GIL, runs on every core, and raises
``KeyboardInterrupt`` on Ctrl-C; ``progress=`` takes a callable ``f(done, total)`` or
a ``tqdm`` bar.
"""

import collections.abc
import os
from typing import Any, Dict, Iterator, Optional, Union

import numpy as np

from thorbook._errors import (
    ArchiveError,
    ArchiveWarning,
    BookFileError,
    Error,
    FileError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    MoveError,
    ResumeError,
    SettingError,
    WeightsFileError,
)
from thorbook._thorbook import (
    Book,
    Engine,
    Game,
    Games,
    Position,
    Review,
    index_to_move,
    label_book,
    label_exact,
    label_search,
    move_to_index,
    planes,
    random_games,
    read_games,
    review_games,
    selfplay_games,
)
from thorbook._types import BestMove, BookMove, BookParams, BookQuery, MoveStats, PositionStats, SearchResult, Trust

__version__ = "0.1.0"

__all__ = [
    "ArchiveError",
    "ArchiveWarning",
    "BestMove",
    "Book",
    "BookFileError",
    "BookMove",
    "BookParams",
    "BookQuery",
    "Engine",
    "Error",
    "FileError",
    "Game",
    "Games",
    "IllegalMoveError",
    "InvalidMoveError",
    "InvalidPositionError",
    "MoveError",
    "MoveStats",
    "PAD",
    "PASS",
    "Position",
    "PositionStats",
    "ResumeError",
    "Review",
    "SearchResult",
    "SettingError",
    "Trust",
    "WeightsFileError",
    "index_to_move",
    "label_book",
    "label_exact",
    "label_search",
    "move_to_index",
    "planes",
    "random_game_batches",
    "random_games",
    "read_games",
    "review_games",
    "selfplay_games",
    "unpack_masks",
    "write_random_games",
]

# A selection of games is a full sequence: len, indexing, slicing, iteration,
# reversed, in, index and count, as a list or a tuple.
collections.abc.Sequence.register(Games)

#: The move code of a pass (``move`` columns).
PASS = 64
#: The token after a synthetic game's end.
PAD = 65


def unpack_masks(masks: np.ndarray) -> np.ndarray:
    """64-bit square masks (any shape) as booleans with a last axis of 64 squares,
    a1 first."""
    masks = np.asarray(masks, dtype=np.uint64)
    bits = (masks[..., None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    return bits.astype(bool)


def random_game_batches(
    n: int,
    batch_size: int = 100_000,
    *,
    seed: int = 0,
    boards: Optional[str] = None,
    legal: bool = False,
) -> Iterator[Dict[str, np.ndarray]]:
    """``random_games(n, seed=seed, …)`` in batches of ``batch_size`` games: the
    batches concatenate to the same set, whatever their size."""
    if batch_size < 1:
        raise SettingError(f"batch_size must be at least 1, got {batch_size}")
    first = 0
    while first < n:
        count = min(batch_size, n - first)
        yield random_games(count, seed=seed, first=first, boards=boards, legal=legal)
        first += count


def _report(progress: Any, done: int, total: int, state: Dict[str, int]) -> None:
    """Tells ``progress`` that ``done`` of ``total`` are done: a callable is called with
    both, a ``tqdm``-like bar gets its total and the increment (as the native calls
    report)."""
    if progress is None:
        return
    if callable(progress):
        progress(done, total)
        return
    progress.total = total
    progress.update(done - state.get("done", 0))
    state["done"] = done


def write_random_games(
    directory: Union[str, "os.PathLike[str]"],
    n: int,
    *,
    seed: int = 0,
    boards: Optional[str] = None,
    legal: bool = False,
    batch_size: int = 100_000,
    progress: Any = None,
) -> Dict[str, str]:
    """Writes ``n`` random games to ``.npy`` files in ``directory`` (``tokens.npy``,
    ``lengths.npy``, ``black_disc_difference.npy``, and ``boards.npy``/``legal.npy``
    when asked for), batch by batch through memory maps, for sets larger than memory
    (each game takes 61 bytes, and 3,840 more with ``boards``). Each file is written
    under a temporary name and renamed when all are complete: an error or Ctrl-C
    leaves none of them behind. ``progress`` is a callable ``f(done, total)`` or a
    ``tqdm`` bar. Returns the paths."""
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    shapes = {
        "tokens": ((n, 60), np.uint8),
        "lengths": ((n,), np.uint8),
        "black_disc_difference": ((n,), np.int8),
    }
    if boards is not None:
        shapes["boards"] = ((n, 60, 64), np.uint8)
    if legal:
        shapes["legal"] = ((n, 60), np.uint64)
    paths = {name: os.path.join(directory, f"{name}.npy") for name in shapes}
    maps: Dict[str, Any] = {}
    try:
        for name, (shape, dtype) in shapes.items():
            maps[name] = np.lib.format.open_memmap(paths[name] + ".part", mode="w+", dtype=dtype, shape=shape)
        first = 0
        state: Dict[str, int] = {}
        for batch in random_game_batches(n, batch_size, seed=seed, boards=boards, legal=legal):
            count = len(batch["lengths"])
            for name, array in batch.items():
                maps[name][first : first + count] = array
            first += count
            _report(progress, first, n, state)
        for m in maps.values():
            m.flush()
    except BaseException:
        maps.clear()
        for path in paths.values():
            try:
                os.remove(path + ".part")
            except FileNotFoundError:
                pass
        raise
    maps.clear()
    for path in paths.values():
        os.replace(path + ".part", path)
    return paths
