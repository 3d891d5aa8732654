/*
 * test_crafted.c -- damaged images built on purpose with the fixture.
 *
 * Superblock damage: each fatal problem refuses the open with its own code
 * and a message naming the field, and LANYFS_OPEN_FORCE opens anyway and
 * keeps the problems; harmless oddities open.  Tree damage: cycles, shared
 * nodes, a 5000-deep degenerate tree, wrong order, duplicate and bad names,
 * links to non-entries and beyond the device; the listing walks around all
 * of them, reporting each, and the lookup never loops.  Truncation: a block
 * past the image end is LANYFS_E_TRUNCATED naming that block, never a crash.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

/* A small healthy image: dirs "a" (with "a/b") and "c", file "f" of 3 blocks. */
static struct fx *small_fx(unsigned bits, unsigned al, uint64_t blocks)
{
    struct fx *fx = fx_new(bits, al, blocks);
    ck_assert_ptr_nonnull(fx);
    uint64_t a = fx_mkdir(fx, fx_root(fx), "a");
    ck_assert_uint_ne(a, 0);
    ck_assert_uint_ne(fx_mkdir(fx, a, "b"), 0);
    ck_assert_uint_ne(fx_mkdir(fx, fx_root(fx), "c"), 0);
    size_t len = 3u << bits;
    uint8_t *data = malloc(len);
    fx_pattern(data, len, 3);
    ck_assert_uint_ne(fx_file(fx, fx_root(fx), "f", data, len), 0);
    free(data);
    return fx;
}

/* Save with the free list, then apply the damage (so fx_save cannot undo it). */
#define DAMAGE_SB_U8(fx, off, v) (fx_block((fx), 0)[(off)] = (uint8_t)(v))
#define DAMAGE_SB_U64(fx, off, v) lanyfs_put64(fx_block((fx), 0) + (off), (v))

/* Open raw (no free list rebuilt) and expect a refusal with code and a named field. */
static void expect_refused(struct fx *fx, enum lanyfs_err code, const char *field)
{
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error err;
    enum lanyfs_err rc = u_open_fx_raw(fx, 0, &fs, &err);
    ck_assert_msg(rc == code, "open gave %s, want %s (%s)", lanyfs_strerror(rc),
                  lanyfs_strerror(code), err.msg);
    ck_assert_ptr_null(fs);
    ck_assert_int_eq(err.code, code);
    if (field != NULL)
        ck_assert_msg(u_contains(err.msg, field), "message does not name '%s': %s", field,
                      err.msg);
}

/*
 * Open raw with FORCE; the problem list must hold `code` for `field`, and
 * its message must contain msg_has (unless NULL).
 */
static struct lanyfs_fs *expect_forced_msg(struct fx *fx, enum lanyfs_err code,
                                           const char *field, bool fatal, const char *msg_has)
{
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error err;
    enum lanyfs_err rc = u_open_fx_raw(fx, LANYFS_OPEN_FORCE, &fs, &err);
    ck_assert_msg(rc == LANYFS_OK, "forced open failed: %s", err.msg);
    const struct lanyfs_sb_problem *pr;
    size_t np = lanyfs_fs_problems(fs, &pr);
    bool found = false;
    for (size_t i = 0; i < np; i++)
        if (pr[i].code == code && strcmp(pr[i].field, field) == 0) {
            found = true;
            ck_assert(pr[i].fatal == fatal);
            if (msg_has != NULL)
                ck_assert_msg(u_contains(pr[i].msg, msg_has), "'%s' not in: %s", msg_has,
                              pr[i].msg);
        }
    ck_assert_msg(found, "no %s problem for '%s' among %zu", lanyfs_strerror(code), field, np);
    return fs;
}

static struct lanyfs_fs *expect_forced(struct fx *fx, enum lanyfs_err code, const char *field,
                                       bool fatal)
{
    return expect_forced_msg(fx, code, field, fatal, field);
}

/* ---- superblock ---------------------------------------------------------- */

START_TEST(test_clean_fixture_every_geometry)
{
    U_FOR_GEOMETRIES(bits, al)
    {
        struct fx *fx = small_fx(bits, al, 64);
        uint64_t used = fx_used_count(fx);
        struct lanyfs_fs *fs = u_open_ok(fx);
        const struct lanyfs_sb_problem *pr;
        ck_assert_msg(lanyfs_fs_problems(fs, &pr) == 0, "%u/%u: %s", 1u << bits, al, pr[0].msg);
        const struct lanyfs_super *sb = lanyfs_fs_super(fs);
        ck_assert_uint_eq(sb->blocks, 64);
        ck_assert_uint_eq(sb->rootdir, 1);
        ck_assert_uint_eq(sb->freeblocks, 64 - used);
        ck_assert_uint_eq(sb->blockbits, bits);
        ck_assert_uint_eq(sb->addrlen, al);
        struct lanyfs_dirlist l;
        struct lanyfs_error err;
        ck_assert_int_eq(lanyfs_dir_list(fs, 1, &l, &err), LANYFS_OK);
        ck_assert_uint_eq(l.count, 3);
        ck_assert_uint_eq(l.problems, 0);
        lanyfs_dirlist_free(&l);
        uint64_t blk;
        ck_assert_int_eq(lanyfs_path_resolve(fs, "/a/b", &blk, NULL, &err), LANYFS_OK);
        lanyfs_fs_close(fs);
        fx_free(fx);
    }
}
END_TEST

START_TEST(test_bad_magic)
{
    struct fx *fx = small_fx(9, 4, 64);
    fx_freelist(fx);
    DAMAGE_SB_U8(fx, LANYFS_SB_MAGIC, 'X');
    expect_refused(fx, LANYFS_E_BADMAGIC, "magic");
    struct lanyfs_fs *fs = expect_forced(fx, LANYFS_E_BADMAGIC, "magic", true);
    const struct lanyfs_sb_problem *pr;
    /* Nothing else means anything without the magic. */
    ck_assert_uint_eq(lanyfs_fs_problems(fs, &pr), 1);
    lanyfs_fs_close(fs);
    /* All zeros (an unformatted stick) is no LanyFS either. */
    memset(fx_block(fx, 0), 0, fx_blocksize(fx));
    expect_refused(fx, LANYFS_E_BADMAGIC, "magic");
    fx_free(fx);
}
END_TEST

START_TEST(test_version)
{
    struct fx *fx = small_fx(10, 3, 64);
    fx_freelist(fx);
    DAMAGE_SB_U8(fx, LANYFS_SB_MAJOR, 2);
    expect_refused(fx, LANYFS_E_VERSION, NULL);
    lanyfs_fs_close(expect_forced_msg(fx, LANYFS_E_VERSION, "major", true, "version 2.4"));
    DAMAGE_SB_U8(fx, LANYFS_SB_MAJOR, 255);
    expect_refused(fx, LANYFS_E_VERSION, NULL);
    /* The driver does not look at minor (SPEC-§8, mount). */
    DAMAGE_SB_U8(fx, LANYFS_SB_MAJOR, 1);
    DAMAGE_SB_U8(fx, LANYFS_SB_MINOR, 9);
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    ck_assert_int_eq(u_open_fx_raw(fx, 0, &fs, &err), LANYFS_OK);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_blocksize_exponent)
{
    const unsigned bad[] = {0, 8, 13, 200};
    for (size_t i = 0; i < 4; i++) {
        struct fx *fx = small_fx(10, 4, 64);
        fx_freelist(fx);
        DAMAGE_SB_U8(fx, LANYFS_SB_BLOCKBITS, bad[i]);
        expect_refused(fx, LANYFS_E_GEOMETRY, "blocksize");
        /* Forced, the superblock is read with 512-byte blocks. */
        struct lanyfs_fs *fs = expect_forced(fx, LANYFS_E_GEOMETRY, "blocksize", true);
        ck_assert_uint_eq(lanyfs_fs_geom(fs)->blocksize, 512);
        ck_assert_uint_eq(lanyfs_fs_super(fs)->blockbits, bad[i]);
        lanyfs_fs_close(fs);
        fx_free(fx);
    }
}
END_TEST

START_TEST(test_addrlen)
{
    const unsigned bad[] = {0, 9, 255};
    for (size_t i = 0; i < 3; i++) {
        struct fx *fx = small_fx(9, 2, 64);
        fx_freelist(fx);
        DAMAGE_SB_U8(fx, LANYFS_SB_ADDRLEN, bad[i]);
        expect_refused(fx, LANYFS_E_GEOMETRY, "addrlen");
        lanyfs_fs_close(expect_forced(fx, LANYFS_E_GEOMETRY, "addrlen", true));
        fx_free(fx);
    }
}
END_TEST

START_TEST(test_rootdir_range)
{
    struct fx *fx = small_fx(9, 4, 64);
    fx_freelist(fx);
    const uint64_t bad[] = {64, 65, 1000000, UINT64_MAX};
    for (size_t i = 0; i < 4; i++) {
        DAMAGE_SB_U64(fx, LANYFS_SB_ROOTDIR, bad[i]);
        expect_refused(fx, LANYFS_E_RANGE, "rootdir");
        char num[32];
        snprintf(num, sizeof(num), "%" PRIu64, bad[i]);
        struct lanyfs_fs *fs = expect_forced(fx, LANYFS_E_RANGE, "rootdir", true);
        const struct lanyfs_sb_problem *pr;
        size_t np = lanyfs_fs_problems(fs, &pr);
        ck_assert(np >= 1 && u_contains(pr[0].msg, num));
        /* The path layer cannot reach the root, and says so. */
        struct lanyfs_error err;
        ck_assert_int_eq(lanyfs_path_resolve(fs, "/", NULL, NULL, &err), LANYFS_E_RANGE);
        lanyfs_fs_close(fs);
    }
    DAMAGE_SB_U64(fx, LANYFS_SB_ROOTDIR, 0);
    expect_refused(fx, LANYFS_E_RANGE, "rootdir");
    /* The last block is still inside. */
    DAMAGE_SB_U64(fx, LANYFS_SB_ROOTDIR, 63);
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    ck_assert_int_eq(u_open_fx_raw(fx, 0, &fs, &err), LANYFS_OK);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_free_pointers_range)
{
    struct fx *fx = small_fx(9, 4, 64);
    fx_freelist(fx);
    uint64_t head = lanyfs_get64(fx_block(fx, 0) + LANYFS_SB_FREEHEAD);
    DAMAGE_SB_U64(fx, LANYFS_SB_FREEHEAD, 64);
    expect_refused(fx, LANYFS_E_RANGE, "freehead");
    DAMAGE_SB_U64(fx, LANYFS_SB_FREEHEAD, head);
    DAMAGE_SB_U64(fx, LANYFS_SB_FREETAIL, 99);
    expect_refused(fx, LANYFS_E_RANGE, "freetail");
    fx_freelist(fx);
    /* An empty free list (a full device) is fine. */
    DAMAGE_SB_U64(fx, LANYFS_SB_FREEHEAD, 0);
    DAMAGE_SB_U64(fx, LANYFS_SB_FREETAIL, 0);
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    ck_assert_int_eq(u_open_fx_raw(fx, 0, &fs, &err), LANYFS_OK);
    lanyfs_fs_close(fs);
    /* A bad-block list beyond the end is reported but not fatal. */
    DAMAGE_SB_U64(fx, LANYFS_SB_BADBLOCKS, 64);
    ck_assert_int_eq(u_open_fx_raw(fx, 0, &fs, &err), LANYFS_OK);
    lanyfs_fs_close(expect_forced(fx, LANYFS_E_RANGE, "badblocks", false));
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_type_byte)
{
    struct fx *fx = small_fx(9, 4, 64);
    fx_freelist(fx);
    DAMAGE_SB_U8(fx, LANYFS_HDR_TYPE, LANYFS_TYPE_DIR);
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    ck_assert_int_eq(u_open_fx_raw(fx, 0, &fs, &err), LANYFS_OK);
    const struct lanyfs_sb_problem *pr;
    size_t np = lanyfs_fs_problems(fs, &pr);
    ck_assert_uint_eq(np, 1);
    ck_assert_int_eq(pr[0].code, LANYFS_E_BADTYPE);
    ck_assert(!pr[0].fatal);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_blocks_larger_than_image)
{
    struct fx *fx = small_fx(11, 4, 64);
    fx_freelist(fx);
    DAMAGE_SB_U64(fx, LANYFS_SB_BLOCKS, 74);
    expect_refused(fx, LANYFS_E_TRUNCATED, "blocks");
    struct lanyfs_fs *fs = expect_forced(fx, LANYFS_E_TRUNCATED, "blocks", true);
    ck_assert_uint_eq(lanyfs_fs_image_blocks(fs), 64);
    /* Inside 'blocks' but past the image: TRUNCATED naming the block. */
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 70, buf, &err), LANYFS_E_TRUNCATED);
    ck_assert_uint_eq(err.block, 70);
    ck_assert(u_contains(err.msg, "70"));
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 74, buf, &err), LANYFS_E_RANGE);
    ck_assert_uint_eq(err.block, 74);
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 63, buf, &err), LANYFS_OK);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_blocks_limits)
{
    /* More blocks than 1-byte addresses reach. */
    struct fx *fx = fx_new(9, 2, 300);
    ck_assert_ptr_nonnull(fx);
    fx_freelist(fx);
    DAMAGE_SB_U8(fx, LANYFS_SB_ADDRLEN, 1);
    expect_refused(fx, LANYFS_E_GEOMETRY, "blocks");
    fx_free(fx);
    /* Fewer than 16 blocks in a larger image, as b4096-a64. */
    fx = small_fx(9, 8, 64);
    fx_freelist(fx);
    DAMAGE_SB_U64(fx, LANYFS_SB_BLOCKS, 8);
    DAMAGE_SB_U64(fx, LANYFS_SB_FREEHEAD, 0);
    DAMAGE_SB_U64(fx, LANYFS_SB_FREETAIL, 0);
    expect_refused(fx, LANYFS_E_GEOMETRY, "blocks");
    fx_free(fx);
}
END_TEST

START_TEST(test_many_problems_listed)
{
    struct fx *fx = small_fx(9, 4, 64);
    fx_freelist(fx);
    DAMAGE_SB_U8(fx, LANYFS_HDR_TYPE, 0);
    DAMAGE_SB_U64(fx, LANYFS_SB_ROOTDIR, 100);
    DAMAGE_SB_U64(fx, LANYFS_SB_FREEHEAD, 100);
    DAMAGE_SB_U64(fx, LANYFS_SB_FREETAIL, 100);
    DAMAGE_SB_U64(fx, LANYFS_SB_BADBLOCKS, 100);
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error err;
    ck_assert_int_eq(u_open_fx_raw(fx, LANYFS_OPEN_FORCE, &fs, &err), LANYFS_OK);
    const struct lanyfs_sb_problem *pr;
    size_t np = lanyfs_fs_problems(fs, &pr);
    const char *fields[] = {"type", "rootdir", "freehead", "freetail", "badblocks"};
    for (size_t f = 0; f < 5; f++) {
        int n = 0;
        for (size_t i = 0; i < np; i++)
            n += strcmp(pr[i].field, fields[f]) == 0;
        ck_assert_msg(n == 1, "field %s reported %d times", fields[f], n);
    }
    lanyfs_fs_close(fs);
    /* Refused with the first fatal one. */
    expect_refused(fx, LANYFS_E_RANGE, "rootdir");
    fx_free(fx);
}
END_TEST

START_TEST(test_tiny_images)
{
    struct fx *fx = small_fx(9, 4, 64);
    const uint64_t sizes[] = {0, 1, 100, 511};
    for (size_t i = 0; i < 4; i++) {
        struct lanyfs_fs *fs = NULL;
        struct lanyfs_error err;
        ck_assert_int_eq(u_open_fx_bytes(fx, sizes[i], 0, &fs, &err), LANYFS_E_TRUNCATED);
        ck_assert_ptr_null(fs);
        ck_assert_int_eq(u_open_fx_bytes(fx, sizes[i], LANYFS_OPEN_FORCE, &fs, &err),
                         LANYFS_E_TRUNCATED);
    }
    /* A 4096-byte superblock in an image of 1000 bytes: the head is readable. */
    fx_free(fx);
    fx = small_fx(12, 4, 64);
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error err;
    ck_assert_int_eq(u_open_fx_bytes(fx, 1000, 0, &fs, &err), LANYFS_E_TRUNCATED);
    ck_assert_int_eq(u_open_fx_bytes(fx, 1000, LANYFS_OPEN_FORCE, &fs, &err), LANYFS_OK);
    ck_assert_uint_eq(lanyfs_fs_image_blocks(fs), 0);
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 1, buf, &err), LANYFS_E_TRUNCATED);
    struct lanyfs_dirlist l;
    ck_assert_int_eq(lanyfs_dir_list(fs, 1, &l, &err), LANYFS_E_TRUNCATED);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

/* ---- tree damage --------------------------------------------------------- */

static bool listed_once(const struct lanyfs_dirlist *l, const char *name)
{
    int n = 0;
    for (size_t i = 0; i < l->count; i++)
        n += strcmp((const char *)l->ents[i].e.name, name) == 0;
    return n == 1;
}

static void assert_sorted(const struct lanyfs_dirlist *l)
{
    for (size_t i = 1; i < l->count; i++)
        U_ASSERT(memcmp(l->ents[i - 1].e.name, l->ents[i].e.name, 256) <= 0,
                 "listing not sorted at %zu", i);
}

START_TEST(test_cycle_to_ancestor)
{
    struct fx *fx = fx_new(9, 4, 64);
    uint64_t root = fx_root(fx);
    /* m at the top; f goes right (smaller); h goes left of f (greater than f). */
    uint64_t m = fx_mkdir(fx, root, "m");
    uint64_t f = fx_mkdir(fx, root, "f");
    uint64_t h = fx_mkdir(fx, root, "h");
    ck_assert_uint_eq(fx_get_subtree(fx, root), m);
    ck_assert_uint_eq(fx_get_right(fx, m), f);
    ck_assert_uint_eq(fx_get_left(fx, f), h);
    fx_set_left(fx, h, m); /* back to the ancestor */
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_dir_list(fs, root, &l, &err), LANYFS_OK);
    ck_assert(l.problems & LANYFS_DIR_CYCLE);
    ck_assert_uint_eq(l.count, 3);
    ck_assert(listed_once(&l, "m") && listed_once(&l, "f") && listed_once(&l, "h"));
    assert_sorted(&l);
    ck_assert_int_eq(l.first.code, LANYFS_E_CYCLE);
    ck_assert_uint_eq(l.first.block, m);
    lanyfs_dirlist_free(&l);
    /* "k" is searched m -> f -> h -> m: a cycle, not a hang. */
    lanyfs_error_clear(&err);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "k", 1, NULL, NULL, &err), LANYFS_E_CYCLE);
    ck_assert_int_eq(err.code, LANYFS_E_CYCLE);
    ck_assert_int_eq(lanyfs_path_resolve(fs, "/k", NULL, NULL, &err), LANYFS_E_CYCLE);
    /* Names off the loop are still found or missed normally. */
    uint64_t blk;
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "h", 1, &blk, NULL, &err), LANYFS_OK);
    ck_assert_uint_eq(blk, h);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "z", 1, NULL, NULL, &err), LANYFS_E_NOTFOUND);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "a", 1, NULL, NULL, &err), LANYFS_E_NOTFOUND);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_cycle_self_and_dir)
{
    struct fx *fx = fx_new(9, 4, 64);
    uint64_t root = fx_root(fx);
    uint64_t a = fx_mkdir(fx, root, "a");
    uint64_t sub = fx_mkdir(fx, a, "x");
    fx_set_right(fx, sub, sub); /* self loop */
    fx_set_left(fx, sub, a);    /* back to the directory itself */
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_dir_list(fs, a, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, 1);
    ck_assert_uint_eq(l.ents[0].block, sub);
    ck_assert(l.problems & LANYFS_DIR_CYCLE);
    lanyfs_dirlist_free(&l);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, a, "w", 1, NULL, NULL, &err), LANYFS_E_CYCLE);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, a, "y", 1, NULL, NULL, &err), LANYFS_E_CYCLE);
    ck_assert_int_eq(lanyfs_path_resolve(fs, "/a/x", NULL, NULL, &err), LANYFS_OK);
    lanyfs_fs_close(fs);
    /* A directory whose subtree is the directory itself. */
    fx_set_subtree(fx, a, a);
    fs = u_open_ok(fx);
    ck_assert_int_eq(lanyfs_dir_list(fs, a, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, 0);
    ck_assert(l.problems & LANYFS_DIR_CYCLE);
    lanyfs_dirlist_free(&l);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, a, "a", 1, NULL, NULL, &err), LANYFS_E_CYCLE);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_shared_node)
{
    struct fx *fx = fx_new(9, 4, 64);
    uint64_t root = fx_root(fx);
    uint64_t m = fx_mkdir(fx, root, "m");
    uint64_t c = fx_mkdir(fx, root, "c");
    uint64_t t = fx_mkdir(fx, root, "t");
    uint64_t d = fx_mkdir(fx, root, "d");
    ck_assert_uint_eq(fx_get_left(fx, c), d);
    /* t also links d: one node reached twice. */
    fx_set_right(fx, t, d);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_dir_list(fs, root, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, 4);
    ck_assert(listed_once(&l, "d"));
    ck_assert(l.problems & LANYFS_DIR_CYCLE);
    assert_sorted(&l);
    lanyfs_dirlist_free(&l);
    (void)m;
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

/* A chain of n entries, each the only child of the previous one. */
static void degenerate(bool via_left)
{
    const unsigned n = 5000;
    struct fx *fx = fx_new(9, 2, n + 64);
    uint64_t root = fx_root(fx);
    uint64_t prev = 0, first = 0, last = 0;
    for (unsigned i = 0; i < n; i++) {
        char name[16];
        /* Ascending names chain to the left, descending ones to the right. */
        snprintf(name, sizeof(name), "n%05u", via_left ? i : n - 1 - i);
        uint64_t b = fx_entry_new(fx, LANYFS_TYPE_FILE, name, strlen(name));
        ck_assert_uint_ne(b, 0);
        if (prev == 0)
            first = b;
        else if (via_left)
            fx_set_left(fx, prev, b);
        else
            fx_set_right(fx, prev, b);
        prev = last = b;
    }
    fx_set_subtree(fx, root, first);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_dir_list(fs, root, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, n);
    ck_assert_msg(l.problems == 0, "problems 0x%x: %s", l.problems, l.first.msg);
    for (unsigned i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%05u", i);
        U_ASSERT(strcmp((const char *)l.ents[i].e.name, name) == 0, "entry %u is %s", i,
                 (const char *)l.ents[i].e.name);
    }
    lanyfs_dirlist_free(&l);
    /* The deepest name is found at the bottom of the chain. */
    uint64_t blk;
    const char *deep = via_left ? "n04999" : "n00000";
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, deep, 6, &blk, NULL, &err), LANYFS_OK);
    ck_assert_uint_eq(blk, last);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "n05000", 6, NULL, NULL, &err),
                     LANYFS_E_NOTFOUND);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "n", 1, NULL, NULL, &err), LANYFS_E_NOTFOUND);
    lanyfs_fs_close(fs);
    fx_free(fx);
}

START_TEST(test_degenerate_left)
{
    degenerate(true);
}
END_TEST

START_TEST(test_degenerate_right)
{
    degenerate(false);
}
END_TEST

START_TEST(test_out_of_order)
{
    struct fx *fx = fx_new(9, 4, 64);
    uint64_t root = fx_root(fx);
    uint64_t m = fx_mkdir(fx, root, "m");
    /* "a" linked on the LEFT of "m", where only greater names belong. */
    uint64_t a = fx_entry_new(fx, LANYFS_TYPE_FILE, "a", 1);
    fx_set_left(fx, m, a);
    /* "z" on the right, where smaller ones belong. */
    uint64_t z = fx_entry_new(fx, LANYFS_TYPE_DIR, "z", 1);
    fx_set_right(fx, m, z);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_dir_list(fs, root, &l, &err), LANYFS_OK);
    ck_assert(l.problems & LANYFS_DIR_ORDER);
    ck_assert_uint_eq(l.count, 3);
    ck_assert_str_eq((const char *)l.ents[0].e.name, "a");
    ck_assert_str_eq((const char *)l.ents[1].e.name, "m");
    ck_assert_str_eq((const char *)l.ents[2].e.name, "z");
    ck_assert_uint_eq(l.ents[0].block, a);
    ck_assert_uint_eq(l.ents[2].block, z);
    lanyfs_dirlist_free(&l);
    /* The search follows the order, so misplaced entries are not found by name. */
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "a", 1, NULL, NULL, &err), LANYFS_E_NOTFOUND);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "z", 1, NULL, NULL, &err), LANYFS_E_NOTFOUND);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "m", 1, NULL, NULL, &err), LANYFS_OK);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_duplicate_and_bad_names)
{
    struct fx *fx = fx_new(9, 4, 64);
    uint64_t root = fx_root(fx);
    uint64_t m = fx_mkdir(fx, root, "m");
    uint64_t dup = fx_entry_new(fx, LANYFS_TYPE_FILE, "m", 1);
    fx_set_left(fx, m, dup);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_dir_list(fs, root, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, 2);
    ck_assert(l.problems & LANYFS_DIR_DUP);
    ck_assert(!(l.problems & LANYFS_DIR_BADNAME));
    lanyfs_dirlist_free(&l);
    lanyfs_fs_close(fs);

    /* Empty, slash and unterminated names, each its own entry. */
    uint8_t full[256];
    memset(full, 'y', sizeof(full));
    uint64_t empty = fx_entry_new(fx, LANYFS_TYPE_FILE, "", 0);
    uint64_t slash = fx_entry_new(fx, LANYFS_TYPE_FILE, "x/y", 3);
    uint64_t unterminated = fx_entry_new(fx, LANYFS_TYPE_FILE, full, 256);
    fx_set_left(fx, m, 0);
    fx_set_right(fx, m, empty);
    fx_set_left(fx, m, slash);
    fx_set_left(fx, slash, unterminated);
    fs = u_open_ok(fx);
    ck_assert_int_eq(lanyfs_dir_list(fs, root, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, 4);
    ck_assert(l.problems & LANYFS_DIR_BADNAME);
    ck_assert(!(l.problems & LANYFS_DIR_DUP));
    ck_assert_uint_eq(l.ents[0].block, empty);
    ck_assert_uint_eq(l.ents[3].block, unterminated);
    ck_assert_uint_eq(l.ents[3].e.name_len, 256);
    lanyfs_dirlist_free(&l);
    /* A component with '/' cannot be asked for; the name "x" is simply absent. */
    ck_assert_int_eq(lanyfs_path_resolve(fs, "/x", NULL, NULL, &err), LANYFS_E_NOTFOUND);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_link_to_chain_block)
{
    struct fx *fx = fx_new(9, 4, 64);
    uint64_t root = fx_root(fx);
    uint64_t m = fx_mkdir(fx, root, "m");
    fx_freelist(fx);
    uint64_t chain = lanyfs_get64(fx_block(fx, 0) + LANYFS_SB_FREEHEAD);
    ck_assert_uint_ne(chain, 0);
    ck_assert_uint_eq(fx_block(fx, chain)[0], LANYFS_TYPE_CHAIN);
    fx_set_left(fx, m, chain);
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    ck_assert_int_eq(u_open_fx_raw(fx, 0, &fs, &err), LANYFS_OK);
    struct lanyfs_dirlist l;
    ck_assert_int_eq(lanyfs_dir_list(fs, root, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, 1);
    ck_assert_uint_eq(l.ents[0].block, m);
    ck_assert(l.problems & LANYFS_DIR_BADTYPE);
    ck_assert_uint_eq(l.first.block, chain);
    lanyfs_dirlist_free(&l);
    /* A lookup that steps onto it fails with BADTYPE. */
    ck_assert_int_eq(lanyfs_dir_lookup(fs, root, "z", 1, NULL, NULL, &err), LANYFS_E_BADTYPE);
    ck_assert_uint_eq(err.block, chain);
    /* Listing the chain block as a directory. */
    ck_assert_int_eq(lanyfs_dir_list(fs, chain, &l, &err), LANYFS_E_BADTYPE);
    ck_assert_uint_eq(err.block, chain);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_link_beyond_device)
{
    struct fx *fx = fx_new(9, 4, 64);
    uint64_t root = fx_root(fx);
    uint64_t m = fx_mkdir(fx, root, "m");
    uint64_t a = fx_mkdir(fx, root, "a");
    fx_set_right(fx, a, 64);
    fx_set_left(fx, m, UINT64_MAX);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_dir_list(fs, root, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, 2);
    ck_assert(l.problems & LANYFS_DIR_BADPTR);
    ck_assert_int_eq(l.first.code, LANYFS_E_CORRUPT);
    ck_assert(u_contains(l.first.msg, "64") || u_contains(l.first.msg, "18446744073709551615"));
    lanyfs_dirlist_free(&l);
    /* A lookup through the bad link fails (naming the block), never crashes. */
    ck_assert_int_ne(lanyfs_dir_lookup(fs, root, "0", 1, NULL, NULL, &err), LANYFS_OK);
    ck_assert_uint_eq(err.block, 64);
    ck_assert_int_ne(lanyfs_dir_lookup(fs, root, "z", 1, NULL, NULL, &err), LANYFS_OK);
    ck_assert_uint_eq(err.block, UINT64_MAX);
    lanyfs_fs_close(fs);
    /* The directory's own subtree beyond the end: nothing listed, a problem. */
    fx_set_subtree(fx, root, 1000);
    fs = u_open_ok(fx);
    ck_assert_int_eq(lanyfs_dir_list(fs, root, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, 0);
    ck_assert(l.problems & LANYFS_DIR_BADPTR);
    lanyfs_dirlist_free(&l);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

START_TEST(test_list_non_directories)
{
    struct fx *fx = small_fx(9, 4, 64);
    struct lanyfs_fs *fs = u_open_ok(fx);
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    uint64_t f;
    ck_assert_int_eq(lanyfs_path_resolve(fs, "/f", &f, NULL, &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_dir_list(fs, f, &l, &err), LANYFS_E_NOTDIR);
    ck_assert_uint_eq(err.block, f);
    ck_assert_int_eq(lanyfs_dir_lookup(fs, f, "x", 1, NULL, NULL, &err), LANYFS_E_NOTDIR);
    ck_assert_int_eq(lanyfs_dir_list(fs, 64, &l, &err), LANYFS_E_RANGE);
    ck_assert_int_eq(lanyfs_dir_list(fs, 0, &l, &err), LANYFS_E_BADTYPE);
    lanyfs_fs_close(fs);
    fx_free(fx);
}
END_TEST

/* ---- truncation ----------------------------------------------------------- */

START_TEST(test_truncated_file_data)
{
    for (unsigned bits = 9; bits <= 12; bits++) {
        uint32_t bs = 1u << bits;
        struct fx *fx = fx_new(bits, 4, 40);
        size_t len = 10 * (size_t)bs;
        uint8_t *data = malloc(len), *out = malloc(len);
        fx_pattern(data, len, bits);
        uint64_t f = fx_file(fx, fx_root(fx), "f", data, len);
        ck_assert_uint_ne(f, 0);
        uint64_t last = fx_file_dblk(fx, f, 9, NULL, NULL);
        ck_assert_uint_ne(last, 0);
        /* Cut inside the last data block, and exactly at its start. */
        const uint64_t cuts[] = {last * bs + bs / 2, last * bs};
        for (int c = 0; c < 2; c++) {
            struct lanyfs_fs *fs;
            struct lanyfs_error err;
            ck_assert_int_eq(u_open_fx_bytes(fx, cuts[c], 0, &fs, &err), LANYFS_E_TRUNCATED);
            ck_assert_int_eq(u_open_fx_bytes(fx, cuts[c], LANYFS_OPEN_FORCE, &fs, &err),
                             LANYFS_OK);
            struct lanyfs_entry e;
            ck_assert_int_eq(lanyfs_path_resolve(fs, "/f", NULL, &e, &err), LANYFS_OK);
            size_t got = 0;
            lanyfs_error_clear(&err);
            ck_assert_int_eq(lanyfs_file_pread(fs, &e, 0, out, len, &got, NULL, &err),
                             LANYFS_E_TRUNCATED);
            ck_assert_uint_eq(err.block, last);
            char num[32];
            snprintf(num, sizeof(num), "%" PRIu64, last);
            ck_assert_msg(u_contains(err.msg, num), "message does not name block %s: %s", num,
                          err.msg);
            /* What comes before the cut reads fine. */
            ck_assert_int_eq(lanyfs_file_pread(fs, &e, 0, out, 9 * (size_t)bs, &got, NULL, &err),
                             LANYFS_OK);
            ck_assert_uint_eq(got, 9 * (size_t)bs);
            ck_assert_mem_eq(out, data, 9 * (size_t)bs);
            /* Mapping does not read data blocks, so it still works. */
            uint64_t dblk;
            ck_assert_int_eq(lanyfs_file_map(fs, &e, 9, &dblk, &err), LANYFS_OK);
            ck_assert_uint_eq(dblk, last);
            lanyfs_fs_close(fs);
        }
        free(data);
        free(out);
        fx_free(fx);
    }
}
END_TEST

START_TEST(test_truncated_extender_and_entry)
{
    /* 512/8: extmax 63; 70 blocks need a level-1 tree with two children. */
    struct fx *fx = fx_new(9, 8, 200);
    uint64_t root = fx_root(fx);
    size_t len = 70 * 512;
    uint8_t *data = malloc(len);
    fx_pattern(data, len, 70);
    uint64_t f = fx_file(fx, root, "f", data, len);
    uint64_t top = fx_get_subtree(fx, f);
    ck_assert_uint_eq(fx_ext_level(fx, top), 1);
    uint64_t child1 = fx_ext_get_slot(fx, top, 1);
    ck_assert_uint_ne(child1, 0);
    uint64_t late = fx_mkdir(fx, root, "late");
    ck_assert_uint_gt(late, child1);
    /* Cut at child1: the second child extender and everything after is gone. */
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    ck_assert_int_eq(u_open_fx_bytes(fx, child1 * 512, LANYFS_OPEN_FORCE, &fs, &err), LANYFS_OK);
    struct lanyfs_entry e;
    ck_assert_int_eq(lanyfs_path_resolve(fs, "/f", NULL, &e, &err), LANYFS_OK);
    uint64_t dblk;
    ck_assert_int_eq(lanyfs_file_map(fs, &e, 0, &dblk, &err), LANYFS_OK);
    lanyfs_error_clear(&err);
    ck_assert_int_eq(lanyfs_file_map(fs, &e, 63, &dblk, &err), LANYFS_E_TRUNCATED);
    ck_assert_uint_eq(err.block, child1);
    ck_assert_int_eq(lanyfs_file_walk(fs, &e, NULL, NULL, NULL, &err), LANYFS_E_TRUNCATED);
    ck_assert_uint_eq(err.block, child1);
    /* The directory entry "late" lies past the end: the listing walks around it. */
    struct lanyfs_dirlist l;
    ck_assert_int_eq(lanyfs_dir_list(fs, root, &l, &err), LANYFS_OK);
    ck_assert(l.problems & LANYFS_DIR_READERR);
    ck_assert_uint_eq(l.first.block, late);
    ck_assert_uint_eq(l.count, 1);
    lanyfs_dirlist_free(&l);
    ck_assert_int_eq(lanyfs_path_resolve(fs, "/late", NULL, NULL, &err), LANYFS_E_TRUNCATED);
    ck_assert_uint_eq(err.block, late);
    lanyfs_fs_close(fs);
    free(data);
    fx_free(fx);
}
END_TEST

static Suite *crafted_suite(void)
{
    Suite *s = suite_create("crafted");
    TCase *sb = tcase_create("superblock");
    tcase_set_timeout(sb, 60);
    tcase_add_test(sb, test_clean_fixture_every_geometry);
    tcase_add_test(sb, test_bad_magic);
    tcase_add_test(sb, test_version);
    tcase_add_test(sb, test_blocksize_exponent);
    tcase_add_test(sb, test_addrlen);
    tcase_add_test(sb, test_rootdir_range);
    tcase_add_test(sb, test_free_pointers_range);
    tcase_add_test(sb, test_type_byte);
    tcase_add_test(sb, test_blocks_larger_than_image);
    tcase_add_test(sb, test_blocks_limits);
    tcase_add_test(sb, test_many_problems_listed);
    tcase_add_test(sb, test_tiny_images);
    suite_add_tcase(s, sb);
    TCase *tree = tcase_create("tree");
    tcase_set_timeout(tree, 60);
    tcase_add_test(tree, test_cycle_to_ancestor);
    tcase_add_test(tree, test_cycle_self_and_dir);
    tcase_add_test(tree, test_shared_node);
    tcase_add_test(tree, test_degenerate_left);
    tcase_add_test(tree, test_degenerate_right);
    tcase_add_test(tree, test_out_of_order);
    tcase_add_test(tree, test_duplicate_and_bad_names);
    tcase_add_test(tree, test_link_to_chain_block);
    tcase_add_test(tree, test_link_beyond_device);
    tcase_add_test(tree, test_list_non_directories);
    suite_add_tcase(s, tree);
    TCase *tr = tcase_create("truncated");
    tcase_set_timeout(tr, 60);
    tcase_add_test(tr, test_truncated_file_data);
    tcase_add_test(tr, test_truncated_extender_and_entry);
    suite_add_tcase(s, tr);
    return s;
}

U_MAIN(crafted_suite)
