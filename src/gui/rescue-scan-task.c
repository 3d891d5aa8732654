/*
 * rescue-scan-task.c -- the scan in a worker thread (rescue-scan-task.h).
 *
 * Progress goes through a RescueProgress (coalesced idle reports); the
 * finish callback delivers the report still queued and closes it before
 * passing the result on, on the same main context, so that no report
 * follows the result and the last figures are never lost.
 */
#define G_LOG_DOMAIN "rescue-scan-task"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rescue-data-scan.h"
#include "rescue-data-store.h"
#include "rescue-progress.h"
#include "rescue-scan-task.h"

typedef struct {
    char *path;                       /* what to open (owned) */
    unsigned blockbits, addrlen;      /* a geometry given (scan_opts), 0 = none */
    RescueProgress *progress;         /* shared with the main context (owned reference) */
    volatile int cancel;              /* scan_opts.cancel, set when the cancellable fires */
    GCancellable *cancellable;        /* the caller's, NULL when none (owned reference) */
    gulong cancel_id;                 /* the cancellable's handler */
    GAsyncReadyCallback callback;     /* the caller's */
    gpointer user_data;               /* the caller's */
} Job;

const char *rescue_scan_phase_name(enum scan_phase phase)
{
    switch (phase) {
    case SCAN_PHASE_SUPER:
        return _("Reading the superblock");
    case SCAN_PHASE_TREE:
        return _("Walking the directory trees");
    case SCAN_PHASE_FREE:
        return _("Walking the free list");
    case SCAN_PHASE_SWEEP:
        return _("Sweeping every block");
    case SCAN_PHASE_ANALYSE:
        return _("Analysing what was found");
    case SCAN_PHASE_DONE:
        return _("Finishing");
    }
    return "";
}

/*
 * Where each phase sits in the bar.  The scanner walks the free list
 * before the trees; the bar follows the order it really runs in.
 */
static void phase_span(enum scan_phase phase, double *start, double *width)
{
    switch (phase) {
    case SCAN_PHASE_SUPER:
        *start = 0.00, *width = 0.02;
        return;
    case SCAN_PHASE_FREE:
        *start = 0.02, *width = 0.08;
        return;
    case SCAN_PHASE_TREE:
        *start = 0.10, *width = 0.35;
        return;
    case SCAN_PHASE_SWEEP:
        *start = 0.45, *width = 0.45;
        return;
    case SCAN_PHASE_ANALYSE:
        *start = 0.90, *width = 0.08;
        return;
    case SCAN_PHASE_DONE:
        *start = 0.98, *width = 0.0;
        return;
    }
    *start = 0, *width = 0;
}

static void on_scan_progress(void *ctx, enum scan_phase phase, uint64_t done, uint64_t total)
{
    Job *job = ctx;
    double start, width;

    phase_span(phase, &start, &width);
    rescue_progress_post(job->progress,
                         start + (total > 0 ? width * (double)MIN(done, total) / (double)total : 0),
                         rescue_scan_phase_name(phase));
}

static void on_store_progress(gpointer ctx, double fraction)
{
    Job *job = ctx;

    rescue_progress_post(job->progress, fraction * 0.98, _("Reading the scan database"));
}

static void on_cancelled(GCancellable *cancellable, gpointer user_data)
{
    Job *job = user_data;

    (void)cancellable;
    job->cancel = 1;
}

RescueSourceKind rescue_scan_detect_kind(const char *path)
{
    static const char sqlite_magic[16] = "SQLite format 3";
    char head[16] = {0};
    struct stat st;
    int fd;
    ssize_t got;

    g_return_val_if_fail(path != NULL, RESCUE_SOURCE_NONE);

    if (g_stat(path, &st) == 0 && S_ISBLK(st.st_mode))
        return RESCUE_SOURCE_DEVICE;
    fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return g_str_has_suffix(path, ".db") ? RESCUE_SOURCE_DATABASE : RESCUE_SOURCE_IMAGE;
    got = read(fd, head, sizeof(head));
    close(fd);
    if (got == (ssize_t)sizeof(head) && memcmp(head, sqlite_magic, sizeof(head)) == 0)
        return RESCUE_SOURCE_DATABASE;
    return RESCUE_SOURCE_IMAGE;
}

static void scan_thread(GTask *task, gpointer source_object, gpointer task_data,
                        GCancellable *cancellable)
{
    Job *job = task_data;
    RescueSourceKind kind = rescue_scan_detect_kind(job->path);
    RescueData *data;
    g_autofree char *display = g_filename_display_basename(job->path);

    (void)source_object;
    if (kind == RESCUE_SOURCE_DATABASE) {
        GError *error = NULL;
        rescue_progress_post(job->progress, 0, _("Reading the scan database"));
        data = rescue_data_new_from_store(job->path, 0, on_store_progress, job,
                                          cancellable, &error);
        if (data == NULL) {
            g_task_return_error(task, error);
            return;
        }
    } else {
        struct scan_opts opts = {0};
        struct scan_result *result = NULL;
        struct lanyfs_error err = {0};
        enum lanyfs_err rc;

        opts.progress = on_scan_progress;
        opts.progress_ctx = job;
        if (job->blockbits != 0) {
            opts.blocksize = (uint32_t)1 << job->blockbits;
            opts.addrlen = job->addrlen;
        }
        opts.cancel = &job->cancel;
        rescue_progress_post(job->progress, 0, rescue_scan_phase_name(SCAN_PHASE_SUPER));
        rc = scan_image(job->path, &opts, &result, &err);
        if (rc != LANYFS_OK) {
            if (g_cancellable_is_cancelled(cancellable)) {
                g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                        _("The scan was cancelled"));
            } else if (err.sys_errno == EACCES || err.sys_errno == EPERM) {
                g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                                        _("You may not read “%s”: %s"), display, err.msg);
            } else {
                g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_FAILED,
                                        _("Cannot scan “%s”: %s"), display,
                                        err.msg[0] ? err.msg : lanyfs_strerror(rc));
            }
            return;
        }
        rescue_progress_post(job->progress, 0.99, rescue_scan_phase_name(SCAN_PHASE_DONE));
        data = rescue_data_new_from_scan(result, kind, job->path);
    }
    if (g_task_return_error_if_cancelled(task)) {
        rescue_data_unref(data);
        return;
    }
    g_task_return_pointer(task, data, (GDestroyNotify)rescue_data_unref);
}

static void job_free(gpointer p)
{
    Job *job = p;

    if (job->cancel_id != 0)
        g_cancellable_disconnect(job->cancellable, job->cancel_id);
    g_clear_object(&job->cancellable);
    rescue_progress_unref(job->progress);
    g_free(job->path);
    g_free(job);
}

/* On the main context: close the record so that no report follows, then pass it on. */
static void scan_done(GObject *source_object, GAsyncResult *result, gpointer user_data)
{
    Job *job = g_task_get_task_data(G_TASK(result));

    (void)user_data;
    rescue_progress_finish(job->progress);
    if (job->callback != NULL)
        job->callback(source_object, result, job->user_data);
}

void rescue_scan_async(const char *path, GCancellable *cancellable,
                       RescueScanProgressFunc progress, gpointer progress_data,
                       GAsyncReadyCallback callback, gpointer user_data)
{
    rescue_scan_geometry_async(path, 0, 0, cancellable, progress, progress_data, callback,
                               user_data);
}

void rescue_scan_geometry_async(const char *path, unsigned blockbits, unsigned addrlen,
                                GCancellable *cancellable, RescueScanProgressFunc progress,
                                gpointer progress_data, GAsyncReadyCallback callback,
                                gpointer user_data)
{
    g_autoptr(GTask) task = NULL;
    Job *job;

    g_return_if_fail(path != NULL);
    g_return_if_fail(cancellable == NULL || G_IS_CANCELLABLE(cancellable));

    job = g_new0(Job, 1);
    job->path = g_strdup(path);
    job->blockbits = blockbits;
    job->addrlen = addrlen;
    job->progress = rescue_progress_new(progress, progress_data);
    job->callback = callback;
    job->user_data = user_data;
    job->cancellable = cancellable != NULL ? g_object_ref(cancellable) : NULL;
    if (cancellable != NULL)
        job->cancel_id = g_cancellable_connect(cancellable, G_CALLBACK(on_cancelled), job,
                                               NULL);

    task = g_task_new(NULL, cancellable, scan_done, NULL);
    g_task_set_source_tag(task, rescue_scan_geometry_async);
    g_task_set_name(task, "[rescue] scan");
    g_task_set_task_data(task, job, job_free);
    g_task_run_in_thread(task, scan_thread);
}

RescueData *rescue_scan_finish(GAsyncResult *result, GError **error)
{
    g_return_val_if_fail(g_task_is_valid(result, NULL), NULL);
    g_return_val_if_fail(g_task_get_source_tag(G_TASK(result)) == rescue_scan_geometry_async, NULL);

    return g_task_propagate_pointer(G_TASK(result), error);
}
