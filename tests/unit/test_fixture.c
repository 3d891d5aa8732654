/*
 * test_fixture.c -- the fixture library itself, which other test folders
 * build their images with: the free list it writes (chain type 0x70, the
 * last slot of each chain block empty, every unused block listed exactly
 * once, freeblocks, freehead and freetail exact), the blocks it hands out,
 * the tree order it inserts in, the extender depth it chooses, the bytes it
 * writes to disk, and that the core opens its images without a problem.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

/* Walk the free list in the image bytes (not with the core) and check it all. */
static void check_free_list(struct fx *fx)
{
    const struct lanyfs_geom *g = fx_geom(fx);
    const uint8_t *sb = fx_block(fx, 0);
    uint64_t head = lanyfs_get64(sb + LANYFS_SB_FREEHEAD);
    uint64_t tail = lanyfs_get64(sb + LANYFS_SB_FREETAIL);
    uint64_t nfree = lanyfs_get64(sb + LANYFS_SB_FREEBLOCKS);
    uint64_t blocks = fx_blocks(fx);
    uint8_t *listed = calloc(blocks, 1);
    uint64_t count = 0, last = 0;
    for (uint64_t cur = head; cur != 0;) {
        U_ASSERT(cur < blocks && !listed[cur], "chain block %llu bad or repeated",
                 (unsigned long long)cur);
        U_ASSERT(!fx_is_used(fx, cur), "chain block %llu is in use", (unsigned long long)cur);
        listed[cur] = 1;
        count++;
        const uint8_t *cb = fx_block(fx, cur);
        U_EQ(cb[0], LANYFS_TYPE_CHAIN);
        U_EQ(fx_chain_get_slot(fx, cur, g->chainmax - 1), 0);
        for (uint32_t i = 0; i + 1 < g->chainmax; i++) {
            uint64_t s = fx_chain_get_slot(fx, cur, i);
            if (s == 0)
                continue;
            U_ASSERT(s < blocks && !listed[s] && !fx_is_used(fx, s), "slot %u = %llu", i,
                     (unsigned long long)s);
            listed[s] = 1;
            count++;
        }
        last = cur;
        cur = lanyfs_get64(cb + LANYFS_CH_NEXT);
    }
    U_EQ(tail, last);
    U_EQ(nfree, count);
    U_EQ(count, blocks - fx_used_count(fx));
    for (uint64_t b = 1; b < blocks; b++)
        U_ASSERT(listed[b] || fx_is_used(fx, b), "block %llu neither used nor free",
                 (unsigned long long)b);
    free(listed);
}

START_TEST(test_new_rejects)
{
    ck_assert_ptr_null(fx_new(8, 4, 64));
    ck_assert_ptr_null(fx_new(13, 4, 64));
    ck_assert_ptr_null(fx_new(9, 0, 64));
    ck_assert_ptr_null(fx_new(9, 9, 64));
    ck_assert_ptr_null(fx_new(9, 4, 2));
    ck_assert_ptr_null(fx_new(9, 1, 257));
    ck_assert_ptr_null(fx_new(12, 8, (1u << 18) + 1)); /* over 1 GiB */
    struct fx *fx = fx_new(9, 1, 256);
    ck_assert_ptr_nonnull(fx);
    fx_free(fx);
    fx_free(NULL);
}
END_TEST

START_TEST(test_new_layout)
{
    struct fx *fx = fx_new(10, 3, 100);
    ck_assert_uint_eq(fx_root(fx), 1);
    ck_assert_uint_eq(fx_blocks(fx), 100);
    ck_assert_uint_eq(fx_blocksize(fx), 1024);
    ck_assert_uint_eq(fx_image_size(fx), 102400);
    ck_assert_uint_eq(fx_used_count(fx), 2);
    struct lanyfs_super sb;
    fx_super_get(fx, &sb);
    ck_assert_uint_eq(sb.type, LANYFS_TYPE_SUPER);
    ck_assert_uint_eq(sb.magic, LANYFS_MAGIC);
    ck_assert_uint_eq(sb.major, 1);
    ck_assert_uint_eq(sb.minor, 4);
    ck_assert_uint_eq(sb.blockbits, 10);
    ck_assert_uint_eq(sb.addrlen, 3);
    ck_assert_uint_eq(sb.rootdir, 1);
    ck_assert_uint_eq(sb.blocks, 100);
    struct lanyfs_ts want;
    lanyfs_ts_from_time(&want, FX_TIME_EPOCH, 0, 0);
    ck_assert_mem_eq(&sb.created, &want, sizeof(want));
    ck_assert_mem_eq(&sb.updated, &want, sizeof(want));
    ck_assert(lanyfs_ts_is_unset(&sb.checked));
    struct lanyfs_entry root;
    fx_entry_get(fx, 1, &root);
    ck_assert(lanyfs_entry_is_dir(&root));
    ck_assert_str_eq((const char *)root.name, LANYFS_ROOT_NAME);
    ck_assert_mem_eq(&root.created, &want, sizeof(want));
    ck_assert_mem_eq(&root.modified, &want, sizeof(want));
    ck_assert_uint_eq(root.subtree, 0);
    fx_set_label(fx, "other");
    fx_super_get(fx, &sb);
    ck_assert_str_eq((const char *)sb.label, "other");
    ck_assert_ptr_null(fx_block(fx, 100));
    ck_assert_ptr_nonnull(fx_block(fx, 99));
    fx_free(fx);
}
END_TEST

START_TEST(test_alloc)
{
    struct fx *fx = fx_new(9, 4, 8);
    memset(fx_block(fx, 3), 0xAB, 512);
    fx_mark_used(fx, 4);
    ck_assert_uint_eq(fx_alloc(fx), 2);
    ck_assert_uint_eq(fx_alloc(fx), 3);
    for (int i = 0; i < 512; i++)
        U_EQ(fx_block(fx, 3)[i], 0);
    ck_assert_uint_eq(fx_alloc(fx), 5); /* 4 was taken by hand */
    ck_assert_uint_eq(fx_alloc(fx), 6);
    ck_assert_uint_eq(fx_alloc(fx), 7);
    ck_assert_uint_eq(fx_alloc(fx), 0);
    ck_assert_uint_eq(fx_used_count(fx), 8);
    /* A full device: no free list at all. */
    ck_assert_uint_eq(fx_freelist(fx), 0);
    check_free_list(fx);
    ck_assert_uint_eq(lanyfs_get64(fx_block(fx, 0) + LANYFS_SB_FREEHEAD), 0);
    ck_assert_uint_eq(fx_mkdir(fx, 1, "nospace"), 0);
    fx_free(fx);
}
END_TEST

START_TEST(test_free_list_exact)
{
    U_FOR_GEOMETRIES(bits, al)
    {
        struct lanyfs_geom g;
        lanyfs_geom_init(&g, bits, al, 0, NULL);
        uint64_t maxb = al == 1 ? 256 : 3 * (uint64_t)g.chainmax + 10;
        /* Sizes around the chain capacity: one chain block holds itself plus chainmax-1. */
        const uint64_t sizes[] = {3, 4, 16, g.chainmax + 1, g.chainmax + 2, g.chainmax + 3,
                                  2 * (uint64_t)g.chainmax + 2, maxb};
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            uint64_t blocks = sizes[k] > maxb ? maxb : sizes[k];
            struct fx *fx = fx_new(bits, al, blocks);
            ck_assert_ptr_nonnull(fx);
            if (blocks > 6) {
                uint64_t a = fx_mkdir(fx, 1, "a");
                ck_assert_uint_ne(a, 0);
                ck_assert_uint_ne(fx_file(fx, a, "f", "xyz", 3), 0);
                fx_mark_used(fx, blocks - 1); /* a hole in the free range */
            }
            uint64_t nfree = blocks - fx_used_count(fx);
            uint64_t nchain = fx_freelist(fx);
            uint64_t per = g.chainmax; /* a chain block and its chainmax-1 slots */
            U_EQ(nchain, (nfree + per - 1) / per);
            check_free_list(fx);
            /* Building it again gives the same bytes. */
            uint8_t *copy = malloc(fx_image_size(fx));
            memcpy(copy, fx_image(fx), fx_image_size(fx));
            fx_freelist(fx);
            U_MEMEQ(copy, fx_image(fx), fx_image_size(fx));
            free(copy);
            fx_free(fx);
        }
    }
}
END_TEST

START_TEST(test_tree_order_and_dups)
{
    struct fx *fx = fx_new(9, 4, 64);
    uint64_t m = fx_mkdir(fx, 1, "m");
    uint64_t z = fx_mkdir(fx, 1, "z");
    uint64_t a = fx_mkdir(fx, 1, "a");
    uint64_t p = fx_mkdir(fx, 1, "p");
    ck_assert_uint_eq(fx_get_subtree(fx, 1), m);
    ck_assert_uint_eq(fx_get_left(fx, m), z);  /* greater: LEFT */
    ck_assert_uint_eq(fx_get_right(fx, m), a); /* smaller: right */
    ck_assert_uint_eq(fx_get_right(fx, z), p);
    uint64_t used = fx_used_count(fx);
    ck_assert_uint_eq(fx_mkdir(fx, 1, "p"), 0);
    ck_assert_uint_eq(fx_file(fx, 1, "m", "x", 1), 0);
    ck_assert_uint_eq(fx_used_count(fx), used);
    ck_assert_uint_eq(fx_mkdir(fx, 1, ""), 0);
    char n256[257];
    memset(n256, 'n', 256);
    n256[256] = '\0';
    ck_assert_uint_eq(fx_mkdir(fx, 1, n256), 0);
    ck_assert_uint_ne(fx_mkdir(fx, 1, n256 + 1), 0); /* 255 bytes */
    ck_assert_uint_eq(fx_mkdir(fx, fx_file(fx, 1, "file", "", 0), "under-a-file"), 0);
    /* The next free block is reused after a refused name. */
    ck_assert_uint_eq(fx_mkdir(fx, 1, "q"), fx_used_count(fx) - 1);
    fx_free(fx);
}
END_TEST

START_TEST(test_extender_depth)
{
    struct fx *fx = fx_new(9, 8, 63 * 63 + 200);
    const size_t bs = 512;
    struct {
        size_t blocks;
        unsigned level;
    } cases[] = {{1, 0}, {63, 0}, {64, 1}, {63 * 63, 1}};
    for (size_t i = 0; i < 4; i++) {
        struct fx *f2 = fx_new(9, 8, 63 * 63 + 200);
        size_t len = cases[i].blocks * bs;
        uint8_t *data = malloc(len);
        fx_pattern(data, len, (uint32_t)i);
        uint64_t f = fx_file(f2, 1, "f", data, len);
        ck_assert_uint_ne(f, 0);
        uint64_t top = fx_get_subtree(f2, f);
        ck_assert_uint_eq(fx_ext_level(f2, top), cases[i].level);
        ck_assert_uint_eq(fx_block(f2, top)[0], LANYFS_TYPE_EXT);
        ck_assert_uint_eq(fx_get_size(f2, f), len);
        for (size_t b = 0; b < cases[i].blocks; b++) {
            uint64_t d = fx_file_dblk(f2, f, b, NULL, NULL);
            U_ASSERT(d != 0, "block %zu unmapped", b);
            U_MEMEQ(fx_block(f2, d), data + b * bs, bs);
        }
        ck_assert_uint_eq(fx_file_dblk(f2, f, cases[i].blocks, NULL, NULL), 0);
        free(data);
        fx_free(f2);
    }
    /* A partial last block is zero padded. */
    uint64_t f = fx_file(fx, 1, "p", "abc", 3);
    uint64_t d = fx_file_dblk(fx, f, 0, NULL, NULL);
    ck_assert_mem_eq(fx_block(fx, d), "abc", 3);
    for (size_t i = 3; i < bs; i++)
        U_EQ(fx_block(fx, d)[i], 0);
    fx_free(fx);
}
END_TEST

START_TEST(test_save_bytes)
{
    struct fx *fx = fx_new(11, 2, 40);
    fx_mkdir(fx, 1, "d");
    char *path = u_tmpname();
    ck_assert_int_eq(fx_save(fx, path), 0);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 40 * 2048);
    FILE *f = fopen(path, "rb");
    uint8_t *buf = malloc(40 * 2048);
    ck_assert_uint_eq(fread(buf, 1, 40 * 2048, f), 40 * 2048);
    fclose(f);
    ck_assert_mem_eq(buf, fx_image(fx), 40 * 2048);
    free(buf);
    ck_assert_int_eq(fx_save_truncated(fx, path, 5000), 0);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 5000);
    ck_assert_int_eq(fx_save_truncated(fx, path, 1u << 30), 0);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 40 * 2048);
    ck_assert_int_ne(fx_save(fx, "/nonexistent-dir/x.img"), 0);
    unlink(path);
    free(path);
    fx_free(fx);
}
END_TEST

START_TEST(test_core_opens_clean)
{
    struct fx *fx = fx_new(9, 2, 2000);
    uint64_t a = fx_mkdir(fx, 1, "a");
    for (int i = 0; i < 50; i++) {
        char name[16];
        snprintf(name, sizeof(name), "e%02d", (i * 37) % 50);
        uint8_t data[1500];
        fx_pattern(data, sizeof(data), (uint32_t)i);
        ck_assert_uint_ne(fx_file(fx, a, name, data, (size_t)(i * 29)), 0);
    }
    struct lanyfs_fs *fs = u_open_ok(fx);
    const struct lanyfs_sb_problem *pr;
    ck_assert_uint_eq(lanyfs_fs_problems(fs, &pr), 0);
    ck_assert_uint_eq(lanyfs_fs_super(fs)->freeblocks, 2000 - fx_used_count(fx));
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_dir_list(fs, a, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, 50);
    ck_assert_uint_eq(l.problems, 0);
    lanyfs_dirlist_free(&l);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

static Suite *fixture_suite(void)
{
    Suite *s = suite_create("fixture");
    TCase *tc = tcase_create("fixture");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_new_rejects);
    tcase_add_test(tc, test_new_layout);
    tcase_add_test(tc, test_alloc);
    tcase_add_test(tc, test_free_list_exact);
    tcase_add_test(tc, test_tree_order_and_dups);
    tcase_add_test(tc, test_extender_depth);
    tcase_add_test(tc, test_save_bytes);
    tcase_add_test(tc, test_core_opens_clean);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(fixture_suite)
