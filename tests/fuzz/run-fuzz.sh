#!/usr/bin/env bash
# Run every libFuzzer target of a -Dfuzz=true build for a bounded time:
#
#   tests/fuzz/run-fuzz.sh BUILD [SECONDS]
#
# BUILD is a build directory set up with CC=clang -Dfuzz=true and the
# sanitizers (tools/test does this); SECONDS (default 30) is each target's
# time.  The seeds are written first into BUILD/fuzz-seeds: the crafted
# seeds of seeds.c (fuzz_mkseeds), the reference images
# ($LANYFS_CORPUS, default ../shared/corpus/mkfs-reference), and simulator
# images of several geometries in both writer modes, whole and cut at a
# torn write (lanyfs simulate and replay); the write-log target gets the
# simulator's logs, fuzz_undo the undo files of fsck-lanyfs -y repairs of
# the torn images, fuzz_store the edit programs of store_seeds.c
# (fuzz_mkseeds --store).  Each target then runs on its own corpus directory
# (BUILD/fuzz-corpus/TARGET, kept between runs) seeded with these, two
# targets at a time (the machine's cores).
#
# Any crash, sanitizer report, leak, timeout (-timeout) or memory blow-up
# (-rss_limit_mb) fails the run; the input that did it is kept under
# BUILD/fuzz-artifacts/ and the end of that target's log is printed.
set -euo pipefail

build=${1:?usage: run-fuzz.sh BUILD [SECONDS]}
seconds=${2:-30}
src=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${LANYFS_CORPUS:-$src/../shared/corpus/mkfs-reference}
fz=$build/tests/fuzz
lanyfs=$build/src/cli/lanyfs
seeds=$build/fuzz-seeds
arts=$build/fuzz-artifacts
logs=$build/fuzz-logs

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# fuzz_wear's PNG legend loads fontconfig, which keeps its configuration until exit.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$src/tests/fuzz/lsan.supp}
export TZ=UTC LC_ALL=C

# fuzz_salvage, fuzz_wear and fuzz_store write into a folder of TMPDIR, on a
# tmpfs when there is one; libFuzzer's exit skips their cleanup, so it goes
# with this one.
shm=/dev/shm
[ -d "$shm" ] && [ -w "$shm" ] || shm=${TMPDIR:-/tmp}
TMPDIR=$(mktemp -d "$shm/lanyfs-fuzz.XXXXXX")
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT

rm -rf "$seeds" "$logs"
mkdir -p "$seeds/images" "$seeds/logs" "$arts" "$logs"

# ---- seeds ---------------------------------------------------------------
"$fz/fuzz_mkseeds" "$seeds/images" >/dev/null
"$fz/fuzz_mkseeds" --store "$seeds/store" >/dev/null
if [ -d "$corpus" ]; then
  cp "$corpus"/*.img "$seeds/images/"
else
  echo "run-fuzz: no reference images in $corpus; crafted and simulator seeds only" >&2
fi
sim=$seeds/sim
mkdir -p "$sim"
n=0
for geom in 512:1:32K 512:2:64K 1024:3:128K 512:4:96K 2048:4:256K 4096:8:512K; do
  IFS=: read -r bs al size <<<"$geom"
  for mode in correct 2012; do
    drv=()
    [ "$mode" = 2012 ] && drv=(--driver=2012)
    out=$sim/$bs-$al-$mode
    writes=$("$lanyfs" simulate --seed $((n + 11)) --ops 30 --geometry "$bs:$al" \
      --size "$size" --big-files 5 "${drv[@]}" --json "$out" |
      sed -n 's/^ *"writes" : \([0-9]*\),$/\1/p')
    cp "$out/final.img" "$seeds/images/sim-$bs-$al-$mode.img"
    cp "$out/writes.log" "$seeds/logs/sim-$bs-$al-$mode.log"
    # The stick pulled out two thirds into the run, the next write torn after
    # its first sector where a block has more than one.
    tear=()
    [ "$bs" -gt 512 ] && tear=(--tear 1)
    "$lanyfs" replay "$out/base.img" "$out/writes.log" "$seeds/images/torn-$bs-$al-$mode.img" \
      --upto $((${writes:-3} * 2 / 3)) "${tear[@]}" >/dev/null
    n=$((n + 1))
  done
done
# Undo files: a repair of each torn image, its old blocks saved.
fsck=$build/src/fsck/fsck-lanyfs
mkdir -p "$seeds/undo"
for img in "$seeds"/images/torn-*.img; do
  base=$(basename "$img" .img)
  cp "$img" "$sim/repair.img"
  "$fsck" -y -z "$seeds/undo/$base.undo" "$sim/repair.img" >/dev/null 2>&1 || true
done
rm -rf "$sim"

# ---- runs ----------------------------------------------------------------
# target, seed directory, -max_len
targets=(
  "scan images 65536"
  "open images 65536"
  "codec images 8193"
  "wlog logs 65536"
  "undo undo 65536"
  "repair images 262144"
  "salvage images 262144"
  "wear images 262144"
  "store store 4096"
)

run_one() {
  local t=$1 dir=$2 maxlen=$3
  mkdir -p "$build/fuzz-corpus/$t"
  "$fz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$maxlen" -print_final_stats=1 -artifact_prefix="$arts/$t-" \
    "$build/fuzz-corpus/$t" "$seeds/$dir" >"$logs/$t.log" 2>&1
}

status=0
report() {
  local t=$1 rc=$2
  if [ "$rc" -eq 0 ] && ! grep -q "ERROR: \|runtime error:\|SUMMARY: " "$logs/$t.log"; then
    echo "fuzz_$t: $(grep -m1 '^stat::number_of_executed_units' "$logs/$t.log" |
      sed 's/.*: *//') runs in ${seconds} s, no finding"
  else
    echo "fuzz_$t: FAILED (status $rc), log $logs/$t.log, inputs in $arts/:"
    tail -n 40 "$logs/$t.log"
    status=1
  fi
}

i=0
while [ $i -lt ${#targets[@]} ]; do
  read -r t1 d1 m1 <<<"${targets[$i]}"
  run_one "$t1" "$d1" "$m1" &
  p1=$!
  p2=
  if [ $((i + 1)) -lt ${#targets[@]} ]; then
    read -r t2 d2 m2 <<<"${targets[$((i + 1))]}"
    run_one "$t2" "$d2" "$m2" &
    p2=$!
  fi
  rc=0
  wait "$p1" || rc=$?
  report "$t1" "$rc"
  if [ -n "$p2" ]; then
    rc=0
    wait "$p2" || rc=$?
    report "$t2" "$rc"
  fi
  i=$((i + 2))
done
exit $status
