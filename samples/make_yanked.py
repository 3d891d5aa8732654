#!/usr/bin/env python3
"""make_yanked.py LANYFS OUTDIR -- build the "yanked stick" sample.

Runs `lanyfs simulate` in 2012-driver mode with a fixed seed into
OUTDIR/yanked-sim, then `lanyfs replay` cut after write K with write K+1
torn after TEAR of its four 512-byte sectors, and writes into OUTDIR:

  yanked.img         the image the unplug leaves
  yanked.log         the simulation's write log (all writes, also those lost)
  yanked.truth.json  the simulation's truth.json (final state, complete_after)
  yanked.about       which write was torn, which operation and file it hit,
                     and which paths the image already shows complete

K is chosen by a rule, not fixed, so that the sample keeps showing a torn
file when the writer's behaviour changes: write K+1 is the first write of
the last mount that lands in a data block of a file which existed before
that mount and which the image after K writes shows with more than TEAR
sectors of its bytes in that block, so the file reads torn.  (When no
write qualifies, K+1 is the first write of the last unmount, and
yanked.about says so.)
Everything is derived from the seed: the same lanyfs gives the same bytes.
The text of yanked.about is computed from the run, not written by hand.
"""
import json
import os
import shutil
import struct
import subprocess
import sys

SEED = 141
OPS = 60
GEOMETRY = "2048:2"
SIZE = "1M"
MOUNTS = 4
TEAR = 2    # sectors of write K+1 that land
BLOCK = 2048


def run(cmd):
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write("make_yanked: %s failed (%d):\n%s%s" %
                         (" ".join(cmd), res.returncode, res.stdout, res.stderr))
        sys.exit(1)
    return res.stdout


def log_blocks(path):
    """Write index -> block, read from the write log (docs/writelog.md)."""
    with open(path, "rb") as f:
        data = f.read()
    out = {}
    pos = 32
    while pos + 8 <= len(data):
        kind = data[pos]
        (length,) = struct.unpack_from("<I", data, pos + 4)
        if kind == 1:
            index, _op, block = struct.unpack_from("<QQQ", data, pos + 8)
            out[index] = block
        pos += 8 + length
    return out


def stat(lanyfs, image, path):
    res = subprocess.run([lanyfs, "stat", "--json", image, path], capture_output=True,
                         text=True)
    return json.loads(res.stdout) if res.returncode == 0 else None


def data_blocks(st):
    """Disk block -> file block for the mapped blocks of a stat document."""
    out = {}
    for r in st.get("runs", []):
        if not r["hole"]:
            for i in range(r["count"]):
                out[r["disk_block"] + i] = r["file_block"] + i
    return out


def choose_cut(lanyfs, sim, truth):
    """(K, path or None): the cut, by the rule of the module's docstring."""
    base = os.path.join(sim, "base.img")
    log = os.path.join(sim, "writes.log")
    scratch = os.path.join(sim, "cut.img")
    unmount = [o for o in truth["operations"] if o["kind"] == "unmount"][-1]
    last = truth["mounts"][-1]
    writes = range(last["first_write"], last["last_write"] + 1)
    before = last["first_write"] - 1
    run([lanyfs, "replay", "--force", "--upto", str(before), base, log, scratch])
    owners = {}
    for p in truth["paths"]:
        if p["type"] != "file" or stat(lanyfs, scratch, p["path"]) is None:
            continue
        st = stat(lanyfs, os.path.join(sim, "final.img"), p["path"])
        for blk in data_blocks(st) if st else {}:
            owners.setdefault(blk, p["path"])
    blocks = log_blocks(log)
    for w in writes:
        path = owners.get(blocks.get(w))
        if path is None:
            continue
        run([lanyfs, "replay", "--force", "--upto", str(w - 1), base, log, scratch])
        st = stat(lanyfs, scratch, path)
        if st is None:
            continue
        fblk = data_blocks(st).get(blocks[w])
        if fblk is not None and st["entry"]["size"] - fblk * BLOCK > TEAR * 512:
            return w - 1, path
    return unmount["first_write"] - 1, None


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: make_yanked.py LANYFS OUTDIR\n")
        return 2
    lanyfs, out = sys.argv[1], sys.argv[2]
    sim = os.path.join(out, "yanked-sim")
    run([lanyfs, "simulate", "--seed", str(SEED), "--ops", str(OPS), "--driver=2012",
         "--geometry", GEOMETRY, "--size", SIZE, "--mounts", str(MOUNTS), "--force", sim])
    base = os.path.join(sim, "base.img")
    log = os.path.join(sim, "writes.log")
    img = os.path.join(out, "yanked.img")
    with open(os.path.join(sim, "truth.json")) as f:
        truth = json.load(f)
    K, chosen = choose_cut(lanyfs, sim, truth)
    summary = json.loads(run([lanyfs, "replay", "--force", "--json", "--upto", str(K),
                              "--tear", str(TEAR), base, log, img]))
    shutil.copyfile(log, os.path.join(out, "yanked.log"))
    shutil.copyfile(os.path.join(sim, "truth.json"), os.path.join(out, "yanked.truth.json"))

    torn = summary["torn"]
    block = torn["block"]
    # Which path of the final image maps the torn block, and what the cut image shows of it.
    hit = None
    for p in truth["paths"]:
        if p["type"] != "file":
            continue
        st = json.loads(run([lanyfs, "stat", "--json", os.path.join(sim, "final.img"),
                             p["path"]]))
        for r in st.get("runs", []):
            if not r["hole"] and r["disk_block"] <= block < r["disk_block"] + r["count"]:
                hit = (p, r["file_block"] + block - r["disk_block"])
    complete = [p for p in truth["paths"]
                if p["complete_after"] is not None and p["complete_after"] <= K]
    pending = [p for p in truth["paths"]
               if p["complete_after"] is None or p["complete_after"] > K]
    mount = next(m for m in truth["mounts"] if m["first_write"] <= K + 1 <= m["last_write"])

    lines = []
    lines.append("yanked.img: a LanyFS stick pulled out while the 2012 driver was writing.")
    lines.append("")
    lines.append("Made by: lanyfs simulate --seed %d --ops %d --driver=2012 --geometry %s "
                 "--size %s --mounts %d" % (SEED, OPS, GEOMETRY, SIZE, MOUNTS))
    lines.append("         lanyfs replay --upto %d --tear %d base.img writes.log yanked.img"
                 % (K, TEAR))
    lines.append("")
    lines.append("The log holds %d writes in %d mounts; writes 1..%d landed whole."
                 % (summary["log_writes"], len(truth["mounts"]), K))
    lines.append("Write %d, the torn one, went to block %d: only %d of its %d sectors "
                 "(the first %d bytes) landed; the rest of the block holds what was there."
                 % (torn["write"], block, torn["sectors"], torn["block_sectors"],
                    torn["sectors"] * 512))
    lines.append("It belongs to operation %d, '%s', in mount %d (writes %d..%d); the last "
                 "sync point before the cut follows write %d."
                 % (torn["op"], torn["op_desc"], truth["mounts"].index(mount) + 1,
                    mount["first_write"], mount["last_write"], summary["sync_point"]))
    if chosen is None:
        lines.append("No write of the last mount hit a file the image already shows, so "
                     "the cut is at the last unmount's first write.")
    if hit is not None:
        p, fblk = hit
        lines.append("The block is file block %d of %s (%d bytes in the end, complete after "
                     "write %s), so that file reads torn: new bytes in the first %d bytes of "
                     "that block, older ones after." % (fblk, p["path"], p["size"],
                                                       p["complete_after"],
                                                       torn["sectors"] * 512))
    lines.append("")
    lines.append("Paths the image shows complete (complete_after <= %d): %d" % (K, len(complete)))
    for p in complete:
        lines.append("  %-9s %s" % (p["type"], p["path"]))
    lines.append("Paths of the final state not yet complete: %d" % len(pending))
    for p in pending:
        if p["complete_after"] is None:
            lines.append("  %-9s %s (a directory walk lists it, a lookup by name does not "
                         "find it: its tree is out of order)" % (p["type"], p["path"]))
        else:
            lines.append("  %-9s %s (complete after write %d)" % (p["type"], p["path"],
                                                              p["complete_after"]))
    lines.append("")
    lines.append("yanked.truth.json and yanked.log are that run's truth and write log; "
                 "docs/writelog.md describes both.")
    with open(os.path.join(out, "yanked.about"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
