/*
 * repair_clone.c -- the blocks a repair may take, and the fresh blocks it
 * writes into them.
 *
 * The pool holds the blocks the plan leaves free, best first:
 *   0. blocks nothing refers to now: free-list slots that hold no deleted
 *      entry's data, leaked and unknown blocks, orphaned extenders;
 *   1. blocks of deleted entries and their data (taking them ends the
 *      chance to undelete them);
 *   2. chain blocks of the present free list (taking one breaks that list
 *      if the repair is cut short before the new one is in place).
 * Blocks the present filesystem still refers to (data past a size, a
 * stale node) are free in the plan but never in the pool: a fresh block
 * written there before the reference is cut would change what an
 * interrupted repair leaves readable.  They join the free list at the end.
 *
 * Fresh blocks (phase 1) are the copies of shared blocks and new
 * extenders.  They are written deepest first (data, then extenders by
 * rising level), so that no fresh block points to one not yet written,
 * and before any pointer to them (phase 2) exists: until then they are
 * leaked blocks, which a rerun simply frees again.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/i18n.h"
#include "repair.h"

/* The pool rank of a block free in the plan, -1 when it must not be taken. */
static int rank_of(const struct scan_block *cell)
{
    switch ((enum scan_class)cell->cls) {
    case SCAN_BLK_FREE:
        return cell->owner != 0 ? 1 : 0;
    case SCAN_BLK_LEAKED:
    case SCAN_BLK_UNKNOWN:
    case SCAN_BLK_ORPHAN_EXT:
        return cell->owner != 0 ? 1 : 0;
    case SCAN_BLK_DELETED:
        return 1;
    case SCAN_BLK_CHAIN:
        return 2;
    default:
        return -1;
    }
}

enum lanyfs_err fsck_pool_build(struct fsck_ctx *c)
{
    const struct scan_block *map = scan_blocks(c->scan);
    uint64_t nmap = scan_block_count(c->scan);
    size_t n = 0;
    /* Without a new free list no block may be taken: the old list would still hold it. */
    for (uint64_t b = 1; b < c->nblocks && c->allow_freelist; b++)
        if (c->kind[b] == OWN_FREE && b < nmap && rank_of(&map[b]) >= 0)
            n++;
    free(c->pool);
    c->pool = malloc((n ? n : 1) * sizeof(*c->pool));
    if (c->pool == NULL)
        return lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    c->npool = 0;
    for (int rank = 0; rank <= 2 && n > 0; rank++)
        for (uint64_t b = 1; b < c->nblocks; b++)
            if (c->kind[b] == OWN_FREE && b < nmap && rank_of(&map[b]) == rank)
                c->pool[c->npool++] = b;
    c->pool_next = 0;
    return LANYFS_OK;
}

uint64_t fsck_pool_take(struct fsck_ctx *c)
{
    while (c->pool_next < c->npool) {
        uint64_t b = c->pool[c->pool_next++];
        if (c->kind[b] == OWN_FREE) {
            c->kind[b] = OWN_NEW;
            return b;
        }
    }
    c->pool_short = true;
    return 0;
}

uint32_t fsck_newblk_add(struct fsck_ctx *c, uint64_t copy_from, uint8_t *data, uint32_t depth)
{
    uint64_t dst = fsck_pool_take(c);
    if (dst == 0)
        return 0;
    if (c->nnb == c->capnb) {
        size_t ncap = c->capnb ? c->capnb * 2 : 32;
        void *p = realloc(c->nb, ncap * sizeof(*c->nb));
        if (p == NULL) {
            c->kind[dst] = OWN_FREE;
            return 0;
        }
        c->nb = p;
        c->capnb = ncap;
    }
    c->nb[c->nnb++] = (struct newblk){
        .dst = dst, .copy_from = copy_from, .data = data, .slot_new = NULL, .depth = depth};
    if (copy_from != 0)
        fsck_note(c, _("block %" PRIu64 ": copied to %" PRIu64), copy_from, dst);
    else
        fsck_note(c, _("block %" PRIu64 ": new extender"), dst);
    return (uint32_t)c->nnb;
}

static int cmp_depth(const void *a, const void *b)
{
    const struct newblk *const *x = a, *const *y = b;
    if ((*x)->depth != (*y)->depth)
        return (*x)->depth > (*y)->depth ? -1 : 1;
    return (*x)->dst < (*y)->dst ? -1 : (*x)->dst > (*y)->dst;
}

enum lanyfs_err fsck_newblk_write(struct fsck_ctx *c)
{
    enum lanyfs_err rc = LANYFS_OK;
    if (c->nnb == 0)
        return rc;
    uint8_t *b = malloc(c->g.blocksize);
    struct newblk **order = malloc(c->nnb * sizeof(*order));
    if (b == NULL || order == NULL) {
        rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < c->nnb; i++)
        order[i] = &c->nb[i];
    qsort(order, c->nnb, sizeof(*order), cmp_depth);
    for (size_t i = 0; i < c->nnb; i++) {
        struct newblk *nb = order[i];
        if (nb->copy_from != 0) {
            rc = fsck_read(c, nb->copy_from, b);
            if (rc != LANYFS_OK)
                goto out;
        } else {
            memcpy(b, nb->data, c->g.blocksize);
            if (nb->slot_new != NULL)
                for (uint32_t s = 0; s < c->g.extmax; s++)
                    if (nb->slot_new[s] != 0)
                        lanyfs_ext_set_slot(&c->g, b, s, c->nb[nb->slot_new[s] - 1].dst);
        }
        rc = fsck_write(c, nb->dst, b);
        if (rc != LANYFS_OK)
            goto out;
    }
out:
    free(order);
    free(b);
    return rc;
}
