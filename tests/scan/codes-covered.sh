#!/usr/bin/env bash
# codes-covered.sh PROBLEM_H CASES_DIR -- every code of the findings
# catalogue (src/scan/problem.h) that is not retired appears in the expect
# file of at least one image case (tests/scan/cases/*/expect), so a new
# code cannot land without a case that makes the scanner report it.
set -uo pipefail
problem_h=$1 cases=$2
codes=$(tr -d '\\' <"$problem_h" | tr '\n' ' ' |
    grep -o 'X([A-Z0-9_]*, *0x[0-9a-fA-F]*, *SCAN_SEV_[A-Z]*, *[^,]*' |
    grep -v 'SCAN_PF_RETIRED' | sed 's/^X(\([A-Z0-9_]*\),.*/\1/' | sort -u)
n=$(printf '%s\n' "$codes" | grep -c .)
[ "$n" -ge 50 ] || { echo "FAIL: only $n codes read from $problem_h"; exit 1; }
seen=$(cat "$cases"/*/expect | awk 'NF { print $1 }' | sort -u)
missing=$(comm -23 <(printf '%s\n' "$codes") <(printf '%s\n' "$seen"))
if [ -n "$missing" ]; then
    echo "FAIL: codes without an image case:"; printf '  %s\n' $missing; exit 1
fi
echo "codes-covered: all $n codes have an image case"
