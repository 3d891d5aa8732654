/*
 * test_store_scan.c -- the store on real scans: scan_image, store, load back.
 *
 * Every reference image of the corpus, and fixtures with files, holes, a
 * deleted file, a damaged tree and names holding every byte, are scanned
 * by the engine and written into one database; each scan read back must
 * equal its result: the scans row and summary (blocks per class from the
 * runs), every entry (names byte for byte, paths in their escaped form),
 * every data map rebuilt from its extents, every finding (code, fields,
 * message) in order, the block runs covering every block of the map
 * exactly once and agreeing with it cell by cell, one counter for each
 * metadata cell, and every lost tree with its data map rebuilt from its
 * extents (images built as the scan cases f_unlinked_data and f_lost_tree
 * build theirs, and the yanked sample when it was built).
 */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "scan.h"
#include "store.h"
#include "writer.h"

/* ---- helpers ------------------------------------------------------------------ */

static char tmpdir[256];

static void setup(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/lanyfs-store-scan-XXXXXX",
             base != NULL && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    DIR *d = opendir(tmpdir);
    if (d != NULL) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            char p[512];
            snprintf(p, sizeof(p), "%s/%s", tmpdir, de->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(tmpdir);
}

static const char *tmppath(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof(p[k]), "%s/%s", tmpdir, name);
    return p[k];
}

static struct scan_result *scan_ok(const char *image)
{
    struct scan_result *r = NULL;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    enum lanyfs_err rc = scan_image(image, NULL, &r, &err);
    ck_assert_msg(rc == LANYFS_OK, "scan_image %s: %s", image, err.msg);
    return r;
}

static struct store_db *open_ok(const char *path)
{
    struct store_db *db = NULL;
    struct lanyfs_error err;
    enum lanyfs_err rc = store_open(path, 0, &db, &err);
    ck_assert_msg(rc == LANYFS_OK, "store_open %s: %s", path, err.msg);
    return db;
}

static int64_t add_ok(struct store_db *db, const struct scan_result *r, const char *image)
{
    struct store_scan_meta m = {.image_path = image, .started = FX_TIME_EPOCH};
    struct lanyfs_error err;
    int64_t id = 0;
    enum lanyfs_err rc = store_add_scan(db, r, &m, &id, &err);
    ck_assert_msg(rc == LANYFS_OK, "store_add_scan %s: %s", image, err.msg);
    return id;
}

/* ---- the comparison ------------------------------------------------------------ */

struct entry_cmp {
    const struct scan_result *r;
    size_t n;
};

static int cmp_entry(void *ctx, const struct store_entry *e)
{
    struct entry_cmp *c = ctx;
    const struct scan_entry *se = scan_entry_by_id(c->r, e->id);
    ck_assert_msg(se != NULL, "stored entry %u is not in the result", e->id);
    ck_assert_uint_eq(e->block, se->block);
    ck_assert_uint_eq(e->parent, se->parent);
    ck_assert_int_eq(e->state, se->state);
    ck_assert_uint_eq(e->type, se->e.type);
    ck_assert_uint_eq(e->name_len, se->e.name_len);
    ck_assert_msg(memcmp(e->name, se->e.name, e->name_len) == 0, "name of entry %u", e->id);
    char *esc = store_escape(se->path, strlen(se->path));
    ck_assert_str_eq(e->path, esc);
    free(esc);
    ck_assert_uint_eq(e->size, se->e.size);
    ck_assert_uint_eq(e->attr, se->e.attr);
    ck_assert_uint_eq(e->wrcnt, se->e.wrcnt);
    ck_assert_int_eq(e->created_offset, se->e.created.offset);
    ck_assert_int_eq(e->modified_offset, se->e.modified.offset);
    ck_assert(lanyfs_ts_is_unset(&se->e.created) == (e->created == NULL));
    ck_assert(lanyfs_ts_is_unset(&se->e.modified) == (e->modified == NULL));
    ck_assert_uint_eq(e->blocks_needed, se->blocks_needed);
    ck_assert_uint_eq(e->blocks_mapped, se->blocks_mapped);
    ck_assert_uint_eq(e->blocks_intact, se->blocks_intact);
    c->n++;
    return 0;
}

struct extent_cmp {
    const struct scan_entry *se;
    uint64_t next;    /* file block after the last extent */
    uint64_t blocks;  /* blocks in the extents */
};

static int cmp_extent(void *ctx, uint64_t file_block, uint64_t block, uint64_t count)
{
    struct extent_cmp *c = ctx;
    const struct scan_entry *se = c->se;
    ck_assert_uint_ge(file_block, c->next);
    ck_assert_uint_le(file_block + count, se->ndata);
    for (uint64_t k = c->next; k < file_block; k++)
        ck_assert_msg(se->data[k] == 0, "entry %u file block %" PRIu64 " lost", se->id, k);
    for (uint64_t k = 0; k < count; k++)
        ck_assert_uint_eq(se->data[file_block + k], block + k);
    c->next = file_block + count;
    c->blocks += count;
    return 0;
}

struct finding_cmp {
    const struct scan_finding *f;
    size_t n;
    size_t seen;
};

static int cmp_finding(void *ctx, const struct store_finding *sf)
{
    struct finding_cmp *c = ctx;
    ck_assert_uint_lt(c->seen, c->n);
    const struct scan_finding *f = &c->f[c->seen];
    ck_assert_uint_eq(sf->seq, c->seen);
    ck_assert_uint_eq(sf->code, f->code);
    const struct scan_problem_info *p = scan_problem_lookup(f->code);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(sf->code_name, p->name);
    ck_assert_int_eq(sf->severity, p->severity);
    ck_assert_uint_eq(sf->entry, f->entry);
    ck_assert_uint_eq(sf->block, f->block);
    ck_assert_uint_eq(sf->block2, f->block2);
    ck_assert_uint_eq(sf->value, f->value);
    ck_assert_uint_eq(sf->value2, f->value2);
    ck_assert_uint_eq(sf->count, f->count);
    ck_assert_uint_eq(sf->count2, f->count2);
    ck_assert((sf->path == NULL) == (f->path == NULL));
    ck_assert((sf->text == NULL) == (f->text == NULL));
    char *msg = scan_finding_message(f);
    char *esc = store_escape(msg, strlen(msg));
    ck_assert_str_eq(sf->message, esc);
    free(esc);
    free(msg);
    c->seen++;
    return 0;
}

struct run_cmp {
    const struct scan_block *map;
    uint64_t n;
    uint64_t next;
};

static int cmp_run(void *ctx, const struct store_block_run *run)
{
    struct run_cmp *c = ctx;
    ck_assert_uint_eq(run->first, c->next);
    ck_assert_uint_ge(run->count, 1);
    ck_assert_uint_le(run->first + run->count, c->n);
    for (uint64_t b = run->first; b < run->first + run->count; b++) {
        const struct scan_block *cell = &c->map[b];
        if (run->cls != cell->cls || run->owner != cell->owner || run->flags != cell->flags)
            ck_abort_msg("block %" PRIu64 ": run %d/%u/%u, map %d/%u/%u", b, (int)run->cls,
                         run->owner, run->flags, cell->cls, cell->owner, cell->flags);
    }
    c->next = run->first + run->count;
    return 0;
}

struct counter_cmp {
    const struct scan_block *map;
    uint64_t n;
    uint64_t seen;
};

static int cmp_counter(void *ctx, uint64_t block, enum scan_class cls, uint16_t wrcnt)
{
    struct counter_cmp *c = ctx;
    ck_assert_uint_lt(block, c->n);
    ck_assert_msg(c->map[block].flags & SCAN_BF_METADATA, "counter of block %" PRIu64, block);
    ck_assert_int_eq(cls, c->map[block].cls);
    ck_assert_uint_eq(wrcnt, c->map[block].wrcnt);
    c->seen++;
    return 0;
}

struct lost_cmp {
    struct store_db *db;
    int64_t scan;
    const struct scan_lost_tree *t; /* the result's, by top */
    size_t n;
    size_t seen;
};

/* A lost tree's extents against its data map (extent_cmp over a tree's data). */
struct tree_extent_cmp {
    const struct scan_lost_tree *t;
    uint64_t next;
    uint64_t blocks;
};

static int cmp_tree_extent(void *ctx, uint64_t file_block, uint64_t block, uint64_t count)
{
    struct tree_extent_cmp *c = ctx;
    const struct scan_lost_tree *t = c->t;
    ck_assert_uint_ge(file_block, c->next);
    ck_assert_uint_le(file_block + count, t->ndata);
    for (uint64_t k = c->next; k < file_block; k++)
        ck_assert_msg(t->data[k] == 0, "lost tree %" PRIu64 " file block %" PRIu64 " lost",
                      t->top, k);
    for (uint64_t k = 0; k < count; k++)
        ck_assert_uint_eq(t->data[file_block + k], block + k);
    c->next = file_block + count;
    c->blocks += count;
    return 0;
}

static int cmp_lost(void *ctx, const struct store_lost_tree *st)
{
    struct lost_cmp *c = ctx;
    ck_assert_uint_lt(c->seen, c->n);
    const struct scan_lost_tree *t = &c->t[c->seen];
    ck_assert_uint_eq(st->top, t->top);
    ck_assert_uint_eq(st->entry, t->entry);
    ck_assert_uint_eq(st->size, t->size);
    ck_assert_uint_eq(st->blocks_mapped, t->mapped);
    ck_assert_uint_eq(st->extenders, t->nexts);
    struct tree_extent_cmp xc = {.t = t};
    struct lanyfs_error err;
    ck_assert_int_eq(store_lost_tree_blocks(c->db, c->scan, st->top, cmp_tree_extent, &xc, &err),
                     LANYFS_OK);
    for (uint64_t k = xc.next; k < t->ndata; k++)
        ck_assert_uint_eq(t->data[k], 0);
    ck_assert_uint_eq(xc.blocks, t->mapped);
    c->seen++;
    return 0;
}

/* Scan id of db must hold exactly the result r. */
static void check_round_trip(struct store_db *db, int64_t id, const struct scan_result *r)
{
    struct lanyfs_error err;
    struct store_scan s;
    ck_assert_int_eq(store_get_scan(db, id, &s, &err), LANYFS_OK);
    struct scan_summary sum;
    scan_summarize(r, &sum);
    ck_assert_uint_eq(s.map_blocks, scan_block_count(r));
    ck_assert_uint_eq(s.image_size, scan_image_bytes(r));
    ck_assert(s.geometry_inferred == scan_geom_inferred(r));
    const struct lanyfs_geom *g = scan_geom(r);
    ck_assert(s.have_geometry == (g != NULL));
    if (g != NULL) {
        ck_assert_uint_eq(s.block_size, g->blocksize);
        ck_assert_uint_eq(s.address_length, g->addrlen);
        ck_assert_uint_eq(s.blocks, g->blocks);
    }
    const struct lanyfs_super *sb = scan_super(r);
    ck_assert(s.have_super == (sb != NULL));
    if (sb != NULL) {
        ck_assert_uint_eq(s.sb.magic, sb->magic);
        ck_assert_uint_eq(s.sb.blocks, sb->blocks);
        ck_assert_uint_eq(s.sb.freeblocks, sb->freeblocks);
        ck_assert_uint_eq(s.sb.rootdir, sb->rootdir);
        size_t ll = strnlen((const char *)sb->label, sizeof(sb->label));
        ck_assert_uint_eq(s.sb.label_len, ll);
        ck_assert(memcmp(s.sb.label, sb->label, ll) == 0);
    }
    ck_assert_uint_eq(s.summary.dirs, sum.dirs);
    ck_assert_uint_eq(s.summary.files, sum.files);
    ck_assert_uint_eq(s.summary.deleted, sum.deleted);
    ck_assert_uint_eq(s.summary.orphans, sum.orphans);
    ck_assert_uint_eq(s.summary.bytes, sum.bytes);
    ck_assert_uint_eq(s.summary.free_listed, sum.free_listed);
    ck_assert_int_eq(s.summary.worst, sum.worst);
    for (int k = 0; k < 4; k++)
        ck_assert_uint_eq(s.summary.findings_by_severity[k], sum.findings_by_severity[k]);
    for (int k = 0; k < SCAN_BLK_CLASSES; k++)
        ck_assert_msg(s.summary.by_class[k] == sum.by_class[k], "class %d: %" PRIu64 " vs %" PRIu64,
                      k, s.summary.by_class[k], sum.by_class[k]);
    const struct scan_entry *ents;
    size_t nent = scan_entries(r, &ents);
    const struct scan_finding *f;
    size_t nf = scan_findings(r, &f);
    ck_assert_uint_eq(s.entries, nent);
    ck_assert_uint_eq(s.findings, nf);
    store_scan_clear(&s);

    struct entry_cmp ec = {.r = r};
    ck_assert_int_eq(store_entries(db, id, NULL, STORE_ANY_STATE, cmp_entry, &ec, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(ec.n, nent);
    for (size_t i = 0; i < nent; i++) {
        struct extent_cmp xc = {.se = &ents[i]};
        ck_assert_int_eq(store_entry_blocks(db, id, ents[i].id, cmp_extent, &xc, &err),
                         LANYFS_OK);
        for (uint64_t k = xc.next; k < ents[i].ndata; k++)
            ck_assert_uint_eq(ents[i].data[k], 0);
        uint64_t mapped = 0;
        for (uint64_t k = 0; k < ents[i].ndata; k++)
            mapped += ents[i].data[k] != 0;
        ck_assert_uint_eq(xc.blocks, mapped);
    }

    struct finding_cmp fc = {.f = f, .n = nf};
    ck_assert_int_eq(store_findings(db, id, 0, SCAN_SEV_INFO, cmp_finding, &fc, &err), LANYFS_OK);
    ck_assert_uint_eq(fc.seen, nf);

    struct run_cmp rc = {.map = scan_blocks(r), .n = scan_block_count(r)};
    ck_assert_int_eq(store_block_runs(db, id, 0, UINT64_MAX, cmp_run, &rc, &err), LANYFS_OK);
    ck_assert_uint_eq(rc.next, rc.n);

    struct counter_cmp cc = {.map = scan_blocks(r), .n = scan_block_count(r)};
    ck_assert_int_eq(store_counters(db, id, STORE_ANY_CLASS, cmp_counter, &cc, &err), LANYFS_OK);
    uint64_t meta = 0;
    for (uint64_t b = 0; b < cc.n; b++)
        meta += (cc.map[b].flags & SCAN_BF_METADATA) != 0;
    ck_assert_uint_eq(cc.seen, meta);

    struct lost_cmp lc = {.db = db, .scan = id};
    lc.n = scan_lost_trees(r, &lc.t);
    ck_assert_int_eq(store_lost_trees(db, id, cmp_lost, &lc, &err), LANYFS_OK);
    ck_assert_uint_eq(lc.seen, lc.n);
}

/* ---- the corpus ------------------------------------------------------------------ */

static const char *const corpus_images[] = {
    "b512-a8.img",   "b512-a16.img",       "b512-a32.img",       "b1024-a24.img", "b2048-a32.img",
    "b4096-a32.img", "b4096-a64.img",      "b512-a8-capped.img", "b1024-overhead.img",
};

START_TEST(t_corpus)
{
    const char *corpus = getenv("LANYFS_CORPUS");
    if (corpus == NULL || *corpus == '\0')
        return; /* nothing to compare with */
    const size_t n = sizeof(corpus_images) / sizeof(corpus_images[0]);
    struct scan_result *res[sizeof(corpus_images) / sizeof(corpus_images[0])];
    struct store_db *db = open_ok(tmppath("corpus.db"));
    for (size_t i = 0; i < n; i++) {
        char p[1024];
        snprintf(p, sizeof(p), "%s/%s", corpus, corpus_images[i]);
        res[i] = scan_ok(p);
        ck_assert_int_eq(add_ok(db, res[i], corpus_images[i]), (int64_t)i + 1);
    }
    /* All of them in one database, each whole. */
    for (size_t i = 0; i < n; i++)
        check_round_trip(db, (int64_t)i + 1, res[i]);
    struct store_scan *list;
    size_t nl;
    struct lanyfs_error err;
    ck_assert_int_eq(store_list_scans(db, NULL, &list, &nl, &err), LANYFS_OK);
    ck_assert_uint_eq(nl, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(list[i].image_path, corpus_images[i]);
    store_scans_free(list, nl);
    ck_assert_int_eq(store_close(db, &err), LANYFS_OK);
    for (size_t i = 0; i < n; i++)
        scan_result_free(res[i]);
}
END_TEST

/* ---- fixtures ----------------------------------------------------------------- */

/* A tree with files of several sizes, a file with holes, a deleted file. */
static void build_files(const char *path)
{
    struct fx *fx = fx_new(9, 4, 2048);
    ck_assert_ptr_nonnull(fx);
    uint64_t root = fx_root(fx);
    uint64_t docs = fx_mkdir(fx, root, "docs");
    ck_assert_uint_ne(docs, 0);
    static uint8_t data[200 * 512];
    fx_pattern(data, sizeof(data), 7);
    ck_assert_uint_ne(fx_file(fx, docs, "big.bin", data, sizeof(data)), 0);
    ck_assert_uint_ne(fx_file(fx, docs, "small.txt", "small\n", 6), 0);
    ck_assert_uint_ne(fx_file(fx, root, "empty", NULL, 0), 0);
    uint64_t holes = fx_file(fx, root, "holes.bin", data, 20 * 512);
    ck_assert_uint_ne(holes, 0);
    uint64_t ext;
    uint32_t slot;
    fx_file_dblk(fx, holes, 5, &ext, &slot);
    fx_ext_set_slot(fx, ext, slot, 0);
    fx_file_dblk(fx, holes, 6, &ext, &slot);
    fx_ext_set_slot(fx, ext, slot, 0);
    ck_assert_uint_ne(fx_file(fx, root, "doomed.txt", data, 3 * 512), 0);
    ck_assert_int_eq(fx_save(fx, path), 0);
    fx_free(fx);

    /* Delete doomed.txt with the correct writer: a deleted entry for the scan. */
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_writer *w = NULL;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_fs_open(path, LANYFS_OPEN_RDWR, &fs, &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_writer_mount(fs, LANYFS_WRITE_CORRECT, &w, &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_writer_unlink(w, "/doomed.txt", &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_writer_unmount(w, &err), LANYFS_OK);
    lanyfs_fs_close(fs);
}

START_TEST(t_files)
{
    const char *img = tmppath("files.img");
    build_files(img);
    struct scan_result *r = scan_ok(img);
    struct scan_summary sum;
    scan_summarize(r, &sum);
    ck_assert_uint_eq(sum.files, 4);
    ck_assert_uint_eq(sum.dirs, 2);
    ck_assert_uint_ge(sum.deleted, 1);
    struct store_db *db = open_ok(tmppath("files.db"));
    int64_t id = add_ok(db, r, "files.img");
    check_round_trip(db, id, r);
    /* big.bin is one piece: its 200 blocks are one extent. */
    const struct scan_entry *ents;
    size_t n = scan_entries(r, &ents);
    for (size_t i = 0; i < n; i++) {
        if (ents[i].e.name_len != 7 || memcmp(ents[i].e.name, "big.bin", 7) != 0)
            continue;
        struct extent_cmp xc = {.se = &ents[i]};
        struct lanyfs_error err;
        ck_assert_int_eq(store_entry_blocks(db, id, ents[i].id, cmp_extent, &xc, &err),
                         LANYFS_OK);
        ck_assert_uint_eq(xc.blocks, 200);
    }
    struct lanyfs_error err;
    ck_assert_int_eq(store_close(db, &err), LANYFS_OK);
    scan_result_free(r);
}
END_TEST

/* Names with every byte but NUL and '/', and a damaged tree below them. */
START_TEST(t_hostile)
{
    const char *img = tmppath("hostile.img");
    struct fx *fx = fx_new(9, 2, 512);
    ck_assert_ptr_nonnull(fx);
    uint64_t root = fx_root(fx);
    uint8_t name[64];
    int next = 1;
    for (int k = 0; next < 256; k++) {
        size_t len = 0;
        while (len < 50 && next < 256) {
            if (next != '/')
                name[len++] = (uint8_t)next;
            next++;
        }
        uint64_t b = fx_entry_new(fx, k % 2 ? LANYFS_TYPE_DIR : LANYFS_TYPE_FILE, name, len);
        ck_assert_uint_ne(b, 0);
        ck_assert_int_eq(fx_link(fx, root, b), 0);
    }
    uint8_t full[LANYFS_NAME_FIELD];
    memset(full, 0xff, sizeof(full));
    uint64_t fb = fx_entry_new(fx, LANYFS_TYPE_FILE, full, sizeof(full));
    ck_assert_int_eq(fx_link(fx, root, fb), 0);
    uint64_t d = fx_mkdir(fx, root, "dir\x1b[2J\\");
    uint64_t loop = fx_mkdir(fx, d, "loop\xff");
    fx_set_subtree(fx, loop, d); /* a cycle under hostile names */
    fx_set_label(fx, "label\x1b]0;x\x07");
    ck_assert_int_eq(fx_save(fx, img), 0);
    fx_free(fx);

    struct scan_result *r = scan_ok(img);
    const struct scan_finding *f;
    ck_assert_uint_gt(scan_findings(r, &f), 0);
    struct store_db *db = open_ok(tmppath("hostile.db"));
    int64_t id = add_ok(db, r, "hostile.img");
    check_round_trip(db, id, r);
    struct lanyfs_error err;
    ck_assert_int_eq(store_close(db, &err), LANYFS_OK);
    scan_result_free(r);
}
END_TEST

/* ---- lost trees ---------------------------------------------------------------- */

/*
 * The scan cases' base tree (tests/scan/mkcase.c): 512-byte blocks, 4-byte
 * addresses, 600 blocks, /docs/one.txt, /docs/sub, /a.txt and /b.bin of
 * three blocks, whose entry block the caller receives in *b.
 */
static struct fx *lost_base(uint64_t *b)
{
    uint8_t data[3 * 512];
    fx_pattern(data, sizeof(data), 7);
    struct fx *fx = fx_new(9, 4, 600);
    ck_assert_ptr_nonnull(fx);
    uint64_t docs = fx_mkdir(fx, fx_root(fx), "docs");
    ck_assert_uint_ne(docs, 0);
    ck_assert_uint_ne(fx_file(fx, docs, "one.txt", data, 100), 0);
    ck_assert_uint_ne(fx_mkdir(fx, docs, "sub"), 0);
    ck_assert_uint_ne(fx_file(fx, fx_root(fx), "a.txt", data, 256), 0);
    *b = fx_file(fx, fx_root(fx), "b.bin", data, sizeof(data));
    ck_assert_uint_ne(*b, 0);
    return fx;
}

/* Scan img and store it: its lost trees must come back, and there must be n of them. */
static void lost_round_trip(const char *img, size_t n, uint32_t want_entry)
{
    struct scan_result *r = scan_ok(img);
    const struct scan_lost_tree *lt;
    ck_assert_uint_eq(scan_lost_trees(r, &lt), n);
    if (n != 0)
        ck_assert_uint_eq(lt[0].entry, want_entry);
    struct store_db *db = open_ok(tmppath("lost.db"));
    int64_t id = add_ok(db, r, img);
    check_round_trip(db, id, r);
    struct lanyfs_error err;
    ck_assert_int_eq(store_close(db, &err), LANYFS_OK);
    scan_result_free(r);
}

/* f_unlinked_data: b.bin's tree and data landed, its data pointer and size did not. */
START_TEST(t_unlinked_data)
{
    const char *img = tmppath("unlinked.img");
    uint64_t b;
    struct fx *fx = lost_base(&b);
    ck_assert_uint_eq(fx_get_subtree(fx, b), b + 1);
    struct lanyfs_entry e;
    fx_entry_get(fx, b, &e);
    e.subtree = 0;
    e.size = 0;
    e.wrcnt = 0;
    fx_entry_put(fx, b, &e);
    ck_assert_int_eq(fx_save(fx, img), 0);
    fx_free(fx);

    struct scan_result *r = scan_ok(img);
    const struct scan_entry *ents;
    size_t n = scan_entries(r, &ents);
    uint32_t id = 0;
    for (size_t i = 0; i < n; i++)
        if (ents[i].block == b)
            id = ents[i].id;
    ck_assert_uint_ne(id, 0);
    scan_result_free(r);
    lost_round_trip(img, 1, id);
}
END_TEST

/* f_lost_tree: b.bin's entry wiped; its tree still maps its three blocks. */
START_TEST(t_lost_tree)
{
    const char *img = tmppath("lost.img");
    uint64_t b;
    struct fx *fx = lost_base(&b);
    memset(fx_block(fx, b), 0, fx_blocksize(fx));
    ck_assert_int_eq(fx_save(fx, img), 0);
    fx_free(fx);
    lost_round_trip(img, 1, 0);
}
END_TEST

/* The yanked sample (samples/), when this build made it: the quick start's stick. */
START_TEST(t_yanked)
{
    const char *build = getenv("LANYFS_BUILD");
    if (build == NULL || *build == '\0')
        return;
    char img[1024];
    snprintf(img, sizeof(img), "%s/samples/yanked.img", build);
    if (access(img, R_OK) != 0)
        return; /* not built (no Python) */
    struct scan_result *r = scan_ok(img);
    const struct scan_lost_tree *lt;
    ck_assert_msg(scan_lost_trees(r, &lt) != 0, "%s shows no lost tree any more", img);
    struct store_db *db = open_ok(tmppath("yanked.db"));
    int64_t id = add_ok(db, r, "yanked.img");
    check_round_trip(db, id, r);
    struct lanyfs_error err;
    ck_assert_int_eq(store_close(db, &err), LANYFS_OK);
    scan_result_free(r);
}
END_TEST

static Suite *store_scan_suite(void)
{
    Suite *s = suite_create("store-scan");
    TCase *tc = tcase_create("store-scan");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_corpus);
    tcase_add_test(tc, t_files);
    tcase_add_test(tc, t_hostile);
    tcase_add_test(tc, t_unlinked_data);
    tcase_add_test(tc, t_lost_tree);
    tcase_add_test(tc, t_yanked);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(store_scan_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
