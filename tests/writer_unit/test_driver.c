/*
 * test_driver.c -- the 2012 driver mode, one test per behaviour of
 * SPEC-§8, §9 and §10 that changes the disk.
 *
 * Each test formats a small image, mounts it, runs the operations, unmounts,
 * and then reads the image back with the core readers to assert the exact
 * on-disk effect: which blocks are free, reachable or leaked, the fields of
 * the blocks involved and their write counters.  Where the order of writes
 * is the behaviour (links landing at writeback, the entry freed before the
 * tree change), the fs write hook records every write.
 *
 * Most tests use 512-byte blocks and 2-byte addresses: chainmax 248,
 * extmax 253.  A 600-block image formatted by the correct formatter has
 * chain blocks 2 (slots 3..249), 250 (251..497) and 498 (499..599), the
 * last slot of each left empty; the 2012 formatter (compat) fills every
 * slot: chain blocks 2 (3..250), 251 (252..499) and 500 (501..599).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wu.h"

#define BITS 9
#define BS 512u
#define ALEN 2
#define CHAINMAX 248u
#define EXTMAX 253u
#ifndef HOSTILE_RUNS
#define HOSTILE_RUNS 48
#endif

static const enum lanyfs_write_mode DRV = LANYFS_WRITE_DRIVER2012;
static const enum lanyfs_write_mode COR = LANYFS_WRITE_CORRECT;

/* Block k of a pattern: distinct for k mod 256. */
static uint8_t *pattern(size_t nblocks, uint32_t bs)
{
    uint8_t *p = malloc(nblocks * bs + 1);
    ck_assert_ptr_nonnull(p);
    for (size_t k = 0; k < nblocks; k++)
        for (uint32_t j = 0; j < bs; j++)
            p[k * bs + j] = (uint8_t)(k * 31 + j * 7 + 1);
    return p;
}

static void op(enum lanyfs_err want, enum lanyfs_err got, const char *what)
{
    ck_assert_msg(got == want, "%s: got %d, want %d", what, got, want);
}

static void put(struct lanyfs_writer *w, const char *path, const void *data, uint64_t len)
{
    struct lanyfs_error err;
    enum lanyfs_err rc = lanyfs_writer_put(w, path, data, len, NULL, &err);
    ck_assert_msg(rc == LANYFS_OK, "put %s: %s", path, err.msg);
}

static void mkdir_(struct lanyfs_writer *w, const char *path)
{
    struct lanyfs_error err;
    enum lanyfs_err rc = lanyfs_writer_mkdir(w, path, &err);
    ck_assert_msg(rc == LANYFS_OK, "mkdir %s: %s", path, err.msg);
}

static struct lanyfs_fs *reopen(struct lanyfs_fs *fs, const struct wu_img *im)
{
    lanyfs_fs_close(fs);
    return wu_open(im);
}

static bool ext_empty(struct lanyfs_fs *fs, uint64_t blk)
{
    for (uint32_t i = 0; i < EXTMAX; i++)
        if (wu_ext_slot(fs, blk, i) != 0)
            return false;
    return true;
}

/* ---- 9.1 ------------------------------------------------------------------- */

/* Consuming a 2012-formatted chain block loses the block in its last slot. */
START_TEST(test_91_last_slot_leaked)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, true, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    WU_EQ(wu_chain_slot(fs, 2, CHAINMAX - 1), 250); /* the formatter filled the last slot */
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    uint8_t *data = pattern(246, BS);
    /* entry + extender + 246 data = 248: slots 0..246 of chain 2, then chain 2 itself */
    put(w, "/f", data, 246 * BS);
    wu_umount(w);
    fs = reopen(fs, &im);
    struct wu_map m;
    wu_classify(fs, &m);
    WU_EQ(m.cls[250], WU_NONE);
    WU_EQ(m.count[WU_NONE], 1);
    WU_EQ(m.cls[2], WU_DATA); /* the chain block was handed out as file data */
    struct lanyfs_super sb = wu_super(fs);
    WU_EQ(sb.freehead, 251);
    WU_EQ(sb.freeblocks, 598 - 248);
    WU_EQ(sb.freeblocks - (m.count[WU_CHAIN] + m.count[WU_FREE]), 1);
    uint64_t size;
    uint8_t *back = wu_read_file(fs, wu_lookup(fs, "/f"), &size);
    ck_assert(size == 246 * BS && memcmp(back, data, size) == 0);
    free(back);
    free(data);
    wu_map_free(&m);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- 9.2 ------------------------------------------------------------------- */

/* A push neither counts nor rewrites the superblock: freeblocks ends low by the pushes. */
START_TEST(test_92_push_uncounted)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    const char *names[] = {"/e0", "/e1", "/e2", "/e3", "/e4"};
    for (int i = 0; i < 5; i++)
        put(w, names[i], NULL, 0);
    wu_umount(w);
    fs = reopen(fs, &im);
    struct lanyfs_super sb1 = wu_super(fs);
    WU_EQ(sb1.freeblocks, 598 - 5);
    uint16_t chain1 = wu_wrcnt(fs, 2);
    struct wu_log log;
    wu_log_start(fs, &log);
    w = wu_mount(fs, DRV);
    for (int i = 0; i < 5; i++)
        WU_OK(lanyfs_writer_unlink(w, names[i], &wu_e_));
    WU_EQ(wu_log_count(&log, 0), 0); /* no superblock rewrite for the pushes */
    wu_umount(w);
    WU_EQ(wu_log_count(&log, 0), 1); /* the unmount's */
    wu_log_stop(fs);
    fs = reopen(fs, &im);
    struct lanyfs_super sb2 = wu_super(fs);
    struct wu_map m;
    wu_classify(fs, &m);
    WU_EQ(sb2.freeblocks, sb1.freeblocks);
    WU_EQ(m.count[WU_CHAIN] + m.count[WU_FREE], sb1.freeblocks + 5);
    WU_EQ(sb2.wrcnt, (uint16_t)(sb1.wrcnt + 1));
    WU_EQ(wu_wrcnt(fs, 2), (uint16_t)(chain1 + 5));
    WU_EQ(m.count[WU_NONE], 0);
    wu_map_free(&m);
    wu_log_free(&log);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- 8: mount ---------------------------------------------------------------- */

/*
 * The driver's mount checks the superblock's type byte; a reader only
 * reports a wrong one.  Neither writer mounts such an image, and the
 * refused mount writes nothing.
 */
START_TEST(test_8_mount_refuses_bad_type)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    int fd = open(im.path, O_RDWR);
    ck_assert(fd >= 0);
    const uint8_t dirtype = LANYFS_TYPE_DIR;
    ck_assert(pwrite(fd, &dirtype, 1, LANYFS_HDR_TYPE) == 1);
    uint8_t before[BS], after[BS];
    ck_assert(pread(fd, before, BS, 0) == (ssize_t)BS);
    struct lanyfs_fs *fs = wu_open(&im); /* a reader opens it */
    const struct lanyfs_sb_problem *pr;
    WU_EQ(lanyfs_fs_problems(fs, &pr), 1);
    ck_assert(!pr[0].fatal);
    ck_assert(lanyfs_writer_refuses_problem(&pr[0]));
    for (int mode = 0; mode < 2; mode++) {
        struct lanyfs_writer *w = (struct lanyfs_writer *)&im; /* must be cleared */
        struct lanyfs_error err;
        op(LANYFS_E_BADTYPE, lanyfs_writer_mount(fs, mode ? DRV : COR, &w, &err), "mount");
        ck_assert_ptr_null(w);
        ck_assert_msg(strstr(err.msg, "'type' is 0x10") != NULL, "%s", err.msg);
    }
    lanyfs_fs_close(fs);
    ck_assert(pread(fd, after, BS, 0) == (ssize_t)BS);
    ck_assert(memcmp(before, after, BS) == 0);
    close(fd);
    wu_img_rm(&im);
}
END_TEST

/* ---- 9.3 ------------------------------------------------------------------- */

/* The tail is reset to the head at mount; the first allocation writes it. */
START_TEST(test_93_tail_reset_at_mount)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    WU_EQ(wu_super(fs).freetail, 498);
    struct wu_log log;
    wu_log_start(fs, &log);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    WU_EQ(log.n, 0); /* mount writes nothing */
    mkdir_(w, "/a");
    size_t i = wu_log_find(&log, 0, 0);
    ck_assert(i != SIZE_MAX);
    struct lanyfs_super s;
    lanyfs_super_decode(&s, log.data[i]);
    WU_EQ(s.freehead, 2);
    WU_EQ(s.freetail, 2);
    wu_umount(w);
    wu_log_stop(fs);
    fs = reopen(fs, &im);
    WU_EQ(wu_super(fs).freetail, 2);
    wu_log_free(&log);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/*
 * Freed blocks go into the head chain block; when it is full its next is
 * overwritten with a new chain block and the rest of the list is lost.
 */
START_TEST(test_93_full_head_cuts_list)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    uint8_t *data = pattern(250, BS);
    /* 252 allocations: chain 2's 247 slots and itself, then slots 0..3 of chain 250 */
    put(w, "/a", data, 250 * BS);
    wu_umount(w);
    fs = reopen(fs, &im);
    struct lanyfs_super sb = wu_super(fs);
    WU_EQ(sb.freehead, 250);
    WU_EQ(sb.freetail, 250); /* the head was the tail: the tail follows it */
    WU_EQ(sb.freeblocks, 598 - 252);
    uint64_t a = wu_lookup(fs, "/a");
    uint64_t ext = wu_entry(fs, a).subtree;
    WU_EQ(a, 3);
    WU_EQ(ext, 4);
    uint16_t c250 = wu_wrcnt(fs, 250);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_unlink(w, "/a", &wu_e_));
    wu_umount(w);
    fs = reopen(fs, &im);
    sb = wu_super(fs);
    struct wu_map m;
    wu_classify(fs, &m);
    /* The four pushes filled chain 250; file block 4's block (9) became the new chain. */
    WU_EQ(m.list_chains, 2);
    WU_EQ(sb.freehead, 250);
    WU_EQ(sb.freetail, 9);
    WU_EQ(m.cls[9], WU_CHAIN);
    WU_EQ(wu_wrcnt(fs, 9), 246);             /* created at 0, then 246 pushes */
    WU_EQ(wu_wrcnt(fs, 250), c250 + 4 + 1);  /* 4 pushes and the set-next */
    /* Leaked: the cut-off chain 498 with its 101 slots, and the extender (9.4). */
    WU_EQ(wu_map_count_range(&m, WU_NONE, 498, 600), 102);
    WU_EQ(m.cls[ext], WU_NONE);
    WU_EQ(m.count[WU_NONE], 103);
    WU_EQ(sb.freeblocks, 598 - 252 + 1);     /* only the new chain block counted */
    WU_EQ(m.count[WU_CHAIN] + m.count[WU_FREE], 598 - 252 + 251 - 102);
    wu_map_free(&m);
    free(data);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- 9.4, 9.5 -------------------------------------------------------------- */

struct deleted {
    struct wu_img im;
    struct lanyfs_fs *fs;
    uint64_t entry, ext, data[3];
    struct lanyfs_entry before;  /* the entry block before the delete */
    uint16_t ext_wrcnt;          /* the extender's counter before */
};

static void delete_file(struct deleted *d)
{
    wu_img_make(&d->im, BITS, ALEN, 600, false, 0);
    d->fs = wu_open(&d->im);
    struct lanyfs_writer *w = wu_mount(d->fs, DRV);
    uint8_t *data = pattern(3, BS);
    put(w, "/f", data, 3 * BS);
    free(data);
    wu_umount(w);
    d->fs = reopen(d->fs, &d->im);
    d->entry = wu_lookup(d->fs, "/f");
    d->before = wu_entry(d->fs, d->entry);
    d->ext = d->before.subtree;
    d->ext_wrcnt = wu_wrcnt(d->fs, d->ext);
    for (uint32_t i = 0; i < 3; i++)
        d->data[i] = wu_ext_slot(d->fs, d->ext, i);
    w = wu_mount(d->fs, DRV);
    WU_OK(lanyfs_writer_unlink(w, "/f", &wu_e_));
    wu_umount(w);
    d->fs = reopen(d->fs, &d->im);
}

/* The extenders of a deleted file are not freed: zeroed slots, level kept, leaked. */
START_TEST(test_94_extender_never_freed)
{
    struct deleted d;
    delete_file(&d);
    uint8_t b[BS];
    wu_block(d.fs, d.ext, b);
    struct lanyfs_ext_hdr h;
    lanyfs_ext_decode(&h, b);
    WU_EQ(h.type, LANYFS_TYPE_EXT);
    WU_EQ(h.level, 0);
    WU_EQ(d.ext_wrcnt, 0);                 /* a stored slot does not count */
    WU_EQ(h.wrcnt, 1);                     /* the truncate's visit does */
    ck_assert(ext_empty(d.fs, d.ext));
    struct wu_map m;
    wu_classify(d.fs, &m);
    WU_EQ(m.cls[d.ext], WU_NONE);
    for (int i = 0; i < 3; i++)
        WU_EQ(m.cls[d.data[i]], WU_FREE);
    WU_EQ(m.count[WU_NONE], 1);
    wu_map_free(&m);
    lanyfs_fs_close(d.fs);
    wu_img_rm(&d.im);
}
END_TEST

/* A freed entry block keeps type, name, size, times and data pointer. */
START_TEST(test_95_freed_entry_keeps_contents)
{
    struct deleted d;
    delete_file(&d);
    uint8_t b[BS], want[BS];
    wu_block(d.fs, d.entry, b);
    memset(want, 0, sizeof(want));
    struct lanyfs_entry e = wu_entry(d.fs, d.entry);
    WU_EQ(e.type, LANYFS_TYPE_FILE);
    ck_assert_str_eq((const char *)e.name, "f");
    WU_EQ(e.size, 3 * BS);
    WU_EQ(e.subtree, d.ext);
    WU_EQ(e.wrcnt, d.before.wrcnt);
    ck_assert(memcmp(&e.modified, &d.before.modified, sizeof(e.modified)) == 0);
    ck_assert(memcmp(&e.created, &d.before.created, sizeof(e.created)) == 0);
    struct wu_map m;
    wu_classify(d.fs, &m);
    WU_EQ(m.cls[d.entry], WU_FREE);
    /* SPEC-§11: its data blocks sit just before it in the slots, in file order. */
    uint32_t slot = UINT32_MAX;
    for (uint32_t i = 0; i < CHAINMAX; i++)
        if (wu_chain_slot(d.fs, 2, i) == d.entry)
            slot = i;
    ck_assert(slot != UINT32_MAX && slot >= 3);
    for (uint32_t i = 0; i < 3; i++)
        WU_EQ(wu_chain_slot(d.fs, 2, slot - 3 + i), d.data[i]);
    wu_map_free(&m);
    lanyfs_fs_close(d.fs);
    wu_img_rm(&d.im);
}
END_TEST

/* ---- 9.6 ------------------------------------------------------------------- */

/* A block made again starts at counter 0: 0 on its creation write, 1 after writeback. */
START_TEST(test_96_counter_restarts)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    put(w, "/e", NULL, 0);
    wu_umount(w);
    for (int i = 0; i < 2; i++) {
        w = wu_mount(fs, DRV);
        WU_OK(lanyfs_writer_truncate(w, "/e", 0, &wu_e_)); /* stamps it: one writeback */
        wu_umount(w);
    }
    fs = reopen(fs, &im);
    uint64_t e = wu_lookup(fs, "/e");
    WU_EQ(e, 3);
    WU_EQ(wu_wrcnt(fs, e), 3);
    struct wu_log log;
    wu_log_start(fs, &log);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_unlink(w, "/e", &wu_e_));
    mkdir_(w, "/d"); /* pops slot 0 of chain 2, where the push put block 3 */
    size_t i = wu_log_find(&log, e, 0);
    ck_assert(i != SIZE_MAX);
    WU_EQ(log.data[i][LANYFS_HDR_TYPE], LANYFS_TYPE_DIR);
    WU_EQ(lanyfs_get16(log.data[i] + LANYFS_HDR_WRCNT), 0);
    wu_umount(w);
    wu_log_stop(fs);
    fs = reopen(fs, &im);
    WU_EQ(wu_lookup(fs, "/d"), e);
    WU_EQ(wu_wrcnt(fs, e), 1);
    wu_log_free(&log);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- 9.7 ------------------------------------------------------------------- */

/* File block extmax gets a level-1 top and no child: it lands on file block 0's block. */
START_TEST(test_97_top_level_without_child)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 400, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    uint8_t *data = pattern(EXTMAX + 1, BS);
    put(w, "/big", data, (EXTMAX + 1) * BS);
    wu_umount(w);
    fs = reopen(fs, &im);
    struct lanyfs_entry e = wu_entry(fs, wu_lookup(fs, "/big"));
    WU_EQ(e.size, (EXTMAX + 1) * BS);
    uint8_t b[BS];
    wu_block(fs, e.subtree, b);
    WU_EQ(b[LANYFS_EXT_LEVEL], 1);
    uint64_t l0 = wu_ext_slot(fs, e.subtree, 0);
    ck_assert(l0 != 0);
    for (uint32_t i = 1; i < EXTMAX; i++)
        WU_EQ(wu_ext_slot(fs, e.subtree, i), 0);
    uint64_t d0 = wu_ext_slot(fs, l0, 0);
    wu_block(fs, d0, b);
    ck_assert(memcmp(b, data + EXTMAX * BS, BS) == 0); /* block extmax's data */
    for (uint32_t k = 1; k < EXTMAX; k++) {
        wu_block(fs, wu_ext_slot(fs, l0, k), b);
        ck_assert(memcmp(b, data + (size_t)k * BS, BS) == 0);
    }
    struct wu_map m;
    wu_classify(fs, &m);
    WU_EQ(m.count[WU_NONE], 0);
    WU_EQ(m.count[WU_EXT], 2);
    WU_EQ(m.count[WU_DATA], EXTMAX);
    wu_map_free(&m);
    free(data);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/*
 * From file block extmax + 1 on, the growth loop stores empty level-0
 * extenders in slot 1 until the device is full; file block extmax + 1
 * lands on file block 1's block.
 */
START_TEST(test_97_growth_loop_fills_device)
{
    const uint64_t nblocks = 400;
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, nblocks, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    uint8_t *data = pattern(EXTMAX + 2, BS);
    put(w, "/big", data, (EXTMAX + 2) * BS);
    struct lanyfs_writer_state st;
    lanyfs_writer_state(w, &st);
    WU_EQ(st.freehead, 0);
    wu_umount(w);
    fs = reopen(fs, &im);
    struct lanyfs_super sb = wu_super(fs);
    WU_EQ(sb.freehead, 0);
    WU_EQ(sb.freeblocks, 0);
    struct lanyfs_entry e = wu_entry(fs, wu_lookup(fs, "/big"));
    uint64_t l1 = e.subtree, l0 = wu_ext_slot(fs, l1, 0), last = wu_ext_slot(fs, l1, 1);
    ck_assert(l0 != 0 && last != 0);
    for (uint32_t i = 2; i < EXTMAX; i++)
        WU_EQ(wu_ext_slot(fs, l1, i), 0);
    uint8_t b[BS];
    wu_block(fs, wu_ext_slot(fs, l0, 0), b);
    ck_assert(memcmp(b, data + EXTMAX * BS, BS) == 0);
    wu_block(fs, wu_ext_slot(fs, l0, 1), b);
    ck_assert(memcmp(b, data + (EXTMAX + 1) * BS, BS) == 0);
    struct wu_map m;
    wu_classify(fs, &m);
    /* super, root, entry, L1, L0, 253 data, the last sibling; all else orphaned siblings */
    WU_EQ(m.count[WU_EXT], 3);
    WU_EQ(m.count[WU_DATA], EXTMAX);
    WU_EQ(m.count[WU_NONE], nblocks - 3 - 3 - EXTMAX);
    WU_EQ(m.count[WU_CHAIN] + m.count[WU_FREE], 0);
    ck_assert(ext_empty(fs, last));
    for (uint64_t k = 1; k < nblocks; k++) {
        if (m.cls[k] != WU_NONE)
            continue;
        wu_block(fs, k, b);
        struct lanyfs_ext_hdr h;
        lanyfs_ext_decode(&h, b);
        WU_ASSERT(h.type == LANYFS_TYPE_EXT && h.level == 0 && h.wrcnt == 0,
                  "block %llu is no empty level-0 extender", (unsigned long long)k);
        WU_ASSERT(ext_empty(fs, k), "block %llu maps something", (unsigned long long)k);
    }
    wu_map_free(&m);
    free(data);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- 9.8 ------------------------------------------------------------------- */

/*
 * A sparse write maps to a hole, that is block 0: the data goes to block 0,
 * and the next superblock rewrite (from the mount's buffer) puts the
 * superblock back, bytes beyond 376 included.
 */
START_TEST(test_98_hole_maps_to_block0)
{
    struct wu_img im;
    wu_img_make(&im, 12, ALEN, 64, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    put(w, "/s", NULL, 0);
    wu_umount(w);
    fs = reopen(fs, &im);
    uint8_t before[4096], b[4096];
    wu_block(fs, 0, before);
    uint8_t *data = pattern(1, 4096);
    struct wu_log log;
    wu_log_start(fs, &log);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_pwrite(w, "/s", 5 * 4096, data, 4096, &wu_e_));
    size_t i = SIZE_MAX;
    for (size_t k = 0; k < log.n; k++)
        if (log.blk[k] == 0 && memcmp(log.data[k], data, 4096) == 0)
            i = k;
    ck_assert_msg(i != SIZE_MAX, "the data was not written to block 0");
    wu_umount(w);
    ck_assert(wu_log_find(&log, 0, i + 1) != SIZE_MAX); /* the superblock came back */
    wu_log_stop(fs);
    fs = reopen(fs, &im);
    wu_block(fs, 0, b);
    ck_assert(memcmp(b + LANYFS_SB_USED, before + LANYFS_SB_USED, 4096 - LANYFS_SB_USED) == 0);
    WU_EQ(lanyfs_get32(b + LANYFS_SB_MAGIC), LANYFS_MAGIC);
    struct lanyfs_entry e = wu_entry(fs, wu_lookup(fs, "/s"));
    WU_EQ(e.size, 6 * 4096);
    uint64_t x = wu_ext_slot(fs, e.subtree, 0);
    ck_assert(x != 0);
    for (uint32_t k = 1; k < 6; k++)
        WU_EQ(wu_ext_slot(fs, e.subtree, k), 0);
    WU_EQ(wu_log_count(&log, x), 0); /* the block the growth added is never written */
    free(data);
    wu_log_free(&log);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* A hole above level 0 fails the mapping (EINVAL); the growth before it stays. */
START_TEST(test_98_hole_above_level0)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    put(w, "/s", NULL, 0);
    uint8_t *data = pattern(1, BS);
    WU_OK(lanyfs_writer_pwrite(w, "/s", 300 * BS, data, BS, &wu_e_));
    wu_umount(w);
    fs = reopen(fs, &im);
    struct lanyfs_entry e = wu_entry(fs, wu_lookup(fs, "/s"));
    uint64_t l1 = e.subtree, l0b = wu_ext_slot(fs, l1, 1);
    ck_assert(l0b != 0 && wu_ext_slot(fs, l0b, 300 - EXTMAX) != 0);
    /* Cut slot 0 of the level-1 extender: a hole above level 0. */
    uint8_t b[BS];
    wu_block(fs, l1, b);
    lanyfs_ext_set_slot(lanyfs_fs_geom(fs), b, 0, 0);
    WU_OK(lanyfs_fs_write_block(fs, l1, b, &wu_e_));
    fs = reopen(fs, &im);
    struct wu_log log;
    wu_log_start(fs, &log);
    w = wu_mount(fs, DRV);
    struct lanyfs_error err;
    op(LANYFS_E_INVAL, lanyfs_writer_pwrite(w, "/s", 10 * BS, data, 100, &err), "pwrite");
    wu_umount(w);
    wu_log_stop(fs);
    fs = reopen(fs, &im);
    uint64_t y = wu_ext_slot(fs, l0b, 0);
    ck_assert(y != 0);            /* the growth took a block into the last child */
    WU_EQ(wu_log_count(&log, y), 0);
    for (size_t k = 0; k < log.n; k++)
        ck_assert(memcmp(log.data[k], data, 100) != 0); /* no data went anywhere */
    free(data);
    wu_log_free(&log);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* The disk block of file block fb through a correct reading of the tree. */
static uint64_t map_block(struct lanyfs_fs *fs, uint64_t file, uint64_t fb)
{
    struct lanyfs_entry e = wu_entry(fs, file);
    uint64_t d;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_file_map(fs, &e, fb, &d, &err), LANYFS_OK);
    return d;
}

/*
 * The squaring helper at level 2 and 1 (extmax 63 at 512-byte blocks and
 * 8-byte addresses): extmax^2 is taken for extmax at level 1, so file
 * blocks 96..103 (one page) land on the disk blocks of file blocks 33..40.
 */
START_TEST(test_98_squaring_helper)
{
    const uint32_t ext = 63, nb = ext * ext + 1; /* a level-2 tree */
    struct wu_img im;
    wu_img_make(&im, BITS, 8, nb + 140, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    uint8_t *data = pattern(nb, BS);
    put(w, "/f", data, (uint64_t)nb * BS);
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t f = wu_lookup(fs, "/f");
    uint8_t b[BS];
    wu_block(fs, wu_entry(fs, f).subtree, b);
    WU_EQ(b[LANYFS_EXT_LEVEL], 2);
    uint64_t d[104];
    for (uint64_t k = 0; k < 104; k++)
        d[k] = map_block(fs, f, k);
    uint8_t q[BS];
    memset(q, 'Q', BS);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_pwrite(w, "/f", 100 * BS, q, BS, &wu_e_));
    wu_umount(w);
    fs = reopen(fs, &im);
    uint8_t zero[BS];
    memset(zero, 0, BS);
    for (uint64_t k = 33; k <= 40; k++) {
        wu_block(fs, d[k], b);
        ck_assert_msg(memcmp(b, k == 37 ? q : zero, BS) == 0, "file block %llu's block",
                      (unsigned long long)k);
    }
    for (uint64_t k = 96; k < 104; k++) {
        wu_block(fs, d[k], b);
        ck_assert(memcmp(b, data + k * BS, BS) == 0); /* untouched */
    }
    WU_EQ(wu_entry(fs, f).size, (uint64_t)nb * BS);
    free(data);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* Fill the device (correct mode) around a one-block file /s. */
static void full_device_with_s(struct wu_img *im, unsigned bits, uint64_t blocks)
{
    wu_img_make(im, bits, ALEN, blocks, false, 0);
    struct lanyfs_fs *fs = wu_open(im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    uint8_t *one = pattern(1, 1u << bits);
    put(w, "/s", one, 1u << bits);
    free(one);
    char name[16];
    struct lanyfs_error err;
    for (int k = 0;; k++) {
        snprintf(name, sizeof(name), "/d%d", k);
        if (lanyfs_writer_mkdir(w, name, &err) != LANYFS_OK)
            break;
    }
    wu_umount(w);
    lanyfs_fs_close(fs);
}

/*
 * With 512-byte blocks the driver's superblock buffer is the one read at
 * mount: hole data that reaches block 0 before any rewrite in the mount is
 * overwritten by the unmount's rewrite.
 */
START_TEST(test_98_block0_restored_at_512)
{
    struct wu_img im;
    full_device_with_s(&im, 9, 40);
    struct lanyfs_fs *fs = wu_open(&im);
    uint8_t before[BS], b[BS];
    wu_block(fs, 0, before);
    uint8_t *data = pattern(1, BS);
    struct wu_log log;
    wu_log_start(fs, &log);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_pwrite(w, "/s", 3 * BS, data, 100, &wu_e_)); /* blocks 1..3: holes */
    WU_EQ(wu_log_count(&log, 0), 3);                                  /* no allocation: full */
    size_t last = log.n - 1;
    WU_EQ(log.blk[last], 0);
    ck_assert(memcmp(log.data[last], data, 100) == 0); /* file block 3's bytes on block 0 */
    wu_umount(w);
    wu_log_stop(fs);
    fs = reopen(fs, &im);
    wu_block(fs, 0, b);
    ck_assert(memcmp(b + LANYFS_SB_USED, before + LANYFS_SB_USED, BS - LANYFS_SB_USED) == 0);
    ck_assert(memcmp(b + 4, before + 4, LANYFS_SB_FREEHEAD - 4) == 0); /* magic .. blocks */
    WU_EQ(lanyfs_get16(b + LANYFS_HDR_WRCNT), lanyfs_get16(before + LANYFS_HDR_WRCNT) + 1);
    free(data);
    wu_log_free(&log);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/*
 * With larger blocks, lanyfs_fill_super's change of block size drops the
 * buffer read at mount; the first rewrite reads block 0 again, so hole data
 * that got there first becomes the superblock, patched in the driver's
 * five fields.
 */
START_TEST(test_98_block0_reread_above_512)
{
    const uint32_t bs = 2048;
    struct wu_img im;
    full_device_with_s(&im, 11, 24);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_super sb0 = wu_super(fs);
    uint8_t *data = pattern(1, bs);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_pwrite(w, "/s", bs, data, bs, &wu_e_)); /* file block 1: a hole */
    wu_umount(w);
    lanyfs_fs_close(fs);
    struct lanyfs_image *img;
    struct lanyfs_error err;
    uint8_t b[2048];
    ck_assert_int_eq(lanyfs_image_open(im.path, 0, &img, &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_image_pread(img, 0, b, bs, &err), LANYFS_OK);
    lanyfs_image_close(img);
    WU_EQ(b[0], data[0]);
    WU_EQ(lanyfs_get32(b + LANYFS_SB_MAGIC), lanyfs_get32(data + LANYFS_SB_MAGIC));
    WU_EQ(lanyfs_get16(b + LANYFS_HDR_WRCNT), (uint16_t)(lanyfs_get16(data + 2) + 1));
    WU_EQ(lanyfs_get64(b + LANYFS_SB_FREEHEAD), sb0.freehead);
    WU_EQ(lanyfs_get64(b + LANYFS_SB_FREEBLOCKS), sb0.freeblocks);
    ck_assert(memcmp(b + LANYFS_SB_USED, data + LANYFS_SB_USED, bs - LANYFS_SB_USED) == 0);
    free(data);
    wu_img_rm(&im);
}
END_TEST

/* ---- 9.9 ------------------------------------------------------------------- */

/*
 * In dir: m (3 blocks), a, c, z in that order: m is the root, a its right
 * child, c a leaf left of a, z left of m.  Deleting m needs c, a leaf that
 * is not m's direct child: the driver's delete fails there.
 */
static void make_shape(struct lanyfs_writer *w, const char *dir, uint8_t *data)
{
    char p[64];
    const char *names[] = {"m", "a", "c", "z"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
        put(w, p, data, i == 0 ? 3 * BS : 0);
    }
}

START_TEST(test_99_delete_fails_after_truncate)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    uint8_t *data = pattern(3, BS);
    make_shape(w, "", data);
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t mb = wu_lookup(fs, "/m"), ab = wu_lookup(fs, "/a"), cb = wu_lookup(fs, "/c");
    struct lanyfs_entry m0 = wu_entry(fs, mb);
    WU_EQ(wu_entry(fs, 1).subtree, mb);
    WU_EQ(m0.right, ab);
    WU_EQ(wu_entry(fs, ab).left, cb);
    uint64_t ext = m0.subtree, d[3];
    uint16_t ext_wrcnt = wu_wrcnt(fs, ext);
    for (int i = 0; i < 3; i++)
        d[i] = wu_ext_slot(fs, ext, (uint32_t)i);
    w = wu_mount(fs, DRV);
    struct lanyfs_error err;
    op(LANYFS_E_NOTFOUND, lanyfs_writer_unlink(w, "/m", &err), "unlink /m");
    wu_umount(w);
    fs = reopen(fs, &im);
    struct lanyfs_entry m1 = wu_entry(fs, mb);
    WU_EQ(wu_entry(fs, 1).subtree, mb);
    WU_EQ(m1.size, 3 * BS);      /* its old size: the inode was clean */
    WU_EQ(m1.subtree, ext);
    WU_EQ(m1.wrcnt, m0.wrcnt);
    ck_assert(ext_empty(fs, ext)); /* an extender of holes */
    WU_EQ(wu_wrcnt(fs, ext), ext_wrcnt + 1);
    struct wu_map m;
    wu_classify(fs, &m);
    WU_EQ(m.cls[mb], WU_FILE);
    for (int i = 0; i < 3; i++)
        WU_EQ(m.cls[d[i]], WU_FREE);
    WU_EQ(m.count[WU_FILE], 4);
    wu_map_free(&m);
    free(data);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* rename: the source delete fails, its links are cleared and it is added again: two trees. */
START_TEST(test_99_rename_source_in_two_trees)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    uint8_t *data = pattern(3, BS);
    mkdir_(w, "/d1");
    mkdir_(w, "/d2");
    make_shape(w, "/d1", data);
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t d1 = wu_lookup(fs, "/d1"), d2 = wu_lookup(fs, "/d2");
    uint64_t mb = wu_lookup(fs, "/d1/m"), ab = wu_lookup(fs, "/d1/a");
    uint64_t cb = wu_lookup(fs, "/d1/c"), zb = wu_lookup(fs, "/d1/z");
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_rename(w, "/d1/m", "/d2/n", &wu_e_));
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_entry(fs, d1).subtree, mb);
    WU_EQ(wu_entry(fs, d2).subtree, mb);
    struct lanyfs_entry n = wu_entry(fs, mb);
    ck_assert_str_eq((const char *)n.name, "n");
    WU_EQ(n.left, 0);
    WU_EQ(n.right, 0);
    WU_EQ(wu_lookup(fs, "/d2/n"), mb);
    struct wu_map m;
    wu_classify(fs, &m);
    WU_EQ(m.cls[ab], WU_NONE);
    WU_EQ(m.cls[cb], WU_NONE);
    WU_EQ(m.cls[zb], WU_NONE);
    WU_EQ(m.conflicts, 1); /* reached from both directories */
    wu_map_free(&m);
    free(data);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* rename over a target whose delete fails: the source ends in no tree. */
START_TEST(test_99_rename_target_delete_fails)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    uint8_t *data = pattern(3, BS);
    mkdir_(w, "/d1");
    mkdir_(w, "/d2");
    make_shape(w, "/d1", data);
    put(w, "/d2/s", data, 2 * BS);
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t d1 = wu_lookup(fs, "/d1"), d2 = wu_lookup(fs, "/d2");
    uint64_t mb = wu_lookup(fs, "/d1/m"), sb = wu_lookup(fs, "/d2/s");
    uint8_t d1_before[BS];
    wu_block(fs, d1, d1_before);
    struct lanyfs_entry s0 = wu_entry(fs, sb), m0 = wu_entry(fs, mb);
    w = wu_mount(fs, DRV);
    struct lanyfs_error err;
    op(LANYFS_E_EXISTS, lanyfs_writer_rename(w, "/d2/s", "/d1/m", &err), "rename");
    wu_umount(w);
    fs = reopen(fs, &im);
    uint8_t b[BS];
    wu_block(fs, d1, b);
    ck_assert(memcmp(b, d1_before, BS) == 0);
    WU_EQ(wu_entry(fs, d2).subtree, 0);
    struct lanyfs_entry m1 = wu_entry(fs, mb), s1 = wu_entry(fs, sb);
    WU_EQ(m1.size, m0.size);
    ck_assert(ext_empty(fs, m1.subtree));
    ck_assert_str_eq((const char *)s1.name, "m");
    WU_EQ(s1.left, 0);
    WU_EQ(s1.right, 0);
    WU_EQ(s1.wrcnt, s0.wrcnt + 1);
    WU_EQ(s1.subtree, s0.subtree);
    struct wu_map m;
    wu_classify(fs, &m);
    WU_EQ(m.cls[sb], WU_NONE);
    WU_EQ(m.cls[s0.subtree], WU_NONE);
    WU_EQ(m.cls[mb], WU_FILE);
    wu_map_free(&m);
    free(data);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- 9.12 ------------------------------------------------------------------ */

/*
 * rmdir of the root node of the root directory's tree: the root's link
 * count drops to 0, so neither that change nor a later one (a rename in
 * it) reaches the disk: its subtree still names the freed block.
 */
START_TEST(test_912_parent_frozen)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    mkdir_(w, "/c");
    mkdir_(w, "/a");
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t cb = wu_lookup(fs, "/c"), ab = wu_lookup(fs, "/a");
    uint8_t root_before[BS], b[BS];
    wu_block(fs, 1, root_before);
    WU_EQ(wu_entry(fs, 1).subtree, cb);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_rmdir(w, "/c", &wu_e_));
    WU_OK(lanyfs_writer_rename(w, "/a", "/b", &wu_e_));
    wu_umount(w);
    fs = reopen(fs, &im);
    wu_block(fs, 1, b);
    ck_assert(memcmp(b, root_before, BS) == 0);
    struct wu_map m;
    wu_classify(fs, &m);
    WU_EQ(m.cls[cb], WU_FREE); /* the root's subtree names a free block */
    WU_EQ(m.cls[ab], WU_NONE);
    ck_assert_str_eq((const char *)wu_entry(fs, ab).name, "b"); /* its own writeback landed */
    wu_map_free(&m);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* A directory read from disk thaws at the next rmdir in it (the count wraps). */
START_TEST(test_912_thaw_at_next_rmdir)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    mkdir_(w, "/c");
    mkdir_(w, "/a");
    mkdir_(w, "/g");
    wu_umount(w);
    fs = reopen(fs, &im);
    uint16_t wr = wu_wrcnt(fs, 1);
    uint64_t ab = wu_lookup(fs, "/a");
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_rmdir(w, "/c", &wu_e_)); /* frozen; its subtree is now a */
    WU_OK(lanyfs_writer_rmdir(w, "/g", &wu_e_)); /* thawed */
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_wrcnt(fs, 1), wr + 1);
    WU_EQ(wu_entry(fs, 1).subtree, ab);
    WU_EQ(wu_entry(fs, ab).left, 0);
    struct wu_map m;
    wu_classify(fs, &m);
    WU_EQ(m.count[WU_NONE], 0);
    WU_EQ(m.count[WU_DIR], 2);
    wu_map_free(&m);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* A directory made in this mount starts at 2: frozen at its second rmdir, thawed at the third. */
START_TEST(test_912_new_dir_second_rmdir)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    mkdir_(w, "/D");
    mkdir_(w, "/D/x");
    mkdir_(w, "/D/y");
    mkdir_(w, "/D/z");
    WU_OK(lanyfs_writer_rmdir(w, "/D/x", &wu_e_));
    WU_OK(lanyfs_writer_rmdir(w, "/D/y", &wu_e_)); /* frozen */
    struct wu_log log;
    wu_log_start(fs, &log);
    WU_OK(lanyfs_writer_sync(w, &wu_e_));
    wu_log_stop(fs);
    /* The root was written back, so /D resolves on disk; D itself was skipped. */
    uint64_t dblk = wu_lookup(fs, "/D");
    ck_assert(dblk != 0);
    WU_EQ(wu_log_count(&log, dblk), 0);
    WU_EQ(wu_wrcnt(fs, dblk), 0);
    WU_OK(lanyfs_writer_rmdir(w, "/D/z", &wu_e_)); /* thawed */
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_wrcnt(fs, dblk), 1);
    WU_EQ(wu_entry(fs, dblk).subtree, 0);
    wu_log_free(&log);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* rename over an empty directory: the rmdir freezes the new parent. */
START_TEST(test_912_rename_over_dir_freezes)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    mkdir_(w, "/p");
    mkdir_(w, "/q");
    mkdir_(w, "/p/s");
    mkdir_(w, "/q/t");
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t p = wu_lookup(fs, "/p"), q = wu_lookup(fs, "/q");
    uint64_t s = wu_lookup(fs, "/p/s"), t = wu_lookup(fs, "/q/t");
    uint8_t q_before[BS], b[BS];
    wu_block(fs, q, q_before);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_rename(w, "/p/s", "/q/t", &wu_e_));
    wu_umount(w);
    fs = reopen(fs, &im);
    wu_block(fs, q, b);
    ck_assert(memcmp(b, q_before, BS) == 0);
    WU_EQ(wu_entry(fs, q).subtree, t);
    WU_EQ(wu_entry(fs, p).subtree, 0);
    ck_assert_str_eq((const char *)wu_entry(fs, s).name, "t");
    struct wu_map m;
    wu_classify(fs, &m);
    WU_EQ(m.cls[t], WU_FREE);
    WU_EQ(m.cls[s], WU_NONE); /* the moved directory is on no tree on disk */
    wu_map_free(&m);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- 9.13 ------------------------------------------------------------------ */

/* Rewriting uncached pages in a new mount maps new blocks; a cached page does not. */
START_TEST(test_913_rewrite_maps_more)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    uint8_t *data = pattern(2, BS);
    put(w, "/f", data, 2 * BS);
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t f = wu_lookup(fs, "/f"), ext = wu_entry(fs, f).subtree;
    uint64_t d0 = wu_ext_slot(fs, ext, 0), d1 = wu_ext_slot(fs, ext, 1);
    WU_EQ(wu_ext_slot(fs, ext, 2), 0);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_pwrite(w, "/f", 0, "0123456789", 10, &wu_e_));
    WU_OK(lanyfs_writer_pwrite(w, "/f", 100, "ab", 2, &wu_e_));
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_ext_slot(fs, ext, 0), d0);
    WU_EQ(wu_ext_slot(fs, ext, 1), d1);
    ck_assert(wu_ext_slot(fs, ext, 2) != 0);
    ck_assert(wu_ext_slot(fs, ext, 3) != 0);
    WU_EQ(wu_ext_slot(fs, ext, 4), 0); /* the second write hit a cached page */
    WU_EQ(wu_entry(fs, f).size, 2 * BS);
    /* 9.14: the rest of the uncached page was zeroed on disk. */
    uint8_t b[BS], want[BS];
    memset(want, 0, BS);
    memcpy(want, "0123456789", 10);
    memcpy(want + 100, "ab", 2);
    wu_block(fs, d0, b);
    ck_assert(memcmp(b, want, BS) == 0);
    memset(want, 0, BS);
    wu_block(fs, d1, b);
    ck_assert(memcmp(b, want, BS) == 0);
    free(data);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- 9.14 ------------------------------------------------------------------ */

/* A partial write to a page cached in this mount keeps the page's other bytes. */
START_TEST(test_914_cached_page_keeps_bytes)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    uint8_t a[4322], want[4322];
    memset(a, 'A', sizeof(a));
    put(w, "/f", a, sizeof(a));
    uint8_t bb[100];
    memset(bb, 'B', sizeof(bb));
    WU_OK(lanyfs_writer_pwrite(w, "/f", 706, bb, sizeof(bb), &wu_e_));
    wu_umount(w);
    fs = reopen(fs, &im);
    memcpy(want, a, sizeof(a));
    memcpy(want + 706, bb, sizeof(bb));
    uint64_t size;
    uint8_t *back = wu_read_file(fs, wu_lookup(fs, "/f"), &size);
    WU_EQ(size, sizeof(a));
    ck_assert(memcmp(back, want, sizeof(want)) == 0);
    free(back);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

START_TEST(test_914_new_files_noexec)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    put(w, "/f", "x", 1);
    mkdir_(w, "/d");
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_entry(fs, wu_lookup(fs, "/f")).attr, LANYFS_ATTR_NOEXEC);
    WU_EQ(wu_entry(fs, wu_lookup(fs, "/d")).attr, 0);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/*
 * A delete frees the entry's own block before the tree change lands: with
 * the tail chain full, that block becomes a chain block while its parent
 * still links it.
 */
START_TEST(test_914_entry_becomes_chain_while_linked)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    uint8_t *data = pattern(246, BS);
    put(w, "/A", data, 246 * BS); /* 248 blocks: all of chain 2's */
    put(w, "/B", data, 244 * BS); /* 246 blocks: slots 0..245 of chain 250 */
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t A = wu_lookup(fs, "/A"), B = wu_lookup(fs, "/B");
    WU_EQ(wu_entry(fs, 1).subtree, A);
    WU_EQ(wu_entry(fs, A).left, B);
    uint16_t c250 = wu_wrcnt(fs, 250);
    struct wu_log log;
    wu_log_start(fs, &log);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_unlink(w, "/A", &wu_e_));
    size_t i = SIZE_MAX;
    for (size_t k = 0; k < log.n; k++)
        if (log.blk[k] == A && log.data[k][LANYFS_HDR_TYPE] == LANYFS_TYPE_CHAIN)
            i = k;
    ck_assert_msg(i != SIZE_MAX, "the entry block did not become a chain block");
    WU_EQ(wu_log_count(&log, 1), 0); /* the root still names it on disk */
    WU_EQ(wu_entry(fs, 1).subtree, A);
    wu_umount(w);
    wu_log_stop(fs);
    fs = reopen(fs, &im);
    WU_EQ(wu_entry(fs, 1).subtree, B);
    WU_EQ(wu_super(fs).freetail, A);
    WU_EQ(wu_wrcnt(fs, A), 0);
    WU_EQ(wu_wrcnt(fs, 250), c250 + 246 + 1); /* the pushes, then the set-next */
    uint8_t b[BS];
    wu_block(fs, 250, b);
    struct lanyfs_chain_hdr h;
    lanyfs_chain_decode(&h, b);
    WU_EQ(h.next, A);
    free(data);
    wu_log_free(&log);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* Point /p's tree at a block that is no entry: lookups see nothing there. */
static void spoil_dir(struct lanyfs_fs *fs, uint64_t dir, uint64_t to)
{
    uint8_t b[BS];
    wu_block(fs, dir, b);
    lanyfs_put64(b + LANYFS_EN_SUBTREE, to);
    WU_OK(lanyfs_fs_write_block(fs, dir, b, &wu_e_));
}

/* create ignores a failed insert (the block is orphaned); mkdir frees its block. */
START_TEST(test_914_create_ignores_failed_insert)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    mkdir_(w, "/p");
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t p = wu_lookup(fs, "/p");
    spoil_dir(fs, p, 2); /* chain block 2 */
    fs = reopen(fs, &im);
    uint8_t p_before[BS], b[BS];
    wu_block(fs, p, p_before);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_put(w, "/p/new", "ab", 2, NULL, &wu_e_));
    /* The dentry cache still names it: a second put opens the same file. */
    WU_OK(lanyfs_writer_put(w, "/p/new", "abc", 3, NULL, &wu_e_));
    struct lanyfs_error err;
    op(LANYFS_E_INVAL, lanyfs_writer_mkdir(w, "/p/dd", &err), "mkdir");
    wu_umount(w);
    fs = reopen(fs, &im);
    wu_block(fs, p, b);
    ck_assert(memcmp(b, p_before, BS) == 0);
    struct wu_map m;
    wu_classify(fs, &m);
    uint64_t nb = 0, db = 0, news = 0;
    for (uint64_t k = 3; k < m.blocks; k++) {
        struct lanyfs_entry e;
        if (m.cls[k] != WU_NONE && m.cls[k] != WU_FREE)
            continue;
        wu_block(fs, k, b);
        lanyfs_entry_decode(&e, b);
        if (e.type == LANYFS_TYPE_FILE && strcmp((const char *)e.name, "new") == 0) {
            nb = k;
            news++;
        }
        if (e.type == LANYFS_TYPE_DIR && strcmp((const char *)e.name, "dd") == 0)
            db = k;
    }
    ck_assert(nb != 0 && db != 0);
    WU_EQ(news, 1);
    WU_EQ(m.cls[nb], WU_NONE); /* written back, on no tree */
    WU_EQ(wu_wrcnt(fs, nb), 1);
    WU_EQ(wu_entry(fs, nb).size, 3);
    WU_EQ(m.cls[db], WU_FREE); /* mkdir gave its block back */
    WU_EQ(wu_wrcnt(fs, db), 0);
    wu_map_free(&m);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- 9.15 ------------------------------------------------------------------ */

static struct lanyfs_ts drifted(struct lanyfs_ts t, int16_t now_offset)
{
    time_t s;
    ck_assert(lanyfs_ts_to_time(&t, &s));
    struct lanyfs_ts out;
    lanyfs_ts_from_time(&out, s + (time_t)(uint16_t)t.offset * 60, t.nsec, now_offset);
    return out;
}

static void ts_eq(const struct lanyfs_ts *a, const struct lanyfs_ts *b)
{
    ck_assert_msg(a->year == b->year && a->month == b->month && a->day == b->day &&
                      a->hour == b->hour && a->minute == b->minute && a->second == b->second &&
                      a->nsec == b->nsec && a->offset == b->offset,
                  "%04u-%02u-%02uT%02u:%02u:%02u%+d != %04u-%02u-%02uT%02u:%02u:%02u%+d",
                  a->year, a->month, a->day, a->hour, a->minute, a->second, a->offset, b->year,
                  b->month, b->day, b->hour, b->minute, b->second, b->offset);
}

/*
 * A node rewritten only for a link change stores its decoded time: a
 * negative offset lands about 45 days ahead; a new directory drifts by the
 * writer's own offset at its first writeback.
 */
START_TEST(test_915_time_drift)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    struct lanyfs_ts west = wu_time(-60), east = wu_time(120);
    lanyfs_writer_set_time(w, &west);
    mkdir_(w, "/a");
    mkdir_(w, "/b"); /* left of a */
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t a = wu_lookup(fs, "/a"), bb = wu_lookup(fs, "/b");
    struct lanyfs_entry a0 = wu_entry(fs, a), b0 = wu_entry(fs, bb);
    WU_EQ(b0.modified.offset, -60);
    w = wu_mount(fs, DRV);
    lanyfs_writer_set_time(w, &east);
    mkdir_(w, "/c"); /* left of b: b is rewritten for the link */
    wu_umount(w);
    fs = reopen(fs, &im);
    struct lanyfs_entry a1 = wu_entry(fs, a), b1 = wu_entry(fs, bb);
    struct lanyfs_entry c = wu_entry(fs, wu_lookup(fs, "/c"));
    WU_EQ(b1.left, wu_lookup(fs, "/c"));
    struct lanyfs_ts want = drifted(b0.modified, 120);
    ts_eq(&b1.modified, &want);
    time_t t0, t1;
    ck_assert(lanyfs_ts_to_time(&b0.modified, &t0) && lanyfs_ts_to_time(&b1.modified, &t1));
    WU_EQ(t1 - t0, 65476 * 60); /* about 45.5 days */
    ts_eq(&a1.modified, &a0.modified);
    ts_eq(&c.created, &east);
    want = drifted(east, 120);
    ts_eq(&c.modified, &want);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- section 8 ------------------------------------------------------------- */

/* Links and sizes land at writeback only; the direct writes come first. */
START_TEST(test_8_links_land_at_writeback)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    uint8_t *data = pattern(3, BS);
    put(w, "/f", data, 3 * BS);
    /* Before the unmount: the root does not link the file, the file has no size or data. */
    WU_EQ(wu_entry(fs, 1).subtree, 0);
    struct lanyfs_entry e = wu_entry(fs, 3);
    WU_EQ(e.type, LANYFS_TYPE_FILE);
    WU_EQ(e.size, 0);
    WU_EQ(e.subtree, 0);
    WU_EQ(e.wrcnt, 0);
    WU_EQ(wu_ext_slot(fs, 4, 2), 7); /* the extender is written directly */
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_entry(fs, 1).subtree, 3);
    e = wu_entry(fs, 3);
    WU_EQ(e.size, 3 * BS);
    WU_EQ(e.subtree, 4);
    WU_EQ(e.wrcnt, 1);
    free(data);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* mkdir and unlink, write by write, with the flush sync points. */
START_TEST(test_8_write_order)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct wu_log log;
    wu_log_start(fs, &log);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    lanyfs_writer_set_sync_hook(w, wu_log_sync_hook, &log);
    mkdir_(w, "/a");
    /* pop (chain 2), superblock, the new block */
    WU_EQ(log.n, 3);
    WU_EQ(log.blk[0], 2);
    WU_EQ(log.blk[1], 0);
    WU_EQ(log.blk[2], 3);
    WU_EQ(log.syncs, 3);
    wu_umount(w);
    /* writeback: the root (dirtied by the insert), then the new directory; superblock */
    WU_EQ(log.n, 6);
    WU_EQ(log.blk[3], 1);
    WU_EQ(log.blk[4], 3);
    WU_EQ(log.blk[5], 0);
    WU_EQ(log.syncs, 7);
    fs = reopen(fs, &im);
    w = wu_mount(fs, DRV);
    put(w, "/f", "hello", 5);
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t f = wu_lookup(fs, "/f"), ext = wu_entry(fs, f).subtree;
    uint64_t d = wu_ext_slot(fs, ext, 0);
    wu_log_free(&log);
    wu_log_start(fs, &log);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_unlink(w, "/f", &wu_e_));
    /* push of the data block, the extender's truncate write, push of the entry */
    WU_EQ(log.n, 3);
    WU_EQ(log.blk[0], 2);
    WU_EQ(log.blk[1], ext);
    WU_EQ(log.blk[2], 2);
    ck_assert(d != 0);
    wu_umount(w);
    wu_log_stop(fs);
    fs = reopen(fs, &im);
    WU_EQ(wu_chain_slot(fs, 2, 0), d);
    WU_EQ(wu_chain_slot(fs, 2, 1), f);
    wu_log_free(&log);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- section 10 ------------------------------------------------------------ */

/* The superblock: +1 per allocation and at unmount (driver); also per free (correct). */
START_TEST(test_10_super_counter)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    uint16_t w0 = wu_super(fs).wrcnt;
    WU_EQ(w0, 2); /* the formatter writes it twice */
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    mkdir_(w, "/a");
    mkdir_(w, "/b");
    put(w, "/c", "x", 1); /* entry, extender, data */
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_super(fs).wrcnt, w0 + 5 + 1);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_unlink(w, "/c", &wu_e_)); /* pushes only: no rewrite */
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_super(fs).wrcnt, w0 + 7);
    w = wu_mount(fs, COR);
    WU_OK(lanyfs_writer_rmdir(w, "/b", &wu_e_)); /* counted and rewritten */
    mkdir_(w, "/e");
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_super(fs).wrcnt, w0 + 10);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* A chain block: +1 per pop, push and set-next (formatter blocks start at 1). */
START_TEST(test_10_chain_counter)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    WU_EQ(wu_wrcnt(fs, 2), 1);
    struct lanyfs_writer *w = wu_mount(fs, DRV);
    mkdir_(w, "/a");
    mkdir_(w, "/b");
    mkdir_(w, "/c");
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_wrcnt(fs, 2), 4);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_rmdir(w, "/a", &wu_e_));
    WU_OK(lanyfs_writer_rmdir(w, "/b", &wu_e_));
    mkdir_(w, "/d");
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_wrcnt(fs, 2), 7);
    WU_EQ(wu_wrcnt(fs, 250), 1);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/*
 * An extender: +1 at every truncate that visits it, even one that grows
 * the file; the driver's truncate passes the new size in blocks to the
 * first child, so growing a level-1 file frees that child's tail.
 */
START_TEST(test_10_extender_counter)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    uint8_t *data = pattern(300, BS);
    put(w, "/f", data, 300 * BS);
    wu_umount(w);
    fs = reopen(fs, &im);
    uint64_t f = wu_lookup(fs, "/f"), l1 = wu_entry(fs, f).subtree;
    uint64_t l0a = wu_ext_slot(fs, l1, 0), l0b = wu_ext_slot(fs, l1, 1);
    WU_EQ(wu_wrcnt(fs, l1), 0);
    WU_EQ(wu_wrcnt(fs, l0a), 0);
    uint64_t d47 = wu_ext_slot(fs, l0a, 47), d48 = wu_ext_slot(fs, l0a, 48);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_truncate(w, "/f", 301 * BS, &wu_e_));
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_wrcnt(fs, l1), 1);
    WU_EQ(wu_wrcnt(fs, l0a), 1);
    WU_EQ(wu_wrcnt(fs, l0b), 1);
    WU_EQ(wu_ext_slot(fs, l0a, 47), d47);
    WU_EQ(wu_ext_slot(fs, l0a, 48), 0); /* 301 % 253 = 48: freed from there */
    ck_assert(ext_empty(fs, l0b));
    WU_EQ(wu_entry(fs, f).size, 301 * BS);
    struct wu_map m;
    wu_classify(fs, &m);
    WU_EQ(m.cls[d48], WU_FREE);
    wu_map_free(&m);
    w = wu_mount(fs, DRV);
    WU_OK(lanyfs_writer_unlink(w, "/f", &wu_e_));
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_wrcnt(fs, l1), 2);
    WU_EQ(wu_wrcnt(fs, l0a), 2);
    WU_EQ(wu_wrcnt(fs, l0b), 2);
    free(data);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* An entry: +1 per writeback, whatever changed. */
START_TEST(test_10_entry_counter)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    for (int mode = 0; mode < 2; mode++) {
        struct lanyfs_writer *w = wu_mount(fs, mode ? COR : DRV);
        const char *p = mode ? "/c" : "/d";
        put(w, p, "x", 1);
        wu_umount(w);
        for (int i = 0; i < 3; i++) {
            w = wu_mount(fs, mode ? COR : DRV);
            WU_OK(lanyfs_writer_pwrite(w, p, 0, "y", 1, &wu_e_));
            WU_OK(lanyfs_writer_sync(w, &wu_e_));
            WU_OK(lanyfs_writer_sync(w, &wu_e_)); /* nothing dirty: no writeback */
            wu_umount(w);
        }
        fs = reopen(fs, &im);
        WU_EQ(wu_wrcnt(fs, wu_lookup(fs, p)), 4);
    }
    /* The root: the formatter's 1, then the first put's insert; the second links below d. */
    WU_EQ(wu_wrcnt(fs, 1), 1 + 1);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

/* ---- hostile images --------------------------------------------------------- */

static const char *const hnames[] = {"/a", "/b", "/c", "/d/x", "/d/y", "/e", "/d", "/big"};

/* Random operations on one mount; every result is allowed, nothing may crash or hang. */
static void hostile_ops(struct lanyfs_writer *w, struct wu_rng *r, const uint8_t *data,
                        uint64_t max)
{
    struct lanyfs_error err;
    for (int k = 0; k < 40; k++) {
        const char *p = hnames[wu_below(r, 8)], *q = hnames[wu_below(r, 8)];
        uint64_t len = wu_below(r, max), off = wu_below(r, max);
        switch (wu_below(r, 8)) {
        case 0: lanyfs_writer_mkdir(w, p, &err); break;
        case 1: lanyfs_writer_put(w, p, data, len, NULL, &err); break;
        case 2: lanyfs_writer_pwrite(w, p, off, data, len, &err); break;
        case 3: lanyfs_writer_truncate(w, p, len, &err); break;
        case 4: lanyfs_writer_unlink(w, p, &err); break;
        case 5: lanyfs_writer_rmdir(w, p, &err); break;
        case 6: lanyfs_writer_rename(w, p, q, &err); break;
        default: lanyfs_writer_sync(w, &err); break;
        }
    }
}

/*
 * Images with random damage (links, pointers, slots, levels, types), then
 * random operations in both modes: any result is allowed, but no crash,
 * no memory error and no endless loop (run under the sanitizers in CI).
 */
START_TEST(test_hostile_images)
{
    static const unsigned geo[][3] = {{9, 2, 300}, {9, 8, 200}, {10, 4, 400}, {12, 8, 600}};
    const unsigned *gc = geo[_i % 4];
    struct wu_rng r = {0x40571e00u + (uint64_t)_i};
    uint32_t bs = 1u << gc[0];
    uint64_t max = (uint64_t)((bs - 5) / gc[1] + 3) * bs;
    uint8_t *data = pattern((size_t)(max / bs + 1), bs);
    struct wu_img im;
    wu_img_make(&im, gc[0], gc[1], gc[2], _i % 3 == 0 && gc[1] != 8, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    struct lanyfs_writer *w = wu_mount(fs, COR);
    mkdir_(w, "/d");
    put(w, "/a", data, 3 * bs);
    put(w, "/d/x", data, bs + 7);
    put(w, "/big", data, max - bs); /* a level-1 tree */
    mkdir_(w, "/e");
    put(w, "/c", data, 10);
    wu_umount(w);
    lanyfs_fs_close(fs);
    /* Damage: random 8-byte values at the pointer offsets, random bytes elsewhere. */
    int fd = open(im.path, O_RDWR);
    ck_assert(fd >= 0);
    int hits = 1 + (int)wu_below(&r, 8);
    for (int k = 0; k < hits; k++) {
        uint64_t blk = 1 + wu_below(&r, gc[2] - 1);
        static const unsigned offs[] = {0, 4, 5, 8, 16, 24, 32, 16 + 8, 5 + 8};
        unsigned off = wu_below(&r, 3) ? offs[wu_below(&r, 9)] : (unsigned)wu_below(&r, bs - 8);
        uint64_t v = wu_below(&r, 2) ? wu_below(&r, gc[2] + 4) : wu_rand(&r);
        uint8_t b[8];
        for (int j = 0; j < 8; j++)
            b[j] = (uint8_t)(v >> (8 * j));
        ck_assert(pwrite(fd, b, 8, (off_t)((blk << gc[0]) + off)) == 8);
    }
    close(fd);
    for (int mode = 0; mode < 2; mode++) {
        struct lanyfs_error err;
        if (lanyfs_fs_open(im.path, LANYFS_OPEN_RDWR, &fs, &err) != LANYFS_OK)
            break;
        if (lanyfs_writer_mount(fs, mode ? COR : DRV, &w, &err) == LANYFS_OK) {
            hostile_ops(w, &r, data, max);
            lanyfs_writer_unmount(w, &err);
        }
        lanyfs_fs_close(fs);
    }
    free(data);
    wu_img_rm(&im);
}
END_TEST

/* The counters in correct mode: pushes go to the real tail; a kept extender counts its truncate. */
START_TEST(test_10_counters_correct_mode)
{
    struct wu_img im;
    wu_img_make(&im, BITS, ALEN, 600, false, 0);
    struct lanyfs_fs *fs = wu_open(&im);
    uint16_t s0 = wu_super(fs).wrcnt;
    struct lanyfs_writer *w = wu_mount(fs, COR);
    mkdir_(w, "/a");
    mkdir_(w, "/b");
    mkdir_(w, "/c");
    WU_OK(lanyfs_writer_rmdir(w, "/a", &wu_e_));
    WU_OK(lanyfs_writer_rmdir(w, "/b", &wu_e_));
    uint8_t *data = pattern(3, BS);
    put(w, "/f", data, 3 * BS);
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_wrcnt(fs, 2), 1 + 3 + 5);       /* pops: 3 mkdir, entry, extender, 3 data */
    WU_EQ(wu_wrcnt(fs, 498), 1 + 2);         /* pushes into the last chain block */
    WU_EQ(wu_super(fs).wrcnt, s0 + 3 + 2 + 5 + 1);
    WU_EQ(wu_super(fs).freetail, 498);
    uint64_t f = wu_lookup(fs, "/f"), ext = wu_entry(fs, f).subtree;
    WU_EQ(wu_wrcnt(fs, ext), 0);
    w = wu_mount(fs, COR);
    WU_OK(lanyfs_writer_truncate(w, "/f", BS + 1, &wu_e_));
    wu_umount(w);
    fs = reopen(fs, &im);
    WU_EQ(wu_wrcnt(fs, ext), 1);
    WU_EQ(wu_ext_slot(fs, ext, 2), 0);
    WU_EQ(wu_wrcnt(fs, f), 2);
    struct wu_map m;
    wu_classify(fs, &m);
    WU_EQ(m.count[WU_NONE], 0);
    WU_EQ(m.count[WU_DATA], 2);
    wu_map_free(&m);
    free(data);
    lanyfs_fs_close(fs);
    wu_img_rm(&im);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("writer-driver");
    const TTest *tests[] = {
        test_8_mount_refuses_bad_type,
        test_91_last_slot_leaked,
        test_92_push_uncounted,
        test_93_tail_reset_at_mount,
        test_93_full_head_cuts_list,
        test_94_extender_never_freed,
        test_95_freed_entry_keeps_contents,
        test_96_counter_restarts,
        test_97_top_level_without_child,
        test_97_growth_loop_fills_device,
        test_98_hole_maps_to_block0,
        test_98_hole_above_level0,
        test_98_squaring_helper,
        test_98_block0_restored_at_512,
        test_98_block0_reread_above_512,
        test_99_delete_fails_after_truncate,
        test_99_rename_source_in_two_trees,
        test_99_rename_target_delete_fails,
        test_912_parent_frozen,
        test_912_thaw_at_next_rmdir,
        test_912_new_dir_second_rmdir,
        test_912_rename_over_dir_freezes,
        test_913_rewrite_maps_more,
        test_914_new_files_noexec,
        test_914_cached_page_keeps_bytes,
        test_914_entry_becomes_chain_while_linked,
        test_914_create_ignores_failed_insert,
        test_915_time_drift,
        test_8_links_land_at_writeback,
        test_8_write_order,
        test_10_super_counter,
        test_10_chain_counter,
        test_10_extender_counter,
        test_10_entry_counter,
        test_10_counters_correct_mode,
    };
    TCase *tc = tcase_create("spec");
    tcase_set_timeout(tc, 60);
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
        tcase_add_test(tc, tests[i]);
    suite_add_tcase(s, tc);
    TCase *th = tcase_create("hostile");
    tcase_set_timeout(th, 120);
    tcase_add_loop_test(th, test_hostile_images, 0, HOSTILE_RUNS);
    suite_add_tcase(s, th);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
