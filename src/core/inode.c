/*
 * inode.c -- the writer's cache of file and directory blocks.
 *
 * A mount holds each entry block it touches in memory, as the kernel holds
 * inodes.  Links, subtree/data, size, name, modified and attr change there
 * and reach the disk only at writeback: one whole-block write with wrcnt+1,
 * skipped while the link count is 0 (SPEC-§8, §9.12).  Each writeback write
 * is a sync point of the `flush` mount option (lanyfs_write_inode syncs).
 *
 * The correct writer stores the whole entry it holds.  The 2012 driver
 * rewrites the block it reads at writeback field by field: subtree (and
 * for a file data and size), the name (at most 255 bytes, zero-padded),
 * modified, the no-write and no-exec attributes added to those on disk,
 * left, right, and the on-disk counter plus one; a block that is no longer
 * a directory or file is left alone (the driver returns EINVAL).  An inode
 * it reads carries the driver's decoded time (SPEC-§9.15): the stored
 * offset is added as an unsigned number of minutes, and writeback stores
 * that value with the writer's own offset beside it.  A new entry is read
 * back the same way, so a new directory's first writeback drifts as well.
 *
 * The correct writer's file data waits in a queue until writeback; a freed
 * block's queued data is dropped.  The driver's data goes out at once
 * (writepage right after the write), through its page cache (driver mode
 * only): per file, the pages of WR_PAGE_SIZE bytes written in this mount
 * and the file blocks whose buffer is mapped to a disk block.  A mapped
 * buffer is not mapped again, so only the first write of a block in a
 * mount grows the file (SPEC-§9.13); truncation drops pages and buffers.
 *
 * Undo: an operation that may be refused after changing the tree in memory
 * records each inode's first state (wr_isave) and restores them all on
 * refusal, before anything was written.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writer_priv.h"

static enum lanyfs_err add_inode(struct lanyfs_writer *w, struct winode *in,
                                 struct lanyfs_error *err)
{
    if (w->ninodes == w->inodes_cap) {
        size_t ncap = w->inodes_cap ? w->inodes_cap * 2 : 64;
        struct winode **n = realloc(w->inodes, ncap * sizeof(*n));
        if (n == NULL)
            return lanyfs_fail(err, LANYFS_E_NOMEM, in->blk, "out of memory");
        w->inodes = n;
        w->inodes_cap = ncap;
    }
    if (!lanyfs_blockmap_put(&w->inode_map, in->blk, w->ninodes))
        return lanyfs_fail(err, LANYFS_E_NOMEM, in->blk, "out of memory");
    w->inodes[w->ninodes++] = in;
    return LANYFS_OK;
}

/*
 * lanyfs_time_lts_to_kts then lanyfs_time_kts_to_lts: the offset is added
 * as an unsigned 16-bit number of minutes, and the writer's offset is
 * stored.  A timestamp that names no valid time is kept as it is.
 */
static void drift_time(const struct lanyfs_writer *w, struct lanyfs_ts *ts)
{
    time_t t;
    if (!lanyfs_ts_to_time(ts, &t))
        return;
    uint8_t res7 = ts->res7;
    uint16_t res14 = ts->res14;
    t += (time_t)(uint16_t)ts->offset * 60;
    lanyfs_ts_from_time(ts, t, ts->nsec, w->now.offset);
    ts->res7 = res7;
    ts->res14 = res14;
}

/* The driver's in-memory name: strncpy of at most 255 bytes (SPEC-§9.16). */
static void driver_name(struct lanyfs_entry *e)
{
    size_t n = e->name_len > LANYFS_NAME_MAX ? LANYFS_NAME_MAX : e->name_len;
    memset(e->name + n, 0, LANYFS_NAME_FIELD - n);
    e->name_len = n;
}

enum lanyfs_err wr_iget(struct lanyfs_writer *w, uint64_t blk, struct winode **out,
                        struct lanyfs_error *err)
{
    uint64_t idx;
    *out = NULL;
    if (lanyfs_blockmap_get(&w->inode_map, blk, &idx)) {
        *out = w->inodes[idx];
        return LANYFS_OK;
    }
    if (blk == 0 || blk >= w->g->blocks)
        return lanyfs_fail(err, LANYFS_E_RANGE, blk,
                           "entry block %" PRIu64 " lies outside the device (%" PRIu64
                           " blocks)",
                           blk, w->g->blocks);
    struct winode *in = calloc(1, sizeof(*in));
    if (in == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, blk, "out of memory");
    enum lanyfs_err rc = lanyfs_fs_read_entry(w->fs, blk, &in->e, err);
    if (rc != LANYFS_OK) {
        free(in);
        return rc;
    }
    in->blk = blk;
    in->nlink = 1; /* the driver never sets it for what it reads (SPEC-§9.12) */
    if (drv(w)) {
        driver_name(&in->e);
        drift_time(w, &in->e.modified);
    }
    rc = add_inode(w, in, err);
    if (rc != LANYFS_OK) {
        free(in);
        return rc;
    }
    *out = in;
    return LANYFS_OK;
}

enum lanyfs_err wr_inew(struct lanyfs_writer *w, uint64_t blk, const struct lanyfs_entry *e,
                        struct winode **out, struct lanyfs_error *err)
{
    uint64_t idx;
    if (lanyfs_blockmap_get(&w->inode_map, blk, &idx))
        wr_ievict(w, w->inodes[idx]);
    struct winode *in = calloc(1, sizeof(*in));
    if (in == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, blk, "out of memory");
    in->blk = blk;
    in->e = *e;
    in->nlink = lanyfs_entry_is_dir(e) ? 2 : 1; /* mkdir: inc_nlink */
    if (drv(w)) {
        drift_time(w, &in->e.modified); /* lanyfs_iget of the new block */
        in->fresh_time = false;
    } else {
        in->fresh_time = true;
    }
    enum lanyfs_err rc = add_inode(w, in, err);
    if (rc != LANYFS_OK) {
        free(in);
        return rc;
    }
    *out = in;
    return LANYFS_OK;
}

void wr_idirty(struct lanyfs_writer *w, struct winode *in)
{
    if (!in->dirty) {
        in->dirty = true;
        in->dirty_seq = ++w->dirty_counter;
    }
}

void wr_itouch(struct lanyfs_writer *w, struct winode *in)
{
    in->e.modified = w->now;
    in->fresh_time = true;
    wr_idirty(w, in);
}

static void pc_free(struct lanyfs_writer *w, struct winode *in)
{
    struct wpages *pc = in->pc;
    if (pc == NULL)
        return;
    for (size_t i = 0; i < pc->n; i++) {
        if (pc->data[i] != NULL) {
            free(pc->data[i]);
            w->cached_pages--;
        }
    }
    free(pc->data);
    lanyfs_blockmap_clear(&pc->pages);
    lanyfs_blockmap_clear(&pc->mapped);
    free(pc);
    in->pc = NULL;
}

void wr_ievict(struct lanyfs_writer *w, struct winode *in)
{
    lanyfs_blockmap_del(&w->inode_map, in->blk);
    pc_free(w, in);
    in->evicted = true;
    in->dirty = false;
}

/* ---- undo ------------------------------------------------------------------ */

void wr_undo_begin(struct lanyfs_writer *w)
{
    w->undo_seq = ++w->undo_gen;
    w->nundo = 0;
    w->undo_failed = false;
}

void wr_isave(struct lanyfs_writer *w, struct winode *in)
{
    if (w->undo_seq == 0 || in->undo_seq == w->undo_seq)
        return;
    if (w->nundo == w->undo_cap) {
        size_t ncap = w->undo_cap ? w->undo_cap * 2 : 16;
        struct undo_rec *n = realloc(w->undo, ncap * sizeof(*n));
        if (n == NULL) {
            w->undo_failed = true;
            return;
        }
        w->undo = n;
        w->undo_cap = ncap;
    }
    in->undo_seq = w->undo_seq;
    w->undo[w->nundo].in = in;
    w->undo[w->nundo].old = *in;
    w->nundo++;
}

void wr_undo_rollback(struct lanyfs_writer *w)
{
    for (size_t i = w->nundo; i-- > 0;) {
        struct winode *in = w->undo[i].in;
        const struct winode *old = &w->undo[i].old;
        in->e = old->e;
        in->nlink = old->nlink;
        in->dirty = old->dirty;
        in->dirty_seq = old->dirty_seq;
        in->fresh_time = old->fresh_time;
    }
    wr_undo_end(w);
}

void wr_undo_end(struct lanyfs_writer *w)
{
    w->undo_seq = 0;
    w->nundo = 0;
}

/* ---- writeback ------------------------------------------------------------- */

static int by_dirty_seq(const void *a, const void *b)
{
    const struct winode *x = *(struct winode *const *)a, *y = *(struct winode *const *)b;
    return x->dirty_seq < y->dirty_seq ? -1 : x->dirty_seq > y->dirty_seq;
}

/* lanyfs_write_inode over the block b as read; false when the driver leaves it alone. */
static bool driver_writeback(const struct lanyfs_writer *w, const struct winode *in, uint8_t *b)
{
    uint8_t type = b[LANYFS_HDR_TYPE];
    if (type == LANYFS_TYPE_DIR) {
        lanyfs_put64(b + LANYFS_EN_SUBTREE, in->e.subtree);
    } else if (type == LANYFS_TYPE_FILE) {
        lanyfs_put64(b + LANYFS_EN_SUBTREE, in->e.subtree);
        lanyfs_put64(b + LANYFS_EN_SIZE, in->e.size);
    } else {
        return false;
    }
    size_t n = strnlen((const char *)in->e.name, LANYFS_NAME_MAX);
    memset(b + LANYFS_EN_NAME, 0, LANYFS_NAME_FIELD);
    memcpy(b + LANYFS_EN_NAME, in->e.name, n);
    struct lanyfs_ts ts = in->e.modified;
    ts.offset = w->now.offset; /* lanyfs_time_kts_to_lts: sys_tz at writeback */
    ts.res7 = b[LANYFS_EN_MODIFIED + LANYFS_TS_RES7];
    ts.res14 = lanyfs_get16(b + LANYFS_EN_MODIFIED + LANYFS_TS_RES14);
    lanyfs_ts_encode(&ts, b + LANYFS_EN_MODIFIED);
    uint16_t attr = lanyfs_get16(b + LANYFS_EN_ATTR);
    attr |= in->e.attr & (LANYFS_ATTR_NOWRITE | LANYFS_ATTR_NOEXEC);
    lanyfs_put16(b + LANYFS_EN_ATTR, attr);
    lanyfs_put64(b + LANYFS_EN_LEFT, in->e.left);
    lanyfs_put64(b + LANYFS_EN_RIGHT, in->e.right);
    lanyfs_put16(b + LANYFS_HDR_WRCNT, (uint16_t)(lanyfs_get16(b + LANYFS_HDR_WRCNT) + 1u));
    return true;
}

enum lanyfs_err wr_iwriteback(struct lanyfs_writer *w, struct lanyfs_error *err)
{
    size_t n = 0;
    struct winode **list = malloc((w->ninodes + 1) * sizeof(*list));
    if (list == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    for (size_t i = 0; i < w->ninodes; i++)
        if (w->inodes[i]->dirty && !w->inodes[i]->evicted)
            list[n++] = w->inodes[i];
    qsort(list, n, sizeof(*list), by_dirty_seq);
    enum lanyfs_err rc = LANYFS_OK;
    for (size_t i = 0; i < n; i++) {
        struct winode *in = list[i];
        in->dirty = false;
        if (in->nlink == 0)
            continue; /* SPEC-§9.12: writeback skips an inode with no links */
        uint8_t *b = w->scratch;
        rc = lanyfs_fs_read_block(w->fs, in->blk, b, err);
        if (rc != LANYFS_OK)
            break;
        if (drv(w)) {
            if (!driver_writeback(w, in, b))
                continue;
            in->e.wrcnt = lanyfs_get16(b + LANYFS_HDR_WRCNT);
        } else {
            in->e.wrcnt++;
            lanyfs_entry_encode(&in->e, b);
        }
        rc = wr_direct(w, in->blk, b, err);
        if (rc != LANYFS_OK)
            break;
        in->fresh_time = false;
    }
    free(list);
    return rc;
}

void wr_ifree_all(struct lanyfs_writer *w)
{
    for (size_t i = 0; i < w->ninodes; i++) {
        pc_free(w, w->inodes[i]);
        free(w->inodes[i]);
    }
    free(w->inodes);
    w->inodes = NULL;
    w->ninodes = w->inodes_cap = 0;
    lanyfs_blockmap_clear(&w->inode_map);
    for (size_t i = 0; i < w->npend; i++)
        free(w->pend[i].data);
    free(w->pend);
    w->pend = NULL;
    w->npend = w->pend_cap = 0;
    w->pend_bytes = 0;
    lanyfs_blockmap_clear(&w->pend_map);
    free(w->undo);
    w->undo = NULL;
    w->nundo = w->undo_cap = 0;
}

/* ---- data queue ------------------------------------------------------------ */

enum lanyfs_err wr_queue_data(struct lanyfs_writer *w, uint64_t blk, const uint8_t *data,
                              struct lanyfs_error *err)
{
    uint32_t bs = w->g->blocksize;
    wr_drop_data(w, blk);
    if (w->npend == w->pend_cap) {
        size_t ncap = w->pend_cap ? w->pend_cap * 2 : 256;
        struct pending_data *n = realloc(w->pend, ncap * sizeof(*n));
        if (n == NULL)
            return lanyfs_fail(err, LANYFS_E_NOMEM, blk, "out of memory");
        w->pend = n;
        w->pend_cap = ncap;
    }
    uint8_t *copy = malloc(bs);
    if (copy == NULL || !lanyfs_blockmap_put(&w->pend_map, blk, w->npend)) {
        free(copy);
        return lanyfs_fail(err, LANYFS_E_NOMEM, blk, "out of memory");
    }
    memcpy(copy, data, bs);
    w->pend[w->npend].blk = blk;
    w->pend[w->npend].data = copy;
    w->npend++;
    w->pend_bytes += bs;
    if (w->pend_bytes >= WRITER_PENDING_MAX)
        return lanyfs_writer_sync(w, err);
    return LANYFS_OK;
}

void wr_drop_data(struct lanyfs_writer *w, uint64_t blk)
{
    uint64_t idx;
    if (!lanyfs_blockmap_get(&w->pend_map, blk, &idx))
        return;
    free(w->pend[idx].data);
    w->pend[idx].data = NULL;
    w->pend_bytes -= w->g->blocksize;
    lanyfs_blockmap_del(&w->pend_map, blk);
}

const uint8_t *wr_queued_data(struct lanyfs_writer *w, uint64_t blk)
{
    uint64_t idx;
    if (!lanyfs_blockmap_get(&w->pend_map, blk, &idx))
        return NULL;
    return w->pend[idx].data;
}

enum lanyfs_err wr_flush_data(struct lanyfs_writer *w, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    for (size_t i = 0; i < w->npend; i++) {
        if (w->pend[i].data == NULL)
            continue;
        if (rc == LANYFS_OK) {
            wr_freelist_forget(w, w->pend[i].blk);
            rc = lanyfs_fs_write_block(w->fs, w->pend[i].blk, w->pend[i].data, err);
        }
        free(w->pend[i].data);
        w->pend[i].data = NULL;
    }
    w->npend = 0;
    w->pend_bytes = 0;
    lanyfs_blockmap_clear(&w->pend_map);
    return rc;
}

/* ---- the driver's page cache ----------------------------------------------- */

uint8_t *wr_page_get(struct winode *in, uint64_t page)
{
    uint64_t idx;
    if (in->pc == NULL || !lanyfs_blockmap_get(&in->pc->pages, page, &idx))
        return NULL;
    return in->pc->data[idx];
}

static struct wpages *pc_of(struct winode *in)
{
    if (in->pc == NULL) {
        in->pc = calloc(1, sizeof(*in->pc));
        if (in->pc != NULL) {
            lanyfs_blockmap_init(&in->pc->pages);
            lanyfs_blockmap_init(&in->pc->mapped);
        }
    }
    return in->pc;
}

uint8_t *wr_page_add(struct lanyfs_writer *w, struct winode *in, uint64_t page)
{
    struct wpages *pc = pc_of(in);
    if (pc == NULL)
        return NULL;
    if (pc->n == pc->cap) {
        size_t ncap = pc->cap ? pc->cap * 2 : 16;
        uint8_t **n = realloc(pc->data, ncap * sizeof(*n));
        if (n == NULL)
            return NULL;
        pc->data = n;
        pc->cap = ncap;
    }
    uint8_t *p = calloc(1, WR_PAGE_SIZE);
    if (p == NULL || !lanyfs_blockmap_put(&pc->pages, page, pc->n)) {
        free(p);
        return NULL;
    }
    pc->data[pc->n++] = p;
    w->cached_pages++;
    return p;
}

bool wr_page_mapped(const struct winode *in, uint64_t fblk, uint64_t *dblk)
{
    return in->pc != NULL && lanyfs_blockmap_get(&in->pc->mapped, fblk, dblk);
}

bool wr_page_map(struct winode *in, uint64_t fblk, uint64_t dblk)
{
    struct wpages *pc = pc_of(in);
    return pc != NULL && lanyfs_blockmap_put(&pc->mapped, fblk, dblk);
}

void wr_page_truncate(struct lanyfs_writer *w, struct winode *in, uint64_t size)
{
    struct wpages *pc = in->pc;
    if (pc == NULL)
        return;
    if (size == 0) {
        pc_free(w, in);
        return;
    }
    uint64_t keep_blocks = lanyfs_geom_blocks_for_size(w->g, size);
    uint64_t keep_pages = (size >> WR_PAGE_BITS) + ((size & (WR_PAGE_SIZE - 1)) != 0);
    /* Collect first: the maps must not change while they are scanned. */
    size_t nb = 0, np = 0;
    uint64_t *drop_b = malloc((pc->mapped.count + 1) * sizeof(*drop_b));
    uint64_t *drop_p = malloc((pc->pages.count + 1) * sizeof(*drop_p));
    if (drop_b == NULL || drop_p == NULL) {
        free(drop_b);
        free(drop_p);
        pc_free(w, in); /* out of memory: drop the whole cache, as pressure would */
        return;
    }
    size_t pos = 0;
    uint64_t k;
    while (lanyfs_blockmap_next(&pc->mapped, &pos, &k, NULL))
        if (k >= keep_blocks)
            drop_b[nb++] = k;
    pos = 0;
    while (lanyfs_blockmap_next(&pc->pages, &pos, &k, NULL))
        if (k >= keep_pages)
            drop_p[np++] = k;
    for (size_t i = 0; i < nb; i++)
        lanyfs_blockmap_del(&pc->mapped, drop_b[i]);
    for (size_t i = 0; i < np; i++) {
        uint64_t idx;
        if (lanyfs_blockmap_get(&pc->pages, drop_p[i], &idx)) {
            free(pc->data[idx]);
            pc->data[idx] = NULL;
            w->cached_pages--;
        }
        lanyfs_blockmap_del(&pc->pages, drop_p[i]);
    }
    free(drop_b);
    free(drop_p);
    /* truncate_partial_page: the cached tail past the new size reads as zeros. */
    uint8_t *last = wr_page_get(in, keep_pages - 1);
    uint32_t in_page = (uint32_t)(size & (WR_PAGE_SIZE - 1));
    if (last != NULL && in_page != 0)
        memset(last + in_page, 0, WR_PAGE_SIZE - in_page);
}

void wr_page_drop_all(struct lanyfs_writer *w)
{
    for (size_t i = 0; i < w->ninodes; i++)
        pc_free(w, w->inodes[i]);
}
