/*
 * extwrite.c -- growing, mapping and truncating a file's extender tree.
 *
 * Correct mode builds the tree SPEC-§7 describes: a new top level when the
 * tree is full, each missing child and data block allocated on the path to
 * the file block written, extenders freed with the data they map, and the
 * extender rewritten BEFORE the blocks it stopped mapping are freed, so an
 * interruption leaks blocks instead of cross-linking them.
 *
 * Driver mode does what lanyfs_getblk, __lanyfs_ext_grow, lanyfs_ext_iblock
 * and lanyfs_ext_truncate do (SPEC-§8, §9.4, §9.7, §9.8, §9.13, §9.14):
 * every call that may allocate grows the tree by one data block into the
 * first empty slot, whatever block it then maps; a full tree gets a new top
 * level but no child; at level >= 1 a full child gets a new sibling and is
 * then examined again, so the loop fills the device with empty extenders;
 * mapping uses the squaring power helper; truncation frees data blocks in
 * slot order, then rewrites the extender, and never frees an extender.
 *
 * Storing a slot does not change an extender's counter; a truncate adds one
 * to every extender it visits.  New extenders start cleared at 0.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writer_priv.h"

#define LEVEL_MAX 63

struct ext {
    uint64_t blk;                     /* block number */
    struct lanyfs_ext_hdr h;          /* decoded header */
    uint8_t b[LANYFS_BLOCKSIZE_MAX];  /* contents */
};

static enum lanyfs_err ext_read(struct lanyfs_writer *w, uint64_t blk, struct ext *x,
                                struct lanyfs_error *err)
{
    if (blk == 0 || blk >= w->g->blocks)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                           "extender block %" PRIu64 " lies outside the device", blk);
    enum lanyfs_err rc = lanyfs_fs_read_block(w->fs, blk, x->b, err);
    if (rc != LANYFS_OK)
        return rc;
    lanyfs_ext_decode(&x->h, x->b);
    if (x->h.type != LANYFS_TYPE_EXT || x->h.level > LEVEL_MAX)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                           "block %" PRIu64 " is mapped as an extender but has type 0x%02x "
                           "level %u",
                           blk, x->h.type, x->h.level);
    x->blk = blk;
    return LANYFS_OK;
}

static enum lanyfs_err ext_write(struct lanyfs_writer *w, struct ext *x, struct lanyfs_error *err)
{
    lanyfs_ext_encode(&x->h, x->b);
    return wr_direct(w, x->blk, x->b, err);
}

/* Allocate and write a new, cleared extender of the given level. */
static enum lanyfs_err ext_new(struct lanyfs_writer *w, unsigned level, struct ext *x,
                               struct lanyfs_error *err)
{
    enum lanyfs_err rc = wr_alloc(w, &x->blk, err);
    if (rc != LANYFS_OK)
        return rc;
    memset(x->b, 0, w->g->blocksize);
    x->h = (struct lanyfs_ext_hdr){LANYFS_TYPE_EXT, 0, (uint8_t)level};
    return ext_write(w, x, err);
}

/* ---- correct mode -------------------------------------------------------- */

static enum lanyfs_err getblk_correct(struct lanyfs_writer *w, struct winode *f, uint64_t fblk,
                                      uint64_t *dblk, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    struct ext *x = malloc(sizeof(*x));
    enum lanyfs_err rc;
    if (x == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
    if (f->e.subtree == 0) {
        if ((rc = ext_new(w, 0, x, err)) != LANYFS_OK)
            goto out;
        f->e.subtree = x->blk;
        wr_idirty(w, f);
    } else if ((rc = ext_read(w, f->e.subtree, x, err)) != LANYFS_OK) {
        goto out;
    }
    while (lanyfs_geom_tree_capacity(g, x->h.level) <= fblk) {
        uint64_t old = x->blk;
        unsigned level = x->h.level + 1u;
        if (level > LEVEL_MAX) {
            rc = lanyfs_fail(err, LANYFS_E_FBIG, f->blk, "file block %" PRIu64 " is beyond "
                             "any extender tree", fblk);
            goto out;
        }
        if ((rc = ext_new(w, level, x, err)) != LANYFS_OK)
            goto out;
        lanyfs_ext_set_slot(g, x->b, 0, old);
        if ((rc = ext_write(w, x, err)) != LANYFS_OK)
            goto out;
        f->e.subtree = x->blk;
        wr_idirty(w, f);
    }
    for (;;) {
        unsigned level = x->h.level;
        uint32_t idx = (uint32_t)((fblk / lanyfs_geom_pow(g, level)) % g->extmax);
        uint64_t slot = lanyfs_ext_slot(g, x->b, idx);
        if (slot != 0 && slot >= g->blocks) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, x->blk,
                             "extender %" PRIu64 " slot %u holds block %" PRIu64
                             ", beyond the device end",
                             x->blk, idx, slot);
            goto out;
        }
        if (slot != 0 && level == 0) {
            *dblk = slot;
            rc = LANYFS_OK;
            goto out;
        }
        if (slot == 0) {
            struct ext *child = NULL;
            if (level == 0) {
                if ((rc = wr_alloc(w, &slot, err)) != LANYFS_OK)
                    goto out;
            } else {
                child = malloc(sizeof(*child));
                if (child == NULL) {
                    rc = lanyfs_fail(err, LANYFS_E_NOMEM, x->blk, "out of memory");
                    goto out;
                }
                rc = ext_new(w, level - 1, child, err);
                slot = child->blk;
                free(child);
                if (rc != LANYFS_OK)
                    goto out;
            }
            lanyfs_ext_set_slot(g, x->b, idx, slot);
            if ((rc = ext_write(w, x, err)) != LANYFS_OK)
                goto out;
            if (level == 0) {
                *dblk = slot;
                goto out;
            }
        }
        if ((rc = ext_read(w, slot, x, err)) != LANYFS_OK)
            goto out;
        if (x->h.level != level - 1) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, slot,
                             "extender %" PRIu64 " has level %u below a level-%u extender",
                             slot, x->h.level, level);
            goto out;
        }
    }
out:
    free(x);
    return rc;
}

/* ---- driver mode --------------------------------------------------------- */

/* The driver's power helper: 1 at level 0, then squaring, in int (SPEC-§9.8). */
static uint64_t driver_pow(uint32_t base, unsigned level)
{
    if (level == 0)
        return 1;
    uint32_t r = base;
    for (unsigned i = 0; i < level; i++)
        r = r * r; /* wraps as the driver's int does on x86 */
    int32_t s = (int32_t)r;
    return s <= 0 ? 0 : (uint64_t)s;
}

enum grow_result { GROW_DONE, GROW_FULL, GROW_FAILED };

/*
 * __lanyfs_ext_grow: add one data block in the first empty slot of the tree
 * below x.  Iterative: descends the last used child at each level.
 */
static enum grow_result grow_driver(struct lanyfs_writer *w, uint64_t top, enum lanyfs_err *rc,
                                    struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    struct ext *path = malloc((LEVEL_MAX + 1) * sizeof(*path));
    enum grow_result res = GROW_FAILED;
    if (path == NULL) {
        *rc = lanyfs_fail(err, LANYFS_E_NOMEM, top, "out of memory");
        return GROW_FAILED;
    }
    if ((*rc = ext_read(w, top, &path[0], err)) != LANYFS_OK)
        goto out;
    /* Walk down the last used child of each level to a level-0 extender. */
    int depth = 0;
    uint32_t last_idx[LEVEL_MAX + 1];
    while (path[depth].h.level > 0) {
        uint32_t last = UINT32_MAX;
        for (uint32_t i = 0; i < g->extmax; i++)
            if (lanyfs_ext_slot(g, path[depth].b, i) != 0)
                last = i;
        if (last == UINT32_MAX) {
            *rc = lanyfs_fail(err, LANYFS_E_INVAL, path[depth].blk,
                              "extender %" PRIu64 " at level %u maps nothing",
                              path[depth].blk, path[depth].h.level);
            goto out;
        }
        last_idx[depth] = last;
        uint64_t child = lanyfs_ext_slot(g, path[depth].b, last);
        if ((*rc = ext_read(w, child, &path[depth + 1], err)) != LANYFS_OK)
            goto out;
        depth++;
        if (depth > LEVEL_MAX)
            goto out;
    }
    /* Level 0: the first empty slot gets a new data block. */
    struct ext *leaf = &path[depth];
    for (uint32_t i = 0; i < g->extmax; i++) {
        if (lanyfs_ext_slot(g, leaf->b, i) != 0)
            continue;
        uint64_t d;
        if ((*rc = wr_alloc(w, &d, err)) != LANYFS_OK)
            goto out;
        lanyfs_ext_set_slot(g, leaf->b, i, d);
        *rc = ext_write(w, leaf, err);
        res = *rc == LANYFS_OK ? GROW_DONE : GROW_FAILED;
        goto out;
    }
    /* Full: the parent stores a new sibling after the full child, then looks
     * at the same full child again, for ever until allocation fails. */
    for (int d = depth - 1; d >= 0; d--) {
        struct ext *p = &path[d];
        uint32_t next = last_idx[d] + 1;
        if (next >= g->extmax)
            continue; /* this level is full as well */
        for (;;) {
            struct ext child;
            if ((*rc = ext_new(w, p->h.level - 1u, &child, err)) != LANYFS_OK)
                goto out; /* allocation failed: the loop ends (SPEC-§9.7) */
            lanyfs_ext_set_slot(g, p->b, next, child.blk);
            if ((*rc = ext_write(w, p, err)) != LANYFS_OK)
                goto out;
        }
    }
    *rc = LANYFS_OK;
    res = GROW_FULL;
out:
    free(path);
    return res;
}

static enum lanyfs_err getblk_driver(struct lanyfs_writer *w, struct winode *f, uint64_t fblk,
                                     uint64_t *dblk, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    enum lanyfs_err rc = LANYFS_OK;
    struct lanyfs_error gerr;
    struct ext *x = malloc(sizeof(*x));
    if (x == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
    *dblk = 0;
    /* lanyfs_ext_grow */
    if (f->e.subtree == 0) {
        rc = ext_new(w, 0, x, &gerr);
        if (rc == LANYFS_OK) {
            f->e.subtree = x->blk;
            wr_idirty(w, f);
        }
    }
    if (f->e.subtree != 0) {
        enum grow_result gr = grow_driver(w, f->e.subtree, &rc, &gerr);
        if (gr == GROW_FULL) {
            uint64_t old = f->e.subtree;
            if ((rc = ext_read(w, old, x, &gerr)) == LANYFS_OK) {
                unsigned level = x->h.level + 1u;
                if ((rc = ext_new(w, level, x, &gerr)) == LANYFS_OK) {
                    lanyfs_ext_set_slot(g, x->b, 0, old);
                    if ((rc = ext_write(w, x, &gerr)) == LANYFS_OK) {
                        f->e.subtree = x->blk;
                        wr_idirty(w, f);
                    }
                }
            }
        }
    }
    if (rc != LANYFS_OK && rc != LANYFS_E_NOSPC) {
        if (err)
            *err = gerr;
        goto out;
    }
    /* A failed allocation does not stop the driver: it maps what it has. */
    /* lanyfs_ext_iblock */
    if (f->e.subtree == 0) {
        rc = LANYFS_OK; /* a hole: block 0 */
        goto out;
    }
    if ((rc = ext_read(w, f->e.subtree, x, err)) != LANYFS_OK)
        goto out;
    for (;;) {
        unsigned level = x->h.level;
        uint64_t span = driver_pow(g->extmax, level);
        if (span == 0) {
            rc = lanyfs_fail(err, LANYFS_E_INVAL, x->blk,
                             "the 2012 driver cannot map file block %" PRIu64
                             " (its power helper overflows at level %u)",
                             fblk, level);
            goto out;
        }
        uint32_t idx = (uint32_t)((fblk / span) % g->extmax);
        uint64_t slot = lanyfs_ext_slot(g, x->b, idx);
        if (level == 0) {
            *dblk = slot < g->blocks ? slot : 0;
            rc = LANYFS_OK;
            goto out;
        }
        if (slot == 0) {
            rc = lanyfs_fail(err, LANYFS_E_INVAL, x->blk,
                             "the 2012 driver meets a hole at level %u of extender %" PRIu64
                             " (EINVAL)",
                             level, x->blk);
            goto out;
        }
        if ((rc = ext_read(w, slot, x, err)) != LANYFS_OK)
            goto out;
    }
out:
    free(x);
    return rc;
}

enum lanyfs_err wr_getblk(struct lanyfs_writer *w, struct winode *file, uint64_t fblk,
                          uint64_t *dblk, struct lanyfs_error *err)
{
    *dblk = 0;
    if (drv(w))
        return getblk_driver(w, file, fblk, dblk, err);
    return getblk_correct(w, file, fblk, dblk, err);
}

/* ---- truncation ---------------------------------------------------------- */

struct tframe {
    struct ext x;       /* the extender */
    uint64_t base;      /* first file block it maps */
    uint32_t next;      /* next slot to visit */
    bool changed;       /* a slot was cleared */
};

/*
 * Visit every extender of the tree in post order.  Data blocks of file
 * blocks >= keep are freed; in correct mode also extenders that map only
 * such blocks.  Frames are heap-allocated, at most LEVEL_MAX + 1 deep.
 */
enum lanyfs_err wr_ext_truncate(struct lanyfs_writer *w, struct winode *f, uint64_t keep,
                                struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    if (f->e.subtree == 0)
        return LANYFS_OK;
    struct tframe *st = malloc((LEVEL_MAX + 2) * sizeof(*st));
    uint64_t *tofree = NULL;
    size_t nfree = 0, capfree = 0;
    enum lanyfs_err rc;
    if (st == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
    int depth = 0;
    if ((rc = ext_read(w, f->e.subtree, &st[0].x, err)) != LANYFS_OK)
        goto out;
    st[0].base = 0;
    st[0].next = 0;
    st[0].changed = false;
    bool top_freed = false;
    while (depth >= 0) {
        struct tframe *fr = &st[depth];
        unsigned level = fr->x.h.level;
        uint64_t span = lanyfs_geom_pow(g, level);
        if (fr->next < g->extmax) {
            uint32_t i = fr->next++;
            uint64_t slot = lanyfs_ext_slot(g, fr->x.b, i);
            if (slot == 0)
                continue;
            uint64_t fb = 0;
            bool overflow = __builtin_mul_overflow((uint64_t)i, span, &fb) ||
                            __builtin_add_overflow(fb, fr->base, &fb);
            if (level == 0) {
                if (overflow || fb < keep)
                    continue;
                if (slot >= g->blocks) {
                    rc = lanyfs_fail(err, LANYFS_E_CORRUPT, fr->x.blk,
                                     "extender %" PRIu64 " slot %u holds block %" PRIu64
                                     ", beyond the device end",
                                     fr->x.blk, i, slot);
                    goto out;
                }
                if (drv(w)) {
                    /* lanyfs_ext_truncate: free, then clear the slot. */
                    if ((rc = wr_free(w, slot, err)) != LANYFS_OK)
                        goto out;
                } else {
                    if (nfree == capfree) {
                        size_t nc = capfree ? capfree * 2 : 64;
                        uint64_t *n = realloc(tofree, nc * sizeof(*n));
                        if (n == NULL) {
                            rc = lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
                            goto out;
                        }
                        tofree = n;
                        capfree = nc;
                    }
                    tofree[nfree++] = slot;
                }
                lanyfs_ext_set_slot(g, fr->x.b, i, 0);
                fr->changed = true;
                continue;
            }
            if (depth + 1 > LEVEL_MAX) {
                rc = lanyfs_fail(err, LANYFS_E_CORRUPT, fr->x.blk, "extender tree too deep");
                goto out;
            }
            struct tframe *c = &st[depth + 1];
            if ((rc = ext_read(w, slot, &c->x, err)) != LANYFS_OK)
                goto out;
            if (c->x.h.level + 1u != level) {
                rc = lanyfs_fail(err, LANYFS_E_CORRUPT, slot,
                                 "extender %" PRIu64 " has level %u below a level-%u extender",
                                 slot, c->x.h.level, level);
                goto out;
            }
            c->base = overflow ? UINT64_MAX : fb;
            c->next = 0;
            c->changed = false;
            depth++;
            continue;
        }
        /* All slots visited: rewrite this extender (a truncate counts). */
        bool whole = fr->base >= keep; /* maps only blocks past keep */
        fr->x.h.wrcnt++;
        if (!drv(w) && whole) {
            /* Correct mode frees it: clear it from its parent first. */
            if (depth > 0) {
                struct tframe *p = &st[depth - 1];
                uint64_t pspan = lanyfs_geom_pow(g, p->x.h.level);
                uint32_t pi = (uint32_t)((fr->base - p->base) / pspan);
                lanyfs_ext_set_slot(g, p->x.b, pi, 0);
                p->changed = true;
            } else {
                top_freed = true;
            }
            if (nfree == capfree) {
                size_t nc = capfree ? capfree * 2 : 64;
                uint64_t *n = realloc(tofree, nc * sizeof(*n));
                if (n == NULL) {
                    rc = lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
                    goto out;
                }
                tofree = n;
                capfree = nc;
            }
            tofree[nfree++] = fr->x.blk;
        } else if ((rc = ext_write(w, &fr->x, err)) != LANYFS_OK) {
            goto out;
        }
        depth--;
    }
    if (top_freed) {
        f->e.subtree = 0;
        wr_idirty(w, f);
        /* The file block must drop its data pointer before the blocks are reused. */
        if ((rc = wr_iwriteback(w, err)) != LANYFS_OK)
            goto out;
    }
    for (size_t i = 0; i < nfree; i++)
        if ((rc = wr_free(w, tofree[i], err)) != LANYFS_OK)
            goto out;
    rc = LANYFS_OK;
out:
    free(tofree);
    free(st);
    return rc;
}

enum lanyfs_err wr_ext_blocks_needed(struct lanyfs_writer *w, struct winode *file,
                                     uint64_t nblocks, uint64_t *need, struct lanyfs_error *err)
{
    (void)err;
    const struct lanyfs_geom *g = w->g;
    /* Blocks a dense tree of n file blocks takes: data plus every extender. */
    uint64_t have = file->e.subtree == 0 ? 0 : lanyfs_geom_blocks_for_size(g, file->e.size);
    uint64_t total_new = 0, total_old = 0;
    for (unsigned level = 0; level <= LEVEL_MAX; level++) {
        uint64_t cap = lanyfs_geom_tree_capacity(g, level);
        total_new += nblocks == 0 ? 0 : (nblocks + cap - 1) / cap;
        total_old += have == 0 ? 0 : (have + cap - 1) / cap;
        if (cap >= nblocks && cap >= have)
            break;
    }
    total_new += nblocks;
    total_old += have;
    *need = total_new > total_old ? total_new - total_old : 0;
    return LANYFS_OK;
}
