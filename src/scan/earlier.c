/*
 * earlier.c -- an earlier format's root directory, and its geometry.
 *
 * A stick formatted again keeps the earlier format's blocks wherever the
 * new one has not written yet.  The formatter puts the root directory at
 * block 1, so an earlier format of a larger block size B' left its root at
 * byte B', which the new format counts as block B' / B.  Its entries read
 * the same in any geometry (pointers in entry blocks are always 8 bytes),
 * but its files' data maps are slot arrays of its own address length,
 * which nothing on the stick states any more: salvage needs both values
 * (--geometry B':AL; --geometry B' alone has the scan infer AL as here).
 *
 * The address length is read from the earlier tree's files: walked at B'
 * (explicit stack, visited set, at most EARLIER_NODES_MAX nodes), each
 * file of two or more data blocks whose top extender is a level-0 one is
 * decoded with every length 1..8.  With the right length its first
 * ceil(size / B') slots name distinct blocks within the image and the slot
 * after them is empty; a wrong length splits or merges the addresses, so a
 * slot comes out 0 or out of range.  A file of one block decides nothing
 * (its one address reads the same in most lengths while it is small), so
 * a tree of such files leaves the length unknown, and so does a vote
 * without a clear winner: the length is told only when it fits at least
 * nine in ten of the files that decide and no other length fits half.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "scan_priv.h"

#define EARLIER_NODES_MAX 65536 /* tree nodes read per earlier root */
#define EARLIER_FILES_MAX 512   /* deciding files read per earlier root */

/* Does extender x (level 0, of an image of n blocks of bs bytes) map a file of need
 * blocks with address length a? */
static bool slots_fit(const uint8_t *x, uint32_t bs, unsigned a, uint64_t n, uint64_t need,
                      uint64_t *tmp)
{
    uint64_t extmax = (bs - LANYFS_EXT_SLOTS) / a;
    if (need > extmax)
        return false;
    for (uint64_t i = 0; i < need; i++) {
        uint64_t v = lanyfs_get_addr(x + LANYFS_EXT_SLOTS + i * a, a);
        if (v == 0 || v >= n)
            return false;
        tmp[i] = v;
    }
    if (need < extmax && lanyfs_get_addr(x + LANYFS_EXT_SLOTS + need * a, a) != 0)
        return false;
    /* Distinct: a file's blocks are its own. */
    qsort(tmp, (size_t)need, sizeof(*tmp), sc_cmp_u64);
    for (uint64_t i = 1; i < need; i++)
        if (tmp[i] == tmp[i - 1])
            return false;
    return true;
}

/* Also what a geometry given without its address length is read with (infer.c). */
bool sc_addrlen_from_maps(struct scan_result *r, unsigned bits, uint64_t root, unsigned *addrlen,
                          uint64_t *files, uint64_t *fits)
{
    uint32_t bs = (uint32_t)1 << bits;
    uint64_t n = r->image_bytes >> bits;
    uint64_t fit[9] = {0}, deciding = 0, nodes = 0;
    uint64_t *stack = NULL;
    size_t sp = 0, cap = 0;
    struct lanyfs_geom g;
    bool ok = false;
    *addrlen = 0;
    *files = 0;
    /* Slots of one extender at most: (bs - 5) / 1. */
    uint64_t *tmp = malloc((size_t)bs * sizeof(*tmp));
    uint8_t *b = malloc(bs), *x = malloc(bs);
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    if (b == NULL || x == NULL || seen == NULL || tmp == NULL) {
        sc_oom(r);
        goto out;
    }
    if (root == 0 || root >= n || lanyfs_geom_init(&g, bits, 8, n, NULL) != LANYFS_OK) {
        ok = true;
        goto out;
    }
    uint64_t cur = root;
    for (;;) {
        struct lanyfs_entry e;
        if (sc_stopped(r))
            goto out;
        /* Read alone, at the earlier block size: a block that fails is
         * left out here (the sweep reports it in the scan's geometry). */
        if (cur != 0 && cur < n && nodes < EARLIER_NODES_MAX &&
            deciding < EARLIER_FILES_MAX && lanyfs_blockset_add(seen, cur) == 1 &&
            lanyfs_image_pread(r->img, cur << bits, b, bs, NULL) == LANYFS_OK &&
            sc_probe_entry(&g, n, b, &e)) {
            nodes++;
            uint64_t need = lanyfs_geom_blocks_for_size(&g, e.size);
            if (lanyfs_entry_is_file(&e) && need >= 2 && e.subtree != 0 && e.subtree < n &&
                lanyfs_image_pread(r->img, e.subtree << bits, x, bs, NULL) == LANYFS_OK &&
                x[0] == LANYFS_TYPE_EXT && x[LANYFS_EXT_LEVEL] == 0) {
                deciding++;
                for (unsigned a = 1; a <= 8; a++)
                    fit[a] += slots_fit(x, bs, a, n, need, tmp);
            }
            if (!sc_push_links(&stack, &sp, &cap, &e, cur == root)) {
                sc_oom(r);
                goto out;
            }
        }
        if (sp == 0)
            break;
        cur = stack[--sp];
    }
    *files = deciding;
    if (fits != NULL)
        for (unsigned a = 1; a <= 8; a++)
            fits[a] = fit[a];
    unsigned best = 0;
    for (unsigned a = 1; a <= 8; a++)
        if (fit[a] * 10 >= deciding * 9 && deciding > 0 && (best == 0 || fit[a] > fit[best]))
            best = a;
    for (unsigned a = 1; a <= 8 && best != 0; a++)
        if (a != best && fit[a] * 2 >= deciding)
            best = 0;
    *addrlen = best;
    ok = true;
out:
    free(stack);
    free(tmp);
    free(b);
    free(x);
    lanyfs_blockset_free(seen);
    return ok;
}

/* What reads that format's files: "lanyfs salvage --geometry BS:AL ...". */
static void earlier_hint(char *buf, size_t len, uint32_t bs, unsigned addrlen, uint64_t files)
{
    if (addrlen != 0)
        snprintf(buf, len,
                 "lanyfs salvage --geometry %" PRIu32 ":%u reads its files (the address "
                 "length from %" PRIu64 " of their data maps)",
                 bs, addrlen, files);
    else
        snprintf(buf, len,
                 "lanyfs salvage --geometry %" PRIu32 " reads its files (with the address "
                 "length inferred from slot values, since %s)",
                 bs, files ? "its files' data maps do not agree on it" : "none of its files tells it");
}

/*
 * Entry x may be an earlier format's root: a directory named LANYFSROOT
 * that is either the root the scan took by searching (the superblock does
 * not name it: a format cut before it wrote its own root leaves the search
 * only the earlier one), or one nothing live reaches, in no directory
 * known, with the formatter's attributes (0), created before this
 * filesystem (in an earlier second) when that is known.  A root fsck made, which the superblock
 * names, and a user's directory of that name are neither.
 */
static bool earlier_root(const struct scan_result *r, const struct scan_entry *x,
                         const time_t *made)
{
    time_t born;
    if (!scan_entry_is_formatter_root(x))
        return false;
    if (x->state == SCAN_ENTRY_LIVE)
        return x->block == r->rootdir && r->sb.rootdir != x->block;
    return x->parent == 0 && x->e.attr == 0 &&
           (made == NULL || !sc_ts_seconds(&x->e.created, &born) || born < *made);
}

bool sc_earlier_formats(struct scan_result *r, const time_t *made)
{
    unsigned bits = r->g.blockbits;
    for (size_t i = 0; i < r->nentries; i++) {
        struct scan_entry *x = &r->entries[i];
        if (!earlier_root(r, x, made))
            continue;
        /* Its block must be block 1 of a larger block size. */
        if (x->block < 2 || x->block > LANYFS_BLOCKSIZE_MAX || (x->block & (x->block - 1)) != 0)
            continue;
        uint64_t obs = x->block << bits;
        if (obs > LANYFS_BLOCKSIZE_MAX)
            continue;
        unsigned obits = bits;
        while (((uint64_t)1 << obits) < obs)
            obits++;
        /* Read with a geometry given, the root of the format block 0
         * describes is that format's, which is no earlier one. */
        if (r->geom_given && !r->sb_lost && r->sb.magic == LANYFS_MAGIC &&
            r->sb.blockbits == obits && r->sb.rootdir == 1)
            continue;
        uint64_t files = 0;
        unsigned al = 0;
        if (!sc_addrlen_from_maps(r, obits, 1, &al, &files, NULL))
            return false;
        char hint[256];
        earlier_hint(hint, sizeof(hint), (uint32_t)obs, al, files);
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_EARLIER_FORMAT, .entry = x->id,
                                              .block = x->block, .value = obs, .value2 = al,
                                              .count = files},
                       NULL, "%s", hint))
            return false;
    }
    return true;
}
