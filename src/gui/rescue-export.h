/*
 * rescue-export.h -- writing what a scan found to files others can read.
 *
 * Findings as CSV or JSON, the block map as a PNG (the same colours as the
 * view, with a legend) and as CSV runs.  The wear PNG and CSV are the wear
 * report's (rescue-wear-export.h, src/scan/wear.h): rescue_export_to_bytes
 * refuses those two kinds, and only names them.  CSV follows RFC 4180 (a header
 * line, fields with commas, quotes or line breaks quoted); names and paths
 * are in the escaped display form.  Files are written whole or not at all
 * (g_file_set_contents).  Nothing here uses GTK; cairo paints the PNGs.
 */
#pragma once

#include <gio/gio.h>

#include "rescue-data.h"

G_BEGIN_DECLS

typedef enum {
    RESCUE_EXPORT_FINDINGS_CSV,
    RESCUE_EXPORT_FINDINGS_JSON,
    RESCUE_EXPORT_MAP_PNG,
    RESCUE_EXPORT_MAP_CSV,
    RESCUE_EXPORT_WEAR_PNG,
    RESCUE_EXPORT_WEAR_CSV,
} RescueExportKind;

/* The file name suggested for an export of data (e.g. "stick-findings.csv"). */
char *rescue_export_suggest_name(RescueData *data, RescueExportKind kind);

/* The export's bytes. */
GBytes *rescue_export_to_bytes(RescueData *data, RescueExportKind kind, GError **error);
/* Write the export to path. */
gboolean rescue_export_to_file(RescueData *data, RescueExportKind kind, const char *path,
                               GError **error);

/* Quote one CSV field as RFC 4180 wants it, appending to out. */
void rescue_csv_append_field(GString *out, const char *field);

G_END_DECLS
