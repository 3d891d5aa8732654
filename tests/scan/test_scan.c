/*
 * test_scan.c -- libcheck unit tests of the scanner (scan.h), walker by walker.
 *
 *  - table: the catalogue is sorted and unique (scan_problem_table_verify),
 *    every row can be looked up and its message filled;
 *  - messages: scan_finding_message fills every {field};
 *  - super: field checks, geometry inference at every geometry, the
 *    reference corpus;
 *  - tree: entries and paths of a healthy tree, a degenerate tree 3000
 *    deep, cycles, every block accounted for;
 *  - files: data lists against the fixture's own map, holes, sharing;
 *  - free list: the real free count, classes of chain and free blocks;
 *  - sweep: a deleted file's data found in the free list (SPEC-§11),
 *    orphans with their paths;
 *  - counters and marks: the writers' images (both modes, through the core
 *    writer), a torn counter;
 *  - progress, cancel, summary, and random damage that must never crash.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "query.h"
#include "scan.h"
#include "slots.h"
#include "unit.h"
#include "writer.h"

/* ---- helpers ------------------------------------------------------------- */

/* Save the fixture (with its free list unless raw), scan it, remove the file. */
static struct scan_result *scan_fx(struct fx *fx, bool raw)
{
    char *path = u_tmpname();
    ck_assert_int_eq(raw ? fx_write(fx, path) : fx_save(fx, path), 0);
    struct scan_result *r = scan_path(path);
    unlink(path);
    free(path);
    return r;
}

/* Nothing above info; print the offenders. */
static void assert_clean(const struct scan_result *r, const char *what)
{
    const struct scan_finding *f;
    size_t n = scan_findings(r, &f);
    for (size_t i = 0; i < n; i++) {
        const struct scan_problem_info *p = scan_problem_lookup(f[i].code);
        ck_assert_ptr_nonnull(p);
        if (p->severity != SCAN_SEV_INFO) {
            char *m = scan_finding_message(&f[i]);
            ck_abort_msg("%s: unexpected %s: %s", what, p->name, m);
        }
    }
}

/* The small tree every test starts from. */
struct tree {
    struct fx *fx;
    uint64_t docs, one, a, b;
};

static struct tree small(unsigned bits, unsigned alen, uint64_t blocks)
{
    struct tree t;
    uint8_t data[5 * 4096];
    fx_pattern(data, sizeof(data), 5);
    t.fx = fx_new(bits, alen, blocks);
    ck_assert_ptr_nonnull(t.fx);
    uint32_t bs = fx_blocksize(t.fx);
    t.docs = fx_mkdir(t.fx, fx_root(t.fx), "docs");
    t.one = fx_file(t.fx, t.docs, "one.txt", data, 10);
    t.a = fx_file(t.fx, fx_root(t.fx), "a.txt", data, bs);
    t.b = fx_file(t.fx, fx_root(t.fx), "b.bin", data, 5 * bs - 1);
    ck_assert(t.docs && t.one && t.a && t.b);
    return t;
}

/* ---- slot arrays (slots.h) against the core's decoder -------------------- */

START_TEST(slots_fast_decode)
{
    struct u_rng rng = {7};
    uint8_t buf[4096 + 8];
    for (unsigned a = 1; a <= 8; a++) {
        for (int round = 0; round < 200; round++) {
            uint32_t count = (uint32_t)u_below(&rng, 4096 / a + 1);
            memset(buf, 0, sizeof(buf));
            /* Random slots, a zero tail of random length, zeros inside, lone top bytes. */
            uint32_t filled = count ? (uint32_t)u_below(&rng, count + 1) : 0;
            for (uint32_t i = 0; i < filled; i++) {
                uint64_t kind = u_below(&rng, 4);
                for (unsigned k = 0; k < a; k++)
                    buf[(size_t)i * a + k] = kind == 0   ? 0
                                             : kind == 1 ? (k + 1 == a ? 1 : 0)
                                                         : (uint8_t)u_rand(&rng);
            }
            /* Bytes past the array must not count. */
            buf[(size_t)count * a] = 0xff;
            uint32_t want_end = 0;
            uint64_t want_max = 0;
            for (uint32_t i = 0; i < count; i++) {
                uint64_t v = lanyfs_get_addr(buf + (size_t)i * a, a);
                ck_assert_uint_eq(sc_slot(buf, a, i), v);
                if (v != 0)
                    want_end = i + 1;
                if (v > want_max)
                    want_max = v;
            }
            ck_assert_uint_eq(sc_slots_end(buf, a, count), want_end);
            ck_assert_uint_eq(sc_slots_max(buf, a, 0, count), want_max);
            uint32_t from = count ? (uint32_t)u_below(&rng, count) : 0;
            uint64_t part = 0;
            for (uint32_t i = from; i < count; i++) {
                uint64_t v = lanyfs_get_addr(buf + (size_t)i * a, a);
                part = v > part ? v : part;
            }
            ck_assert_uint_eq(sc_slots_max(buf, a, from, count), part);
        }
    }
    /* Every byte of an 8-byte slot lands where it should. */
    const uint8_t le[8] = {1, 2, 3, 4, 5, 6, 7, 0x88};
    ck_assert_uint_eq(sc_slot(le, 8, 0), 0x8807060504030201ULL);
    ck_assert_uint_eq(sc_slot(le, 3, 0), 0x030201);
    ck_assert_uint_eq(sc_slot(le, 3, 1), 0x060504);
    ck_assert_uint_eq(sc_slots_end(le, 8, 0), 0);
}
END_TEST


/* ---- table and messages --------------------------------------------------- */

START_TEST(table_sorted)
{
    ck_assert_uint_eq(scan_problem_table_verify(), 0);
    size_t n;
    const struct scan_problem_info *t = scan_problem_table(&n);
    ck_assert_uint_gt(n, 60);
    for (size_t i = 0; i < n; i++) {
        ck_assert_ptr_eq(scan_problem_lookup(t[i].code), &t[i]);
        for (size_t j = i + 1; j < n; j++)
            ck_assert_str_ne(t[i].name, t[j].name);
        ck_assert_uint_eq(t[i].code >> 16, t[i].code >> 16 & 0xff);
        struct scan_finding f = {.code = t[i].code, .path = "/p", .text = "t"};
        char *m = scan_finding_message(&f);
        ck_assert_ptr_nonnull(m);
        ck_assert_msg(strchr(m, '{') == NULL, "%s: unfilled field in '%s'", t[i].name, m);
        free(m);
        /* Repairs are asked as they stand: fsck fills no field into them. */
        ck_assert_msg(strchr(t[i].repair, '{') == NULL, "%s: field in repair '%s'", t[i].name,
                      t[i].repair);
        if (t[i].code >> 16 == SCAN_PASS_DRIVER)
            ck_assert_msg(t[i].flags & SCAN_PF_DRIVER, "%s lacks SCAN_PF_DRIVER", t[i].name);
    }
    ck_assert_ptr_null(scan_problem_lookup(0x7fffff));
    ck_assert_str_eq(scan_severity_name(SCAN_SEV_CRITICAL), "critical");
}
END_TEST

START_TEST(message_fields)
{
    struct scan_finding f = {.code = SCAN_PR_TREE_PTR_TYPE, .block = 12, .block2 = 34,
                             .value = 0x80, .path = "/a/b"};
    char *m = scan_finding_message(&f);
    ck_assert_str_eq(m, "/a/b: block 12 links to block 34, which holds no entry (type byte 0x80)");
    free(m);
    f = (struct scan_finding){.code = SCAN_PR_FILE_SIZE_UNMAPPED, .value = 1000, .count = 2,
                              .count2 = 1};
    m = scan_finding_message(&f);
    ck_assert_str_eq(m, "(unknown): size 1000 needs 2 blocks, the tree maps 1");
    free(m);
    f = (struct scan_finding){.code = SCAN_PR_SB_BAD_MAGIC, .value = 0x12345678};
    m = scan_finding_message(&f);
    ck_assert(u_contains(m, "0x12345678"));
    free(m);
    f = (struct scan_finding){.code = 0x7fffff};
    m = scan_finding_message(&f);
    ck_assert(u_contains(m, "unknown"));
    free(m);
    ck_assert_str_eq(scan_class_name(SCAN_BLK_ORPHAN_EXT), "orphan-extender");
    ck_assert_str_eq(scan_class_name(SCAN_BLK_CLASSES), "invalid");
    ck_assert_str_eq(scan_entry_state_name(SCAN_ENTRY_DELETED), "deleted");
}
END_TEST

/* ---- superblock and inference ------------------------------------------- */

START_TEST(super_clean_and_fields)
{
    struct tree t = small(9, 4, 300);
    struct scan_result *r = scan_fx(t.fx, false);
    const struct scan_finding *f;
    ck_assert_uint_eq(scan_findings(r, &f), 0);
    ck_assert(!scan_geom_inferred(r));
    ck_assert_uint_eq(scan_block_count(r), 300);
    ck_assert_uint_eq(scan_geom(r)->blocksize, 512);
    scan_result_free(r);

    fx_freelist(t.fx);
    uint8_t *sb = fx_block(t.fx, 0);
    sb[0] = 0xd1;                                          /* SB_BAD_TYPE */
    sb[LANYFS_SB_MAJOR] = 2;                               /* SB_VERSION */
    sb[LANYFS_SB_CREATED + LANYFS_TS_MONTH] = 13;          /* SB_TIME_INVALID */
    memset(sb + LANYFS_SB_LABEL, 'L', 256);                /* SB_LABEL_NO_NUL */
    lanyfs_put64(sb + LANYFS_SB_BADBLOCKS, 5000);          /* SB_BADBLOCKS_RANGE */
    r = scan_fx(t.fx, true);
    ck_assert_uint_eq(count_code(r, SCAN_PR_SB_BAD_TYPE), 1);
    ck_assert_uint_eq(count_code(r, SCAN_PR_SB_VERSION), 1);
    ck_assert_uint_eq(count_code(r, SCAN_PR_SB_TIME_INVALID), 1);
    ck_assert_uint_eq(count_code(r, SCAN_PR_SB_LABEL_NO_NUL), 1);
    ck_assert_uint_eq(count_code(r, SCAN_PR_SB_BADBLOCKS_RANGE), 1);
    ck_assert_ptr_nonnull(by_path(r, "/docs/one.txt"));
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/* Break the magic at every geometry: the scan infers it and finds the same tree. */
START_TEST(infer_every_geometry)
{
    U_FOR_GEOMETRIES(bits, alen)
    {
        uint64_t blocks = 300;
        if (alen == 1)
            blocks = 250;
        struct tree t = small(bits, alen, blocks);
        fx_freelist(t.fx);
        lanyfs_put32(fx_block(t.fx, 0) + LANYFS_SB_MAGIC, 0);
        fx_block(t.fx, 0)[LANYFS_SB_BLOCKBITS] = 0; /* no hint from the superblock */
        fx_block(t.fx, 0)[LANYFS_SB_ADDRLEN] = 0;
        struct scan_result *r = scan_fx(t.fx, true);
        ck_assert_msg(scan_geom_inferred(r), "%u:%u not inferred", bits, alen);
        ck_assert_msg(scan_geom(r)->blockbits == bits && scan_geom(r)->addrlen == alen,
                      "%u:%u inferred as %u:%u", bits, alen, scan_geom(r)->blockbits,
                      scan_geom(r)->addrlen);
        ck_assert_uint_eq(count_code(r, SCAN_PR_SB_BAD_MAGIC), 1);
        ck_assert_uint_eq(count_code(r, SCAN_PR_SB_GEOMETRY_INFERRED), 1);
        const struct scan_entry *b = by_path(r, "/b.bin");
        ck_assert_msg(b != NULL && b->state == SCAN_ENTRY_LIVE, "%u:%u: /b.bin lost", bits, alen);
        ck_assert_uint_eq(b->blocks_mapped, 5);
        struct scan_summary s;
        scan_summarize(r, &s);
        ck_assert_uint_eq(s.by_class[SCAN_BLK_LEAKED] + s.by_class[SCAN_BLK_UNKNOWN], 0);
        scan_result_free(r);
        fx_free(t.fx);
    }
}
END_TEST

/* The magic broken and the free list a loop, so that no chain block is its
 * head: the inference finds no free list, and the chain blocks it leaves
 * unlisted are not taken for blocks a driver's relink cut off the list. */
START_TEST(infer_without_free_head)
{
    struct tree t = small(9, 4, 300);
    ck_assert_uint_ge(fx_freelist(t.fx), 2);
    struct lanyfs_super sb;
    fx_super_get(t.fx, &sb);
    uint64_t last = sb.freehead;
    for (uint64_t next; (next = lanyfs_get64(fx_block(t.fx, last) + LANYFS_CH_NEXT)) != 0;)
        last = next;
    lanyfs_put64(fx_block(t.fx, last) + LANYFS_CH_NEXT, sb.freehead);
    lanyfs_put32(fx_block(t.fx, 0) + LANYFS_SB_MAGIC, 0);
    struct scan_result *r = scan_fx(t.fx, true);
    ck_assert(scan_geom_inferred(r));
    ck_assert_uint_eq(scan_geom(r)->blocksize, 512);
    ck_assert_ptr_nonnull(by_path(r, "/b.bin"));
    ck_assert_uint_eq(count_code(r, SCAN_PR_MARK_FREELIST_CUT), 0);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/* The magic broken after the driver's relink of the head cut the rest of
 * the list off (SPEC-9.3): two chains that nothing links to, the cut-off
 * one longer, with the formatter's counter 1.  The head written since is
 * taken as the list's; the cut-off blocks are MARK_FREELIST_CUT's. */
START_TEST(infer_cut_free_list)
{
    struct tree t = small(9, 4, 400);
    ck_assert_uint_ge(fx_freelist(t.fx), 3);
    struct lanyfs_super sb;
    fx_super_get(t.fx, &sb);
    uint8_t *head = fx_block(t.fx, sb.freehead);
    uint64_t rest = lanyfs_get64(head + LANYFS_CH_NEXT);
    ck_assert_uint_ne(rest, 0);
    lanyfs_put64(head + LANYFS_CH_NEXT, 0);
    lanyfs_put16(head + LANYFS_HDR_WRCNT, 7);
    for (uint64_t c = rest; c != 0; c = lanyfs_get64(fx_block(t.fx, c) + LANYFS_CH_NEXT))
        lanyfs_put16(fx_block(t.fx, c) + LANYFS_HDR_WRCNT, 1);
    lanyfs_put32(fx_block(t.fx, 0) + LANYFS_SB_MAGIC, 0);
    struct scan_result *r = scan_fx(t.fx, true);
    ck_assert(scan_geom_inferred(r));
    struct scan_anchors an;
    scan_get_anchors(r, &an);
    ck_assert_uint_eq(an.freehead, sb.freehead);
    ck_assert_uint_eq(count_code(r, SCAN_PR_MARK_FREELIST_CUT), 1);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

START_TEST(corpus_images)
{
    const char *dir = u_corpus();
    if (dir == NULL)
        return;
    const char *names[] = {"b512-a8", "b512-a16", "b512-a32", "b1024-a24", "b2048-a32",
                           "b4096-a32", "b512-a8-capped", "b1024-overhead", "b4096-a64"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s.img", dir, names[i]);
        struct scan_result *r = scan_path(path);
        if (strcmp(names[i], "b4096-a64") == 0) {
            ck_assert_uint_eq(count_code(r, SCAN_PR_SB_BLOCKS_SMALL), 1);
            ck_assert_uint_eq(scan_block_count(r), 512);
        } else {
            assert_clean(r, names[i]);
            ck_assert_uint_eq(count_code(r, SCAN_PR_MARK_FORMATTER_CHAIN_TYPE), 1);
        }
        ck_assert_ptr_nonnull(by_path(r, "/"));
        scan_result_free(r);
    }
}
END_TEST

/* ---- trees ------------------------------------------------------------------ */

START_TEST(tree_paths_and_accounting)
{
    struct tree t = small(10, 3, 400);
    struct scan_result *r = scan_fx(t.fx, false);
    const struct scan_entry *one = by_path(r, "/docs/one.txt");
    ck_assert_ptr_nonnull(one);
    ck_assert_uint_eq(one->block, t.one);
    ck_assert_uint_eq(one->parent, by_path(r, "/docs")->id);
    ck_assert_ptr_eq(scan_entry_by_id(r, one->id), one);
    ck_assert_ptr_null(scan_entry_by_id(r, 0));
    const struct scan_block *m = scan_blocks(r);
    ck_assert_uint_eq(m[0].cls, SCAN_BLK_SUPER);
    ck_assert_uint_eq(m[t.docs].cls, SCAN_BLK_DIR);
    ck_assert_uint_eq(m[t.a].cls, SCAN_BLK_FILE);
    ck_assert_uint_eq(m[fx_get_subtree(t.fx, t.a)].cls, SCAN_BLK_EXTENDER);
    struct scan_summary s;
    scan_summarize(r, &s);
    ck_assert_uint_eq(s.dirs, 2);
    ck_assert_uint_eq(s.files, 3);
    uint64_t sum = 0;
    for (int c = 0; c < SCAN_BLK_CLASSES; c++)
        sum += s.by_class[c];
    ck_assert_uint_eq(sum, 400);
    ck_assert_uint_eq(s.by_class[SCAN_BLK_UNKNOWN] + s.by_class[SCAN_BLK_LEAKED], 0);
    ck_assert_uint_eq(s.free_listed, s.by_class[SCAN_BLK_CHAIN] + s.by_class[SCAN_BLK_FREE]);
    ck_assert_int_eq(s.worst, SCAN_SEV_INFO);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/* 3000 siblings in one degenerate line: deep trees live on the heap, not the C stack. */
START_TEST(tree_degenerate_deep)
{
    struct fx *fx = fx_new(9, 2, 3200);
    ck_assert_ptr_nonnull(fx);
    uint64_t prev = 0;
    for (int i = 0; i < 3000; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%05d", i);
        uint64_t e = fx_entry_new(fx, LANYFS_TYPE_FILE, name, strlen(name));
        ck_assert_uint_ne(e, 0);
        if (prev == 0)
            fx_set_subtree(fx, fx_root(fx), e);
        else
            fx_set_left(fx, prev, e); /* greater names go left */
        prev = e;
    }
    struct scan_result *r = scan_fx(fx, false);
    struct scan_summary s;
    scan_summarize(r, &s);
    ck_assert_uint_eq(s.files, 3000);
    assert_clean(r, "degenerate tree");
    scan_result_free(r);
    /* Close the line into a cycle: found once, walk ends. */
    fx_set_left(fx, prev, fx_get_subtree(fx, fx_root(fx)));
    r = scan_fx(fx, false);
    ck_assert_uint_eq(count_code(r, SCAN_PR_TREE_CYCLE), 1);
    scan_result_free(r);
    fx_free(fx);
}
END_TEST

/* Every path of want is in r, none of gone is. */
static void assert_paths(const struct scan_result *r, const char *const *want, size_t nwant,
                         const char *const *gone, size_t ngone)
{
    for (size_t i = 0; i < nwant; i++)
        ck_assert_msg(by_path(r, want[i]) != NULL, "no %s", want[i]);
    for (size_t i = 0; i < ngone; i++)
        ck_assert_msg(by_path(r, gone[i]) == NULL, "%s still there", gone[i]);
}

/* Rename an entry in place. */
static void rename_to(struct fx *fx, uint64_t blk, const char *name)
{
    struct lanyfs_entry e;
    fx_entry_get(fx, blk, &e);
    lanyfs_entry_set_name(&e, name, strlen(name));
    fx_entry_put(fx, blk, &e);
}

/* Set an entry's modified time: second s of 2013-05-03 02:00, nanoseconds ns. */
static void set_modified(struct fx *fx, uint64_t blk, unsigned sec, uint32_t ns)
{
    struct lanyfs_entry e;
    fx_entry_get(fx, blk, &e);
    e.modified = (struct lanyfs_ts){.year = 2013, .month = 5, .day = 3, .hour = 2,
                                    .minute = (uint8_t)(sec / 60), .second = (uint8_t)(sec % 60),
                                    .nsec = ns};
    fx_entry_put(fx, blk, &e);
}

/*
 * A rename caught halfway: directory sub (with a file) is the root of
 * /old's tree and also hangs in /new's tree, first reached through /old.
 * It stays where the disk says the rename took it: in /new when its
 * modified time is exactly /new's and /old's is older (the rename touched
 * both, and /old's write had not landed), or when its name breaks /old's
 * order and fits /new's; in /old when nothing tells, or when /old was
 * written after the time it shares with /new.
 */
START_TEST(tree_rename_halfway)
{
    uint8_t data[16] = {0};
    for (int variant = 0; variant < 4; variant++) {
        struct fx *fx = fx_new(10, 4, 200);
        ck_assert_ptr_nonnull(fx);
        uint64_t old = fx_mkdir(fx, fx_root(fx), "old"), nw = fx_mkdir(fx, fx_root(fx), "new");
        uint64_t m = fx_file(fx, old, "m", data, sizeof(data));
        uint64_t sub = fx_mkdir(fx, old, "x");
        uint64_t f = fx_file(fx, sub, "f.txt", data, sizeof(data));
        uint64_t n = fx_file(fx, nw, "n.txt", data, sizeof(data));
        ck_assert(old && nw && m && sub && f && n);
        /* 3: sub's time is /new's, from a rename into /new before, and /old
         * was written since: the target of a later rename whose own write
         * had not landed.  It stays in /old. */
        set_modified(fx, old, variant == 3 ? 180 : 60, variant == 3 ? 3 : 1);
        set_modified(fx, nw, 120, 2);
        set_modified(fx, sub, variant == 0 || variant == 3 ? 120 : 60,
                     variant == 0 || variant == 3 ? 2 : 1);
        ck_assert_uint_eq(fx_get_left(fx, m), sub);
        ck_assert_uint_eq(fx_get_subtree(fx, nw), n);
        if (variant == 2) {
            /* Named "a" now: right of m in /old (greater names left) it is
             * not, left of it it stays; in /new it is right of n.txt. */
            rename_to(fx, sub, "a");
            set_modified(fx, sub, 120, 2);
            set_modified(fx, old, 120, 2);
            fx_set_right(fx, fx_get_subtree(fx, nw), sub);
        } else {
            /* sub is /old's root, m hangs right of it; /new's n.txt links
             * it (left: greater).  m does not fit /new below it. */
            fx_set_subtree(fx, old, sub);
            fx_set_left(fx, m, 0);
            fx_set_right(fx, sub, m);
            fx_set_left(fx, n, sub);
        }
        struct scan_result *r = scan_fx(fx, false);
        const char *name = variant == 2 ? "a" : "x";
        const char *dir = variant == 1 || variant == 3 ? "/old" : "/new";
        char want[32], want_f[48], other[32];
        snprintf(want, sizeof(want), "%s/%s", dir, name);
        snprintf(want_f, sizeof(want_f), "%s/f.txt", want);
        snprintf(other, sizeof(other), "%s/%s", variant == 1 || variant == 3 ? "/new" : "/old",
                 name);
        const struct scan_entry *x = by_path(r, want);
        ck_assert_msg(x != NULL, "variant %d: no %s", variant, want);
        ck_assert_uint_eq(x->block, sub);
        ck_assert_ptr_null(by_path(r, other));
        const struct scan_entry *fe = by_path(r, want_f);
        ck_assert_msg(fe != NULL, "variant %d: no %s", variant, want_f);
        ck_assert_uint_eq(fe->parent, x->id);
        ck_assert_ptr_nonnull(by_path(r, "/old/m"));
        const struct scan_finding *fs;
        size_t nf = scan_findings(r, &fs), k = 0;
        for (size_t i = 0; i < nf; i++)
            if (fs[i].code == SCAN_PR_TREE_RENAME_HALFWAY ||
                fs[i].code == SCAN_PR_TREE_REACHED_TWICE) {
                ck_assert_str_eq(fs[i].path, want);
                k++;
            }
        ck_assert_uint_eq(k, 1);
        scan_result_free(r);
        fx_free(fx);
    }
}
END_TEST

/*
 * A rename whose insert into /a landed while the entry's own block did
 * not: n still has /b's tree below it (it was /b's root), and the walk
 * reaches /b's nodes first through /a.  n stays in /a (nothing tells
 * otherwise), but the nodes below it fit only /b's order (z breaks /a's
 * bound q), so they stay /b's, with their paths.
 */
START_TEST(tree_rename_links_stay)
{
    uint8_t data[16] = {0};
    struct fx *fx = fx_new(10, 4, 200);
    ck_assert_ptr_nonnull(fx);
    uint64_t a = fx_mkdir(fx, fx_root(fx), "a"), b = fx_mkdir(fx, fx_root(fx), "b");
    uint64_t n = fx_mkdir(fx, b, "n");
    uint64_t k = fx_file(fx, b, "k", data, sizeof(data)), z = fx_file(fx, b, "z", data, 4);
    uint64_t m = fx_mkdir(fx, b, "m");
    uint64_t f = fx_file(fx, m, "f.txt", data, sizeof(data));
    uint64_t q = fx_file(fx, a, "q", data, sizeof(data));
    ck_assert(a && b && n && k && z && m && f && q);
    ck_assert_uint_eq(fx_get_subtree(fx, b), n);
    ck_assert_uint_eq(fx_get_left(fx, n), z);
    ck_assert_uint_eq(fx_get_right(fx, n), k);
    fx_set_right(fx, q, n); /* the insert into /a */
    struct scan_result *r = scan_fx(fx, false);
    static const char *const want[] = {"/a/q", "/a/n", "/b/k", "/b/z", "/b/m", "/b/m/f.txt"};
    static const char *const gone[] = {"/a/k", "/a/z", "/a/m", "/a/m/f.txt", "/b/n"};
    assert_paths(r, want, sizeof(want) / sizeof(want[0]), gone, sizeof(gone) / sizeof(gone[0]));
    ck_assert_uint_eq(by_path(r, "/b/m/f.txt")->parent, by_path(r, "/b/m")->id);
    /* Nothing of the 2012 driver elsewhere: a rename cut off, not its mark. */
    ck_assert_uint_eq(count_code(r, SCAN_PR_TREE_RENAME_HALFWAY), 1);
    ck_assert_uint_eq(count_code(r, SCAN_PR_MARK_RENAME_TWO_TREES), 0);
    scan_result_free(r);
    /* A file with the no-exec attribute the driver gives its files: its mark. */
    struct lanyfs_entry e;
    fx_entry_get(fx, k, &e);
    e.attr |= LANYFS_ATTR_NOEXEC;
    fx_entry_put(fx, k, &e);
    r = scan_fx(fx, false);
    ck_assert_uint_eq(count_code(r, SCAN_PR_MARK_RENAME_TWO_TREES), 1);
    ck_assert_uint_eq(count_code(r, SCAN_PR_TREE_RENAME_HALFWAY), 0);
    scan_result_free(r);
    fx_free(fx);
}
END_TEST

/*
 * A rename of /b's n into /a, a directory made after everything in /b was
 * last changed, caught after /a's write (its tree: n) and before n's own
 * (its old links and time) or /b's.  Both trees reach n, /a's first, and
 * n's links, z and k, fit either order.  But n was last changed before /a
 * was made, so /a never held it: n, z and k are /b's.  With /a made
 * earlier, nothing tells, and the first reach keeps them all.
 */
START_TEST(tree_rename_by_age)
{
    uint8_t data[16] = {0};
    for (int later = 1; later >= 0; later--) {
        struct fx *fx = fx_new(10, 4, 200);
        ck_assert_ptr_nonnull(fx);
        uint64_t a = fx_mkdir(fx, fx_root(fx), "a"), b = fx_mkdir(fx, fx_root(fx), "b");
        uint64_t n = fx_mkdir(fx, b, "n");
        uint64_t z = fx_file(fx, b, "z", data, sizeof(data));
        uint64_t k = fx_file(fx, b, "k", data, sizeof(data));
        ck_assert(a && b && n && z && k);
        ck_assert_uint_eq(fx_get_subtree(fx, b), n);
        ck_assert_uint_eq(fx_get_left(fx, n), z);
        ck_assert_uint_eq(fx_get_right(fx, n), k);
        fx_set_subtree(fx, a, n); /* the insert into /a */
        struct lanyfs_entry e;
        fx_entry_get(fx, a, &e);
        e.created.year = (uint16_t)(e.created.year + later); /* made a year on */
        e.modified = e.created;
        fx_entry_put(fx, a, &e);
        struct scan_result *r = scan_fx(fx, false);
        static const char *const in_b[] = {"/b/n", "/b/z", "/b/k"};
        static const char *const in_a[] = {"/a/n", "/a/z", "/a/k"};
        if (later)
            assert_paths(r, in_b, 3, in_a, 3);
        else
            assert_paths(r, in_a, 3, in_b, 3);
        ck_assert_uint_eq(count_code(r, SCAN_PR_TREE_RENAME_HALFWAY), 1);
        scan_result_free(r);
        fx_free(fx);
    }
}
END_TEST

/*
 * A rename of /b's c into /a caught halfway, /a's block still naming a
 * freed entry as its tree's root (SPEC-9.12): through the freed node the
 * walk reaches /a's n, then c (inserted right of n), and below c, by c's
 * old links, /b's directory B1.  /b's live tree reaches c too.  A live
 * tree outranks a freed node's links: c and B1 (with its file) are /b's,
 * and n stays /a's.
 */
START_TEST(tree_stale_reach_yields)
{
    uint8_t data[16] = {0};
    struct fx *fx = fx_new(10, 4, 200);
    ck_assert_ptr_nonnull(fx);
    uint64_t a = fx_mkdir(fx, fx_root(fx), "a"), b = fx_mkdir(fx, fx_root(fx), "b");
    uint64_t n = fx_file(fx, a, "n", data, sizeof(data));
    uint64_t z = fx_file(fx, b, "z", data, sizeof(data));
    uint64_t c = fx_file(fx, b, "c", data, sizeof(data));
    uint64_t b1 = fx_mkdir(fx, b, "B1");
    uint64_t f = fx_file(fx, b1, "f.txt", data, sizeof(data));
    ck_assert(a && b && n && z && c && b1 && f);
    ck_assert_uint_eq(fx_get_subtree(fx, fx_root(fx)), a);
    ck_assert_uint_eq(fx_get_left(fx, a), b);
    ck_assert_uint_eq(fx_get_subtree(fx, b), z);
    ck_assert_uint_eq(fx_get_right(fx, z), c);
    ck_assert_uint_eq(fx_get_right(fx, c), b1);
    /* The freed root: an entry in a block the free list holds. */
    uint64_t freed = fx_blocks(fx) - 10;
    ck_assert(!fx_is_used(fx, freed));
    struct lanyfs_entry e;
    fx_entry_get(fx, n, &e);
    lanyfs_entry_set_name(&e, "m", 1);
    e.left = 0;
    e.right = n;
    fx_entry_put(fx, freed, &e);
    fx_set_subtree(fx, a, freed);
    fx_set_right(fx, n, c); /* the insert into /a landed */
    struct scan_result *r = scan_fx(fx, false);
    static const char *const want[] = {"/a/n", "/b/z", "/b/c", "/b/B1", "/b/B1/f.txt"};
    static const char *const gone[] = {"/a/c", "/a/B1", "/a/B1/f.txt"};
    assert_paths(r, want, sizeof(want) / sizeof(want[0]), gone, sizeof(gone) / sizeof(gone[0]));
    ck_assert_uint_eq(by_path(r, "/b/B1")->parent, by_path(r, "/b")->id);
    ck_assert_uint_eq(by_path(r, "/b/B1/f.txt")->parent, by_path(r, "/b/B1")->id);
    scan_result_free(r);
    fx_free(fx);
}
END_TEST

/*
 * File a, in the root's tree above directory Z (a's right) and m (a's
 * left), renamed into Z, caught halfway: the root's tree no longer holds
 * a (Z took its place), Z's tree does, and a's own block still has its
 * links from the root's tree.  Walking Z's tree, a links Z itself, so its
 * links are the root's: m, first reached through a, is the root's, with
 * what it holds.
 */
START_TEST(tree_rename_links_up)
{
    uint8_t data[16] = {0};
    struct fx *fx = fx_new(10, 4, 200);
    ck_assert_ptr_nonnull(fx);
    uint64_t root = fx_root(fx);
    uint64_t bb = fx_file(fx, root, "B", data, sizeof(data));
    uint64_t z = fx_mkdir(fx, root, "Z");
    uint64_t a = fx_file(fx, root, "a", data, sizeof(data));
    uint64_t m = fx_mkdir(fx, root, "m");
    uint64_t f = fx_file(fx, m, "f.txt", data, sizeof(data));
    uint64_t zz = fx_file(fx, z, "zz", data, sizeof(data));
    ck_assert(bb && z && a && m && f && zz);
    /* The root's tree after a left it: B, Z left of B, m left of Z. */
    uint64_t nodes[] = {bb, z, a, m};
    for (size_t i = 0; i < 4; i++) {
        fx_set_left(fx, nodes[i], 0);
        fx_set_right(fx, nodes[i], 0);
    }
    fx_set_subtree(fx, root, bb);
    fx_set_left(fx, bb, z);
    fx_set_left(fx, z, m);
    /* a's own block: its links in the root's tree before the rename. */
    fx_set_left(fx, a, m);
    fx_set_right(fx, a, z);
    /* Z's tree: zz, a right of it. */
    fx_set_subtree(fx, z, zz);
    fx_set_right(fx, zz, a);
    struct scan_result *r = scan_fx(fx, false);
    static const char *const want[] = {"/B", "/Z", "/Z/zz", "/Z/a", "/m", "/m/f.txt"};
    static const char *const gone[] = {"/Z/m", "/Z/m/f.txt", "/a"};
    assert_paths(r, want, sizeof(want) / sizeof(want[0]), gone, sizeof(gone) / sizeof(gone[0]));
    ck_assert_uint_eq(by_path(r, "/m")->parent, by_path(r, "/")->id);
    ck_assert_uint_eq(by_path(r, "/m/f.txt")->parent, by_path(r, "/m")->id);
    scan_result_free(r);
    fx_free(fx);
}
END_TEST

/* Three equal names in one directory, two in another, one name shared
 * across them: each directory's later equals are reported against the
 * one before, in the order of directory, then name, then discovery. */
START_TEST(tree_duplicate_names)
{
    struct fx *fx = fx_new(10, 4, 200);
    ck_assert_ptr_nonnull(fx);
    uint8_t data[16] = {0};
    uint64_t d1 = fx_mkdir(fx, fx_root(fx), "d1"), d2 = fx_mkdir(fx, fx_root(fx), "d2");
    uint64_t x[3], y[3];
    for (int i = 0; i < 3; i++) {
        char n[8];
        snprintf(n, sizeof(n), "x%d", i);
        x[i] = fx_file(fx, d1, n, data, sizeof(data));
        snprintf(n, sizeof(n), "y%d", i);
        y[i] = fx_file(fx, d2, n, data, sizeof(data));
        ck_assert(x[i] && y[i]);
    }
    rename_to(fx, x[1], "x0");
    rename_to(fx, x[2], "x0");
    rename_to(fx, y[1], "x0");  /* the same name as d1's, in another directory */
    rename_to(fx, y[2], "y0");
    struct scan_result *r = scan_fx(fx, false);
    const struct scan_finding *f;
    size_t n = scan_findings(r, &f), k = 0;
    const struct scan_finding *dup[4];
    for (size_t i = 0; i < n; i++)
        if (f[i].code == SCAN_PR_TREE_DUP_NAME) {
            ck_assert_uint_lt(k, 3);
            dup[k++] = &f[i];
        }
    ck_assert_uint_eq(k, 2 + 1);
    /* d1 first (found first), twice, each pair two of its three x0. */
    for (int i = 0; i < 2; i++) {
        ck_assert_str_eq(dup[i]->path, "/d1/x0");
        ck_assert_uint_ne(dup[i]->block, dup[i]->block2);
        for (int j = 0; j < 2; j++) {
            uint64_t b = j ? dup[i]->block2 : dup[i]->block;
            ck_assert(b == x[0] || b == x[1] || b == x[2]);
        }
    }
    /* A chain: the second finding's earlier entry is the first's later one. */
    ck_assert_uint_eq(dup[1]->block, dup[0]->block2);
    ck_assert_str_eq(dup[2]->path, "/d2/y0");
    ck_assert((dup[2]->block == y[0] && dup[2]->block2 == y[2]) ||
              (dup[2]->block == y[2] && dup[2]->block2 == y[0]));
    scan_result_free(r);
    fx_free(fx);
}
END_TEST

/* Among many names only the equal pair is reported: the table that keeps
 * the keys whose directory and hash another key shares (sc_tree_dups) fills
 * past its first size and wraps, and a name equal to one in another
 * directory is no duplicate. */
START_TEST(tree_duplicate_among_many)
{
    struct fx *fx = fx_new(9, 4, 2200);
    ck_assert_ptr_nonnull(fx);
    uint8_t data[1] = {0};
    uint64_t d = fx_mkdir(fx, fx_root(fx), "d"), e = fx_mkdir(fx, fx_root(fx), "e");
    uint64_t f[300];
    for (int i = 0; i < 300; i++) {
        char n[8];
        snprintf(n, sizeof(n), "f%03d", i);
        f[i] = fx_file(fx, d, n, data, 0);
        ck_assert(f[i] != 0);
    }
    ck_assert(fx_file(fx, e, "f007", data, 0) != 0); /* d has an f007 too */
    rename_to(fx, f[250], "f123");
    struct scan_result *r = scan_fx(fx, false);
    const struct scan_finding *fs;
    size_t n = scan_findings(r, &fs), k = 0;
    for (size_t i = 0; i < n; i++)
        if (fs[i].code == SCAN_PR_TREE_DUP_NAME) {
            k++;
            ck_assert_str_eq(fs[i].path, "/d/f123");
            ck_assert((fs[i].block == f[250] && fs[i].block2 == f[123]) ||
                      (fs[i].block == f[123] && fs[i].block2 == f[250]));
        }
    ck_assert_uint_eq(k, 1);
    scan_result_free(r);
    fx_free(fx);
}
END_TEST

/* Names are kept apart from the entries (scan_entry_fields): a name field
 * without a NUL keeps all 256 bytes, one with bytes after its NUL keeps
 * the bytes before it; each is NUL-terminated, and scan_entry_fields
 * gives the core's struct with the field NUL-padded. */
START_TEST(tree_names_kept)
{
    struct fx *fx = fx_new(10, 4, 200);
    ck_assert_ptr_nonnull(fx);
    uint8_t data[16] = {0};
    uint64_t full = fx_file(fx, fx_root(fx), "full", data, sizeof(data));
    uint64_t tail = fx_file(fx, fx_root(fx), "tail", data, sizeof(data));
    ck_assert(full && tail);
    memset(fx_block(fx, full) + LANYFS_EN_NAME, 'z', LANYFS_NAME_FIELD);
    uint8_t *tn = fx_block(fx, tail) + LANYFS_EN_NAME;
    memset(tn + 5, 'q', LANYFS_NAME_FIELD - 5); /* "tail\0" then garbage */
    struct scan_result *r = scan_fx(fx, false);
    const struct scan_entry *ents;
    size_t n = scan_entries(r, &ents);
    bool seen_full = false, seen_tail = false;
    for (size_t i = 0; i < n; i++) {
        const struct scan_entry *x = &ents[i];
        struct lanyfs_entry e;
        scan_entry_fields(x, &e);
        ck_assert_uint_eq(e.name_len, x->e.name_len);
        ck_assert_uint_eq(x->e.name[x->e.name_len], 0);
        if (x->block == full) {
            seen_full = true;
            ck_assert_uint_eq(x->e.name_len, LANYFS_NAME_FIELD);
            for (size_t k = 0; k < LANYFS_NAME_FIELD; k++)
                ck_assert_uint_eq(x->e.name[k], 'z');
            ck_assert(memcmp(e.name, x->e.name, LANYFS_NAME_FIELD) == 0);
        } else if (x->block == tail) {
            seen_tail = true;
            ck_assert_uint_eq(x->e.name_len, 4);
            ck_assert(memcmp(x->e.name, "tail", 5) == 0);
            for (size_t k = 4; k < LANYFS_NAME_FIELD; k++)
                ck_assert_uint_eq(e.name[k], 0);
        }
        ck_assert_uint_eq(e.size, x->e.size);
        ck_assert_uint_eq(e.subtree, x->e.subtree);
        ck_assert_uint_eq(e.type, x->e.type);
    }
    ck_assert(seen_full && seen_tail);
    ck_assert_uint_eq(count_code(r, SCAN_PR_TREE_NAME_NO_NUL), 1);
    scan_result_free(r);
    fx_free(fx);
}
END_TEST

/* ---- files ------------------------------------------------------------------ */

START_TEST(files_data_lists)
{
    struct fx *fx = fx_new(9, 8, 600);
    static uint8_t data[200 * 512];
    fx_pattern(data, sizeof(data), 1);
    uint64_t f = fx_file(fx, fx_root(fx), "big", data, sizeof(data) - 7);
    ck_assert_uint_ne(f, 0);
    struct scan_result *r = scan_fx(fx, false);
    const struct scan_entry *e = by_path(r, "/big");
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->blocks_needed, 200);
    ck_assert_uint_eq(e->blocks_mapped, 200);
    ck_assert_uint_eq(e->blocks_intact, 200);
    ck_assert_uint_eq(e->ndata, 200);
    for (uint64_t i = 0; i < 200; i++) {
        U_EQ(e->data[i], fx_file_dblk(fx, f, i, NULL, NULL));
        U_EQ(scan_blocks(r)[e->data[i]].cls, SCAN_BLK_DATA);
        U_EQ(scan_blocks(r)[e->data[i]].index, i);
    }
    assert_clean(r, "big file");
    scan_result_free(r);
    /* A hole: slot 3 of the first level-0 extender cleared (its block leaks). */
    uint64_t ext;
    uint32_t slot;
    fx_file_dblk(fx, f, 3, &ext, &slot);
    fx_ext_set_slot(fx, ext, slot, 0);
    r = scan_fx(fx, false);
    e = by_path(r, "/big");
    ck_assert_uint_eq(e->blocks_mapped, 199);
    ck_assert_uint_eq(e->data[3], 0);
    ck_assert_uint_eq(count_code(r, SCAN_PR_FILE_HOLES), 1);
    ck_assert_uint_eq(count_code(r, SCAN_PR_BLOCKS_LEAKED), 1);
    scan_result_free(r);
    fx_free(fx);
}
END_TEST

START_TEST(files_shared_block)
{
    struct tree t = small(9, 4, 300);
    fx_ext_set_slot(t.fx, fx_get_subtree(t.fx, t.b), 2, fx_file_dblk(t.fx, t.a, 0, NULL, NULL));
    struct scan_result *r = scan_fx(t.fx, false);
    ck_assert_uint_eq(count_code(r, SCAN_PR_BLOCK_SHARED), 1);
    const struct scan_entry *b = by_path(r, "/b.bin");
    ck_assert_uint_eq(b->blocks_mapped, 5);
    ck_assert_uint_eq(b->blocks_intact, 4);
    ck_assert(scan_blocks(r)[fx_file_dblk(t.fx, t.a, 0, NULL, NULL)].flags & SCAN_BF_SHARED);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/* ---- free list ---------------------------------------------------------------- */

START_TEST(free_list_counts)
{
    struct tree t = small(9, 4, 900);
    uint64_t chains = fx_freelist(t.fx);
    struct lanyfs_super sb;
    fx_super_get(t.fx, &sb);
    struct scan_result *r = scan_fx(t.fx, true);
    struct scan_summary s;
    scan_summarize(r, &s);
    ck_assert_uint_eq(s.by_class[SCAN_BLK_CHAIN], chains);
    ck_assert_uint_eq(s.free_listed, sb.freeblocks);
    ck_assert_uint_eq(s.by_class[SCAN_BLK_FREE] + chains, sb.freeblocks);
    assert_clean(r, "free list");
    scan_result_free(r);
    /* Listed twice: reported, and counted once. */
    uint8_t *c = fx_block(t.fx, sb.freehead);
    lanyfs_chain_set_slot(fx_geom(t.fx), c, 1, lanyfs_chain_slot(fx_geom(t.fx), c, 0));
    r = scan_fx(t.fx, true);
    ck_assert_uint_eq(count_code(r, SCAN_PR_FREE_LISTED_TWICE), 1);
    ck_assert_uint_eq(count_code(r, SCAN_PR_BLOCKS_LEAKED), 1);
    ck_assert_uint_eq(count_code(r, SCAN_PR_SB_FREEBLOCKS_WRONG), 1);
    scan_summarize(r, &s);
    ck_assert_uint_eq(s.free_listed, sb.freeblocks - 1);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/* ---- the writers: deleted entries, marks -------------------------------------- */

/* Format a 1 MiB image and mount it with the given writer. */
static struct lanyfs_writer *writer_image_sized(const char *path, enum lanyfs_write_mode mode,
                                                bool compat, unsigned blockbits, off_t bytes,
                                                struct lanyfs_fs **fs)
{
    struct lanyfs_image *img;
    struct lanyfs_error err;
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ftruncate(fileno(f), bytes), 0);
    fclose(f);
    ck_assert_int_eq(lanyfs_image_open(path, LANYFS_IMAGE_RDWR, &img, &err), LANYFS_OK);
    struct lanyfs_ts now;
    lanyfs_ts_from_time(&now, FX_TIME_EPOCH, 0, 0);
    struct lanyfs_format_opts o = {.blockbits = blockbits, .addrlen = 4, .label = "t",
                                   .label_len = 1, .compat2012 = compat, .now = &now};
    ck_assert_int_eq(lanyfs_format(img, &o, &err), LANYFS_OK);
    lanyfs_image_close(img);
    ck_assert_int_eq(lanyfs_fs_open(path, LANYFS_OPEN_RDWR, fs, &err), LANYFS_OK);
    struct lanyfs_writer *w;
    ck_assert_msg(lanyfs_writer_mount(*fs, mode, &w, &err) == LANYFS_OK, "%s", err.msg);
    lanyfs_writer_set_time(w, &now);
    return w;
}

static struct lanyfs_writer *writer_image(const char *path, enum lanyfs_write_mode mode,
                                          bool compat, struct lanyfs_fs **fs)
{
    return writer_image_sized(path, mode, compat, 9, 1 << 20, fs);
}

static void unmount(struct lanyfs_writer *w, struct lanyfs_fs *fs)
{
    struct lanyfs_error err;
    ck_assert_msg(lanyfs_writer_unmount(w, &err) == LANYFS_OK, "%s", err.msg);
    lanyfs_fs_close(fs);
}

START_TEST(sweep_deleted_file)
{
    char *path = u_tmpname();
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    static uint8_t data[20 * 512];
    fx_pattern(data, sizeof(data), 3);
    struct lanyfs_writer *w = writer_image(path, LANYFS_WRITE_CORRECT, false, &fs);
    ck_assert_int_eq(lanyfs_writer_mkdir(w, "/d", &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_writer_put(w, "/d/gone.bin", data, sizeof(data), NULL, &err),
                     LANYFS_OK);
    unmount(w, fs);
    struct scan_result *r = scan_path(path);
    const struct scan_entry *live = by_path(r, "/d/gone.bin");
    ck_assert_ptr_nonnull(live);
    uint64_t blocks[20];
    ck_assert_uint_eq(live->ndata, 20);
    memcpy(blocks, live->data, sizeof(blocks));
    scan_result_free(r);

    ck_assert_int_eq(lanyfs_fs_open(path, LANYFS_OPEN_RDWR, &fs, &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_writer_mount(fs, LANYFS_WRITE_CORRECT, &w, &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_writer_unlink(w, "/d/gone.bin", &err), LANYFS_OK);
    unmount(w, fs);
    r = scan_path(path);
    assert_clean(r, "after rm");
    ck_assert_uint_eq(count_code(r, SCAN_PR_DELETED_ENTRY), 1);
    const struct scan_entry *e;
    size_t n = scan_entries(r, &e);
    const struct scan_entry *del = NULL;
    for (size_t i = 0; i < n; i++)
        if (e[i].state == SCAN_ENTRY_DELETED)
            del = &e[i];
    ck_assert_ptr_nonnull(del);
    ck_assert_str_eq(del->path, "/gone.bin");
    ck_assert_uint_eq(del->blocks_needed, 20);
    ck_assert_uint_eq(del->blocks_intact, 20);
    ck_assert_uint_eq(del->ndata, 20);
    for (int i = 0; i < 20; i++)
        U_EQ(del->data[i], blocks[i]);
    ck_assert_uint_eq(scan_blocks(r)[del->block].cls, SCAN_BLK_DELETED);
    scan_result_free(r);
    unlink(path);
    free(path);
}
END_TEST

/*
 * The sweep reads only what the walks did not: on a tree of small files
 * (1 KiB blocks, so the torn checks need bytes) the scan reads the image
 * about once, not once for the walks and again for the sweep.
 */
START_TEST(sweep_reads_once)
{
    char *path = u_tmpname();
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    static uint8_t data[700];
    const off_t bytes = 4 << 20;
    fx_pattern(data, sizeof(data), 5);
    struct lanyfs_writer *w =
        writer_image_sized(path, LANYFS_WRITE_CORRECT, false, 10, bytes, &fs);
    for (int d = 0; d < 3; d++) {
        char name[64];
        snprintf(name, sizeof(name), "/d%d", d);
        ck_assert_int_eq(lanyfs_writer_mkdir(w, name, &err), LANYFS_OK);
        for (int i = 0; i < 300; i++) {
            snprintf(name, sizeof(name), "/d%d/f%03d", d, i);
            ck_assert_msg(lanyfs_writer_put(w, name, data, sizeof(data), NULL, &err) ==
                              LANYFS_OK, "%s", err.msg);
        }
    }
    unmount(w, fs);
    struct scan_result *r = scan_path(path);
    assert_clean(r, "small files");
    struct scan_summary s;
    scan_summarize(r, &s);
    ck_assert_uint_eq(s.files, 900);
    uint64_t got = scan_bytes_read(r);
    ck_assert_msg(got >= (uint64_t)bytes && got <= (uint64_t)bytes + bytes / 20,
                  "read %" PRIu64 " bytes of a %lld-byte image", got, (long long)bytes);
    scan_result_free(r);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(sweep_orphans)
{
    struct tree t = small(9, 4, 300);
    uint8_t data[700];
    fx_pattern(data, sizeof(data), 2);
    uint64_t lost = fx_mkdir(t.fx, t.docs, "lost");
    ck_assert_uint_ne(fx_file(t.fx, lost, "in.txt", data, sizeof(data)), 0);
    ck_assert_uint_ne(fx_mkdir(t.fx, lost, "deeper"), 0);
    fx_set_subtree(t.fx, t.docs, 0); /* one.txt and lost drop out */
    struct scan_result *r = scan_fx(t.fx, false);
    ck_assert_uint_eq(count_code(r, SCAN_PR_ORPHAN_ENTRY), 2); /* /one.txt and /lost */
    const struct scan_entry *in = by_path(r, "/lost/in.txt");
    ck_assert_ptr_nonnull(in);
    ck_assert_int_eq(in->state, SCAN_ENTRY_ORPHAN);
    ck_assert_uint_eq(in->parent, by_path(r, "/lost")->id);
    ck_assert_uint_eq(in->blocks_mapped, 2);
    ck_assert_ptr_nonnull(by_path(r, "/lost/deeper"));
    ck_assert_uint_eq(count_code(r, SCAN_PR_BLOCKS_LEAKED), 0);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/* /docs/lost/in.txt of n blocks of pattern data (seed): the file's entry
 * block.  /docs's tree is cut by the caller, orphaning /docs/lost. */
static uint64_t lost_file(struct tree *t, unsigned n, uint32_t seed)
{
    uint8_t data[3 * 512];
    ck_assert_uint_le(n, 3);
    uint32_t bs = fx_blocksize(t->fx);
    ck_assert_uint_eq(bs, 512);
    fx_pattern(data, sizeof(data), seed);
    uint64_t lost = fx_mkdir(t->fx, t->docs, "lost");
    uint64_t in = fx_file(t->fx, lost, "in.txt", data, (size_t)n * bs);
    ck_assert(lost && in);
    return in;
}

/* The orphaned /lost/in.txt after the scan: it maps n blocks, block blk at k. */
static const struct scan_entry *lost_maps(struct scan_result *r, uint64_t n, uint64_t k,
                                          uint64_t blk)
{
    const struct scan_entry *e = by_path(r, "/lost/in.txt");
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->state, SCAN_ENTRY_ORPHAN);
    ck_assert_uint_eq(e->blocks_mapped, n);
    U_EQ(e->data[k], blk);
    U_EQ(scan_blocks(r)[blk].owner, e->id);
    return e;
}

/* A live file's slot past its size that names an orphan's data block: the
 * bytes past a size are none of the file's, so the orphan keeps the block. */
START_TEST(sweep_orphan_past_size)
{
    struct tree t = small(9, 4, 300);
    uint64_t in = lost_file(&t, 2, 3);
    uint64_t taken = fx_file_dblk(t.fx, in, 0, NULL, NULL);
    fx_set_subtree(t.fx, t.docs, 0);
    fx_set_size(t.fx, t.b, 512); /* b.bin: file blocks 1 and 2 past its size */
    fx_ext_set_slot(t.fx, fx_get_subtree(t.fx, t.b), 2, taken);
    struct scan_result *r = scan_fx(t.fx, false);
    lost_maps(r, 2, 0, taken);
    ck_assert_uint_eq(count_code(r, SCAN_PR_FILE_SIZE_EXCESS), 1);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/* An orphaned file's data block that still reads as an old entry is the
 * file's data, and the entries after the one taken back keep dense ids. */
START_TEST(sweep_orphan_data_entry)
{
    struct tree t = small(9, 4, 300);
    uint32_t bs = fx_blocksize(t.fx);
    uint64_t in = lost_file(&t, 2, 4);
    uint64_t old = fx_entry_new(t.fx, LANYFS_TYPE_FILE, "old.txt", 7);
    ck_assert_uint_ne(old, 0);
    uint64_t d1 = fx_file_dblk(t.fx, in, 1, NULL, NULL);
    ck_assert_uint_lt(d1, old); /* the copy is met first: the entry after it moves down */
    memcpy(fx_block(t.fx, d1), fx_block(t.fx, old), bs);
    fx_set_subtree(t.fx, t.docs, 0); /* one.txt and lost drop out */
    struct scan_result *r = scan_fx(t.fx, false);
    lost_maps(r, 2, 1, d1);
    /* one.txt, lost and the entry at its own block; not its copy in in.txt */
    ck_assert_uint_eq(count_code(r, SCAN_PR_ORPHAN_ENTRY), 3);
    const struct scan_entry *o = by_path(r, "/old.txt");
    ck_assert_ptr_nonnull(o);
    U_EQ(o->block, old);
    U_EQ(scan_blocks(r)[old].owner, o->id);
    const struct scan_entry *all;
    size_t n = scan_entries(r, &all);
    for (size_t i = 0; i < n; i++) {
        U_EQ(all[i].id, i + 1);
        U_EQ(scan_blocks(r)[all[i].block].owner, all[i].id);
    }
    const struct scan_finding *f;
    size_t nf = scan_findings(r, &f);
    for (size_t i = 0; i < nf; i++)
        if (f[i].code == SCAN_PR_ORPHAN_ENTRY)
            U_EQ(scan_entry_by_id(r, f[i].entry)->block, f[i].block);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/* The old entry's own links are stale: its data pointer names an entry,
 * and its right link an entry its directory links too.  It is still the
 * file's data. */
START_TEST(sweep_orphan_data_entry_stale_links)
{
    struct tree t = small(9, 4, 300);
    uint32_t bs = fx_blocksize(t.fx);
    uint64_t in = lost_file(&t, 2, 6);
    uint64_t old = fx_entry_new(t.fx, LANYFS_TYPE_FILE, "old.txt", 7);
    ck_assert_uint_ne(old, 0);
    fx_set_subtree(t.fx, old, fx_get_subtree(t.fx, t.docs)); /* an entry, not an extender */
    fx_set_right(t.fx, old, in);
    uint64_t d1 = fx_file_dblk(t.fx, in, 1, NULL, NULL);
    memcpy(fx_block(t.fx, d1), fx_block(t.fx, old), bs);
    fx_set_subtree(t.fx, t.docs, 0);
    struct scan_result *r = scan_fx(t.fx, false);
    lost_maps(r, 2, 1, d1);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/* Two old entries in one orphaned file's data, one linking the other and
 * the other's data pointer naming a block of the file: old entries of one
 * deleted tree do not keep one another entries. */
START_TEST(sweep_orphan_data_entries_linked)
{
    struct tree t = small(9, 4, 300);
    uint32_t bs = fx_blocksize(t.fx);
    uint64_t in = lost_file(&t, 3, 7);
    uint64_t oa = fx_entry_new(t.fx, LANYFS_TYPE_FILE, "olda.txt", 8);
    uint64_t ob = fx_entry_new(t.fx, LANYFS_TYPE_FILE, "oldb.txt", 8);
    ck_assert(oa && ob);
    uint64_t d[3];
    for (int k = 0; k < 3; k++)
        d[k] = fx_file_dblk(t.fx, in, (uint64_t)k, NULL, NULL);
    fx_set_left(t.fx, oa, d[2]);    /* olda links oldb's copy */
    fx_set_subtree(t.fx, ob, d[0]); /* oldb's data pointer: in.txt's first block */
    memcpy(fx_block(t.fx, d[1]), fx_block(t.fx, oa), bs);
    memcpy(fx_block(t.fx, d[2]), fx_block(t.fx, ob), bs);
    memset(fx_block(t.fx, oa), 0, bs);
    memset(fx_block(t.fx, ob), 0, bs);
    fx_set_subtree(t.fx, t.docs, 0);
    struct scan_result *r = scan_fx(t.fx, false);
    lost_maps(r, 3, 1, d[1]);
    lost_maps(r, 3, 2, d[2]);
    ck_assert_ptr_null(by_path(r, "/olda.txt"));
    ck_assert_ptr_null(by_path(r, "/oldb.txt"));
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/*
 * /lost/in.txt orphaned with an old entry, olda.txt, in its data block 1,
 * whose sibling link names the other entry below /docs (cut: after that
 * entry's own link to it is cleared, so that only olda.txt links it).  The
 * scan must take olda.txt for the file's data; *other receives the
 * sibling's block.
 */
static struct scan_result *old_entry_links_sibling(struct tree *t, uint32_t seed, bool cut,
                                                   uint64_t *other)
{
    uint32_t bs = fx_blocksize(t->fx);
    uint64_t in = lost_file(t, 3, seed);
    uint64_t topblk = fx_get_subtree(t->fx, t->docs);
    struct lanyfs_entry top;
    fx_entry_get(t->fx, topblk, &top);
    *other = top.left ? top.left : top.right;
    ck_assert_uint_ne(*other, 0);
    if (cut) {
        fx_set_left(t->fx, topblk, 0);
        fx_set_right(t->fx, topblk, 0);
    }
    uint64_t oa = fx_entry_new(t->fx, LANYFS_TYPE_FILE, "olda.txt", 8);
    ck_assert(oa);
    uint64_t d1 = fx_file_dblk(t->fx, in, 1, NULL, NULL);
    if (cut)
        fx_set_right(t->fx, oa, *other);
    else
        fx_set_left(t->fx, oa, *other);
    memcpy(fx_block(t->fx, d1), fx_block(t->fx, oa), bs);
    memset(fx_block(t->fx, oa), 0, bs);
    fx_set_subtree(t->fx, t->docs, 0);
    struct scan_result *r = scan_fx(t->fx, false);
    lost_maps(r, 3, 1, d1);
    ck_assert_ptr_null(by_path(r, "/olda.txt"));
    return r;
}

/* The sibling is linked by its own orphaned tree as well: the old entry's
 * link is stale (correct:485 state 9622, /old83 damaged). */
START_TEST(sweep_orphan_data_entry_links_other_tree)
{
    struct tree t = small(9, 4, 300);
    uint64_t other;
    scan_result_free(old_entry_links_sibling(&t, 9, false, &other));
    fx_free(t.fx);
}
END_TEST

/* Only the old entry links the sibling (the parent that linked it is
 * damaged): sibling links of an old entry are stale all the same, and the
 * sibling comes out as an orphan of its own (correct:497 state 6547, /m5
 * damaged). */
START_TEST(sweep_orphan_data_entry_sibling_link)
{
    struct tree t = small(9, 4, 300);
    uint64_t other;
    struct scan_result *r = old_entry_links_sibling(&t, 11, true, &other);
    ck_assert_int_eq(scan_blocks(r)[other].cls, SCAN_BLK_ORPHAN);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

START_TEST(marks_driver_writer)
{
    char *path = u_tmpname();
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    static uint8_t data[300 * 512];
    fx_pattern(data, sizeof(data), 4);
    for (int compat = 0; compat < 2; compat++) {
        struct lanyfs_writer *w = writer_image(path, LANYFS_WRITE_DRIVER2012, compat, &fs);
        ck_assert_int_eq(lanyfs_writer_mkdir(w, "/d", &err), LANYFS_OK);
        ck_assert_int_eq(lanyfs_writer_put(w, "/d/f", data, 40 * 512, NULL, &err), LANYFS_OK);
        ck_assert_int_eq(lanyfs_writer_put(w, "/g", data, 100 * 512, NULL, &err), LANYFS_OK);
        unmount(w, fs);
        ck_assert_int_eq(lanyfs_fs_open(path, LANYFS_OPEN_RDWR, &fs, &err), LANYFS_OK);
        ck_assert_int_eq(lanyfs_writer_mount(fs, LANYFS_WRITE_DRIVER2012, &w, &err), LANYFS_OK);
        ck_assert_int_eq(lanyfs_writer_unlink(w, "/d/f", &err), LANYFS_OK);
        ck_assert_int_eq(lanyfs_writer_unlink(w, "/g", &err), LANYFS_OK);
        unmount(w, fs);
        struct scan_result *r = scan_path(path);
        const struct scan_finding *f;
        size_t n = scan_findings(r, &f);
        for (size_t i = 0; i < n; i++) {
            const struct scan_problem_info *p = scan_problem_lookup(f[i].code);
            ck_assert_msg(p->severity == SCAN_SEV_INFO || (p->flags & SCAN_PF_DRIVER),
                          "driver image: %s", p->name);
        }
        ck_assert_uint_eq(count_code(r, SCAN_PR_MARK_EXTENDER_LEAK), 1);
        ck_assert_uint_eq(count_code(r, SCAN_PR_DELETED_ENTRY), 2);
        if (compat)
            ck_assert_uint_eq(count_code(r, SCAN_PR_MARK_LAST_SLOT_LEAK), 1);
        ck_assert_uint_ge(count_code(r, SCAN_PR_MARK_FREELIST_CUT) +
                              count_code(r, SCAN_PR_MARK_UNCOUNTED_PUSH),
                          1);
        struct scan_summary s;
        scan_summarize(r, &s);
        ck_assert_uint_eq(s.by_class[SCAN_BLK_ORPHAN_EXT], 2);
        const struct scan_block *m = scan_blocks(r);
        for (uint64_t b = 0; b < scan_block_count(r); b++)
            if (m[b].cls == SCAN_BLK_LEAKED || m[b].cls == SCAN_BLK_ORPHAN_EXT)
                U_ASSERT(m[b].flags & SCAN_BF_DRIVER, "block %llu leaked without a mark",
                         (unsigned long long)b);
        scan_result_free(r);
    }
    unlink(path);
    free(path);
}
END_TEST

START_TEST(counters_torn_chain)
{
    struct tree t = small(9, 4, 300);
    fx_freelist(t.fx);
    struct lanyfs_super sb;
    fx_super_get(t.fx, &sb);
    const struct lanyfs_geom *g = fx_geom(t.fx);
    uint8_t *c = fx_block(t.fx, sb.freehead);
    uint64_t s0 = lanyfs_chain_slot(g, c, 0), s1 = lanyfs_chain_slot(g, c, 1);
    lanyfs_chain_set_slot(g, c, 0, s1);
    lanyfs_chain_set_slot(g, c, 1, s0);
    /* Two slots off the fixture's rising run: a formatter block needs 1 + 2 writes. */
    lanyfs_put16(c + LANYFS_HDR_WRCNT, 3);
    struct scan_result *r = scan_fx(t.fx, true);
    ck_assert_uint_eq(count_code(r, SCAN_PR_TORN_CHAIN_COUNTER), 0);
    scan_result_free(r);
    lanyfs_put16(c + LANYFS_HDR_WRCNT, 1);
    r = scan_fx(t.fx, true);
    ck_assert_uint_eq(count_code(r, SCAN_PR_TORN_CHAIN_COUNTER), 1);
    ck_assert(scan_blocks(r)[sb.freehead].flags & SCAN_BF_TORN);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/* ---- progress, cancel, robustness ------------------------------------------ */

struct prog {
    unsigned seen;       /* bit per phase */
    int cancel_at;       /* phase at which to cancel, -1 never */
    volatile int *flag;  /* the cancel flag */
};

static void on_progress(void *ctx, enum scan_phase phase, uint64_t done, uint64_t total)
{
    struct prog *p = ctx;
    p->seen |= 1u << phase;
    ck_assert(total == 0 || done <= total);
    if ((int)phase == p->cancel_at)
        *p->flag = 1;
}

START_TEST(progress_and_cancel)
{
    struct tree t = small(9, 4, 300);
    char *path = u_tmpname();
    ck_assert_int_eq(fx_save(t.fx, path), 0);
    volatile int flag = 0;
    struct prog p = {0, -1, &flag};
    struct scan_opts o = {on_progress, &p, &flag};
    struct scan_result *r;
    struct lanyfs_error err;
    ck_assert_int_eq(scan_image(path, &o, &r, &err), LANYFS_OK);
    for (int ph = SCAN_PHASE_SUPER; ph <= SCAN_PHASE_DONE; ph++)
        ck_assert_msg(p.seen & (1u << ph), "phase %d never reported", ph);
    scan_result_free(r);
    for (int ph = SCAN_PHASE_SUPER; ph < SCAN_PHASE_DONE; ph++) {
        flag = 0;
        p = (struct prog){0, ph, &flag};
        r = (struct scan_result *)1;
        ck_assert_int_eq(scan_image(path, &o, &r, &err), LANYFS_E_INVAL);
        ck_assert_ptr_null(r);
        ck_assert(u_contains(err.msg, "cancel"));
    }
    ck_assert_int_ne(scan_image("/nonexistent/image", NULL, &r, &err), LANYFS_OK);
    unlink(path);
    free(path);
    fx_free(t.fx);
}
END_TEST

/*
 * The image cut short after the scan opened it (another program, a file
 * on a failing disk): the windowed reads of the walks fail on the short
 * window, and the blocks before the cut are still read one by one, while
 * the first block past it is named in the finding.
 */
struct cut {
    const char *path;  /* the image */
    off_t at;          /* its new length */
    bool done;         /* cut already */
};

static void cut_on_progress(void *ctx, enum scan_phase phase, uint64_t done, uint64_t total)
{
    struct cut *c = ctx;
    (void)done;
    (void)total;
    if (phase == SCAN_PHASE_FREE && !c->done) {
        ck_assert_int_eq(truncate(c->path, c->at), 0);
        c->done = true;
    }
}

START_TEST(image_cut_while_scanning)
{
    struct tree t = small(10, 4, 400);
    char *path = u_tmpname();
    ck_assert_int_eq(fx_save(t.fx, path), 0);
    ck_assert_uint_lt(t.b, 64); /* the cut falls inside the first window of 64 blocks */
    struct cut c = {path, (off_t)t.b * 1024, false};
    struct scan_opts o = {cut_on_progress, &c, NULL};
    struct scan_result *r = NULL;
    struct lanyfs_error err;
    ck_assert_int_eq(scan_image(path, &o, &r, &err), LANYFS_OK);
    ck_assert(c.done);
    ck_assert_ptr_nonnull(by_path(r, "/docs/one.txt"));
    ck_assert_ptr_nonnull(by_path(r, "/a.txt"));
    ck_assert_ptr_null(by_path(r, "/b.bin"));
    const struct scan_finding *f;
    size_t n = scan_findings(r, &f), named = 0;
    for (size_t i = 0; i < n; i++)
        named += f[i].code == SCAN_PR_TREE_UNREADABLE && f[i].block == t.b;
    ck_assert_uint_eq(named, 1);
    ck_assert_uint_gt(count_code(r, SCAN_PR_BLOCK_UNREADABLE), 0);
    const struct scan_block *m = scan_blocks(r);
    ck_assert_uint_eq(m[t.a].cls, SCAN_BLK_FILE);
    ck_assert_uint_eq(m[t.b].cls, SCAN_BLK_UNREADABLE);
    scan_result_free(r);
    unlink(path);
    free(path);
    fx_free(t.fx);
}
END_TEST

/* Random bytes over the used part of small images: never a failed scan, never a crash. */
START_TEST(random_damage)
{
    struct u_rng rng = {42};
    for (int round = 0; round < 120; round++) {
        unsigned bits = 9 + (unsigned)u_below(&rng, 4), alen = 1 + (unsigned)u_below(&rng, 8);
        struct tree t = small(bits, alen, 64 + u_below(&rng, 100));
        fx_freelist(t.fx);
        size_t len = fx_image_size(t.fx);
        uint8_t *img = fx_image(t.fx);
        int hits = 1 + (int)u_below(&rng, 40);
        for (int h = 0; h < hits; h++) {
            size_t at = (size_t)u_below(&rng, len < 8 * 4096 ? len : 8 * 4096);
            img[at] = (uint8_t)u_rand(&rng);
        }
        struct scan_result *r = scan_fx(t.fx, true);
        struct scan_summary s;
        scan_summarize(r, &s);
        const struct scan_finding *f;
        size_t n = scan_findings(r, &f);
        for (size_t i = 0; i < n; i++) {
            char *m = scan_finding_message(&f[i]);
            U_ASSERT(m != NULL, "no message");
            free(m);
        }
        scan_result_free(r);
        fx_free(t.fx);
    }
}
END_TEST

/* The file entry at blk as written back with no data pointer and size 0,
 * its counter set to wrcnt: its tree and data left unlinked. */
static void unlink_data(struct fx *fx, uint64_t blk, uint16_t wrcnt)
{
    struct lanyfs_entry e;
    fx_entry_get(fx, blk, &e);
    e.subtree = 0;
    e.size = 0;
    e.wrcnt = wrcnt;
    fx_entry_put(fx, blk, &e);
}

/*
 * A write cut short (SPEC-§8, §10): b.bin's tree and data landed, its data
 * pointer and size did not.  Its tree, the block after its entry, is
 * named as its data with the size its data shows; wiped, the entry leaves
 * a tree no file links.  Either way the blocks are the tree's, in order,
 * and no leak is reported for them.
 */
START_TEST(lost_trees)
{
    for (int wiped = 0; wiped < 2; wiped++) {
        struct tree t = small(9, 4, 300);
        uint32_t bs = fx_blocksize(t.fx);
        uint64_t top = fx_get_subtree(t.fx, t.b);
        ck_assert_uint_eq(top, t.b + 1);
        uint64_t want[5];
        for (uint32_t i = 0; i < 5; i++)
            want[i] = fx_ext_get_slot(t.fx, top, i);
        /* The pattern's last byte is not zero, so the size comes back whole. */
        ck_assert_uint_ne(fx_block(t.fx, want[4])[bs - 2], 0);
        if (wiped) {
            memset(fx_block(t.fx, t.b), 0, bs);
        } else {
            unlink_data(t.fx, t.b, 0);
        }
        struct scan_result *r = scan_fx(t.fx, false);
        const struct scan_lost_tree *lt;
        ck_assert_uint_eq(scan_lost_trees(r, &lt), 1);
        ck_assert_uint_eq(lt->top, top);
        ck_assert_uint_eq(lt->ndata, 5);
        ck_assert_uint_eq(lt->mapped, 5);
        ck_assert_uint_eq(lt->size, 5 * bs - 1);
        ck_assert_uint_eq(lt->nexts, 1);
        ck_assert_uint_eq(lt->exts[0], top);
        for (uint32_t i = 0; i < 5; i++)
            ck_assert_uint_eq(lt->data[i], want[i]);
        const struct scan_entry *b = by_path(r, "/b.bin");
        if (wiped) {
            ck_assert_ptr_null(b);
            ck_assert_uint_eq(lt->entry, 0);
            ck_assert_uint_eq(count_code(r, SCAN_PR_LOST_DATA_TREE), 1);
            ck_assert_uint_eq(count_code(r, SCAN_PR_UNLINKED_FILE_DATA), 0);
        } else {
            ck_assert_ptr_nonnull(b);
            ck_assert_uint_eq(lt->entry, b->id);
            ck_assert_ptr_eq(scan_lost_tree_of(r, b->id), lt);
            ck_assert_uint_eq(count_code(r, SCAN_PR_UNLINKED_FILE_DATA), 1);
            ck_assert_uint_eq(count_code(r, SCAN_PR_LOST_DATA_TREE), 0);
            ck_assert_uint_eq(count_code(r, SCAN_PR_BLOCKS_LEAKED), 0);
        }
        ck_assert_uint_eq(count_code(r, SCAN_PR_MARK_EXTENDER_LEAK), 0);
        const struct scan_block *m = scan_blocks(r);
        ck_assert_uint_eq(m[top].cls, SCAN_BLK_ORPHAN_EXT);
        for (uint32_t i = 0; i < 5; i++)
            ck_assert_uint_eq(m[want[i]].cls, SCAN_BLK_LEAKED);
        scan_result_free(r);
        fx_free(t.fx);
    }
}
END_TEST

/*
 * b.bin's tree emptied and unlinked, its entry written back since (counter
 * 3): an orphan extender that maps nothing, as a delete cut between its
 * writes leaves it.  With no other sign of the 2012 driver it is a leaked
 * block like its data; once a file carries the driver's no-exec
 * attribute, it is the driver's extender leak (SPEC-9.4).
 */
START_TEST(extender_leak_needs_driver)
{
    for (int noexec = 0; noexec < 2; noexec++) {
        struct tree t = small(9, 4, 300);
        uint64_t top = fx_get_subtree(t.fx, t.b);
        for (uint32_t i = 0; i < fx_geom(t.fx)->extmax; i++)
            fx_ext_set_slot(t.fx, top, i, 0);
        unlink_data(t.fx, t.b, 3);
        if (noexec) {
            struct lanyfs_entry e;
            fx_entry_get(t.fx, t.a, &e);
            e.attr |= LANYFS_ATTR_NOEXEC;
            fx_entry_put(t.fx, t.a, &e);
        }
        struct scan_result *r = scan_fx(t.fx, false);
        ck_assert_uint_eq(count_code(r, SCAN_PR_MARK_EXTENDER_LEAK), (unsigned)noexec);
        ck_assert_uint_eq(count_code(r, SCAN_PR_BLOCKS_LEAKED), 1);
        const struct scan_block *m = scan_blocks(r);
        ck_assert_uint_eq(m[top].cls, SCAN_BLK_ORPHAN_EXT);
        ck_assert_uint_eq((m[top].flags & SCAN_BF_DRIVER) != 0, (unsigned)noexec);
        if (!noexec) {
            const struct scan_finding *f;
            size_t n = scan_findings(r, &f);
            for (size_t i = 0; i < n; i++)
                ck_assert_msg(!(scan_problem_lookup(f[i].code)->flags & SCAN_PF_DRIVER),
                              "no driver here: %s", scan_problem_lookup(f[i].code)->name);
        }
        scan_result_free(r);
        fx_free(t.fx);
    }
}
END_TEST

/*
 * The write of lost_trees whose last data blocks never landed (they read
 * as zeros): the tree ends at the last block that holds data, and the
 * zero blocks stay leaked.  With no block of data at all there is no tree
 * to keep: its blocks are leaked, and b.bin keeps its size 0.
 */
START_TEST(lost_tree_zero_tail)
{
    for (uint32_t keep = 0; keep < 5; keep += 3) {
        struct tree t = small(9, 4, 300);
        uint32_t bs = fx_blocksize(t.fx);
        uint64_t top = fx_get_subtree(t.fx, t.b);
        uint64_t want[5];
        for (uint32_t i = 0; i < 5; i++)
            want[i] = fx_ext_get_slot(t.fx, top, i);
        for (uint32_t i = keep; i < 5; i++)
            memset(fx_block(t.fx, want[i]), 0, bs);
        unlink_data(t.fx, t.b, 0);
        struct scan_result *r = scan_fx(t.fx, false);
        const struct scan_lost_tree *lt;
        const struct scan_block *m = scan_blocks(r);
        if (keep == 0) {
            ck_assert_uint_eq(scan_lost_trees(r, &lt), 0);
            ck_assert_uint_eq(count_code(r, SCAN_PR_UNLINKED_FILE_DATA), 0);
            ck_assert_uint_eq(count_code(r, SCAN_PR_LOST_DATA_TREE), 0);
            ck_assert_uint_eq(count_code(r, SCAN_PR_BLOCKS_LEAKED), 1);
        } else {
            ck_assert_uint_eq(scan_lost_trees(r, &lt), 1);
            ck_assert_uint_eq(lt->ndata, keep);
            ck_assert_uint_eq(lt->mapped, keep);
            ck_assert_uint_gt(lt->size, (keep - 1) * bs);
            ck_assert_uint_le(lt->size, keep * bs);
            ck_assert_uint_eq(count_code(r, SCAN_PR_UNLINKED_FILE_DATA), 1);
            ck_assert_uint_eq(count_code(r, SCAN_PR_BLOCKS_LEAKED), 1);
        }
        const struct scan_entry *b = by_path(r, "/b.bin");
        ck_assert_ptr_nonnull(b);
        ck_assert_uint_eq(b->e.size, 0);
        for (uint32_t i = keep; i < 5; i++)
            ck_assert_uint_eq(m[want[i]].cls, SCAN_BLK_LEAKED);
        scan_result_free(r);
        fx_free(t.fx);
    }
}
END_TEST

/*
 * The same tree after b.bin's entry was written back with no data pointer
 * and size 0 (counter 3): a file emptied since, whose old tree's frees did
 * not land, looks so.  Pairing would give it back data it dropped, so the
 * tree stays a lost one and the entry keeps its size 0.
 */
START_TEST(lost_tree_not_paired_after_writeback)
{
    struct tree t = small(9, 4, 300);
    uint64_t top = fx_get_subtree(t.fx, t.b);
    ck_assert_uint_eq(top, t.b + 1);
    unlink_data(t.fx, t.b, 3);
    struct scan_result *r = scan_fx(t.fx, false);
    const struct scan_lost_tree *lt;
    ck_assert_uint_eq(scan_lost_trees(r, &lt), 1);
    ck_assert_uint_eq(lt->top, top);
    ck_assert_uint_eq(lt->entry, 0);
    const struct scan_entry *b = by_path(r, "/b.bin");
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_null(scan_lost_tree_of(r, b->id));
    ck_assert_uint_eq(count_code(r, SCAN_PR_LOST_DATA_TREE), 1);
    ck_assert_uint_eq(count_code(r, SCAN_PR_UNLINKED_FILE_DATA), 0);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

/*
 * The lost tree of lost_trees, with an old extender below its top (in
 * the wiped entry's block: a block handed out again) that names three of
 * its data blocks and the data of one.txt and a.txt.  The real tree keeps
 * all five blocks; the old extender is no tree.  Before, tops were taken
 * in block order, so the old one took the three and left two.
 */
START_TEST(lost_tree_before_old_extender)
{
    struct tree t = small(9, 4, 300);
    uint64_t top = fx_get_subtree(t.fx, t.b);
    ck_assert_uint_eq(top, t.b + 1);
    uint64_t want[5];
    for (uint32_t i = 0; i < 5; i++)
        want[i] = fx_ext_get_slot(t.fx, top, i);
    uint8_t *e = fx_block(t.fx, t.b);
    memset(e, 0, fx_blocksize(t.fx));
    e[LANYFS_HDR_TYPE] = LANYFS_TYPE_EXT;
    for (uint32_t k = 0; k < 3; k++)
        fx_ext_set_slot(t.fx, t.b, k, want[k]);
    fx_ext_set_slot(t.fx, t.b, 3, fx_file_dblk(t.fx, t.one, 0, NULL, NULL));
    fx_ext_set_slot(t.fx, t.b, 4, fx_file_dblk(t.fx, t.a, 0, NULL, NULL));
    struct scan_result *r = scan_fx(t.fx, false);
    const struct scan_lost_tree *lt;
    ck_assert_uint_eq(scan_lost_trees(r, &lt), 1);
    ck_assert_uint_eq(lt->top, top);
    ck_assert_uint_eq(lt->mapped, 5);
    for (uint32_t i = 0; i < 5; i++)
        ck_assert_uint_eq(lt->data[i], want[i]);
    ck_assert_uint_eq(count_code(r, SCAN_PR_LOST_DATA_TREE), 1);
    const struct scan_block *m = scan_blocks(r);
    ck_assert_uint_ne(m[fx_file_dblk(t.fx, t.one, 0, NULL, NULL)].cls, SCAN_BLK_LEAKED);
    scan_result_free(r);
    fx_free(t.fx);
}
END_TEST

static Suite *make(void)
{
    Suite *s = suite_create("scan");
    TCase *tc = tcase_create("scan");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, table_sorted);
    tcase_add_test(tc, message_fields);
    tcase_add_test(tc, super_clean_and_fields);
    tcase_add_test(tc, infer_every_geometry);
    tcase_add_test(tc, infer_without_free_head);
    tcase_add_test(tc, infer_cut_free_list);
    tcase_add_test(tc, corpus_images);
    tcase_add_test(tc, tree_paths_and_accounting);
    tcase_add_test(tc, tree_degenerate_deep);
    tcase_add_test(tc, tree_duplicate_names);
    tcase_add_test(tc, tree_rename_halfway);
    tcase_add_test(tc, tree_rename_links_stay);
    tcase_add_test(tc, tree_stale_reach_yields);
    tcase_add_test(tc, tree_rename_links_up);
    tcase_add_test(tc, tree_rename_by_age);
    tcase_add_test(tc, tree_duplicate_among_many);
    tcase_add_test(tc, tree_names_kept);
    tcase_add_test(tc, files_data_lists);
    tcase_add_test(tc, files_shared_block);
    tcase_add_test(tc, free_list_counts);
    tcase_add_test(tc, sweep_deleted_file);
    tcase_add_test(tc, sweep_orphans);
    tcase_add_test(tc, sweep_orphan_past_size);
    tcase_add_test(tc, sweep_orphan_data_entry);
    tcase_add_test(tc, sweep_orphan_data_entry_stale_links);
    tcase_add_test(tc, sweep_orphan_data_entries_linked);
    tcase_add_test(tc, sweep_orphan_data_entry_links_other_tree);
    tcase_add_test(tc, sweep_orphan_data_entry_sibling_link);
    tcase_add_test(tc, sweep_reads_once);
    tcase_add_test(tc, marks_driver_writer);
    tcase_add_test(tc, counters_torn_chain);
    tcase_add_test(tc, lost_trees);
    tcase_add_test(tc, lost_tree_zero_tail);
    tcase_add_test(tc, extender_leak_needs_driver);
    tcase_add_test(tc, lost_tree_before_old_extender);
    tcase_add_test(tc, lost_tree_not_paired_after_writeback);
    tcase_add_test(tc, progress_and_cancel);
    tcase_add_test(tc, image_cut_while_scanning);
    tcase_add_test(tc, random_damage);
    tcase_add_test(tc, slots_fast_decode);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(make)
