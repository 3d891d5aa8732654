/*
 * rescue-smoke.c -- the application's smoke test (rescue-smoke.h).
 *
 * The test is a little state machine on the main loop: each step changes
 * what the window shows, then waits (polling every 50 ms) until the
 * details pane has finished reading and a few frames have been drawn,
 * then checks and photographs.  Nothing here reaches into a view further
 * than its public functions and the window's private header.
 *
 * Stalls are measured per step (stall-in-<step>-ms, the work of the
 * screenshots forgiven) and for the scans: the first one includes the
 * window's first layout of the results page, the rescan (F5) at the end
 * measures a scan whose results replace shown ones.
 */
#define G_LOG_DOMAIN "rescue-smoke"

#include "config.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "lanyfs.h"
#include "rescue-block-map.h"
#include "rescue-geometry-dialog.h"
#include "rescue-repair.h"
#include "rescue-smoke.h"
#include "rescue-window-private.h"

#define WATCHDOG_SECONDS 120
#define SETTLE_MS 400

typedef enum {
    STEP_FILES,
    STEP_FINDINGS,
    STEP_MAP,
    STEP_SEARCH,
    STEP_REPAIR,
    STEP_OUTCOME,
    STEP_SALVAGE,
    STEP_EXPORT,
    STEP_RESCAN,
    STEP_EARLIER,
    STEP_DONE,
} Step;

static const char *const step_names[] = {"files",   "findings", "map",    "search",
                                         "repair",  "outcome",  "salvage", "export",
                                         "rescan",  "earlier", "done"};

typedef struct {
    RescueWindow *window;             /* owned reference */
    char *folder;                     /* where screenshots go (owned) */
    char *image;                      /* what to scan (owned) */
    void (*done)(int status, gpointer user_data);
    gpointer user_data;
    Step step;                        /* the step being settled */
    guint failures;                   /* checks that failed */
    guint earlier;                    /* STEP_EARLIER: scans of the earlier image finished */
    guint watchdog;                   /* source id */
    guint poll;                       /* source id */
    gint64 settle_since;              /* when the step's changes were made */
    RescueStallMeter *drive_stall;    /* main-loop lateness while the views are driven */
    guint frames;                     /* frames drawn before the scan starts */
    gint64 drive_max;                 /* longest stall of any step */
    AdwMessageDialog *dialog;         /* the dialog the step shows, NULL when none (owned) */
    gboolean repairs;                 /* the scan proposes repairs */
    char *undo_path;                  /* the repair's undo file (owned) */
} Smoke;

static void check(Smoke *s, gboolean ok, const char *what)
{
    g_print("%s: %s\n", ok ? "ok" : "FAIL", what);
    if (!ok)
        s->failures++;
}

static void finish(Smoke *s, int status)
{
    if (s->watchdog != 0)
        g_source_remove(s->watchdog);
    if (s->poll != 0)
        g_source_remove(s->poll);
    s->watchdog = s->poll = 0;
    if (s->dialog != NULL)
        gtk_window_destroy(GTK_WINDOW(s->dialog));
    g_clear_object(&s->dialog);
    if (s->drive_stall != NULL) {
        g_print("stall-while-driving-ms: %.1f\n", s->drive_max / 1000.0);
        rescue_stall_meter_free(s->drive_stall);
    }
    g_print("smoke-test: %s\n", status == 0 ? "passed" : "FAILED");
    s->done(status, s->user_data);
    g_object_unref(s->window);
    g_free(s->folder);
    g_free(s->image);
    g_free(s->undo_path);
    g_free(s);
}

static gboolean on_watchdog(gpointer user_data)
{
    Smoke *s = user_data;

    s->watchdog = 0;
    g_print("FAIL: the smoke test did not finish within %d seconds\n", WATCHDOG_SECONDS);
    finish(s, 1);
    return G_SOURCE_REMOVE;
}

/* Photograph the window, or the window of the dialog the step shows. */
static gboolean screenshot(Smoke *s, const char *name)
{
    GtkWidget *widget = s->dialog != NULL ? GTK_WIDGET(s->dialog) : GTK_WIDGET(s->window);
    int w = gtk_widget_get_width(widget);
    int h = gtk_widget_get_height(widget);
    g_autoptr(GdkPaintable) paintable = NULL;
    GtkSnapshot *snapshot;
    g_autoptr(GskRenderNode) node = NULL;
    g_autoptr(GdkTexture) texture = NULL;
    GskRenderer *renderer;
    g_autofree char *file = NULL;
    g_autofree char *path = NULL;

    if (w <= 0 || h <= 0)
        return FALSE;
    paintable = gtk_widget_paintable_new(widget);
    snapshot = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, snapshot, w, h);
    node = gtk_snapshot_free_to_node(snapshot);
    renderer = gtk_native_get_renderer(GTK_NATIVE(widget));
    if (node == NULL || renderer == NULL)
        return FALSE;
    texture = gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, w, h));
    file = g_strdup_printf("rescue-%s.png", name);
    path = g_build_filename(s->folder, file, NULL);
    if (!gdk_texture_save_to_png(texture, path))
        return FALSE;
    g_print("screenshot: %s (%dx%d)\n", path, w, h);
    /* Rendering and saving the picture is the test's work, not a stall of the window. */
    if (s->drive_stall != NULL)
        rescue_stall_meter_forgive(s->drive_stall);
    return TRUE;
}

/* Remove the folder path and everything in it (the test's own salvage folder). */
static void remove_tree(const char *path)
{
    g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
    const char *name;

    if (dir == NULL)
        return;
    while ((name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *child = g_build_filename(path, name, NULL);
        if (g_file_test(child, G_FILE_TEST_IS_DIR) && !g_file_test(child, G_FILE_TEST_IS_SYMLINK))
            remove_tree(child);
        else
            g_unlink(child);
    }
    g_rmdir(path);
}

/* The first live file with data, else the first entry; 0 when there is none. */
static guint32 pick_entry(RescueData *data)
{
    for (guint32 id = 1; id <= rescue_data_get_n_entries(data); id++) {
        const RescueEntryInfo *e = rescue_data_get_entry(data, id);
        if (e->state == SCAN_ENTRY_LIVE && e->type == LANYFS_TYPE_FILE && e->size > 0 &&
            e->parent != 0)
            return id;
    }
    return rescue_data_get_n_entries(data) > 1 ? 2 : 0;
}

/* A data block, else the first block past the superblock. */
static guint64 pick_block(RescueData *data)
{
    guint64 n = rescue_data_get_n_blocks(data);

    for (guint64 b = 0; b < n; b++)
        if (rescue_data_get_block(data, b)->cls == SCAN_BLK_DATA)
            return b;
    return n > 1 ? 1 : 0;
}

static void begin_step(Smoke *s);
static void settle(Smoke *s);

/* The message dialog shown over win, NULL when none. */
static AdwMessageDialog *find_dialog(RescueWindow *win)
{
    GListModel *tops = gtk_window_get_toplevels();

    for (guint i = 0; i < g_list_model_get_n_items(tops); i++) {
        g_autoptr(GtkWindow) top = g_list_model_get_item(tops, i);
        if (ADW_IS_MESSAGE_DIALOG(top) && gtk_window_get_transient_for(top) == GTK_WINDOW(win) &&
            gtk_widget_get_visible(GTK_WIDGET(top)))
            return ADW_MESSAGE_DIALOG(top);
    }
    return NULL;
}

static void on_repair_rescanned(RescueWindow *win, gboolean ok, gpointer user_data);

static gboolean poll_settled(gpointer user_data)
{
    Smoke *s = user_data;
    RescueWindow *win = s->window;

    if (rescue_details_pane_get_loading(win->details_pane) ||
        rescue_files_view_get_pending(win->files_view) || win->work != NULL ||
        g_get_monotonic_time() - s->settle_since < SETTLE_MS * 1000)
        return G_SOURCE_CONTINUE;
    s->poll = 0;
    if (s->drive_stall != NULL) {
        gint64 max = rescue_stall_meter_get_max(s->drive_stall);
        g_print("stall-in-%s-ms: %.1f\n", step_names[s->step], max / 1000.0);
        s->drive_max = MAX(s->drive_max, max);
    }

    switch (s->step) {
    case STEP_FILES:
        check(s, rescue_files_view_get_n_rows(win->files_view) > 0 ||
                     rescue_data_get_n_entries(win->data) <= 1,
              "the files view shows rows");
        check(s, screenshot(s, "files"), "screenshot of the files view");
        break;
    case STEP_FINDINGS:
        check(s, rescue_findings_view_get_n_rows(win->findings_view) ==
                     rescue_data_get_n_findings(win->data),
              "the findings view shows every finding");
        check(s, screenshot(s, "findings"), "screenshot of the findings view");
        break;
    case STEP_MAP:
        check(s, rescue_data_get_n_blocks(win->data) > 0 &&
                     rescue_block_map_get_selected(rescue_map_view_get_map(win->map_view)) !=
                         RESCUE_NO_BLOCK,
              "the block map shows blocks and selects one");
        check(s, screenshot(s, "map"), "screenshot of the block map");
        break;
    case STEP_SEARCH:
        check(s, rescue_files_view_get_n_rows(win->files_view) > 0 ||
                     rescue_data_get_n_entries(win->data) <= 1,
              "a search by a name finds it");
        check(s, screenshot(s, "search"), "screenshot of a search");
        rescue_files_view_set_search_mode(win->files_view, FALSE);
        break;
    case STEP_REPAIR:
        /* With repairs proposed, the list of changes and the undo file; else "nothing". */
        check(s, gtk_widget_get_mapped(GTK_WIDGET(s->dialog)) &&
                     (adw_message_dialog_get_extra_child(s->dialog) != NULL) == s->repairs &&
                     (rescue_repair_dialog_get_undo_path(s->dialog) != NULL) == s->repairs,
              "the repair confirmation lists the changes and names the undo file");
        check(s, screenshot(s, "repair"), "screenshot of the repair confirmation");
        if (s->repairs) {
            /* Confirmed, on the copy: the repair, then the rescan it starts. */
            s->undo_path = g_strdup(rescue_repair_dialog_get_undo_path(s->dialog));
            gtk_window_destroy(GTK_WINDOW(s->dialog));
            g_clear_object(&s->dialog);
            g_signal_connect(win, "scan-finished", G_CALLBACK(on_repair_rescanned), s);
            check(s, _rescue_window_start_repair(win, s->undo_path), "a repair starts");
            return G_SOURCE_REMOVE;
        }
        gtk_window_destroy(GTK_WINDOW(s->dialog));
        g_clear_object(&s->dialog);
        break;
    case STEP_OUTCOME:
        check(s, g_strcmp0(adw_message_dialog_get_heading(s->dialog), "Repaired") == 0 ||
                     g_strcmp0(g_getenv("LC_ALL"), "C") != 0,
              "the outcome of the repair says it repaired");
        check(s, screenshot(s, "repair-outcome"), "screenshot of the repair's outcome");
        gtk_window_destroy(GTK_WINDOW(s->dialog));
        g_clear_object(&s->dialog);
        break;
    case STEP_SALVAGE: {
        g_autofree char *base = g_path_get_basename(s->image);
        g_autofree char *made = g_strdup_printf("%s-salvage", base);
        g_autofree char *manifest =
            g_build_filename(s->folder, "salvage", made, "manifest.csv", NULL);
        AdwMessageDialog *summary;

        if (s->dialog != NULL) {
            /* The summary has been drawn. */
            check(s, screenshot(s, "salvage"), "screenshot of the salvage summary");
            gtk_window_destroy(GTK_WINDOW(s->dialog));
            g_clear_object(&s->dialog);
            break;
        }
        summary = find_dialog(win);
        check(s, g_file_test(manifest, G_FILE_TEST_IS_REGULAR),
              "salvage wrote the engine's manifest");
        check(s, summary != NULL &&
                     (g_strcmp0(adw_message_dialog_get_heading(summary), "Salvage Finished") ==
                          0 ||
                      g_strcmp0(g_getenv("LC_ALL"), "C") != 0),
              "salvage shows its summary");
        if (summary == NULL)
            break;
        s->dialog = g_object_ref(summary);
        settle(s);
        return G_SOURCE_REMOVE;
    }
    case STEP_EXPORT:
    case STEP_RESCAN:
    case STEP_EARLIER:
    case STEP_DONE:
        break;
    }
    s->step++;
    begin_step(s);
    return G_SOURCE_REMOVE;
}

static void on_repair_rescanned(RescueWindow *win, gboolean ok, gpointer user_data)
{
    Smoke *s = user_data;
    g_autofree guint *plan = NULL;
    guint n = 0;

    g_signal_handlers_disconnect_by_func(win, on_repair_rescanned, s);
    check(s, ok && win->data != NULL, "the scan after the repair finished with results");
    if (ok && win->data != NULL) {
        plan = rescue_repair_plan(win->data, &n);
        g_print("repairs-left: %u\n", n);
        check(s, n == 0, "nothing is left to repair after the repair");
    }
    check(s, g_file_test(s->undo_path, G_FILE_TEST_IS_REGULAR), "the repair left its undo file");
    s->step++;
    begin_step(s);
}

static void settle(Smoke *s)
{
    /* The step's own stall is what its changes cost, measured from here. */
    s->settle_since = g_get_monotonic_time();
    s->poll = g_timeout_add(50, poll_settled, s);
}

static void on_rescan_finished(RescueWindow *win, gboolean ok, gpointer user_data)
{
    Smoke *s = user_data;

    g_signal_handlers_disconnect_by_func(win, on_rescan_finished, s);
    check(s, ok && win->data != NULL, "a rescan finished with results");
    g_print("rescan-seconds: %.2f\n", win->scan_seconds_us / 1e6);
    g_print("stall-during-rescan-ms: %.1f\n", win->scan_stall_us / 1000.0);
    s->step++;
    begin_step(s);
}

/*
 * STEP_EARLIER: RESCUE_TEST_EARLIER (an earlier format of 4096:3 under a
 * 1 KiB block 0) opened as block 0 says, then read again with the earlier
 * format's geometry (win.read-earlier, from EARLIER_FORMAT), then as
 * block 0 says once more (win.read-current), then with the block size
 * chosen in Read With Another Geometry and the address length left to
 * the scan (win.read-geometry).
 */
static void on_earlier_scanned(RescueWindow *win, gboolean ok, gpointer user_data);

/* The geometry dialog, laid out by now: photographed, then answered "read". */
static gboolean on_geometry_shown(gpointer user_data)
{
    Smoke *s = user_data;

    s->poll = 0;
    check(s, screenshot(s, "geometry"), "the geometry dialog photographed");
    g_signal_connect(s->window, "scan-finished", G_CALLBACK(on_earlier_scanned), s);
    adw_message_dialog_response(s->dialog, "read");
    gtk_window_destroy(GTK_WINDOW(s->dialog));
    g_clear_object(&s->dialog);
    return G_SOURCE_REMOVE;
}

static void on_earlier_scanned(RescueWindow *win, gboolean ok, gpointer user_data)
{
    Smoke *s = user_data;
    const RescueGeometry *g = ok && win->data != NULL ? rescue_data_get_geometry(win->data) : NULL;
    unsigned bits = 0, addrlen = 0;
    AdwMessageDialog *dialog;

    g_signal_handlers_disconnect_by_func(win, on_earlier_scanned, s);
    check(s, g != NULL, "a scan of the earlier-format image finished with results");
    if (g == NULL) {
        finish(s, 1);
        return;
    }
    switch (s->earlier++) {
    case 0:
        check(s, g->blocksize == 1024 && !win->geom_used, "read as block 0 says: 1024-byte blocks");
        check(s, rescue_data_get_earlier_geometry(win->data, &bits, &addrlen) && bits == 12 &&
                     addrlen == 3,
              "the scan names the earlier format, 4096:3");
        g_signal_connect(win, "scan-finished", G_CALLBACK(on_earlier_scanned), s);
        gtk_widget_activate_action(GTK_WIDGET(win), "win.read-earlier", NULL);
        return;
    case 1:
        check(s, g->blocksize == 4096 && g->addrlen == 3 && win->geom_used,
              "Read the Earlier Format reads 4096:3");
        g_signal_connect(win, "scan-finished", G_CALLBACK(on_earlier_scanned), s);
        gtk_widget_activate_action(GTK_WIDGET(win), "win.read-current", NULL);
        return;
    case 2:
        check(s, g->blocksize == 1024 && !win->geom_used, "Read as Block 0 Says goes back");
        gtk_widget_activate_action(GTK_WIDGET(win), "win.read-geometry", NULL);
        dialog = find_dialog(win);
        check(s, dialog != NULL, "Read With Another Geometry shows its dialog");
        if (dialog == NULL) {
            finish(s, 1);
            return;
        }
        rescue_geometry_dialog_get(dialog, &bits, &addrlen);
        check(s, bits == 12 && addrlen == 3, "the dialog offers the earlier format's 4096:3");
        rescue_geometry_dialog_set(dialog, 12, 0);
        s->dialog = g_object_ref(dialog);
        s->poll = g_timeout_add(SETTLE_MS, on_geometry_shown, s);
        return;
    default:
        check(s, g->blocksize == 4096 && g->addrlen == 3 && win->geom_used,
              "4096 with the address length automatic reads 4096:3");
        s->step++;
        begin_step(s);
        return;
    }
}

static void begin_step(Smoke *s)
{
    RescueWindow *win = s->window;
    RescueData *data = win->data;

    if (s->drive_stall != NULL)
        rescue_stall_meter_reset(s->drive_stall);

    switch (s->step) {
    case STEP_FILES: {
        guint32 id = pick_entry(data);
        adw_view_stack_set_visible_child_name(win->view_stack, "files");
        if (id != 0)
            check(s, rescue_files_view_select_entry(win->files_view, id),
                  "an entry can be selected in the files view");
        settle(s);
        return;
    }
    case STEP_FINDINGS:
        adw_view_stack_set_visible_child_name(win->view_stack, "findings");
        if (rescue_data_get_n_findings(data) > 0)
            rescue_findings_view_select(win->findings_view, 0);
        settle(s);
        return;
    case STEP_MAP: {
        RescueBlockMap *map = rescue_map_view_get_map(win->map_view);
        adw_view_stack_set_visible_child_name(win->view_stack, "map");
        rescue_block_map_select(map, pick_block(data));
        rescue_details_pane_show_block(win->details_pane, data, rescue_block_map_get_selected(map));
        settle(s);
        return;
    }
    case STEP_SEARCH: {
        const RescueEntryInfo *e = rescue_data_get_entry(data, pick_entry(data));
        adw_view_stack_set_visible_child_name(win->view_stack, "files");
        rescue_files_view_search(win->files_view, e != NULL ? e->name : "");
        settle(s);
        return;
    }
    case STEP_REPAIR: {
        g_autofree guint *plan = NULL;
        guint n = 0;
        plan = rescue_repair_plan(data, &n);
        s->repairs = n > 0;
        s->dialog = g_object_ref(rescue_repair_dialog_new(GTK_WINDOW(win), data));
        gtk_window_present(GTK_WINDOW(s->dialog));
        settle(s);
        return;
    }
    case STEP_OUTCOME: {
        /* The outcome dialog the repair left over the window. */
        AdwMessageDialog *outcome = find_dialog(win);
        if (outcome != NULL)
            s->dialog = g_object_ref(outcome);
        if (s->repairs)
            check(s, s->dialog != NULL, "the repair shows its outcome");
        if (s->dialog != NULL) {
            settle(s);
            return;
        }
        s->step++;
        begin_step(s);
        return;
    }
    case STEP_SALVAGE: {
        /* Everything, into a folder of the test's own, emptied first. */
        g_autofree char *dest = g_build_filename(s->folder, "salvage", NULL);
        remove_tree(dest);
        g_mkdir_with_parents(dest, 0755);
        check(s, _rescue_window_start_salvage(win, NULL, 0, dest), "a salvage starts");
        settle(s);
        return;
    }
    case STEP_EXPORT: {
        static const char *const kinds[][2] = {
            {"findings-csv", "findings.csv"}, {"findings-json", "findings.json"},
            {"map-png", "block-map.png"},     {"wear-png", "wear.png"},
            {"map-csv", "block-map.csv"},     {"wear-csv", "wear.csv"},
        };
        for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
            g_autoptr(GError) error = NULL;
            g_autofree char *path = g_build_filename(s->folder, kinds[i][1], NULL);
            g_autofree char *what = g_strdup_printf("export %s", kinds[i][0]);
            gboolean ok = _rescue_window_export_to(win, kinds[i][0], path, &error);
            if (!ok)
                g_print("  %s\n", error->message);
            check(s, ok, what);
        }
        s->step++;
        begin_step(s);
        return;
    }
    case STEP_RESCAN:
        /* As F5 does, with the results of the first scan on screen. */
        g_signal_connect(win, "scan-finished", G_CALLBACK(on_rescan_finished), s);
        gtk_widget_activate_action(GTK_WIDGET(win), "win.rescan", NULL);
        return;
    case STEP_EARLIER: {
        const char *earlier = g_getenv("RESCUE_TEST_EARLIER");
        if (earlier == NULL) {
            g_print("skip: earlier (RESCUE_TEST_EARLIER is not set)\n");
            s->step++;
            begin_step(s);
            return;
        }
        g_signal_connect(win, "scan-finished", G_CALLBACK(on_earlier_scanned), s);
        rescue_window_open_path(win, earlier);
        return;
    }
    case STEP_DONE:
        finish(s, s->failures == 0 ? 0 : 1);
        return;
    }
}

static void on_scan_finished(RescueWindow *win, gboolean ok, gpointer user_data)
{
    Smoke *s = user_data;
    RescueData *data = win->data;

    g_signal_handlers_disconnect_by_data(win, s);
    check(s, ok && data != NULL, "the scan finished with results");
    if (!ok || data == NULL) {
        finish(s, 1);
        return;
    }
    g_print("entries: %u\n", rescue_data_get_n_entries(data));
    g_print("findings: %u\n", rescue_data_get_n_findings(data));
    g_print("blocks: %" G_GUINT64_FORMAT "\n", rescue_data_get_n_blocks(data));
    g_print("scan-seconds: %.2f\n", win->scan_seconds_us / 1e6);
    g_print("stall-during-scan-ms: %.1f\n", win->scan_stall_us / 1000.0);
    check(s, g_strcmp0(gtk_stack_get_visible_child_name(win->main_stack), "results") == 0,
          "the results page is shown");
    s->drive_stall = rescue_stall_meter_new(5);
    s->step = STEP_FILES;
    begin_step(s);
}

static gboolean start_when_drawn(GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
    Smoke *s = user_data;

    (void)widget;
    (void)clock;
    if (++s->frames < 3)
        return G_SOURCE_CONTINUE;
    rescue_window_open_path(s->window, s->image);
    return G_SOURCE_REMOVE;
}

void rescue_smoke_start(RescueWindow *window, const char *folder, const char *image,
                        void (*done)(int status, gpointer user_data), gpointer user_data)
{
    Smoke *s;

    g_return_if_fail(RESCUE_IS_WINDOW(window));
    g_return_if_fail(folder != NULL && image != NULL && done != NULL);

    s = g_new0(Smoke, 1);
    s->window = g_object_ref(window);
    s->folder = g_strdup(folder);
    s->done = done;
    s->user_data = user_data;
    g_mkdir_with_parents(folder, 0755);
    {
        /* A copy, so that the repair step writes nothing the caller owns. */
        g_autofree char *base = g_path_get_basename(image);
        g_autoptr(GFile) from = g_file_new_for_path(image);
        g_autoptr(GFile) to = NULL;
        g_autoptr(GError) error = NULL;
        s->image = g_build_filename(folder, base, NULL);
        to = g_file_new_for_path(s->image);
        if (!g_file_copy(from, to, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, &error)) {
            g_print("FAIL: cannot copy the image: %s\n", error->message);
            s->watchdog = 0;
            s->failures++;
            finish(s, 1);
            return;
        }
    }
    s->watchdog = g_timeout_add_seconds(WATCHDOG_SECONDS, on_watchdog, s);
    g_signal_connect(window, "scan-finished", G_CALLBACK(on_scan_finished), s);
    /* Start once the window has been drawn, so its first frame is not taken for a stall. */
    gtk_widget_add_tick_callback(GTK_WIDGET(window), start_when_drawn, s, NULL);
}
