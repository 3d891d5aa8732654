/*
 * rescue-salvage.h -- Salvage: copying entries out of a scanned image into a folder.
 *
 * The copying is the shared salvage engine's (src/scan/salvage.h), the one
 * `lanyfs salvage` runs, with the same rules and the same manifests
 * (manifest.csv, manifest.json).  What is added here is where it writes
 * and what it is given:
 *
 *  - under the destination chosen, a new folder "<image>-salvage" (or
 *    "-salvage-2", ...) is made, so nothing that was there is touched;
 *    inside it the engine makes files/, deleted/ and orphans/;
 *  - the engine needs the filesystem handle its scan was made over, so
 *    the worker opens the image read-only and scans it again (the scan
 *    shown may come from a database, or be older than the image);
 *  - everything is the live tree, the deleted files and the orphaned
 *    entries, as the files view shows them (`lanyfs salvage --deleted
 *    --orphans`); a selection is the entries selected, of any state (a
 *    directory brings everything of its state below it): the live ones by
 *    path, the deleted and orphaned ones by their entry in the new scan,
 *    found by their own block.
 *
 * Progress is the fraction of the work (the scan first, then the bytes)
 * and the file being copied; cancelling stops at the next file, after the
 * manifests have been written for what was copied.
 */
#pragma once

#include <gio/gio.h>

#include "rescue-data.h"
#include "rescue-progress.h"

G_BEGIN_DECLS

typedef struct {
    char *folder;          /* the folder made (owned) */
    guint exact;           /* files written whole */
    guint partial;         /* files written with zeros for what could not be had */
    guint unrecoverable;   /* non-empty files of which no byte could be had */
    guint not_written;     /* files the folder refused */
    guint dirs;            /* directories made */
    guint64 bytes;         /* bytes written */
    guint64 recovered;     /* of those, bytes known good */
    GPtrArray *problems;   /* one sentence per file not exact, then the engine's (owned) */
} RescueSalvageReport;

void rescue_salvage_report_free(RescueSalvageReport *report);

/* Files written, whole or not. */
guint rescue_salvage_report_files(const RescueSalvageReport *report);

/*
 * Salvage entries ids (n of them; n == 0: everything) of data into a new
 * folder inside dest.  Synchronous.  Fails when the image cannot be opened
 * or scanned, the folder cannot be made, the manifests cannot be written,
 * or when cancelled (G_IO_ERROR_CANCELLED); files that fail are counted in
 * the report.
 */
RescueSalvageReport *rescue_salvage_run(RescueData *data, const guint32 *ids, guint n,
                                        const char *dest, RescueProgress *progress,
                                        GCancellable *cancellable, GError **error);

/* The same in a worker thread. */
void rescue_salvage_async(RescueData *data, const guint32 *ids, guint n, const char *dest,
                          RescueProgress *progress, GCancellable *cancellable,
                          GAsyncReadyCallback callback, gpointer user_data);
RescueSalvageReport *rescue_salvage_finish(GAsyncResult *result, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RescueSalvageReport, rescue_salvage_report_free)

G_END_DECLS
