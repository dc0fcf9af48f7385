#!/usr/bin/env bash
# Counts the public Rust surface from `cargo public-api`'s list (api/public-api.txt, or
# standard input): nameable items are modules, types, traits, constants, statics,
# free functions and inherent methods and associated items; fields and variants are
# counted apart; items of trait impls (`impl Display for …`) are not counted, since a
# user cannot name them apart from the trait.
#
#   scripts/public-items.sh [LIST]
set -euo pipefail
awk '
/^impl/ { trait = ($0 ~ / for /); next }
/^(#\[non_exhaustive\] )?pub (mod|struct|enum|trait|union|macro) / { trait = 0; items++; next }
/^(#\[non_exhaustive\] )?pub (fn|type|const|static) / { if (!trait) items++; next }
/^(#\[non_exhaustive\] )?pub / { fields++ }
END { printf "%d nameable public items, %d public fields and variants\n", items, fields }
' "${1:-api/public-api.txt}"
