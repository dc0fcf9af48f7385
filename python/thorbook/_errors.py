"""The exceptions and warnings thorbook raises.

One base, ``Error``; ``ValueError`` subclasses for moves, positions and settings;
``OSError`` subclasses for files, which name the file (``filename``: its path, or
``None`` for the data bundled with thorbook) and, where the library knows it, the
game record, line, byte and ply. Beside them thorbook raises Python's own
``MemoryError`` (a table or buffer that cannot be had), ``TimeoutError`` (a limit
reached before an exact answer), ``RuntimeError`` (what no argument could avoid) and
``KeyboardInterrupt`` (Ctrl-C), whose ``partial`` attribute holds what a search had
found when it carries one.
"""

from typing import Any, Dict, Optional


class Error(Exception):
    """Base of every error of thorbook's own classes."""


class MoveError(Error, ValueError):
    """A move that cannot be made: not a move at all (``InvalidMoveError``), not legal
    where it is played (``IllegalMoveError``), or none to make (the game is over)."""


class IllegalMoveError(MoveError):
    """A move that is not legal in the position: ``ply`` is its 1-based place in the
    sequence being played (``None`` for a move played on its own)."""

    ply: Optional[int] = None


class InvalidMoveError(MoveError):
    """Text or a number that is not a move (``"z9"``, 65)."""


class InvalidPositionError(Error, ValueError):
    """Board text or bitboards that are not a position."""


class SettingError(Error, ValueError):
    """A setting out of range or inconsistent (a level, a limit, a format name)."""


class FileError(Error, OSError):
    """A file that cannot be read or written: ``filename`` (its path, ``None`` for
    bundled data) and ``errno`` when the system gave one."""

    def __str__(self) -> str:
        # The library's message names the file and the place already.
        return str(self.args[0]) if self.args else OSError.__str__(self)


class ArchiveError(FileError):
    """A damaged game archive: ``filename``, and where known the 0-based WTHOR
    ``record``, the 1-based text ``line``, the ``byte`` offset, the 1-based ``ply``;
    ``kind`` names the fault and ``details`` holds all the library says."""

    record: Optional[int] = None
    line: Optional[int] = None
    byte: Optional[int] = None
    ply: Optional[int] = None
    kind: Optional[str] = None
    details: Optional[Dict[str, Any]] = None


class BookFileError(FileError):
    """A damaged or foreign book file: ``filename``, and where known the 0-based
    ``record`` and the ``byte`` offset of the damage."""

    record: Optional[int] = None
    byte: Optional[int] = None


class WeightsFileError(FileError):
    """A damaged or foreign evaluation weight file: ``filename`` and the ``byte``
    offset of the damage (in the decompressed data)."""

    byte: Optional[int] = None


class ResumeError(FileError):
    """A checkpoint or growth state that ``resume=True`` cannot continue from: it was
    made by another computation (``filename`` is the checkpoint). Start afresh with
    ``resume=False``, or give the settings it was made with."""


class ArchiveWarning(UserWarning):
    """Damaged games or files were skipped while reading archives (``Games.anomalies``
    lists them; ``strict=True`` raises ``ArchiveError`` instead)."""
