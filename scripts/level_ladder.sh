#!/usr/bin/env bash
# The level ladder: each level against the one below, GAMES games from the bundled
# openings, without the book (so the games test the search, not the book).
# Usage: scripts/level_ladder.sh [FIRST] [LAST] [GAMES]   (defaults 2 9 20; release build)
set -euo pipefail
cd "$(dirname "$0")/.."
first=${1:-2}; last=${2:-9}; games=${3:-20}
exe=${THORBOOK:-target/release/thorbook}
for ((l = first; l <= last; l++)); do
  echo "== level $l vs level $((l - 1))"
  "$exe" match --a "self --level $l --no-book" --b "self --level $((l - 1)) --no-book" --games "$games" | tail -6
done
