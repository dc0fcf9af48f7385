#!/usr/bin/env bash
# Time to a fixed depth at the levels' selectivity: the engine's search (no book, no
# exact solve) of positions at EMPTIES empties of the first GAMES bundled Thor games,
# on THREADS threads, summed over the positions, with nodes per second.
# Usage: scripts/search_speed.sh DEPTH SIGMAS THREADS [EMPTIES] [GAMES]
#   e.g. scripts/search_speed.sh 16 1.5 1; scripts/search_speed.sh 20 2.0 2
# THORBOOK picks the binary (default target/release/thorbook), so that builds compare.
set -euo pipefail
cd "$(dirname "$0")/.."
depth=$1; sigmas=$2; threads=$3; empties=${4:-36}; games=${5:-10}
exe=${THORBOOK:-target/release/thorbook}
mapfile -t lines < <("$exe" thor games --format transcript --limit "$games")
for line in "${lines[@]}"; do
  prefix=${line:0:$(( (60 - empties) * 2 ))}
  "$exe" bestmove --moves "$prefix" --no-book --depth "$depth" --selectivity "$sigmas" --exact-at 0 \
    --threads "$threads" --json
done | THREADS="$threads" python3 -c '
import json, os, sys
rows = [json.loads(l) for l in sys.stdin]
s = sum(r["seconds"] for r in rows); n = sum(r["nodes"] for r in rows)
t = int(os.environ["THREADS"]); threads = "1 thread" if t == 1 else f"{t} threads"
print(f"depth '"$depth"' at '"$sigmas"' sigma, {threads}, {len(rows)} positions: {s:.2f} s, {n} nodes, {n / s / 1e6:.2f} M nodes/s")'
