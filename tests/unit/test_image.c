/*
 * test_image.c -- the image layer and the block access of an opened
 * filesystem: open errors, bounds of pread and pwrite, read-only
 * enforcement, the block cache (every block read back in random order
 * equals the fixture's bytes, however the cache slots collide), writes
 * through the write hook in order, a refusing hook, and cache_drop after a
 * write that bypassed the handle.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

START_TEST(test_image_open_errors)
{
    struct lanyfs_image *img = (void *)1;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_image_open("/nonexistent/lanyfs.img", 0, &img, &err), LANYFS_E_IO);
    ck_assert_ptr_null(img);
    ck_assert_int_eq(err.sys_errno, ENOENT);
    ck_assert(u_contains(err.msg, "/nonexistent/lanyfs.img"));
    ck_assert_int_eq(lanyfs_image_open("/tmp", 0, &img, &err), LANYFS_E_INVAL);
    ck_assert_ptr_null(img);
    struct lanyfs_fs *fs;
    ck_assert_int_eq(lanyfs_fs_open("/nonexistent/x", 0, &fs, &err), LANYFS_E_IO);
    ck_assert_int_eq(err.sys_errno, ENOENT);
}
END_TEST

START_TEST(test_image_bounds)
{
    struct fx *fx = fx_new(9, 4, 16);
    char *path = u_tmpname();
    ck_assert_int_eq(fx_save(fx, path), 0);
    struct lanyfs_image *img;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_image_open(path, 0, &img, &err), LANYFS_OK);
    ck_assert_uint_eq(lanyfs_image_size(img), 16 * 512);
    ck_assert_str_eq(lanyfs_image_path(img), path);
    ck_assert(!lanyfs_image_is_device(img));
    ck_assert(!lanyfs_image_writable(img));
    uint8_t buf[1024];
    ck_assert_int_eq(lanyfs_image_pread(img, 0, buf, 512, &err), LANYFS_OK);
    ck_assert_mem_eq(buf, fx_block(fx, 0), 512);
    ck_assert_int_eq(lanyfs_image_pread(img, 15 * 512, buf, 512, &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_image_pread(img, 15 * 512 + 1, buf, 512, &err), LANYFS_E_TRUNCATED);
    ck_assert(u_contains(err.msg, "8192"));
    ck_assert_int_eq(lanyfs_image_pread(img, 1ull << 40, buf, 1, &err), LANYFS_E_TRUNCATED);
    ck_assert_int_eq(lanyfs_image_pread(img, UINT64_MAX - 10, buf, 100, &err), LANYFS_E_RANGE);
    ck_assert_int_eq(lanyfs_image_pwrite(img, 0, buf, 1, &err), LANYFS_E_READONLY);
    lanyfs_image_close(img);
    lanyfs_image_close(NULL);

    ck_assert_int_eq(lanyfs_image_open(path, LANYFS_IMAGE_RDWR, &img, &err), LANYFS_OK);
    ck_assert(lanyfs_image_writable(img));
    memset(buf, 0x5A, sizeof(buf));
    ck_assert_int_eq(lanyfs_image_pwrite(img, 16 * 512 + 100, buf, 1000, &err), LANYFS_OK);
    ck_assert_uint_eq(lanyfs_image_size(img), 16 * 512 + 1100);
    uint8_t back[1000];
    ck_assert_int_eq(lanyfs_image_pread(img, 16 * 512 + 100, back, 1000, &err), LANYFS_OK);
    ck_assert_mem_eq(back, buf, 1000);
    ck_assert_int_eq(lanyfs_image_sync(img, &err), LANYFS_OK);
    lanyfs_image_close(img);
    unlink(path);
    free(path);
    fx_free(fx);
}
END_TEST

START_TEST(test_cache_random_reads)
{
    struct fx *fx = fx_new(10, 2, 3000);
    for (uint64_t b = 2; b < 3000; b++) {
        fx_mark_used(fx, b);
        fx_pattern(fx_block(fx, b), 1024, (uint32_t)b);
    }
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct u_rng r = {0xCAC4E};
    uint8_t buf[1024];
    struct lanyfs_error err;
    for (int i = 0; i < 20000; i++) {
        uint64_t b = i < 3000 ? (uint64_t)i : u_below(&r, 3000);
        U_ASSERT(lanyfs_fs_read_block(fs, b, buf, &err) == LANYFS_OK, "block %llu: %s",
                 (unsigned long long)b, err.msg);
        U_MEMEQ(buf, fx_block(fx, b), 1024);
    }
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 3000, buf, &err), LANYFS_E_RANGE);
    ck_assert_uint_eq(err.block, 3000);
    ck_assert_int_eq(lanyfs_fs_read_raw(fs, 3000, buf, &err), LANYFS_E_TRUNCATED);
    ck_assert_uint_eq(err.block, 3000);
    lanyfs_fs_close(fs);
    lanyfs_fs_close(NULL);
    fx_free(fx);
}
END_TEST

struct hooklog {
    uint64_t blocks[16];
    uint8_t first_byte[16];
    int n;
    int refuse; /* refuse writes from this call on (1-based), 0 = never */
};

static int hook(void *ctx, uint64_t block, const uint8_t *data)
{
    struct hooklog *h = ctx;
    if (h->n < 16) {
        h->blocks[h->n] = block;
        h->first_byte[h->n] = data[0];
    }
    h->n++;
    return h->refuse != 0 && h->n >= h->refuse;
}

START_TEST(test_writes_and_hook)
{
    struct fx *fx = fx_new(9, 4, 32);
    char *path = u_tmpname();
    ck_assert_int_eq(fx_save(fx, path), 0);
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    uint8_t buf[512], back[512];

    /* Read-only: no block write reaches the image. */
    ck_assert_int_eq(lanyfs_fs_open(path, 0, &fs, &err), LANYFS_OK);
    memset(buf, 0x11, sizeof(buf));
    ck_assert_int_eq(lanyfs_fs_write_block(fs, 20, buf, &err), LANYFS_E_READONLY);
    ck_assert_uint_eq(err.block, 20);
    lanyfs_fs_close(fs);

    ck_assert_int_eq(lanyfs_fs_open(path, LANYFS_OPEN_RDWR, &fs, &err), LANYFS_OK);
    struct hooklog h = {0};
    lanyfs_fs_set_write_hook(fs, hook, &h);
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 20, back, &err), LANYFS_OK); /* cached now */
    memset(buf, 0x22, sizeof(buf));
    ck_assert_int_eq(lanyfs_fs_write_block(fs, 20, buf, &err), LANYFS_OK);
    memset(buf, 0x33, sizeof(buf));
    ck_assert_int_eq(lanyfs_fs_write_block(fs, 21, buf, &err), LANYFS_OK);
    ck_assert_int_eq(h.n, 2);
    ck_assert(h.blocks[0] == 20 && h.first_byte[0] == 0x22);
    ck_assert(h.blocks[1] == 21 && h.first_byte[1] == 0x33);
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 20, back, &err), LANYFS_OK);
    ck_assert_uint_eq(back[0], 0x22);
    /* Beyond the device. */
    ck_assert_int_eq(lanyfs_fs_write_block(fs, 32, buf, &err), LANYFS_E_RANGE);
    /* A refusing hook: the write fails and the block keeps its contents. */
    h.refuse = h.n + 1;
    memset(buf, 0x44, sizeof(buf));
    ck_assert_int_eq(lanyfs_fs_write_block(fs, 20, buf, &err), LANYFS_E_IO);
    ck_assert_uint_eq(err.block, 20);
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 20, back, &err), LANYFS_OK);
    ck_assert_uint_eq(back[0], 0x22);
    lanyfs_fs_set_write_hook(fs, NULL, NULL);

    /* The superblock: written from a struct, the rest of block 0 kept. */
    struct lanyfs_super sb = *lanyfs_fs_super(fs);
    uint8_t raw0[512];
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 0, raw0, &err), LANYFS_OK);
    sb.wrcnt = 77;
    memcpy(sb.label, "relabel", 8);
    ck_assert_int_eq(lanyfs_fs_write_super(fs, &sb, &err), LANYFS_OK);
    ck_assert_uint_eq(lanyfs_fs_super(fs)->wrcnt, 77);
    ck_assert_str_eq((const char *)lanyfs_fs_super(fs)->label, "relabel");
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 0, back, &err), LANYFS_OK);
    ck_assert_mem_eq(back + LANYFS_SB_USED, raw0 + LANYFS_SB_USED, 512 - LANYFS_SB_USED);

    /* A write that bypasses the handle is seen after cache_drop. */
    int fd = open(path, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    memset(buf, 0x55, sizeof(buf));
    ck_assert_int_eq(pwrite(fd, buf, 512, 20 * 512), 512);
    close(fd);
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 20, back, &err), LANYFS_OK);
    ck_assert_uint_eq(back[0], 0x22); /* still cached */
    lanyfs_fs_cache_drop(fs);
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 20, back, &err), LANYFS_OK);
    ck_assert_uint_eq(back[0], 0x55);
    lanyfs_fs_close(fs);

    /* What reached the file. */
    ck_assert_int_eq(lanyfs_fs_open(path, 0, &fs, &err), LANYFS_OK);
    ck_assert_uint_eq(lanyfs_fs_super(fs)->wrcnt, 77);
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 21, back, &err), LANYFS_OK);
    ck_assert_uint_eq(back[511], 0x33);
    lanyfs_fs_close(fs);
    unlink(path);
    free(path);
    fx_free(fx);
}
END_TEST

/* A write past the image's last whole block is refused: an image never grows. */
START_TEST(test_write_past_image_end)
{
    struct fx *fx = fx_new(9, 4, 32);
    char *path = u_tmpname();
    ck_assert_int_eq(fx_save(fx, path), 0);
    ck_assert_int_eq(truncate(path, 20 * 512 + 100), 0); /* cut inside block 20 */
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    uint8_t buf[512];
    ck_assert_int_eq(lanyfs_fs_open(path, LANYFS_OPEN_RDWR | LANYFS_OPEN_FORCE, &fs, &err),
                     LANYFS_OK);
    memset(buf, 0x55, sizeof(buf));
    ck_assert_int_eq(lanyfs_fs_write_block(fs, 19, buf, &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_fs_write_block(fs, 20, buf, &err), LANYFS_E_RANGE);
    ck_assert_uint_eq(err.block, 20);
    ck_assert_int_eq(lanyfs_fs_write_block(fs, 25, buf, &err), LANYFS_E_RANGE);
    lanyfs_fs_close(fs);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 20 * 512 + 100);
    unlink(path);
    free(path);
    fx_free(fx);
}
END_TEST

START_TEST(test_read_entry_types)
{
    struct fx *fx = fx_new(9, 4, 32);
    uint64_t d = fx_mkdir(fx, 1, "d");
    uint64_t f = fx_file(fx, 1, "f", "data", 4);
    uint64_t ext = fx_get_subtree(fx, f);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_entry e;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_fs_read_entry(fs, d, &e, &err), LANYFS_OK);
    ck_assert(lanyfs_entry_is_dir(&e));
    ck_assert_int_eq(lanyfs_fs_read_entry(fs, f, &e, &err), LANYFS_OK);
    ck_assert(lanyfs_entry_is_file(&e));
    ck_assert_uint_eq(e.size, 4);
    ck_assert_int_eq(lanyfs_fs_read_entry(fs, ext, &e, &err), LANYFS_E_BADTYPE);
    ck_assert_uint_eq(err.block, ext);
    ck_assert(u_contains(err.msg, "0x80"));
    ck_assert_int_eq(lanyfs_fs_read_entry(fs, 0, &e, &err), LANYFS_E_BADTYPE);
    ck_assert_int_eq(lanyfs_fs_read_entry(fs, 32, &e, &err), LANYFS_E_RANGE);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

static Suite *image_suite(void)
{
    Suite *s = suite_create("image");
    TCase *tc = tcase_create("image");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_image_open_errors);
    tcase_add_test(tc, test_image_bounds);
    tcase_add_test(tc, test_cache_random_reads);
    tcase_add_test(tc, test_writes_and_hook);
    tcase_add_test(tc, test_write_past_image_end);
    tcase_add_test(tc, test_read_entry_types);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(image_suite)
