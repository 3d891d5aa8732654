#!/bin/bash
# tests/sim/cli.sh LANYFS -- `lanyfs simulate` and `lanyfs replay` from the
# command line: outputs, refusals and exit statuses.
set -u
lanyfs=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lanyfs-simcli-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect STATUS PATTERN CMD...: the exit status, and PATTERN in stdout+stderr
expect() {
    local want=$1 pat=$2
    shift 2
    local out
    out=$("$@" 2>&1)
    local st=$?
    [ "$st" -eq "$want" ] || fail "$* exited $st, expected $want: $out"
    if [ -n "$pat" ] && ! grep -q -- "$pat" <<<"$out"; then
        fail "$*: no '$pat' in: $out"
    fi
}

d=$tmp/run
expect 0 "block writes" "$lanyfs" simulate --seed 9 --ops 40 --driver=2012 \
    --geometry 2048:2 --size 512K --mounts 3 "$d"
for f in base.img final.img writes.log truth.json; do
    [ -s "$d/$f" ] || fail "simulate left no $f"
done
[ -e "$d/.simulate-replay.img" ] && fail "simulate left its scratch image"
expect 1 "exists" "$lanyfs" simulate --seed 9 --ops 40 "$d"
expect 0 "" "$lanyfs" simulate --seed 9 --ops 40 --driver=2012 --geometry 2048:2 \
    --size 512K --mounts 3 --force --json "$d"
expect 2 "required" "$lanyfs" simulate --ops 3 "$d"
expect 2 "geometry" "$lanyfs" simulate --seed 1 --ops 3 --geometry 1000:2 "$d"
expect 2 "mounts" "$lanyfs" simulate --seed 1 --ops 3 --mounts 4 "$d"
expect 2 "percentage" "$lanyfs" simulate --seed 1 --ops 3 --big-files 101 "$d"
expect 2 "2012 or correct" "$lanyfs" simulate --seed 1 --ops 3 --driver=2013 "$d"
expect 0 "Usage: lanyfs simulate" "$lanyfs" simulate --help

# replay: all writes give final.img
expect 0 "landed whole" "$lanyfs" replay "$d/base.img" "$d/writes.log" "$tmp/all.img"
cmp -s "$tmp/all.img" "$d/final.img" || fail "replay of every write is not final.img"
expect 1 "use --force" "$lanyfs" replay "$d/base.img" "$d/writes.log" "$tmp/all.img"
expect 2 "base image itself" "$lanyfs" replay --force "$d/base.img" "$d/writes.log" \
    "$d/base.img"
expect 0 "torn: 2 of 4 sectors" "$lanyfs" replay --upto 10 --tear 2 "$d/base.img" \
    "$d/writes.log" "$tmp/t.img"
expect 0 '"sectors" : 3' "$lanyfs" replay --force --json --upto 10 --tear 3 "$d/base.img" \
    "$d/writes.log" "$tmp/t.img"
expect 2 "tear" "$lanyfs" replay --tear 0 "$d/base.img" "$d/writes.log" "$tmp/u.img"
expect 2 "torn write" "$lanyfs" replay --tear 4 "$d/base.img" "$d/writes.log" "$tmp/u.img"
expect 2 "upto" "$lanyfs" replay --upto -1 "$d/base.img" "$d/writes.log" "$tmp/u.img"
expect 2 "expects BASE" "$lanyfs" replay "$d/base.img" "$d/writes.log"
expect 2 "no write" "$lanyfs" replay --tear 1 "$d/base.img" "$d/writes.log" "$tmp/u.img"
expect 0 "reorder seed 5" "$lanyfs" replay --reorder 5 --upto 200 "$d/base.img" \
    "$d/writes.log" "$tmp/r.img"
[ -e "$tmp/u.img" ] && fail "a refused replay left OUT behind"

# hostile logs and mismatched bases
printf 'NOTALOG-and-some-more-bytes-to-pass-the-header-size....' >"$tmp/bad.log"
expect 3 "bad magic" "$lanyfs" replay "$d/base.img" "$tmp/bad.log" "$tmp/u.img"
head -c 20 "$d/writes.log" >"$tmp/short.log"
expect 5 "header" "$lanyfs" replay "$d/base.img" "$tmp/short.log" "$tmp/u.img"
head -c 5000 "$d/writes.log" >"$tmp/cut.log"
expect 5 "ends inside" "$lanyfs" replay "$d/base.img" "$tmp/cut.log" "$tmp/u.img"
[ -e "$tmp/u.img" ] && fail "a refused replay left OUT behind"
"$lanyfs" simulate --seed 2 --ops 5 --geometry 1024:2 --size 256K "$tmp/other" >/dev/null ||
    fail "simulate 1024:2"
expect 4 "block" "$lanyfs" replay "$d/base.img" "$tmp/other/writes.log" "$tmp/u.img"
"$lanyfs" simulate --seed 2 --ops 5 --size 256K "$tmp/sim512" >/dev/null || fail "simulate 512"
expect 2 "single sector" "$lanyfs" replay --tear 1 --upto 1 "$tmp/sim512/base.img" \
    "$tmp/sim512/writes.log" "$tmp/u.img"
expect 0 "Usage: lanyfs replay" "$lanyfs" replay --help

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "sim cli: all passed"
