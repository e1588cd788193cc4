# Sourced by run-tool-info-test.sh and run-benchexec.sh: BenchExec in a
# virtual environment and a release build of apc. Not part of `cargo test`.
#
# BENCHEXEC_VENV     the environment (default: ~/.cache/apc/benchexec-venv)
# BENCHEXEC_VERSION  the pip requirement (default: the version these files
#                    were tested with)
# CARGO_TARGET_DIR   as for cargo; the binary is $CARGO_TARGET_DIR/release/apc

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${BENCHEXEC_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/apc/benchexec-venv}"
benchexec_requirement="${BENCHEXEC_VERSION:-benchexec==3.35}"

log() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }

setup_benchexec() {
    if ! "$venv/bin/python" -c 'import benchexec' 2>/dev/null; then
        log "installing $benchexec_requirement into $venv"
        python3 -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --upgrade pip
        "$venv/bin/python" -m pip install --quiet "$benchexec_requirement"
    fi
    log "BenchExec $("$venv/bin/python" -c 'import benchexec; print(benchexec.__version__)') in $venv"
    # The tool-info module is `apc_toolinfo.apc`, importable from here.
    export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
    export PATH="$venv/bin:$PATH"
}

# Builds apc and sets tool_dir, the directory BenchExec looks for it in:
# the checkout (its target/release holds apc) or the target directory's
# release/ when CARGO_TARGET_DIR is elsewhere.
build_apc() {
    (cd "$repo" && nice cargo build --release --quiet)
    local target
    target="$(cd "$repo" && cd "${CARGO_TARGET_DIR:-target}" && pwd)"
    if [ "$target" = "$repo/target" ]; then
        tool_dir="$repo"
    else
        tool_dir="$target/release"
    fi
    log "$("$target/release/apc" --version), tool directory $tool_dir"
}
