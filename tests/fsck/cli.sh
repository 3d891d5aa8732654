#!/usr/bin/env bash
# cli.sh FSCK FSCK_DOT LANYFS MKFS MKCASE JSONCHECK -- the command line of
# fsck-lanyfs: usage errors (16), operational errors (8), the answer modes
# and their exit codes (0, 1, 4), -n never writing, --json, -C, and
# fsck.lanyfs being the same command.
set -uo pipefail
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
fsck=$(abspath "$1") fsckdot=$(abspath "$2") lanyfs=$(abspath "$3") mkfs=$(abspath "$4")
mkcase=$(abspath "$5") jsoncheck=$(abspath "$6")
work=$(mktemp -d "${TMPDIR:-/tmp}/fsck-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 99
export SOURCE_DATE_EPOCH=1796259735 TZ=UTC LC_ALL=C

failures=0 checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect WANT ARGS...: run fsck with ARGS (stdin from /dev/null), check the status.
expect() {
    local want=$1; shift
    local rc=0
    "$fsck" "$@" </dev/null >out.txt 2>err.txt || rc=$?
    checks=$((checks + 1))
    if [ "$rc" -ne "$want" ]; then
        fail "fsck-lanyfs $* exited $rc, want $want; stdout: $(head -c 600 out.txt); stderr: $(cat err.txt)"
    fi
}
sha() { sha256sum "$1" | cut -c1-64; }

# A clean image and a damaged one: an orphan (not preen-safe) and leaked blocks (preen-safe).
"$mkfs" -b 1024 -a 32 --size 256K clean.img >/dev/null
printf 'x\n' >x
"$lanyfs" put clean.img x /x.txt
"$lanyfs" mkdir clean.img /d
"$lanyfs" put clean.img x /d/y.txt
cp clean.img orphan.img
"$mkcase" orphan.img set @/d subtree 0
cp clean.img leak.img
"$mkcase" leak.img set @/x.txt:data slot:0 0

# --- usage errors: 16, the image untouched ------------------------------------
s0=$(sha clean.img)
expect 16
expect 16 -n -y clean.img
expect 16 -p -n clean.img
expect 16 -a --repair clean.img
expect 16 -z u.undo --no-undo -y clean.img
expect 16 -n clean.img other.img
expect 16 -C abc -n clean.img
expect 16 -n clean.img -C
expect 16 --frobnicate clean.img
expect 16 -q clean.img
[ "$(sha clean.img)" = "$s0" ] || fail "a usage error changed the image"
grep -q "Try 'fsck-lanyfs --help'" err.txt || fail "usage errors point to --help"

# --- help and version ----------------------------------------------------------------
expect 0 --help
grep -q '^Usage: fsck-lanyfs' out.txt || fail "--help prints the usage"
grep -q ' 32  cancelled' out.txt || fail "--help lists the exit codes"
expect 0 -V
grep -q '^fsck-lanyfs ' out.txt || fail "-V prints the version"

# --- operational errors: 8 -----------------------------------------------------------
expect 8 -n no-such.img
: >empty.img
expect 8 -n empty.img
expect 8 clean.img          # no answer mode and no terminal
grep -q 'need a terminal' err.txt || fail "ASK mode without a terminal says why"

# --- a clean image: 0 in every mode ------------------------------------------------------
expect 0 -n clean.img
[ "$(sha clean.img)" = "$s0" ] || fail "-n wrote to a clean image"
expect 0 -p --no-undo clean.img
expect 0 -a --no-undo clean.img
expect 0 -y --no-undo -f clean.img
expect 0 --repair --no-undo clean.img
grep -q 'FILESYSTEM WAS MODIFIED' out.txt && fail "a clean image was reported modified"

# --- -n on damage: 4, nothing written -------------------------------------------------------
s1=$(sha orphan.img)
expect 4 -n orphan.img
grep -q 'Move it to /lost+found? no' out.txt || fail "-n answers no"
[ "$(sha orphan.img)" = "$s1" ] || fail "-n wrote to a damaged image"
expect 4 -n -v orphan.img

# --- preen: fixes what is safe (1), stops where it is not (4) ---------------------------------
cp leak.img leak2.img
expect 1 -p --no-undo leak2.img
expect 0 -n leak2.img
cp orphan.img orphan2.img
expect 4 -p --no-undo orphan2.img
grep -q 'UNEXPECTED INCONSISTENCY' out.txt || fail "preen says it stopped"
expect 4 -n orphan2.img

# --- -y: 1, then clean ---------------------------------------------------------------------------
cp orphan.img orphan3.img
expect 1 -y --no-undo orphan3.img
grep -q '1 entries moved to /lost+found' out.txt || fail "the summary counts the relinked entry"
expect 0 -n orphan3.img
test "$("$lanyfs" cat orphan3.img /lost+found/y.txt)" = x || fail "the orphan reads back"

# --- fsck.lanyfs is the same command ---------------------------------------------------------------
rc=0; "$fsckdot" -n clean.img >dot.txt 2>&1 || rc=$?
[ $rc = 0 ] || fail "fsck.lanyfs -n exited $rc"
grep -q 'Checking clean.img' dot.txt || fail "fsck.lanyfs prints the same report"
rc=0; "$fsckdot" -n orphan.img >dot.txt 2>&1 || rc=$?
[ $rc = 4 ] || fail "fsck.lanyfs -n on damage exited $rc"

# --- --json ------------------------------------------------------------------------------------------
expect 4 -n --json orphan.img
"$jsoncheck" out.txt 4 || fail "--json is one lanyfs-tools document"
grep -q '"name": "ORPHAN_ENTRY"\|"name": "MARK_DRIVER_ORPHAN"' out.txt || fail "--json lists the findings"
grep -q '"answer": "no"' out.txt || fail "--json gives the answers"
cp orphan.img orphan4.img
expect 1 -y --no-undo --json orphan4.img
"$jsoncheck" out.txt 1 || fail "--json after a repair"
grep -q '"modified": true' out.txt || fail "--json says the image was modified"
expect 8 -n --json no-such.img
"$jsoncheck" out.txt 8 || fail "--json reports an operational error"

# --- --db: the scan lands in a database -------------------------------------------------------------
expect 4 -n --db scan.db orphan.img
[ -s scan.db ] || fail "--db wrote no database"
expect 12 -n --db /nonexistent/dir/scan.db orphan.img   # 8 + 4: the status is a sum

# --- -C: progress lines on a descriptor, a bar on fd 0 --------------------------------------------------
rc=0; "$fsck" -n -C 3 clean.img 3>prog.txt >/dev/null 2>&1 || rc=$?
[ $rc = 0 ] || fail "-C 3 changed the exit status ($rc)"
[ -s prog.txt ] || fail "-C 3 wrote no progress lines"
grep -qvE '^[1-7] [0-9]+ [0-9]+ clean\.img$' prog.txt && fail "progress lines are PASS DONE TOTAL DEVICE"
expect 0 -n -C 0 clean.img

echo "cli: $checks checks, $failures failures"
[ $failures = 0 ]
