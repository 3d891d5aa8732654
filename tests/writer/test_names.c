/*
 * test_names.c -- the name and path checks of the writer commands
 * (src/cli/writer_cli.c), which the command line cannot reach entirely:
 * a path given on it never holds a name with '/' or NUL, and a host
 * directory never lists one.
 *
 * wcli_name_ok accepts 1..255 bytes of anything but NUL and '/', except
 * "." and ".."; wcli_path_split drops empty components and refuses a
 * component over 255 bytes; refusals report LANYFS_E_NAME, which the
 * command turns into exit status 2.  Also the block counts a tree copy
 * sums before writing (wcli_file_blocks) against the extender layout of
 * SPEC-§7, in both modes.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writer_cli.h"

static const struct cli_command dummy = {"test", "", "", "", NULL};

static void session(struct wcli *s, enum lanyfs_write_mode mode)
{
    struct wcli_opts o = {mode, NULL};
    wcli_init(s, &dummy, "test.img", &o);
}

START_TEST(test_name_ok)
{
    struct wcli s;
    session(&s, LANYFS_WRITE_CORRECT);
    char name[300];
    memset(name, 'a', sizeof(name));
    ck_assert(wcli_name_ok(&s, "w", name, 1));
    ck_assert(wcli_name_ok(&s, "w", name, 255));
    ck_assert(wcli_name_ok(&s, "w", "\xff\x01 odd", 6));
    ck_assert(wcli_name_ok(&s, "w", "...", 3));
    ck_assert_int_eq(s.hard, LANYFS_EXIT_OK);
    ck_assert(!wcli_name_ok(&s, "w", name, 256));
    ck_assert_int_eq(s.hard, LANYFS_EXIT_USAGE);
    ck_assert(!wcli_name_ok(&s, "w", "", 0));
    ck_assert(!wcli_name_ok(&s, "w", "a/b", 3));
    ck_assert(!wcli_name_ok(&s, "w", "/", 1));
    ck_assert(!wcli_name_ok(&s, "w", "a\0b", 3));
    ck_assert(!wcli_name_ok(&s, "w", ".", 1));
    ck_assert(!wcli_name_ok(&s, "w", "..", 2));
    ck_assert_uint_eq(s.rep.items->len, 7);
    for (size_t i = 0; i < s.rep.items->len; i++) {
        const struct out_problem *p = s.rep.items->pdata[i];
        ck_assert_int_eq(p->code, LANYFS_E_NAME);
    }
    ck_assert_int_eq(wcli_finish(&s), LANYFS_EXIT_USAGE);
}
END_TEST

START_TEST(test_path_split)
{
    struct wcli s;
    struct wcli_path p;
    session(&s, LANYFS_WRITE_CORRECT);
    ck_assert(wcli_path_split(&s, "//a///b/c//", &p));
    ck_assert_uint_eq(p.n, 3);
    ck_assert_str_eq(p.names[0], "a");
    ck_assert_str_eq(p.names[2], "c");
    char *j = wcli_path_join(&p, 2);
    ck_assert_str_eq(j, "/a/b");
    g_free(j);
    j = wcli_path_join(&p, 0);
    ck_assert_str_eq(j, "/");
    g_free(j);
    wcli_path_free(&p);
    ck_assert(wcli_path_split(&s, "/", &p));
    ck_assert_uint_eq(p.n, 0);
    wcli_path_free(&p);

    char path[600];
    memset(path, 'x', sizeof(path));
    path[0] = '/';
    path[256] = '/'; /* "/" + 255 bytes + "/" + 343 bytes */
    path[sizeof(path) - 1] = '\0';
    ck_assert(!wcli_path_split(&s, path, &p));
    ck_assert_uint_eq(p.n, 0);
    path[256] = '\0'; /* exactly 255 */
    ck_assert(wcli_path_split(&s, path, &p));
    ck_assert_uint_eq(p.n, 1);
    ck_assert_uint_eq(strlen(p.names[0]), 255);
    wcli_path_free(&p);
    ck_assert_int_eq(wcli_finish(&s), LANYFS_EXIT_USAGE);
}
END_TEST

/* An image of 64 blocks of 512 bytes, formatted, for the block counts. */
static char *make_image(unsigned addrlen)
{
    char *name = g_strdup_printf("%s/test-names-XXXXXX", g_get_tmp_dir());
    int fd = g_mkstemp(name);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 64 * 512), 0);
    close(fd);
    struct lanyfs_image *img;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_image_open(name, LANYFS_IMAGE_RDWR, &img, &err), LANYFS_OK);
    struct lanyfs_format_opts fo = {.blockbits = 9, .addrlen = addrlen};
    ck_assert_int_eq(lanyfs_format(img, &fo, &err), LANYFS_OK);
    lanyfs_image_close(img);
    return name;
}

START_TEST(test_file_blocks)
{
    char *name = make_image(8); /* extmax (512 - 5) / 8 = 63 */
    for (int m = 0; m < 2; m++) {
        struct wcli s;
        session(&s, m ? LANYFS_WRITE_DRIVER2012 : LANYFS_WRITE_CORRECT);
        s.image = name;
        ck_assert(wcli_open(&s));
        ck_assert_uint_eq(wcli_file_blocks(&s, 0), 0);
        ck_assert_uint_eq(wcli_file_blocks(&s, 1), 2);
        ck_assert_uint_eq(wcli_file_blocks(&s, 512), 2);
        ck_assert_uint_eq(wcli_file_blocks(&s, 513), 3);
        ck_assert_uint_eq(wcli_file_blocks(&s, 63 * 512), 64);
        if (m == 0) {
            /* 64 blocks: two level-0 extenders and a level-1 top */
            ck_assert_uint_eq(wcli_file_blocks(&s, 64 * 512), 64 + 3);
            /* 63*63+1 blocks: 64 level-0, 2 level-1, 1 level-2 */
            ck_assert_uint_eq(wcli_file_blocks(&s, (63 * 63 + 1) * 512), 63 * 63 + 1 + 67);
        } else {
            /* past extmax: the full level-0 extender and the level-1 one the
             * driver adds; its growth loop takes the rest (SPEC-§9.7) */
            ck_assert_uint_eq(wcli_file_blocks(&s, 64 * 512), 63 + 2);
        }
        uint64_t n;
        ck_assert(wcli_free_available(&s, &n));
        ck_assert_uint_eq(n, 62);
        ck_assert_int_eq(wcli_finish(&s), LANYFS_EXIT_OK);
    }
    unlink(name);
    g_free(name);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("writer-names");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, test_name_ok);
    tcase_add_test(tc, test_path_split);
    tcase_add_test(tc, test_file_blocks);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
