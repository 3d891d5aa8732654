/*
 * test_corpus.c -- the reference images of the 2012 formatter
 * (the .img files in $LANYFS_CORPUS, described by its MANIFEST.md).
 *
 * Every image but b4096-a64 must open without a single superblock problem,
 * its root must list empty and cleanly, and every superblock field must
 * equal what the original detectfs.lanyfs printed (NAME.detect.txt, parsed
 * here).  The free list the formatter wrote is walked with the core's chain
 * codec: it must list every block from 2 on exactly once.  b4096-a64 has
 * blocks = 1 (SPEC-§9.11): the open must refuse it naming 'blocks', and a
 * forced open must succeed and keep the problems.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "unit.h"

#define MAX_IMAGES 32

static char *images[MAX_IMAGES];
static int nimages;

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .img files of the corpus, sorted, without their directory. */
static void find_images(void)
{
    if (nimages > 0)
        return;
    const char *dir = u_corpus();
    DIR *d = dir != NULL ? opendir(dir) : NULL;
    if (d == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && nimages < MAX_IMAGES) {
        size_t n = strlen(de->d_name);
        if (n > 4 && strcmp(de->d_name + n - 4, ".img") == 0)
            images[nimages++] = strndup(de->d_name, n - 4);
    }
    closedir(d);
    qsort(images, (size_t)nimages, sizeof(images[0]), name_cmp);
}

static char *corpus_path(const char *base, const char *ext)
{
    static char buf[4096];
    snprintf(buf, sizeof(buf), "%s/%s%s", u_corpus(), base, ext);
    return buf;
}

/* What detectfs.lanyfs printed. */
struct detect {
    unsigned type, wrcnt, major, minor, addrbits, blocksize;
    unsigned long long magic, rootdir, blocks, freehead, freetail, freeblocks, badblocks;
    char created[64], updated[64], checked[64];
    char label[300];
    unsigned seen; /* how many known keys were found */
};

static void parse_detect(const char *base, struct detect *d)
{
    memset(d, 0, sizeof(*d));
    FILE *f = fopen(corpus_path(base, ".detect.txt"), "r");
    ck_assert_msg(f != NULL, "no %s.detect.txt", base);
    char line[512];
    while (fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        char *colon = strstr(line, ": ");
        if (colon == NULL)
            continue;
        *colon = '\0';
        const char *k = line, *v = colon + 2;
        unsigned before = d->seen;
        d->seen++;
        if (strcmp(k, "blocktype") == 0)
            d->type = (unsigned)strtoul(v, NULL, 0);
        else if (strcmp(k, "write counter") == 0)
            d->wrcnt = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(k, "magic") == 0)
            d->magic = strtoull(v, NULL, 0);
        else if (strcmp(k, "version") == 0)
            ck_assert_int_eq(sscanf(v, "%u.%u", &d->major, &d->minor), 2);
        else if (strcmp(k, "address length") == 0)
            ck_assert_int_eq(sscanf(v, "%u bit", &d->addrbits), 1);
        else if (strcmp(k, "blocksize") == 0)
            ck_assert_int_eq(sscanf(v, "%u bytes", &d->blocksize), 1);
        else if (strcmp(k, "root dir") == 0)
            d->rootdir = strtoull(v, NULL, 10);
        else if (strcmp(k, "total blocks") == 0)
            d->blocks = strtoull(v, NULL, 10);
        else if (strcmp(k, "free head") == 0)
            d->freehead = strtoull(v, NULL, 10);
        else if (strcmp(k, "free tail") == 0)
            d->freetail = strtoull(v, NULL, 10);
        else if (strcmp(k, "free blocks") == 0)
            d->freeblocks = strtoull(v, NULL, 10);
        else if (strcmp(k, "badblocks") == 0)
            d->badblocks = strtoull(v, NULL, 10);
        else if (strcmp(k, "created") == 0)
            snprintf(d->created, sizeof(d->created), "%s", v);
        else if (strcmp(k, "updated") == 0)
            snprintf(d->updated, sizeof(d->updated), "%s", v);
        else if (strcmp(k, "checked") == 0)
            snprintf(d->checked, sizeof(d->checked), "%s", v);
        else if (strcmp(k, "volume label") == 0)
            snprintf(d->label, sizeof(d->label), "%s", v);
        else
            d->seen = before;
    }
    fclose(f);
    ck_assert_msg(d->seen == 16, "%s.detect.txt: %u of 16 fields", base, d->seen);
}

/* A detectfs time "2026-12-03T01:02:15.0+00:00" against a decoded timestamp. */
static void ts_matches(const char *what, const char *text, const struct lanyfs_ts *ts)
{
    unsigned y, mo, d, h, mi, s, frac, oh, om;
    char sign;
    ck_assert_msg(sscanf(text, "%u-%u-%uT%u:%u:%u.%u%c%u:%u", &y, &mo, &d, &h, &mi, &s, &frac,
                         &sign, &oh, &om) == 10,
                  "%s: cannot parse '%s'", what, text);
    int off = (int)(oh * 60 + om) * (sign == '-' ? -1 : 1);
    ck_assert_msg(ts->year == y && ts->month == mo && ts->day == d && ts->hour == h &&
                      ts->minute == mi && ts->second == s && ts->nsec == frac &&
                      ts->offset == off,
                  "%s: superblock says %u-%u-%u %u:%u:%u.%u %+d, detectfs '%s'", what,
                  ts->year, ts->month, ts->day, ts->hour, ts->minute, ts->second, ts->nsec,
                  ts->offset, text);
    if (y == 0 && mo == 0)
        ck_assert_msg(lanyfs_ts_is_unset(ts), "%s should be unset", what);
}

static void super_matches(const char *base, const struct lanyfs_super *sb)
{
    struct detect d;
    parse_detect(base, &d);
    ck_assert_uint_eq(sb->type, d.type);
    ck_assert_uint_eq(sb->wrcnt, d.wrcnt);
    ck_assert_uint_eq(sb->magic, d.magic);
    ck_assert_uint_eq(sb->major, d.major);
    ck_assert_uint_eq(sb->minor, d.minor);
    ck_assert_uint_eq(sb->addrlen * 8u, d.addrbits);
    ck_assert_uint_eq(1u << sb->blockbits, d.blocksize);
    ck_assert_uint_eq(sb->rootdir, d.rootdir);
    ck_assert_uint_eq(sb->blocks, d.blocks);
    ck_assert_uint_eq(sb->freehead, d.freehead);
    ck_assert_uint_eq(sb->freetail, d.freetail);
    ck_assert_uint_eq(sb->freeblocks, d.freeblocks);
    ck_assert_uint_eq(sb->badblocks, d.badblocks);
    ts_matches("created", d.created, &sb->created);
    ts_matches("updated", d.updated, &sb->updated);
    ts_matches("checked", d.checked, &sb->checked);
    char label[LANYFS_NAME_FIELD + 1];
    lanyfs_super_label(sb, label, sizeof(label));
    ck_assert_str_eq(label, d.label);
}

static bool is_wide64(const char *base)
{
    return strcmp(base, "b4096-a64") == 0;
}

START_TEST(test_manifest_images_present)
{
    ck_assert_msg(u_corpus() != NULL, "LANYFS_CORPUS is not set");
    find_images();
    const char *want[] = {"b512-a8",   "b512-a16",  "b512-a32",       "b1024-a24",
                          "b2048-a32", "b4096-a32", "b4096-a64",      "b512-a8-capped",
                          "b1024-overhead"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        struct stat st;
        ck_assert_msg(stat(corpus_path(want[i], ".img"), &st) == 0, "%s.img is missing",
                      want[i]);
        ck_assert_msg(stat(corpus_path(want[i], ".detect.txt"), &st) == 0,
                      "%s.detect.txt is missing", want[i]);
    }
    ck_assert_int_ge(nimages, 9);
}
END_TEST

/* Loop index _i picks the image (find_images ran when the suite was made). */
START_TEST(test_image_opens_and_lists_empty)
{
    const char *base = images[_i];
    if (is_wide64(base))
        return;
    const char *path = corpus_path(base, ".img");
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    enum lanyfs_err rc = lanyfs_fs_open(path, 0, &fs, &err);
    ck_assert_msg(rc == LANYFS_OK, "%s: %s (%s)", base, lanyfs_strerror(rc), err.msg);
    const struct lanyfs_sb_problem *pr;
    size_t np = lanyfs_fs_problems(fs, &pr);
    ck_assert_msg(np == 0, "%s: %zu superblock problems, first: %s", base, np,
                  np ? pr[0].msg : "");
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    super_matches(base, sb);
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    ck_assert_uint_eq(g->blockbits, sb->blockbits);
    ck_assert_uint_eq(g->addrlen, sb->addrlen);
    ck_assert_uint_eq(g->blocks, sb->blocks);
    ck_assert_uint_eq(lanyfs_fs_image_blocks(fs), (uint64_t)st.st_size >> sb->blockbits);
    ck_assert_uint_le(sb->blocks, lanyfs_fs_image_blocks(fs));

    struct lanyfs_dirlist l;
    rc = lanyfs_dir_list(fs, sb->rootdir, &l, &err);
    ck_assert_msg(rc == LANYFS_OK, "%s: root does not list: %s", base, err.msg);
    ck_assert_uint_eq(l.count, 0);
    ck_assert_msg(l.problems == 0, "%s: root listing problems 0x%x: %s", base, l.problems,
                  l.first.msg);
    lanyfs_dirlist_free(&l);

    uint64_t blk = 0;
    struct lanyfs_entry e;
    ck_assert_int_eq(lanyfs_path_resolve(fs, "/", &blk, &e, &err), LANYFS_OK);
    ck_assert_uint_eq(blk, sb->rootdir);
    ck_assert(lanyfs_entry_is_dir(&e));
    ck_assert_str_eq((const char *)e.name, LANYFS_ROOT_NAME);
    ck_assert_uint_eq(e.subtree, 0);
    /* SPEC-§9.16: the root is written once, attr 0. */
    ck_assert_uint_eq(e.wrcnt, 1);
    ck_assert_uint_eq(e.attr, 0);
    ck_assert_int_eq(lanyfs_path_resolve(fs, "/nothing", &blk, &e, &err), LANYFS_E_NOTFOUND);
    lanyfs_fs_close(fs);
}
END_TEST

/* The formatter's free list: chain blocks from 2, every slot filled (SPEC-§9.10, 9.16). */
START_TEST(test_image_free_list)
{
    if (is_wide64(images[_i]))
        return;
    const char *base = images[_i];
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_fs_open(corpus_path(base, ".img"), 0, &fs, &err), LANYFS_OK);
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    uint64_t cur = sb->freehead, last = 0, nchain = 0;
    while (cur != 0) {
        ck_assert_msg(cur < sb->blocks, "%s: chain block %llu beyond the device", base,
                      (unsigned long long)cur);
        ck_assert_int_eq(lanyfs_blockset_add(seen, cur), 1);
        ck_assert_int_eq(lanyfs_fs_read_block(fs, cur, buf, &err), LANYFS_OK);
        struct lanyfs_chain_hdr h;
        lanyfs_chain_decode(&h, buf);
        ck_assert_uint_eq(h.type, LANYFS_TYPE_EXT); /* the formatter's chain type */
        ck_assert_uint_eq(h.wrcnt, 1);
        bool ended = false;
        for (uint32_t i = 0; i < g->chainmax; i++) {
            uint64_t s = lanyfs_chain_slot(g, buf, i);
            if (s == 0) {
                ended = true;
                continue;
            }
            U_ASSERT(!ended, "%s: slot %u of chain block %llu filled after an empty one", base,
                     i, (unsigned long long)cur);
            U_ASSERT(s < sb->blocks, "%s: slot %u = %llu beyond the device", base, i,
                     (unsigned long long)s);
            /* The formatter lists blocks in ascending order right after their chain block. */
            U_EQ(s, cur + 1 + i);
            U_ASSERT(lanyfs_blockset_add(seen, s) == 1, "%s: block %llu listed twice", base,
                     (unsigned long long)s);
        }
        last = cur;
        nchain++;
        cur = h.next;
    }
    ck_assert_uint_eq(last, sb->freetail);
    ck_assert_uint_eq(lanyfs_blockset_count(seen), sb->freeblocks);
    ck_assert_uint_eq(lanyfs_blockset_count(seen), sb->blocks - 2);
    for (uint64_t b = 2; b < sb->blocks; b++)
        U_ASSERT(lanyfs_blockset_has(seen, b), "%s: block %llu is not in the free list", base,
                 (unsigned long long)b);
    ck_assert_uint_ge(nchain, 1);
    lanyfs_blockset_free(seen);
    lanyfs_fs_close(fs);
}
END_TEST

START_TEST(test_wide64_refused)
{
    const char *path = corpus_path("b4096-a64", ".img");
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    enum lanyfs_err rc = lanyfs_fs_open(path, 0, &fs, &err);
    ck_assert_msg(rc == LANYFS_E_GEOMETRY || rc == LANYFS_E_RANGE, "open gave %s",
                  lanyfs_strerror(rc));
    ck_assert_ptr_null(fs);
    ck_assert_int_eq(err.code, rc);
    ck_assert_msg(u_contains(err.msg, "blocks"), "message does not name 'blocks': %s",
                  err.msg);
}
END_TEST

START_TEST(test_wide64_forced)
{
    const char *path = corpus_path("b4096-a64", ".img");
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error err;
    enum lanyfs_err rc = lanyfs_fs_open(path, LANYFS_OPEN_FORCE, &fs, &err);
    ck_assert_msg(rc == LANYFS_OK, "forced open failed: %s", err.msg);
    const struct lanyfs_sb_problem *pr;
    size_t np = lanyfs_fs_problems(fs, &pr);
    ck_assert_uint_gt(np, 0);
    bool blocks_named = false;
    for (size_t i = 0; i < np; i++) {
        ck_assert_ptr_nonnull(pr[i].field);
        ck_assert(pr[i].msg[0] != '\0');
        if (strcmp(pr[i].field, "blocks") == 0 && pr[i].fatal) {
            blocks_named = true;
            ck_assert(pr[i].code == LANYFS_E_GEOMETRY || pr[i].code == LANYFS_E_RANGE);
            ck_assert(u_contains(pr[i].msg, "blocks"));
        }
    }
    ck_assert_msg(blocks_named, "no fatal problem names 'blocks'");
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    super_matches("b4096-a64", sb);
    ck_assert_uint_eq(sb->blocks, 1);
    ck_assert_uint_eq(sb->addrlen, 8);
    ck_assert_uint_eq(lanyfs_fs_image_blocks(fs), 512);
    /* The root lies beyond 'blocks': a bounded read refuses it, a raw one shows it. */
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 1, buf, &err), LANYFS_E_RANGE);
    ck_assert_uint_eq(err.block, 1);
    struct lanyfs_dirlist l;
    ck_assert_int_eq(lanyfs_dir_list(fs, 1, &l, &err), LANYFS_E_RANGE);
    ck_assert_int_eq(lanyfs_fs_read_raw(fs, 1, buf, &err), LANYFS_OK);
    struct lanyfs_entry e;
    lanyfs_entry_decode(&e, buf);
    ck_assert(lanyfs_entry_is_dir(&e));
    ck_assert_str_eq((const char *)e.name, LANYFS_ROOT_NAME);
    ck_assert_int_eq(lanyfs_fs_read_raw(fs, 512, buf, &err), LANYFS_E_TRUNCATED);
    lanyfs_fs_close(fs);
}
END_TEST

static Suite *corpus_suite(void)
{
    Suite *s = suite_create("corpus");
    TCase *tc = tcase_create("corpus");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_manifest_images_present);
    find_images();
    tcase_add_loop_test(tc, test_image_opens_and_lists_empty, 0, nimages);
    tcase_add_loop_test(tc, test_image_free_list, 0, nimages);
    tcase_add_test(tc, test_wide64_refused);
    tcase_add_test(tc, test_wide64_forced);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(corpus_suite)
