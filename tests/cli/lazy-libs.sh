#!/usr/bin/env bash
# lazy-libs.sh -- lanyfs loads json-glib, libmagic and cairo only when a
# command needs them (json_lazy.c, magic_lazy.c, wear_png.c).
#
# Usage: lazy-libs.sh LANYFS MKFS
#
# Checks that lanyfs names none of them (nor GObject, GIO) among its NEEDED
# libraries, that --json and salvage's types still work, and, with stub
# libraries of the same names first on LD_LIBRARY_PATH (built with cc; the
# test is skipped without one), that a json-glib that lacks its functions
# ends --json with a message and status 1 while text output still works,
# and that salvage without libmagic copies its files and says why no types
# are given.
set -u
lanyfs=$(realpath "$1")
mkfs=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checks=0
failed=0
fail() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }
check() { checks=$((checks + 1)); }

cd "$work" || exit 1
"$mkfs" --size 2M t.img >/dev/null || { echo "mkfs failed" >&2; exit 1; }
printf 'hello, stick\n' > hello.txt
"$lanyfs" put t.img hello.txt /hello.txt || { echo "put failed" >&2; exit 1; }

needed=$(readelf -d "$lanyfs" | grep NEEDED)
for lib in libjson-glib libgio libgobject libmagic libcairo; do
    check
    if grep -q "$lib" <<<"$needed"; then
        fail "lanyfs links $lib: $(grep "$lib" <<<"$needed")"
    fi
done

check
if ! "$lanyfs" info --json t.img > info.json 2> info.err; then
    fail "info --json failed: $(cat info.err)"
elif ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["command"] == "info", d' info.json; then
    fail "info --json is not the JSON of info"
fi

check
"$lanyfs" salvage -q t.img out > salvage.out 2> salvage.err
rc=$?
if [ "$rc" -ne 0 ]; then
    fail "salvage exit $rc: $(cat salvage.err)"
elif ! grep -q "text/plain" out/manifest.csv; then
    fail "salvage gave no MIME type: $(cat out/manifest.csv)"
fi

if ! command -v cc >/dev/null; then
    echo "lazy-libs: $checks checks, $failed failed; no cc, stub library checks skipped"
    [ "$failed" -eq 0 ] || exit 1
    exit 0
fi
mkdir stubs
printf 'int lanyfs_stub;\n' > stub.c
for so in libjson-glib-1.0.so.0 libmagic.so.1; do
    cc -shared -fPIC -o "stubs/$so" stub.c || { echo "cc failed" >&2; exit 1; }
done

check
LD_LIBRARY_PATH=$work/stubs "$lanyfs" info --json t.img > stub.json 2> stub.err
rc=$?
if [ "$rc" -ne 1 ]; then
    fail "info --json with a stub json-glib: exit $rc, wanted 1"
fi
check
if ! grep -q "JSON output needs json-glib: libjson-glib-1.0.so.0 has no json_builder_new" stub.err; then
    fail "info --json with a stub json-glib says: $(cat stub.err)"
fi
check
if ! LD_LIBRARY_PATH=$work/stubs "$lanyfs" info t.img > stub.txt 2> stub.err; then
    fail "info (text) with a stub json-glib failed: $(cat stub.err)"
fi

check
LD_LIBRARY_PATH=$work/stubs "$lanyfs" salvage -q t.img out2 > /dev/null 2> stub-salvage.err
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 9 ]; then
    fail "salvage with a stub libmagic: exit $rc: $(cat stub-salvage.err)"
fi
check
if ! cmp -s out2/files/hello.txt hello.txt; then
    fail "salvage with a stub libmagic did not copy hello.txt"
fi
check
if ! grep -rq "libmagic cannot be loaded (libmagic.so.1 has no magic_open)" stub-salvage.err out2/; then
    fail "salvage with a stub libmagic does not say why: $(cat stub-salvage.err)"
fi

echo "lazy-libs: $checks checks, $failed failed"
[ "$failed" -eq 0 ]
