import numpy as np
import pytest

import thorbook as tb


def test_random_games_are_legal_and_their_boards_and_masks_true():
    data = tb.random_games(200, seed=11, boards="black_white", legal=True)
    assert data["tokens"].shape == (200, 60) and data["boards"].shape == (200, 60, 64)
    for g in range(200):
        pos = tb.Position()
        length = int(data["lengths"][g])
        assert (data["tokens"][g, length:] == tb.PAD).all()
        for t in range(length):
            if pos.must_pass():
                pos = pos.pass_()
            pos = pos.play(int(data["tokens"][g, t]))
            if pos.must_pass():
                pos = pos.pass_()
            cells = data["boards"][g, t]
            black = sum(1 << int(s) for s in np.flatnonzero(cells == 1))
            white = sum(1 << int(s) for s in np.flatnonzero(cells == 2))
            assert (black, white) == (pos.black_bitboard, pos.white_bitboard)
            assert int(data["legal"][g, t]) == pos.legal_mask()
        assert pos.is_game_over()
        assert int(data["black_disc_difference"][g]) == (pos.final_score() if pos.side_to_move == "black" else -pos.final_score())


def test_batches_concatenate_and_seeds_differ():
    whole = tb.random_games(1000, seed=3)
    parts = list(tb.random_game_batches(1000, 300, seed=3))
    assert [len(p["lengths"]) for p in parts] == [300, 300, 300, 100]
    assert (np.concatenate([p["tokens"] for p in parts]) == whole["tokens"]).all()
    assert not (tb.random_games(1000, seed=4)["tokens"] == whole["tokens"]).all()


def test_first_moves_are_uniform():
    tokens = tb.random_games(100_000, seed=9)["tokens"]
    squares, counts = np.unique(tokens[:, 0], return_counts=True)
    assert [tb.index_to_move(int(s)) for s in squares] == ["d3", "c4", "f5", "e6"]
    # Chi-square with 3 degrees of freedom: above 16.27 has probability 0.001.
    expected = len(tokens) / 4
    assert ((counts - expected) ** 2 / expected).sum() < 16.27


def test_written_files_equal_the_arrays(tmp_path):
    paths = tb.write_random_games(tmp_path, 2500, seed=8, boards="mine_theirs", legal=True, batch_size=1000)
    whole = tb.random_games(2500, seed=8, boards="mine_theirs", legal=True)
    for name, path in paths.items():
        assert (np.load(path) == whole[name]).all(), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["black_disc_difference.npy", "boards.npy", "legal.npy", "lengths.npy", "tokens.npy"]


def test_mine_theirs_is_relative_to_the_side_to_move():
    bw = tb.random_games(50, seed=2, boards="black_white")["boards"]
    mt = tb.random_games(50, seed=2, boards="mine_theirs")["boards"]
    # Same occupancy; where black is to move next mine = black.
    assert ((bw == 0) == (mt == 0)).all()
    assert (mt[:, 0][bw[:, 0] != 0] != bw[:, 0][bw[:, 0] != 0]).all()  # white to move after the first move


def test_planes_and_unpacked_masks_agree():
    pos = tb.Position("f5d6c3d3")
    p = np.array([pos.player], dtype=np.uint64)
    o = np.array([pos.opponent], dtype=np.uint64)
    l = np.array([pos.legal_mask()], dtype=np.uint64)
    planes = tb.planes(p, o, l)
    assert planes.shape == (1, 3, 8, 8)
    assert (planes[0, 2].reshape(64) == tb.unpack_masks(l)[0]).all()
    assert sorted(tb.index_to_move(int(s)) for s in np.flatnonzero(tb.unpack_masks(l)[0])) == sorted(pos.legal_moves())


def test_labels_exact_search_and_book():
    games = tb.read_games()[:40]
    rows = games.positions()
    late = rows["empties"] <= 12
    p, o = rows["player"][late], rows["opponent"][late]
    exact = tb.label_exact(p, o, max_empties=12)
    assert exact["known"].all()
    engine = tb.Engine(level=1, book=None)
    for i in range(0, len(p), 97):
        pos = tb.Position.from_bitboards(int(p[i]), int(o[i]))
        assert engine.solve(pos)["score"] == int(exact["score"][i])
    # Level 4 solves exactly from 12 empties: its scores are the solver's.
    searched = tb.label_search(p, o, level=4)
    assert searched.dtype == np.int16 and (searched == exact["score"]).all()
    # A reversed (strided) view gives the same scores: each depends on its position only.
    mid = rows["empties"] == 30
    deep = tb.label_search(rows["player"][mid], rows["opponent"][mid], level=3)
    again = tb.label_search(rows["player"][mid][::-1], rows["opponent"][mid][::-1], level=3)[::-1]
    assert (again == deep).all() and len(set(deep.tolist())) > 1
    book = tb.Book.bundled()
    early = rows["ply"] <= 6
    labels = tb.label_book(book, rows["player"][early], rows["opponent"][early])
    for i in range(0, int(early.sum()), 7):
        pos = tb.Position.from_bitboards(int(rows["player"][early][i]), int(rows["opponent"][early][i]))
        assert bool(labels["known"][i]) == (pos in book)
        if labels["known"][i]:
            assert int(labels["value"][i]) == book.probe(pos)


def test_bad_arguments_are_value_errors():
    with pytest.raises(tb.SettingError):
        tb.random_games(3, boards="colour")
    with pytest.raises(ValueError):
        tb.label_search(np.zeros(2, np.uint64), np.zeros(3, np.uint64))
    with pytest.raises(ValueError):
        tb.label_search(np.array([1], np.uint64), np.array([1], np.uint64))
    with pytest.raises(tb.SettingError):
        tb.label_search(np.zeros(1, np.uint64), np.zeros(1, np.uint64), level=99)


def test_selfplay_games_are_legal_and_begin_with_the_random_stream():
    seen = []
    games = tb.selfplay_games(12, level=2, random_plies=4, seed=5, progress=lambda d, t: seen.append((d, t)))
    random = tb.random_games(12, seed=5)
    assert (games["tokens"][:, :4] == random["tokens"][:, :4]).all()
    assert not (games["tokens"] == random["tokens"]).all()
    assert seen[-1] == (12, 12)
    for g in range(12):
        pos = tb.Position()
        for tok in games["tokens"][g, : games["lengths"][g]]:
            if pos.must_pass():
                pos = pos.pass_()
            pos = pos.play(int(tok))
        assert pos.is_game_over()
    again = tb.selfplay_games(12, level=2, random_plies=4, seed=5)
    assert (again["tokens"] == games["tokens"]).all()


class Bar:
    """What tqdm offers a progress reporter: a total and update(n)."""

    def __init__(self):
        self.total = None
        self.n = 0

    def update(self, n):
        self.n += n


def test_a_tqdm_like_bar_is_advanced_to_its_total():
    rows = tb.read_games()[:30].positions()
    late = rows["empties"] <= 10
    bar = Bar()
    tb.label_exact(rows["player"][late], rows["opponent"][late], max_empties=10, progress=bar)
    assert bar.total == int(late.sum()) and bar.n == bar.total
