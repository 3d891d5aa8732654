/*
 * writer_priv.h -- the writer's in-memory state, shared by its files.
 *
 *   freelist.c  allocation and freeing through the chained free list
 *   inode.c     the cache of file and directory blocks, dirtying, writeback
 *   btree.c     insert and delete in a directory's reversed search tree
 *   extwrite.c  growing, mapping and truncating a file's extender tree
 *   writer.c    mount, unmount and the path operations
 */
#pragma once

#include "blockmap.h"
#include "lanyfs.h"
#include "writer.h"

/* An entry block as the mount holds it in memory (the kernel's inode). */
struct winode {
    uint64_t blk;             /* its block */
    struct lanyfs_entry e;    /* in-memory fields; reach the disk at writeback */
    uint32_t nlink;           /* the driver's link count (SPEC-§9.12) */
    bool dirty;               /* needs writeback */
    bool evicted;             /* freed: never written back, not in the cache */
    bool fresh_time;          /* modified was set in this mount (no SPEC-§9.15 drift) */
    uint64_t dirty_seq;       /* order of first dirtying, for writeback order */
};

/* A file data block waiting for writepage. */
struct pending_data {
    uint64_t blk;   /* disk block */
    uint8_t *data;  /* blocksize bytes, owned; NULL once dropped */
};

struct lanyfs_writer {
    struct lanyfs_fs *fs;                /* borrowed */
    enum lanyfs_write_mode mode;         /* correct or 2012 driver */
    const struct lanyfs_geom *g;         /* borrowed from fs */
    struct lanyfs_super sb;              /* in-memory superblock */
    struct lanyfs_ts now;                /* time for new stamps */

    struct winode **inodes;              /* every inode loaded, owned */
    size_t ninodes;                      /* used entries of inodes */
    size_t inodes_cap;                   /* allocated entries */
    struct lanyfs_blockmap inode_map;    /* block -> index into inodes (live only) */
    uint64_t dirty_counter;              /* source of dirty_seq */

    struct pending_data *pend;           /* queued data writes, in issue order */
    size_t npend;                        /* used entries */
    size_t pend_cap;                     /* allocated entries */
    struct lanyfs_blockmap pend_map;     /* block -> index of its newest queued write */
    uint64_t pend_bytes;                 /* bytes queued */

    lanyfs_sync_hook sync_hook;          /* borrowed */
    void *sync_ctx;                      /* borrowed */
    uint64_t allocs;                     /* blocks handed out */
    uint64_t frees;                      /* blocks freed */
    uint8_t *scratch;                    /* one block of scratch space */
};

/* Queued data beyond this is written back early, as periodic writeback would. */
#define WRITER_PENDING_MAX (64u << 20)

static inline bool drv(const struct lanyfs_writer *w)
{
    return w->mode == LANYFS_WRITE_DRIVER2012;
}

/* ---- freelist.c ---- */
enum lanyfs_err wr_super_sync(struct lanyfs_writer *w, struct lanyfs_error *err);
enum lanyfs_err wr_alloc(struct lanyfs_writer *w, uint64_t *blk, struct lanyfs_error *err);
enum lanyfs_err wr_free(struct lanyfs_writer *w, uint64_t blk, struct lanyfs_error *err);
/* A direct block write (chain, extender, new entry), with its sync point. */
enum lanyfs_err wr_direct(struct lanyfs_writer *w, uint64_t blk, const uint8_t *data,
                          struct lanyfs_error *err);
/* Free blocks the allocator can still hand out (for the checks before writing). */
enum lanyfs_err wr_free_available(struct lanyfs_writer *w, uint64_t *n, struct lanyfs_error *err);

/* ---- inode.c ---- */
enum lanyfs_err wr_iget(struct lanyfs_writer *w, uint64_t blk, struct winode **out,
                        struct lanyfs_error *err);
/* Register a block just created (written directly by the caller). */
enum lanyfs_err wr_inew(struct lanyfs_writer *w, uint64_t blk, const struct lanyfs_entry *e,
                        struct winode **out, struct lanyfs_error *err);
void wr_idirty(struct lanyfs_writer *w, struct winode *in);
/* modified = now, and dirty (lanyfs_inode_poke). */
void wr_itouch(struct lanyfs_writer *w, struct winode *in);
/* Forget an inode whose block was freed: it is never written back. */
void wr_ievict(struct lanyfs_writer *w, struct winode *in);
/* Write back every dirty inode whose link count is not 0. */
enum lanyfs_err wr_iwriteback(struct lanyfs_writer *w, struct lanyfs_error *err);
void wr_ifree_all(struct lanyfs_writer *w);
/* Queue a data block for writepage; drop a queued one (its block was freed). */
enum lanyfs_err wr_queue_data(struct lanyfs_writer *w, uint64_t blk, const uint8_t *data,
                              struct lanyfs_error *err);
void wr_drop_data(struct lanyfs_writer *w, uint64_t blk);
/* The newest queued contents of blk, or NULL. */
const uint8_t *wr_queued_data(struct lanyfs_writer *w, uint64_t blk);
enum lanyfs_err wr_flush_data(struct lanyfs_writer *w, struct lanyfs_error *err);

/* ---- btree.c ---- */
/* Link child (whose name is set) into dir's tree; LANYFS_E_EXISTS when the name is taken. */
enum lanyfs_err wr_tree_insert(struct lanyfs_writer *w, struct winode *dir, struct winode *child,
                               struct lanyfs_error *err);
/*
 * Unlink node from dir's tree.  In driver mode fails with LANYFS_E_NOTFOUND
 * where the 2012 driver does (SPEC-§9.9), changing nothing.
 */
enum lanyfs_err wr_tree_delete(struct lanyfs_writer *w, struct winode *dir, struct winode *node,
                               struct lanyfs_error *err);
/* Find name in dir's tree (from memory). */
enum lanyfs_err wr_tree_lookup(struct lanyfs_writer *w, struct winode *dir, const char *name,
                               size_t len, struct winode **out, struct lanyfs_error *err);

/* ---- extwrite.c ---- */
/*
 * The disk block for file block fblk of a file being written, allocating as
 * the mode does (driver: grow on every call, then map with the squaring
 * helper; correct: allocate the path to fblk when missing).  *dblk may be 0
 * in driver mode (a hole maps to block 0, SPEC-§9.8).
 */
enum lanyfs_err wr_getblk(struct lanyfs_writer *w, struct winode *file, uint64_t fblk,
                          uint64_t *dblk, struct lanyfs_error *err);
/* Free the data blocks from file block keep on (driver: extenders stay). */
enum lanyfs_err wr_ext_truncate(struct lanyfs_writer *w, struct winode *file, uint64_t keep,
                                struct lanyfs_error *err);
/* Blocks a correct-mode write of nblocks file blocks needs beyond what file maps. */
enum lanyfs_err wr_ext_blocks_needed(struct lanyfs_writer *w, struct winode *file,
                                     uint64_t nblocks, uint64_t *need, struct lanyfs_error *err);
