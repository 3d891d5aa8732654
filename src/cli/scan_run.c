/*
 * scan_run.c -- the database, the clock and the storing around a command's
 * scan (scan_run.h).
 */
#include "scan_run.h"

#include <string.h>

bool cli_db_open(struct out_report *r, const char *dbpath, struct store_db **db)
{
    *db = NULL;
    if (dbpath == NULL)
        return true;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (store_open(dbpath, 0, db, &err) != LANYFS_OK) {
        out_report_status(r, LANYFS_EXIT_ERROR);
        out_report_error(r, NULL, &err);
        return false;
    }
    return true;
}

void cli_db_close(struct out_report *r, struct store_db *db)
{
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (db != NULL && store_close(db, &err) != LANYFS_OK) {
        out_report_status(r, LANYFS_EXIT_ERROR);
        out_report_error(r, NULL, &err);
    }
}

void cli_scan_clock_start(struct cli_scan_clock *c)
{
    clock_gettime(CLOCK_REALTIME, &c->started);
    clock_gettime(CLOCK_MONOTONIC, &c->m0);
    c->m1 = c->m0;
}

void cli_scan_clock_stop(struct cli_scan_clock *c)
{
    clock_gettime(CLOCK_MONOTONIC, &c->m1);
}

bool cli_db_add_scan(struct out_report *r, struct store_db *db, const struct scan_result *res,
                     const char *image, const struct cli_scan_clock *c,
                     const char *(*sha256_wait)(void *ctx, struct lanyfs_error *err),
                     void *sha256_ctx, struct cli_bar *bar, int64_t *scan_id)
{
    struct store_scan_meta meta = {
        .image_path = image,
        .started = (int64_t)c->started.tv_sec,
        .started_nsec = (uint32_t)c->started.tv_nsec,
        .seconds = (double)(c->m1.tv_sec - c->m0.tv_sec) +
                   (double)(c->m1.tv_nsec - c->m0.tv_nsec) / 1e9,
        .image_sha256_wait = sha256_wait,
        .sha256_ctx = sha256_ctx,
        .progress = cli_bar_on_store,
        .progress_ctx = bar,
    };
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (store_add_scan(db, res, &meta, scan_id, &err) != LANYFS_OK) {
        cli_bar_clear(bar);
        out_report_status(r, LANYFS_EXIT_ERROR);
        out_report_error(r, NULL, &err);
        return false;
    }
    return true;
}

void cli_db_json(JsonBuilder *b, const char *dbpath, int64_t scan_id)
{
    json_builder_set_member_name(b, "database");
    if (dbpath == NULL) {
        json_builder_add_null_value(b);
        return;
    }
    char *d = out_escape(dbpath, strlen(dbpath), 0);
    json_builder_begin_object(b);
    out_json_str(b, "path", d);
    out_json_int(b, "scan_id", scan_id);
    json_builder_end_object(b);
    g_free(d);
}
