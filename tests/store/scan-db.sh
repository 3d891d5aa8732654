#!/usr/bin/env bash
# scan-db.sh -- `lanyfs scan --db` end to end.
#
# Usage: scan-db.sh LANYFS DBCHECK JSONCHECK IMAGE1 IMAGE2
#
# Two scans of IMAGE1 (with its SHA-256) and one of IMAGE2 (--no-hash) go
# into one new database; dbcheck must list three scans with the right
# images and hashes and block runs that cover each map; the JSON output of
# a scan with --db names the database and the scan's id.  A database of a
# newer schema version is refused before anything is scanned (status 1, the
# database named), and so is a file that is no database.  -t prints the
# time of each pass on stderr, the database's step only with --db.
set -u
lanyfs=$1 dbcheck=$2 jsoncheck=$3 img1=$4 img2=$5
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
db=$tmp/scan.db
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$lanyfs" scan -q --db "$db" "$img1" >"$tmp/out1" 2>"$tmp/err1"; rc1=$?
"$lanyfs" scan -q --no-hash --db "$db" "$img2" >/dev/null 2>"$tmp/err2"; rc2=$?
"$lanyfs" scan --json --db "$db" "$img1" >"$tmp/json" 2>"$tmp/err3"; rc3=$?
[ -s "$tmp/err1" ] && no "stderr of the first scan: $(cat "$tmp/err1")"
[ -s "$tmp/err2" ] && no "stderr of the second scan: $(cat "$tmp/err2")"
[ "$rc1" = "$rc3" ] || no "the same image gave status $rc1 and $rc3"
"$jsoncheck" "$tmp/json" "$rc3" || no "JSON of scan --db"
grep -q '"scan_id" : 3' "$tmp/json" || no "JSON does not give scan_id 3"
sum1=$(sha256sum "$img1" | cut -d' ' -f1)
grep -q "\"image_sha256\" : \"$sum1\"" "$tmp/json" || no "JSON lacks the image's SHA-256"

"$dbcheck" "$db" >"$tmp/list" || no "dbcheck failed"
[ "$(wc -l <"$tmp/list")" = 3 ] || no "expected 3 scans, got: $(cat "$tmp/list")"
read -r id img sha _ _ _ _ cover < <(sed -n 1p "$tmp/list")
[ "$id $img $sha $cover" = "1 $img1 $sum1 ok" ] || no "scan 1 is: $(sed -n 1p "$tmp/list")"
read -r id img sha _ _ _ _ cover < <(sed -n 2p "$tmp/list")
[ "$id $img $sha $cover" = "2 $img2 - ok" ] || no "scan 2 is: $(sed -n 2p "$tmp/list")"
[ "$(sed -n 1p "$tmp/list" | cut -d' ' -f4-)" = "$(sed -n 3p "$tmp/list" | cut -d' ' -f4-)" ] ||
  no "scans 1 and 3 of the same image differ"

# A newer schema: refused, named, nothing scanned.
cp "$db" "$tmp/newer.db"
"$dbcheck" --bump "$tmp/newer.db" || no "cannot bump the version"
"$lanyfs" scan -q --db "$tmp/newer.db" "$img1" >/dev/null 2>"$tmp/err4"; rc=$?
[ "$rc" = 1 ] || no "newer database: status $rc, not 1"
grep -q "newer.db: database schema version [0-9]* is newer" "$tmp/err4" ||
  no "newer database: message is $(cat "$tmp/err4")"

# -t: the passes in their order with wall and CPU seconds, the database as a
# step of its own only with --db, the total their sum; stdout unchanged.
steps='superblock and geometry|free list|directory and extender trees|sweep of every block|analysis'
timings() { # FILE: the step names of a -t table, one line each
  sed -n '2,$p' "$1" | sed -E 's/ +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}$//' | paste -sd'|'
}
"$lanyfs" scan -q -t "$img1" >"$tmp/out6" 2>"$tmp/t1"
cmp -s "$tmp/out1" "$tmp/out6" || no "-t changed the output on stdout"
[ "$(sed -n 1p "$tmp/t1")" = "Pass                               wall (s)      CPU (s)" ] ||
  no "-t header is: $(sed -n 1p "$tmp/t1")"
[ "$(timings "$tmp/t1")" = "$steps|total" ] || no "-t steps are: $(timings "$tmp/t1")"
"$lanyfs" scan -q -t --no-hash --db "$tmp/t.db" "$img1" >/dev/null 2>"$tmp/t2"
[ "$(timings "$tmp/t2")" = "$steps|database|total" ] || no "-t --db steps: $(timings "$tmp/t2")"
# Each figure is rounded to the millisecond on its own: the sum of the rows
# may miss the total by half a millisecond a row.
awk 'NR > 1 && $1 != "total" { w += $(NF-1); c += $NF; rows++ }
     $1 == "total" { e = rows * 0.0005 + 0.0001
                     if ($(NF-1) - w > e || w - $(NF-1) > e || $NF - c > e || c - $NF > e) bad = 1 }
     END { exit bad }' "$tmp/t2" || no "-t total is not the sum: $(cat "$tmp/t2")"
"$lanyfs" scan -q "$img1" 2>"$tmp/t3" >/dev/null
[ -s "$tmp/t3" ] && no "without -t stderr holds: $(cat "$tmp/t3")"

# Not a database.
printf 'not a database at all, just text\n%.0s' $(seq 100) >"$tmp/text.db"
"$lanyfs" scan -q --db "$tmp/text.db" "$img1" >/dev/null 2>"$tmp/err5"; rc=$?
[ "$rc" = 1 ] || no "text file as database: status $rc, not 1"
grep -q "text.db" "$tmp/err5" || no "text file as database: message is $(cat "$tmp/err5")"
exit $fail
