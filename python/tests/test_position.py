"""Positions from Python, checked against independent truth: Othello's known perft
counts, the FFO board text of the start, and the rules of legal play."""

import pytest

import thorbook
from thorbook import Position

# The number of move sequences of each length from the start (passes count as moves,
# a finished game is a leaf): the published Othello perft counts.
PERFT = [1, 4, 12, 56, 244, 1396, 8200]


def perft(pos, depth):
    if depth == 0:
        return 1
    moves = pos.legal_moves()
    if not moves:
        if pos.is_game_over():
            return 1
        return perft(pos.pass_(), depth - 1)
    return sum(perft(pos.play(m), depth - 1) for m in moves)


@pytest.mark.parametrize("depth", range(len(PERFT)))
def test_perft_from_python_matches_the_known_counts(depth):
    assert perft(Position(), depth) == PERFT[depth]


def test_the_start_position():
    start = Position()
    assert start.side_to_move == "black"
    assert start.discs() == (2, 2)
    assert start.empties == 60
    assert sorted(start.legal_moves()) == ["c4", "d3", "e6", "f5"]
    assert start.board_text() == "-" * 27 + "OX" + "-" * 6 + "XO" + "-" * 27 + " X"
    assert Position.from_board_text(start.board_text()) == start


def test_moves_play_and_symmetries():
    pos = Position("f5d6c3")
    assert pos.side_to_move == "white"
    assert pos == Position().play("f5").play("d6").play(thorbook.move_to_index("c3"))
    images = pos.symmetries()
    assert len(images) == 8 and images[0] == pos
    # The 8 images share one canonical key; the first four moves' images are the start's.
    assert len({p.canonical_key() for p in images}) == 1
    assert len({Position(m).canonical_key() for m in ["f5", "d3", "c4", "e6"]}) == 1
    assert {hash(p) for p in [pos, Position("f5d6c3")]} == {hash(pos)}


def test_illegal_moves_and_bad_input_are_value_errors():
    with pytest.raises(ValueError):
        Position().play("a1")
    with pytest.raises(ValueError):
        Position("f5f5")
    with pytest.raises(ValueError):
        Position().play(65)
    with pytest.raises(ValueError):
        Position.from_board_text("X" * 10)
    assert thorbook.move_to_index("pass") == 64 and thorbook.move_to_index("a1") == 0


def test_positions_are_values_and_repr_round_trips():
    from thorbook import Position

    a, b = Position("f5d6"), Position().play("f5").play(43)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert eval(repr(a), {"Position": Position}) == a
    assert a.to_svg().startswith("<svg") and a._repr_svg_() == a.to_svg()
    assert "f5" not in a.legal_moves() and a.is_legal("c3") and not a.is_legal("a1")
