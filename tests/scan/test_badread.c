/*
 * test_badread.c -- the scan on a stick with sectors that cannot be read.
 *
 * Linked with badsectors.c and -Wl,--wrap=pread64: every read that covers
 * one of the sectors a test names fails with EIO, as a failing stick's
 * does (a 64 KiB window read fails whole; the block reads around the
 * sector succeed).  The sweep
 * skips blocks the walks read; these tests hold it to reading, and
 * reporting, every block no read has covered:
 *  - a bad sector in a live file's data block, or in the free space:
 *    BLOCK_UNREADABLE at that block, its cell unreadable, and every other
 *    block classed as on a healthy read;
 *  - a bad sector in block 0 past the superblock's first sector: the scan
 *    opens, reports block 0 unreadable, and finds the tree as it is;
 *  - block 0's first sector bad: one SB_UNREADABLE and no finding about
 *    the zeros in its place, the geometry is inferred from the other
 *    blocks (SB_GEOMETRY_INFERRED) and the files are still found.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "badsectors.h"
#include "fixture.h"
#include "query.h"
#include "scan.h"
#include "unit.h"

struct img {
    char *path;
    uint64_t data; /* a.txt's first data block */
    uint64_t free; /* a block of the free space */
    uint32_t bs;
};

/* 2^bits-byte blocks: a directory, three files, free space after them. */
static struct img make_image(unsigned bits)
{
    struct img m = {.path = u_tmpname()};
    uint8_t data[5 * 4096];
    fx_pattern(data, sizeof(data), 9);
    struct fx *fx = fx_new(bits, 4, 300);
    ck_assert_ptr_nonnull(fx);
    m.bs = fx_blocksize(fx);
    uint64_t docs = fx_mkdir(fx, fx_root(fx), "docs");
    ck_assert(fx_file(fx, docs, "one.txt", data, 10) != 0);
    ck_assert(fx_file(fx, fx_root(fx), "a.txt", data, m.bs) != 0);
    ck_assert(fx_file(fx, fx_root(fx), "b.bin", data, 5 * m.bs - 1) != 0);
    ck_assert_int_eq(fx_save(fx, m.path), 0);
    fx_free(fx);
    return m;
}

/* The one BLOCK_UNREADABLE finding, at blk; no other finding above info. */
static void assert_unreadable_at(const struct scan_result *r, uint64_t blk)
{
    const struct scan_finding *f;
    size_t n = scan_findings(r, &f), hits = 0;
    for (size_t i = 0; i < n; i++) {
        if (f[i].code == SCAN_PR_BLOCK_UNREADABLE) {
            ck_assert_uint_eq(f[i].block, blk);
            hits++;
        }
    }
    ck_assert_uint_eq(hits, 1);
    ck_assert_uint_eq(scan_blocks(r)[blk].cls, SCAN_BLK_UNREADABLE);
}

/* Every block but skip classed as in the healthy scan h. */
static void assert_same_but(const struct scan_result *h, const struct scan_result *r,
                            uint64_t skip)
{
    ck_assert_uint_eq(scan_block_count(h), scan_block_count(r));
    for (uint64_t b = 0; b < scan_block_count(h); b++)
        if (b != skip)
            ck_assert_msg(scan_blocks(h)[b].cls == scan_blocks(r)[b].cls,
                          "block %llu: class %s, healthy %s", (unsigned long long)b,
                          scan_class_name((enum scan_class)scan_blocks(r)[b].cls),
                          scan_class_name((enum scan_class)scan_blocks(h)[b].cls));
}

/* Scan healthy, then with one sector bad: at byte off_in_block of a.txt's
 * first data block (in_data) or of the last free block. */
static void bad_sector(bool in_data, uint32_t off_in_block)
{
    struct img m = make_image(12);
    badsectors_set(NULL, 0);
    struct scan_result *h = scan_path(m.path);
    const struct scan_entry *a = by_path(h, "/a.txt");
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_ge(a->ndata, 1);
    m.data = a->data[0];
    m.free = 0;
    for (uint64_t b = scan_block_count(h); b-- > 1;)
        if (scan_blocks(h)[b].cls == SCAN_BLK_FREE) {
            m.free = b;
            break;
        }
    ck_assert_uint_ne(m.free, 0);
    uint64_t blk = in_data ? m.data : m.free;
    badsectors_set((uint64_t[]){(blk * m.bs + off_in_block) / 512}, 1);
    struct scan_result *r = scan_path(m.path);
    badsectors_set(NULL, 0);
    assert_unreadable_at(r, blk);
    assert_same_but(h, r, blk);
    scan_result_free(r);
    scan_result_free(h);
    unlink(m.path);
    free(m.path);
}

START_TEST(data_block_sector)
{
    bad_sector(true, 2048);
}
END_TEST

START_TEST(free_block_sector)
{
    bad_sector(false, 0);
}
END_TEST

START_TEST(block0_late_sector)
{
    struct img m = make_image(12);
    badsectors_set(NULL, 0);
    struct scan_result *h = scan_path(m.path);
    badsectors_set((uint64_t[]){2}, 1); /* the third sector of the 4 KiB block 0 */
    struct scan_result *r = scan_path(m.path);
    badsectors_set(NULL, 0);
    assert_unreadable_at(r, 0);
    assert_same_but(h, r, 0);
    ck_assert_uint_eq(count_code(r, SCAN_PR_SB_GEOMETRY_INFERRED), 0);
    scan_result_free(r);
    scan_result_free(h);
    unlink(m.path);
    free(m.path);
}
END_TEST

START_TEST(block0_first_sector)
{
    struct img m = make_image(11); /* not the 4 KiB a failed inference assumes */
    badsectors_set((uint64_t[]){0}, 1);
    struct scan_result *r = scan_path(m.path);
    badsectors_set(NULL, 0);
    ck_assert_uint_eq(count_code(r, SCAN_PR_SB_UNREADABLE), 1);
    ck_assert_uint_eq(count_code(r, SCAN_PR_SB_BAD_MAGIC), 0);
    ck_assert_ptr_null(scan_super(r));
    ck_assert_uint_eq(count_code(r, SCAN_PR_SB_GEOMETRY_INFERRED), 1);
    ck_assert_uint_eq(scan_geom(r)->blocksize, 2048);
    ck_assert_ptr_nonnull(by_path(r, "/a.txt"));
    ck_assert_ptr_nonnull(by_path(r, "/docs/one.txt"));
    ck_assert_uint_ge(count_code(r, SCAN_PR_BLOCK_UNREADABLE), 1);
    scan_result_free(r);
    unlink(m.path);
    free(m.path);
}
END_TEST

static Suite *make(void)
{
    Suite *s = suite_create("badread");
    TCase *tc = tcase_create("sweep");
    tcase_add_test(tc, data_block_sector);
    tcase_add_test(tc, free_block_sector);
    tcase_add_test(tc, block0_late_sector);
    tcase_add_test(tc, block0_first_sector);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(make)
