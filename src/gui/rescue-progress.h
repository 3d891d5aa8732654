/*
 * rescue-progress.h -- progress from a worker thread, reported on the main context.
 *
 * The worker posts its latest figures as often as it likes; the record
 * keeps only the latest and queues one idle report when none is waiting,
 * so the main loop sees at most one queued report however fast the worker
 * posts.  After rescue_progress_close (called on the main context, when the
 * work has finished) nothing more is reported, even from a report already
 * queued.  The fraction never goes back.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _RescueProgress RescueProgress;

/* Called on the main context with the fraction 0..1 and the latest text (may be NULL). */
typedef void (*RescueProgressFunc)(double fraction, const char *text, gpointer user_data);

/* Reports go to the thread-default main context of the caller. */
RescueProgress *rescue_progress_new(RescueProgressFunc func, gpointer user_data);
RescueProgress *rescue_progress_ref(RescueProgress *p);
void rescue_progress_unref(RescueProgress *p);
/* From any thread; text is copied (NULL keeps the last one). */
void rescue_progress_post(RescueProgress *p, double fraction, const char *text);
/* From the main context: report nothing more. */
void rescue_progress_close(RescueProgress *p);
/*
 * From the main context, when the work is done: deliver the report still
 * queued, if any, now, then close.  So the latest figures are always seen,
 * however late the main loop came to the queued report.
 */
void rescue_progress_finish(RescueProgress *p);
/* Reports delivered so far, and posts made (for the tests). */
guint rescue_progress_get_reports(RescueProgress *p);
guint64 rescue_progress_get_posts(RescueProgress *p);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RescueProgress, rescue_progress_unref)

G_END_DECLS
