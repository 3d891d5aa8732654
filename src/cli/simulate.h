/*
 * simulate.h -- the unplug simulator behind `lanyfs simulate`.
 *
 * sim_run formats OUTDIR/base.img, copies it to OUTDIR/final.img and runs
 * a seeded sequence of random operations on final.img through the writer
 * (writer.h), grouped into mounts, with a write log (writelog.h) recording
 * every block write into OUTDIR/writes.log.  It then writes
 * OUTDIR/truth.json: the options, the mounts, every operation with its
 * outcome and its writes, every path the final image shows with its type,
 * size, SHA-256 and "complete_after", and the paths the operations made
 * that the final image does not show as they were made.  docs/writelog.md
 * gives the document's shape and the exact definition of complete_after.
 *
 * Everything is a function of the options: the generator, the file
 * contents and the writer's clock come from the seed, never from the wall
 * clock, so the same options give byte-identical files.  Operations the
 * writer refuses (no space, the 2012 driver's failing tree delete) are
 * recorded with their error and the run goes on; an I/O error stops it.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "lanyfs.h"

struct sim_opts {
    uint64_t seed;        /* everything random comes from it */
    uint64_t ops;         /* operations to run, >= 1 */
    unsigned blockbits;   /* 9..12 */
    unsigned addrlen;     /* 1..8 */
    uint64_t size;        /* device bytes */
    bool driver;          /* LANYFS_WRITE_DRIVER2012, else the correct writer */
    bool mkfs2012;        /* format as the 2012 formatter does */
    uint64_t mounts;      /* mounts to spread the operations over, 1..ops */
    unsigned big_pct;     /* percent of new files larger than extmax blocks, 0..100 */
    bool force;           /* replace the files of an earlier run in OUTDIR */
};

/* The defaults for an operation count and mode (geometry 512:4, 4 MiB). */
void sim_opts_default(struct sim_opts *o, uint64_t seed, uint64_t ops, bool driver);

struct sim_summary {
    uint64_t writes;       /* block writes in the log */
    uint64_t ops_ok;       /* operations the writer did */
    uint64_t ops_nospc;    /* refused for lack of space */
    uint64_t ops_failed;   /* refused otherwise */
    uint64_t ops_skipped;  /* not tried: the 2012 driver would write onto block 0 */
    uint64_t paths;        /* paths on the final image */
    uint64_t lost;         /* paths the operations made that the final image lacks or changed */
    uint64_t late;         /* final paths no prefix within their last mount shows */
    uint64_t unfound;      /* final paths listed by a walk that a lookup does not find */
    bool stopped;          /* a mount was refused and the run ended early */
};

/* Run the simulation into outdir (created when missing). */
enum lanyfs_err sim_run(const struct sim_opts *o, const char *outdir, struct sim_summary *sum,
                        struct lanyfs_error *err);
