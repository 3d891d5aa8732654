/*
 * store_salvage.h -- a salvage run's files in a scan database.
 *
 * Beside the scan tables of store.h, a scan database may hold the runs of
 * `lanyfs salvage` made from one of its scans: salvage_runs (one row per
 * run: the scan it used, the output folder, the totals) and salvage_files
 * (one row per file the run wrote or meant to, as the manifests list
 * them).  The tables are made on first use; the scan schema's version does
 * not change, and a scan removed with store_delete_scan takes its salvage
 * rows with it (a trigger).  docs/salvage.md describes the columns.
 *
 * Every TEXT column is valid UTF-8: the paths and notes salvage gives are
 * in its shown (escaped) form already, the output folder is stored as
 * store_escape() gives it.
 */
#pragma once

#include <stdint.h>

#include "lanyfs.h"
#include "salvage.h"
#include "store.h"

/*
 * Add run r, made from scan scan_id into output_dir, in one transaction:
 * on failure nothing is written.  *run_id (may be NULL) receives the run's id.
 */
enum lanyfs_err store_add_salvage(struct store_db *db, int64_t scan_id, const char *output_dir,
                                  const struct salvage_result *r, int64_t *run_id,
                                  struct lanyfs_error *err);
