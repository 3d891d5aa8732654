#!/usr/bin/env bash
# matrix.sh BUILD [WORKDIR] -- the larger crash matrix of fsck-lanyfs, outside
# meson test: more seeds, more operations, every prefix with every tear, and
# the repair cut at up to 40 points on every third state.  BUILD is a meson
# build folder; SEEDS (default "21 22 23 24") and OPS (default 40) may be set.
set -euo pipefail
build=$(realpath "${1:?usage: matrix.sh BUILD [WORKDIR]}")
work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/fsck-matrix.XXXXXX")}
seeds=${SEEDS:-"21 22 23 24"}
ops=${OPS:-40}
scenarios=()
for s in $seeds; do
    for mode in correct 2012; do
        scenarios+=("$mode:$s:$ops:1024:2:512K" "$mode:$s:$ops:2048:4:1M" "$mode:$s:$ops:4096:3:2M")
    done
done
exec "$build/tests/fsck/fsck-crash" --tears --cuts 40 --cut-every 3 \
    "$build/src/cli/lanyfs" "$work" "${scenarios[@]}"
