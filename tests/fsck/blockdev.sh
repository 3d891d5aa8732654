#!/usr/bin/env bash
# blockdev.sh FSCK UNDO SAMPLE -- fsck-lanyfs and lanyfs-undo on a real
# block device: a loop device over a copy of the yanked sample is checked
# (-n writes nothing), repaired with an undo file (-y, the device opened
# with O_EXCL), found clean, and restored byte for byte; a mounted device
# is refused.  Needs root and loop devices: skipped (77) without them.
set -uo pipefail
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
fsck=$(abspath "$1") undo=$(abspath "$2") sample=$(abspath "$3")
[ "$(id -u)" = 0 ] || { echo "skipped: needs root"; exit 77; }
command -v losetup >/dev/null || { echo "skipped: no losetup"; exit 77; }
[ -f "$sample" ] || { echo "skipped: no sample image $sample"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fsck-blockdev.XXXXXX")
loops=()
cleanup() {
    mountpoint -q "$work/mnt" 2>/dev/null && umount "$work/mnt"
    for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 99
export LC_ALL=C TZ=UTC
failures=0 checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { checks=$((checks + 1)); if ! eval "$1"; then fail "$2"; fi; }
sha() { sha256sum "$1" | cut -c1-64; }
run() { local rc=0; "$@" >out.txt 2>err.txt </dev/null || rc=$?; echo $rc; }

cp "$sample" y.img
if ! dev=$(losetup -f --show y.img 2>/dev/null); then
    echo "skipped: cannot attach a loop device"; exit 77
fi
loops+=("$dev")
s0=$(sha "$dev")

check '[ "$(run "$fsck" -n "$dev")" = 4 ]' "-n finds the yanked sample's problems (exit 4)"
check 'grep -q "Filesystem still has errors" out.txt' "-n says errors are left"
check '[ "$(sha "$dev")" = "$s0" ]' "-n writes nothing to the device"
check '[ "$(run "$fsck" -y -z y.undo "$dev")" = 1 ]' "-y repairs the device (exit 1)"
check 'grep -q "FILESYSTEM WAS MODIFIED" out.txt' "-y says the device was modified"
check '[ -s y.undo ]' "the repair left an undo file"
check '[ "$(run "$fsck" -n "$dev")" = 0 ]' "-n after the repair finds the device clean"
check '[ "$(run "$undo" y.undo "$dev")" = 0 ]' "lanyfs-undo restores the device"
check '[ "$(sha "$dev")" = "$s0" ]' "the restored device is byte for byte the yanked one"

# A mounted device (ext4 here: the kernel has no LanyFS driver) is refused.
if command -v mkfs.ext4 >/dev/null && truncate -s 8M ext.img && mkfs.ext4 -q ext.img 2>/dev/null &&
    edev=$(losetup -f --show ext.img 2>/dev/null); then
    loops+=("$edev")
    mkdir mnt
    if mount "$edev" mnt 2>/dev/null; then
        check '[ "$(run "$fsck" -y "$edev")" = 8 ]' "-y on a mounted device exits 8"
        check 'grep -q "is mounted" err.txt' "the refusal says the device is mounted"
        umount mnt
    else
        echo "note: cannot mount here; the mounted-device check is left out"
    fi
fi

echo "blockdev: $checks checks, $failures failures"
[ "$failures" = 0 ]
