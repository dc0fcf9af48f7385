#!/usr/bin/env bash
# Rebuilds data/book.tbk, the bundled opening book: every position to ply 20 reached
# by at least 2 games of the full WTHOR archives (1977-2015), leaves scored at engine
# level 8; optionally grown by deviation (DEVIATE_POSITIONS, 0 to skip); the leaves
# that can change what it plays deepened to level 10; then its values on the lines it
# plays to ply 20 checked at level 10 and fixed (FIX_TIME seconds, unlimited by
# default); last, the leaves on its lines deepened again at LAST_LEVEL (default 12;
# 10 to stop after the fix). Times on 2 cores are in docs/research/2026-11-23-the-bundled-book.md.
#
#   scripts/bundled_book.sh [ARCHIVE_DIR] [WORK_DIR]
#
# Every step checkpoints: run the script again after an interruption and it resumes.
set -euo pipefail
archives=${1:-../shared/thor}
work=${2:-target/bundled-book}
mkdir -p "$work"
cargo build --release
tb=target/release/thorbook
resume=()
[ -e "$work/games.tbk.checkpoint" ] && resume=(--resume)
[ -e "$work/games.tbk" ] || "$tb" book build "$archives" --level 8 --hash-mib 16 -o "$work/games.tbk" "${resume[@]}"
# step OUT STATE COMMAND...: run COMMAND -o OUT unless OUT is finished, with --resume
# while OUT.STATE (the state file deviate/deepen/fix keep beside their output) says a
# run was interrupted. A fix stopped by FIX_TIME keeps its state, so running the script
# again gives the fix another FIX_TIME before the later steps.
step() {
    local out=$1 state=$1.$2
    shift 2
    if [ -e "$state" ]; then
        "$@" -o "$out" --resume
    elif [ ! -e "$out" ]; then
        "$@" -o "$out"
    fi
}
grown="$work/games.tbk"
if [ "${DEVIATE_POSITIONS:-20000}" != 0 ]; then
    step "$work/deviated.tbk" deviate "$tb" book deviate --book "$work/games.tbk" --error 2 --budget 4 --level 8 \
        --max-ply 30 --max-positions "${DEVIATE_POSITIONS:-20000}" --hash-mib 16
    grown="$work/deviated.tbk"
fi
step "$work/deepened.tbk" deviate "$tb" book deepen --book "$grown" --level 10 --error 2 --budget 4 --hash-mib 16
fix_time=()
[ -n "${FIX_TIME:-}" ] && fix_time=(--max-time "$FIX_TIME")
step "$work/book.tbk" fix "$tb" book fix --book "$work/deepened.tbk" --level 10 --max-ply 20 --hash-mib 16 \
    "${fix_time[@]}"
final="$work/book.tbk"
if [ "${LAST_LEVEL:-12}" != 10 ]; then
    step "$work/final.tbk" deviate "$tb" book deepen --book "$work/book.tbk" --level "${LAST_LEVEL:-12}" \
        --error 2 --budget 4 --hash-mib 16
    final="$work/final.tbk"
fi
"$tb" book verify --book "$final"
cp "$final" data/book.tbk
"$tb" book info --book data/book.tbk
