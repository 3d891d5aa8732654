/*
 * inode.c -- the writer's cache of file and directory blocks.
 *
 * A mount holds each entry block it touches in memory, as the kernel holds
 * inodes.  Links, subtree/data, size, name, modified and attr change there
 * and reach the disk only at writeback: one whole-block write with wrcnt+1,
 * skipped while the link count is 0 (SPEC-§8, §9.12).  File data waits in
 * a queue for writepage, which also runs at writeback; a freed block's
 * queued data is dropped, as truncation drops dirty pages.
 *
 * In driver mode an inode read from disk carries the driver's decoded time
 * (SPEC-§9.15): the stored offset is added as an unsigned number of
 * minutes, and a writeback without a fresh time stores that drifted value.
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

static void drift_time(struct lanyfs_ts *ts)
{
    time_t t;
    if (ts->offset == 0 || !lanyfs_ts_to_time(ts, &t))
        return;
    t += (time_t)(uint16_t)ts->offset * 60;
    lanyfs_ts_from_time(ts, t, ts->nsec, ts->offset);
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
    if (drv(w))
        drift_time(&in->e.modified);
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
    in->nlink = lanyfs_entry_is_dir(e) ? 2 : 1;
    in->fresh_time = true;
    enum lanyfs_err rc = add_inode(w, in, err);
    if (rc != LANYFS_OK) {
        free(in);
        return rc;
    }
    wr_idirty(w, in);
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

void wr_ievict(struct lanyfs_writer *w, struct winode *in)
{
    lanyfs_blockmap_del(&w->inode_map, in->blk);
    in->evicted = true;
    in->dirty = false;
}

static int by_dirty_seq(const void *a, const void *b)
{
    const struct winode *x = *(struct winode *const *)a, *y = *(struct winode *const *)b;
    return x->dirty_seq < y->dirty_seq ? -1 : x->dirty_seq > y->dirty_seq;
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
        in->e.wrcnt++;
        lanyfs_entry_encode(&in->e, b);
        rc = lanyfs_fs_write_block(w->fs, in->blk, b, err);
        if (rc != LANYFS_OK)
            break;
        in->fresh_time = false;
    }
    free(list);
    return rc;
}

void wr_ifree_all(struct lanyfs_writer *w)
{
    for (size_t i = 0; i < w->ninodes; i++)
        free(w->inodes[i]);
    free(w->inodes);
    w->inodes = NULL;
    w->ninodes = w->inodes_cap = 0;
    lanyfs_blockmap_clear(&w->inode_map);
    for (size_t i = 0; i < w->npend; i++)
        free(w->pend[i].data);
    free(w->pend);
    w->pend = NULL;
    w->npend = w->pend_cap = 0;
    lanyfs_blockmap_clear(&w->pend_map);
}

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
        if (rc == LANYFS_OK)
            rc = lanyfs_fs_write_block(w->fs, w->pend[i].blk, w->pend[i].data, err);
        free(w->pend[i].data);
        w->pend[i].data = NULL;
    }
    w->npend = 0;
    w->pend_bytes = 0;
    lanyfs_blockmap_clear(&w->pend_map);
    return rc;
}
