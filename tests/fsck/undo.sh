#!/usr/bin/env bash
# undo.sh FSCK UNDO LANYFS MKCASE -- the undo file round trip: a repair
# undone gives back the image byte for byte (SHA-256), again after a second
# restore, after a cut-off undo file; a device that does not match is
# refused (exit 3) unless --force; an existing undo file is not overwritten.
set -uo pipefail
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
fsck=$(abspath "$1") undo=$(abspath "$2") lanyfs=$(abspath "$3") mkcase=$(abspath "$4")
work=$(mktemp -d "${TMPDIR:-/tmp}/fsck-undo.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 99
export SOURCE_DATE_EPOCH=1796259735 TZ=UTC LC_ALL=C
failures=0 checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { checks=$((checks + 1)); if ! eval "$1"; then fail "$2"; fi; }
sha() { sha256sum "$1" | cut -c1-64; }
run() { local rc=0; "$@" >out.txt 2>err.txt </dev/null || rc=$?; echo $rc; }

cp "${LANYFS_CORPUS:?}/b4096-a64.img" a.img && chmod u+w a.img
s0=$(sha a.img)

# Repair with an undo file, then undo: identical to before.
check '[ "$(run "$fsck" -y -z a.undo a.img)" = 1 ]' "the repair exits 1"
s1=$(sha a.img)
check '[ "$s1" != "$s0" ]' "the repair changed the image"
check '[ -s a.undo ]' "the undo file exists"
check '[ "$(run "$undo" -n a.undo a.img)" = 0 ]' "lanyfs-undo -n accepts the repaired image"
check '[ "$(sha a.img)" = "$s1" ]' "lanyfs-undo -n writes nothing"
check '[ "$(run "$undo" a.undo a.img)" = 0 ]' "lanyfs-undo restores"
check '[ "$(sha a.img)" = "$s0" ]' "the restored image is byte for byte the one before"
check '[ "$(run "$undo" a.undo a.img)" = 0 ]' "lanyfs-undo runs again on a restored image"
check '[ "$(sha a.img)" = "$s0" ]' "restoring twice changes nothing"

# An existing undo file is not overwritten; --undo-overwrite does.
check '[ "$(run "$fsck" -y -z a.undo a.img)" = 8 ]' "an existing -z file is refused"
check '[ "$(sha a.img)" = "$s0" ]' "the refusal wrote nothing"
check '[ "$(run "$fsck" -y -z a.undo --undo-overwrite a.img)" = 1 ]' "--undo-overwrite replaces it"
check '[ "$(run "$undo" a.undo a.img)" = 0 ] && [ "$(sha a.img)" = "$s0" ]' "the new undo file restores"

# A device that does not match: refused, untouched; --force restores anyway.
"$fsck" -y -z b.undo a.img >/dev/null 2>&1
"$mkcase" a.img set 0 sb:freeblocks 12345
s2=$(sha a.img)
check '[ "$(run "$undo" b.undo a.img)" = 3 ]' "a changed recorded block is refused"
check '[ "$(sha a.img)" = "$s2" ]' "the refusal wrote nothing"
check '[ "$(run "$undo" --force b.undo a.img)" = 0 ] && [ "$(sha a.img)" = "$s0" ]' "--force restores"
cp "${LANYFS_CORPUS:?}/b512-a8.img" other.img && chmod u+w other.img
s3=$(sha other.img)
check '[ "$(run "$undo" b.undo other.img)" = 3 ]' "another device is refused"
check '[ "$(sha other.img)" = "$s3" ]' "another device is left alone"

# The default name, and the next free one when it is taken.
"$fsck" -y a.img >/dev/null 2>&1
check '[ -s fsck-lanyfs-a.img.undo ]' "the default undo file name"
"$undo" fsck-lanyfs-a.img.undo a.img >/dev/null 2>&1
"$fsck" -y a.img >/dev/null 2>&1
check '[ -s fsck-lanyfs-a.img.1.undo ]' "a taken default name is not overwritten"
check '[ "$(run "$undo" fsck-lanyfs-a.img.1.undo a.img)" = 0 ] && [ "$(sha a.img)" = "$s0" ]' \
    "the second undo file restores"

# An undo file cut short (a repair stopped while writing it): still restores.
"$fsck" -y -z c.undo a.img >/dev/null 2>&1
size=$(stat -c %s c.undo)
truncate -s $((size - 7)) c.undo
check '[ "$(run "$undo" c.undo a.img)" = 0 ] && [ "$(sha a.img)" = "$s0" ]' "a cut-off undo file restores"
grep -q 'did not finish' out.txt || fail "lanyfs-undo says the repair did not finish"

# A damaged undo file is refused (1), the image untouched.
"$fsck" -y -z d.undo a.img >/dev/null 2>&1
s4=$(sha a.img)
printf 'X' | dd of=d.undo bs=1 seek=20 conv=notrunc status=none
check '[ "$(run "$undo" d.undo a.img)" = 1 ]' "a damaged header is refused"
cp d.undo e.undo; printf 'LANYUNDO' | dd of=e.undo bs=1 seek=0 conv=notrunc status=none
printf '\x7f' | dd of=e.undo bs=1 seek=200 conv=notrunc status=none
check '[ "$(run "$undo" e.undo a.img)" = 1 ]' "a damaged record is refused"
check '[ "$(sha a.img)" = "$s4" ]' "a damaged undo file writes nothing"
check '[ "$(run "$undo" not-there.undo a.img)" = 1 ]' "a missing undo file"
check '[ "$(run "$undo" a.img)" = 2 ]' "usage: two arguments"

# -n (read-only) writes no undo file.
rm -f fsck-lanyfs-*.undo
"$fsck" -n a.img >/dev/null 2>&1
check '! ls fsck-lanyfs-*.undo >/dev/null 2>&1' "-n writes no undo file"

echo "undo: $checks checks, $failures failures"
[ $failures = 0 ]
