#!/usr/bin/env bash
# Time per move of each level on THREADS threads (default 1): the engine's move (no
# book) in positions of the first GAMES bundled Thor games at 40, 32 and 24 empties.
# Usage: [THREADS=2] scripts/level_times.sh [FIRST] [LAST] [GAMES]   (defaults 1 10 10; release build)
set -euo pipefail
cd "$(dirname "$0")/.."
first=${1:-1}; last=${2:-10}; games=${3:-10}
exe=${THORBOOK:-target/release/thorbook}
mapfile -t lines < <("$exe" thor games --format transcript --limit "$games")
for ((l = first; l <= last; l++)); do
  for empties in 40 32 24; do
    for line in "${lines[@]}"; do
      prefix=${line:0:$(( (60 - empties) * 2 ))}
      "$exe" bestmove --moves "$prefix" --no-book --level "$l" --threads "${THREADS:-1}" --json
    done | awk -v l="$l" -v e="$empties" '{ match($0, /"seconds":[^,}]*/); s += substr($0, RSTART + 10, RLENGTH - 10); n++ }
      END { printf "level %2d  %2d empties  %9.4f s a move (%d positions)\n", l, e, s / n, n }'
  done
done
