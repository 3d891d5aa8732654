#!/usr/bin/env bash
# wlog.sh LANYFS MKFS -- the --log option of the writer commands.
#
# A sequence of writer commands, each with --log w.log (every command one
# session of the log), in both modes.  `lanyfs replay BASE w.log OUT` must
# rebuild the final image byte for byte, so the log holds every block write
# in issue order; `replay --json` must count one operation per operation
# the commands ran.  A refused command adds no write.
set -euo pipefail

lanyfs=$(realpath "$1") mkfs=$(realpath "$2")
base=${TMPDIR:-}
[ -z "$base" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
work=$(mktemp -d "${base:-/tmp}/lanyfs-wlog.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export SOURCE_DATE_EPOCH=1700000000

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

mkdir -p tree/sub
head -c 3000 /dev/urandom >tree/a
head -c 10 /dev/urandom >tree/sub/b
: >tree/sub/empty
touch -d '2001-02-03 04:05:06 UTC' tree/sub tree   # kept by put -r, also for /t it creates
head -c 700 /dev/urandom >one

for mode in correct 2012; do
    m=(--driver=$mode --log "w-$mode.log")
    "$mkfs" -b 512 -a 16 --size 64K "base-$mode.img" >/dev/null
    cp "base-$mode.img" "img-$mode"
    img=img-$mode
    "$lanyfs" put -r "${m[@]}" "$img" tree /t          # mkdir /t, /t/a, /t/sub, 2 files: 5 ops
    for d in /t /t/sub; do
        "$lanyfs" stat "$img" $d | grep -q '^Modified: *2001-02-03T04:05:06Z' ||
            fail "$mode: put -r did not give $d its host directory's modified time"
    done
    "$lanyfs" mkdir -p "${m[@]}" "$img" /x/y           # 2 ops
    "$lanyfs" put "${m[@]}" "$img" one /x/y/one         # 1
    "$lanyfs" mv "${m[@]}" "$img" /x/y/one /x/two       # 1
    "$lanyfs" truncate "${m[@]}" "$img" /x/two 100      # 1
    "$lanyfs" rm "${m[@]}" "$img" /t/a                  # 1
    "$lanyfs" mkdir "${m[@]}" "$img" /x/w               # 1
    "$lanyfs" rmdir "${m[@]}" "$img" /x/w               # 1 (a leaf: no SPEC 9.12 mark)
    # Refused before the mount: no session, no op.
    if "$lanyfs" mkdir "${m[@]}" "$img" /x 2>/dev/null; then
        fail "$mode: mkdir /x was not refused"
    fi
    # Refused before the mount for want of space: no session, no op.
    head -c 102400 /dev/zero >huge                      # 200 blocks: more than is free
    before=$(sha256sum <"$img")
    if "$lanyfs" put "${m[@]}" "$img" huge /huge 2>/dev/null; then
        fail "$mode: huge put not refused"
    fi
    [ "$(sha256sum <"$img")" = "$before" ] || fail "$mode: the refused put changed the image"
    want_ops=13
    if [ $mode = 2012 ]; then
        # Refused by the writer after the mount (past the driver's 4 GiB - 1): an op, no write.
        if "$lanyfs" truncate "${m[@]}" "$img" /x/two 5G 2>/dev/null; then
            fail "$mode: truncate to 5G not refused"
        fi
        [ "$(sha256sum <"$img")" = "$before" ] ||
            fail "$mode: the refused truncate changed the image"
        want_ops=14
    fi

    "$lanyfs" replay "base-$mode.img" "w-$mode.log" "out-$mode.img" >/dev/null ||
        fail "$mode: replay exited $?"
    cmp -s "out-$mode.img" "$img" || fail "$mode: the replayed log does not give the final image"
    json=$("$lanyfs" replay --json --force "base-$mode.img" "w-$mode.log" "out-$mode.img")
    ops=$(sed -n 's/^ *"log_ops" *: *\([0-9]*\).*/\1/p' <<<"$json")
    writes=$(sed -n 's/^ *"log_writes" *: *\([0-9]*\).*/\1/p' <<<"$json")
    echo "$mode: $(stat -c %s "w-$mode.log")-byte log, $writes writes, $ops operations"
    # 13 operations that ran, and in driver mode the refused truncate
    [ "$ops" = "$want_ops" ] || fail "$mode: the log counts '$ops' operations, want $want_ops"
done

echo "$failures failures"
[ "$failures" -eq 0 ]
