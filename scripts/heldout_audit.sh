#!/usr/bin/env bash
# The held-out audit: how good a book is on games it was not built from.
#
#   scripts/heldout_audit.sh [ARCHIVE_DIR] [WORK_DIR] [HELD_YEAR]
#
# 1. builds a book as the bundled one is built (ply 20, 2 games, leaves at level 8),
#    from every archive but HELD_YEAR (2015 by default);
# 2. audits it on a weighted sample of 150 positions at plies 10-20 of the HELD_YEAR
#    games that it holds, against level 14 (depth 26 at 2 sigma), beside the engine's
#    own level-10 search of the same positions (--compare-level 10);
# 3. revalues it with the corrected back-up rule and audits that on the same positions
#    (the searches are kept in one checkpoint, WORK_DIR/audit-levelL.log, and reused: same
#    positions, same search);
# 4. fixes it at level 10 and audits the fixed book the same way;
# 5. deepens the fixed book at level 10 (the leaves on lines within 2 discs a move and
#    4 a line of the best) and audits that.
#
# Every step resumes after an interruption (run the script again). Reports go to
# WORK_DIR/audit-*.json; the summary lines are printed. AUDIT_LEVEL (14), SAMPLE (150)
# and FIX_TIME (seconds, unlimited by default) shrink the run to the compute at hand:
# the figures in docs/research/2026-11-25-trusting-a-book-held-out.md are AUDIT_LEVEL=14 SAMPLE=100 FIX_TIME=2400 on 2 cores.
set -euo pipefail
archives=${1:-../shared/thor}
work=${2:-target/heldout}
held=${3:-2015}
mkdir -p "$work"
cargo build --release
tb=$PWD/target/release/thorbook
inputs=()
for f in "$archives"/WTH_*.wtb; do
    [[ $f == *"_$held.wtb" ]] || inputs+=("$f")
done
resume=()
[ -e "$work/games.tbk.checkpoint" ] && resume=(--resume)
[ -e "$work/games.tbk" ] || "$tb" book build "${inputs[@]}" --level 8 --hash-mib 16 -o "$work/games.tbk" "${resume[@]}"
audit() { # BOOK NAME: every audit shares one checkpoint (same positions, same searches)
    "$tb" book audit --book "$1" --games "$archives/WTH_$held.wtb" --min-ply 10 --max-ply 20 --sample "${SAMPLE:-150}" \
        --level "${AUDIT_LEVEL:-14}" --compare-level 10 --hash-mib 64 --checkpoint "$work/audit-level${AUDIT_LEVEL:-14}.log" --resume \
        -o "$work/audit-$2.json" | head -3
}
audit "$work/games.tbk" negamax
[ -e "$work/corrected.tbk" ] || "$tb" book import "$work/games.tbk" --back-up corrected -o "$work/corrected.tbk"
audit "$work/corrected.tbk" corrected
fix_args=()
[ -e "$work/fixed.tbk.fix" ] && fix_args=(--resume)
[ -n "${FIX_TIME:-}" ] && fix_args+=(--max-time "$FIX_TIME")
[ -e "$work/fixed.tbk" ] && [ ! -e "$work/fixed.tbk.fix" ] || "$tb" book fix --book "$work/games.tbk" --level 10 \
    --max-ply 20 --hash-mib 16 -o "$work/fixed.tbk" "${fix_args[@]}"
audit "$work/fixed.tbk" fixed
resume=()
[ -e "$work/deepened.tbk.deviate" ] && resume=(--resume)
[ -e "$work/deepened.tbk" ] && [ ! -e "$work/deepened.tbk.deviate" ] || "$tb" book deepen --book "$work/fixed.tbk" \
    --level 10 --error 2 --budget 4 --hash-mib 16 -o "$work/deepened.tbk" "${resume[@]}"
audit "$work/deepened.tbk" deepened
