/*
 * blockset.c -- a set of block numbers, for visited sets.
 *
 * Open addressing with linear probing over a power-of-two table, grown at
 * half load.  UINT64_MAX marks an empty slot; as a member (a link read from
 * an erased page is all ones) it is kept in a flag of its own.
 */
#include <stdlib.h>

#include "lanyfs.h"

#define EMPTY UINT64_MAX

struct lanyfs_blockset {
    uint64_t *slots; /* table of block numbers or EMPTY */
    size_t cap;      /* table size, a power of two */
    size_t count;    /* members, has_max included */
    bool has_max;    /* UINT64_MAX is a member (it cannot live in the table) */
};

struct lanyfs_blockset *lanyfs_blockset_new(void)
{
    struct lanyfs_blockset *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->cap = 64;
    s->slots = malloc(s->cap * sizeof(*s->slots));
    if (s->slots == NULL) {
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < s->cap; i++)
        s->slots[i] = EMPTY;
    return s;
}

void lanyfs_blockset_free(struct lanyfs_blockset *s)
{
    if (s == NULL)
        return;
    free(s->slots);
    free(s);
}

static size_t hash(uint64_t b, size_t cap)
{
    b ^= b >> 33;
    b *= 0xff51afd7ed558ccdull;
    b ^= b >> 33;
    return (size_t)(b & (cap - 1));
}

static bool insert(uint64_t *slots, size_t cap, uint64_t blk)
{
    size_t i = hash(blk, cap);
    while (slots[i] != EMPTY) {
        if (slots[i] == blk)
            return false;
        i = (i + 1) & (cap - 1);
    }
    slots[i] = blk;
    return true;
}

int lanyfs_blockset_add(struct lanyfs_blockset *s, uint64_t blk)
{
    if (blk == EMPTY) {
        if (s->has_max)
            return 0;
        s->has_max = true;
        s->count++;
        return 1;
    }
    if ((s->count + 1) * 2 > s->cap) {
        size_t ncap = s->cap * 2;
        uint64_t *n = malloc(ncap * sizeof(*n));
        if (n == NULL)
            return -1;
        for (size_t i = 0; i < ncap; i++)
            n[i] = EMPTY;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i] != EMPTY)
                insert(n, ncap, s->slots[i]);
        free(s->slots);
        s->slots = n;
        s->cap = ncap;
    }
    if (!insert(s->slots, s->cap, blk))
        return 0;
    s->count++;
    return 1;
}

bool lanyfs_blockset_has(const struct lanyfs_blockset *s, uint64_t blk)
{
    if (blk == EMPTY)
        return s->has_max;
    size_t i = hash(blk, s->cap);
    while (s->slots[i] != EMPTY) {
        if (s->slots[i] == blk)
            return true;
        i = (i + 1) & (s->cap - 1);
    }
    return false;
}

size_t lanyfs_blockset_count(const struct lanyfs_blockset *s)
{
    return s->count;
}
