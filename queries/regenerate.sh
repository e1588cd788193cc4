#!/usr/bin/env bash
# Regenerates queries/: the SMT-LIB queries `apc check` sends for the
# targets of the benchmark programs of the ISSTA'12 paper (Table 2), with
# both solvers (`--solver all`), every variant of the race.
# Every file runs standalone: `z3 FILE`, `cvc5 FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
rm -f queries/*.smt2
for spec in oneloop:10 twoloops:13 issta_running:12 hello:28 hw:52 hwm:100 matrir:24 windriver:23; do
    # The verdicts go to queries/verdicts.txt; exit status 1/3 (reachable,
    # unknown) is not a failure here.
    ./target/release/apc check "tests/programs/${spec%%:*}.mc" --target "${spec##*:}" \
        --solver all --timeout 60 --dump-queries queries || true
done > queries/verdicts.txt
ls queries/*.smt2 | wc -l
