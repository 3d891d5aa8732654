/*
 * scan_run.h -- what `lanyfs scan`, `wear` and `salvage` share around the
 * scan they run: the --db database, opened before anything is read so that
 * one that cannot be used fails at once, the scan's clock, and the scan
 * stored with its progress on the bar (termbar.h), and the database as
 * --json shows it.  Every failure goes into the command's struct out_report
 * with exit status LANYFS_EXIT_ERROR (1).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "output.h"
#include "scan.h"
#include "store.h"
#include "termbar.h"

/*
 * Open the database at dbpath into *db; with dbpath NULL there is none and
 * *db stays NULL.  False when it cannot be opened (reported in r).
 */
bool cli_db_open(struct out_report *r, const char *dbpath, struct store_db **db);
/* Close db (NULL: nothing); a failure is reported in r. */
void cli_db_close(struct out_report *r, struct store_db *db);

/* When a scan ran: the wall clock at its start, the monotonic clock around it. */
struct cli_scan_clock {
    struct timespec started; /* CLOCK_REALTIME */
    struct timespec m0, m1;  /* CLOCK_MONOTONIC at the start and at the end */
};

void cli_scan_clock_start(struct cli_scan_clock *c);
void cli_scan_clock_stop(struct cli_scan_clock *c);

/*
 * Store the scan res of image, timed by c, in db, the progress on bar;
 * *scan_id (may be NULL) receives its id.  The image's SHA-256 comes from
 * sha256_wait (NULL: not computed), which the store calls after writing the
 * rows, so that a hash computed beside them is waited for last (see
 * store_scan_meta).  On failure the bar is cleared, the problem reported in
 * r and false returned.
 */
bool cli_db_add_scan(struct out_report *r, struct store_db *db, const struct scan_result *res,
                     const char *image, const struct cli_scan_clock *c,
                     const char *(*sha256_wait)(void *ctx, struct lanyfs_error *err),
                     void *sha256_ctx, struct cli_bar *bar, int64_t *scan_id);

/*
 * The "database" member of a --json document: {"path": ..., "scan_id": ...}
 * with the path escaped, or null without a database (dbpath NULL).
 */
void cli_db_json(JsonBuilder *b, const char *dbpath, int64_t scan_id);
