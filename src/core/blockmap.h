/*
 * blockmap.h -- a map from block numbers to 64-bit values (core-internal).
 *
 * Open addressing with tombstones, so entries can be removed; grown at half
 * load.  Used by the writer for its inode cache, its queue of dirty data
 * and the 2012 driver's page cache.  Keys are block numbers below
 * UINT64_MAX - 1 (the two largest values mark empty and removed cells).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lanyfs_blockmap {
    uint64_t *keys; /* block numbers, or the EMPTY / DELETED markers */
    uint64_t *vals; /* values */
    size_t cap;     /* table size, a power of two (0 before the first put) */
    size_t used;    /* live entries plus tombstones */
    size_t count;   /* live entries */
};

void lanyfs_blockmap_init(struct lanyfs_blockmap *m);
void lanyfs_blockmap_clear(struct lanyfs_blockmap *m);
/* Insert or replace; false when out of memory. */
bool lanyfs_blockmap_put(struct lanyfs_blockmap *m, uint64_t blk, uint64_t val);
bool lanyfs_blockmap_get(const struct lanyfs_blockmap *m, uint64_t blk, uint64_t *val);
/* Remove; true when it was there. */
bool lanyfs_blockmap_del(struct lanyfs_blockmap *m, uint64_t blk);
/*
 * Iterate: start with *pos = 0; each call gives the next live entry and
 * returns true, or false at the end.  The map must not change meanwhile.
 */
bool lanyfs_blockmap_next(const struct lanyfs_blockmap *m, size_t *pos, uint64_t *blk,
                          uint64_t *val);
