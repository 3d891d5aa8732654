#!/usr/bin/env python3
"""verify.py -- compare an image with the host tree that was put into it.

Usage: verify.py LANYFS IMAGE HOSTDIR [--skip-mtime] [--skip-dir-mtime] [--cat-every=N]

Lists the image with `lanyfs ls -R -a --json IMAGE /` and reads every file
with `lanyfs cat IMAGE PATH`.  The image must hold exactly the host tree's
directories and regular files (symbolic links are not copied), by their
name bytes, each file with the host file's size, SHA-256 and modified time
(to the nanosecond, in UTC), each directory with the host directory's
modified time (not with --skip-dir-mtime, e.g. after deletes, which change
the times on both sides); with --cat-every=N only every Nth file is read
back.  Prints one line of figures; exit 1 with the
differences on stderr when anything does not match.
"""
import hashlib
import json
import os
import stat
import subprocess
import sys
from datetime import datetime, timezone


def host_tree(root):
    """{lanyfs path bytes: ('d', mtime_ns) or ('f', size, sha, mtime_ns)}"""
    out = {}
    stack = [b""]
    rootb = os.fsencode(root)
    while stack:
        rel = stack.pop()
        with os.scandir(rootb + rel if rel else rootb) as it:
            for de in it:
                st = de.stat(follow_symlinks=False)
                path = rel + b"/" + de.name
                if stat.S_ISDIR(st.st_mode):
                    out[path] = ("d", st.st_mtime_ns)
                    stack.append(path)
                elif stat.S_ISREG(st.st_mode):
                    with open(rootb + path, "rb") as f:
                        sha = hashlib.sha256(f.read()).hexdigest()
                    out[path] = ("f", st.st_size, sha, st.st_mtime_ns)
    return out


def iso_to_ns(iso):
    """'2020-09-13T12:26:40.000001Z' (UTC) -> nanoseconds since the epoch."""
    assert iso.endswith("Z"), iso
    body = iso[:-1]
    frac = 0
    if "." in body:
        body, f = body.split(".")
        frac = int(f.ljust(9, "0"))
    dt = datetime.strptime(body, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return int(dt.timestamp()) * 10**9 + frac


def image_tree(lanyfs, image):
    res = subprocess.run([lanyfs, "ls", "-R", "-a", "--json", image, "/"],
                         capture_output=True, check=False)
    if res.returncode != 0:
        sys.stderr.write("ls -R failed (%d): %s\n" % (res.returncode, res.stderr.decode()))
        sys.exit(1)
    doc = json.loads(res.stdout)
    out = {}
    path_of = {}  # directory block -> path bytes, from the names' raw bytes
    for listing in doc["listings"]:
        parent = path_of.get(listing["block"], b"")
        for e in listing["entries"]:
            path = parent + b"/" + bytes.fromhex(e["name_hex"])
            if e["type"] == "directory":
                out[path] = ("d", iso_to_ns(e["modified"]["iso"]))
                path_of[e["block"]] = path
            else:
                out[path] = ("f", e["size"], None, iso_to_ns(e["modified"]["iso"]))
    return out


def main():
    lanyfs, image, host = sys.argv[1:4]
    skip_mtime = "--skip-mtime" in sys.argv[4:]
    skip_dir_mtime = skip_mtime or "--skip-dir-mtime" in sys.argv[4:]
    every = 1
    for a in sys.argv[4:]:
        if a.startswith("--cat-every="):
            every = int(a.split("=", 1)[1])
    want = host_tree(host)
    got = image_tree(lanyfs, image)
    bad = 0
    for p in sorted(set(want) - set(got)):
        sys.stderr.write("missing in the image: %r\n" % p)
        bad += 1
    for p in sorted(set(got) - set(want)):
        sys.stderr.write("not in the host tree: %r\n" % p)
        bad += 1
    files = 0
    nbytes = 0
    read = 0
    for p in sorted(set(want) & set(got)):
        w, g = want[p], got[p]
        if w[0] != g[0]:
            sys.stderr.write("%r: type %s, want %s\n" % (p, g[0], w[0]))
            bad += 1
            continue
        if w[0] == "d":
            if not skip_dir_mtime and w[1] != g[1]:
                sys.stderr.write("%r: directory modified %d ns, want %d\n" % (p, g[1], w[1]))
                bad += 1
            continue
        files += 1
        nbytes += w[1]
        if w[1] != g[1]:
            sys.stderr.write("%r: size %d, want %d\n" % (p, g[1], w[1]))
            bad += 1
        if not skip_mtime and w[3] != g[3]:
            sys.stderr.write("%r: modified %d ns, want %d\n" % (p, g[3], w[3]))
            bad += 1
        if (files - 1) % every != 0:
            continue
        read += 1
        res = subprocess.run([lanyfs, "cat", image, os.fsdecode(p)], capture_output=True)
        sha = hashlib.sha256(res.stdout).hexdigest()
        if res.returncode != 0 or sha != w[2]:
            sys.stderr.write("%r: cat exit %d, sha256 %s, want %s\n"
                             % (p, res.returncode, sha, w[2]))
            bad += 1
    dirs = sum(1 for v in want.values() if v[0] == "d")
    print("verified %d files (%d bytes, %d read back) and %d directories; %d differences"
          % (files, nbytes, read, dirs, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
