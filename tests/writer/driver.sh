#!/usr/bin/env bash
# driver.sh LANYFS MKFS BLOCKCHECK PYTHON -- the 2012 driver's marks, exactly.
#
# Small scripted scenarios on a 512-byte, 16-bit image of 2048 blocks
# (extmax 253), each command one mount, in --driver=2012 mode, and where it
# helps the same steps in correct mode beside them.  Figures are exact:
#   leaks      a delete frees data and entry blocks but never the extender
#              (SPEC 9.4), and pushes leave freeblocks uncounted (9.2);
#   rm  9.9    a node whose replacement is a leaf below its right child
#              stays listed, size kept, data freed: exit 7;
#   mv  9.9    the same node renamed: its links are cleared, what hung
#              below it drops out (orphaned); across directories it sits in
#              two trees: exit 7; over a directory it runs rmdir (9.12);
#   rmdir 9.12 removing the root of a parent's tree freezes the parent: the
#              parent on disk still points at the freed block: exit 7;
#   put 9.7    extmax+1 blocks: file block extmax lands on block 0's disk
#              block; extmax+2 blocks: the growth loop fills the device with
#              orphaned extenders: exit 7.
set -euo pipefail

lanyfs=$(realpath "$1") mkfs=$(realpath "$2") blockcheck=$(realpath "$3") py=$4
base=${TMPDIR:-}
[ -z "$base" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
work=$(mktemp -d "${base:-/tmp}/lanyfs-driver.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export SOURCE_DATE_EPOCH=1700000000
D=--driver=2012

failures=0 checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { checks=$((checks + 1)); }

newimg() { "$mkfs" -b 512 -a 16 --size 1M "$1" >/dev/null; }

# run WANT_RC ARGS...: lanyfs ARGS must exit WANT_RC; stderr kept in err.txt
run() {
    local want=$1 rc=0
    shift
    "$lanyfs" "$@" >out.txt 2>err.txt || rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "lanyfs $* exited $rc, want $want; stderr: $(cat err.txt)"
    else
        ok
    fi
}

# expect_err REGEX: the last command's stderr matches
expect_err() {
    if grep -Eq -- "$1" err.txt; then ok; else fail "stderr does not match /$1/: $(cat err.txt)"; fi
}

# blocks IMAGE KEY=VALUE...: blockcheck figures of IMAGE
blocks() {
    local img=$1 out kv
    shift
    out=$("$blockcheck" "$img")
    for kv in "$@"; do
        local got
        got=$(sed -n "s/^${kv%%=*}=//p" <<<"$out")
        if [ "$got" = "${kv#*=}" ]; then ok; else fail "$img: ${kv%%=*} is $got, want ${kv#*=}"; fi
    done
}

# names IMAGE PATH WANT: the names `ls` lists, one line
names() {
    local got
    got=$("$lanyfs" ls "$1" "$2" 2>/dev/null | tr '\n' ' ')
    if [ "$got" = "$3" ]; then ok; else fail "ls $1 $2 gives '$got', want '$3'"; fi
}

# Random contents without the byte 0x80, so that no leaked data block can
# pass for an extender (its type byte) in the leaked_ext counts below.
head -c 1500 /dev/urandom | tr '\200' '\201' >A   # 3 blocks
head -c 100 /dev/urandom | tr '\200' '\201' >B    # 1 block

# ---- leaks: extenders of deleted files, uncounted pushes ------------------
newimg leak.img
blocks leak.img real_freeblocks=2046 sb_freeblocks=2046 leaked=0
run 0 put $D leak.img A /A
run 0 put $D leak.img B /B
# 5 + 3 blocks allocated, each counted; the unmount leaves freetail = freehead (9.3)
blocks leak.img sb_freeblocks=2038 real_freeblocks=2038 leaked=0 sb_freetail=2 sb_freehead=2
run 0 rm $D leak.img /A
# 3 data blocks and the entry pushed, uncounted; the extender leaks
blocks leak.img sb_freeblocks=2038 real_freeblocks=2042 leaked=1 leaked_ext=1 double=0
run 0 rm $D leak.img /B
blocks leak.img sb_freeblocks=2038 real_freeblocks=2044 leaked=2 leaked_ext=2 double=0
# The same in correct mode leaves nothing behind.
newimg leakc.img
run 0 put leakc.img A /A
run 0 put leakc.img B /B
run 0 rm leakc.img /A
run 0 rm leakc.img /B
if "$blockcheck" --clean leakc.img >/dev/null; then ok; else fail "correct-mode deletes leaked"; fi
blocks leakc.img real_freeblocks=2046 sb_freeblocks=2046

# ---- a tree the driver cannot delete from (9.9) ---------------------------
# m first, then f (smaller: right of m), z (greater: left), h (right of m,
# left of f): deleting m needs h, a leaf that is not m's child.
newimg tree.img
for n in m f z h; do run 0 put $D tree.img A /$n; done
cp tree.img tree0.img

run 7 rm $D tree.img /m
expect_err "/m: warning: driver mode: the 2012 driver's tree delete failed \(format section 9.9"
expect_err "3 data block\(s\) were freed .* stays listed with its old size of 1500 bytes"
names tree.img / "f h m z "
if "$lanyfs" cat tree.img /m 2>/dev/null | cmp -s - <(head -c 1500 /dev/zero); then ok
else fail "the half-deleted /m does not read as 1500 zero bytes"; fi
blocks tree.img leaked=0 double=0 sb_freeblocks=2026 real_freeblocks=2029

cp tree0.img treec.img
run 0 rm treec.img /m
names treec.img / "f h z "
if "$blockcheck" --clean treec.img >/dev/null; then ok; else fail "correct-mode rm of /m"; fi

# Rename in the same directory: the links of m are cleared, f, z and h drop out.
cp tree0.img mv1.img
run 7 mv $D mv1.img /m /q
expect_err "rename failed half-way \(format section 9.9\)"
expect_err "/q: warning: driver mode: after the rename .*no longer listed: f, h, z"
names mv1.img / "q "
# 3 entries, 3 extenders and 9 data blocks orphaned
blocks mv1.img leaked=15 leaked_ext=3 double=0

# Rename into another directory: the source stays in the old tree and is added to the new one.
cp tree0.img mv2.img
run 0 mkdir $D mv2.img /sub
run 7 mv $D mv2.img /m /sub/q
expect_err "/: warning: driver mode: after the rename .*no longer listed: f, h, sub, z; still or"
expect_err "still or newly listed: q"
names mv2.img / "q "
blocks mv2.img leaked=16 leaked_ext=3 double=0

cp tree0.img mvc.img
run 0 mkdir mvc.img /sub
run 0 mv mvc.img /m /sub/q
names mvc.img / "f h sub z "
names mvc.img /sub "q "
if "$blockcheck" --clean mvc.img >/dev/null; then ok; else fail "correct-mode mv of /m"; fi

# Rename over an empty directory: the driver removes it with rmdir, which
# freezes the new parent (here the root); the root's own subtree link is
# not written back, so what the tree delete of /src moved there is lost.
for m in correct 2012; do
    newimg over-$m.img
    run 0 mkdir over-$m.img /src
    run 0 put over-$m.img B /src/in
    run 0 mkdir over-$m.img /dst
    run 0 put over-$m.img B /dst/keep
    run 0 mkdir over-$m.img /empty
done
run 0 mv -f -T over-correct.img /src /empty
names over-correct.img / "dst empty "
names over-correct.img /empty "in "
run 7 mv -f -T $D over-2012.img /src /empty
expect_err "tree changes are not written back, format section 9.12.*no longer listed: dst"
names over-2012.img / "empty "
names over-2012.img /empty "in "
# /dst, /dst/keep and its extender and data block
blocks over-2012.img leaked=4 leaked_ext=1 double=0

# ---- rmdir freezes the parent (9.12) ---------------------------------------
newimg rmd.img
run 0 mkdir $D rmd.img /p
run 0 mkdir $D rmd.img /p/a
run 7 rmdir $D rmd.img /p/a
expect_err "dropped the parent's link count to 0 \(format section 9.12\).*freed block 4"
names rmd.img /p "a "
# block 4 is free and still the root of /p's tree; the push was not counted
blocks rmd.img double=1 sb_freeblocks=2044 real_freeblocks=2045
# A directory that is not the root of its parent's tree goes without a trace.
newimg rmd2.img
run 0 mkdir $D rmd2.img /p
run 0 mkdir $D rmd2.img /p/a
run 0 mkdir $D rmd2.img /p/b
run 0 rmdir $D rmd2.img /p/b
names rmd2.img /p "a "
blocks rmd2.img double=0 leaked=0

# ---- files of more than extmax blocks (9.7) ---------------------------------
"$py" -c '
import sys
for n in (254, 255):
    with open("big%d" % n, "wb") as f:
        f.write(b"".join(bytes([i % 256]) * 512 for i in range(n)))'
newimg g1.img
run 7 put $D g1.img big254 /big
expect_err "one more than an extender maps: .* without a child for file block 253"
"$lanyfs" cat g1.img /big >got254 2>/dev/null
if cmp -s <(head -c 512 got254) <(dd if=big254 bs=512 skip=253 count=1 status=none); then ok
else fail "file block 0 of the extmax+1 file is not file block 253's bytes"; fi
if cmp -s <(dd if=got254 bs=512 skip=1 count=252 status=none) \
          <(dd if=big254 bs=512 skip=1 count=252 status=none); then ok
else fail "file blocks 1..252 of the extmax+1 file changed"; fi
# entry, level-0 and level-1 extenders, 253 data blocks; nothing leaked
blocks g1.img extenders=2 data=253 leaked=0 double=0 sb_freeblocks=1790 real_freeblocks=1790

newimg g2.img
run 7 put $D g2.img big255 /big
expect_err "growth loop allocated empty extenders, .* device was full: 2046 blocks allocated"
# The device is full of orphaned extenders: 2046 - 1 entry - 253 data - 3 linked extenders.
blocks g2.img sb_freeblocks=0 real_freeblocks=0 sb_freehead=0
blocks g2.img leaked=1789 leaked_ext=1789 extenders=3
run 1 mkdir $D g2.img /after
expect_err "no space left on the device"

newimg gc.img
run 0 put gc.img big255 /big
if "$lanyfs" cat gc.img /big 2>/dev/null | cmp -s - big255; then ok
else fail "correct mode: the 255-block file does not read back"; fi
if "$blockcheck" --clean gc.img >/dev/null; then ok; else fail "correct-mode 255-block put"; fi

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
