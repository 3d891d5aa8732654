/*
 * repair_unlist.c -- free blocks taken off the free list for the files of
 * lost extender trees.
 *
 * A lost tree (LOST_DATA_TREE) becomes a new file of /lost+found whose own
 * block must be one the old free list does not list (plan.c): written
 * before the superblock switches to the new list, a listed block would
 * read, after an interruption, as a deleted file that takes the tree along.
 * With no such block left, the tree's blocks went to the free list, and
 * the write it holds was lost.  Instead, free blocks are first taken off
 * the list: slots of one chain block are cleared, in one write of that
 * block (its counter counts the write), and the check starts again over
 * blocks that are now leaked, which the new files take.  An interruption
 * leaves leaked blocks and a 'freeblocks' one too high, which the next run
 * corrects.
 *
 * No block a lost tree's slot names is taken (it would join the tree, not
 * hold its file).  Free blocks that read as zeros are taken first: they hold no deleted
 * file's data that an undelete could want.  The chain block is the one
 * that lists the first such block met from the device's end (where the
 * allocator reaches last), or, with none among the blocks read, the one
 * that lists the last free block; one whose type reads as no chain block
 * is passed over for the next.
 */
#include <stdlib.h>
#include <string.h>

#include "repair.h"

/* Free blocks read, from the device's end, looking for a zero one. */
#define UNLIST_PROBE 4096
/* Chain blocks that read as none passed over, at most. */
#define UNLIST_PASSED 8

static bool chain_passed(const uint64_t *passed, unsigned n, uint64_t chain)
{
    for (unsigned i = 0; i < n; i++)
        if (passed[i] == chain)
            return true;
    return false;
}

/*
 * Where the formatter's layout puts the block a chain block's last slot
 * lists: a leaked block there reads as the driver's leak through that slot
 * (SPEC-9.1), not as one taken here.
 */
static bool last_slot_place(const struct fsck_ctx *c, uint64_t blk)
{
    uint64_t span = (uint64_t)c->g.chainmax + 1;
    return blk >= (uint64_t)c->g.chainmax + 2 && (blk - c->g.chainmax - 2) % span == 0;
}

static bool takeable(const struct fsck_ctx *c, const struct scan_block *map, uint64_t nmap,
                     uint64_t blk)
{
    return blk != 0 && !last_slot_place(c, blk) && blk < nmap && blk < c->nblocks && map[blk].cls == SCAN_BLK_FREE &&
           !(map[blk].flags & SCAN_BF_SHARED) && map[blk].index != 0 &&
           c->kind[blk] == OWN_FREE && (c->lost_named == NULL || !c->lost_named[blk]);
}

/* Does blk's type byte read as an entry, an extender or a chain block? */
static bool typed_block(struct fsck_ctx *c, uint64_t blk, uint8_t *b)
{
    if (fsck_read(c, blk, b) != LANYFS_OK)
        return true;
    uint8_t t = b[LANYFS_HDR_TYPE];
    return t == LANYFS_TYPE_DIR || t == LANYFS_TYPE_FILE || t == LANYFS_TYPE_EXT ||
           t == LANYFS_TYPE_CHAIN;
}

static bool zero_block(struct fsck_ctx *c, uint64_t blk, uint8_t *b)
{
    if (fsck_read(c, blk, b) != LANYFS_OK)
        return false;
    for (uint32_t i = 0; i < c->g.blocksize; i++)
        if (b[i] != 0)
            return false;
    return true;
}

enum lanyfs_err fsck_unlist(struct fsck_ctx *c, uint64_t want, uint64_t *taken)
{
    const struct scan_block *map = scan_blocks(c->scan);
    uint64_t nmap = scan_block_count(c->scan);
    uint64_t chain = 0, last = 0, probed = 0;
    *taken = 0;
    uint8_t *b = malloc(c->g.blocksize);
    uint8_t *ch = malloc(c->g.blocksize);
    enum lanyfs_err rc = LANYFS_OK;
    if (b == NULL || ch == NULL) {
        rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    /* A chain block that reads as none (a damaged type the rebuilt list
     * replaces) is passed over for the next: its blocks cannot be taken
     * in a write of it (correct:953 state 8377, bit 7 of the type of
     * chain block 274: the lost tree at 84 found no block, and its blocks
     * were freed). */
    uint64_t passed[UNLIST_PASSED];
    unsigned npassed = 0;
    for (;;) {
        chain = last = probed = 0;
        for (uint64_t blk = nmap; blk-- > 1 && chain == 0 && probed < UNLIST_PROBE;) {
            if (!takeable(c, map, nmap, blk) || chain_passed(passed, npassed, map[blk].index))
                continue;
            if (last == 0)
                last = blk;
            probed++;
            if (zero_block(c, blk, b))
                chain = map[blk].index;
        }
        if (chain == 0 && last != 0)
            chain = map[last].index;
        if (chain == 0 || chain >= c->nblocks || fsck_read(c, chain, ch) != LANYFS_OK)
            goto out;
        if (ch[LANYFS_HDR_TYPE] == LANYFS_TYPE_CHAIN)
            break;
        if (npassed == UNLIST_PASSED)
            goto out;
        passed[npassed++] = chain;
    }
    /* Zero blocks first, then free blocks whose type byte reads as no
     * structure, then any the chain lists.  A taken block is leaked until
     * a new file's entry is written over it, and the check that starts
     * again reads what it holds: an old extender there reads as one more
     * lost tree, and an old entry as an orphan, which want blocks of their
     * own (correct:970 state 7232: two old extenders taken, 273 and 967,
     * came back as lost trees of a deleted file's bytes, and the 7 blocks
     * taken for 7 trees left none for the 225 blocks of the tree at 160,
     * which were freed). */
    for (int pass = 0; pass < 3 && *taken < want; pass++) {
        for (uint32_t i = 0; i < c->g.chainmax && *taken < want; i++) {
            uint64_t v = lanyfs_chain_slot(&c->g, ch, i);
            if (!takeable(c, map, nmap, v) || map[v].index != chain)
                continue;
            if ((pass == 0 && !zero_block(c, v, b)) || (pass == 1 && typed_block(c, v, b)))
                continue;
            lanyfs_chain_set_slot(&c->g, ch, i, 0);
            (*taken)++;
        }
    }
    if (*taken == 0)
        goto out;
    lanyfs_put16(ch + LANYFS_HDR_WRCNT, (uint16_t)(lanyfs_get16(ch + LANYFS_HDR_WRCNT) + 1));
    rc = fsck_write(c, chain, ch);
out:
    free(b);
    free(ch);
    return rc;
}
