"""thorbook: Othello positions, WTHOR archives, datasets, books and an engine, at Rust speed."""

from thorbook._thorbook import Position, move_to_index

__all__ = ["Position", "move_to_index"]
