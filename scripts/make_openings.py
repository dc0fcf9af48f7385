#!/usr/bin/env python3
"""Writes data/openings.txt: balanced 8-ply openings from the Thor archives, for matches.

Usage: python3 scripts/make_openings.py [ARCHIVES] > data/openings.txt
(default ARCHIVES: ../shared/thor; needs a release build: cargo build --release).

An opening qualifies when at least MIN_GAMES games from 1985 on began with it and the
average of their theoretical scores (exact at 24 empties, WTHOR's P3) is within
MAX_BIAS discs of even. Lines that transpose into the same position (any symmetry)
are kept once. The most played lines come first.
"""
import collections
import csv
import json
import subprocess
import sys

PLY = 8
MIN_GAMES = 40
MAX_BIAS = 6.0
COUNT = 60
EXE = "target/release/thorbook"

archives = sys.argv[1] if len(sys.argv) > 1 else "../shared/thor"
out = subprocess.run([EXE, "thor", "export", archives, "--years", "1985..", "--format", "csv"],
                     check=True, capture_output=True, text=True).stdout
games = collections.Counter()
bias = collections.defaultdict(float)
for row in csv.DictReader(out.splitlines()):
    moves = row["moves"]
    if len(moves) < 2 * PLY or row["outcome"] != "finished":
        continue
    prefix = moves[: 2 * PLY]
    games[prefix] += 1
    bias[prefix] += 2 * int(row["theoretical_score"]) - 64

seen = set()
lines = []
for prefix, n in games.most_common():
    if n < MIN_GAMES:
        break
    mean = bias[prefix] / n
    if abs(mean) > MAX_BIAS:
        continue
    shown = json.loads(subprocess.run([EXE, "show", "--moves", prefix, "--json"],
                                      check=True, capture_output=True, text=True).stdout)
    key = shown["canonical_key"]
    if key in seen:
        continue
    seen.add(key)
    lines.append(f"{prefix}  # {n} games from 1985, theoretical score {mean:+.1f} for black on average")
    if len(lines) == COUNT:
        break

print("# Balanced 8-ply openings from the Thor archives (1985-2015), for `thorbook match`.")
print("# Made by scripts/make_openings.py; one move sequence a line, `#` starts a comment.")
for line in lines:
    print(line)
