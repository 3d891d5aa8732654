#!/usr/bin/env bash
# hostile.sh LANYFS MKHOSTILE -- names that try to lead `lanyfs salvage` out
# of its folder (mkhostile.c: '/', '.', '..', control characters, invalid
# UTF-8, an overlong '/', a bidi override, a backslash, 256 bytes, empty)
# and symbolic links planted in OUTDIR: every copy lands inside OUTDIR under
# a visible, valid UTF-8 name, holds its own bytes, nothing outside changes,
# and a planted link is never followed (with --force it is replaced).
set -uo pipefail
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
lanyfs=$(abspath "$1") mkhostile=$(abspath "$2")
work=$(mktemp -d "${TMPDIR:-/tmp}/salvage-hostile.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 99
export TZ=UTC LC_ALL=C

failures=0 checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { checks=$((checks + 1)); if ! eval "$1"; then fail "$2"; fi; }
# run WANT ARGS...: lanyfs salvage ARGS, the status must be WANT.
run() {
    local want=$1 rc=0; shift
    "$lanyfs" salvage "$@" >out.txt 2>err.txt || rc=$?
    checks=$((checks + 1))
    [ "$rc" -eq "$want" ] || fail "salvage $* exited $rc, want $want: $(cat out.txt err.txt)"
}

"$mkhostile" h.img || exit 99

# Everything under $1 (a folder) is inside it, names valid UTF-8 without
# control or format characters; every manifest row's output is a real file
# under $1 whose content is "file-N" repeated (N one per file), as listed.
verify() {
    python3 - "$1" <<'EOF'
import csv, os, sys, unicodedata
top = sys.argv[1]
bad = []
for d, dirs, files in os.walk(top, followlinks=False):
    for n in dirs + files:
        b = os.fsencode(n)
        try:
            s = b.decode('utf-8')
        except UnicodeDecodeError:
            bad.append('not UTF-8: %r' % b); continue
        if any(unicodedata.category(c) in ('Cc', 'Cf', 'Zl', 'Zp') for c in s):
            bad.append('control or format character: %r' % s)
        if s in ('.', '..') or '/' in s or not s:
            bad.append('bad name %r' % s)
        if len(b) > 255:
            bad.append('too long: %r' % s)
rows = list(csv.DictReader(open(os.path.join(top, 'manifest.csv'), newline='')))
seen = set()
for r in rows:
    if r['status'] != 'exact':
        continue
    p = os.path.join(top, r['output_path'])
    real = os.path.realpath(p)
    if not real.startswith(os.path.realpath(top) + '/'):
        bad.append('outside: %s' % p); continue
    if os.path.islink(p) or not os.path.isfile(p):
        bad.append('not a file: %s' % p); continue
    data = open(p, 'rb').read()
    if r['size'] != str(len(data)):
        bad.append('size of %s' % p)
    if len(data) == 0:
        continue
    unit = data.split(b'\n')[0]
    if not unit.startswith(b'file-') or data != (unit + b'\n') * (len(data) // (len(unit) + 1)) + (unit + b'\n')[:len(data) % (len(unit) + 1)]:
        bad.append('content of %s' % p)
    if unit in seen:
        bad.append('two copies hold %s' % unit)
    seen.add(unit)
if len(seen) != 13:
    bad.append('%d distinct contents, want 13' % len(seen))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
}

# 1. A plain run: 15 exact files (13 with content, two empty donors), all checks.
mkdir -p outer
run 0 h.img outer/out
check 'verify outer/out' "names or contents wrong in a plain run"
check '[ "$(ls outer)" = out ]' "something was written beside OUTDIR: $(ls outer)"
check 'grep -q "^Files: *15 exact, 0 partial, 0 unrecoverable" out.txt' "summary: $(cat out.txt)"
check '[ -f "outer/out/files/\x2e\x2e/deep" ] && [ -f "outer/out/files/\x2e" ]' "'.' and '..' not escaped"
check '[ -f "outer/out/files/a\\\\x2fb" ] && [ -f "outer/out/files/\x2f" ]' "a backslash or '/' not escaped"
check '[ -f "outer/out/files/..\x2f..\x2fescape" ]' "'../../escape' not escaped into one name"
check '[ ! -e escape ] && [ ! -e outer/escape ]' "a name led outside"

# 2. Links planted where the run will write: a directory link and a file link.
mkdir -p victim && echo precious >victim/keep && echo precious >victim-file
mkdir -p o2/files
ln -s ../../victim o2/files/sub
ln -s ../../victim-file o2/files/plain
ln -s ../../victim "o2/files/\x2e\x2e"
run 1 h.img o2
check '[ "$(ls victim)" = keep ] && [ "$(cat victim/keep)" = precious ]' "a write went through a directory link: $(ls victim)"
check '[ "$(cat victim-file)" = precious ]' "a write went through a file link"
check '[ -L o2/files/sub ] && [ -L o2/files/plain ]' "a planted link was removed without --force"
check 'grep -q "symbolic link" out.txt' "the refusal does not name the link: $(cat out.txt)"
check 'grep -q "^skipped .*plain" out.txt' "the file behind the link is not listed as skipped: $(cat out.txt)"
check 'grep -q "cannot make the directory" err.txt' "the directory link is not reported: $(cat err.txt)"

# 3. --force replaces the links by real files and folders; the targets stay.
run 0 --force h.img o2
check '[ ! -L o2/files/sub ] && [ -d o2/files/sub ] && [ ! -L o2/files/plain ] && [ -f o2/files/plain ]' "--force did not replace the links"
check '[ "$(ls victim)" = keep ] && [ "$(cat victim-file)" = precious ]' "--force wrote through a link"
check 'verify o2' "names or contents wrong after --force"

# 4. OUTDIR's own manifest planted as a link: refused without --force, untouched.
mkdir -p o3 && ln -s ../victim-file o3/manifest.csv
run 1 h.img o3
check '[ "$(cat victim-file)" = precious ] && [ ! -e o3/files ]' "a run started over an earlier manifest (a link)"

echo "hostile.sh: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
