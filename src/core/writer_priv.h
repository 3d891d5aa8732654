/*
 * writer_priv.h -- the writer's in-memory state, shared by its files.
 *
 *   freelist.c  allocation and freeing through the chained free list
 *   inode.c     the cache of file and directory blocks, dirtying, writeback,
 *               the queue of data writes and the 2012 driver's page cache
 *   btree.c     insert and delete in a directory's reversed search tree
 *   extwrite.c  growing, mapping and truncating a file's extender tree
 *   writer.c    mount, unmount and the path operations
 *
 * The writer keeps its own copy of the geometry and of the superblock
 * block: bytes that land on block 0 through a hole (SPEC-§9.8) must not
 * change what the writer believes about the device, and the driver
 * rewrites the superblock from the buffer it holds, not from the disk.
 */
#pragma once

#include "blockmap.h"
#include "lanyfs.h"
#include "writer.h"

/* The kernel's page size: the unit of the 2012 driver's page cache (SPEC-§9.13, §9.14). */
#define WR_PAGE_BITS 12
#define WR_PAGE_SIZE (1u << WR_PAGE_BITS)

/* The driver's page cache of one file: pages written in this mount, mapped buffers. */
struct wpages {
    struct lanyfs_blockmap pages;  /* page index -> index into data */
    uint8_t **data;                /* WR_PAGE_SIZE bytes each, owned; NULL once dropped */
    size_t n;                      /* used entries of data */
    size_t cap;                    /* allocated entries of data */
    struct lanyfs_blockmap mapped; /* file block -> disk block of its mapped buffer */
};

/* An entry block as the mount holds it in memory (the kernel's inode). */
struct winode {
    uint64_t blk;             /* its block */
    struct lanyfs_entry e;    /* in-memory fields; reach the disk at writeback */
    uint32_t nlink;           /* the driver's link count (SPEC-§9.12) */
    bool dirty;               /* needs writeback */
    bool evicted;             /* freed: never written back, not in the cache */
    bool fresh_time;          /* modified was set in this mount (no SPEC-§9.15 drift) */
    uint64_t dirty_seq;       /* order of first dirtying, for writeback order */
    uint64_t undo_seq;        /* the undo generation its saved copy belongs to */
    struct wpages *pc;        /* driver mode: its page cache, owned; NULL when empty */
    struct winode *dparent;   /* driver mode: the directory whose dcache still names it
                               * although its insert failed (SPEC-§9.14), else NULL */
};

/* A file data block waiting for writepage. */
struct pending_data {
    uint64_t blk;   /* disk block */
    uint8_t *data;  /* blocksize bytes, owned; NULL once dropped */
};

/* The state of one inode before an operation changed it, to roll back a refusal. */
struct undo_rec {
    struct winode *in;  /* the inode, borrowed */
    struct winode old;  /* its fields before the change */
};

struct lanyfs_writer {
    struct lanyfs_fs *fs;                /* borrowed */
    enum lanyfs_write_mode mode;         /* correct or 2012 driver */
    struct lanyfs_geom geom;             /* geometry at mount, owned copy */
    const struct lanyfs_geom *g;         /* &geom */
    struct lanyfs_super sb;              /* in-memory superblock */
    uint8_t *sbbuf;                      /* the superblock block as last rewritten, owned */
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
    uint64_t cached_pages;               /* driver mode: pages in all page caches */

    struct undo_rec *undo;               /* saved inodes of the operation in progress */
    size_t nundo;                        /* used entries */
    size_t undo_cap;                     /* allocated entries */
    uint64_t undo_seq;                   /* current undo generation, 0 = not recording */
    uint64_t undo_gen;                   /* source of undo_seq */
    bool undo_failed;                    /* a save ran out of memory */

    uint64_t pop_blk;                    /* chain block whose slots < pop_first are empty */
    uint32_t pop_first;                  /* first slot a pop must look at in pop_blk */
    uint64_t push_blk;                   /* chain block whose slots < push_first are full */
    uint32_t push_first;                 /* first slot a push must look at in push_blk */

    lanyfs_sync_hook sync_hook;          /* borrowed */
    void *sync_ctx;                      /* borrowed */
    uint64_t allocs;                     /* blocks handed out */
    uint64_t frees;                      /* blocks freed */
    uint8_t *scratch;                    /* one block of scratch space */
};

/* Queued data beyond this is written back early, as periodic writeback would. */
#define WRITER_PENDING_MAX (64u << 20)
/* Cached driver pages beyond this are dropped, as memory pressure would. */
#define WRITER_PAGECACHE_MAX ((64u << 20) / WR_PAGE_SIZE)

static inline bool drv(const struct lanyfs_writer *w)
{
    return w->mode == LANYFS_WRITE_DRIVER2012;
}

/* ---- freelist.c ---- */
/* Read block 0 into the mount's superblock buffer, unless it holds it already. */
enum lanyfs_err wr_super_load(struct lanyfs_writer *w, struct lanyfs_error *err);
enum lanyfs_err wr_super_sync(struct lanyfs_writer *w, struct lanyfs_error *err);
enum lanyfs_err wr_alloc(struct lanyfs_writer *w, uint64_t *blk, struct lanyfs_error *err);
enum lanyfs_err wr_free(struct lanyfs_writer *w, uint64_t blk, struct lanyfs_error *err);
/* A direct block write (chain, extender, new entry), with its sync point. */
enum lanyfs_err wr_direct(struct lanyfs_writer *w, uint64_t blk, const uint8_t *data,
                          struct lanyfs_error *err);
/* Forget what the allocator knows of blk's slots (blk was written by something else). */
void wr_freelist_forget(struct lanyfs_writer *w, uint64_t blk);
/* Blocks the correct allocator can hand out (exact in correct mode). */
uint64_t wr_free_available(const struct lanyfs_writer *w);

/* ---- inode.c ---- */
/*
 * The inode of an entry block.  LANYFS_E_BADTYPE when the block is neither
 * a directory nor a file, LANYFS_E_RANGE when it lies outside the device.
 */
enum lanyfs_err wr_iget(struct lanyfs_writer *w, uint64_t blk, struct winode **out,
                        struct lanyfs_error *err);
/* Register a block just created (written directly by the caller); the caller dirties it. */
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

/*
 * Undo: between wr_undo_begin and wr_undo_end, wr_isave keeps the first
 * state of every inode about to change; wr_undo_rollback puts them back.
 * Only in-memory state is restored: callers roll back before any disk write.
 */
void wr_undo_begin(struct lanyfs_writer *w);
void wr_isave(struct lanyfs_writer *w, struct winode *in);
void wr_undo_rollback(struct lanyfs_writer *w);
void wr_undo_end(struct lanyfs_writer *w);

/* Queue a data block for writepage; drop a queued one (its block was freed). */
enum lanyfs_err wr_queue_data(struct lanyfs_writer *w, uint64_t blk, const uint8_t *data,
                              struct lanyfs_error *err);
void wr_drop_data(struct lanyfs_writer *w, uint64_t blk);
/* The newest queued contents of blk, or NULL. */
const uint8_t *wr_queued_data(struct lanyfs_writer *w, uint64_t blk);
enum lanyfs_err wr_flush_data(struct lanyfs_writer *w, struct lanyfs_error *err);

/* The driver's page cache (driver mode only). */
uint8_t *wr_page_get(struct winode *in, uint64_t page);
/* A new zeroed page, cached; NULL when out of memory. */
uint8_t *wr_page_add(struct lanyfs_writer *w, struct winode *in, uint64_t page);
bool wr_page_mapped(const struct winode *in, uint64_t fblk, uint64_t *dblk);
bool wr_page_map(struct winode *in, uint64_t fblk, uint64_t dblk);
/* truncate_setsize: drop pages and buffers past size, zero the cached tail of the last page. */
void wr_page_truncate(struct lanyfs_writer *w, struct winode *in, uint64_t size);
/* Drop every cached page of every file (memory pressure). */
void wr_page_drop_all(struct lanyfs_writer *w);

/* ---- btree.c ---- */
/*
 * Link child (whose name is set) into dir's tree; LANYFS_E_EXISTS when the
 * name is taken.  Driver mode fails with LANYFS_E_INVAL where a link on the
 * path names no entry block, as lanyfs_btree_add_inode does (SPEC-§9.14).
 */
enum lanyfs_err wr_tree_insert(struct lanyfs_writer *w, struct winode *dir, struct winode *child,
                               struct lanyfs_error *err);
/*
 * Unlink node from dir's tree.  In driver mode fails with LANYFS_E_NOTFOUND
 * where the 2012 driver does (SPEC-§9.9), changing nothing; *removed (may
 * be NULL) tells whether the node left the tree: the driver's descent
 * reports success without change when a link on the path cannot be read.
 */
enum lanyfs_err wr_tree_delete(struct lanyfs_writer *w, struct winode *dir, struct winode *node,
                               bool *removed, struct lanyfs_error *err);
/*
 * Find name in dir's tree (from memory).  Driver mode treats a link to a
 * block that is no entry as absent; correct mode refuses it (LANYFS_E_CORRUPT).
 */
enum lanyfs_err wr_tree_lookup(struct lanyfs_writer *w, struct winode *dir, const char *name,
                               size_t len, struct winode **out, struct lanyfs_error *err);

/* ---- extwrite.c ---- */
/*
 * The disk block for file block fblk of a file being written, allocating as
 * the mode does (driver: grow on every call, then map with the squaring
 * helper; correct: allocate the path to fblk when missing).  *dblk may be 0
 * in driver mode (a hole maps to block 0, SPEC-§9.8).  *fresh (may be NULL)
 * tells that the data block was allocated by this call.
 */
enum lanyfs_err wr_getblk(struct lanyfs_writer *w, struct winode *file, uint64_t fblk,
                          uint64_t *dblk, bool *fresh, struct lanyfs_error *err);
/*
 * Truncate the extender tree to keep file blocks.  Correct mode frees the
 * data blocks from keep on and the extenders left mapping nothing; driver
 * mode runs lanyfs_ext_truncate (SPEC-§8, §9.4): extenders stay.
 */
enum lanyfs_err wr_ext_truncate(struct lanyfs_writer *w, struct winode *file, uint64_t keep,
                                struct lanyfs_error *err);
/*
 * Correct mode, before any write: check file's extender tree (types,
 * levels, every block inside the device and met once) and count the blocks
 * it owns (*owned, extenders and data) and the blocks a write of file blocks
 * [first, first + count) would allocate (*need).  Either may be NULL.
 */
enum lanyfs_err wr_ext_scan(struct lanyfs_writer *w, const struct winode *file, uint64_t first,
                            uint64_t count, uint64_t *need, uint64_t *owned,
                            struct lanyfs_error *err);
