#!/usr/bin/env bash
# Runs the fuzz targets (fuzz/, cargo-fuzz on the nightly toolchain) for SECONDS each:
#   scripts/fuzz.sh [SECONDS] [TARGET...]      (default: 60 s, every target)
#   PARALLEL=2 scripts/fuzz.sh 600              (two targets at a time)
#   SANITIZER=address REPLAY=1 scripts/fuzz.sh  (each corpus input once, under ASan)
#   FUZZ_BUILD=0 scripts/fuzz.sh ...            (use the binaries already built)
# Targets are built with overflow checks and debug assertions. By default without a
# sanitizer: safe Rust needs none, and it runs about 5 times faster; the unsafe code
# (move lists, the transposition table, pext) is reached by the gtp and nboard
# targets, whose corpora are worth replaying under ASan as above.
# The targets whose inputs drive many board symmetries or searches (book walks, engine
# sessions, explorer queries, book imports) are built without comparison tracing, which
# makes them about 8 times faster; the parsers keep it, to find magic values and words.
# Each target's corpus grows in fuzz/corpus/TARGET (started from fuzz/seeds/TARGET);
# a crashing input lands in fuzz/artifacts/TARGET and the script exits non-zero.
# Copy it to tests/fuzz_regressions/TARGET/ so the normal suite replays it for good.
# Needs: rustup toolchain nightly, cargo install cargo-fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cd fuzz && cargo +nightly fuzz list)
fi
export SANITIZER=${SANITIZER:-none}
if [ "${FUZZ_BUILD:-1}" != 0 ]; then
    (cd fuzz && cargo +nightly fuzz build --sanitizer "$SANITIZER" &&
        cargo +nightly fuzz build --sanitizer "$SANITIZER" --no-trace-compares --target-dir target-untraced)
fi
mkdir -p fuzz/logs

run_one() {
    local target=$1 seconds=$2 limit
    if [ -n "${REPLAY:-}" ]; then limit=-runs=0; else limit=-max_total_time=$seconds; fi
    mkdir -p "fuzz/corpus/$target" "fuzz/artifacts/$target"
    cp -n "fuzz/seeds/$target/"* "fuzz/corpus/$target/" 2>/dev/null || true
    local log="fuzz/logs/$target.log" max_len=8192 target_dir=target
    # Inputs whose cost grows with their length (book walks, command sessions) are
    # kept shorter so that the fuzzer spends its time on variety.
    case $target in
        book_open | gtp | nboard) max_len=2048 ;;
        thor_file | book_import) max_len=4096 ;;
    esac
    case $target in
        book_open | gtp | nboard | explorer | book_import) target_dir=target-untraced ;;
    esac
    local binary="fuzz/$target_dir/x86_64-unknown-linux-gnu/release/$target"
    if "$binary" "fuzz/corpus/$target" "$limit" -print_final_stats=1 -max_len="$max_len" \
            -rss_limit_mb=4096 -artifact_prefix="fuzz/artifacts/$target/" >"$log" 2>&1; then
        local execs
        execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
        echo "$target: ${execs:-?} executions (${limit#-}), no crash"
    else
        echo "$target: FAILED, see $log and fuzz/artifacts/$target/"
        grep -m5 -E 'panicked|ERROR|SUMMARY' "$log" || true
        return 1
    fi
}
export -f run_one

printf '%s\n' "${targets[@]}" | xargs -P "${PARALLEL:-1}" -I{} bash -c 'run_one "$@"' _ {} "$seconds"
