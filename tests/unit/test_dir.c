/*
 * test_dir.c -- directory listing, lookup and path resolution on healthy
 * trees built by the fixture in the reversed order of SPEC-§5.
 *
 * Listings must come out sorted bytewise (unsigned, so bytes >= 0x80 sort
 * after ASCII) whatever the insertion order; every name of trees of 1..300
 * random names must be found at its own block and near misses must not;
 * paths resolve with empty components skipped, "." and ".." as plain names,
 * a file in the middle is NOTDIR and a missing component NOTFOUND.
 */
#include <stdio.h>
#include <string.h>

#include "unit.h"

struct name {
    uint8_t b[LANYFS_NAME_FIELD]; /* NUL padded */
    size_t len;                   /* bytes */
    uint64_t blk;                 /* where the fixture put it */
};

static int name_sort(const void *a, const void *b)
{
    const struct name *x = a, *y = b;
    return memcmp(x->b, y->b, LANYFS_NAME_FIELD);
}

/* A random name: bytes 1..255 except '/', mostly short, sometimes 255 long. */
static void rand_name(struct u_rng *r, struct name *n)
{
    memset(n, 0, sizeof(*n));
    uint64_t k = u_below(r, 10);
    n->len = k < 6 ? 1 + u_below(r, 8) : k < 9 ? 1 + u_below(r, 60) : 200 + u_below(r, 56);
    for (size_t i = 0; i < n->len; i++) {
        uint8_t c;
        do
            c = (uint8_t)(u_below(r, 3) ? 'a' + u_below(r, 4) : 1 + u_below(r, 255));
        while (c == '/');
        n->b[i] = c;
    }
}

/* n distinct random names (kept in generation order). */
static struct name *rand_names(struct u_rng *r, size_t n)
{
    struct name *v = calloc(n, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        bool dup;
        do {
            rand_name(r, &v[i]);
            dup = false;
            for (size_t j = 0; j < i && !dup; j++)
                dup = memcmp(v[j].b, v[i].b, LANYFS_NAME_FIELD) == 0;
        } while (dup);
    }
    return v;
}

static uint64_t add_named(struct fx *fx, uint64_t dir, const struct name *n, bool as_dir)
{
    uint64_t b = fx_entry_new(fx, as_dir ? LANYFS_TYPE_DIR : LANYFS_TYPE_FILE, n->b, n->len);
    ck_assert_uint_ne(b, 0);
    ck_assert_int_eq(fx_link(fx, dir, b), 0);
    return b;
}

START_TEST(test_list_sorted_bytewise)
{
    struct u_rng r = {0xD1};
    const size_t n = 400;
    struct fx *fx = fx_new(9, 2, n + 64);
    struct name *v = rand_names(&r, n);
    for (size_t i = 0; i < n; i++)
        v[i].blk = add_named(fx, fx_root(fx), &v[i], i % 2 == 0);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_dir_list(fs, fx_root(fx), &l, &err), LANYFS_OK);
    ck_assert_msg(l.problems == 0, "problems 0x%x: %s", l.problems, l.first.msg);
    ck_assert_uint_eq(l.count, n);
    qsort(v, n, sizeof(*v), name_sort);
    for (size_t i = 0; i < n; i++) {
        U_MEMEQ(l.ents[i].e.name, v[i].b, LANYFS_NAME_FIELD);
        U_EQ(l.ents[i].block, v[i].blk);
        U_EQ(l.ents[i].e.name_len, v[i].len);
        U_EQ(l.ents[i].e.type, (lanyfs_entry_is_dir(&l.ents[i].e) ? LANYFS_TYPE_DIR
                                                                  : LANYFS_TYPE_FILE));
    }
    lanyfs_dirlist_free(&l);
    ck_assert_ptr_null(l.ents);
    lanyfs_fs_close(fs);
    free(v);
    fx_free(fx);
}
END_TEST

START_TEST(test_list_high_bytes)
{
    const char *names[] = {"b", "\xff", "\x80", "A", "a", "\x7f", "\xc3\xa9", "ab", "\x01"};
    const char *sorted[] = {"\x01", "A", "a", "ab", "b", "\x7f", "\x80", "\xc3\xa9", "\xff"};
    const size_t n = sizeof(names) / sizeof(names[0]);
    struct fx *fx = fx_new(10, 1, 64);
    uint64_t blks[16];
    for (size_t i = 0; i < n; i++) {
        blks[i] = fx_mkdir(fx, fx_root(fx), names[i]);
        ck_assert_uint_ne(blks[i], 0);
    }
    /* SPEC-§5: "\xff" is greater than "b" (unsigned), so it went LEFT; "\x80" left of it. */
    uint64_t top = fx_get_subtree(fx, fx_root(fx));
    ck_assert_uint_eq(top, blks[0]);
    ck_assert_uint_eq(fx_get_left(fx, top), blks[1]);
    ck_assert_uint_eq(fx_get_right(fx, blks[1]), blks[2]);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_dir_list(fs, fx_root(fx), &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.problems, 0);
    ck_assert_uint_eq(l.count, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq((const char *)l.ents[i].e.name, sorted[i]);
    lanyfs_dirlist_free(&l);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(lanyfs_dir_lookup(fs, fx_root(fx), names[i], strlen(names[i]), NULL,
                                           NULL, &err),
                         LANYFS_OK);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

/* Trees of 1..300 random names, one directory each, in one image. */
START_TEST(test_lookup_every_name)
{
    struct u_rng r = {0x300};
    const size_t maxn = 300;
    struct fx *fx = fx_new(9, 3, maxn * (maxn + 1) / 2 + maxn + 64);
    ck_assert_ptr_nonnull(fx);
    struct name **trees = calloc(maxn + 1, sizeof(*trees));
    uint64_t *dirs = calloc(maxn + 1, sizeof(*dirs));
    for (size_t k = 1; k <= maxn; k++) {
        char dn[16];
        snprintf(dn, sizeof(dn), "d%03zu", k);
        dirs[k] = fx_mkdir(fx, fx_root(fx), dn);
        ck_assert_uint_ne(dirs[k], 0);
        trees[k] = rand_names(&r, k);
        for (size_t i = 0; i < k; i++)
            trees[k][i].blk = add_named(fx, dirs[k], &trees[k][i], u_below(&r, 2));
    }
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_error err;
    for (size_t k = 1; k <= maxn; k++) {
        for (size_t i = 0; i < k; i++) {
            const struct name *n = &trees[k][i];
            uint64_t blk = 0;
            struct lanyfs_entry e;
            enum lanyfs_err rc =
                lanyfs_dir_lookup(fs, dirs[k], (const char *)n->b, n->len, &blk, &e, &err);
            U_ASSERT(rc == LANYFS_OK, "tree %zu name %zu: %s", k, i, err.msg);
            U_EQ(blk, n->blk);
            U_MEMEQ(e.name, n->b, LANYFS_NAME_FIELD);
            /* Near misses: one byte more, one byte less (when not a name itself). */
            if (i % 3 == 0 && n->len < LANYFS_NAME_MAX) {
                struct name longer = *n;
                longer.b[longer.len++] = 0x01;
                bool present = false;
                for (size_t j = 0; j < k; j++)
                    present |= memcmp(trees[k][j].b, longer.b, LANYFS_NAME_FIELD) == 0;
                if (!present) {
                    rc = lanyfs_dir_lookup(fs, dirs[k], (const char *)longer.b, longer.len,
                                           NULL, NULL, &err);
                    U_ASSERT(rc == LANYFS_E_NOTFOUND, "tree %zu: near miss gave %d", k, rc);
                }
            }
            if (i % 3 == 1 && n->len > 1) {
                bool present = false;
                for (size_t j = 0; j < k; j++)
                    present |= trees[k][j].len == n->len - 1 &&
                               memcmp(trees[k][j].b, n->b, n->len - 1) == 0;
                if (!present) {
                    rc = lanyfs_dir_lookup(fs, dirs[k], (const char *)n->b, n->len - 1, NULL,
                                           NULL, &err);
                    U_ASSERT(rc == LANYFS_E_NOTFOUND, "tree %zu: prefix gave %d", k, rc);
                }
            }
        }
        /* Each directory also lists exactly its own names, cleanly. */
        if (k % 50 == 0 || k < 4) {
            struct lanyfs_dirlist l;
            ck_assert_int_eq(lanyfs_dir_list(fs, dirs[k], &l, &err), LANYFS_OK);
            ck_assert_uint_eq(l.count, k);
            ck_assert_uint_eq(l.problems, 0);
            lanyfs_dirlist_free(&l);
        }
        free(trees[k]);
    }
    lanyfs_fs_close(fs);
    free(trees);
    free(dirs);
    fx_free(fx);
}
END_TEST

START_TEST(test_lookup_edges)
{
    struct fx *fx = fx_new(9, 4, 64);
    uint64_t root = fx_root(fx);
    char n255[256];
    memset(n255, 'L', 255);
    n255[255] = '\0';
    uint64_t ab = fx_mkdir(fx, root, "ab");
    uint64_t lng = fx_mkdir(fx, root, n255);
    uint64_t empty = fx_mkdir(fx, root, "empty");
    ck_assert(ab && lng && empty);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_error err;
    uint64_t blk;
    /* len bounds the name: "abc" cut to 2 is "ab". */
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "abc", 2, &blk, NULL, &err), LANYFS_OK);
    ck_assert_uint_eq(blk, ab);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "abc", 3, &blk, NULL, &err),
                     LANYFS_E_NOTFOUND);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "a", 1, &blk, NULL, &err), LANYFS_E_NOTFOUND);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, n255, 255, &blk, NULL, &err), LANYFS_OK);
    ck_assert_uint_eq(blk, lng);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "", 0, NULL, NULL, &err), LANYFS_E_NOTFOUND);
    char n256[257];
    memset(n256, 'L', 256);
    n256[256] = '\0';
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, n256, 256, NULL, NULL, &err),
                     LANYFS_E_NOTFOUND);
    /* Both outputs are optional. */
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "ab", 2, NULL, NULL, &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, empty, "ab", 2, NULL, NULL, &err),
                     LANYFS_E_NOTFOUND);
    ck_assert_uint_eq(err.block, empty);
    struct lanyfs_dirlist l;
    ck_assert_int_eq(lanyfs_dir_list(fs, empty, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, 0);
    ck_assert_ptr_null(l.ents);
    lanyfs_dirlist_free(&l);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_path_resolve)
{
    struct fx *fx = fx_new(9, 4, 64);
    uint64_t root = fx_root(fx);
    uint64_t a = fx_mkdir(fx, root, "a");
    uint64_t b = fx_mkdir(fx, a, "b");
    uint64_t c = fx_mkdir(fx, b, "c");
    uint64_t f = fx_file(fx, a, "f", "hello", 5);
    uint64_t dot = fx_mkdir(fx, root, ".");
    uint64_t dotdot = fx_file(fx, root, "..", "x", 1);
    uint64_t sp = fx_mkdir(fx, root, "sp ace");
    uint64_t hi = fx_mkdir(fx, sp, "\xe2\x82\xac");
    ck_assert(a && b && c && f && dot && dotdot && sp && hi);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct {
        const char *path;
        uint64_t want;
    } ok[] = {
        {"/", root},      {"", root},        {"//", root},        {"a", a},
        {"/a", a},        {"/a/", a},        {"a/b", b},          {"/a/b/", b},
        {"//a///b//", b}, {"/a/b/c", c},     {"a/b/c/", c},       {"/a/f", f},
        {"/.", dot},      {"/..", dotdot},   {"./", dot},         {"/sp ace/\xe2\x82\xac", hi},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        uint64_t blk = 0;
        struct lanyfs_entry e;
        struct lanyfs_error err;
        enum lanyfs_err rc = lanyfs_path_resolve(fs, ok[i].path, &blk, &e, &err);
        ck_assert_msg(rc == LANYFS_OK, "'%s': %s (%s)", ok[i].path, lanyfs_strerror(rc),
                      err.msg);
        ck_assert_msg(blk == ok[i].want, "'%s' gave block %llu", ok[i].path,
                      (unsigned long long)blk);
        struct lanyfs_entry want;
        fx_entry_get(fx, ok[i].want, &want);
        ck_assert_mem_eq(e.name, want.name, LANYFS_NAME_FIELD);
    }
    struct {
        const char *path;
        enum lanyfs_err want;
    } bad[] = {
        {"/a/f/x", LANYFS_E_NOTDIR},   {"/a/f/x/y", LANYFS_E_NOTDIR}, {"/../x", LANYFS_E_NOTDIR},
        {"/a/nope", LANYFS_E_NOTFOUND}, {"/nope/b", LANYFS_E_NOTFOUND}, {"/a/.", LANYFS_E_NOTFOUND},
        {"/a/b/c/d", LANYFS_E_NOTFOUND}, {"/A", LANYFS_E_NOTFOUND},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct lanyfs_error err;
        enum lanyfs_err rc = lanyfs_path_resolve(fs, bad[i].path, NULL, NULL, &err);
        ck_assert_msg(rc == bad[i].want, "'%s' gave %s, want %s", bad[i].path,
                      lanyfs_strerror(rc), lanyfs_strerror(bad[i].want));
        ck_assert_int_eq(err.code, rc);
    }
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_path_resolve(fs, "/a/nope/deeper", NULL, NULL, &err),
                     LANYFS_E_NOTFOUND);
    ck_assert_msg(u_contains(err.msg, "a/nope"), "message does not name the path: %s",
                  err.msg);
    /* A component longer than any name. */
    char longp[400];
    memset(longp, 'q', sizeof(longp) - 1);
    longp[sizeof(longp) - 1] = '\0';
    ck_assert_int_eq(lanyfs_path_resolve(fs, longp, NULL, NULL, &err), LANYFS_E_NOTFOUND);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

static Suite *dir_suite(void)
{
    Suite *s = suite_create("dir");
    TCase *tc = tcase_create("dir");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_list_sorted_bytewise);
    tcase_add_test(tc, test_list_high_bytes);
    tcase_add_test(tc, test_lookup_every_name);
    tcase_add_test(tc, test_lookup_edges);
    tcase_add_test(tc, test_path_resolve);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(dir_suite)
