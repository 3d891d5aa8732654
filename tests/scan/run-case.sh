#!/bin/sh
# run-case.sh -- build one image case and compare what the scanner finds.
#
# Usage: run-case.sh CASEDIR SCANCODES MKCASE MKFS LANYFS
#
# In the style of e2fsprogs' tests/f_*: CASEDIR holds `recipe`, a shell
# script that builds image.img in the current directory with the tools
# named by $MKCASE (crafted damage, tests/scan/mkcase.c), $MKFS, $LANYFS
# and the reference images in $LANYFS_CORPUS (and, when the stick has
# sectors that fail, `bad-sectors`: their numbers, which scancodes then
# fails to read, see badsectors.c), and `expect`, the codes the
# scan must report, one a line, sorted (duplicates kept).  The recipe runs
# in a fresh temporary directory with SOURCE_DATE_EPOCH fixed, so the
# writers stamp the same times every run.  Exit 0 when the codes match,
# 1 (with a diff) when they do not, 77 (skip) when the recipe says so by
# exiting 77.  With LANYFS_REGEN=1 the expect file is rewritten instead.
set -u
# Tools may be named relative to the build folder: make them absolute.
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
case_dir=$(abs "$1")
SCANCODES=$(abs "$2")
MKCASE=$(abs "$3")
MKFS=$(abs "$4")
LANYFS=$(abs "$5")
export MKCASE MKFS LANYFS
: "${SOURCE_DATE_EPOCH:=1796259735}"
export SOURCE_DATE_EPOCH

work=$(mktemp -d "${TMPDIR:-/tmp}/scan-case.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

sh -e "$case_dir/recipe" > recipe.log 2>&1
rc=$?
if [ "$rc" -eq 77 ]; then
    echo "skipped: $(tail -n 1 recipe.log)"
    exit 77
fi
if [ "$rc" -ne 0 ] || [ ! -f image.img ]; then
    echo "recipe failed (status $rc):"
    cat recipe.log
    exit 1
fi
if [ -f bad-sectors ]; then
    LANYFS_TEST_BAD_SECTORS=$(cat bad-sectors)
    export LANYFS_TEST_BAD_SECTORS
fi
if ! "$SCANCODES" image.img > got; then
    echo "scancodes failed"
    exit 1
fi
if [ "${LANYFS_REGEN:-0}" = 1 ]; then
    cp got "$case_dir/expect"
    exit 0
fi
if ! diff -u "$case_dir/expect" got; then
    echo "--- what the scan said:"
    "$SCANCODES" -v image.img
    exit 1
fi
exit 0
