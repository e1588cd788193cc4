#!/usr/bin/env bash
# Make the SMT solvers `z3` and `cvc5` (and Graphviz `dot` and Neovim, for the test
# suite) available on PATH.
#
# Idempotent: if both binaries are already on PATH this only prints their
# versions. Otherwise it installs the Debian packages `z3` and `cvc5`
# (Debian 12 "bookworm" or later) non-interactively via apt-get.
#
# Works as root (CI) without sudo; as a non-root user it uses sudo if present.
set -euo pipefail

SOLVERS=(z3 cvc5)
# Graphviz renders `apc cfg --dot` and the trees; Neovim is the editor the
# language server's test drives. The test suite checks that both work.
EXTRA_TOOLS=(dot nvim)
declare -A PACKAGE=([z3]=z3 [cvc5]=cvc5 [dot]=graphviz [nvim]=neovim)

log() { printf 'solvers/install.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

missing() {
    local out=() s
    for s in "${SOLVERS[@]}" "${EXTRA_TOOLS[@]}"; do
        command -v "$s" >/dev/null 2>&1 || out+=("${PACKAGE[$s]}")
    done
    if [ "${#out[@]}" -gt 0 ]; then printf '%s\n' "${out[@]}"; fi
}

print_versions() {
    local s
    for s in "${SOLVERS[@]}"; do
        printf '%s: %s (%s)\n' "$s" "$("$s" --version 2>&1 | head -n 1)" "$(command -v "$s")"
    done
    printf 'dot: %s\n' "$(dot -V 2>&1 | head -n 1)"
    printf 'nvim: %s\n' "$(nvim --version 2>&1 | head -n 1)"
}

# The Horn-clause engine's Z3: a newer release, pinned, taken from the
# z3-solver wheel on PyPI (it ships a self-contained `z3` binary), into
# solvers/bin/z3-horn. Debian's 4.8.12 misses invariants with large
# constants that this one finds. Without pip or network the engine falls
# back to the `z3` on PATH, and says so.
HORN_Z3_VERSION=5.4.1.0
install_horn_z3() {
    local bin dest tmp
    bin="$(cd "$(dirname "$0")" && pwd)/bin"
    dest="$bin/z3-horn"
    if [ -x "$dest" ]; then
        printf 'z3-horn: %s (%s)\n' "$("$dest" --version 2>&1 | head -n 1)" "$dest"
        return 0
    fi
    if ! python3 -m pip --version >/dev/null 2>&1; then
        log "no pip: the Horn engine will use the z3 on PATH"
        return 0
    fi
    tmp="$(mktemp -d)"
    if python3 -m pip download -q --no-deps "z3-solver==$HORN_Z3_VERSION" -d "$tmp" >/dev/null 2>&1 \
        && python3 - "$tmp" "$dest" <<'PY'
import os, sys, zipfile
tmp, dest = sys.argv[1], sys.argv[2]
wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".whl"))
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("/bin/z3"))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with z.open(name) as src, open(dest + ".part", "wb") as out:
        out.write(src.read())
os.chmod(dest + ".part", 0o755)
os.replace(dest + ".part", dest)
PY
    then
        printf 'z3-horn: %s (%s)\n' "$("$dest" --version 2>&1 | head -n 1)" "$dest"
    else
        log "could not fetch z3-solver==$HORN_Z3_VERSION: the Horn engine will use the z3 on PATH"
    fi
    rm -rf "$tmp"
}

# Python's `jsonschema`: the test suite validates `apc check --format
# sarif` against the SARIF 2.1.0 schema (tests/sarif/) with it.
install_jsonschema() {
    if python3 -c 'import jsonschema' >/dev/null 2>&1; then
        printf 'jsonschema: %s\n' "$(python3 -c 'import importlib.metadata as m; print(m.version("jsonschema"))')"
        return 0
    fi
    python3 -m pip install -q jsonschema >/dev/null 2>&1 \
        || python3 -m pip install -q --break-system-packages jsonschema >/dev/null 2>&1 \
        || log "could not install Python's jsonschema: the SARIF test will fail"
}

mapfile -t TODO < <(missing)
if [ "${#TODO[@]}" -eq 0 ]; then
    print_versions
    install_horn_z3
    install_jsonschema
    exit 0
fi
log "missing: ${TODO[*]}"

command -v apt-get >/dev/null 2>&1 \
    || die "apt-get not found; install ${TODO[*]} manually (see solvers/README.md)"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo -n)
        # -n: never prompt (no TTY in CI); fall back to a prompting sudo if interactive.
        if ! sudo -n true 2>/dev/null; then
            if [ -t 0 ]; then SUDO=(sudo); else
                die "not root and passwordless sudo is unavailable; run as root or install ${TODO[*]} manually"
            fi
        fi
    else
        die "not root and sudo not found; run as root or install ${TODO[*]} manually"
    fi
fi

export DEBIAN_FRONTEND=noninteractive
APT=("${SUDO[@]+"${SUDO[@]}"}" env DEBIAN_FRONTEND=noninteractive apt-get
     -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

# Packages are named like the binaries. Only refresh the package lists when
# apt does not know a candidate for one of them (e.g. fresh container with
# empty /var/lib/apt/lists).
need_update=0
for p in "${TODO[@]}"; do
    cand="$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')"
    if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then need_update=1; fi
done
if [ "$need_update" -eq 1 ]; then
    log "running apt-get update"
    "${APT[@]}" update -q || die "apt-get update failed"
fi

log "installing: ${TODO[*]}"
"${APT[@]}" install -y -q --no-install-recommends "${TODO[@]}" \
    || die "apt-get install ${TODO[*]} failed (are the Debian packages available for this release?)"

mapfile -t STILL < <(missing)
[ "${#STILL[@]}" -eq 0 ] || die "still not on PATH after install: ${STILL[*]}"
print_versions
install_horn_z3
install_jsonschema
