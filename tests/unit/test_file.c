/*
 * test_file.c -- reading files through their extender trees (SPEC-§7).
 *
 * Files built by the fixture (its own map code) are read back with
 * lanyfs_file_pread, lanyfs_file_map and lanyfs_file_walk, and each answer
 * is compared with the fixture's map: sizes 0, 1 byte, one block and a few,
 * for every geometry; extmax blocks (a full level-0 tree) and extmax + 1
 * (level 1) wherever the device can hold them; a level-2 tree at 512-byte
 * blocks with 8-byte addresses; sparse trees up to level 3.  Holes read as
 * zeros and map to 0.  Damaged trees (a child of the wrong level or type, a
 * slot beyond the device) are LANYFS_E_CORRUPT naming the block.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

/* What lanyfs_file_walk reported. */
struct walklog {
    uint64_t (*runs)[3]; /* fblk, dblk, count */
    size_t nruns;
    size_t cap;
    uint64_t exts[512]; /* extender blocks, in report order */
    unsigned levels[512];
    size_t nexts;
    size_t stop_runs_after; /* 0 = never stop */
};

static int log_extent(void *ctx, uint64_t fblk, uint64_t dblk, uint64_t count)
{
    struct walklog *w = ctx;
    if (w->nruns == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->runs = realloc(w->runs, w->cap * sizeof(*w->runs));
        ck_assert_ptr_nonnull(w->runs);
    }
    w->runs[w->nruns][0] = fblk;
    w->runs[w->nruns][1] = dblk;
    w->runs[w->nruns][2] = count;
    w->nruns++;
    return w->stop_runs_after != 0 && w->nruns >= w->stop_runs_after;
}

static int log_extender(void *ctx, uint64_t blk, unsigned level)
{
    struct walklog *w = ctx;
    if (w->nexts < 512) {
        w->exts[w->nexts] = blk;
        w->levels[w->nexts] = level;
    }
    w->nexts++;
    return 0;
}

static enum lanyfs_err walk(struct lanyfs_fs *fs, const struct lanyfs_entry *e,
                            struct walklog *w, struct lanyfs_error *err)
{
    memset(w, 0, sizeof(*w));
    return lanyfs_file_walk(fs, e, log_extent, log_extender, w, err);
}

/* The runs tile [0, nblocks) in order; each block maps as the fixture says. */
static void check_runs(struct fx *fx, uint64_t fileblk, const struct walklog *w, uint64_t nblocks)
{
    uint64_t next = 0;
    for (size_t i = 0; i < w->nruns; i++) {
        uint64_t fb = w->runs[i][0], db = w->runs[i][1], n = w->runs[i][2];
        U_EQ(fb, next);
        U_ASSERT(n > 0, "empty run %zu", i);
        /* Adjacent runs are merged: no two holes in a row. */
        if (i > 0)
            U_ASSERT(!(db == 0 && w->runs[i - 1][1] == 0), "two hole runs in a row at %zu", i);
        for (uint64_t j = 0; j < n && j < 100000; j++)
            U_EQ(fx_file_dblk(fx, fileblk, fb + j, NULL, NULL), db ? db + j : 0);
        next = fb + n;
    }
    U_EQ(next, nblocks);
}

/* The extenders the fixture's tree holds, collected top down. */
static size_t fx_extenders(struct fx *fx, uint64_t top, uint64_t *out, size_t max)
{
    size_t n = 0, head = 0;
    if (top == 0)
        return 0;
    out[n++] = top;
    while (head < n) {
        uint64_t b = out[head++];
        if (fx_ext_level(fx, b) == 0)
            continue;
        for (uint32_t i = 0; i < fx_geom(fx)->extmax; i++) {
            uint64_t s = fx_ext_get_slot(fx, b, i);
            if (s != 0 && n < max)
                out[n++] = s;
        }
    }
    return n;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Read back file `fileblk` of the fixture through every reader. */
static void check_file(struct fx *fx, struct lanyfs_fs *fs, uint64_t fileblk, const uint8_t *data,
                       size_t len)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    struct lanyfs_entry e;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_fs_read_entry(fs, fileblk, &e, &err), LANYFS_OK);
    ck_assert(lanyfs_entry_is_file(&e));
    ck_assert_uint_eq(e.size, len);
    uint64_t nblocks = (len + g->blocksize - 1) / g->blocksize;

    /* The whole file, asking for more than there is. */
    uint8_t *buf = malloc(len + 2 * g->blocksize);
    size_t got = 12345;
    uint64_t holes = 0;
    ck_assert_int_eq(lanyfs_file_pread(fs, &e, 0, buf, len + 100, &got, &holes, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(got, len);
    ck_assert_uint_eq(holes, 0);
    ck_assert(len == 0 || memcmp(buf, data, len) == 0);
    /* Random pieces. */
    struct u_rng r = {len * 31 + fileblk};
    for (int i = 0; i < 24 && len > 0; i++) {
        uint64_t off = u_below(&r, len);
        size_t n = (size_t)u_below(&r, 3 * g->blocksize + 2);
        size_t want = n < len - off ? n : (size_t)(len - off);
        ck_assert_int_eq(lanyfs_file_pread(fs, &e, off, buf, n, &got, NULL, &err), LANYFS_OK);
        U_EQ(got, want);
        U_MEMEQ(buf, data + off, want);
    }
    /* At and past the end. */
    ck_assert_int_eq(lanyfs_file_pread(fs, &e, len, buf, 10, &got, NULL, &err), LANYFS_OK);
    ck_assert_uint_eq(got, 0);
    ck_assert_int_eq(lanyfs_file_pread(fs, &e, UINT64_MAX, buf, 10, &got, NULL, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(got, 0);
    free(buf);

    /* Every block maps where the fixture put it; past the end are holes. */
    for (uint64_t fb = 0; fb < nblocks + 3; fb++) {
        uint64_t dblk = 99;
        U_ASSERT(lanyfs_file_map(fs, &e, fb, &dblk, &err) == LANYFS_OK, "map %llu: %s",
                 (unsigned long long)fb, err.msg);
        U_EQ(dblk, fb < nblocks ? fx_file_dblk(fx, fileblk, fb, NULL, NULL) : 0);
        if (fb < nblocks)
            U_ASSERT(dblk != 0 && dblk < g->blocks, "block %llu unmapped",
                     (unsigned long long)fb);
    }
    uint64_t dblk = 99;
    ck_assert_int_eq(lanyfs_file_map(fs, &e, UINT64_MAX, &dblk, &err), LANYFS_OK);
    ck_assert_uint_eq(dblk, 0);

    /* The walk: runs tile the file, extenders are exactly the tree's. */
    struct walklog w;
    ck_assert_int_eq(walk(fs, &e, &w, &err), LANYFS_OK);
    check_runs(fx, fileblk, &w, nblocks);
    uint64_t want[512];
    size_t nwant = fx_extenders(fx, e.subtree, want, 512);
    ck_assert_uint_eq(w.nexts, nwant);
    for (size_t i = 0; i < w.nexts && i < 512; i++)
        U_EQ(w.levels[i], fx_ext_level(fx, w.exts[i]));
    if (nwant > 0)
        ck_assert_uint_eq(w.exts[0], e.subtree);
    qsort(want, nwant, sizeof(want[0]), u64_cmp);
    qsort(w.exts, w.nexts < 512 ? w.nexts : 512, sizeof(w.exts[0]), u64_cmp);
    for (size_t i = 0; i < nwant; i++)
        U_EQ(w.exts[i], want[i]);
    free(w.runs);
}

/* A file of len pattern bytes in the root; returns its block. */
static uint64_t add_file(struct fx *fx, const char *name, size_t len, uint8_t **data)
{
    *data = malloc(len ? len : 1);
    fx_pattern(*data, len, (uint32_t)len);
    uint64_t b = fx_file(fx, fx_root(fx), name, *data, len);
    ck_assert_msg(b != 0, "fixture has no room for %s (%zu bytes)", name, len);
    return b;
}

START_TEST(test_small_files_every_geometry)
{
    U_FOR_GEOMETRIES(bits, al)
    {
        uint32_t bs = 1u << bits;
        struct fx *fx = fx_new(bits, al, 64);
        const size_t sizes[] = {0, 1, bs - 1, bs, bs + 1, 7 * (size_t)bs - 3};
        uint64_t blks[6];
        uint8_t *data[6];
        for (int i = 0; i < 6; i++) {
            char name[8];
            snprintf(name, sizeof(name), "f%d", i);
            blks[i] = add_file(fx, name, sizes[i], &data[i]);
        }
        ck_assert_uint_eq(fx_get_subtree(fx, blks[0]), 0);
        struct lanyfs_fs *fs = u_open_ok(fx);
        for (int i = 0; i < 6; i++) {
            check_file(fx, fs, blks[i], data[i], sizes[i]);
            free(data[i]);
        }
        lanyfs_fs_close(fs);
        fx_free(fx);
    }
}
END_TEST

/* extmax blocks fill a level-0 tree; one more needs level 1 (al >= 2 to fit). */
START_TEST(test_extmax_files)
{
    U_FOR_GEOMETRIES(bits, al)
    {
        if (al == 1)
            continue; /* 256 blocks cannot hold extmax (>= 507) data blocks */
        struct lanyfs_geom g;
        lanyfs_geom_init(&g, bits, al, 0, NULL);
        struct fx *fx = fx_new(bits, al, 2 * (uint64_t)g.extmax + 16);
        ck_assert_ptr_nonnull(fx);
        uint8_t *d0, *d1;
        size_t l0 = (size_t)g.extmax * g.blocksize, l1 = l0 + 1;
        uint64_t f0 = add_file(fx, "full", l0, &d0);
        uint64_t f1 = add_file(fx, "over", l1, &d1);
        ck_assert_uint_eq(fx_ext_level(fx, fx_get_subtree(fx, f0)), 0);
        ck_assert_uint_eq(fx_ext_level(fx, fx_get_subtree(fx, f1)), 1);
        struct lanyfs_fs *fs = u_open_ok(fx);
        check_file(fx, fs, f0, d0, l0);
        check_file(fx, fs, f1, d1, l1);
        /* The block past extmax comes from the second level-0 child (SPEC-§9.7 bites here). */
        struct lanyfs_entry e;
        struct lanyfs_error err;
        lanyfs_fs_read_entry(fs, f1, &e, &err);
        uint64_t dblk, ext;
        uint32_t slot;
        ck_assert_int_eq(lanyfs_file_map(fs, &e, g.extmax, &dblk, &err), LANYFS_OK);
        ck_assert_uint_eq(dblk, fx_file_dblk(fx, f1, g.extmax, &ext, &slot));
        ck_assert_uint_eq(ext, fx_ext_get_slot(fx, e.subtree, 1));
        ck_assert_uint_eq(slot, 0);
        uint64_t d00;
        ck_assert_int_eq(lanyfs_file_map(fs, &e, 0, &d00, &err), LANYFS_OK);
        ck_assert_uint_ne(dblk, d00);
        lanyfs_fs_close(fs);
        free(d0);
        free(d1);
        fx_free(fx);
    }
}
END_TEST

START_TEST(test_level2_512_a8)
{
    /* extmax 63: 63*63 blocks fill level 1, one more needs level 2. */
    struct fx *fx = fx_new(9, 8, 2 * 63 * 63 + 300);
    uint8_t *d1, *d2;
    size_t l1 = 63 * 63 * 512, l2 = l1 + 512;
    uint64_t f1 = add_file(fx, "l1", l1, &d1);
    uint64_t f2 = add_file(fx, "l2", l2, &d2);
    ck_assert_uint_eq(fx_ext_level(fx, fx_get_subtree(fx, f1)), 1);
    ck_assert_uint_eq(fx_ext_level(fx, fx_get_subtree(fx, f2)), 2);
    struct lanyfs_fs *fs = u_open_ok(fx);
    check_file(fx, fs, f1, d1, l1);
    check_file(fx, fs, f2, d2, l2);
    struct lanyfs_entry e;
    struct lanyfs_error err;
    struct walklog w;
    lanyfs_fs_read_entry(fs, f2, &e, &err);
    ck_assert_int_eq(walk(fs, &e, &w, &err), LANYFS_OK);
    /* top, two level-1 (63 and 1 children), 64 level-0 */
    ck_assert_uint_eq(w.nexts, 1 + 2 + 63 + 1);
    /* Contiguous allocation except for the extenders in between: several runs. */
    ck_assert_uint_gt(w.nruns, 1);
    free(w.runs);
    lanyfs_fs_close(fs);
    free(d1);
    free(d2);
    fx_free(fx);
}
END_TEST

/* Hand-built extender chain from level `top_level` down to level 0 for file block fb. */
static void sparse_path(struct fx *fx, uint64_t top, unsigned top_level, uint64_t fb,
                        uint64_t dblk)
{
    const struct lanyfs_geom *g = fx_geom(fx);
    uint64_t cur = top;
    for (unsigned level = top_level;; level--) {
        uint64_t span = 1;
        for (unsigned i = 0; i < level; i++)
            span *= g->extmax;
        uint32_t idx = (uint32_t)((fb / span) % g->extmax);
        if (level == 0) {
            fx_ext_set_slot(fx, cur, idx, dblk);
            return;
        }
        uint64_t child = fx_ext_get_slot(fx, cur, idx);
        if (child == 0) {
            child = fx_ext_new(fx, level - 1);
            fx_ext_set_slot(fx, cur, idx, child);
        }
        cur = child;
    }
}

START_TEST(test_sparse_level3)
{
    struct fx *fx = fx_new(9, 8, 64);
    const uint64_t e = 63, last = e * e * e; /* file block 250047 needs level 3 */
    uint64_t f = fx_entry_new(fx, LANYFS_TYPE_FILE, "sparse", 6);
    fx_link(fx, fx_root(fx), f);
    uint64_t top = fx_ext_new(fx, 3);
    fx_set_subtree(fx, f, top);
    fx_set_size(fx, f, (last + 1) * 512);
    uint64_t d0 = fx_alloc(fx), d1 = fx_alloc(fx);
    fx_pattern(fx_block(fx, d0), 512, 1);
    fx_pattern(fx_block(fx, d1), 512, 2);
    sparse_path(fx, top, 3, 0, d0);
    sparse_path(fx, top, 3, last, d1);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_entry ent;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_fs_read_entry(fs, f, &ent, &err), LANYFS_OK);
    uint64_t dblk;
    ck_assert_int_eq(lanyfs_file_map(fs, &ent, 0, &dblk, &err), LANYFS_OK);
    ck_assert_uint_eq(dblk, d0);
    ck_assert_int_eq(lanyfs_file_map(fs, &ent, last, &dblk, &err), LANYFS_OK);
    ck_assert_uint_eq(dblk, d1);
    const uint64_t holes_at[] = {1, 62, 63, 64, e * e, e * e * 2 + 5, last - 1};
    for (size_t i = 0; i < sizeof(holes_at) / sizeof(holes_at[0]); i++) {
        dblk = 99;
        ck_assert_int_eq(lanyfs_file_map(fs, &ent, holes_at[i], &dblk, &err), LANYFS_OK);
        ck_assert_uint_eq(dblk, 0);
    }
    /* Data at both ends, zeros between, one hole counted per block. */
    uint8_t buf[4 * 512], want[512];
    size_t got;
    uint64_t holes = 0;
    ck_assert_int_eq(lanyfs_file_pread(fs, &ent, 0, buf, sizeof(buf), &got, &holes, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(got, sizeof(buf));
    ck_assert_uint_eq(holes, 3);
    fx_pattern(want, 512, 1);
    ck_assert_mem_eq(buf, want, 512);
    for (size_t i = 512; i < sizeof(buf); i++)
        U_EQ(buf[i], 0);
    holes = 0;
    ck_assert_int_eq(lanyfs_file_pread(fs, &ent, (last - 1) * 512, buf, 3 * 512, &got, &holes,
                                       &err),
                     LANYFS_OK);
    ck_assert_uint_eq(got, 2 * 512);
    ck_assert_uint_eq(holes, 1);
    fx_pattern(want, 512, 2);
    ck_assert_mem_eq(buf + 512, want, 512);
    /* The walk: data, one hole run across all levels, data; 8 extenders. */
    struct walklog w;
    ck_assert_int_eq(walk(fs, &ent, &w, &err), LANYFS_OK);
    ck_assert_uint_eq(w.nruns, 3);
    ck_assert(w.runs[0][0] == 0 && w.runs[0][1] == d0 && w.runs[0][2] == 1);
    ck_assert(w.runs[1][0] == 1 && w.runs[1][1] == 0 && w.runs[1][2] == last - 1);
    ck_assert(w.runs[2][0] == last && w.runs[2][1] == d1 && w.runs[2][2] == 1);
    ck_assert_uint_eq(w.nexts, 7);
    ck_assert_uint_eq(w.levels[0], 3);
    free(w.runs);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

/* A level-1 file mostly of holes, on every geometry (al 1 included). */
START_TEST(test_sparse_level1_every_geometry)
{
    U_FOR_GEOMETRIES(bits, al)
    {
        struct fx *fx = fx_new(bits, al, 64);
        const struct lanyfs_geom *g = fx_geom(fx);
        uint64_t e = g->extmax;
        uint64_t f = fx_entry_new(fx, LANYFS_TYPE_FILE, "s", 1);
        fx_link(fx, fx_root(fx), f);
        uint64_t top = fx_ext_new(fx, 1);
        fx_set_subtree(fx, f, top);
        fx_set_size(fx, f, (e + 1) * g->blocksize);
        const uint64_t at[] = {0, 1, 2, e};
        uint64_t d[4];
        for (int i = 0; i < 4; i++) {
            d[i] = fx_alloc(fx);
            fx_pattern(fx_block(fx, d[i]), g->blocksize, (uint32_t)i + 10);
            sparse_path(fx, top, 1, at[i], d[i]);
        }
        struct lanyfs_fs *fs = u_open_ok(fx);
        struct lanyfs_entry ent;
        struct lanyfs_error err;
        ck_assert_int_eq(lanyfs_fs_read_entry(fs, f, &ent, &err), LANYFS_OK);
        size_t len = (size_t)(e + 1) * g->blocksize;
        uint8_t *buf = malloc(len), *want = malloc(g->blocksize);
        size_t got;
        uint64_t holes = 0;
        ck_assert_int_eq(lanyfs_file_pread(fs, &ent, 0, buf, len, &got, &holes, &err),
                         LANYFS_OK);
        ck_assert_uint_eq(got, len);
        ck_assert_uint_eq(holes, e + 1 - 4);
        for (int i = 0; i < 4; i++) {
            fx_pattern(want, g->blocksize, (uint32_t)i + 10);
            U_MEMEQ(buf + at[i] * g->blocksize, want, g->blocksize);
        }
        for (uint64_t b = 3; b < e; b++)
            for (size_t k = 0; k < g->blocksize; k += 64)
                U_EQ(buf[b * g->blocksize + k], 0);
        struct walklog w;
        ck_assert_int_eq(walk(fs, &ent, &w, &err), LANYFS_OK);
        check_runs(fx, f, &w, e + 1);
        ck_assert_uint_eq(w.nexts, 3);
        free(w.runs);
        free(buf);
        free(want);
        lanyfs_fs_close(fs);
        fx_free(fx);
    }
}
END_TEST

START_TEST(test_holes)
{
    struct fx *fx = fx_new(10, 4, 300);
    const struct lanyfs_geom *g = fx_geom(fx);
    uint8_t *data;
    uint64_t f = add_file(fx, "five", 5 * 1024, &data);
    uint64_t ext;
    uint32_t slot;
    uint64_t d2 = fx_file_dblk(fx, f, 2, &ext, &slot);
    ck_assert_uint_ne(d2, 0);
    fx_ext_set_slot(fx, ext, slot, 0);
    /* A file without data pointer that claims three blocks. */
    uint64_t nod = fx_entry_new(fx, LANYFS_TYPE_FILE, "nodata", 6);
    fx_link(fx, fx_root(fx), nod);
    fx_set_size(fx, nod, 3 * 1024);
    /* A level-0 tree of 3 blocks whose size claims extmax + 5. */
    uint8_t *d3;
    uint64_t big = add_file(fx, "claims", 3 * 1024, &d3);
    fx_set_size(fx, big, ((uint64_t)g->extmax + 5) * 1024);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_entry e;
    struct lanyfs_error err;
    uint8_t buf[5 * 1024];
    size_t got;
    uint64_t holes = 0;

    ck_assert_int_eq(lanyfs_fs_read_entry(fs, f, &e, &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_file_pread(fs, &e, 0, buf, sizeof(buf), &got, &holes, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(got, sizeof(buf));
    ck_assert_uint_eq(holes, 1);
    ck_assert_mem_eq(buf, data, 2048);
    for (size_t i = 2048; i < 3072; i++)
        U_EQ(buf[i], 0);
    ck_assert_mem_eq(buf + 3072, data + 3072, 2048);
    uint64_t dblk = 99;
    ck_assert_int_eq(lanyfs_file_map(fs, &e, 2, &dblk, &err), LANYFS_OK);
    ck_assert_uint_eq(dblk, 0);
    struct walklog w;
    ck_assert_int_eq(walk(fs, &e, &w, &err), LANYFS_OK);
    ck_assert_uint_eq(w.nruns, 3);
    ck_assert(w.runs[0][0] == 0 && w.runs[0][2] == 2 && w.runs[0][1] != 0);
    ck_assert(w.runs[1][0] == 2 && w.runs[1][1] == 0 && w.runs[1][2] == 1);
    ck_assert(w.runs[2][0] == 3 && w.runs[2][2] == 2 && w.runs[2][1] == d2 + 1);
    free(w.runs);

    ck_assert_int_eq(lanyfs_fs_read_entry(fs, nod, &e, &err), LANYFS_OK);
    holes = 0;
    memset(buf, 0xEE, sizeof(buf));
    ck_assert_int_eq(lanyfs_file_pread(fs, &e, 0, buf, sizeof(buf), &got, &holes, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(got, 3 * 1024);
    ck_assert_uint_eq(holes, 3);
    for (size_t i = 0; i < got; i++)
        U_EQ(buf[i], 0);
    ck_assert_int_eq(walk(fs, &e, &w, &err), LANYFS_OK);
    ck_assert_uint_eq(w.nruns, 1);
    ck_assert(w.runs[0][0] == 0 && w.runs[0][1] == 0 && w.runs[0][2] == 3);
    ck_assert_uint_eq(w.nexts, 0);
    free(w.runs);

    ck_assert_int_eq(lanyfs_fs_read_entry(fs, big, &e, &err), LANYFS_OK);
    ck_assert_int_eq(walk(fs, &e, &w, &err), LANYFS_OK);
    ck_assert_uint_eq(w.nruns, 2);
    ck_assert(w.runs[0][0] == 0 && w.runs[0][2] == 3 && w.runs[0][1] != 0);
    ck_assert(w.runs[1][0] == 3 && w.runs[1][1] == 0 && w.runs[1][2] == g->extmax + 2);
    free(w.runs);
    ck_assert_int_eq(lanyfs_file_map(fs, &e, g->extmax + 1, &dblk, &err), LANYFS_OK);
    ck_assert_uint_eq(dblk, 0);
    lanyfs_fs_close(fs);
    free(data);
    free(d3);
    fx_free(fx);
}
END_TEST

/* A hole at level 1: a whole child's span reads as zeros. */
START_TEST(test_hole_level1)
{
    struct fx *fx = fx_new(9, 8, 200);
    uint8_t *data;
    size_t len = 64 * 512;
    uint64_t f = add_file(fx, "f", len, &data);
    uint64_t top = fx_get_subtree(fx, f);
    ck_assert_uint_eq(fx_ext_level(fx, top), 1);
    fx_ext_set_slot(fx, top, 0, 0);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_entry e;
    struct lanyfs_error err;
    lanyfs_fs_read_entry(fs, f, &e, &err);
    uint8_t *buf = malloc(len);
    size_t got;
    uint64_t holes = 0;
    ck_assert_int_eq(lanyfs_file_pread(fs, &e, 0, buf, len, &got, &holes, &err), LANYFS_OK);
    ck_assert_uint_eq(holes, 63);
    for (size_t i = 0; i < 63 * 512; i++)
        U_EQ(buf[i], 0);
    ck_assert_mem_eq(buf + 63 * 512, data + 63 * 512, 512);
    struct walklog w;
    ck_assert_int_eq(walk(fs, &e, &w, &err), LANYFS_OK);
    ck_assert_uint_eq(w.nruns, 2);
    ck_assert(w.runs[0][0] == 0 && w.runs[0][1] == 0 && w.runs[0][2] == 63);
    ck_assert_uint_eq(w.nexts, 2);
    free(w.runs);
    free(buf);
    lanyfs_fs_close(fs);
    free(data);
    fx_free(fx);
}
END_TEST

/* A level-1 file of extmax + 1 blocks, and its blocks, for corruption. */
struct l1 {
    struct fx *fx;
    uint64_t file, top, child0, child1;
    uint8_t *data;
    size_t len;
};

static void l1_make(struct l1 *t, unsigned bits, unsigned al)
{
    struct lanyfs_geom g;
    lanyfs_geom_init(&g, bits, al, 0, NULL);
    t->fx = fx_new(bits, al, g.extmax + 40);
    ck_assert_ptr_nonnull(t->fx);
    t->len = ((size_t)g.extmax + 1) << bits;
    t->file = add_file(t->fx, "f", t->len, &t->data);
    t->top = fx_get_subtree(t->fx, t->file);
    t->child0 = fx_ext_get_slot(t->fx, t->top, 0);
    t->child1 = fx_ext_get_slot(t->fx, t->top, 1);
    ck_assert(t->child0 && t->child1);
}

static void l1_free(struct l1 *t)
{
    free(t->data);
    fx_free(t->fx);
}

/* Map fblk and expect CORRUPT naming `blk`; pread over fblk and the walk fail too. */
static void expect_corrupt(struct l1 *t, uint64_t fblk, uint64_t blk, const char *msg_has)
{
    struct lanyfs_fs *fs = u_open_ok(t->fx);
    struct lanyfs_entry e;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_fs_read_entry(fs, t->file, &e, &err), LANYFS_OK);
    uint64_t dblk;
    lanyfs_error_clear(&err);
    ck_assert_int_eq(lanyfs_file_map(fs, &e, fblk, &dblk, &err), LANYFS_E_CORRUPT);
    ck_assert_int_eq(err.code, LANYFS_E_CORRUPT);
    ck_assert_msg(err.block == blk, "error names block %llu, want %llu: %s",
                  (unsigned long long)err.block, (unsigned long long)blk, err.msg);
    if (msg_has != NULL)
        ck_assert_msg(u_contains(err.msg, msg_has), "'%s' not in: %s", msg_has, err.msg);
    uint8_t *buf = malloc(t->len);
    size_t got;
    ck_assert_int_eq(lanyfs_file_pread(fs, &e, 0, buf, t->len, &got, NULL, &err),
                     LANYFS_E_CORRUPT);
    free(buf);
    struct walklog w;
    lanyfs_error_clear(&err);
    ck_assert_int_eq(walk(fs, &e, &w, &err), LANYFS_E_CORRUPT);
    ck_assert_int_eq(err.code, LANYFS_E_CORRUPT);
    /* The walk reports what it could, the damaged part as holes, to the end. */
    uint64_t covered = 0;
    for (size_t i = 0; i < w.nruns; i++)
        covered += w.runs[i][2];
    ck_assert_uint_eq(covered, lanyfs_geom_blocks_for_size(lanyfs_fs_geom(fs), t->len));
    free(w.runs);
    lanyfs_fs_close(fs);
}

START_TEST(test_corrupt_child_level)
{
    const unsigned geo[][2] = {{9, 8}, {11, 3}};
    for (int k = 0; k < 2; k++) {
        struct l1 t;
        l1_make(&t, geo[k][0], geo[k][1]);
        uint32_t extmax = fx_geom(t.fx)->extmax;
        fx_ext_set_level(t.fx, t.child1, 1);
        expect_corrupt(&t, extmax, t.child1, NULL);
        /* The healthy half still maps. */
        struct lanyfs_fs *fs = u_open_ok(t.fx);
        struct lanyfs_entry e;
        struct lanyfs_error err;
        lanyfs_fs_read_entry(fs, t.file, &e, &err);
        uint64_t dblk;
        ck_assert_int_eq(lanyfs_file_map(fs, &e, 0, &dblk, &err), LANYFS_OK);
        ck_assert_uint_eq(dblk, fx_file_dblk(t.fx, t.file, 0, NULL, NULL));
        lanyfs_fs_close(fs);
        /* A top slot pointing at the top itself: wrong level, no loop. */
        fx_ext_set_level(t.fx, t.child1, 0);
        fx_ext_set_slot(t.fx, t.top, 1, t.top);
        expect_corrupt(&t, extmax, t.top, NULL);
        l1_free(&t);
    }
}
END_TEST

START_TEST(test_corrupt_child_type)
{
    const unsigned geo[][2] = {{9, 8}, {11, 3}};
    for (int k = 0; k < 2; k++) {
        struct l1 t;
        l1_make(&t, geo[k][0], geo[k][1]);
        fx_set_type(t.fx, t.child0, LANYFS_TYPE_DIR);
        expect_corrupt(&t, 0, t.child0, NULL);
        fx_set_type(t.fx, t.child0, LANYFS_TYPE_CHAIN);
        expect_corrupt(&t, 5, t.child0, NULL);
        fx_set_type(t.fx, t.child0, LANYFS_TYPE_EXT);
        /* The top is no extender. */
        fx_set_type(t.fx, t.top, LANYFS_TYPE_FILE);
        expect_corrupt(&t, 0, t.top, NULL);
        fx_set_type(t.fx, t.top, LANYFS_TYPE_EXT);
        /* A top claiming level 64. */
        fx_ext_set_level(t.fx, t.top, 64);
        expect_corrupt(&t, 0, t.top, NULL);
        l1_free(&t);
    }
}
END_TEST

START_TEST(test_corrupt_slot_beyond_device)
{
    const unsigned geo[][2] = {{9, 8}, {11, 3}};
    for (int k = 0; k < 2; k++) {
        struct l1 t;
        l1_make(&t, geo[k][0], geo[k][1]);
        uint64_t blocks = fx_blocks(t.fx);
        uint32_t extmax = fx_geom(t.fx)->extmax;
        char num[32];
        /* A data slot at the device end. */
        fx_ext_set_slot(t.fx, t.child0, 5, blocks);
        snprintf(num, sizeof(num), "%" PRIu64, blocks);
        expect_corrupt(&t, 5, t.child0, num);
        /* The largest address the slot holds. */
        uint64_t max = lanyfs_addr_max(geo[k][1]);
        fx_ext_set_slot(t.fx, t.child0, 5, max);
        snprintf(num, sizeof(num), "%" PRIu64, max);
        expect_corrupt(&t, 5, t.child0, num);
        fx_ext_set_slot(t.fx, t.child0, 5, fx_file_dblk(t.fx, t.file, 4, NULL, NULL) + 1);
        /* A level-1 slot beyond the device. */
        fx_ext_set_slot(t.fx, t.top, 1, blocks + 100);
        expect_corrupt(&t, extmax, t.top, NULL);
        fx_ext_set_slot(t.fx, t.top, 1, t.child1);
        l1_free(&t);
    }
}
END_TEST

START_TEST(test_corrupt_top_beyond_device)
{
    struct l1 t;
    l1_make(&t, 9, 8);
    uint64_t bad = fx_blocks(t.fx) + 7;
    fx_set_subtree(t.fx, t.file, bad);
    struct lanyfs_fs *fs = u_open_ok(t.fx);
    struct lanyfs_entry e;
    struct lanyfs_error err;
    lanyfs_fs_read_entry(fs, t.file, &e, &err);
    uint64_t dblk;
    ck_assert_int_eq(lanyfs_file_map(fs, &e, 0, &dblk, &err), LANYFS_E_CORRUPT);
    char num[32];
    snprintf(num, sizeof(num), "%" PRIu64, bad);
    ck_assert_msg(u_contains(err.msg, num), "'%s' not in: %s", num, err.msg);
    ck_assert_int_eq(lanyfs_file_walk(fs, &e, NULL, NULL, NULL, &err), LANYFS_E_CORRUPT);
    lanyfs_fs_close(fs);
    l1_free(&t);
}
END_TEST

static int stop_at_once(void *ctx, uint64_t blk, unsigned level)
{
    (void)blk;
    (void)level;
    ++*(int *)ctx;
    return 1;
}

START_TEST(test_walk_stops)
{
    struct l1 t;
    l1_make(&t, 9, 8);
    /* Make the runs discontiguous so there are many of them. */
    for (uint32_t i = 0; i < 63; i += 2)
        fx_ext_set_slot(t.fx, t.child0, i, 0);
    struct lanyfs_fs *fs = u_open_ok(t.fx);
    struct lanyfs_entry e;
    struct lanyfs_error err;
    lanyfs_fs_read_entry(fs, t.file, &e, &err);
    struct walklog w;
    memset(&w, 0, sizeof(w));
    w.stop_runs_after = 3;
    ck_assert_int_eq(lanyfs_file_walk(fs, &e, log_extent, NULL, &w, &err), LANYFS_OK);
    ck_assert_uint_eq(w.nruns, 3);
    free(w.runs);
    int calls = 0;
    ck_assert_int_eq(lanyfs_file_walk(fs, &e, NULL, stop_at_once, &calls, &err), LANYFS_OK);
    ck_assert_int_eq(calls, 1);
    lanyfs_fs_close(fs);
    l1_free(&t);
}
END_TEST

static Suite *file_suite(void)
{
    Suite *s = suite_create("file");
    TCase *tc = tcase_create("read");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_small_files_every_geometry);
    tcase_add_test(tc, test_extmax_files);
    tcase_add_test(tc, test_level2_512_a8);
    tcase_add_test(tc, test_sparse_level3);
    tcase_add_test(tc, test_sparse_level1_every_geometry);
    tcase_add_test(tc, test_holes);
    tcase_add_test(tc, test_hole_level1);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("corrupt");
    tcase_set_timeout(bad, 60);
    tcase_add_test(bad, test_corrupt_child_level);
    tcase_add_test(bad, test_corrupt_child_type);
    tcase_add_test(bad, test_corrupt_slot_beyond_device);
    tcase_add_test(bad, test_corrupt_top_beyond_device);
    tcase_add_test(bad, test_walk_stops);
    suite_add_tcase(s, bad);
    return s;
}

U_MAIN(file_suite)
