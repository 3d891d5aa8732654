#!/usr/bin/env bash
# run-golden.sh -- one golden test of the `lanyfs` command.
#
# Usage: run-golden.sh LANYFS EXPECTED_DIR FIXTURE_DIR JSONCHECK NAME EXIT WHERE [OPTS] -- ARGS...
#
# Runs LANYFS ARGS... in WHERE (corpus: $LANYFS_CORPUS; fixtures: FIXTURE_DIR), so
# that image names in the output are the bare names given.  Checks:
#   - the exit status is EXIT;
#   - stdout equals EXPECTED_DIR/NAME.out, or with "--stdout-file F" the file
#     F in FIXTURE_DIR (a cat case: the bytes the fixture put in), or with
#     "--stdout-ignore" nothing;
#   - stderr equals EXPECTED_DIR/NAME.err (no such file: stderr must be empty);
#   - with "--json": stdout is one valid lanyfs JSON document (JSONCHECK);
#   - with "--lines": stdout and stderr need only hold the expected lines in
#     their order, other lines between them allowed (help screens, which
#     grow with every command added to the table).
# An argument "@esc:TEXT" is passed as printf '%b' TEXT, for bytes meson
# strings cannot hold.  With LANYFS_REGEN=1 the expected files are written
# instead of compared (review them before committing).
set -u
lanyfs=$1 expected=$2 fixtures=$3 jsoncheck=$4 name=$5 want_exit=$6 where=$7
shift 7
# meson may pass programs relative to the build folder; the command runs elsewhere.
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
lanyfs=$(abspath "$lanyfs") jsoncheck=$(abspath "$jsoncheck")
stdout_file="" stdout_ignore=0 json=0 lines=0
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    --stdout-file) stdout_file=$2; shift 2 ;;
    --stdout-ignore) stdout_ignore=1; shift ;;
    --json) json=1; shift ;;
    --lines) lines=1; shift ;;
    *) echo "run-golden: unknown option $1" >&2; exit 99 ;;
  esac
done
[ "${1:-}" = "--" ] || { echo "run-golden: missing --" >&2; exit 99; }
shift

case $where in
  corpus) dir=${LANYFS_CORPUS:?LANYFS_CORPUS is not set} ;;
  fixtures) dir=$fixtures ;;
  *) echo "run-golden: unknown place $where" >&2; exit 99 ;;
esac

args=()
for a in "$@"; do
  case $a in
    @esc:*) args+=("$(printf '%b' "${a#@esc:}")") ;;
    *) args+=("$a") ;;
  esac
done

# same EXPECTED ACTUAL: exact, or with --lines the expected lines in order.
same() {
  if [ $lines = 1 ] && [ -s "$1" ]; then
    awk 'BEGIN { n = 0; i = 0 } NR == FNR { want[n++] = $0; next } i < n && $0 == want[i] { i++ }
         END { if (i < n) { print "missing line: " want[i]; exit 1 } }' "$1" "$2"
  else
    diff -u "$1" "$2"
  fi
}

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
(cd "$dir" && exec "$lanyfs" "${args[@]}") >"$tmp/out" 2>"$tmp/err"
got_exit=$?

fail=0
if [ "${LANYFS_REGEN:-}" = 1 ]; then
  if [ -z "$stdout_file" ] && [ $stdout_ignore = 0 ]; then
    cp "$tmp/out" "$expected/$name.out"
  fi
  if [ -s "$tmp/err" ]; then cp "$tmp/err" "$expected/$name.err"; else rm -f "$expected/$name.err"; fi
else
  if [ -n "$stdout_file" ]; then
    if ! cmp -s "$tmp/out" "$fixtures/$stdout_file"; then
      echo "FAIL $name: stdout differs from $stdout_file"
      cmp "$tmp/out" "$fixtures/$stdout_file" | head -n 3
      fail=1
    fi
  elif [ $stdout_ignore = 0 ]; then
    if ! same "$expected/$name.out" "$tmp/out"; then
      echo "FAIL $name: stdout differs"
      fail=1
    fi
  fi
  experr=$expected/$name.err
  [ -f "$experr" ] || experr=/dev/null
  if ! same "$experr" "$tmp/err"; then
    echo "FAIL $name: stderr differs"
    fail=1
  fi
fi
if [ "$got_exit" != "$want_exit" ]; then
  echo "FAIL $name: exit status $got_exit, expected $want_exit"
  fail=1
fi
if [ $json = 1 ] && ! "$jsoncheck" "$tmp/out" "$got_exit"; then
  echo "FAIL $name: JSON check"
  fail=1
fi
exit $fail
