#!/usr/bin/env python3
"""Benchmarks of the Python package (issue 47's measures), each in a fresh process so
that its peak memory is its own:

  positions   every position of the archives' games to numpy, and the same rows by a
              plain-Python bitboard replay of the same games (checked equal)
  random      random_games(1_000_000) tokens only; with board states, rows per second
  probe       probing the bundled book: single calls, and one batch
  labels      what the tour's full-size jobs cost, from samples of the bundled games'
              positions: label_exact at <= 20 empties, label_search at level 8,
              selfplay_games at level 6, Book.build at level 8 to ply 20

Run with the package installed: python3 scripts/python-bench.py [--thor DIR]
(default ../shared/thor: the 115,820 games of 1977–2015). Not a test: nothing here
asserts a time.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


M = (1 << 64) - 1
NOT_A = 0xFEFEFEFEFEFEFEFE
NOT_H = 0x7F7F7F7F7F7F7F7F
DIRECTIONS = [(1, NOT_A), (-1, NOT_H), (8, M), (-8, M), (9, NOT_A), (7, NOT_H), (-7, NOT_A), (-9, NOT_H)]


def shift(b, s, mask):
    return ((b << s) & M & mask) if s > 0 else ((b >> -s) & mask)


def legal(p, o):
    empty = ~(p | o) & M
    moves = 0
    for s, mask in DIRECTIONS:
        x = shift(p, s, mask) & o
        for _ in range(5):
            x |= shift(x, s, mask) & o
        moves |= shift(x, s, mask) & empty
    return moves


def flips(p, o, sq):
    bit = 1 << sq
    out = 0
    for s, mask in DIRECTIONS:
        x, y = 0, shift(bit, s, mask)
        while y & o:
            x |= y
            y = shift(y, s, mask)
        if y & p:
            out |= x
    return out


def plain_python_rows(transcripts):
    """The columns player, opponent, white_to_move, move, legal of every position, by
    the fastest plain-Python replay we know (bitboards in Python ints)."""
    player, opponent, white_col, move, legal_col = [], [], [], [], []
    for moves in transcripts:
        p, o, white = 0x0000000810000000, 0x0000001008000000, False
        for i in range(0, len(moves), 2):
            sq = (ord(moves[i]) - 97) + 8 * (ord(moves[i + 1]) - 49)
            mask = legal(p, o)
            if mask == 0:
                player.append(p), opponent.append(o), white_col.append(white), move.append(64), legal_col.append(0)
                p, o, white = o, p, not white
                mask = legal(p, o)
            player.append(p), opponent.append(o), white_col.append(white), move.append(sq), legal_col.append(mask)
            f = flips(p, o, sq)
            p, o, white = o ^ f, p | f | (1 << sq), not white
    return player, opponent, white_col, move, legal_col


def bench_positions(thor):
    import numpy as np

    import thorbook as tb

    t = time.perf_counter()
    games = tb.read_games(thor)
    read = time.perf_counter() - t
    t = time.perf_counter()
    rows = games.positions()
    rust = time.perf_counter() - t
    n = len(rows["player"])
    rust_peak = peak_mib()
    transcripts = games.table()["moves"]
    t = time.perf_counter()
    p, o, w, mv, lg = plain_python_rows(transcripts)
    arrays = [np.array(p, dtype=np.uint64), np.array(o, dtype=np.uint64), np.array(w), np.array(mv, dtype=np.uint8), np.array(lg, dtype=np.uint64)]
    python = time.perf_counter() - t
    same = all(
        (a == rows[k]).all() or k == "legal" and (a[rows["move"] != 64] == rows[k][rows["move"] != 64]).all()
        for a, k in zip(arrays, ["player", "opponent", "white_to_move", "move", "legal"])
    )
    return {
        "games": len(games),
        "rows": n,
        "read_s": round(read, 3),
        "positions_s": round(rust, 3),
        "rows_per_s": round(n / rust),
        "peak_mib_after_positions": round(rust_peak),
        "plain_python_s": round(python, 1),
        "ratio": round(python / rust),
        "plain_python_rows_equal": bool(same),
    }


def bench_random():
    import thorbook as tb

    t = time.perf_counter()
    tokens = tb.random_games(1_000_000, seed=1)["tokens"]
    tokens_s = time.perf_counter() - t
    peak_tokens = peak_mib()
    del tokens
    t = time.perf_counter()
    boards = tb.random_games(100_000, seed=2, boards="mine_theirs", legal=True)
    boards_s = time.perf_counter() - t
    rows = int(boards["lengths"].sum())
    return {
        "tokens_1M_s": round(tokens_s, 3),
        "games_per_s": round(1_000_000 / tokens_s),
        "peak_mib_tokens": round(peak_tokens),
        "boards_100k_s": round(boards_s, 3),
        "board_rows_per_s": round(rows / boards_s),
        "board_rows": rows,
        "peak_mib_boards": round(peak_mib()),
    }


def bench_probe():
    import numpy as np

    import thorbook as tb

    book = tb.Book.bundled()
    rows = tb.read_games().positions()
    early = rows["ply"] <= 20
    p, o = rows["player"][early], rows["opponent"][early]
    positions = [tb.Position.from_bitboards(int(a), int(b)) for a, b in zip(p[:100_000], o[:100_000])]
    t = time.perf_counter()
    hits = sum(book.probe(pos) is not None for pos in positions)
    single = time.perf_counter() - t
    reps = 10
    pp, oo = np.tile(p, reps), np.tile(o, reps)
    t = time.perf_counter()
    batch = book.probe_many(pp, oo)
    batch_s = time.perf_counter() - t
    return {
        "single_probes": len(positions),
        "single_hits": hits,
        "single_per_s": round(len(positions) / single),
        "batch_probes": len(pp),
        "batch_hits": int(batch["known"].sum()),
        "batch_per_s": round(len(pp) / batch_s),
        "peak_mib": round(peak_mib()),
    }


def bench_labels():
    import numpy as np

    import thorbook as tb

    games = tb.read_games()
    rows = games.positions()
    rng = np.random.default_rng(5)
    late = np.flatnonzero(rows["empties"] <= 20)
    sample = rng.choice(late, 1_000, replace=False)
    t = time.perf_counter()
    tb.label_exact(rows["player"][sample], rows["opponent"][sample], max_empties=20)
    exact_s = time.perf_counter() - t
    every = rng.choice(len(rows["player"]), 2_000, replace=False)
    t = time.perf_counter()
    tb.label_search(rows["player"][every], rows["opponent"][every], level=8)
    search_s = time.perf_counter() - t
    t = time.perf_counter()
    tb.selfplay_games(200, level=6, seed=1)
    selfplay_s = time.perf_counter() - t
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        tb.Book.build(games, os.path.join(d, "b.tbk"), level=8, max_ply=20)
        build_s = time.perf_counter() - t
    return {
        "exact_le20_positions": int(len(late)),
        "exact_per_s": round(len(sample) / exact_s, 1),
        "exact_all_minutes": round(len(late) / (len(sample) / exact_s) / 60, 1),
        "rows": int(len(rows["player"])),
        "search8_per_s": round(len(every) / search_s, 1),
        "search8_all_hours": round(len(rows["player"]) / (len(every) / search_s) / 3600, 2),
        "selfplay6_games_per_s": round(200 / selfplay_s, 1),
        "selfplay6_10k_s": round(10_000 / (200 / selfplay_s)),
        "build8_s": round(build_s, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--thor", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "thor"))
    parser.add_argument("--only", choices=["positions", "random", "probe", "labels"])
    args = parser.parse_args()
    if args.only:
        result = {
            "positions": lambda: bench_positions(args.thor),
            "random": bench_random,
            "probe": bench_probe,
            "labels": bench_labels,
        }[args.only]()
        print(json.dumps(result))
        return
    for name in ["positions", "random", "probe", "labels"]:
        out = subprocess.run([sys.executable, __file__, "--thor", args.thor, "--only", name], check=True, capture_output=True, text=True)
        print(f"{name}: {out.stdout.strip()}", flush=True)


if __name__ == "__main__":
    main()
