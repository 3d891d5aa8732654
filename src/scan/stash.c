/*
 * stash.c -- files' top extenders, kept from the tree walk for the files
 * pass.
 *
 * The tree walk reads a file's entry in a window (blockio.c) that nearly
 * always holds the file's top extender too, the block allocated after it;
 * the files pass, which runs once every entry is claimed, used to read the
 * same windows again: on an image of small files a second pass over most
 * of the device.  So when the walk adds a live file, its top extender's
 * bytes up to its last non-zero byte are kept, when they are few
 * (STASH_MAX: a small file's extender holds a header and a slot or two),
 * and sc_read_top serves them instead of a read, zeros after.  The
 * extender is taken through the window cache (where it nearly always is
 * already); the stash takes at most STASH_MAX bytes per file entry, and is
 * dropped after the files pass.  The bytes are those the read would have
 * returned from the window, so the pass sees the same blocks either way.
 * An entry's stash_off and stash_len mean something only while the stash
 * exists: only the tree walk, before the files pass, adds to it.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

#define STASH_MAX 64
#define STASH_STEP ((size_t)2 << 20)
/* Files the stash's first mapping has room for. */
#define STASH_FIRST ((size_t)1 << 18)

bool sc_stash_grow(struct scan_result *r)
{
    /* Where sc_mem_grow maps lazily, the first mapping has room for every
     * block's (up to STASH_FIRST): address space only, faulted in ahead of
     * use on the helper thread (prefault.c), and not moved meanwhile. */
    size_t add = STASH_STEP;
    if (r->stash == NULL && sc_mem_lazy()) {
        size_t files = r->nblocks + 1 < STASH_FIRST ? (size_t)r->nblocks + 1 : STASH_FIRST;
        size_t first = (files * STASH_MAX + STASH_STEP - 1) / STASH_STEP * STASH_STEP;
        if (first > add)
            add = first;
    }
    if (r->stash_bytes > SIZE_MAX - add)
        return false;
    uint8_t *n = sc_mem_grow(r->stash, r->stash_bytes, r->stash_bytes + add);
    if (n == NULL)
        return false;
    r->stash = n;
    r->stash_bytes += add;
    return true;
}

void sc_stash_top(struct scan_result *r, uint32_t id)
{
    struct scan_entry *x = sc_entry(r, id);
    struct sc_aux *a = sc_aux(r, id);
    if (x == NULL || a == NULL || x->e.subtree == 0 || x->e.subtree >= r->nblocks)
        return;
    /* Through the window cache: when the extender starts the next window,
     * the walk reads that window for the next entries anyway. */
    const uint8_t *b = sc_window(r, x->e.subtree);
    if (b == NULL)
        return;
    if (r->g.blocksize < STASH_MAX || !sc_zero_from(b, STASH_MAX, r->g.blocksize))
        return;
    size_t len = STASH_MAX;
    while (len > 0 && b[len - 1] == 0)
        len--;
    if (len == 0 || r->stash_used > UINT32_MAX - STASH_MAX)
        return;
    if (r->stash_used + len > r->stash_bytes && !sc_stash_grow(r))
        return; /* the files pass reads it instead */
    sc_prefault_need(r, SC_PF_STASH, r->stash, r->stash_used + len, &r->stash_populated,
                     r->stash_bytes);
    memcpy(r->stash + r->stash_used, b, len);
    a->stash_off = (uint32_t)r->stash_used;
    a->stash_len = (uint8_t)len;
    r->stash_used += len;
}

enum lanyfs_err sc_read_top(struct scan_result *r, uint32_t id, uint64_t blk, uint8_t *buf,
                            struct lanyfs_error *err)
{
    const struct scan_entry *x = sc_entry(r, id);
    const struct sc_aux *a = sc_aux(r, id);
    if (r->stash == NULL || x == NULL || a == NULL || a->stash_len == 0 || x->e.subtree != blk)
        return sc_read(r, blk, buf, err);
    memcpy(buf, r->stash + a->stash_off, a->stash_len);
    memset(buf + a->stash_len, 0, r->g.blocksize - a->stash_len);
    return LANYFS_OK;
}

void sc_stash_drop(struct scan_result *r)
{
    sc_mem_release(r->stash, r->stash_bytes);
    r->stash = NULL;
    r->stash_used = r->stash_bytes = r->stash_populated = 0;
}
