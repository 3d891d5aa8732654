/*
 * extender.c -- extender blocks, the file data map (SPEC-§7).
 */
#include "lanyfs.h"

void lanyfs_ext_decode(struct lanyfs_ext_hdr *h, const uint8_t *b)
{
    h->type = b[LANYFS_HDR_TYPE];
    h->wrcnt = lanyfs_get16(b + LANYFS_HDR_WRCNT);
    h->level = b[LANYFS_EXT_LEVEL];
}

void lanyfs_ext_encode(const struct lanyfs_ext_hdr *h, uint8_t *b)
{
    b[LANYFS_HDR_TYPE] = h->type;
    lanyfs_put16(b + LANYFS_HDR_WRCNT, h->wrcnt);
    b[LANYFS_EXT_LEVEL] = h->level;
}

uint64_t lanyfs_ext_slot(const struct lanyfs_geom *g, const uint8_t *b, uint32_t i)
{
    if (i >= g->extmax)
        return 0;
    return lanyfs_get_addr(b + LANYFS_EXT_SLOTS + (size_t)i * g->addrlen, g->addrlen);
}

void lanyfs_ext_set_slot(const struct lanyfs_geom *g, uint8_t *b, uint32_t i, uint64_t v)
{
    if (i >= g->extmax)
        return;
    lanyfs_put_addr(b + LANYFS_EXT_SLOTS + (size_t)i * g->addrlen, g->addrlen, v);
}
