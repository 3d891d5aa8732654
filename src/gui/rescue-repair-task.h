/*
 * rescue-repair-task.h -- running the repair engine (src/fsck) off the main thread.
 *
 * A repair is fsck-lanyfs answering yes to every question (FSCK_MODE_YES),
 * called as a library: the same code, the same plan, the same write order
 * and the same undo file as `fsck-lanyfs -y -z UNDOFILE DEVICE`.  The
 * engine opens the image or device for writing itself, for the length of
 * the repair only (block devices with O_EXCL, a mounted one refused); the
 * application's own handles stay read-only.  Its text report and its
 * error messages are caught in memory, its progress lines (fsck's -C FD
 * protocol, "PASS DONE TOTAL DEVICE") are read from a pipe by a second
 * thread and posted to a RescueProgress.
 *
 * A repair cannot be cancelled once it has started: the engine has no
 * cancel point, and nothing is gained by stopping it (every state it can
 * leave is repairable by running it again).  The result is the fsck(8)
 * exit status (fsck.h), explained by rescue_repair_status_text().
 *
 * Nothing here uses GTK.
 */
#pragma once

#include <gio/gio.h>

#include "rescue-data.h"
#include "rescue-progress.h"

G_BEGIN_DECLS

typedef struct {
    int status;            /* fsck's exit status (a sum of FSCK_EXIT_*) */
    char *device;          /* the image or device repaired (owned) */
    char *report;          /* fsck's text report, valid UTF-8 (owned) */
    char *errors;          /* fsck's error messages, valid UTF-8, "" when none (owned) */
    char *undo_path;       /* the undo file, NULL when none was written (owned) */
} RescueRepairReport;

void rescue_repair_report_free(RescueRepairReport *report);

/*
 * The findings of data a repair acts on (those whose catalogue row
 * proposes a repair), as indexes into its findings; *n receives the count.
 * g_free the array.
 */
guint *rescue_repair_plan(const RescueData *data, guint *n);

/*
 * Where the undo file of a repair of image_path goes: the user's data
 * folder, lanyfs-tools/undo/NAME-YYYYmmdd-HHMMSS.lanyfs-undo ("-2", "-3", ...
 * before the suffix when that file exists).
 */
char *rescue_repair_undo_path_for(const char *image_path);

/*
 * Repair device, saving every block's old contents to undo_path (made with
 * its folder; an existing file is refused by the engine).  Synchronous;
 * progress (may be NULL) gets the fraction done and the pass.  Fails (NULL,
 * error set) only when the engine could not be started: the undo folder
 * cannot be made, no memory.  Everything else, a refused device too, is a
 * report with its status.
 */
RescueRepairReport *rescue_repair_run(const char *device, const char *undo_path,
                                      RescueProgress *progress, GError **error);

/* The same in a worker thread (a GTask). */
void rescue_repair_async(const char *device, const char *undo_path, RescueProgress *progress,
                         GAsyncReadyCallback callback, gpointer user_data);
RescueRepairReport *rescue_repair_finish(GAsyncResult *result, GError **error);

/* What the exit status means, translated: a heading and a sentence (g_free both). */
void rescue_repair_status_text(int status, char **heading, char **explanation);

/*
 * The closing paragraph of fsck's report, what was modified and the
 * counts, without the device name each line starts with and without the
 * undo file's line (the dialog says that in its own words).
 */
char *rescue_repair_report_summary(const RescueRepairReport *report);

/* The translated name of a progress pass (1..7) of the engine. */
const char *rescue_repair_pass_name(int pass);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RescueRepairReport, rescue_repair_report_free)

G_END_DECLS
