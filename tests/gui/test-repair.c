/*
 * test-repair.c -- LanyFS Rescue's Repair, below the dialogs.
 *
 * Display-less.  A copy of RESCUE_TEST_IMAGE (made by make-image: three
 * files orphaned by a directory removed by hand) is scanned as the window
 * scans it, repaired through rescue_repair_async as the window repairs it
 * (the repair engine of src/fsck in a worker, progress on the main loop),
 * and scanned again: nothing is left to repair, the orphans are in
 * /lost+found, and the undo file exists.  RESCUE_TEST_LANYFS_UNDO, the
 * lanyfs-undo command, then puts the image back byte for byte.  Beside
 * that: a device that cannot be opened is an exit status with a message,
 * not a crash and not an undo file; an undo folder that cannot be made
 * fails before the engine runs.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "fsck.h"
#include "rescue-data.h"
#include "rescue-repair-task.h"
#include "rescue-scan-task.h"

typedef struct {
    RescueData *data;
    RescueRepairReport *report;
    GError *error;
    gboolean done;
    guint reports;
    double last;
    gboolean went_back;
} Run;

static void on_scan_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
    Run *run = user_data;

    (void)source;
    run->data = rescue_scan_finish(result, &run->error);
    run->done = TRUE;
}

static RescueData *scan(const char *path)
{
    Run run = {0};

    rescue_scan_async(path, NULL, NULL, NULL, on_scan_done, &run);
    while (!run.done)
        g_main_context_iteration(NULL, TRUE);
    g_assert_no_error(run.error);
    g_assert_nonnull(run.data);
    return run.data;
}

static void on_progress(double fraction, const char *text, gpointer user_data)
{
    Run *run = user_data;

    g_assert_nonnull(text);
    if (fraction < run->last)
        run->went_back = TRUE;
    run->last = fraction;
    run->reports++;
}

static void on_repair_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
    Run *run = user_data;

    (void)source;
    run->report = rescue_repair_finish(result, &run->error);
    run->done = TRUE;
}

/* Repair as the window does: in the worker, progress relayed to this main context. */
static RescueRepairReport *repair(const char *device, const char *undo, Run *run)
{
    g_autoptr(RescueProgress) relay = rescue_progress_new(on_progress, run);

    rescue_repair_async(device, undo, relay, on_repair_done, run);
    while (!run->done)
        g_main_context_iteration(NULL, TRUE);
    /* Reports are idle sources, below the task's: the one still queued arrives now. */
    rescue_progress_finish(relay);
    return run->report;
}

static guint32 find_path(RescueData *d, const char *path, guint8 state)
{
    for (guint32 id = 1; id <= rescue_data_get_n_entries(d); id++) {
        const RescueEntryInfo *e = rescue_data_get_entry(d, id);
        if (e->state == state && strcmp(e->path, path) == 0)
            return id;
    }
    return 0;
}

static char *copy_image(const char *dir)
{
    g_autofree char *bytes = NULL;
    gsize len = 0;
    char *copy = g_build_filename(dir, "stick.img", NULL);
    GError *error = NULL;

    g_assert_true(g_file_get_contents(g_getenv("RESCUE_TEST_IMAGE"), &bytes, &len, &error));
    g_assert_no_error(error);
    g_assert_true(g_file_set_contents(copy, bytes, (gssize)len, &error));
    g_assert_no_error(error);
    return copy;
}

static gboolean same_file(const char *a, const char *b)
{
    g_autofree char *x = NULL, *y = NULL;
    gsize nx = 0, ny = 0;

    g_assert_true(g_file_get_contents(a, &x, &nx, NULL));
    g_assert_true(g_file_get_contents(b, &y, &ny, NULL));
    return nx == ny && memcmp(x, y, nx) == 0;
}

static void remove_tree(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;

    if (d == NULL)
        return;
    while ((name = g_dir_read_name(d)) != NULL) {
        g_autofree char *p = g_build_filename(dir, name, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
            remove_tree(p);
        else
            g_unlink(p);
    }
    g_rmdir(dir);
}

static void test_repair_and_undo(void)
{
    g_autofree char *dir = g_dir_make_tmp("rescue-repair-XXXXXX", NULL);
    g_autofree char *image = copy_image(dir);
    g_autofree char *undo = g_build_filename(dir, "undo", "stick.lanyfs-undo", NULL);
    g_autofree guint *before = NULL;
    g_autofree guint *after = NULL;
    g_autofree char *summary = NULL;
    g_autofree char *heading = NULL;
    g_autofree char *explanation = NULL;
    guint n_before = 0, n_after = 0;
    Run run = {0};
    RescueRepairReport *report;
    const char *undo_cmd = g_getenv("RESCUE_TEST_LANYFS_UNDO");
    int wait_status = -1;
    GError *error = NULL;

    g_assert_nonnull(undo_cmd);

    /* Damaged: three orphans, each with a repair proposed. */
    {
        g_autoptr(RescueData) d = scan(image);
        before = rescue_repair_plan(d, &n_before);
        g_assert_cmpuint(n_before, >=, 3);
        g_assert_cmpuint(find_path(d, "/lost+found/one.txt", SCAN_ENTRY_LIVE), ==, 0);
    }

    report = repair(image, undo, &run);
    g_assert_no_error(run.error);
    g_assert_nonnull(report);
    g_assert_cmpint(report->status, ==, FSCK_EXIT_CORRECTED);
    g_assert_cmpstr(report->errors, ==, "");
    g_assert_nonnull(strstr(report->report, "Move it to /lost+found? yes"));
    summary = rescue_repair_report_summary(report);
    g_assert_nonnull(strstr(summary, "FILESYSTEM WAS MODIFIED"));
    g_assert_nonnull(strstr(summary, "3 entries moved to /lost+found"));
    g_assert_null(strstr(summary, "Pass 7"));
    g_assert_null(strstr(summary, "Undo file:"));
    g_assert_true(g_str_has_prefix(summary, "***** FILESYSTEM WAS MODIFIED *****\n"));
    rescue_repair_status_text(report->status, &heading, &explanation);
    g_assert_cmpstr(heading, ==, "Repaired");
    g_assert_nonnull(strstr(explanation, "Exit status 1"));
    g_assert_cmpstr(report->undo_path, ==, undo);
    g_assert_true(g_file_test(undo, G_FILE_TEST_IS_REGULAR));
    g_assert_cmpuint(run.reports, >=, 1);
    g_assert_false(run.went_back);
    rescue_repair_report_free(report);

    /* Clean: nothing left to repair, the orphans where the repair put them. */
    {
        g_autoptr(RescueData) d = scan(image);
        after = rescue_repair_plan(d, &n_after);
        g_assert_cmpuint(n_after, ==, 0);
        g_assert_cmpuint(find_path(d, "/lost+found/one.txt", SCAN_ENTRY_LIVE), !=, 0);
        g_assert_cmpuint(find_path(d, "/lost+found/three.txt", SCAN_ENTRY_LIVE), !=, 0);
    }
    g_assert_false(same_file(image, g_getenv("RESCUE_TEST_IMAGE")));

    /* The undo file takes it all back. */
    {
        const char *argv[] = {undo_cmd, undo, image, NULL};
        g_autofree char *out = NULL, *err = NULL;
        g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                                   &err, &wait_status, &error));
        g_assert_no_error(error);
        if (!g_spawn_check_wait_status(wait_status, NULL))
            g_test_message("lanyfs-undo: %s%s", out, err);
        g_assert_true(g_spawn_check_wait_status(wait_status, NULL));
    }
    g_assert_true(same_file(image, g_getenv("RESCUE_TEST_IMAGE")));
    {
        g_autoptr(RescueData) d = scan(image);
        g_autofree guint *again = NULL;
        guint n_again = 0;
        again = rescue_repair_plan(d, &n_again);
        g_assert_cmpuint(n_again, ==, n_before);
    }
    remove_tree(dir);
}

static void test_repair_refused(void)
{
    g_autofree char *dir = g_dir_make_tmp("rescue-repair-XXXXXX", NULL);
    g_autofree char *missing = g_build_filename(dir, "no-such.img", NULL);
    g_autofree char *undo = g_build_filename(dir, "missing.lanyfs-undo", NULL);
    g_autofree char *blocker = g_build_filename(dir, "a-file", NULL);
    g_autofree char *undo_under_file = g_build_filename(blocker, "x.lanyfs-undo", NULL);
    g_autofree char *heading = NULL;
    g_autofree char *explanation = NULL;
    Run run = {0};
    RescueRepairReport *report;
    GError *error = NULL;

    /* The engine runs and refuses: an operational error, said, nothing written. */
    report = repair(missing, undo, &run);
    g_assert_no_error(run.error);
    g_assert_nonnull(report);
    g_assert_cmpint(report->status & FSCK_EXIT_ERROR, !=, 0);
    g_assert_cmpint(report->status & FSCK_EXIT_CORRECTED, ==, 0);
    g_assert_nonnull(strstr(report->errors, "no-such.img"));
    g_assert_null(report->undo_path);
    g_assert_false(g_file_test(undo, G_FILE_TEST_EXISTS));
    rescue_repair_status_text(report->status, &heading, &explanation);
    g_assert_cmpstr(heading, ==, "Repair Failed");
    rescue_repair_report_free(report);

    /* The undo file has nowhere to go: the engine does not start. */
    g_assert_true(g_file_set_contents(blocker, "x", 1, NULL));
    report = rescue_repair_run(missing, undo_under_file, NULL, &error);
    g_assert_null(report);
    g_assert_nonnull(error);
    g_clear_error(&error);
    remove_tree(dir);
}

/* The undo file's default place: the user's data folder, never an existing file. */
static void test_undo_path(void)
{
    g_autofree char *folder = g_build_filename(g_get_user_data_dir(), "lanyfs-tools", "undo", NULL);
    g_autofree char *first = rescue_repair_undo_path_for("/media/stick.img");
    g_autofree char *dir = g_path_get_dirname(first);
    g_autofree char *base = g_path_get_basename(first);
    g_autofree char *second = NULL;

    g_assert_cmpstr(dir, ==, folder);
    g_assert_true(g_str_has_prefix(base, "stick.img-"));
    g_assert_true(g_str_has_suffix(base, ".lanyfs-undo"));
    g_assert_cmpint(g_mkdir_with_parents(folder, 0700), ==, 0);
    g_assert_true(g_file_set_contents(first, "", 0, NULL));
    second = rescue_repair_undo_path_for("/media/stick.img");
    g_assert_cmpstr(second, !=, first);
    g_assert_false(g_file_test(second, G_FILE_TEST_EXISTS));
    g_unlink(first);
}

static void test_status_text(void)
{
    static const struct {
        int status;
        const char *heading;
    } cases[] = {
        {FSCK_EXIT_OK, "Nothing Needed Repairing"},
        {FSCK_EXIT_CORRECTED, "Repaired"},
        {FSCK_EXIT_UNCORRECTED, "Not Repaired"},
        {FSCK_EXIT_CORRECTED | FSCK_EXIT_UNCORRECTED, "Partly Repaired"},
        {FSCK_EXIT_ERROR, "Repair Failed"},
        {FSCK_EXIT_CORRECTED | FSCK_EXIT_ERROR, "Repair Failed"},
        {FSCK_EXIT_CANCELLED, "Repair Cancelled"},
        {FSCK_EXIT_USAGE, "Repair Not Started"},
    };

    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *heading = NULL;
        g_autofree char *explanation = NULL;
        g_autofree char *code = g_strdup_printf("Exit status %d.", cases[i].status);
        rescue_repair_status_text(cases[i].status, &heading, &explanation);
        g_assert_cmpstr(heading, ==, cases[i].heading);
        g_assert_nonnull(strstr(explanation, code));
    }
}

int main(int argc, char **argv)
{
    g_autofree char *data_home = g_dir_make_tmp("rescue-repair-data-XXXXXX", NULL);
    int status;

    /* Before anything asks GLib for it: the user's data folder is a scratch one. */
    g_setenv("XDG_DATA_HOME", data_home, TRUE);
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/repair/repair-and-undo", test_repair_and_undo);
    g_test_add_func("/repair/refused", test_repair_refused);
    g_test_add_func("/repair/status-text", test_status_text);
    g_test_add_func("/repair/undo-path", test_undo_path);
    status = g_test_run();
    remove_tree(data_home);
    return status;
}
