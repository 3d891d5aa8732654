/*
 * dbcheck.c -- list what a scan database holds, for the scan --db tests.
 *
 * Usage: dbcheck DB            one line per scan:
 *                              ID IMAGE SHA256|- ENTRIES FINDINGS WORST BLOCKS RUNS-COVER
 *        dbcheck --bump DB     set PRAGMA user_version one past this tool's
 *
 * The database is read through the store's reader API, opened read-only;
 * RUNS-COVER is "ok" when the block runs cover 0..map_blocks-1 exactly once.
 * Exit 0 on success, 1 on any error (printed to stderr).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"

struct cover {
    uint64_t next; /* where the next run must start */
    int ok;        /* no gap, no overlap so far */
};

static int on_run(void *ctx, const struct store_block_run *run)
{
    struct cover *c = ctx;
    if (run->first != c->next || run->count == 0)
        c->ok = 0;
    c->next = run->first + run->count;
    return 0;
}

static int bump(const char *path)
{
    sqlite3 *h = NULL;
    char sql[64];
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", STORE_SCHEMA_VERSION + 1);
    int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        fprintf(stderr, "dbcheck: %s: %s\n", path, h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
    if (sqlite3_close(h) != SQLITE_OK && rc == SQLITE_OK)
        rc = SQLITE_ERROR;
    return rc == SQLITE_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--bump") == 0)
        return bump(argv[2]);
    if (argc != 2) {
        fputs("usage: dbcheck DB | dbcheck --bump DB\n", stderr);
        return 2;
    }
    struct store_db *db = NULL;
    struct store_scan *scans = NULL;
    size_t n = 0;
    struct lanyfs_error err;
    int status = 1;
    if (store_open(argv[1], STORE_OPEN_READONLY, &db, &err) != LANYFS_OK ||
        store_list_scans(db, NULL, &scans, &n, &err) != LANYFS_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const struct store_scan *s = &scans[i];
        struct cover c = {0, 1};
        if (store_block_runs(db, s->id, 0, UINT64_MAX, on_run, &c, &err) != LANYFS_OK)
            goto out;
        printf("%" PRId64 " %s %s %" PRIu64 " %" PRIu64 " %s %" PRIu64 " %s\n", s->id,
               s->image_path, s->image_sha256 != NULL ? s->image_sha256 : "-", s->entries,
               s->findings, scan_severity_name(s->summary.worst), s->map_blocks,
               c.ok && c.next == s->map_blocks ? "ok" : "BAD");
    }
    status = 0;
out:
    if (status != 0)
        fprintf(stderr, "dbcheck: %s\n", err.msg);
    store_scans_free(scans, n);
    if (db != NULL && store_close(db, &err) != LANYFS_OK) {
        fprintf(stderr, "dbcheck: %s\n", err.msg);
        status = 1;
    }
    return status;
}
