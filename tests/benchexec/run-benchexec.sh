#!/usr/bin/env bash
# Runs a benchmark definition with BenchExec on this machine, then
# table-generator on its results (docs/benchexec.md). Installs BenchExec and
# builds apc as run-tool-info-test.sh does. Not part of `cargo test`.
#
#   bash tests/benchexec/run-benchexec.sh check|explore [benchexec options]
#
# e.g. `… check -r z3 -t programs` (one run definition, one task set).
# BENCHEXEC_RESULTS   where results and tables go (default /tmp/apc-benchexec)
# BENCHEXEC_CONTAINER the container options (default: a read-only root with
#                     an overlay on /home, which works where an overlay on /
#                     does not; apc writes no files); `--no-container` turns
#                     the isolation off, for machines without cgroups.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
which="${1:-}"
case "$which" in
    check|explore) shift ;;
    *) log "usage: $0 check|explore [benchexec options]"; exit 2 ;;
esac
setup_benchexec
build_apc
cd "$repo"

out="${BENCHEXEC_RESULTS:-/tmp/apc-benchexec}"
mkdir -p "$out"
read -r -a container <<<"${BENCHEXEC_CONTAINER:---read-only-dir / --overlay-dir /home}"
before="$(ls "$out")"
benchexec "tests/benchexec/apc-$which.xml" \
    --tool-directory "$(realpath --relative-to=. "$tool_dir")" \
    --outputpath "$out/" "${container[@]}" "$@"

# The result files this run wrote, one per run definition (NAME.DATE.results.
# RUNDEF.xml.bz2; BenchExec adds one per task set too, with the set's name
# before .xml): one table that puts them side by side.
mapfile -t results < <(comm -13 <(printf '%s\n' "$before" | sort) <(ls "$out" | sort) \
    | grep '\.results\.[^.]*\.xml\.bz2$' | sed "s|^|$out/|")
if [ "${#results[@]}" -gt 0 ]; then
    table-generator --outputpath "$out" --name "apc-$which" "${results[@]}"
    log "tables: $out/apc-$which.table.html (and .csv)"
fi
