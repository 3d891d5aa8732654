/*
 * rescue-scan-task.h -- scanning an image, or reading a scan database, off the main thread.
 *
 * rescue_scan_async runs the scanner (or the database reader) in a worker
 * thread of a GTask and hands back a sealed RescueData.  Progress is
 * reported on the caller's main context, never more than one report
 * queued at a time: the worker only records the latest figures and queues
 * a report when none is waiting, so a scanner that reports a million
 * times cannot flood the main loop.  Cancelling the GCancellable stops the
 * scanner at its next check (scan_opts.cancel); the task then fails with
 * G_IO_ERROR_CANCELLED.  No report arrives after the callback has run.
 */
#pragma once

#include <gio/gio.h>

#include "rescue-data.h"

G_BEGIN_DECLS

/* Called on the main context: fraction 0..1 (never going back), a translated phase. */
typedef void (*RescueScanProgressFunc)(double fraction, const char *phase, gpointer user_data);

/* What path is: an image, a block device or a scan database (by its first bytes). */
RescueSourceKind rescue_scan_detect_kind(const char *path);

void rescue_scan_async(const char *path, GCancellable *cancellable,
                       RescueScanProgressFunc progress, gpointer progress_data,
                       GAsyncReadyCallback callback, gpointer user_data);
/*
 * The same with the geometry given (blockbits 9..12 and addrlen 1..8, as
 * lanyfs scan --geometry): the image is read with it whatever block 0
 * says, the way to an earlier format on a stick formatted again.  Both 0:
 * rescue_scan_async.  A scan database ignores them.
 */
void rescue_scan_geometry_async(const char *path, unsigned blockbits, unsigned addrlen,
                                GCancellable *cancellable, RescueScanProgressFunc progress,
                                gpointer progress_data, GAsyncReadyCallback callback,
                                gpointer user_data);
RescueData *rescue_scan_finish(GAsyncResult *result, GError **error);

/* The translated name of a scan phase. */
const char *rescue_scan_phase_name(enum scan_phase phase);

G_END_DECLS
