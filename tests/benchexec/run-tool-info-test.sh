#!/usr/bin/env bash
# BenchExec's own test of the tool-info module (benchexec.test_tool_info):
# installs BenchExec from PyPI into a virtual environment (setup.sh), builds
# apc in release, prints what the module tells BenchExec (name, version,
# command lines for the task definitions) and how it reads real apc output;
# then the module's unit tests. Not part of `cargo test`.
#
#   bash tests/benchexec/run-tool-info-test.sh
#
# Exit status 0 when the module loads, finds apc, reads its version, reads
# every sample output as expected and its unit tests pass.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
setup_benchexec
build_apc
cd "$repo"

# Real outputs of apc (stdout and stderr, as BenchExec records them), each
# with the result the module must read from it.
samples="$(mktemp -d)"
trap 'rm -rf "$samples"' EXIT
apc="$tool_dir/apc"
[ -x "$apc" ] || apc="$tool_dir/target/release/apc"
sample() {
    local name="$1" expected="$2"
    shift 2
    "$apc" "$@" >"$samples/$name.log" 2>&1 || true
    printf '%s\t%s\n' "$name" "$expected" >>"$samples/expected"
}
sample check-reachable 'false(unreach-call)' check tests/programs/hello.mc --format json
sample check-unreachable true check tests/programs/oneloop.mc --format json
sample check-unknown unknown check tests/programs/sum_invariant.mc --engine nc --format json
sample check-no-targets true check tests/programs/thesis_4_6.mc --format json
sample check-bad-input ERROR check tests/programs/no-such-file.mc --format json
sample explore-error 'false(unreach-call)' explore tests/programs/thesis_5_4.mc --format json
sample explore-complete true explore tests/programs/thesis_4_3.mc --subsumption --format json
sample explore-limit unknown explore tests/programs/thesis_4_9.mc --max-steps 200 --format json

tasks=(tests/benchexec/tasks/programs/hello.yml
       tests/benchexec/tasks/programs/tr_example2.yml
       tests/benchexec/tasks/targets/hello-28-5.yml)
# --no-container: the test would run the module's Python code in a
# container of its own, whose worker can outlive the test on some kernels
# and hold its output open; the runs of apc are not at stake here. A tool
# directory relative to the checkout, as BenchExec prefers it.
python3 -m benchexec.test_tool_info apc_toolinfo.apc --no-container \
    --tool-directory "$(realpath --relative-to=. "$tool_dir")" \
    --task-definition "${tasks[@]}" \
    --tool-output "$samples"/*.log 2>&1 | tee "$samples/report"

# test_tool_info prints what the module read; compare it with what it
# should have read. (It always hands the module exit status 0, so a bad
# input without a report reads as plain ERROR there.)
status=0
while IFS=$'\t' read -r name expected; do
    got="$(grep -A1 "Result of analyzing tool output in “$samples/$name.log”" "$samples/report" \
        | tail -n1 | sed -e 's/^[[:space:]]*“//' -e 's/”[[:space:]]*$//' -e $'s/\e\\[[0-9;]*m//g')"
    if [ "$got" = "$expected" ]; then
        log "ok: $name -> $got"
    else
        log "FAILED: $name -> '$got', expected '$expected'"
        status=1
    fi
done <"$samples/expected"
grep -q "^Version:.*[0-9]" <(sed -e $'s/\e\\[[0-9;]*m//g' "$samples/report") \
    || { log "FAILED: no version"; status=1; }

python3 -m unittest "$here/test_apc_toolinfo.py" || status=1
# The task definitions match the programs' annotations.
python3 "$here/gen_tasks.py" --apc "$apc" --check || status=1
exit "$status"
