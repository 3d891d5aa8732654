/*
 * test_wear.c -- the wear report (src/scan/wear.h) on images whose counters
 * are known exactly.
 *
 * Every image is formatted by the project's formatter (lanyfs_format,
 * 512-byte blocks, 4-byte addresses: chainmax = 124, 123 slots filled per
 * chain block, chain blocks at 2, 126, 250, ...) and changed through the
 * correct writer, one mount per step, so each counter follows from the
 * rules of SPEC-§8 and §10:
 *
 *  - the formatter: superblock 2, root 1, every chain block 1 (SPEC-§9.16);
 *  - every allocation pops a slot of the head chain block (+1) and rewrites
 *    the superblock (+1); the correct writer also rewrites the superblock
 *    at every free, and every unmount rewrites it (+1);
 *  - a new entry block starts at 0 and its writeback at unmount gives 1;
 *    the node whose empty link now points to it is written back (+1);
 *  - a free pushes into the tail chain block (+1), or, when the tail is
 *    full, the block becomes a chain block at 0 and the old tail's next is
 *    set (+1);
 *  - a delete writes the tree change back before it frees the unlinked
 *    block (+1 on the node that changed) and touches the parent (+1).
 *
 * Then counters are patched on purpose to look wrapped, and the PNG is
 * read back to check its size, its map and its legend, also under a long
 * title of two-byte characters that the legend cuts.
 */
#include <check.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lanyfs.h"
#include "scan.h"
#include "wear.h"
#include "writer.h"

/* ---- images ---------------------------------------------------------------------- */

static char *tmp_path(const char *what)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || *dir == '\0')
        dir = "/tmp";
    size_t n = strlen(dir) + 64;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/lanyfs-wear-%s-XXXXXX", dir, what);
    int fd = mkstemp(p);
    ck_assert_msg(fd >= 0, "mkstemp %s", p);
    close(fd);
    return p;
}

/* A zeroed image of `blocks` 512-byte blocks, formatted. */
static char *mk_image(uint64_t blocks, bool compat)
{
    char *path = tmp_path("img");
    ck_assert_int_eq(truncate(path, (off_t)(blocks * 512)), 0);
    struct lanyfs_image *img;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_image_open(path, LANYFS_IMAGE_RDWR, &img, &err), LANYFS_OK);
    struct lanyfs_ts now;
    lanyfs_ts_from_time(&now, 1796259735, 0, 0);
    struct lanyfs_format_opts o = {.blockbits = 9, .addrlen = 4, .compat2012 = compat,
                                   .now = &now};
    enum lanyfs_err rc = lanyfs_format(img, &o, &err);
    lanyfs_image_close(img);
    ck_assert_msg(rc == LANYFS_OK, "format: %s", err.msg);
    return path;
}

static void rm_image(char *path)
{
    unlink(path);
    free(path);
}

/* One mount of the image. */
struct mount {
    struct lanyfs_fs *fs;
    struct lanyfs_writer *w;
};

static struct mount mnt(const char *path, enum lanyfs_write_mode mode)
{
    struct mount m;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_fs_open(path, LANYFS_OPEN_RDWR, &m.fs, &err), LANYFS_OK);
    ck_assert_msg(lanyfs_writer_mount(m.fs, mode, &m.w, &err) == LANYFS_OK, "mount: %s", err.msg);
    struct lanyfs_ts now;
    lanyfs_ts_from_time(&now, 1796259735, 0, 0);
    lanyfs_writer_set_time(m.w, &now);
    return m;
}

static void umnt(struct mount m)
{
    struct lanyfs_error err;
    ck_assert_msg(lanyfs_writer_unmount(m.w, &err) == LANYFS_OK, "unmount: %s", err.msg);
    lanyfs_fs_close(m.fs);
}

#define OK(call)                                                                   \
    do {                                                                           \
        struct lanyfs_error e_;                                                    \
        enum lanyfs_err rc_ = (call);                                              \
        (void)e_;                                                                  \
        ck_assert_msg(rc_ == LANYFS_OK, "%s: %s", #call, lanyfs_strerror(rc_));    \
    } while (0)

static void put_mode(const char *path, const char *name, size_t len, enum lanyfs_write_mode mode)
{
    struct mount m = mnt(path, mode);
    uint8_t *data = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(data);
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(i * 7 + 3);
    struct lanyfs_error err;
    ck_assert_msg(lanyfs_writer_put(m.w, name, data, len, NULL, &err) == LANYFS_OK, "put: %s",
                  err.msg);
    free(data);
    umnt(m);
}

static void put(const char *path, const char *name, size_t len)
{
    put_mode(path, name, len, LANYFS_WRITE_CORRECT);
}

static void mkdir_(const char *path, const char *name)
{
    struct mount m = mnt(path, LANYFS_WRITE_CORRECT);
    struct lanyfs_error err;
    ck_assert_msg(lanyfs_writer_mkdir(m.w, name, &err) == LANYFS_OK, "mkdir: %s", err.msg);
    umnt(m);
}

static void unlink_mode(const char *path, const char *name, enum lanyfs_write_mode mode)
{
    struct mount m = mnt(path, mode);
    struct lanyfs_error err;
    ck_assert_msg(lanyfs_writer_unlink(m.w, name, &err) == LANYFS_OK, "rm: %s", err.msg);
    umnt(m);
}

static void unlink_(const char *path, const char *name)
{
    unlink_mode(path, name, LANYFS_WRITE_CORRECT);
}

/* Overwrite the counter of block blk with v (the header's bytes 2..3). */
static void patch_wrcnt(const char *path, uint64_t blk, uint16_t v)
{
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    uint8_t b[2] = {(uint8_t)(v & 0xff), (uint8_t)(v >> 8)};
    ck_assert_int_eq(fseek(f, (long)(blk * 512 + 2), SEEK_SET), 0);
    ck_assert_int_eq(fwrite(b, 1, 2, f), 2);
    ck_assert_int_eq(fclose(f), 0);
}

/* Scan and build the report. */
struct rep {
    struct scan_result *scan;
    struct wear_report *w;
};

static struct rep report(const char *path, size_t top)
{
    struct rep r;
    struct lanyfs_error err;
    ck_assert_msg(scan_image(path, NULL, &r.scan, &err) == LANYFS_OK, "scan: %s", err.msg);
    ck_assert_int_eq(wear_report_build(r.scan, &(struct wear_opts){.top = top}, &r.w, &err),
                     LANYFS_OK);
    return r;
}

static void rep_free(struct rep r)
{
    wear_report_free(r.w);
    scan_result_free(r.scan);
}

static uint16_t counter_of(const struct rep *r, uint64_t blk)
{
    ck_assert_uint_lt(blk, scan_block_count(r->scan));
    const struct scan_block *c = &scan_blocks(r->scan)[blk];
    ck_assert_msg(c->flags & SCAN_BF_METADATA, "block %llu has no counter",
                  (unsigned long long)blk);
    return c->wrcnt;
}

static void stats_eq(const struct wear_stats *s, uint64_t blocks, uint64_t total, unsigned min,
                     unsigned max, double median, unsigned p90, unsigned p99)
{
    ck_assert_uint_eq(s->blocks, blocks);
    ck_assert_uint_eq(s->total, total);
    ck_assert_uint_eq(s->min, min);
    ck_assert_uint_eq(s->max, max);
    ck_assert_double_eq_tol(s->median, median, 1e-9);
    ck_assert_uint_eq(s->p90, p90);
    ck_assert_uint_eq(s->p99, p99);
    if (blocks != 0)
        ck_assert_double_eq_tol(s->mean, (double)total / (double)blocks, 1e-9);
}

static const struct wear_flagged *flag_with(const struct wear_report *w, enum wear_reason why)
{
    for (size_t i = 0; i < w->nflagged; i++)
        if (w->flagged[i].reason == why)
            return &w->flagged[i];
    return NULL;
}

/* ---- a fresh format ------------------------------------------------------------------- */

START_TEST(test_fresh_format)
{
    char *img = mk_image(600, false);
    struct rep r = report(img, 0);
    const struct wear_report *w = r.w;
    ck_assert_uint_eq(w->blocks, 600);
    ck_assert_uint_eq(w->blocksize, 512);
    /* Superblock 2, root 1, five chain blocks (2, 126, 250, 374, 498) at 1. */
    stats_eq(&w->kind[WEAR_KIND_SUPER], 1, 2, 2, 2, 2, 2, 2);
    stats_eq(&w->kind[WEAR_KIND_DIR], 1, 1, 1, 1, 1, 1, 1);
    stats_eq(&w->kind[WEAR_KIND_CHAIN], 5, 5, 1, 1, 1, 1, 1);
    stats_eq(&w->kind[WEAR_KIND_FILE], 0, 0, 0, 0, 0, 0, 0);
    stats_eq(&w->kind[WEAR_KIND_FREED], 0, 0, 0, 0, 0, 0, 0);
    stats_eq(&w->all, 7, 8, 1, 2, 1, 2, 2);
    ck_assert_uint_eq(w->metadata_blocks, 7);
    ck_assert_uint_eq(w->total_writes, 8);
    ck_assert_uint_eq(w->data_blocks, 0);
    ck_assert_uint_eq(w->hist[1], 6);
    ck_assert_uint_eq(w->hist[2], 1);
    ck_assert_uint_eq(w->nflagged, 0);
    ck_assert_uint_eq(w->chain_stride, 124);
    for (uint64_t c = 2; c < 600; c += 124)
        ck_assert_uint_eq(scan_blocks(r.scan)[c].cls, SCAN_BLK_CHAIN);
    /* Hottest: the superblock, then the 1s by block. */
    ck_assert_uint_eq(w->nhot, WEAR_TOP_DEFAULT < 7 ? WEAR_TOP_DEFAULT : 7);
    ck_assert_uint_eq(w->hot[0].block, 0);
    ck_assert_uint_eq(w->hot[0].wrcnt, 2);
    ck_assert_uint_eq(w->hot[1].block, 1);
    ck_assert_uint_eq(w->hot[2].block, 2);
    ck_assert_uint_eq(w->hot[6].block, 498);
    /* Spread: 10 regions of 60; only the superblock and the root in use. */
    ck_assert_uint_eq(w->nregions, 10);
    for (unsigned i = 0; i < 10; i++) {
        ck_assert_uint_eq(w->region[i].first, 60 * i);
        ck_assert_uint_eq(w->region[i].count, 60);
        ck_assert_uint_eq(w->region[i].used, i == 0 ? 2 : 0);
        ck_assert_uint_eq(w->region[i].free, i == 0 ? 58 : 60);
    }
    ck_assert_uint_eq(w->used, 2);
    ck_assert_uint_eq(w->used_lowest, 1);
    ck_assert_uint_eq(w->used_highest, 1);
    ck_assert_double_eq_tol(w->spread_cv, 3.0, 1e-9); /* all in one of ten: sqrt(9) */
    rep_free(r);
    rm_image(img);
}
END_TEST

/* ---- put, mkdir, put, rm ---------------------------------------------------------------- */

/*
 * put /f (3000 bytes: entry, extender, 6 data = 8 pops), mkdir /d (1 pop;
 * "d" < "f" hangs right of /f, which is written back), put /d/g (8 pops;
 * /d's subtree), rm /f (6 data, the extender and the entry pushed into the
 * tail 498; the root's subtree moves to /d and is written back before the
 * free, the root is touched and written back again at unmount).
 */
static char *mk_ops_image(void)
{
    char *img = mk_image(600, false);
    put(img, "/f", 3000);
    mkdir_(img, "/d");
    put(img, "/d/g", 3000);
    unlink_(img, "/f");
    return img;
}

START_TEST(test_operations)
{
    char *img = mk_ops_image();
    struct rep r = report(img, 20);
    const struct wear_report *w = r.w;
    /* Superblock: 2 + (8 + 1) + (1 + 1) + (8 + 1) + (8 frees + 1). */
    ck_assert_uint_eq(counter_of(&r, 0), 31);
    /* Root: 1 + 1 (put /f) + 2 (rm /f: tree change, then the touch). */
    ck_assert_uint_eq(counter_of(&r, 1), 4);
    ck_assert_uint_eq(counter_of(&r, 2), 1 + 17);  /* 17 pops */
    ck_assert_uint_eq(counter_of(&r, 498), 1 + 8); /* 8 pushes */
    ck_assert_uint_eq(counter_of(&r, 126), 1);
    ck_assert_uint_eq(counter_of(&r, 3), 2);       /* /f, deleted: its own writeback, /d's link */
    ck_assert_uint_eq(scan_blocks(r.scan)[3].cls, SCAN_BLK_DELETED);
    ck_assert_uint_eq(counter_of(&r, 11), 2);      /* /d: writeback, then /d/g's link */
    ck_assert_uint_eq(counter_of(&r, 12), 1);      /* /d/g */
    ck_assert_uint_eq(counter_of(&r, 13), 0);      /* /d/g's extender: no truncate yet */

    stats_eq(&w->kind[WEAR_KIND_SUPER], 1, 31, 31, 31, 31, 31, 31);
    stats_eq(&w->kind[WEAR_KIND_DIR], 2, 6, 2, 4, 3, 4, 4);
    stats_eq(&w->kind[WEAR_KIND_FILE], 1, 1, 1, 1, 1, 1, 1);
    stats_eq(&w->kind[WEAR_KIND_EXTENDER], 1, 0, 0, 0, 0, 0, 0);
    stats_eq(&w->kind[WEAR_KIND_CHAIN], 5, 30, 1, 18, 1, 18, 18);
    stats_eq(&w->kind[WEAR_KIND_FREED], 1, 2, 2, 2, 2, 2, 2);
    /* All: 0 1 1 1 1 2 2 4 9 18 31. */
    stats_eq(&w->all, 11, 70, 0, 31, 2, 18, 31);
    ck_assert_uint_eq(w->data_blocks, 6);
    uint64_t hist[WEAR_HIST_BUCKETS] = {[0] = 1, [1] = 4, [2] = 2, [3] = 1, [4] = 1, [5] = 2};
    for (unsigned i = 0; i < WEAR_HIST_BUCKETS; i++)
        ck_assert_uint_eq(w->hist[i], hist[i]);

    /* Hottest first; equal counters by block. */
    static const uint64_t order[] = {0, 2, 498, 1, 3, 11, 12, 126, 250, 374, 13};
    ck_assert_uint_eq(w->nhot, 11);
    for (size_t i = 0; i < 11; i++)
        ck_assert_uint_eq(w->hot[i].block, order[i]);
    char *o = wear_owner_text(w, w->hot[5].cls, w->hot[5].owner);
    ck_assert_str_eq(o, "/d");
    free(o);
    o = wear_owner_text(w, w->hot[4].cls, w->hot[4].owner);
    ck_assert_str_eq(o, "/f (deleted)");
    free(o);
    o = wear_owner_text(w, w->hot[1].cls, w->hot[1].owner);
    ck_assert_str_eq(o, "the free list");
    free(o);
    o = wear_owner_text(w, w->hot[10].cls, w->hot[10].owner);
    ck_assert_str_eq(o, "/d/g");
    free(o);
    ck_assert_uint_eq(w->nflagged, 0);

    /* In use: superblock, root, /d 11, /d/g 12, its extender 13, data 14..19. */
    ck_assert_uint_eq(w->used, 11);
    ck_assert_uint_eq(w->used_lowest, 1);
    ck_assert_uint_eq(w->used_highest, 19);
    ck_assert_uint_eq(w->region[0].used, 11);
    ck_assert_uint_eq(w->region[0].writes, 31 + 4 + 18 + 2 + 2 + 1 + 0);
    ck_assert_uint_eq(w->region[0].max, 31);
    ck_assert_uint_eq(w->region[8].writes, 9);
    rep_free(r);

    /* --top keeps only the hottest. */
    r = report(img, 3);
    ck_assert_uint_eq(r.w->nhot, 3);
    ck_assert_uint_eq(r.w->hot[2].block, 498);
    rep_free(r);
    rm_image(img);
}
END_TEST

/* ---- wrapped counters ----------------------------------------------------------------- */

START_TEST(test_wrapped_super)
{
    char *img = mk_image(600, false);
    put(img, "/f", 3000);
    /* 8 blocks came from the free list: the superblock saw at least 1 + 8 writes. */
    struct rep r = report(img, 0);
    ck_assert_uint_eq(counter_of(&r, 0), 2 + 8 + 1);
    ck_assert_ptr_null(flag_with(r.w, WEAR_WRAPPED_SUPER));
    rep_free(r);

    patch_wrcnt(img, 0, 9);
    r = report(img, 0);
    ck_assert_ptr_null(flag_with(r.w, WEAR_WRAPPED_SUPER));
    rep_free(r);

    patch_wrcnt(img, 0, 3);
    r = report(img, 0);
    const struct wear_flagged *f = flag_with(r.w, WEAR_WRAPPED_SUPER);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->block, 0);
    ck_assert_uint_eq(f->kind, WEAR_KIND_SUPER);
    ck_assert_uint_eq(f->wrcnt, 3);
    ck_assert_uint_eq(f->bound, 9);
    ck_assert_uint_eq(f->wraps, 1);
    ck_assert_uint_eq(r.w->nflagged, 1);
    ck_assert_uint_eq(r.w->by_reason[WEAR_WRAPPED_SUPER], 1);
    rep_free(r);
    rm_image(img);
}
END_TEST

START_TEST(test_wrapped_chain)
{
    char *img = mk_image(600, false);
    put(img, "/f", 3000);
    /* Chain block 2: 8 pops, so 8 slots differ from the formatter's pattern. */
    patch_wrcnt(img, 2, 8);
    struct rep r = report(img, 0);
    ck_assert_ptr_null(flag_with(r.w, WEAR_WRAPPED_CHAIN));
    rep_free(r);

    patch_wrcnt(img, 2, 2);
    r = report(img, 0);
    const struct wear_flagged *f = flag_with(r.w, WEAR_WRAPPED_CHAIN);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->block, 2);
    ck_assert_uint_eq(f->kind, WEAR_KIND_CHAIN);
    ck_assert_uint_eq(f->wrcnt, 2);
    ck_assert_uint_eq(f->bound, 8);
    ck_assert_uint_eq(f->wraps, 1);
    ck_assert_uint_eq(r.w->nflagged, 1);
    rep_free(r);
    rm_image(img);
}
END_TEST

/* ---- restarted counters ------------------------------------------------------------------ */

/*
 * 250 blocks: chain blocks 2 and 126, both full (123 slots).  put /f of one
 * byte pops entry 3, extender 4, data 5; rm /f frees them with the tail
 * full: the first freed block becomes a chain block at 0 (126's next is
 * set: +1), the other two are pushed into it (+2).
 */
START_TEST(test_restarted_chain)
{
    char *img = mk_image(250, false);
    put(img, "/f", 1);
    unlink_(img, "/f");
    struct rep r = report(img, 0);
    const struct wear_report *w = r.w;
    ck_assert_uint_eq(counter_of(&r, 126), 2);
    const struct wear_flagged *f = flag_with(w, WEAR_RESTARTED_CHAIN);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_ge(f->block, 3);
    ck_assert_uint_le(f->block, 5);
    ck_assert_uint_eq(f->kind, WEAR_KIND_CHAIN);
    ck_assert_uint_eq(f->wrcnt, 2);
    ck_assert_uint_eq(w->by_reason[WEAR_RESTARTED_CHAIN], 1);
    ck_assert_uint_eq(w->nflagged, 1);
    ck_assert_uint_eq(w->kind[WEAR_KIND_CHAIN].blocks, 3);
    ck_assert_uint_eq(w->kind[WEAR_KIND_CHAIN].total, (1 + 3) + 2 + 2);
    rep_free(r);
    rm_image(img);
}
END_TEST

/*
 * 250 blocks: a file of 121 data blocks takes 123 pops (entry, extender,
 * data), every slot chain block 2 hands out; the next allocation, mkdir /x,
 * gets block 2 itself.  Its counter restarted at 0 (1 after its writeback)
 * and its earlier life had 1 + 123 writes.
 */
START_TEST(test_restarted_reused)
{
    char *img = mk_image(250, false);
    put(img, "/big", 121 * 512);
    mkdir_(img, "/x");
    struct rep r = report(img, 0);
    const struct wear_report *w = r.w;
    ck_assert_uint_eq(scan_blocks(r.scan)[2].cls, SCAN_BLK_DIR);
    ck_assert_uint_eq(counter_of(&r, 2), 1);
    const struct wear_flagged *f = flag_with(w, WEAR_RESTARTED_REUSED);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->block, 2);
    ck_assert_uint_eq(f->kind, WEAR_KIND_DIR);
    ck_assert_uint_eq(f->bound, 124);
    ck_assert_uint_eq(w->nflagged, 1);
    char *o = wear_owner_text(w, f->cls, f->owner);
    ck_assert_str_eq(o, "/x");
    free(o);
    /* The superblock: 2 + (123 + 1) + (1 + 1). */
    ck_assert_uint_eq(counter_of(&r, 0), 128);
    ck_assert_uint_eq(w->kind[WEAR_KIND_CHAIN].blocks, 1);
    rep_free(r);
    rm_image(img);
}
END_TEST

/* A 2012-format image: chain blocks every chainmax + 1 blocks. */
START_TEST(test_compat_stride)
{
    char *img = mk_image(600, true);
    struct rep r = report(img, 0);
    ck_assert_uint_eq(r.w->chain_stride, 125);
    ck_assert_uint_eq(r.w->kind[WEAR_KIND_CHAIN].blocks, 5); /* 2, 127, 252, 377, 502 */
    ck_assert_uint_eq(r.w->nflagged, 0);
    rep_free(r);
    rm_image(img);
}
END_TEST

/*
 * The 2012 driver on a 2012-format image (chain blocks every 125 blocks,
 * all 124 slots filled).  put /f (3000 bytes): 8 pops of chain 2, the
 * superblock 2 + 8 + 1.  rm /f in a new mount: the tail is reset to the
 * head (SPEC-9.3), so the truncate pushes the 6 data blocks back into
 * chain 2's empty slots and the entry's block after them (+7), visits the
 * extender (+1) and never frees it (SPEC-9.4); a push rewrites no
 * superblock (SPEC-9.2): only the unmount does.  The root is written back
 * once for the removal.
 */
START_TEST(test_driver_2012)
{
    char *img = mk_image(600, true);
    put_mode(img, "/f", 3000, LANYFS_WRITE_DRIVER2012);
    unlink_mode(img, "/f", LANYFS_WRITE_DRIVER2012);
    struct rep r = report(img, 0);
    const struct wear_report *w = r.w;
    ck_assert_uint_eq(w->chain_stride, 125);
    ck_assert_uint_eq(counter_of(&r, 0), 12);
    ck_assert_uint_eq(counter_of(&r, 1), 3);
    ck_assert_uint_eq(counter_of(&r, 2), 1 + 8 + 7);
    ck_assert_uint_eq(scan_blocks(r.scan)[3].cls, SCAN_BLK_DELETED);
    ck_assert_uint_eq(counter_of(&r, 3), 1);
    ck_assert_uint_eq(scan_blocks(r.scan)[4].cls, SCAN_BLK_ORPHAN_EXT);
    ck_assert_uint_eq(counter_of(&r, 4), 1);
    stats_eq(&w->kind[WEAR_KIND_FREED], 2, 2, 1, 1, 1, 1, 1);
    stats_eq(&w->kind[WEAR_KIND_CHAIN], 5, 20, 1, 16, 1, 16, 16);
    /* All: 1 1 1 1 1 1 3 12 16. */
    stats_eq(&w->all, 9, 12 + 3 + 20 + 2, 1, 16, 1, 16, 16);
    ck_assert_uint_eq(w->nflagged, 0);
    char *o = wear_owner_text(w, SCAN_BLK_ORPHAN_EXT, scan_blocks(r.scan)[4].owner);
    ck_assert_str_eq(o, "/f (deleted)");
    free(o);
    rep_free(r);
    rm_image(img);
}
END_TEST

/* ---- text, escaping ------------------------------------------------------------------- */

START_TEST(test_escape)
{
    char *e = wear_escape("a\nb\xff\\c\xe2\x80\xae" "d\xc3\xa9");
    ck_assert_str_eq(e, "a\\x0ab\\xff\\\\c\\xe2\\x80\\xae" "d\xc3\xa9");
    free(e);
}
END_TEST

START_TEST(test_writers)
{
    char *img = mk_ops_image();
    struct rep r = report(img, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(wear_write_text(f, r.w, "ops.img"), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "Writes          70 counted in all counters"));
    ck_assert_ptr_nonnull(strstr(buf, "  chain blocks        5         30     1    18     6.00"));
    ck_assert_ptr_nonnull(strstr(buf, "/f (deleted)"));
    free(buf);

    f = open_memstream(&buf, &len);
    ck_assert_int_eq(wear_write_csv(f, r.w, WEAR_CSV_KINDS), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\nchain,5,30,1,18,6.000000,1.000000,18,18\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\nall,11,70,0,31,"));
    free(buf);

    f = open_memstream(&buf, &len);
    ck_assert_int_eq(wear_write_csv(f, r.w, WEAR_CSV_BLOCKS), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\n3,freed,deleted,2,4,/f (deleted),\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\n0,super,super,31,,the superblock,\n"));
    free(buf);

    /* The text lists 20 flagged counters and counts the rest. */
    struct wear_report many = *r.w;
    struct wear_flagged fl[25];
    for (unsigned i = 0; i < 25; i++)
        fl[i] = (struct wear_flagged){.block = 1000 + i, .kind = WEAR_KIND_CHAIN,
                                      .cls = SCAN_BLK_CHAIN, .wrcnt = 7,
                                      .reason = WEAR_RESTARTED_CHAIN};
    many.flagged = fl;
    many.nflagged = 25;
    many.by_reason[WEAR_RESTARTED_CHAIN] = 25;
    f = open_memstream(&buf, &len);
    ck_assert_int_eq(wear_write_text(f, &many, NULL), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "Flagged counters: 25 (25 restarted-chain)\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\n          1019  chain block         7  restarted: "));
    ck_assert_ptr_null(strstr(buf, "\n          1020  chain block"));
    ck_assert_ptr_nonnull(strstr(buf, "  ... and 5 more (--format csv or json lists them all)\n"));
    free(buf);
    rep_free(r);
    rm_image(img);
}
END_TEST

/* ---- the PNG -------------------------------------------------------------------------- */

static uint32_t pixel(cairo_surface_t *s, unsigned x, unsigned y)
{
    const uint8_t *d = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    return *(const uint32_t *)(d + (size_t)y * (size_t)stride + (size_t)x * 4) & 0xffffff;
}

static unsigned luma(uint32_t p)
{
    return ((p >> 16) & 0xff) + ((p >> 8) & 0xff) + (p & 0xff);
}

static cairo_surface_t *png_of(const struct wear_report *w, struct wear_png_layout *l)
{
    char *png = tmp_path("png");
    struct lanyfs_error err;
    ck_assert_msg(wear_write_png(png, w, "test\nimage", &err) == LANYFS_OK, "png: %s", err.msg);
    wear_png_layout(w, l);
    cairo_surface_t *s = cairo_image_surface_create_from_png(png);
    ck_assert_int_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    ck_assert_int_eq(cairo_image_surface_get_width(s), (int)l->width);
    ck_assert_int_eq(cairo_image_surface_get_height(s), (int)l->height);
    cairo_surface_flush(s);
    unlink(png);
    free(png);
    return s;
}

START_TEST(test_png)
{
    char *img = mk_ops_image();
    struct rep r = report(img, 0);
    struct wear_png_layout l;
    cairo_surface_t *s = png_of(r.w, &l);
    /* 600 cells: 25 columns, 24 rows of 16 pixels; the legend's 560 pixels set the width. */
    ck_assert_uint_eq(l.blocks_per_cell, 1);
    ck_assert_uint_eq(l.cols, 25);
    ck_assert_uint_eq(l.rows, 24);
    ck_assert_uint_eq(l.cell, 16);
    ck_assert_int_eq(cairo_image_surface_get_width(s), 584);
    ck_assert_int_eq(cairo_image_surface_get_height(s), 564);
    ck_assert_uint_eq(l.legend_y, 428);

    uint32_t bg = pixel(s, 1, 1);
    /* The map: block 0 (superblock, the hottest) bright magenta, a free block dark. */
    uint32_t sb = pixel(s, l.map_x + 8, l.map_y + 8);
    ck_assert_uint_gt((sb >> 16) & 0xff, 0xf0);
    ck_assert_uint_lt((sb >> 8) & 0xff, 0x80);
    uint32_t fr = pixel(s, l.map_x + 8 + 16 * 20, l.map_y + 8 + 16 * 10); /* block 270 */
    ck_assert_uint_lt(luma(fr), 200);
    ck_assert_uint_ne(fr, bg);
    /* The legend is drawn: many pixels differ from the background, and the
     * counter scale brightens from left to right. */
    unsigned drawn = 0;
    for (unsigned y = l.legend_y; y < l.legend_y + l.legend_h; y++)
        for (unsigned x = 0; x < l.width; x++)
            drawn += pixel(s, x, y) != bg;
    ck_assert_uint_gt(drawn, 3000);
    uint32_t lo = pixel(s, l.map_x + 2, l.legend_y + 90);
    uint32_t hi = pixel(s, l.map_x + 250, l.legend_y + 90);
    ck_assert_uint_lt(luma(lo) + 100, luma(hi));
    cairo_surface_destroy(s);
    rep_free(r);
    rm_image(img);
}
END_TEST

/* 131073 blocks: more than 65536 cells, so 4 blocks a cell (32769 cells). */
START_TEST(test_png_aggregated)
{
    char *img = mk_image(131073, false);
    struct rep r = report(img, 0);
    struct wear_png_layout l;
    cairo_surface_t *s = png_of(r.w, &l);
    ck_assert_uint_eq(l.blocks_per_cell, 4);
    ck_assert_uint_eq(l.cells, 32769);
    ck_assert_uint_eq(l.cols, 182);
    ck_assert_uint_eq(l.rows, 181);
    ck_assert_uint_eq(l.cell, 2);
    ck_assert_int_eq(cairo_image_surface_get_width(s), 584);
    ck_assert_int_eq(cairo_image_surface_get_height(s), 32 + 181 * 2 + 12 + 124 + 12);
    /* Cell 0 holds blocks 0..3: the superblock is the hottest, so magenta. */
    uint32_t c0 = pixel(s, l.map_x, l.map_y);
    ck_assert_uint_gt((c0 >> 16) & 0xff, 0xf0);
    cairo_surface_destroy(s);
    rep_free(r);
    rm_image(img);
}
END_TEST

/* A long title of two-byte characters, cut in the legend: the cut falls between characters. */
START_TEST(test_png_long_title)
{
    char *img = mk_ops_image();
    struct rep r = report(img, 0);
    char title[400] = "a";
    for (int i = 0; i < 150; i++)
        strcat(title, "\xc3\xa9");
    char *png = tmp_path("png");
    struct lanyfs_error err;
    for (int k = 0; k < 2; k++)
        ck_assert_msg(wear_write_png(png, r.w, title + k, &err) == LANYFS_OK,
                      "title from byte %d: %s", k, err.msg);
    unlink(png);
    free(png);
    rep_free(r);
    rm_image(img);
}
END_TEST

/* The layout alone: a huge device stays within 584 x 692 pixels; tiny ones work. */
START_TEST(test_png_layout_bounds)
{
    struct wear_report w = {.blocks = (uint64_t)1 << 30};
    struct wear_png_layout l;
    wear_png_layout(&w, &l);
    ck_assert_uint_eq(l.blocks_per_cell, 16384);
    ck_assert_uint_eq(l.cells, 65536);
    ck_assert_uint_eq(l.cols, 256);
    ck_assert_uint_eq(l.rows, 256);
    ck_assert_uint_eq(l.cell, 2);
    ck_assert_uint_eq(l.width, 584);
    ck_assert_uint_eq(l.height, 692);
    w.blocks = UINT64_MAX;
    wear_png_layout(&w, &l);
    ck_assert_uint_le(l.cells, WEAR_PNG_MAX_CELLS);
    ck_assert_uint_le(l.width, 584);
    ck_assert_uint_le(l.height, 692);
    w.blocks = 1;
    wear_png_layout(&w, &l);
    ck_assert_uint_eq(l.cols, 1);
    ck_assert_uint_eq(l.rows, 1);
    ck_assert_uint_eq(l.cell, 16);
    ck_assert_uint_eq(l.width, 584);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("wear");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_fresh_format);
    tcase_add_test(tc, test_operations);
    tcase_add_test(tc, test_wrapped_super);
    tcase_add_test(tc, test_wrapped_chain);
    tcase_add_test(tc, test_restarted_chain);
    tcase_add_test(tc, test_restarted_reused);
    tcase_add_test(tc, test_compat_stride);
    tcase_add_test(tc, test_driver_2012);
    tcase_add_test(tc, test_escape);
    tcase_add_test(tc, test_writers);
    tcase_add_test(tc, test_png);
    tcase_add_test(tc, test_png_aggregated);
    tcase_add_test(tc, test_png_long_title);
    tcase_add_test(tc, test_png_layout_bounds);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    cairo_debug_reset_static_data();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
