#!/bin/sh
# run-xvfb.sh -- run a command on a virtual X display of its own.
#
#     run-xvfb.sh COMMAND [ARGS...]
#
# Uses xvfb-run when it is installed (Debian's xvfb package ships it), and
# otherwise starts Xvfb itself on the first free display from :99, waits
# for it, runs the command and stops the server again.  The command's exit
# status is the script's.
set -eu

if command -v xvfb-run >/dev/null 2>&1; then
    exec xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" "$@"
fi
if ! command -v Xvfb >/dev/null 2>&1; then
    echo "run-xvfb.sh: neither xvfb-run nor Xvfb is installed" >&2
    exit 77
fi

n=99
while [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ]; do
    n=$((n + 1))
done
Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT INT TERM
tries=0
while [ ! -e "/tmp/.X11-unix/X$n" ]; do
    tries=$((tries + 1))
    if [ "$tries" -gt 100 ] || ! kill -0 "$server" 2>/dev/null; then
        echo "run-xvfb.sh: Xvfb :$n did not start" >&2
        exit 1
    fi
    sleep 0.1
done
status=0
DISPLAY=":$n" "$@" || status=$?
exit "$status"
