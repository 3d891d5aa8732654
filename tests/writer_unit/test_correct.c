/*
 * test_correct.c -- the correct writer under seeded random operations.
 *
 * For several geometries (block sizes 512..4096, address lengths 1, 2, 3
 * and 8, images of 40..400 blocks, formatted by either formatter, over
 * zeros or over random bytes) a few thousand random operations run through
 * the correct writer: mkdir, put (new and replacing), pwrite (inside, past
 * the end, with holes), truncate (both ways), unlink, rmdir, rename (files
 * and directories, over targets, into themselves), sync and remount.  A
 * model in memory says what each one must return (except running out of
 * space, which the writer decides) and what the tree and every file hold.
 *
 * After every unmount the image is checked block by block (wu_classify):
 * every block is exactly one of superblock, reachable (entry, extender,
 * data within the file's size) or free; nothing is leaked or claimed twice;
 * freeblocks and freetail are exact; every directory's in-order walk is
 * strictly ascending in the reversed order; every path and file content
 * equals the model's.  A refused operation must not write a single block,
 * not even at the next writeback.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wu.h"

#define MAXN 512
#define NAMES 14
#define PATHMAX (MAXN * 16)

static const char *const names[NAMES] = {
    "a", "b", "c", "d", "e", "f", "g", "aa", "ab", "Z", "zz~", "\xc3\xa9", "\xff", "m-long-name",
};

struct mnode {
    bool used;       /* slot in use */
    bool dir;        /* directory or file */
    int parent;      /* index of the parent, -1 for the root */
    const char *name;/* one of names */
    uint8_t *data;   /* file contents, size bytes */
    uint64_t size;   /* file size */
};

struct run {
    struct wu_rng r;           /* the seed's random source */
    struct wu_img im;          /* the image */
    struct lanyfs_fs *fs;      /* open while mounted */
    struct lanyfs_writer *w;   /* mounted writer */
    struct mnode n[MAXN];      /* the model */
    uint64_t writes;           /* block writes seen by the hook */
    uint32_t bs;               /* block size */
    uint64_t ops, refused, nospc, verified; /* counters */
};

static int count_hook(void *ctx, uint64_t block, const uint8_t *data)
{
    (void)block;
    (void)data;
    ((struct run *)ctx)->writes++;
    return 0;
}

static void path_of(const struct run *t, int i, char *buf, size_t len)
{
    int chain[MAXN], n = 0;
    for (int k = i; k > 0 && n < MAXN; k = t->n[k].parent)
        chain[n++] = k;
    size_t pos = 0;
    buf[0] = '\0';
    if (n == 0)
        snprintf(buf, len, "/");
    while (n-- > 0 && pos < len)
        pos += (size_t)snprintf(buf + pos, len - pos, "/%s", t->n[chain[n]].name);
}

static int child(const struct run *t, int dir, const char *name)
{
    for (int i = 1; i < MAXN; i++)
        if (t->n[i].used && t->n[i].parent == dir && strcmp(t->n[i].name, name) == 0)
            return i;
    return -1;
}

static bool empty_dir(const struct run *t, int dir)
{
    for (int i = 1; i < MAXN; i++)
        if (t->n[i].used && t->n[i].parent == dir)
            return false;
    return true;
}

static bool below(const struct run *t, int node, int dir)
{
    for (int k = dir; k >= 0; k = t->n[k].parent)
        if (k == node)
            return true;
    return false;
}

static int pick(struct run *t, int want) /* want: 0 any, 1 dir, 2 file */
{
    int cand[MAXN], n = 0;
    for (int i = 0; i < MAXN; i++)
        if (t->n[i].used && (want == 0 || (want == 1) == t->n[i].dir))
            cand[n++] = i;
    return n == 0 ? -1 : cand[wu_below(&t->r, (uint64_t)n)];
}

static int new_node(struct run *t)
{
    for (int i = 1; i < MAXN; i++)
        if (!t->n[i].used)
            return i;
    return -1;
}

static void drop(struct run *t, int i)
{
    free(t->n[i].data);
    memset(&t->n[i], 0, sizeof(t->n[i]));
}

static void mount(struct run *t)
{
    t->fs = wu_open(&t->im);
    lanyfs_fs_set_write_hook(t->fs, count_hook, t);
    t->w = wu_mount(t->fs, LANYFS_WRITE_CORRECT);
}

static void verify(struct run *t)
{
    struct lanyfs_fs *fs = wu_open(&t->im);
    struct wu_map m;
    wu_classify(fs, &m);
    struct lanyfs_super sb = wu_super(fs);
    WU_EQ(m.conflicts, 0);
    WU_EQ(m.outside, 0);
    WU_EQ(m.order_errors, 0);
    WU_EQ(m.beyond_size, 0);
    WU_EQ(m.count[WU_NONE], 0);
    WU_EQ(sb.freeblocks, m.count[WU_CHAIN] + m.count[WU_FREE]);
    WU_EQ(sb.freetail, m.list_tail);
    if (m.list_chains == 0)
        WU_EQ(sb.freehead, 0);
    uint64_t nodes = 0;
    char p[PATHMAX];
    for (int i = 0; i < MAXN; i++) {
        if (!t->n[i].used)
            continue;
        nodes++;
        path_of(t, i, p, sizeof(p));
        uint64_t blk = wu_lookup(fs, p);
        WU_ASSERT(blk != 0, "seed path %s is missing", p);
        struct lanyfs_entry e = wu_entry(fs, blk);
        WU_ASSERT(lanyfs_entry_is_dir(&e) == t->n[i].dir, "%s has the wrong type", p);
        if (t->n[i].dir)
            continue;
        uint64_t size;
        uint8_t *back = wu_read_file(fs, blk, &size);
        WU_ASSERT(size == t->n[i].size, "%s: size %llu, want %llu", p,
                  (unsigned long long)size, (unsigned long long)t->n[i].size);
        WU_ASSERT(size == 0 || memcmp(back, t->n[i].data, size) == 0, "%s: contents differ",
                  p);
        free(back);
    }
    WU_EQ(m.count[WU_DIR] + m.count[WU_FILE], nodes);
    wu_map_free(&m);
    lanyfs_fs_close(fs);
    t->verified++;
}

static void remount(struct run *t)
{
    wu_umount(t->w);
    lanyfs_fs_close(t->fs);
    verify(t);
    mount(t);
}

static uint64_t rand_size(struct run *t)
{
    uint64_t bs = t->bs;
    switch (wu_below(&t->r, 6)) {
    case 0:
        return 0;
    case 1:
        return wu_below(&t->r, bs);
    case 2:
        return bs * (1 + wu_below(&t->r, 3));
    case 3:
        return wu_below(&t->r, 6 * bs);
    case 4:
        return wu_below(&t->r, 24 * bs);
    default:
        return wu_below(&t->r, 80 * bs); /* may need a level-1 tree at 8-byte addresses */
    }
}

static void rand_bytes(struct run *t, uint8_t *buf, uint64_t len)
{
    uint8_t v = (uint8_t)wu_rand(&t->r);
    for (uint64_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(v + i * 13 + (i >> 9));
}

/* Set a model file's size, zero-filling growth. */
static void resize(struct mnode *f, uint64_t size)
{
    uint8_t *d = realloc(f->data, size + 1);
    ck_assert_ptr_nonnull(d);
    if (size > f->size)
        memset(d + f->size, 0, size - f->size);
    f->data = d;
    f->size = size;
}

/* Run one random operation and check its result against the model. */
static void step(struct run *t)
{
    char a[PATHMAX], b[PATHMAX];
    struct lanyfs_error err;
    enum lanyfs_err want = LANYFS_OK, got;
    bool nospc_ok = false;
    int kind = (int)wu_below(&t->r, 100);
    bool presync = wu_below(&t->r, 3) == 0;
    if (presync)
        WU_OK(lanyfs_writer_sync(t->w, &wu_e_));
    uint64_t w0 = t->writes;
    uint8_t *buf = NULL;
    /* The target: mostly below a directory, sometimes below a file (ENOTDIR). */
    int par = wu_below(&t->r, 12) == 0 ? pick(t, 0) : pick(t, 1);
    const char *name = names[wu_below(&t->r, NAMES)];
    path_of(t, par, a, sizeof(a));
    size_t al = strlen(a);
    snprintf(a + al, sizeof(a) - al, "%s%s", al > 1 ? "/" : "", name);
    int node = t->n[par].dir ? child(t, par, name) : -1;
    enum lanyfs_err walk = t->n[par].dir ? LANYFS_OK : LANYFS_E_NOTDIR;

    if (kind < 14) { /* mkdir */
        want = walk != LANYFS_OK ? walk : node >= 0 ? LANYFS_E_EXISTS : LANYFS_OK;
        nospc_ok = want == LANYFS_OK;
        got = lanyfs_writer_mkdir(t->w, a, &err);
        if (got == LANYFS_OK) {
            int i = new_node(t);
            ck_assert(i > 0);
            t->n[i] = (struct mnode){true, true, par, name, NULL, 0};
        }
    } else if (kind < 30) { /* put */
        uint64_t len = rand_size(t);
        buf = malloc(len + 1);
        rand_bytes(t, buf, len);
        want = walk != LANYFS_OK                ? walk
               : node >= 0 && t->n[node].dir    ? LANYFS_E_ISDIR
                                                : LANYFS_OK;
        nospc_ok = want == LANYFS_OK;
        got = lanyfs_writer_put(t->w, a, buf, len, NULL, &err);
        if (got == LANYFS_OK) {
            int i = node >= 0 ? node : new_node(t);
            ck_assert(i > 0);
            if (node < 0)
                t->n[i] = (struct mnode){true, false, par, name, NULL, 0};
            t->n[i].size = 0;
            resize(&t->n[i], len);
            memcpy(t->n[i].data, buf, len);
        }
    } else if (kind < 46) { /* pwrite */
        int f = pick(t, 2);
        if (f >= 0 && wu_below(&t->r, 8) != 0) {
            node = f;
            path_of(t, f, a, sizeof(a));
            walk = LANYFS_OK;
        }
        uint64_t size = node >= 0 ? t->n[node].size : 0;
        uint64_t off = wu_below(&t->r, size + 3 * t->bs + 1);
        uint64_t len = wu_below(&t->r, 4) == 0 ? 0 : wu_below(&t->r, 3 * t->bs + 1);
        buf = malloc(len + 1);
        rand_bytes(t, buf, len);
        want = walk != LANYFS_OK  ? walk
               : node < 0         ? LANYFS_E_NOTFOUND
               : t->n[node].dir   ? LANYFS_E_ISDIR
                                  : LANYFS_OK;
        nospc_ok = want == LANYFS_OK;
        got = lanyfs_writer_pwrite(t->w, a, off, buf, len, &err);
        if (got == LANYFS_OK && len > 0) {
            if (off + len > t->n[node].size)
                resize(&t->n[node], off + len);
            memcpy(t->n[node].data + off, buf, len);
        }
    } else if (kind < 56) { /* truncate */
        int f = pick(t, 2);
        if (f >= 0 && wu_below(&t->r, 8) != 0) {
            node = f;
            path_of(t, f, a, sizeof(a));
            walk = LANYFS_OK;
        }
        uint64_t size = node >= 0 ? t->n[node].size : 0;
        uint64_t ns = wu_below(&t->r, 2) ? wu_below(&t->r, size + 1)
                                         : wu_below(&t->r, size + 4 * t->bs + 1);
        want = walk != LANYFS_OK  ? walk
               : node < 0         ? LANYFS_E_NOTFOUND
               : t->n[node].dir   ? LANYFS_E_ISDIR
                                  : LANYFS_OK;
        got = lanyfs_writer_truncate(t->w, a, ns, &err);
        if (got == LANYFS_OK) {
            if (ns < t->n[node].size)
                t->n[node].size = ns;
            else
                resize(&t->n[node], ns);
        }
    } else if (kind < 68) { /* unlink */
        int f = pick(t, 2);
        if (f >= 0 && wu_below(&t->r, 4) != 0) {
            node = f;
            path_of(t, f, a, sizeof(a));
            walk = LANYFS_OK;
        }
        want = walk != LANYFS_OK  ? walk
               : node < 0         ? LANYFS_E_NOTFOUND
               : t->n[node].dir   ? LANYFS_E_ISDIR
                                  : LANYFS_OK;
        got = lanyfs_writer_unlink(t->w, a, &err);
        if (got == LANYFS_OK)
            drop(t, node);
    } else if (kind < 78) { /* rmdir */
        int d = pick(t, 1);
        if (d > 0 && wu_below(&t->r, 3) != 0) {
            node = d;
            path_of(t, d, a, sizeof(a));
            walk = LANYFS_OK;
        }
        want = walk != LANYFS_OK        ? walk
               : node < 0               ? LANYFS_E_NOTFOUND
               : !t->n[node].dir        ? LANYFS_E_NOTDIR
               : !empty_dir(t, node)    ? LANYFS_E_NOTEMPTY
                                        : LANYFS_OK;
        got = lanyfs_writer_rmdir(t->w, a, &err);
        if (got == LANYFS_OK)
            drop(t, node);
    } else if (kind < 96) { /* rename */
        int s = pick(t, 0);
        path_of(t, s, b, sizeof(b));
        if (s == 0) {
            want = LANYFS_E_INVAL;
        } else if (walk != LANYFS_OK) {
            want = walk;
        } else if (node == s) {
            want = LANYFS_OK;
        } else if (t->n[s].dir && below(t, s, par)) {
            want = LANYFS_E_INVAL;
        } else if (node >= 0 && t->n[s].dir && !t->n[node].dir) {
            want = LANYFS_E_NOTDIR;
        } else if (node >= 0 && !t->n[s].dir && t->n[node].dir) {
            want = LANYFS_E_ISDIR;
        } else if (node >= 0 && t->n[node].dir && !empty_dir(t, node)) {
            want = LANYFS_E_NOTEMPTY;
        }
        got = lanyfs_writer_rename(t->w, b, a, &err);
        if (got == LANYFS_OK && node != s) {
            if (node >= 0)
                drop(t, node);
            t->n[s].parent = par;
            t->n[s].name = name;
        }
    } else if (kind < 98) {
        WU_OK(lanyfs_writer_sync(t->w, &wu_e_));
        return;
    } else {
        remount(t);
        return;
    }
    free(buf);
    t->ops++;
    if (got == LANYFS_E_NOSPC && nospc_ok) {
        t->nospc++;
    } else {
        ck_assert_msg(got == want, "op %llu (kind %d) on %s: got %d (%s), want %d",
                      (unsigned long long)t->ops, kind, a, got, err.msg, want);
    }
    if (got != LANYFS_OK) {
        t->refused++;
        WU_ASSERT(t->writes == w0, "refused op %llu (kind %d) on %s wrote %llu blocks",
                  (unsigned long long)t->ops, kind, a, (unsigned long long)(t->writes - w0));
        if (presync) {
            /* Nothing it did in memory may reach the disk either. */
            WU_OK(lanyfs_writer_sync(t->w, &wu_e_));
            WU_ASSERT(t->writes == w0, "refused op %llu (kind %d) on %s dirtied the tree",
                      (unsigned long long)t->ops, kind, a);
        }
    }
}

struct geo {
    unsigned bits, alen;  /* geometry */
    uint64_t blocks;      /* image size */
    bool compat;          /* 2012 formatter */
    uint64_t garbage;     /* fill seed, 0 = zeros */
    unsigned ops;         /* operations to run */
};

static const struct geo geos[] = {
    {9, 1, 200, false, 11, 6000},  {9, 2, 300, true, 0, 6000},   {10, 3, 240, false, 12, 6000},
    {12, 8, 64, false, 13, 4000},  {9, 8, 400, false, 14, 8000}, {11, 2, 120, true, 0, 5000},
    {12, 1, 40, false, 15, 3000},  {10, 8, 160, false, 0, 5000}, {12, 2, 100, true, 16, 4000},
    {9, 3, 256, true, 17, 6000},
};

static uint64_t total_ops, total_refused, total_nospc, total_verified;

START_TEST(test_random_ops)
{
    const struct geo *g = &geos[_i];
    struct run *t = calloc(1, sizeof(*t));
    ck_assert_ptr_nonnull(t);
    t->r.s = 0x5eed0000u + (uint64_t)_i;
    t->bs = 1u << g->bits;
    wu_img_make(&t->im, g->bits, g->alen, g->blocks, g->compat, g->garbage);
    t->n[0] = (struct mnode){true, true, -1, "", NULL, 0};
    mount(t);
    for (unsigned k = 0; k < g->ops; k++)
        step(t);
    remount(t);
    wu_umount(t->w);
    lanyfs_fs_close(t->fs);
    verify(t);
    printf("writer-correct: %u-byte blocks, %u-byte addresses, %llu blocks%s%s: %llu ops "
           "(%llu refused, %llu for space), %llu checks\n",
           t->bs, g->alen, (unsigned long long)g->blocks, g->compat ? ", 2012 format" : "",
           g->garbage ? ", over random bytes" : "", (unsigned long long)t->ops,
           (unsigned long long)t->refused, (unsigned long long)t->nospc,
           (unsigned long long)t->verified);
    total_ops += t->ops;
    total_refused += t->refused;
    total_nospc += t->nospc;
    total_verified += t->verified;
    for (int i = 0; i < MAXN; i++)
        free(t->n[i].data);
    wu_img_rm(&t->im);
    free(t);
}
END_TEST

/* ---- exact space -------------------------------------------------------------- */

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    ck_assert(in != NULL && out != NULL);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        ck_assert(fwrite(buf, 1, n, out) == n);
    fclose(in);
    ck_assert(fclose(out) == 0);
}

static uint64_t allocs_of(struct lanyfs_writer *w)
{
    struct lanyfs_writer_state st;
    lanyfs_writer_state(w, &st);
    return st.allocs;
}

static uint64_t frees_of(struct lanyfs_writer *w)
{
    struct lanyfs_writer_state st;
    lanyfs_writer_state(w, &st);
    return st.frees;
}

static uint64_t free_of(struct lanyfs_writer *w)
{
    struct lanyfs_writer_state st;
    lanyfs_writer_state(w, &st);
    return st.freeblocks;
}

struct exact_op {
    int kind;          /* 0 pwrite, 1 put over the file, 2 put of a new file */
    uint64_t off, len; /* the range */
};

static enum lanyfs_err run_exact(struct lanyfs_writer *w, const struct exact_op *o,
                                 const uint8_t *buf, struct lanyfs_error *err)
{
    if (o->kind == 0)
        return lanyfs_writer_pwrite(w, "/f", o->off, buf, o->len, err);
    return lanyfs_writer_put(w, o->kind == 1 ? "/f" : "/g", buf, o->len, NULL, err);
}

/*
 * The space check is exact: with one block less than an operation
 * allocates it is refused without a write; with exactly enough it runs.
 * The file is first shaped by sparse writes, so its tree has holes at
 * every level.
 */
START_TEST(test_space_is_exact)
{
    static const unsigned cfg[][3] = {{9, 8, 1600}, {9, 4, 2600}, {10, 8, 1200}};
    const unsigned *c = cfg[_i % 3];
    struct wu_rng r = {0xe8ac7000u + (uint64_t)_i};
    uint32_t bs = 1u << c[0];
    uint32_t extmax = (bs - LANYFS_EXT_SLOTS) / c[1];
    struct wu_img im;
    wu_img_make(&im, c[0], c[1], c[2], false, 99);
    size_t plen = strlen(im.path) + 8;
    char *copy = malloc(plen);
    ck_assert_ptr_nonnull(copy);
    snprintf(copy, plen, "%s.b", im.path);
    wu_forget_on_exit(copy, true);
    uint8_t *buf = malloc((size_t)3 * extmax * bs);
    ck_assert_ptr_nonnull(buf);
    memset(buf, 0x5a, (size_t)3 * extmax * bs);
    unsigned checked = 0;
    for (int trial = 0; trial < 12; trial++) {
        struct lanyfs_fs *fs = wu_open(&im);
        struct lanyfs_writer *w = wu_mount(fs, LANYFS_WRITE_CORRECT);
        lanyfs_writer_unlink(w, "/f", NULL);
        lanyfs_writer_unlink(w, "/g", NULL);
        char name[32];
        for (int k = 0; k < 64; k++) {
            snprintf(name, sizeof(name), "/fill%d", k);
            lanyfs_writer_rmdir(w, name, NULL);
        }
        WU_OK(lanyfs_writer_put(w, "/f", buf, wu_below(&r, 2 * bs), NULL, &wu_e_));
        for (int k = 0; k < 4; k++) {
            uint64_t fb = wu_below(&r, 2) ? wu_below(&r, extmax + 2)
                                          : wu_below(&r, (uint64_t)extmax * extmax + 3);
            WU_OK(lanyfs_writer_pwrite(w, "/f", fb * bs + wu_below(&r, bs), buf,
                                       1 + wu_below(&r, 2 * bs), &wu_e_));
        }
        wu_umount(w);
        lanyfs_fs_close(fs);
        struct exact_op o;
        o.kind = (int)wu_below(&r, 3);
        o.len = 1 + wu_below(&r, (uint64_t)3 * extmax * bs);
        if (o.kind == 0) {
            uint64_t fb = wu_below(&r, 3) ? wu_below(&r, 3 * extmax)
                                          : wu_below(&r, (uint64_t)extmax * extmax + 3);
            o.off = fb * bs + wu_below(&r, bs);
            if (o.len > (uint64_t)2 * extmax * bs)
                o.len = 1 + wu_below(&r, (uint64_t)extmax * bs);
        }
        /* What it allocates, on a copy. */
        copy_file(im.path, copy);
        struct wu_img ci = im;
        ci.path = copy;
        fs = wu_open(&ci);
        w = wu_mount(fs, LANYFS_WRITE_CORRECT);
        uint64_t a0 = allocs_of(w), f0 = frees_of(w), free0 = free_of(w);
        struct lanyfs_error err;
        enum lanyfs_err rc = run_exact(w, &o, buf, &err);
        /* A put over the file frees its blocks first: they count as free. */
        uint64_t allocs = allocs_of(w) - a0, freed = frees_of(w) - f0;
        wu_umount(w);
        lanyfs_fs_close(fs);
        if (rc != LANYFS_OK || allocs <= freed || allocs - freed > free0)
            continue;
        uint64_t need = allocs - freed;
        /* Leave need - 1 blocks free, then exactly need. */
        copy_file(im.path, copy);
        fs = wu_open(&ci);
        struct run t = {0};
        lanyfs_fs_set_write_hook(fs, count_hook, &t);
        w = wu_mount(fs, LANYFS_WRITE_CORRECT);
        int fills = 0;
        while (free_of(w) > need - 1) {
            snprintf(name, sizeof(name), "/fill%d", fills++);
            WU_OK(lanyfs_writer_mkdir(w, name, &wu_e_));
        }
        WU_OK(lanyfs_writer_sync(w, &wu_e_));
        uint64_t w0 = t.writes;
        rc = run_exact(w, &o, buf, &err);
        WU_ASSERT(rc == LANYFS_E_NOSPC, "trial %d kind %d: %llu blocks needed, %llu free: rc %d",
                  trial, o.kind, (unsigned long long)need, (unsigned long long)(need - 1), rc);
        WU_OK(lanyfs_writer_sync(w, &wu_e_));
        WU_EQ(t.writes, w0);
        if (fills > 0) {
            snprintf(name, sizeof(name), "/fill%d", fills - 1);
            WU_OK(lanyfs_writer_rmdir(w, name, &wu_e_));
            WU_EQ(free_of(w), need);
            rc = run_exact(w, &o, buf, &err);
            ck_assert_msg(rc == LANYFS_OK, "trial %d kind %d with %llu free: %s", trial, o.kind,
                          (unsigned long long)need, err.msg);
            WU_EQ(free_of(w), 0);
        }
        wu_umount(w);
        lanyfs_fs_close(fs);
        checked++;
    }
    ck_assert_uint_gt(checked, 3);
    unlink(copy);
    wu_forget_on_exit(copy, false);
    free(copy);
    free(buf);
    wu_img_rm(&im);
}
END_TEST

/* ---- truncation across levels ------------------------------------------------- */

/*
 * A level-2 file (extmax 63) cut at and around every level boundary, then
 * grown again by a write past the end: after each step the image holds
 * exactly the blocks the file needs, the rest free, and the bytes kept.
 */
START_TEST(test_truncate_levels)
{
    const uint32_t bs = 512, ext = 63;
    const uint64_t nb = (uint64_t)ext * ext + 101;
    static const uint64_t cuts[] = {4000, 3969, 3968, 3000, 64, 63, 62, 2, 1, 0};
    struct wu_img im;
    wu_img_make(&im, 9, 8, nb + 200, false, 21);
    struct run *t = calloc(1, sizeof(*t));
    ck_assert_ptr_nonnull(t);
    t->im = im;
    t->bs = bs;
    t->n[0] = (struct mnode){true, true, -1, "", NULL, 0};
    t->n[1] = (struct mnode){true, false, 0, "f", NULL, 0};
    resize(&t->n[1], nb * bs - 17);
    rand_bytes(t, t->n[1].data, t->n[1].size);
    mount(t);
    WU_OK(lanyfs_writer_put(t->w, "/f", t->n[1].data, t->n[1].size, NULL, &wu_e_));
    remount(t);
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        uint64_t size = cuts[i] * bs - (cuts[i] > 0 ? 100 : 0);
        WU_OK(lanyfs_writer_truncate(t->w, "/f", size, &wu_e_));
        t->n[1].size = size;
        remount(t);
    }
    /* Grow by writes past the end, with holes, back to level 2. */
    uint8_t chunk[700];
    for (uint64_t at = 5; at < nb * bs; at = at * 3 + 1001) {
        rand_bytes(t, chunk, sizeof(chunk));
        WU_OK(lanyfs_writer_pwrite(t->w, "/f", at, chunk, sizeof(chunk), &wu_e_));
        if (at + sizeof(chunk) > t->n[1].size)
            resize(&t->n[1], at + sizeof(chunk));
        memcpy(t->n[1].data + at, chunk, sizeof(chunk));
    }
    remount(t);
    WU_OK(lanyfs_writer_truncate(t->w, "/f", 70 * bs + 3, &wu_e_));
    t->n[1].size = 70 * bs + 3;
    WU_OK(lanyfs_writer_truncate(t->w, "/f", 200 * bs, &wu_e_)); /* grows: zeros */
    resize(&t->n[1], 200 * bs);
    remount(t);
    WU_OK(lanyfs_writer_unlink(t->w, "/f", &wu_e_));
    drop(t, 1);
    wu_umount(t->w);
    lanyfs_fs_close(t->fs);
    verify(t);
    for (int i = 0; i < MAXN; i++)
        free(t->n[i].data);
    wu_img_rm(&t->im);
    free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("writer-correct");
    TCase *tc = tcase_create("random");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_random_ops, 0, (int)(sizeof(geos) / sizeof(geos[0])));
    tcase_add_loop_test(tc, test_space_is_exact, 0, 6);
    tcase_add_test(tc, test_truncate_levels);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (failed == 0)
        printf("writer-correct: %llu operations in all, %llu refused (%llu for space), "
               "%llu full checks\n",
               (unsigned long long)total_ops, (unsigned long long)total_refused,
               (unsigned long long)total_nospc, (unsigned long long)total_verified);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
