#!/usr/bin/env bash
# salvage-vs-cp.sh -- `lanyfs salvage` of an image beside `cp -r` of the host
# tree the image was filled from.
#
# Usage: bench/salvage-vs-cp.sh [-B BUILD] [-w WORKDIR] [-r RUNS] [-n FILES] [-b BLOCKSIZE] [-k]
#
# Generates a host tree of FILES (default 2000) files of random bytes (50
# files a directory, sizes 0..128 KiB, and every 100th file 4 MiB; fixed
# seed), formats an image that holds it (mkfs.lanyfs -b BLOCKSIZE, default
# 4096) and fills it with `lanyfs put -r IMAGE TREE /tree`.  With the page
# cache warm (the image and the tree read once), then RUNS times (default
# 3) each, keeping the fastest run:
#   - `lanyfs salvage --quiet IMAGE OUT`: scan, copy of every file with its
#     SHA-256, libmagic type and mtime, manifests (fsynced);
#   - `cp -r TREE OUT` of the host tree;
# both into WORKDIR, and prints the throughput of each in MB/s (10^6 bytes
# of file data a second) and the ratio.  The salvaged tree is compared with
# the host tree once (diff -r) before the timing.  The work lives in
# WORKDIR (default a new directory under ${TMPDIR:-/tmp}); -k keeps it.
# Not a test: the figures depend on the machine.
#
# Needs python3.
set -euo pipefail

build=${LANYFS_BUILD:-build}
work=""
runs=3
nfiles=2000
blocksize=4096
keep=0
while getopts "B:w:r:n:b:kh" opt; do
    case $opt in
        B) build=$OPTARG ;;
        w) work=$OPTARG ;;
        r) runs=$OPTARG ;;
        n) nfiles=$OPTARG ;;
        b) blocksize=$OPTARG ;;
        k) keep=1 ;;
        h) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) exit 2 ;;
    esac
done
lanyfs=$(realpath "$build/src/cli/lanyfs")
mkfs=$(realpath "$build/src/cli/mkfs.lanyfs")
[ -x "$lanyfs" ] && [ -x "$mkfs" ] || { echo "no lanyfs in $build (use -B BUILD)" >&2; exit 1; }

if [ -z "$work" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/salvage-vs-cp.XXXXXX")
fi
mkdir -p "$work"
[ $keep -eq 1 ] || trap 'rm -rf "$work"' EXIT
cd "$work"
rm -rf tree out cpout stick.img

python3 - "$nfiles" <<'EOF'
import os, random, sys
n = int(sys.argv[1])
rng = random.Random(20122)
t0 = 1600000000
for i in range(n):
    d = "tree/d%03d" % (i // 50)
    os.makedirs(d, exist_ok=True)
    p = "%s/f%05d.bin" % (d, i)
    size = 4 << 20 if i % 100 == 99 else rng.randrange(128 << 10)
    with open(p, "wb") as f:
        f.write(rng.randbytes(size))
    os.utime(p, (t0, t0 + i))
EOF
bytes=$(find tree -type f -printf '%s\n' | awk '{s += $1} END {print s}')
files=$(find tree -type f | wc -l)
# Room for the tree: its blocks, an entry and an extender a file, and slack.
blocks=$(( bytes / blocksize + 3 * files + 4096 ))
"$mkfs" -b "$blocksize" --size $(( blocks * blocksize )) stick.img >/dev/null
"$lanyfs" put -r stick.img tree /tree

# Once, untimed: the copy must be the tree.
"$lanyfs" salvage --quiet stick.img out
diff -r tree out/files/tree >/dev/null || { echo "the salvaged tree differs from the host tree" >&2; exit 1; }

# Warm the page cache: the image and the tree.
cat stick.img >/dev/null
find tree -type f -exec cat {} + >/dev/null

now() { date +%s.%N; }
# calc EXPR: floating-point arithmetic (awk).
calc() { awk "BEGIN { print $1 }"; }
best_salvage="" best_cp=""
for _ in $(seq "$runs"); do
    rm -rf out
    t0=$(now)
    "$lanyfs" salvage --quiet stick.img out
    t1=$(now)
    s=$(calc "$t1 - $t0")
    if [ -z "$best_salvage" ] || [ "$(calc "$s < $best_salvage")" = 1 ]; then best_salvage=$s; fi
    rm -rf cpout
    t0=$(now)
    cp -r tree cpout
    t1=$(now)
    s=$(calc "$t1 - $t0")
    if [ -z "$best_cp" ] || [ "$(calc "$s < $best_cp")" = 1 ]; then best_cp=$s; fi
done

mbs() { awk "BEGIN { printf \"%.1f\", $bytes / 1000000 / $1 }"; }
printf 'tree: %d files, %d bytes; image blocks of %d bytes; fastest of %d runs\n' \
    "$files" "$bytes" "$blocksize" "$runs"
printf '%-28s %10s %10s\n' "" "seconds" "MB/s"
printf '%-28s %10.3f %10s\n' "lanyfs salvage (image)" "$best_salvage" "$(mbs "$best_salvage")"
printf '%-28s %10.3f %10s\n' "cp -r (host tree)" "$best_cp" "$(mbs "$best_cp")"
printf 'ratio salvage / cp -r throughput: %s\n' "$(awk "BEGIN { printf \"%.2f\", $best_cp / $best_salvage }")"
