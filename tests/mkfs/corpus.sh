#!/usr/bin/env bash
# corpus.sh MKFS -- mkfs.lanyfs --compat=2012 against the 2012 formatter.
#
# For every NAME.img in $LANYFS_CORPUS: make a zero-filled file of the same
# size, run MKFS --compat=2012 with the options the MANIFEST lists for it and
# SOURCE_DATE_EPOCH set to the time NAME.detect.txt reports, then require
#   - every byte of the image to equal the reference (cmp),
#   - stdout to equal NAME.mkfs.txt line for line, except the banner (line 1),
#     which names this tool, and the harness's trailing "rc=N" line, whose N
#     must be our exit status instead.
# An image without a MANIFEST row, or a corpus without images, fails.
set -euo pipefail

mkfs=${1:?usage: corpus.sh MKFS}
corpus=${LANYFS_CORPUS:?LANYFS_CORPUS is not set}
manifest=$corpus/MANIFEST.md
work=$(mktemp -d "${TMPDIR:-/tmp}/lanyfs-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail=0
total=0
same_bytes=0
same_text=0

# The options cell of NAME's MANIFEST row, remarks in parentheses removed.
manifest_opts() {
    local row
    row=$(grep -F "| $1.img |" "$manifest" | head -n 1) || return 1
    [ -n "$row" ] || return 1
    awk -F'|' '{ print $4 }' <<<"$row" | sed -e 's/([^)]*)//g'
}

# Seconds since the epoch of the "created:" line of NAME.detect.txt.
corpus_epoch() {
    local created
    created=$(sed -n 's/^created: //p' "$corpus/$1.detect.txt")
    [ -n "$created" ] || return 1
    # 2026-12-03T01:02:15.0+00:00 -> date(1) reads it without the ".0".
    date -u -d "$(sed -e 's/\.[0-9]*+/+/' <<<"$created")" +%s
}

shopt -s nullglob
for ref in "$corpus"/*.img; do
    name=$(basename "$ref" .img)
    total=$((total + 1))
    if ! opts=$(manifest_opts "$name"); then
        echo "FAIL $name: no row in MANIFEST.md"
        fail=1
        continue
    fi
    if ! epoch=$(corpus_epoch "$name"); then
        echo "FAIL $name: no created time in $name.detect.txt"
        fail=1
        continue
    fi
    eval "args=($opts)"
    img=$work/$name.img
    truncate -s "$(stat -c %s "$ref")" "$img"
    set +e
    SOURCE_DATE_EPOCH=$epoch "$mkfs" --compat=2012 "${args[@]}" "$img" >"$work/$name.out" \
        2>"$work/$name.err"
    rc=$?
    set -e

    if cmp -s "$img" "$ref"; then
        same_bytes=$((same_bytes + 1))
    else
        echo "FAIL $name: image differs from the reference (options: ${args[*]}, epoch $epoch)"
        cmp "$img" "$ref" | head -n 3 || true
        cmp -l "$img" "$ref" | head -n 10 || true
        fail=1
    fi

    # The reference transcript: its rc line (when present) is the exit status.
    want_rc=$(sed -n 's/^rc=\([0-9]*\)$/\1/p' "$corpus/$name.mkfs.txt")
    want_rc=${want_rc:-0}
    if [ "$rc" -ne "$want_rc" ]; then
        echo "FAIL $name: exit status $rc, the 2012 formatter's was $want_rc"
        cat "$work/$name.err"
        fail=1
    fi
    grep -v '^rc=[0-9]*$' "$corpus/$name.mkfs.txt" | tail -n +2 >"$work/$name.want"
    tail -n +2 "$work/$name.out" >"$work/$name.got"
    banner=$(head -n 1 "$work/$name.out")
    if ! cmp -s "$work/$name.got" "$work/$name.want"; then
        echo "FAIL $name: output differs from $name.mkfs.txt (below 'cat -A', got then want)"
        cat -A "$work/$name.got"
        echo "--"
        cat -A "$work/$name.want"
        fail=1
    elif [[ $banner != "mkfs.lanyfs "* ]]; then
        echo "FAIL $name: banner '$banner' does not name mkfs.lanyfs"
        fail=1
    else
        same_text=$((same_text + 1))
    fi
done

if [ "$total" -eq 0 ]; then
    echo "FAIL: no images in $corpus"
    exit 1
fi
echo "$same_bytes/$total corpus images byte-identical, $same_text/$total transcripts identical"
exit "$fail"
