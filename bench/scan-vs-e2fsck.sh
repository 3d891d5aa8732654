#!/usr/bin/env bash
# scan-vs-e2fsck.sh -- how `lanyfs scan` compares with e2fsck and fsck.fat.
#
# Usage: bench/scan-vs-e2fsck.sh [-B BUILD] [-w WORKDIR] [-r RUNS] [-S BYTES] [-k] [COUNT...]
#
# For each COUNT (default: 10000 100000) a host tree of COUNT files is
# generated (directories of 100 files, sizes 0..BYTES-1 with -S BYTES,
# default 2048, fixed seed, so every run builds the same tree), and the same
# tree is put into three images:
#   - LanyFS, 1 KiB blocks: mkfs.lanyfs, then `lanyfs put -r` (correct mode);
#   - ext4, 1 KiB blocks: mkfs.ext4 -d TREE;
#   - FAT32, 1 KiB clusters: mkfs.fat, then mcopy -s.
# Then, each command RUNS times (default 3) with the image in the page cache,
# keeping the fastest run, it measures wall time and peak memory with
# /usr/bin/time -v:
#   - cat IMAGE > /dev/null        (reading the image: the floor)
#   - lanyfs scan -q IMAGE         (the scan alone)
#   - its sweep pass alone         (from lanyfs scan -t: the pass that accounts
#                                   for every block, reading those the walks
#                                   did not read; against cat of the image)
#   - lanyfs scan -q --no-hash --db FILE IMAGE   (scan and store)
#   - lanyfs scan -q --db FILE IMAGE             (scan, store and SHA-256)
#   - fsck-lanyfs -n IMAGE         (the scan, fsck's analysis and report)
#   - e2fsck -fn EXT4              (full check, read-only)
#   - fsck.fat -n FAT
# and prints a table with the ratios to cat and to e2fsck (wall time, and
# CPU time against e2fsck's: steadier when other work shares the machine),
# the store's cost over the scan alone, and how each time grows from the
# first COUNT to the last.  -k keeps WORKDIR (default /tmp/lanyfs-bench) for a second look.
# `-S 60000 3000` makes about 100,000 blocks of 3,000 larger files, the
# image on which the store's cost is measured (docs/scan-db.md).
#
# Needs: /usr/bin/time, python3, e2fsprogs, dosfstools, mtools
# (apt-get install -y time mtools dosfstools e2fsprogs).
set -eu

build=${LANYFS_BUILD:-build}
work=/tmp/lanyfs-bench
runs=3
keep=0
maxsize=2048
while getopts "B:w:r:S:kh" opt; do
  case $opt in
    S) maxsize=$OPTARG ;;
    B) build=$OPTARG ;;
    w) work=$OPTARG ;;
    r) runs=$OPTARG ;;
    k) keep=1 ;;
    h) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(10000 100000)

lanyfs=$build/src/cli/lanyfs
mkfs=$build/src/cli/mkfs.lanyfs
fsck=$build/src/fsck/fsck-lanyfs
for t in "$lanyfs" "$mkfs" "$fsck"; do
  [ -x "$t" ] || { echo "scan-vs-e2fsck: $t not found (use -B BUILD)" >&2; exit 1; }
done
for t in /usr/bin/time python3 mkfs.ext4 e2fsck mkfs.fat fsck.fat mcopy; do
  command -v "$t" >/dev/null || { echo "scan-vs-e2fsck: $t is missing" >&2; exit 1; }
done
export PATH=$PATH:/usr/sbin:/sbin

mkdir -p "$work"
[ $keep = 1 ] || trap 'rm -rf "$work"' EXIT

# gen_tree DIR COUNT MAXSIZE: COUNT files under DIR, 100 per directory.
gen_tree() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, random, sys
root, n, maxsize = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(20261203)
os.makedirs(root, exist_ok=True)
for i in range(n):
    d = os.path.join(root, "d%04d" % (i // 100))
    if i % 100 == 0:
        os.makedirs(d, exist_ok=True)
    size = rng.randrange(maxsize)
    with open(os.path.join(d, "file-%06d.dat" % i), "wb") as f:
        f.write(rng.randbytes(size) if hasattr(rng, "randbytes") else os.urandom(size))
PY
}

# measure NAME CMD...: of $runs runs, the lowest wall time (s), the lowest CPU time
# (user + system, s: steadier than wall time on a busy machine) and the
# highest peak memory (MiB).  Times come from bash's `time` (millisecond
# resolution), peak memory from /usr/bin/time.
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
measure() {
  local name=$1 best_w="" best_c="" max_r=""
  shift
  for _ in $(seq "$runs"); do
    [ -n "${before:-}" ] && eval "$before"
    local TIMEFORMAT='%3R %3U %3S'
    { time /usr/bin/time -f %M -o "$work/rss.txt" "$@" >/dev/null 2>"$work/stderr.txt"; } \
      2>"$work/time.txt" || true
    local w u sy c r
    read -r w u sy <"$work/time.txt"
    c=$(awk -v u="$u" -v s="$sy" 'BEGIN { printf "%.3f", u + s }')
    r=$(awk '{ printf "%.1f", $1 / 1024 }' "$work/rss.txt")
    if [ -z "$best_w" ] || lt "$w" "$best_w"; then best_w=$w; fi
    if [ -z "$best_c" ] || lt "$c" "$best_c"; then best_c=$c; fi
    if [ -z "$max_r" ] || lt "$max_r" "$r"; then max_r=$r; fi
  done
  results+=("$count|$name|$best_w|$max_r|$best_c")
}

# measure_sweep: of $runs runs of `lanyfs scan -q -t`, the lowest wall and CPU
# time of its sweep pass alone (the pass that reads every block, which the
# issue holds to 1.5x cat), as printed by -t on stderr.
measure_sweep() {
  local best_w="" best_c="" w c
  for _ in $(seq "$runs"); do
    LC_ALL=C "$lanyfs" scan -q -t "$lan" 2>"$work/timings.txt" >/dev/null || true
    read -r w c < <(awk '/^sweep of every block/ { print $(NF-1), $NF }' "$work/timings.txt")
    [ -n "${w:-}" ] || continue
    if [ -z "$best_w" ] || lt "$w" "$best_w"; then best_w=$w; fi
    if [ -z "$best_c" ] || lt "$c" "$best_c"; then best_c=$c; fi
  done
  [ -n "$best_w" ] && results+=("$count|lanyfs scan: sweep pass|$best_w|0|$best_c")
}

results=()
for count in "${counts[@]}"; do
  tag=$count
  [ "$maxsize" = 2048 ] || tag=$count-s$maxsize
  tree=$work/tree-$tag
  echo "== $count files: building the tree and the images" >&2
  [ -d "$tree" ] || gen_tree "$tree" "$count" "$maxsize"
  data_kib=$(du -sk --apparent-size "$tree" | cut -f1)
  # LanyFS: 1 KiB blocks; each file takes its entry, an extender and its data.
  lan=$work/lanyfs-$tag.img
  if [ ! -f "$lan" ]; then
    lan_kib=$(( data_kib * 3 / 2 + count * 3 + count / 100 * 2 + 4096 ))
    "$mkfs" -b 1024 -a 32 -l bench --size "${lan_kib}K" "$lan" >/dev/null
    "$lanyfs" put -r "$lan" "$tree" / >/dev/null
  fi
  ext=$work/ext4-$tag.img
  if [ ! -f "$ext" ]; then
    ext_kib=$(( data_kib * 2 + count * 2 + 65536 ))
    rm -f "$ext"
    truncate -s "${ext_kib}K" "$ext"
    mkfs.ext4 -q -F -b 1024 -N $(( count + count / 100 + 1024 )) -d "$tree" "$ext"
  fi
  fat=$work/fat-$tag.img
  if [ ! -f "$fat" ]; then
    fat_kib=$(( data_kib * 2 + count * 2 + 98304 ))
    rm -f "$fat"
    mkfs.fat -F 32 -S 512 -s 2 -C "$fat" "$fat_kib" >/dev/null
    mcopy -s -i "$fat" "$tree"/* ::
  fi
  lan_blocks=$(( $(stat -c %s "$lan") / 1024 ))
  echo "   lanyfs: $lan_blocks blocks of 1 KiB ($(stat -c %s "$lan") bytes)" >&2

  # Page cache warm: read each image once.
  cat "$lan" "$ext" "$fat" >/dev/null
  db=$work/scan-$tag.db
  before=""
  measure "cat lanyfs image" sh -c 'cat "$1" >/dev/null' sh "$lan"
  measure "lanyfs scan" "$lanyfs" scan -q "$lan"
  measure_sweep
  before='rm -f "$db" "$db-wal" "$db-shm"'
  measure "lanyfs scan --db --no-hash" "$lanyfs" scan -q --no-hash --db "$db" "$lan"
  measure "lanyfs scan --db" "$lanyfs" scan -q --db "$db" "$lan"
  before=""
  measure "fsck-lanyfs -n" "$fsck" -n "$lan"
  measure "cat ext4 image" sh -c 'cat "$1" >/dev/null' sh "$ext"
  measure "e2fsck -fn" e2fsck -fn "$ext"
  measure "cat fat image" sh -c 'cat "$1" >/dev/null' sh "$fat"
  measure "fsck.fat -n" fsck.fat -n "$fat"
  ls -l "$db" >&2 2>/dev/null || true
done

# The table: ratios to cat of the same image and to e2fsck, growth first -> last COUNT.
printf '%s\n' "${results[@]}" | awk -F'|' -v first="${counts[0]}" \
  -v last="${counts[${#counts[@]}-1]}" '
  { key = $1 "|" $2; wall[key] = $3; rss[key] = $4; cpu[key] = $5
    if (!seen[$2]++) order[++n] = $2
    counts[$1] = 1 }
  END {
    for (c in counts) cl[++m] = c + 0
    for (i = 1; i <= m; i++)
      for (j = i + 1; j <= m; j++)
        if (cl[j] < cl[i]) { t = cl[i]; cl[i] = cl[j]; cl[j] = t }
    printf "%-8s %-28s %9s %8s %10s %7s %9s %9s\n", "files", "command", "wall (s)", "cpu (s)",
      "peak MiB", "x cat", "x e2fsck", "cpu x e2"
    for (i = 1; i <= m; i++) {
      c = cl[i]
      for (k = 1; k <= n; k++) {
        name = order[k]; key = c "|" name
        if (!(key in wall)) continue
        img = name ~ /fsck.fat|fat image/ ? "fat" : name ~ /e2fsck|ext4 image/ ? "ext4" : "lanyfs"
        catkey = c "|cat " img " image"
        xc = wall[catkey] > 0 ? sprintf("%.1f", wall[key] / wall[catkey]) : "-"
        ek = c "|e2fsck -fn"
        xe = wall[ek] > 0 ? sprintf("%.2f", wall[key] / wall[ek]) : "-"
        ce = cpu[ek] > 0 ? sprintf("%.2f", cpu[key] / cpu[ek]) : "-"
        printf "%-8s %-28s %9.3f %8.3f %10.1f %7s %9s %9s\n", c, name, wall[key], cpu[key],
          rss[key], xc, xe, ce
      }
      s = wall[c "|lanyfs scan"]; sc = cpu[c "|lanyfs scan"]
      if (s > 0)
        printf "%-8s store cost in wall time: +%.0f%% without the hash, +%.0f%% with it\n", c,
          (wall[c "|lanyfs scan --db --no-hash"] / s - 1) * 100,
          (wall[c "|lanyfs scan --db"] / s - 1) * 100
      if (sc > 0)
        printf "%-8s store cost in CPU time:  +%.0f%% without the hash, +%.0f%% with it\n", c,
          (cpu[c "|lanyfs scan --db --no-hash"] / sc - 1) * 100,
          (cpu[c "|lanyfs scan --db"] / sc - 1) * 100
    }
    if (first != last) {
      printf "\ngrowth from %s to %s files (x%.0f files):\n", first, last, last / first
      for (k = 1; k <= n; k++) {
        name = order[k]; a = wall[first "|" name]; b = wall[last "|" name]
        ra = rss[first "|" name]
        if (a > 0 && ra > 0)
          printf "  %-28s x%.1f time, x%.1f memory\n", name, b / a, rss[last "|" name] / ra
        else if (a > 0)
          printf "  %-28s x%.1f time\n", name, b / a
      }
    }
  }'
