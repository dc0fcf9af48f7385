#!/usr/bin/env python3
"""Latency of the explorer's API under game filters, as a user's clicks make them.

Starts `thorbook explore` over the archives given (all of ../shared/thor by default),
then for each filter asks `/api/position` and `/api/games` of every position along a
few lines, as clicking through them would, one request at a time, and prints the
median and 95th percentile per filter and endpoint, in milliseconds.

    scripts/explorer-latency.py [--bin target/release/thorbook] [ARCHIVES...]
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

# The first 20 moves of four games of 2013 (a perpendicular, a parallel, a Buffalo
# and a Tiger-like line).
LINES = [
    "f5d6c3d3c4f4f6g5e6c5f3f7e7f8e3g6b6g4c6g3",
    "f5f6e6f4g6c6g5d6f3e7c5g3f7h5c3d7e3f2e8d8",
    "f5d6c5f4e3c6e6f7d7c7f6e7b6b5e8g6f8g4c8c4",
    "f5d6c3f4f6d3f3b3c7d7e7d8c6b5c5g4g3e6f7e8",
]
FILTERS = [
    ("none", ""),
    ("player", "&player=tamenori"),
    ("player as black", "&player=tamenori&as=black"),
    ("tournament", "&tournament=championnat"),
    ("years", "&years=1990..1999"),
    ("all four", "&player=shaman&as=white&tournament=open&years=2000.."),
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(root, "target/release/thorbook"))
    ap.add_argument("--port", type=int, default=8697)
    ap.add_argument("archives", nargs="*")
    args = ap.parse_args()
    archives = args.archives or sorted(glob.glob(os.path.join(root, "../shared/thor/*")))
    server = subprocess.Popen(
        [args.bin, "explore", "--port", str(args.port), "--no-store", *archives],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for line in server.stderr:
            sys.stderr.write(line)
            if "explorer at" in line:
                break
        base = f"http://127.0.0.1:{args.port}"
        print(f"{'filter':<16} {'endpoint':<14} {'requests':>8} {'median ms':>10} {'p95 ms':>8}  games at the start")
        for name, query in FILTERS:
            times = {"position": [], "games": []}
            start_games = None
            for line in LINES:
                for n in range(0, len(line) + 1, 2):
                    moves = line[:n]
                    for endpoint in times:
                        url = f"{base}/api/{endpoint}?moves={moves}{query}"
                        t = time.perf_counter()
                        with urllib.request.urlopen(url) as r:
                            body = json.load(r)
                        times[endpoint].append(1000 * (time.perf_counter() - t))
                        if n == 0 and endpoint == "games":
                            start_games = body["total"]
            for endpoint, ts in times.items():
                ts.sort()
                p95 = ts[min(len(ts) - 1, int(0.95 * len(ts)))]
                print(
                    f"{name:<16} {'/api/' + endpoint:<14} {len(ts):>8} {statistics.median(ts):>10.1f} {p95:>8.1f}  {start_games}"
                )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
