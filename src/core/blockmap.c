/*
 * blockmap.c -- block number to value map (blockmap.h).
 */
#include <stdlib.h>

#include "blockmap.h"

#define EMPTY UINT64_MAX
#define DELETED (UINT64_MAX - 1)

void lanyfs_blockmap_init(struct lanyfs_blockmap *m)
{
    m->keys = NULL;
    m->vals = NULL;
    m->cap = 0;
    m->used = 0;
    m->count = 0;
}

void lanyfs_blockmap_clear(struct lanyfs_blockmap *m)
{
    free(m->keys);
    free(m->vals);
    lanyfs_blockmap_init(m);
}

static size_t hash(uint64_t b, size_t cap)
{
    b ^= b >> 31;
    b *= 0x7fb5d329728ea185ull;
    b ^= b >> 27;
    return (size_t)(b & (cap - 1));
}

static bool grow(struct lanyfs_blockmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    if (m->count * 4 < m->cap)
        ncap = m->cap; /* mostly tombstones: rebuild at the same size */
    uint64_t *nk = malloc(ncap * sizeof(*nk));
    uint64_t *nv = malloc(ncap * sizeof(*nv));
    if (nk == NULL || nv == NULL) {
        free(nk);
        free(nv);
        return false;
    }
    for (size_t i = 0; i < ncap; i++)
        nk[i] = EMPTY;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] == EMPTY || m->keys[i] == DELETED)
            continue;
        size_t j = hash(m->keys[i], ncap);
        while (nk[j] != EMPTY)
            j = (j + 1) & (ncap - 1);
        nk[j] = m->keys[i];
        nv[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
    m->used = m->count;
    return true;
}

bool lanyfs_blockmap_put(struct lanyfs_blockmap *m, uint64_t blk, uint64_t val)
{
    if (blk >= DELETED)
        return false;
    if ((m->used + 1) * 2 > m->cap && !grow(m))
        return false;
    size_t i = hash(blk, m->cap);
    size_t tomb = SIZE_MAX;
    while (m->keys[i] != EMPTY) {
        if (m->keys[i] == blk) {
            m->vals[i] = val;
            return true;
        }
        if (m->keys[i] == DELETED && tomb == SIZE_MAX)
            tomb = i;
        i = (i + 1) & (m->cap - 1);
    }
    if (tomb != SIZE_MAX) {
        i = tomb;
    } else {
        m->used++;
    }
    m->keys[i] = blk;
    m->vals[i] = val;
    m->count++;
    return true;
}

static size_t find(const struct lanyfs_blockmap *m, uint64_t blk)
{
    if (m->cap == 0 || blk >= DELETED)
        return SIZE_MAX;
    size_t i = hash(blk, m->cap);
    while (m->keys[i] != EMPTY) {
        if (m->keys[i] == blk)
            return i;
        i = (i + 1) & (m->cap - 1);
    }
    return SIZE_MAX;
}

bool lanyfs_blockmap_get(const struct lanyfs_blockmap *m, uint64_t blk, uint64_t *val)
{
    size_t i = find(m, blk);
    if (i == SIZE_MAX)
        return false;
    if (val)
        *val = m->vals[i];
    return true;
}

bool lanyfs_blockmap_del(struct lanyfs_blockmap *m, uint64_t blk)
{
    size_t i = find(m, blk);
    if (i == SIZE_MAX)
        return false;
    m->keys[i] = DELETED;
    m->count--;
    return true;
}

bool lanyfs_blockmap_next(const struct lanyfs_blockmap *m, size_t *pos, uint64_t *blk,
                          uint64_t *val)
{
    while (*pos < m->cap) {
        size_t i = (*pos)++;
        if (m->keys[i] == EMPTY || m->keys[i] == DELETED)
            continue;
        if (blk)
            *blk = m->keys[i];
        if (val)
            *val = m->vals[i];
        return true;
    }
    return false;
}
