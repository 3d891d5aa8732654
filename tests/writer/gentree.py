#!/usr/bin/env python3
"""gentree.py -- a deterministic host tree for the writer round trips.

Usage: gentree.py OUTDIR BLOCKSIZE ADDRLEN MODE [FILES]

Writes FILES (default 1000) regular files into nested directories under
OUTDIR, with sizes chosen around the geometry's edges: 0 and 1 byte,
block-1, block and block+1 bytes, small mixed sizes, and (MODE 'correct'
only) a few files of more than extmax blocks, so that a level-1 extender
tree is needed, and with extmax^2 < 4500 one that needs a level-2 tree.
MODE 'driver' keeps every file at most extmax blocks long (SPEC-9.7).
Modified times, of the directories too, are set to fixed values.  Prints
nothing; the manifest is
the host tree itself.
"""
import os
import random
import sys


def main():
    outdir, bs, addrlen, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    nfiles = int(sys.argv[5]) if len(sys.argv) > 5 else 1000
    extmax = (bs - 5) // addrlen
    rng = random.Random(bs * 100 + addrlen * 10 + (mode == "driver"))
    edges = [0, 1, bs - 1, bs, bs + 1, 2 * bs, 3 * bs - 1, extmax * bs]
    big = []
    if mode == "correct":
        big = [(extmax + 1) * bs, (extmax + 1) * bs + 1, (2 * extmax + 3) * bs - 7]
        if extmax * extmax < 4500:
            big.append((extmax * extmax + 5) * bs + 3)  # a level-2 tree
    sizes = []
    for i in range(nfiles):
        if i < len(edges):
            sizes.append(edges[i])
        elif i - len(edges) < len(big):
            sizes.append(big[i - len(edges)])
        else:
            r = rng.random()
            if r < 0.15:
                sizes.append(0)
            elif r < 0.75:
                sizes.append(rng.randint(1, bs))
            elif r < 0.97:
                sizes.append(rng.randint(bs, 4 * bs))
            else:
                sizes.append(rng.randint(4 * bs, 20 * bs))
    # Directories: a few levels, some empty, names with odd bytes.
    dirs = [""]
    for i in range(40):
        parent = rng.choice(dirs)
        if parent.count("/") >= 5:
            parent = ""
        name = "d%02d" % i
        if i % 7 == 3:
            name += " sp\u00e9cial"
        if i % 11 == 5:
            name = "x" * 200 + str(i)
        dirs.append(os.path.join(parent, name) if parent else name)
    for d in dirs[1:]:
        os.makedirs(os.path.join(outdir, d), exist_ok=True)
    t0 = 1600000000
    for i, size in enumerate(sizes):
        d = dirs[rng.randrange(len(dirs))]
        name = "f%04d" % i
        if i % 13 == 0:
            name += ".dat"
        if i % 97 == 1:
            name = ("n" * 250) + "%04d" % i  # 254 bytes
        if i % 89 == 2:
            name = "-dash%04d" % i
        path = os.path.join(outdir, d, name)
        with open(path, "wb") as f:
            f.write(rng.randbytes(size))
        os.utime(path, ns=(t0 * 10**9, (t0 + i * 3601) * 10**9 + i * 1000))
    # Directory times last: a file written into a directory changes its time.
    for j, d in enumerate(dirs[1:]):
        t = (t0 - (j + 1) * 86399) * 10**9 + j * 7
        os.utime(os.path.join(outdir, d), ns=(t0 * 10**9, t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
