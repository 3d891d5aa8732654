/*
 * writer.h -- changing a LanyFS: the correct writer and the 2012 driver.
 *
 * A writer is one mount of an opened, writable filesystem.  Operations work
 * on paths from the root.  Two behaviours:
 *
 *  - LANYFS_WRITE_CORRECT keeps the free list exact (counts, tail, no
 *    leaks), frees extenders with their file, keeps the tree order, and
 *    checks every operation before its first write (names, types, the
 *    trees it changes, the exact free space), so a refused operation
 *    leaves the disk untouched.
 *  - LANYFS_WRITE_DRIVER2012 does what the 2012 kernel driver does, write by
 *    write, bugs included (SPEC-§8 and §9): the tail reset at mount, the
 *    slot range of pop and push, the uncounted push, extenders never freed,
 *    counters restarting at creation, the growth loop past extmax, the
 *    squaring helper and holes mapped to block 0, the failing tree delete
 *    and the rename outcomes, the rmdir that freezes its parent, the time
 *    drift, links and sizes landing only at writeback.  Like the driver it
 *    does not check free space first: a write that cannot allocate maps
 *    what it has.  Its file data goes through a model of the page cache
 *    (4 KiB pages, each written out right after the write that fills it).
 *
 * In both modes file and directory blocks changed in memory reach the disk
 * at writeback, which runs at unmount and at lanyfs_writer_sync (and, in
 * correct mode, when the queue of dirty data grows large, as the kernel's
 * periodic writeback does); correct mode also writes a tree change back
 * before it frees the block it unlinked.  Direct block writes (chain,
 * superblock, extenders, new entry blocks) happen at once.
 *
 * Every block write passes the write hook of the lanyfs_fs, so a log sees
 * them in issue order; the sync hook marks where the driver would sync
 * with the `flush` mount option: after each direct write and each inode
 * writeback, and at unmount.
 */
#pragma once

#include "lanyfs.h"

enum lanyfs_write_mode {
    LANYFS_WRITE_CORRECT = 0,
    LANYFS_WRITE_DRIVER2012 = 1,
};

struct lanyfs_writer;

/* Called at every point where the driver would sync with `flush`. */
typedef void (*lanyfs_sync_hook)(void *ctx);

/*
 * Whether a superblock problem (lanyfs_super_check) refuses every writer:
 * each fatal one, and a type byte other than 0xd0, which a reader only
 * reports but the 2012 driver's mount refuses (SPEC-§8).
 */
bool lanyfs_writer_refuses_problem(const struct lanyfs_sb_problem *p);

/*
 * Mount: read the superblock state into memory.  Refuses an image with a
 * superblock problem that lanyfs_writer_refuses_problem names (the fs must
 * have been opened with LANYFS_OPEN_RDWR).  In correct mode the free list is
 * walked and a broken one (cycle, wild pointer) refuses the mount.  Writes
 * nothing.
 */
enum lanyfs_err lanyfs_writer_mount(struct lanyfs_fs *fs, enum lanyfs_write_mode mode,
                                    struct lanyfs_writer **out, struct lanyfs_error *err);

/*
 * Unmount: write back every dirty file and directory block, then rewrite the
 * superblock (the driver always does, SPEC-§8), then free the writer.  The
 * writer is freed even when a write fails.
 */
enum lanyfs_err lanyfs_writer_unmount(struct lanyfs_writer *w, struct lanyfs_error *err);

/*
 * Drop the mount without writing anything more: no writeback, no
 * superblock rewrite, queued data discarded.  What the operations already
 * wrote directly stays on the disk.  (The driver has no such path; this
 * is for a tool that refuses to go on, e.g. after a failed operation.)
 */
void lanyfs_writer_abandon(struct lanyfs_writer *w);

/* Write back dirty data and entries now (periodic writeback, sync). */
enum lanyfs_err lanyfs_writer_sync(struct lanyfs_writer *w, struct lanyfs_error *err);

void lanyfs_writer_set_sync_hook(struct lanyfs_writer *w, lanyfs_sync_hook hook, void *ctx);

/* Time used for new timestamps; defaults to lanyfs_ts_now at mount. */
void lanyfs_writer_set_time(struct lanyfs_writer *w, const struct lanyfs_ts *now);

/* Create a directory.  Its parent must exist and be a directory. */
enum lanyfs_err lanyfs_writer_mkdir(struct lanyfs_writer *w, const char *path,
                                    struct lanyfs_error *err);

/*
 * Create a file (or replace an existing one: truncate, then write) with len
 * bytes of data.  mtime (may be NULL) becomes its modified time.
 */
enum lanyfs_err lanyfs_writer_put(struct lanyfs_writer *w, const char *path, const void *data,
                                  uint64_t len, const struct lanyfs_ts *mtime,
                                  struct lanyfs_error *err);

/*
 * Set the modified time of an existing file or directory, as utimes does:
 * it reaches the disk with the entry's writeback; nothing is written now.
 */
enum lanyfs_err lanyfs_writer_set_mtime(struct lanyfs_writer *w, const char *path,
                                        const struct lanyfs_ts *mtime, struct lanyfs_error *err);

/* Overwrite len bytes at off of an existing file, growing it when needed. */
enum lanyfs_err lanyfs_writer_pwrite(struct lanyfs_writer *w, const char *path, uint64_t off,
                                     const void *data, uint64_t len, struct lanyfs_error *err);

/* Set the size of a file: shrinking frees the blocks past it, growing adds a hole. */
enum lanyfs_err lanyfs_writer_truncate(struct lanyfs_writer *w, const char *path, uint64_t size,
                                       struct lanyfs_error *err);

enum lanyfs_err lanyfs_writer_unlink(struct lanyfs_writer *w, const char *path,
                                     struct lanyfs_error *err);
enum lanyfs_err lanyfs_writer_rmdir(struct lanyfs_writer *w, const char *path,
                                    struct lanyfs_error *err);
enum lanyfs_err lanyfs_writer_rename(struct lanyfs_writer *w, const char *from, const char *to,
                                     struct lanyfs_error *err);

/* The free-list state the writer holds in memory. */
struct lanyfs_writer_state {
    uint64_t freehead;   /* in-memory freehead */
    uint64_t freetail;   /* in-memory freetail */
    uint64_t freeblocks; /* in-memory freeblocks */
    uint64_t allocs;     /* blocks handed out in this mount */
    uint64_t frees;      /* blocks freed in this mount */
};

void lanyfs_writer_state(const struct lanyfs_writer *w, struct lanyfs_writer_state *st);

/*
 * Count the free list as a reader sees it: chain blocks from freehead along
 * next, and their non-zero slots.  *chain_blocks and *slots may be NULL.
 * LANYFS_E_CYCLE or LANYFS_E_CORRUPT when the list is broken.
 */
enum lanyfs_err lanyfs_freelist_count(struct lanyfs_fs *fs, uint64_t *chain_blocks,
                                      uint64_t *slots, uint64_t *tail, struct lanyfs_error *err);
