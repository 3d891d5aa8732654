/*
 * rescue-salvage.c -- Salvage over the shared engine (rescue-salvage.h).
 *
 * The worker opens the image as `lanyfs salvage` does (read-only, also
 * when its superblock fails its checks), scans it, makes the new folder
 * and hands the three to salvage_run().  The scan takes the first part of
 * the progress bar, the bytes copied the rest.
 */
#define G_LOG_DOMAIN "rescue-salvage"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lanyfs.h"
#include "rescue-salvage.h"
#include "rescue-scan-task.h"
#include "salvage.h"
#include "scan.h"

/* The share of the bar the scan takes. */
#define SCAN_SHARE 0.2

void rescue_salvage_report_free(RescueSalvageReport *report)
{
    if (report == NULL)
        return;
    g_free(report->folder);
    g_ptr_array_unref(report->problems);
    g_free(report);
}

guint rescue_salvage_report_files(const RescueSalvageReport *report)
{
    g_return_val_if_fail(report != NULL, 0);
    return report->exact + report->partial + report->unrecoverable;
}

/* The new folder "<image>-salvage[-N]" inside dest, opened; -1 and error on failure. */
static int make_folder(const char *dest, RescueData *data, char **made, GError **error)
{
    g_autofree char *base = g_path_get_basename(rescue_data_get_image_path(data));
    g_autofree char *shown = g_filename_display_name(dest);
    int dest_fd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = -1;
    int saved;

    if (dest_fd < 0) {
        saved = errno;
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved),
                    _("Cannot open the folder “%s”: %s"), shown, g_strerror(saved));
        return -1;
    }
    for (guint k = 1; k < 1000; k++) {
        g_autofree char *name = k == 1 ? g_strdup_printf("%s-salvage", base)
                                       : g_strdup_printf("%s-salvage-%u", base, k);
        if (mkdirat(dest_fd, name, 0755) == 0) {
            fd = openat(dest_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0)
                *made = g_build_filename(dest, name, NULL);
            break;
        }
        if (errno != EEXIST)
            break;
    }
    saved = errno;
    if (fd < 0)
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved),
                    _("Cannot make a folder in “%s”: %s"), shown, g_strerror(saved));
    close(dest_fd);
    return fd;
}

/* The live path of an entry as the scan joins it: raw names under "/". */
static char *raw_path(RescueData *data, guint32 id)
{
    g_autofree guint32 *chain = NULL;
    guint n = 0;
    GString *p = g_string_new(NULL);

    chain = rescue_data_get_ancestry(data, id, &n);
    for (guint i = 0; i < n; i++) {
        const RescueEntryInfo *e = rescue_data_get_entry(data, chain[i]);
        g_string_append_c(p, '/');
        g_string_append_len(p, (const char *)e->raw_name, (gssize)e->raw_name_len);
    }
    if (p->len == 0)
        g_string_append_c(p, '/');
    return g_string_free(p, FALSE);
}

/*
 * What the engine is asked for: the live entries selected as paths, the
 * deleted and orphaned ones as entries of the rescan, found by their own
 * block and state (the scan shown may come from a database), the lost
 * trees by their top extender; with nothing selected, everything.  Returns
 * the paths; *entries gets the ids, *lost_tops the tops.
 */
static GPtrArray *selection(RescueData *data, const struct scan_result *scan, const guint32 *ids,
                            guint n, unsigned *flags, GArray *entries, GArray *lost_tops)
{
    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
    guint32 root = rescue_data_get_root(data);
    g_autoptr(GHashTable) by_block = NULL;

    if (n == 0) {
        *flags = SALVAGE_DELETED | SALVAGE_ORPHANS | SALVAGE_LOST;
        return paths;
    }
    *flags = 0;
    for (guint i = 0; i < n; i++) {
        const RescueEntryInfo *e = rescue_data_get_entry(data, ids[i]);
        if (e == NULL)
            continue;
        if (e->lost_only) {
            g_array_append_val(lost_tops, e->lost_top);
            continue;
        }
        if (e->state == SCAN_ENTRY_LIVE) {
            g_ptr_array_add(paths, ids[i] == root ? g_strdup("/") : raw_path(data, ids[i]));
            continue;
        }
        if (by_block == NULL) {
            const struct scan_entry *se;
            size_t ns = scan_entries(scan, &se);
            by_block = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
            for (size_t k = 0; k < ns; k++) {
                if (se[k].state == SCAN_ENTRY_LIVE)
                    continue;
                gint64 *key = g_new(gint64, 1);
                *key = (gint64)(se[k].block << 2 | (guint64)se[k].state);
                g_hash_table_insert(by_block, key, GUINT_TO_POINTER(se[k].id));
            }
        }
        gint64 key = (gint64)(e->block << 2 | (guint64)e->state);
        guint32 id = GPOINTER_TO_UINT(g_hash_table_lookup(by_block, &key));
        if (id != 0)
            g_array_append_val(entries, id);
    }
    return paths;
}

typedef struct {
    RescueProgress *progress;      /* may be NULL (borrowed) */
    volatile int cancel;           /* the engines' cancel flag */
    char *current;                 /* the last file done, shown (owned) */
    GMutex lock;                   /* guards current */
} Run;

static void on_cancelled(GCancellable *cancellable, gpointer user_data)
{
    Run *run = user_data;

    (void)cancellable;
    run->cancel = 1;
}

static void on_scan_progress(void *ctx, enum scan_phase phase, uint64_t done, uint64_t total)
{
    Run *run = ctx;

    if (run->progress != NULL)
        rescue_progress_post(run->progress,
                             SCAN_SHARE * (total > 0 ? (double)MIN(done, total) / total : 0),
                             rescue_scan_phase_name(phase));
}

static void on_salvage_progress(void *ctx, uint64_t done, uint64_t total)
{
    Run *run = ctx;
    g_autofree char *text = NULL;

    if (run->progress == NULL)
        return;
    g_mutex_lock(&run->lock);
    text = g_strdup(run->current);
    g_mutex_unlock(&run->lock);
    rescue_progress_post(run->progress,
                         SCAN_SHARE + (1 - SCAN_SHARE) *
                                          (total > 0 ? (double)MIN(done, total) / total : 1),
                         text);
}

static void on_item(void *ctx, const struct salvage_item *it)
{
    Run *run = ctx;

    g_mutex_lock(&run->lock);
    g_free(run->current);
    run->current = g_strdup(it->source);
    g_mutex_unlock(&run->lock);
}

static void fill_report(RescueSalvageReport *report, const struct salvage_result *res)
{
    struct salvage_totals t;
    const struct salvage_item *items;
    const char *const *problems;
    size_t n;

    salvage_get_totals(res, &t);
    report->exact = (guint)t.exact;
    report->partial = (guint)t.partial;
    report->unrecoverable = (guint)t.unrecoverable;
    report->not_written = (guint)(t.skipped + t.failed);
    report->dirs = (guint)t.dirs;
    report->bytes = t.bytes;
    report->recovered = t.recovered;
    n = salvage_items(res, &items);
    for (size_t i = 0; i < n; i++) {
        const struct salvage_item *it = &items[i];
        if (it->status == SALVAGE_EXACT)
            continue;
        /* As `lanyfs salvage` prints them: "partial /a/b -> files/a/b: why". */
        g_ptr_array_add(report->problems,
                        g_strdup_printf("%s %s → %s%s%s", salvage_status_name(it->status),
                                        it->source, it->output != NULL ? it->output : "?",
                                        it->note != NULL ? ": " : "",
                                        it->note != NULL ? it->note : ""));
    }
    n = salvage_problems(res, &problems);
    for (size_t i = 0; i < n; i++)
        g_ptr_array_add(report->problems, g_strdup(problems[i]));
}

RescueSalvageReport *rescue_salvage_run(RescueData *data, const guint32 *ids, guint n,
                                        const char *dest, RescueProgress *progress,
                                        GCancellable *cancellable, GError **error)
{
    const char *image = rescue_data_get_image_path(data);
    g_autofree char *shown = NULL;
    g_autoptr(GPtrArray) paths = NULL;
    struct lanyfs_fs *fs = NULL;
    struct scan_result *scan = NULL;
    struct salvage_result *res = NULL;
    struct lanyfs_error err = {0};
    struct scan_opts so = {0};
    struct salvage_opts opts = {0};
    RescueSalvageReport *report = NULL;
    Run run = {0};
    gulong cancel_id = 0;
    unsigned flags = 0;
    g_autoptr(GArray) entries = NULL;
    g_autoptr(GArray) lost_tops = NULL;
    int outfd = -1;
    enum lanyfs_err rc;

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(ids != NULL || n == 0, NULL);
    g_return_val_if_fail(dest != NULL, NULL);
    g_return_val_if_fail(error == NULL || *error == NULL, NULL);

    shown = g_filename_display_basename(image);
    run.progress = progress;
    g_mutex_init(&run.lock);
    if (cancellable != NULL)
        cancel_id = g_cancellable_connect(cancellable, G_CALLBACK(on_cancelled), &run, NULL);

    if (lanyfs_fs_open(image, LANYFS_OPEN_FORCE | LANYFS_OPEN_BAD0, &fs, &err) != LANYFS_OK) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot open “%s”: %s"), shown,
                    err.msg);
        goto out;
    }
    so.progress = on_scan_progress;
    so.progress_ctx = &run;
    so.cancel = &run.cancel;
    /* Read as the scan shown was: with the geometry given (--geometry), if it was. */
    const struct scan_result *shown_scan = rescue_data_get_scan_result(data);
    if (shown_scan != NULL && scan_geom_given(shown_scan) && scan_geom(shown_scan) != NULL) {
        so.blocksize = scan_geom(shown_scan)->blocksize;
        so.addrlen = scan_geom(shown_scan)->addrlen;
    }
    rc = scan_fs(fs, &so, &scan, &err);
    if (g_cancellable_set_error_if_cancelled(cancellable, error))
        goto out;
    if (rc != LANYFS_OK) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot scan “%s”: %s"), shown,
                    err.msg[0] ? err.msg : lanyfs_strerror(rc));
        goto out;
    }

    report = g_new0(RescueSalvageReport, 1);
    report->problems = g_ptr_array_new_with_free_func(g_free);
    outfd = make_folder(dest, data, &report->folder, error);
    if (outfd < 0)
        goto out_report;

    entries = g_array_new(FALSE, FALSE, sizeof(guint32));
    lost_tops = g_array_new(FALSE, FALSE, sizeof(guint64));
    paths = selection(data, scan, ids, n, &flags, entries, lost_tops);
    if (n > 0 && paths->len == 0 && entries->len == 0 && lost_tops->len == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    _("The selected entries are no longer in “%s”: scan it again."), shown);
        goto out_report;
    }
    opts.flags = flags;
    opts.paths = (const char *const *)paths->pdata;
    opts.npaths = paths->len;
    opts.entries = (const uint32_t *)(void *)entries->data;
    opts.nentries = entries->len;
    opts.lost_tops = (const uint64_t *)(void *)lost_tops->data;
    opts.nlost_tops = lost_tops->len;
    opts.progress = on_salvage_progress;
    opts.progress_ctx = &run;
    opts.on_item = on_item;
    opts.item_ctx = &run;
    opts.cancel = &run.cancel;
    opts.image_name = image;
    rc = salvage_run(scan, fs, outfd, &opts, &res, &err);
    if (g_cancellable_set_error_if_cancelled(cancellable, error))
        goto out_report;
    if (rc != LANYFS_OK) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Salvage into “%s” stopped: %s"),
                    report->folder, err.msg);
        goto out_report;
    }
    fill_report(report, res);
    goto out;

out_report:
    rescue_salvage_report_free(report);
    report = NULL;
out:
    if (outfd >= 0)
        close(outfd);
    salvage_result_free(res);
    scan_result_free(scan);
    if (fs != NULL)
        lanyfs_fs_close(fs);
    if (cancel_id != 0)
        g_cancellable_disconnect(cancellable, cancel_id);
    g_free(run.current);
    g_mutex_clear(&run.lock);
    return report;
}

typedef struct {
    RescueData *data;          /* owned reference */
    guint32 *ids;              /* owned */
    guint n;
    char *dest;                /* owned */
    RescueProgress *progress;  /* owned reference, may be NULL */
} Job;

static void job_free(gpointer p)
{
    Job *job = p;

    rescue_data_unref(job->data);
    g_free(job->ids);
    g_free(job->dest);
    if (job->progress != NULL)
        rescue_progress_unref(job->progress);
    g_free(job);
}

static void salvage_thread(GTask *task, gpointer source_object, gpointer task_data,
                           GCancellable *cancellable)
{
    Job *job = task_data;
    GError *error = NULL;
    RescueSalvageReport *report;

    (void)source_object;
    report = rescue_salvage_run(job->data, job->ids, job->n, job->dest, job->progress,
                                cancellable, &error);
    if (report == NULL)
        g_task_return_error(task, error);
    else
        g_task_return_pointer(task, report, (GDestroyNotify)rescue_salvage_report_free);
}

void rescue_salvage_async(RescueData *data, const guint32 *ids, guint n, const char *dest,
                          RescueProgress *progress, GCancellable *cancellable,
                          GAsyncReadyCallback callback, gpointer user_data)
{
    g_autoptr(GTask) task = NULL;
    Job *job;

    g_return_if_fail(data != NULL);
    g_return_if_fail(dest != NULL);

    job = g_new0(Job, 1);
    job->data = rescue_data_ref(data);
    job->ids = n > 0 ? g_memdup2(ids, (gsize)n * sizeof(guint32)) : NULL;
    job->n = n;
    job->dest = g_strdup(dest);
    job->progress = progress != NULL ? rescue_progress_ref(progress) : NULL;
    task = g_task_new(NULL, cancellable, callback, user_data);
    g_task_set_source_tag(task, rescue_salvage_async);
    g_task_set_name(task, "[rescue] salvage");
    g_task_set_task_data(task, job, job_free);
    g_task_run_in_thread(task, salvage_thread);
}

RescueSalvageReport *rescue_salvage_finish(GAsyncResult *result, GError **error)
{
    g_return_val_if_fail(g_task_is_valid(result, NULL), NULL);
    return g_task_propagate_pointer(G_TASK(result), error);
}
