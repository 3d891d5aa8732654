/*
 * blockio.c -- reading blocks with the scan's geometry.
 *
 * The scan may read with a geometry it inferred (infer.c), which the
 * filesystem handle does not know, so it reads the image directly at
 * blk << blockbits instead of through lanyfs_fs_read_block.  Checks:
 *  - a block past the image's whole blocks is LANYFS_E_TRUNCATED, naming it;
 *  - a run is cut at the image's end before any byte is read;
 *  - offsets are computed only for blocks below image_blocks, so the shift
 *    cannot overflow.
 *
 * Single blocks (sc_read: the walks' entries, extenders and chain blocks)
 * go through a small read cache: the image is read in aligned windows of
 * SC_WINDOW_BYTES (at least one block), kept in SC_WINDOWS direct-mapped
 * slots.  On a stick a writer filled in order, an entry, its extender and
 * its data lie side by side, so one read serves the next several blocks
 * the walks ask for instead of one system call each.  When the walks jump
 * about (a fragmented stick) a window is mostly wasted copying, so the
 * cache watches its hits and reads single blocks for a while when fewer
 * than half of the lookups hit.  A window that cannot be read whole (an
 * I/O error in it, the image's end) is not kept: the block is read on its
 * own, so an unreadable block is still reported as exactly that block.
 * The image does not change under a scan, so nothing is ever invalidated.
 * Memory: SC_WINDOWS * SC_WINDOW_BYTES, allocated at the first read.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

/* Lookups between two judgments of the hit rate, and reads bypassed after a bad one. */
#define SC_CACHE_PERIOD 2048
#define SC_CACHE_BYPASS 16384

static enum lanyfs_err read_direct(struct scan_result *r, uint64_t first, uint64_t count,
                                   uint8_t *buf, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    if (first >= r->image_blocks || count > r->image_blocks - first) {
        rc = lanyfs_fail(err, LANYFS_E_TRUNCATED, first,
                         "block %" PRIu64 " lies beyond the end of the image (%" PRIu64
                         " blocks of %" PRIu32 " bytes)",
                         first >= r->image_blocks ? first : r->image_blocks, r->image_blocks,
                         r->g.blocksize);
        goto out;
    }
    rc = lanyfs_image_pread(r->img, first << r->g.blockbits, buf,
                            (size_t)count << r->g.blockbits, err);
    if (rc != LANYFS_OK && err != NULL) {
        err->block = first;
        lanyfs_error_prefix(err, "block %" PRIu64, first);
    }
out:
    return rc;
}

/* Blocks a window holds with the scan's block size. */
static uint64_t window_blocks(const struct scan_result *r)
{
    uint64_t n = SC_WINDOW_BYTES >> r->g.blockbits;
    return n > 0 ? n : 1;
}

/* Copy blk from its window when the window is cached or can be read whole. */
static bool cached(struct scan_result *r, uint64_t blk, uint8_t *buf)
{
    struct sc_cache *c = &r->cache;
    uint64_t wb = window_blocks(r);
    if (wb < 2)
        return false;
    if (c->bypass > 0) {
        c->bypass--;
        return false;
    }
    if (c->mem == NULL) {
        c->mem = malloc((size_t)SC_WINDOWS * SC_WINDOW_BYTES);
        if (c->mem == NULL)
            return false; /* read directly: the cache is only a speed-up */
        memset(c->tag, 0, sizeof(c->tag));
    }
    uint64_t win = blk / wb;
    size_t slot = (size_t)(win % SC_WINDOWS);
    uint8_t *w = c->mem + slot * SC_WINDOW_BYTES;
    size_t off = (size_t)(blk - win * wb) << r->g.blockbits;
    if (++c->lookups == SC_CACHE_PERIOD) {
        if (c->misses * 2 > c->lookups)
            c->bypass = SC_CACHE_BYPASS;
        c->lookups = c->misses = 0;
    }
    if (c->tag[slot] == win + 1) {
        memcpy(buf, w + off, r->g.blocksize);
        return true;
    }
    c->misses++;
    c->tag[slot] = 0;
    uint64_t first = win * wb;
    if (first >= r->image_blocks || wb > r->image_blocks - first)
        return false;
    if (read_direct(r, first, wb, w, NULL) != LANYFS_OK)
        return false;
    c->tag[slot] = win + 1;
    memcpy(buf, w + off, r->g.blocksize);
    return true;
}

enum lanyfs_err sc_read(struct scan_result *r, uint64_t blk, uint8_t *buf,
                        struct lanyfs_error *err)
{
    if (blk < r->image_blocks && cached(r, blk, buf))
        return LANYFS_OK;
    return read_direct(r, blk, 1, buf, err);
}

enum lanyfs_err sc_read_run(struct scan_result *r, uint64_t first, uint64_t count, uint8_t *buf,
                            struct lanyfs_error *err)
{
    return read_direct(r, first, count, buf, err);
}

void sc_cache_free(struct scan_result *r)
{
    free(r->cache.mem);
    r->cache.mem = NULL;
}
