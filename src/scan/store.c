/*
 * store.c -- scan results in an SQLite database (contract in store.h, schema
 * in docs/scan-db.md).
 *
 * Writing: store_add_scan runs one IMMEDIATE transaction that prepares one
 * batched INSERT per table, keeps rows until a batch is full, binds them
 * through bind_at() and runs them through step_done() (the places that
 * check bind, step and reset codes) and commits; any failure rolls the
 * transaction back.  The block map becomes runs of equal (class, owner,
 * flags) cells in one pass, each metadata cell a run of its own with its
 * write counter, which the counters view shows.  Text from the disk goes
 * through the escape of store.h; a text made only of printable ASCII
 * without a backslash (the usual case) is bound as it is, without a copy.
 *
 * Reading: each query is one prepared statement whose rows go to the
 * caller's callback; query_run() checks every step and the final reset.
 *
 * Every failing SQLite call becomes a struct lanyfs_error whose message
 * names the database file and the statement (SQL verb and table).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "config.h"
#include "sha256.h"
#include "store.h"
#include "utf8.h"

struct store_db {
    sqlite3 *h;           /* the connection */
    char *path;           /* as opened (owned) */
    bool readonly;        /* opened with STORE_OPEN_READONLY */
    bool catalogue_done;  /* the lookup tables were written through this handle */
    bool wal_pending;     /* created by this handle, in rollback mode until its first scan */
    int64_t version;      /* the file's schema version: older only when read-only */
};

/* ---- the schema ---------------------------------------------------------- */

/*
 * The indexes of the tables with many rows a scan.  The first scan written
 * into a file builds them after its rows are in (bulk_indexes): an index
 * built from sorted rows costs far less than one kept up row by row.
 */
#define IDX_ENTRIES_PATH "CREATE INDEX entries_path ON entries(scan, path);\n"
#define IDX_ENTRIES_PARENT "CREATE INDEX entries_parent ON entries(scan, parent);\n"
#define IDX_ENTRY_BLOCKS_BLOCK "CREATE INDEX entry_blocks_block ON entry_blocks(scan, block);\n"

static const struct {
    const char *drop;   /* DROP INDEX */
    const char *create; /* its CREATE INDEX, as in schema_sql */
} bulk_indexes[] = {
    {"DROP INDEX entries_path", IDX_ENTRIES_PATH},
    {"DROP INDEX entries_parent", IDX_ENTRIES_PARENT},
    {"DROP INDEX entry_blocks_block", IDX_ENTRY_BLOCKS_BLOCK},
};

/* The block map's table (under a name, for the upgrade) and the counters view. */
#define SQL_BLOCK_RUNS(name)              \
    "CREATE TABLE " name " (\n"           \
    "    scan INTEGER NOT NULL,\n"        \
    "    first INTEGER NOT NULL,\n"       \
    "    count INTEGER NOT NULL,\n"       \
    "    class INTEGER NOT NULL,\n"       \
    "    owner INTEGER,\n"                \
    "    flags INTEGER NOT NULL,\n"       \
    "    wrcnt INTEGER,\n"                \
    "    PRIMARY KEY (scan, first)\n"     \
    ") WITHOUT ROWID;\n"
#define SQL_COUNTERS_VIEW                                                                    \
    "CREATE VIEW counters AS\n"                                                             \
    "    SELECT scan, first AS block, class, wrcnt FROM block_runs WHERE wrcnt IS NOT NULL;\n"

/* The lost trees and their data maps (version 3; the upgrade from 2 creates them). */
#define SQL_LOST_TREES                          \
    "CREATE TABLE lost_trees (\n"               \
    "    scan INTEGER NOT NULL,\n"              \
    "    top INTEGER NOT NULL,\n"               \
    "    entry INTEGER,\n"                      \
    "    size INTEGER NOT NULL,\n"              \
    "    blocks_mapped INTEGER NOT NULL,\n"     \
    "    extenders INTEGER NOT NULL,\n"         \
    "    PRIMARY KEY (scan, top)\n"             \
    ") WITHOUT ROWID;\n"                        \
    "CREATE TABLE lost_tree_blocks (\n"         \
    "    scan INTEGER NOT NULL,\n"              \
    "    top INTEGER NOT NULL,\n"               \
    "    file_block INTEGER NOT NULL,\n"        \
    "    block INTEGER NOT NULL,\n"             \
    "    count INTEGER NOT NULL,\n"             \
    "    PRIMARY KEY (scan, top, file_block)\n" \
    ") WITHOUT ROWID;\n"

/*
 * Version 3.  Changing anything here means a new STORE_SCHEMA_VERSION, an
 * upgrade step in upgrade_steps[] and a new section in docs/scan-db.md.
 */
static const char schema_sql[] =
    "CREATE TABLE catalogue (\n"
    "    code INTEGER PRIMARY KEY,\n"
    "    name TEXT NOT NULL UNIQUE,\n"
    "    severity INTEGER NOT NULL,\n"
    "    flags INTEGER NOT NULL,\n"
    "    message TEXT NOT NULL,\n"
    "    repair TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE severities (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);\n"
    "CREATE TABLE classes (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);\n"
    "CREATE TABLE states (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);\n"
    "CREATE TABLE scans (\n"
    "    id INTEGER PRIMARY KEY,\n"
    "    started TEXT NOT NULL,\n"
    "    seconds REAL NOT NULL,\n"
    "    tool_version TEXT NOT NULL,\n"
    "    image_path TEXT NOT NULL,\n"
    "    image_size INTEGER NOT NULL,\n"
    "    image_sha256 TEXT,\n"
    "    block_size INTEGER,\n"
    "    address_length INTEGER,\n"
    "    blocks INTEGER,\n"
    "    map_blocks INTEGER NOT NULL,\n"
    "    geometry_inferred INTEGER NOT NULL,\n"
    "    sb_read INTEGER NOT NULL,\n"
    "    sb_type INTEGER,\n"
    "    sb_wrcnt INTEGER,\n"
    "    sb_magic INTEGER,\n"
    "    sb_major INTEGER,\n"
    "    sb_minor INTEGER,\n"
    "    sb_blockbits INTEGER,\n"
    "    sb_addrlen INTEGER,\n"
    "    sb_rootdir INTEGER,\n"
    "    sb_blocks INTEGER,\n"
    "    sb_freehead INTEGER,\n"
    "    sb_freetail INTEGER,\n"
    "    sb_freeblocks INTEGER,\n"
    "    sb_created TEXT,\n"
    "    sb_updated TEXT,\n"
    "    sb_checked TEXT,\n"
    "    sb_badblocks INTEGER,\n"
    "    sb_label BLOB,\n"
    "    dirs INTEGER NOT NULL,\n"
    "    files INTEGER NOT NULL,\n"
    "    deleted INTEGER NOT NULL,\n"
    "    orphans INTEGER NOT NULL,\n"
    "    bytes INTEGER NOT NULL,\n"
    "    free_listed INTEGER NOT NULL,\n"
    "    worst_severity INTEGER NOT NULL,\n"
    "    n_info INTEGER NOT NULL,\n"
    "    n_warning INTEGER NOT NULL,\n"
    "    n_error INTEGER NOT NULL,\n"
    "    n_critical INTEGER NOT NULL\n"
    ");\n"
    "CREATE INDEX scans_image ON scans(image_path);\n"
    "CREATE TABLE findings (\n"
    "    scan INTEGER NOT NULL,\n"
    "    seq INTEGER NOT NULL,\n"
    "    code INTEGER NOT NULL,\n"
    "    code_name TEXT NOT NULL,\n"
    "    severity INTEGER NOT NULL,\n"
    "    entry INTEGER,\n"
    "    block INTEGER NOT NULL,\n"
    "    block2 INTEGER NOT NULL,\n"
    "    value INTEGER NOT NULL,\n"
    "    value2 INTEGER NOT NULL,\n"
    "    count INTEGER NOT NULL,\n"
    "    count2 INTEGER NOT NULL,\n"
    "    path TEXT,\n"
    "    text TEXT,\n"
    "    message TEXT NOT NULL,\n"
    "    PRIMARY KEY (scan, seq)\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX findings_code ON findings(scan, code);\n"
    "CREATE INDEX findings_severity ON findings(scan, severity);\n"
    "CREATE INDEX findings_block ON findings(scan, block);\n"
    "CREATE TABLE entries (\n"
    "    scan INTEGER NOT NULL,\n"
    "    id INTEGER NOT NULL,\n"
    "    block INTEGER NOT NULL,\n"
    "    parent INTEGER,\n"
    "    state INTEGER NOT NULL,\n"
    "    type INTEGER NOT NULL,\n"
    "    name BLOB NOT NULL,\n"
    "    path TEXT NOT NULL,\n"
    "    size INTEGER NOT NULL,\n"
    "    created TEXT,\n"
    "    created_offset INTEGER NOT NULL,\n"
    "    modified TEXT,\n"
    "    modified_offset INTEGER NOT NULL,\n"
    "    attr INTEGER NOT NULL,\n"
    "    wrcnt INTEGER NOT NULL,\n"
    "    blocks_needed INTEGER NOT NULL,\n"
    "    blocks_mapped INTEGER NOT NULL,\n"
    "    blocks_intact INTEGER NOT NULL,\n"
    "    PRIMARY KEY (scan, id)\n"
    ") WITHOUT ROWID;\n"
    IDX_ENTRIES_PATH
    IDX_ENTRIES_PARENT
    "CREATE TABLE entry_blocks (\n"
    "    scan INTEGER NOT NULL,\n"
    "    entry INTEGER NOT NULL,\n"
    "    file_block INTEGER NOT NULL,\n"
    "    block INTEGER NOT NULL,\n"
    "    count INTEGER NOT NULL,\n"
    "    PRIMARY KEY (scan, entry, file_block)\n"
    ") WITHOUT ROWID;\n"
    IDX_ENTRY_BLOCKS_BLOCK
    SQL_BLOCK_RUNS("block_runs")
    SQL_COUNTERS_VIEW
    SQL_LOST_TREES;

/*
 * Version 1 to 2: the write counters move from a table of their own into
 * block_runs (each metadata cell a run of its own, with its counter), and
 * counters becomes a view.  Version 1 ran metadata cells together like any
 * others, so those runs are cut into cells, each given its row of the old
 * counters table.
 */
static const char upgrade_v1_sql[] =
    SQL_BLOCK_RUNS("block_runs_v2")
    "INSERT INTO block_runs_v2\n"
    "    SELECT scan, first, count, class, owner, flags, NULL FROM block_runs\n"
    "    WHERE flags & 4 = 0;\n"
    "WITH RECURSIVE cell(scan, b, last, class, owner, flags) AS (\n"
    "    SELECT scan, first, first + count - 1, class, owner, flags FROM block_runs\n"
    "    WHERE flags & 4 != 0\n"
    "    UNION ALL SELECT scan, b + 1, last, class, owner, flags FROM cell WHERE b < last)\n"
    "INSERT INTO block_runs_v2\n"
    "    SELECT c.scan, c.b, 1, c.class, c.owner, c.flags, k.wrcnt FROM cell c\n"
    "    LEFT JOIN counters k ON k.scan = c.scan AND k.class = c.class AND k.block = c.b;\n"
    "DROP TABLE counters;\n"
    "DROP TABLE block_runs;\n"
    "ALTER TABLE block_runs_v2 RENAME TO block_runs;\n"
    SQL_COUNTERS_VIEW
    "PRAGMA user_version = 2;\n";

/*
 * Version 2 to 3: the lost trees and their data maps get tables of their
 * own.  The scans of an older version were written without them and keep
 * no rows there: a reader finds no lost trees for them.
 */
static const char upgrade_v2_sql[] =
    SQL_LOST_TREES
    "PRAGMA user_version = 3;\n";

/* The upgrade steps, oldest first: a file of version v runs every step from v on. */
static const struct {
    int64_t from;    /* the version the step upgrades */
    const char *sql; /* ending with PRAGMA user_version = from + 1 */
} upgrade_steps[] = {
    {1, upgrade_v1_sql},
    {2, upgrade_v2_sql},
};

/* The page cache while a scan is written into a file in WAL mode, and
 * otherwise (SQLite's default). */
#define STORE_WRITE_CACHE "-262144" /* KiB: 256 MiB at most */
#define STORE_READ_CACHE "-2000"

/* The tables that hold rows of one scan, in the order a delete clears them. */
static const char *const scan_tables[] = {
    "findings", "entries", "entry_blocks", "block_runs", "lost_trees", "lost_tree_blocks",
};

/* ---- errors ---------------------------------------------------------------- */

static enum lanyfs_err code_for(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_NOMEM:
        return LANYFS_E_NOMEM;
    case SQLITE_NOTADB:
        return LANYFS_E_BADMAGIC;
    default:
        return LANYFS_E_IO;
    }
}

/* "DB: WHAT: sqlite's message" for the failing call that returned rc. */
static enum lanyfs_err db_fail(const struct store_db *db, const char *what, int rc,
                               struct lanyfs_error *err)
{
    const char *msg = db->h != NULL ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc);
    /* errmsg describes the connection's last error, which is rc's unless a
     * later call succeeded; fall back on the code's text then. */
    if (db->h != NULL && sqlite3_errcode(db->h) != rc)
        msg = sqlite3_errstr(rc);
    return lanyfs_fail(err, code_for(rc), LANYFS_NO_BLOCK, "%s: %s: %s", db->path, what, msg);
}

static enum lanyfs_err nomem(const struct store_db *db, const char *what, struct lanyfs_error *err)
{
    return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "%s: %s: out of memory", db->path,
                       what);
}

/* ---- text ------------------------------------------------------------------ */

/* True when the bytes are stored unchanged: printable ASCII only, no backslash. */
static bool plain_ascii(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] >= 0x7f || p[i] == '\\')
            return false;
    return true;
}

char *store_escape(const void *src, size_t len)
{
    const uint8_t *p = src;
    /* At most four output bytes per input byte. */
    if (len > (SIZE_MAX - 1) / 4)
        return NULL;
    char *out = malloc(len * 4 + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp = 0;
        size_t n = lanyfs_utf8_decode(p + i, len - i, &cp);
        if (n == 1 && cp == '\\') {
            out[o++] = '\\';
            out[o++] = '\\';
        } else if (n == 0 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
            /* an invalid byte, or each byte of a control character */
            size_t m = n == 0 ? 1 : n;
            for (size_t k = 0; k < m; k++)
                o += (size_t)sprintf(out + o, "\\x%02x", p[i + k]);
            i += m;
            continue;
        } else {
            memcpy(out + o, p + i, n);
            o += n;
        }
        i += n;
    }
    out[o] = '\0';
    return out;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

uint8_t *store_unescape(const char *text, size_t *len)
{
    size_t n = strlen(text);
    uint8_t *out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (text[i] == '\\' && text[i + 1] == '\\') {
            out[o++] = '\\';
            i += 2;
        } else if (text[i] == '\\' && text[i + 1] == 'x' && hexval(text[i + 2]) >= 0 &&
                   hexval(text[i + 3]) >= 0) {
            out[o++] = (uint8_t)(hexval(text[i + 2]) * 16 + hexval(text[i + 3]));
            i += 4;
        } else {
            out[o++] = (uint8_t)text[i++];
        }
    }
    out[o] = '\0';
    if (len != NULL)
        *len = o;
    return out;
}

/* Write v as exactly `digits` decimal digits at p (v < 10^digits); returns the end. */
static char *put_digits(char *p, uint32_t v, int digits)
{
    for (int i = digits - 1; i >= 0; i--) {
        p[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + digits;
}

/*
 * ISO 8601 of a timestamp into buf (at least 48 bytes); false when unset.
 * Written by hand: snprintf cost a third of the time entries take to store.
 * Fields as stored, even out of range; only a field wider than its digits
 * (year > 9999, nanoseconds >= 10^9, a byte field > 99) goes through snprintf.
 */
static bool ts_iso(const struct lanyfs_ts *ts, char *buf, size_t len)
{
    if (lanyfs_ts_is_unset(ts))
        return false;
    if (ts->year > 9999 || ts->month > 99 || ts->day > 99 || ts->hour > 99 || ts->minute > 99 ||
        ts->second > 99 || ts->nsec > 999999999) {
        int n = snprintf(buf, len, "%04u-%02u-%02uT%02u:%02u:%02u", ts->year, ts->month,
                         ts->day, ts->hour, ts->minute, ts->second);
        if (n > 0 && (size_t)n < len && ts->nsec != 0)
            n += snprintf(buf + n, len - (size_t)n, ".%09" PRIu32, ts->nsec);
        if (n > 0 && (size_t)n < len)
            snprintf(buf + n, len - (size_t)n, "Z");
        return true;
    }
    char *p = put_digits(buf, ts->year, 4);
    *p++ = '-';
    p = put_digits(p, ts->month, 2);
    *p++ = '-';
    p = put_digits(p, ts->day, 2);
    *p++ = 'T';
    p = put_digits(p, ts->hour, 2);
    *p++ = ':';
    p = put_digits(p, ts->minute, 2);
    *p++ = ':';
    p = put_digits(p, ts->second, 2);
    if (ts->nsec != 0) {
        *p++ = '.';
        p = put_digits(p, ts->nsec, 9);
    }
    *p++ = 'Z';
    *p = '\0';
    (void)len; /* 30 bytes at most here */
    return true;
}

/* ---- binding rows ------------------------------------------------------------ */

enum val_kind {
    V_NULL,
    V_INT,
    V_REAL,
    V_TEXT, /* bytes from outside: escaped before binding */
    V_SAFE, /* text known to be valid UTF-8 already (our own strings) */
    V_BLOB,
};

/* One value of a row to bind. */
struct val {
    enum val_kind kind;
    int64_t i;      /* V_INT */
    double d;       /* V_REAL */
    const void *p;  /* V_TEXT, V_SAFE, V_BLOB; V_TEXT and V_SAFE NULL bind NULL */
    size_t n;       /* bytes at p (V_TEXT, V_BLOB); V_SAFE uses strlen */
};

#define VNULL ((struct val){.kind = V_NULL})
#define VI(x) ((struct val){.kind = V_INT, .i = (int64_t)(x)})
#define VU(x) ((struct val){.kind = V_INT, .i = (int64_t)(uint64_t)(x)})
#define VR(x) ((struct val){.kind = V_REAL, .d = (x)})
#define VS(s) ((struct val){.kind = V_SAFE, .p = (s)})
#define VT(s) ((struct val){.kind = V_TEXT, .p = (s), .n = (s) != NULL ? strlen(s) : 0})
#define VB(b, len) ((struct val){.kind = V_BLOB, .p = (b), .n = (len)})
/* An id where 0 means none: NULL in the database. */
#define VID(x) ((x) != 0 ? VI(x) : VNULL)

/* A prepared statement and the name its errors carry. */
struct stmt {
    sqlite3_stmt *st;
    const char *name; /* "INSERT INTO entries" */
};

static enum lanyfs_err stmt_prepare(const struct store_db *db, struct stmt *s, const char *name,
                                    const char *sql, struct lanyfs_error *err)
{
    s->name = name;
    s->st = NULL;
    int rc = sqlite3_prepare_v2(db->h, sql, -1, &s->st, NULL);
    if (rc != SQLITE_OK) {
        s->st = NULL;
        return db_fail(db, name, rc, err);
    }
    return LANYFS_OK;
}

/* Finalize s; a failure is reported only when nothing failed before (*rc OK). */
static void stmt_finalize(const struct store_db *db, struct stmt *s, enum lanyfs_err *rc,
                          struct lanyfs_error *err)
{
    if (s->st == NULL)
        return;
    int src = sqlite3_finalize(s->st);
    s->st = NULL;
    if (src != SQLITE_OK && *rc == LANYFS_OK)
        *rc = db_fail(db, s->name, src, err);
}

/*
 * Bind vals[0..n) to parameters base+1..base+n of s.  Text and blobs are
 * bound without a copy (SQLITE_STATIC): the caller keeps them alive until
 * the statement has run.  An escaped text is handed over to SQLite.
 */
static enum lanyfs_err bind_at(const struct store_db *db, struct stmt *s, int base,
                               const struct val *vals, int n, struct lanyfs_error *err)
{
    for (int k = 0; k < n; k++) {
        const struct val *v = &vals[k];
        int rc = SQLITE_OK;
        int col = base + k + 1;
        switch (v->kind) {
        case V_NULL:
            rc = sqlite3_bind_null(s->st, col);
            break;
        case V_INT:
            rc = sqlite3_bind_int64(s->st, col, v->i);
            break;
        case V_REAL:
            rc = sqlite3_bind_double(s->st, col, v->d);
            break;
        case V_SAFE:
            if (v->p == NULL)
                rc = sqlite3_bind_null(s->st, col);
            else
                rc = sqlite3_bind_text(s->st, col, v->p, -1, SQLITE_STATIC);
            break;
        case V_TEXT:
            if (v->p == NULL) {
                rc = sqlite3_bind_null(s->st, col);
            } else if (plain_ascii(v->p, v->n)) {
                rc = sqlite3_bind_text64(s->st, col, v->p, v->n, SQLITE_STATIC, SQLITE_UTF8);
            } else {
                char *esc = store_escape(v->p, v->n);
                if (esc == NULL)
                    return nomem(db, s->name, err);
                rc = sqlite3_bind_text64(s->st, col, esc, strlen(esc), free, SQLITE_UTF8);
            }
            break;
        case V_BLOB:
            rc = sqlite3_bind_blob64(s->st, col, v->n ? v->p : "", v->n, SQLITE_STATIC);
            break;
        }
        if (rc != SQLITE_OK)
            return db_fail(db, s->name, rc, err);
    }
    return LANYFS_OK;
}

static enum lanyfs_err bind_vals(const struct store_db *db, struct stmt *s, const struct val *vals,
                                 int n, struct lanyfs_error *err)
{
    return bind_at(db, s, 0, vals, n, err);
}

/* Run s, which returns no rows, to its end and reset it. */
static enum lanyfs_err step_done(const struct store_db *db, struct stmt *s,
                                 struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    int src = sqlite3_step(s->st);
    if (src != SQLITE_DONE) {
        rc = db_fail(db, s->name, src == SQLITE_ROW ? SQLITE_MISUSE : src, err);
        sqlite3_reset(s->st);
        return rc;
    }
    src = sqlite3_reset(s->st);
    if (src != SQLITE_OK)
        return db_fail(db, s->name, src, err);
    return LANYFS_OK;
}

/* Bind a row, run the statement to its end and reset it. */
static enum lanyfs_err put_row(const struct store_db *db, struct stmt *s, const struct val *vals,
                               int n, struct lanyfs_error *err)
{
    enum lanyfs_err rc = bind_vals(db, s, vals, n, err);
    if (rc != LANYFS_OK) {
        sqlite3_reset(s->st); /* the bind error is the one to report */
        return rc;
    }
    return step_done(db, s, err);
}

#define NVALS(...) ((int)(sizeof((struct val[]){__VA_ARGS__}) / sizeof(struct val)))
#define PUT(db, s, err, ...) \
    put_row((db), (s), (struct val[]){__VA_ARGS__}, NVALS(__VA_ARGS__), (err))

/* Run one statement without rows (BEGIN, COMMIT, DELETE ...) with optional values. */
static enum lanyfs_err exec_vals(const struct store_db *db, const char *name, const char *sql,
                                 const struct val *vals, int n, struct lanyfs_error *err)
{
    struct stmt s;
    enum lanyfs_err rc = stmt_prepare(db, &s, name, sql, err);
    if (rc == LANYFS_OK)
        rc = put_row(db, &s, vals, n, err);
    stmt_finalize(db, &s, &rc, err);
    return rc;
}

static enum lanyfs_err exec_sql(const struct store_db *db, const char *sql,
                                struct lanyfs_error *err)
{
    return exec_vals(db, sql, sql, NULL, 0, err);
}

/* Run a PRAGMA, which may answer with rows (its new value): they are passed over. */
static enum lanyfs_err exec_pragma(const struct store_db *db, const char *sql,
                                   struct lanyfs_error *err)
{
    struct stmt s;
    enum lanyfs_err rc = stmt_prepare(db, &s, sql, sql, err);
    if (rc != LANYFS_OK)
        return rc;
    int src;
    while ((src = sqlite3_step(s.st)) == SQLITE_ROW)
        ;
    if (src != SQLITE_DONE)
        rc = db_fail(db, s.name, src, err);
    stmt_finalize(db, &s, &rc, err);
    return rc;
}

/* One integer from a one-row query (PRAGMA user_version, COUNT(*)). */
static enum lanyfs_err query_int(const struct store_db *db, const char *name, const char *sql,
                                 const struct val *vals, int n, int64_t *out,
                                 struct lanyfs_error *err)
{
    struct stmt s;
    enum lanyfs_err rc = stmt_prepare(db, &s, name, sql, err);
    if (rc != LANYFS_OK)
        goto out;
    rc = bind_vals(db, &s, vals, n, err);
    if (rc != LANYFS_OK)
        goto out;
    int src = sqlite3_step(s.st);
    if (src != SQLITE_ROW) {
        rc = db_fail(db, name, src == SQLITE_DONE ? SQLITE_INTERNAL : src, err);
        goto out;
    }
    *out = sqlite3_column_int64(s.st, 0);
    src = sqlite3_step(s.st);
    if (src != SQLITE_DONE)
        rc = db_fail(db, name, src == SQLITE_ROW ? SQLITE_MISUSE : src, err);
out:
    stmt_finalize(db, &s, &rc, err);
    return rc;
}

/* ---- opening ------------------------------------------------------------------ */

static enum lanyfs_err fill_lookup(const struct store_db *db, struct lanyfs_error *err)
{
    struct stmt cat = {0}, sev = {0}, cls = {0}, st = {0};
    enum lanyfs_err rc;
    rc = stmt_prepare(db, &cat, "INSERT INTO catalogue",
                      "INSERT OR REPLACE INTO catalogue (code, name, severity, flags, message,"
                      " repair) VALUES (?, ?, ?, ?, ?, ?)",
                      err);
    if (rc == LANYFS_OK)
        rc = stmt_prepare(db, &sev, "INSERT INTO severities",
                          "INSERT OR REPLACE INTO severities (id, name) VALUES (?, ?)", err);
    if (rc == LANYFS_OK)
        rc = stmt_prepare(db, &cls, "INSERT INTO classes",
                          "INSERT OR REPLACE INTO classes (id, name) VALUES (?, ?)", err);
    if (rc == LANYFS_OK)
        rc = stmt_prepare(db, &st, "INSERT INTO states",
                          "INSERT OR REPLACE INTO states (id, name) VALUES (?, ?)", err);
    if (rc != LANYFS_OK)
        goto out;
    size_t n;
    const struct scan_problem_info *t = scan_problem_table(&n);
    for (size_t i = 0; i < n && rc == LANYFS_OK; i++)
        rc = PUT(db, &cat, err, VI(t[i].code), VS(t[i].name), VI(t[i].severity), VI(t[i].flags),
                 VS(t[i].message), VS(t[i].repair));
    for (int s = SCAN_SEV_INFO; s <= SCAN_SEV_CRITICAL && rc == LANYFS_OK; s++)
        rc = PUT(db, &sev, err, VI(s), VS(scan_severity_name((enum scan_severity)s)));
    for (int c = 0; c < SCAN_BLK_CLASSES && rc == LANYFS_OK; c++)
        rc = PUT(db, &cls, err, VI(c), VS(scan_class_name((enum scan_class)c)));
    for (int s = SCAN_ENTRY_LIVE; s <= SCAN_ENTRY_ORPHAN && rc == LANYFS_OK; s++)
        rc = PUT(db, &st, err, VI(s), VS(scan_entry_state_name((enum scan_entry_state)s)));
out:
    stmt_finalize(db, &cat, &rc, err);
    stmt_finalize(db, &sev, &rc, err);
    stmt_finalize(db, &cls, &rc, err);
    stmt_finalize(db, &st, &rc, err);
    return rc;
}

/* Create the schema in an empty database (inside one transaction). */
static enum lanyfs_err create_schema(const struct store_db *db, struct lanyfs_error *err)
{
    char *msg = NULL;
    int src = sqlite3_exec(db->h, schema_sql, NULL, NULL, &msg);
    if (src != SQLITE_OK) {
        enum lanyfs_err rc = lanyfs_fail(err, code_for(src), LANYFS_NO_BLOCK,
                                         "%s: CREATE TABLE: %s", db->path,
                                         msg != NULL ? msg : sqlite3_errstr(src));
        sqlite3_free(msg);
        return rc;
    }
    enum lanyfs_err rc = fill_lookup(db, err);
    if (rc != LANYFS_OK)
        return rc;
    char sql[80];
    snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", (int)STORE_APPLICATION_ID);
    rc = exec_pragma(db, sql, err);
    if (rc != LANYFS_OK)
        return rc;
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
    return exec_pragma(db, sql, err);
}

/*
 * Bring a file of an older schema version to this one, step by step, inside
 * the caller's transaction.
 */
static enum lanyfs_err upgrade_schema(const struct store_db *db, int64_t version,
                                      struct lanyfs_error *err)
{
    for (size_t i = 0; i < sizeof(upgrade_steps) / sizeof(upgrade_steps[0]); i++) {
        if (upgrade_steps[i].from < version)
            continue;
        char *msg = NULL;
        int src = sqlite3_exec(db->h, upgrade_steps[i].sql, NULL, NULL, &msg);
        if (src != SQLITE_OK) {
            enum lanyfs_err rc = lanyfs_fail(err, code_for(src), LANYFS_NO_BLOCK,
                                             "%s: upgrading schema version %" PRId64 ": %s",
                                             db->path, upgrade_steps[i].from,
                                             msg != NULL ? msg : sqlite3_errstr(src));
            sqlite3_free(msg);
            return rc;
        }
    }
    return LANYFS_OK;
}

/*
 * A file whose tables of scan rows are views (or virtual tables) is no scan
 * database: the readers' queries would run the file's own SQL, an endless
 * recursive one as readily as any.  Views of other names (counters) are
 * never read through.
 */
static enum lanyfs_err check_tables(const struct store_db *db, struct lanyfs_error *err)
{
    struct stmt s;
    enum lanyfs_err rc = stmt_prepare(
        db, &s, "SELECT FROM sqlite_schema",
        "SELECT name, type FROM sqlite_schema WHERE name IN ('scans', 'findings', 'entries',"
        " 'entry_blocks', 'block_runs', 'lost_trees', 'lost_tree_blocks') AND (type = 'view'"
        " OR (type = 'table' AND sql LIKE 'CREATE VIRTUAL%')) LIMIT 1",
        err);
    if (rc != LANYFS_OK)
        return rc;
    int src = sqlite3_step(s.st);
    if (src == SQLITE_ROW) {
        const unsigned char *name = sqlite3_column_text(s.st, 0);
        const unsigned char *type = sqlite3_column_text(s.st, 1);
        rc = lanyfs_fail(err, LANYFS_E_BADMAGIC, LANYFS_NO_BLOCK,
                         "%s: not a lanyfs scan database (%s is a %s)", db->path,
                         name != NULL ? (const char *)name : "a table",
                         type != NULL && strcmp((const char *)type, "view") == 0
                             ? "view"
                             : "virtual table");
    } else if (src != SQLITE_DONE) {
        rc = db_fail(db, s.name, src, err);
    }
    stmt_finalize(db, &s, &rc, err);
    return rc;
}

/*
 * Judge the schema version and application id.  *empty tells that the file
 * holds nothing, *old that it holds an older version of the schema; with
 * create, such a file is given the schema, or upgraded to this version.
 */
static enum lanyfs_err check_schema(struct store_db *db, bool create, bool *empty,
                                    bool *old, struct lanyfs_error *err)
{
    int64_t version = 0, appid = 0, tables = 0;
    enum lanyfs_err rc;
    *empty = false;
    *old = false;
    db->version = STORE_SCHEMA_VERSION;
    rc = query_int(db, "PRAGMA user_version", "PRAGMA user_version", NULL, 0, &version, err);
    if (rc == LANYFS_OK)
        rc = query_int(db, "PRAGMA application_id", "PRAGMA application_id", NULL, 0, &appid,
                       err);
    if (rc == LANYFS_OK)
        rc = query_int(db, "SELECT FROM sqlite_schema", "SELECT COUNT(*) FROM sqlite_schema",
                       NULL, 0, &tables, err);
    if (rc != LANYFS_OK)
        return rc;
    if (appid != 0 && appid != STORE_APPLICATION_ID)
        return lanyfs_fail(err, LANYFS_E_BADMAGIC, LANYFS_NO_BLOCK,
                           "%s: not a lanyfs scan database (application id 0x%08" PRIx32 ")",
                           db->path, (uint32_t)appid);
    if (version > STORE_SCHEMA_VERSION)
        return lanyfs_fail(err, LANYFS_E_VERSION, LANYFS_NO_BLOCK,
                           "%s: database schema version %" PRId64 " is newer than the version "
                           "%d this tool knows; use a newer lanyfs-tools",
                           db->path, version, STORE_SCHEMA_VERSION);
    if (version >= 1 && appid == STORE_APPLICATION_ID) {
        rc = check_tables(db, err);
        if (rc != LANYFS_OK)
            return rc;
    }
    if (version == STORE_SCHEMA_VERSION && appid == STORE_APPLICATION_ID)
        return LANYFS_OK;
    if (version >= 1 && appid == STORE_APPLICATION_ID) {
        *old = true;
        db->version = version;
        if (!create)
            return LANYFS_OK;
        rc = upgrade_schema(db, version, err);
        if (rc == LANYFS_OK)
            db->version = STORE_SCHEMA_VERSION;
        return rc;
    }
    if (version != 0 || appid != 0 || tables != 0)
        return lanyfs_fail(err, LANYFS_E_BADMAGIC, LANYFS_NO_BLOCK,
                           "%s: not a lanyfs scan database (schema version %" PRId64
                           ", %" PRId64 " schema objects)",
                           db->path, version, tables);
    *empty = true;
    if (!create)
        return LANYFS_OK;
    return create_schema(db, err);
}

/* Switch to WAL (a no-op when the file is in WAL already) and check that it took. */
static enum lanyfs_err set_wal(const struct store_db *db, struct lanyfs_error *err)
{
    struct stmt s;
    enum lanyfs_err rc =
        stmt_prepare(db, &s, "PRAGMA journal_mode", "PRAGMA journal_mode = WAL", err);
    if (rc != LANYFS_OK)
        return rc;
    int src = sqlite3_step(s.st);
    if (src != SQLITE_ROW) {
        rc = db_fail(db, s.name, src == SQLITE_DONE ? SQLITE_INTERNAL : src, err);
    } else {
        const unsigned char *mode = sqlite3_column_text(s.st, 0);
        if (mode == NULL || strcmp((const char *)mode, "wal") != 0)
            rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK,
                             "%s: PRAGMA journal_mode: WAL refused (mode %s)", db->path,
                             mode != NULL ? (const char *)mode : "unknown");
    }
    stmt_finalize(db, &s, &rc, err);
    return rc;
}

/*
 * Judge the file first, without writing, so that a foreign or newer
 * database is refused untouched.  Read-only, an older file is read as it
 * is when its tables still answer this version's queries (version 2 lacks
 * only the lost trees, which it then has none of); older than that, it is
 * refused until a scan written into it upgrades it.  Then WAL; an empty file also gets the
 * schema, written without syncs (it held nothing to lose) under the write
 * lock, and judged again under that lock, so two tools never both create.
 */
static enum lanyfs_err open_schema(struct store_db *db, struct lanyfs_error *err)
{
    bool empty = false, old = false;
    enum lanyfs_err rc = check_schema(db, false, &empty, &old, err);
    if (rc != LANYFS_OK)
        return rc;
    if (db->readonly) {
        if (empty)
            rc = lanyfs_fail(err, LANYFS_E_BADMAGIC, LANYFS_NO_BLOCK,
                             "%s: empty: not a lanyfs scan database", db->path);
        else if (old && db->version < STORE_READ_OLDEST)
            rc = lanyfs_fail(err, LANYFS_E_VERSION, LANYFS_NO_BLOCK,
                             "%s: database schema version %" PRId64 " is older than the "
                             "version %d this tool reads; write a scan into it once "
                             "(lanyfs scan --db) to upgrade it",
                             db->path, db->version, STORE_READ_OLDEST);
        return rc;
    }
    if (empty)
        rc = exec_pragma(db, "PRAGMA synchronous = OFF", err);
    if (!empty)
        rc = set_wal(db, err);
    if (rc == LANYFS_OK && (empty || old)) {
        /* Judged again under the write lock: another tool may have been first. */
        rc = exec_sql(db, "BEGIN IMMEDIATE", err);
        if (rc == LANYFS_OK) {
            rc = check_schema(db, true, &empty, &old, err);
            db->catalogue_done = rc == LANYFS_OK && empty; /* we created it */
            if (rc == LANYFS_OK) {
                rc = exec_sql(db, "COMMIT", err);
            } else {
                struct lanyfs_error ignored;
                exec_sql(db, "ROLLBACK", &ignored);
            }
        }
    }
    /* A file this handle created stays in rollback mode for its first scan
     * (store_add_scan): its pages are new, so they are written once, where
     * WAL writes each twice (log, then checkpoint).  Anyone else's file is
     * put in WAL now. */
    if (rc == LANYFS_OK && db->catalogue_done)
        db->wal_pending = true;
    else if (rc == LANYFS_OK && empty)
        rc = set_wal(db, err);
    if (rc == LANYFS_OK)
        rc = exec_pragma(db, "PRAGMA synchronous = NORMAL", err);
    return rc;
}

enum lanyfs_err store_open(const char *path, unsigned flags, struct store_db **out,
                           struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    *out = NULL;
    struct store_db *db = calloc(1, sizeof(*db));
    if (db == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "%s: out of memory", path);
    db->readonly = (flags & STORE_OPEN_READONLY) != 0;
    db->path = strdup(path);
    if (db->path == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "%s: out of memory", path);
        goto fail;
    }
    int oflags = db->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int src = sqlite3_open_v2(path, &db->h, oflags | SQLITE_OPEN_NOMUTEX, NULL);
    if (src != SQLITE_OK) {
        rc = db_fail(db, "open", src, err);
        goto fail;
    }
    src = sqlite3_busy_timeout(db->h, 5000);
    if (src != SQLITE_OK) {
        rc = db_fail(db, "open", src, err);
        goto fail;
    }
    rc = open_schema(db, err);
    if (rc != LANYFS_OK)
        goto fail;
    *out = db;
    return LANYFS_OK;
fail:
    store_close(db, NULL);
    return rc;
}

enum lanyfs_err store_close(struct store_db *db, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    if (db == NULL)
        return LANYFS_OK;
    if (db->h != NULL && db->wal_pending) {
        rc = set_wal(db, err);
        db->wal_pending = rc != LANYFS_OK;
    }
    if (db->h != NULL) {
        int src = sqlite3_close(db->h);
        if (src != SQLITE_OK) {
            if (rc == LANYFS_OK)
                rc = db_fail(db, "close", src, err);
            sqlite3_close_v2(db->h); /* let go of it once its statements end */
        }
    }
    free(db->path);
    free(db);
    return rc;
}

int64_t store_schema_version(const struct store_db *db)
{
    return db->version;
}

const char *store_path(const struct store_db *db)
{
    return db->path;
}

/* ---- writing a scan ------------------------------------------------------------ */

/*
 * The tables a scan fills, with their columns.  The big ones are written in
 * batches: a row's values are kept (not bound) until BATCH_ROWS of them are
 * there, then bound to one multi-row INSERT ... VALUES (...), (...) and run,
 * which costs about half as much per row as one statement per row.  The
 * last, partial batch of a table gets a statement of its own size.  Values
 * must therefore outlive the call that adds the row: they point into the
 * scan result, at static text, or into the batch's own arena (timestamps).
 */
enum {
    W_SCAN,
    W_FINDING,
    W_ENTRY,
    W_ENTRY_BLOCK,
    W_RUN,
    W_LOST_TREE,
    W_LOST_BLOCK,
    W_COUNT
};

#define BATCH_ROWS 32
#define ARENA_BYTES (BATCH_ROWS * 2 * 48) /* two timestamps a row */

static const struct {
    const char *name;  /* for errors */
    const char *table; /* the table */
    const char *cols;  /* its columns, in the order rows give them */
    int ncols;         /* how many */
    int batch;         /* rows a batch holds: 1 writes each row at once */
} write_tables[W_COUNT] = {
    [W_SCAN] = {"INSERT INTO scans", "scans",
                "started, seconds, tool_version, image_path, image_size, image_sha256,"
                " block_size, address_length, blocks, map_blocks, geometry_inferred, sb_read,"
                " sb_type, sb_wrcnt, sb_magic, sb_major, sb_minor, sb_blockbits, sb_addrlen,"
                " sb_rootdir, sb_blocks, sb_freehead, sb_freetail, sb_freeblocks, sb_created,"
                " sb_updated, sb_checked, sb_badblocks, sb_label, dirs, files, deleted, orphans,"
                " bytes, free_listed, worst_severity, n_info, n_warning, n_error, n_critical",
                40, 1},
    [W_FINDING] = {"INSERT INTO findings", "findings",
                   "scan, seq, code, code_name, severity, entry, block, block2, value, value2,"
                   " count, count2, path, text, message",
                   15, 1},
    [W_ENTRY] = {"INSERT INTO entries", "entries",
                 "scan, id, block, parent, state, type, name, path, size, created,"
                 " created_offset, modified, modified_offset, attr, wrcnt, blocks_needed,"
                 " blocks_mapped, blocks_intact",
                 18, BATCH_ROWS},
    [W_ENTRY_BLOCK] = {"INSERT INTO entry_blocks", "entry_blocks",
                       "scan, entry, file_block, block, count", 5, BATCH_ROWS},
    [W_RUN] = {"INSERT INTO block_runs", "block_runs",
               "scan, first, count, class, owner, flags, wrcnt", 7, BATCH_ROWS},
    [W_LOST_TREE] = {"INSERT INTO lost_trees", "lost_trees",
                     "scan, top, entry, size, blocks_mapped, extenders", 6, BATCH_ROWS},
    [W_LOST_BLOCK] = {"INSERT INTO lost_tree_blocks", "lost_tree_blocks",
                      "scan, top, file_block, block, count", 5, BATCH_ROWS},
};

/* A batched INSERT of one table. */
struct batch {
    int table;                 /* index in write_tables */
    struct stmt s;             /* the INSERT of write_tables[table].batch rows */
    int ncols;                 /* columns per row */
    int rows;                  /* rows a batch holds */
    int pending;               /* rows kept and not yet written */
    struct val *vals;          /* rows * ncols values (owned) */
    char arena[ARENA_BYTES];   /* copies of short texts of the pending rows */
    size_t arena_used;         /* bytes of arena in use */
};

/* Prepare the INSERT of table t for rows rows into *s. */
static enum lanyfs_err insert_prepare(const struct store_db *db, int t, int rows, struct stmt *s,
                                      struct lanyfs_error *err)
{
    int ncols = write_tables[t].ncols;
    size_t len = strlen(write_tables[t].table) + strlen(write_tables[t].cols) + 64 +
                 (size_t)rows * (2 * (size_t)ncols + 3);
    char *sql = malloc(len);
    if (sql == NULL)
        return nomem(db, write_tables[t].name, err);
    size_t o = (size_t)snprintf(sql, len, "INSERT INTO %s (%s) VALUES ", write_tables[t].table,
                                write_tables[t].cols);
    for (int r = 0; r < rows; r++) {
        if (r != 0)
            sql[o++] = ',';
        sql[o++] = '(';
        for (int c = 0; c < ncols; c++) {
            if (c != 0)
                sql[o++] = ',';
            sql[o++] = '?';
        }
        sql[o++] = ')';
    }
    sql[o] = '\0';
    enum lanyfs_err rc = stmt_prepare(db, s, write_tables[t].name, sql, err);
    free(sql);
    return rc;
}

static enum lanyfs_err batch_init(const struct store_db *db, struct batch *b, int t,
                                  struct lanyfs_error *err)
{
    b->table = t;
    b->ncols = write_tables[t].ncols;
    b->rows = write_tables[t].batch;
    b->pending = 0;
    b->arena_used = 0;
    b->vals = calloc((size_t)b->rows * (size_t)b->ncols, sizeof(*b->vals));
    if (b->vals == NULL)
        return nomem(db, write_tables[t].name, err);
    return insert_prepare(db, t, b->rows, &b->s, err);
}

static void batch_free(const struct store_db *db, struct batch *b, enum lanyfs_err *rc,
                       struct lanyfs_error *err)
{
    stmt_finalize(db, &b->s, rc, err);
    free(b->vals);
    b->vals = NULL;
}

/* Write the rows kept so far: a full batch with its statement, a partial one with its own. */
static enum lanyfs_err batch_flush(const struct store_db *db, struct batch *b,
                                   struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    if (b->pending == 0)
        return LANYFS_OK;
    struct stmt part = {0};
    struct stmt *s = &b->s;
    if (b->pending != b->rows) {
        rc = insert_prepare(db, b->table, b->pending, &part, err);
        s = &part;
    }
    if (rc == LANYFS_OK)
        rc = bind_at(db, s, 0, b->vals, b->pending * b->ncols, err);
    if (rc == LANYFS_OK)
        rc = step_done(db, s, err);
    else
        sqlite3_reset(s->st);
    stmt_finalize(db, &part, &rc, err);
    b->pending = 0;
    b->arena_used = 0;
    return rc;
}

/* Keep one row; the batch is written when full. */
static enum lanyfs_err batch_row(const struct store_db *db, struct batch *b, const struct val *vals,
                                 int n, struct lanyfs_error *err)
{
    if (n != b->ncols)
        return lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK, "%s: %s: %d values for %d columns",
                           db->path, b->s.name, n, b->ncols);
    memcpy(&b->vals[(size_t)b->pending * (size_t)b->ncols], vals, (size_t)n * sizeof(*vals));
    if (++b->pending == b->rows)
        return batch_flush(db, b, err);
    return LANYFS_OK;
}

/* A copy of s in the batch's arena, alive until the batch is written; NULL when full. */
static const char *batch_keep(struct batch *b, const char *s)
{
    size_t n = strlen(s) + 1;
    if (b->arena_used + n > sizeof(b->arena))
        return NULL;
    char *p = memcpy(b->arena + b->arena_used, s, n);
    b->arena_used += n;
    return p;
}

#define ROW(w, t, ...) \
    batch_row((w)->db, &(w)->b[t], (struct val[]){__VA_ARGS__}, NVALS(__VA_ARGS__), (w)->err)

/* State of one store_add_scan. */
struct writer {
    const struct store_db *db;
    struct batch b[W_COUNT];          /* one batched INSERT per table (owned) */
    int64_t scan;                     /* the new scans.id */
    const struct store_scan_meta *m;  /* the caller's meta data */
    uint64_t done;                    /* rows written, for progress */
    uint64_t total;                   /* rows to write, for progress */
    struct lanyfs_error *err;         /* where failures go */
};

static void progress(struct writer *w, uint64_t rows)
{
    uint64_t before = w->done;
    w->done += rows;
    if (w->m->progress != NULL && (before >> 14) != (w->done >> 14))
        w->m->progress(w->m->progress_ctx, w->done, w->total);
}

static enum lanyfs_err put_scan(struct writer *w, const struct scan_result *r)
{
    const struct store_scan_meta *m = w->m;
    const struct lanyfs_geom *g = scan_geom(r);
    const struct lanyfs_super *sb = scan_super(r);
    struct scan_summary sum;
    scan_summarize(r, &sum);

    char started[128];
    time_t t = (time_t)m->started;
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL)
        memset(&tm, 0, sizeof(tm));
    snprintf(started, sizeof(started), "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRIu32 "Z",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             m->started_nsec);
    char created[48], updated[48], checked[48];
    bool have_c = false, have_u = false, have_k = false;
    size_t label_len = 0;
    if (sb != NULL) {
        have_c = ts_iso(&sb->created, created, sizeof(created));
        have_u = ts_iso(&sb->updated, updated, sizeof(updated));
        have_k = ts_iso(&sb->checked, checked, sizeof(checked));
        label_len = strnlen((const char *)sb->label, sizeof(sb->label));
    }
#define SBV(field) (sb != NULL ? VU(sb->field) : VNULL)
    enum lanyfs_err rc = ROW(
        w, W_SCAN, VS(started), VR(m->seconds),
        VT(m->tool_version != NULL ? m->tool_version : PACKAGE_VERSION), VT(m->image_path),
        VU(scan_image_bytes(r)), VT(m->image_sha256), g != NULL ? VI(g->blocksize) : VNULL,
        g != NULL ? VI(g->addrlen) : VNULL, g != NULL ? VU(g->blocks) : VNULL,
        VU(scan_block_count(r)), VI(scan_geom_inferred(r)), VI(sb != NULL), SBV(type),
        SBV(wrcnt), SBV(magic), SBV(major), SBV(minor), SBV(blockbits), SBV(addrlen),
        SBV(rootdir), SBV(blocks), SBV(freehead), SBV(freetail), SBV(freeblocks),
        have_c ? VS(created) : VNULL, have_u ? VS(updated) : VNULL,
        have_k ? VS(checked) : VNULL, SBV(badblocks),
        sb != NULL ? VB(sb->label, label_len) : VNULL, VU(sum.dirs), VU(sum.files),
        VU(sum.deleted), VU(sum.orphans), VU(sum.bytes), VU(sum.free_listed), VI(sum.worst),
        VU(sum.findings_by_severity[SCAN_SEV_INFO]), VU(sum.findings_by_severity[SCAN_SEV_WARNING]),
        VU(sum.findings_by_severity[SCAN_SEV_ERROR]),
        VU(sum.findings_by_severity[SCAN_SEV_CRITICAL]));
#undef SBV
    if (rc == LANYFS_OK)
        rc = batch_flush(w->db, &w->b[W_SCAN], w->err);
    if (rc == LANYFS_OK)
        w->scan = sqlite3_last_insert_rowid(w->db->h);
    return rc;
}

static enum lanyfs_err put_findings(struct writer *w, const struct scan_finding *f, size_t n)
{
    enum lanyfs_err rc = LANYFS_OK;
    for (size_t i = 0; i < n && rc == LANYFS_OK; i++) {
        const struct scan_problem_info *info = scan_problem_lookup(f[i].code);
        char *msg = scan_finding_message(&f[i]);
        if (msg == NULL)
            return nomem(w->db, w->b[W_FINDING].s.name, w->err);
        char name[24];
        if (info == NULL)
            snprintf(name, sizeof(name), "UNKNOWN_%06" PRIx32, f[i].code);
        rc = ROW(w, W_FINDING, VI(w->scan), VU(i), VI(f[i].code),
                 VS(info != NULL ? info->name : name),
                 VI(info != NULL ? (int)info->severity : (int)SCAN_SEV_ERROR), VID(f[i].entry),
                 VU(f[i].block), VU(f[i].block2), VU(f[i].value), VU(f[i].value2),
                 VU(f[i].count), VU(f[i].count2), VT(f[i].path), VT(f[i].text), VT(msg));
        free(msg);
        progress(w, 1);
    }
    return rc;
}

int store_extents_of(const uint64_t *data, uint64_t n, store_entry_block_cb cb, void *ctx)
{
    for (uint64_t k = 0; k < n;) {
        if (data[k] == 0) {
            k++;
            continue;
        }
        uint64_t len = 1;
        while (k + len < n && len < STORE_EXTENT_MAX && data[k + len] != 0 &&
               data[k + len] == data[k] + len)
            len++;
        int stop = cb(ctx, k, data[k], len);
        if (stop != 0)
            return stop;
        k += len;
    }
    return 0;
}

/* Where store_extents_of hands the extents of one data map: rows of table t. */
struct extent_sink {
    struct writer *w;
    int table;            /* W_ENTRY_BLOCK or W_LOST_BLOCK */
    struct val owner;     /* the entry's id or the tree's top */
    enum lanyfs_err rc;   /* how the last row went */
};

static int put_extent(void *ctx, uint64_t file_block, uint64_t block, uint64_t count)
{
    struct extent_sink *x = ctx;
    x->rc = ROW(x->w, x->table, VI(x->w->scan), x->owner, VU(file_block), VU(block), VU(count));
    progress(x->w, count);
    return x->rc != LANYFS_OK;
}

/* A data map as extents, rows of table t under owner. */
static enum lanyfs_err put_extents(struct writer *w, int t, struct val owner,
                                   const uint64_t *data, uint64_t n)
{
    struct extent_sink x = {.w = w, .table = t, .owner = owner, .rc = LANYFS_OK};
    store_extents_of(data, n, put_extent, &x);
    return x.rc;
}

static enum lanyfs_err put_entries(struct writer *w, const struct scan_entry *ents, size_t n)
{
    enum lanyfs_err rc = LANYFS_OK;
    for (size_t i = 0; i < n && rc == LANYFS_OK; i++) {
        const struct scan_entry *se = &ents[i];
        const struct scan_entry_fields *e = &se->e;
        char created[48], modified[48];
        const char *kc = NULL, *km = NULL;
        struct batch *b = &w->b[W_ENTRY];
        if (ts_iso(&e->created, created, sizeof(created)) &&
            (kc = batch_keep(b, created)) == NULL)
            return nomem(w->db, b->s.name, w->err); /* cannot happen: the arena fits a batch */
        if (ts_iso(&e->modified, modified, sizeof(modified)) &&
            (km = batch_keep(b, modified)) == NULL)
            return nomem(w->db, b->s.name, w->err);
        size_t name_len = e->name_len <= LANYFS_NAME_FIELD ? e->name_len : LANYFS_NAME_FIELD;
        rc = ROW(w, W_ENTRY, VI(w->scan), VI(se->id), VU(se->block),
                 VID(se->parent), VI(se->state), VI(e->type), VB(e->name, name_len),
                 VT(se->path != NULL ? se->path : ""), VU(e->size),
                 kc != NULL ? VS(kc) : VNULL, VI(e->created.offset),
                 km != NULL ? VS(km) : VNULL, VI(e->modified.offset), VI(e->attr),
                 VI(e->wrcnt), VU(se->blocks_needed), VU(se->blocks_mapped),
                 VU(se->blocks_intact));
        progress(w, 1);
        if (rc == LANYFS_OK)
            rc = put_extents(w, W_ENTRY_BLOCK, VI(se->id), se->data, se->ndata);
    }
    return rc;
}

/* The lost trees, each with its data map as extents like an entry's. */
static enum lanyfs_err put_lost_trees(struct writer *w, const struct scan_lost_tree *t, size_t n)
{
    enum lanyfs_err rc = LANYFS_OK;
    for (size_t i = 0; i < n && rc == LANYFS_OK; i++) {
        rc = ROW(w, W_LOST_TREE, VI(w->scan), VU(t[i].top), VID(t[i].entry), VU(t[i].size),
                 VU(t[i].mapped), VU(t[i].nexts));
        progress(w, 1);
        if (rc == LANYFS_OK)
            rc = put_extents(w, W_LOST_BLOCK, VU(t[i].top), t[i].data, t[i].ndata);
    }
    return rc;
}

/*
 * Whether b continues the run of a: equal class, owner and flags, and
 * neither carries a header.  A metadata cell is a run of its own, holding
 * its write counter, which is what the counters view reads (a table of its
 * own cost about a quarter of the store's time on a stick of small files,
 * where nearly every metadata cell is a run of its own anyway).
 */
static bool same_run(const struct scan_block *a, const struct scan_block *b)
{
    return a->cls == b->cls && a->owner == b->owner && a->flags == b->flags &&
           !(a->flags & SCAN_BF_METADATA);
}

/* The map as runs, in one pass. */
static enum lanyfs_err put_map(struct writer *w, const struct scan_block *map, uint64_t n)
{
    enum lanyfs_err rc = LANYFS_OK;
    uint64_t first = 0;
    for (uint64_t b = 0; b < n && rc == LANYFS_OK; b++) {
        if (b + 1 == n || !same_run(&map[first], &map[b + 1])) {
            const struct scan_block *c = &map[first];
            rc = ROW(w, W_RUN, VI(w->scan), VU(first), VU(b + 1 - first), VI(c->cls),
                     VID(c->owner), VI(c->flags),
                     (c->flags & SCAN_BF_METADATA) ? VI(c->wrcnt) : VNULL);
            first = b + 1;
        }
        progress(w, 1);
    }
    return rc;
}

enum lanyfs_err store_add_scan(struct store_db *db, const struct scan_result *r,
                               const struct store_scan_meta *meta, int64_t *scan_id,
                               struct lanyfs_error *err)
{
    struct writer w = {.db = db, .m = meta, .err = err};
    enum lanyfs_err rc = LANYFS_OK;
    bool in_txn = false;
    if (db->readonly)
        return lanyfs_fail(err, LANYFS_E_READONLY, LANYFS_NO_BLOCK,
                           "%s: opened read-only: cannot add a scan", db->path);
    if (meta == NULL || meta->image_path == NULL)
        return lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                           "%s: INSERT INTO scans: no image path given", db->path);

    const struct scan_finding *findings;
    const struct scan_entry *ents;
    const struct scan_lost_tree *lost;
    size_t nfind = scan_findings(r, &findings);
    size_t nent = scan_entries(r, &ents);
    size_t nlost = scan_lost_trees(r, &lost);
    const struct scan_block *map = scan_blocks(r);
    uint64_t nmap = map != NULL ? scan_block_count(r) : 0;
    w.total = nfind + nent + nlost + nmap;
    for (size_t i = 0; i < nent; i++)
        for (uint64_t k = 0; k < ents[i].ndata; k++)
            w.total += ents[i].data[k] != 0;
    for (size_t i = 0; i < nlost; i++)
        for (uint64_t k = 0; k < lost[i].ndata; k++)
            w.total += lost[i].data[k] != 0;

    rc = exec_sql(db, "BEGIN IMMEDIATE", err);
    if (rc != LANYFS_OK)
        goto out;
    in_txn = true;
    /* In WAL mode: room for every page the transaction touches, so that
     * none is spilled to the WAL before the commit (and written twice);
     * pages are allocated only as they are used.  A new file's first scan
     * (rollback mode) keeps the small cache instead: its pages are new, so
     * a spilled page goes to the file once, unjournaled, and its memory is
     * reused; on the 100,000-file bench image that wrote the scan in 0.40 s
     * instead of 0.51 s. */
    rc = exec_pragma(db,
                     db->wal_pending ? "PRAGMA cache_size = " STORE_READ_CACHE
                                     : "PRAGMA cache_size = " STORE_WRITE_CACHE,
                     err);
    /* Into a file without scans, the big indexes are built after the rows. */
    int64_t none = 0;
    if (rc == LANYFS_OK)
        rc = query_int(db, "SELECT FROM scans", "SELECT NOT EXISTS (SELECT 1 FROM scans)", NULL,
                       0, &none, err);
    for (size_t i = 0; none && i < sizeof(bulk_indexes) / sizeof(bulk_indexes[0]) &&
                       rc == LANYFS_OK;
         i++)
        rc = exec_sql(db, bulk_indexes[i].drop, err);
    for (int i = 0; i < W_COUNT && rc == LANYFS_OK; i++)
        rc = batch_init(db, &w.b[i], i, err);
    /* The catalogue is refreshed once per handle: a newer tool may have added codes. */
    if (rc == LANYFS_OK && !db->catalogue_done)
        rc = fill_lookup(db, err);
    if (rc == LANYFS_OK)
        rc = put_scan(&w, r);
    if (rc == LANYFS_OK)
        rc = put_findings(&w, findings, nfind);
    if (rc == LANYFS_OK)
        rc = put_entries(&w, ents, nent);
    if (rc == LANYFS_OK)
        rc = put_lost_trees(&w, lost, nlost);
    if (rc == LANYFS_OK)
        rc = put_map(&w, map, nmap);
    for (int i = 0; i < W_COUNT && rc == LANYFS_OK; i++)
        rc = batch_flush(db, &w.b[i], err);
    for (int i = 0; i < W_COUNT; i++)
        batch_free(db, &w.b[i], &rc, err);
    for (size_t i = 0; none && i < sizeof(bulk_indexes) / sizeof(bulk_indexes[0]) &&
                       rc == LANYFS_OK;
         i++)
        rc = exec_sql(db, bulk_indexes[i].create, err);
    /* A hash computed beside the store comes last, so that the rows are
     * written while it runs. */
    if (rc == LANYFS_OK && meta->image_sha256_wait != NULL) {
        struct lanyfs_error herr;
        lanyfs_error_clear(&herr);
        const char *hex = meta->image_sha256_wait(meta->sha256_ctx, &herr);
        if (hex == NULL) {
            rc = herr.code != LANYFS_OK ? herr.code : LANYFS_E_IO;
            if (err != NULL)
                *err = herr;
        } else {
            rc = exec_vals(db, "UPDATE scans", "UPDATE scans SET image_sha256 = ? WHERE id = ?",
                           (struct val[]){VT(hex), VI(w.scan)}, 2, err);
        }
    }
    /* Statistics for the planner: without them it takes `scan = ?` alone for
     * selective and passes over the better index (entries by parent).  A
     * sampled ANALYZE costs little next to the rows just written. */
    if (rc == LANYFS_OK)
        rc = exec_pragma(db, "PRAGMA analysis_limit = 1000", err);
    if (rc == LANYFS_OK)
        rc = exec_sql(db, "ANALYZE", err);
    if (rc == LANYFS_OK)
        rc = exec_sql(db, "COMMIT", err);
    if (rc == LANYFS_OK && db->wal_pending) {
        /* The scan is in; should the switch fail, store_close tries again. */
        struct lanyfs_error ignored;
        in_txn = false;
        db->wal_pending = set_wal(db, &ignored) != LANYFS_OK;
    }
    if (rc == LANYFS_OK) {
        in_txn = false;
        db->catalogue_done = true;
        if (meta->progress != NULL)
            meta->progress(meta->progress_ctx, w.total, w.total);
        if (scan_id != NULL)
            *scan_id = w.scan;
    }
out:
    if (in_txn && sqlite3_get_autocommit(db->h) == 0) {
        struct lanyfs_error ignored;
        exec_sql(db, "ROLLBACK", &ignored);
    }
    if (in_txn) {
        struct lanyfs_error ignored;
        exec_pragma(db, "PRAGMA cache_size = " STORE_READ_CACHE, &ignored);
    }
    return rc;
}

enum lanyfs_err store_delete_scan(struct store_db *db, int64_t scan_id, struct lanyfs_error *err)
{
    enum lanyfs_err rc;
    if (db->readonly)
        return lanyfs_fail(err, LANYFS_E_READONLY, LANYFS_NO_BLOCK,
                           "%s: opened read-only: cannot delete a scan", db->path);
    rc = exec_sql(db, "BEGIN IMMEDIATE", err);
    if (rc != LANYFS_OK)
        return rc;
    for (size_t i = 0; i < sizeof(scan_tables) / sizeof(scan_tables[0]) && rc == LANYFS_OK; i++) {
        char sql[64], name[64];
        snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE scan = ?", scan_tables[i]);
        snprintf(name, sizeof(name), "DELETE FROM %s", scan_tables[i]);
        rc = exec_vals(db, name, sql, (struct val[]){VI(scan_id)}, 1, err);
    }
    if (rc == LANYFS_OK) {
        rc = exec_vals(db, "DELETE FROM scans", "DELETE FROM scans WHERE id = ?",
                       (struct val[]){VI(scan_id)}, 1, err);
        if (rc == LANYFS_OK && sqlite3_changes(db->h) == 0)
            rc = lanyfs_fail(err, LANYFS_E_NOTFOUND, LANYFS_NO_BLOCK,
                             "%s: DELETE FROM scans: there is no scan %" PRId64, db->path,
                             scan_id);
    }
    if (rc == LANYFS_OK)
        return exec_sql(db, "COMMIT", err);
    struct lanyfs_error ignored;
    exec_sql(db, "ROLLBACK", &ignored);
    return rc;
}

/* ---- reading ---------------------------------------------------------------------- */

/* A query whose rows go to a row function. */
typedef int (*row_fn)(void *ctx, sqlite3_stmt *st, enum lanyfs_err *rc, struct lanyfs_error *err);

/*
 * Prepare sql, bind vals, call fn for each row until it returns non-zero,
 * and check every step.  fn sets *rc (with err) when a row is unusable.
 */
static enum lanyfs_err query_run(const struct store_db *db, const char *name, const char *sql,
                                 const struct val *vals, int n, row_fn fn, void *ctx,
                                 struct lanyfs_error *err)
{
    struct stmt s;
    enum lanyfs_err rc = stmt_prepare(db, &s, name, sql, err);
    if (rc != LANYFS_OK)
        goto out;
    rc = bind_vals(db, &s, vals, n, err);
    if (rc != LANYFS_OK)
        goto out;
    for (;;) {
        int src = sqlite3_step(s.st);
        if (src == SQLITE_DONE)
            break;
        if (src != SQLITE_ROW) {
            rc = db_fail(db, name, src, err);
            break;
        }
        if (fn(ctx, s.st, &rc, err) != 0 || rc != LANYFS_OK)
            break;
    }
out:
    stmt_finalize(db, &s, &rc, err);
    return rc;
}

/* A column as text; NULL for SQL NULL.  *oom is set when the conversion ran out of memory. */
static const char *col_text(sqlite3_stmt *st, int i, bool *oom)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return NULL;
    const char *s = (const char *)sqlite3_column_text(st, i);
    if (s == NULL)
        *oom = true;
    return s;
}

static uint64_t col_u64(sqlite3_stmt *st, int i)
{
    return (uint64_t)sqlite3_column_int64(st, i);
}

/*
 * Column i as an entry id: an integer of lo..UINT32_MAX, or NULL (0) when
 * null_ok.  False for anything else: cut to 32 bits (or a real to an
 * integer), a hostile value would name another entry.
 */
static bool col_id32(sqlite3_stmt *st, int i, int64_t lo, bool null_ok, uint32_t *out)
{
    int type = sqlite3_column_type(st, i);
    *out = 0;
    if (type == SQLITE_NULL)
        return null_ok;
    int64_t v = sqlite3_column_int64(st, i);
    if (type != SQLITE_INTEGER || v < lo || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

/*
 * Column i fits a field of 0..max (a counter, flags, attributes): an
 * integer of that range, or NULL where the field may be absent.  Cut to
 * its width, a hostile value would show as another.
 */
static bool col_width(sqlite3_stmt *st, int i, int64_t max, bool null_ok)
{
    int type = sqlite3_column_type(st, i);
    if (type == SQLITE_NULL)
        return null_ok;
    int64_t v = sqlite3_column_int64(st, i);
    return type == SQLITE_INTEGER && v >= 0 && v <= max;
}

/* Column i as a value of 0..n-1 (an enum's); -1 when it is not one. */
static int col_enum(sqlite3_stmt *st, int i, int n)
{
    int64_t v = sqlite3_column_int64(st, i);
    if (sqlite3_column_type(st, i) != SQLITE_INTEGER || v < 0 || v >= n)
        return -1;
    return (int)v;
}

static char *dup_or_null(const char *s, bool *oom)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *oom = true;
    return d;
}

void store_scan_clear(struct store_scan *s)
{
    if (s == NULL)
        return;
    free(s->started);
    free(s->tool_version);
    free(s->image_path);
    free(s->image_sha256);
    free(s->sb.created);
    free(s->sb.updated);
    free(s->sb.checked);
    memset(s, 0, sizeof(*s));
}

/* Row context of the scan queries. */
struct scan_row_ctx {
    const struct store_db *db;
    struct store_scan *out;  /* filled by scan_row */
    bool found;              /* a row was met */
};

static const char scan_columns[] =
    "SELECT id, started, seconds, tool_version, image_path, image_size, image_sha256,"
    " block_size, address_length, blocks, map_blocks, geometry_inferred, sb_read, sb_type,"
    " sb_wrcnt, sb_magic, sb_major, sb_minor, sb_blockbits, sb_addrlen, sb_rootdir, sb_blocks,"
    " sb_freehead, sb_freetail, sb_freeblocks, sb_created, sb_updated, sb_checked,"
    " sb_badblocks, sb_label, dirs, files, deleted, orphans, bytes, free_listed,"
    " worst_severity, n_info, n_warning, n_error, n_critical,"
    " (SELECT COUNT(*) FROM entries WHERE scan = scans.id),"
    " (SELECT COUNT(*) FROM findings WHERE scan = scans.id) FROM scans";

static int scan_row(void *ctx, sqlite3_stmt *st, enum lanyfs_err *rc, struct lanyfs_error *err)
{
    struct scan_row_ctx *c = ctx;
    struct store_scan *s = c->out;
    bool oom = false;
    memset(s, 0, sizeof(*s));
    c->found = true;
    s->id = sqlite3_column_int64(st, 0);
    s->started = dup_or_null(col_text(st, 1, &oom), &oom);
    s->seconds = sqlite3_column_double(st, 2);
    s->tool_version = dup_or_null(col_text(st, 3, &oom), &oom);
    s->image_path = dup_or_null(col_text(st, 4, &oom), &oom);
    s->image_size = col_u64(st, 5);
    s->image_sha256 = dup_or_null(col_text(st, 6, &oom), &oom);
    s->have_geometry = sqlite3_column_type(st, 7) != SQLITE_NULL;
    s->block_size = (uint32_t)sqlite3_column_int64(st, 7);
    s->address_length = (unsigned)sqlite3_column_int64(st, 8);
    s->blocks = col_u64(st, 9);
    s->map_blocks = col_u64(st, 10);
    s->geometry_inferred = sqlite3_column_int64(st, 11) != 0;
    s->have_super = sqlite3_column_int64(st, 12) != 0;
    s->sb.type = (uint8_t)sqlite3_column_int64(st, 13);
    s->sb.wrcnt = (uint16_t)sqlite3_column_int64(st, 14);
    s->sb.magic = (uint32_t)sqlite3_column_int64(st, 15);
    s->sb.major = (uint8_t)sqlite3_column_int64(st, 16);
    s->sb.minor = (uint8_t)sqlite3_column_int64(st, 17);
    s->sb.blockbits = (uint8_t)sqlite3_column_int64(st, 18);
    s->sb.addrlen = (uint8_t)sqlite3_column_int64(st, 19);
    s->sb.rootdir = col_u64(st, 20);
    s->sb.blocks = col_u64(st, 21);
    s->sb.freehead = col_u64(st, 22);
    s->sb.freetail = col_u64(st, 23);
    s->sb.freeblocks = col_u64(st, 24);
    s->sb.created = dup_or_null(col_text(st, 25, &oom), &oom);
    s->sb.updated = dup_or_null(col_text(st, 26, &oom), &oom);
    s->sb.checked = dup_or_null(col_text(st, 27, &oom), &oom);
    s->sb.badblocks = col_u64(st, 28);
    const void *label = sqlite3_column_blob(st, 29);
    size_t label_len = (size_t)sqlite3_column_bytes(st, 29);
    if (label == NULL && label_len != 0)
        oom = true;
    if (label_len > sizeof(s->sb.label))
        label_len = sizeof(s->sb.label);
    if (label != NULL) {
        const uint8_t *nul = memchr(label, 0, label_len); /* the bytes up to the first NUL */
        if (nul != NULL)
            label_len = (size_t)(nul - (const uint8_t *)label);
        memcpy(s->sb.label, label, label_len);
    }
    s->sb.label_len = label != NULL ? label_len : 0;
    s->summary.dirs = col_u64(st, 30);
    s->summary.files = col_u64(st, 31);
    s->summary.deleted = col_u64(st, 32);
    s->summary.orphans = col_u64(st, 33);
    s->summary.bytes = col_u64(st, 34);
    s->summary.free_listed = col_u64(st, 35);
    int64_t worst = sqlite3_column_int64(st, 36);
    s->summary.worst = worst >= SCAN_SEV_INFO && worst <= SCAN_SEV_CRITICAL
                           ? (enum scan_severity)worst
                           : SCAN_SEV_CRITICAL;
    for (int k = 0; k < 4; k++)
        s->summary.findings_by_severity[k] = col_u64(st, 37 + k);
    s->entries = col_u64(st, 41);
    s->findings = col_u64(st, 42);
    /* A geometry the scan used: a LanyFS one, as the block size and address length read. */
    int64_t bs = sqlite3_column_int64(st, 7), al = sqlite3_column_int64(st, 8);
    const char *why = NULL;
    if (s->started == NULL || s->tool_version == NULL || s->image_path == NULL)
        why = "a NULL in a NOT NULL column"; /* col_text set oom for a text that failed */
    else if (s->have_geometry &&
             (sqlite3_column_type(st, 7) != SQLITE_INTEGER ||
              sqlite3_column_type(st, 8) != SQLITE_INTEGER || bs < LANYFS_BLOCKSIZE_MIN ||
              bs > LANYFS_BLOCKSIZE_MAX || (bs & (bs - 1)) != 0 || al < LANYFS_ADDRLEN_MIN ||
              al > LANYFS_ADDRLEN_MAX))
        why = "a geometry no LanyFS has (block_size, address_length)";
    else if (!col_width(st, 13, UINT8_MAX, true) || !col_width(st, 14, UINT16_MAX, true) ||
             !col_width(st, 15, UINT32_MAX, true) || !col_width(st, 16, UINT8_MAX, true) ||
             !col_width(st, 17, UINT8_MAX, true) || !col_width(st, 18, UINT8_MAX, true) ||
             !col_width(st, 19, UINT8_MAX, true))
        why = "a superblock field wider than the superblock's (sb_type .. sb_addrlen)";
    if (oom || why != NULL) {
        int64_t id = s->id;
        store_scan_clear(s);
        if (oom)
            *rc = nomem(c->db, "SELECT FROM scans", err);
        else
            *rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                              "%s: SELECT FROM scans: scan %" PRId64 ": the row has %s",
                              c->db->path, id, why);
    }
    return 1; /* one row */
}

static int class_row(void *ctx, sqlite3_stmt *st, enum lanyfs_err *rc, struct lanyfs_error *err)
{
    (void)rc;
    (void)err;
    struct store_scan *s = ctx;
    int64_t cls = sqlite3_column_int64(st, 0);
    if (cls >= 0 && cls < SCAN_BLK_CLASSES)
        s->summary.by_class[cls] = col_u64(st, 1);
    return 0;
}

enum lanyfs_err store_get_scan(struct store_db *db, int64_t scan_id, struct store_scan *out,
                               struct lanyfs_error *err)
{
    char sql[sizeof(scan_columns) + 32];
    snprintf(sql, sizeof(sql), "%s WHERE id = ?", scan_columns);
    struct scan_row_ctx c = {.db = db, .out = out};
    memset(out, 0, sizeof(*out));
    enum lanyfs_err rc =
        query_run(db, "SELECT FROM scans", sql, (struct val[]){VI(scan_id)}, 1, scan_row, &c, err);
    if (rc == LANYFS_OK && !c.found)
        return lanyfs_fail(err, LANYFS_E_NOTFOUND, LANYFS_NO_BLOCK,
                           "%s: SELECT FROM scans: there is no scan %" PRId64, db->path, scan_id);
    if (rc == LANYFS_OK)
        rc = query_run(db, "SELECT FROM block_runs",
                       "SELECT class, SUM(count) FROM block_runs WHERE scan = ? GROUP BY class",
                       (struct val[]){VI(scan_id)}, 1, class_row, out, err);
    if (rc != LANYFS_OK)
        store_scan_clear(out);
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Collects ids for store_list_scans. */
struct id_list {
    int64_t *ids;
    size_t n;
    size_t cap;
    const struct store_db *db;
};

static int id_row(void *ctx, sqlite3_stmt *st, enum lanyfs_err *rc, struct lanyfs_error *err)
{
    struct id_list *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        int64_t *ids = realloc(l->ids, cap * sizeof(*ids));
        if (ids == NULL) {
            *rc = nomem(l->db, "SELECT FROM scans", err);
            return 1;
        }
        l->ids = ids;
        l->cap = cap;
    }
    l->ids[l->n++] = sqlite3_column_int64(st, 0);
    return 0;
}

enum lanyfs_err store_list_scans(struct store_db *db, const char *image_path,
                                 struct store_scan **out, size_t *n, struct lanyfs_error *err)
{
    struct id_list l = {.db = db};
    struct store_scan *scans = NULL;
    char *want = NULL; /* image_path as stored */
    size_t got = 0;
    enum lanyfs_err rc;
    *out = NULL;
    *n = 0;
    if (image_path != NULL)
        rc = query_run(db, "SELECT FROM scans",
                       "SELECT id FROM scans WHERE image_path = ? ORDER BY id",
                       (struct val[]){VT(image_path)}, 1, id_row, &l, err);
    else
        rc = query_run(db, "SELECT FROM scans", "SELECT id FROM scans ORDER BY id", NULL, 0,
                       id_row, &l, err);
    if (rc != LANYFS_OK || l.n == 0)
        goto out;
    /* ORDER BY sorts integers before text and blobs, which a database that
     * is not ours may hold in id and which read back as numbers: the ids
     * are sorted as they are read. */
    qsort(l.ids, l.n, sizeof(*l.ids), cmp_i64);
    scans = calloc(l.n, sizeof(*scans));
    if (scans == NULL) {
        rc = nomem(db, "SELECT FROM scans", err);
        goto out;
    }
    if (image_path != NULL && (want = store_escape(image_path, strlen(image_path))) == NULL) {
        rc = nomem(db, "SELECT FROM scans", err);
        goto out;
    }
    for (size_t i = 0; i < l.n; i++) {
        rc = store_get_scan(db, l.ids[i], &scans[got], err);
        if (rc != LANYFS_OK)
            goto out;
        /* A database that is not ours may give back under the id another
         * row than the one the query matched (scans a view, or two rows of
         * one id): the row must be of the image asked for, as stored. */
        if (want != NULL && (scans[got].image_path == NULL ||
                             strcmp(scans[got].image_path, want) != 0)) {
            store_scan_clear(&scans[got]);
            continue;
        }
        got++;
    }
    *out = scans;
    *n = got;
    scans = NULL;
out:
    store_scans_free(scans, got);
    free(want);
    free(l.ids);
    return rc;
}

void store_scans_free(struct store_scan *scans, size_t n)
{
    if (scans == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        store_scan_clear(&scans[i]);
    free(scans);
}

/* The caller's callback, of the type its query takes. */
union user_cb {
    store_entry_cb entry;
    store_entry_block_cb entry_block;
    store_block_owner_cb owner;
    store_finding_cb finding;
    store_block_run_cb run;
    store_counter_cb counter;
    store_lost_tree_cb lost_tree;
};

/* Row context of the queries that hand rows to the caller. */
struct user_ctx {
    const struct store_db *db;
    const char *name;       /* the statement's name, for errors */
    union user_cb cb;       /* the caller's callback */
    void *ctx;              /* and its context */
    const char *prefix;     /* store_entries: the path prefix */
    size_t prefix_len;      /* its length */
    uint64_t from;          /* store_block_runs: runs ending before it are skipped;
                               store_block_owners: the block */
    uint64_t to;            /* store_block_runs: runs starting after it are skipped */
    int64_t scan;           /* extents, lost trees: the scan, for errors */
    const char *owner;      /* extents: "entry 7", "lost tree 301", for errors */
    uint64_t next;          /* extents, runs: the first (file) block the next may start at */
};

static int entry_row(void *ctx, sqlite3_stmt *st, enum lanyfs_err *rc, struct lanyfs_error *err)
{
    struct user_ctx *c = ctx;
    bool oom = false;
    struct store_entry e;
    e.path = col_text(st, 7, &oom);
    if (e.path == NULL) {
        *rc = nomem(c->db, c->name, err);
        return 1;
    }
    /* The index delivers paths in order: the first one past the prefix ends it. */
    if (c->prefix_len != 0 && strncmp(e.path, c->prefix, c->prefix_len) != 0)
        return 1;
    /* What names an entry or is compared with the enums must be what the scan wrote. */
    int state = col_enum(st, 3, SCAN_ENTRY_ORPHAN + 1);
    int64_t type = sqlite3_column_int64(st, 4);
    const char *why = NULL;
    if (!col_id32(st, 0, 1, false, &e.id))
        why = "an id outside 1..4294967295";
    else if (!col_id32(st, 2, 0, true, &e.parent))
        why = "a parent outside 0..4294967295";
    else if (state < 0)
        why = "a state other than live (0), deleted (1) and orphan (2)";
    else if (sqlite3_column_type(st, 4) != SQLITE_INTEGER ||
             (type != LANYFS_TYPE_DIR && type != LANYFS_TYPE_FILE))
        why = "a type other than a directory's and a file's";
    else if (!col_width(st, 12, UINT16_MAX, false))
        why = "attributes outside 0..65535";
    else if (!col_width(st, 13, UINT16_MAX, false))
        why = "a write counter outside 0..65535";
    if (why != NULL) {
        *rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                          "%s: %s: scan %" PRId64 ", entry %" PRId64 ": the row has %s",
                          c->db->path, c->name, c->scan, (int64_t)sqlite3_column_int64(st, 0), why);
        return 1;
    }
    e.block = col_u64(st, 1);
    e.state = (enum scan_entry_state)state;
    e.type = (uint8_t)type;
    e.name = sqlite3_column_blob(st, 5);
    e.name_len = (size_t)sqlite3_column_bytes(st, 5);
    if (e.name == NULL && e.name_len != 0)
        oom = true;
    if (e.name == NULL)
        e.name = (const uint8_t *)"";
    e.size = col_u64(st, 6);
    e.created = col_text(st, 8, &oom);
    e.created_offset = (int)sqlite3_column_int64(st, 9);
    e.modified = col_text(st, 10, &oom);
    e.modified_offset = (int)sqlite3_column_int64(st, 11);
    e.attr = (uint16_t)sqlite3_column_int64(st, 12);
    e.wrcnt = (uint16_t)sqlite3_column_int64(st, 13);
    e.blocks_needed = col_u64(st, 14);
    e.blocks_mapped = col_u64(st, 15);
    e.blocks_intact = col_u64(st, 16);
    if (oom) {
        *rc = nomem(c->db, c->name, err);
        return 1;
    }
    return c->cb.entry(c->ctx, &e);
}

enum lanyfs_err store_entries(struct store_db *db, int64_t scan_id, const char *path_prefix,
                              int state, store_entry_cb cb, void *ctx, struct lanyfs_error *err)
{
    static const char cols[] =
        "SELECT id, block, parent, state, type, name, size, path, created, created_offset,"
        " modified, modified_offset, attr, wrcnt, blocks_needed, blocks_mapped, blocks_intact"
        " FROM entries WHERE scan = ?1 AND path >= ?2";
    char sql[sizeof(cols) + 64];
    snprintf(sql, sizeof(sql), "%s%s ORDER BY path", cols,
             state == STORE_ANY_STATE ? "" : " AND state = ?3");
    const char *prefix = path_prefix != NULL ? path_prefix : "";
    struct user_ctx c = {.db = db, .name = "SELECT FROM entries", .cb.entry = cb, .ctx = ctx,
                         .prefix = prefix, .prefix_len = strlen(prefix), .scan = scan_id};
    struct val vals[3] = {VI(scan_id), VS(prefix), VI(state)};
    return query_run(db, c.name, sql, vals, state == STORE_ANY_STATE ? 2 : 3, entry_row, &c, err);
}

/* A macro's value as a string literal, for messages. */
#define STORE_STR_(x) #x
#define STORE_STR(x) STORE_STR_(x)

/*
 * Why the extent (file_block, block, count) at columns i..i+2 of a row of
 * entry_blocks or lost_tree_blocks is unusable, NULL when it is not.  The
 * file is as hostile as the disk it describes: a count outside
 * 1..STORE_EXTENT_MAX, an extent at block 0 (the superblock: 0 is a hole),
 * one running past 2^64 on the disk or in the file, or (extent_row) one
 * overlapping the extent before would have a caller read or write blocks
 * the scan never gave, so the query ends there.
 */
static const char *extent_why(sqlite3_stmt *st, int i, uint64_t *file_block, uint64_t *block,
                              uint64_t *count)
{
    *file_block = col_u64(st, i);
    *block = col_u64(st, i + 1);
    *count = col_u64(st, i + 2);
    if (sqlite3_column_type(st, i) != SQLITE_INTEGER ||
        sqlite3_column_type(st, i + 1) != SQLITE_INTEGER ||
        sqlite3_column_type(st, i + 2) != SQLITE_INTEGER)
        return "a value that is not an integer";
    if (*count == 0 || *count > STORE_EXTENT_MAX)
        return "a count outside 1.." STORE_STR(STORE_EXTENT_MAX);
    if (*block == 0)
        return "block 0, which holds the superblock";
    if (*block > UINT64_MAX - *count || *file_block > UINT64_MAX - *count)
        return "an end past 2^64";
    return NULL;
}

static int extent_row(void *ctx, sqlite3_stmt *st, enum lanyfs_err *rc, struct lanyfs_error *err)
{
    struct user_ctx *c = ctx;
    uint64_t file_block, block, count;
    const char *why = extent_why(st, 0, &file_block, &block, &count);
    if (why == NULL && file_block < c->next)
        why = "an overlap with the extent before it";
    if (why != NULL) {
        *rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                          "%s: %s: scan %" PRId64 ", %s: the extent at file block %" PRIu64
                          " (block %" PRIu64 ", count %" PRIu64 ") has %s",
                          c->db->path, c->name, c->scan, c->owner, file_block, block, count, why);
        return 1;
    }
    c->next = file_block + count;
    return c->cb.entry_block(c->ctx, file_block, block, count);
}

enum lanyfs_err store_entry_blocks(struct store_db *db, int64_t scan_id, uint32_t entry,
                                   store_entry_block_cb cb, void *ctx, struct lanyfs_error *err)
{
    char owner[32];
    snprintf(owner, sizeof(owner), "entry %" PRIu32, entry);
    struct user_ctx c = {.db = db, .name = "SELECT FROM entry_blocks", .cb.entry_block = cb,
                         .ctx = ctx, .scan = scan_id, .owner = owner};
    return query_run(db, c.name,
                     "SELECT file_block, block, count FROM entry_blocks WHERE scan = ?"
                     " AND entry = ? ORDER BY file_block",
                     (struct val[]){VI(scan_id), VI(entry)}, 2, extent_row, &c, err);
}

/*
 * A row (entry, file_block, block, count) of entry_blocks that holds block
 * c->from: the extent is checked as store_entry_blocks checks it, the entry
 * must be one an id can be, and the file block is reckoned here, in 64
 * bits (SQL's would turn to a real past 2^63).
 */
static int owner_row(void *ctx, sqlite3_stmt *st, enum lanyfs_err *rc, struct lanyfs_error *err)
{
    struct user_ctx *c = ctx;
    uint32_t entry;
    uint64_t file_block, block, count;
    const char *why = extent_why(st, 1, &file_block, &block, &count);
    if (why == NULL && !col_id32(st, 0, 1, false, &entry))
        why = "an entry outside 1..4294967295";
    if (why != NULL) {
        *rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                          "%s: %s: scan %" PRId64 ", entry %" PRId64 ": the extent at file block"
                          " %" PRIu64 " (block %" PRIu64 ", count %" PRIu64 ") has %s",
                          c->db->path, c->name, c->scan, (int64_t)sqlite3_column_int64(st, 0),
                          file_block, block, count, why);
        return 1;
    }
    if (c->from < block || c->from - block >= count)
        return 0; /* not holding it after all */
    return c->cb.owner(c->ctx, entry, file_block + (c->from - block));
}

enum lanyfs_err store_block_owners(struct store_db *db, int64_t scan_id, uint64_t block,
                                   store_block_owner_cb cb, void *ctx, struct lanyfs_error *err)
{
    /* An extent holding block starts at most STORE_EXTENT_MAX - 1 blocks before it. */
    struct user_ctx c = {.db = db, .name = "SELECT FROM entry_blocks", .cb.owner = cb,
                         .ctx = ctx, .scan = scan_id, .from = block};
    if (block > INT64_MAX)
        return LANYFS_OK;
    return query_run(db, c.name,
                     "SELECT entry, file_block, block, count FROM entry_blocks WHERE scan = ?1"
                     " AND block BETWEEN ?2 - ?3 + 1 AND ?2 AND block + count > ?2"
                     " ORDER BY entry, file_block",
                     (struct val[]){VI(scan_id), VU(block), VI(STORE_EXTENT_MAX)}, 3, owner_row, &c,
                     err);
}

/*
 * A row of lost_trees.  Its top must be a block other than the superblock
 * and its entry (NULL: not known) one an entry id can be, 1..UINT32_MAX:
 * cut to 32 bits, a hostile value would name another file.
 */
static int lost_tree_row(void *ctx, sqlite3_stmt *st, enum lanyfs_err *rc,
                         struct lanyfs_error *err)
{
    struct user_ctx *c = ctx;
    struct store_lost_tree t = {
        .top = col_u64(st, 0),
        .size = col_u64(st, 2),
        .blocks_mapped = col_u64(st, 3),
        .extenders = col_u64(st, 4),
    };
    int64_t entry = sqlite3_column_int64(st, 1);
    bool has_entry = sqlite3_column_type(st, 1) != SQLITE_NULL;
    bool integers = true;
    for (int i = 0; i < 5; i++) {
        bool may_be_null = i == 1; /* entry: NULL when not known */
        if (sqlite3_column_type(st, i) != SQLITE_INTEGER && !(may_be_null && !has_entry))
            integers = false;
    }
    const char *why = NULL;
    if (!integers)
        why = "a value that is not an integer";
    else if (t.top == 0)
        why = "top 0, which is the superblock";
    else if (has_entry && (entry < 1 || entry > UINT32_MAX))
        why = "an entry outside 1..4294967295";
    if (why != NULL) {
        *rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                          "%s: %s: scan %" PRId64 ", lost tree %" PRIu64 ": the row has %s",
                          c->db->path, c->name, c->scan, t.top, why);
        return 1;
    }
    t.entry = has_entry ? (uint32_t)entry : 0;
    return c->cb.lost_tree(c->ctx, &t);
}

enum lanyfs_err store_lost_trees(struct store_db *db, int64_t scan_id, store_lost_tree_cb cb,
                                 void *ctx, struct lanyfs_error *err)
{
    if (db->version < 3)
        return LANYFS_OK; /* written before lost trees were kept */
    struct user_ctx c = {.db = db, .name = "SELECT FROM lost_trees", .cb.lost_tree = cb,
                         .ctx = ctx, .scan = scan_id};
    return query_run(db, c.name,
                     "SELECT top, entry, size, blocks_mapped, extenders FROM lost_trees"
                     " WHERE scan = ? ORDER BY top",
                     (struct val[]){VI(scan_id)}, 1, lost_tree_row, &c, err);
}

enum lanyfs_err store_lost_tree_blocks(struct store_db *db, int64_t scan_id, uint64_t top,
                                       store_entry_block_cb cb, void *ctx,
                                       struct lanyfs_error *err)
{
    if (db->version < 3)
        return LANYFS_OK; /* written before lost trees were kept */
    char owner[40];
    snprintf(owner, sizeof(owner), "lost tree %" PRIu64, top);
    struct user_ctx c = {.db = db, .name = "SELECT FROM lost_tree_blocks",
                         .cb.entry_block = cb, .ctx = ctx, .scan = scan_id, .owner = owner};
    return query_run(db, c.name,
                     "SELECT file_block, block, count FROM lost_tree_blocks WHERE scan = ?"
                     " AND top = ? ORDER BY file_block",
                     (struct val[]){VI(scan_id), VU(top)}, 2, extent_row, &c, err);
}

static int finding_row(void *ctx, sqlite3_stmt *st, enum lanyfs_err *rc, struct lanyfs_error *err)
{
    struct user_ctx *c = ctx;
    bool oom = false;
    struct store_finding f;
    f.seq = col_u64(st, 0);
    f.code = (uint32_t)sqlite3_column_int64(st, 1);
    f.code_name = col_text(st, 2, &oom);
    /* A severity that is none (a text passes `severity >= ?` too) is the gravest. */
    int sev = col_enum(st, 3, SCAN_SEV_CRITICAL + 1);
    f.severity = sev >= 0 ? (enum scan_severity)sev : SCAN_SEV_CRITICAL;
    f.block = col_u64(st, 5);
    f.block2 = col_u64(st, 6);
    f.value = col_u64(st, 7);
    f.value2 = col_u64(st, 8);
    f.count = col_u64(st, 9);
    f.count2 = col_u64(st, 10);
    f.path = col_text(st, 11, &oom);
    f.text = col_text(st, 12, &oom);
    f.message = col_text(st, 13, &oom);
    if (oom) {
        *rc = nomem(c->db, c->name, err);
        return 1;
    }
    const char *why = NULL;
    if (f.code_name == NULL || f.message == NULL)
        why = "a NULL in a NOT NULL column"; /* col_text set oom for a text that failed */
    else if (!col_id32(st, 4, 0, true, &f.entry))
        why = "an entry outside 0..4294967295";
    if (why != NULL) {
        *rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                          "%s: %s: scan %" PRId64 ", finding %" PRIu64 ": the row has %s",
                          c->db->path, c->name, c->scan, f.seq, why);
        return 1;
    }
    return c->cb.finding(c->ctx, &f);
}

enum lanyfs_err store_findings(struct store_db *db, int64_t scan_id, uint32_t code,
                               enum scan_severity min_severity, store_finding_cb cb, void *ctx,
                               struct lanyfs_error *err)
{
    static const char cols[] =
        "SELECT seq, code, code_name, severity, entry, block, block2, value, value2, count,"
        " count2, path, text, message FROM findings WHERE scan = ?1 AND severity >= ?2";
    char sql[sizeof(cols) + 64];
    snprintf(sql, sizeof(sql), "%s%s ORDER BY seq", cols, code != 0 ? " AND code = ?3" : "");
    struct user_ctx c = {.db = db, .name = "SELECT FROM findings", .cb.finding = cb, .ctx = ctx,
                         .scan = scan_id};
    struct val vals[3] = {VI(scan_id), VI(min_severity), VI(code)};
    return query_run(db, c.name, sql, vals, code != 0 ? 3 : 2, finding_row, &c, err);
}

/*
 * A row of block_runs.  The runs of a map never overlap: one of count 0,
 * running past 2^64, starting inside the run before it (in block order),
 * of a class scan.h does not have or with an owner outside
 * 0..UINT32_MAX would have a caller paint, count or name blocks the scan
 * never gave, so the query ends there.
 */
static int run_row(void *ctx, sqlite3_stmt *st, enum lanyfs_err *rc, struct lanyfs_error *err)
{
    struct user_ctx *c = ctx;
    int cls = col_enum(st, 2, SCAN_BLK_CLASSES);
    struct store_block_run run = {
        .first = col_u64(st, 0),
        .count = col_u64(st, 1),
        .cls = (enum scan_class)cls,
        .flags = (uint8_t)sqlite3_column_int64(st, 4),
        .has_wrcnt = sqlite3_column_type(st, 5) != SQLITE_NULL,
        .wrcnt = (uint16_t)sqlite3_column_int64(st, 5),
    };
    const char *why = NULL;
    if (sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
        sqlite3_column_type(st, 1) != SQLITE_INTEGER)
        why = "a value that is not an integer";
    else if (run.count == 0)
        why = "a count of 0";
    else if (run.first > UINT64_MAX - run.count)
        why = "an end past 2^64";
    else if (run.first < c->next)
        why = "a first block inside the run before it";
    else if (cls < 0)
        why = "a class no block has";
    else if (!col_id32(st, 3, 0, true, &run.owner))
        why = "an owner outside 0..4294967295";
    else if (!col_width(st, 4, UINT8_MAX, false))
        why = "flags outside 0..255";
    else if (!col_width(st, 5, UINT16_MAX, true))
        why = "a write counter outside 0..65535";
    if (why != NULL) {
        *rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                          "%s: %s: scan %" PRId64 ": the run at block %" PRIu64
                          " (count %" PRIu64 ") has %s",
                          c->db->path, c->name, c->scan, run.first, run.count, why);
        return 1;
    }
    c->next = run.first + run.count;
    /* the run before `from` when `from` lies past the map's end, and one
     * past 2^63 the SQL took for a negative number */
    if (run.first + run.count <= c->from || run.first > c->to)
        return 0;
    return c->cb.run(c->ctx, &run);
}

enum lanyfs_err store_block_runs(struct store_db *db, int64_t scan_id, uint64_t first,
                                 uint64_t last, store_block_run_cb cb, void *ctx,
                                 struct lanyfs_error *err)
{
    /* Runs are disjoint and sorted: the one holding `first` is the last to start at or
     * before it; from there on every run starting at or before `last` overlaps. */
    if (first > INT64_MAX)
        first = INT64_MAX;
    if (last > INT64_MAX)
        last = INT64_MAX;
    if (last < first)
        return LANYFS_OK;
    struct user_ctx c = {.db = db, .name = "SELECT FROM block_runs", .cb.run = cb, .ctx = ctx,
                         .from = first, .to = last, .scan = scan_id};
    return query_run(db, c.name,
                     "SELECT first, count, class, owner, flags, wrcnt FROM block_runs"
                     " WHERE scan = ?1 AND first <= ?3 AND first >= COALESCE((SELECT first"
                     " FROM block_runs WHERE scan = ?1 AND first <= ?2 ORDER BY first DESC"
                     " LIMIT 1), 0) ORDER BY first",
                     (struct val[]){VI(scan_id), VU(first), VU(last)}, 3, run_row, &c, err);
}

static int counter_row(void *ctx, sqlite3_stmt *st, enum lanyfs_err *rc, struct lanyfs_error *err)
{
    struct user_ctx *c = ctx;
    int cls = col_enum(st, 1, SCAN_BLK_CLASSES);
    const char *why = NULL;
    if (cls < 0)
        why = "a class no block has";
    else if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
        why = "a block that is not an integer";
    else if (!col_width(st, 2, UINT16_MAX, false))
        why = "a write counter outside 0..65535";
    if (why != NULL) {
        *rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                          "%s: %s: scan %" PRId64 ": the counter of block %" PRIu64 " has %s",
                          c->db->path, c->name, c->scan, col_u64(st, 0), why);
        return 1;
    }
    return c->cb.counter(c->ctx, col_u64(st, 0), (enum scan_class)cls,
                         (uint16_t)sqlite3_column_int64(st, 2));
}

/*
 * The rows of the counters view, read from block_runs itself: the view is
 * the file's, and a hostile file's view may be any query (an endless one).
 * Only the blocks store_block_runs can give (0..INT64_MAX: SQL would sort
 * one past 2^63 first, as a negative number).
 */
enum lanyfs_err store_counters(struct store_db *db, int64_t scan_id, int cls, store_counter_cb cb,
                               void *ctx, struct lanyfs_error *err)
{
    struct user_ctx c = {.db = db, .name = "SELECT FROM block_runs", .cb.counter = cb,
                         .ctx = ctx, .scan = scan_id};
    if (cls == STORE_ANY_CLASS)
        return query_run(db, c.name,
                         "SELECT first, class, wrcnt FROM block_runs WHERE scan = ?"
                         " AND first BETWEEN 0 AND 9223372036854775807 AND wrcnt IS NOT NULL"
                         " ORDER BY first",
                         (struct val[]){VI(scan_id)}, 1, counter_row, &c, err);
    return query_run(db, c.name,
                     "SELECT first, class, wrcnt FROM block_runs WHERE scan = ? AND class = ?"
                     " AND first BETWEEN 0 AND 9223372036854775807 AND wrcnt IS NOT NULL"
                     " ORDER BY first",
                     (struct val[]){VI(scan_id), VI(cls)}, 2, counter_row, &c, err);
}

/* ---- the image's SHA-256 ------------------------------------------------------ */

/*
 * For scans.image_sha256, with the core's SHA-256 (src/core/sha256.h),
 * which uses the x86 SHA extensions when the processor has them: the hash
 * reads the whole image, so its speed sets the cost of the hash column.
 */

void store_sha256(const void *data, size_t len, bool portable, char hex[65])
{
    struct lanyfs_sha256 h;
    uint8_t sum[LANYFS_SHA256_LEN];
    if (portable)
        lanyfs_sha256_init_portable(&h);
    else
        lanyfs_sha256_init(&h);
    lanyfs_sha256_update(&h, data, len);
    lanyfs_sha256_final(&h, sum);
    lanyfs_sha256_hex(sum, hex);
}

enum lanyfs_err store_file_sha256(const char *path, char hex[65], store_hash_progress_cb on_chunk,
                                  void *ctx, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    enum { CHUNK = 1 << 20 };
    uint8_t *buf = malloc(CHUNK);
    FILE *f = NULL;
    if (buf == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "%s: out of memory", path);
    f = fopen(path, "rb");
    if (f == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "%s: cannot open it to hash it: %s",
                         path, strerror(errno));
        goto out;
    }
    struct lanyfs_sha256 h;
    lanyfs_sha256_init(&h);
    size_t n;
    uint64_t done = 0;
    while ((n = fread(buf, 1, CHUNK, f)) > 0) {
        lanyfs_sha256_update(&h, buf, n);
        done += n;
        if (on_chunk != NULL)
            on_chunk(ctx, done);
    }
    if (ferror(f)) {
        rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "%s: read error while hashing it",
                         path);
        goto out;
    }
    uint8_t sum[LANYFS_SHA256_LEN];
    lanyfs_sha256_final(&h, sum);
    lanyfs_sha256_hex(sum, hex);
out:
    if (f != NULL)
        fclose(f);
    free(buf);
    return rc;
}
