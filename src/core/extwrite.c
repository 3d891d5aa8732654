/*
 * extwrite.c -- growing, mapping and truncating a file's extender tree.
 *
 * Correct mode builds the tree SPEC-§7 describes: a new top level when the
 * tree is full, each missing child and data block allocated on the path to
 * the file block written, extenders freed with the data they map, and the
 * extender rewritten BEFORE the blocks it stopped mapping are freed, so an
 * interruption leaks blocks instead of cross-linking them.  Before a write
 * or a truncation, wr_ext_scan checks the whole tree (types, levels, every
 * block inside the device and met once) and counts exactly what the
 * operation will allocate, so nothing is written when it cannot finish.
 *
 * Driver mode does what lanyfs_getblk, lanyfs_ext_grow, __lanyfs_ext_grow,
 * lanyfs_ext_iblock and lanyfs_ext_truncate do (SPEC-§8, §9.4, §9.7, §9.8,
 * §9.13, §9.14):
 *  - every call grows the tree by one data block in the first empty slot of
 *    the last used level-0 extender, whatever block it then maps; a full
 *    tree gets a new top level but no child; at level >= 1 a full last
 *    child gets a new sibling in the next slot, and the same full child is
 *    then examined again, so the loop stores sibling after sibling in that
 *    one slot until allocation fails (the parent is written once, when the
 *    loop ends, as the driver syncs it then); the result of the growth is
 *    ignored, as lanyfs_getblk ignores it;
 *  - mapping and truncation use the driver's power helper, which squares
 *    repeatedly in a 32-bit int (extmax^(2^level)), sign-extended into the
 *    64-bit division; a power of 0 is the driver's division by zero, here
 *    LANYFS_E_INVAL;
 *  - a hole at level 0 maps to block 0, a hole above fails (EINVAL);
 *  - truncation starts each extender at the slot the helper names for the
 *    new size in blocks, passes that size to the first child it descends
 *    into and 0 to the later ones, frees data blocks in slot order, then
 *    rewrites the extender, and never frees an extender.
 * The driver trusts what it reads; here a child must have a lower level
 * than its parent and be met once, so no descent can loop.
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

/* Read a child extender: its level must be below the parent's (exactly one below: exact). */
static enum lanyfs_err ext_read_child(struct lanyfs_writer *w, uint64_t blk,
                                      const struct ext *parent, bool exact, struct ext *x,
                                      struct lanyfs_error *err)
{
    enum lanyfs_err rc = ext_read(w, blk, x, err);
    if (rc != LANYFS_OK)
        return rc;
    bool ok = exact ? x->h.level + 1u == parent->h.level : x->h.level < parent->h.level;
    if (!ok)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                           "extender %" PRIu64 " has level %u below the level-%u extender %" PRIu64,
                           blk, x->h.level, parent->h.level, parent->blk);
    return LANYFS_OK;
}

static enum lanyfs_err ext_write(struct lanyfs_writer *w, struct ext *x, struct lanyfs_error *err)
{
    lanyfs_ext_encode(&x->h, x->b);
    return wr_direct(w, x->blk, x->b, err);
}

/* Allocate and write a new, cleared extender of the given level (lanyfs_ext_create). */
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

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* ---- correct mode: checking and counting --------------------------------- */

/* Level-l extenders (each mapping extmax^(l+1) file blocks) that file blocks [x, y) touch. */
static uint64_t nodes_at(const struct lanyfs_geom *g, unsigned l, uint64_t x, uint64_t y)
{
    uint64_t cap = lanyfs_geom_tree_capacity(g, l);
    return (y - 1) / cap - x / cap + 1;
}

/* Blocks a missing level-c subtree needs for file blocks [x, y): data plus extenders. */
static uint64_t missing(const struct lanyfs_geom *g, int c, uint64_t x, uint64_t y)
{
    uint64_t n = y - x;
    for (int l = 0; l <= c; l++)
        n = add_sat(n, nodes_at(g, (unsigned)l, x, y));
    return n;
}

struct sframe {
    struct ext x;   /* the extender */
    uint64_t base;  /* first file block it maps */
    uint32_t next;  /* next slot to look at */
};

enum lanyfs_err wr_ext_scan(struct lanyfs_writer *w, const struct winode *f, uint64_t first,
                            uint64_t count, uint64_t *need, uint64_t *owned,
                            struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    uint64_t a = first, b = add_sat(first, count);
    uint64_t nneed = 0, nowned = 0;
    struct sframe *st = NULL;
    struct lanyfs_blockset *seen = NULL;
    enum lanyfs_err rc = LANYFS_OK;
    unsigned top = 0;

    if (f->e.subtree == 0) {
        if (count != 0) {
            nneed = 1; /* the first write creates a level-0 top */
            uint64_t y = b < g->extmax ? b : g->extmax;
            if (a < y)
                nneed += y - a;
        }
        goto grow;
    }
    st = malloc((LEVEL_MAX + 1) * sizeof(*st));
    seen = lanyfs_blockset_new();
    if (st == NULL || seen == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
        goto out;
    }
    if ((rc = ext_read(w, f->e.subtree, &st[0].x, err)) != LANYFS_OK)
        goto out;
    top = st[0].x.h.level;
    st[0].base = 0;
    st[0].next = 0;
    if (lanyfs_blockset_add(seen, f->e.subtree) < 0 || lanyfs_blockset_add(seen, f->blk) < 0) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
        goto out;
    }
    nowned = 1;
    int depth = 0;
    while (depth >= 0) {
        struct sframe *fr = &st[depth];
        unsigned level = fr->x.h.level;
        if (fr->next >= g->extmax) {
            depth--;
            continue;
        }
        uint32_t i = fr->next++;
        uint64_t span = lanyfs_geom_pow(g, level);
        uint64_t lo = add_sat(fr->base, mul_sat(i, span));
        uint64_t hi = add_sat(lo, span);
        uint64_t v = lanyfs_ext_slot(g, fr->x.b, i);
        if (v == 0) {
            uint64_t x = lo > a ? lo : a, y = hi < b ? hi : b;
            if (x < y)
                nneed = add_sat(nneed, missing(g, (int)level - 1, x, y));
            continue;
        }
        if (v >= g->blocks) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, fr->x.blk,
                             "extender %" PRIu64 " slot %u holds block %" PRIu64
                             ", beyond the device end (run fsck-lanyfs)",
                             fr->x.blk, i, v);
            goto out;
        }
        int added = lanyfs_blockset_add(seen, v);
        if (added < 0) {
            rc = lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
            goto out;
        }
        if (added == 0) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, fr->x.blk,
                             "extender %" PRIu64 " slot %u names block %" PRIu64
                             ", which file block %" PRIu64 " already uses (run fsck-lanyfs)",
                             fr->x.blk, i, v, f->blk);
            goto out;
        }
        nowned++;
        if (level == 0)
            continue;
        if ((rc = ext_read_child(w, v, &fr->x, true, &st[depth + 1].x, err)) != LANYFS_OK)
            goto out;
        st[depth + 1].base = lo;
        st[depth + 1].next = 0;
        depth++;
    }
grow:
    if (count != 0 && b > lanyfs_geom_tree_capacity(g, top)) {
        /* New top levels, then what lies beyond the old tree. */
        unsigned t = top;
        while (lanyfs_geom_tree_capacity(g, t) < b && t < LEVEL_MAX)
            t++;
        nneed = add_sat(nneed, t - top);
        uint64_t oldcap = lanyfs_geom_tree_capacity(g, top);
        uint64_t x = a > oldcap ? a : oldcap, y = b;
        for (unsigned l = 0; l < t; l++) {
            uint64_t n = nodes_at(g, l, x, y);
            if (l > top && x < lanyfs_geom_tree_capacity(g, l))
                n--; /* node 0 of that level is the new top, counted above */
            nneed = add_sat(nneed, n);
        }
        nneed = add_sat(nneed, y - x);
    }
out:
    if (need)
        *need = nneed;
    if (owned)
        *owned = nowned;
    free(st);
    lanyfs_blockset_free(seen);
    return rc;
}

/* ---- correct mode: growing ----------------------------------------------- */

static enum lanyfs_err getblk_correct(struct lanyfs_writer *w, struct winode *f, uint64_t fblk,
                                      uint64_t *dblk, bool *fresh, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    struct ext *x = malloc(2 * sizeof(*x));
    enum lanyfs_err rc;
    if (x == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
    struct ext *child = x + 1;
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
            rc = lanyfs_fail(err, LANYFS_E_FBIG, f->blk,
                             "file block %" PRIu64 " is beyond any extender tree", fblk);
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
            goto out;
        }
        if (slot == 0) {
            if (level == 0) {
                if ((rc = wr_alloc(w, &slot, err)) != LANYFS_OK)
                    goto out;
                *fresh = true;
            } else {
                if ((rc = ext_new(w, level - 1, child, err)) != LANYFS_OK)
                    goto out;
                slot = child->blk;
            }
            lanyfs_ext_set_slot(g, x->b, idx, slot);
            if ((rc = ext_write(w, x, err)) != LANYFS_OK)
                goto out;
            if (level == 0) {
                *dblk = slot;
                goto out;
            }
        }
        if ((rc = ext_read_child(w, slot, x, true, child, err)) != LANYFS_OK)
            goto out;
        memcpy(x, child, sizeof(*x));
    }
out:
    free(x);
    return rc;
}

/* ---- driver mode --------------------------------------------------------- */

/*
 * intpow(extmax, level) as the driver computes it: 1 at level 0, else
 * squaring level times in a 32-bit int, then converted to the 64-bit
 * unsigned block number of the division (a negative int sign-extends).
 */
static uint64_t driver_pow(uint32_t base, unsigned level)
{
    if (level == 0)
        return 1;
    uint32_t r = base;
    for (unsigned i = 0; i < level; i++)
        r = r * r; /* wraps as the driver's int does on x86 */
    return (uint64_t)(int64_t)(int32_t)r;
}

enum grow_result { GROW_DONE, GROW_FULL, GROW_NOSPC, GROW_FAILED };

/*
 * __lanyfs_ext_grow from the top extender, iteratively: descend the last
 * used slot of every level to a level-0 extender and fill its first empty
 * slot; when it is full, the deepest level with a free slot after its last
 * child runs the driver's sibling loop (SPEC-§9.7).
 */
static enum grow_result grow_driver(struct lanyfs_writer *w, uint64_t top, enum lanyfs_err *rc,
                                    struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    struct ext *path = malloc((LEVEL_MAX + 2) * sizeof(*path));
    uint32_t last_idx[LEVEL_MAX + 1];
    enum grow_result res = GROW_FAILED;
    *rc = LANYFS_OK;
    if (path == NULL) {
        *rc = lanyfs_fail(err, LANYFS_E_NOMEM, top, "out of memory");
        return GROW_FAILED;
    }
    if ((*rc = ext_read(w, top, &path[0], err)) != LANYFS_OK)
        goto out;
    int depth = 0;
    while (path[depth].h.level > 0) {
        uint32_t last = UINT32_MAX;
        for (uint32_t i = g->extmax; i > 0; i--) {
            if (lanyfs_ext_slot(g, path[depth].b, i - 1) != 0) {
                last = i - 1;
                break;
            }
        }
        if (last == UINT32_MAX) {
            /* __lanyfs_ext_grow(0): EPROTECTED, nothing written. */
            *rc = lanyfs_fail(err, LANYFS_E_INVAL, path[depth].blk,
                              "extender %" PRIu64 " at level %u maps nothing", path[depth].blk,
                              path[depth].h.level);
            goto out;
        }
        last_idx[depth] = last;
        uint64_t child = lanyfs_ext_slot(g, path[depth].b, last);
        if ((*rc = ext_read_child(w, child, &path[depth], false, &path[depth + 1], err)) !=
            LANYFS_OK)
            goto out;
        depth++; /* levels strictly fall, so depth stays <= LEVEL_MAX */
    }
    /* Level 0: the first empty slot gets a new data block. */
    struct ext *leaf = &path[depth];
    for (uint32_t i = 0; i < g->extmax; i++) {
        if (lanyfs_ext_slot(g, leaf->b, i) != 0)
            continue;
        uint64_t d;
        if ((*rc = wr_alloc(w, &d, err)) != LANYFS_OK) {
            res = *rc == LANYFS_E_NOSPC ? GROW_NOSPC : GROW_FAILED;
            goto out;
        }
        lanyfs_ext_set_slot(g, leaf->b, i, d);
        *rc = ext_write(w, leaf, err);
        res = *rc == LANYFS_OK ? GROW_DONE : GROW_FAILED;
        goto out;
    }
    /* Full: the deepest parent with a slot after its last child loops. */
    for (int d = depth - 1; d >= 0; d--) {
        struct ext *p = &path[d];
        uint32_t next = last_idx[d] + 1;
        if (next >= g->extmax)
            continue; /* ENOEMPTY goes up a level */
        bool dirty = false;
        for (uint64_t made = 0;; made++) {
            struct ext child;
            if (made >= g->blocks) {
                /* More blocks than the device has: the free list hands some out twice. */
                *rc = lanyfs_fail(err, LANYFS_E_CYCLE, p->blk,
                                  "the growth loop was handed more blocks than the device "
                                  "holds: the free list hands blocks out twice");
                break;
            }
            if ((*rc = ext_new(w, p->h.level - 1u, &child, err)) != LANYFS_OK)
                break; /* allocation failed: the loop ends (SPEC-§9.7) */
            lanyfs_ext_set_slot(g, p->b, next, child.blk);
            dirty = true;
        }
        enum lanyfs_err arc = *rc;
        if (dirty && (*rc = ext_write(w, p, err)) != LANYFS_OK) {
            res = GROW_FAILED;
            goto out;
        }
        *rc = arc;
        res = arc == LANYFS_E_NOSPC ? GROW_NOSPC : GROW_FAILED;
        goto out;
    }
    *rc = LANYFS_OK;
    res = GROW_FULL;
out:
    free(path);
    return res;
}

/* lanyfs_ext_iblock: map fblk from the top extender with the driver's helper. */
static enum lanyfs_err iblock_driver(struct lanyfs_writer *w, uint64_t top, uint64_t fblk,
                                     uint64_t *dblk, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    struct ext *x = malloc(2 * sizeof(*x));
    enum lanyfs_err rc;
    if (x == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, top, "out of memory");
    if ((rc = ext_read(w, top, x, err)) != LANYFS_OK)
        goto out;
    for (;;) {
        unsigned level = x->h.level;
        if (level == 0) {
            uint64_t slot = lanyfs_ext_slot(g, x->b, (uint32_t)(fblk % g->extmax));
            if (slot >= g->blocks) {
                rc = lanyfs_fail(err, LANYFS_E_CORRUPT, x->blk,
                                 "extender %" PRIu64 " maps file block %" PRIu64
                                 " to block %" PRIu64 ", beyond the device end",
                                 x->blk, fblk, slot);
                goto out;
            }
            *dblk = slot; /* a hole is block 0 (SPEC-§9.8) */
            goto out;
        }
        uint64_t span = driver_pow(g->extmax, level);
        if (span == 0) {
            rc = lanyfs_fail(err, LANYFS_E_INVAL, x->blk,
                             "the 2012 driver cannot map file block %" PRIu64
                             ": its power helper gives 0 at level %u (a division by zero)",
                             fblk, level);
            goto out;
        }
        uint32_t idx = (uint32_t)((fblk / span) % g->extmax);
        uint64_t slot = lanyfs_ext_slot(g, x->b, idx);
        if (slot == 0) {
            rc = lanyfs_fail(err, LANYFS_E_INVAL, x->blk,
                             "the 2012 driver meets a hole at level %u of extender %" PRIu64
                             " for file block %" PRIu64 " (EINVAL)",
                             level, x->blk, fblk);
            goto out;
        }
        if ((rc = ext_read_child(w, slot, x, false, x + 1, err)) != LANYFS_OK)
            goto out;
        memcpy(x, x + 1, sizeof(*x));
    }
out:
    free(x);
    return rc;
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
    if (f->e.subtree == 0) {
        /* lii->data = lanyfs_ext_create(sb, 0); ENOSPC when it fails */
        if ((rc = ext_new(w, 0, x, err)) != LANYFS_OK)
            goto out;
        f->e.subtree = x->blk;
    }
    /* lanyfs_ext_grow: its result is ignored by lanyfs_getblk. */
    enum grow_result gr = grow_driver(w, f->e.subtree, &rc, &gerr);
    if (rc == LANYFS_E_NOMEM || rc == LANYFS_E_IO || rc == LANYFS_E_CYCLE) {
        if (err)
            *err = gerr;
        goto out;
    }
    if (gr == GROW_FULL) {
        uint64_t old = f->e.subtree;
        if (ext_read(w, old, x, &gerr) == LANYFS_OK && x->h.level < LEVEL_MAX) {
            unsigned level = x->h.level + 1u;
            if ((rc = ext_new(w, level, x, &gerr)) == LANYFS_OK) {
                lanyfs_ext_set_slot(g, x->b, 0, old);
                if ((rc = ext_write(w, x, err)) != LANYFS_OK)
                    goto out;
                f->e.subtree = x->blk;
            } else if (rc == LANYFS_E_NOMEM || rc == LANYFS_E_IO) {
                if (err)
                    *err = gerr;
                goto out;
            }
        }
    }
    wr_idirty(w, f); /* mark_inode_dirty */
    rc = iblock_driver(w, f->e.subtree, fblk, dblk, err);
out:
    free(x);
    return rc;
}

enum lanyfs_err wr_getblk(struct lanyfs_writer *w, struct winode *file, uint64_t fblk,
                          uint64_t *dblk, bool *fresh, struct lanyfs_error *err)
{
    bool dummy;
    *dblk = 0;
    if (fresh == NULL)
        fresh = &dummy;
    *fresh = false;
    if (drv(w))
        return getblk_driver(w, file, fblk, dblk, err);
    return getblk_correct(w, file, fblk, dblk, fresh, err);
}

/* ---- truncation: driver -------------------------------------------------- */

struct dframe {
    struct ext x;    /* the extender */
    uint32_t slot;   /* next slot */
    uint64_t iblock; /* the size in blocks passed down (0 after the first child) */
};

/* lanyfs_ext_truncate(top, keep), its recursion unrolled. */
static enum lanyfs_err truncate_driver(struct lanyfs_writer *w, struct winode *f, uint64_t keep,
                                       struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    struct dframe *st = malloc((LEVEL_MAX + 1) * sizeof(*st));
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    enum lanyfs_err rc = LANYFS_OK;
    if (st == NULL || seen == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
        goto out;
    }
    int depth = 0;
    bool entering = true;
    if ((rc = ext_read(w, f->e.subtree, &st[0].x, err)) != LANYFS_OK)
        goto out;
    st[0].iblock = keep;
    while (depth >= 0) {
        struct dframe *fr = &st[depth];
        if (entering) {
            /* Its first slot comes from the size in blocks passed down. */
            entering = false;
            if (lanyfs_blockset_add(seen, fr->x.blk) < 0) {
                rc = lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
                goto out;
            }
            uint64_t span = driver_pow(g->extmax, fr->x.h.level);
            if (span == 0) {
                rc = lanyfs_fail(err, LANYFS_E_INVAL, fr->x.blk,
                                 "the 2012 driver cannot truncate extender %" PRIu64
                                 ": its power helper gives 0 at level %u (a division by zero)",
                                 fr->x.blk, fr->x.h.level);
                goto out;
            }
            fr->slot = (uint32_t)((fr->iblock / span) % g->extmax);
        }
        if (fr->slot < g->extmax) {
            uint32_t i = fr->slot++;
            uint64_t v = lanyfs_ext_slot(g, fr->x.b, i);
            if (v == 0)
                continue;
            if (fr->x.h.level == 0) {
                /* lanyfs_ext_kill_slot, then lanyfs_release (its result ignored) */
                lanyfs_ext_set_slot(g, fr->x.b, i, 0);
                if (v < g->blocks) {
                    enum lanyfs_err frc = wr_free(w, v, err);
                    if (frc == LANYFS_E_NOMEM || frc == LANYFS_E_IO) {
                        rc = frc;
                        goto out;
                    }
                }
                continue;
            }
            /* Descend with the size; later children get 0.  A child that
             * cannot be read is skipped: the driver ignores its failure. */
            uint64_t ib = fr->iblock;
            fr->iblock = 0;
            struct lanyfs_error sub;
            if (lanyfs_blockset_has(seen, v) ||
                ext_read_child(w, v, &fr->x, false, &st[depth + 1].x, &sub) != LANYFS_OK)
                continue;
            st[depth + 1].iblock = ib;
            depth++;
            entering = true;
            continue;
        }
        /* All slots done: the extender is rewritten with its counter + 1. */
        fr->x.h.wrcnt++;
        if ((rc = ext_write(w, &fr->x, err)) != LANYFS_OK)
            goto out;
        depth--;
    }
out:
    free(st);
    lanyfs_blockset_free(seen);
    return rc;
}

/* ---- truncation: correct ------------------------------------------------- */

struct tframe {
    struct ext x;       /* the extender */
    uint64_t base;      /* first file block it maps */
    uint32_t next;      /* next slot to visit */
};

static enum lanyfs_err push_free(uint64_t **list, size_t *n, size_t *cap, uint64_t blk,
                                 struct lanyfs_error *err)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        uint64_t *p = realloc(*list, nc * sizeof(*p));
        if (p == NULL)
            return lanyfs_fail(err, LANYFS_E_NOMEM, blk, "out of memory");
        *list = p;
        *cap = nc;
    }
    (*list)[(*n)++] = blk;
    return LANYFS_OK;
}

/*
 * Visit every extender in post order.  Data blocks of file blocks >= keep
 * are freed, and so are extenders that map only such blocks.  Each kept
 * extender is rewritten (counter + 1) before anything it stopped mapping
 * is freed; a freed top first leaves the file block (written back at once).
 */
static enum lanyfs_err truncate_correct(struct lanyfs_writer *w, struct winode *f, uint64_t keep,
                                        struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    struct tframe *st = malloc((LEVEL_MAX + 2) * sizeof(*st));
    uint64_t *tofree = NULL;
    size_t nfree = 0, capfree = 0;
    enum lanyfs_err rc;
    bool top_freed = false;
    if (st == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
    /* Nothing is written unless the whole tree is sound. */
    if ((rc = wr_ext_scan(w, f, 0, 0, NULL, NULL, err)) != LANYFS_OK)
        goto out;
    int depth = 0;
    if ((rc = ext_read(w, f->e.subtree, &st[0].x, err)) != LANYFS_OK)
        goto out;
    st[0].base = 0;
    st[0].next = 0;
    while (depth >= 0) {
        struct tframe *fr = &st[depth];
        unsigned level = fr->x.h.level;
        uint64_t span = lanyfs_geom_pow(g, level);
        if (fr->next < g->extmax) {
            uint32_t i = fr->next++;
            uint64_t slot = lanyfs_ext_slot(g, fr->x.b, i);
            if (slot == 0)
                continue;
            uint64_t fb = add_sat(fr->base, mul_sat(i, span));
            if (level == 0) {
                if (fb < keep)
                    continue;
                if ((rc = push_free(&tofree, &nfree, &capfree, slot, err)) != LANYFS_OK)
                    goto out;
                lanyfs_ext_set_slot(g, fr->x.b, i, 0);
                continue;
            }
            struct tframe *c = &st[depth + 1];
            if ((rc = ext_read_child(w, slot, &fr->x, true, &c->x, err)) != LANYFS_OK)
                goto out;
            c->base = fb;
            c->next = 0;
            depth++;
            continue;
        }
        /* All slots visited: free it when it maps only blocks past keep. */
        if (fr->base >= keep) {
            if (depth > 0) {
                struct tframe *p = &st[depth - 1];
                uint64_t pspan = lanyfs_geom_pow(g, p->x.h.level);
                uint32_t pi = (uint32_t)((fr->base - p->base) / pspan);
                lanyfs_ext_set_slot(g, p->x.b, pi, 0);
            } else {
                top_freed = true;
            }
            if ((rc = push_free(&tofree, &nfree, &capfree, fr->x.blk, err)) != LANYFS_OK)
                goto out;
        } else {
            fr->x.h.wrcnt++;
            if ((rc = ext_write(w, &fr->x, err)) != LANYFS_OK)
                goto out;
        }
        depth--;
    }
    if (top_freed) {
        wr_isave(w, f);
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

enum lanyfs_err wr_ext_truncate(struct lanyfs_writer *w, struct winode *f, uint64_t keep,
                                struct lanyfs_error *err)
{
    if (f->e.subtree == 0)
        return LANYFS_OK;
    if (drv(w))
        return truncate_driver(w, f, keep, err);
    return truncate_correct(w, f, keep, err);
}
