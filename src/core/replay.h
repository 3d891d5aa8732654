/*
 * replay.h -- rebuilding an image from a base image and a write log.
 *
 * lanyfs_replay copies a base image to a new file and applies the first K
 * writes of a write log (writelog.h) to it, as an unplugged stick would
 * hold them:
 *
 *  - upto K: writes 1..K land whole, in log order (all of them by default);
 *  - tear T: write K+1 lands only in its first T 512-byte sectors, the rest
 *    of its block keeps what was there (1 <= T < sectors per block);
 *  - reorder SEED: let S be the write count of the last sync point at or
 *    before K (0 when there is none).  Writes 1..S land whole; each write i
 *    in S+1..K lands if and only if lanyfs_replay_pick(SEED, i) is true,
 *    in log order.  A torn write K+1 lands after them.
 *
 * The log is read through twice: once to check every record and every
 * block number against the base image (before OUT is created), once to
 * apply.  OUT is refused when it exists unless force is set, and when it
 * is the base image itself.  A failed replay removes the OUT it created.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "lanyfs.h"
#include "writelog.h"

#define LANYFS_REPLAY_ALL UINT64_MAX
#define LANYFS_REPLAY_DESC_MAX 256 /* bytes of an operation description kept in the result */

struct lanyfs_replay_opts {
    uint64_t upto;    /* K, or LANYFS_REPLAY_ALL */
    uint32_t tear;    /* sectors of write K+1 that land; 0 = no torn write */
    bool reorder;     /* land a seeded subset of the writes after the last sync point */
    uint64_t seed;    /* for reorder */
    bool force;       /* overwrite an existing OUT */
};

struct lanyfs_replay_result {
    uint64_t log_writes;      /* writes in the log */
    uint64_t log_ops;         /* operations in the log */
    uint64_t upto;            /* K as applied (min of the option and log_writes) */
    uint64_t sync_point;      /* S: writes before the last sync point at or before K */
    uint64_t landed;          /* whole writes that landed */
    uint64_t dropped;         /* writes in S+1..K that did not land (reorder) */
    uint64_t last_op;         /* the operation write K belongs to (0 = none) */
    uint64_t torn_write;      /* K+1 when torn, else 0 */
    uint64_t torn_block;      /* the block it hit */
    uint64_t torn_op;         /* the operation it belongs to */
    uint32_t torn_sectors;    /* sectors of it that landed */
    uint32_t block_sectors;   /* sectors per block */
    char last_op_desc[LANYFS_REPLAY_DESC_MAX + 1]; /* raw bytes, NUL-terminated here */
    char torn_op_desc[LANYFS_REPLAY_DESC_MAX + 1]; /* raw bytes, NUL-terminated here */
};

/* Does write i, after the last sync point, land under reorder with seed? */
bool lanyfs_replay_pick(uint64_t seed, uint64_t write_index);

/*
 * The block size of the LanyFS image at path, from its superblock:
 * LANYFS_E_BADMAGIC or LANYFS_E_GEOMETRY when it names none.  *bytes
 * receives the image size.
 */
enum lanyfs_err lanyfs_replay_base_geometry(const char *path, uint32_t *blocksize,
                                            uint64_t *bytes, struct lanyfs_error *err);

/*
 * Build out from base and the log as described above.  LANYFS_E_GEOMETRY
 * when the log's block size is not the base's, LANYFS_E_RANGE when a write
 * targets a block beyond the base image, LANYFS_E_INVAL for K beyond the
 * log, a tear without a write K+1, a tear of a whole block or more, or out
 * naming the base, LANYFS_E_EXISTS when out exists without force.  result
 * (may be NULL) tells what landed.
 */
enum lanyfs_err lanyfs_replay(const char *base, const char *log, const char *out,
                              const struct lanyfs_replay_opts *opts,
                              struct lanyfs_replay_result *result, struct lanyfs_error *err);
