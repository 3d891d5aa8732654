/*
 * rescue-salvage.h -- copying entries out of a scanned image into a folder.
 *
 * Salvage never writes to the image and never overwrites anything outside
 * a folder it makes itself: under the destination chosen it creates a new
 * folder "<image>-salvage" (or "-salvage-2", ...) and inside it
 *
 *   files/     live entries, at their paths
 *   deleted/   deleted entries, at the best path the scan knows
 *   orphaned/  orphaned entries, under the directories they were found in
 *   manifest.tsv  one line per entry: what it was, where it went, how much
 *                 of it could be read
 *
 * Every directory and file is created with O_NOFOLLOW and files with
 * O_EXCL, relative to the folder's descriptor, so a symlink planted in the
 * destination cannot redirect a write.  Names are escaped the way the
 * command-line tools print them (\xNN for a byte that is not printable
 * UTF-8 and for '/', \\ for a backslash), "." and ".." are escaped too,
 * and a name that would exceed 255 bytes keeps its first part and a hash.
 * Two entries that escape to the same name get "~2", "~3", ...  Blocks a
 * file cannot be given (holes, blocks another entry owns now, read errors)
 * are written as zeros and counted in the manifest.
 *
 * Selecting a directory salvages everything below it, in any state.
 */
#pragma once

#include <gio/gio.h>

#include "rescue-data.h"
#include "rescue-progress.h"

G_BEGIN_DECLS

typedef struct {
    char *folder;          /* the folder made (owned) */
    guint files;           /* files written */
    guint dirs;            /* directories made */
    guint64 bytes;         /* bytes written */
    guint64 lost_blocks;   /* blocks written as zeros */
    guint failed;          /* entries that could not be written */
    GPtrArray *problems;   /* one sentence per failure (owned strings) */
} RescueSalvageReport;

void rescue_salvage_report_free(RescueSalvageReport *report);

/* The escaped file name of name bytes (never empty, never "." or "..", at most 255 bytes). */
char *rescue_salvage_escape_name(const guint8 *name, gsize len);

/*
 * Salvage entries ids (n of them; n == 0: everything) of data into a new
 * folder inside dest.  Synchronous; progress (may be NULL) is posted with
 * the fraction of bytes done and the path being copied.  Fails only when
 * the image or the folder cannot be opened or made, or when cancelled;
 * entries that fail are counted in the report.
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
