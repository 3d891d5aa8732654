/*
 * repair_freelist.c -- the free list, rebuilt from the ownership map
 * (SPEC-§6, §8, §9.1-9.3).
 *
 * Every block of the device that no one holds in the plan is free: the
 * leaked ones, the blocks past a cut size, the extenders the driver never
 * freed, the old chain blocks themselves.  They are listed in fresh chain
 * blocks of type 0x70, written whole with write counter 0: slots 0 ..
 * chainmax-2 filled in rising block order from slot 0, the last slot left
 * empty because the 2012 driver never pops it (no block leaks through it),
 * each chain block's 'next' naming the following one, the last one 0.
 * 'freeblocks' counts chain blocks and listed blocks exactly; 'freehead'
 * and 'freetail' name the first and last chain blocks.
 *
 * Where the chain blocks go: among the free blocks, first those nothing
 * refers to now, then blocks the repair freed, then deleted entries'
 * blocks, and only last the old chain blocks.  Until the superblock names
 * the new list (phase 5, one write of block 0, whose fields lie in its
 * first sector and so land whole or not at all), the old list stays as it
 * was wherever possible, so an interruption leaves the old superblock
 * describing an intact old list.
 *
 * Order: the tail chain block is written first, then each one before it,
 * the head last; a chain block is never written before the one it names.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/i18n.h"
#include "repair.h"

/* Where a free block stands as a place for a chain block (lower is better). */
static int chain_rank(const struct scan_block *cell)
{
    switch ((enum scan_class)cell->cls) {
    case SCAN_BLK_FREE:
    case SCAN_BLK_LEAKED:
    case SCAN_BLK_UNKNOWN:
    case SCAN_BLK_ORPHAN_EXT:
        return cell->owner != 0 ? 2 : 0;
    case SCAN_BLK_DELETED:
        return 2;
    case SCAN_BLK_CHAIN:
        return 3;
    default:
        return 1;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

enum lanyfs_err fsck_freelist_write(struct fsck_ctx *c, struct fsck_freelist *fl)
{
    enum lanyfs_err rc = LANYFS_OK;
    memset(fl, 0, sizeof(*fl));
    const struct scan_block *map = scan_blocks(c->scan);
    uint64_t nmap = scan_block_count(c->scan);
    uint64_t nfree = 0;
    for (uint64_t b = 1; b < c->nblocks; b++)
        if (c->kind[b] == OWN_FREE)
            nfree++;
    if (nfree == 0)
        return LANYFS_OK;
    uint32_t per = c->g.chainmax - 1; /* slots used per chain block */
    uint64_t nchains = (nfree + per) / (per + 1);
    uint64_t *chains = malloc(nchains * sizeof(*chains));
    uint64_t *slots = malloc(nfree * sizeof(*slots));
    uint8_t *buf = malloc(c->g.blocksize);
    if (chains == NULL || slots == NULL || buf == NULL) {
        rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    uint64_t nc = 0;
    for (int rank = 0; rank <= 3 && nc < nchains; rank++) {
        for (uint64_t b = 1; b < c->nblocks && nc < nchains; b++) {
            if (c->kind[b] != OWN_FREE)
                continue;
            int rk = b < nmap ? chain_rank(&map[b]) : 1;
            if (rk != rank)
                continue;
            chains[nc++] = b;
            c->kind[b] = OWN_NEW;
        }
    }
    qsort(chains, nc, sizeof(*chains), cmp_u64);
    uint64_t ns = 0;
    for (uint64_t b = 1; b < c->nblocks; b++)
        if (c->kind[b] == OWN_FREE)
            slots[ns++] = b;
    for (uint64_t k = nc; k-- > 0;) {
        memset(buf, 0, c->g.blocksize);
        struct lanyfs_chain_hdr h = {.type = LANYFS_TYPE_CHAIN, .wrcnt = 0,
                                     .next = k + 1 < nc ? chains[k + 1] : 0};
        lanyfs_chain_encode(&h, buf);
        for (uint32_t s = 0; s < per; s++) {
            uint64_t i = k * per + s;
            if (i >= ns)
                break;
            lanyfs_chain_set_slot(&c->g, buf, s, slots[i]);
        }
        rc = fsck_write(c, chains[k], buf);
        if (rc != LANYFS_OK)
            goto out;
    }
    fl->head = chains[0];
    fl->tail = chains[nc - 1];
    fl->count = nc + ns;
    c->st.chain_blocks = nc;
    c->st.free_after = fl->count;
    c->st.freelist_written = true;
    fsck_note(c, _("free list: %" PRIu64 " chain blocks, %" PRIu64 " free blocks"), nc, fl->count);
out:
    free(chains);
    free(slots);
    free(buf);
    return rc;
}
