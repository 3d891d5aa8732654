#!/usr/bin/env bash
# roundtrip.sh LANYFS MKFS BLOCKCHECK PYTHON TESTDIR BLOCKSIZE:ADDRLEN MODE
#
# One round trip of the writer commands at one geometry and mode:
#   1. gentree.py makes a host tree of 1,000 files (sizes at the block
#      edges, and in correct mode files that need level-1 and, where extmax
#      is small, level-2 extender trees) in nested directories;
#   2. mkfs.lanyfs formats an image, `lanyfs put -r` copies the tree;
#   3. verify.py checks `ls -R` and `cat` of every file against the host:
#      names, sizes, SHA-256, modified times of files and directories;
#   4. blockcheck accounts for every block: correct mode leaves no leak,
#      exact freeblocks and the real freetail; driver mode leaves no leak
#      either (a tree copy only allocates) but the freetail the 2012 driver
#      writes, the head (SPEC-9.3);
#   5. correct mode only: every second file is deleted with `lanyfs rm`
#      (one mount each), then steps 3 (cat of every 5th file only: a
#      delete that freed a block still in use shows in step 4; no directory
#      times, which the deletes change) and 4 again.
#
# LANYFS_ROUNDTRIP_SAMPLE=N (default 1) reads back every Nth file and deletes
# every (2N)th: the sanitizer build runs the same steps over fewer files,
# since there each of the 1,700 commands the full test starts costs ten times
# as much, and it looks for memory errors, which the steps find alike.
set -euo pipefail

lanyfs=$(realpath "$1") mkfs=$(realpath "$2") blockcheck=$(realpath "$3") py=$4
testdir=$(realpath "$5") geom=$6 mode=$7
bs=${geom%%:*} addrlen=${geom##*:}
sample=${LANYFS_ROUNDTRIP_SAMPLE:-1}
case $sample in ''|*[!0-9]*|0) echo "LANYFS_ROUNDTRIP_SAMPLE must be a whole number >= 1" >&2; exit 99 ;; esac
base=${TMPDIR:-}
[ -z "$base" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm  # many small syncs
work=$(mktemp -d "${base:-/tmp}/lanyfs-rt.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export SOURCE_DATE_EPOCH=1700000000

case $bs:$addrlen in
  512:2) size=16M ;;
  512:8) size=16M ;;
  1024:3) size=24M ;;
  2048:4) size=32M ;;
  4096:8) size=48M ;;
  *) echo "no image size for $geom" >&2; exit 99 ;;
esac
driver=()
[ "$mode" = driver ] && driver=(--driver=2012)

fail() { echo "FAIL: $*"; exit 1; }

# key=value from blockcheck output
val() { sed -n "s/^$1=//p" <<<"$2"; }

check_blocks() {
    local what=$1 out rc=0
    if [ "$mode" = correct ]; then
        out=$("$blockcheck" --clean img) || rc=$?
        echo "$what: $(tr '\n' ' ' <<<"$out")"
        [ $rc -eq 0 ] || fail "$what: blocks not all accounted for (leak, double use or counters)"
    else
        out=$("$blockcheck" img)
        echo "$what: $(tr '\n' ' ' <<<"$out")"
        [ "$(val leaked "$out")" = 0 ] || fail "$what: driver copy leaked blocks"
        [ "$(val double "$out")" = 0 ] || fail "$what: a block is used twice"
        [ "$(val tree_problems "$out")" = 0 ] || fail "$what: a damaged tree"
        [ "$(val sb_freeblocks "$out")" = "$(val real_freeblocks "$out")" ] ||
            fail "$what: freeblocks differs although nothing was freed"
        [ "$(val sb_freetail "$out")" = "$(val sb_freehead "$out")" ] ||
            fail "$what: the driver's unmount should leave freetail = freehead (SPEC 9.3)"
    fi
}

"$py" "$testdir/gentree.py" tree "$bs" "$addrlen" "$mode"
"$mkfs" -b "$bs" -a $((addrlen * 8)) --size "$size" img >/dev/null
start=$(date +%s%N)
"$lanyfs" put -r "${driver[@]}" img tree / || fail "put -r exited $?"
end=$(date +%s%N)
echo "put -r of $(find tree -type f | wc -l) files: $(((end - start) / 1000000)) ms"
"$py" "$testdir/verify.py" "$lanyfs" img tree --cat-every="$sample" || fail "round trip differs"
check_blocks "after put -r"

if [ "$mode" = correct ]; then
    n=0 deleted=0
    while IFS= read -r -d '' f; do
        n=$((n + 1))
        [ $((n % (2 * sample))) -eq 0 ] || continue
        "$lanyfs" rm img "${f#tree}" || fail "rm ${f#tree} exited $?"
        rm "$f"
        deleted=$((deleted + 1))
    done < <(find tree -type f -print0 | sort -z)
    echo "deleted $deleted of $n files"
    "$py" "$testdir/verify.py" "$lanyfs" img tree --cat-every=$((5 * sample)) --skip-dir-mtime ||
        fail "after deleting, the image differs"
    check_blocks "after deleting half"
fi
echo "ok: $geom $mode"
