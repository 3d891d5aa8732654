#!/bin/sh
# writer-images.sh -- the scan's promises on images the project's writers make.
#
# Usage: writer-images.sh SCANCODES LANYFS
#
# `lanyfs simulate` runs seeded random operations (mkdir, put, pwrite,
# truncate, unlink, rmdir, rename over several mounts) on a fresh image.
# Images the correct writer made must scan with nothing above info;
# images the 2012-driver writer made must scan with nothing above info
# that is not a mark of the driver or formatter (scancodes -c).  Several
# geometries, both formatters.
set -u
SCANCODES=$1
LANYFS=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/scan-writer.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail=0

run() { # mode seed ops geometry size [extra]
    mode=$1 seed=$2 ops=$3 geom=$4 size=$5
    shift 5
    out="$work/$mode-$seed-$geom"
    if [ "$mode" = driver ]; then set -- --driver=2012 "$@"; fi
    if ! "$LANYFS" simulate --seed "$seed" --ops "$ops" --geometry "$geom" --size "$size" \
            --force "$@" "$out" > "$out.log" 2>&1 && [ ! -f "$out/final.img" ]; then
        echo "simulate failed: $mode seed $seed $geom $*"
        cat "$out.log"
        fail=1
        return
    fi
    check=clean
    [ "$mode" = driver ] && check=driver
    if ! "$SCANCODES" -c "$check" "$out/final.img" > "$out.bad" 2>&1; then
        echo "promise '$check' broken: simulate --seed $seed --ops $ops --geometry $geom $*"
        cat "$out.bad"
        fail=1
    fi
    rm -rf "$out"
}

for seed in 1 2 3; do
    run correct "$seed" 120 512:4 2M
    run driver "$seed" 120 512:4 2M
done
run correct 7 120 1024:2 4M
run driver 7 120 1024:2 4M
run correct 8 120 2048:3 4M --mkfs=2012
run driver 8 120 2048:3 4M --mkfs=2012
run correct 9 100 4096:4 4M
run driver 9 100 4096:4 4M
run correct 10 150 512:1 128K
run driver 10 150 512:1 128K
exit $fail
