#!/usr/bin/env bash
# wear-cli.sh LANYFS MKFS -- `lanyfs wear` on an image made by mkfs.lanyfs
# and the lanyfs writer commands, whose counters follow from SPEC-8/10:
# the exact figures in text, CSV and JSON, the three agreeing; --top; --png
# (size read back from the PNG header); --db (the counters view); a
# superblock counter patched below its allocations flagged as wrapped;
# usage and operational errors.
set -uo pipefail
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
lanyfs=$(abspath "$1") mkfs=$(abspath "$2")
work=$(mktemp -d "${TMPDIR:-/tmp}/wear-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 99
export SOURCE_DATE_EPOCH=1796259735 TZ=UTC LC_ALL=C

failures=0 checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect WANT ARGS...: run lanyfs wear ARGS, check the status; output in out.txt, err.txt.
expect() {
    local want=$1; shift
    local rc=0
    "$lanyfs" wear "$@" </dev/null >out.txt 2>err.txt || rc=$?
    checks=$((checks + 1))
    [ "$rc" -eq "$want" ] || fail "lanyfs wear $* exited $rc, want $want; stderr: $(cat err.txt)"
}
# has FILE TEXT: FILE holds the line fragment TEXT.
has() {
    checks=$((checks + 1))
    grep -qF -- "$2" "$1" || fail "$1 lacks '$2'; it holds: $(head -c 2000 "$1")"
}
# py CHECK-NAME SCRIPT: run a python3 check; it prints why when it fails.
py() {
    local name=$1; shift
    checks=$((checks + 1))
    python3 -c "$1" || fail "$name"
}

# 600 blocks of 512 bytes: chain blocks 2, 126, 250, 374, 498 (123 slots each).
#   put /f      entry 3, extender 4, data 5..10: 8 pops of chain 2; sb 2+8+1
#   mkdir /d    block 11, right of /f (/f written back); sb +1+1
#   put /d/g    12, extender 13, data 14..19; /d written back; sb +8+1
#   rm /f       8 pushes into 498; the root written back twice; sb +8+1
#   mv /d/g /h  /h left of /d; /h, /d and the root written back; sb +1
"$mkfs" -b 512 --size 300K w.img >/dev/null || exit 99
head -c 3000 /dev/zero >z
"$lanyfs" put w.img z /f && "$lanyfs" mkdir w.img /d && "$lanyfs" put w.img z /d/g &&
    "$lanyfs" rm w.img /f && "$lanyfs" mv w.img /d/g /h || exit 99

# --- text ------------------------------------------------------------------------
expect 0 w.img
cp out.txt text.txt
has text.txt "Blocks          600 of 512 bytes"
has text.txt "Metadata        11 blocks with a counter, 6 data blocks without"
has text.txt "Writes          74 counted in all counters"
#                         blocks      total   min   max     mean  median   p90   p99
has text.txt "  superblock          1         32    32    32    32.00    32.0    32    32"
has text.txt "  directories         2          8     3     5     4.00     4.0     5     5"
has text.txt "  files               1          2     2     2     2.00     2.0     2     2"
has text.txt "  extenders           1          0     0     0     0.00     0.0     0     0"
has text.txt "  chain blocks        5         30     1    18     6.00     1.0    18    18"
has text.txt "  freed               1          2     2     2     2.00     2.0     2     2"
has text.txt "  all                11         74     0    32     6.73     2.0    18    32"
has text.txt "            12  file          file                   2  /h"
has text.txt "             3  freed         deleted                2  /f (deleted)"
has text.txt "Flagged counters: 0"
has text.txt "  11 blocks in use, from block 1 to 19"
has text.txt "  spread 3.000 (coefficient of variation: 0 = even, 3.000 = all in one tenth)"

# --- JSON, CSV: the same figures --------------------------------------------------
expect 0 --format json w.img
cp out.txt w.json
expect 0 --format csv w.img
cp out.txt blocks.csv
expect 0 --format csv --csv-table kinds w.img
cp out.txt kinds.csv
expect 0 --format csv --csv-table regions w.img
cp out.txt regions.csv
py "JSON figures" '
import json
d = json.load(open("w.json"))
assert d["command"] == "wear" and d["image"] == "w.img", d
assert (d["blocks"], d["blocksize"], d["metadata_blocks"], d["data_blocks"], d["total_writes"]) == (600, 512, 11, 6, 74), d
k = d["kinds"]
want = {"super": (1, 32, 32, 32), "dir": (2, 8, 3, 5), "file": (1, 2, 2, 2),
        "extender": (1, 0, 0, 0), "chain": (5, 30, 1, 18), "freed": (1, 2, 2, 2)}
for name, (n, t, lo, hi) in want.items():
    got = (k[name]["blocks"], k[name]["total"], k[name]["min"], k[name]["max"])
    assert got == (n, t, lo, hi), (name, got)
assert [h["block"] for h in d["hottest"]] == [0, 2, 498, 1, 11, 3, 12, 126, 250, 374], d["hottest"]
assert d["hottest"][6]["owner_text"] == "/h"
assert d["flagged"] == [] and sum(d["flagged_by_reason"].values()) == 0
assert d["chain_stride"] == 124
r = d["regions"]
assert len(r) == 10 and r[0]["used"] == 11 and r[0]["writes"] == 32 + 5 + 18 + 2 + 3 + 2 + 0, r[0]
assert sum(x["used"] + x["free"] + x["other"] for x in r) == 600
assert d["spread"] == {"used": 11, "used_lowest": 1, "used_highest": 19, "cv": 3.0}, d["spread"]
assert sum(b["count"] for b in d["histogram"]) == 11
'
py "CSV agrees with JSON" '
import csv, json
d = json.load(open("w.json"))
rows = list(csv.DictReader(open("blocks.csv")))
assert len(rows) == d["metadata_blocks"]
assert sum(int(r["wrcnt"]) for r in rows) == d["total_writes"]
for k, s in d["kinds"].items():
    mine = [int(r["wrcnt"]) for r in rows if r["kind"] == k]
    assert len(mine) == s["blocks"] and sum(mine) == s["total"], k
    if mine:
        assert (min(mine), max(mine)) == (s["min"], s["max"]), k
byblock = {int(r["block"]): r for r in rows}
assert byblock[12]["path"] == "/h" and byblock[12]["class"] == "file"
assert byblock[3]["path"] == "/f (deleted)"
kinds = {r["kind"]: r for r in csv.DictReader(open("kinds.csv"))}
for k, s in list(d["kinds"].items()) + [("all", d["all"])]:
    r = kinds[k]
    assert int(r["blocks"]) == s["blocks"] and int(r["total"]) == s["total"], k
    assert abs(float(r["mean"]) - s["mean"]) < 1e-6 and abs(float(r["median"]) - s["median"]) < 1e-6, k
    assert int(r["p90"]) == s["p90"] and int(r["p99"]) == s["p99"], k
regs = list(csv.DictReader(open("regions.csv")))
assert [int(r["used"]) for r in regs] == [x["used"] for x in d["regions"]]
assert [int(r["writes"]) for r in regs] == [x["writes"] for x in d["regions"]]
'
py "text agrees with JSON" '
import json, re
d = json.load(open("w.json"))
t = open("text.txt").read()
assert re.search(r"^Writes +%d counted" % d["total_writes"], t, re.M)
assert re.search(r"^Metadata +%d blocks" % d["metadata_blocks"], t, re.M)
for k, name in [("super", "superblock"), ("dir", "directories"), ("chain", "chain blocks")]:
    s = d["kinds"][k]
    m = re.search(r"^  %s +(\d+) +(\d+) +(\d+) +(\d+) +([\d.]+)" % name, t, re.M)
    assert m and [int(x) for x in m.groups()[:4]] == [s["blocks"], s["total"], s["min"], s["max"]], k
    assert abs(float(m.group(5)) - s["mean"]) < 0.01, k
'

# --- --top ----------------------------------------------------------------------------
expect 0 --format json --top 3 w.img
py "--top 3" '
import json
d = json.load(open("out.txt"))
assert [h["block"] for h in d["hottest"]] == [0, 2, 498], d["hottest"]
'

# --- --png ------------------------------------------------------------------------------
expect 0 --png heat.png --format csv --csv-table kinds w.img
py "PNG size" '
import struct
b = open("heat.png", "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR", b[:16]
w, h = struct.unpack(">II", b[16:24])
# 600 cells: 25 x 24 cells of 16 px; width set by the 560-px legend and margins of 12.
assert (w, h) == (584, 564), (w, h)
'
expect 1 --png "$work/no-such-dir/heat.png" w.img
has err.txt "cannot write the PNG"
# cairo is loaded only to draw: lanyfs does not link it, so that no other
# command pays for its libraries at start (wear_png.c).
checks=$((checks + 1))
if readelf -d "$lanyfs" | grep NEEDED | grep -q libcairo; then
    fail "lanyfs links libcairo: $(readelf -d "$lanyfs" | grep NEEDED | grep cairo)"
fi

# --- --db ---------------------------------------------------------------------------------
expect 0 --db w.db w.img
py "--db stores every counter" '
import sqlite3
c = sqlite3.connect("w.db")
n, s = c.execute("SELECT COUNT(*), SUM(wrcnt) FROM counters").fetchone()
assert (n, s) == (11, 74), (n, s)
'

# --- a wrapped superblock counter -------------------------------------------------------------
# 9 blocks in use came from the free list (/d, /h, its extender, 6 data):
# the superblock saw at least 10 writes; 3 can only be a wrap.
cp w.img wrapped.img
printf '\003\000' | dd of=wrapped.img bs=1 seek=2 conv=notrunc status=none
expect 0 --format json wrapped.img
py "wrapped superblock flagged" '
import json
d = json.load(open("out.txt"))
f = d["flagged"]
assert len(f) == 1 and f[0]["block"] == 0 and f[0]["reason"] == "wrapped-super", f
assert (f[0]["wrcnt"], f[0]["bound"], f[0]["wraps"]) == (3, 10, 1), f
assert d["flagged_by_reason"]["wrapped-super"] == 1
'
expect 0 wrapped.img
has out.txt "Flagged counters: 1 (1 wrapped-super)"
has out.txt "wrapped: below the allocations the superblock counted (at least 10 writes, 1 wrap)"

# --- every reference image and hostile ones: a report, never a crash ---------------------------
corpus=${LANYFS_CORPUS:-}
if [ -n "$corpus" ] && [ -d "$corpus" ]; then
    for img in "$corpus"/*.img; do
        for fmt in text csv json; do
            expect 0 --format "$fmt" --png corpus.png "$img"
        done
        py "JSON of $(basename "$img")" '
import json
d = json.load(open("out.txt"))
assert d["metadata_blocks"] == sum(k["blocks"] for k in d["kinds"].values()), d
assert d["total_writes"] == sum(k["total"] for k in d["kinds"].values()), d
assert d["kinds"]["super"]["blocks"] == 1 and d["kinds"]["chain"]["blocks"] >= 1, d["kinds"]
'
    done
fi
python3 -c '
import random
r = random.Random(7)
open("junk.img", "wb").write(bytes(r.getrandbits(8) for _ in range(1 << 18)))
'
expect 0 --format json --png junk.png junk.img
py "JSON of random bytes" 'import json; json.load(open("out.txt"))'
head -c 100 /dev/zero >tiny.img
expect 5 tiny.img

# --- usage and operational errors --------------------------------------------------------------
expect 2 --format xml w.img
expect 2 --top 0 w.img
expect 2 --top x w.img
expect 2 --csv-table kinds w.img
expect 2 --format csv --csv-table rows w.img
expect 2
expect 2 w.img extra
expect 2 --frob w.img
expect 0 --help
has out.txt "--png FILE"
expect 1 no-such.img

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
