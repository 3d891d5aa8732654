#!/usr/bin/env bash
# run-case.sh -- one image case of fsck-lanyfs, e2fsprogs style.
#
# Usage: run-case.sh FSCK LANYFS MKFS MKCASE CASEDIR [CRASH]
#
# CASEDIR/recipe (bash) builds test.img in a fresh folder, with the helpers
# mkfs, lanyfs, mkcase and corpus NAME (a writable copy of a reference
# image) and SOURCE_DATE_EPOCH fixed.  Then:
#   fsck-lanyfs -y OPTIONS test.img   must print CASEDIR/expect.1
#   fsck-lanyfs -n test.img           must print CASEDIR/expect.2
# each followed by "Exit status is N" (expect.2: the repair left it clean).
# OPTIONS come from CASEDIR/options (default --no-undo).  CASEDIR/after,
# when present, runs last and must succeed (it checks the repaired image).
# With CRASH (the fsck-crash program) the repair is first also cut at each
# of its writes and run again (fsck-crash --cut-image): nothing the image
# showed may be lost (not for a case with CASEDIR/no-cut: one whose repair
# is refused, so that it writes nothing to cut, or one that leaves errors
# by design).  Output passes through filter.sed (the version).  With
# LANYFS_REGEN=1 the expect files are written instead (review them before
# committing).
set -u
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
FSCK=$(abspath "$1") LANYFS=$(abspath "$2") MKFS=$(abspath "$3") MKCASE=$(abspath "$4")
case_dir=$(abspath "$5")
CRASH=""
[ $# -ge 6 ] && CRASH=$(abspath "$6")
here=$(dirname "$(abspath "$0")")
name=$(basename "$case_dir")
work=$(mktemp -d "${TMPDIR:-/tmp}/fsck-case.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 99
export SOURCE_DATE_EPOCH=1796259735 TZ=UTC LC_ALL=C

mkfs() { "$MKFS" "$@" >/dev/null; }
lanyfs() { "$LANYFS" "$@"; }
mkcase() { "$MKCASE" "$@"; }
corpus() { cp "${LANYFS_CORPUS:?}/$1" test.img && chmod u+w test.img; }
fsck_lanyfs() { "$FSCK" "$@"; }

# shellcheck disable=SC1091
if ! ( set -e; . "$case_dir/recipe" ) >recipe.log 2>&1; then
    echo "FAIL $name: the recipe failed:"; cat recipe.log; exit 1
fi
opts="--no-undo"
[ -f "$case_dir/options" ] && opts=$(cat "$case_dir/options")

status=0
if [ -n "$CRASH" ] && [ ! -f "$case_dir/no-cut" ] && [ "${LANYFS_REGEN:-0}" != 1 ]; then
    cp test.img cut.img
    if ! "$CRASH" --cut-image cut.img >cut.log 2>&1; then
        echo "FAIL $name: a repair cut short lost something:"; cat cut.log; status=1
    fi
    rm -f cut.img
fi
run() { # run N ARGS...: run fsck, filter, compare with expect.N
    local n=$1; shift
    local rc=0
    # shellcheck disable=SC2086
    "$FSCK" "$@" >out.$n 2>&1 || rc=$?
    echo "Exit status is $rc" >>out.$n
    sed -f "$here/filter.sed" out.$n >got.$n
    if [ "${LANYFS_REGEN:-0}" = 1 ]; then
        cp got.$n "$case_dir/expect.$n"
    elif ! diff -u "$case_dir/expect.$n" got.$n >diff.$n; then
        echo "FAIL $name: run $n (fsck-lanyfs $*) differs:"; cat diff.$n; status=1
    fi
}
# shellcheck disable=SC2086
run 1 -y $opts test.img
run 2 -n test.img
if [ -f "$case_dir/after" ]; then
    if ! ( set -e; . "$case_dir/after" ) >after.log 2>&1; then
        echo "FAIL $name: the check after the repair failed:"; cat after.log; status=1
    fi
fi
[ $status = 0 ] && echo "ok $name$([ -f cut.log ] && echo " ($(tail -n 1 cut.log))")"
exit $status
