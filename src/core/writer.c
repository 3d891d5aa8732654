/*
 * writer.c -- mount, unmount and the path operations of the writer.
 *
 * See writer.h for the two modes.  Every operation first resolves and
 * checks what the mode checks (names, parents, types; in correct mode also
 * the trees it will change and the exact free space), so a refused
 * operation leaves the disk as it was.
 *
 * Correct mode orders its writes so that the disk is consistent at every
 * step that matters: a tree change is written back before the entry block
 * it unlinked is freed, an extender is rewritten before the blocks it
 * stopped mapping are freed, and a rename changes the trees in memory,
 * with an undo, before it frees an overwritten target.
 *
 * Driver mode reproduces the 2012 driver's steps and failures (SPEC-§8,
 * §9): no check of free space (a write that cannot allocate maps what it
 * has, holes to block 0), the delete that truncates before the tree delete
 * that may fail, the rename that ignores both deletes, mkdir freeing its
 * block when the insert fails while create ignores it, the link count of
 * rmdir, and the file data written through the page cache: a write fills
 * WR_PAGE_SIZE pages (an uncached page's rest zeroed), and each page goes
 * out at once, every in-size buffer not yet mapped in this mount asking
 * lanyfs_getblk for a block.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writer_priv.h"

#define DRIVER_MAX_FILE 0xffffffffull /* s_maxbytes, SPEC-§9.14 */

static void writer_free(struct lanyfs_writer *w)
{
    wr_ifree_all(w);
    free(w->sbbuf);
    free(w->scratch);
    free(w);
}

bool lanyfs_writer_refuses_problem(const struct lanyfs_sb_problem *p)
{
    return p->fatal || p->code == LANYFS_E_BADTYPE;
}

enum lanyfs_err lanyfs_writer_mount(struct lanyfs_fs *fs, enum lanyfs_write_mode mode,
                                    struct lanyfs_writer **out, struct lanyfs_error *err)
{
    struct lanyfs_writer *w = NULL;
    enum lanyfs_err rc = LANYFS_OK;
    *out = NULL;
    const struct lanyfs_sb_problem *pr;
    size_t np = lanyfs_fs_problems(fs, &pr);
    for (size_t i = 0; i < np; i++)
        if (lanyfs_writer_refuses_problem(&pr[i]))
            return lanyfs_fail(err, pr[i].code, 0, "refusing to write: %s", pr[i].msg);
    /* The check's list may be cut short: the type byte is tested itself. */
    if (lanyfs_fs_super(fs)->type != LANYFS_TYPE_SUPER)
        return lanyfs_fail(err, LANYFS_E_BADTYPE, 0,
                           "refusing to write: superblock field 'type' is 0x%02x, not 0xd0",
                           lanyfs_fs_super(fs)->type);
    if (!lanyfs_image_writable(lanyfs_fs_image(fs)))
        return lanyfs_fail(err, LANYFS_E_READONLY, LANYFS_NO_BLOCK, "image is open read-only");
    w = calloc(1, sizeof(*w));
    if (w == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    w->fs = fs;
    w->mode = mode;
    w->geom = *lanyfs_fs_geom(fs);
    w->g = &w->geom;
    w->sb = *lanyfs_fs_super(fs);
    w->geom.blocks = w->sb.blocks;
    lanyfs_blockmap_init(&w->inode_map);
    lanyfs_blockmap_init(&w->pend_map);
    lanyfs_ts_now(&w->now);
    w->scratch = malloc(w->g->blocksize);
    if (w->scratch == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    if (drv(w)) {
        w->sb.freetail = w->sb.freehead; /* SPEC-§9.3 */
    } else {
        uint64_t chains, slots, tail;
        rc = lanyfs_freelist_count(fs, &chains, &slots, &tail, err);
        if (rc != LANYFS_OK) {
            lanyfs_error_prefix(err, "refusing to write (run fsck-lanyfs)");
            goto out;
        }
        w->sb.freetail = tail;
        w->sb.freeblocks = chains + slots;
        if (chains == 0)
            w->sb.freehead = w->sb.freetail = w->sb.freeblocks = 0;
    }
    /* The superblock buffer: kept from the mount unless the driver's block
     * size change dropped it (SPEC-§9.8, freelist.c). */
    if ((!drv(w) || w->g->blockbits == LANYFS_BLOCKBITS_MIN) &&
        (rc = wr_super_load(w, err)) != LANYFS_OK)
        goto out;
    /* The root must be a directory before anything is changed. */
    struct winode *root;
    rc = wr_iget(w, w->sb.rootdir, &root, err);
    if (rc == LANYFS_OK && !lanyfs_entry_is_dir(&root->e))
        rc = lanyfs_fail(err, LANYFS_E_NOTDIR, w->sb.rootdir,
                         "root directory block %" PRIu64 " is a file", w->sb.rootdir);
out:
    if (rc != LANYFS_OK) {
        writer_free(w);
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

void lanyfs_writer_abandon(struct lanyfs_writer *w)
{
    if (w != NULL)
        writer_free(w);
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
    writer_free(w);
    return rc;
}

/* ---- paths ----------------------------------------------------------------- */

struct where {
    struct winode *parent;    /* the directory that holds (or will hold) the name */
    const char *name;         /* last component */
    size_t len;               /* its length */
    struct winode *node;      /* the entry, NULL when absent */
    const struct winode *avoid; /* in: a directory to watch for on the way */
    bool through;             /* out: the walk entered avoid */
};

/*
 * The driver's dentry cache keeps a file whose create ignored a failed
 * insert (SPEC-§9.14): in this mount its name still opens it.
 */
static struct winode *dcache_orphan(struct lanyfs_writer *w, const struct winode *dir,
                                    const char *name, size_t len)
{
    for (size_t i = 0; i < w->ninodes; i++) {
        struct winode *in = w->inodes[i];
        if (in->dparent == dir && !in->evicted && in->e.name_len == len &&
            memcmp(in->e.name, name, len) == 0)
            return in;
    }
    return NULL;
}

/*
 * Resolve path in memory: every component but the last must be a directory.
 * The last one may be absent (node NULL).  The root itself has no parent.
 */
static enum lanyfs_err resolve(struct lanyfs_writer *w, const char *path, struct where *out,
                               struct lanyfs_error *err)
{
    struct winode *cur;
    const struct winode *avoid = out->avoid;
    memset(out, 0, sizeof(*out));
    out->avoid = avoid;
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
        if (cur == avoid)
            out->through = true;
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
        if (next == NULL && drv(w))
            next = dcache_orphan(w, cur, p, len);
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

static enum lanyfs_err check_space(uint64_t have, uint64_t need, struct lanyfs_error *err)
{
    if (have < need)
        return lanyfs_fail(err, LANYFS_E_NOSPC, LANYFS_NO_BLOCK,
                           "no space left on the device: %" PRIu64 " blocks needed, %" PRIu64
                           " free",
                           need, have);
    return LANYFS_OK;
}

static bool name_ok(const char *name, size_t len)
{
    return len > 0 && len <= LANYFS_NAME_MAX && memchr(name, '\0', len) == NULL;
}

/*
 * Allocate, write and register a new entry block; link it into parent.
 * Driver mode: create ignores a failed insert (the block is orphaned,
 * SPEC-§9.14), mkdir frees the block and fails.
 */
static enum lanyfs_err create_entry(struct lanyfs_writer *w, struct winode *parent,
                                    const char *name, size_t len, uint8_t type,
                                    struct winode **out, struct lanyfs_error *err)
{
    uint64_t blk;
    uint8_t *b = NULL;
    struct winode *in = NULL;
    *out = NULL;
    enum lanyfs_err rc = wr_alloc(w, &blk, err);
    if (rc != LANYFS_OK)
        goto out;
    struct lanyfs_entry e;
    memset(&e, 0, sizeof(e));
    e.type = type;
    e.created = e.modified = w->now;
    /* The driver gives new files no-exec: mode 0666 & ~umask (SPEC-§9.14). */
    e.attr = (drv(w) && type == LANYFS_TYPE_FILE) ? LANYFS_ATTR_NOEXEC : 0;
    lanyfs_entry_set_name(&e, name, len);
    b = calloc(1, w->g->blocksize);
    if (b == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, blk, "out of memory");
        goto out;
    }
    lanyfs_entry_encode(&e, b);
    if ((rc = wr_direct(w, blk, b, err)) != LANYFS_OK)
        goto out;
    if ((rc = wr_inew(w, blk, &e, &in, err)) != LANYFS_OK)
        goto out;
    struct lanyfs_error ierr;
    rc = wr_tree_insert(w, parent, in, &ierr);
    /* mark_inode_dirty after the insert: the parent's writeback comes first. */
    wr_idirty(w, in);
    if (rc != LANYFS_OK && drv(w) && type == LANYFS_TYPE_FILE) {
        in->dparent = parent; /* lanyfs_create ignores it; d_instantiate keeps the name */
        *out = in;
        rc = LANYFS_OK;
        goto out;
    }
    if (rc != LANYFS_OK) {
        if (err)
            *err = ierr;
        in->nlink = 0;
        wr_ievict(w, in);
        wr_free(w, blk, NULL);
        goto out;
    }
    *out = in;
out:
    free(b);
    return rc;
}

enum lanyfs_err lanyfs_writer_mkdir(struct lanyfs_writer *w, const char *path,
                                    struct lanyfs_error *err)
{
    struct where wh = {0};
    struct winode *in;
    enum lanyfs_err rc = resolve(w, path, &wh, err);
    if (rc != LANYFS_OK)
        return rc;
    if ((rc = need_parent(&wh, path, err)) != LANYFS_OK)
        return rc;
    if (wh.node != NULL)
        return lanyfs_fail(err, LANYFS_E_EXISTS, wh.node->blk, "%s: already exists", path);
    if (!name_ok(wh.name, wh.len))
        return lanyfs_fail(err, LANYFS_E_NAME, LANYFS_NO_BLOCK, "%s: invalid name", path);
    if (!drv(w) && (rc = check_space(wr_free_available(w), 1, err)) != LANYFS_OK)
        return rc;
    return create_entry(w, wh.parent, wh.name, wh.len, LANYFS_TYPE_DIR, &in, err);
}

/* ---- file data: correct mode -------------------------------------------------- */

/*
 * Write len bytes at off into f block by block.  A block allocated now
 * starts as zeros; a block the file had keeps its bytes around the write,
 * except those at or past the old size, which read as zeros.
 */
static enum lanyfs_err write_correct(struct lanyfs_writer *w, struct winode *f, uint64_t off,
                                     const uint8_t *data, uint64_t len, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    uint64_t old_size = f->e.size;
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
        uint64_t dblk;
        bool fresh;
        if ((rc = wr_getblk(w, f, fblk, &dblk, &fresh, err)) != LANYFS_OK)
            break;
        memset(b, 0, g->blocksize);
        uint64_t start = fblk << g->blockbits;
        if (!fresh && n < g->blocksize && old_size > start) {
            const uint8_t *q = wr_queued_data(w, dblk);
            if (q != NULL)
                memcpy(b, q, g->blocksize);
            else if ((rc = lanyfs_fs_read_block(w->fs, dblk, b, err)) != LANYFS_OK)
                break;
            if (old_size - start < g->blocksize)
                memset(b + (old_size - start), 0, g->blocksize - (old_size - start));
        }
        memcpy(b + in, data + done, n);
        if ((rc = wr_queue_data(w, dblk, b, err)) != LANYFS_OK)
            break;
        done += n;
    }
    free(b);
    return rc;
}

/* Zero the bytes of f's block that holds file offset at, from at on (a new end). */
static enum lanyfs_err zero_tail(struct lanyfs_writer *w, struct winode *f, uint64_t at,
                                 struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    uint32_t in = (uint32_t)(at & (g->blocksize - 1));
    uint64_t dblk;
    struct lanyfs_error sub;
    if (in == 0 || lanyfs_file_map(w->fs, &f->e, at >> g->blockbits, &dblk, &sub) != LANYFS_OK ||
        dblk == 0)
        return LANYFS_OK;
    uint8_t *b = malloc(g->blocksize);
    if (b == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
    enum lanyfs_err rc = LANYFS_OK;
    const uint8_t *q = wr_queued_data(w, dblk);
    if (q != NULL)
        memcpy(b, q, g->blocksize);
    else
        rc = lanyfs_fs_read_block(w->fs, dblk, b, err);
    if (rc == LANYFS_OK) {
        memset(b + in, 0, g->blocksize - in);
        rc = wr_queue_data(w, dblk, b, err);
    }
    free(b);
    return rc;
}

/* ---- file data: the 2012 driver ------------------------------------------------ */

/*
 * block_write_full_page with lanyfs_getblk: the page's part past the size
 * is zeroed; each buffer inside the size that is not mapped in this mount
 * asks for a block (the first failure ends the asking); every mapped
 * buffer inside the size is written.
 */
static enum lanyfs_err writepage_driver(struct lanyfs_writer *w, struct winode *f, uint64_t page,
                                        uint8_t *p, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = w->g;
    uint32_t bpp = WR_PAGE_SIZE >> g->blockbits;
    uint64_t nb = lanyfs_geom_blocks_for_size(g, f->e.size);
    uint64_t pstart = page << WR_PAGE_BITS;
    enum lanyfs_err rc = LANYFS_OK, first = LANYFS_OK;
    if (f->e.size - pstart < WR_PAGE_SIZE)
        memset(p + (f->e.size - pstart), 0, WR_PAGE_SIZE - (size_t)(f->e.size - pstart));
    uint64_t k0 = page * bpp;
    for (uint32_t k = 0; k < bpp && k0 + k < nb; k++) {
        uint64_t dblk;
        if (wr_page_mapped(f, k0 + k, &dblk))
            continue;
        if ((first = wr_getblk(w, f, k0 + k, &dblk, NULL, err)) != LANYFS_OK)
            break;
        if (!wr_page_map(f, k0 + k, dblk))
            return lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
    }
    if (first == LANYFS_E_NOMEM || first == LANYFS_E_IO || first == LANYFS_E_CYCLE)
        return first;
    for (uint32_t k = 0; k < bpp && k0 + k < nb; k++) {
        uint64_t dblk;
        if (!wr_page_mapped(f, k0 + k, &dblk))
            continue;
        wr_freelist_forget(w, dblk); /* a mapping the driver got wrong may hit a chain block */
        rc = lanyfs_fs_write_block(w->fs, dblk, p + (size_t)k * g->blocksize, err);
        if (rc != LANYFS_OK)
            return rc;
    }
    return first;
}

/*
 * generic_perform_write with simple_write_begin/end, each page written out
 * at once.  A failed mapping does not stop the write: its size stands and
 * the first error is returned at the end (as fsync or close report it).
 */
static enum lanyfs_err write_driver(struct lanyfs_writer *w, struct winode *f, uint64_t off,
                                    const uint8_t *data, uint64_t len, struct lanyfs_error *err)
{
    enum lanyfs_err first = LANYFS_OK;
    struct lanyfs_error ferr;
    uint64_t done = 0;
    while (done < len) {
        uint64_t pos = off + done;
        uint64_t page = pos >> WR_PAGE_BITS;
        uint32_t in = (uint32_t)(pos & (WR_PAGE_SIZE - 1));
        uint64_t n = WR_PAGE_SIZE - in;
        if (n > len - done)
            n = len - done;
        uint8_t *p = wr_page_get(f, page);
        if (p == NULL && (p = wr_page_add(w, f, page)) == NULL)
            return lanyfs_fail(err, LANYFS_E_NOMEM, f->blk, "out of memory");
        /* An uncached page starts as zeros around the write (simple_write_begin). */
        memcpy(p + in, data + done, (size_t)n);
        if (pos + n > f->e.size)
            f->e.size = pos + n;
        struct lanyfs_error perr;
        enum lanyfs_err rc = writepage_driver(w, f, page, p, &perr);
        if (rc == LANYFS_E_NOMEM || rc == LANYFS_E_IO || rc == LANYFS_E_CYCLE) {
            if (err)
                *err = perr;
            return rc;
        }
        if (rc != LANYFS_OK && first == LANYFS_OK) {
            first = rc;
            ferr = perr;
        }
        done += n;
        if (w->cached_pages > WRITER_PAGECACHE_MAX)
            wr_page_drop_all(w);
    }
    if (first != LANYFS_OK && err)
        *err = ferr;
    return first;
}

/* vmtruncate: the page cache first, then lanyfs_truncate. */
static enum lanyfs_err truncate_driver(struct lanyfs_writer *w, struct winode *f, uint64_t size,
                                       struct lanyfs_error *err)
{
    wr_page_truncate(w, f, size);
    f->e.size = size;
    return wr_ext_truncate(w, f, lanyfs_geom_blocks_for_size(w->g, size), err);
}

/* ---- files -------------------------------------------------------------------- */

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
    struct where wh = {0};
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
    struct winode *f = wh.node;
    if (!drv(w)) {
        uint64_t nblocks = lanyfs_geom_blocks_for_size(w->g, len);
        struct winode empty = {0};
        uint64_t need, owned = 0;
        if ((rc = wr_ext_scan(w, &empty, 0, nblocks, &need, NULL, err)) != LANYFS_OK)
            return rc;
        if (f == NULL)
            need++;
        else if ((rc = wr_ext_scan(w, f, 0, 0, NULL, &owned, err)) != LANYFS_OK)
            return rc;
        if ((rc = check_space(wr_free_available(w) + owned, need, err)) != LANYFS_OK)
            return rc;
    }
    if (f != NULL) {
        /* open(O_TRUNC): notify_change truncates (when the size changes) and stamps. */
        if (drv(w)) {
            if (f->e.size != 0 && (rc = truncate_driver(w, f, 0, err)) != LANYFS_OK)
                return rc;
        } else if ((rc = wr_ext_truncate(w, f, 0, err)) != LANYFS_OK) {
            return rc;
        }
        f->e.size = 0;
        wr_itouch(w, f);
    } else if ((rc = create_entry(w, wh.parent, wh.name, wh.len, LANYFS_TYPE_FILE, &f, err)) !=
               LANYFS_OK) {
        return rc;
    }
    if (drv(w)) {
        rc = write_driver(w, f, 0, data, len, err);
        if (len > 0)
            wr_itouch(w, f); /* file_update_time */
    } else {
        rc = write_correct(w, f, 0, data, len, err);
        f->e.size = len;
        wr_itouch(w, f);
    }
    if (mtime != NULL) {
        f->e.modified = *mtime; /* utimes after the copy */
        f->fresh_time = true;
    }
    wr_idirty(w, f);
    return rc;
}

enum lanyfs_err lanyfs_writer_set_mtime(struct lanyfs_writer *w, const char *path,
                                        const struct lanyfs_ts *mtime, struct lanyfs_error *err)
{
    struct where wh = {0};
    enum lanyfs_err rc = resolve(w, path, &wh, err);
    if (rc != LANYFS_OK)
        return rc;
    if (wh.node == NULL)
        return lanyfs_fail(err, LANYFS_E_NOTFOUND, LANYFS_NO_BLOCK, "%s: does not exist", path);
    wh.node->e.modified = *mtime; /* notify_change with ATTR_MTIME_SET */
    wh.node->fresh_time = true;
    wr_idirty(w, wh.node);
    return LANYFS_OK;
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
    struct where wh = {0};
    enum lanyfs_err rc = resolve_file(w, path, &wh, err);
    if (rc != LANYFS_OK)
        return rc;
    uint64_t end;
    if (__builtin_add_overflow(off, len, &end))
        return lanyfs_fail(err, LANYFS_E_FBIG, LANYFS_NO_BLOCK, "%s: offset too large", path);
    if ((rc = check_file_size(w, path, end, err)) != LANYFS_OK)
        return rc;
    if (len == 0)
        return LANYFS_OK; /* a write of nothing changes nothing */
    struct winode *f = wh.node;
    if (drv(w)) {
        rc = write_driver(w, f, off, data, len, err);
        wr_itouch(w, f);
        return rc;
    }
    uint64_t first = off >> w->g->blockbits;
    uint64_t count = ((end - 1) >> w->g->blockbits) - first + 1;
    uint64_t need;
    if ((rc = wr_ext_scan(w, f, first, count, &need, NULL, err)) != LANYFS_OK)
        return rc;
    if ((rc = check_space(wr_free_available(w), need, err)) != LANYFS_OK)
        return rc;
    if (off > f->e.size && (rc = zero_tail(w, f, f->e.size, err)) != LANYFS_OK)
        return rc;
    rc = write_correct(w, f, off, data, len, err);
    if (end > f->e.size)
        f->e.size = end;
    wr_itouch(w, f);
    return rc;
}

enum lanyfs_err lanyfs_writer_truncate(struct lanyfs_writer *w, const char *path, uint64_t size,
                                       struct lanyfs_error *err)
{
    struct where wh = {0};
    enum lanyfs_err rc = resolve_file(w, path, &wh, err);
    if (rc != LANYFS_OK)
        return rc;
    if ((rc = check_file_size(w, path, size, err)) != LANYFS_OK)
        return rc;
    struct winode *f = wh.node;
    if (drv(w)) {
        /* lanyfs_setattr: vmtruncate only when the size changes, then stamp. */
        if (size != f->e.size && (rc = truncate_driver(w, f, size, err)) != LANYFS_OK)
            return rc;
        wr_itouch(w, f);
        return LANYFS_OK;
    }
    if (size < f->e.size) {
        if ((rc = wr_ext_truncate(w, f, lanyfs_geom_blocks_for_size(w->g, size), err)) !=
            LANYFS_OK)
            return rc;
        rc = zero_tail(w, f, size, err);
    } else if (size > f->e.size) {
        /* What the old last block holds past the old end becomes file content. */
        rc = zero_tail(w, f, f->e.size, err);
    }
    if (rc != LANYFS_OK)
        return rc;
    f->e.size = size;
    wr_itouch(w, f);
    return LANYFS_OK;
}

/* ---- deleting ------------------------------------------------------------------ */

/*
 * Correct mode, after the tree change: the file's blocks, then (once the
 * tree change is on disk) the entry block itself.
 */
static enum lanyfs_err release_entry(struct lanyfs_writer *w, struct winode *parent,
                                     struct winode *in, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    in->nlink = 0;
    wr_ievict(w, in); /* never written back again */
    if (lanyfs_entry_is_file(&in->e))
        rc = wr_ext_truncate(w, in, 0, err);
    if (rc == LANYFS_OK)
        rc = wr_iwriteback(w, err);
    if (rc == LANYFS_OK)
        rc = wr_free(w, in->blk, err);
    wr_itouch(w, parent);
    return rc;
}

/* Remove the file f from parent: SPEC-§8 "Delete a file" in driver mode. */
static enum lanyfs_err unlink_driver(struct lanyfs_writer *w, struct winode *parent,
                                     struct winode *f, struct lanyfs_error *err)
{
    /* vmtruncate(inode, 0): i_size 0 in memory (not dirtied), then the extenders. */
    enum lanyfs_err rc = truncate_driver(w, f, 0, err);
    if (rc != LANYFS_OK)
        return rc;
    if ((rc = wr_tree_delete(w, parent, f, NULL, err)) != LANYFS_OK)
        return rc; /* the file stays, truncated on disk (SPEC-§9.9) */
    f->nlink = 0;
    wr_itouch(w, parent); /* lanyfs_inode_poke(dir) */
    wr_ievict(w, f);
    /* Freed before the tree change lands at writeback (SPEC-§9.14). */
    return wr_free(w, f->blk, err);
}

static enum lanyfs_err unlink_correct(struct lanyfs_writer *w, struct winode *parent,
                                      struct winode *f, struct lanyfs_error *err)
{
    enum lanyfs_err rc = wr_ext_scan(w, f, 0, 0, NULL, NULL, err);
    if (rc != LANYFS_OK)
        return rc;
    if ((rc = wr_tree_delete(w, parent, f, NULL, err)) != LANYFS_OK)
        return rc;
    return release_entry(w, parent, f, err);
}

/* Remove the empty directory d from parent: SPEC-§8 "Delete a directory". */
static enum lanyfs_err do_rmdir(struct lanyfs_writer *w, struct winode *parent, struct winode *d,
                                struct lanyfs_error *err)
{
    if (d->e.subtree != 0)
        return lanyfs_fail(err, LANYFS_E_NOTEMPTY, d->blk,
                           "directory block %" PRIu64 " is not empty", d->blk);
    enum lanyfs_err rc = wr_tree_delete(w, parent, d, NULL, err);
    if (rc != LANYFS_OK)
        return rc;
    if (!drv(w))
        return release_entry(w, parent, d, err);
    parent->nlink--; /* SPEC-§9.12: drop_nlink, wrapping as the kernel's count does */
    d->nlink = 0;
    wr_ievict(w, d);
    return wr_free(w, d->blk, err);
}

enum lanyfs_err lanyfs_writer_unlink(struct lanyfs_writer *w, const char *path,
                                     struct lanyfs_error *err)
{
    struct where wh = {0};
    enum lanyfs_err rc = resolve_file(w, path, &wh, err);
    if (rc != LANYFS_OK)
        return rc;
    return drv(w) ? unlink_driver(w, wh.parent, wh.node, err)
                  : unlink_correct(w, wh.parent, wh.node, err);
}

enum lanyfs_err lanyfs_writer_rmdir(struct lanyfs_writer *w, const char *path,
                                    struct lanyfs_error *err)
{
    struct where wh = {0};
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

/* ---- rename -------------------------------------------------------------------- */

/* lanyfs_rename, step by step, every failure but the insert's ignored (SPEC-§9.9). */
static enum lanyfs_err rename_driver(struct lanyfs_writer *w, struct where *src,
                                     struct where *dst, struct lanyfs_error *err)
{
    struct winode *node = src->node;
    struct lanyfs_error ignored;
    if (dst->node != NULL) {
        if (lanyfs_entry_is_dir(&dst->node->e))
            do_rmdir(w, dst->parent, dst->node, &ignored); /* freezes dst's parent, 9.12 */
        else
            unlink_driver(w, dst->parent, dst->node, &ignored);
    }
    wr_tree_delete(w, src->parent, node, NULL, &ignored);
    /* lanyfs_btree_clear_inode, then lanyfs_inode_rename */
    node->e.left = node->e.right = 0;
    wr_idirty(w, node);
    lanyfs_entry_set_name(&node->e, dst->name, dst->len);
    enum lanyfs_err rc = wr_tree_insert(w, dst->parent, node, err);
    if (rc != LANYFS_OK)
        return rc; /* no poke: the entry is left where the steps put it */
    node->dparent = NULL; /* d_move: the dentry follows the tree now */
    wr_itouch(w, node);
    wr_itouch(w, src->parent);
    wr_itouch(w, dst->parent);
    return LANYFS_OK;
}

static enum lanyfs_err rename_correct(struct lanyfs_writer *w, struct where *src,
                                      struct where *dst, struct lanyfs_error *err)
{
    struct winode *node = src->node, *target = dst->node;
    enum lanyfs_err rc = LANYFS_OK;
    if (target != NULL && lanyfs_entry_is_file(&target->e) &&
        (rc = wr_ext_scan(w, target, 0, 0, NULL, NULL, err)) != LANYFS_OK)
        return rc;
    /* The trees change in memory first; a refusal puts them back. */
    wr_undo_begin(w);
    if (target != NULL && (rc = wr_tree_delete(w, dst->parent, target, NULL, err)) != LANYFS_OK)
        goto undo;
    if ((rc = wr_tree_delete(w, src->parent, node, NULL, err)) != LANYFS_OK)
        goto undo;
    wr_isave(w, node);
    node->e.left = node->e.right = 0;
    lanyfs_entry_set_name(&node->e, dst->name, dst->len);
    wr_idirty(w, node);
    if ((rc = wr_tree_insert(w, dst->parent, node, err)) != LANYFS_OK)
        goto undo;
    if (w->undo_failed) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, node->blk, "out of memory");
        goto undo;
    }
    wr_undo_end(w);
    wr_itouch(w, node);
    wr_itouch(w, src->parent);
    if (target != NULL)
        rc = release_entry(w, dst->parent, target, err);
    wr_itouch(w, dst->parent);
    return rc;
undo:
    wr_undo_rollback(w);
    return rc;
}

enum lanyfs_err lanyfs_writer_rename(struct lanyfs_writer *w, const char *from, const char *to,
                                     struct lanyfs_error *err)
{
    struct where src = {0}, dst = {0};
    enum lanyfs_err rc = resolve(w, from, &src, err);
    if (rc != LANYFS_OK)
        return rc;
    if ((rc = need_parent(&src, from, err)) != LANYFS_OK)
        return rc;
    if (src.node == NULL)
        return lanyfs_fail(err, LANYFS_E_NOTFOUND, LANYFS_NO_BLOCK, "%s: does not exist", from);
    dst.avoid = src.node;
    if ((rc = resolve(w, to, &dst, err)) != LANYFS_OK)
        return rc;
    if ((rc = need_parent(&dst, to, err)) != LANYFS_OK)
        return rc;
    if (!name_ok(dst.name, dst.len))
        return lanyfs_fail(err, LANYFS_E_NAME, LANYFS_NO_BLOCK, "%s: invalid name", to);
    if (dst.node == src.node)
        return LANYFS_OK;
    bool src_dir = lanyfs_entry_is_dir(&src.node->e);
    if (src_dir && dst.through)
        return lanyfs_fail(err, LANYFS_E_INVAL, src.node->blk, "cannot move %s into itself (%s)",
                           from, to);
    if (dst.node != NULL) {
        bool dst_dir = lanyfs_entry_is_dir(&dst.node->e);
        if (src_dir && !dst_dir)
            return lanyfs_fail(err, LANYFS_E_NOTDIR, dst.node->blk, "%s: not a directory", to);
        if (!src_dir && dst_dir)
            return lanyfs_fail(err, LANYFS_E_ISDIR, dst.node->blk, "%s: is a directory", to);
        /* The driver checks this one itself (lanyfs_empty) before any change. */
        if (dst_dir && dst.node->e.subtree != 0)
            return lanyfs_fail(err, LANYFS_E_NOTEMPTY, dst.node->blk, "%s: directory not empty",
                               to);
    }
    return drv(w) ? rename_driver(w, &src, &dst, err) : rename_correct(w, &src, &dst, err);
}
