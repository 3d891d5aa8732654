/*
 * repair_file.c -- a file's extender tree and size (SPEC-§7).
 *
 * Two walks over each target file's tree, both iterative by recursion over
 * at most FSCK_LEVEL_MAX + 1 levels, reading every block they follow and
 * believing none of it:
 *
 *  claim  (fsck_file_claim): takes every extender and data block the file
 *         may keep.  An extender must lie inside the device, read, carry
 *         type 0x80 and the level one below its parent's (the top: any
 *         level a device can need).  With FILE repairs allowed, blocks
 *         mapped at file blocks past the size are not taken (they become
 *         free).  A block already held is left to its holder.
 *  build  (fsck_file_build): decides what changes.  With FILE repairs
 *         allowed: a data pointer or slot beyond the device, at the wrong
 *         kind of block or at another structure's block (superblock, an
 *         entry, a chain block) is cleared; slots past the size are
 *         cleared.  With copies allowed, an extender or data block another
 *         file holds is copied into a fresh block and the pointer moved to
 *         the copy, except in a lost tree a file takes (LOST_DATA_TREE,
 *         UNLINKED_FILE_DATA) or an orphan whose block a live file holds:
 *         such a slot is an old extender's, whose blocks the scan left to
 *         their holders, and is cleared (a lost tree claims only the data
 *         blocks the scan gave it, so another tree's are left to that one) (a block two relinked orphans map
 *         is copied, orphans_share); a copied extender is copied whole (its own slots
 *         pointing to copies where they are shared).  Slot changes of the
 *         file's own extenders become edits written in place (phase 2);
 *         copies are fresh blocks (phase 1).
 *
 * Sizes: a size the tree cannot back at all (FILE_SIZE_UNMAPPED) or a
 * cleared data pointer leaves the size that the mapped blocks hold; the
 * driver's growth past extmax (MARK_FIRST_BLOCK_OVERWRITTEN) cuts the file
 * to the blocks it wrote first.  Holes inside a file are legal and stay.
 *
 * Undelete: a deleted file whose data blocks (found in the free list,
 * SPEC-§11) are all still free keeps them and gets a new extender tree.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/i18n.h"
#include "repair.h"

/* A pointer's new value: an existing block, or a fresh block of the plan. */
struct ref {
    uint64_t blk;   /* the block (0 = none), when newref is 0 */
    uint32_t nref;  /* index + 1 into ctx->nb, 0 = none */
};

struct fwalk {
    struct fsck_ctx *c;
    uint32_t who;              /* target entry index */
    struct tentry *t;          /* the entry */
    uint64_t needed;           /* file blocks the (planned) size needs */
    bool allowed;              /* FILE repairs allowed */
    enum fsck_own ekind;       /* what the file's extenders are claimed as */
    enum fsck_own dkind;       /* and its data blocks */
    uint64_t top_mapped;       /* highest file block mapped + 1 */
    struct lanyfs_blockset *seen; /* build: blocks of its own already met once */
    uint8_t *buf[FSCK_LEVEL_MAX + 2]; /* one block per level */
    const struct scan_lost_tree *lt; /* the lost tree it takes, NULL when none */
};

static int cmp_lost_block(const void *a, const void *b)
{
    const struct fsck_lost_block *x = a, *y = b;
    if (x->blk != y->blk)
        return x->blk < y->blk ? -1 : 1;
    return x->top < y->top ? -1 : x->top > y->top;
}

/*
 * Every lost tree's blocks, data and extenders, sorted by block: built
 * once per plan, so that neither the lookup of a file's tree nor the
 * question whose block a slot names costs a pass over all trees.  False
 * without the memory for it (the walks then go on as if no tree had any
 * block, as before lost trees were told apart).
 */
static bool lost_index(struct fsck_ctx *c)
{
    if (c->lost_data_built)
        return c->lost_data != NULL;
    c->lost_data_built = true;
    const struct scan_lost_tree *lt;
    size_t n = c->scan != NULL ? scan_lost_trees(c->scan, &lt) : 0, total = 0;
    for (size_t i = 0; i < n; i++)
        total += lt[i].mapped + lt[i].nexts;
    c->lost_data = total != 0 ? malloc(total * sizeof(*c->lost_data)) : NULL;
    if (c->lost_data == NULL)
        return false;
    for (size_t i = 0; i < n; i++) {
        for (uint64_t k = 0; k < lt[i].ndata && c->nlost_data < total; k++)
            if (lt[i].data[k] != 0)
                c->lost_data[c->nlost_data++] =
                    (struct fsck_lost_block){lt[i].data[k], lt[i].top, i};
        for (uint64_t k = 0; k < lt[i].nexts && c->nlost_data < total; k++)
            c->lost_data[c->nlost_data++] = (struct fsck_lost_block){lt[i].exts[k], lt[i].top, i};
    }
    qsort(c->lost_data, c->nlost_data, sizeof(*c->lost_data), cmp_lost_block);
    return true;
}

/* The first entry of the index for blk (nlost_data when none). */
static size_t lost_first(const struct fsck_ctx *c, uint64_t blk)
{
    size_t lo = 0, hi = c->nlost_data;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->lost_data[mid].blk < blk)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The lost tree whose top the adopting entry t now links, NULL when none. */
static const struct scan_lost_tree *adopted_tree(struct fsck_ctx *c, const struct tentry *t)
{
    uint64_t top = t->e.subtree;
    if (!t->adopted || top == 0 || !lost_index(c))
        return NULL;
    const struct scan_lost_tree *lt;
    size_t n = scan_lost_trees(c->scan, &lt);
    for (size_t k = lost_first(c, top); k < c->nlost_data && c->lost_data[k].blk == top; k++)
        if (c->lost_data[k].top == top && c->lost_data[k].tree < n)
            return &lt[c->lost_data[k].tree];
    return NULL;
}

/* Did the scan give blk to a lost tree other than the one at top, as its
 * data or one of its extenders? */
static bool other_tree_data(struct fsck_ctx *c, uint64_t blk, uint64_t top)
{
    if (!lost_index(c))
        return false;
    for (size_t k = lost_first(c, blk); k < c->nlost_data && c->lost_data[k].blk == blk; k++)
        if (c->lost_data[k].top != top)
            return true;
    return false;
}

/* Did the scan give blk to an entry other than w's: an orphaned or
 * deleted file's own block, extender or data?  Not a data block that
 * entry maps only past its size: that holds none of its bytes. */
static bool other_entry_block(const struct fwalk *w, uint64_t blk)
{
    const struct scan_result *r = w->c->scan;
    const struct scan_block *map = scan_blocks(r);
    if (blk >= scan_block_count(r) || map[blk].owner == 0 || map[blk].owner == w->t->sid)
        return false;
    const struct scan_entry *ents;
    size_t n = scan_entries(r, &ents);
    const struct scan_block *m = &map[blk];
    bool data = m->cls == SCAN_BLK_DATA || m->cls == SCAN_BLK_LEAKED;
    return !(data && m->owner <= n && m->index >= ents[m->owner - 1].blocks_needed);
}

/* May the file that takes a lost tree claim blk at file block fb?  Not
 * when the scan gave blk to another lost tree: an old extender's slots
 * may name that tree's blocks; nor when it gave it to another file (an
 * orphan's data): the write took a freed file's blocks and its data
 * never landed there (correct:753 state 5577, bit 6 of byte 9 of chain
 * block 1010 flipped: the list read as cut, /a0002.jpg came back as an
 * orphan, and /notes-0092.txt's write, which had taken its blocks, took
 * them again, both files mapping them after the repair).  A block the
 * scan left out of every tree (one the free list names, a leaked block a
 * mark explains) the file's own walk may keep, but not a chain block of
 * the free list: the writer made a freed data block the list's next chain
 * block, and its bytes are the list's now (correct:822 state 8148, chain
 * block 925, which the old extender 643 of the tree at 983 named). */
static bool tree_gives(const struct fwalk *w, uint64_t fb, uint64_t blk)
{
    if (w->lt == NULL || (fb < w->lt->ndata && w->lt->data[fb] == blk))
        return true;
    const struct scan_result *r = w->c->scan;
    if (blk < scan_block_count(r) && scan_blocks(r)[blk].cls == SCAN_BLK_CHAIN)
        return false;
    return !other_tree_data(w->c, blk, w->lt->top) && !other_entry_block(w, blk);
}

static enum lanyfs_err fw_init(struct fwalk *w, struct fsck_ctx *c, uint32_t i)
{
    memset(w, 0, sizeof(*w));
    w->c = c;
    w->who = i;
    w->t = &c->te[i];
    w->allowed = w->t->file_allowed;
    bool kept = c->kind[w->t->block] == OWN_KEEP;
    w->ekind = kept ? OWN_KEEP : OWN_EXT;
    w->dkind = kept ? OWN_KEEP : OWN_DATA;
    w->needed = lanyfs_geom_blocks_for_size(&c->g, w->t->e.size);
    if (w->allowed && (w->t->marks & FSCK_M_FIRST_OVER) && w->t->cut_to < w->needed)
        w->needed = w->t->cut_to;
    w->lt = adopted_tree(c, w->t);
    w->seen = lanyfs_blockset_new();
    if (w->seen == NULL)
        return lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    for (unsigned l = 0; l < FSCK_LEVEL_MAX + 2; l++) {
        w->buf[l] = malloc(c->g.blocksize);
        if (w->buf[l] == NULL)
            return lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    }
    return LANYFS_OK;
}

static void fw_free(struct fwalk *w)
{
    lanyfs_blockset_free(w->seen);
    for (unsigned l = 0; l < FSCK_LEVEL_MAX + 2; l++)
        free(w->buf[l]);
}

/*
 * Read blk as an extender of the given level (any level up to the most a
 * device needs when level < 0) into buf; false when it is not one.
 */
static bool read_ext(struct fwalk *w, uint64_t blk, int level, uint8_t *buf)
{
    struct fsck_ctx *c = w->c;
    if (blk == 0 || blk >= c->nblocks)
        return false;
    if (lanyfs_fs_read_block(c->fs, blk, buf, NULL) != LANYFS_OK)
        return false;
    struct lanyfs_ext_hdr h;
    lanyfs_ext_decode(&h, buf);
    if (h.type != LANYFS_TYPE_EXT || h.level > FSCK_LEVEL_MAX)
        return false;
    if (level >= 0 && h.level != (unsigned)level)
        return false;
    return true;
}

uint64_t fsck_slot_base(const struct lanyfs_geom *g, uint64_t base, unsigned level, uint32_t i)
{
    uint64_t span = lanyfs_geom_pow(g, level);
    if (span != 0 && i > (UINT64_MAX - base) / span)
        return UINT64_MAX;
    return base + (uint64_t)i * span;
}

/*
 * Does the extender in b (level, first file block base) map anything
 * within the size?  One below the top that does not is dropped with its
 * slot, not kept empty: an empty level-0 extender linked last is the mark
 * of the driver's growth loop (SPEC-9.7), which a rerun would report.
 */
static bool maps_within(const struct fwalk *w, const uint8_t *b, unsigned level, uint64_t base)
{
    const struct fsck_ctx *c = w->c;
    for (uint32_t i = 0; i < c->g.extmax; i++) {
        uint64_t v = lanyfs_ext_slot(&c->g, b, i);
        if (v != 0 && v < c->nblocks && fsck_slot_base(&c->g, base, level, i) < w->needed)
            return true;
    }
    return false;
}

/* The block slot i of the level-0 extender blk maps, v as it reads: the
 * block of the file's run where the scan found the slot flipped. */
static uint64_t slot_value(const struct fwalk *w, uint64_t blk, uint32_t i, uint64_t v)
{
    const struct fsck_ctx *c = w->c;
    if (!w->allowed || c->nfix == 0)
        return v;
    /* c->fix is sorted by extender and slot (plan.c): a crafted image with
     * many flipped slots costs a search per slot, not a pass. */
    size_t lo = 0, hi = c->nfix;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct slotfix *f = &c->fix[mid];
        if (f->ext < blk || (f->ext == blk && f->slot < i))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < c->nfix && c->fix[lo].ext == blk && c->fix[lo].slot == i; lo++)
        if (c->fix[lo].from == v)
            return c->fix[lo].to;
    return v;
}

/* ---- claim ------------------------------------------------------------------------ */

static bool other_file(const struct fwalk *w, uint64_t blk);
static bool orphans_share(const struct fwalk *w, uint64_t blk);

static void claim_ext(struct fwalk *w, uint64_t blk, unsigned level, uint64_t base,
                      unsigned depth)
{
    struct fsck_ctx *c = w->c;
    if ((w->allowed && base >= w->needed) || depth > FSCK_LEVEL_MAX)
        return;
    uint8_t *b = w->buf[depth];
    if (!read_ext(w, blk, (int)level, b) ||
        (w->allowed && depth > 0 && !maps_within(w, b, level, base)))
        return;
    if (!fsck_claim(c, blk, w->ekind, w->who) && w->t->adopted && w->allowed &&
        other_file(w, blk) && !orphans_share(w, blk))
        return; /* another file's block, which build_ext unlinks: nothing below is ours */
    for (uint32_t i = 0; i < c->g.extmax; i++) {
        uint64_t v = lanyfs_ext_slot(&c->g, b, i);
        if (v == 0 || v >= c->nblocks)
            continue;
        uint64_t fb = fsck_slot_base(&c->g, base, level, i);
        if (w->allowed && fb >= w->needed)
            continue;
        if (level == 0) {
            uint64_t fixed = slot_value(w, blk, i, v);
            if (fixed != 0 && tree_gives(w, fb, fixed))
                fsck_claim(c, fixed, w->dkind, w->who);
        } else {
            claim_ext(w, v, level - 1, fb, depth + 1); /* uses deeper buffers only */
        }
    }
}

enum lanyfs_err fsck_file_claim(struct fsck_ctx *c, uint32_t i)
{
    struct fwalk w;
    enum lanyfs_err rc = fw_init(&w, c, i);
    if (rc != LANYFS_OK)
        goto out;
    uint64_t top = w.t->e.subtree;
    if (top == 0 || !read_ext(&w, top, -1, w.buf[0]))
        goto out;
    struct lanyfs_ext_hdr h;
    lanyfs_ext_decode(&h, w.buf[0]);
    claim_ext(&w, top, h.level, 0, 0);
out:
    fw_free(&w);
    return rc;
}

/* ---- build ------------------------------------------------------------------------ */

/*
 * Is blk held by this file as kind k, met for the first time in this walk?
 * A block the file maps twice is kept at its first place and copied at the
 * others.
 */
static bool mine(const struct fwalk *w, uint64_t blk, enum fsck_own k)
{
    const struct fsck_ctx *c = w->c;
    if (blk >= c->nblocks || c->kind[blk] != k || c->owner[blk] != w->who)
        return false;
    return lanyfs_blockset_add(w->seen, blk) == 1;
}

/* Is blk held by another file's tree? */
static bool other_file(const struct fwalk *w, uint64_t blk)
{
    const struct fsck_ctx *c = w->c;
    if (blk >= c->nblocks)
        return false;
    uint8_t k = c->kind[blk];
    if (k != OWN_EXT && k != OWN_DATA && k != OWN_KEEP)
        return false;
    if (c->owner[blk] == w->who)
        return lanyfs_blockset_has(w->seen, blk); /* met before: a second mapping */
    return c->owner[blk] != FSCK_NONE;
}

/*
 * Two relinked orphans that map the same block: either map may be the one
 * a flipped slot made, and nothing on the disk tells which, so, as for live
 * files, the second keeps a copy instead of losing the block.  (An orphan
 * whose block a live file holds loses it: live files' blocks never reach
 * the free list, so the orphan's map is the older one.)
 */
static bool orphans_share(const struct fwalk *w, uint64_t blk)
{
    const struct fsck_ctx *c = w->c;
    if (!w->t->orphan || !c->allow_clone || blk >= c->nblocks)
        return false;
    uint32_t o = c->owner[blk];
    return o != FSCK_NONE && o < c->nte && o != w->who && c->te[o].orphan;
}

static bool add_edit(struct fsck_ctx *c, uint64_t blk, uint32_t slot, struct ref v)
{
    if (c->nxe == c->capxe) {
        size_t ncap = c->capxe ? c->capxe * 2 : 64;
        void *p = realloc(c->xe, ncap * sizeof(*c->xe));
        if (p == NULL)
            return false;
        c->xe = p;
        c->capxe = ncap;
    }
    c->xe[c->nxe++] = (struct xedit){.block = blk, .slot = slot,
                                      .value = v.nref ? v.nref - 1 : v.blk,
                                      .to_new = v.nref != 0};
    return true;
}

/* A copy of data block src for this file. */
static struct ref copy_data(struct fwalk *w, uint64_t src)
{
    uint32_t k = fsck_newblk_add(w->c, src, NULL, FSCK_LEVEL_MAX + 2);
    if (k == 0) {
        w->c->st.uncopied++; /* no block left: it stays shared (driver.c says so) */
        return (struct ref){.blk = src};
    }
    w->c->st.cloned++;
    return (struct ref){.nref = k};
}

/*
 * The value the parent's pointer to the level-`level` extender blk must
 * take.  blk has been checked to be such an extender.
 */
static struct ref build_ext(struct fwalk *w, uint64_t blk, unsigned level, uint64_t base,
                            unsigned depth, enum lanyfs_err *rc)
{
    struct fsck_ctx *c = w->c;
    struct ref keep = {.blk = blk};
    if (w->allowed && base >= w->needed)
        return (struct ref){0};
    bool own = mine(w, blk, w->ekind);
    uint8_t *b = w->buf[depth];
    bool readable = read_ext(w, blk, (int)level, b);
    if (w->allowed && depth > 0 && readable && !maps_within(w, b, level, base))
        return (struct ref){0}; /* maps nothing the file keeps */
    if (!own && w->t->adopted && w->allowed && other_file(w, blk) && !orphans_share(w, blk))
        return (struct ref){0}; /* another file's extender: not the lost tree's or orphan's */
    if ((!own && !(c->allow_clone && other_file(w, blk))) || !readable) {
        /* Left as it is: count what it may map as backed. */
        uint64_t cap = lanyfs_geom_tree_capacity(&c->g, level);
        uint64_t top = base > UINT64_MAX - cap ? UINT64_MAX : base + cap;
        if (top > w->needed)
            top = w->needed;
        if (top > w->top_mapped)
            w->top_mapped = top;
        return keep;
    }
    uint32_t n = c->g.extmax;
    struct ref *nv = calloc(n, sizeof(*nv));
    if (nv == NULL) {
        *rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        return keep;
    }
    bool changed = false;
    for (uint32_t i = 0; i < n && *rc == LANYFS_OK; i++) {
        uint64_t v = lanyfs_ext_slot(&c->g, b, i);
        nv[i].blk = v;
        if (v == 0)
            continue;
        uint64_t fb = fsck_slot_base(&c->g, base, level, i);
        if (w->allowed && fb >= w->needed) {
            nv[i].blk = 0;
        } else if (v >= c->nblocks) {
            if (w->allowed)
                nv[i].blk = 0;
        } else if (level == 0) {
            uint64_t fixed = slot_value(w, blk, i, v);
            if (fixed != v && (fixed == 0 || mine(w, fixed, w->dkind))) {
                nv[i].blk = fixed; /* the block of its run, or a hole (EXT_*_FLIPPED) */
            } else if (mine(w, v, w->dkind)) {
                /* ours */
            } else if (other_file(w, v)) {
                if (w->t->adopted && w->allowed && (!orphans_share(w, v) || !tree_gives(w, fb, v)))
                    nv[i].blk = 0; /* another file's block: not the lost tree's */
                else if (c->allow_clone)
                    nv[i] = copy_data(w, v);
            } else if (c->kind[v] == OWN_KEEP && c->owner[v] == FSCK_NONE) {
                /* unreadable: kept as it is */
            } else if (c->kind[v] != OWN_FREE && w->allowed) {
                nv[i].blk = 0; /* the superblock, an entry, or a block kept for another */
            } else if (w->allowed && !tree_gives(w, fb, v)) {
                nv[i].blk = 0; /* a block the scan gave to another lost tree */
            }
        } else if (depth + 1 > FSCK_LEVEL_MAX ||
                   !read_ext(w, v, (int)level - 1, w->buf[depth + 1])) {
            if (w->allowed)
                nv[i].blk = 0;
        } else {
            nv[i] = build_ext(w, v, level - 1, fb, depth + 1, rc);
            /* build_ext used deeper buffers only: b is intact. */
        }
        if (nv[i].nref != 0 || nv[i].blk != v) {
            changed = true;
            if (nv[i].nref == 0 && nv[i].blk == 0)
                c->st.slots_cleared++;
        }
        if (level == 0 && (nv[i].nref != 0 || nv[i].blk != 0) && fb != UINT64_MAX &&
            fb + 1 > w->top_mapped)
            w->top_mapped = fb + 1;
    }
    struct ref out = keep;
    if (*rc != LANYFS_OK)
        goto done;
    if (!own) {
        /* A copy of a shared extender: fresh contents, slots resolved later. */
        uint8_t *data = malloc(c->g.blocksize);
        if (data == NULL) {
            *rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
            goto done;
        }
        memcpy(data, b, c->g.blocksize);
        struct lanyfs_ext_hdr h;
        lanyfs_ext_decode(&h, data);
        h.wrcnt = 0;
        lanyfs_ext_encode(&h, data);
        for (uint32_t i = 0; i < n; i++)
            lanyfs_ext_set_slot(&c->g, data, i, nv[i].nref ? 0 : nv[i].blk);
        uint32_t k = fsck_newblk_add(c, 0, data, FSCK_LEVEL_MAX + 1 - level);
        if (k == 0) {
            free(data);
            c->st.uncopied++;
            goto done;
        }
        struct newblk *nb = &c->nb[k - 1];
        for (uint32_t i = 0; i < n; i++) {
            if (nv[i].nref == 0)
                continue;
            if (nb->slot_new == NULL) {
                nb->slot_new = calloc(n, sizeof(*nb->slot_new));
                if (nb->slot_new == NULL) {
                    *rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK,
                                      "out of memory");
                    goto done;
                }
            }
            nb->slot_new[i] = nv[i].nref;
        }
        c->st.cloned++;
        out = (struct ref){.nref = k};
        goto done;
    }
    if (changed) {
        for (uint32_t i = 0; i < n; i++) {
            uint64_t v = lanyfs_ext_slot(&c->g, b, i);
            if (nv[i].nref == 0 && nv[i].blk == v)
                continue;
            if (!add_edit(c, blk, i, nv[i])) {
                *rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
                goto done;
            }
        }
        fsck_note(c, _("extender %" PRIu64 ": slots change"), blk);
    }
done:
    free(nv);
    return out;
}

void fsck_entry_marks(struct fsck_ctx *c, uint32_t i)
{
    struct tentry *t = &c->te[i];
    if ((t->marks & FSCK_M_TIME) && fsck_allowed(c, FSCK_CAT_TIME, t->sid)) {
        if (!lanyfs_ts_is_unset(&t->e.created) && !lanyfs_ts_is_valid(&t->e.created)) {
            t->e.created = c->now;
            t->fields_dirty = true;
        }
        if (!lanyfs_ts_is_unset(&t->e.modified) && !lanyfs_ts_is_valid(&t->e.modified)) {
            t->e.modified = c->now;
            t->fields_dirty = true;
        }
    }
    if ((t->marks & FSCK_M_NEVER_WRITTEN) && t->file_allowed)
        t->fields_dirty = true;
    if ((t->marks & FSCK_M_TORN) && c->allow_tree)
        t->fields_dirty = true;
}

enum lanyfs_err fsck_file_build(struct fsck_ctx *c, uint32_t i)
{
    struct fwalk w;
    enum lanyfs_err rc = fw_init(&w, c, i);
    struct tentry *t = &c->te[i];
    if (rc != LANYFS_OK)
        goto out;
    fsck_entry_marks(c, i);
    uint64_t top = t->e.subtree;
    struct ref r = {.blk = top};
    bool cleared = false;
    if (top != 0) {
        if (!read_ext(&w, top, -1, w.buf[0])) {
            if (w.allowed) {
                r.blk = 0;
                cleared = true;
                c->st.slots_cleared++;
            }
        } else {
            struct lanyfs_ext_hdr h;
            lanyfs_ext_decode(&h, w.buf[0]);
            r = build_ext(&w, top, h.level, 0, 0, &rc);
            if (rc != LANYFS_OK)
                goto out;
            if (r.nref == 0 && r.blk == 0)
                cleared = true;
        }
    }
    if (r.nref != 0) {
        t->data_new = r.nref;
        t->fields_dirty = true;
    } else if (r.blk != top) {
        t->e.subtree = r.blk;
        t->fields_dirty = true;
    }
    if (w.allowed) {
        uint64_t size = t->e.size;
        uint64_t bs = c->g.blocksize;
        if ((t->marks & FSCK_M_FIRST_OVER) && t->cut_to < lanyfs_geom_blocks_for_size(&c->g, size))
            size = t->cut_to * bs;
        if ((t->marks & FSCK_M_UNMAPPED) || (cleared && t->e.size > 0)) {
            uint64_t backed = w.top_mapped > UINT64_MAX / bs ? UINT64_MAX : w.top_mapped * bs;
            if (backed < size)
                size = backed;
        }
        if (size != t->e.size) {
            fsck_note(c, _("entry %" PRIu64 ": size %" PRIu64 " -> %" PRIu64), t->block, t->e.size,
                      size);
            t->e.size = size;
            t->fields_dirty = true;
            c->st.sizes_fixed++;
        }
    }
out:
    fw_free(&w);
    return rc;
}

/* ---- undelete ---------------------------------------------------------------------- */

bool fsck_undelete_claim(struct fsck_ctx *c, uint32_t i)
{
    struct tentry *t = &c->te[i];
    const struct scan_entry *x = scan_entry_by_id(c->scan, t->sid);
    uint64_t needed = lanyfs_geom_blocks_for_size(&c->g, t->e.size);
    if (x == NULL || x->ndata < needed)
        return false;
    for (uint64_t k = 0; k < needed; k++) {
        uint64_t b = x->data[k];
        if (b == 0 || b >= c->nblocks || c->kind[b] != OWN_FREE)
            return false;
        for (uint64_t j = 0; j < k; j++)
            if (x->data[j] == b)
                return false;
    }
    for (uint64_t k = 0; k < needed; k++)
        fsck_claim(c, x->data[k], OWN_DATA, i);
    return true;
}

/* A new extender of level `level` mapping data[base ..] (count file blocks). */
static struct ref new_ext(struct fsck_ctx *c, const uint64_t *data, uint64_t count,
                          unsigned level, enum lanyfs_err *rc)
{
    uint8_t *b = calloc(1, c->g.blocksize);
    uint32_t *sn = calloc(c->g.extmax, sizeof(*sn));
    if (b == NULL || sn == NULL) {
        free(b);
        free(sn);
        *rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        return (struct ref){0};
    }
    struct lanyfs_ext_hdr h = {.type = LANYFS_TYPE_EXT, .wrcnt = 0, .level = (uint8_t)level};
    lanyfs_ext_encode(&h, b);
    uint64_t span = lanyfs_geom_pow(&c->g, level);
    bool any_new = false;
    for (uint32_t i = 0; i < c->g.extmax && *rc == LANYFS_OK; i++) {
        uint64_t first = (uint64_t)i * span;
        if (first >= count)
            break;
        if (level == 0) {
            lanyfs_ext_set_slot(&c->g, b, i, data[first]);
            continue;
        }
        uint64_t n = count - first < span ? count - first : span;
        struct ref child = new_ext(c, data + first, n, level - 1, rc);
        if (child.nref != 0) {
            sn[i] = child.nref;
            any_new = true;
        }
    }
    if (*rc != LANYFS_OK) {
        free(b);
        free(sn);
        return (struct ref){0};
    }
    uint32_t k = fsck_newblk_add(c, 0, b, FSCK_LEVEL_MAX + 1 - level);
    if (k == 0) {
        free(b);
        free(sn);
        return (struct ref){0};
    }
    if (any_new)
        c->nb[k - 1].slot_new = sn;
    else
        free(sn);
    return (struct ref){.nref = k};
}

enum lanyfs_err fsck_undelete_build(struct fsck_ctx *c, uint32_t i)
{
    enum lanyfs_err rc = LANYFS_OK;
    struct tentry *t = &c->te[i];
    const struct scan_entry *x = scan_entry_by_id(c->scan, t->sid);
    uint64_t needed = lanyfs_geom_blocks_for_size(&c->g, t->e.size);
    t->fields_dirty = true;
    t->e.subtree = 0;
    if (needed == 0 || x == NULL)
        return LANYFS_OK;
    unsigned level = lanyfs_geom_level_for(&c->g, needed);
    struct ref r = new_ext(c, x->data, needed, level, &rc);
    if (rc == LANYFS_OK && r.nref != 0) {
        t->data_new = r.nref;
        c->st.undeleted++;
    }
    return rc;
}

/* ---- phase 2 ----------------------------------------------------------------------- */

static int cmp_edit(const void *a, const void *b)
{
    const struct xedit *x = a, *y = b;
    if (x->block != y->block)
        return x->block < y->block ? -1 : 1;
    return x->slot < y->slot ? -1 : x->slot > y->slot;
}

enum lanyfs_err fsck_file_write(struct fsck_ctx *c)
{
    enum lanyfs_err rc = LANYFS_OK;
    uint8_t *b = malloc(c->g.blocksize);
    if (b == NULL)
        return lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    if (c->nxe > 0)
        qsort(c->xe, c->nxe, sizeof(*c->xe), cmp_edit);
    for (size_t i = 0; i < c->nxe;) {
        uint64_t blk = c->xe[i].block;
        rc = fsck_read(c, blk, b);
        if (rc != LANYFS_OK)
            goto out;
        for (; i < c->nxe && c->xe[i].block == blk; i++) {
            const struct xedit *e = &c->xe[i];
            uint64_t v = e->to_new ? c->nb[e->value].dst : e->value;
            lanyfs_ext_set_slot(&c->g, b, e->slot, v);
        }
        struct lanyfs_ext_hdr h;
        lanyfs_ext_decode(&h, b);
        h.wrcnt++;
        lanyfs_ext_encode(&h, b);
        rc = fsck_write(c, blk, b);
        if (rc != LANYFS_OK)
            goto out;
    }
    /* New files of lost trees: whole blocks, in blocks the old free list
     * does not list (plan.c), before any tree links them (phase 3). */
    for (size_t i = 0; i < c->nte; i++) {
        struct tentry *t = &c->te[i];
        if (!t->lost_tree || !t->is_new || t->block == 0 || c->kind[t->block] != OWN_ENTRY)
            continue;
        struct lanyfs_entry e = t->e;
        e.type = LANYFS_TYPE_FILE;
        e.wrcnt = 1;
        e.left = e.right = 0;
        e.subtree = t->data_new ? c->nb[t->data_new - 1].dst : t->e.subtree;
        memset(b, 0, c->g.blocksize);
        lanyfs_entry_encode(&e, b);
        rc = fsck_write(c, t->block, b);
        if (rc != LANYFS_OK)
            goto out;
        t->e.subtree = e.subtree;
        t->data_new = 0;
        t->is_new = false; /* it exists now: its directory links it as any node */
        t->must_write = true;
    }
    for (size_t i = 0; i < c->nte; i++) {
        struct tentry *t = &c->te[i];
        if (!t->fields_dirty || t->is_new || t->block == 0 || c->kind[t->block] != OWN_ENTRY)
            continue;
        rc = fsck_read(c, t->block, b);
        if (rc != LANYFS_OK)
            goto out;
        struct lanyfs_entry e;
        lanyfs_entry_decode(&e, b);
        e.subtree = t->data_new ? c->nb[t->data_new - 1].dst : t->e.subtree;
        if (lanyfs_entry_is_file(&e))
            e.size = t->e.size;
        e.created = t->e.created;
        e.modified = t->e.modified;
        e.wrcnt++;
        lanyfs_entry_encode(&e, b);
        memset(b + LANYFS_EN_USED, 0, c->g.blocksize - LANYFS_EN_USED);
        rc = fsck_write(c, t->block, b);
        if (rc != LANYFS_OK)
            goto out;
        t->e.subtree = e.subtree;
        t->data_new = 0;
    }
out:
    free(b);
    return rc;
}
