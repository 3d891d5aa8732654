/*
 * freelist.c -- allocating and freeing blocks through the chained free list.
 *
 * SPEC-§8 (lanyfs_enslave, lanyfs_release) and §9.1-9.3.  The free list is
 * a chain of blocks from freehead along next; each lists free blocks in its
 * slots.  Both modes pop from the head chain block and push into the tail
 * chain block.  They differ where the 2012 driver is wrong:
 *
 *                         correct mode                 2012 driver
 *   pop slots             0 .. chainmax-1              0 .. chainmax-2
 *   push slots            0 .. chainmax-2              0 .. chainmax-2
 *   push counts           freeblocks+1, super rewrite  nothing (SPEC-§9.2)
 *   new chain block       freeblocks+1, super rewrite  freeblocks+1, no rewrite
 *   tail at mount         the real last chain block    freehead (SPEC-§9.3)
 *
 * Correct mode never fills the last slot, so the driver leaks nothing when
 * it later consumes the chain block; it pops a filled last slot (left by
 * the 2012 formatter) so that nothing leaks either.  Its freeblocks is
 * recounted at mount and kept exact, so it is what the allocator can give.
 *
 * Every allocation rewrites the superblock (lanyfs_super_sync) from the
 * block the mount holds, as the driver rewrites its cached buffer: data
 * that a hole sent to block 0 (SPEC-§9.8) is overwritten by the next
 * rewrite.  Which bytes that buffer holds follows the kernel:
 * lanyfs_fill_super reads block 0 at 512 bytes and then sets the real
 * block size, and a change of block size drops the device's cached
 * buffers (kill_bdev).  So with 512-byte blocks the buffer is the one read
 * at mount; with larger blocks it is read again at the first rewrite, and
 * a hole's data that reached block 0 before it becomes the superblock.
 *
 * A pop looks for the first filled slot, a push for the first empty one.
 * The mount remembers, for one chain block each, how far the slots before
 * are known empty (pops) or full (pushes), and keeps both up to date on
 * every pop and push, so neither scans from slot 0 each time; any other
 * write to such a block makes it forget.  The result is the same slot.
 *
 * Every slot and pointer read here is checked against the device before it
 * is used: a wild value is LANYFS_E_CORRUPT naming the chain block, and the
 * operation stops before writing.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writer_priv.h"

/* A direct write of a chain block by a pop, push or set-next: the hints stay. */
static enum lanyfs_err chain_write(struct lanyfs_writer *w, uint64_t blk, const uint8_t *data,
                                   struct lanyfs_error *err)
{
    enum lanyfs_err rc = lanyfs_fs_write_block(w->fs, blk, data, err);
    if (rc == LANYFS_OK && w->sync_hook != NULL)
        w->sync_hook(w->sync_ctx);
    return rc;
}

enum lanyfs_err wr_direct(struct lanyfs_writer *w, uint64_t blk, const uint8_t *data,
                          struct lanyfs_error *err)
{
    wr_freelist_forget(w, blk);
    return chain_write(w, blk, data, err);
}

enum lanyfs_err wr_super_load(struct lanyfs_writer *w, struct lanyfs_error *err)
{
    if (w->sbbuf != NULL)
        return LANYFS_OK;
    uint8_t *b = malloc(w->g->blocksize);
    if (b == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, 0, "out of memory");
    enum lanyfs_err rc = lanyfs_fs_read_block(w->fs, 0, b, err);
    if (rc != LANYFS_OK) {
        free(b);
        return rc;
    }
    w->sbbuf = b;
    return LANYFS_OK;
}

/*
 * lanyfs_super_sync.  The superblock is rewritten from the buffer the mount
 * holds (wr_super_load).  The driver changes only wrcnt, freehead,
 * freetail, freeblocks and updated in it (SPEC-§8); the correct writer
 * stores every field it holds.
 */
enum lanyfs_err wr_super_sync(struct lanyfs_writer *w, struct lanyfs_error *err)
{
    enum lanyfs_err rc = wr_super_load(w, err);
    if (rc != LANYFS_OK)
        return rc;
    w->sb.updated = w->now;
    if (drv(w)) {
        w->sb.wrcnt = (uint16_t)(lanyfs_get16(w->sbbuf + LANYFS_HDR_WRCNT) + 1u);
        lanyfs_put16(w->sbbuf + LANYFS_HDR_WRCNT, w->sb.wrcnt);
        lanyfs_put64(w->sbbuf + LANYFS_SB_FREEHEAD, w->sb.freehead);
        lanyfs_put64(w->sbbuf + LANYFS_SB_FREETAIL, w->sb.freetail);
        lanyfs_put64(w->sbbuf + LANYFS_SB_FREEBLOCKS, w->sb.freeblocks);
        lanyfs_ts_encode(&w->sb.updated, w->sbbuf + LANYFS_SB_UPDATED);
    } else {
        w->sb.wrcnt++;
        lanyfs_super_encode(&w->sb, w->sbbuf);
    }
    return wr_direct(w, 0, w->sbbuf, err);
}

static enum lanyfs_err read_chain(struct lanyfs_writer *w, uint64_t blk, uint8_t *buf,
                                  const char *what, struct lanyfs_error *err)
{
    if (blk == 0 || blk >= w->g->blocks)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                           "the free list's %s block %" PRIu64 " lies outside the device", what,
                           blk);
    return lanyfs_fs_read_block(w->fs, blk, buf, err);
}

/*
 * Correct mode: a block the mount holds as a live entry cannot be free.  A
 * free list that names one crosses the tree (a parent that SPEC-§9.12 froze
 * on disk still links a freed block); handing it out would overwrite it.
 */
static enum lanyfs_err check_not_live(struct lanyfs_writer *w, uint64_t blk,
                                      struct lanyfs_error *err)
{
    if (drv(w) || !lanyfs_blockmap_get(&w->inode_map, blk, NULL))
        return LANYFS_OK;
    return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                       "the free list names block %" PRIu64
                       ", which a directory tree still links (run fsck-lanyfs)",
                       blk);
}

void wr_freelist_forget(struct lanyfs_writer *w, uint64_t blk)
{
    if (w->pop_blk == blk)
        w->pop_blk = 0;
    if (w->push_blk == blk)
        w->push_blk = 0;
}

/* Slot i of chain block blk was emptied (pop) or filled (push). */
static void hint_popped(struct lanyfs_writer *w, uint64_t blk, uint32_t i)
{
    w->pop_blk = blk;
    w->pop_first = i + 1;
    if (w->push_blk == blk && i < w->push_first)
        w->push_first = i;
}

static void hint_pushed(struct lanyfs_writer *w, uint64_t blk, uint32_t i)
{
    w->push_blk = blk;
    w->push_first = i + 1;
    if (w->pop_blk == blk && i < w->pop_first)
        w->pop_first = i;
}

enum lanyfs_err wr_alloc(struct lanyfs_writer *w, uint64_t *out, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    uint8_t *b = w->scratch;
    *out = 0;
    if (w->sb.freehead == 0 || w->sb.freetail == 0 || w->sb.freeblocks == 0)
        return lanyfs_fail(err, LANYFS_E_NOSPC, LANYFS_NO_BLOCK,
                           "no space left on the device (free list empty)");
    uint64_t head = w->sb.freehead;
    enum lanyfs_err rc = read_chain(w, head, b, "head", err);
    if (rc != LANYFS_OK)
        return rc;
    uint32_t last = drv(w) ? g->chainmax - 1 : g->chainmax;
    uint64_t got = 0;
    for (uint32_t i = w->pop_blk == head ? w->pop_first : 0; i < last; i++) {
        uint64_t s = lanyfs_chain_slot(g, b, i);
        if (s == 0)
            continue;
        if (s >= g->blocks || s == head)
            return lanyfs_fail(err, LANYFS_E_CORRUPT, head,
                               "chain block %" PRIu64 " slot %u lists block %" PRIu64
                               ", which cannot be free",
                               head, i, s);
        if ((rc = check_not_live(w, s, err)) != LANYFS_OK)
            return rc;
        lanyfs_chain_set_slot(g, b, i, 0);
        struct lanyfs_chain_hdr h;
        lanyfs_chain_decode(&h, b);
        h.wrcnt++;
        lanyfs_chain_encode(&h, b);
        rc = chain_write(w, head, b, err);
        if (rc != LANYFS_OK)
            return rc;
        hint_popped(w, head, i);
        got = s;
        break;
    }
    if (got == 0) {
        /* The head chain block itself is handed out, contents and all. */
        struct lanyfs_chain_hdr h;
        lanyfs_chain_decode(&h, b);
        if (h.next >= g->blocks)
            return lanyfs_fail(err, LANYFS_E_CORRUPT, head,
                               "chain block %" PRIu64 " links to block %" PRIu64
                               ", beyond the device end",
                               head, h.next);
        if ((rc = check_not_live(w, head, err)) != LANYFS_OK)
            return rc;
        wr_freelist_forget(w, head);
        got = head;
        w->sb.freehead = h.next;
        if (head == w->sb.freetail)
            w->sb.freetail = w->sb.freehead;
    }
    w->sb.freeblocks--;
    w->allocs++;
    wr_drop_data(w, got);
    *out = got;
    return wr_super_sync(w, err);
}

/* Make blk a new, empty chain block (cleared, type 0x70, counter 0). */
static enum lanyfs_err new_chain(struct lanyfs_writer *w, uint64_t blk, struct lanyfs_error *err)
{
    uint8_t *b = calloc(1, w->g->blocksize);
    if (b == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, blk, "out of memory");
    struct lanyfs_chain_hdr h = {LANYFS_TYPE_CHAIN, 0, 0};
    lanyfs_chain_encode(&h, b);
    wr_freelist_forget(w, blk);
    enum lanyfs_err rc = wr_direct(w, blk, b, err);
    free(b);
    return rc;
}

enum lanyfs_err wr_free(struct lanyfs_writer *w, uint64_t blk, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    uint8_t *b = w->scratch;
    enum lanyfs_err rc;
    if (blk == 0 || blk >= g->blocks)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, blk,
                           "refusing to free block %" PRIu64 ", which is outside the device",
                           blk);
    wr_drop_data(w, blk); /* correct mode's queue; the driver wrote its data at once */
    w->frees++;
    if (w->sb.freehead == 0 || w->sb.freetail == 0 || w->sb.freeblocks == 0) {
        /* SPEC-§8 first case: blk is the whole free list now. */
        rc = new_chain(w, blk, err);
        if (rc != LANYFS_OK)
            return rc;
        w->sb.freehead = w->sb.freetail = blk;
        w->sb.freeblocks = 1;
        return wr_super_sync(w, err);
    }
    uint64_t tail = w->sb.freetail;
    rc = read_chain(w, tail, b, "tail", err);
    if (rc != LANYFS_OK)
        return rc;
    struct lanyfs_chain_hdr h;
    lanyfs_chain_decode(&h, b);
    for (uint32_t i = w->push_blk == tail ? w->push_first : 0; i + 1 < g->chainmax; i++) {
        if (lanyfs_chain_slot(g, b, i) != 0)
            continue;
        lanyfs_chain_set_slot(g, b, i, blk);
        h.wrcnt++;
        lanyfs_chain_encode(&h, b);
        rc = chain_write(w, tail, b, err);
        if (rc == LANYFS_OK)
            hint_pushed(w, tail, i);
        if (rc != LANYFS_OK || drv(w))
            return rc; /* SPEC-§9.2: the driver neither counts nor rewrites */
        w->sb.freeblocks++;
        return wr_super_sync(w, err);
    }
    /* The tail is full: blk becomes the new tail chain block. */
    rc = new_chain(w, blk, err);
    if (rc != LANYFS_OK)
        return rc;
    rc = read_chain(w, tail, b, "tail", err);
    if (rc != LANYFS_OK)
        return rc;
    lanyfs_chain_decode(&h, b);
    h.next = blk;
    h.wrcnt++;
    lanyfs_chain_encode(&h, b);
    rc = chain_write(w, tail, b, err);
    if (rc != LANYFS_OK)
        return rc;
    w->sb.freetail = blk;
    w->sb.freeblocks++;
    if (drv(w))
        return LANYFS_OK;
    return wr_super_sync(w, err);
}

/*
 * Walk the list from head: chain blocks and filled slots.  Stops with an
 * error at a cycle or a wild pointer.
 */
static enum lanyfs_err walk(struct lanyfs_fs *fs, uint64_t head, uint64_t *chains,
                            uint64_t *slots, uint64_t *tail, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    uint8_t *b = malloc(g->blocksize);
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    enum lanyfs_err rc = LANYFS_OK;
    uint64_t nc = 0, ns = 0, last = 0;
    if (b == NULL || seen == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    for (uint64_t cur = head; cur != 0;) {
        if (cur >= g->blocks) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, last,
                             "free list: block %" PRIu64 " links to block %" PRIu64
                             ", beyond the device end",
                             last, cur);
            goto out;
        }
        int added = lanyfs_blockset_add(seen, cur);
        if (added <= 0) {
            rc = added < 0 ? lanyfs_fail(err, LANYFS_E_NOMEM, cur, "out of memory")
                           : lanyfs_fail(err, LANYFS_E_CYCLE, cur,
                                         "free list: chain block %" PRIu64
                                         " is reached twice (a cycle)",
                                         cur);
            goto out;
        }
        rc = lanyfs_fs_read_block(fs, cur, b, err);
        if (rc != LANYFS_OK)
            goto out;
        nc++;
        for (uint32_t i = 0; i < g->chainmax; i++)
            if (lanyfs_chain_slot(g, b, i) != 0)
                ns++;
        struct lanyfs_chain_hdr h;
        lanyfs_chain_decode(&h, b);
        last = cur;
        cur = h.next;
    }
out:
    if (chains)
        *chains = nc;
    if (slots)
        *slots = ns;
    if (tail)
        *tail = last;
    free(b);
    lanyfs_blockset_free(seen);
    return rc;
}

enum lanyfs_err lanyfs_freelist_count(struct lanyfs_fs *fs, uint64_t *chain_blocks,
                                      uint64_t *slots, uint64_t *tail, struct lanyfs_error *err)
{
    return walk(fs, lanyfs_fs_super(fs)->freehead, chain_blocks, slots, tail, err);
}

uint64_t wr_free_available(const struct lanyfs_writer *w)
{
    if (w->sb.freehead == 0 || w->sb.freetail == 0)
        return 0;
    return w->sb.freeblocks; /* exact in correct mode: recounted at mount, kept since */
}
