#!/usr/bin/env bash
# Counts the public Rust surface from `cargo public-api`'s list (api/public-api.txt, or
# standard input): nameable items are modules, types, traits, constants, statics,
# free functions and inherent methods and associated items; fields and variants are
# counted apart; items of trait impls (`impl Display for …`) are not counted, since a
# user cannot name them apart from the trait. An item re-exported at the crate root
# (`thorbook::Board` for `thorbook::board::Board`) is one item: `cargo public-api`
# lists it, and its methods again, under both paths, and each is counted once.
#
#   scripts/public-items.sh [LIST] [--max N]   (--max: fail above N nameable items)
set -euo pipefail
list=api/public-api.txt
max=
while [ $# -gt 0 ]; do
    case "$1" in
        --max) max="$2"; shift 2 ;;
        *) list="$1"; shift ;;
    esac
done
awk -v max="$max" '
!/^impl/ && seen[$0]++ { next }
/^impl/ { trait = ($0 ~ / for /); next }
/^(#\[non_exhaustive\] )?pub (struct|enum|trait|union) thorbook::[A-Z]/ { trait = 0; reexport = 1; next }
/^(#\[non_exhaustive\] )?pub (mod|struct|enum|trait|union|macro) / { trait = 0; reexport = 0; items++; next }
/^(#\[non_exhaustive\] )?pub (fn|type|const|static) / { if (!trait) items++; next }
/^(#\[non_exhaustive\] )?pub / { if (!reexport) fields++ }
END {
    printf "%d nameable public items, %d public fields and variants\n", items, fields
    if (max != "" && items > max + 0) { printf "more than the %d allowed: the surface is chosen for its users (docs/library.md)\n", max; exit 1 }
}
' "$list"
