#!/usr/bin/env bash
# refuse.sh LANYFS MKFS -- every command the writer commands must refuse.
#
# Each case runs one `lanyfs` writer command that must fail, and checks
# that it exits with the expected status (exit_codes.h), prints a message
# matching the expected text on stderr, and leaves the image byte for byte
# as it was (cmp): nothing half-written, not even the superblock rewrite
# an unmount would do.  Cases run in both modes where the mode matters.
set -euo pipefail

lanyfs=$(realpath "$1") mkfs=$(realpath "$2")
work=$(mktemp -d "${TMPDIR:-/tmp}/lanyfs-refuse.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export SOURCE_DATE_EPOCH=1700000000

failures=0 checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# refuse IMAGE WANT_RC REGEX -- ARGS...: lanyfs ARGS must exit WANT_RC with
# stderr matching REGEX, and IMAGE must not change.
refuse() {
    local img=$1 want=$2 re=$3
    shift 4
    cp "$img" before.img
    local rc=0
    "$lanyfs" "$@" >out.txt 2>err.txt || rc=$?
    checks=$((checks + 1))
    if [ "$rc" -ne "$want" ]; then
        fail "lanyfs $* exited $rc, want $want; stderr: $(cat err.txt)"
    elif ! grep -Eq -- "$re" err.txt; then
        fail "lanyfs $*: stderr does not match /$re/: $(cat err.txt)"
    elif ! cmp -s "$img" before.img; then
        fail "lanyfs $* changed the image although it was refused"
    fi
}

long=$(printf 'a%.0s' $(seq 256))
name255=$(printf 'b%.0s' $(seq 255))

# An image with a directory, a file in it, a file at the top and an empty directory.
"$mkfs" -b 512 -a 16 --size 1M img >/dev/null
printf 'hello\n' >h.txt
head -c 1500 /dev/urandom >three.bin
"$lanyfs" mkdir img /d
"$lanyfs" put img three.bin /d/f
"$lanyfs" put img h.txt /file
"$lanyfs" mkdir img /e
mkdir tree tree/sub
printf x >tree/file
printf y >tree/sub/z

for mode in correct 2012; do
    m=--driver=$mode
    # Names: too long, not a name for a new entry.
    refuse img 2 "256 bytes long; LanyFS names hold at most 255" -- mkdir $m img "/$long"
    refuse img 2 "at most 255" -- mkdir $m -p img "/d/x/$long/y"
    refuse img 2 "at most 255" -- put $m img h.txt "/d/$long"
    refuse img 2 "at most 255" -- mv $m img /file "/$long"
    refuse img 2 "at most 255" -- rm $m img "/d/$long"
    refuse img 2 "cannot name a new entry" -- mkdir $m img /d/.
    refuse img 2 "cannot name a new entry" -- put $m img h.txt /d/..
    # A missing parent, a parent that is a file.
    refuse img 6 "parent directory /nodir does not exist" -- mkdir $m img /nodir/x
    refuse img 6 "parent directory /nodir does not exist" -- put $m img h.txt /nodir/x
    refuse img 6 "parent /file is a file" -- mkdir $m img /file/x
    refuse img 6 "parent /file is a file" -- put $m img h.txt /file/x
    refuse img 6 "parent /file is a file" -- mkdir -p $m img /file/x/y
    refuse img 6 "parent directory /nodir does not exist" -- put -r $m img tree /nodir/x
    refuse img 6 "parent directory /nodir does not exist" -- mv $m img /file /nodir/x
    # An existing target.
    refuse img 1 "already exists" -- mkdir $m img /d
    refuse img 1 "already exists, as a file" -- mkdir -p $m img /file
    refuse img 1 "already exists \(-f replaces it\)" -- put $m img h.txt /file
    refuse img 1 "already exists \(-f replaces it\)" -- put $m img h.txt /d/f
    refuse img 1 "already exists \(-f replaces it\)" -- mv $m img /file /d/f
    refuse img 1 "cannot replace a directory with a file" -- mv -f -T $m img /file /e
    mkdir -p host && printf q >host/d
    refuse img 1 "/d: is a directory" -- put -f $m img host/d /
    mkdir -p clash && printf z >clash/file && printf w >clash/new
    refuse img 1 "/file: already exists" -- put -r $m img clash /
    refuse img 1 "already exists, as a file" -- put -r $m img tree /file
    # Wrong kinds and missing entries.
    refuse img 6 "no such file" -- rm $m img /nope
    refuse img 1 "is a directory \(rmdir removes" -- rm $m img /d
    refuse img 1 "directory not empty" -- rmdir $m img /d
    refuse img 6 "not a directory \(rm deletes" -- rmdir $m img /file
    refuse img 2 "root directory cannot be removed" -- rmdir $m img /
    refuse img 6 "no such directory" -- rmdir $m img /nope
    refuse img 6 "no such file" -- truncate $m img /nope 10
    refuse img 1 "is a directory" -- truncate $m img /d 10
    refuse img 6 "no such file or directory" -- mv $m img /nope /x
    refuse img 2 "below itself" -- mv $m img /d /d/sub
    refuse img 2 "root directory cannot be moved" -- mv $m img / /x
    refuse img 1 "is a directory \(use 'put -r'" -- put $m img tree /t
    refuse img 1 "cannot open" -- put $m img no-such-host-file /t
    refuse img 6 "not a directory \(put -r copies a tree\)" -- put -r $m img h.txt /t
    # Usage errors.
    refuse img 2 "not a size" -- truncate $m img /file 12Q
    refuse img 2 "expects IMAGE and PATH" -- mkdir $m img
    refuse img 2 "-f replaces one file" -- put -r -f $m img tree /t
    # A write log that cannot be opened: refused before any write.
    refuse img 1 "cannot open the write log; nothing was changed" -- \
        mkdir $m --log /nonexistent-dir/w.log img /new
done
refuse img 2 "--driver takes '2012' or 'correct'" -- mkdir --driver=1999 img /x
# Refused by the writer after the mount (the CLI does not check this one):
# the mount is dropped without its unmount writes.
refuse img 1 "larger than the 2012 driver's largest file" -- truncate --driver=2012 img /file 5G

# A full device: a tree copy, mkdir -p and a put that do not fit.
"$mkfs" -b 512 -a 16 --size 8K small.img >/dev/null
head -c 20000 /dev/urandom >big.bin
mkdir bigtree && cp big.bin bigtree/a && cp big.bin bigtree/b
for mode in correct 2012; do
    m=--driver=$mode
    refuse small.img 1 "no space left on the device" -- put $m small.img big.bin /big
    refuse small.img 1 "the copy needs .* blocks, 14 are free" -- put -r $m small.img bigtree /t
    refuse small.img 1 "no space left on the device: 15 block" -- \
        mkdir -p $m small.img /a/b/c/d/e/f/g/h/i/j/k/l/m/n/o
done
# Fill it completely, then even a directory is refused.
head -c $((11 * 512)) /dev/urandom >fill.bin
"$lanyfs" put small.img fill.bin /fill
"$lanyfs" mkdir small.img /last
refuse small.img 1 "no space left on the device" -- mkdir small.img /more
refuse small.img 1 "no space left on the device" -- mkdir --driver=2012 small.img /more
refuse small.img 1 "no space left on the device" -- put small.img h.txt /more

# Replacing a sparse file: the disk-side estimate counts its old blocks as a
# dense file's and lets the put through; the writer's exact count refuses it
# after the mount, and the dropped mount leaves the image as it was.
"$mkfs" -b 512 -a 16 --size 64K sparse.img >/dev/null    # 126 free blocks
"$lanyfs" put sparse.img h.txt /s
"$lanyfs" truncate sparse.img /s 51200                     # 100 blocks, 1 of them mapped
head -c $((126 * 512)) /dev/urandom >r126
refuse sparse.img 1 "127 blocks needed, 125 free" -- put -f sparse.img r126 /s
head -c $((124 * 512)) /dev/urandom >r124
checks=$((checks + 1))
if ! "$lanyfs" put -f sparse.img r124 /s || ! "$lanyfs" cat sparse.img /s | cmp -s - r124; then
    fail "a put -f that fits the device exactly failed"
fi

# Images that fail the superblock checks: refused before the mount.
cp img badbits.img && printf '\x0d' | dd of=badbits.img bs=1 seek=12 conv=notrunc status=none
refuse badbits.img 4 "refusing to write to an image whose superblock fails its checks" -- \
    mkdir badbits.img /x
cp img badaddr.img && printf '\x09' | dd of=badaddr.img bs=1 seek=14 conv=notrunc status=none
refuse badaddr.img 4 "nothing was changed" -- put --driver=2012 badaddr.img h.txt /x
cp img badmagic.img && printf 'XANY' | dd of=badmagic.img bs=1 seek=4 conv=notrunc status=none
refuse badmagic.img 3 "nothing was changed" -- rm badmagic.img /file
# A superblock type byte other than 0xd0: readers only report it, but the
# 2012 driver's mount refuses it, and so does every writer, in both modes.
cp img badtype.img && printf '\x10' | dd of=badtype.img bs=1 seek=0 conv=notrunc status=none
for mode in correct 2012; do
    refuse badtype.img 7 "superblock field 'type' is 0x10, not 0xd0" -- \
        mkdir --driver=$mode badtype.img /x
    refuse badtype.img 7 "nothing was changed" -- put --driver=$mode badtype.img h.txt /x
done
cp img short.img && truncate -s 300K short.img
refuse short.img 5 "nothing was changed" -- mkdir short.img /x
# addrlen 1 addresses 256 blocks; a superblock claiming more is refused.
"$mkfs" -b 512 -a 8 --size 128K a1.img >/dev/null
printf '\x00\x02' | dd of=a1.img bs=1 seek=24 conv=notrunc status=none
truncate -s 256K a1.img
refuse a1.img 4 "nothing was changed" -- mkdir a1.img /x

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
