#!/usr/bin/env python3
"""Where an engine's clock goes in a match: from `thorbook match --clock S --games-out
F.jsonl` files (each side's moves with their empties and seconds, `per_move`), the
share of the clock spent per phase and where each game's search reached the end (the
last move of 20 ms or more).

Usage: scripts/clock_use.py CLOCK_SECONDS [--side a|b] GAMES.jsonl...
"""
import json, sys


def main(args):
    if len(args) < 2:
        sys.exit(__doc__)
    clock, side = float(args[0]), "a"
    files = args[1:]
    if files[0] == "--side":
        side, files = files[1], files[2:]
    games = [json.loads(line)[f"{side}_thinking"]["per_move"] for path in files for line in open(path)]
    n = len(games)
    for name, lo, hi in [("> 40", 41, 60), ("33-40", 33, 40), ("25-32", 25, 32), ("<= 24", 0, 24)]:
        spent = sum(t for moves in games for e, t in moves if lo <= e <= hi)
        print(f"{name:>6} empties: {100 * spent / n / clock:5.1f}% of the clock")
    used = sum(t for moves in games for _, t in moves) / n
    print(f"used {100 * used / clock:.1f}% over {n} games")
    ends = sorted(min(e for e, t in moves if t >= 0.02) for moves in games if any(t >= 0.02 for _, t in moves))
    print("last move of 20 ms or more at", ends, "empties")


if __name__ == "__main__":
    main(sys.argv[1:])
