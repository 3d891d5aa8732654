/*
 * writer.c -- mount, unmount and the path operations of the writer.
 *
 * See writer.h for the two modes.  Each operation first resolves and checks
 * everything it can (names, parents, types, free space) and only then
 * writes, so a refused operation leaves the disk as it was.  What happens
 * after that point follows the mode: the correct writer keeps the
 * filesystem consistent; the 2012 driver's steps and failures are
 * reproduced as SPEC-§8 and §9 describe them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writer_priv.h"

#define DRIVER_MAX_FILE 0xffffffffull /* SPEC-§9.14 */

enum lanyfs_err lanyfs_writer_mount(struct lanyfs_fs *fs, enum lanyfs_write_mode mode,
                                    struct lanyfs_writer **out, struct lanyfs_error *err)
{
    *out = NULL;
    const struct lanyfs_sb_problem *pr;
    size_t np = lanyfs_fs_problems(fs, &pr);
    for (size_t i = 0; i < np; i++)
        if (pr[i].fatal)
            return lanyfs_fail(err, pr[i].code, 0, "refusing to write: %s", pr[i].msg);
    if (!lanyfs_image_writable(lanyfs_fs_image(fs)))
        return lanyfs_fail(err, LANYFS_E_READONLY, LANYFS_NO_BLOCK, "image is open read-only");
    struct lanyfs_writer *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    w->fs = fs;
    w->mode = mode;
    w->g = lanyfs_fs_geom(fs);
    w->sb = *lanyfs_fs_super(fs);
    lanyfs_blockmap_init(&w->inode_map);
    lanyfs_blockmap_init(&w->pend_map);
    lanyfs_ts_now(&w->now);
    w->scratch = malloc(w->g->blocksize);
    if (w->scratch == NULL) {
        free(w);
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    }
    if (drv(w)) {
        w->sb.freetail = w->sb.freehead; /* SPEC-§9.3 */
    } else {
        uint64_t chains, slots, tail;
        enum lanyfs_err rc = lanyfs_freelist_count(fs, &chains, &slots, &tail, err);
        if (rc != LANYFS_OK) {
            lanyfs_error_prefix(err, "refusing to write (run fsck-lanyfs)");
            free(w->scratch);
            free(w);
            return rc;
        }
        w->sb.freetail = tail;
        w->sb.freeblocks = chains + slots;
        if (chains == 0)
            w->sb.freehead = w->sb.freetail = w->sb.freeblocks = 0;
    }
    /* The root must be a directory before anything is changed. */
    struct winode *root;
    enum lanyfs_err rc = wr_iget(w, w->sb.rootdir, &root, err);
    if (rc == LANYFS_OK && !lanyfs_entry_is_dir(&root->e))
        rc = lanyfs_fail(err, LANYFS_E_NOTDIR, w->sb.rootdir,
                         "root directory block %" PRIu64 " is a file", w->sb.rootdir);
    if (rc != LANYFS_OK) {
        wr_ifree_all(w);
        free(w->scratch);
        free(w);
        return rc;
    }
    *out = w;
    return LANYFS_OK;
}

void lanyfs_writer_set_sync_hook(struct lanyfs_writer *w, lanyfs_sync_hook hook, void *ctx)
{
    w->sync_hook = hook;
    w->sync_ctx = ctx;
}

void lanyfs_writer_set_time(struct lanyfs_writer *w, const struct lanyfs_ts *now)
{
    w->now = *now;
}

void lanyfs_writer_state(const struct lanyfs_writer *w, struct lanyfs_writer_state *st)
{
    st->freehead = w->sb.freehead;
    st->freetail = w->sb.freetail;
    st->freeblocks = w->sb.freeblocks;
    st->allocs = w->allocs;
    st->frees = w->frees;
}

enum lanyfs_err lanyfs_writer_sync(struct lanyfs_writer *w, struct lanyfs_error *err)
{
    enum lanyfs_err rc = wr_flush_data(w, err);
    if (rc == LANYFS_OK)
        rc = wr_iwriteback(w, err);
    return rc;
}

enum lanyfs_err lanyfs_writer_unmount(struct lanyfs_writer *w, struct lanyfs_error *err)
{
    enum lanyfs_err rc = lanyfs_writer_sync(w, err);
    if (rc == LANYFS_OK)
        rc = wr_super_sync(w, err); /* lanyfs_put_super always rewrites it */
    if (rc == LANYFS_OK && w->sync_hook != NULL)
        w->sync_hook(w->sync_ctx);
    if (rc == LANYFS_OK)
        rc = lanyfs_image_sync(lanyfs_fs_image(w->fs), err);
    wr_ifree_all(w);
    free(w->scratch);
    free(w);
    return rc;
}

/* ---- paths ----------------------------------------------------------------- */

struct where {
    struct winode *parent; /* the directory that holds (or will hold) the name */
    const char *name;      /* last component */
    size_t len;            /* its length */
    struct winode *node;   /* the entry, NULL when absent */
};

/*
 * Resolve path in memory: every component but the last must be a directory.
 * The last one may be absent (node NULL).  The root itself has no parent.
 */
static enum lanyfs_err resolve(struct lanyfs_writer *w, const char *path, struct where *out,
                               struct lanyfs_error *err)
{
    struct winode *cur;
    memset(out, 0, sizeof(*out));
    enum lanyfs_err rc = wr_iget(w, w->sb.rootdir, &cur, err);
    if (rc != LANYFS_OK)
        return rc;
    const char *p = path;
    while (*p == '/')
        p++;
    if (*p == '\0') {
        out->node = cur;
        return LANYFS_OK;
    }
    for (;;) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *rest = p + len;
        while (*rest == '/')
            rest++;
        if (len > LANYFS_NAME_MAX)
            return lanyfs_fail(err, LANYFS_E_NAME, LANYFS_NO_BLOCK,
                               "%s: the name '%.*s...' is %zu bytes long; LanyFS allows 255",
                               path, 16, p, len);
        if (!lanyfs_entry_is_dir(&cur->e))
            return lanyfs_fail(err, LANYFS_E_NOTDIR, cur->blk,
                               "%s: '%.*s' is below a file, not a directory", path, (int)len, p);
        struct winode *next = NULL;
        struct lanyfs_error sub;
        rc = wr_tree_lookup(w, cur, p, len, &next, &sub);
        if (rc != LANYFS_OK && rc != LANYFS_E_NOTFOUND) {
            if (err)
                *err = sub;
            return rc;
        }
        if (*rest == '\0') {
            out->parent = cur;
            out->name = p;
            out->len = len;
            out->node = next;
            return LANYFS_OK;
        }
        if (next == NULL)
            return lanyfs_fail(err, LANYFS_E_NOTFOUND, cur->blk, "%s: '%.*s' does not exist",
                               path, (int)len, p);
        cur = next;
        p = rest;
    }
}

static enum lanyfs_err need_parent(const struct where *wh, const char *path,
                                   struct lanyfs_error *err)
{
    if (wh->parent == NULL)
        return lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                           "%s: the root directory cannot be changed that way", path);
    return LANYFS_OK;
}

static enum lanyfs_err check_space(struct lanyfs_writer *w, uint64_t need,
                                   struct lanyfs_error *err)
{
    uint64_t have;
    enum lanyfs_err rc = wr_free_available(w, &have, err);
    if (rc != LANYFS_OK)
        return rc;
    if (have < need)
        return lanyfs_fail(err, LANYFS_E_NOSPC, LANYFS_NO_BLOCK,
                           "no space left on the device: %" PRIu64 " blocks needed, %" PRIu64
                           " free",
                           need, have);
    return LANYFS_OK;
}

/* Allocate, write and register a new entry block; link it into parent. */
static enum lanyfs_err create_entry(struct lanyfs_writer *w, struct winode *parent,
                                    const char *name, size_t len, uint8_t type,
                                    struct winode **out, struct lanyfs_error *err)
{
    uint64_t blk;
    enum lanyfs_err rc = wr_alloc(w, &blk, err);
    if (rc != LANYFS_OK)
        return rc;
    struct lanyfs_entry e;
    memset(&e, 0, sizeof(e));
    e.type = type;
    e.created = e.modified = w->now;
    /* The driver gives new files no-exec (SPEC-§9.14). */
    e.attr = (drv(w) && type == LANYFS_TYPE_FILE) ? LANYFS_ATTR_NOEXEC : 0;
    lanyfs_entry_set_name(&e, name, len);
    uint8_t *b = calloc(1, w->g->blocksize);
    if (b == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, blk, "out of memory");
    lanyfs_entry_encode(&e, b);
    rc = wr_direct(w, blk, b, err);
    free(b);
    if (rc != LANYFS_OK)
        return rc;
    struct winode *in;
    if ((rc = wr_inew(w, blk, &e, &in, err)) != LANYFS_OK)
        return rc;
    struct lanyfs_error ierr;
    rc = wr_tree_insert(w, parent, in, &ierr);
    if (rc != LANYFS_OK) {
        if (drv(w)) {
            /* SPEC-§9.14: create ignores a failed insert; the block is orphaned. */
            *out = in;
            return LANYFS_OK;
        }
        if (err)
            *err = ierr;
        wr_ievict(w, in);
        wr_free(w, blk, NULL);
        return rc;
    }
    *out = in;
    return LANYFS_OK;
}

static bool name_ok(const char *name, size_t len)
{
    return len > 0 && len <= LANYFS_NAME_MAX && memchr(name, '\0', len) == NULL;
}

enum lanyfs_err lanyfs_writer_mkdir(struct lanyfs_writer *w, const char *path,
                                    struct lanyfs_error *err)
{
    struct where wh;
    enum lanyfs_err rc = resolve(w, path, &wh, err);
    if (rc != LANYFS_OK)
        return rc;
    if ((rc = need_parent(&wh, path, err)) != LANYFS_OK)
        return rc;
    if (wh.node != NULL)
        return lanyfs_fail(err, LANYFS_E_EXISTS, wh.node->blk, "%s: already exists", path);
    if (!name_ok(wh.name, wh.len))
        return lanyfs_fail(err, LANYFS_E_NAME, LANYFS_NO_BLOCK, "%s: invalid name", path);
    if ((rc = check_space(w, 1, err)) != LANYFS_OK)
        return rc;
    struct winode *in;
    return create_entry(w, wh.parent, wh.name, wh.len, LANYFS_TYPE_DIR, &in, err);
}

/* Write len bytes at off into file f (mapped with wr_getblk). */
static enum lanyfs_err write_data(struct lanyfs_writer *w, struct winode *f, uint64_t off,
                                  const uint8_t *data, uint64_t len, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    uint8_t *b = malloc(g->blocksize);
    if (b == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
    enum lanyfs_err rc = LANYFS_OK;
    uint64_t done = 0;
    while (done < len) {
        uint64_t pos = off + done;
        uint64_t fblk = pos >> g->blockbits;
        uint32_t in = (uint32_t)(pos & (g->blocksize - 1));
        uint64_t n = g->blocksize - in;
        if (n > len - done)
            n = len - done;
        bool mapped_before = pos < f->e.size || in != 0;
        uint64_t dblk;
        if ((rc = wr_getblk(w, f, fblk, &dblk, err)) != LANYFS_OK)
            break;
        memset(b, 0, g->blocksize);
        bool partial = in != 0 || n < g->blocksize;
        if (partial && mapped_before && !drv(w) && dblk != 0) {
            /* Correct mode keeps the rest of the block; the driver zeroes an
             * uncached page's rest (SPEC-§9.14). */
            const uint8_t *q = wr_queued_data(w, dblk);
            if (q != NULL)
                memcpy(b, q, g->blocksize);
            else if ((rc = lanyfs_fs_read_block(w->fs, dblk, b, err)) != LANYFS_OK)
                break;
            if (pos + n < f->e.size && in + n < g->blocksize) {
                /* keep the bytes after the write */
            } else if (pos + n >= f->e.size) {
                memset(b + in + n, 0, g->blocksize - in - n);
            }
        }
        memcpy(b + in, data + done, n);
        if ((rc = wr_queue_data(w, dblk, b, err)) != LANYFS_OK)
            break;
        done += n;
    }
    free(b);
    return rc;
}

static enum lanyfs_err check_file_size(struct lanyfs_writer *w, const char *path, uint64_t size,
                                       struct lanyfs_error *err)
{
    if (drv(w) && size > DRIVER_MAX_FILE)
        return lanyfs_fail(err, LANYFS_E_FBIG, LANYFS_NO_BLOCK,
                           "%s: %" PRIu64 " bytes is larger than the 2012 driver's largest file "
                           "(4 GiB - 1)",
                           path, size);
    uint64_t limit = lanyfs_geom_tree_capacity(w->g, 63);
    if (lanyfs_geom_blocks_for_size(w->g, size) > limit)
        return lanyfs_fail(err, LANYFS_E_FBIG, LANYFS_NO_BLOCK, "%s: file too large", path);
    return LANYFS_OK;
}

enum lanyfs_err lanyfs_writer_put(struct lanyfs_writer *w, const char *path, const void *data,
                                  uint64_t len, const struct lanyfs_ts *mtime,
                                  struct lanyfs_error *err)
{
    struct where wh;
    enum lanyfs_err rc = resolve(w, path, &wh, err);
    if (rc != LANYFS_OK)
        return rc;
    if ((rc = need_parent(&wh, path, err)) != LANYFS_OK)
        return rc;
    if (wh.node != NULL && !lanyfs_entry_is_file(&wh.node->e))
        return lanyfs_fail(err, LANYFS_E_ISDIR, wh.node->blk, "%s: is a directory", path);
    if (!name_ok(wh.name, wh.len))
        return lanyfs_fail(err, LANYFS_E_NAME, LANYFS_NO_BLOCK, "%s: invalid name", path);
    if ((rc = check_file_size(w, path, len, err)) != LANYFS_OK)
        return rc;
    uint64_t nblocks = lanyfs_geom_blocks_for_size(w->g, len);
    struct winode empty = {0};
    uint64_t need;
    wr_ext_blocks_needed(w, &empty, nblocks, &need, err);
    if (wh.node == NULL)
        need++;
    else if (!drv(w)) {
        /* Replacing frees the old blocks first. */
        uint64_t old;
        wr_ext_blocks_needed(w, &empty, lanyfs_geom_blocks_for_size(w->g, wh.node->e.size),
                             &old, err);
        need = need > old ? need - old : 0;
    }
    if (drv(w) && nblocks > w->g->extmax)
        need = 0; /* the driver's growth loop takes whatever there is (SPEC-§9.7) */
    if ((rc = check_space(w, need, err)) != LANYFS_OK)
        return rc;

    struct winode *f = wh.node;
    if (f != NULL) {
        /* open(O_TRUNC): truncate to 0 first */
        if ((rc = wr_ext_truncate(w, f, 0, err)) != LANYFS_OK)
            return rc;
        f->e.size = 0;
        wr_itouch(w, f);
    } else if ((rc = create_entry(w, wh.parent, wh.name, wh.len, LANYFS_TYPE_FILE, &f, err)) !=
               LANYFS_OK) {
        return rc;
    }
    rc = write_data(w, f, 0, data, len, err);
    f->e.size = len;
    if (mtime != NULL) {
        f->e.modified = *mtime;
        f->fresh_time = true;
    } else {
        f->e.modified = w->now;
        f->fresh_time = true;
    }
    wr_idirty(w, f);
    return rc;
}

static enum lanyfs_err resolve_file(struct lanyfs_writer *w, const char *path, struct where *wh,
                                    struct lanyfs_error *err)
{
    enum lanyfs_err rc = resolve(w, path, wh, err);
    if (rc != LANYFS_OK)
        return rc;
    if (wh->node == NULL)
        return lanyfs_fail(err, LANYFS_E_NOTFOUND, LANYFS_NO_BLOCK, "%s: does not exist", path);
    if (!lanyfs_entry_is_file(&wh->node->e))
        return lanyfs_fail(err, LANYFS_E_ISDIR, wh->node->blk, "%s: is a directory", path);
    return LANYFS_OK;
}

enum lanyfs_err lanyfs_writer_pwrite(struct lanyfs_writer *w, const char *path, uint64_t off,
                                     const void *data, uint64_t len, struct lanyfs_error *err)
{
    struct where wh;
    enum lanyfs_err rc = resolve_file(w, path, &wh, err);
    if (rc != LANYFS_OK)
        return rc;
    uint64_t end;
    if (__builtin_add_overflow(off, len, &end))
        return lanyfs_fail(err, LANYFS_E_FBIG, LANYFS_NO_BLOCK, "%s: offset too large", path);
    if ((rc = check_file_size(w, path, end, err)) != LANYFS_OK)
        return rc;
    struct winode *f = wh.node;
    uint64_t newsize = end > f->e.size ? end : f->e.size;
    uint64_t need;
    wr_ext_blocks_needed(w, f, lanyfs_geom_blocks_for_size(w->g, newsize), &need, err);
    if (drv(w))
        need = lanyfs_geom_blocks_for_size(w->g, len) + 1; /* it grows on every call */
    if ((rc = check_space(w, need, err)) != LANYFS_OK)
        return rc;
    rc = write_data(w, f, off, data, len, err);
    f->e.size = newsize;
    wr_itouch(w, f);
    return rc;
}

enum lanyfs_err lanyfs_writer_truncate(struct lanyfs_writer *w, const char *path, uint64_t size,
                                       struct lanyfs_error *err)
{
    struct where wh;
    enum lanyfs_err rc = resolve_file(w, path, &wh, err);
    if (rc != LANYFS_OK)
        return rc;
    if ((rc = check_file_size(w, path, size, err)) != LANYFS_OK)
        return rc;
    struct winode *f = wh.node;
    uint64_t keep = lanyfs_geom_blocks_for_size(w->g, size);
    if (size < f->e.size || drv(w)) {
        /* The driver visits every extender, even when the file grows. */
        if ((rc = wr_ext_truncate(w, f, keep, err)) != LANYFS_OK)
            return rc;
    }
    if (!drv(w) && size < f->e.size && (size & (w->g->blocksize - 1)) != 0) {
        /* Zero the tail of the last kept block, so a later growth reads zeros. */
        uint64_t dblk;
        struct lanyfs_error sub;
        if (lanyfs_file_map(w->fs, &f->e, keep - 1, &dblk, &sub) == LANYFS_OK && dblk != 0) {
            uint8_t *b = malloc(w->g->blocksize);
            if (b == NULL)
                return lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
            const uint8_t *q = wr_queued_data(w, dblk);
            if (q != NULL)
                memcpy(b, q, w->g->blocksize);
            else
                rc = lanyfs_fs_read_block(w->fs, dblk, b, err);
            if (rc == LANYFS_OK) {
                uint32_t in = (uint32_t)(size & (w->g->blocksize - 1));
                memset(b + in, 0, w->g->blocksize - in);
                rc = wr_queue_data(w, dblk, b, err);
            }
            free(b);
            if (rc != LANYFS_OK)
                return rc;
        }
    }
    f->e.size = size;
    wr_itouch(w, f);
    return LANYFS_OK;
}

/* Remove the file node from its parent: SPEC-§8 "Delete a file". */
static enum lanyfs_err do_unlink(struct lanyfs_writer *w, struct winode *parent, struct winode *f,
                                 struct lanyfs_error *err)
{
    enum lanyfs_err rc = wr_ext_truncate(w, f, 0, err);
    if (rc != LANYFS_OK)
        return rc;
    if ((rc = wr_tree_delete(w, parent, f, err)) != LANYFS_OK)
        return rc; /* driver mode: the file stays, truncated on disk (SPEC-§9.9) */
    f->nlink = 0;
    wr_ievict(w, f);
    if ((rc = wr_free(w, f->blk, err)) != LANYFS_OK)
        return rc;
    wr_itouch(w, parent);
    return LANYFS_OK;
}

/* Remove the empty directory d from parent: SPEC-§8 "Delete a directory". */
static enum lanyfs_err do_rmdir(struct lanyfs_writer *w, struct winode *parent, struct winode *d,
                                struct lanyfs_error *err)
{
    if (d->e.subtree != 0)
        return lanyfs_fail(err, LANYFS_E_NOTEMPTY, d->blk, "directory block %" PRIu64
                           " is not empty", d->blk);
    enum lanyfs_err rc = wr_tree_delete(w, parent, d, err);
    if (rc != LANYFS_OK)
        return rc;
    if (drv(w))
        parent->nlink--; /* SPEC-§9.12: wraps as the kernel's unsigned count does */
    d->nlink = 0;
    wr_ievict(w, d);
    rc = wr_free(w, d->blk, err);
    if (rc == LANYFS_OK && !drv(w))
        wr_itouch(w, parent);
    return rc;
}

enum lanyfs_err lanyfs_writer_unlink(struct lanyfs_writer *w, const char *path,
                                     struct lanyfs_error *err)
{
    struct where wh;
    enum lanyfs_err rc = resolve_file(w, path, &wh, err);
    if (rc != LANYFS_OK)
        return rc;
    return do_unlink(w, wh.parent, wh.node, err);
}

enum lanyfs_err lanyfs_writer_rmdir(struct lanyfs_writer *w, const char *path,
                                    struct lanyfs_error *err)
{
    struct where wh;
    enum lanyfs_err rc = resolve(w, path, &wh, err);
    if (rc != LANYFS_OK)
        return rc;
    if ((rc = need_parent(&wh, path, err)) != LANYFS_OK)
        return rc;
    if (wh.node == NULL)
        return lanyfs_fail(err, LANYFS_E_NOTFOUND, LANYFS_NO_BLOCK, "%s: does not exist", path);
    if (!lanyfs_entry_is_dir(&wh.node->e))
        return lanyfs_fail(err, LANYFS_E_NOTDIR, wh.node->blk, "%s: not a directory", path);
    if (wh.node->e.subtree != 0)
        return lanyfs_fail(err, LANYFS_E_NOTEMPTY, wh.node->blk, "%s: directory not empty",
                           path);
    return do_rmdir(w, wh.parent, wh.node, err);
}

/* Is node an ancestor of (or equal to) dir?  Walks dir's path from the root. */
static bool path_is_below(const char *from, const char *to)
{
    while (*from == '/')
        from++;
    while (*to == '/')
        to++;
    size_t n = strlen(from);
    while (n > 0 && from[n - 1] == '/')
        n--;
    return strncmp(from, to, n) == 0 && (to[n] == '/' || to[n] == '\0');
}

enum lanyfs_err lanyfs_writer_rename(struct lanyfs_writer *w, const char *from, const char *to,
                                     struct lanyfs_error *err)
{
    struct where src, dst;
    enum lanyfs_err rc = resolve(w, from, &src, err);
    if (rc != LANYFS_OK)
        return rc;
    if ((rc = need_parent(&src, from, err)) != LANYFS_OK)
        return rc;
    if (src.node == NULL)
        return lanyfs_fail(err, LANYFS_E_NOTFOUND, LANYFS_NO_BLOCK, "%s: does not exist", from);
    if ((rc = resolve(w, to, &dst, err)) != LANYFS_OK)
        return rc;
    if ((rc = need_parent(&dst, to, err)) != LANYFS_OK)
        return rc;
    if (!name_ok(dst.name, dst.len))
        return lanyfs_fail(err, LANYFS_E_NAME, LANYFS_NO_BLOCK, "%s: invalid name", to);
    if (dst.node == src.node)
        return LANYFS_OK;
    bool src_dir = lanyfs_entry_is_dir(&src.node->e);
    if (src_dir && path_is_below(from, to))
        return lanyfs_fail(err, LANYFS_E_INVAL, src.node->blk,
                           "cannot move %s into itself (%s)", from, to);
    if (dst.node != NULL) {
        bool dst_dir = lanyfs_entry_is_dir(&dst.node->e);
        if (src_dir && !dst_dir)
            return lanyfs_fail(err, LANYFS_E_NOTDIR, dst.node->blk, "%s: not a directory", to);
        if (!src_dir && dst_dir)
            return lanyfs_fail(err, LANYFS_E_ISDIR, dst.node->blk, "%s: is a directory", to);
        if (!drv(w) && dst_dir && dst.node->e.subtree != 0)
            return lanyfs_fail(err, LANYFS_E_NOTEMPTY, dst.node->blk, "%s: directory not empty",
                               to);
        /* The target goes first; the driver ignores a failure (SPEC-§9.9). */
        struct lanyfs_error terr;
        rc = dst_dir ? do_rmdir(w, dst.parent, dst.node, &terr)
                     : do_unlink(w, dst.parent, dst.node, &terr);
        if (rc != LANYFS_OK && !drv(w)) {
            if (err)
                *err = terr;
            return rc;
        }
    }
    struct winode *node = src.node;
    struct lanyfs_error derr;
    rc = wr_tree_delete(w, src.parent, node, &derr);
    if (rc != LANYFS_OK && !drv(w)) {
        if (err)
            *err = derr;
        return rc;
    }
    /* The driver clears the links whether the delete worked or not. */
    node->e.left = node->e.right = 0;
    lanyfs_entry_set_name(&node->e, dst.name, dst.len);
    rc = wr_tree_insert(w, dst.parent, node, err);
    wr_itouch(w, node);
    wr_itouch(w, src.parent);
    wr_itouch(w, dst.parent);
    if (rc != LANYFS_OK) {
        lanyfs_error_prefix(err, "%s: entry left in no directory (block %" PRIu64 ")", to,
                            node->blk);
        return rc;
    }
    return LANYFS_OK;
}
