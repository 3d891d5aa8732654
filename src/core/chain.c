/*
 * chain.c -- free-list chain blocks (SPEC-§6).
 *
 * Slot accessors take the index from the caller; i must be < chainmax, which
 * the callers' loops guarantee.  An index out of range reads as 0 and is
 * never written, so a bad caller cannot step outside the block.
 */
#include "lanyfs.h"

void lanyfs_chain_decode(struct lanyfs_chain_hdr *h, const uint8_t *b)
{
    h->type = b[LANYFS_HDR_TYPE];
    h->wrcnt = lanyfs_get16(b + LANYFS_HDR_WRCNT);
    h->next = lanyfs_get64(b + LANYFS_CH_NEXT);
}

void lanyfs_chain_encode(const struct lanyfs_chain_hdr *h, uint8_t *b)
{
    b[LANYFS_HDR_TYPE] = h->type;
    lanyfs_put16(b + LANYFS_HDR_WRCNT, h->wrcnt);
    lanyfs_put64(b + LANYFS_CH_NEXT, h->next);
}

uint64_t lanyfs_chain_slot(const struct lanyfs_geom *g, const uint8_t *b, uint32_t i)
{
    if (i >= g->chainmax)
        return 0;
    return lanyfs_get_addr(b + LANYFS_CH_SLOTS + (size_t)i * g->addrlen, g->addrlen);
}

void lanyfs_chain_set_slot(const struct lanyfs_geom *g, uint8_t *b, uint32_t i, uint64_t v)
{
    if (i >= g->chainmax)
        return;
    lanyfs_put_addr(b + LANYFS_CH_SLOTS + (size_t)i * g->addrlen, g->addrlen, v);
}
