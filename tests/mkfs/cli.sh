#!/usr/bin/env bash
# cli.sh MKFS -- the mkfs.lanyfs command line: defaults, SOURCE_DATE_EPOCH,
# --size, labels, and the exit codes (0 ok, 1 operational error, 2 usage).
# Every check reads the image bytes back or compares files; a usage error
# must leave the target untouched.
set -euo pipefail

mkfs=$(realpath "${1:?usage: cli.sh MKFS}")
work=$(mktemp -d "${TMPDIR:-/tmp}/lanyfs-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

failures=0
checks=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
ok() {
    checks=$((checks + 1))
}

# le integer of SIZE bytes (1, 2, 4, 8) at byte OFF of FILE.
le() {
    od -An --endian=little -t "u$3" -j "$2" -N "$3" "$1" | tr -d ' \n'
}

# expect_rc WANT -- ARGS...: run mkfs with ARGS, check the exit status.
expect_rc() {
    local want=$1
    shift 2
    local rc=0
    "$mkfs" "$@" >out.txt 2>err.txt || rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "mkfs $* exited $rc, want $want; stderr: $(cat err.txt)"
    elif [ "$want" -ne 0 ] && [ ! -s err.txt ]; then
        fail "mkfs $* exited $rc without a message on stderr"
    else
        ok
    fi
}

check_eq() { # check_eq WHAT GOT WANT
    if [ "$2" != "$3" ]; then
        fail "$1: got '$2', want '$3'"
    else
        ok
    fi
}

# --- defaults: -a 32 -b 4096, label "LanyFS Storage" -------------------------
truncate -s 1M def.img
expect_rc 0 -- def.img
check_eq "default blocksize exponent" "$(le def.img 12 1)" 12
check_eq "default address length" "$(le def.img 14 1)" 4
check_eq "default blocks" "$(le def.img 24 8)" 256
check_eq "default freeblocks" "$(le def.img 48 8)" 254
check_eq "default label" "$(dd if=def.img bs=1 skip=120 count=14 status=none)" "LanyFS Storage"
check_eq "default label NUL" "$(le def.img 134 1)" 0
check_eq "chain type (correct mode)" "$(le def.img $((2 * 4096)) 1)" $((0x70))
check_eq "last chain slot empty" "$(le def.img $((3 * 4096 - 4)) 4)" 0
grep -q '^  blocks: *256 (1048576 bytes)$' out.txt && ok || fail "summary lacks the block count"
grep -q '^  free blocks: *254, in 1 chain block$' out.txt && ok || fail "summary lacks free blocks"
grep -q '^  volume label: *LanyFS Storage$' out.txt && ok || fail "summary lacks the label"
if grep -q 'writing superblock' out.txt; then
    fail "default mode printed the 2012 steps"
else
    ok
fi

# --- SOURCE_DATE_EPOCH -------------------------------------------------------
truncate -s 64K t1.img t2.img t3.img
SOURCE_DATE_EPOCH=1000000000 expect_rc 0 -- -b 512 -a 16 t1.img
SOURCE_DATE_EPOCH=1000000000 expect_rc 0 -- -b 512 -a 16 t2.img
SOURCE_DATE_EPOCH=1796259735 expect_rc 0 -- -b 512 -a 16 t3.img
# 2001-09-09T01:46:40Z: year 2001, 9, 9, 1, 46, 40; nanoseconds 0, offset 0.
for off in 56 72 $((512 + 56)) $((512 + 72)); do
    check_eq "year at $off" "$(le t1.img $off 2)" 2001
    check_eq "month/day at $off" "$(le t1.img $((off + 2)) 1)/$(le t1.img $((off + 3)) 1)" 9/9
    check_eq "time at $off" "$(le t1.img $((off + 4)) 1):$(le t1.img $((off + 5)) 1):$(le t1.img \
        $((off + 6)) 1)" 1:46:40
    check_eq "nsec at $off" "$(le t1.img $((off + 8)) 4)" 0
    check_eq "offset at $off" "$(le t1.img $((off + 12)) 2)" 0
done
check_eq "year for 1796259735" "$(le t3.img 56 2)" 2026
cmp -s t1.img t2.img && ok || fail "the same SOURCE_DATE_EPOCH gave different images"
if cmp -s t1.img t3.img; then fail "a different SOURCE_DATE_EPOCH gave the same image"; else ok; fi
check_eq "checked is all zero" "$(le t1.img 88 8)$(le t1.img 96 8)" 00

# --- --size --------------------------------------------------------------------
expect_rc 0 -- --size 1M new.img
check_eq "--size 1M" "$(stat -c %s new.img)" 1048576
check_eq "--size 1M blocks" "$(le new.img 24 8)" 256
expect_rc 0 -- -b 512 --size 64KiB kib.img
check_eq "--size 64KiB" "$(stat -c %s kib.img)" 65536
expect_rc 0 -- -b 512 --size 100KB kb.img
check_eq "--size 100KB" "$(stat -c %s kb.img)" 100000
check_eq "--size 100KB blocks" "$(le kb.img 24 8)" 195
expect_rc 0 -- -b 512 --size 20000 plain.img
check_eq "--size 20000" "$(stat -c %s plain.img)" 20000
# Extending keeps the file and grows it; an equal size is fine.
truncate -s 64K grow.img
expect_rc 0 -- -b 512 --size 128K grow.img
check_eq "extended size" "$(stat -c %s grow.img)" 131072
check_eq "extended blocks" "$(le grow.img 24 8)" 256
expect_rc 0 -- -b 512 --size 128K grow.img
# Shrinking is refused and changes nothing.
cp grow.img grow.orig
expect_rc 1 -- -b 512 --size 64K grow.img
cmp -s grow.img grow.orig && ok || fail "a refused shrink changed the file"
grep -q 'shrink' err.txt && ok || fail "the shrink refusal does not say why"
# Too small for a filesystem: refused before any file is made.
expect_rc 1 -- --size 8K small.img
[ ! -e small.img ] && ok || fail "a refused --size left small.img behind"
# Only regular files.
mkdir adir
expect_rc 1 -- --size 1M adir
expect_rc 1 -- --size 1M /dev/null

# --- labels ----------------------------------------------------------------------
long255=$(printf 'L%.0s' $(seq 255))
long300=$(printf 'M%.0s' $(seq 300))
truncate -s 64K lab.img
expect_rc 0 -- -b 512 -l "$long255" lab.img
check_eq "255-byte label NUL" "$(le lab.img $((120 + 255)) 1)" 0
check_eq "255-byte label" "$(dd if=lab.img bs=1 skip=120 count=255 status=none)" "$long255"
cp lab.img lab.orig
expect_rc 2 -- -b 512 -l "${long255}x" lab.img
cmp -s lab.img lab.orig && ok || fail "a refused label changed the image"
expect_rc 0 -- --compat=2012 -b 512 -l "$long300" lab.img
check_eq "compat label cut to 256" "$(dd if=lab.img bs=1 skip=120 count=256 status=none)" \
    "${long300:0:256}"
check_eq "compat label has no NUL" "$(le lab.img 375 1)" $((0x4d))
check_eq "byte after the label field" "$(le lab.img 376 1)" 0
grep -q "^volume label: ${long300:0:256}\$" out.txt && ok || fail "compat label line"

# --- 2012 mode quirks on the command line ------------------------------------------
truncate -s 2M a64.img
expect_rc 0 -- --compat=2012 -a 64 -b 4096 a64.img
check_eq "compat -a 64 blocks" "$(le a64.img 24 8)" 1
grep -qx 'warning: address length not sufficient!' out.txt && ok || fail "compat -a 64 warning"
truncate -s 2M c64.img
expect_rc 0 -- -a 64 -b 4096 c64.img
check_eq "correct -a 64 blocks" "$(le c64.img 24 8)" 512
if grep -q 'not sufficient' out.txt err.txt; then fail "correct -a 64 warned"; else ok; fi
truncate -s 256K cap.img
expect_rc 0 -- -a 8 -b 512 cap.img
check_eq "-a 8 capped blocks" "$(le cap.img 24 8)" 256
grep -q 'only 256 of the device' err.txt && ok || fail "no warning for a capped device"

# --- -v, --help, --version -----------------------------------------------------------
expect_rc 0 -- -v -b 512 t1.img
grep -q 'final superblock' out.txt && ok || fail "-v does not report the steps"
expect_rc 0 -- --help
grep -q 'Exit status: 0 success, 1 operational error, 2 usage error' out.txt && ok ||
    fail "--help lacks the exit codes"
grep -q 'default 32' out.txt && grep -q 'default 4096' out.txt && ok || fail "--help defaults"
expect_rc 0 -- --version
grep -q '^mkfs.lanyfs (lanyfs-tools ' out.txt && ok || fail "--version"

# --- usage errors: exit 2, target untouched ------------------------------------------
truncate -s 64K target.img
printf 'precious' | dd of=target.img conv=notrunc status=none
cp target.img target.orig
for args in "-a 12" "-a 0" "-a 72" "-a x" "-a 32x" "-a -8" "-b 1000" "-b 8192" "-b 256" \
    "-b 0x200" "--compat=2013" "--compat=" "--size 12Q" "--size -5" "--size 99999999999999T" \
    "--bogus" "-z"; do
    # shellcheck disable=SC2086
    expect_rc 2 -- $args target.img
done
expect_rc 2 --
expect_rc 2 -- target.img other.img
expect_rc 2 -- target.img -a
expect_rc 2 -- --compat target.img
cmp -s target.img target.orig && ok || fail "a usage error changed the target"

# --- operational errors: exit 1 ----------------------------------------------------------
expect_rc 1 -- missing.img
[ ! -e missing.img ] && ok || fail "mkfs without --size created a file"
expect_rc 1 -- adir
truncate -s $((15 * 4096)) tiny.img
expect_rc 1 -- tiny.img
grep -q 'at least 16' err.txt && ok || fail "the too-small refusal does not say why"
truncate -s $((16 * 4096)) min.img
expect_rc 0 -- min.img
check_eq "16-block minimum" "$(le min.img 24 8)" 16

echo "$checks checks passed, $failures failed"
[ "$failures" -eq 0 ]
