import json
import os

import numpy as np
import pytest

import thorbook as tb


@pytest.fixture(scope="module")
def games():
    return tb.read_games()


def test_bundled_games_equal_the_cli_export(games, cli):
    lines = cli("thor", "export", "--format", "jsonl").splitlines()
    assert len(lines) == len(games) == 6139
    for game, line in zip(games, lines):
        want = json.loads(line)
        assert game.transcript == want["moves"]
        assert "".join(game.moves) == want["moves"]
        assert (game.black_player, game.white_player, game.tournament) == (want["black"], want["white"], want["tournament"])
        assert (game.year, game.black_discs) == (want["year"], want["black_score"])
        assert (game.theoretical_black_discs, game.theoretical_empties) == (want["theoretical_score"], want["theoretical_depth"])
        assert game.outcome == want["outcome"]
        assert game.file == want["file"] and game.record == want["record"]


@pytest.mark.parametrize("fmt", ["transcript", "jsonl", "ggf", "csv"])
def test_export_writes_what_the_cli_writes(games, cli, tmp_path, fmt):
    chosen = games.filter(years=2014)
    ours = tmp_path / f"ours.{fmt}"
    chosen.export(ours, fmt)
    theirs = cli("thor", "export", "--years", "2014", "--format", fmt)
    assert ours.read_text() == theirs


def test_wthor_export_reads_back_the_same_games(games, tmp_path):
    chosen = games.filter(player="tastet")
    path = tmp_path / "tastet.wtb"
    written = chosen.export(path, "wtb")
    assert sorted(os.listdir(tmp_path)) == ["tastet.JOU", "tastet.TRN", "tastet_2013.wtb", "tastet_2014.wtb", "tastet_2015.wtb"]
    assert sorted(os.path.basename(p) for p in written) == sorted(os.listdir(tmp_path))
    back = tb.read_games(tmp_path)
    assert [g.transcript for g in back] == [g.transcript for g in chosen]
    assert [(g.black_player, g.white_player) for g in back] == [(g.black_player, g.white_player) for g in chosen]


def test_filters_and_stats_match_the_cli(games, cli):
    chosen = games.filter(player="tastet", color="black", years=(2013, 2014))
    assert len(chosen) > 0
    assert all("Tastet" in g.black_player and g.year in (2013, 2014) for g in chosen)
    theirs = cli("thor", "games", "--player", "tastet", "--as", "black", "--years", "2013..2014", "--limit", "0", "--format", "transcript")
    assert len(theirs.splitlines()) == len(chosen)
    ours = games.stats("f5d6c3")
    want = json.loads(cli("thor", "stats", "--moves", "f5d6c3", "--json"))
    assert ours == want
    assert games.filter(position="f5f6")[:5].stats()["games"] == 5


def test_table_is_a_dict_of_columns(games):
    table = games[:100].table()
    assert set(table) >= {"year", "black_player", "white_player", "black_discs", "theoretical_black_discs", "moves"}
    assert all(len(column) == 100 for column in table.values())


def replay(moves):
    """A plain-Python replay: rows of (player, opponent, white, move, legal)."""
    dirs = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]
    board = [0] * 64  # 1 black, 2 white
    board[27] = board[36] = 2
    board[28] = board[35] = 1

    def flips(colour, sq):
        if board[sq]:
            return []
        r0, c0 = divmod(sq, 8)
        out = []
        for dr, dc in dirs:
            r, c, line = r0 + dr, c0 + dc, []
            while 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == 3 - colour:
                line.append(r * 8 + c)
                r, c = r + dr, c + dc
            if line and 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == colour:
                out += line
        return out

    def mask(colour):
        return sum(1 << s for s in range(64) if board[s] == colour)

    def legal(colour):
        return sum(1 << s for s in range(64) if flips(colour, s))

    rows, colour = [], 1
    for mv in moves:
        sq = tb.move_to_index(mv)
        if legal(colour) == 0:
            rows.append((mask(colour), mask(3 - colour), colour == 2, 64, 0))
            colour = 3 - colour
        rows.append((mask(colour), mask(3 - colour), colour == 2, sq, legal(colour)))
        for s in flips(colour, sq) + [sq]:
            board[s] = colour
        colour = 3 - colour
    return rows


def test_position_rows_match_a_plain_python_replay(games):
    data = games.positions(planes=3)
    n = len(data["player"])
    assert all(len(v) == n for v in data.values())
    assert data["player"].dtype == np.uint64 and data["planes"].shape == (n, 3, 8, 8)
    starts = np.searchsorted(data["game"], np.arange(len(games)))
    rng = np.random.default_rng(5)
    for gi in rng.choice(len(games), 40, replace=False):
        game = games[int(gi)]
        rows = replay(game.moves)
        r0 = starts[gi]
        for k, (p, o, white, mv, legal) in enumerate(rows):
            r = r0 + k
            assert (int(data["player"][r]), int(data["opponent"][r])) == (p, o)
            assert bool(data["white_to_move"][r]) == white and int(data["move"][r]) == mv
            if mv != 64:
                assert int(data["legal"][r]) == legal
            assert int(data["ply"][r]) == k and int(data["empties"][r]) == 64 - bin(p | o).count("1")
            sign = -1 if white else 1
            assert int(data["final_score"][r]) == sign * (2 * game.black_discs - 64)
            assert int(data["theoretical_score"][r]) == sign * (2 * game.theoretical_black_discs - 64)
            plane = data["planes"][r]
            assert int(plane[0].reshape(64) @ (1 << np.arange(64, dtype=np.uint64))) == p
        assert r0 + len(rows) == (starts[gi + 1] if gi + 1 < len(games) else n)


def test_a_damaged_archive_names_its_file_record_and_byte(tmp_path):
    games = tb.read_games().filter(years=2015)[:3]
    path = tmp_path / "three.wtb"
    games.export(path, "wtb")
    raw = bytearray(path.read_bytes())
    # Record 1's third move (header 16 bytes, records 68: 8 of ids and scores, then
    # 60 moves) becomes a square off the board.
    byte = 16 + 68 + 8 + 2
    raw[byte] = 99
    path.write_bytes(bytes(raw))
    (tmp_path / "three.JOU").unlink()
    (tmp_path / "three.TRN").unlink()
    with pytest.raises(tb.ArchiveError) as caught:
        tb.read_games(path, strict=True)
    e = caught.value
    assert isinstance(e, OSError) and isinstance(e, tb.Error)
    assert e.filename == str(path) and e.record == 1 and e.ply == 3 and e.byte == byte
    assert str(path) in str(e)
    with pytest.warns(tb.ArchiveWarning, match="skipped 1 damaged"):
        lenient = tb.read_games(path)
    assert len(lenient) == 2 and lenient.anomalies[0]["record"] == 1
    with pytest.raises(tb.FileError) as missing:
        tb.read_games(tmp_path / "absent.wtb")
    assert missing.value.errno == 2


def test_sorted_orders_as_the_cli(games, cli):
    ours = [g.transcript for g in games.filter(years=2015).sorted("score")]
    theirs = [line.split()[0] for line in cli("thor", "games", "--years", "2015", "--sort", "score", "--limit", "0", "--format", "transcript").splitlines()]
    assert ours == theirs
    with pytest.raises(tb.SettingError):
        games.sorted("colour")


@pytest.mark.parametrize("fmt,compress", [("ggf", None), ("ggf", "gz"), ("ggf", "bz2"), ("jsonl", None), ("transcript", None)])
def test_every_text_source_reads_back_the_games(games, tmp_path, fmt, compress):
    import bz2
    import gzip

    chosen = games.filter(years=2015)[:200]
    path = tmp_path / f"games.{fmt}"
    chosen.export(path, fmt)
    if compress:
        data = path.read_bytes()
        path = tmp_path / f"games.{fmt}.{compress}"
        path.write_bytes(gzip.compress(data) if compress == "gz" else bz2.compress(data))
    back = tb.read_games([path])
    assert [g.transcript for g in back] == [g.transcript for g in chosen]
    assert [g.black_discs for g in back] == [g.black_discs for g in chosen]
    if fmt != "transcript":
        assert [(g.black_player, g.white_player) for g in back] == [(g.black_player, g.white_player) for g in chosen]
    assert back.files[0]["format"] == {"text": fmt}
    assert back.files[0]["compression"] == {"gz": "gzip", "bz2": "bzip2", None: "none"}[compress]


def exact_chain_links(p):
    """Checks that an exact move's value is minus the exact value of the position it
    leads to (the next ply, a decision of the other side); returns how many links."""
    links = 0
    for i in range(len(p["ply"]) - 1):
        if p["source"][i] == p["source"][i + 1] == "exact" and p["ply"][i + 1] == p["ply"][i] + 1:
            assert p["played_value"][i] == -p["value"][i + 1], i
            links += 1
    return links


def test_a_review_is_the_clis_and_its_plies_are_arrays(cli, tmp_path):
    game = tb.read_games().filter(tournament="airplane")[2]
    review = game.review(level=2, exact_at=12, book=None)
    lines = [json.loads(l) for l in cli("review", "--moves", game.transcript, "--level", "2", "--exact-at", "12",
                                         "--no-book", "--threads", "1", "--json", "--no-store").splitlines()]
    plies, summary = lines[:-1], lines[-1]["summary"]
    p = review.plies
    assert len(review) == len(plies) == len(p["ply"])
    assert p["value"].dtype == np.int8 and p["move"].dtype.kind == "U"
    for i, want in enumerate(plies):
        for key in ["ply", "empties", "side_to_move", "move", "value", "source", "trust", "best_move", "best_value",
                    "played_value", "loss"]:
            assert p[key][i] == want[key], (i, key)
    assert review.summary["black"] == summary["black"] and review.summary["worst"] == summary["worst"]
    svg = review._repr_svg_()
    assert svg.startswith("<svg") and svg.count('class="ply"') == len(review)
    # Exact from 12 empties: each exact move's value is minus the next position's, two
    # solves of different positions agreeing.
    assert exact_chain_links(p) >= 5


def test_review_games_is_one_table_of_every_games_plies_and_a_store_saves_the_searches(tmp_path):
    games = tb.read_games().filter(tournament="airplane")[:4]
    store = tmp_path / "reviews.jsonl"
    table = tb.review_games(games, level=1, exact_at=10, book="bundled", store=store, jobs=2)
    assert set(table["game"]) == {0, 1, 2, 3}
    for i in range(4):
        one = games[i].review(level=1, exact_at=10, book="bundled", store=store)
        rows = table["game"] == i
        assert (table["ply"][rows] == one.plies["ply"]).all() and (table["loss"][rows] == one.plies["loss"]).all()
        assert one.summary["searched"] == 0, "every position was stored by the batch"
    links = sum(exact_chain_links({k: v[table["game"] == i] for k, v in table.items()}) for i in range(4))
    assert links >= 8, links
    with pytest.raises(tb.SettingError, match="level"):
        tb.review_games(games, level=0)
