/*
 * rescue-repair-task.c -- the repair engine in a worker thread (rescue-repair-task.h).
 *
 * The worker fills a struct fsck_opts as `fsck-lanyfs -y -z UNDO -C FD`
 * would, with the report and the error messages going to memory streams
 * and FD the write end of a pipe.  A reader thread turns the progress
 * lines into posts until the engine has returned and the write end is
 * closed; it never stops reading early, so the engine's writes can
 * neither block for ever nor fail.
 */
#define G_LOG_DOMAIN "rescue-repair"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fsck.h"
#include "problem.h"
#include "rescue-repair-task.h"

/* The engine's progress passes (progress.c). */
#define REPAIR_PASSES 7

void rescue_repair_report_free(RescueRepairReport *report)
{
    if (report == NULL)
        return;
    g_free(report->device);
    g_free(report->report);
    g_free(report->errors);
    g_free(report->undo_path);
    g_free(report);
}

guint *rescue_repair_plan(const RescueData *data, guint *n)
{
    GArray *plan = g_array_new(FALSE, FALSE, sizeof(guint));

    g_return_val_if_fail(data != NULL && n != NULL, NULL);

    for (guint i = 0; i < rescue_data_get_n_findings(data); i++) {
        const RescueFindingInfo *f = rescue_data_get_finding(data, i);
        const struct scan_problem_info *row = scan_problem_lookup(f->code);

        if (row != NULL && row->repair != NULL && row->repair[0] != '\0' &&
            !(row->flags & (SCAN_PF_NO_REPAIR | SCAN_PF_RETIRED)))
            g_array_append_val(plan, i);
    }
    *n = plan->len;
    return (guint *)g_array_free(plan, FALSE);
}

char *rescue_repair_undo_path_for(const char *image_path)
{
    g_autofree char *base = NULL;
    g_autoptr(GDateTime) now = g_date_time_new_now_local();
    g_autofree char *stamp = g_date_time_format(now, "%Y%m%d-%H%M%S");
    g_autofree char *name = NULL;

    g_return_val_if_fail(image_path != NULL, NULL);

    base = g_path_get_basename(image_path);
    /* Never an existing file: the engine refuses to replace one. */
    for (guint k = 1;; k++) {
        char *path;
        g_free(name);
        name = k == 1 ? g_strdup_printf("%s-%s.lanyfs-undo", base, stamp)
                      : g_strdup_printf("%s-%s-%u.lanyfs-undo", base, stamp, k);
        path = g_build_filename(g_get_user_data_dir(), "lanyfs-tools", "undo", name, NULL);
        if (!g_file_test(path, G_FILE_TEST_EXISTS) || k >= 1000)
            return path;
        g_free(path);
    }
}

const char *rescue_repair_pass_name(int pass)
{
    switch (pass) {
    case 1:
        return _("Checking the superblock");
    case 2:
        return _("Checking the directory trees and files");
    case 3:
        return _("Checking the free list");
    case 4:
        return _("Sweeping every block");
    case 5:
        return _("Analysing what was found");
    case 6:
        return _("Writing the repairs");
    case 7:
        return _("Checking the result");
    default:
        return _("Repairing");
    }
}

/* ---- progress: the engine's -C FD lines ------------------------------------------ */

typedef struct {
    int fd;                        /* the read end (owned) */
    RescueProgress *progress;      /* may be NULL (borrowed) */
} Reader;

static void post_line(Reader *rd, const char *line)
{
    int pass = 0;
    guint64 done = 0, total = 0;
    double fraction;

    if (rd->progress == NULL ||
        sscanf(line, "%d %" SCNu64 " %" SCNu64, &pass, &done, &total) != 3 || pass < 1 ||
        pass > REPAIR_PASSES)
        return;
    fraction = (pass - 1 + (total > 0 ? (double)MIN(done, total) / (double)total : 0.0)) /
               REPAIR_PASSES;
    rescue_progress_post(rd->progress, fraction, rescue_repair_pass_name(pass));
}

static gpointer reader_thread(gpointer user_data)
{
    Reader *rd = user_data;
    char buf[4096];
    GString *line = g_string_new(NULL);

    for (;;) {
        ssize_t got = read(rd->fd, buf, sizeof(buf));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] == '\n') {
                post_line(rd, line->str);
                g_string_truncate(line, 0);
            } else if (line->len < 512) {
                g_string_append_c(line, buf[i]);
            }
        }
    }
    g_string_free(line, TRUE);
    return NULL;
}

/* ---- the run ------------------------------------------------------------------------ */

static char *valid_text(char *bytes, size_t len)
{
    char *text = g_utf8_make_valid(bytes != NULL ? bytes : "", bytes != NULL ? (gssize)len : 0);

    free(bytes);
    return text;
}

RescueRepairReport *rescue_repair_run(const char *device, const char *undo_path,
                                      RescueProgress *progress, GError **error)
{
    g_autofree char *undo_dir = NULL;
    struct fsck_opts o = {0};
    char *out_buf = NULL, *err_buf = NULL;
    size_t out_len = 0, err_len = 0;
    FILE *out = NULL, *errout = NULL;
    int fds[2] = {-1, -1};
    Reader rd = {-1, progress};
    GThread *reader = NULL;
    RescueRepairReport *report = NULL;
    int status;

    g_return_val_if_fail(device != NULL, NULL);
    g_return_val_if_fail(undo_path != NULL, NULL);

    undo_dir = g_path_get_dirname(undo_path);
    if (g_mkdir_with_parents(undo_dir, 0700) != 0) {
        int saved = errno;
        g_autofree char *shown = g_filename_display_name(undo_dir);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved),
                    _("Cannot make the folder for the undo file, %s: %s"), shown,
                    g_strerror(saved));
        return NULL;
    }
    out = open_memstream(&out_buf, &out_len);
    errout = open_memstream(&err_buf, &err_len);
    if (out == NULL || errout == NULL) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, g_strerror(errno));
        goto out_streams;
    }
    if (!g_unix_open_pipe(fds, FD_CLOEXEC, error))
        goto out_streams;
    rd.fd = fds[0];
    /* A first report, so that the text is never unset, even when the engine refuses at once. */
    if (progress != NULL)
        rescue_progress_post(progress, 0.0, rescue_repair_pass_name(1));
    reader = g_thread_new("rescue-repair-progress", reader_thread, &rd);

    o.mode = FSCK_MODE_YES;
    o.progress_fd = fds[1];
    o.undo_path = undo_path;
    o.device = device;
    o.out = out;
    o.errout = errout;
    status = fsck_run(&o);

    /* The engine has returned: the reader sees the end of the pipe and stops. */
    close(fds[1]);
    g_thread_join(reader);
    close(fds[0]);
    if (progress != NULL)
        rescue_progress_post(progress, 1.0, NULL);

    fclose(out);
    fclose(errout);
    out = errout = NULL;
    report = g_new0(RescueRepairReport, 1);
    report->status = status;
    report->device = g_strdup(device);
    report->report = valid_text(out_buf, out_len);
    report->errors = valid_text(err_buf, err_len);
    out_buf = err_buf = NULL;
    if (g_file_test(undo_path, G_FILE_TEST_EXISTS))
        report->undo_path = g_strdup(undo_path);
    return report;

out_streams:
    if (out != NULL)
        fclose(out);
    if (errout != NULL)
        fclose(errout);
    free(out_buf);
    free(err_buf);
    return NULL;
}

typedef struct {
    char *device;              /* owned */
    char *undo_path;           /* owned */
    RescueProgress *progress;  /* owned reference, may be NULL */
} Job;

static void job_free(gpointer p)
{
    Job *job = p;

    g_free(job->device);
    g_free(job->undo_path);
    if (job->progress != NULL)
        rescue_progress_unref(job->progress);
    g_free(job);
}

static void repair_thread(GTask *task, gpointer source_object, gpointer task_data,
                          GCancellable *cancellable)
{
    Job *job = task_data;
    GError *error = NULL;
    RescueRepairReport *report;

    (void)source_object;
    (void)cancellable;
    report = rescue_repair_run(job->device, job->undo_path, job->progress, &error);
    if (report == NULL)
        g_task_return_error(task, error);
    else
        g_task_return_pointer(task, report, (GDestroyNotify)rescue_repair_report_free);
}

void rescue_repair_async(const char *device, const char *undo_path, RescueProgress *progress,
                         GAsyncReadyCallback callback, gpointer user_data)
{
    g_autoptr(GTask) task = NULL;
    Job *job;

    g_return_if_fail(device != NULL);
    g_return_if_fail(undo_path != NULL);

    job = g_new0(Job, 1);
    job->device = g_strdup(device);
    job->undo_path = g_strdup(undo_path);
    job->progress = progress != NULL ? rescue_progress_ref(progress) : NULL;
    task = g_task_new(NULL, NULL, callback, user_data);
    g_task_set_source_tag(task, rescue_repair_async);
    g_task_set_name(task, "[rescue] repair");
    g_task_set_task_data(task, job, job_free);
    g_task_run_in_thread(task, repair_thread);
}

RescueRepairReport *rescue_repair_finish(GAsyncResult *result, GError **error)
{
    g_return_val_if_fail(g_task_is_valid(result, NULL), NULL);
    g_return_val_if_fail(g_task_get_source_tag(G_TASK(result)) == rescue_repair_async, NULL);

    return g_task_propagate_pointer(G_TASK(result), error);
}

/* ---- explaining the outcome ------------------------------------------------------- */

void rescue_repair_status_text(int status, char **heading, char **explanation)
{
    const char *h;
    const char *e;

    g_return_if_fail(heading != NULL && explanation != NULL);

    if (status & FSCK_EXIT_USAGE) {
        h = _("Repair Not Started");
        e = _("The repair engine refused its options. This is a bug in LanyFS Rescue.");
    } else if (status & FSCK_EXIT_ERROR) {
        h = _("Repair Failed");
        e = (status & FSCK_EXIT_CORRECTED)
                ? _("Some repairs were written, then the repair stopped on an error. "
                    "Running it again continues from where it stopped.")
                : _("The repair could not run; nothing was changed. The messages below say "
                    "why.");
    } else if (status & FSCK_EXIT_CANCELLED) {
        h = _("Repair Cancelled");
        e = _("The repair was stopped before it finished.");
    } else if (status & FSCK_EXIT_UNCORRECTED) {
        h = (status & FSCK_EXIT_CORRECTED) ? _("Partly Repaired") : _("Not Repaired");
        e = _("Some problems are beyond what this version can repair. Salvage what you need "
              "from the stick.");
    } else if (status & (FSCK_EXIT_CORRECTED | FSCK_EXIT_REBOOT)) {
        h = _("Repaired");
        e = _("Every problem found was repaired, and a check afterwards found none left.");
    } else {
        h = _("Nothing Needed Repairing");
        e = _("The check found no problem to repair.");
    }
    *heading = g_strdup(h);
    /* TRANSLATORS: an explanation, then the exit status of fsck-lanyfs */
    *explanation = g_strdup_printf(_("%s (Exit status %d.)"), e, status);
}

/* fsck's line naming the undo file, in English or in the user's language. */
static gboolean is_undo_line(const char *line)
{
    /* The engine's own words (src/fsck/driver.c), translated the same way. */
    const char *words = _("Undo file: %s (restore with: lanyfs-undo %s %s)\n");
    const char *cut = strstr(words, "%s");

    return g_str_has_prefix(line, "Undo file: ") ||
           (cut != NULL && cut > words && strncmp(line, words, (size_t)(cut - words)) == 0);
}

char *rescue_repair_report_summary(const RescueRepairReport *report)
{
    g_autofree char *text = NULL;
    g_autofree char *prefix = NULL;
    g_auto(GStrv) lines = NULL;
    const char *last;
    GString *out = g_string_new(NULL);

    g_return_val_if_fail(report != NULL, NULL);

    text = g_strstrip(g_strdup(report->report));
    last = g_strrstr(text, "\n\n");
    lines = g_strsplit(last != NULL ? last + 2 : text, "\n", -1);
    /* The lines name the device first ("stick.img: ..."): the dialog names it already. */
    prefix = g_strconcat(report->device, ": ", NULL);
    for (guint i = 0; lines[i] != NULL; i++) {
        const char *line = lines[i];
        /* The dialog says how to undo in its own words. */
        if (is_undo_line(line))
            continue;
        if (g_str_has_prefix(line, prefix))
            line += strlen(prefix);
        if (out->len > 0)
            g_string_append_c(out, '\n');
        g_string_append(out, line);
    }
    return g_string_free(out, FALSE);
}
