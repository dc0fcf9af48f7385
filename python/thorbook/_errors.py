"""The exceptions thorbook raises: one base, ``Error``; ``ValueError`` subclasses for
bad moves and settings; ``OSError`` subclasses for files, which name the file and,
where the library knows it, the game record, line, byte and ply."""

from typing import Any, Dict, Optional


class Error(Exception):
    """Base of every error thorbook raises."""


class IllegalMoveError(Error, ValueError):
    """A move that is not legal in the position (``ply``: 1-based, when known)."""

    ply: Optional[int] = None


class SettingError(Error, ValueError):
    """A setting out of range or inconsistent (a level, a limit, a format name)."""


class FileError(Error, OSError):
    """A file that cannot be read or written (``filename``, ``errno`` when the system
    gave one)."""

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
