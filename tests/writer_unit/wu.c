/*
 * wu.c -- helpers of the writer unit tests (wu.h).
 */
#include "wu.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

uint64_t wu_rand(struct wu_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t wu_below(struct wu_rng *r, uint64_t n)
{
    return wu_rand(r) % n;
}

void wu_fill(struct wu_rng *r, void *buf, size_t len)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)wu_rand(r);
}

static const char *tmpdir(void)
{
    const char *dir = getenv("TMPDIR");
    if (dir != NULL && *dir != '\0')
        return dir;
    if (access("/dev/shm", W_OK) == 0)
        return "/dev/shm";
    return "/tmp";
}

/* Images still on disk when the process ends (a failed test) are removed. */
#define LEFT_MAX 64
static char *left[LEFT_MAX];

static void remove_left(void)
{
    for (int i = 0; i < LEFT_MAX; i++) {
        if (left[i] != NULL) {
            unlink(left[i]);
            free(left[i]);
            left[i] = NULL;
        }
    }
}

static void remember(const char *path, bool add)
{
    static bool registered;
    if (!registered) {
        atexit(remove_left);
        registered = true;
    }
    for (int i = 0; i < LEFT_MAX; i++) {
        if (add && left[i] == NULL) {
            left[i] = strdup(path);
            return;
        }
        if (!add && left[i] != NULL && strcmp(left[i], path) == 0) {
            free(left[i]);
            left[i] = NULL;
            return;
        }
    }
}

void wu_forget_on_exit(const char *path, bool add)
{
    remember(path, add);
}

struct lanyfs_ts wu_time(int16_t offset)
{
    struct lanyfs_ts ts;
    lanyfs_ts_from_time(&ts, (time_t)1796259735, 0, offset);
    return ts;
}

void wu_img_make(struct wu_img *im, unsigned bits, unsigned alen, uint64_t blocks, bool compat,
                 uint64_t garbage)
{
    memset(im, 0, sizeof(*im));
    im->bits = bits;
    im->alen = alen;
    im->blocks = blocks;
    size_t n = strlen(tmpdir()) + 40;
    im->path = malloc(n);
    ck_assert_ptr_nonnull(im->path);
    snprintf(im->path, n, "%s/lanyfs-wu-XXXXXX", tmpdir());
    int fd = mkstemp(im->path);
    ck_assert_msg(fd >= 0, "mkstemp %s failed", im->path);
    remember(im->path, true);
    uint64_t bytes = blocks << bits;
    if (garbage != 0) {
        struct wu_rng r = {garbage};
        uint8_t buf[4096];
        for (uint64_t off = 0; off < bytes; off += sizeof(buf)) {
            wu_fill(&r, buf, sizeof(buf));
            size_t k = bytes - off < sizeof(buf) ? (size_t)(bytes - off) : sizeof(buf);
            ck_assert(pwrite(fd, buf, k, (off_t)off) == (ssize_t)k);
        }
    } else {
        ck_assert(ftruncate(fd, (off_t)bytes) == 0);
    }
    close(fd);
    struct lanyfs_image *img;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_image_open(im->path, LANYFS_IMAGE_RDWR, &img, &err), LANYFS_OK);
    struct lanyfs_ts now = wu_time(0);
    struct lanyfs_format_opts o = {
        .blockbits = bits, .addrlen = alen, .compat2012 = compat, .now = &now};
    ck_assert_int_eq(lanyfs_format_plan(&o, bytes, &im->layout, &err), LANYFS_OK);
    enum lanyfs_err rc = lanyfs_format(img, &o, &err);
    lanyfs_image_close(img);
    ck_assert_msg(rc == LANYFS_OK, "format: %s", err.msg);
}

void wu_img_rm(struct wu_img *im)
{
    if (im->path != NULL) {
        unlink(im->path);
        remember(im->path, false);
    }
    free(im->path);
    im->path = NULL;
}

struct lanyfs_fs *wu_open(const struct wu_img *im)
{
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    enum lanyfs_err rc = lanyfs_fs_open(im->path, LANYFS_OPEN_RDWR, &fs, &err);
    ck_assert_msg(rc == LANYFS_OK, "open %s: %s", im->path, err.msg);
    return fs;
}

struct lanyfs_writer *wu_mount(struct lanyfs_fs *fs, enum lanyfs_write_mode mode)
{
    struct lanyfs_writer *w;
    struct lanyfs_error err;
    enum lanyfs_err rc = lanyfs_writer_mount(fs, mode, &w, &err);
    ck_assert_msg(rc == LANYFS_OK, "mount: %s", err.msg);
    struct lanyfs_ts now = wu_time(0);
    lanyfs_writer_set_time(w, &now);
    return w;
}

void wu_umount(struct lanyfs_writer *w)
{
    struct lanyfs_error err;
    enum lanyfs_err rc = lanyfs_writer_unmount(w, &err);
    ck_assert_msg(rc == LANYFS_OK, "unmount: %s", err.msg);
}

void wu_block(struct lanyfs_fs *fs, uint64_t blk, uint8_t *buf)
{
    struct lanyfs_error err;
    enum lanyfs_err rc = lanyfs_fs_read_raw(fs, blk, buf, &err);
    WU_ASSERT(rc == LANYFS_OK, "read block %llu: %s", (unsigned long long)blk, err.msg);
}

struct lanyfs_super wu_super(struct lanyfs_fs *fs)
{
    uint8_t b[LANYFS_BLOCKSIZE_MAX];
    struct lanyfs_super sb;
    wu_block(fs, 0, b);
    lanyfs_super_decode(&sb, b);
    return sb;
}

struct lanyfs_entry wu_entry(struct lanyfs_fs *fs, uint64_t blk)
{
    uint8_t b[LANYFS_BLOCKSIZE_MAX];
    struct lanyfs_entry e;
    wu_block(fs, blk, b);
    lanyfs_entry_decode(&e, b);
    return e;
}

uint16_t wu_wrcnt(struct lanyfs_fs *fs, uint64_t blk)
{
    uint8_t b[LANYFS_BLOCKSIZE_MAX];
    wu_block(fs, blk, b);
    return lanyfs_get16(b + LANYFS_HDR_WRCNT);
}

uint64_t wu_lookup(struct lanyfs_fs *fs, const char *path)
{
    uint64_t blk = 0;
    struct lanyfs_entry e;
    struct lanyfs_error err;
    if (lanyfs_path_resolve(fs, path, &blk, &e, &err) != LANYFS_OK)
        return 0;
    return blk;
}

uint64_t wu_ext_slot(struct lanyfs_fs *fs, uint64_t blk, uint32_t i)
{
    uint8_t b[LANYFS_BLOCKSIZE_MAX];
    wu_block(fs, blk, b);
    return lanyfs_ext_slot(lanyfs_fs_geom(fs), b, i);
}

uint64_t wu_chain_slot(struct lanyfs_fs *fs, uint64_t blk, uint32_t i)
{
    uint8_t b[LANYFS_BLOCKSIZE_MAX];
    wu_block(fs, blk, b);
    return lanyfs_chain_slot(lanyfs_fs_geom(fs), b, i);
}

uint8_t *wu_read_file(struct lanyfs_fs *fs, uint64_t blk, uint64_t *size)
{
    struct lanyfs_entry e = wu_entry(fs, blk);
    uint8_t *buf = malloc(e.size + 1);
    ck_assert_ptr_nonnull(buf);
    size_t got;
    struct lanyfs_error err;
    enum lanyfs_err rc = lanyfs_file_pread(fs, &e, 0, buf, (size_t)e.size, &got, NULL, &err);
    WU_ASSERT(rc == LANYFS_OK, "read file %llu: %s", (unsigned long long)blk, err.msg);
    WU_EQ(got, e.size);
    *size = e.size;
    return buf;
}

/* ---- write log --------------------------------------------------------------- */

static int log_hook(void *ctx, uint64_t block, const uint8_t *data)
{
    struct wu_log *log = ctx;
    if (log->n == log->cap) {
        size_t nc = log->cap ? log->cap * 2 : 256;
        log->blk = realloc(log->blk, nc * sizeof(*log->blk));
        log->data = realloc(log->data, nc * sizeof(*log->data));
        WU_ASSERT(log->blk != NULL && log->data != NULL, "out of memory");
        log->cap = nc;
    }
    log->blk[log->n] = block;
    log->data[log->n] = malloc(log->bs);
    WU_ASSERT(log->data[log->n] != NULL, "out of memory");
    memcpy(log->data[log->n], data, log->bs);
    log->n++;
    return 0;
}

void wu_log_start(struct lanyfs_fs *fs, struct wu_log *log)
{
    memset(log, 0, sizeof(*log));
    log->bs = lanyfs_fs_geom(fs)->blocksize;
    lanyfs_fs_set_write_hook(fs, log_hook, log);
}

void wu_log_stop(struct lanyfs_fs *fs)
{
    lanyfs_fs_set_write_hook(fs, NULL, NULL);
}

void wu_log_sync_hook(void *ctx)
{
    ((struct wu_log *)ctx)->syncs++;
}

void wu_log_free(struct wu_log *log)
{
    for (size_t i = 0; i < log->n; i++)
        free(log->data[i]);
    free(log->data);
    free(log->blk);
    memset(log, 0, sizeof(*log));
}

size_t wu_log_find(const struct wu_log *log, uint64_t blk, size_t from)
{
    for (size_t i = from; i < log->n; i++)
        if (log->blk[i] == blk)
            return i;
    return SIZE_MAX;
}

size_t wu_log_count(const struct wu_log *log, uint64_t blk)
{
    size_t n = 0;
    for (size_t i = 0; i < log->n; i++)
        n += log->blk[i] == blk;
    return n;
}

/* ---- classification ---------------------------------------------------------- */

static bool claim(struct wu_map *m, uint64_t blk, enum wu_class c)
{
    if (blk == 0 || blk >= m->blocks) {
        m->outside++;
        return false;
    }
    if (m->cls[blk] != WU_NONE) {
        m->conflicts++;
        return false;
    }
    m->cls[blk] = (uint8_t)c;
    m->count[c]++;
    return true;
}

struct xnode {
    uint64_t blk;    /* extender */
    uint64_t base;   /* first file block */
};

static void walk_file(struct lanyfs_fs *fs, struct wu_map *m, const struct lanyfs_entry *e)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    uint64_t nblocks = lanyfs_geom_blocks_for_size(g, e->size);
    if (e->subtree == 0)
        return;
    size_t n = 0, cap = 64;
    struct xnode *st = malloc(cap * sizeof(*st));
    ck_assert_ptr_nonnull(st);
    uint8_t b[LANYFS_BLOCKSIZE_MAX];
    if (!claim(m, e->subtree, WU_EXT)) {
        free(st);
        return;
    }
    st[n++] = (struct xnode){e->subtree, 0};
    while (n > 0) {
        struct xnode x = st[--n];
        wu_block(fs, x.blk, b);
        struct lanyfs_ext_hdr h;
        lanyfs_ext_decode(&h, b);
        if (h.type != LANYFS_TYPE_EXT || h.level > 63)
            continue;
        uint64_t span = lanyfs_geom_pow(g, h.level);
        for (uint32_t i = 0; i < g->extmax; i++) {
            uint64_t v = lanyfs_ext_slot(g, b, i);
            if (v == 0)
                continue;
            uint64_t fb = x.base + (uint64_t)i * span;
            if (h.level == 0) {
                if (claim(m, v, WU_DATA) && fb >= nblocks)
                    m->beyond_size++;
                continue;
            }
            if (!claim(m, v, WU_EXT))
                continue;
            if (n == cap) {
                cap *= 2;
                st = realloc(st, cap * sizeof(*st));
                ck_assert_ptr_nonnull(st);
            }
            st[n++] = (struct xnode){v, fb};
        }
    }
    free(st);
}

struct tnode {
    uint64_t blk;            /* entry */
    struct lanyfs_entry e;   /* its contents */
};

/* The tree of directory e: in-order from the smallest name (right, node, left). */
static void walk_dir(struct lanyfs_fs *fs, struct wu_map *m, const struct lanyfs_entry *dir,
                     uint64_t **dirs, size_t *ndirs, size_t *capdirs)
{
    size_t n = 0, cap = 64;
    struct tnode *st = malloc(cap * sizeof(*st));
    ck_assert_ptr_nonnull(st);
    uint8_t prev[LANYFS_NAME_FIELD];
    bool have_prev = false;
    uint64_t cur = dir->subtree;
    for (;;) {
        while (cur != 0) {
            struct lanyfs_entry e;
            struct lanyfs_error err;
            if (cur >= m->blocks) {
                m->outside++;
                break;
            }
            if (lanyfs_fs_read_entry(fs, cur, &e, &err) != LANYFS_OK) {
                m->outside++;
                break;
            }
            if (!claim(m, cur, lanyfs_entry_is_dir(&e) ? WU_DIR : WU_FILE))
                break;
            if (n == cap) {
                cap *= 2;
                st = realloc(st, cap * sizeof(*st));
                ck_assert_ptr_nonnull(st);
            }
            st[n].blk = cur;
            st[n].e = e;
            n++;
            cur = e.right;
        }
        if (n == 0)
            break;
        struct tnode t = st[--n];
        if (have_prev && lanyfs_name_cmp(prev, t.e.name, t.e.name_len) >= 0)
            m->order_errors++;
        memcpy(prev, t.e.name, sizeof(prev));
        have_prev = true;
        if (lanyfs_entry_is_dir(&t.e)) {
            if (*ndirs == *capdirs) {
                *capdirs *= 2;
                *dirs = realloc(*dirs, *capdirs * sizeof(**dirs));
                ck_assert_ptr_nonnull(*dirs);
            }
            (*dirs)[(*ndirs)++] = t.blk;
        } else {
            walk_file(fs, m, &t.e);
        }
        cur = t.e.left;
    }
    free(st);
}

void wu_classify(struct lanyfs_fs *fs, struct wu_map *m)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    struct lanyfs_super sb = wu_super(fs);
    memset(m, 0, sizeof(*m));
    m->blocks = sb.blocks;
    m->cls = calloc(m->blocks, 1);
    ck_assert_ptr_nonnull(m->cls);
    m->cls[0] = WU_SUPER;
    m->count[WU_SUPER] = 1;
    uint8_t b[LANYFS_BLOCKSIZE_MAX];
    for (uint64_t cur = sb.freehead; cur != 0;) {
        if (!claim(m, cur, WU_CHAIN))
            break;
        m->list_chains++;
        m->list_tail = cur;
        wu_block(fs, cur, b);
        for (uint32_t i = 0; i < g->chainmax; i++) {
            uint64_t v = lanyfs_chain_slot(g, b, i);
            if (v != 0)
                claim(m, v, WU_FREE);
        }
        struct lanyfs_chain_hdr h;
        lanyfs_chain_decode(&h, b);
        cur = h.next;
    }
    size_t ndirs = 0, capdirs = 64;
    uint64_t *dirs = malloc(capdirs * sizeof(*dirs));
    ck_assert_ptr_nonnull(dirs);
    if (claim(m, sb.rootdir, WU_DIR))
        dirs[ndirs++] = sb.rootdir;
    while (ndirs > 0) {
        uint64_t d = dirs[--ndirs];
        struct lanyfs_entry e = wu_entry(fs, d);
        walk_dir(fs, m, &e, &dirs, &ndirs, &capdirs);
    }
    free(dirs);
    for (uint64_t i = 0; i < m->blocks; i++)
        if (m->cls[i] == WU_NONE)
            m->count[WU_NONE]++;
}

void wu_map_free(struct wu_map *m)
{
    free(m->cls);
    m->cls = NULL;
}

uint64_t wu_map_count_range(const struct wu_map *m, enum wu_class c, uint64_t lo, uint64_t hi)
{
    uint64_t n = 0;
    for (uint64_t i = lo; i < hi && i < m->blocks; i++)
        n += m->cls[i] == (uint8_t)c;
    return n;
}
