/*
 * wu.h -- helpers of the writer unit tests (suite 'writer-unit').
 *
 * Images are formatted with lanyfs_format into temporary files (under
 * $TMPDIR, else /dev/shm when writable, else /tmp), optionally over random
 * bytes so that free blocks hold stale contents.  After the writer has
 * unmounted, the tests read the image back with the core readers only
 * (lanyfs_fs_read_block and the decoders) and assert bytes, fields and
 * counters.
 *
 * wu_classify walks the whole image the way a checker does: the free list
 * from freehead (chain blocks and every non-zero slot), and everything
 * reachable from the root (entries through the trees, each file's
 * extenders and data blocks, all slots), iteratively and with visited
 * marks, so a driver-made image with cycles or shared blocks is counted,
 * not followed for ever.  Each block gets the first class that claims it;
 * a second claim is counted as a conflict.
 *
 * wu_log records every block write through the fs write hook, in issue
 * order, with a copy of the block.
 */
#pragma once

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "lanyfs.h"
#include "writer.h"

/* Cheap assertions for loops (libcheck's own record a checkpoint each). */
#define WU_ASSERT(cond, ...)           \
    do {                               \
        if (!(cond))                   \
            ck_abort_msg(__VA_ARGS__); \
    } while (0)
#define WU_EQ(a, b)                                                                     \
    do {                                                                                \
        uint64_t wu_a_ = (uint64_t)(a), wu_b_ = (uint64_t)(b);                          \
        if (wu_a_ != wu_b_)                                                             \
            ck_abort_msg("%s:%d: %s == %s failed: %llu != %llu", __FILE__, __LINE__, #a, \
                         #b, (unsigned long long)wu_a_, (unsigned long long)wu_b_);     \
    } while (0)
#define WU_OK(expr)                                                                   \
    do {                                                                              \
        struct lanyfs_error wu_e_;                                                    \
        lanyfs_error_clear(&wu_e_);                                                   \
        enum lanyfs_err wu_rc_ = (expr);                                              \
        (void)wu_e_;                                                                  \
        if (wu_rc_ != LANYFS_OK)                                                      \
            ck_abort_msg("%s:%d: %s failed with %d", __FILE__, __LINE__, #expr, wu_rc_); \
    } while (0)

/* splitmix64 */
struct wu_rng {
    uint64_t s; /* state */
};
uint64_t wu_rand(struct wu_rng *r);
uint64_t wu_below(struct wu_rng *r, uint64_t n);
void wu_fill(struct wu_rng *r, void *buf, size_t len);

/* A temporary image file. */
struct wu_img {
    char *path;           /* owned */
    unsigned bits;        /* block size exponent */
    unsigned alen;        /* address length */
    uint64_t blocks;      /* blocks of the file */
    struct lanyfs_format_layout layout; /* what the formatter wrote */
};

/* Format a new image; garbage != 0 fills the file with random bytes first. */
void wu_img_make(struct wu_img *im, unsigned bits, unsigned alen, uint64_t blocks, bool compat,
                 uint64_t garbage);
void wu_img_rm(struct wu_img *im);
/* Have another file removed at exit too (add), or no longer (!add). */
void wu_forget_on_exit(const char *path, bool add);

/* Open read-write (asserts), mount, unmount (asserts). */
struct lanyfs_fs *wu_open(const struct wu_img *im);
struct lanyfs_writer *wu_mount(struct lanyfs_fs *fs, enum lanyfs_write_mode mode);
void wu_umount(struct lanyfs_writer *w);
/* The fixed time of the tests: 2026-12-03T01:02:15Z with the given offset. */
struct lanyfs_ts wu_time(int16_t offset);

/* Block contents and decoded views, read through the core. */
void wu_block(struct lanyfs_fs *fs, uint64_t blk, uint8_t *buf);
struct lanyfs_super wu_super(struct lanyfs_fs *fs);
struct lanyfs_entry wu_entry(struct lanyfs_fs *fs, uint64_t blk);
uint16_t wu_wrcnt(struct lanyfs_fs *fs, uint64_t blk);
/* The block of path, 0 when it does not resolve. */
uint64_t wu_lookup(struct lanyfs_fs *fs, const char *path);
/* Slot i of the extender or chain block blk. */
uint64_t wu_ext_slot(struct lanyfs_fs *fs, uint64_t blk, uint32_t i);
uint64_t wu_chain_slot(struct lanyfs_fs *fs, uint64_t blk, uint32_t i);
/* Whole file contents (size bytes, holes as zeros), malloc'd. */
uint8_t *wu_read_file(struct lanyfs_fs *fs, uint64_t blk, uint64_t *size);

/* Block writes in issue order. */
struct wu_log {
    size_t n;         /* writes */
    size_t cap;       /* allocated */
    uint64_t *blk;    /* their blocks */
    uint8_t **data;   /* copies of the blocks */
    uint32_t bs;      /* block size */
    uint64_t syncs;   /* sync hook calls */
};
void wu_log_start(struct lanyfs_fs *fs, struct wu_log *log);
void wu_log_stop(struct lanyfs_fs *fs);
void wu_log_sync_hook(void *ctx);
void wu_log_free(struct wu_log *log);
/* Index of the first write of blk at or after from, or SIZE_MAX. */
size_t wu_log_find(const struct wu_log *log, uint64_t blk, size_t from);
size_t wu_log_count(const struct wu_log *log, uint64_t blk);

/* Block classes of wu_classify. */
enum wu_class {
    WU_NONE = 0,  /* claimed by nothing: leaked */
    WU_SUPER,     /* block 0 */
    WU_DIR,       /* a reachable directory */
    WU_FILE,      /* a reachable file */
    WU_EXT,       /* an extender of a reachable file */
    WU_DATA,      /* a data block of a reachable file */
    WU_CHAIN,     /* a chain block of the free list */
    WU_FREE,      /* a block listed in a chain slot */
};

struct wu_map {
    uint64_t blocks;       /* blocks of the superblock */
    uint8_t *cls;          /* enum wu_class per block, owned */
    uint64_t count[8];     /* blocks per class */
    uint64_t conflicts;    /* second claims (a block reached again or listed twice) */
    uint64_t outside;      /* pointers beyond the device */
    uint64_t order_errors; /* tree order violations */
    uint64_t beyond_size;  /* data blocks mapped past a file's size */
    uint64_t list_chains;  /* chain blocks on the list */
    uint64_t list_tail;    /* the last chain block, 0 when empty */
};

void wu_classify(struct lanyfs_fs *fs, struct wu_map *m);
void wu_map_free(struct wu_map *m);
/* Blocks of class c in [lo, hi). */
uint64_t wu_map_count_range(const struct wu_map *m, enum wu_class c, uint64_t lo, uint64_t hi);
