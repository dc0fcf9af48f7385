#!/usr/bin/env python3
"""Capacity probe: the evaluation's 12 patterns and 3 counts fitted as a linear model
(the bundled evaluation's form) and as a small network on the same readings, against
exact scores, to tell whether a richer model than a sum of pattern weights pays.

Needs the thorbook package (`pip install ./python`), numpy and torch (CPU is enough).

  scripts/capacity_probe.py data OUT.npz [THOR_DIR]
      positions at 14-18 empties of WTHOR 1977-2010 (with WTHOR.JOU/.TRN; training)
      and 2011-2015 (held out), every one solved exactly (`label_exact`; about 40
      minutes on 2 cores, most of it the 18-empty solves)
  scripts/capacity_probe.py theoretical OUT.npz [THOR_DIR] [EMPTIES]
      the same from the games' theoretical scores, nothing solved: training positions
      at EMPTIES (default 24; e.g. 24,25,26,27,28) with the score corrected as `train`
      corrects it (+2.3 discs, the measured loss a move, where the side to move has
      one more move than the other to make before 24 empties, told by the parity of
      the empties: a pass in between is ignored), held-out positions at
      24 empties only, where the score is exact (seconds)
  scripts/capacity_probe.py fit DATA.npz MODEL [SHARE] [EPOCHS] [DECAY]
      MODEL `linear`; `phased` (a `data` file only), a linear model with a table per
      number of empties (as the evaluation's phases, one per ply); or `netHxK`: the
      linear model plus an NNUE-style network (every reading adds an H-vector, the
      sum clipped to [-1, 1], then K hidden units);
      SHARE of the training games (nested draws: a smaller share is a subset of a
      larger one), EPOCHS of Adam, DECAY the L2 weight on the tables. A twentieth of
      the training games, drawn by game, is the validation set that picks the epoch;
      prints the mean absolute error in discs on the training positions, that set and
      the held-out years after every epoch, and the best epoch by validation.

Every pattern is read in all 8 images of the board with one shared table, so both
models are exactly symmetric, as the evaluation is.
"""
import sys, time

USAGE_OK = (sys.argv[1:2] in (["data"], ["theoretical"]) and len(sys.argv) >= 3) or (
    sys.argv[1:2] == ["fit"] and len(sys.argv) >= 4)
if __name__ == "__main__" and not USAGE_OK:
    sys.exit(__doc__)  # before numpy's import, so that the usage prints without it

import numpy as np

PATTERNS = [  # as src/eval/features.rs, squares a1 = 0 .. h8 = 63
    [0, 1, 2, 3, 4, 5, 6, 7, 9, 14], [0, 1, 2, 8, 9, 10, 16, 17, 18], [0, 1, 2, 3, 4, 8, 9, 10, 11, 12],
    [8, 9, 10, 11, 12, 13, 14, 15], [16, 17, 18, 19, 20, 21, 22, 23], [24, 25, 26, 27, 28, 29, 30, 31],
    [0, 9, 18, 27, 36, 45, 54, 63], [1, 10, 19, 28, 37, 46, 55], [2, 11, 20, 29, 38, 47], [3, 12, 21, 30, 39],
    [4, 13, 22, 31], [0, 2, 3, 4, 5, 7, 10, 11, 12, 13]]
COUNT_SIZES = [32 * 32, 48 * 48, 10]  # mobility, potential mobility, parity
SIZES = [3 ** len(s) for s in PATTERNS] + COUNT_SIZES
OFFSETS = np.concatenate([[0], np.cumsum(SIZES)]).astype(np.int64)
TOTAL = int(OFFSETS[-1])
EMPTIES = range(14, 19)


def image(square, t):
    r, c = divmod(square, 8)
    if t & 1: c = 7 - c
    if t & 2: r = 7 - r
    if t & 4: r, c = c, r
    return r * 8 + c


NOT_A, NOT_H = np.uint64(0xFEFEFEFEFEFEFEFE), np.uint64(0x7F7F7F7F7F7F7F7F)
DIRECTIONS = [(1, NOT_A), (-1, NOT_H), (8, None), (-8, None), (9, NOT_A), (7, NOT_H), (-7, NOT_A), (-9, NOT_H)]
QUADRANTS = [np.uint64(q) for q in (0x0F0F0F0F, 0xF0F0F0F0, 0x0F0F0F0F00000000, 0xF0F0F0F000000000)]


def shifted(x, s, mask):
    y = x << np.uint64(s) if s > 0 else x >> np.uint64(-s)
    return y if mask is None else y & mask


def legal(p, o):
    empty, moves = ~(p | o), np.zeros_like(p)
    for s, m in DIRECTIONS:
        f = shifted(p, s, m) & o
        for _ in range(5):
            f |= shifted(f, s, m) & o
        moves |= shifted(f, s, m) & empty
    return moves


def adjacent(x, empty):
    a = np.zeros_like(x)
    for s, m in DIRECTIONS:
        a |= shifted(x, s, m)
    return a & empty


def popcount(x):
    return np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(1).astype(np.int64)


def readings(p, o):
    """Rows into one table: 96 pattern readings (12 patterns x 8 images), then 3 counts."""
    bit = lambda x, s: ((x >> np.uint64(s)) & np.uint64(1)).astype(np.int64)
    cols = []
    for k, squares in enumerate(PATTERNS):
        for t in range(8):
            index = sum(3 ** j * (bit(p, image(s, t)) + 2 * bit(o, image(s, t))) for j, s in enumerate(squares))
            cols.append(OFFSETS[k] + index)
    empty = ~(p | o)
    mp, mo = np.minimum(popcount(legal(p, o)), 31), np.minimum(popcount(legal(o, p)), 31)
    pp, po = np.minimum(popcount(adjacent(o, empty)), 47), np.minimum(popcount(adjacent(p, empty)), 47)
    odd = sum(popcount(empty & q) & 1 for q in QUADRANTS) + 5 * (popcount(empty) & 1)
    n = len(PATTERNS)
    cols += [OFFSETS[n] + mp * 32 + mo, OFFSETS[n + 1] + pp * 48 + po, OFFSETS[n + 2] + odd]
    return np.stack(cols, 1)


def check_readings(tb, p, o, legal_moves, every=1000):
    """The readings' move generation is the library's, and each of the 8 images of a
    position (every `every`th) reads the same multiset: what makes both models symmetric."""
    assert (legal(p, o) == legal_moves).all(), "move generation differs from the library's"
    x = readings(p[::every], o[::every])
    for row, (pi, oi) in zip(x, zip(p[::every], o[::every])):
        for image_ in tb.Position.from_bitboards(int(pi), int(oi)).symmetries():
            y = readings(np.array([image_.player], np.uint64), np.array([image_.opponent], np.uint64))[0]
            assert sorted(y) == sorted(row), "a symmetric image reads differently"


def save_parts(out, thor, parts, score):
    """Each part's positions at its numbers of empties, checked (`check_readings`), with
    `score(tb, rows, keep)` as target, into one .npz: `{part}_player`, `_opponent`,
    `_game` (index in the part's games) and `_score`."""
    import thorbook as tb
    arrays = {}
    for part, years, counts in parts:
        t = time.time()
        games = tb.read_games([f"{thor}/WTH_{y}.wtb" for y in years] + [f"{thor}/WTHOR.JOU", f"{thor}/WTHOR.TRN"])
        rows = games.positions()
        keep = np.isin(rows["empties"], list(counts))
        p, o = rows["player"][keep], rows["opponent"][keep]
        check_readings(tb, p, o, rows["legal"][keep])
        arrays.update({f"{part}_player": p, f"{part}_opponent": o, f"{part}_game": rows["game"][keep],
                       f"{part}_score": score(tb, rows, keep)})
        print(f"{part}: {len(games)} games, {len(p)} positions at {sorted(counts)} empties "
              f"in {time.time() - t:.0f} s", flush=True)
    np.savez(out, **arrays)


def data(out, thor):
    def solved(tb, rows, keep):
        label = tb.label_exact(rows["player"][keep], rows["opponent"][keep], max_empties=max(EMPTIES))
        assert label["known"].all()
        return label["score"]
    save_parts(out, thor, [("train", range(1977, 2011), EMPTIES), ("held", range(2011, 2016), EMPTIES)], solved)


MOVE_LOSS = 2.3  # discs a move, as `train` measures it (src/train/positions.rs)


def theoretical(out, thor, empties):
    def corrected(tb, rows, keep):
        # By the parity of the empties: `train` counts the moves one by one, which
        # differs only where a pass falls between the position and 24 empties.
        assert rows["theoretical_known"][keep].all(), "a game without a theoretical score"
        e = rows["empties"][keep].astype(np.int64)
        return (rows["theoretical_score"][keep] + MOVE_LOSS * ((e - 24) % 2)).astype(np.float32)
    save_parts(out, thor, [("train", range(1977, 2011), empties), ("held", range(2011, 2016), [24])], corrected)


def fit(path, model_name, share, epochs, decay):
    import torch
    import torch.nn as nn
    torch.manual_seed(0)

    class Linear(nn.Module):
        def __init__(self, tables=1):
            super().__init__()
            self.table = nn.Embedding(TOTAL * tables, 1)
            nn.init.zeros_(self.table.weight)
            self.bias = nn.Parameter(torch.zeros(1))

        def forward(self, x):
            return self.table(x).sum((1, 2)) + self.bias

    class Net(nn.Module):
        def __init__(self, width, hidden):
            super().__init__()
            self.linear = Linear()
            self.table = nn.Embedding(TOTAL, width)
            nn.init.normal_(self.table.weight, 0, 0.05)
            self.hidden, self.out = nn.Linear(width, hidden), nn.Linear(hidden, 1)

        def forward(self, x):
            accumulator = torch.clamp(self.table(x).sum(1), -1, 1)
            return self.linear(x) + self.out(torch.relu(self.hidden(accumulator))).squeeze(1)

    @torch.no_grad()
    def mae(model, x, y):
        model.eval()
        return float(sum((model(x[i:i + 8192]) - y[i:i + 8192]).abs().sum() for i in range(0, len(x), 8192)) / len(x))

    d = np.load(path)
    def part(name):
        p, o = d[f"{name}_player"], d[f"{name}_opponent"]
        x = readings(p, o)
        if model_name == "phased":
            x += TOTAL * (64 - popcount(p | o) - min(EMPTIES))[:, None]
        return torch.from_numpy(x), torch.from_numpy(d[f"{name}_score"].astype(np.float32)), d[f"{name}_game"]

    x, y, game = part("train")
    held_x, held_y, _ = part("held")
    rng = np.random.default_rng(1)
    games = rng.permutation(np.unique(game))
    validation = np.isin(game, games[: len(games) // 20])
    rest = games[len(games) // 20:]
    train = np.isin(game, rest[: int(len(rest) * share)]) & ~validation
    sets = {"train": (x[train], y[train]), "validation": (x[validation], y[validation]), "held out": (held_x, held_y)}
    if model_name == "linear":
        model = Linear()
    elif model_name == "phased":
        model = Linear(len(EMPTIES))
    else:
        model = Net(*map(int, model_name[3:].split("x")))
    tables = [p for p in model.parameters() if p.dim() == 2 and p.shape[0] % TOTAL == 0]
    opt = torch.optim.Adam(model.parameters(), lr=0.003 if model_name.startswith("net") else 0.01)
    tx, ty = sets["train"]
    print(f"{model_name}, {share} of the training games: {len(tx)} positions", flush=True)
    best = None
    for epoch in range(1, epochs + 1):
        t = time.time()
        model.train()
        for batch in torch.randperm(len(tx)).split(2048):
            loss = ((model(tx[batch]) - ty[batch]) ** 2).mean() + decay * sum((p ** 2).sum() for p in tables) / len(tx)
            opt.zero_grad()
            loss.backward()
            opt.step()
        errors = {k: mae(model, *v) for k, v in sets.items()}
        print(f"  epoch {epoch}: " + ", ".join(f"{k} {v:.3f}" for k, v in errors.items()) + f" ({time.time() - t:.0f} s)", flush=True)
        if best is None or errors["validation"] < best[1]["validation"]:
            best = (epoch, errors)
    print(f"best: epoch {best[0]}, " + ", ".join(f"{k} {v:.2f}" for k, v in best[1].items()))


if __name__ == "__main__":
    if sys.argv[1] == "data":
        data(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "../shared/thor")
    elif sys.argv[1] == "theoretical":
        theoretical(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "../shared/thor",
                    [int(e) for e in sys.argv[4].split(",")] if len(sys.argv) > 4 else [24])
    else:
        a = sys.argv[4:]
        fit(sys.argv[2], sys.argv[3], float(a[0]) if a else 1.0, int(a[1]) if len(a) > 1 else 10,
            float(a[2]) if len(a) > 2 else 1.0)
