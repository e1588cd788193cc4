#!/usr/bin/env bash
# Make the SMT solvers `z3` and `cvc5` (and Graphviz `dot`, for the test
# suite) available on PATH.
#
# Idempotent: if both binaries are already on PATH this only prints their
# versions. Otherwise it installs the Debian packages `z3` and `cvc5`
# (Debian 12 "bookworm" or later) non-interactively via apt-get.
#
# Works as root (CI) without sudo; as a non-root user it uses sudo if present.
set -euo pipefail

SOLVERS=(z3 cvc5)
# Graphviz renders `apc cfg --dot`; the test suite checks that it does.
EXTRA_TOOLS=(dot)
declare -A PACKAGE=([z3]=z3 [cvc5]=cvc5 [dot]=graphviz)

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
}

mapfile -t TODO < <(missing)
if [ "${#TODO[@]}" -eq 0 ]; then
    print_versions
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
