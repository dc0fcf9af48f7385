"""What a Python user assumes without reading: Ctrl-C stops every long call, limits
exist, damaged input warns or raises, objects pickle and copy, a selection of games is
a sequence, progress takes a callable or a tqdm bar, errors are of Python's classes."""

import copy
import os
import pickle
import threading
import warnings
from collections.abc import Sequence

import numpy as np
import pytest

import thorbook as tb


@pytest.fixture(scope="module")
def games():
    return tb.read_games()


def test_positions_pickle_and_copy():
    pos = tb.Position("f5d6c3")
    assert pickle.loads(pickle.dumps(pos)) == pos
    assert copy.copy(pos) == pos and copy.deepcopy(pos) == pos
    assert hash(pickle.loads(pickle.dumps(pos))) == hash(pos)


def test_games_pickle_by_value_and_keep_every_field(games):
    chosen = games.filter(years=2014)[::7]
    back = pickle.loads(pickle.dumps(chosen))
    assert len(back) == len(chosen)
    assert list(back) == list(chosen)
    fields = ["transcript", "black_player", "white_player", "tournament", "year", "black_discs",
              "theoretical_black_discs", "theoretical_empties", "outcome", "file", "record"]
    for a, b in zip(back, chosen):
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]
    assert back.table() == chosen.table()
    one = pickle.loads(pickle.dumps(chosen[3]))
    assert one == chosen[3] and one in chosen and chosen[3] in back
    assert copy.deepcopy(chosen)[0] == chosen[0]
    # A pickle of a pickle is the same games.
    assert list(pickle.loads(pickle.dumps(back))) == list(chosen)


def test_a_damaged_reading_keeps_its_anomalies_through_a_pickle(tmp_path, games):
    path = tmp_path / "cut.wtb"
    path.write_bytes(_cut_wtb(games, tmp_path))
    with pytest.warns(tb.ArchiveWarning):
        read = tb.read_games(path)
    assert pickle.loads(pickle.dumps(read)).anomalies == read.anomalies


def _cut_wtb(games, tmp_path):
    whole = tmp_path / "whole.wtb"
    games.filter(years=2015)[:20].export(whole, "wtb")
    return whole.read_bytes()[:16 + 68 * 5 + 30]


def test_books_and_engines_pickle_by_what_reopens_them(tmp_path, games):
    bundled = pickle.loads(pickle.dumps(tb.Book.bundled()))
    assert len(bundled) == len(tb.Book.bundled())
    small = tb.Book.build(games.filter(years=2015), tmp_path / "s.tbk", level=1, max_ply=6)
    back = pickle.loads(pickle.dumps(small))
    assert back.query("f5") == small.query("f5")
    engine = tb.Engine(level=3, book=small, seed=7)
    again = pickle.loads(pickle.dumps(engine))
    pos = tb.Position("f5d6c3d3c4f4")
    assert again.search(pos, depth=4)["score"] == engine.search(pos, depth=4)["score"]
    assert repr(again) == repr(engine)


def test_games_are_a_full_sequence(games):
    few = games[:10]
    assert isinstance(few, Sequence)
    assert [g.transcript for g in reversed(few)] == [g.transcript for g in list(few)[::-1]]
    assert few[0] in few and few[0] in games and games[500] not in few
    assert few.index(few[4]) == 4 and few.count(few[4]) == 1
    with pytest.raises(ValueError):
        few.index(games[500])
    assert few.index(few[4], 2, 6) == 4
    assert few[-1] == few[9] and len(few[2:8:2]) == 3


def test_one_name_one_meaning(games):
    game = games[0]
    rows = games[:1].positions()
    # A count of discs is named so; a score is a difference for the side to move.
    assert 0 <= game.black_discs <= 64
    assert int(rows["theoretical_score"][0]) == 2 * game.theoretical_black_discs - 64
    assert isinstance(game.black_player, str)
    pos = tb.Position()
    assert pos.black_bitboard == 0x0000_0008_1000_0000 and pos.player == pos.black_bitboard
    assert not hasattr(pos, "black") and not hasattr(game, "black")


def test_reading_damaged_archives_warns_or_raises(tmp_path):
    junk = tmp_path / "garbage.wtb"
    junk.write_bytes(np.random.default_rng(1).integers(0, 256, 5000, dtype=np.uint8).tobytes())
    with pytest.raises(tb.ArchiveError, match="nothing valid was read") as caught:
        tb.read_games(junk)
    assert caught.value.filename == str(junk)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(tb.read_games()) == 6139  # sound input: no warning


def test_limits_everywhere():
    engine = tb.Engine(level=4, book=None)
    with pytest.raises(tb.SettingError, match="takes hours to years"):
        engine.solve(tb.Position())
    with pytest.raises(TimeoutError) as caught:
        engine.solve(tb.Position("f5d6c3d3c4f4f6f3e6e7"), time=0.1)
    assert caught.value.partial["move"] in tb.Position("f5d6c3d3c4f4f6f3e6e7").legal_moves()
    solved = engine.solve(tb.Position.from_board_text("--XXXXX--OOOXX-O-OOOXXOX-OXOXOXXOXXXOXXX--XOXOXX-XXXOOO--OOOOO-- X"), nodes=10**9)
    assert solved["exact"]
    rows = tb.read_games()[:2].positions()
    with pytest.raises(tb.SettingError, match="max_empties must be from 0 to 30, got 64"):
        tb.label_exact(rows["player"], rows["opponent"], max_empties=64)


def test_errors_speak_python_and_are_of_the_exact_class():
    with pytest.raises(tb.SettingError, match="depth must be from 1 to 60, got -1"):
        tb.Engine(depth=-1)
    with pytest.raises(tb.SettingError, match="level must be from 1 to 14, got 15"):
        tb.Engine(level=15)
    with pytest.raises(tb.SettingError, match="threads must be from 1 to 256, got 0"):
        tb.Engine(threads=0)
    with pytest.raises(MemoryError):
        tb.Engine(hash_mib=1 << 19)  # 512 GiB
    with pytest.raises(tb.InvalidMoveError):
        tb.Position("f5z9")
    with pytest.raises(tb.IllegalMoveError) as caught:
        tb.Position("f5d6c3c3")
    assert caught.value.ply == 4 and isinstance(caught.value, tb.MoveError) and isinstance(caught.value, ValueError)
    with pytest.raises(tb.IllegalMoveError, match="^a1 is not legal for white$"):
        tb.Position("f5").play("a1")
    with pytest.raises(tb.InvalidPositionError):
        tb.Position.from_board_text("---")
    with pytest.raises(TypeError):
        tb.Position().play(3.5)
    with pytest.raises(tb.SettingError):
        tb.random_games(-1)
    with pytest.raises(tb.FileError) as missing:
        tb.Book.open("/nonexistent/book.tbk")
    assert missing.value.filename == "/nonexistent/book.tbk" and missing.value.errno == 2


def test_a_resume_from_another_build_is_a_resume_error(tmp_path, games):
    path = tmp_path / "b.tbk"
    calls = []

    def stop_at_once(done, total):
        calls.append(done)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tb.Book.build(games.filter(years=2015), path, level=3, max_ply=8, progress=stop_at_once)
    with pytest.raises(tb.ResumeError) as caught:
        tb.Book.build(games.filter(years=2015), path, level=4, max_ply=8, resume=True)
    assert caught.value.filename.endswith("b.tbk.checkpoint")


class Bar:
    """What a tqdm bar offers a producer: ``total`` and ``update``."""

    def __init__(self):
        self.total, self.n = None, 0

    def update(self, n=1):
        self.n += n


def test_progress_takes_a_callable_or_a_bar_everywhere(tmp_path):
    bar = Bar()
    tb.write_random_games(tmp_path, 2500, batch_size=1000, progress=bar)
    assert bar.n == bar.total == 2500
    seen = []
    tb.write_random_games(tmp_path / "b", 100, batch_size=30, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (100, 100)
    rows = tb.read_games()[:20].positions()
    late = rows["empties"] <= 12
    bar = Bar()
    tb.label_exact(rows["player"][late], rows["opponent"][late], max_empties=12, progress=bar)
    assert bar.n == bar.total == int(late.sum())


def test_a_failed_write_leaves_no_file(tmp_path):
    def fail(done, total):
        raise RuntimeError("disk full, as it were")

    with pytest.raises(RuntimeError):
        tb.write_random_games(tmp_path, 3000, batch_size=1000, progress=fail)
    assert os.listdir(tmp_path) == []


def test_ctrl_c_stops_synthetic_games(ctrl_c):
    with ctrl_c(0.3), pytest.raises(KeyboardInterrupt):
        tb.random_games(50_000_000)  # 50 M games: a minute of work unless stopped


def test_ctrl_c_stops_writing_and_leaves_no_file(ctrl_c, tmp_path):
    sent = []

    def interrupt(done, total):
        if not sent:
            sent.append(done)
            ctrl_c.press()

    with ctrl_c(3600), pytest.raises(KeyboardInterrupt):
        tb.write_random_games(tmp_path, 5000, batch_size=1000, progress=interrupt)
    assert os.listdir(tmp_path) == []
