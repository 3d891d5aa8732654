/*
 * blockmap.c -- the ownership map: one 16-byte cell per block.
 *
 * Every pass accounts for the blocks it reaches by claiming their cells;
 * the first claim wins and a second claim of the same cell is a conflict
 * the claiming pass reports with its own context (a cross-link, a block
 * listed free while in use, a cycle).  Rules:
 *  - sc_claim never overwrites: a held cell only gains SCAN_BF_SHARED;
 *  - sc_claim_over lets a live owner take a cell the free list listed (a
 *    block in use is more than a block listed free), keeping SHARED;
 *  - sc_adopt gives an unowned cell the sweep classified (unknown, leaked,
 *    orphan extender, beyond) to an orphaned or deleted entry, and nothing
 *    else, so quiet walks of damaged leftovers cannot disturb live claims;
 *  - no cell exists for blocks >= nblocks: claims there are refused.
 * The scratch flags (SC_BF_*) are cleared before the result is handed out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

bool sc_map_init(struct scan_result *r)
{
    size_t n = r->nblocks ? (size_t)r->nblocks : 1;
    if ((uint64_t)n != (r->nblocks ? r->nblocks : 1) || n > SIZE_MAX / sizeof(*r->map))
        return sc_oom(r);
    r->map = calloc(n, sizeof(*r->map));
    if (r->map == NULL)
        return sc_oom(r);
    /* Every cell is used (the sweep visits them all): fault them in at once. */
    sc_mem_huge(r->map, n * sizeof(*r->map));
    sc_prefault_all(r, SC_PF_MAP, r->map, n * sizeof(*r->map));
    if (r->nblocks > 0) {
        r->map[0].cls = SCAN_BLK_SUPER;
        r->map[0].flags = SCAN_BF_METADATA;
        r->map[0].wrcnt = r->sb.wrcnt;
    }
    return true;
}

enum sc_claim sc_claim(struct scan_result *r, uint64_t blk, enum scan_class cls, uint32_t owner,
                       uint64_t index)
{
    struct scan_block *c = sc_cell(r, blk);
    if (blk >= r->image_blocks)
        r->past_image_refs++;
    if (c == NULL)
        return SC_CLAIM_OUTSIDE;
    if (c->cls != SCAN_BLK_UNKNOWN || c->owner != 0) {
        c->flags |= SCAN_BF_SHARED;
        return SC_CLAIM_HELD;
    }
    c->cls = (uint8_t)cls;
    c->flags &= (uint8_t)~SC_BF_CHECKED; /* judged as another class, if at all */
    c->owner = owner;
    c->index = index;
    return SC_CLAIM_OK;
}

void sc_claim_over(struct scan_result *r, uint64_t blk, enum scan_class cls, uint32_t owner,
                   uint64_t index)
{
    struct scan_block *c = sc_cell(r, blk);
    if (blk >= r->image_blocks)
        r->past_image_refs++;
    if (c == NULL)
        return;
    if (c->cls != SCAN_BLK_UNKNOWN || c->owner != 0)
        c->flags |= SCAN_BF_SHARED;
    c->cls = (uint8_t)cls;
    c->flags &= (uint8_t)~SC_BF_CHECKED; /* judged as another class, if at all */
    c->owner = owner;
    c->index = index;
}

bool sc_adopt(struct scan_result *r, uint64_t blk, enum scan_class cls, uint32_t owner,
              uint64_t index)
{
    struct scan_block *c = sc_cell(r, blk);
    if (c == NULL || c->owner != 0)
        return false;
    switch ((enum scan_class)c->cls) {
    case SCAN_BLK_UNKNOWN:
    case SCAN_BLK_LEAKED:
    case SCAN_BLK_ORPHAN_EXT:
    case SCAN_BLK_BEYOND:
        break;
    default:
        return false;
    }
    c->cls = (uint8_t)cls;
    c->flags &= (uint8_t)~SC_BF_CHECKED; /* judged as another class, if at all */
    c->owner = owner;
    c->index = index;
    return true;
}

void sc_map_meta(struct scan_result *r, uint64_t blk, uint16_t wrcnt)
{
    struct scan_block *c = sc_cell(r, blk);
    if (c == NULL)
        return;
    c->flags |= SCAN_BF_METADATA;
    c->wrcnt = wrcnt;
}

void sc_owner_phrase(const struct scan_result *r, const struct scan_block *c, char *buf,
                     size_t len)
{
    const struct scan_entry *e = NULL;
    if (c->owner >= 1 && c->owner <= r->nentries)
        e = &r->entries[c->owner - 1];
    switch ((enum scan_class)c->cls) {
    case SCAN_BLK_SUPER:
        snprintf(buf, len, "the superblock");
        return;
    case SCAN_BLK_CHAIN:
        snprintf(buf, len, "a chain block of the free list");
        return;
    case SCAN_BLK_FREE:
        snprintf(buf, len, "the free list (chain block %" PRIu64 ")", c->index);
        return;
    case SCAN_BLK_DIR:
    case SCAN_BLK_FILE:
        snprintf(buf, len, "the %s %s", c->cls == SCAN_BLK_DIR ? "directory" : "file",
                 e && e->path ? e->path : "?");
        return;
    case SCAN_BLK_EXTENDER:
        snprintf(buf, len, "an extender of %s", e && e->path ? e->path : "?");
        return;
    case SCAN_BLK_DATA:
        snprintf(buf, len, "%s (file block %" PRIu64 ")", e && e->path ? e->path : "?",
                 c->index);
        return;
    case SCAN_BLK_DELETED:
        snprintf(buf, len, "the deleted entry %s", e && e->path ? e->path : "?");
        return;
    case SCAN_BLK_ORPHAN:
        snprintf(buf, len, "the orphaned entry %s", e && e->path ? e->path : "?");
        return;
    default:
        break;
    }
    snprintf(buf, len, "a %s block", scan_class_name((enum scan_class)c->cls));
}

void sc_map_clear_scratch(struct scan_result *r)
{
    for (uint64_t i = 0; i < r->nblocks; i++)
        r->map[i].flags &= (uint8_t)~SC_BF_SCRATCH;
}

bool sc_cellbits_set(const struct scan_result *r, struct sc_cellbits *s, uint64_t blk)
{
    if (s->bits == NULL) {
        s->bits = calloc((size_t)(r->nblocks / 64 + 1), sizeof(*s->bits));
        if (s->bits == NULL)
            return false;
        s->n = r->nblocks;
    }
    if (blk < s->n)
        s->bits[blk / 64] |= (uint64_t)1 << (blk % 64);
    return true;
}

bool sc_cellbits_get(const struct sc_cellbits *s, uint64_t blk)
{
    return s->bits != NULL && blk < s->n && (s->bits[blk / 64] >> (blk % 64) & 1) != 0;
}

void sc_cellbits_free(struct sc_cellbits *s)
{
    free(s->bits);
    *s = (struct sc_cellbits){0};
}
