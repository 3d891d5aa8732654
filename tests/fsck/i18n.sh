#!/usr/bin/env bash
# i18n.sh -- fsck-lanyfs speaks German with the German catalogue, and the
# English of its goldens under LC_ALL=C.
#
# Usage: i18n.sh FSCK MKFS LANYFS MKCASE SRCDIR
#
# Builds po/de.po into a scratch locale folder (msgfmt) that fsck-lanyfs is
# pointed at with LANYFS_LOCALEDIR, damages two images (the superblock's
# type byte and 'freeblocks'; two tree links, as tests/fsck/f_badptr), and
# runs -n and -y on them with LANGUAGE=de in C.UTF-8: the pass titles, the
# findings with their numbers and paths filled into the German templates,
# the questions (the catalogue's repair, capitalised) with a German answer,
# the repairs planned (-v), the closing lines and the summary in its plural forms.  --json is the
# same in German as in C (the catalogue's English), and under LC_ALL=C (the
# catalogue still there, LANGUAGE=de still set) the -y run prints
# tests/fsck/f_freeblocks/expect.1, byte for byte.
# Skips (77) when msgfmt or a UTF-8 locale is missing.
set -u
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
fsck=$(abspath "$1") mkfs=$(abspath "$2") lanyfs=$(abspath "$3") mkcase=$(abspath "$4") src=$5

command -v msgfmt >/dev/null || { echo "SKIP: no msgfmt"; exit 77; }
utf8=""
for l in C.UTF-8 C.utf8; do
  if locale -a 2>/dev/null | grep -qx "$l"; then utf8=$l; break; fi
done
[ -n "$utf8" ] || { echo "SKIP: no C.UTF-8 locale"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
mkdir -p loc/de/LC_MESSAGES
msgfmt --check -o loc/de/LC_MESSAGES/lanyfs-tools.mo "$src/po/de.po" || exit 1
export SOURCE_DATE_EPOCH=1796259735 TZ=UTC

fail=0
bad() { echo "FAIL: $*"; fail=1; }
# has FILE TEXT: FILE holds the line TEXT (exactly, as a whole line).
has() { grep -qxF -- "$2" "$1" || { bad "$1 lacks the line: $2"; sed 's/^/    | /' "$1" | head -40; }; }
# run NAME WANT_EXIT CMD...: stdout to NAME.out, stderr to NAME.err, check the status.
run() {
  local name=$1 want=$2
  shift 2
  "$@" >"$name.out" 2>"$name.err"
  local got=$?
  [ "$got" = "$want" ] || { bad "$name: exit status $got, not $want"; cat "$name.err"; }
}
de() { env LANYFS_LOCALEDIR="$tmp/loc" LC_ALL="$utf8" LANGUAGE=de "$@"; }
c() { env LANYFS_LOCALEDIR="$tmp/loc" LC_ALL=C LANGUAGE=de "$@"; }

# The images: f_freeblocks's and f_badptr's recipes.
"$mkfs" -b 512 -a 16 --size 128K sb.img >/dev/null || exit 99
"$mkcase" sb.img set 0 sb:freeblocks 5 || exit 99
"$mkcase" sb.img set 0 sb:type 0 || exit 99
"$mkfs" -b 1024 -a 32 --size 256K ptr.img >/dev/null || exit 99
"$lanyfs" mkdir ptr.img /d || exit 99
for n in a b; do
  printf '%s\n' $n >$n
  "$lanyfs" put ptr.img $n /d/$n || exit 99
done
"$mkcase" ptr.img set @/d/b right 999999 || exit 99
"$mkcase" ptr.img set @/d/a right @freehead || exit 99
cp sb.img sb-y.img
cp sb.img sb-c.img
cp ptr.img ptr-y.img

# --- German -------------------------------------------------------------------
run sb-n 4 de "$fsck" -n sb.img
has sb-n.out "Prüfe sb.img"
has sb-n.out "Durchgang 1: Superblock und Geometrie werden geprüft"
has sb-n.out "Durchgang 4: Die Freiliste wird geprüft"
has sb-n.out "Durchgang 7: Spuren des Treibers und des Formatierers von 2012 werden geprüft"
has sb-n.out "das Typbyte des Superblocks ist 0x00, nicht 0xd0"
has sb-n.out "Das Typbyte auf 0xd0 setzen? nein"
has sb-n.out "'freeblocks' ist um 249 niedriger als die Freiliste: Einträge, die der Treiber nicht zählte (SPEC-9.2)"
has sb-n.out "'freeblocks' auf die Zahl der Freiliste setzen? nein"
has sb-n.out "sb.img: ********** WARNUNG: Das Dateisystem hat noch Fehler **********"
# One directory (the root): the singular, which English does not use.
has sb-n.out "sb.img: 0 Dateien, 1 Verzeichnis, 2/256 Blöcke belegt (254 frei), 0 Blöcke zurückgewonnen, 0 Einträge nach /lost+found verschoben"
grep -q "Pass \|Checking\|blocks used" sb-n.out && bad "sb-n.out still has English lines"

run sb-y 1 de "$fsck" -y --no-undo sb-y.img
has sb-y.out "Das Typbyte auf 0xd0 setzen? ja"
has sb-y.out "'freeblocks' auf die Zahl der Freiliste setzen? ja"
has sb-y.out "sb-y.img: ***** DATEISYSTEM WURDE VERÄNDERT *****"

# Paths and block numbers where the German template puts them.
run ptr-y 1 de "$fsck" -y --no-undo ptr-y.img
has ptr-y.out "/d/a: Block 4 verweist auf Block 2, der keinen Eintrag enthält (Typbyte 0x70)"
has ptr-y.out "/d/b: Block 7 verweist auf Block 999999, hinter dem Ende des Geräts"
has ptr-y.out "Den Verweis löschen? ja"
has ptr-y.out "ptr-y.img: 2 Dateien, 2 Verzeichnisse, 9/256 Blöcke belegt (247 frei), 0 Blöcke zurückgewonnen, 0 Einträge nach /lost+found verschoben"

# -v: the repairs planned.
cp ptr.img ptr-v.img
run ptr-v 1 de "$fsck" -y -v --no-undo ptr-v.img
has ptr-v.out "  Plan: Verzeichnis 3: Baum über 2 Einträge neu aufgebaut"

# Preen: the note on a repair it may not make unattended.
cp ptr.img ptr-p.img
run ptr-p 4 de "$fsck" -p --no-undo ptr-p.img
grep -qF "? nein (ohne Aufsicht nicht sicher zu beheben)" ptr-p.out ||
  bad "ptr-p.out lacks the German preen note"
has ptr-p.out "ptr-p.img: UNERWARTETE INKONSISTENZ; fsck-lanyfs MANUELL AUSFÜHREN."

run usage 16 de "$fsck" -n -y sb.img
has usage.err "fsck-lanyfs: nur eine von -n, -p/-a und -y/--repair darf angegeben werden"
has usage.err "»fsck-lanyfs --help« gibt weitere Informationen."
run help 0 de "$fsck" --help
has help.out "Ein LanyFS-1.4-Dateisystem prüfen und reparieren."
has help.out "Exit-Status (eine Summe, wie bei fsck(8)):"

# JSON: the catalogue's English in every language.
run json-de 4 de "$fsck" -n --json ptr.img
run json-c 4 c "$fsck" -n --json ptr.img
cmp -s json-de.out json-c.out || bad "--json differs between German and C"
grep -qF '"message": "/d/b: block 7 links to block 999999, beyond the device end"' json-de.out ||
  bad "--json in German lacks the English message"

# --- C: the golden, byte for byte ----------------------------------------------------
mv sb-c.img test.img
run c-y 1 c "$fsck" -y --no-undo test.img
echo "Exit status is 1" >>c-y.out
sed -f "$src/tests/fsck/filter.sed" c-y.out >c-y.got
cmp -s c-y.got "$src/tests/fsck/f_freeblocks/expect.1" ||
  { bad "-y under C is not tests/fsck/f_freeblocks/expect.1"; diff "$src/tests/fsck/f_freeblocks/expect.1" c-y.got; }
run c-usage 16 c "$fsck" -n -y test.img
has c-usage.err "fsck-lanyfs: only one of -n, -p/-a and -y/--repair may be given"
has c-usage.err "Try 'fsck-lanyfs --help' for more information."

[ $fail = 0 ] && echo "ok: fsck-lanyfs in German with LANGUAGE=de in $utf8, English under C"
exit $fail
