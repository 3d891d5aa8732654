/*
 * truth.h -- a simulated unplug scenario and its truth, for the crash
 * matrices (tests/fsck/crash.c, tests/salvage/crash.c).
 *
 * A SCENARIO is MODE:SEED:OPS:BLOCKSIZE:ADDRLEN:SIZE, MODE "correct" or
 * "2012" (e.g. 2012:3:12:1024:2:256K).  truth_make runs `LANYFS simulate`
 * for it into WORK/MODE-SEED-BLOCKSIZE-ADDRLEN, which then holds base.img,
 * writes.log and truth.json, and loads from truth.json the number of writes,
 * the block size and every path with a complete_after: directories, and
 * files with their final size and SHA-256.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lanyfs.h"

struct truth_path {
    char *path;        /* as truth.json gives it (owned) */
    bool dir;          /* a directory */
    uint64_t size;     /* file size */
    char sha[65];      /* file SHA-256, hex */
    uint64_t complete; /* complete_after: the writes after which it is complete */
};

struct truth_scenario {
    char dir[1024];            /* its folder */
    bool driver;               /* 2012 mode */
    uint64_t writes;           /* writes in the log */
    uint32_t blocksize;        /* bytes */
    struct truth_path *paths;  /* from truth.json (owned) */
    size_t npaths;             /* entries */
};

/*
 * Simulate spec with the lanyfs program at lanyfs into a folder below work
 * and load its truth into sc; false (said on stderr, "PROG: ...") when the
 * spec is bad or the simulator or truth.json fails.  truth_free(sc) in any
 * case.
 */
bool truth_make(struct truth_scenario *sc, const char *prog, const char *lanyfs,
                const char *work, const char *spec);
void truth_free(struct truth_scenario *sc);

/*
 * Does fs show t as truth.json says it ends: a directory, or a file of its
 * size (at most 1 GiB) whose bytes, read by the core, have its SHA-256?
 */
bool truth_shows(struct lanyfs_fs *fs, const struct truth_path *t);
