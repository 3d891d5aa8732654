#!/usr/bin/env bash
# corpus.sh FSCK LANYFS -- every reference image: -n leaves it untouched
# and calls it clean (b4096-a64.img, with 'blocks' = 1, is the exception:
# 4); -y leaves it clean (0; b4096-a64.img is repaired: 1); -n after it: 0.
# The repaired b4096-a64.img takes a file and reads it back.
set -uo pipefail
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
fsck=$(abspath "$1") lanyfs=$(abspath "$2")
work=$(mktemp -d "${TMPDIR:-/tmp}/fsck-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 99
export SOURCE_DATE_EPOCH=1796259735 TZ=UTC LC_ALL=C
failures=0 n=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
for src in "${LANYFS_CORPUS:?}"/*.img; do
    name=$(basename "$src")
    cp "$src" "$name" && chmod u+w "$name"
    want_n=0 want_y=0
    [ "$name" = b4096-a64.img ] && want_n=4 want_y=1
    s0=$(sha256sum "$name" | cut -c1-64)
    rc=0; "$fsck" -n "$name" >n1.txt 2>&1 || rc=$?
    [ $rc = $want_n ] || { fail "$name: -n exited $rc, want $want_n"; cat n1.txt; }
    [ "$(sha256sum "$name" | cut -c1-64)" = "$s0" ] || fail "$name: -n wrote to it"
    rc=0; "$fsck" -y --no-undo "$name" >y.txt 2>&1 || rc=$?
    [ $rc = $want_y ] || { fail "$name: -y exited $rc, want $want_y"; cat y.txt; }
    rc=0; "$fsck" -n "$name" >n2.txt 2>&1 || rc=$?
    [ $rc = 0 ] || { fail "$name: -n after -y exited $rc"; cat n2.txt; }
    n=$((n + 1))
done
head -c 20000 /dev/urandom >payload
"$lanyfs" mkdir b4096-a64.img /photos || fail "mkdir on the repaired b4096-a64.img"
"$lanyfs" put b4096-a64.img payload /photos/p.bin || fail "put on the repaired b4096-a64.img"
"$lanyfs" cat b4096-a64.img /photos/p.bin | cmp -s - payload || fail "read back on b4096-a64.img"
rc=0; "$fsck" -n b4096-a64.img >n3.txt 2>&1 || rc=$?
[ $rc = 0 ] || { fail "b4096-a64.img: -n after use exited $rc"; cat n3.txt; }
echo "corpus: $n images, $failures failures"
[ $failures = 0 ]
