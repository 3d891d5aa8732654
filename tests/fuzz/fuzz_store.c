/*
 * fuzz_store.c -- fuzz target: a scan database edited by hand, read back.
 *
 * Once per process, three crafted seed images of seeds.c (lost extender
 * trees, names that need escaping, a shared node) are scanned and stored
 * with store_add_scan as three scans of a database in a per-process
 * temporary folder (fuzz_tmp_root), whose bytes are then kept in memory.
 * Each input is a program of edits (fuzz.h, enum fuzz_store_op) applied
 * with SQLite directly to a fresh copy of them: a column of one row or of
 * every row set to NULL, an integer, text, a blob or a real; a row
 * deleted or copied; user_version, application_id or the journal mode
 * changed; a table, an index or the counters view dropped; a table made
 * again without its key and NOT NULLs, or replaced by a view (an endless
 * one too); then bytes of the file changed.  The copy is opened with
 * STORE_OPEN_READONLY and every reader of store.h runs over every scan and
 * over ids no scan has.  Any reader may fail, with a message naming the
 * file, but besides the sanitizers (no crash, leak or hang) it checks what
 * store.h promises:
 *  - a scans row has its NOT NULL texts, a geometry of LanyFS (512..4096
 *    bytes, addresses of 1..8) when it has one, a label without its NUL,
 *    a worst severity of the enum; store_list_scans lists them by id and
 *    only those of the image asked for;
 *  - an entry has an id of 1.., a state and type of the enum, a path
 *    starting with the prefix asked for, and the state asked for;
 *  - extents have a count of 1..STORE_EXTENT_MAX, a block other than 0, no
 *    end past 2^64 and come in file order without overlap;
 *  - store_block_owners and the entries' extents agree both ways;
 *  - lost trees have a top other than 0;
 *  - findings have a severity of the enum and at least the one asked for,
 *    the code asked for, a code name and a message;
 *  - runs have a count of 1.., a class of the enum, come in block order
 *    without overlap, each holds a block of the range asked for, and those
 *    of a range are the runs of the whole map that hold one;
 *  - counters have a class of the enum (the one asked for) and are the
 *    runs that carry a write counter;
 *  - the ids handed out (entries' ids and parents, findings' entries,
 *    runs' owners) are those stored, each as often as stored: none is cut
 *    to 32 bits into another (checked through the connection that made
 *    the edits, or a new one when bytes were changed);
 *  - a callback's non-zero stops the query, which returns LANYFS_OK;
 *  - no reader says it ran out of memory: the database is small.
 * Every text handed out is read to its NUL and unescaped.  With
 * FUZZ_STORE_VERBOSE set in the environment, what each failing reader said
 * is printed (to replay an input).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "scan.h"
#include "store.h"

#define FUZZ_INPUT_MAX 4096
#define MAX_EDITS 48
#define MAX_POKES 8
#define MAX_SCANS 8       /* scans whose rows are read */
#define MAX_ENTRIES 64    /* entries of a scan kept from its listing */
#define MAX_MAPS 8        /* of those, whose data maps are read (spread over them) */
#define MAX_EXTENTS 64    /* extents of a data map kept for the owners' check */
#define MAX_OWNER_CHECKS 4 /* extents of a scan whose blocks are asked for their owners */
#define MAX_TREES 16      /* lost trees whose data maps are read */
#define MAX_RUNS 2048     /* runs kept for the ranges' and counters' checks */
#define RAW_STEPS_MAX 2000000 /* VM steps of one edit statement (endless views) */

/* The seed images whose scans make the database: lost trees, names to escape, cross-links. */
static const char *const base_seeds[] = {"lost-trees", "names", "shared-node"};

static char base_path[600], work_path[600], work_wal[620], work_shm[620];
static uint8_t *base_bytes;
static size_t base_len;

/* ---- the database once per process ------------------------------------------ */

struct base_ctx {
    struct store_db *db;
    int stored;
};

static void add_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    struct base_ctx *b = ctx;
    size_t i;
    for (i = 0; i < sizeof(base_seeds) / sizeof(base_seeds[0]); i++)
        if (strcmp(base_seeds[i], name) == 0)
            break;
    if (i == sizeof(base_seeds) / sizeof(base_seeds[0]))
        return;
    struct scan_result *r = NULL;
    struct lanyfs_error err;
    FUZZ_CHECK(scan_image(fuzz_memfd_image(data, len, NULL), NULL, &r, &err) == LANYFS_OK,
               "scan of seed %s: %s", name, err.msg);
    /* One image path of bytes that need escaping, one hash. */
    char image[96];
    snprintf(image, sizeof(image),
             i == 1 ? "/media/st\xc3\xa4\x01ck\\%s\xff.img" : "/images/%s.img", name);
    struct store_scan_meta m = {
        .image_path = image,
        .started = 1796259735 + (int64_t)i,
        .started_nsec = (uint32_t)i * 7,
        .seconds = 0.5 * (double)i,
        .image_sha256 = i == 0 ? "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
                               : NULL,
    };
    FUZZ_CHECK(store_add_scan(b->db, r, &m, NULL, &err) == LANYFS_OK, "store of seed %s: %s",
               name, err.msg);
    scan_result_free(r);
    b->stored++;
}

static void base_setup(void)
{
    if (base_bytes != NULL)
        return;
    /* No allocation statistics (a mutex a call): nothing here reads them. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    const char *root = fuzz_tmp_root("lanyfs-fuzz-store");
    snprintf(base_path, sizeof(base_path), "%s/base.db", root);
    snprintf(work_path, sizeof(work_path), "%s/work.db", root);
    snprintf(work_wal, sizeof(work_wal), "%s-wal", work_path);
    snprintf(work_shm, sizeof(work_shm), "%s-shm", work_path);
    struct base_ctx b = {0};
    struct lanyfs_error err;
    FUZZ_CHECK(store_open(base_path, 0, &b.db, &err) == LANYFS_OK, "store_open: %s", err.msg);
    fuzz_seeds(add_seed, &b);
    FUZZ_CHECK(b.stored == (int)(sizeof(base_seeds) / sizeof(base_seeds[0])),
               "%d of the base seeds stored", b.stored);
    FUZZ_CHECK(store_close(b.db, &err) == LANYFS_OK, "store_close: %s", err.msg);
    FILE *f = fopen(base_path, "rb");
    FUZZ_CHECK(f != NULL, "cannot read %s back", base_path);
    struct stat st;
    FUZZ_CHECK(fstat(fileno(f), &st) == 0 && st.st_size > 0, "%s is empty", base_path);
    base_len = (size_t)st.st_size;
    base_bytes = malloc(base_len);
    FUZZ_CHECK(base_bytes != NULL && fread(base_bytes, 1, base_len, f) == base_len,
               "cannot read %s back", base_path);
    fclose(f);
    unlink(base_path);
}

/* A fresh copy of the database, without the WAL and index of the last one. */
static void write_work(void)
{
    unlink(work_wal);
    unlink(work_shm);
    int fd = open(work_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FUZZ_CHECK(fd >= 0, "cannot write %s", work_path);
    size_t done = 0;
    while (done < base_len) {
        ssize_t n = write(fd, base_bytes + done, base_len - done);
        FUZZ_CHECK(n > 0, "cannot write %s", work_path);
        done += (size_t)n;
    }
    close(fd);
}

/* ---- the edits ------------------------------------------------------------------ */

static const int64_t special[] = {
    0, 1, -1, 2, 3, 13, 14, 255, 256, 1023, 1024, 1025, 4096, 65535, 65536,
    INT32_MAX, (int64_t)INT32_MAX + 1, UINT32_MAX, (int64_t)UINT32_MAX + 1,
    (int64_t)1 << 53, (int64_t)1 << 62, INT64_MAX, INT64_MIN, INT64_MAX - 1024, -2,
};

struct value {
    enum fuzz_store_value kind;
    int64_t i;
    double d;
    const uint8_t *b; /* TEXT, BLOB: into the input */
    size_t len;
};

static void read_value(struct fuzz_in *r, struct value *v)
{
    memset(v, 0, sizeof(*v));
    v->kind = (enum fuzz_store_value)(fuzz_take(r) % FZS_VALUES);
    switch (v->kind) {
    case FZS_V_NULL:
    case FZS_VALUES:
        break;
    case FZS_V_I8:
        v->i = (int8_t)fuzz_take(r);
        break;
    case FZS_V_SPECIAL:
        v->i = special[fuzz_take(r) % (sizeof(special) / sizeof(special[0]))];
        break;
    case FZS_V_I64:
        v->i = (int64_t)fuzz_take_le(r, 8);
        break;
    case FZS_V_TEXT:
    case FZS_V_BLOB:
        v->len = fuzz_take(r) % 64;
        if (v->len > r->n - r->at)
            v->len = r->n - r->at;
        v->b = r->p + r->at;
        r->at += v->len;
        break;
    case FZS_V_REAL:
        v->d = (int8_t)fuzz_take(r) / 4.0;
        break;
    case FZS_V_REAL8: {
        uint64_t bits = fuzz_take_le(r, 8);
        memcpy(&v->d, &bits, sizeof(v->d));
        break;
    }
    }
}

static void bind_value(sqlite3_stmt *st, int col, const struct value *v)
{
    switch (v->kind) {
    case FZS_V_NULL:
    case FZS_VALUES:
        sqlite3_bind_null(st, col);
        break;
    case FZS_V_I8:
    case FZS_V_SPECIAL:
    case FZS_V_I64:
        sqlite3_bind_int64(st, col, v->i);
        break;
    case FZS_V_TEXT:
        sqlite3_bind_text(st, col, v->len ? (const char *)v->b : "", (int)v->len, SQLITE_STATIC);
        break;
    case FZS_V_BLOB:
        sqlite3_bind_blob(st, col, v->len ? (const void *)v->b : "", (int)v->len, SQLITE_STATIC);
        break;
    case FZS_V_REAL:
    case FZS_V_REAL8:
        sqlite3_bind_double(st, col, v->d);
        break;
    }
}

/* An integer for a PRAGMA: the integers as they are, anything else its length. */
static int64_t value_int(const struct value *v)
{
    switch (v->kind) {
    case FZS_V_I8:
    case FZS_V_SPECIAL:
    case FZS_V_I64:
        return v->i;
    case FZS_V_REAL:
    case FZS_V_REAL8:
        return v->d >= -1e9 && v->d <= 1e9 ? (int64_t)v->d : 0;
    default:
        return (int64_t)v->len;
    }
}

/*
 * Stops a statement of the raw connection that runs too long (an endless
 * view met by another edit): each statement starts its count at 0.
 */
static unsigned raw_ticks;

static int raw_progress(void *ctx)
{
    (void)ctx;
    return ++raw_ticks > RAW_STEPS_MAX / 1000;
}

/* Run one statement of the edits: ?1 the value (may be NULL), ?2 the row. */
static void raw_run(sqlite3 *h, const char *sql, const struct value *v, int64_t row)
{
    sqlite3_stmt *st = NULL;
    raw_ticks = 0;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return;
    }
    int np = sqlite3_bind_parameter_count(st);
    if (v != NULL && np >= 1)
        bind_value(st, 1, v);
    if (np >= 2)
        sqlite3_bind_int64(st, 2, row);
    while (sqlite3_step(st) == SQLITE_ROW)
        ;
    sqlite3_finalize(st);
}

static void raw_exec(sqlite3 *h, const char *sql)
{
    raw_ticks = 0;
    sqlite3_exec(h, sql, NULL, NULL, NULL);
}

/* Rows of table t now, -1 when it cannot be counted. */
static int64_t raw_rows(sqlite3 *h, const struct fuzz_store_table *t)
{
    char sql[128];
    sqlite3_stmt *st = NULL;
    int64_t n = -1;
    raw_ticks = 0;
    snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM \"%s\"", t->name);
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

struct poke {
    uint32_t off;
    uint8_t v;
};

/*
 * Apply the edits of the input to the copy; the file's bytes are poked
 * last, with SQLite closed.  Returns the connection when nothing was poked
 * (it checks the readers' values then), NULL when it was closed.
 */
static sqlite3 *apply_edits(const uint8_t *data, size_t size)
{
    struct fuzz_in r = {data, size, 0};
    struct poke pokes[MAX_POKES];
    size_t npokes = 0;
    unsigned viewed = 0; /* tables now views: edits leave them alone */
    sqlite3 *h = NULL;
    FUZZ_CHECK(sqlite3_open_v2(work_path, &h, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK,
               "cannot open the copy: %s", sqlite3_errmsg(h));
    sqlite3_progress_handler(h, 1000, raw_progress, NULL);
    /* Renames leave views alone, even those that name a dropped table. */
    raw_exec(h, "PRAGMA legacy_alter_table = ON; PRAGMA synchronous = OFF");
    for (int e = 0; e < MAX_EDITS && r.at < r.n; e++) {
        enum fuzz_store_op o = (enum fuzz_store_op)(fuzz_take(&r) % FZS_OPS);
        char sql[2048];
        struct value v;
        switch (o) {
        case FZS_SET:
        case FZS_ADD:
        case FZS_DUP:
        case FZS_DEL:
        case FZS_SET_ALL: {
            unsigned ti = fuzz_take(&r) % fuzz_store_ntables;
            const struct fuzz_store_table *t = &fuzz_store_tables[ti];
            uint64_t row = o != FZS_SET_ALL ? fuzz_take_le(&r, 2) : 0;
            unsigned c = o != FZS_DEL ? fuzz_take(&r) % t->ncols : 0;
            if (o != FZS_DEL)
                read_value(&r, &v);
            if (viewed & (1u << ti))
                break;
            int64_t rows = o != FZS_SET_ALL ? raw_rows(h, t) : 1;
            if (rows <= 0)
                break;
            int64_t pick = (int64_t)(row % (uint64_t)rows);
            char where[512];
            snprintf(where, sizeof(where),
                     "(%s) IN (SELECT %s FROM \"%s\" ORDER BY %s LIMIT 1 OFFSET ?2)", t->key,
                     t->key, t->name, t->key);
            const char *col = t->cols[c];
            if (o == FZS_SET)
                snprintf(sql, sizeof(sql), "UPDATE \"%s\" SET \"%s\" = ?1 WHERE %s", t->name, col,
                         where);
            else if (o == FZS_ADD)
                snprintf(sql, sizeof(sql), "UPDATE \"%s\" SET \"%s\" = \"%s\" + ?1 WHERE %s",
                         t->name, col, col, where);
            else if (o == FZS_DEL)
                snprintf(sql, sizeof(sql), "DELETE FROM \"%s\" WHERE %s", t->name, where);
            else if (o == FZS_SET_ALL)
                snprintf(sql, sizeof(sql), "UPDATE \"%s\" SET \"%s\" = ?1", t->name, col);
            else {
                /* INSERT INTO t (a, b, ...) SELECT a, ?1, ... FROM t WHERE the row */
                size_t n = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO \"%s\" (", t->name);
                for (unsigned k = 0; k < t->ncols && n < sizeof(sql); k++)
                    n += (size_t)snprintf(sql + n, sizeof(sql) - n, "%s\"%s\"", k ? ", " : "",
                                          t->cols[k]);
                if (n < sizeof(sql))
                    n += (size_t)snprintf(sql + n, sizeof(sql) - n, ") SELECT ");
                for (unsigned k = 0; k < t->ncols && n < sizeof(sql); k++)
                    n += (size_t)snprintf(sql + n, sizeof(sql) - n, "%s%s%s%s", k ? ", " : "",
                                          k == c ? "?1" : "\"", k == c ? "" : t->cols[k],
                                          k == c ? "" : "\"");
                if (n < sizeof(sql))
                    snprintf(sql + n, sizeof(sql) - n, " FROM \"%s\" WHERE %s", t->name, where);
                FUZZ_CHECK(n < sizeof(sql), "INSERT of %s too long", t->name);
            }
            raw_run(h, sql, o == FZS_DEL ? NULL : &v, pick);
            break;
        }
        case FZS_PRAGMA: {
            unsigned which = fuzz_take(&r) % 3;
            read_value(&r, &v);
            int64_t x = value_int(&v);
            if (which == 0)
                snprintf(sql, sizeof(sql), "PRAGMA user_version = %" PRId32, (int32_t)x);
            else if (which == 1)
                snprintf(sql, sizeof(sql), "PRAGMA application_id = %" PRId32, (int32_t)x);
            else
                snprintf(sql, sizeof(sql), "PRAGMA journal_mode = %s", x & 1 ? "WAL" : "DELETE");
            raw_run(h, sql, NULL, 0);
            break;
        }
        case FZS_DROP: {
            unsigned k = fuzz_take(&r) % (fuzz_store_ntables + fuzz_store_nindexes + 1);
            if (k < fuzz_store_ntables)
                snprintf(sql, sizeof(sql), "DROP %s \"%s\"",
                         viewed & (1u << k) ? "VIEW" : "TABLE", fuzz_store_tables[k].name);
            else if (k < fuzz_store_ntables + fuzz_store_nindexes)
                snprintf(sql, sizeof(sql), "DROP INDEX \"%s\"",
                         fuzz_store_indexes[k - fuzz_store_ntables]);
            else
                snprintf(sql, sizeof(sql), "DROP VIEW counters");
            raw_exec(h, sql);
            break;
        }
        case FZS_LOOSEN: {
            unsigned ti = fuzz_take(&r) % fuzz_store_ntables;
            const char *name = fuzz_store_tables[ti].name;
            if (viewed & (1u << ti) || ti == fuzz_store_ntables - 1) /* not sqlite_stat1 */
                break;
            snprintf(sql, sizeof(sql),
                     "SAVEPOINT fz; CREATE TABLE fz_loose AS SELECT * FROM \"%s\";"
                     " DROP TABLE \"%s\"; ALTER TABLE fz_loose RENAME TO \"%s\"; RELEASE fz",
                     name, name, name);
            raw_ticks = 0;
            if (sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK)
                raw_exec(h, "ROLLBACK TO fz; RELEASE fz");
            break;
        }
        case FZS_VIEW: {
            unsigned ti = fuzz_take(&r) % (fuzz_store_ntables + 1);
            bool endless = fuzz_take(&r) & 1;
            const char *rows = endless ? "WITH RECURSIVE fz_n(x) AS (SELECT 1 UNION ALL"
                                         " SELECT x + 1 FROM fz_n) SELECT fz_r.* FROM"
                                       : "SELECT fz_r.* FROM";
            const char *tail = endless ? " AS fz_r, fz_n" : " AS fz_r";
            if (ti == fuzz_store_ntables) {
                /* the counters view: every run, or endless rows of scan 1 */
                snprintf(sql, sizeof(sql),
                         "SAVEPOINT fz; DROP VIEW counters; CREATE VIEW counters AS %s;"
                         " RELEASE fz",
                         endless ? "WITH RECURSIVE fz_n(x) AS (SELECT 1 UNION ALL SELECT x + 1"
                                   " FROM fz_n) SELECT 1 AS scan, x AS block, 5 AS class,"
                                   " 1 AS wrcnt FROM fz_n"
                                 : "SELECT scan, first AS block, class, wrcnt FROM block_runs");
            } else {
                const char *name = fuzz_store_tables[ti].name;
                if (viewed & (1u << ti) || ti == fuzz_store_ntables - 1)
                    break;
                snprintf(sql, sizeof(sql),
                         "SAVEPOINT fz; ALTER TABLE \"%s\" RENAME TO \"fz_%s\";"
                         " CREATE VIEW \"%s\" AS %s \"fz_%s\"%s; RELEASE fz",
                         name, name, name, rows, name, tail);
            }
            raw_ticks = 0;
            if (sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK)
                raw_exec(h, "ROLLBACK TO fz; RELEASE fz");
            else if (ti < fuzz_store_ntables)
                viewed |= 1u << ti;
            break;
        }
        case FZS_POKE: {
            uint32_t off = (uint32_t)fuzz_take_le(&r, 3);
            uint8_t b = fuzz_take(&r);
            if (npokes < MAX_POKES)
                pokes[npokes++] = (struct poke){off, b};
            break;
        }
        case FZS_OPS:
            break;
        }
    }
    if (npokes == 0)
        return h;
    FUZZ_CHECK(sqlite3_close(h) == SQLITE_OK, "cannot close the copy");
    int fd = open(work_path, O_RDWR | O_CLOEXEC);
    struct stat st;
    FUZZ_CHECK(fd >= 0 && fstat(fd, &st) == 0, "cannot poke %s", work_path);
    for (size_t i = 0; i < npokes && st.st_size > 0; i++)
        FUZZ_CHECK(pwrite(fd, &pokes[i].v, 1, (off_t)(pokes[i].off % (uint64_t)st.st_size)) == 1,
                   "cannot poke %s", work_path);
    close(fd);
    return NULL;
}

/* ---- checking what the readers hand out ------------------------------------------ */

static volatile uint64_t sink; /* what touching the texts adds up to */

/* Read a text to its NUL and unescape it. */
static void touch_text(const char *what, const char *s)
{
    if (s == NULL)
        return;
    size_t n = strlen(s);
    uint64_t h = n;
    for (size_t i = 0; i < n; i++)
        h = h * 31 + (uint8_t)s[i];
    size_t len = SIZE_MAX;
    uint8_t *raw = store_unescape(s, &len);
    FUZZ_CHECK(raw != NULL && len <= n && raw[len] == '\0', "%s: unescape of %zu bytes gave %zu",
               what, n, len);
    for (size_t i = 0; i < len; i++)
        h += raw[i];
    free(raw);
    sink += h;
}

static void touch_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = n;
    for (size_t i = 0; i < n; i++)
        h = h * 31 + p[i];
    sink += h;
}

static int verbose = -1; /* $FUZZ_STORE_VERBOSE: print what each reader says when it fails */

/* A reader that failed says so with the file named. */
static void check_rc(enum lanyfs_err rc, const struct lanyfs_error *err, const char *what)
{
    if (rc == LANYFS_OK)
        return;
    if (verbose < 0)
        verbose = getenv("FUZZ_STORE_VERBOSE") != NULL;
    if (verbose)
        fprintf(stderr, "%s: %s\n", what, err->msg);
    FUZZ_CHECK(rc > LANYFS_OK && rc < LANYFS_E_COUNT, "%s: code %d", what, (int)rc);
    FUZZ_CHECK(err->msg[0] != '\0', "%s failed (%s) without a message", what,
               lanyfs_strerror(rc));
    FUZZ_CHECK(strstr(err->msg, work_path) != NULL, "%s: '%s' does not name the file", what,
               err->msg);
    FUZZ_CHECK(rc != LANYFS_E_NOMEM, "%s: out of memory over a small database: %s", what,
               err->msg);
}

static bool lanyfs_geometry(uint32_t bs, unsigned al)
{
    return (bs == 512 || bs == 1024 || bs == 2048 || bs == 4096) && al >= 1 && al <= 8;
}

static void check_scan(const struct store_scan *s)
{
    FUZZ_CHECK(s->started != NULL && s->tool_version != NULL && s->image_path != NULL,
               "scan %" PRId64 ": a NOT NULL text is NULL", s->id);
    touch_text("started", s->started);
    touch_text("tool_version", s->tool_version);
    touch_text("image_path", s->image_path);
    touch_text("image_sha256", s->image_sha256);
    touch_text("sb_created", s->sb.created);
    touch_text("sb_updated", s->sb.updated);
    touch_text("sb_checked", s->sb.checked);
    FUZZ_CHECK(!s->have_geometry || lanyfs_geometry(s->block_size, s->address_length),
               "scan %" PRId64 ": geometry of %" PRIu32 "-byte blocks, %u-byte addresses", s->id,
               s->block_size, s->address_length);
    FUZZ_CHECK(s->sb.label_len <= sizeof(s->sb.label) &&
                   memchr(s->sb.label, 0, s->sb.label_len) == NULL,
               "scan %" PRId64 ": label of %zu bytes holds a NUL", s->id, s->sb.label_len);
    touch_bytes(s->sb.label, s->sb.label_len);
    FUZZ_CHECK((unsigned)s->summary.worst <= SCAN_SEV_CRITICAL, "scan %" PRId64 ": worst %d",
               s->id, (int)s->summary.worst);
    sink += s->summary.dirs + s->summary.files + s->entries + s->findings + s->map_blocks;
}

/* The state of one input's reading. */
struct fz {
    struct store_db *db;
    sqlite3 *raw;           /* the same file read with SQLite directly (NULL: not open) */
    bool poked;             /* bytes of the file were changed: its indexes may not agree with
                               its tables, so what two queries give is not compared */
    int64_t scan;           /* the scan being read */
    unsigned owner_checks;  /* blocks of this scan asked for their owners */
    uint8_t knob;           /* from the input: where callbacks stop */
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * The values a reader gave for an id column, when it gave every row of the
 * scan, against the file: group_sql gives each value stored in the rows of
 * scan ?1 with how many rows hold it; each must have been given as often.
 */
static void check_stored(struct fz *z, const char *what, const char *group_sql, uint64_t *vals,
                         size_t n)
{
    sqlite3_stmt *st = NULL;
    if (z->raw == NULL || sqlite3_prepare_v2(z->raw, group_sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return;
    }
    qsort(vals, n, sizeof(*vals), cmp_u64);
    sqlite3_bind_int64(st, 1, z->scan);
    raw_ticks = 0;
    uint64_t rows = 0;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        uint64_t v = (uint64_t)sqlite3_column_int64(st, 0);
        int64_t stored = sqlite3_column_int64(st, 1);
        size_t lo = 0, hi = n; /* the first value >= v */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (vals[mid] < v)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t times = 0;
        while (lo + times < n && vals[lo + times] == v)
            times++;
        FUZZ_CHECK(stored == (int64_t)times,
                   "scan %" PRId64 ": %s %" PRIu64 " given %zu times, stored %" PRId64 " times",
                   z->scan, what, v, times, stored);
        rows += (uint64_t)stored;
    }
    if (src == SQLITE_DONE)
        FUZZ_CHECK(rows == n, "scan %" PRId64 ": %zu %ss given, %" PRIu64 " stored", z->scan, n,
                   what, rows);
    sqlite3_finalize(st);
}

/* -- entries -- */

struct entries_ctx {
    int state;              /* asked for */
    const char *prefix;     /* asked for, "" for all */
    size_t calls;
    size_t stop_after;      /* 0: never */
    enum lanyfs_err rc;     /* how the query ended */
    uint32_t ids[MAX_ENTRIES];
    uint64_t id64[MAX_ENTRIES], parent64[MAX_ENTRIES];
    size_t nids;
    char paths[3][64];      /* prefixes to ask for next */
    size_t npaths;
};

static int on_entry(void *ctx, const struct store_entry *e)
{
    struct entries_ctx *c = ctx;
    c->calls++;
    FUZZ_CHECK(c->stop_after == 0 || c->calls <= c->stop_after, "entries: a row after the stop");
    FUZZ_CHECK(e->id >= 1, "entries: id 0");
    FUZZ_CHECK((unsigned)e->state <= SCAN_ENTRY_ORPHAN, "entry %" PRIu32 ": state %d", e->id,
               (int)e->state);
    FUZZ_CHECK(c->state == STORE_ANY_STATE || (int)e->state == c->state,
               "entry %" PRIu32 ": state %d, asked for %d", e->id, (int)e->state, c->state);
    FUZZ_CHECK(e->type == LANYFS_TYPE_DIR || e->type == LANYFS_TYPE_FILE,
               "entry %" PRIu32 ": type 0x%02x", e->id, e->type);
    FUZZ_CHECK(e->name != NULL && e->path != NULL, "entry %" PRIu32 ": no name or path", e->id);
    touch_bytes(e->name, e->name_len);
    touch_text("path", e->path);
    FUZZ_CHECK(strncmp(e->path, c->prefix, strlen(c->prefix)) == 0,
               "entry %" PRIu32 ": path '%s' outside the prefix '%s'", e->id, e->path, c->prefix);
    touch_text("created", e->created);
    touch_text("modified", e->modified);
    sink += e->block + e->parent + e->size + (uint64_t)e->created_offset +
            (uint64_t)e->modified_offset + e->attr + e->wrcnt + e->blocks_needed +
            e->blocks_mapped + e->blocks_intact;
    if (c->nids < MAX_ENTRIES) {
        c->id64[c->nids] = e->id;
        c->parent64[c->nids] = e->parent;
        c->ids[c->nids++] = e->id;
    }
    /* Prefixes to ask for: a few paths, one cut short. */
    if (c->npaths < 3 && (c->calls % 5) == 2) {
        size_t n = strlen(e->path);
        if (c->npaths == 1 && n > 2)
            n = n / 2;
        if (n >= sizeof(c->paths[0]))
            n = sizeof(c->paths[0]) - 1;
        memcpy(c->paths[c->npaths], e->path, n);
        c->paths[c->npaths++][n] = '\0';
    }
    return c->stop_after != 0 && c->calls >= c->stop_after;
}

static void read_entries(struct fz *z, int state, const char *prefix, size_t stop_after,
                         struct entries_ctx *out)
{
    struct entries_ctx local, *c = out != NULL ? out : &local;
    memset(c, 0, sizeof(*c));
    c->state = state;
    c->prefix = prefix != NULL ? prefix : "";
    c->stop_after = stop_after;
    struct lanyfs_error err;
    enum lanyfs_err rc = store_entries(z->db, z->scan, prefix, state, on_entry, c, &err);
    check_rc(rc, &err, "store_entries");
    c->rc = rc;
    FUZZ_CHECK(stop_after == 0 || c->calls < stop_after || rc == LANYFS_OK,
               "store_entries stopped by its callback returned %s", lanyfs_strerror(rc));
}

/* -- extents and owners -- */

struct extent {
    uint64_t file_block, block, count;
};

struct extents_ctx {
    const char *owner;
    uint64_t next;
    size_t calls;
    size_t stop_after;
    struct extent ext[MAX_EXTENTS];
    size_t n;
};

static int on_extent(void *ctx, uint64_t file_block, uint64_t block, uint64_t count)
{
    struct extents_ctx *c = ctx;
    c->calls++;
    FUZZ_CHECK(c->stop_after == 0 || c->calls <= c->stop_after, "%s: a row after the stop",
               c->owner);
    FUZZ_CHECK(count >= 1 && count <= STORE_EXTENT_MAX, "%s: extent of %" PRIu64 " blocks",
               c->owner, count);
    FUZZ_CHECK(block != 0, "%s: extent at block 0", c->owner);
    FUZZ_CHECK(block <= UINT64_MAX - count && file_block <= UINT64_MAX - count,
               "%s: extent at %" PRIu64 " (file block %" PRIu64 ") of %" PRIu64
               " ends past 2^64",
               c->owner, block, file_block, count);
    FUZZ_CHECK(c->calls == 1 || file_block >= c->next,
               "%s: extent at file block %" PRIu64 " overlaps the one before (ends %" PRIu64 ")",
               c->owner, file_block, c->next);
    c->next = file_block + count;
    if (c->n < MAX_EXTENTS)
        c->ext[c->n++] = (struct extent){file_block, block, count};
    return c->stop_after != 0 && c->calls >= c->stop_after;
}

/* The data map of an entry (lost: of a lost tree); rc into *rc. */
static void read_extents(struct fz *z, bool lost, uint64_t id, size_t stop_after,
                         struct extents_ctx *c, enum lanyfs_err *rcp)
{
    char owner[48];
    snprintf(owner, sizeof(owner), "%s %" PRIu64, lost ? "lost tree" : "entry", id);
    memset(c, 0, sizeof(*c));
    c->owner = owner;
    c->stop_after = stop_after;
    struct lanyfs_error err;
    enum lanyfs_err rc =
        lost ? store_lost_tree_blocks(z->db, z->scan, id, on_extent, c, &err)
             : store_entry_blocks(z->db, z->scan, (uint32_t)id, on_extent, c, &err);
    check_rc(rc, &err, owner);
    FUZZ_CHECK(stop_after == 0 || c->calls < stop_after || rc == LANYFS_OK,
               "%s: stopped by its callback, returned %s", owner, lanyfs_strerror(rc));
    c->owner = NULL;
    if (rcp != NULL)
        *rcp = rc;
}

struct owners_ctx {
    uint32_t entry[16];
    uint64_t file_block[16];
    size_t n;
    size_t calls;
};

static int on_owner(void *ctx, uint32_t entry, uint64_t file_block)
{
    struct owners_ctx *c = ctx;
    c->calls++;
    if (c->n < 16) {
        c->entry[c->n] = entry;
        c->file_block[c->n++] = file_block;
    }
    return 0;
}

/* Whether the map of entry (read whole and valid) holds block at file_block; -1: unreadable. */
static int map_holds(struct fz *z, uint32_t entry, uint64_t file_block, uint64_t block)
{
    struct extents_ctx c;
    enum lanyfs_err rc;
    read_extents(z, false, entry, 0, &c, &rc);
    if (rc != LANYFS_OK || c.calls > MAX_EXTENTS)
        return -1;
    for (size_t i = 0; i < c.n; i++)
        if (file_block >= c.ext[i].file_block && file_block - c.ext[i].file_block < c.ext[i].count)
            return block == c.ext[i].block + (file_block - c.ext[i].file_block);
    return 0;
}

/* The owners of block: entry among them at file_block, and each holds it. */
static void check_owners(struct fz *z, uint64_t block, uint32_t entry, uint64_t file_block)
{
    struct owners_ctx c = {0};
    struct lanyfs_error err;
    enum lanyfs_err rc = store_block_owners(z->db, z->scan, block, on_owner, &c, &err);
    check_rc(rc, &err, "store_block_owners");
    if (rc != LANYFS_OK)
        return;
    bool found = false;
    for (size_t i = 0; i < c.n; i++) {
        FUZZ_CHECK(c.entry[i] >= 1, "block %" PRIu64 ": owner entry 0", block);
        if (c.entry[i] == entry && c.file_block[i] == file_block)
            found = true;
        else if (!z->poked)
            FUZZ_CHECK(map_holds(z, c.entry[i], c.file_block[i], block) != 0,
                       "block %" PRIu64 ": owner entry %" PRIu32 " at file block %" PRIu64
                       ", which its map does not hold there",
                       block, c.entry[i], c.file_block[i]);
    }
    FUZZ_CHECK(found || c.calls > c.n || z->poked,
               "block %" PRIu64 ": entry %" PRIu32 " maps it at file block %" PRIu64
               " but is not among its %zu owners",
               block, entry, file_block, c.calls);
}

static void read_entry_maps(struct fz *z, const struct entries_ctx *ents)
{
    size_t nmaps = ents->nids < MAX_MAPS ? ents->nids : MAX_MAPS;
    for (size_t m = 0; m < nmaps; m++) {
        /* MAX_MAPS entries spread over the listing, from one the input picks */
        size_t i = (z->knob + m * ents->nids / nmaps) % ents->nids;
        struct extents_ctx c;
        enum lanyfs_err rc;
        size_t stop = (z->knob + m) % 7 == 3 ? 1 : 0;
        read_extents(z, false, ents->ids[i], stop, &c, &rc);
        if (rc != LANYFS_OK || stop != 0 || c.calls > c.n)
            continue;
        for (size_t k = 0; k < c.n && z->owner_checks < MAX_OWNER_CHECKS; k++) {
            const struct extent *x = &c.ext[k];
            uint64_t last = x->block + x->count - 1;
            z->owner_checks++;
            if (x->block <= INT64_MAX)
                check_owners(z, x->block, ents->ids[i], x->file_block);
            if (last <= INT64_MAX && x->count > 1)
                check_owners(z, last, ents->ids[i], x->file_block + x->count - 1);
        }
    }
    /* an id no entry has, a block far out */
    static const uint32_t bogus[] = {0, UINT32_MAX, 1u << 31, 0};
    static const uint64_t blocks[] = {0, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1,
                                      UINT64_MAX};
    struct extents_ctx c;
    read_extents(z, false, bogus[z->knob % 4], 0, &c, NULL);
    struct owners_ctx oc = {0};
    struct lanyfs_error err;
    check_rc(store_block_owners(z->db, z->scan, blocks[(z->knob >> 2) % 4], on_owner, &oc, &err),
             &err, "store_block_owners");
}

/* -- lost trees -- */

struct trees_ctx {
    uint64_t tops[MAX_TREES];
    size_t n;
    size_t calls;
};

static int on_tree(void *ctx, const struct store_lost_tree *t)
{
    struct trees_ctx *c = ctx;
    c->calls++;
    FUZZ_CHECK(t->top != 0, "lost tree at top 0");
    sink += t->entry + t->size + t->blocks_mapped + t->extenders;
    if (c->n < MAX_TREES)
        c->tops[c->n++] = t->top;
    return 0;
}

static void read_lost(struct fz *z)
{
    struct trees_ctx c = {0};
    struct lanyfs_error err;
    check_rc(store_lost_trees(z->db, z->scan, on_tree, &c, &err), &err, "store_lost_trees");
    for (size_t i = 0; i < c.n; i++) {
        struct extents_ctx x;
        read_extents(z, true, c.tops[i], (z->knob + i) % 5 == 1 ? 2 : 0, &x, NULL);
    }
    static const uint64_t bogus[] = {0, 1, UINT64_MAX, (uint64_t)INT64_MAX + 1};
    struct extents_ctx x;
    read_extents(z, true, bogus[z->knob % 4], 0, &x, NULL);
}

/* -- findings -- */

struct findings_ctx {
    uint32_t code;
    enum scan_severity min;
    size_t calls;
    size_t stop_after;
    uint32_t first_code;
    uint64_t entry[MAX_ENTRIES]; /* the entries of the first MAX_ENTRIES */
    size_t n;
};

static int on_finding(void *ctx, const struct store_finding *f)
{
    struct findings_ctx *c = ctx;
    c->calls++;
    FUZZ_CHECK(c->stop_after == 0 || c->calls <= c->stop_after, "findings: a row after the stop");
    FUZZ_CHECK((unsigned)f->severity <= SCAN_SEV_CRITICAL, "finding %" PRIu64 ": severity %d",
               f->seq, (int)f->severity);
    FUZZ_CHECK(f->severity >= c->min, "finding %" PRIu64 ": severity %d below the %d asked for",
               f->seq, (int)f->severity, (int)c->min);
    FUZZ_CHECK(c->code == 0 || f->code == c->code,
               "finding %" PRIu64 ": code 0x%" PRIx32 ", asked for 0x%" PRIx32, f->seq, f->code,
               c->code);
    FUZZ_CHECK(f->code_name != NULL && f->message != NULL, "finding %" PRIu64
               ": no code name or message", f->seq);
    touch_text("code_name", f->code_name);
    touch_text("message", f->message);
    touch_text("finding path", f->path);
    touch_text("finding text", f->text);
    sink += f->entry + f->block + f->block2 + f->value + f->value2 + f->count + f->count2;
    if (c->calls == 1)
        c->first_code = f->code;
    if (c->n < MAX_ENTRIES)
        c->entry[c->n++] = f->entry;
    return c->stop_after != 0 && c->calls >= c->stop_after;
}

static void read_findings(struct fz *z)
{
    static const struct {
        int code;  /* -1: the first finding's */
        enum scan_severity min;
        size_t stop;
    } asks[] = {
        {0, SCAN_SEV_INFO, 0}, {-1, SCAN_SEV_INFO, 0}, {0, SCAN_SEV_WARNING, 2},
    };
    uint32_t first = 0;
    for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
        struct findings_ctx c = {.min = asks[i].min, .stop_after = asks[i].stop};
        if (i == 2) /* a severity and a stop of the input's */
            c.min = (enum scan_severity)((z->knob >> 3) % 4);
        c.code = asks[i].code < 0 ? first : (uint32_t)asks[i].code;
        if (asks[i].code < 0 && first == 0)
            c.code = UINT32_MAX;
        struct lanyfs_error err;
        enum lanyfs_err rc = store_findings(z->db, z->scan, c.code, c.min, on_finding, &c, &err);
        check_rc(rc, &err, "store_findings");
        FUZZ_CHECK(c.stop_after == 0 || c.calls < c.stop_after || rc == LANYFS_OK,
                   "store_findings stopped by its callback returned %s", lanyfs_strerror(rc));
        if (i == 0)
            first = c.first_code;
        if (i == 0 && rc == LANYFS_OK && c.calls == c.n)
            check_stored(z, "finding entry",
                         "SELECT COALESCE(entry, 0), COUNT(*) FROM findings WHERE scan = ?1"
                         " AND severity >= 0 GROUP BY 1",
                         c.entry, c.n);
    }
}

/* -- the block map -- */

struct runs_ctx {
    uint64_t lo, hi;        /* asked for (clamped as the reader does) */
    size_t calls;
    size_t stop_after;
    uint64_t next;          /* where the run before ended */
    struct store_block_run runs[MAX_RUNS];
    size_t n;
};

static int on_run(void *ctx, const struct store_block_run *run)
{
    struct runs_ctx *c = ctx;
    c->calls++;
    FUZZ_CHECK(c->stop_after == 0 || c->calls <= c->stop_after, "runs: a row after the stop");
    FUZZ_CHECK(run->count >= 1, "run at %" PRIu64 ": count 0", run->first);
    FUZZ_CHECK(run->first <= UINT64_MAX - run->count,
               "run at %" PRIu64 " of %" PRIu64 " blocks ends past 2^64", run->first, run->count);
    FUZZ_CHECK((unsigned)run->cls < SCAN_BLK_CLASSES, "run at %" PRIu64 ": class %d", run->first,
               (int)run->cls);
    FUZZ_CHECK(c->calls == 1 || run->first >= c->next,
               "run at %" PRIu64 " overlaps the one before, which ends at %" PRIu64, run->first,
               c->next);
    FUZZ_CHECK(run->first <= c->hi && run->first + (run->count - 1) >= c->lo,
               "run %" PRIu64 "+%" PRIu64 " holds no block of %" PRIu64 "..%" PRIu64, run->first,
               run->count, c->lo, c->hi);
    c->next = run->first + run->count;
    sink += run->owner + run->flags + run->wrcnt + run->has_wrcnt;
    if (c->n < MAX_RUNS)
        c->runs[c->n++] = *run;
    return c->stop_after != 0 && c->calls >= c->stop_after;
}

static enum lanyfs_err read_runs(struct fz *z, uint64_t first, uint64_t last, size_t stop,
                                 struct runs_ctx *c)
{
    c->calls = c->n = 0; /* the runs themselves are overwritten as they come */
    c->next = 0;
    c->lo = first > INT64_MAX ? INT64_MAX : first;
    c->hi = last > INT64_MAX ? INT64_MAX : last;
    c->stop_after = stop;
    struct lanyfs_error err;
    enum lanyfs_err rc = store_block_runs(z->db, z->scan, first, last, on_run, c, &err);
    check_rc(rc, &err, "store_block_runs");
    FUZZ_CHECK(c->lo <= c->hi || c->calls == 0, "runs of an empty range");
    FUZZ_CHECK(stop == 0 || c->calls < stop || rc == LANYFS_OK,
               "store_block_runs stopped by its callback returned %s", lanyfs_strerror(rc));
    return rc;
}

struct counters_ctx {
    int cls;
    size_t calls;
    uint64_t block[MAX_RUNS];
    uint8_t klass[MAX_RUNS];
    uint16_t wrcnt[MAX_RUNS];
    size_t n;
};

static int on_counter(void *ctx, uint64_t block, enum scan_class cls, uint16_t wrcnt)
{
    struct counters_ctx *c = ctx;
    c->calls++;
    FUZZ_CHECK((unsigned)cls < SCAN_BLK_CLASSES, "counter of block %" PRIu64 ": class %d", block,
               (int)cls);
    FUZZ_CHECK(c->cls == STORE_ANY_CLASS || (int)cls == c->cls,
               "counter of block %" PRIu64 ": class %d, asked for %d", block, (int)cls, c->cls);
    if (c->n < MAX_RUNS) {
        c->block[c->n] = block;
        c->klass[c->n] = (uint8_t)cls;
        c->wrcnt[c->n++] = wrcnt;
    }
    return 0;
}

static void read_map(struct fz *z, uint64_t map_blocks)
{
    static struct runs_ctx all, part;
    static struct counters_ctx counters;
    enum lanyfs_err rc = read_runs(z, 0, UINT64_MAX, 0, &all);
    bool whole = rc == LANYFS_OK && all.calls == all.n && !z->poked;
    if (whole) {
        /* the rows the reader's range of blocks takes: not those of a text or blob first */
        static uint64_t owners[MAX_RUNS];
        for (size_t i = 0; i < all.n; i++)
            owners[i] = all.runs[i].owner;
        check_stored(z, "run owner",
                     "SELECT COALESCE(owner, 0), COUNT(*) FROM block_runs WHERE scan = ?1"
                     " AND first BETWEEN 0 AND 9223372036854775807 GROUP BY 1",
                     owners, all.n);
    }
    /* Ranges: the GUI's, single blocks at and after run starts, the end, none. */
    uint64_t ranges[5][2] = {
        {0, map_blocks != 0 ? map_blocks - 1 : 0},
        {map_blocks, map_blocks + 10},
        {z->knob & 0x40 ? UINT64_MAX : 5, z->knob & 0x40 ? UINT64_MAX : 2},
    };
    size_t nr = 3;
    for (size_t i = z->knob % 3; i < all.n && nr < 5; i += 1 + all.n) {
        ranges[nr][0] = ranges[nr][1] = all.runs[i].first;
        nr++;
        ranges[nr][0] = all.runs[i].first + all.runs[i].count;
        ranges[nr][1] = ranges[nr][0] + 3;
        nr++;
    }
    for (size_t r = 0; r < nr; r++) {
        rc = read_runs(z, ranges[r][0], ranges[r][1], r == 0 && (z->knob & 1) ? 3 : 0, &part);
        if (!whole || rc != LANYFS_OK || part.stop_after != 0 || part.calls != part.n)
            continue;
        /* The runs of the range are those of the whole map that hold one of its blocks. */
        size_t k = 0;
        for (size_t i = 0; i < all.n; i++) {
            const struct store_block_run *a = &all.runs[i];
            if (part.lo > part.hi || a->first > part.hi || a->first + (a->count - 1) < part.lo)
                continue;
            FUZZ_CHECK(k < part.n && part.runs[k].first == a->first &&
                           part.runs[k].count == a->count && part.runs[k].cls == a->cls &&
                           part.runs[k].owner == a->owner,
                       "runs of %" PRIu64 "..%" PRIu64 ": run %" PRIu64 "+%" PRIu64
                       " of the map missing or different",
                       part.lo, part.hi, a->first, a->count);
            k++;
        }
        FUZZ_CHECK(k == part.n, "runs of %" PRIu64 "..%" PRIu64 ": %zu runs, the map holds %zu",
                   part.lo, part.hi, part.n, k);
    }
    /* Counters: of every class, then of a few. */
    const int classes[] = {STORE_ANY_CLASS, (int)(z->knob % SCAN_BLK_CLASSES),
                           z->knob & 0x80 ? 99 : -7};
    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
        counters.calls = counters.n = 0;
        counters.cls = classes[i];
        struct lanyfs_error err;
        rc = store_counters(z->db, z->scan, classes[i], on_counter, &counters, &err);
        check_rc(rc, &err, "store_counters");
        if (i != 0 || rc != LANYFS_OK || !whole || counters.calls != counters.n)
            continue;
        /* Of every class: the runs with a write counter, in the same order. */
        size_t k = 0;
        for (size_t j = 0; j < all.n; j++) {
            const struct store_block_run *a = &all.runs[j];
            if (!a->has_wrcnt)
                continue;
            FUZZ_CHECK(k < counters.n && counters.block[k] == a->first &&
                           counters.klass[k] == a->cls && counters.wrcnt[k] == a->wrcnt,
                       "counters: the run at %" PRIu64 " with a write counter is missing",
                       a->first);
            k++;
        }
        FUZZ_CHECK(k == counters.n, "%zu counters, %zu runs with a write counter", counters.n,
                   k);
    }
}

/* The readers over an id no scan has: each once, for rows of no scan. */
static void read_no_scan(struct fz *z, int64_t id)
{
    z->scan = id;
    struct entries_ctx *ents = calloc(1, sizeof(*ents));
    FUZZ_CHECK(ents != NULL, "out of memory");
    read_entries(z, STORE_ANY_STATE, NULL, 0, ents);
    free(ents);
    struct extents_ctx x;
    read_extents(z, false, 1, 0, &x, NULL);
    read_extents(z, true, 1, 0, &x, NULL);
    struct owners_ctx oc = {0};
    struct trees_ctx tc = {0};
    struct findings_ctx fc = {0};
    struct lanyfs_error err;
    check_rc(store_block_owners(z->db, id, 1, on_owner, &oc, &err), &err, "store_block_owners");
    check_rc(store_lost_trees(z->db, id, on_tree, &tc, &err), &err, "store_lost_trees");
    check_rc(store_findings(z->db, id, 0, SCAN_SEV_INFO, on_finding, &fc, &err), &err,
             "store_findings");
    static struct runs_ctx runs;
    read_runs(z, 0, UINT64_MAX, 0, &runs);
    static struct counters_ctx counters;
    counters.calls = counters.n = 0;
    counters.cls = STORE_ANY_CLASS;
    check_rc(store_counters(z->db, id, STORE_ANY_CLASS, on_counter, &counters, &err), &err,
             "store_counters");
}

/* -- scans -- */

/* Every reader over scan id, whose scans row says map_blocks. */
static void read_scan(struct fz *z, int64_t id, uint64_t map_blocks)
{
    z->scan = id;
    z->owner_checks = 0;
    struct entries_ctx *ents = calloc(1, sizeof(*ents));
    FUZZ_CHECK(ents != NULL, "out of memory");
    read_entries(z, STORE_ANY_STATE, NULL, 0, ents);
    if (ents->rc == LANYFS_OK && ents->calls == ents->nids) {
        check_stored(z, "entry id",
                     "SELECT id, COUNT(*) FROM entries WHERE scan = ?1 AND path >= ''"
                     " GROUP BY id",
                     ents->id64, ents->nids);
        check_stored(z, "entry parent",
                     "SELECT COALESCE(parent, 0), COUNT(*) FROM entries WHERE scan = ?1"
                     " AND path >= '' GROUP BY 1",
                     ents->parent64, ents->nids);
    }
    /* One state (or none), the prefixes of a few paths, a stop. */
    read_entries(z, (int)(z->knob % 4), NULL, 0, NULL);
    for (size_t i = 0; i < ents->npaths; i++)
        read_entries(z, i == 2 ? SCAN_ENTRY_LIVE : STORE_ANY_STATE, ents->paths[i], 0, NULL);
    read_entries(z, STORE_ANY_STATE, z->knob & 4 ? "\xff" : "", 1 + z->knob % 3, NULL);
    read_entry_maps(z, ents);
    free(ents);
    read_lost(z);
    read_findings(z);
    read_map(z, map_blocks);
}

/* Every reader over every scan of db; raw (may be NULL) reads the file directly. */
static void read_all(struct store_db *db, sqlite3 *raw, uint8_t knob)
{
    struct fz z = {.db = db, .raw = raw, .poked = raw == NULL, .knob = knob};
    struct lanyfs_error err;
    int64_t v = store_schema_version(db);
    FUZZ_CHECK(v >= STORE_READ_OLDEST && v <= STORE_SCHEMA_VERSION, "schema version %" PRId64, v);
    FUZZ_CHECK(strcmp(store_path(db), work_path) == 0, "store_path: %s", store_path(db));

    struct store_scan *scans = NULL;
    size_t n = 0;
    enum lanyfs_err rc = store_list_scans(db, NULL, &scans, &n, &err);
    check_rc(rc, &err, "store_list_scans");
    FUZZ_CHECK(rc == LANYFS_OK || (scans == NULL && n == 0), "store_list_scans failed with rows");
    int64_t max_id = 0;
    for (size_t i = 0; i < n; i++) {
        check_scan(&scans[i]);
        FUZZ_CHECK(i == 0 || scans[i].id >= scans[i - 1].id, "scans out of order at %zu", i);
        if (scans[i].id > max_id)
            max_id = scans[i].id;
    }
    /* Those of one image only. */
    if (n > 0) {
        struct store_scan *some = NULL;
        size_t m = 0;
        rc = store_list_scans(db, scans[n - 1].image_path, &some, &m, &err);
        check_rc(rc, &err, "store_list_scans of an image");
        for (size_t i = 0; i < m; i++) {
            check_scan(&some[i]);
            FUZZ_CHECK(strcmp(some[i].image_path, scans[n - 1].image_path) == 0,
                       "scans of '%s' list one of '%s'", scans[n - 1].image_path,
                       some[i].image_path);
        }
        store_scans_free(some, m);
    }
    for (size_t i = 0; i < n && i < MAX_SCANS; i++)
        read_scan(&z, scans[i].id, scans[i].map_blocks);
    /* One scan of the list again; ids no scan has, or that no list gave. */
    const int64_t bogus[] = {0, -1, INT64_MAX, INT64_MIN};
    int64_t after = max_id < INT64_MAX ? max_id + 1 : INT64_MIN;
    const int64_t ids[] = {n > 0 ? scans[knob % n].id : 1, bogus[knob % 4], after};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        struct store_scan one;
        rc = store_get_scan(db, ids[i], &one, &err);
        check_rc(rc, &err, "store_get_scan");
        if (rc == LANYFS_OK) {
            check_scan(&one);
            FUZZ_CHECK(one.id == ids[i], "store_get_scan(%" PRId64 ") gave scan %" PRId64, ids[i],
                       one.id);
            store_scan_clear(&one);
        }
    }
    read_no_scan(&z, after);
    store_scans_free(scans, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_INPUT_MAX)
        return 0;
    base_setup();
    write_work();
    /* The connection that edited checks the readers' values against the
     * file, unless bytes of it were changed (NULL). */
    sqlite3 *raw = apply_edits(data, size);
    struct store_db *db = NULL;
    struct lanyfs_error err;
    enum lanyfs_err rc = store_open(work_path, STORE_OPEN_READONLY, &db, &err);
    check_rc(rc, &err, "store_open");
    FUZZ_CHECK((rc == LANYFS_OK) == (db != NULL), "store_open: %s with%s a handle",
               lanyfs_strerror(rc), db != NULL ? "" : "out");
    if (db != NULL) {
        read_all(db, raw, size > 0 ? data[size - 1] : 0);
        rc = store_close(db, &err);
        FUZZ_CHECK(rc == LANYFS_OK, "store_close: %s", err.msg);
    }
    FUZZ_CHECK(sqlite3_close(raw) == SQLITE_OK, "cannot close the copy");
    return 0;
}
