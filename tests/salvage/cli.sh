#!/usr/bin/env bash
# cli.sh LANYFS MKFS MKCASE -- `lanyfs salvage` and `lanyfs versions` on
# images built with the writer commands: the live tree byte for byte with
# its mtimes, PATH selection, a deleted file not yet reused (exact) and one
# partly reused (partial, the reused blocks listed), damaged maps (partial,
# unrecoverable), versions of a path written three times, carving of PNG,
# PDF, gzip and text made here (type and extension), a lost extender tree
# (--lost), the manifests' rows,
# never overwriting without --force, exit status, --json and --db.
set -uo pipefail
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
lanyfs=$(abspath "$1") mkfs=$(abspath "$2") mkcase=$(abspath "$3")
work=$(mktemp -d "${TMPDIR:-/tmp}/salvage-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 99
export TZ=UTC LC_ALL=C

failures=0 checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { checks=$((checks + 1)); if ! eval "$1"; then fail "$2"; fi; }
# expect WANT CMD ARGS...: run lanyfs CMD ARGS, the status must be WANT.
expect() {
    local want=$1 rc=0; shift
    "$lanyfs" "$@" >out.txt 2>err.txt || rc=$?
    checks=$((checks + 1))
    [ "$rc" -eq "$want" ] || fail "lanyfs $* exited $rc, want $want: $(head -c 800 out.txt) $(cat err.txt)"
}
sha() { sha256sum "$1" | cut -c1-64; }
# sql DB QUERY: the rows, columns joined by '|' (python3's sqlite3, as the sqlite3 shell prints).
sql() {
    python3 -c "
import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print('|'.join('' if v is None else str(v) for v in r))" "$1" "$2"
}
# col DIR OUTPUT_PATH COLUMN: a column of the manifest row of one output file.
col() {
    python3 - "$@" <<'EOF'
import csv, sys
for r in csv.DictReader(open(sys.argv[1] + '/manifest.csv', newline='')):
    if r['output_path'] == sys.argv[2]:
        print(r[sys.argv[3]])
EOF
}

# ---- a tree, with host files of known content and mtimes ----------------------
mkdir -p host/docs/deep
head -c 70000 /dev/urandom >host/docs/big.bin
printf 'hello\n' >host/hello.txt
: >host/empty
seq 1 2000 >host/docs/deep/numbers.txt
touch -d '2024-02-29 12:34:56.123456789' host/docs/big.bin
touch -d '2020-01-01 00:00:01' host/hello.txt
"$mkfs" -b 1024 -a 32 --size 1M tree.img >/dev/null
"$lanyfs" put -r tree.img host/docs /docs
"$lanyfs" put tree.img host/hello.txt /hello.txt
"$lanyfs" put tree.img host/empty /empty

expect 0 salvage tree.img o1
check 'grep -q "^Files: *4 exact, 0 partial, 0 unrecoverable" out.txt' "summary: $(cat out.txt)"
for f in docs/big.bin docs/deep/numbers.txt hello.txt empty; do
    check "cmp -s host/$f o1/files/$f" "$f does not come out byte for byte"
    check '[ "$(col o1 files/'$f' status)" = exact ] && [ "$(col o1 files/'$f' sha256)" = "$(sha host/'$f')" ]' \
        "manifest row of $f: status $(col o1 files/$f status), sha $(col o1 files/$f sha256)"
    check '[ "$(col o1 files/'$f' size)" = "$(stat -c %s host/'$f')" ] && [ "$(col o1 files/'$f' bytes_recovered)" = "$(stat -c %s host/'$f')" ]' \
        "manifest size of $f"
done
check '[ "$(stat -c %y o1/files/docs/big.bin)" = "$(stat -c %y host/docs/big.bin)" ]' \
    "mtime of big.bin $(stat -c %y o1/files/docs/big.bin), want $(stat -c %y host/docs/big.bin)"
check '[ "$(stat -c %Y o1/files/hello.txt)" = "$(stat -c %Y host/hello.txt)" ]' "mtime of hello.txt"
dmod=$("$lanyfs" stat tree.img /docs/deep | sed -n 's/^Modified: *\([^,]*\)Z,.*/\1/p' | tr T ' ')
check '[ "$(stat -c %y o1/files/docs/deep)" = "$dmod +0000" ]' \
    "mtime of a directory: $(stat -c %y o1/files/docs/deep), the entry says $dmod"
check '[ "$(col o1 files/docs/big.bin modified)" = 2024-02-29T12:34:56.123456789Z ]' \
    "manifest modified: $(col o1 files/docs/big.bin modified)"
check '[ "$(col o1 files/hello.txt mime)" = text/plain ] && [ "$(col o1 files/hello.txt kind)" = live ] && [ "$(col o1 files/hello.txt source_path)" = /hello.txt ]' \
    "manifest mime, kind or source of hello.txt"
blocks=$("$lanyfs" stat tree.img /docs/big.bin | sed -n 's/.*file blocks [0-9-]* -> disk \([0-9-]*\).*/\1/p' | paste -sd' ')
check '[ "$(col o1 files/docs/big.bin source_blocks)" = "$blocks" ]' \
    "source blocks $(col o1 files/docs/big.bin source_blocks), stat says $blocks"
check 'python3 -c "import json,sys; d=json.load(open(\"o1/manifest.json\")); s=d[\"summary\"]; sys.exit(not (s[\"exact\"]==4 and len(d[\"files\"])==4 and d[\"format\"]==\"lanyfs-salvage/1\"))"' \
    "manifest.json summary or rows"

# Again into the same folder: refused (an earlier manifest), nothing touched.
echo changed >o1/files/hello.txt
expect 1 salvage tree.img o1
check '[ "$(cat o1/files/hello.txt)" = changed ]' "a second run wrote over a file"
# Without the manifests: the existing file is skipped, not replaced.
rm o1/manifest.csv o1/manifest.json
expect 1 salvage tree.img o1
check '[ "$(cat o1/files/hello.txt)" = changed ]' "an existing file was replaced without --force"
check 'grep -q "^skipped .*/hello.txt" out.txt' "the skipped file is not listed: $(cat out.txt)"
check '[ "$(col o1 files/hello.txt status)" = skipped ]' "manifest status of the skipped file"
expect 0 salvage --force tree.img o1
check 'cmp -s host/hello.txt o1/files/hello.txt' "--force did not replace the file"

# PATH selection, a PATH that names nothing, usage errors.
expect 0 salvage tree.img o2 /docs/deep
check '[ -f o2/files/docs/deep/numbers.txt ] && [ ! -e o2/files/hello.txt ] && [ ! -e o2/files/docs/big.bin ]' \
    "PATH selection: $(find o2 -type f)"
expect 6 salvage tree.img o3 /nothing
check 'grep -q "no live entry" err.txt' "the missing path is not reported: $(cat err.txt)"
expect 6 salvage --json tree.img o3j '/no\xffthing'
check 'python3 - <<EOF
import json, sys
d = json.load(open("out.txt"))
m = json.load(open("o3j/manifest.json"))
want = "/no" + chr(92) + "xffthing: no live entry of that path"
sys.exit(not (d["exit_code"] == 6 and d["summary"]["missing_paths"] == 1 and
              d["salvage_problems"] == [want] and m["problems"] == [want]))
EOF' "--json of a missing path: $(head -c 400 out.txt); manifest: $(grep problems o3j/manifest.json)"
expect 2 salvage tree.img
expect 2 salvage --json --quiet tree.img o4
expect 1 salvage missing.img o4

# --json: the document, its summary and its rows.
expect 0 salvage --json tree.img o5
check 'python3 -c "import json,sys; d=json.load(open(\"out.txt\")); s=d[\"summary\"]; sys.exit(not (d[\"command\"]==\"salvage\" and s[\"exact\"]==4 and d[\"exit_code\"]==0 and {f[\"output_path\"] for f in d[\"files\"]}=={\"files/docs/big.bin\",\"files/docs/deep/numbers.txt\",\"files/hello.txt\",\"files/empty\"}))"' \
    "--json document: $(head -c 600 out.txt)"

# --db: the scan and the salvage rows.
expect 0 salvage --db s.db tree.img o6
check '[ "$(sql s.db "SELECT COUNT(*) FROM salvage_files f JOIN salvage_runs r ON f.run_id = r.id WHERE r.scan_id = (SELECT MAX(id) FROM scans) AND f.status = '"'exact'"'")" = 4 ]' \
    "salvage_files rows: $(sql s.db 'SELECT * FROM salvage_files' 2>&1 | head -5)"
check '[ "$(sql s.db "SELECT sha256 FROM salvage_files WHERE output_path = '"'files/hello.txt'"'")" = "$(sha host/hello.txt)" ]' \
    "salvage_files sha256 of hello.txt"
check '[ "$(sql s.db "SELECT exact, partial, bytes FROM salvage_runs")" = "4|0|$((70000 + 6 + $(stat -c %s host/docs/deep/numbers.txt)))" ]' \
    "salvage_runs row: $(sql s.db 'SELECT * FROM salvage_runs')"
expect 0 scan --db s.db tree.img
check '[ "$(sql s.db "SELECT COUNT(*) FROM scans")" = 2 ]' "the database no longer takes scans"
# A scan removed takes its salvage rows with it (the trigger).
python3 -c "import sqlite3; c = sqlite3.connect('s.db'); c.execute('DELETE FROM scans WHERE id = 1'); c.commit()"
check '[ "$(sql s.db "SELECT COUNT(*) FROM salvage_runs")" = 0 ] && [ "$(sql s.db "SELECT COUNT(*) FROM salvage_files")" = 0 ]' \
    "salvage rows outlive their scan"

# ---- a sparse file (grown by truncate): exact, its holes listed, and a hole in the copy ---
"$mkfs" -b 4096 -a 32 --size 24M sparse.img >/dev/null
"$lanyfs" put sparse.img host/hello.txt /s
"$lanyfs" truncate sparse.img /s 20000000
expect 0 salvage sparse.img sp
check '[ "$(col sp files/s status)" = exact ] && [ "$(col sp files/s size)" = 20000000 ] && [ -n "$(col sp files/s holes)" ]' \
    "a sparse file: $(col sp files/s status) size $(col sp files/s size) holes $(col sp files/s holes)"
check '[ "$(stat -c %s sp/files/s)" = 20000000 ] && [ "$(( $(stat -c %b sp/files/s) * $(stat -c %B sp/files/s) ))" -lt 1000000 ]' \
    "the copy of a sparse file is not sparse: $(stat -c '%s bytes, %b blocks' sp/files/s)"
check 'cmp -s <(head -c 6 sp/files/s) host/hello.txt && [ "$(tail -c +7 sp/files/s | tr -d "\\0" | wc -c)" = 0 ]' \
    "the sparse copy's bytes"
check '[ "$(col sp files/s sha256)" = "$(sha sp/files/s)" ]' "the manifest's SHA-256 of a sparse copy"

# ---- orphans: a directory whose tree was cut off --------------------------------------
cp tree.img orph.img
"$mkcase" orph.img set @/docs/deep subtree 0
expect 0 salvage --orphans orph.img or1
check 'cmp -s host/docs/deep/numbers.txt "$(find or1/orphans -name numbers.txt | head -1)"' \
    "the orphaned file does not come back under orphans/: $(find or1 -type f | paste -sd' ')"
check '[ ! -e or1/files/docs/deep/numbers.txt ] && cmp -s host/docs/big.bin or1/files/docs/big.bin' \
    "the orphan landed in the live tree, or the live tree is wrong"
check '[ "$(grep -c "^orphan," or1/manifest.csv)" = 1 ] && [ "$(grep -c "^live," or1/manifest.csv)" = 3 ]' \
    "manifest kinds: $(cut -d, -f1-4 or1/manifest.csv)"
expect 0 salvage orph.img or2
check '[ ! -e or2/orphans ]' "orphans without --orphans"

# ---- a zeroed superblock: the geometry is inferred, the tree still comes out --------
cp tree.img nosb.img
dd if=/dev/zero of=nosb.img bs=1024 count=1 conv=notrunc 2>/dev/null
expect 0 salvage nosb.img z
check 'cmp -s host/docs/big.bin z/files/docs/big.bin && cmp -s host/hello.txt z/files/hello.txt' \
    "no tree from an image with a zeroed superblock: $(find z -type f | paste -sd' ')"

# ---- a deep tree: 300 levels, deeper than the scan walks (256): the rest are orphans ----
"$mkfs" -b 512 -a 32 --size 1M deep.img >/dev/null
deep() { python3 -c "import sys; print('/' + '/'.join(['d'] * int(sys.argv[1])))" "$1"; }
"$lanyfs" mkdir -p deep.img "$(deep 300)"
for k in 1 100 255 299; do echo "at $k" >at$k; "$lanyfs" put deep.img at$k "$(deep $k)/f$k"; done
expect 0 salvage deep.img dp1
check 'grep -q "^Left out: *[0-9]* orphaned entries (--orphans)" out.txt' "the orphans left out are not told: $(cat out.txt)"
check '[ "$(find dp1 -type f -name "f*" | wc -l)" = 3 ] && cmp -s at100 "dp1/files$(deep 100)/f100"' \
    "the live part of a deep tree: $(find dp1 -type f -name 'f*' | wc -l) files"
expect 0 salvage --orphans deep.img dp2
check '[ "$(find dp2 -type f -name "f*" | wc -l)" = 4 ] && cmp -s at299 "$(find dp2/orphans -name f299)"' \
    "the orphaned part of a deep tree: $(find dp2 -type f -name 'f*' | wc -l) files"

# ---- deleted files: one whole, one partly handed out again -----------------------
"$mkfs" -b 1024 -a 32 --size 128K del.img >/dev/null
head -c 40000 /dev/urandom >big1
head -c 10000 /dev/urandom >small
head -c 5000 /dev/urandom >keep.bin
"$lanyfs" put del.img keep.bin /keep.bin
"$lanyfs" rm del.img /keep.bin
expect 0 salvage --deleted del.img d1
check 'cmp -s keep.bin d1/deleted/keep.bin' "a deleted file not reused does not come back byte for byte"
check '[ "$(col d1 deleted/keep.bin status)" = exact ] && [ "$(col d1 deleted/keep.bin kind)" = deleted ]' \
    "manifest of the deleted file: $(col d1 deleted/keep.bin status)"
expect 0 salvage del.img d1b
check '[ ! -e d1b/deleted ]' "deleted files without --deleted"
"$lanyfs" put del.img big1 /big1
"$lanyfs" rm del.img /big1
"$lanyfs" put del.img small /small
expect 9 salvage --deleted del.img d2
check '[ "$(col d2 deleted/big1 status)" = partial ] && [ -n "$(col d2 deleted/big1 reused)" ]' \
    "a partly reused deleted file: status $(col d2 deleted/big1 status), reused $(col d2 deleted/big1 reused)"
check 'grep -q "^Files: *[0-9]* exact, 1 partial" out.txt' "summary of a partial run: $(cat out.txt)"
check 'grep -q "^partial .*/big1 -> deleted/big1: .*handed out again" out.txt' "the partial file is not listed: $(cat out.txt)"
# The blocks it still owns come back as they were, the reused ones as zeros.
check 'python3 - <<EOF
import csv, sys
r = [x for x in csv.DictReader(open("d2/manifest.csv")) if x["output_path"] == "deleted/big1"][0]
got, want = open("d2/deleted/big1", "rb").read(), open("big1", "rb").read()
reused = set()
for part in r["reused"].split():
    a, _, b = part.partition("-")
    reused.update(range(int(a), int(b or a) + 1))
ok = len(got) == len(want) and int(r["bytes_recovered"]) < len(want)
for i in range(0, len(want), 1024):
    ok = ok and got[i:i+1024] == (bytes(len(want[i:i+1024])) if i // 1024 in reused else want[i:i+1024])
sys.exit(0 if ok else 1)
EOF' "the partly reused file is not its own blocks plus zeros"

# ---- damaged maps: an empty slot (a hole the format allows: zeros, listed), a slot
# ---- beyond the device (partial), a data pointer beyond it (unrecoverable) --------
cp tree.img dmg.img
"$mkcase" dmg.img set @/docs/deep/numbers.txt:data slot:1 0
"$mkcase" dmg.img set @/docs/big.bin:data slot:0 999999
"$mkcase" dmg.img set @/hello.txt subtree 999999
expect 9 salvage dmg.img d3
check '[ "$(col d3 files/docs/deep/numbers.txt status)" = exact ] && [ "$(col d3 files/docs/deep/numbers.txt holes)" = 1 ]' \
    "an empty slot: $(col d3 files/docs/deep/numbers.txt status) holes $(col d3 files/docs/deep/numbers.txt holes)"
check 'col d3 files/docs/deep/numbers.txt note | grep -q "sparse"' "the hole is not noted: $(col d3 files/docs/deep/numbers.txt note)"
check 'cmp -s <(head -c 1024 host/docs/deep/numbers.txt) <(head -c 1024 d3/files/docs/deep/numbers.txt) && cmp -s <(head -c 1024 /dev/zero) <(tail -c +1025 d3/files/docs/deep/numbers.txt | head -c 1024)' \
    "the hole is not zeros beside the file's own bytes"
check '[ "$(col d3 files/docs/big.bin status)" = partial ] && [ "$(col d3 files/docs/big.bin holes)" = 0 ]' \
    "a bad slot: $(col d3 files/docs/big.bin status) holes $(col d3 files/docs/big.bin holes)"
check 'cmp -s <(tail -c +1025 host/docs/big.bin) <(tail -c +1025 d3/files/docs/big.bin)' "the rest of big.bin"
check '[ "$(col d3 files/hello.txt status)" = unrecoverable ] && [ "$(stat -c %s d3/files/hello.txt)" = 6 ]' \
    "no map: $(col d3 files/hello.txt status)"
check 'grep -q "^Files: *2 exact, 1 partial, 1 unrecoverable" out.txt' "summary: $(cat out.txt)"

# ---- a stick formatted again: the earlier format's files are no exact copies ------
# 4 KiB blocks with files, then 512-byte blocks a year later with one file: the
# earlier entries lie in the new free list, their maps in the earlier block
# size; salvage --deleted copies them, but partial and noted, never "exact".
"$mkfs" -b 4096 --size 1M ref.img >/dev/null
mkdir refold
for i in $(seq 1 12); do head -c $((i * 3000)) /dev/urandom >refold/o$i.bin; done
SOURCE_DATE_EPOCH=1600000000 "$lanyfs" put -r ref.img refold /old
SOURCE_DATE_EPOCH=1631536000 "$mkfs" -b 512 ref.img >/dev/null
SOURCE_DATE_EPOCH=1631536000 "$lanyfs" put ref.img host/hello.txt /hello.txt
expect 9 salvage --deleted ref.img r1
check '[ "$(col r1 deleted/o5.bin status)" = partial ] && col r1 deleted/o5.bin note | grep -q "before this filesystem"' \
    "an earlier format's file: $(col r1 deleted/o5.bin status), $(col r1 deleted/o5.bin note)"
check '[ "$(grep -c "before this filesystem" r1/manifest.csv)" = 12 ] && cmp -s host/hello.txt r1/files/hello.txt' \
    "the earlier format's 12 files: $(cut -d, -f1-4 r1/manifest.csv | tr "\\n" " ")"

# --geometry reads the earlier format: its files come back, each copy marked exact
# byte for byte, and those the later format wrote over (its chain blocks, one
# every 62 KiB) partial.
expect 8 scan --geometry 4096:4 ref.img
check 'grep -q "^Geometry: .* of 4096 bytes, 4-byte" out.txt && grep -q "^Files: *12 " out.txt' \
    "scan --geometry: $(head -c 600 out.txt)"
expect 8 scan --json --geometry 4096:4 ref.img
check 'python3 -c "import json,sys; g = json.load(open(\"out.txt\"))[\"geometry\"]; sys.exit(0 if g[\"given\"] and (g[\"blocksize\"], g[\"addrlen\"]) == (4096, 4) else 1)"' \
    "scan --json --geometry: $(head -c 600 out.txt)"
expect 0 scan --json ref.img
check 'python3 -c "import json,sys; g = json.load(open(\"out.txt\"))[\"geometry\"]; sys.exit(0 if not g[\"given\"] else 1)"' \
    "scan --json without --geometry: $(head -c 600 out.txt)"
"$lanyfs" salvage --geometry 4096:4 ref.img r2 >out.txt 2>err.txt
check 'python3 - <<EOF
import csv, filecmp, sys
rows = {r["output_path"]: r for r in csv.DictReader(open("r2/manifest.csv"))}
ok = len([p for p in rows if p.startswith("files/old/o")]) == 12
ok = ok and any(r["status"] == "partial" for r in rows.values())
for p, r in rows.items():
    if p.startswith("files/old/o") and r["status"] == "exact":
        ok = ok and filecmp.cmp("r2/" + p, "refold/" + p.split("/")[-1], shallow=False)
    if p.startswith("files/old/o") and not filecmp.cmp("r2/" + p, "refold/" + p.split("/")[-1], shallow=False):
        ok = ok and r["status"] == "partial" and "another format" in r["note"]
sys.exit(0 if ok else 1)
EOF' "salvage --geometry: $(cut -d, -f2-4 r2/manifest.csv | tr "\\n" " ")"
expect 2 scan --geometry 3000:4 ref.img

# ---- the root's block lost: the directory the search takes keeps its name ---------
"$mkfs" -b 1024 -a 32 --size 256K nr.img >/dev/null
"$lanyfs" mkdir nr.img /d
"$lanyfs" put nr.img host/hello.txt /d/x
"$lanyfs" put nr.img host/hello.txt /y
dd if=/dev/zero of=nr.img bs=1024 seek=1 count=1 conv=notrunc 2>/dev/null
expect 0 salvage --orphans nr.img nr1
check 'cmp -s host/hello.txt nr1/files/d/x && [ ! -e nr1/files/x ] && cmp -s host/hello.txt nr1/orphans/y' \
    "a root found by search that is no LANYFSROOT: $(find nr1 -type f | sort | paste -sd' ')"

# ---- versions: one path written three times ---------------------------------------
"$mkfs" -b 1024 -a 32 --size 256K ver.img >/dev/null
printf 'first\n' >v1; printf 'second, longer\n' >v2; printf 'third and last\n' >v3
touch -d '2021-01-01' v1; touch -d '2022-01-01' v2; touch -d '2023-01-01' v3
"$lanyfs" mkdir ver.img /d
"$lanyfs" put ver.img v1 /d/notes.txt
"$lanyfs" rm ver.img /d/notes.txt
"$lanyfs" put ver.img v2 /d/notes.txt
"$lanyfs" rm ver.img /d/notes.txt
"$lanyfs" put ver.img v3 /d/notes.txt
expect 0 versions ver.img /d/notes.txt
check '[ "$(awk "NR>1 {print \$1, \$2}" out.txt | paste -sd,)" = "0 live,1 deleted,2 deleted" ]' "versions: $(cat out.txt)"
check 'awk "NR==2" out.txt | grep -q "2023-01-01T00:00:00Z" && awk "NR==3" out.txt | grep -q 2022-01-01 && awk "NR==4" out.txt | grep -q 2021-01-01' \
    "versions are not newest first: $(cat out.txt)"
check 'awk "NR==3" out.txt | grep -q "1/1 (100%)"' "intact share: $(cat out.txt)"
expect 0 versions --json ver.img /d/notes.txt
check 'python3 -c "import json,sys; v=json.load(open(\"out.txt\"))[\"versions\"]; sys.exit(not ([x[\"number\"] for x in v]==[0,1,2] and [x[\"size\"] for x in v]==[15,15,6] and v[1][\"state\"]==\"deleted\"))"' \
    "versions --json: $(head -c 500 out.txt)"
expect 6 versions ver.img /d/none.txt
expect 2 versions ver.img
expect 0 salvage --versions ver.img v
check 'cmp -s v3 v/files/d/notes.txt && cmp -s v2 "v/files/d/notes.txt.~1~" && cmp -s v1 "v/files/d/notes.txt.~2~"' \
    "NAME.~N~ copies: $(ls v/files/d)"
check '[ "$(col v "files/d/notes.txt.~2~" version)" = 2 ] && [ "$(col v "files/d/notes.txt.~2~" kind)" = version ]' \
    "manifest of a version"
check '[ "$(stat -c %Y "v/files/d/notes.txt.~1~")" = "$(stat -c %Y v2)" ]' "mtime of a version"

# Two directories, each with its own notes.txt written twice: each earlier version is
# told to its own directory (its former siblings), never to the other.
"$mkfs" -b 1024 -a 32 --size 256K ver2.img >/dev/null
echo x >x
for d in a b; do
    echo "$d one" >"${d}1"; echo "$d two, later" >"${d}2"
    "$lanyfs" mkdir ver2.img /$d
    "$lanyfs" put ver2.img "${d}1" /$d/notes.txt
    "$lanyfs" put ver2.img x /$d/aaa
    "$lanyfs" put ver2.img x /$d/zzz
    "$lanyfs" rm ver2.img /$d/notes.txt
    "$lanyfs" put ver2.img "${d}2" /$d/notes.txt
done
expect 0 versions ver2.img /b/notes.txt
check '[ "$(awk "NR>1 {print \$1, \$2}" out.txt | paste -sd,)" = "0 live,1 deleted" ] && ! grep -q unknown out.txt' \
    "versions of /b/notes.txt: $(cat out.txt)"
check 'awk "NR==3" out.txt | grep -q " 6  1/1"' "the version of /b is not b's first: $(cat out.txt)"
expect 0 salvage --versions ver2.img vv2
check 'cmp -s a1 "vv2/files/a/notes.txt.~1~" && cmp -s b1 "vv2/files/b/notes.txt.~1~" && cmp -s a2 vv2/files/a/notes.txt && [ ! -e "vv2/files/a/notes.txt.~2~" ]' \
    "versions beside their own paths: $(find vv2/files -type f | sort | paste -sd' ')"

# ---- carving: files of known types, deleted, their blocks owned by nobody ------------
python3 - <<'EOF'
import random, struct, zlib
random.seed(7)
def chunk(t, d):
    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
w, h = 64, 48
raw = b''.join(b'\0' + bytes(random.randrange(256) for _ in range(w * 3)) for _ in range(h))
open('pic.png', 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
                            + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
objs = [b'<< /Type /Catalog /Pages 2 0 R >>', b'<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        b'<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>']
pdf, offs = b'%PDF-1.4\n', []
for i, o in enumerate(objs):
    offs.append(len(pdf)); pdf += b'%d 0 obj\n' % (i + 1) + o + b'\nendobj\n'
x = len(pdf)
pdf += b'xref\n0 4\n0000000000 65535 f \n' + b''.join(b'%010d 00000 n \n' % o for o in offs)
pdf += b'trailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n' % x
open('doc.pdf', 'wb').write(pdf)
open('notes.txt', 'w').write(''.join('line %d of some notes about the stick\n' % i for i in range(200)))
EOF
seq 1 3000 | gzip -9n >nums.gz
"$mkfs" -b 1024 -a 32 --size 256K carve.img >/dev/null
for f in pic.png doc.pdf notes.txt nums.gz; do "$lanyfs" put carve.img $f /$f; done
for f in pic.png doc.pdf notes.txt nums.gz; do "$lanyfs" rm carve.img /$f; done
expect 0 salvage --carve carve.img c
for t in pic.png:image/png:png doc.pdf:application/pdf:pdf notes.txt:text/plain:txt nums.gz:application/gzip:gz; do
    IFS=: read -r f mime ext <<<"$t"
    out=$(python3 -c "
import csv, sys
for r in csv.DictReader(open('c/manifest.csv')):
    if r['sha256'] == sys.argv[1]: print(r['output_path'], r['mime'], r['kind'], r['status'])" "$(sha $f)")
    check '[ -n "$out" ]' "$f is not carved byte for byte: $(cut -d, -f1-8 c/manifest.csv)"
    read -r path gotmime kind status <<<"$out"
    check '[ "$gotmime" = "$mime" ] && [ "${path##*.}" = "$ext" ] && [ "$kind" = carved ] && [ "$status" = exact ]' \
        "$f carved as $path ($gotmime, $kind, $status), want .$ext ($mime)"
done
check '[ "$(ls c/carved | wc -l)" = 4 ]' "carved pieces: $(ls c/carved)"
# With --deleted too, the deleted files come back whole and nothing is carved twice.
expect 0 salvage --all carve.img c2
check 'cmp -s pic.png c2/deleted/pic.png && cmp -s nums.gz c2/deleted/nums.gz && [ ! -e c2/carved ]' \
    "--all: $(find c2 -type f | sort | paste -sd' ')"

# ---- a lost tree: /big.bin written again, its entry's writeback never came -------
seq 1 700 >big
seq 1 800 >big2
"$mkfs" -b 1024 -a 32 --size 256K lost.img >/dev/null
"$lanyfs" put lost.img big /big.bin
"$lanyfs" put -f lost.img big2 /big.bin
"$mkcase" lost.img set @/big.bin data 0 >/dev/null
"$mkcase" lost.img set @/big.bin size 0 >/dev/null
expect 0 salvage lost.img l1
check 'grep -q "^Left out: *1 extender trees of data that no file links (--lost)" out.txt' \
    "the lost tree is not named as left out: $(cat out.txt)"
check '[ ! -e l1/lost ]' "lost/ made without --lost"
expect 9 salvage --lost lost.img l2
lostf=$(ls l2/lost 2>/dev/null)
check '[ "$(ls l2/lost | wc -l)" = 1 ] && cmp -s big2 "l2/lost/$lostf"' \
    "--lost: $(find l2 -type f | sort | paste -sd' ')"
check '[ "$(col l2 "lost/$lostf" kind)" = lost ] && [ "$(col l2 "lost/$lostf" status)" = partial ] && [ "$(col l2 "lost/$lostf" mime)" = text/plain ]' \
    "lost/$lostf in the manifest: $(grep lost/ l2/manifest.csv)"
check '[ "lost/$(printf %08d "$(col l2 "lost/$lostf" entry_block)").txt" = "lost/$lostf" ]' \
    "lost/$lostf is not named after its top extender"
check '! grep -q "Left out: .*--lost" out.txt' "--lost still names the tree as left out"
# --all writes it once, to lost/, and carves nothing of it.
expect 9 salvage --all lost.img l3
check '[ "$(ls l3/lost | wc -l)" = 1 ] && cmp -s big2 l3/lost/* && ! grep -q "^carved,extender tree" l3/manifest.csv' \
    "--all: $(cut -d, -f1-4 l3/manifest.csv | paste -sd' ')"

echo "cli.sh: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
