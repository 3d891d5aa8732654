/*
 * store_salvage.c -- the salvage tables of a scan database (store_salvage.h).
 *
 * The rows go in through a connection of their own to the database file
 * store.c opened (store_path), so that the scan store stays as it is: the
 * file is in WAL mode and the scan's transaction is committed by then.
 * One IMMEDIATE transaction makes the tables when missing and writes the
 * run and its files; any failure rolls it back.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "store_salvage.h"

static const char salvage_schema_sql[] =
    "CREATE TABLE IF NOT EXISTS salvage_runs (\n"
    "    id INTEGER PRIMARY KEY,\n"
    "    scan_id INTEGER NOT NULL,\n"
    "    finished TEXT NOT NULL,\n"
    "    output_dir TEXT NOT NULL,\n"
    "    exact INTEGER NOT NULL,\n"
    "    partial INTEGER NOT NULL,\n"
    "    unrecoverable INTEGER NOT NULL,\n"
    "    skipped INTEGER NOT NULL,\n"
    "    failed INTEGER NOT NULL,\n"
    "    missing_paths INTEGER NOT NULL,\n"
    "    directories INTEGER NOT NULL,\n"
    "    bytes INTEGER NOT NULL,\n"
    "    bytes_recovered INTEGER NOT NULL\n"
    ");\n"
    "CREATE TABLE IF NOT EXISTS salvage_files (\n"
    "    run_id INTEGER NOT NULL,\n"
    "    seq INTEGER NOT NULL,\n"
    "    kind TEXT NOT NULL,\n"
    "    entry INTEGER,\n"
    "    entry_block INTEGER NOT NULL,\n"
    "    source_path TEXT NOT NULL,\n"
    "    output_path TEXT NOT NULL,\n"
    "    status TEXT NOT NULL,\n"
    "    size INTEGER NOT NULL,\n"
    "    bytes_recovered INTEGER NOT NULL,\n"
    "    sha256 TEXT,\n"
    "    mime TEXT,\n"
    "    magic TEXT,\n"
    "    extension TEXT,\n"
    "    version INTEGER,\n"
    "    wrcnt INTEGER,\n"
    "    source_blocks TEXT NOT NULL,\n"
    "    holes TEXT NOT NULL,\n"
    "    unreadable TEXT NOT NULL,\n"
    "    reused TEXT NOT NULL,\n"
    "    shared TEXT NOT NULL,\n"
    "    note TEXT,\n"
    "    PRIMARY KEY (run_id, seq)\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX IF NOT EXISTS salvage_runs_scan ON salvage_runs (scan_id);\n"
    "CREATE TRIGGER IF NOT EXISTS salvage_scan_deleted AFTER DELETE ON scans BEGIN\n"
    "    DELETE FROM salvage_files WHERE run_id IN\n"
    "        (SELECT id FROM salvage_runs WHERE scan_id = OLD.id);\n"
    "    DELETE FROM salvage_runs WHERE scan_id = OLD.id;\n"
    "END;\n";

static enum lanyfs_err sql_fail(sqlite3 *h, const char *path, const char *what,
                                struct lanyfs_error *err)
{
    return lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "%s: %s: %s", path, what,
                       h != NULL ? sqlite3_errmsg(h) : "out of memory");
}

static void bind_text(sqlite3_stmt *st, int col, const char *v)
{
    if (v == NULL)
        sqlite3_bind_null(st, col);
    else
        sqlite3_bind_text(st, col, v, -1, SQLITE_TRANSIENT);
}

/* A list of ranges as text ("6-11 14"), bound and freed. */
static bool bind_ranges(sqlite3_stmt *st, int col, const struct salvage_ranges *r)
{
    char *t = salvage_ranges_text(r);
    if (t == NULL)
        return false;
    sqlite3_bind_text(st, col, t, -1, SQLITE_TRANSIENT);
    free(t);
    return true;
}

static enum lanyfs_err add_files(sqlite3 *h, const char *path, int64_t run,
                                 const struct salvage_result *r, struct lanyfs_error *err)
{
    static const char sql[] =
        "INSERT INTO salvage_files (run_id, seq, kind, entry, entry_block, source_path, "
        "output_path, status, size, bytes_recovered, sha256, mime, magic, extension, version, "
        "wrcnt, source_blocks, holes, unreadable, reused, shared, note) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?19, ?20, ?21, ?22)";
    sqlite3_stmt *st = NULL;
    enum lanyfs_err rc = LANYFS_OK;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return sql_fail(h, path, "INSERT INTO salvage_files", err);
    const struct salvage_item *it;
    size_t n = salvage_items(r, &it);
    for (size_t i = 0; i < n && rc == LANYFS_OK; i++) {
        const struct salvage_item *x = &it[i];
        bool carved = x->kind == SALVAGE_KIND_CARVED || x->entry == 0;
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        bind_text(st, 3, salvage_kind_name(x->kind));
        if (carved)
            sqlite3_bind_null(st, 4);
        else
            sqlite3_bind_int64(st, 4, x->entry);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)x->entry_block);
        bind_text(st, 6, x->source != NULL ? x->source : "");
        bind_text(st, 7, x->output != NULL ? x->output : "");
        bind_text(st, 8, salvage_status_name(x->status));
        sqlite3_bind_int64(st, 9, (sqlite3_int64)x->size);
        sqlite3_bind_int64(st, 10, (sqlite3_int64)x->recovered);
        bind_text(st, 11, x->sha256[0] != '\0' ? x->sha256 : NULL);
        bind_text(st, 12, x->mime);
        bind_text(st, 13, x->magic);
        bind_text(st, 14, x->ext);
        if (x->version > 0)
            sqlite3_bind_int64(st, 15, x->version);
        else
            sqlite3_bind_null(st, 15);
        if (carved)
            sqlite3_bind_null(st, 16);
        else
            sqlite3_bind_int64(st, 16, x->wrcnt);
        bind_text(st, 22, x->note);
        if (!bind_ranges(st, 17, &x->blocks) || !bind_ranges(st, 18, &x->holes) ||
            !bind_ranges(st, 19, &x->unreadable) || !bind_ranges(st, 20, &x->reused) ||
            !bind_ranges(st, 21, &x->shared)) {
            rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
            break;
        }
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = sql_fail(h, path, "INSERT INTO salvage_files", err);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static enum lanyfs_err add_run(sqlite3 *h, const char *path, int64_t scan_id,
                               const char *output_dir, const struct salvage_result *r,
                               int64_t *run, struct lanyfs_error *err)
{
    static const char sql[] =
        "INSERT INTO salvage_runs (scan_id, finished, output_dir, exact, partial, "
        "unrecoverable, skipped, failed, missing_paths, directories, bytes, bytes_recovered) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
    struct salvage_totals t;
    salvage_get_totals(r, &t);
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    char *dir = store_escape(output_dir, strlen(output_dir));
    if (dir == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    sqlite3_stmt *st = NULL;
    enum lanyfs_err rc = LANYFS_OK;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = sql_fail(h, path, "INSERT INTO salvage_runs", err);
        goto out;
    }
    sqlite3_bind_int64(st, 1, scan_id);
    bind_text(st, 2, when);
    bind_text(st, 3, dir);
    const uint64_t v[] = {t.exact, t.partial, t.unrecoverable, t.skipped, t.failed,
                          t.missing, t.dirs,  t.bytes,         t.recovered};
    for (int i = 0; i < 9; i++)
        sqlite3_bind_int64(st, 4 + i, (sqlite3_int64)v[i]);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = sql_fail(h, path, "INSERT INTO salvage_runs", err);
    else
        *run = sqlite3_last_insert_rowid(h);
out:
    sqlite3_finalize(st);
    free(dir);
    return rc;
}

enum lanyfs_err store_add_salvage(struct store_db *db, int64_t scan_id, const char *output_dir,
                                  const struct salvage_result *r, int64_t *run_id,
                                  struct lanyfs_error *err)
{
    const char *path = store_path(db);
    sqlite3 *h = NULL;
    int64_t run = 0;
    enum lanyfs_err rc = LANYFS_OK;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        rc = sql_fail(h, path, "open", err);
        goto out;
    }
    sqlite3_busy_timeout(h, 10000);
    if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        rc = sql_fail(h, path, "BEGIN IMMEDIATE", err);
        goto out;
    }
    if (sqlite3_exec(h, salvage_schema_sql, NULL, NULL, NULL) != SQLITE_OK)
        rc = sql_fail(h, path, "CREATE TABLE salvage_runs", err);
    if (rc == LANYFS_OK)
        rc = add_run(h, path, scan_id, output_dir, r, &run, err);
    if (rc == LANYFS_OK)
        rc = add_files(h, path, run, r, err);
    if (rc == LANYFS_OK && sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = sql_fail(h, path, "COMMIT", err);
    if (rc != LANYFS_OK)
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    else if (run_id != NULL)
        *run_id = run;
out:
    if (h != NULL && sqlite3_close(h) != SQLITE_OK && rc == LANYFS_OK)
        rc = sql_fail(h, path, "close", err);
    return rc;
}
