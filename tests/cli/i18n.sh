#!/usr/bin/env bash
# i18n.sh -- the command-line tools speak German with the German catalogue,
# and nothing but English under LC_ALL=C.
#
# Usage: i18n.sh LANYFS MKFS UNDO SRCDIR FIXTURE_DIR
#
# Builds po/de.po into a scratch locale folder (msgfmt) that the tools are
# pointed at with LANYFS_LOCALEDIR, then runs them with LANGUAGE=de in a
# UTF-8 locale (C.UTF-8, which glibc always has: gettext honours LANGUAGE in
# any locale but "C"; de_DE.UTF-8 with LANG too when it is installed) and
# checks for German text: help screens, info and stat labels, a usage error,
# a problem report on stderr.  Then it checks what must not change: JSON is
# the same in German as in C, and under LC_ALL=C (the catalogue still there,
# LANGUAGE=de still set) the output is the English golden of tests/cli.
# Skips (77) when msgfmt or a UTF-8 locale is missing.
set -u
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
lanyfs=$(abspath "$1") mkfs=$(abspath "$2") undo=$(abspath "$3") src=$4 fixtures=$5

command -v msgfmt >/dev/null || { echo "SKIP: no msgfmt"; exit 77; }
utf8=""
for l in C.UTF-8 C.utf8; do
  if locale -a 2>/dev/null | grep -qx "$l"; then utf8=$l; break; fi
done
[ -n "$utf8" ] || { echo "SKIP: no C.UTF-8 locale"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/loc/de/LC_MESSAGES"
msgfmt --check -o "$tmp/loc/de/LC_MESSAGES/lanyfs-tools.mo" "$src/po/de.po" || exit 1

fail=0
bad() { echo "FAIL: $*"; fail=1; }
# has FILE TEXT: FILE holds the line TEXT (exactly, as a whole line).
has() { grep -qxF -- "$2" "$1" || { bad "$1 lacks the line: $2"; sed 's/^/    | /' "$1" | head -40; }; }
# run NAME WANT_EXIT CMD...: stdout to NAME.out, stderr to NAME.err, check the status.
run() {
  local name=$1 want=$2
  shift 2
  (cd "$fixtures" && "$@") >"$tmp/$name.out" 2>"$tmp/$name.err"
  local got=$?
  [ "$got" = "$want" ] || bad "$name: exit status $got, not $want"
}
de() { env LANYFS_LOCALEDIR="$tmp/loc" LC_ALL="$utf8" LANGUAGE=de "$@"; }
c() { env LANYFS_LOCALEDIR="$tmp/loc" LC_ALL=C LANGUAGE=de "$@"; }

# --- German -------------------------------------------------------------------
run help 0 de "$lanyfs" --help
has "$tmp/help.out" "Aufruf: lanyfs BEFEHL [OPTIONEN] ABBILD [ARGUMENTE]"
has "$tmp/help.out" "  info     Den Superblock, seine Probleme und die Geometrie daraus zeigen."
has "$tmp/help.out" "Exit-Status:"
has "$tmp/help.out" "  salvage  Dateien aus einem beschädigten Abbild in einen Ordner kopieren."
has "$tmp/help.out" "  wear     Schreibzähler und Abnutzung berichten."
has "$tmp/help.out" "  6  Pfad nicht gefunden"

run help-mkdir 0 de "$lanyfs" mkdir --help
has "$tmp/help-mkdir.out" "Aufruf: lanyfs mkdir [-p] [--driver=MODUS] [--log DATEI] ABBILD PFAD"
has "$tmp/help-mkdir.out" "  -h, --help         diese Hilfe zeigen"
has "$tmp/help-mkdir.out" "nennt, was geschah, und der Exit-Status ist 7."

# Labels padded by characters: the values still start in column 27 (info) and 17 (stat).
run info 0 de "$lanyfs" info tree.img
has "$tmp/info.out" "Blockgröße:               512 Bytes (Exponent 9)"
has "$tmp/info.out" "Adresslänge:              4 Bytes (32 Bit)"
has "$tmp/info.out" "Blocktyp:                 0xd0 (Superblock)"
run stat 0 de "$lanyfs" stat tree.img /README.txt
has "$tmp/stat.out" "Typ:            Datei (0x20)"
has "$tmp/stat.out" "Größe:          15 Bytes"

run usage 2 de "$lanyfs" info
has "$tmp/usage.err" "lanyfs info: erwartet ein ABBILD"
has "$tmp/usage.err" "Aufruf: lanyfs info [--json] ABBILD"
has "$tmp/usage.err" "»lanyfs info --help« gibt weitere Informationen."

# A problem the command words itself: German on stderr, English in the JSON.
run ls 7 de "$lanyfs" ls -R cycle.img
has "$tmp/ls.err" "lanyfs: /a/b/loop: Verzeichnisblock 7 wird hier erneut erreicht; aufgeführt als /loop, nicht zweimal betreten"
run ls-json 7 de "$lanyfs" ls --json -R cycle.img
has "$tmp/ls-json.err" "lanyfs: /a/b/loop: Verzeichnisblock 7 wird hier erneut erreicht; aufgeführt als /loop, nicht zweimal betreten"
run ls-json-c 7 c "$lanyfs" ls --json -R cycle.img
cmp -s "$tmp/ls-json.out" "$tmp/ls-json-c.out" || bad "ls --json differs between German and C"
run info-json 0 de "$lanyfs" info --json tree.img
run info-json-c 0 c "$lanyfs" info --json tree.img
cmp -s "$tmp/info-json.out" "$tmp/info-json-c.out" || bad "info --json differs between German and C"

# lanyfs scan: findings in German on the screen, in English in its JSON.
run scan 7 de "$lanyfs" scan cycle.img
has "$tmp/scan.out" "error    0x010001 TREE_PTR_RANGE: /badptr/p: Block 12 verweist auf Block 999999, hinter dem Ende des Geräts"
# -t: the passes named in German, padded by characters (the seconds line up).
run scan-t 7 de "$lanyfs" scan -q -t cycle.img
grep -qE '^Verzeichnis- und Extenderbäume +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}$' "$tmp/scan-t.err" ||
  bad "scan -t lacks the German tree pass: $(cat "$tmp/scan-t.err")"
[ "$(awk '{ print index($0, "."); exit }' "$tmp/scan-t.err")" = 0 ] || bad "scan -t header has a dot"
widths=$(while IFS= read -r line; do printf '%s' "$line" | LC_ALL="$utf8" wc -m; done \
  <"$tmp/scan-t.err" | sort -u)
[ "$widths" = 56 ] || bad "scan -t: lines of $widths characters, not all 56: $(cat "$tmp/scan-t.err")"
run scan-json 7 de "$lanyfs" scan --json cycle.img
run scan-json-c 7 c "$lanyfs" scan --json cycle.img
cmp -s "$tmp/scan-json.out" "$tmp/scan-json-c.out" || bad "scan --json differs between German and C"
grep -qF 'block 12 links to block 999999, beyond the device end' "$tmp/scan-json.out" ||
  bad "scan --json lacks the English message"

run mkfs-help 0 de "$mkfs" --help
has "$tmp/mkfs-help.out" "Ein neues LanyFS-1.4-Dateisystem auf GERÄT schreiben (eine Abbilddatei oder ein"
has "$tmp/mkfs-help.out" "                           Vielfaches von 8 (Standard 32: bis zu 2^32 Blöcke)"
run mkfs-usage 2 de "$mkfs"
has "$tmp/mkfs-usage.err" "mkfs.lanyfs: kein GERÄT angegeben"
has "$tmp/mkfs-usage.err" "»mkfs.lanyfs --help« gibt weitere Informationen."
run mkfs-make 0 de "$mkfs" --size 1M "$tmp/de.img"
has "$tmp/mkfs-make.out" "  Blockgröße:      4096 Bytes"
has "$tmp/mkfs-make.out" "  freie Blöcke:    254, in 1 Kettenblock"
has "$tmp/mkfs-make.out" "  Wurzel:          Block 1"
has "$tmp/mkfs-make.out" "Fertig."

run undo-help 0 de "$undo" --help
has "$tmp/undo-help.out" "Aufruf: lanyfs-undo [-n] [-f] [-v] RÜCKGÄNGIGDATEI GERÄT"
run undo-usage 2 de "$undo" only-one
has "$tmp/undo-usage.err" "lanyfs-undo: eine Rückgängig-Datei und ein Gerät werden gebraucht"

# LANG alone, when a German locale is installed.
de_locale=$(locale -a 2>/dev/null | grep -ix 'de_DE\.utf-\?8' | head -n 1)
if [ -n "$de_locale" ]; then
  run lang 0 env -u LC_ALL -u LANGUAGE LANYFS_LOCALEDIR="$tmp/loc" LANG="$de_locale" "$lanyfs" --help
  has "$tmp/lang.out" "Aufruf: lanyfs BEFEHL [OPTIONEN] ABBILD [ARGUMENTE]"
else
  echo "note: no de_DE.UTF-8 locale installed; LANG=de_DE.UTF-8 not tried"
fi

# --- C: the English goldens, byte for byte ---------------------------------------
expected=$src/tests/cli/expected
run c-help-info 0 c "$lanyfs" info --help
cmp -s "$tmp/c-help-info.out" "$expected/help-info.out" || bad "info --help under C is not the golden"
run c-info 0 c "$lanyfs" info tree.img
cmp -s "$tmp/c-info.out" "$expected/info-tree.out" || bad "info under C is not the golden"
run c-ls 7 c "$lanyfs" ls -R cycle.img
cmp -s "$tmp/c-ls.err" "$expected/ls-R-cycle.err" || bad "ls -R stderr under C is not the golden"
run c-usage 2 c "$lanyfs" info tree.img extra
cmp -s "$tmp/c-usage.err" "$expected/usage-extra-arg.err" || bad "usage error under C is not the golden"
run c-mkfs 0 c "$mkfs" --help
run c-mkfs-plain 0 env LC_ALL=C "$mkfs" --help
cmp -s "$tmp/c-mkfs.out" "$tmp/c-mkfs-plain.out" || bad "mkfs.lanyfs --help under C changes with the catalogue"
has "$tmp/c-mkfs.out" "Exit status: 0 success, 1 operational error, 2 usage error."

[ $fail = 0 ] && echo "ok: German with LANGUAGE=de in $utf8, English under C"
exit $fail
