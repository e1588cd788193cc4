#!/usr/bin/env bash
# Regenerates queries/: the SMT-LIB queries `apc check` sends for the
# benchmark programs of the ISSTA'12 paper (Table 2), with both solvers.
# Every file runs standalone: `z3 FILE`, `cvc5 FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
rm -f queries/*.smt2
for p in oneloop twoloops issta_running hello hw hwm matrir windriver; do
    # The verdicts go to queries/verdicts.txt; exit status 1/3 (reachable,
    # unknown) is not a failure here.
    ./target/release/apc check "tests/programs/$p.mc" --solver all --timeout 20 \
        --dump-queries queries || true
done > queries/verdicts.txt
ls queries/*.smt2 | wc -l
