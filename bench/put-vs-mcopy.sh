#!/usr/bin/env bash
# put-vs-mcopy.sh -- `lanyfs put -r` beside `mcopy -s` of the same tree.
#
# Usage: bench/put-vs-mcopy.sh [-B BUILD] [-w WORKDIR] [-r RUNS] [-n FILES] [-b BLOCKSIZE] [-k]
#
# Generates a host tree of FILES (default 10000) small files (100 files a
# directory, sizes 0..4095 bytes, fixed seed, modified times set), then,
# RUNS times (default 3) each, keeping the fastest run:
#   - formats a LanyFS image (mkfs.lanyfs -b BLOCKSIZE, default 4096) and
#     copies the tree with `lanyfs put -r IMAGE TREE /tree` (correct mode,
#     then again with --driver=2012);
#   - formats a FAT32 image of the same size (mkfs.fat -F 32) and copies the
#     tree with `mcopy -s -m -i IMAGE TREE ::/tree` (-m keeps modified times,
#     as put -r does);
# measuring wall time and peak memory with /usr/bin/time -v, and prints a
# table with the ratios to mcopy.  Both copies end with the image file
# written; put -r also fsyncs it at the unmount, mcopy does not.  The image
# lives in WORKDIR (default a new directory under ${TMPDIR:-/tmp}); -k keeps
# it.  Not a test: the figures depend on the machine.
#
# Needs /usr/bin/time, mtools, dosfstools, python3; installed with apt-get
# when missing and run as root.
set -euo pipefail

build=${LANYFS_BUILD:-build}
work=""
runs=3
nfiles=10000
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
        h) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) exit 2 ;;
    esac
done
lanyfs=$(realpath "$build/src/cli/lanyfs")
mkfs=$(realpath "$build/src/cli/mkfs.lanyfs")
[ -x "$lanyfs" ] && [ -x "$mkfs" ] || { echo "no lanyfs in $build (use -B BUILD)" >&2; exit 1; }

need=()
[ -x /usr/bin/time ] || need+=(time)
command -v mcopy >/dev/null || need+=(mtools)
command -v mkfs.fat >/dev/null || need+=(dosfstools)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing: ${need[*]} (apt-get install ${need[*]})" >&2
        exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ -z "$work" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/put-vs-mcopy.XXXXXX")
fi
mkdir -p "$work"
[ $keep -eq 1 ] || trap 'rm -rf "$work"' EXIT
cd "$work"

python3 - "$nfiles" <<'EOF'
import os, random, sys
n = int(sys.argv[1])
rng = random.Random(20121)
t0 = 1600000000
for i in range(n):
    d = "tree/d%03d" % (i // 100)
    os.makedirs(d, exist_ok=True)
    p = "%s/f%05d.txt" % (d, i)
    with open(p, "wb") as f:
        f.write(rng.randbytes(rng.randrange(4096)))
    os.utime(p, (t0, t0 + i))
EOF
bytes=$(find tree -type f -printf '%s\n' | awk '{s += $1} END {print s}')
# Room for the tree: three blocks a file (entry, extender, data) at most, and slack.
size=$(( (nfiles * 3 * blocksize + 64 * 1024 * 1024) / (1024 * 1024) ))M
export MTOOLS_SKIP_CHECK=1

# measure NAME SETUP -- CMD...: the fastest of RUNS runs; prints "wall_s rss_kb"
measure() {
    local setup=$1
    shift 2
    local best="" rss="" r
    for r in $(seq "$runs"); do
        eval "$setup"
        /usr/bin/time -v -o time.txt "$@" >/dev/null 2>run.err || {
            echo "failed: $* ($(cat run.err))" >&2
            exit 1
        }
        local wall kb
        wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' time.txt |
               awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')
        kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.txt)
        if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$wall
            rss=$kb
        fi
    done
    echo "$best $rss"
}

lanyfs_setup='rm -f lanyfs.img; "$mkfs" -b "$blocksize" --size "$size" lanyfs.img >/dev/null'
fat_setup='rm -f fat.img; truncate -s "$size" fat.img; mkfs.fat -F 32 fat.img >/dev/null'

read -r put_t put_m < <(measure "$lanyfs_setup" -- "$lanyfs" put -r lanyfs.img tree /tree)
listed=$("$lanyfs" ls -R lanyfs.img /tree | grep -c '^f')
read -r drv_t drv_m < <(measure "$lanyfs_setup" -- \
    "$lanyfs" put -r --driver=2012 lanyfs.img tree /tree)
read -r mc_t mc_m < <(measure "$fat_setup" -- mcopy -s -m -i fat.img tree ::/tree)
fat_listed=$(mdir -/ -b -i fat.img ::/tree 2>/dev/null | grep -c '\.TXT$\|\.txt$' || true)

echo "put-vs-mcopy: $nfiles files, $bytes bytes, images of $size," \
     "LanyFS blocks of $blocksize bytes, fastest of $runs"
echo "  LanyFS lists $listed files, FAT lists $fat_listed"
printf '  %-28s %10s %12s %10s %10s\n' command "wall (s)" "peak (KiB)" "time/mc" "mem/mc"
row() {
    printf '  %-28s %10.3f %12d %10.2f %10.2f\n' "$1" "$2" "$3" \
        "$(awk -v a="$2" -v b="$mc_t" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
        "$(awk -v a="$3" -v b="$mc_m" 'BEGIN { print a / b }')"
}
row "lanyfs put -r" "$put_t" "$put_m"
row "lanyfs put -r --driver=2012" "$drv_t" "$drv_m"
row "mcopy -s -m" "$mc_t" "$mc_m"
