/*
 * test_core_bugs.c -- defects found in the core library, one test each.
 *
 * Each test was written failing, before its fix, and names the defect and
 * the behaviour the core's own header promises; once fixed it stays here as
 * a regression test (the status is noted at each).  They are kept apart from
 * the other unit programs (meson test 'core-bugs', also in the suite of
 * that name, so `meson test --suite unit --no-suite core-bugs` skips them)
 * so that a red run says at a glance which failures are known.  When a fix lands its test passes
 * and stays as a regression test.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

#define WALK_LIMIT 200000

static int count_extenders(void *ctx, uint64_t blk, unsigned level)
{
    (void)blk;
    (void)level;
    return ++*(uint64_t *)ctx >= WALK_LIMIT;
}

/*
 * DEFECT file-walk-shared-extenders: lanyfs_file_walk follows every slot of
 * every extender, so an extender tree whose slots all point at the same
 * child (a DAG; no legitimate LanyFS tree shares a block) is walked
 * extmax^levels times.  Eleven blocks of 512 bytes and a file size of
 * 2^64 - 1 make a walk of 63^10 extenders: every caller of the walk hangs
 * on a 6 KiB crafted image.  The walk must notice an extender reached
 * twice and report it (LANYFS_E_CORRUPT naming it), so its work is bounded
 * by the device.  Suggested fix: a lanyfs_blockset of visited extenders in
 * lanyfs_file_walk; a slot naming a visited one is CORRUPT and a hole run.
 * Status: fixed by "core: bound the extender walk, ...".
 */
START_TEST(test_walk_shared_extenders_bounded)
{
    struct fx *fx = fx_new(9, 8, 64);
    uint64_t f = fx_entry_new(fx, LANYFS_TYPE_FILE, "dag", 3);
    fx_link(fx, fx_root(fx), f);
    uint64_t data = fx_alloc(fx);
    uint64_t below = 0;
    for (unsigned level = 0; level <= 10; level++) {
        uint64_t ext = fx_ext_new(fx, level);
        for (uint32_t i = 0; i < 63; i++)
            fx_ext_set_slot(fx, ext, i, level == 0 ? data : below);
        below = ext;
    }
    fx_set_subtree(fx, f, below);
    fx_set_size(fx, f, UINT64_MAX);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_entry e;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_fs_read_entry(fs, f, &e, &err), LANYFS_OK);
    uint64_t calls = 0;
    enum lanyfs_err rc = lanyfs_file_walk(fs, &e, NULL, count_extenders, &calls, &err);
    ck_assert_msg(calls < WALK_LIMIT,
                  "the walk visited %" PRIu64 "+ extenders of an 11-extender tree "
                  "(stopped by the test; unbounded otherwise)",
                  calls);
    ck_assert_int_eq(rc, LANYFS_E_CORRUPT);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

/*
 * DEFECT lookup-link-max-reported-as-cycle: lanyfs_blockset uses
 * UINT64_MAX as its empty-slot marker, and lanyfs_blockset_add(UINT64_MAX)
 * returns 0 ("already present") although lanyfs_blockset_has(UINT64_MAX)
 * stays false.  lanyfs_dir_lookup adds each node before reading it, so a
 * tree link of 0xffffffffffffffff (an erased flash page reads as all ones)
 * is reported as LANYFS_E_CYCLE, "the search reaches block
 * 18446744073709551615 twice", instead of a link beyond the device.
 * Suggested fix: in lanyfs_dir_lookup check cur against the device size
 * before the visited set (LANYFS_E_RANGE or CORRUPT naming the link, as
 * lanyfs_dir_list's BADPTR does); and make the set either store UINT64_MAX
 * (a separate flag) or return -1 for it, never a false "present".
 * Status: fixed by "core: bound the extender walk, ...".
 */
START_TEST(test_lookup_link_all_ones)
{
    struct fx *fx = fx_new(9, 4, 64);
    uint64_t m = fx_mkdir(fx, fx_root(fx), "m");
    fx_set_left(fx, m, UINT64_MAX);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_error err;
    enum lanyfs_err rc = lanyfs_dir_lookup(fs, fx_root(fx), "z", 1, NULL, NULL, &err);
    ck_assert_msg(rc != LANYFS_E_CYCLE, "an all-ones link is reported as a cycle: %s",
                  err.msg);
    ck_assert(rc == LANYFS_E_RANGE || rc == LANYFS_E_CORRUPT);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_blockset_all_ones_consistent)
{
    struct lanyfs_blockset *s = lanyfs_blockset_new();
    int rc = lanyfs_blockset_add(s, UINT64_MAX);
    /* "0 when present" must mean present. */
    ck_assert_msg(rc < 0 || lanyfs_blockset_has(s, UINT64_MAX),
                  "add(UINT64_MAX) returned %d but has() is false", rc);
    lanyfs_blockset_free(s);
}
END_TEST

/*
 * DEFECT map-top-extender-unnamed: when a file's data pointer lies beyond
 * the device, lanyfs_file_map fails with err.block = LANYFS_NO_BLOCK and
 * the message "block 18446744073709551615 maps extender N, beyond the
 * device end": read_ext prints its parent, which for the top extender is
 * LANYFS_NO_BLOCK.  The error should name the bad block (err.block = N, as
 * for every other CORRUPT of the map) and not print the marker as a block.
 * Suggested fix: in read_ext, when parent is LANYFS_NO_BLOCK, say "the
 * file's data pointer names extender N, beyond the device end" with block N.
 * Status: fixed by "core: bound the extender walk, ...".
 */
START_TEST(test_map_top_beyond_device_named)
{
    struct fx *fx = fx_new(9, 8, 64);
    uint64_t f = fx_file(fx, fx_root(fx), "f", "abc", 3);
    fx_set_subtree(fx, f, 1000);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_entry e;
    struct lanyfs_error err;
    lanyfs_fs_read_entry(fs, f, &e, &err);
    uint64_t dblk;
    ck_assert_int_eq(lanyfs_file_map(fs, &e, 0, &dblk, &err), LANYFS_E_CORRUPT);
    ck_assert_msg(!u_contains(err.msg, "18446744073709551615"),
                  "the no-block marker is printed as a block: %s", err.msg);
    ck_assert_uint_eq(err.block, 1000);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

/*
 * DEFECT fs-open-out-unset: lanyfs_fs_open leaves *out untouched when the
 * image itself cannot be opened (it returns before lanyfs_fs_open_image,
 * which clears it), while lanyfs_image_open and lanyfs_fs_open_image set
 * *out = NULL on every failure.  A caller that closes the handle on error
 * frees garbage.  Suggested fix: `*out = NULL;` first in lanyfs_fs_open.
 * Status: fixed by "core: lanyfs_fs_open leaves *out NULL when the image ...".
 */
START_TEST(test_fs_open_clears_out)
{
    struct lanyfs_fs *fs = (struct lanyfs_fs *)&fs;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_fs_open("/nonexistent/lanyfs.img", 0, &fs, &err), LANYFS_E_IO);
    ck_assert_ptr_null(fs);
}
END_TEST

static Suite *bugs_suite(void)
{
    Suite *s = suite_create("core-bugs");
    TCase *tc = tcase_create("known");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_walk_shared_extenders_bounded);
    tcase_add_test(tc, test_lookup_link_all_ones);
    tcase_add_test(tc, test_blockset_all_ones_consistent);
    tcase_add_test(tc, test_map_top_beyond_device_named);
    tcase_add_test(tc, test_fs_open_clears_out);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(bugs_suite)
