/*
 * test_salvage.c -- libcheck unit tests of the salvage engine (salvage.h).
 *
 * Images come from the test fixture (no writer of the project involved):
 *  - names: salvage_escape_name's rules, one by one, and that it keeps
 *    different names different;
 *  - ranges: salvage_ranges_text;
 *  - geometries: a tree with a file of several extender levels salvaged
 *    from block sizes 512..4096 and address lengths 1..8, byte for byte,
 *    with the manifest's blocks matching the scan's data map;
 *  - progress: done never goes back and ends at the total, the bytes of
 *    every file;
 *  - cancel: a cancel after the first file stops the run, which returns
 *    LANYFS_E_INVAL with the manifests listing that one file;
 *  - paths: a PATH in shown form (escaped) selects its entry; one that
 *    names nothing is counted in totals.missing and reported;
 *  - names: 2000 orphans of one name come out under 2000 names.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "salvage.h"
#include "scan.h"
#include "unit.h"

/* ---- helpers --------------------------------------------------------------------- */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* A new empty folder (malloc'd path) and its descriptor. */
static char *tmp_dir(int *fd)
{
    const char *t = getenv("TMPDIR");
    char *p = NULL;
    ck_assert_int_gt(asprintf(&p, "%s/salvage-unit.XXXXXX", t != NULL ? t : "/tmp"), 0);
    ck_assert_ptr_nonnull(mkdtemp(p));
    *fd = open(p, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(*fd, 0);
    return p;
}

static void tmp_dir_free(char *p, int fd)
{
    close(fd);
    nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(p);
}

/* The bytes of dirfd/rel (malloc), their count in *n; NULL when it cannot be read. */
static uint8_t *slurp(int dirfd, const char *rel, size_t *n)
{
    int fd = openat(dirfd, rel, O_RDONLY | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    struct stat st;
    uint8_t *b = NULL;
    if (fstat(fd, &st) == 0 && (b = malloc((size_t)st.st_size + 1)) != NULL) {
        ssize_t r = read(fd, b, (size_t)st.st_size);
        *n = r < 0 ? 0 : (size_t)r;
    }
    close(fd);
    return b;
}

struct run {
    struct lanyfs_fs *fs;
    struct scan_result *scan;
    struct salvage_result *res;
    enum lanyfs_err rc;
    struct lanyfs_error err;
};

static void run_salvage(struct fx *fx, int dfd, struct salvage_opts *o, struct run *r)
{
    memset(r, 0, sizeof(*r));
    r->fs = u_open_ok(fx);
    ck_assert_int_eq(scan_fs(r->fs, NULL, &r->scan, &r->err), LANYFS_OK);
    r->rc = salvage_run(r->scan, r->fs, dfd, o, &r->res, &r->err);
    ck_assert_ptr_nonnull(r->res);
}

static void run_free(struct run *r)
{
    salvage_result_free(r->res);
    scan_result_free(r->scan);
    lanyfs_fs_close(r->fs);
}

static const struct salvage_item *item_of(const struct salvage_result *res, const char *source)
{
    const struct salvage_item *it;
    size_t n = salvage_items(res, &it);
    for (size_t i = 0; i < n; i++)
        if (strcmp(it[i].source, source) == 0)
            return &it[i];
    return NULL;
}

/* ---- names ----------------------------------------------------------------------- */

static void esc_is(const char *name, size_t len, const char *want)
{
    char *got = salvage_escape_name((const uint8_t *)name, len);
    ck_assert_ptr_nonnull(got);
    ck_assert_msg(strcmp(got, want) == 0, "escape of %zu bytes gives '%s', want '%s'", len, got,
                  want);
    free(got);
}

START_TEST(escape_rules)
{
    esc_is(".", 1, "\\x2e");
    esc_is("..", 2, "\\x2e\\x2e");
    esc_is("...", 3, "...");
    esc_is(".hidden", 7, ".hidden");
    esc_is("", 0, "\\x00");
    esc_is("a/b", 3, "a\\x2fb");
    esc_is("../../x", 7, "..\\x2f..\\x2fx");
    esc_is("x\xffy\\z", 5, "x\\xffy\\\\z");
    esc_is("tab\there", 8, "tab\\x09here");
    esc_is("esc\x1b[0m", 7, "esc\\x1b[0m");
    esc_is("\xc0\xaf", 2, "\\xc0\\xaf");               /* an overlong '/' */
    esc_is("\xed\xa0\x80", 3, "\\xed\\xa0\\x80");      /* a surrogate */
    esc_is("\xe2\x80\xae" "txt", 6, "\\xe2\\x80\\xaetxt"); /* U+202E */
    esc_is("caf\xc3\xa9", 5, "caf\xc3\xa9");           /* é stays */
    esc_is("a\x7f", 2, "a\\x7f");
    esc_is("nul\0in", 6, "nul\\x00in");
}
END_TEST

START_TEST(escape_long_and_distinct)
{
    uint8_t a[256], b[256];
    memset(a, 'n', sizeof(a));
    memcpy(b, a, sizeof(b));
    b[255] = 'm';
    char *ea = salvage_escape_name(a, sizeof(a));
    char *eb = salvage_escape_name(b, sizeof(b));
    ck_assert_ptr_nonnull(ea);
    ck_assert_ptr_nonnull(eb);
    ck_assert_uint_le(strlen(ea), SALVAGE_NAME_MAX);
    ck_assert_uint_le(strlen(eb), SALVAGE_NAME_MAX);
    ck_assert_str_ne(ea, eb);
    const char *tilde = strrchr(ea, '~');
    ck_assert_ptr_nonnull(tilde);
    ck_assert_uint_eq(strlen(tilde + 1), 16);
    free(ea);
    free(eb);
    /* 100 bytes of \xff escape to 400: cut too, never inside an escape. */
    uint8_t c[100];
    memset(c, 0xff, sizeof(c));
    char *ec = salvage_escape_name(c, sizeof(c));
    ck_assert_ptr_nonnull(ec);
    ck_assert_uint_le(strlen(ec), SALVAGE_NAME_MAX);
    const char *t = strrchr(ec, '~');
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq((size_t)(t - ec) % 4, 0);
    free(ec);
    /* Names that differ only where escapes could collide stay different. */
    char *x = salvage_escape_name((const uint8_t *)"a\\x2fb", 6);
    char *y = salvage_escape_name((const uint8_t *)"a/b", 3);
    ck_assert_str_ne(x, y);
    free(x);
    free(y);
}
END_TEST

START_TEST(ranges_text)
{
    struct salvage_range rr[] = {{6, 6}, {14, 1}, {100, 2}};
    struct salvage_ranges r = {rr, 3, 3};
    char *t = salvage_ranges_text(&r);
    ck_assert_str_eq(t, "6-11 14 100-101");
    free(t);
    struct salvage_ranges none = {NULL, 0, 0};
    t = salvage_ranges_text(&none);
    ck_assert_str_eq(t, "");
    free(t);
}
END_TEST

/* ---- geometries ---------------------------------------------------------------------- */

START_TEST(every_geometry)
{
    static const unsigned alens[] = {1, 2, 3, 4, 8};
    for (unsigned bits = LANYFS_BLOCKBITS_MIN; bits <= LANYFS_BLOCKBITS_MAX; bits++) {
        for (size_t ai = 0; ai < sizeof(alens) / sizeof(alens[0]); ai++) {
            unsigned alen = alens[ai];
            uint64_t blocks = alen == 1 ? 255 : 3000;
            struct fx *fx = fx_new(bits, alen, blocks);
            ck_assert_ptr_nonnull(fx);
            uint32_t bs = fx_blocksize(fx);
            /* A file of more blocks than one extender maps when the device allows it. */
            size_t big = (size_t)(blocks - 40) * bs;
            if (big > (size_t)2600 * bs)
                big = (size_t)2600 * bs;
            uint8_t *data = malloc(big);
            ck_assert_ptr_nonnull(data);
            fx_pattern(data, big, bits * 10 + alen);
            uint64_t d = fx_mkdir(fx, fx_root(fx), "d");
            ck_assert(d != 0);
            ck_assert(fx_file(fx, d, "big.bin", data, big - 7) != 0);
            ck_assert(fx_file(fx, fx_root(fx), "small", data + 3, 10) != 0);
            int dfd;
            char *dir = tmp_dir(&dfd);
            struct salvage_opts o = {0};
            struct run r;
            run_salvage(fx, dfd, &o, &r);
            ck_assert_int_eq(r.rc, LANYFS_OK);
            struct salvage_totals t;
            salvage_get_totals(r.res, &t);
            ck_assert_msg(t.exact == 2 && t.partial == 0, "bits %u alen %u: %llu exact", bits,
                          alen, (unsigned long long)t.exact);
            size_t n = 0;
            uint8_t *got = slurp(dfd, "files/d/big.bin", &n);
            ck_assert_ptr_nonnull(got);
            ck_assert_uint_eq(n, big - 7);
            ck_assert_msg(memcmp(got, data, n) == 0, "bits %u alen %u: bytes differ", bits, alen);
            free(got);
            got = slurp(dfd, "files/small", &n);
            ck_assert_ptr_nonnull(got);
            ck_assert_uint_eq(n, 10);
            ck_assert(memcmp(got, data + 3, 10) == 0);
            free(got);
            /* The blocks listed are the scan's data map, in order. */
            const struct salvage_item *it = item_of(r.res, "/d/big.bin");
            ck_assert_ptr_nonnull(it);
            const struct scan_entry *e;
            size_t ne = scan_entries(r.scan, &e);
            const struct scan_entry *x = NULL;
            for (size_t i = 0; i < ne; i++)
                if (e[i].path != NULL && strcmp(e[i].path, "/d/big.bin") == 0)
                    x = &e[i];
            ck_assert_ptr_nonnull(x);
            uint64_t k = 0;
            for (size_t i = 0; i < it->blocks.n; i++)
                for (uint64_t j = 0; j < it->blocks.r[i].count; j++, k++)
                    U_EQ(it->blocks.r[i].first + j, x->data[k]);
            U_EQ(k, x->ndata);
            run_free(&r);
            tmp_dir_free(dir, dfd);
            free(data);
            fx_free(fx);
        }
    }
}
END_TEST

/* ---- progress, cancel, paths -------------------------------------------------------- */

static struct fx *three_files(uint8_t *data, size_t len)
{
    struct fx *fx = fx_new(10, 4, 600);
    ck_assert_ptr_nonnull(fx);
    fx_pattern(data, len, 3);
    ck_assert(fx_file(fx, fx_root(fx), "a", data, 5000) != 0);
    ck_assert(fx_file(fx, fx_root(fx), "b", data, 7000) != 0);
    ck_assert(fx_file(fx, fx_root(fx), "bad\xff", data, 300) != 0);
    return fx;
}

struct prog {
    uint64_t last, total, calls;
    bool backwards;
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct prog *p = ctx;
    if (done < p->last || done > total)
        p->backwards = true;
    p->last = done;
    p->total = total;
    p->calls++;
}

START_TEST(progress_by_bytes)
{
    uint8_t data[8000];
    struct fx *fx = three_files(data, sizeof(data));
    int dfd;
    char *dir = tmp_dir(&dfd);
    struct prog p = {0};
    struct salvage_opts o = {.progress = on_progress, .progress_ctx = &p};
    struct run r;
    run_salvage(fx, dfd, &o, &r);
    ck_assert_int_eq(r.rc, LANYFS_OK);
    ck_assert(!p.backwards);
    U_EQ(p.total, 5000 + 7000 + 300);
    U_EQ(p.last, p.total);
    ck_assert_uint_ge(p.calls, 4);
    run_free(&r);
    tmp_dir_free(dir, dfd);
    fx_free(fx);
}
END_TEST

static void cancel_after_first(void *ctx, const struct salvage_item *it)
{
    (void)it;
    *(volatile int *)ctx = 1;
}

START_TEST(cancel_stops_and_lists)
{
    uint8_t data[8000];
    struct fx *fx = three_files(data, sizeof(data));
    int dfd;
    char *dir = tmp_dir(&dfd);
    volatile int cancel = 0;
    struct salvage_opts o = {.on_item = cancel_after_first, .item_ctx = (void *)&cancel,
                             .cancel = &cancel};
    struct run r;
    run_salvage(fx, dfd, &o, &r);
    ck_assert_int_eq(r.rc, LANYFS_E_INVAL);
    const struct salvage_item *it;
    U_EQ(salvage_items(r.res, &it), 1);
    size_t n = 0;
    char *csv = (char *)slurp(dfd, "manifest.csv", &n);
    ck_assert_ptr_nonnull(csv);
    csv[n] = '\0';
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += csv[i] == '\n';
    U_EQ(lines, 2); /* the header and the one file */
    free(csv);
    char *json = (char *)slurp(dfd, "manifest.json", &n);
    ck_assert_ptr_nonnull(json);
    json[n] = '\0';
    ck_assert(strstr(json, "\"cancelled\": true") != NULL);
    free(json);
    run_free(&r);
    tmp_dir_free(dir, dfd);
    fx_free(fx);
}
END_TEST

START_TEST(paths_shown_and_missing)
{
    uint8_t data[8000];
    struct fx *fx = three_files(data, sizeof(data));
    int dfd;
    char *dir = tmp_dir(&dfd);
    const char *paths[] = {"/bad\\xff", "/nothing"};
    struct salvage_opts o = {.paths = paths, .npaths = 2};
    struct run r;
    run_salvage(fx, dfd, &o, &r);
    ck_assert_int_eq(r.rc, LANYFS_OK);
    struct salvage_totals t;
    salvage_get_totals(r.res, &t);
    U_EQ(t.exact, 1);
    U_EQ(t.missing, 1);
    const char *const *probs;
    ck_assert_uint_eq(salvage_problems(r.res, &probs), 1);
    ck_assert(strstr(probs[0], "/nothing") != NULL);
    size_t n = 0;
    uint8_t *got = slurp(dfd, "files/bad\\xff", &n);
    ck_assert_ptr_nonnull(got);
    U_EQ(n, 300);
    ck_assert(memcmp(got, data, 300) == 0);
    free(got);
    ck_assert_int_ne(faccessat(dfd, "files/a", F_OK, AT_SYMLINK_NOFOLLOW), 0);
    run_free(&r);
    tmp_dir_free(dir, dfd);
    fx_free(fx);
}
END_TEST

/* The scan's id of the entry of state st at path, 0 when there is none. */
static uint32_t id_of(const struct scan_result *scan, enum scan_entry_state st, const char *path)
{
    const struct scan_entry *e;
    size_t n = scan_entries(scan, &e);
    for (size_t i = 0; i < n; i++)
        if (e[i].state == st && e[i].path != NULL && strcmp(e[i].path, path) == 0)
            return e[i].id;
    return 0;
}

/* Entries by id: a live file and an orphan come out, nothing else does; a bad id is listed. */
START_TEST(entries_by_id)
{
    uint8_t data[8000];
    struct fx *fx = three_files(data, sizeof(data));
    ck_assert(fx_entry_new(fx, LANYFS_TYPE_FILE, "x", 1) != 0);
    ck_assert(fx_entry_new(fx, LANYFS_TYPE_FILE, "y", 1) != 0);
    int dfd;
    char *dir = tmp_dir(&dfd);
    struct run r;
    memset(&r, 0, sizeof(r));
    r.fs = u_open_ok(fx);
    ck_assert_int_eq(scan_fs(r.fs, NULL, &r.scan, &r.err), LANYFS_OK);
    uint32_t ids[3] = {id_of(r.scan, SCAN_ENTRY_LIVE, "/b"), id_of(r.scan, SCAN_ENTRY_ORPHAN, "/x"),
                       999999};
    ck_assert_uint_ne(ids[0], 0);
    ck_assert_uint_ne(ids[1], 0);
    struct salvage_opts o = {.entries = ids, .nentries = 3};
    r.rc = salvage_run(r.scan, r.fs, dfd, &o, &r.res, &r.err);
    ck_assert_int_eq(r.rc, LANYFS_OK);
    struct salvage_totals t;
    salvage_get_totals(r.res, &t);
    U_EQ(t.exact, 2);
    U_EQ(t.missing, 1);
    size_t n = 0;
    uint8_t *got = slurp(dfd, "files/b", &n);
    ck_assert_ptr_nonnull(got);
    U_EQ(n, 7000);
    ck_assert(memcmp(got, data, 7000) == 0);
    free(got);
    ck_assert_int_eq(faccessat(dfd, "orphans/x", F_OK, AT_SYMLINK_NOFOLLOW), 0);
    ck_assert_int_ne(faccessat(dfd, "orphans/y", F_OK, AT_SYMLINK_NOFOLLOW), 0);
    ck_assert_int_ne(faccessat(dfd, "files/a", F_OK, AT_SYMLINK_NOFOLLOW), 0);
    run_free(&r);
    tmp_dir_free(dir, dfd);
    fx_free(fx);
}
END_TEST

/* 2000 orphans of one name: all copied, named x, x~2, ... x~2000, one try each. */
START_TEST(many_equal_names)
{
    struct fx *fx = fx_new(9, 4, 2200);
    ck_assert_ptr_nonnull(fx);
    for (int i = 0; i < 2000; i++)
        ck_assert(fx_entry_new(fx, LANYFS_TYPE_FILE, "x", 1) != 0);
    int dfd;
    char *dir = tmp_dir(&dfd);
    struct salvage_opts o = {.flags = SALVAGE_ORPHANS};
    struct run r;
    run_salvage(fx, dfd, &o, &r);
    ck_assert_int_eq(r.rc, LANYFS_OK);
    struct salvage_totals t;
    salvage_get_totals(r.res, &t);
    U_EQ(t.exact, 2000);
    ck_assert_int_eq(faccessat(dfd, "orphans/x", F_OK, AT_SYMLINK_NOFOLLOW), 0);
    ck_assert_int_eq(faccessat(dfd, "orphans/x~2", F_OK, AT_SYMLINK_NOFOLLOW), 0);
    ck_assert_int_eq(faccessat(dfd, "orphans/x~2000", F_OK, AT_SYMLINK_NOFOLLOW), 0);
    ck_assert_int_ne(faccessat(dfd, "orphans/x~2001", F_OK, AT_SYMLINK_NOFOLLOW), 0);
    run_free(&r);
    tmp_dir_free(dir, dfd);
    fx_free(fx);
}
END_TEST

/*
 * Writes an unplug cut short (SPEC-§8): "a"'s data pointer and size never
 * landed, so its tree (the block after it) holds its data; "b"'s entry is
 * wiped, so its tree is no file's.  "a" comes back whole from its tree
 * (partial: its size came from the data), and --carve writes b's tree as
 * one piece in its order.
 */
START_TEST(lost_trees_recovered)
{
    static uint8_t data[8000];
    struct fx *fx = fx_new(10, 4, 600);
    ck_assert_ptr_nonnull(fx);
    fx_pattern(data, sizeof(data), 3);
    uint64_t a = fx_file(fx, fx_root(fx), "a", data, 5000);
    uint64_t b = fx_file(fx, fx_root(fx), "b", data, 7000);
    ck_assert(a != 0 && b != 0 && data[4999] != 0 && data[6999] != 0);
    ck_assert_uint_eq(fx_get_subtree(fx, a), a + 1);
    struct lanyfs_entry e;
    fx_entry_get(fx, a, &e);
    e.subtree = 0;
    e.size = 0;
    e.wrcnt = 0; /* created, never written back (SPEC-§10) */
    fx_entry_put(fx, a, &e);
    uint64_t btop = fx_get_subtree(fx, b);
    memset(fx_block(fx, b), 0, fx_blocksize(fx));
    int dfd;
    char *dir = tmp_dir(&dfd);
    struct salvage_opts o = {.flags = SALVAGE_CARVE};
    struct run r;
    run_salvage(fx, dfd, &o, &r);
    const struct salvage_item *ia = item_of(r.res, "/a");
    ck_assert_ptr_nonnull(ia);
    ck_assert_int_eq(ia->status, SALVAGE_PARTIAL);
    ck_assert_uint_eq(ia->size, 5000);
    size_t n = 0;
    uint8_t *got = slurp(dfd, ia->output, &n);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(n, 5000);
    ck_assert_mem_eq(got, data, 5000);
    free(got);
    char src[64];
    snprintf(src, sizeof(src), "extender tree at block %llu", (unsigned long long)btop);
    const struct salvage_item *ib = item_of(r.res, src);
    ck_assert_ptr_nonnull(ib);
    ck_assert_int_eq(ib->kind, SALVAGE_KIND_CARVED);
    got = slurp(dfd, ib->output, &n);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(n, 7000);
    ck_assert_mem_eq(got, data, 7000);
    free(got);
    run_free(&r);
    tmp_dir_free(dir, dfd);
    fx_free(fx);
}
END_TEST

/*
 * A rename that replaced /docs/gone.txt, cut off before its tree change:
 * the replaced file's data and entry are in the free list (pushed in that
 * order, SPEC-§8), and its sibling keep.txt still links the entry
 * (MARK_STALE_TREE).  The scan reached it from /docs, so the deleted copy
 * is named after /docs, not just "/gone.txt", and its data is intact.
 */
START_TEST(deleted_dir_from_stale_link)
{
    static uint8_t data[3000];
    struct fx *fx = fx_new(10, 4, 200);
    ck_assert_ptr_nonnull(fx);
    fx_pattern(data, sizeof(data), 5);
    uint64_t d = fx_mkdir(fx, fx_root(fx), "docs");
    uint64_t keep = fx_file(fx, d, "keep.txt", "kept", 4);
    uint64_t f = fx_file(fx, d, "gone.txt", data, sizeof(data));
    ck_assert(d != 0 && keep != 0 && f != 0);
    ck_assert_uint_eq(fx_get_right(fx, keep), f); /* the reversed order: a smaller name right */
    ck_assert_uint_eq(fx_freelist(fx), 1);
    struct lanyfs_super sb;
    fx_super_get(fx, &sb);
    const struct lanyfs_geom *g = fx_geom(fx);
    uint64_t freed[4];
    size_t nfreed = 0;
    for (uint64_t fb = 0; fb < 3; fb++) {
        uint64_t dblk = fx_file_dblk(fx, f, fb, NULL, NULL);
        ck_assert_uint_ne(dblk, 0);
        freed[nfreed++] = dblk;
    }
    freed[nfreed++] = f;
    uint8_t *cb = fx_block(fx, sb.freehead);
    uint32_t k = 0;
    while (k < g->chainmax && lanyfs_get_addr(cb + LANYFS_CH_SLOTS + (size_t)k * g->addrlen,
                                              g->addrlen) != 0)
        k++;
    ck_assert_uint_le(k + nfreed, g->chainmax - 1);
    for (size_t i = 0; i < nfreed; i++)
        lanyfs_put_addr(cb + LANYFS_CH_SLOTS + (size_t)(k + i) * g->addrlen, g->addrlen,
                        freed[i]);

    struct run r;
    memset(&r, 0, sizeof(r));
    ck_assert_int_eq(u_open_fx_raw(fx, 0, &r.fs, &r.err), LANYFS_OK);
    ck_assert_int_eq(scan_fs(r.fs, NULL, &r.scan, &r.err), LANYFS_OK);
    const struct scan_finding *fi;
    size_t nf = scan_findings(r.scan, &fi), stale = 0;
    for (size_t i = 0; i < nf; i++)
        stale += fi[i].code == SCAN_PR_MARK_STALE_TREE && fi[i].block == keep && fi[i].block2 == f;
    ck_assert_uint_eq(stale, 1);
    int dfd;
    char *dir = tmp_dir(&dfd);
    struct salvage_opts o = {.flags = SALVAGE_DELETED};
    r.rc = salvage_run(r.scan, r.fs, dfd, &o, &r.res, &r.err);
    ck_assert_ptr_nonnull(r.res);
    ck_assert_ptr_null(item_of(r.res, "/gone.txt"));
    const struct salvage_item *it = item_of(r.res, "/docs/gone.txt");
    ck_assert_ptr_nonnull(it);
    ck_assert_int_eq(it->kind, SALVAGE_KIND_DELETED);
    ck_assert_int_eq(it->status, SALVAGE_EXACT);
    ck_assert_uint_eq(it->entry_block, f);
    size_t n = 0;
    uint8_t *got = slurp(dfd, it->output, &n);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(n, sizeof(data));
    ck_assert_mem_eq(got, data, sizeof(data));
    free(got);
    run_free(&r);
    tmp_dir_free(dir, dfd);
    fx_free(fx);
}
END_TEST

/* Items of a source. */
static size_t items_of(const struct salvage_result *res, const char *source)
{
    const struct salvage_item *it;
    size_t n = salvage_items(res, &it), k = 0;
    for (size_t i = 0; i < n; i++)
        k += strcmp(it[i].source, source) == 0;
    return k;
}

/*
 * The same unplug: SALVAGE_LOST writes b's tree to lost/ once, named after
 * its top, and --carve leaves it; a's tree comes with "a" and is not
 * repeated.  Asked for by its top alone, a's tree goes to lost/ and the
 * live tree is not copied; a top that is no lost tree is a problem.
 */
START_TEST(lost_trees_to_lost)
{
    static uint8_t data[8000];
    struct fx *fx = fx_new(10, 4, 600);
    ck_assert_ptr_nonnull(fx);
    fx_pattern(data, sizeof(data), 5);
    uint64_t a = fx_file(fx, fx_root(fx), "a", data, 5000);
    uint64_t b = fx_file(fx, fx_root(fx), "b", data, 7000);
    ck_assert(a != 0 && b != 0 && data[4999] != 0 && data[6999] != 0);
    uint64_t atop = fx_get_subtree(fx, a), btop = fx_get_subtree(fx, b);
    struct lanyfs_entry e;
    fx_entry_get(fx, a, &e);
    e.subtree = 0;
    e.size = 0;
    e.wrcnt = 0;
    fx_entry_put(fx, a, &e);
    memset(fx_block(fx, b), 0, fx_blocksize(fx));

    int dfd;
    char *dir = tmp_dir(&dfd);
    struct salvage_opts o = {.flags = SALVAGE_LOST | SALVAGE_CARVE};
    struct run r;
    run_salvage(fx, dfd, &o, &r);
    ck_assert_int_eq(r.rc, LANYFS_OK);
    char src[96], want[64];
    snprintf(src, sizeof(src), "extender tree at block %llu", (unsigned long long)btop);
    U_EQ(items_of(r.res, src), 1);
    const struct salvage_item *ib = item_of(r.res, src);
    ck_assert_int_eq(ib->kind, SALVAGE_KIND_LOST);
    U_EQ(ib->entry, 0);
    U_EQ(ib->entry_block, btop);
    ck_assert_int_eq(ib->status, SALVAGE_PARTIAL);
    snprintf(want, sizeof(want), "lost/%08llu.", (unsigned long long)btop);
    ck_assert_int_eq(strncmp(ib->output, want, strlen(want)), 0);
    size_t n = 0;
    uint8_t *got = slurp(dfd, ib->output, &n);
    ck_assert_ptr_nonnull(got);
    U_EQ(n, 7000);
    ck_assert_mem_eq(got, data, 7000);
    free(got);
    snprintf(src, sizeof(src), "extender tree at block %llu", (unsigned long long)atop);
    U_EQ(items_of(r.res, src), 0);
    const struct salvage_item *ia = item_of(r.res, "/a");
    ck_assert_ptr_nonnull(ia);
    U_EQ(ia->size, 5000);
    run_free(&r);
    tmp_dir_free(dir, dfd);

    dir = tmp_dir(&dfd);
    uint64_t tops[2] = {atop, a}; /* a: an entry block, no tree's top */
    struct salvage_opts o2 = {.lost_tops = tops, .nlost_tops = 2};
    run_salvage(fx, dfd, &o2, &r);
    ck_assert_int_eq(r.rc, LANYFS_OK);
    struct salvage_totals t;
    salvage_get_totals(r.res, &t);
    U_EQ(t.missing, 1);
    U_EQ(t.partial, 1);
    U_EQ(t.exact, 0);
    const char *const *probs;
    ck_assert_uint_eq(salvage_problems(r.res, &probs), 1);
    snprintf(want, sizeof(want), "block %llu:", (unsigned long long)a);
    ck_assert_ptr_nonnull(strstr(probs[0], want));
    ck_assert_int_ne(faccessat(dfd, "files", F_OK, AT_SYMLINK_NOFOLLOW), 0);
    snprintf(src, sizeof(src), "extender tree at block %llu (the data of /a)",
             (unsigned long long)atop);
    ia = item_of(r.res, src);
    ck_assert_ptr_nonnull(ia);
    ck_assert_int_eq(ia->kind, SALVAGE_KIND_LOST);
    ck_assert_uint_ne(ia->entry, 0);
    got = slurp(dfd, ia->output, &n);
    ck_assert_ptr_nonnull(got);
    U_EQ(n, 5000);
    ck_assert_mem_eq(got, data, 5000);
    free(got);
    run_free(&r);
    tmp_dir_free(dir, dfd);
    fx_free(fx);
}
END_TEST

static Suite *make(void)
{
    Suite *s = suite_create("salvage");
    TCase *tc = tcase_create("salvage");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, escape_rules);
    tcase_add_test(tc, escape_long_and_distinct);
    tcase_add_test(tc, ranges_text);
    tcase_add_test(tc, every_geometry);
    tcase_add_test(tc, progress_by_bytes);
    tcase_add_test(tc, cancel_stops_and_lists);
    tcase_add_test(tc, paths_shown_and_missing);
    tcase_add_test(tc, many_equal_names);
    tcase_add_test(tc, entries_by_id);
    tcase_add_test(tc, lost_trees_recovered);
    tcase_add_test(tc, lost_trees_to_lost);
    tcase_add_test(tc, deleted_dir_from_stale_link);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(make)
