/*
 * test_store.c -- the SQLite store on scan results built by hand
 * (fake_scan.h): schema, versions, round trips, hostile bytes, queries,
 * indexes.
 *
 * Checked here: a new database gets this schema version, the application id,
 * WAL mode and a catalogue equal to problem.h; a newer version, a foreign
 * database, a file that is no database and an empty read-only file are
 * refused with the file named; a result stored and loaded back has the
 * same scans row, entries (names byte for byte), data maps, findings and
 * counters, lost trees with their data maps, and its block runs cover every
 * block exactly once and agree with the map cell by cell; rows a hostile
 * file holds (an extent of count 0, a lost tree at block 0 ...) are refused
 * with the file named; versions 1 and 2 are upgraded; two scans live side
 * by side and one can be deleted; 64-bit values past INT64_MAX survive; a
 * failing write leaves nothing behind and names the database and the
 * statement; every TEXT column is valid UTF-8 and unescapes to the original
 * bytes; the queries the GUI makes (docs/scan-db.md) use their indexes.
 */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "config.h"
#include "fake_scan.h"
#include "store.h"

/* A run's class, owner and flags are those of map cell b (cheap: no checkpoint). */
#define U_CELL_EQ(run, cell, b)                                                         \
    do {                                                                                \
        if ((run)->cls != (cell)->cls || (run)->owner != (cell)->owner ||               \
            (run)->flags != (cell)->flags)                                              \
            ck_abort_msg("block %llu: run says %d/%u/%u, map %d/%u/%u",                 \
                         (unsigned long long)(b), (int)(run)->cls, (run)->owner,        \
                         (run)->flags, (int)(cell)->cls, (cell)->owner, (cell)->flags); \
    } while (0)

/* ---- helpers ---------------------------------------------------------------- */

static char tmpdir[256];

/* A fresh directory for the test's databases. */
static void setup(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/lanyfs-store-XXXXXX",
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

static const char *dbpath(const char *name)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
    return p;
}

static struct store_db *open_ok(const char *path, unsigned flags)
{
    struct store_db *db = NULL;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    enum lanyfs_err rc = store_open(path, flags, &db, &err);
    ck_assert_msg(rc == LANYFS_OK, "store_open %s: %s", path, err.msg);
    return db;
}

static void close_ok(struct store_db *db)
{
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    ck_assert_msg(store_close(db, &err) == LANYFS_OK, "store_close: %s", err.msg);
}

static int64_t add_ok(struct store_db *db, const struct scan_result *r, const char *image)
{
    struct store_scan_meta m = {.image_path = image, .started = 1796259735, .started_nsec = 5,
                                .seconds = 0.25, .image_sha256 = NULL};
    struct lanyfs_error err;
    int64_t id = -1;
    lanyfs_error_clear(&err);
    enum lanyfs_err rc = store_add_scan(db, r, &m, &id, &err);
    ck_assert_msg(rc == LANYFS_OK, "store_add_scan: %s", err.msg);
    ck_assert_int_gt(id, 0);
    return id;
}

/* Raw access beside the store, for what the API does not show. */
static sqlite3 *raw_open(const char *path)
{
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
    return h;
}

static int64_t raw_int(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *st = NULL;
    ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(h));
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    ck_assert_int_eq(sqlite3_finalize(st), SQLITE_OK);
    return v;
}

static char *raw_text(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *st = NULL;
    ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(h));
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text(st, 0);
    char *s = strdup(t != NULL ? (const char *)t : "(null)");
    ck_assert_int_eq(sqlite3_finalize(st), SQLITE_OK);
    return s;
}

static void raw_exec(sqlite3 *h, const char *sql)
{
    char *msg = NULL;
    ck_assert_msg(sqlite3_exec(h, sql, NULL, NULL, &msg) == SQLITE_OK, "%s: %s", sql,
                  msg != NULL ? msg : "?");
}

/* Valid UTF-8 without control characters (what every stored TEXT must be). */
static bool clean_utf8(const char *s)
{
    const uint8_t *p = (const uint8_t *)s;
    while (*p) {
        uint32_t cp;
        size_t n;
        if (*p < 0x80) {
            cp = *p;
            n = 1;
        } else if (*p >= 0xc2 && *p <= 0xdf) {
            cp = *p & 0x1f;
            n = 2;
        } else if (*p >= 0xe0 && *p <= 0xef) {
            cp = *p & 0x0f;
            n = 3;
        } else if (*p >= 0xf0 && *p <= 0xf4) {
            cp = *p & 0x07;
            n = 4;
        } else {
            return false;
        }
        for (size_t i = 1; i < n; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff) || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
            return false;
        p += n;
    }
    return true;
}

static uint64_t rng_state = 0x1234567;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/*
 * A small filesystem's worth of result, on 64 blocks of 512 bytes:
 *   0 super, 1 root dir, 2 /docs dir, 3 /docs/a.txt file, 4 its extender,
 *   5..7 its data, 8 /b.bin file (data 9, hole, 10), 11..12 chain, 13..40 free,
 *   41 deleted entry (data 42 still its own), 43 orphan, 44..63 leaked, 10 shared.
 */
static struct scan_result *sample(void)
{
    struct scan_result *r = fake_new(9, 4, 64);
    ck_assert_ptr_nonnull(r);
    uint64_t adata[] = {5, 6, 7};
    uint64_t bdata[] = {9, 0, 10};
    uint64_t ddata[] = {42};
    uint32_t root = fake_entry(r, 1, 0, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, "LANYFSROOT", 10, "/",
                               0, NULL, 0);
    uint32_t docs = fake_entry(r, 2, root, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, "docs", 4, "/docs",
                               0, NULL, 0);
    uint32_t a = fake_entry(r, 3, docs, SCAN_ENTRY_LIVE, LANYFS_TYPE_FILE, "a.txt", 5,
                            "/docs/a.txt", 1500, adata, 3);
    struct scan_entry *ea = fake_last_entry(r);
    ea->e.created = (struct lanyfs_ts){.year = 2026, .month = 12, .day = 3, .hour = 1,
                                       .minute = 2, .second = 15, .nsec = 123, .offset = 60};
    ea->e.modified = (struct lanyfs_ts){.year = 65535, .month = 200, .day = 31, .hour = 99,
                                        .minute = 0, .second = 60};
    ea->e.attr = LANYFS_ATTR_NOWRITE;
    ea->e.wrcnt = 7;
    uint32_t b = fake_entry(r, 8, root, SCAN_ENTRY_LIVE, LANYFS_TYPE_FILE, "b.bin", 5, "/b.bin",
                            1536, bdata, 3);
    uint32_t del = fake_entry(r, 41, 0, SCAN_ENTRY_DELETED, LANYFS_TYPE_FILE, "gone.txt", 8,
                              "/gone.txt", 100, ddata, 1);
    uint32_t orph = fake_entry(r, 43, 0, SCAN_ENTRY_ORPHAN, LANYFS_TYPE_DIR, "lost", 4, "/lost",
                               0, NULL, 0);
    fake_block(r, 0, SCAN_BLK_SUPER, SCAN_BF_METADATA, 9, 0, 0);
    fake_block(r, 1, SCAN_BLK_DIR, SCAN_BF_METADATA, 3, root, 0);
    fake_block(r, 2, SCAN_BLK_DIR, SCAN_BF_METADATA, 1, docs, 0);
    fake_block(r, 3, SCAN_BLK_FILE, SCAN_BF_METADATA, 7, a, 0);
    fake_block(r, 4, SCAN_BLK_EXTENDER, SCAN_BF_METADATA, 0, a, 0);
    for (uint64_t i = 0; i < 3; i++)
        fake_block(r, 5 + i, SCAN_BLK_DATA, 0, 0, a, i);
    fake_block(r, 8, SCAN_BLK_FILE, SCAN_BF_METADATA, 2, b, 0);
    fake_block(r, 9, SCAN_BLK_DATA, 0, 0, b, 0);
    fake_block(r, 10, SCAN_BLK_DATA, SCAN_BF_SHARED, 0, b, 2);
    fake_block(r, 11, SCAN_BLK_CHAIN, SCAN_BF_METADATA, 40, 0, 0);
    fake_block(r, 12, SCAN_BLK_CHAIN, SCAN_BF_METADATA, 65535, 0, 0);
    for (uint64_t i = 13; i <= 40; i++)
        fake_block(r, i, SCAN_BLK_FREE, 0, 0, 0, i < 30 ? 11 : 12);
    fake_block(r, 41, SCAN_BLK_DELETED, SCAN_BF_METADATA, 4, del, 0);
    fake_block(r, 42, SCAN_BLK_FREE, 0, 0, 0, 12);
    fake_block(r, 43, SCAN_BLK_ORPHAN, SCAN_BF_METADATA | SCAN_BF_TORN, 0, orph, 0);
    for (uint64_t i = 44; i < 64; i++)
        fake_block(r, i, SCAN_BLK_LEAKED, 0, 0, 0, 0);
    fake_super(r)->freeblocks = 31;
    fake_super(r)->created = (struct lanyfs_ts){.year = 2026, .month = 12, .day = 3, .hour = 1,
                                                .minute = 2, .second = 15};
    fake_finding(r, SCAN_PR_BLOCKS_LEAKED, 0, 44, 0, 0, 0, 20, 0, NULL, NULL);
    fake_finding(r, SCAN_PR_BLOCK_SHARED, b, 10, 0, 0, 0, 0, 0, "/b.bin", "/docs/a.txt");
    fake_finding(r, SCAN_PR_DELETED_ENTRY, del, 41, 0, 0, 0, 1, 1, "/gone.txt", "file");
    fake_finding(r, SCAN_PR_ORPHAN_ENTRY, orph, 43, 0, 0, 0, 0, 0, "/lost", "directory");
    fake_finding(r, SCAN_PR_SB_FREEBLOCKS_WRONG, 0, 0, 0, 31, 0, 30, 0, NULL, NULL);
    fake_finding(r, SCAN_PR_FILE_HOLES, b, 8, 0, 0, 0, 1, 0, "/b.bin", NULL);
    return r;
}

/* ---- schema and versions ---------------------------------------------------- */

START_TEST(t_create_schema)
{
    const char *p = dbpath("new.db");
    struct store_db *db = open_ok(p, 0);
    ck_assert_str_eq(store_path(db), p);
    close_ok(db);

    sqlite3 *h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    ck_assert_int_eq(raw_int(h, "PRAGMA application_id"), STORE_APPLICATION_ID);
    char *mode = raw_text(h, "PRAGMA journal_mode");
    ck_assert_str_eq(mode, "wal");
    free(mode);
    static const char *const tables[] = {"catalogue", "severities", "classes", "states",
                                         "scans", "findings", "entries", "entry_blocks",
                                         "block_runs", "lost_trees", "lost_tree_blocks"};
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        char sql[160];
        snprintf(sql, sizeof(sql),
                 "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = '%s'",
                 tables[i]);
        ck_assert_msg(raw_int(h, sql) == 1, "table %s missing", tables[i]);
    }
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'view'"
                                " AND name = 'counters'"),
                     1);
    /* The catalogue is problem.h, row for row. */
    size_t n;
    const struct scan_problem_info *t = scan_problem_table(&n);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM catalogue"), (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        char sql[200];
        snprintf(sql, sizeof(sql),
                 "SELECT name || '|' || severity || '|' || flags || '|' || message || '|' ||"
                 " repair FROM catalogue WHERE code = %" PRIu32,
                 t[i].code);
        char *row = raw_text(h, sql);
        char want[1024];
        snprintf(want, sizeof(want), "%s|%d|%u|%s|%s", t[i].name, (int)t[i].severity,
                 t[i].flags, t[i].message, t[i].repair);
        ck_assert_str_eq(row, want);
        free(row);
    }
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM classes"), SCAN_BLK_CLASSES);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM severities"), 4);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM states"), 3);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM scans"), 0);
    sqlite3_close(h);

    /* Opening again keeps it as it is, read-only too. */
    db = open_ok(p, 0);
    close_ok(db);
    db = open_ok(p, STORE_OPEN_READONLY);
    close_ok(db);
}
END_TEST

static void expect_refused(const char *p, unsigned flags, enum lanyfs_err want, const char *text)
{
    struct store_db *db = (struct store_db *)1;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    enum lanyfs_err rc = store_open(p, flags, &db, &err);
    ck_assert_msg(rc == want, "store_open %s gave %s (%s), not %s", p, lanyfs_strerror(rc),
                  err.msg, lanyfs_strerror(want));
    ck_assert_ptr_null(db);
    ck_assert_msg(strstr(err.msg, p) != NULL, "message '%s' does not name %s", err.msg, p);
    ck_assert_msg(strstr(err.msg, text) != NULL, "message '%s' lacks '%s'", err.msg, text);
}

START_TEST(t_newer_version)
{
    const char *p = dbpath("newer.db");
    close_ok(open_ok(p, 0));
    sqlite3 *h = raw_open(p);
    char sql[64], want[64];
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", STORE_SCHEMA_VERSION + 1);
    raw_exec(h, sql);
    sqlite3_close(h);
    snprintf(want, sizeof(want), "schema version %d is newer", STORE_SCHEMA_VERSION + 1);
    expect_refused(p, 0, LANYFS_E_VERSION, want);
    expect_refused(p, STORE_OPEN_READONLY, LANYFS_E_VERSION, "use a newer lanyfs-tools");
    /* Left untouched. */
    h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "PRAGMA user_version"), STORE_SCHEMA_VERSION + 1);
    sqlite3_close(h);
}
END_TEST


START_TEST(t_foreign_files)
{
    const char *p = dbpath("other.db");
    sqlite3 *h = raw_open(p);
    raw_exec(h, "CREATE TABLE notes (x)");
    sqlite3_close(h);
    expect_refused(p, 0, LANYFS_E_BADMAGIC, "not a lanyfs scan database");
    /* Refused untouched: still in its own journal mode, no schema added. */
    h = raw_open(p);
    char *mode = raw_text(h, "PRAGMA journal_mode");
    ck_assert_str_eq(mode, "delete");
    free(mode);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM sqlite_schema"), 1);
    sqlite3_close(h);

    p = dbpath("appid.db");
    h = raw_open(p);
    raw_exec(h, "PRAGMA application_id = 1234; PRAGMA user_version = 1");
    sqlite3_close(h);
    expect_refused(p, 0, LANYFS_E_BADMAGIC, "application id");

    p = dbpath("text.db");
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 200; i++)
        fputs("this is not a database at all\n", f);
    fclose(f);
    expect_refused(p, 0, LANYFS_E_BADMAGIC, "not a database");

    p = dbpath("empty.db");
    f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    expect_refused(p, STORE_OPEN_READONLY, LANYFS_E_BADMAGIC, "empty");

    expect_refused(dbpath("absent.db"), STORE_OPEN_READONLY, LANYFS_E_IO, "open");
}
END_TEST

/* ---- round trip ------------------------------------------------------------- */

struct collect {
    size_t n;             /* rows seen */
    uint32_t ids[64];     /* entry ids or finding codes */
    uint64_t vals[64];    /* another column */
    struct store_block_run runs[128];
    int stop_after;       /* return 1 after this many rows (0: never) */
};

static int count_entry(void *ctx, const struct store_entry *e)
{
    struct collect *c = ctx;
    if (c->n < 64) {
        c->ids[c->n] = e->id;
        c->vals[c->n] = e->block;
    }
    c->n++;
    return c->stop_after != 0 && (int)c->n >= c->stop_after;
}

static int count_finding(void *ctx, const struct store_finding *f)
{
    struct collect *c = ctx;
    if (c->n < 64) {
        c->ids[c->n] = f->code;
        c->vals[c->n] = f->seq;
    }
    c->n++;
    return 0;
}

static int count_run(void *ctx, const struct store_block_run *run)
{
    struct collect *c = ctx;
    if (c->n < 128)
        c->runs[c->n] = *run;
    c->n++;
    return 0;
}

static int count_counter(void *ctx, uint64_t block, enum scan_class cls, uint16_t wrcnt)
{
    struct collect *c = ctx;
    if (c->n < 64) {
        c->ids[c->n] = (uint32_t)cls | (uint32_t)wrcnt << 8;
        c->vals[c->n] = block;
    }
    c->n++;
    return 0;
}

static int count_pair(void *ctx, uint64_t a, uint64_t b)
{
    struct collect *c = ctx;
    if (c->n < 64) {
        c->ids[c->n] = (uint32_t)a;
        c->vals[c->n] = b;
    }
    c->n++;
    return 0;
}

static int count_owner(void *ctx, uint32_t entry, uint64_t file_block)
{
    return count_pair(ctx, entry, file_block);
}

/* Extents: ids[] the file block, vals[] the disk block, runs[].count the length. */
static int count_extent(void *ctx, uint64_t file_block, uint64_t block, uint64_t count)
{
    struct collect *c = ctx;
    if (c->n < 64)
        c->runs[c->n].count = count;
    return count_pair(ctx, file_block, block);
}

/* Entries checked field by field against the result. */
struct entry_check {
    const struct scan_result *r;
    size_t n;
};

static int check_entry(void *ctx, const struct store_entry *e)
{
    struct entry_check *c = ctx;
    const struct scan_entry *se = scan_entry_by_id(c->r, e->id);
    ck_assert_ptr_nonnull(se);
    ck_assert_uint_eq(e->block, se->block);
    ck_assert_uint_eq(e->parent, se->parent);
    ck_assert_int_eq(e->state, se->state);
    ck_assert_uint_eq(e->type, se->e.type);
    ck_assert_uint_eq(e->name_len, se->e.name_len);
    ck_assert(memcmp(e->name, se->e.name, e->name_len) == 0);
    char *esc = store_escape(se->path, strlen(se->path));
    ck_assert_str_eq(e->path, esc);
    free(esc);
    ck_assert(clean_utf8(e->path));
    ck_assert_uint_eq(e->size, se->e.size);
    ck_assert_uint_eq(e->attr, se->e.attr);
    ck_assert_uint_eq(e->wrcnt, se->e.wrcnt);
    ck_assert_uint_eq(e->blocks_needed, se->blocks_needed);
    ck_assert_uint_eq(e->blocks_mapped, se->blocks_mapped);
    ck_assert_uint_eq(e->blocks_intact, se->blocks_intact);
    c->n++;
    return 0;
}

/* Runs checked against the map as they come. */
struct run_check {
    const struct scan_block *map; /* the result's map */
    uint64_t n;                   /* its cells */
    uint64_t next;                /* where the next run must start */
    struct store_block_run prev;  /* the run before */
    size_t runs;                  /* runs seen */
};

static int check_run(void *ctx, const struct store_block_run *run)
{
    struct run_check *c = ctx;
    ck_assert_uint_eq(run->first, c->next); /* no gap, no overlap */
    ck_assert_uint_ge(run->count, 1);
    for (uint64_t b = run->first; b < run->first + run->count; b++) {
        ck_assert_uint_lt(b, c->n);
        U_CELL_EQ(run, &c->map[b], b);
    }
    /* A metadata cell is a run of its own, with its counter; other runs are maximal. */
    if (run->flags & SCAN_BF_METADATA) {
        ck_assert_uint_eq(run->count, 1);
        ck_assert(run->has_wrcnt);
        ck_assert_uint_eq(run->wrcnt, c->map[run->first].wrcnt);
    } else {
        ck_assert(!run->has_wrcnt);
        if (c->runs != 0 && !(c->prev.flags & SCAN_BF_METADATA))
            ck_assert(c->prev.cls != run->cls || c->prev.owner != run->owner ||
                      c->prev.flags != run->flags);
    }
    c->prev = *run;
    c->next = run->first + run->count;
    c->runs++;
    return 0;
}

/* The runs of a scan cover its map exactly once and agree with it cell by cell. */
static void check_runs_cover_map(struct store_db *db, int64_t id, const struct scan_result *r)
{
    struct run_check c = {.map = scan_blocks(r), .n = scan_block_count(r)};
    struct lanyfs_error err;
    ck_assert_int_eq(store_block_runs(db, id, 0, UINT64_MAX, check_run, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.next, c.n);
}

static int count_counter_v1(void *ctx, uint64_t block, enum scan_class cls, uint16_t wrcnt)
{
    const struct scan_result *r = ctx;
    const struct scan_block *m = scan_blocks(r);
    ck_assert_uint_lt(block, scan_block_count(r));
    ck_assert_int_eq(cls, m[block].cls);
    ck_assert_uint_eq(wrcnt, m[block].wrcnt);
    return 0;
}

/* A version 1 file (counters in a table, metadata cells run together) is upgraded on open. */
START_TEST(t_upgrade_v1)
{
    const char *p = dbpath("v1.db");
    struct scan_result *r = sample();
    struct store_db *db = open_ok(p, 0);
    int64_t id = add_ok(db, r, "v1.img");
    close_ok(db);
    /* Back to version 1 by hand, with the two chain blocks 11 and 12 in one run. */
    sqlite3 *h = raw_open(p);
    raw_exec(h, "BEGIN;"
                "DROP TABLE lost_trees;"
                "DROP TABLE lost_tree_blocks;"
                "CREATE TABLE counters_t (scan INTEGER NOT NULL, block INTEGER NOT NULL,"
                " class INTEGER NOT NULL, wrcnt INTEGER NOT NULL,"
                " PRIMARY KEY (scan, class, block)) WITHOUT ROWID;"
                "INSERT INTO counters_t SELECT scan, first, class, wrcnt FROM block_runs"
                " WHERE wrcnt IS NOT NULL;"
                "DROP VIEW counters;"
                "ALTER TABLE counters_t RENAME TO counters;"
                "ALTER TABLE block_runs DROP COLUMN wrcnt;"
                "UPDATE block_runs SET count = 2 WHERE first = 11;"
                "DELETE FROM block_runs WHERE first = 12;"
                "PRAGMA user_version = 1;"
                "COMMIT;");
    sqlite3_close(h);
    /* Read-only, it is refused untouched; read-write, it is upgraded. */
    expect_refused(p, STORE_OPEN_READONLY, LANYFS_E_VERSION, "write a scan into it once");
    h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "PRAGMA user_version"), 1);
    sqlite3_close(h);
    db = open_ok(p, 0);
    check_runs_cover_map(db, id, r);
    struct lanyfs_error err;
    ck_assert_int_eq(store_counters(db, id, STORE_ANY_CLASS, count_counter_v1, r, &err),
                     LANYFS_OK);
    close_ok(db);
    h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM counters"),
                     raw_int(h, "SELECT COUNT(*) FROM block_runs WHERE flags & 4"));
    ck_assert_int_eq(raw_int(h, "SELECT count FROM block_runs WHERE first = 12"), 1);
    ck_assert_int_eq(raw_int(h, "SELECT wrcnt FROM counters WHERE block = 12"), 65535);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM sqlite_schema WHERE name IN"
                                " ('lost_trees', 'lost_tree_blocks')"),
                     2);
    sqlite3_close(h);
    /* And takes new scans. */
    db = open_ok(p, 0);
    check_runs_cover_map(db, add_ok(db, r, "v1.img"), r);
    close_ok(db);
    scan_result_free(r);
}
END_TEST

START_TEST(t_round_trip)
{
    const char *p = dbpath("rt.db");
    struct scan_result *r = sample();
    struct store_db *db = open_ok(p, 0);
    int64_t id = add_ok(db, r, "/images/stick.img");
    ck_assert_int_eq(id, 1);
    struct lanyfs_error err;
    lanyfs_error_clear(&err);

    struct store_scan s;
    ck_assert_int_eq(store_get_scan(db, id, &s, &err), LANYFS_OK);
    ck_assert_int_eq(s.id, 1);
    ck_assert_str_eq(s.started, "2026-12-03T01:02:15.000000005Z");
    ck_assert(s.seconds == 0.25);
    ck_assert_str_eq(s.tool_version, PACKAGE_VERSION);
    ck_assert_str_eq(s.image_path, "/images/stick.img");
    ck_assert_uint_eq(s.image_size, 64 * 512);
    ck_assert_ptr_null(s.image_sha256);
    ck_assert(s.have_geometry);
    ck_assert_uint_eq(s.block_size, 512);
    ck_assert_uint_eq(s.address_length, 4);
    ck_assert_uint_eq(s.blocks, 64);
    ck_assert_uint_eq(s.map_blocks, 64);
    ck_assert(!s.geometry_inferred);
    ck_assert(s.have_super);
    ck_assert_uint_eq(s.sb.magic, LANYFS_MAGIC);
    ck_assert_uint_eq(s.sb.wrcnt, 2);
    ck_assert_uint_eq(s.sb.freeblocks, 31);
    ck_assert_str_eq(s.sb.created, "2026-12-03T01:02:15Z");
    ck_assert_ptr_null(s.sb.checked);
    ck_assert_uint_eq(s.sb.label_len, 0);
    struct scan_summary sum;
    scan_summarize(r, &sum);
    ck_assert_uint_eq(s.summary.dirs, sum.dirs);
    ck_assert_uint_eq(s.summary.files, sum.files);
    ck_assert_uint_eq(s.summary.deleted, 1);
    ck_assert_uint_eq(s.summary.orphans, 1);
    ck_assert_uint_eq(s.summary.bytes, sum.bytes);
    ck_assert_uint_eq(s.summary.free_listed, sum.free_listed);
    ck_assert_int_eq(s.summary.worst, SCAN_SEV_ERROR);
    for (int k = 0; k < 4; k++)
        ck_assert_uint_eq(s.summary.findings_by_severity[k], sum.findings_by_severity[k]);
    for (int k = 0; k < SCAN_BLK_CLASSES; k++)
        ck_assert_uint_eq(s.summary.by_class[k], sum.by_class[k]);
    ck_assert_uint_eq(s.entries, 6);
    ck_assert_uint_eq(s.findings, 6);
    store_scan_clear(&s);

    /* Entries: all of them, field by field. */
    struct entry_check ec = {.r = r};
    ck_assert_int_eq(store_entries(db, id, NULL, STORE_ANY_STATE, check_entry, &ec, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(ec.n, 6);

    /* Data maps as extents: holes have no row. */
    struct collect c = {0};
    ck_assert_int_eq(store_entry_blocks(db, id, 4, count_extent, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_uint_eq(c.ids[0], 0);
    ck_assert_uint_eq(c.vals[0], 9);
    ck_assert_uint_eq(c.runs[0].count, 1);
    ck_assert_uint_eq(c.ids[1], 2);
    ck_assert_uint_eq(c.vals[1], 10);
    ck_assert_uint_eq(c.runs[1].count, 1);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_entry_blocks(db, id, 3, count_extent, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(c.vals[0], 5);
    ck_assert_uint_eq(c.runs[0].count, 3);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_block_owners(db, id, 6, count_owner, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(c.ids[0], 3);
    ck_assert_uint_eq(c.vals[0], 1);

    /* Findings: the same codes in the same order, messages filled in. */
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_findings(db, id, 0, SCAN_SEV_INFO, count_finding, &c, &err),
                     LANYFS_OK);
    const struct scan_finding *f;
    size_t nf = scan_findings(r, &f);
    ck_assert_uint_eq(c.n, nf);
    for (size_t i = 0; i < nf; i++) {
        ck_assert_uint_eq(c.ids[i], f[i].code);
        ck_assert_uint_eq(c.vals[i], i);
    }

    check_runs_cover_map(db, id, r);

    /* Counters: every metadata cell, none other. */
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_counters(db, id, STORE_ANY_CLASS, count_counter, &c, &err),
                     LANYFS_OK);
    const struct scan_block *map = scan_blocks(r);
    size_t k = 0;
    for (uint64_t b = 0; b < scan_block_count(r); b++) {
        if (!(map[b].flags & SCAN_BF_METADATA))
            continue;
        ck_assert_uint_lt(k, c.n);
        ck_assert_uint_eq(c.vals[k], b);
        ck_assert_uint_eq(c.ids[k], (uint32_t)map[b].cls | (uint32_t)map[b].wrcnt << 8);
        k++;
    }
    ck_assert_uint_eq(k, c.n);

    close_ok(db);

    /* Timestamps as stored, nanoseconds and out-of-range fields included. */
    sqlite3 *h = raw_open(p);
    char *t = raw_text(h, "SELECT created || ' ' || created_offset FROM entries WHERE id = 3");
    ck_assert_str_eq(t, "2026-12-03T01:02:15.000000123Z 60");
    free(t);
    t = raw_text(h, "SELECT modified FROM entries WHERE id = 3");
    ck_assert_str_eq(t, "65535-200-31T99:00:60Z");
    free(t);
    ck_assert_int_eq(raw_int(h, "SELECT created IS NULL FROM entries WHERE id = 4"), 1);
    sqlite3_close(h);
    scan_result_free(r);
}
END_TEST

START_TEST(t_queries)
{
    struct scan_result *r = sample();
    struct store_db *db = open_ok(dbpath("q.db"), 0);
    int64_t id = add_ok(db, r, "q.img");
    struct lanyfs_error err;
    struct collect c = {0};

    /* By path prefix, ordered by path; with a state; stopped by the callback. */
    ck_assert_int_eq(store_entries(db, id, "/docs", STORE_ANY_STATE, count_entry, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_uint_eq(c.ids[0], 2);
    ck_assert_uint_eq(c.ids[1], 3);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_entries(db, id, "/docs/", STORE_ANY_STATE, count_entry, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_entries(db, id, "/", SCAN_ENTRY_DELETED, count_entry, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(c.vals[0], 41);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_entries(db, id, "", SCAN_ENTRY_LIVE, count_entry, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 4);
    memset(&c, 0, sizeof(c));
    c.stop_after = 2;
    ck_assert_int_eq(store_entries(db, id, NULL, STORE_ANY_STATE, count_entry, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 2);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_entries(db, id, "/zzz", STORE_ANY_STATE, count_entry, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 0);

    /* Findings by code and by severity. */
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_findings(db, id, SCAN_PR_BLOCK_SHARED, SCAN_SEV_INFO, count_finding,
                                    &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(c.vals[0], 1);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_findings(db, id, 0, SCAN_SEV_WARNING, count_finding, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 4); /* leaked, shared, orphan, freeblocks */
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_findings(db, id, SCAN_PR_FILE_HOLES, SCAN_SEV_WARNING, count_finding,
                                    &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 0);

    /* Block runs by range: from inside a run, up to inside another. */
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_block_runs(db, id, 20, 42, count_run, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 3); /* free 13..40, deleted 41, free 42 */
    ck_assert_uint_eq(c.runs[0].first, 13);
    ck_assert_uint_eq(c.runs[0].count, 28);
    ck_assert_int_eq(c.runs[0].cls, SCAN_BLK_FREE);
    ck_assert_uint_eq(c.runs[1].first, 41);
    ck_assert_uint_eq(c.runs[1].owner, 5);
    ck_assert_uint_eq(c.runs[2].first, 42);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_block_runs(db, id, 0, 0, count_run, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_int_eq(c.runs[0].cls, SCAN_BLK_SUPER);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_block_runs(db, id, 63, 1000, count_run, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(c.runs[0].first, 44);
    ck_assert_uint_eq(c.runs[0].count, 20);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_block_runs(db, id, 1000, 2000, count_run, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 0); /* past the map's end */
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_block_runs(db, id, 9, 10, count_run, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 2); /* 9 plain, 10 shared */
    ck_assert_uint_eq(c.runs[1].flags, SCAN_BF_SHARED);

    /* Counters by class. */
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_counters(db, id, SCAN_BLK_CHAIN, count_counter, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_uint_eq(c.vals[0], 11);
    ck_assert_uint_eq(c.ids[1] >> 8, 65535);

    close_ok(db);
    scan_result_free(r);
}
END_TEST

/* A finding's callback checking its fields. */
static int check_big(void *ctx, const struct store_finding *f)
{
    (void)ctx;
    ck_assert_uint_eq(f->value, UINT64_MAX);
    ck_assert_uint_eq(f->value2, (uint64_t)INT64_MAX + 1);
    ck_assert_uint_eq(f->block, UINT64_MAX - 1);
    ck_assert_str_eq(f->code_name, "SB_ROOTDIR_RANGE");
    ck_assert_int_eq(f->severity, SCAN_SEV_CRITICAL);
    ck_assert_str_eq(f->message, "superblock field 'rootdir' is 18446744073709551615, outside "
                                 "the device");
    return 0;
}

START_TEST(t_big_values)
{
    const char *p = dbpath("big.db");
    struct scan_result *r = fake_new(12, 8, 16);
    fake_super(r)->rootdir = UINT64_MAX;
    fake_super(r)->freehead = (uint64_t)INT64_MAX + 1;
    fake_finding(r, SCAN_PR_SB_ROOTDIR_RANGE, 0, UINT64_MAX - 1, 0, UINT64_MAX,
                 (uint64_t)INT64_MAX + 1, 0, 0, NULL, NULL);
    struct store_db *db = open_ok(p, 0);
    int64_t id = add_ok(db, r, "big.img");
    struct store_scan s;
    struct lanyfs_error err;
    ck_assert_int_eq(store_get_scan(db, id, &s, &err), LANYFS_OK);
    ck_assert_uint_eq(s.sb.rootdir, UINT64_MAX);
    ck_assert_uint_eq(s.sb.freehead, (uint64_t)INT64_MAX + 1);
    store_scan_clear(&s);
    ck_assert_int_eq(store_findings(db, id, 0, SCAN_SEV_INFO, check_big, NULL, &err), LANYFS_OK);
    close_ok(db);
    /* The same 64 bits in SQL. */
    sqlite3 *h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "SELECT sb_rootdir FROM scans"), -1);
    ck_assert_int_eq(raw_int(h, "SELECT value FROM findings"), -1);
    sqlite3_close(h);
    scan_result_free(r);
}
END_TEST

START_TEST(t_no_super_no_geom)
{
    struct scan_result *r = fake_new(9, 1, 16);
    fake_no_super(r);
    fake_no_geom(r);
    fake_set_inferred(r, true);
    struct store_db *db = open_ok(dbpath("nosb.db"), 0);
    int64_t id = add_ok(db, r, "nosb.img");
    struct store_scan s;
    struct lanyfs_error err;
    ck_assert_int_eq(store_get_scan(db, id, &s, &err), LANYFS_OK);
    ck_assert(!s.have_super);
    ck_assert(!s.have_geometry);
    ck_assert(s.geometry_inferred);
    ck_assert_uint_eq(s.map_blocks, 16);
    ck_assert_uint_eq(s.summary.by_class[SCAN_BLK_UNKNOWN], 16);
    store_scan_clear(&s);
    close_ok(db);
    scan_result_free(r);
}
END_TEST

/* Every data block of every entry, from the extents, against the result. */
struct map_check {
    const struct scan_entry *se; /* the entry */
    uint64_t next;               /* the next file block an extent may start at */
    uint64_t blocks;             /* blocks seen */
};

static int check_extent(void *ctx, uint64_t file_block, uint64_t block, uint64_t count)
{
    struct map_check *c = ctx;
    ck_assert_uint_ge(file_block, c->next);
    ck_assert_uint_ge(count, 1);
    ck_assert_uint_le(count, STORE_EXTENT_MAX);
    for (uint64_t k = c->next; k < file_block; k++)
        ck_assert_uint_eq(c->se->data[k], 0); /* skipped: holes only */
    for (uint64_t k = 0; k < count; k++)
        ck_assert_uint_eq(c->se->data[file_block + k], block + k);
    c->next = file_block + count;
    c->blocks += count;
    return 0;
}

START_TEST(t_extents)
{
    struct scan_result *r = fake_new(9, 4, 8192);
    static uint64_t big[2600], holes[40];
    for (uint64_t k = 0; k < 2600; k++)
        big[k] = 100 + k; /* one run: 1024 + 1024 + 552 */
    for (uint64_t k = 0; k < 40; k++)
        holes[k] = k % 7 == 3 ? 0 : k < 20 ? 3000 + k : 5000 - k; /* holes, backwards */
    holes[39] = 150; /* a cross-link into big's first extent */
    fake_entry(r, 1, 0, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, "LANYFSROOT", 10, "/", 0, NULL, 0);
    fake_entry(r, 2, 1, SCAN_ENTRY_LIVE, LANYFS_TYPE_FILE, "big", 3, "/big", 2600 * 512, big,
               2600);
    fake_entry(r, 3, 1, SCAN_ENTRY_DELETED, LANYFS_TYPE_FILE, "h", 1, "/h", 40 * 512, holes, 40);
    struct store_db *db = open_ok(dbpath("ext.db"), 0);
    int64_t id = add_ok(db, r, "e.img");
    struct lanyfs_error err;
    for (uint32_t e = 2; e <= 3; e++) {
        struct map_check mc = {.se = scan_entry_by_id(r, e)};
        ck_assert_int_eq(store_entry_blocks(db, id, e, check_extent, &mc, &err), LANYFS_OK);
        ck_assert_uint_eq(mc.blocks, mc.se->blocks_mapped);
    }
    struct collect c = {0};
    ck_assert_int_eq(store_entry_blocks(db, id, 2, count_extent, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 3);
    ck_assert_uint_eq(c.runs[2].count, 552);
    /* Owners from the extents: the cross-linked block has two. */
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_block_owners(db, id, 150, count_owner, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_uint_eq(c.ids[0], 2);
    ck_assert_uint_eq(c.vals[0], 50);
    ck_assert_uint_eq(c.ids[1], 3);
    ck_assert_uint_eq(c.vals[1], 39);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_block_owners(db, id, 100 + 2047, count_owner, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(c.vals[0], 2047);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_block_owners(db, id, 100 + 2600, count_owner, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 0);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_block_owners(db, id, 4975, count_owner, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(c.ids[0], 3);
    ck_assert_uint_eq(c.vals[0], 25);
    close_ok(db);
    scan_result_free(r);
}
END_TEST

/* ---- lost trees ---------------------------------------------------------------- */

/*
 * sample() with three lost trees: the data of /b.bin (entry 4) at 44,
 * blocks 45..47; one no file links at 48, with a hole (49, hole, 50, 51);
 * and one far up with values no image gives: 2600 blocks in one run (three
 * extents), size 2^64 - 1.
 */
#define FAR_TOP ((uint64_t)1 << 62)

static struct scan_result *sample_lost(void)
{
    struct scan_result *r = sample();
    static const uint64_t paired[] = {45, 46, 47}, unpaired[] = {49, 0, 50, 51};
    static uint64_t far[2600];
    for (uint64_t k = 0; k < 2600; k++)
        far[k] = FAR_TOP + 1 + k;
    uint64_t ext = 44;
    fake_lost_tree(r, 44, 4, 1500, paired, 3, &ext, 1);
    ext = 48;
    fake_lost_tree(r, 48, 0, 2048, unpaired, 4, &ext, 1);
    uint64_t exts[] = {FAR_TOP, FAR_TOP + 5000, FAR_TOP + 5001};
    fake_lost_tree(r, FAR_TOP, 0, UINT64_MAX, far, 2600, exts, 3);
    return r;
}

/* Lost trees read back, and the data map of each rebuilt from its extents. */
struct lost_check {
    struct store_db *db;
    int64_t scan;
    const struct scan_result *r;
    size_t n;        /* trees seen */
    int stop_after;  /* return 1 after this many trees (0: never) */
};

/* Extents against a data map: data[] of ndata, holes only between them. */
struct data_check {
    const uint64_t *data;
    uint64_t ndata;
    uint64_t next;    /* file block after the last extent */
    uint64_t blocks;  /* blocks in the extents */
    uint64_t extents; /* extents seen */
};

static int check_data_extent(void *ctx, uint64_t file_block, uint64_t block, uint64_t count)
{
    struct data_check *c = ctx;
    ck_assert_uint_ge(file_block, c->next);
    ck_assert_uint_ge(count, 1);
    ck_assert_uint_le(count, STORE_EXTENT_MAX);
    ck_assert_uint_le(file_block + count, c->ndata);
    for (uint64_t k = c->next; k < file_block; k++)
        ck_assert_uint_eq(c->data[k], 0);
    for (uint64_t k = 0; k < count; k++)
        ck_assert_uint_eq(c->data[file_block + k], block + k);
    c->next = file_block + count;
    c->blocks += count;
    c->extents++;
    return 0;
}

static int check_lost(void *ctx, const struct store_lost_tree *t)
{
    struct lost_check *c = ctx;
    const struct scan_lost_tree *lt;
    size_t n = scan_lost_trees(c->r, &lt);
    ck_assert_uint_lt(c->n, n);
    const struct scan_lost_tree *want = &lt[c->n]; /* the result's are by top too */
    ck_assert_uint_eq(t->top, want->top);
    ck_assert_uint_eq(t->entry, want->entry);
    ck_assert_uint_eq(t->size, want->size);
    ck_assert_uint_eq(t->blocks_mapped, want->mapped);
    ck_assert_uint_eq(t->extenders, want->nexts);
    struct data_check d = {.data = want->data, .ndata = want->ndata};
    struct lanyfs_error err;
    ck_assert_int_eq(store_lost_tree_blocks(c->db, c->scan, t->top, check_data_extent, &d, &err),
                     LANYFS_OK);
    for (uint64_t k = d.next; k < want->ndata; k++)
        ck_assert_uint_eq(want->data[k], 0);
    ck_assert_uint_eq(d.blocks, want->mapped);
    c->n++;
    return c->stop_after != 0 && (int)c->n >= c->stop_after;
}

START_TEST(t_lost_trees)
{
    const char *p = dbpath("lost.db");
    struct scan_result *r = sample_lost();
    struct scan_result *none = sample();
    struct store_db *db = open_ok(p, 0);
    int64_t id = add_ok(db, r, "lost.img");
    int64_t id2 = add_ok(db, none, "none.img");
    struct lanyfs_error err;

    struct lost_check lc = {.db = db, .scan = id, .r = r};
    ck_assert_int_eq(store_lost_trees(db, id, check_lost, &lc, &err), LANYFS_OK);
    ck_assert_uint_eq(lc.n, 3);
    /* The extents: holes have no row, a long run is cut at STORE_EXTENT_MAX. */
    struct collect c = {0};
    ck_assert_int_eq(store_lost_tree_blocks(db, id, 48, count_extent, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_uint_eq(c.ids[0], 0);
    ck_assert_uint_eq(c.vals[0], 49);
    ck_assert_uint_eq(c.runs[0].count, 1);
    ck_assert_uint_eq(c.ids[1], 2);
    ck_assert_uint_eq(c.vals[1], 50);
    ck_assert_uint_eq(c.runs[1].count, 2);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_lost_tree_blocks(db, id, FAR_TOP, count_extent, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 3);
    ck_assert_uint_eq(c.runs[0].count, STORE_EXTENT_MAX);
    ck_assert_uint_eq(c.runs[2].count, 552);
    /* A top that is no lost tree has no blocks; a callback's non-zero stops the query. */
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_lost_tree_blocks(db, id, 45, count_extent, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 0);
    lc = (struct lost_check){.db = db, .scan = id, .r = r, .stop_after = 1};
    ck_assert_int_eq(store_lost_trees(db, id, check_lost, &lc, &err), LANYFS_OK);
    ck_assert_uint_eq(lc.n, 1);
    /* A scan without lost trees has none. */
    lc = (struct lost_check){.db = db, .scan = id2, .r = none};
    ck_assert_int_eq(store_lost_trees(db, id2, check_lost, &lc, &err), LANYFS_OK);
    ck_assert_uint_eq(lc.n, 0);
    close_ok(db);

    /* In SQL: an unpaired tree's entry is NULL, the same 64 bits for the size. */
    sqlite3 *h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "SELECT entry FROM lost_trees WHERE top = 44"), 4);
    ck_assert_int_eq(raw_int(h, "SELECT entry IS NULL FROM lost_trees WHERE top = 48"), 1);
    ck_assert_int_eq(raw_int(h, "SELECT size FROM lost_trees WHERE top = 4611686018427387904"),
                     -1);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM lost_tree_blocks"), 1 + 2 + 3);
    sqlite3_close(h);

    /* Deleted with their scan, the other scan's rows kept. */
    db = open_ok(p, 0);
    ck_assert_int_eq(store_delete_scan(db, id, &err), LANYFS_OK);
    close_ok(db);
    h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM lost_trees"), 0);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM lost_tree_blocks"), 0);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM scans"), 1);
    sqlite3_close(h);
    scan_result_free(r);
    scan_result_free(none);
}
END_TEST

/* Two lost trees at one top: the write fails whole and names the table. */
START_TEST(t_lost_trees_failed)
{
    const char *p = dbpath("lostfail.db");
    struct scan_result *r = sample_lost();
    uint64_t data = 45;
    fake_lost_tree(r, 44, 0, 512, &data, 1, NULL, 0);
    struct store_db *db = open_ok(p, 0);
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    enum lanyfs_err rc =
        store_add_scan(db, r, &(struct store_scan_meta){.image_path = "f.img"}, NULL, &err);
    ck_assert_int_eq(rc, LANYFS_E_IO);
    ck_assert_msg(strstr(err.msg, p) != NULL, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "INSERT INTO lost_trees") != NULL, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "UNIQUE") != NULL, "%s", err.msg);
    close_ok(db);
    sqlite3 *h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM scans"), 0);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM lost_trees"), 0);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM lost_tree_blocks"), 0);
    sqlite3_close(h);
    scan_result_free(r);
}
END_TEST

/* A query over rows changed by hand must fail with LANYFS_E_CORRUPT naming all of want. */
static void expect_corrupt(enum lanyfs_err rc, const struct lanyfs_error *err, const char *p,
                           const char *table, const char *why, const char *sql)
{
    ck_assert_msg(rc == LANYFS_E_CORRUPT, "after %s: %s (%s)", sql, lanyfs_strerror(rc),
                  err->msg);
    ck_assert_msg(strstr(err->msg, p) != NULL, "'%s' does not name %s", err->msg, p);
    ck_assert_msg(strstr(err->msg, table) != NULL, "'%s' does not name %s", err->msg, table);
    ck_assert_msg(strstr(err->msg, why) != NULL, "after %s: '%s' lacks '%s'", sql, err->msg,
                  why);
}

/* Findings: vals[] their severity. */
static int hostile_finding_severity(void *ctx, const struct store_finding *f)
{
    struct collect *c = ctx;
    if (c->n < 64)
        c->vals[c->n] = f->severity;
    c->n++;
    return 0;
}

static int ignore_tree(void *ctx, const struct store_lost_tree *t)
{
    (void)ctx;
    (void)t;
    return 0;
}

/* Rows of a hostile file: the readers refuse what the writer never writes. */
START_TEST(t_lost_trees_hostile)
{
    char *p = strdup(dbpath("rows.db")); /* dbpath's buffer is reused for the copies */
    struct scan_result *r = sample_lost();
    struct store_db *db = open_ok(p, 0);
    int64_t id = add_ok(db, r, "h.img");
    close_ok(db);

    /* Each change, made alone on a copy of the file, and what the error must say. */
    static const struct {
        const char *sql;   /* the change */
        const char *table; /* the statement that meets it */
        const char *why;   /* in the message */
    } bad[] = {
        {"UPDATE lost_tree_blocks SET count = 0 WHERE top = 48 AND file_block = 2",
         "SELECT FROM lost_tree_blocks", "a count outside 1..1024"},
        {"UPDATE lost_tree_blocks SET count = 1025 WHERE top = 48 AND file_block = 0",
         "SELECT FROM lost_tree_blocks", "a count outside 1..1024"},
        {"UPDATE lost_tree_blocks SET count = -1 WHERE top = 48 AND file_block = 0",
         "SELECT FROM lost_tree_blocks", "a count outside 1..1024"},
        {"UPDATE lost_tree_blocks SET block = -2 WHERE top = 48 AND file_block = 2",
         "SELECT FROM lost_tree_blocks", "an end past 2^64"},
        {"UPDATE lost_tree_blocks SET file_block = -1 WHERE top = 48 AND file_block = 2",
         "SELECT FROM lost_tree_blocks", "an end past 2^64"},
        {"UPDATE lost_tree_blocks SET block = 0 WHERE top = 48 AND file_block = 0",
         "SELECT FROM lost_tree_blocks", "block 0"},
        {"UPDATE lost_tree_blocks SET count = 3 WHERE top = 48 AND file_block = 0",
         "SELECT FROM lost_tree_blocks", "an overlap with the extent before it"},
        {"UPDATE lost_tree_blocks SET block = 'x' WHERE top = 48 AND file_block = 0",
         "SELECT FROM lost_tree_blocks", "not an integer"},
        {"UPDATE lost_tree_blocks SET count = x'01' WHERE top = 48 AND file_block = 2",
         "SELECT FROM lost_tree_blocks", "not an integer"},
        {"UPDATE entry_blocks SET count = 0 WHERE entry = 4 AND file_block = 2",
         "SELECT FROM entry_blocks", "a count outside 1..1024"},
        {"UPDATE entry_blocks SET count = 3 WHERE entry = 4 AND file_block = 0",
         "SELECT FROM entry_blocks", "an overlap with the extent before it"},
        {"UPDATE lost_trees SET entry = 4294967296 WHERE top = 48",
         "SELECT FROM lost_trees", "an entry outside 1..4294967295"},
        {"UPDATE lost_trees SET entry = 0 WHERE top = 48",
         "SELECT FROM lost_trees", "an entry outside 1..4294967295"},
        {"UPDATE lost_trees SET entry = -4 WHERE top = 44",
         "SELECT FROM lost_trees", "an entry outside 1..4294967295"},
        {"UPDATE lost_trees SET top = 0 WHERE top = 44",
         "SELECT FROM lost_trees", "top 0"},
        {"UPDATE lost_trees SET size = 1.5 WHERE top = 44",
         "SELECT FROM lost_trees", "not an integer"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char copy[64], sql[700];
        snprintf(copy, sizeof(copy), "rows-%zu.db", i);
        char *keep = strdup(dbpath(copy));
        sqlite3 *h = raw_open(p);
        snprintf(sql, sizeof(sql), "VACUUM INTO '%s'", keep);
        raw_exec(h, sql);
        sqlite3_close(h);
        h = raw_open(keep);
        raw_exec(h, bad[i].sql);
        ck_assert_msg(sqlite3_changes(h) == 1, "%s changed %d rows", bad[i].sql,
                      sqlite3_changes(h));
        sqlite3_close(h);

        db = open_ok(keep, STORE_OPEN_READONLY);
        struct lanyfs_error err;
        lanyfs_error_clear(&err);
        struct collect c = {0};
        enum lanyfs_err rc;
        if (strcmp(bad[i].table, "SELECT FROM lost_trees") == 0)
            rc = store_lost_trees(db, id, ignore_tree, NULL, &err);
        else if (strcmp(bad[i].table, "SELECT FROM entry_blocks") == 0)
            rc = store_entry_blocks(db, id, 4, count_extent, &c, &err);
        else
            rc = store_lost_tree_blocks(db, id, 48, count_extent, &c, &err);
        expect_corrupt(rc, &err, keep, bad[i].table, bad[i].why, bad[i].sql);
        /* The rows before the bad one came, the bad one did not. */
        ck_assert_uint_le(c.n, 1);
        close_ok(db);
        free(keep);
    }
    /* The file as written reads back whole. */
    db = open_ok(p, STORE_OPEN_READONLY);
    struct lost_check lc = {.db = db, .scan = id, .r = r};
    struct lanyfs_error err;
    ck_assert_int_eq(store_lost_trees(db, id, check_lost, &lc, &err), LANYFS_OK);
    ck_assert_uint_eq(lc.n, 3);
    close_ok(db);
    scan_result_free(r);
    free(p);
}
END_TEST

/* A copy of the file at p (VACUUM INTO) with sql run on it; its path, owned. */
static char *edited_copy(const char *p, const char *name, const char *sql, bool one_row)
{
    char *keep = strdup(dbpath(name));
    char vacuum[600];
    sqlite3 *h = raw_open(p);
    snprintf(vacuum, sizeof(vacuum), "VACUUM INTO '%s'", keep);
    raw_exec(h, vacuum);
    sqlite3_close(h);
    h = raw_open(keep);
    raw_exec(h, sql);
    if (one_row)
        ck_assert_msg(sqlite3_changes(h) == 1, "%s changed %d rows", sql, sqlite3_changes(h));
    sqlite3_close(h);
    return keep;
}

static int ignore_entry(void *ctx, const struct store_entry *e)
{
    (void)ctx;
    (void)e;
    return 0;
}

/*
 * Rows of every table a reader hands on, changed by hand as fuzz_store
 * changed them: ids cut to 32 bits would name other entries, states,
 * types and classes outside their enums would index past tables, runs that
 * overlap would paint a block twice, a NULL is no lack of memory, and a
 * geometry no LanyFS has would size the GUI's buffers.
 */
START_TEST(t_rows_hostile)
{
    char *p = strdup(dbpath("hostile-rows.db"));
    struct scan_result *r = sample();
    struct store_db *db = open_ok(p, 0);
    int64_t id = add_ok(db, r, "h.img");
    close_ok(db);
    scan_result_free(r);

    enum reader { ENTRIES, FINDINGS, RUNS, COUNTERS, OWNERS, SCAN };
#define LOOSE(t) \
    "CREATE TABLE fz AS SELECT * FROM " t "; DROP TABLE " t "; ALTER TABLE fz RENAME TO " t "; "
    static const struct {
        const char *sql;   /* the change, the last statement changing one row */
        enum reader rd;    /* the reader that meets it */
        const char *table; /* its statement */
        const char *why;   /* in the message */
    } bad[] = {
        {"UPDATE entries SET id = 4294967297 WHERE id = 1", ENTRIES, "SELECT FROM entries",
         "an id outside 1..4294967295"},
        {"UPDATE entries SET id = 0 WHERE id = 6", ENTRIES, "SELECT FROM entries",
         "an id outside 1..4294967295"},
        {"UPDATE entries SET parent = -1 WHERE id = 3", ENTRIES, "SELECT FROM entries",
         "a parent outside 0..4294967295"},
        {"UPDATE entries SET state = 3 WHERE id = 5", ENTRIES, "SELECT FROM entries",
         "a state other than live"},
        {"UPDATE entries SET state = 1.5 WHERE id = 5", ENTRIES, "SELECT FROM entries",
         "a state other than live"},
        {"UPDATE entries SET type = 48 WHERE id = 4", ENTRIES, "SELECT FROM entries",
         "a type other than a directory's and a file's"},
        {"UPDATE findings SET entry = 4294967300 WHERE seq = 1", FINDINGS, "SELECT FROM findings",
         "an entry outside 0..4294967295"},
        {LOOSE("findings") "UPDATE findings SET message = NULL WHERE seq = 2", FINDINGS,
         "SELECT FROM findings", "a NULL in a NOT NULL column"},
        {"UPDATE block_runs SET class = 14 WHERE first = 11", RUNS, "SELECT FROM block_runs",
         "a class no block has"},
        {"UPDATE block_runs SET count = 0 WHERE first = 44", RUNS, "SELECT FROM block_runs",
         "a count of 0"},
        {"UPDATE block_runs SET count = 3 WHERE first = 8", RUNS, "SELECT FROM block_runs",
         "a first block inside the run before it"},
        {"UPDATE block_runs SET count = -1 WHERE first = 44", RUNS, "SELECT FROM block_runs",
         "an end past 2^64"},
        {"UPDATE block_runs SET count = 'x' WHERE first = 44", RUNS, "SELECT FROM block_runs",
         "not an integer"},
        {"UPDATE block_runs SET owner = 4294967299 WHERE first = 3", RUNS,
         "SELECT FROM block_runs", "an owner outside 0..4294967295"},
        {"UPDATE block_runs SET class = -1 WHERE first = 1", COUNTERS, "SELECT FROM block_runs",
         "a class no block has"},
        {"UPDATE entry_blocks SET entry = 4294967299 WHERE entry = 3", OWNERS,
         "SELECT FROM entry_blocks", "an entry outside 1..4294967295"},
        {"UPDATE entry_blocks SET count = 2000 WHERE entry = 3", OWNERS,
         "SELECT FROM entry_blocks", "a count outside 1..1024"},
        {"UPDATE entries SET wrcnt = 65536 WHERE id = 2", ENTRIES, "SELECT FROM entries",
         "a write counter outside 0..65535"},
        {"UPDATE entries SET attr = -1 WHERE id = 2", ENTRIES, "SELECT FROM entries",
         "attributes outside 0..65535"},
        {"UPDATE block_runs SET flags = 256 WHERE first = 3", RUNS, "SELECT FROM block_runs",
         "flags outside 0..255"},
        {"UPDATE block_runs SET wrcnt = 70000 WHERE first = 1", RUNS, "SELECT FROM block_runs",
         "a write counter outside 0..65535"},
        {"UPDATE block_runs SET wrcnt = 'x' WHERE first = 1", COUNTERS, "SELECT FROM block_runs",
         "a write counter outside 0..65535"},
        {"UPDATE scans SET sb_wrcnt = 65538", SCAN, "SELECT FROM scans",
         "a superblock field wider than the superblock's"},
        {"UPDATE scans SET sb_addrlen = 264", SCAN, "SELECT FROM scans",
         "a superblock field wider than the superblock's"},
        {"UPDATE scans SET block_size = 3", SCAN, "SELECT FROM scans",
         "a geometry no LanyFS has"},
        {"UPDATE scans SET address_length = 9", SCAN, "SELECT FROM scans",
         "a geometry no LanyFS has"},
        {LOOSE("scans") "UPDATE scans SET image_path = NULL", SCAN, "SELECT FROM scans",
         "a NULL in a NOT NULL column"},
    };
#undef LOOSE
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char copy[64];
        snprintf(copy, sizeof(copy), "hostile-rows-%zu.db", i);
        char *keep = edited_copy(p, copy, bad[i].sql, true);
        db = open_ok(keep, STORE_OPEN_READONLY);
        struct lanyfs_error err;
        lanyfs_error_clear(&err);
        struct collect c = {0};
        struct store_scan sc;
        enum lanyfs_err rc = LANYFS_OK;
        switch (bad[i].rd) {
        case ENTRIES:
            rc = store_entries(db, id, NULL, STORE_ANY_STATE, ignore_entry, NULL, &err);
            break;
        case FINDINGS:
            rc = store_findings(db, id, 0, SCAN_SEV_INFO, count_finding, &c, &err);
            break;
        case RUNS:
            rc = store_block_runs(db, id, 0, 63, count_run, &c, &err);
            break;
        case COUNTERS:
            rc = store_counters(db, id, STORE_ANY_CLASS, count_counter, &c, &err);
            break;
        case OWNERS:
            rc = store_block_owners(db, id, 6, count_owner, &c, &err);
            break;
        case SCAN:
            rc = store_get_scan(db, id, &sc, &err);
            break;
        }
        expect_corrupt(rc, &err, keep, bad[i].table, bad[i].why, bad[i].sql);
        close_ok(db);
        free(keep);
    }
    free(p);
}
END_TEST

/* Hand-edited rows the readers take as they stand, the right way. */
START_TEST(t_rows_hand_edited)
{
    char *p = strdup(dbpath("edited-rows.db"));
    struct scan_result *r = sample();
    struct store_db *db = open_ok(p, 0);
    int64_t id = add_ok(db, r, "e.img");
    close_ok(db);
    scan_result_free(r);
    struct lanyfs_error err;

    /* A label of bytes with a NUL: the bytes up to it, as store.h says. */
    char *keep = edited_copy(p, "edited-label.db", "UPDATE scans SET sb_label = x'41420043'", true);
    db = open_ok(keep, STORE_OPEN_READONLY);
    struct store_scan sc;
    ck_assert_int_eq(store_get_scan(db, id, &sc, &err), LANYFS_OK);
    ck_assert_uint_eq(sc.sb.label_len, 2);
    ck_assert_int_eq(memcmp(sc.sb.label, "AB", 2), 0);
    store_scan_clear(&sc);
    close_ok(db);
    free(keep);

    /* A severity that is text passes `severity >= 2` in SQL: it is the gravest. */
    keep = edited_copy(p, "edited-severity.db", "UPDATE findings SET severity = 'x' WHERE seq = 0",
                       true);
    db = open_ok(keep, STORE_OPEN_READONLY);
    struct collect c = {0};
    ck_assert_int_eq(store_findings(db, id, SCAN_PR_BLOCKS_LEAKED, SCAN_SEV_ERROR,
                                    hostile_finding_severity, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(c.vals[0], SCAN_SEV_CRITICAL);
    close_ok(db);
    free(keep);

    /* An extent far up the file: the owner's file block in 64 bits, not SQL's real. */
    keep = edited_copy(p, "edited-owner.db",
                       "UPDATE entry_blocks SET file_block = 9223372036854775806 WHERE entry = 3",
                       true);
    db = open_ok(keep, STORE_OPEN_READONLY);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_block_owners(db, id, 7, count_owner, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(c.ids[0], 3);
    ck_assert_uint_eq(c.vals[0], (uint64_t)1 << 63);
    close_ok(db);
    free(keep);

    /* The counters without their view (or with another one): read from block_runs. */
    keep = edited_copy(p, "edited-counters.db",
                       "DROP VIEW counters; CREATE VIEW counters AS WITH RECURSIVE n(x) AS"
                       " (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT 1 AS scan, x AS block,"
                       " 2 AS class, 1 AS wrcnt FROM n",
                       false);
    db = open_ok(keep, STORE_OPEN_READONLY);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_counters(db, id, STORE_ANY_CLASS, count_counter, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 10); /* the metadata cells of sample() */
    close_ok(db);
    free(keep);

    /* A metadata cell moved past 2^63 (negative in SQL, sorted first): no
     * counter, as store_block_runs gives no run there. */
    keep = edited_copy(p, "edited-counter-far.db",
                       "UPDATE block_runs SET first = -5 WHERE first = 1", true);
    db = open_ok(keep, STORE_OPEN_READONLY);
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(store_counters(db, id, STORE_ANY_CLASS, count_counter, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 9);
    ck_assert_uint_eq(c.vals[0], 0);
    ck_assert_uint_eq(c.vals[1], 2);
    close_ok(db);
    free(keep);

    /* A table of scan rows that is a view (an endless one would never end): refused. */
    keep = edited_copy(p, "edited-view.db",
                       "ALTER TABLE entries RENAME TO e2; CREATE VIEW entries AS"
                       " WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)"
                       " SELECT e2.* FROM e2, n",
                       false);
    struct store_db *no = NULL;
    lanyfs_error_clear(&err);
    ck_assert_int_eq(store_open(keep, STORE_OPEN_READONLY, &no, &err), LANYFS_E_BADMAGIC);
    ck_assert_ptr_null(no);
    ck_assert_msg(strstr(err.msg, "entries is a view") != NULL, "%s", err.msg);
    free(keep);
    free(p);
}
END_TEST

/* A version 2 file (no lost trees) is read as it is read-only, and upgraded
 * on a read-write open; its scans have no lost trees either way. */
START_TEST(t_upgrade_v2)
{
    const char *p = dbpath("v2.db");
    struct scan_result *r = sample_lost();
    struct store_db *db = open_ok(p, 0);
    int64_t id = add_ok(db, r, "v2.img");
    close_ok(db);
    /* Back to version 2 by hand. */
    sqlite3 *h = raw_open(p);
    raw_exec(h, "BEGIN;"
                "DROP TABLE lost_trees;"
                "DROP TABLE lost_tree_blocks;"
                "PRAGMA user_version = 2;"
                "COMMIT;");
    sqlite3_close(h);
    /* Read-only, it is read as it is (no lost trees) and left untouched. */
    struct lanyfs_error err;
    db = open_ok(p, STORE_OPEN_READONLY);
    ck_assert_int_eq(store_schema_version(db), 2);
    struct lost_check lc = {.db = db, .scan = id, .r = r};
    ck_assert_int_eq(store_lost_trees(db, id, check_lost, &lc, &err), LANYFS_OK);
    ck_assert_uint_eq(lc.n, 0);
    struct collect c0 = {0};
    ck_assert_int_eq(store_lost_tree_blocks(db, id, 44, count_extent, &c0, &err), LANYFS_OK);
    ck_assert_uint_eq(c0.n, 0);
    check_runs_cover_map(db, id, r);
    close_ok(db);
    h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "PRAGMA user_version"), 2);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'lost_trees'"),
                     0);
    sqlite3_close(h);
    /* Read-write, it is upgraded. */
    db = open_ok(p, 0);
    ck_assert_int_eq(store_schema_version(db), STORE_SCHEMA_VERSION);
    lc = (struct lost_check){.db = db, .scan = id, .r = r};
    ck_assert_int_eq(store_lost_trees(db, id, check_lost, &lc, &err), LANYFS_OK);
    ck_assert_uint_eq(lc.n, 0);
    struct collect c = {0};
    ck_assert_int_eq(store_lost_tree_blocks(db, id, 44, count_extent, &c, &err), LANYFS_OK);
    ck_assert_uint_eq(c.n, 0);
    check_runs_cover_map(db, id, r);
    close_ok(db);
    h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND"
                                " name IN ('lost_trees', 'lost_tree_blocks')"),
                     2);
    sqlite3_close(h);
    /* Read-only now, and new scans keep their lost trees. */
    close_ok(open_ok(p, STORE_OPEN_READONLY));
    db = open_ok(p, 0);
    int64_t id2 = add_ok(db, r, "v2.img");
    lc = (struct lost_check){.db = db, .scan = id2, .r = r};
    ck_assert_int_eq(store_lost_trees(db, id2, check_lost, &lc, &err), LANYFS_OK);
    ck_assert_uint_eq(lc.n, 3);
    close_ok(db);
    scan_result_free(r);
}
END_TEST

/* ---- several scans ---------------------------------------------------------- */

START_TEST(t_two_scans)
{
    const char *p = dbpath("two.db");
    struct scan_result *r1 = sample();
    struct scan_result *r2 = fake_new(10, 2, 32);
    fake_entry(r2, 1, 0, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, "LANYFSROOT", 10, "/", 0, NULL, 0);
    fake_block(r2, 0, SCAN_BLK_SUPER, SCAN_BF_METADATA, 1, 0, 0);
    fake_block(r2, 1, SCAN_BLK_DIR, SCAN_BF_METADATA, 1, 1, 0);
    struct store_db *db = open_ok(p, 0);
    /* A new file takes its first scan in rollback mode (no WAL yet), then is WAL. */
    sqlite3 *h0 = raw_open(p);
    char *mode = raw_text(h0, "PRAGMA journal_mode");
    ck_assert_str_eq(mode, "delete");
    free(mode);
    sqlite3_close(h0);
    int64_t a = add_ok(db, r1, "one.img");
    h0 = raw_open(p);
    mode = raw_text(h0, "PRAGMA journal_mode");
    ck_assert_str_eq(mode, "wal");
    free(mode);
    sqlite3_close(h0);
    int64_t b = add_ok(db, r2, "two.img");
    int64_t a2 = add_ok(db, r1, "one.img");
    ck_assert_int_eq(a, 1);
    ck_assert_int_eq(b, 2);
    ck_assert_int_eq(a2, 3);
    close_ok(db);

    db = open_ok(p, STORE_OPEN_READONLY);
    struct store_scan *list;
    size_t n;
    struct lanyfs_error err;
    ck_assert_int_eq(store_list_scans(db, NULL, &list, &n, &err), LANYFS_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(list[0].id, 1);
    ck_assert_int_eq(list[1].id, 2);
    ck_assert_uint_eq(list[0].entries, 6);
    ck_assert_uint_eq(list[1].entries, 1);
    ck_assert_uint_eq(list[1].block_size, 1024);
    ck_assert_uint_eq(list[1].summary.by_class[SCAN_BLK_UNKNOWN], 30);
    store_scans_free(list, n);
    ck_assert_int_eq(store_list_scans(db, "one.img", &list, &n, &err), LANYFS_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(list[1].id, 3);
    store_scans_free(list, n);
    ck_assert_int_eq(store_list_scans(db, "three.img", &list, &n, &err), LANYFS_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(list);
    check_runs_cover_map(db, 1, r1);
    check_runs_cover_map(db, 2, r2);
    check_runs_cover_map(db, 3, r1);
    /* Read-only: no writes. */
    ck_assert_int_eq(store_add_scan(db, r1, &(struct store_scan_meta){.image_path = "x"}, NULL,
                                    &err),
                     LANYFS_E_READONLY);
    ck_assert_int_eq(store_delete_scan(db, 1, &err), LANYFS_E_READONLY);
    close_ok(db);

    /* Deleting one leaves the others whole. */
    db = open_ok(p, 0);
    ck_assert_int_eq(store_delete_scan(db, 1, &err), LANYFS_OK);
    ck_assert_int_eq(store_delete_scan(db, 1, &err), LANYFS_E_NOTFOUND);
    ck_assert(strstr(err.msg, "no scan 1") != NULL);
    struct store_scan s;
    ck_assert_int_eq(store_get_scan(db, 1, &s, &err), LANYFS_E_NOTFOUND);
    ck_assert(strstr(err.msg, p) != NULL);
    ck_assert_int_eq(store_get_scan(db, 3, &s, &err), LANYFS_OK);
    ck_assert_uint_eq(s.entries, 6);
    ck_assert_uint_eq(s.findings, 6);
    store_scan_clear(&s);
    check_runs_cover_map(db, 3, r1);
    close_ok(db);
    sqlite3 *h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM entries WHERE scan = 1"), 0);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM block_runs WHERE scan = 1"), 0);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM entries"), 7);
    sqlite3_close(h);
    scan_result_free(r1);
    scan_result_free(r2);
}
END_TEST

/* ---- failures --------------------------------------------------------------- */

START_TEST(t_failed_write_leaves_nothing)
{
    const char *p = dbpath("fail.db");
    struct scan_result *r = sample();
    fake_last_entry(r)->id = 2; /* two entries with id 2 */
    struct store_db *db = open_ok(p, 0);
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    int64_t id = 99;
    enum lanyfs_err rc =
        store_add_scan(db, r, &(struct store_scan_meta){.image_path = "f.img"}, &id, &err);
    ck_assert_int_eq(rc, LANYFS_E_IO);
    ck_assert_int_eq(id, 99);
    ck_assert_msg(strstr(err.msg, p) != NULL, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "INSERT INTO entries") != NULL, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "UNIQUE") != NULL, "%s", err.msg);
    /* No half scan; the handle still works. */
    struct store_scan *list;
    size_t n;
    ck_assert_int_eq(store_list_scans(db, NULL, &list, &n, &err), LANYFS_OK);
    ck_assert_uint_eq(n, 0);
    /* The first scan of a file builds the big indexes after its rows: the rollback kept them. */
    static const char idx_sql[] =
        "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND name IN"
        " ('entries_path', 'entries_parent', 'entry_blocks_block')";
    sqlite3 *h0 = raw_open(p);
    ck_assert_int_eq(raw_int(h0, idx_sql), 3);
    sqlite3_close(h0);
    fake_last_entry(r)->id = 6;
    add_ok(db, r, "f.img");
    close_ok(db);
    sqlite3 *h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM scans"), 1);
    ck_assert_int_eq(raw_int(h, idx_sql), 3);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(DISTINCT scan) FROM entries"), 1);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(DISTINCT scan) FROM findings"), 1);
    sqlite3_close(h);
    db = open_ok(p, 0);
    ck_assert_int_eq(store_add_scan(db, r, NULL, NULL, &err), LANYFS_E_INVAL);
    close_ok(db);
    scan_result_free(r);
}
END_TEST

/* A hash computed beside the store: asked for once, after the rows; its
 * failure fails the whole write. */
struct late_hash {
    int calls;          /* how often the store asked */
    const char *hex;    /* the answer; NULL = a failed hash */
};

static const char *late_hash_wait(void *ctx, struct lanyfs_error *err)
{
    struct late_hash *l = ctx;
    l->calls++;
    if (l->hex == NULL)
        lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "x.img: read error while hashing it");
    return l->hex;
}

START_TEST(t_late_hash)
{
    const char *p = dbpath("late.db");
    struct scan_result *r = sample();
    struct store_db *db = open_ok(p, 0);
    static const char hex[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    struct late_hash bad = {0}, good = {.hex = hex};
    struct store_scan_meta m = {.image_path = "x.img", .image_sha256_wait = late_hash_wait,
                                .sha256_ctx = &bad};
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    int64_t id = -1;
    ck_assert_int_eq(store_add_scan(db, r, &m, &id, &err), LANYFS_E_IO);
    ck_assert_int_eq(bad.calls, 1);
    ck_assert_int_eq(id, -1);
    ck_assert_msg(strstr(err.msg, "read error while hashing") != NULL, "%s", err.msg);
    m.sha256_ctx = &good;
    ck_assert_int_eq(store_add_scan(db, r, &m, &id, &err), LANYFS_OK);
    ck_assert_int_eq(good.calls, 1);
    close_ok(db);
    sqlite3 *h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM scans"), 1);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(DISTINCT scan) FROM entries"), 1);
    char *got = raw_text(h, "SELECT image_sha256 FROM scans");
    ck_assert_str_eq(got, hex);
    free(got);
    sqlite3_close(h);
    scan_result_free(r);
}
END_TEST

/* WAL: a reader (the GUI) opens and reads while a writer holds the write lock. */
START_TEST(t_read_while_writing)
{
    const char *p = dbpath("locked.db");
    struct scan_result *r = sample();
    struct store_db *w = open_ok(p, 0);
    add_ok(w, r, "l.img");
    close_ok(w);
    sqlite3 *h = raw_open(p);
    raw_exec(h, "BEGIN IMMEDIATE; DELETE FROM entries");
    struct store_db *db = open_ok(p, STORE_OPEN_READONLY);
    struct store_scan *list;
    size_t n;
    struct lanyfs_error err;
    ck_assert_int_eq(store_list_scans(db, NULL, &list, &n, &err), LANYFS_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(list[0].entries, 6); /* the writer's change is not committed */
    store_scans_free(list, n);
    close_ok(db);
    raw_exec(h, "ROLLBACK");
    sqlite3_close(h);
    scan_result_free(r);
}
END_TEST

/* ---- hostile bytes ---------------------------------------------------------- */

static int hostile_entry(void *ctx, const struct store_entry *e)
{
    const struct scan_result *r = ctx;
    const struct scan_entry *se = scan_entry_by_id(r, e->id);
    ck_assert_ptr_nonnull(se);
    ck_assert_uint_eq(e->name_len, se->e.name_len);
    ck_assert_msg(memcmp(e->name, se->e.name, e->name_len) == 0, "name of %u differs", e->id);
    ck_assert_msg(clean_utf8(e->path), "path of %u is not clean UTF-8", e->id);
    size_t len;
    uint8_t *raw = store_unescape(e->path, &len);
    ck_assert_uint_eq(len, strlen(se->path));
    ck_assert(memcmp(raw, se->path, len) == 0);
    free(raw);
    return 0;
}

static int hostile_finding(void *ctx, const struct store_finding *f)
{
    (void)ctx;
    ck_assert(clean_utf8(f->message));
    ck_assert(f->path == NULL || clean_utf8(f->path));
    ck_assert(f->text == NULL || clean_utf8(f->text));
    ck_assert_str_eq(f->path, "/\\xff\\x1b[2J\\\\x");
    return 0;
}

START_TEST(t_hostile_names)
{
    const char *p = dbpath("hostile.db");
    struct scan_result *r = fake_new(9, 2, 64);
    /* Every byte 1..255 in some name: 255 bytes of 1..255, then chunks with each. */
    uint8_t all[255];
    for (int i = 0; i < 255; i++)
        all[i] = (uint8_t)(i + 1);
    char path[300];
    path[0] = '/';
    memcpy(path + 1, all, 255);
    path[256] = '\0';
    fake_entry(r, 2, 1, SCAN_ENTRY_LIVE, LANYFS_TYPE_FILE, all, 255, path, 0, NULL, 0);
    /* A full 256-byte field without NUL. */
    uint8_t full[256];
    memset(full, 0xff, sizeof(full));
    fake_entry(r, 3, 1, SCAN_ENTRY_ORPHAN, LANYFS_TYPE_FILE, full, 256, "/\xff\xff", 0, NULL, 0);
    /* Names made to confuse: escapes that look like escapes, bidi, C1, overlong, surrogates. */
    static const char *const odd[] = {
        "\\x41", "a\\b", "\xe2\x80\xae" "evil", "\xc2\x9b" "31m", "\xc0\xaf", "\xed\xa0\x80",
        "\xf4\x90\x80\x80", "caf\xc3\xa9", "\x7f", "\xe2\x82", "tab\there", "\xf0\x9f\x98\x80",
    };
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
        char pth[64];
        snprintf(pth, sizeof(pth), "/%s", odd[i]);
        fake_entry(r, 4 + i, 1, SCAN_ENTRY_DELETED, LANYFS_TYPE_FILE, odd[i], strlen(odd[i]),
                   pth, 0, NULL, 0);
    }
    /* An empty name (the disk holds NUL where a name should start). */
    fake_entry(r, 30, 1, SCAN_ENTRY_ORPHAN, LANYFS_TYPE_DIR, "", 0, "/", 0, NULL, 0);
    fake_finding(r, SCAN_PR_ORPHAN_ENTRY, 1, 2, 0, 0, 0, 0, 0, "/\xff\x1b[2J\\x", "fi\x1ble");
    memcpy(fake_super(r)->label, "\x1b]0;owned\x07", 11);

    struct store_db *db = open_ok(p, 0);
    int64_t id = add_ok(db, r, "/tmp/\xff\x1b.img");
    struct lanyfs_error err;
    ck_assert_int_eq(store_entries(db, id, NULL, STORE_ANY_STATE, hostile_entry, r, &err),
                     LANYFS_OK);
    ck_assert_int_eq(store_findings(db, id, 0, SCAN_SEV_INFO, hostile_finding, NULL, &err),
                     LANYFS_OK);
    struct store_scan s;
    ck_assert_int_eq(store_get_scan(db, id, &s, &err), LANYFS_OK);
    ck_assert_str_eq(s.image_path, "/tmp/\\xff\\x1b.img");
    ck_assert_uint_eq(s.sb.label_len, 10);
    ck_assert(memcmp(s.sb.label, "\x1b]0;owned\x07", 10) == 0);
    store_scan_clear(&s);
    /* The prefix query on an escaped prefix. */
    struct collect c = {0};
    ck_assert_int_eq(store_entries(db, id, "/\\xff", STORE_ANY_STATE, count_entry, &c, &err),
                     LANYFS_OK);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(c.ids[0], 2);
    close_ok(db);

    /* In SQL: names are BLOBs, exact; no TEXT column holds a raw control byte. */
    sqlite3 *h = raw_open(p);
    ck_assert_int_eq(raw_int(h, "SELECT COUNT(*) FROM entries WHERE typeof(name) <> 'blob'"), 0);
    ck_assert_int_eq(raw_int(h, "SELECT length(name) FROM entries WHERE id = 1"), 255);
    ck_assert_int_eq(raw_int(h, "SELECT length(name) FROM entries WHERE id = 2"), 256);
    ck_assert_int_eq(raw_int(h, "SELECT length(name) FROM entries WHERE block = 30"), 0);
    ck_assert_int_eq(raw_int(h, "SELECT name = x'c0af' FROM entries WHERE id = 7"), 1);
    char *hex = raw_text(h, "SELECT hex(name) FROM entries WHERE id = 1");
    for (int i = 0; i < 255; i++) {
        char want[3];
        snprintf(want, sizeof(want), "%02X", i + 1);
        ck_assert(memcmp(hex + 2 * i, want, 2) == 0);
    }
    free(hex);
    char *t = raw_text(h, "SELECT path FROM entries WHERE id = 3");
    ck_assert_str_eq(t, "/\\\\x41");
    free(t);
    t = raw_text(h, "SELECT path FROM entries WHERE id = 5");
    ck_assert_str_eq(t, "/\xe2\x80\xae" "evil"); /* valid and printable: kept */
    free(t);
    t = raw_text(h, "SELECT path FROM entries WHERE id = 6");
    ck_assert_str_eq(t, "/\\xc2\\x9b31m");
    free(t);
    t = raw_text(h, "SELECT text FROM findings");
    ck_assert_str_eq(t, "fi\\x1ble");
    free(t);
    sqlite3_close(h);
    scan_result_free(r);
}
END_TEST

START_TEST(t_escape_round_trip)
{
    uint8_t buf[300];
    for (int round = 0; round < 20000; round++) {
        size_t n = rnd() % sizeof(buf);
        for (size_t i = 0; i < n; i++) {
            uint64_t k = rnd() % 4;
            /* a mix of ASCII, backslashes, valid multi-byte and raw bytes */
            buf[i] = k == 0 ? (uint8_t)rnd() : k == 1 ? (uint8_t)(0x20 + rnd() % 95)
                     : k == 2 ? (uint8_t)"\\x\xc3\xa9\xe2\x82\xac"[rnd() % 7]
                              : (uint8_t)(0x80 + rnd() % 64);
            if (buf[i] == 0)
                buf[i] = 1;
        }
        char *esc = store_escape(buf, n);
        ck_assert_ptr_nonnull(esc);
        ck_assert(clean_utf8(esc));
        size_t len;
        uint8_t *back = store_unescape(esc, &len);
        ck_assert_uint_eq(len, n);
        ck_assert(memcmp(back, buf, n) == 0);
        free(back);
        free(esc);
    }
    char *e = store_escape("plain/ascii name.txt", 20);
    ck_assert_str_eq(e, "plain/ascii name.txt");
    free(e);
    e = store_escape("a\0b", 3);
    ck_assert_str_eq(e, "a\\x00b");
    free(e);
    uint8_t *u = store_unescape("odd \\q \\x4 \\x4g end\\", NULL);
    ck_assert_str_eq((char *)u, "odd \\q \\x4 \\x4g end\\");
    free(u);
}
END_TEST

/* ---- the image's hash ---------------------------------------------------------- */

static void on_hashed(void *ctx, uint64_t done)
{
    uint64_t *last = ctx;
    ck_assert_uint_ge(done, *last);
    *last = done;
}

START_TEST(t_sha256)
{
    /* FIPS 180-2 examples, with both sets of rounds. */
    static const struct {
        const char *msg;
        const char *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    };
    char hex[65];
    for (int portable = 0; portable < 2; portable++) {
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
            store_sha256(v[i].msg, strlen(v[i].msg), portable, hex);
            ck_assert_str_eq(hex, v[i].hex);
        }
        static char million[1000000];
        memset(million, 'a', sizeof(million));
        store_sha256(million, sizeof(million), portable, hex);
        ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }
    /* Every length around the block and padding boundaries: both rounds agree. */
    static uint8_t buf[4096];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)rnd();
    for (size_t n = 0; n < sizeof(buf); n += n < 200 ? 1 : 61) {
        char a[65], b[65];
        store_sha256(buf, n, false, a);
        store_sha256(buf, n, true, b);
        ck_assert_msg(strcmp(a, b) == 0, "length %zu: %s vs %s", n, a, b);
    }
    /* A file, read in chunks, with progress. */
    const char *p = dbpath("hash.bin");
    static uint8_t data[3 << 20];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 131 + (i >> 12));
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, sizeof(data) - 17, f), sizeof(data) - 17);
    fclose(f);
    char want[65];
    store_sha256(data, sizeof(data) - 17, true, want);
    uint64_t last = 0;
    struct lanyfs_error err;
    ck_assert_int_eq(store_file_sha256(p, hex, on_hashed, &last, &err), LANYFS_OK);
    ck_assert_str_eq(hex, want);
    ck_assert_uint_eq(last, sizeof(data) - 17);
    ck_assert_int_eq(store_file_sha256(dbpath("absent.bin"), hex, NULL, NULL, &err), LANYFS_E_IO);
    ck_assert(strstr(err.msg, "absent.bin") != NULL);
}
END_TEST

/* ---- progress ----------------------------------------------------------------- */

struct prog {
    uint64_t calls;
    uint64_t last_done;
    uint64_t total;
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct prog *p = ctx;
    ck_assert_uint_le(done, total);
    ck_assert_uint_ge(done, p->last_done);
    p->calls++;
    p->last_done = done;
    p->total = total;
}

START_TEST(t_progress)
{
    struct scan_result *r = fake_new(9, 4, 40000);
    for (uint64_t b = 0; b < 40000; b++)
        fake_block(r, b, (enum scan_class)(b % 3 == 0 ? SCAN_BLK_FREE : SCAN_BLK_LEAKED), 0, 0,
                   0, 0);
    struct store_db *db = open_ok(dbpath("prog.db"), 0);
    struct prog pr = {0};
    struct store_scan_meta m = {.image_path = "p.img", .progress = on_progress,
                                .progress_ctx = &pr};
    struct lanyfs_error err;
    ck_assert_int_eq(store_add_scan(db, r, &m, NULL, &err), LANYFS_OK);
    ck_assert_uint_ge(pr.calls, 2);
    ck_assert_uint_eq(pr.last_done, 40000);
    ck_assert_uint_eq(pr.total, 40000);
    check_runs_cover_map(db, 1, r); /* 40000 runs */
    close_ok(db);
    scan_result_free(r);
}
END_TEST

/* ---- indexes ------------------------------------------------------------------ */

/* The plan of sql, all its detail lines joined. */
static char *plan(sqlite3 *h, const char *sql)
{
    char q[1200];
    snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql);
    sqlite3_stmt *st = NULL;
    ck_assert_msg(sqlite3_prepare_v2(h, q, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(h));
    static char out[4096];
    out[0] = '\0';
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        strncat(out, (const char *)sqlite3_column_text(st, 3), sizeof(out) - strlen(out) - 2);
        strncat(out, "\n", sizeof(out) - strlen(out) - 1);
    }
    ck_assert_int_eq(rc, SQLITE_DONE);
    ck_assert_int_eq(sqlite3_finalize(st), SQLITE_OK);
    return out;
}

/* The GUI's queries as docs/scan-db.md gives them, and the index each must use. */
static const struct {
    const char *sql;
    const char *index; /* must appear in the plan */
} gui_queries[] = {
    {"SELECT id, path, state, size FROM entries WHERE scan = 1 AND path >= '/docs/'"
     " AND path < '/docs0' AND state = 1 ORDER BY path",
     "USING INDEX entries_path (scan=? AND path>? AND path<?)"},
    {"SELECT id, name, path FROM entries WHERE scan = 1 AND parent = 2 ORDER BY name",
     "USING INDEX entries_parent (scan=? AND parent=?)"},
    {"SELECT seq, code_name, message FROM findings WHERE scan = 1 AND code = 262145"
     " ORDER BY seq",
     "USING INDEX findings_code (scan=? AND code=?)"},
    {"SELECT seq, code_name, message FROM findings WHERE scan = 1 AND severity >= 2"
     " ORDER BY severity DESC",
     "USING INDEX findings_severity (scan=? AND severity>?)"},
    {"SELECT seq, code_name FROM findings WHERE scan = 1 AND block = 10",
     "USING INDEX findings_block (scan=? AND block=?)"},
    {"SELECT first, count, class, owner, flags FROM block_runs WHERE scan = 1"
     " AND first <= 42 AND first >= COALESCE((SELECT first FROM block_runs WHERE scan = 1"
     " AND first <= 20 ORDER BY first DESC LIMIT 1), 0) ORDER BY first",
     "USING PRIMARY KEY (scan=? AND first>? AND first<?)"},
    {"SELECT class, SUM(count) FROM block_runs WHERE scan = 1 GROUP BY class",
     "USING PRIMARY KEY (scan=?)"},
    {"SELECT block, wrcnt FROM counters WHERE scan = 1 AND class = 6 ORDER BY block",
     "SEARCH block_runs USING PRIMARY KEY (scan=?)"},
    {"SELECT id, started, n_error + n_critical AS bad FROM scans WHERE image_path = 'i.img'"
     " ORDER BY id DESC LIMIT 1",
     "USING INDEX scans_image (image_path=?)"},
    {"SELECT e.path, b.file_block + (10 - b.block) FROM entry_blocks b JOIN entries e"
     " ON e.scan = b.scan AND e.id = b.entry WHERE b.scan = 1 AND b.block BETWEEN 10 - 1023"
     " AND 10 AND b.block + b.count > 10",
     "USING PRIMARY KEY (scan=? AND id=?)"},
    {"SELECT entry, file_block + (10 - block) FROM entry_blocks WHERE scan = 1"
     " AND block BETWEEN 10 - 1023 AND 10 AND block + count > 10",
     "USING INDEX entry_blocks_block (scan=? AND block>? AND block<?)"},
    {"SELECT file_block, block, count FROM entry_blocks WHERE scan = 1 AND entry = 3"
     " ORDER BY file_block",
     "USING PRIMARY KEY (scan=? AND entry=?)"},
    {"SELECT top, entry, size, blocks_mapped, extenders FROM lost_trees WHERE scan = 1"
     " ORDER BY top",
     "SEARCH lost_trees USING PRIMARY KEY (scan=?)"},
    {"SELECT t.top, e.path, t.size, t.blocks_mapped FROM lost_trees t LEFT JOIN entries e"
     " ON e.scan = t.scan AND e.id = t.entry WHERE t.scan = 1 ORDER BY t.top",
     "SEARCH e USING PRIMARY KEY (scan=? AND id=?)"},
    {"SELECT file_block, block, count FROM lost_tree_blocks WHERE scan = 1 AND top = 11"
     " ORDER BY file_block",
     "SEARCH lost_tree_blocks USING PRIMARY KEY (scan=? AND top=?)"},
};

/*
 * A stick of nfiles small files in directories of 100, laid out as a writer
 * lays them out: directory, then per file its entry, extender and 1..2 data
 * blocks; the rest free, but for a few lost trees.  The planner's
 * statistics then look like a real scan's.
 */
static struct scan_result *many_files(uint64_t nfiles)
{
    uint64_t blocks = nfiles * 4 + nfiles / 100 + 64;
    struct scan_result *r = fake_new(10, 4, blocks);
    uint32_t root = fake_entry(r, 1, 0, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, "LANYFSROOT", 10, "/",
                               0, NULL, 0);
    fake_block(r, 0, SCAN_BLK_SUPER, SCAN_BF_METADATA, 3, 0, 0);
    fake_block(r, 1, SCAN_BLK_DIR, SCAN_BF_METADATA, 3, root, 0);
    uint64_t b = 2;
    uint32_t dir = 0;
    for (uint64_t i = 0; i < nfiles; i++) {
        char name[32], path[64];
        if (i % 100 == 0) {
            snprintf(name, sizeof(name), "d%04u", (unsigned)(i / 100));
            snprintf(path, sizeof(path), "/%s", name);
            dir = fake_entry(r, b, root, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, name, strlen(name),
                             path, 0, NULL, 0);
            fake_block(r, b, SCAN_BLK_DIR, SCAN_BF_METADATA, 1, dir, 0);
            b++;
        }
        snprintf(name, sizeof(name), "file-%06u.dat", (unsigned)i);
        snprintf(path, sizeof(path), "/d%04u/%s", (unsigned)(i / 100), name);
        uint64_t nd = 1 + i % 2, data[2] = {b + 2, b + 3};
        uint32_t id = fake_entry(r, b, dir, i % 50 == 7 ? SCAN_ENTRY_DELETED : SCAN_ENTRY_LIVE,
                                 LANYFS_TYPE_FILE, name, strlen(name), path, nd * 1024 - 100,
                                 data, nd);
        fake_block(r, b, SCAN_BLK_FILE, SCAN_BF_METADATA, 1, id, 0);
        fake_block(r, b + 1, SCAN_BLK_EXTENDER, SCAN_BF_METADATA, 0, id, 0);
        for (uint64_t k = 0; k < nd; k++)
            fake_block(r, b + 2 + k, SCAN_BLK_DATA, 0, 0, id, k);
        if (i % 300 == 5)
            fake_finding(r, SCAN_PR_BLOCK_SHARED, id, b + 2, 0, 0, 0, 0, 0, path, "/elsewhere");
        if (i % 50 == 7)
            fake_finding(r, SCAN_PR_DELETED_ENTRY, id, b, 0, 0, 0, nd, nd, path, "file");
        if (i % 97 == 3)
            fake_finding(r, SCAN_PR_FILE_HOLES, id, b, 0, 0, 0, 1, 0, path, NULL);
        if (i % 61 == 9)
            fake_finding(r, SCAN_PR_TORN_SECTORS, 0, b, 0, 0, 0, 1, 0, NULL, "chain over data");
        b += 2 + nd;
    }
    /* Lost trees of writes cut short: a top and three data blocks each. */
    for (uint64_t i = 0; i < 10; i++) {
        uint64_t top = b + 4 * i, data[3] = {top + 1, top + 2, top + 3};
        fake_lost_tree(r, top, 0, 3 * 1024 - 10, data, 3, &top, 1);
    }
    for (; b < blocks; b++)
        fake_block(r, b, b % 500 == 0 ? SCAN_BLK_CHAIN : SCAN_BLK_FREE,
                   b % 500 == 0 ? SCAN_BF_METADATA : 0, 1, 0, 0);
    return r;
}

START_TEST(t_indexes)
{
    const char *p = dbpath("idx.db");
    struct scan_result *r = many_files(3000);
    struct store_db *db = open_ok(p, 0);
    add_ok(db, r, "i.img");
    add_ok(db, r, "i.img");
    check_runs_cover_map(db, 2, r);
    close_ok(db);
    sqlite3 *h = raw_open(p);
    for (size_t i = 0; i < sizeof(gui_queries) / sizeof(gui_queries[0]); i++) {
        const char *pl = plan(h, gui_queries[i].sql);
        ck_assert_msg(strstr(pl, gui_queries[i].index) != NULL, "query %zu: plan\n%swants %s", i,
                      pl, gui_queries[i].index);
        ck_assert_msg(strstr(pl, "SCAN ") == NULL || strstr(pl, "SCAN CONSTANT") != NULL,
                      "query %zu scans a table:\n%s", i, pl);
    }
    sqlite3_close(h);
    scan_result_free(r);
}
END_TEST

static Suite *store_suite(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("store");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_create_schema);
    tcase_add_test(tc, t_newer_version);
    tcase_add_test(tc, t_foreign_files);
    tcase_add_test(tc, t_round_trip);
    tcase_add_test(tc, t_queries);
    tcase_add_test(tc, t_extents);
    tcase_add_test(tc, t_big_values);
    tcase_add_test(tc, t_no_super_no_geom);
    tcase_add_test(tc, t_two_scans);
    tcase_add_test(tc, t_failed_write_leaves_nothing);
    tcase_add_test(tc, t_late_hash);
    tcase_add_test(tc, t_read_while_writing);
    tcase_add_test(tc, t_hostile_names);
    tcase_add_test(tc, t_escape_round_trip);
    tcase_add_test(tc, t_sha256);
    tcase_add_test(tc, t_upgrade_v1);
    tcase_add_test(tc, t_lost_trees);
    tcase_add_test(tc, t_lost_trees_failed);
    tcase_add_test(tc, t_lost_trees_hostile);
    tcase_add_test(tc, t_rows_hostile);
    tcase_add_test(tc, t_rows_hand_edited);
    tcase_add_test(tc, t_upgrade_v2);
    tcase_add_test(tc, t_progress);
    tcase_add_test(tc, t_indexes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(store_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
