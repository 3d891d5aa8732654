/*
 * subentries.c -- entries of an earlier format with a smaller block size,
 * lying inside this format's unused blocks.
 *
 * A stick of 1 KiB blocks formatted again with 4 KiB blocks keeps its
 * earlier entries wherever the new format has not written: the formatter
 * writes only its block 0, its root and its chain blocks, which cover the
 * earlier superblock and root, so nothing names the earlier format any
 * more (earlier.c finds an earlier root only at block 1 of a larger block
 * size).  Its entry blocks sit at every 1 KiB inside the new free blocks,
 * and a probe at the new block size rejects them (their tail holds the
 * next earlier block, not zeros).  Yet an entry's used bytes fit in one
 * sector (LANYFS_EN_USED < 512), and its three links are 8 bytes whatever
 * the geometry, so:
 *  - while the free space (freeread.c, on the helper) and the blocks the
 *    sweep classifies as unused are read, every sector of such a block
 *    that probes as an entry of 512-byte blocks is noted (at most
 *    SUB_MAX), but a block's first sector when the block is an entry of
 *    this format;
 *  - after the sweep, each block size B' below this one is judged over the
 *    noted sectors at multiples of B' (at most SUB_CHECK per size): each
 *    link of each entry, read at link * B', must land on an entry (a
 *    file's subtree on an extender).  An earlier format's links land; at
 *    a wrong B' they land at half or twice the offset, on anything.
 *  - B' is told (EARLIER_FORMAT_ENTRIES) when at least SUB_GOOD_MIN links
 *    land, at least half of its links land, and no other size has half as
 *    many landing.
 * Random data makes an entry probe (type, NUL-terminated name, valid
 * times, zero reserved bytes and tail) rarely and a landing link more
 * rarely still; an image of an earlier format kept as a file's bytes in
 * the free space is told as an earlier format, which its entries are.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

#define SUB_MAX 65536     /* sectors noted per list */
#define SUB_CHECK 2048    /* entries whose links are followed, per block size */
#define SUB_GOOD_MIN 2    /* links that must land */
#define SECTOR_BITS 9

void sc_subprobe_init(struct sc_subprobe *p, const struct scan_result *r)
{
    memset(p, 0, sizeof(*p));
    p->bits = r->g.blockbits;
    p->n512 = r->image_bytes >> SECTOR_BITS;
    p->on = r->g.blockbits > SECTOR_BITS && r->g.blockbits <= LANYFS_BLOCKBITS_MAX &&
            lanyfs_geom_init(&p->g512, SECTOR_BITS, LANYFS_ADDRLEN_MAX, p->n512, NULL) ==
                LANYFS_OK;
}

void sc_subprobe_block(struct sc_subprobe *p, uint64_t blk, const uint8_t *b, bool skip_first)
{
    struct lanyfs_entry e;
    if (!p->on || b == NULL)
        return;
    uint64_t per = (uint64_t)1 << (p->bits - SECTOR_BITS);
    if (blk > (UINT64_MAX - per) / per)
        return;
    for (uint64_t j = skip_first ? 1 : 0; j < per; j++) {
        const uint8_t *s = b + (j << SECTOR_BITS);
        if (s[0] != LANYFS_TYPE_DIR && s[0] != LANYFS_TYPE_FILE)
            continue;
        if (!sc_probe_entry(&p->g512, p->n512, s, &e))
            continue;
        if (p->n == p->cap) {
            if (p->cap >= SUB_MAX)
                return; /* enough to judge by */
            size_t ncap = p->cap ? p->cap * 2 : 64;
            uint64_t *v = realloc(p->v, ncap * sizeof(*v));
            if (v == NULL)
                return; /* a hint: judged by what was noted */
            p->v = v;
            p->cap = ncap;
        }
        p->v[p->n++] = blk * per + j;
    }
}

void sc_subprobe_free(struct sc_subprobe *p)
{
    free(p->v);
    p->v = NULL;
    p->n = p->cap = 0;
}

/* The first sector of block l at block size 1 << bits, read alone. */
static bool read_head(struct scan_result *r, unsigned bits, uint64_t l, uint8_t *s)
{
    if (l == 0 || l >= r->image_bytes >> bits)
        return false;
    return lanyfs_image_pread(r->img, l << bits, s, (size_t)1 << SECTOR_BITS, NULL) ==
           LANYFS_OK;
}

struct judged {
    uint64_t entries; /* entries whose links were followed */
    uint64_t links;   /* their non-zero links */
    uint64_t good;    /* links that landed */
    uint64_t first;   /* the lowest sector of those entries */
};

static void judge(struct scan_result *r, const uint64_t *v, size_t n, unsigned bits,
                  const struct sc_subprobe *p, struct judged *j)
{
    uint64_t per = (uint64_t)1 << (bits - SECTOR_BITS);
    uint8_t s[1 << SECTOR_BITS], t[1 << SECTOR_BITS];
    struct lanyfs_entry e, f;
    memset(j, 0, sizeof(*j));
    j->first = UINT64_MAX;
    for (size_t i = 0; i < n && j->entries < SUB_CHECK && !sc_stopped(r); i++) {
        if (v[i] % per != 0 || lanyfs_image_pread(r->img, v[i] << SECTOR_BITS, s, sizeof(s),
                                                  NULL) != LANYFS_OK)
            continue;
        lanyfs_entry_decode(&e, s);
        j->entries++;
        if (v[i] < j->first)
            j->first = v[i];
        uint64_t link[3] = {e.left, e.right, e.subtree};
        for (int k = 0; k < 3; k++) {
            if (link[k] == 0)
                continue;
            j->links++;
            if (!read_head(r, bits, link[k], t))
                continue;
            if (k == 2 && lanyfs_entry_is_file(&e))
                j->good += t[0] == LANYFS_TYPE_EXT && t[LANYFS_EXT_LEVEL] <= SC_LEVEL_MAX;
            else
                j->good += sc_probe_entry(&p->g512, p->n512, t, &f);
        }
    }
}

bool sc_earlier_smaller(struct scan_result *r, const struct sc_subprobe *other)
{
    const struct sc_subprobe *p = &r->sub;
    if (!p->on || p->n + (other != NULL ? other->n : 0) == 0)
        return true;
    size_t n = p->n + (other != NULL ? other->n : 0);
    uint64_t *v = malloc(n * sizeof(*v));
    if (v == NULL)
        return sc_oom(r);
    if (p->n > 0) /* p->v is NULL when nothing was noted */
        memcpy(v, p->v, p->n * sizeof(*v));
    if (other != NULL && other->n > 0)
        memcpy(v + p->n, other->v, other->n * sizeof(*v));
    qsort(v, n, sizeof(*v), sc_cmp_u64);
    size_t m = 0; /* distinct */
    for (size_t i = 0; i < n; i++)
        if (m == 0 || v[i] != v[m - 1])
            v[m++] = v[i];
    struct judged best = {0}, second = {0};
    unsigned best_bits = 0;
    for (unsigned bits = SECTOR_BITS; bits < p->bits; bits++) {
        struct judged j;
        judge(r, v, m, bits, p, &j);
        if (best_bits == 0 || j.good > best.good) {
            second = best;
            best = j;
            best_bits = bits;
        } else if (j.good > second.good) {
            second = j;
        }
    }
    free(v);
    if (sc_stopped(r))
        return false;
    if (best_bits == 0 || best.good < SUB_GOOD_MIN || best.good * 2 < best.links ||
        second.good * 2 >= best.good)
        return true;
    uint32_t bs = (uint32_t)1 << best_bits;
    return sc_report(r,
                     &(struct scan_finding){.code = SCAN_PR_EARLIER_FORMAT_ENTRIES,
                                            .block = (best.first << SECTOR_BITS) >> p->bits,
                                            .value = bs, .count = best.entries,
                                            .count2 = best.good},
                     NULL,
                     "lanyfs salvage --orphans --geometry %" PRIu32
                     " reads them (its address length inferred)",
                     bs);
}
