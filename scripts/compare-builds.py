#!/usr/bin/env python3
"""Compare thorbook builds on one machine: run them alternately, N rounds, one thread.

  scripts/compare-builds.py perft 30 BASE OTHER...   perft 11
  scripts/compare-builds.py ffo 6 BASE OTHER...      FFO #20-39 (needs ../shared/ffo)

Prints each binary's minimum and median time and, for each OTHER, the median and
quartiles of BASE's time over its time in the same round (above 1: OTHER is faster).
Alternating in one run is what makes builds comparable on a noisy host; times from
different runs are not. Not a test: nothing here asserts a time.
"""

import os
import re
import statistics
import subprocess
import sys

FFO = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "ffo", "fforum-20-39.obf")


def perft(binary: str) -> float:
    out = subprocess.run([binary, "perft", "11", "--threads", "1"], capture_output=True, text=True, check=True).stdout
    return float(re.search(r" in ([0-9.]+) s", out).group(1))


def ffo(binary: str) -> float:
    out = subprocess.run(
        [binary, "solve", FFO, "--threads", "1", "--hash-mib", "256"], capture_output=True, text=True, check=True
    ).stdout
    return float(re.search(r"nodes, ([0-9.]+) s", out.splitlines()[-1]).group(1))


def main() -> None:
    if len(sys.argv) < 5 or sys.argv[1] not in ("perft", "ffo"):
        sys.exit(__doc__)
    kind, rounds, base, *others = sys.argv[1:]
    measure = perft if kind == "perft" else ffo
    times = {b: [] for b in [base] + others}
    ratios = {o: [] for o in others}
    for i in range(int(rounds)):
        order = [base] + others if i % 2 == 0 else others[::-1] + [base]
        t = {b: measure(b) for b in order}
        for b, s in t.items():
            times[b].append(s)
        for o in others:
            ratios[o].append(t[base] / t[o])
    for b, ts in times.items():
        print(f"{b}: min {min(ts):.3f} s, median {statistics.median(ts):.3f} s")
    for o, rs in ratios.items():
        q = statistics.quantiles(rs, n=4) if len(rs) > 1 else [rs[0]] * 3
        print(f"speed of {o} over {base}: median {statistics.median(rs):.3f}, quartiles {q[0]:.3f}-{q[2]:.3f}")


if __name__ == "__main__":
    main()
