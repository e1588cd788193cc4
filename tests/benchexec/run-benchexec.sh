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
log_file="$(mktemp)"
trap 'rm -f "$log_file"' EXIT
benchexec "tests/benchexec/apc-$which.xml" \
    --tool-directory "$(realpath --relative-to=. "$tool_dir")" \
    --outputpath "$out/" "${container[@]}" "$@" | tee "$log_file"

# BenchExec ends with the table-generator command for the result files it
# wrote, one per run definition (not the extra ones per task set): run it.
read -r -a results <<<"$(sed -n 's/^[^ ]*table-generator //p' "$log_file" | tail -n1)"
if [ "${#results[@]}" -gt 0 ]; then
    table-generator --outputpath "$out" --name "apc-$which" "${results[@]}"
    log "tables: $(ls "$out/apc-$which".*html | tr '\n' ' ')(and .csv)"
fi
