#!/usr/bin/env python3
"""infer-states.py -- the scan of a stick that lost its superblock.

Usage: infer-states.py LANYFS WORKDIR

For each scenario below, the simulator writes a run (lanyfs simulate);
every STEP-th state of it from a first one (lanyfs replay --upto K) is
scanned as it is, then again with its first sector zeroed, so that the
geometry, the root and the free list must be inferred from the blocks.
The two scans must agree on the geometry and on the directories, files
and bytes they find.
The 2012 driver's runs carry its marks: seed 303 at 512:3 holds a free
list whose rest the driver's relink of the head cut off (SPEC-9.3), a
longer chain than the list in use.

Exit status: 0 when every state agrees, 1 when one does not (each named
on stdout), 2 on a usage or tool error.
"""
import json
import os
import subprocess
import sys

# (mode, seed, geometry, operations, first state, step)
SCENARIOS = [
    ("2012", 303, "512:3", 80, 1984, 31),
    ("2012", 305, "2048:3", 80, 83, 83),
    ("correct", 301, "1024:3", 80, 97, 97),
    ("correct", 302, "4096:8", 80, 97, 97),
]


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def scan(lanyfs, img):
    rc, out, err = run([lanyfs, "scan", "--json", img])
    try:
        return json.loads(out)
    except ValueError:
        raise SystemExit("infer-states: %s: no JSON from lanyfs scan (exit %d): %s"
                         % (img, rc, err.strip()[-300:]))


def seen(j):
    g, s = j["geometry"], j["summary"]
    return (g["blocksize"], g["addrlen"], s["directories"], s["files"], s["bytes"])


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    lanyfs, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    states = bad = 0
    for mode, seed, geom, ops, first, step in SCENARIOS:
        out = os.path.join(work, "%s-%d-%s" % (mode, seed, geom.replace(":", "-")))
        args = [lanyfs, "simulate", "--seed", str(seed), "--ops", str(ops), "--geometry", geom,
                "--size", "1M", "--force", out]
        if mode == "2012":
            args.insert(2, "--driver=2012")
        rc, _, err = run(args)
        if rc not in (0, 7):  # 7: the driver's corruptions, expected in 2012 mode
            print("infer-states: simulate %s %d %s: exit %d: %s" % (mode, seed, geom, rc, err),
                  file=sys.stderr)
            return 2
        base, log, img = (os.path.join(out, n) for n in ("base.img", "writes.log", "s.img"))
        rc, o, err = run([lanyfs, "replay", base, log, img, "--force", "--json"])
        if rc != 0:
            print("infer-states: replay: %s" % err, file=sys.stderr)
            return 2
        writes = json.loads(o)["log_writes"]
        for k in range(first, writes + 1, step):
            rc, _, err = run([lanyfs, "replay", base, log, img, "--upto", str(k), "--force"])
            if rc != 0:
                print("infer-states: replay --upto %d: %s" % (k, err), file=sys.stderr)
                return 2
            whole = scan(lanyfs, img)
            with open(img, "r+b") as f:
                f.write(b"\0" * 512)
            lost = scan(lanyfs, img)
            states += 1
            if not lost["geometry"].get("inferred"):
                print("%s %d %s K=%d: the geometry was not inferred" % (mode, seed, geom, k))
                bad += 1
            elif seen(whole) != seen(lost):
                print("%s %d %s K=%d: intact (block size, address length, directories, files, "
                      "bytes) %s, superblock zeroed %s" % (mode, seed, geom, k, seen(whole),
                                                           seen(lost)))
                bad += 1
    print("infer-states: %d states, %d differ" % (states, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
