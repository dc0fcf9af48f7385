#!/usr/bin/env python3
"""Book values against a deeper search of the same positions without the book.

Takes the positions at the given plies of the games in ARCHIVES (in file order) that
BOOK holds, PER_PLY of them per ply, and compares the book's value of each (the best
of its moves' values, for the side to move) with `bestmove --no-book --level LEVEL`.
Prints every position, then the mean signed difference (book minus search: positive
when the book is more optimistic for the side to move) and the mean absolute one.

Usage: scripts/book_vs_search.py BOOK ARCHIVES... [--plies 10,14,18] [--per-ply 20]
       [--level 10] [--engine target/release/thorbook] [--eval FILE]
"""
import argparse
import json
import subprocess
import sys


def run(engine, *args):
    out = subprocess.run([engine, *args], capture_output=True, text=True, check=True)
    return out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("book")
    ap.add_argument("archives", nargs="+")
    ap.add_argument("--plies", default="10,14,18")
    ap.add_argument("--per-ply", type=int, default=20)
    ap.add_argument("--level", default="10")
    ap.add_argument("--engine", default="target/release/thorbook")
    ap.add_argument("--eval", help="weight file of the searching engine (default: its bundled one)")
    args = ap.parse_args()
    plies = [int(p) for p in args.plies.split(",")]
    games = run(args.engine, "thor", "games", *args.archives, "--format", "transcript").split()
    rows = []
    for ply in plies:
        seen, taken = set(), 0
        for line in games:
            if taken == args.per_ply:
                break
            if len(line) < 2 * ply:
                continue
            moves = line[: 2 * ply]
            q = json.loads(run(args.engine, "book", "query", "--book", args.book, "--moves", moves, "--json"))
            if not q["in_book"] or q["board"] in seen:
                continue
            values = [m["score"] for m in q["moves"] if m["in_book"] or m["leaf"]]
            if not values:
                continue
            seen.add(q["board"])
            search_args = ["bestmove", "--no-book", "--level", args.level, "--moves", moves, "--json"]
            if args.eval:
                search_args += ["--eval", args.eval]
            s = json.loads(run(args.engine, *search_args))
            rows.append((ply, moves, max(values), s["score"]))
            print(f"ply {ply:2} {moves:40} book {max(values):+3} search {s['score']:+3}", flush=True)
            taken += 1
    if not rows:
        sys.exit("no position of the games is in the book")
    diffs = [b - s for _, _, b, s in rows]
    print(f"{len(rows)} positions: book - search signed {sum(diffs) / len(diffs):+.2f}, "
          f"absolute {sum(abs(d) for d in diffs) / len(diffs):.2f} discs")


if __name__ == "__main__":
    main()
