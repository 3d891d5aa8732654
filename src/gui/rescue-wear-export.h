/*
 * rescue-wear-export.h -- the wear exports, through the wear report (src/scan/wear.h).
 *
 * Wear as a PNG is the heat image `lanyfs wear --png FILE` draws, wear as
 * CSV the table `lanyfs wear --format csv` prints (one row per metadata
 * block: block, kind, class, write counter, owner, path, flags): the same
 * code, over the scanner's result the RescueData was made from.  A scan
 * read back from a database has no such result; the image it names is
 * scanned again first (read-only).  Files are written whole or not at all.
 */
#pragma once

#include <gio/gio.h>

#include "rescue-data.h"
#include "rescue-export.h"

G_BEGIN_DECLS

/* Whether kind is one of the wear exports (RESCUE_EXPORT_WEAR_PNG, _CSV). */
gboolean rescue_wear_export_handles(RescueExportKind kind);

/* Write the wear export kind of data to path.  Synchronous (a worker calls it). */
gboolean rescue_wear_export_to_file(RescueData *data, RescueExportKind kind, const char *path,
                                    GError **error);

G_END_DECLS
