#!/usr/bin/env python3
"""damage.py -- one damaged block must cost no more than what it held.

Usage: damage.py [--states N] [--kinds K,...] [--all-blocks]
                 LANYFS FSCK WORKDIR [MODE:SEED:OPS:BS:AL:SIZE ...]

For each scenario (the built-in ones below when none is given) the
simulator writes a run (lanyfs simulate).  The images probed are its final
state, or with --states N the N states evenly spread over its writes
(lanyfs replay --upto K), unplugged mid-run.  Each image is repaired once
as it is (fsck-lanyfs -y): that repair is the reference, and its live
files, with the blocks each one holds (its own block, its extenders, its
data), are what a repair can keep.

Then, for every metadata block of the image as its own scan shows it
(superblock, directories, files, extenders, chain blocks, orphaned and
deleted entries, orphan extenders; every block with --all-blocks) and each
kind of damage:

  zero     the block zeroed (a sector that read back blank),
  junk     the block filled with random bytes,
  hdrflip  one random bit flipped in its first 64 bytes (header, links),
  flip     one random bit flipped anywhere in it,

a copy of the image gets the damage and:
  1. fsck-lanyfs -y --no-undo must exit 0 or 1 (no crash, nothing left);
  2. fsck-lanyfs -n must then exit 0;
  3. every reference file that does not hold the damaged block (in the
     reference, or in the image before its repair) must come out of the
     repaired image (lanyfs salvage of its live tree) with the same bytes:
     at its own path, or elsewhere (lost+found) when the damage cut the
     links that led to it.  A file the reference rebuilt from an extender
     tree nothing linked may come out with a hole filled: a block the
     damage freed that the tree's slot names.
     A file may also come out with a hole where the reference kept a
     block that reads as an old entry or extender: its data write had not
     landed, so neither holds the file's bytes there.

Files that move to lost+found are counted apart: a directory or a
sibling's block holds the links to the files below it, and the format
keeps no parent pointers that could put them back.

Exit status: 0 when every damaged image passes, 1 when one does not (each
named on stdout), 2 on a usage or tool error.
"""
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter

# (mode, seed, operations, block size, address length, size), the suite's run:
# small enough for the sanitizer build, one run in each writer mode.
SCENARIOS = [
    "correct:401:30:1024:2:256K",
    "2012:402:30:512:3:256K",
]
KINDS = ("zero", "junk", "hdrflip", "flip")
# The block map's classes (store.c's classes table): those that hold
# metadata (super, dir, file, extender, chain, orphaned and deleted entries,
# orphan extenders), and the extenders (a file's, an orphan's).
META_CLASSES = "1, 2, 3, 4, 6, 9, 10, 13"
EXTENDER_CLASSES = "4, 13"
TYPE_FILE = 0x20  # an entry block's type byte (SPEC-4)


def run(args, check=False):
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    except subprocess.TimeoutExpired:
        return None
    if check and p.returncode != 0:
        raise SystemExit("damage: %s exited %d: %s"
                         % (" ".join(args), p.returncode, p.stderr.decode(errors="replace")[-300:]))
    return p


def digest(data):
    return (len(data), hashlib.sha256(data).hexdigest())


def salvaged(lanyfs, img, out):
    """The live tree of img, salvaged: [(path, entry block, bytes)]."""
    shutil.rmtree(out, ignore_errors=True)
    run([lanyfs, "salvage", "-q", img, out])
    try:
        with open(os.path.join(out, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return []
    files = []
    for x in manifest["files"]:
        if x["kind"] != "live" or x["status"] != "exact":
            continue
        with open(os.path.join(out, x["output_path"]), "rb") as h:
            files.append((x["source_path"], x["entry_block"], h.read()))
    return files


def remove_db(db):
    for x in (db, db + "-wal", db + "-shm"):
        if os.path.exists(x):
            os.remove(x)


def tree_blocks(image, bs, alen, nblocks, top):
    """The extender tree at top and every block its slots name (SPEC-5:
    type 0x80, the level at byte 4, addrlen-byte slots from byte 5)."""
    out, todo = set(), [top]
    while todo:
        blk = todo.pop()
        if blk in out or not 0 < blk < nblocks:
            continue
        b = image[blk * bs:(blk + 1) * bs]
        out.add(blk)
        if len(b) < bs or b[0] != 0x80:
            continue
        for i in range((bs - 5) // alen):
            v = int.from_bytes(b[5 + i * alen:5 + (i + 1) * alen], "little")
            if 0 < v < nblocks:
                if b[4] > 0:
                    todo.append(v)
                else:
                    out.add(v)
    return out


def blocks_by_entry(lanyfs, work, img):
    """Scan img: {entry block: blocks the entry holds}, its metadata blocks
    and its block count."""
    db = os.path.join(work, "scan.db")
    remove_db(db)
    run([lanyfs, "scan", "--db", db, img])
    con = sqlite3.connect(db)
    held = {}
    block_of = {}
    for eid, blk in con.execute("SELECT id, block FROM entries WHERE type = ?", (TYPE_FILE,)):
        held[eid] = {blk}
        block_of[eid] = blk
    for eid, first, count in con.execute("SELECT entry, block, count FROM entry_blocks"):
        if eid in held:
            held[eid].update(range(first, first + count))
    for first, count, owner in con.execute(
            "SELECT first, count, owner FROM block_runs WHERE class IN (%s)" % EXTENDER_CLASSES):
        if owner in held:
            held[owner].update(range(first, first + count))
    # A lost tree paired with its entry (its data pointer and size never
    # landed) is that file's: the repair links it, with a copy of each block
    # its slots name that something else holds.
    bs, alen, nb = con.execute("SELECT block_size, address_length, blocks FROM scans").fetchone()
    with open(img, "rb") as f:
        image = f.read()
    for eid, top in con.execute("SELECT entry, top FROM lost_trees WHERE entry IS NOT NULL"):
        if eid in held:
            held[eid].update(tree_blocks(image, bs, alen, nb, top))
    meta = set()
    for first, count in con.execute(
            "SELECT first, count FROM block_runs WHERE class IN (%s)" % META_CLASSES):
        meta.update(range(first, first + count))
    nblocks = con.execute("SELECT blocks FROM scans").fetchone()[0]
    con.close()
    remove_db(db)
    return {block_of[e]: b for e, b in held.items()}, meta, nblocks


def reference(lanyfs, work, state, ref):
    """The reference repair's live files: {path: (bytes, blocks held)}, where
    a file holds the blocks the reference shows it holding and those its
    entry block held in the state; the state's metadata blocks; its size."""
    after, _, _ = blocks_by_entry(lanyfs, work, ref)
    before, meta, nblocks = blocks_by_entry(lanyfs, work, state)
    files = {}
    for path, blk, data in salvaged(lanyfs, ref, os.path.join(work, "ref-out")):
        if blk not in after:
            raise SystemExit("damage: %s: salvage's %s (block %d) is no file of the scan"
                             % (ref, path, blk))
        files[path] = (data, after[blk] | before.get(blk, set()))
    return files, meta, nblocks


def covers(data, want, bs):
    """data holds every byte of want but for blocks of zeros in want: the
    holes of a file rebuilt from a tree nothing linked, which a block the
    damage freed may fill (and lengthen, when it is the tree's last)."""
    if len(data) < len(want):
        return False
    zero = bytes(bs)
    for at in range(0, len(want), bs):
        w = want[at:at + bs]
        if w != data[at:at + len(w)] and w != zero[:len(w)]:
            return False
    return True


def entry_bytes(b):
    """b reads as a LanyFS entry block (SPEC-4): a type byte of a directory
    or a file, and every reserved byte zero."""
    return (len(b) >= 360 and b[0] in (0x10, 0x20) and not any(b[4:8]) and not any(b[40:56])
            and not any(b[88:102]) and not any(b[360:]))


def extender_bytes(b):
    """b reads as a LanyFS extender block (SPEC-7): type 0x80, the reserved
    byte zero and a level a tree can have."""
    return len(b) >= 5 and b[0] == 0x80 and b[1] == 0 and b[4] < 8


def stale_holed(data, want, bs):
    """data is want but for blocks of zeros where want's block reads as an
    old entry or extender: a block the file took whose data write had not landed yet
    (the writer writes data back later), so the reference kept the entry's
    bytes and the repair of the damaged copy a hole.  Neither holds the
    file's bytes; the block never did."""
    if len(data) != len(want):
        return False
    zero = bytes(bs)
    for at in range(0, len(want), bs):
        w, d = want[at:at + bs], data[at:at + bs]
        if w != d and not (d == zero[:len(d)] and (entry_bytes(w) or extender_bytes(w))):
            return False
    return True


def damage(img, blk, bs, kind, rng):
    with open(img, "r+b") as f:
        f.seek(blk * bs)
        cur = bytearray(f.read(bs))
        if kind == "zero":
            cur = bytearray(bs)
        elif kind == "junk":
            cur = bytearray(rng.randbytes(bs))
        else:
            at = rng.randrange(64 if kind == "hdrflip" else bs)
            bit = rng.randrange(8)
            cur[at] ^= 1 << bit
            kind = "%s at byte %d bit %d" % (kind, at, bit)
        f.seek(blk * bs)
        f.write(cur)
    return kind


def kept(files, got, blk, bs, tally):
    """Match the files blk did not hold against the repaired tree got; the
    paths of those that did not come out."""
    need = [(p, data) for p, (data, held) in files.items() if blk not in held]
    by_path = {p: data for p, _, data in got}
    left = Counter(digest(data) for _, _, data in got)
    rest = []
    for p, data in need:  # in place first, so that a moved file takes its own copy
        if by_path.get(p) == data:
            left[digest(data)] -= 1
            tally["in place"] += 1
        else:
            rest.append((p, data))
    lost = []
    for p, data in rest:
        if left[digest(data)] > 0:
            left[digest(data)] -= 1
            tally["moved"] += 1
        elif covers(by_path.get(p, b""), data, bs) or any(
                covers(d, data, bs) for _, _, d in got if len(d) >= len(data)):
            tally["holes filled"] += 1
        elif any(stale_holed(d, data, bs) for _, _, d in got if len(d) == len(data)):
            tally["stale blocks holed"] += 1
        else:
            lost.append(p)
    tally["kept"] += len(need) - len(lost)
    return lost, len(need)


def probe(opts, name, state, ref, bs, rng, tally):
    lanyfs, fsck, work = opts["lanyfs"], opts["fsck"], opts["work"]
    files, meta, nblocks = reference(lanyfs, work, state, ref)
    img = os.path.join(work, "damaged.img")
    fails = 0
    for blk in range(nblocks):
        if not opts["all"] and blk not in meta:
            continue
        for kind in opts["kinds"]:
            shutil.copyfile(state, img)
            what = damage(img, blk, bs, kind, rng)
            tally["images"] += 1
            bad = []
            y = run([fsck, "-y", "--no-undo", img])
            if y is None:
                bad.append("fsck -y hung")
            elif y.returncode not in (0, 1):
                bad.append("fsck -y exited %d" % y.returncode)
            n = run([fsck, "-n", img])
            if n is None or n.returncode != 0:
                bad.append("fsck -n then exited %s" % (n.returncode if n else "(hung)"))
            got = salvaged(lanyfs, img, os.path.join(work, "out"))
            lost, need = kept(files, got, blk, bs, tally)
            if lost:
                bad.append("%d of %d files it did not hold lost: %s"
                           % (len(lost), need, ", ".join(sorted(lost)[:4])))
            if bad:
                fails += 1
                print("%s %s: block %d, %s: %s" % (name, os.path.basename(state), blk, what,
                                                     "; ".join(bad)), flush=True)
    return fails


def main():
    args = sys.argv[1:]
    opts = {"kinds": KINDS, "all": False}
    states = 0
    try:
        while args and args[0].startswith("--"):
            a = args.pop(0)
            if a == "--states":
                states = int(args.pop(0))
            elif a == "--kinds":
                opts["kinds"] = args.pop(0).split(",")
                if not set(opts["kinds"]) <= set(KINDS):
                    raise ValueError(a)
            elif a == "--all-blocks":
                opts["all"] = True
            else:
                raise ValueError(a)
        opts["lanyfs"], opts["fsck"], opts["work"] = args[:3]
    except (ValueError, IndexError):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    scenarios = args[3:] or SCENARIOS
    os.makedirs(opts["work"], exist_ok=True)
    tally = Counter()
    fails = 0
    for sc in scenarios:
        mode, seed, ops, bs, al, size = sc.split(":")
        d = os.path.join(opts["work"], sc.replace(":", "-"))
        shutil.rmtree(d, ignore_errors=True)
        cmd = [opts["lanyfs"], "simulate", "--seed", seed, "--ops", ops,
               "--geometry", "%s:%s" % (bs, al), "--size", size, "--force", d]
        if mode == "2012":
            cmd.insert(2, "--driver=2012")
        elif mode != "correct":
            print("damage: %s: the mode is correct or 2012" % sc, file=sys.stderr)
            return 2
        p = run(cmd)
        if p is None or not os.path.exists(os.path.join(d, "truth.json")):
            print("damage: %s: lanyfs simulate failed" % sc, file=sys.stderr)
            return 2
        images = [os.path.join(d, "final.img")]
        if states > 0:
            with open(os.path.join(d, "truth.json")) as f:
                writes = json.load(f)["writes"]
            images = []
            for i in range(1, states + 1):
                k = writes * i // (states + 1)
                st = os.path.join(d, "state-%d.img" % k)
                run([opts["lanyfs"], "replay", os.path.join(d, "base.img"),
                     os.path.join(d, "writes.log"), st, "--upto", str(k), "--force"], check=True)
                images.append(st)
        rng = random.Random(int(seed))
        for st in images:
            ref = st + ".ref"
            shutil.copyfile(st, ref)
            run([opts["fsck"], "-y", "--no-undo", ref])
            fails += probe(opts, sc, st, ref, int(bs), rng, tally)
    print("damage: %d damaged images, %d failed; of the files the damage did not hold, "
          "%d came out (%d in place, %d moved to another path, %d with holes filled, "
          "%d with unwritten blocks holed)"
          % (tally["images"], fails, tally["kept"], tally["in place"], tally["moved"],
             tally["holes filled"], tally["stale blocks holed"]))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
