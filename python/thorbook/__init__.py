"""thorbook: Othello (Reversi) positions, WTHOR/GGF archives, datasets for learning,
opening books and an engine, at Rust speed.

Squares are numbered a1 = 0, b1 = 1, …, h8 = 63 (``row * 8 + column``); moves are
``"f5"`` strings or those indices, 64 a pass. Scores are disc differences.
"""

import os
from typing import Any, Dict, Iterator, Optional, Union

import numpy as np

from thorbook._errors import (
    ArchiveError,
    BookFileError,
    Error,
    FileError,
    IllegalMoveError,
    SettingError,
)
from thorbook._thorbook import (
    Book,
    Engine,
    Game,
    Games,
    Position,
    index_to_move,
    label_book,
    label_exact,
    label_search,
    move_to_index,
    planes,
    random_games,
    read_games,
    selfplay_games,
)

__all__ = [
    "ArchiveError",
    "Book",
    "BookFileError",
    "Engine",
    "Error",
    "FileError",
    "Game",
    "Games",
    "IllegalMoveError",
    "PAD",
    "PASS",
    "Position",
    "SettingError",
    "index_to_move",
    "label_book",
    "label_exact",
    "label_search",
    "move_to_index",
    "planes",
    "random_game_batches",
    "random_games",
    "read_games",
    "selfplay_games",
    "unpack_masks",
    "write_random_games",
]

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
        raise SettingError("batch_size is at least 1")
    first = 0
    while first < n:
        count = min(batch_size, n - first)
        yield random_games(count, seed=seed, first=first, boards=boards, legal=legal)
        first += count


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
    ``lengths.npy``, ``final_score.npy``, and ``boards.npy``/``legal.npy`` when asked
    for), batch by batch through memory maps, for sets larger than memory. Each file
    is written under a temporary name and renamed when complete. ``progress(done,
    total)`` is called after each batch. Returns the paths."""
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    shapes = {"tokens": ((n, 60), np.uint8), "lengths": ((n,), np.uint8), "final_score": ((n,), np.int8)}
    if boards is not None:
        shapes["boards"] = ((n, 60, 64), np.uint8)
    if legal:
        shapes["legal"] = ((n, 60), np.uint64)
    maps = {}
    paths = {}
    for name, (shape, dtype) in shapes.items():
        paths[name] = os.path.join(directory, f"{name}.npy")
        maps[name] = np.lib.format.open_memmap(paths[name] + ".part", mode="w+", dtype=dtype, shape=shape)
    first = 0
    for batch in random_game_batches(n, batch_size, seed=seed, boards=boards, legal=legal):
        count = len(batch["lengths"])
        for name, array in batch.items():
            maps[name][first : first + count] = array
        first += count
        if progress is not None:
            progress(first, n)
    for name, m in maps.items():
        m.flush()
        del m
        os.replace(paths[name] + ".part", paths[name])
    return paths
