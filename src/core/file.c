/*
 * file.c -- reading a file through its extender tree (SPEC-§7).
 *
 * File block i of a level-L tree sits at slot (i / extmax^L) % extmax of the
 * level-L extender, then down one level per step.  extmax^L is computed by
 * multiplication (lanyfs_geom_pow), not the driver's squaring helper, which
 * reads the wrong slot past extmax blocks (SPEC-§9.8).
 *
 * Nothing the disk says is trusted: the top block must be an extender, each
 * child an extender exactly one level lower (so the descent cannot loop and
 * is at most 64 steps), and every slot a block inside the device.  The walk
 * also keeps a visited set, so a tree whose slots share a child (a DAG that
 * would multiply its work) is reported instead of followed.  An empty slot
 * is a hole; holes read as zeros.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lanyfs.h"

#define LEVEL_MAX LANYFS_EXT_LEVEL_MAX

static enum lanyfs_err read_ext(struct lanyfs_fs *fs, uint64_t blk, int want_level,
                                uint64_t parent, uint8_t *buf, struct lanyfs_ext_hdr *h,
                                struct lanyfs_error *err)
{
    enum lanyfs_err rc = lanyfs_fs_read_block(fs, blk, buf, err);
    if (rc == LANYFS_E_RANGE && parent == LANYFS_NO_BLOCK)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                           "the file's data pointer names extender %" PRIu64
                           ", beyond the device end",
                           blk);
    if (rc == LANYFS_E_RANGE)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                           "block %" PRIu64 " maps extender %" PRIu64
                           ", beyond the device end",
                           parent, blk);
    if (rc != LANYFS_OK)
        return rc;
    lanyfs_ext_decode(h, buf);
    if (h->type != LANYFS_TYPE_EXT && parent == LANYFS_NO_BLOCK)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                           "the file's data pointer names block %" PRIu64
                           " of type 0x%02x, not an extender (0x80)",
                           blk, h->type);
    if (h->type != LANYFS_TYPE_EXT)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                           "block %" PRIu64 " (mapped by block %" PRIu64
                           ") has type 0x%02x, not an extender (0x80)",
                           blk, parent, h->type);
    if (h->level > LEVEL_MAX)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                           "extender %" PRIu64 " claims level %u, more than any device needs", blk,
                           h->level);
    if (want_level >= 0 && h->level != (unsigned)want_level)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                           "extender %" PRIu64 " has level %u, but its parent %" PRIu64
                           " is at level %d",
                           blk, h->level, parent, want_level + 1);
    return LANYFS_OK;
}

enum lanyfs_err lanyfs_file_map(struct lanyfs_fs *fs, const struct lanyfs_entry *e, uint64_t fblk,
                                uint64_t *dblk, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    struct lanyfs_ext_hdr h;
    *dblk = 0;
    if (e->subtree == 0)
        return LANYFS_OK;
    uint64_t parent = LANYFS_NO_BLOCK;
    enum lanyfs_err rc = read_ext(fs, e->subtree, -1, parent, buf, &h, err);
    if (rc != LANYFS_OK)
        return rc;
    unsigned level = h.level;
    if (fblk >= lanyfs_geom_tree_capacity(g, level))
        return LANYFS_OK; /* beyond what the tree maps: a hole */
    uint64_t cur = e->subtree;
    for (;;) {
        uint64_t span = lanyfs_geom_pow(g, level);
        uint32_t idx = (uint32_t)((fblk / span) % g->extmax);
        uint64_t slot = lanyfs_ext_slot(g, buf, idx);
        if (slot != 0 && slot >= g->blocks)
            return lanyfs_fail(err, LANYFS_E_CORRUPT, cur,
                               "extender %" PRIu64 " slot %u holds block %" PRIu64
                               ", beyond the device end (%" PRIu64 " blocks)",
                               cur, idx, slot, g->blocks);
        if (level == 0 || slot == 0) {
            *dblk = level == 0 ? slot : 0;
            return LANYFS_OK;
        }
        rc = read_ext(fs, slot, (int)level - 1, cur, buf, &h, err);
        if (rc != LANYFS_OK)
            return rc;
        cur = slot;
        level--;
    }
}

enum lanyfs_err lanyfs_file_pread(struct lanyfs_fs *fs, const struct lanyfs_entry *e, uint64_t off,
                                  void *buf, size_t len, size_t *got, uint64_t *holes,
                                  struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    uint8_t blk[LANYFS_BLOCKSIZE_MAX];
    uint8_t *out = buf;
    *got = 0;
    if (off >= e->size)
        return LANYFS_OK;
    if (len > e->size - off)
        len = (size_t)(e->size - off);
    while (*got < len) {
        uint64_t pos = off + *got;
        uint64_t fblk = pos >> g->blockbits;
        size_t in = (size_t)(pos & (g->blocksize - 1));
        size_t n = g->blocksize - in;
        if (n > len - *got)
            n = len - *got;
        uint64_t dblk;
        enum lanyfs_err rc = lanyfs_file_map(fs, e, fblk, &dblk, err);
        if (rc != LANYFS_OK)
            return rc;
        if (dblk == 0) {
            memset(out + *got, 0, n);
            if (holes)
                (*holes)++;
        } else {
            rc = lanyfs_fs_read_block(fs, dblk, blk, err);
            if (rc != LANYFS_OK)
                return rc;
            memcpy(out + *got, blk + in, n);
        }
        *got += n;
    }
    return LANYFS_OK;
}

/* One level of the explicit descent stack of lanyfs_file_walk. */
struct frame {
    uint64_t blk;   /* this extender */
    uint64_t base;  /* first file block it maps */
    uint32_t next;  /* next slot to visit */
    uint8_t *buf;   /* its contents */
};

struct runs {
    lanyfs_extent_cb cb;
    void *ctx;
    uint64_t fblk, dblk, count; /* the run being built */
    int stop;                   /* a callback asked to stop */
};

static void run_add(struct runs *r, uint64_t fblk, uint64_t dblk, uint64_t count)
{
    if (r->stop || count == 0)
        return;
    if (r->count != 0 && r->fblk + r->count == fblk &&
        ((dblk == 0 && r->dblk == 0) || (dblk != 0 && r->dblk != 0 && r->dblk + r->count == dblk))) {
        r->count += count;
        return;
    }
    if (r->count != 0 && r->cb != NULL)
        r->stop = r->cb(r->ctx, r->fblk, r->dblk, r->count);
    r->fblk = fblk;
    r->dblk = dblk;
    r->count = count;
}

static void run_flush(struct runs *r)
{
    if (!r->stop && r->count != 0 && r->cb != NULL)
        r->stop = r->cb(r->ctx, r->fblk, r->dblk, r->count);
    r->count = 0;
}

enum lanyfs_err lanyfs_file_walk(struct lanyfs_fs *fs, const struct lanyfs_entry *e,
                                 lanyfs_extent_cb on_extent, lanyfs_extender_cb on_extender,
                                 void *ctx, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    uint64_t nblocks = lanyfs_geom_blocks_for_size(g, e->size);
    struct runs r = {on_extent, ctx, 0, 0, 0, 0};
    struct frame frames[LEVEL_MAX + 1];
    uint8_t *mem = NULL;
    struct lanyfs_blockset *seen = NULL;
    enum lanyfs_err first = LANYFS_OK;
    struct lanyfs_error suberr;
    struct lanyfs_ext_hdr h;
    uint64_t mapped_end = 0; /* file blocks covered by the tree */

    lanyfs_error_clear(err);
    if (e->subtree == 0 || nblocks == 0)
        goto out_tail;
    uint8_t top[LANYFS_BLOCKSIZE_MAX];
    first = read_ext(fs, e->subtree, -1, LANYFS_NO_BLOCK, top, &h, err);
    if (first != LANYFS_OK)
        goto out_tail;
    unsigned toplevel = h.level;
    if (on_extender != NULL && on_extender(ctx, e->subtree, toplevel) != 0)
        goto out;
    mem = malloc((size_t)(toplevel + 1) * g->blocksize);
    if (mem == NULL) {
        first = lanyfs_fail(err, LANYFS_E_NOMEM, e->subtree, "out of memory");
        goto out;
    }
    seen = lanyfs_blockset_new();
    if (seen == NULL || lanyfs_blockset_add(seen, e->subtree) < 0) {
        first = lanyfs_fail(err, LANYFS_E_NOMEM, e->subtree, "out of memory");
        goto out;
    }
    mapped_end = lanyfs_geom_tree_capacity(g, toplevel);
    /* frames[d] holds the extender at level toplevel - d. */
    int depth = 0;
    frames[0] = (struct frame){e->subtree, 0, 0, mem};
    memcpy(frames[0].buf, top, g->blocksize);
    while (depth >= 0 && !r.stop) {
        struct frame *f = &frames[depth];
        unsigned level = toplevel - (unsigned)depth;
        uint64_t span = lanyfs_geom_pow(g, level);
        if (f->next >= g->extmax) {
            depth--;
            continue;
        }
        uint32_t i = f->next++;
        uint64_t fb;
        if (__builtin_mul_overflow((uint64_t)i, span, &fb) ||
            __builtin_add_overflow(fb, f->base, &fb) || fb >= nblocks) {
            depth--;
            continue;
        }
        uint64_t count = span;
        if (count > nblocks - fb)
            count = nblocks - fb;
        uint64_t slot = lanyfs_ext_slot(g, f->buf, i);
        if (slot != 0 && slot >= g->blocks) {
            if (first == LANYFS_OK)
                first = lanyfs_fail(err, LANYFS_E_CORRUPT, f->blk,
                                    "extender %" PRIu64 " slot %u holds block %" PRIu64
                                    ", beyond the device end (%" PRIu64 " blocks)",
                                    f->blk, i, slot, g->blocks);
            run_add(&r, fb, 0, count);
            continue;
        }
        if (slot == 0 || level == 0) {
            run_add(&r, fb, slot, count);
            continue;
        }
        int fresh = lanyfs_blockset_add(seen, slot);
        if (fresh <= 0) {
            if (fresh < 0) {
                first = lanyfs_fail(err, LANYFS_E_NOMEM, slot, "out of memory");
                break;
            }
            /* No tree shares a block: a second path to an extender is damage,
             * and following it could multiply the walk without bound. */
            if (first == LANYFS_OK)
                first = lanyfs_fail(err, LANYFS_E_CORRUPT, slot,
                                    "extender %" PRIu64 " slot %u maps extender %" PRIu64
                                    ", which the file's tree already reached",
                                    f->blk, i, slot);
            run_add(&r, fb, 0, count);
            continue;
        }
        struct frame *c = &frames[depth + 1];
        c->buf = mem + (size_t)(depth + 1) * g->blocksize;
        enum lanyfs_err rc = read_ext(fs, slot, (int)level - 1, f->blk, c->buf, &h, &suberr);
        if (rc != LANYFS_OK) {
            if (first == LANYFS_OK) {
                first = rc;
                if (err)
                    *err = suberr;
            }
            run_add(&r, fb, 0, count);
            continue;
        }
        if (on_extender != NULL && on_extender(ctx, slot, level - 1) != 0) {
            r.stop = 1;
            break;
        }
        c->blk = slot;
        c->base = fb;
        c->next = 0;
        depth++;
    }
out_tail:
    if (mapped_end < nblocks)
        run_add(&r, mapped_end, 0, nblocks - mapped_end);
out:
    run_flush(&r);
    free(mem);
    lanyfs_blockset_free(seen);
    return first;
}
