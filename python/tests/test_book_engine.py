import json

import pytest

import thorbook as tb


@pytest.mark.parametrize("moves", ["", "f5", "f5d6", "f5f6e6f4", "f5d6c3d3c4", "c4c3"])
def test_book_queries_equal_the_cli(cli, moves):
    book = tb.Book.bundled()
    args = ["book", "query", "--json"] + (["--moves", moves] if moves else [])
    assert book.query(moves) == json.loads(cli(*args))


def test_book_line_and_moves():
    book = tb.Book.bundled()
    assert len(book) > 10_000
    line = book.line()
    assert len(line) > 5
    pos = tb.Position()
    for mv in line[:-1]:
        assert pos in book
        pos = pos.play(mv)
    moves = book.moves("f5")
    assert moves[0]["score"] == -book.probe(tb.Position("f5").play(moves[0]["move"]))
    rows = tb.read_games()[:50].positions()
    probes = book.probe_many(rows["player"], rows["opponent"])
    for i in range(0, len(rows["player"]), 11):
        pos = tb.Position.from_bitboards(int(rows["player"][i]), int(rows["opponent"][i]))
        want = book.probe(pos)
        assert bool(probes["known"][i]) == (want is not None)
        assert int(probes["value"][i]) == (want or 0)


def test_a_damaged_book_names_the_file(tmp_path):
    path = tmp_path / "bad.tbk"
    path.write_bytes(b"not a book at all, only some bytes" * 4)
    with pytest.raises(tb.BookFileError) as caught:
        tb.Book.open(path)
    assert caught.value.filename == str(path) and str(path) in str(caught.value)
    assert isinstance(caught.value, OSError)
    with pytest.raises(tb.FileError):
        tb.Book.open(tmp_path / "absent.tbk")


def test_building_a_book_reports_progress(tmp_path):
    games = tb.read_games().filter(years=2015)
    seen = []
    book = tb.Book.build(games, tmp_path / "b.tbk", level=2, max_ply=8, min_games=3, progress=lambda d, t: seen.append((d, t)))
    assert len(book) > 100 and seen and seen[-1][0] == seen[-1][1]
    assert tb.Position() in book
    book.verify()


@pytest.mark.shared
def test_solve_equals_the_ffo_scores(shared):
    engine = tb.Engine(level=10, book=None, hash_mib=64)
    lines = (shared / "ffo" / "fforum-1-19.obf").read_text().splitlines()
    assert len(lines) == 19
    for number, line in enumerate(lines, 1):
        board, best = line.split(";")[0], line.split(";")[1]
        want = int(best.split(":")[1])
        got = engine.solve(tb.Position.from_board_text(board))
        assert got["exact"] and got["score"] == want, f"FFO #{number}"


def test_engine_moves_are_legal_and_limits_hold():
    engine = tb.Engine(level=6, book=None)
    pos = tb.Position("f5d6c3d3c4")
    m = engine.best_move(pos)
    assert m["move"] in pos.legal_moves() and m["source"] == "search"
    assert engine.search(pos, depth=3)["depth"] == 3
    scores = engine.analyze(pos, depth=4)
    assert sorted(mv for mv, _ in scores) == sorted(pos.legal_moves())
    assert scores == sorted(scores, key=lambda s: -s[1])
    booked = tb.Engine(level=6)
    assert booked.best_move(tb.Position())["source"] == "book"
    assert isinstance(engine.evaluate(pos), float)
    with pytest.raises(tb.SettingError):
        tb.Engine(level=0)
    with pytest.raises(tb.MoveError, match="the game is over"):
        engine.best_move(tb.Position.from_board_text("X" * 64 + " X"))


def test_ctrl_c_raises_out_of_a_search_with_what_it_found(ctrl_c):
    engine = tb.Engine(level=14, book=None)
    pos = tb.Position("f5d6c3d3c4f4f6f3e6e7")
    # Depth 40 from 50 empties: hours, unless stopped (a minute at most if the signal
    # were lost, so that the test fails rather than hangs).
    with ctrl_c(0.5), pytest.raises(KeyboardInterrupt) as caught:
        engine.search(pos, depth=40, time=60)
    assert caught.value.partial["move"] in pos.legal_moves() and not caught.value.partial["exact"]
    with ctrl_c(0.5), pytest.raises(KeyboardInterrupt) as caught:
        engine.analyze(pos, depth=40, time=60)
    assert {mv for mv, _ in caught.value.partial} <= set(pos.legal_moves())
    with ctrl_c(0.5), pytest.raises(KeyboardInterrupt):
        engine.solve(pos, time=60)
    with ctrl_c(0.5), pytest.raises(KeyboardInterrupt):
        tb.Engine(level=14, book=None, time=60).best_move(pos)
    # The engine searches again afterwards.
    assert engine.search(pos, depth=2)["depth"] == 2


def test_ctrl_c_stops_labelling(ctrl_c):
    rows = tb.read_games()[:300].positions()
    mid = rows["empties"] == 26
    with ctrl_c(0.5), pytest.raises(KeyboardInterrupt):
        tb.label_exact(rows["player"][mid], rows["opponent"][mid], max_empties=30)


def test_update_learn_and_grow_a_book(tmp_path):
    games = tb.read_games()
    first = tb.Book.build(games.filter(years=2013), tmp_path / "a.tbk", level=2, max_ply=8, min_games=3)
    updated = first.update(games.filter(years=(2013, 2014)), tmp_path / "b.tbk")
    assert len(updated) > len(first)
    learned = first.learn(games.filter(years=2015)[:50], tmp_path / "c.tbk", level=2)
    assert len(learned) > len(first)
    bar = Bar()
    grown = first.grow(tmp_path / "d.tbk", error=1, budget=1, max_ply=9, level=2, progress=bar)
    assert len(grown) >= len(first) and bar.n == bar.total
    for book in (updated, learned, grown):
        book.verify()


class Bar:
    def __init__(self):
        self.total, self.n = None, 0

    def update(self, n):
        self.n += n


def interrupt_when_half_done(calls):
    """A progress callback that raises ``KeyboardInterrupt`` the first time half the
    work is reported done, as Ctrl-C pressed while Python runs the callback would: the
    stop is set before the callback returns, so the work stops in the middle whatever
    the machine's speed. (A signal sent from the callback's thread is handled on the
    main thread at its next check, by which time a fast machine may have finished: the
    ``ctrl_c`` tests of searches cover that path.)"""

    def report(done, total):
        calls.append((done, total))
        if done * 2 >= total and not any(c == "raised" for c in calls):
            calls.append("raised")
            raise KeyboardInterrupt

    return report


def test_ctrl_c_stops_a_build_and_resume_finishes_it(tmp_path):
    games = tb.read_games()
    path = tmp_path / "big.tbk"
    calls = []
    with pytest.raises(KeyboardInterrupt):
        tb.Book.build(games, path, level=6, max_ply=10, progress=interrupt_when_half_done(calls))
    reports = [c for c in calls if c != "raised"]
    assert reports and reports[-1][0] < reports[-1][1], "the build finished before it was stopped"
    assert not path.exists()
    book = tb.Book.build(games, path, level=6, max_ply=10, resume=True)
    tb.Book.build(games, tmp_path / "whole.tbk", level=6, max_ply=10)
    assert path.read_bytes() == (tmp_path / "whole.tbk").read_bytes()
    assert len(book) == 1728


def test_ctrl_c_stops_a_growth_within_a_round_and_resume_finishes_it(tmp_path):
    first = tb.Book.build(tb.read_games().filter(years=2013), tmp_path / "a.tbk", level=2, max_ply=8, min_games=3)
    calls = []
    out = tmp_path / "grown.tbk"
    settings = dict(error=2, budget=4, max_ply=12, level=5, max_positions=600)
    with pytest.raises(KeyboardInterrupt):
        first.grow(out, progress=interrupt_when_half_done(calls), **settings)
    reports = [c for c in calls if c != "raised"]
    assert reports and reports[-1][0] < reports[-1][1], "the growth finished before it was stopped"
    tb.Book.open(out).verify()
    resumed = first.grow(out, resume=True, **settings)
    whole = first.grow(tmp_path / "whole.tbk", **settings)
    assert out.read_bytes() == (tmp_path / "whole.tbk").read_bytes()
    assert len(resumed) == len(whole) > len(first)
