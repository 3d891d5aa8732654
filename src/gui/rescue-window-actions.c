/*
 * rescue-window-actions.c -- what the window can do: open, rescan, salvage, repair, export.
 *
 * Actions are installed on the window class (win.*) as GNOME Text Editor
 * does; the three view options are GSettings actions added per window
 * (win.show-deleted, win.show-orphans, win.block-map-wear).  Every file
 * choice goes through GtkFileChooserNative (GTK 4.8 has no GtkFileDialog),
 * so the portal is used when the application is sandboxed.  Long work
 * (salvage, repair, export) runs in a worker; the window stays usable, only the
 * actions that would race it are disabled.
 */
#define G_LOG_DOMAIN "rescue-window"

#include "config.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>

#include "rescue-block-map.h"
#include "rescue-export.h"
#include "rescue-progress.h"
#include "rescue-geometry-dialog.h"
#include "rescue-repair.h"
#include "rescue-salvage.h"
#include "rescue-scan-task.h"
#include "rescue-wear-export.h"
#include "rescue-window-private.h"

/* ---- open ---------------------------------------------------------------------- */

static void on_open_response(GtkNativeDialog *native, int response, gpointer user_data)
{
    RescueWindow *self = user_data;

    if (response == GTK_RESPONSE_ACCEPT) {
        g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(native));
        g_autofree char *path = file != NULL ? g_file_get_path(file) : NULL;
        if (path != NULL)
            rescue_window_open_path(self, path);
        else
            _rescue_window_show_error(self, _("Cannot Open This File"),
                                      _("Only local files and devices can be scanned."));
    }
    gtk_native_dialog_destroy(native);
    g_object_unref(native);
    g_object_unref(self);
}

static void action_open(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);
    GtkFileChooserNative *native;
    GtkFileFilter *filter;

    (void)name;
    (void)param;
    native = gtk_file_chooser_native_new(_("Open an Image or a Scan Database"), GTK_WINDOW(self),
                                         GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(native), TRUE);

    filter = gtk_file_filter_new();
    gtk_file_filter_set_name(filter, _("Images and scan databases"));
    gtk_file_filter_add_pattern(filter, "*.img");
    gtk_file_filter_add_pattern(filter, "*.bin");
    gtk_file_filter_add_pattern(filter, "*.raw");
    gtk_file_filter_add_pattern(filter, "*.dd");
    gtk_file_filter_add_pattern(filter, "*.db");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(native), filter);
    g_object_unref(filter);
    filter = gtk_file_filter_new();
    gtk_file_filter_set_name(filter, _("Scan databases"));
    gtk_file_filter_add_pattern(filter, "*.db");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(native), filter);
    g_object_unref(filter);
    filter = gtk_file_filter_new();
    gtk_file_filter_set_name(filter, _("All files"));
    gtk_file_filter_add_pattern(filter, "*");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(native), filter);
    g_object_unref(filter);

    g_signal_connect(native, "response", G_CALLBACK(on_open_response), g_object_ref(self));
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(native));
}

static void action_open_recent(GtkWidget *widget, const char *name, GVariant *param)
{
    (void)name;
    rescue_window_open_path(RESCUE_WINDOW(widget), g_variant_get_string(param, NULL));
}

/* ---- open a device --------------------------------------------------------------- */

static char *read_sys(const char *dir, const char *file)
{
    g_autofree char *path = g_build_filename(dir, file, NULL);
    char *text = NULL;

    if (!g_file_get_contents(path, &text, NULL, NULL))
        return NULL;
    return g_strstrip(text);
}

/* Block devices worth scanning: whole disks and partitions with a size, not loops or RAM. */
static GPtrArray *list_devices(void)
{
    GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    g_autoptr(GDir) dir = g_dir_open("/sys/class/block", 0, NULL);
    const char *name;

    if (dir == NULL)
        return rows;
    while ((name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *base = g_build_filename("/sys/class/block", name, NULL);
        g_autofree char *size = read_sys(base, "size");
        g_autofree char *removable = read_sys(base, "removable");
        g_autofree char *model = read_sys(base, "device/model");
        g_autofree char *parent_removable = read_sys(base, "../removable");
        g_autofree char *parent_model = read_sys(base, "../device/model");
        g_autofree char *human = NULL;
        guint64 bytes;
        char **row;

        if (g_str_has_prefix(name, "loop") || g_str_has_prefix(name, "ram") ||
            g_str_has_prefix(name, "zram") || size == NULL)
            continue;
        bytes = g_ascii_strtoull(size, NULL, 10) * 512;
        if (bytes == 0)
            continue;
        human = g_format_size(bytes);
        row = g_new0(char *, 4);
        row[0] = g_build_filename("/dev", name, NULL);
        if (model == NULL && parent_model != NULL)
            model = g_steal_pointer(&parent_model);
        if (g_strcmp0(removable, "1") == 0 || g_strcmp0(parent_removable, "1") == 0)
            /* TRANSLATORS: a device: its model, its size */
            row[1] = g_strdup_printf(_("%s, %s, removable"), model != NULL ? model : _("Disk"),
                                     human);
        else
            row[1] = g_strdup_printf(_("%s, %s"), model != NULL ? model : _("Disk"), human);
        g_ptr_array_add(rows, row);
    }
    return rows;
}

static int compare_rows(gconstpointer a, gconstpointer b)
{
    char *const *x = *(char **const *)a;
    char *const *y = *(char **const *)b;

    return strcmp(x[0], y[0]);
}

static void on_device_row_activated(AdwActionRow *row, AdwMessageDialog *dialog)
{
    g_object_set_data_full(G_OBJECT(dialog), "device",
                           g_strdup(g_object_get_data(G_OBJECT(row), "path")), g_free);
    adw_message_dialog_response(dialog, "open");
}

static void on_device_response(AdwMessageDialog *dialog, const char *response, RescueWindow *self)
{
    const char *path = g_object_get_data(G_OBJECT(dialog), "device");

    if (g_strcmp0(response, "open") == 0 && path != NULL)
        rescue_window_open_path(self, path);
}

static void action_open_device(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);
    g_autoptr(GPtrArray) devices = list_devices();
    GtkWidget *dialog;
    GtkWidget *list;
    GtkWidget *scrolled;

    (void)name;
    (void)param;
    g_ptr_array_sort(devices, compare_rows);
    dialog = adw_message_dialog_new(GTK_WINDOW(self), _("Open a Device"),
                                    devices->len > 0
                                        ? _("The device is opened read-only. Reading a whole "
                                            "device usually needs membership of the group "
                                            "“disk”.")
                                        : _("No block devices were found."));
    adw_message_dialog_add_response(ADW_MESSAGE_DIALOG(dialog), "cancel", _("_Cancel"));
    if (devices->len > 0) {
        list = gtk_list_box_new();
        gtk_list_box_set_selection_mode(GTK_LIST_BOX(list), GTK_SELECTION_NONE);
        gtk_widget_add_css_class(list, "boxed-list");
        for (guint i = 0; i < devices->len; i++) {
            char **d = g_ptr_array_index(devices, i);
            GtkWidget *row = adw_action_row_new();
            adw_preferences_row_set_title(ADW_PREFERENCES_ROW(row), d[0]);
            adw_preferences_row_set_use_markup(ADW_PREFERENCES_ROW(row), FALSE);
            adw_action_row_set_subtitle(ADW_ACTION_ROW(row), d[1]);
            adw_action_row_set_icon_name(ADW_ACTION_ROW(row), "drive-removable-media-symbolic");
            gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), TRUE);
            g_object_set_data_full(G_OBJECT(row), "path", g_strdup(d[0]), g_free);
            g_signal_connect(row, "activated", G_CALLBACK(on_device_row_activated), dialog);
            gtk_list_box_append(GTK_LIST_BOX(list), row);
        }
        scrolled = gtk_scrolled_window_new();
        gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scrolled), GTK_POLICY_NEVER,
                                       GTK_POLICY_AUTOMATIC);
        gtk_scrolled_window_set_max_content_height(GTK_SCROLLED_WINDOW(scrolled), 320);
        gtk_scrolled_window_set_propagate_natural_height(GTK_SCROLLED_WINDOW(scrolled), TRUE);
        gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), list);
        adw_message_dialog_set_extra_child(ADW_MESSAGE_DIALOG(dialog), scrolled);
    }
    g_signal_connect(dialog, "response", G_CALLBACK(on_device_response), self);
    gtk_window_present(GTK_WINDOW(dialog));
}

/* ---- scan ------------------------------------------------------------------------ */

static void action_rescan(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);
    g_autofree char *path = g_strdup(self->path);

    (void)name;
    (void)param;
    if (path != NULL)
        rescue_window_open_path(self, path);
}

/* Scan the image again with the geometry of the earlier format the scan
 * found (EARLIER_FORMAT), as --geometry BS:AL would; F5 then keeps it. */
static void action_read_earlier(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);
    g_autofree char *path = g_strdup(self->path);
    unsigned bits, addrlen;

    (void)name;
    (void)param;
    if (path != NULL && self->data != NULL &&
        rescue_data_get_earlier_geometry(self->data, &bits, &addrlen))
        rescue_window_open_path_with_geometry(self, path, bits, addrlen);
}

static void on_geometry_response(AdwMessageDialog *dialog, const char *response,
                                 gpointer user_data)
{
    RescueWindow *self = RESCUE_WINDOW(user_data);
    unsigned bits, addrlen;

    if (g_strcmp0(response, "read") != 0 || self->path == NULL || self->scan != NULL)
        return;
    rescue_geometry_dialog_get(dialog, &bits, &addrlen);
    {
        g_autofree char *path = g_strdup(self->path);
        rescue_window_open_path_with_geometry(self, path, bits, addrlen);
    }
}

/* Ask for a block size and an address length, and scan the image again
 * with them (--geometry BS[:AL]).  Offered first: the earlier format's
 * geometry when the scan found one, else the geometry the scan used. */
static void action_read_geometry(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);
    AdwMessageDialog *dialog;
    unsigned bits = 0, addrlen = 0;

    (void)name;
    (void)param;
    if (self->path == NULL)
        return;
    if (self->data == NULL || !rescue_data_get_earlier_geometry(self->data, &bits, &addrlen)) {
        const RescueGeometry *g = self->data != NULL ? rescue_data_get_geometry(self->data) : NULL;
        if (g != NULL && g->have_geometry) {
            bits = (unsigned)g_bit_nth_lsf(g->blocksize, -1);
            addrlen = g->addrlen;
        }
    }
    dialog = rescue_geometry_dialog_new(GTK_WINDOW(self), bits, addrlen);
    g_signal_connect_object(dialog, "response", G_CALLBACK(on_geometry_response), self, 0);
    gtk_window_present(GTK_WINDOW(dialog));
}

/* Scan the image again with the geometry its block 0 gives. */
static void action_read_current(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);
    g_autofree char *path = g_strdup(self->path);

    (void)name;
    (void)param;
    g_clear_pointer(&self->geom_path, g_free);
    self->geom_bits = self->geom_addrlen = 0;
    if (path != NULL)
        rescue_window_open_path(self, path);
}

static void action_cancel_scan(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);

    (void)name;
    (void)param;
    if (self->scan != NULL)
        g_cancellable_cancel(self->scan);
}

/* ---- salvage ---------------------------------------------------------------------- */

typedef struct {
    RescueWindow *self;           /* owned reference */
    guint32 *ids;                 /* owned, NULL for everything */
    guint n;
    AdwMessageDialog *progress;   /* the progress dialog (borrowed, lives until closed) */
    GtkProgressBar *bar;          /* inside it */
    GtkLabel *label;              /* inside it */
    RescueProgress *relay;        /* owned */
} SalvageJob;

static void salvage_job_free(SalvageJob *job)
{
    if (job->relay != NULL) {
        rescue_progress_close(job->relay);
        rescue_progress_unref(job->relay);
    }
    g_object_unref(job->self);
    g_free(job->ids);
    g_free(job);
}

static void on_salvage_progress(double fraction, const char *text, gpointer user_data)
{
    SalvageJob *job = user_data;

    gtk_progress_bar_set_fraction(job->bar, fraction);
    if (text != NULL)
        gtk_label_set_text(job->label, text);
}

static void on_summary_response(AdwMessageDialog *dialog, const char *response, gpointer user_data)
{
    const char *folder = g_object_get_data(G_OBJECT(dialog), "folder");

    (void)user_data;
    if (g_strcmp0(response, "open") == 0 && folder != NULL) {
        g_autofree char *uri = g_filename_to_uri(folder, NULL, NULL);
        if (uri != NULL)
            g_app_info_launch_default_for_uri(uri, NULL, NULL);
    }
}

static void on_salvage_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
    SalvageJob *job = user_data;
    RescueWindow *self = job->self;
    g_autoptr(GError) error = NULL;
    g_autoptr(RescueSalvageReport) report = NULL;

    (void)source;
    report = rescue_salvage_finish(result, &error);
    rescue_progress_close(job->relay);
    if (job->progress != NULL)
        gtk_window_destroy(GTK_WINDOW(job->progress));
    g_clear_object(&self->work);
    _rescue_window_update_actions(self);

    if (report == NULL) {
        if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            _rescue_window_show_error(self, _("Salvage Failed"), error->message);
        else
            _rescue_window_toast(self, _("Salvage cancelled"));
    } else {
        /* Also in the smoke test, which photographs it. */
        GString *body = g_string_new(NULL);
        g_autofree char *bytes = g_format_size(report->bytes);
        g_autofree char *folder = g_filename_display_name(report->folder);
        guint files = rescue_salvage_report_files(report);
        guint incomplete = report->partial + report->unrecoverable;
        AdwMessageDialog *dialog;

        g_string_append_printf(body,
                               g_dngettext(GETTEXT_PACKAGE, "%u file (%s) was copied to %s.",
                                           "%u files (%s) were copied to %s.", files),
                               files, bytes, folder);
        if (incomplete > 0) {
            g_string_append_c(body, ' ');
            g_string_append_printf(body,
                                   g_dngettext(GETTEXT_PACKAGE,
                                               "%u of them is incomplete: what could not be "
                                               "recovered is written as zeros.",
                                               "%u of them are incomplete: what could not be "
                                               "recovered is written as zeros.",
                                               incomplete),
                                   incomplete);
        }
        if (report->not_written > 0) {
            g_string_append_c(body, ' ');
            g_string_append_printf(body,
                                   g_dngettext(GETTEXT_PACKAGE, "%u file could not be written.",
                                               "%u files could not be written.",
                                               report->not_written),
                                   report->not_written);
        }
        if (report->problems->len > 0) {
            g_string_append(body, "\n");
            for (guint i = 0; i < report->problems->len && i < 8; i++)
                g_string_append_printf(body, "\n%s",
                                       (const char *)g_ptr_array_index(report->problems, i));
            if (report->problems->len > 8) {
                g_string_append_c(body, '\n');
                g_string_append_printf(body,
                                       g_dngettext(GETTEXT_PACKAGE, "and %u more",
                                                   "and %u more", report->problems->len - 8),
                                       report->problems->len - 8);
            }
        }
        g_string_append(body, "\n\n");
        g_string_append(body, _("The files manifest.csv and manifest.json in the folder list "
                                "every file and how much of it was recovered, as "
                                "“lanyfs salvage” writes them."));
        dialog = ADW_MESSAGE_DIALOG(
            adw_message_dialog_new(GTK_WINDOW(self), _("Salvage Finished"), body->str));
        adw_message_dialog_add_responses(dialog, "close", _("_Close"), "open", _("_Open Folder"),
                                         NULL);
        adw_message_dialog_set_response_appearance(dialog, "open", ADW_RESPONSE_SUGGESTED);
        g_object_set_data_full(G_OBJECT(dialog), "folder", g_strdup(report->folder), g_free);
        g_signal_connect(dialog, "response", G_CALLBACK(on_summary_response), NULL);
        gtk_window_present(GTK_WINDOW(dialog));
        g_string_free(body, TRUE);
    }
    salvage_job_free(job);
}

static void on_salvage_progress_response(AdwMessageDialog *dialog, const char *response,
                                         SalvageJob *job)
{
    (void)dialog;
    if (g_strcmp0(response, "cancel") == 0 && job->self->work != NULL)
        g_cancellable_cancel(job->self->work);
    job->progress = NULL;
}

static void start_salvage(RescueWindow *self, SalvageJob *job, const char *dest)
{
    GtkWidget *box;

    self->work = g_cancellable_new();
    job->progress = ADW_MESSAGE_DIALOG(
        adw_message_dialog_new(GTK_WINDOW(self), _("Salvaging"), NULL));
    box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    job->bar = GTK_PROGRESS_BAR(gtk_progress_bar_new());
    job->label = GTK_LABEL(gtk_label_new(NULL));
    gtk_label_set_ellipsize(job->label, PANGO_ELLIPSIZE_MIDDLE);
    gtk_widget_add_css_class(GTK_WIDGET(job->label), "dim-label");
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(job->bar));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(job->label));
    adw_message_dialog_set_extra_child(job->progress, box);
    adw_message_dialog_add_response(job->progress, "cancel", _("_Cancel"));
    g_signal_connect(job->progress, "response", G_CALLBACK(on_salvage_progress_response), job);
    if (!self->smoke)
        gtk_window_present(GTK_WINDOW(job->progress));

    job->relay = rescue_progress_new(on_salvage_progress, job);
    rescue_salvage_async(self->data, job->ids, job->n, dest, job->relay, self->work,
                         on_salvage_done, job);
    _rescue_window_update_actions(self);
}

gboolean _rescue_window_start_salvage(RescueWindow *self, const guint32 *ids, guint n,
                                      const char *dest)
{
    SalvageJob *job;

    g_return_val_if_fail(RESCUE_IS_WINDOW(self), FALSE);
    g_return_val_if_fail(dest != NULL, FALSE);

    if (self->data == NULL || self->work != NULL || self->scan != NULL)
        return FALSE;
    job = g_new0(SalvageJob, 1);
    job->self = g_object_ref(self);
    job->ids = n > 0 ? g_memdup2(ids, (gsize)n * sizeof(guint32)) : NULL;
    job->n = n;
    start_salvage(self, job, dest);
    return TRUE;
}

static void on_salvage_folder(GtkNativeDialog *native, int response, gpointer user_data)
{
    SalvageJob *job = user_data;

    if (response == GTK_RESPONSE_ACCEPT && job->self->data != NULL && job->self->work == NULL) {
        g_autoptr(GFile) folder = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(native));
        g_autofree char *path = folder != NULL ? g_file_get_path(folder) : NULL;
        if (path != NULL) {
            start_salvage(job->self, job, path);
            job = NULL;
        }
    }
    gtk_native_dialog_destroy(native);
    g_object_unref(native);
    if (job != NULL)
        salvage_job_free(job);
}

static void ask_salvage(RescueWindow *self, guint32 *ids, guint n)
{
    SalvageJob *job = g_new0(SalvageJob, 1);
    GtkFileChooserNative *native;

    job->self = g_object_ref(self);
    job->ids = ids;
    job->n = n;
    native = gtk_file_chooser_native_new(n > 0 ? _("Salvage the Selection Into")
                                               : _("Salvage Everything Into"),
                                         GTK_WINDOW(self), GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER,
                                         _("_Salvage Here"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(native), TRUE);
    g_signal_connect(native, "response", G_CALLBACK(on_salvage_folder), job);
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(native));
}

static void action_salvage(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);
    guint n = 0;
    guint32 *ids;

    (void)name;
    (void)param;
    if (self->data == NULL)
        return;
    ids = rescue_files_view_get_selected(self->files_view, &n);
    if (n == 0) {
        g_free(ids);
        _rescue_window_toast(self, _("Select entries in the files view first"));
        return;
    }
    ask_salvage(self, ids, n);
}

static void action_salvage_all(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);

    (void)name;
    (void)param;
    if (self->data != NULL)
        ask_salvage(self, NULL, 0);
}

/* ---- repair ------------------------------------------------------------------------ */

typedef struct {
    RescueWindow *self;           /* owned reference */
    AdwMessageDialog *progress;   /* the progress dialog (borrowed, NULL once closed) */
    GtkProgressBar *bar;          /* inside it */
    GtkLabel *label;              /* inside it */
    RescueProgress *relay;        /* owned */
    char *source;                 /* what the window had open (owned) */
    char *image;                  /* the image or device repaired (owned) */
} RepairJob;

static void on_repair_progress(double fraction, const char *text, gpointer user_data)
{
    RepairJob *job = user_data;

    if (job->progress == NULL)
        return;
    gtk_progress_bar_set_fraction(job->bar, fraction);
    if (text != NULL)
        gtk_label_set_text(job->label, text);
}

static void on_repair_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
    RepairJob *job = user_data;
    RescueWindow *self = job->self;
    g_autoptr(GError) error = NULL;
    g_autoptr(RescueRepairReport) report = NULL;

    (void)source;
    report = rescue_repair_finish(result, &error);
    rescue_progress_close(job->relay);
    if (job->progress != NULL)
        gtk_window_destroy(GTK_WINDOW(job->progress));
    g_clear_object(&self->work);
    _rescue_window_update_actions(self);

    if (report == NULL) {
        _rescue_window_show_error(self, _("Repair Failed"), error->message);
    } else {
        /* Also in the smoke test, which photographs it. */
        gtk_window_present(GTK_WINDOW(rescue_repair_outcome_dialog_new(GTK_WINDOW(self), report)));
        /*
         * What is on the stick now, whatever the outcome: the image itself,
         * also when a scan database was open (it holds the scan before).
         * Not when another file has been opened in the meantime.
         */
        if (g_strcmp0(self->path, job->source) == 0)
            rescue_window_open_path(self, job->image);
    }
    g_free(job->source);
    g_free(job->image);
    rescue_progress_unref(job->relay);
    g_object_unref(job->self);
    g_free(job);
}

static void on_repair_progress_response(AdwMessageDialog *dialog, const char *response,
                                        RepairJob *job)
{
    (void)dialog;
    (void)response;
    /* Hidden: the repair goes on, its outcome comes in its own dialog. */
    job->progress = NULL;
}

static void start_repair(RescueWindow *self, const char *undo_path)
{
    RepairJob *job = g_new0(RepairJob, 1);
    GtkWidget *box;

    job->self = g_object_ref(self);
    job->source = g_strdup(self->path);
    job->image = g_strdup(rescue_data_get_image_path(self->data));
    self->work = g_cancellable_new();
    job->progress = ADW_MESSAGE_DIALOG(adw_message_dialog_new(
        GTK_WINDOW(self), _("Repairing"),
        _("Do not unplug the stick until the repair has finished.")));
    box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    job->bar = GTK_PROGRESS_BAR(gtk_progress_bar_new());
    job->label = GTK_LABEL(gtk_label_new(NULL));
    gtk_label_set_ellipsize(job->label, PANGO_ELLIPSIZE_END);
    gtk_widget_add_css_class(GTK_WIDGET(job->label), "dim-label");
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(job->bar));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(job->label));
    adw_message_dialog_set_extra_child(job->progress, box);
    adw_message_dialog_add_response(job->progress, "hide", _("_Hide"));
    g_signal_connect(job->progress, "response", G_CALLBACK(on_repair_progress_response), job);
    if (!self->smoke)
        gtk_window_present(GTK_WINDOW(job->progress));

    job->relay = rescue_progress_new(on_repair_progress, job);
    rescue_repair_async(job->image, undo_path, job->relay, on_repair_done, job);
    _rescue_window_update_actions(self);
}

gboolean _rescue_window_start_repair(RescueWindow *self, const char *undo_path)
{
    g_return_val_if_fail(RESCUE_IS_WINDOW(self), FALSE);
    g_return_val_if_fail(undo_path != NULL, FALSE);

    if (self->data == NULL || self->work != NULL || self->scan != NULL)
        return FALSE;
    start_repair(self, undo_path);
    return TRUE;
}

static void on_repair_response(AdwMessageDialog *dialog, const char *response, RescueWindow *self)
{
    if (g_strcmp0(response, "repair") == 0)
        _rescue_window_start_repair(self, rescue_repair_dialog_get_undo_path(dialog));
}

static void action_repair(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);
    AdwMessageDialog *dialog;

    (void)name;
    (void)param;
    if (self->data == NULL)
        return;
    dialog = rescue_repair_dialog_new(GTK_WINDOW(self), self->data);
    g_signal_connect(dialog, "response", G_CALLBACK(on_repair_response), self);
    gtk_window_present(GTK_WINDOW(dialog));
}

/* ---- export ------------------------------------------------------------------------ */

static gboolean export_kind(const char *name, RescueExportKind *kind)
{
    static const struct {
        const char *name;
        RescueExportKind kind;
    } kinds[] = {
        {"findings-csv", RESCUE_EXPORT_FINDINGS_CSV}, {"findings-json", RESCUE_EXPORT_FINDINGS_JSON},
        {"map-png", RESCUE_EXPORT_MAP_PNG},           {"map-csv", RESCUE_EXPORT_MAP_CSV},
        {"wear-png", RESCUE_EXPORT_WEAR_PNG},         {"wear-csv", RESCUE_EXPORT_WEAR_CSV},
    };

    for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
        if (g_strcmp0(kinds[i].name, name) == 0) {
            *kind = kinds[i].kind;
            return TRUE;
        }
    }
    return FALSE;
}

static gboolean export_to_file(RescueData *data, RescueExportKind kind, const char *path,
                               GError **error)
{
    if (rescue_wear_export_handles(kind))
        return rescue_wear_export_to_file(data, kind, path, error);
    return rescue_export_to_file(data, kind, path, error);
}

gboolean _rescue_window_export_to(RescueWindow *self, const char *kind, const char *path,
                                  GError **error)
{
    RescueExportKind k;

    g_return_val_if_fail(RESCUE_IS_WINDOW(self), FALSE);

    if (self->data == NULL || !export_kind(kind, &k)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "cannot export %s", kind);
        return FALSE;
    }
    return export_to_file(self->data, k, path, error);
}

typedef struct {
    RescueData *data;     /* owned reference */
    RescueExportKind kind;
    char *path;           /* owned */
} ExportJob;

static void export_job_free(gpointer p)
{
    ExportJob *job = p;

    rescue_data_unref(job->data);
    g_free(job->path);
    g_free(job);
}

static void export_thread(GTask *task, gpointer source, gpointer task_data,
                          GCancellable *cancellable)
{
    ExportJob *job = task_data;
    GError *error = NULL;

    (void)source;
    (void)cancellable;
    if (export_to_file(job->data, job->kind, job->path, &error))
        g_task_return_boolean(task, TRUE);
    else
        g_task_return_error(task, error);
}

static void on_export_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
    RescueWindow *self = RESCUE_WINDOW(source);
    ExportJob *job = g_task_get_task_data(G_TASK(result));
    g_autoptr(GError) error = NULL;

    (void)user_data;
    g_clear_object(&self->work);
    _rescue_window_update_actions(self);
    if (g_task_propagate_boolean(G_TASK(result), &error)) {
        g_autofree char *name = g_filename_display_basename(job->path);
        g_autofree char *text = g_strdup_printf(_("Exported to “%s”"), name);
        _rescue_window_toast(self, text);
    } else {
        _rescue_window_show_error(self, _("Export Failed"), error->message);
    }
}

static void on_export_response(GtkNativeDialog *native, int response, gpointer user_data)
{
    RescueWindow *self = RESCUE_WINDOW(user_data);
    RescueExportKind kind = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(native), "kind"));

    if (response == GTK_RESPONSE_ACCEPT && self->data != NULL && self->work == NULL) {
        g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(native));
        g_autofree char *path = file != NULL ? g_file_get_path(file) : NULL;
        if (path != NULL) {
            ExportJob *job = g_new0(ExportJob, 1);
            g_autoptr(GTask) task = NULL;
            job->data = rescue_data_ref(self->data);
            job->kind = kind;
            job->path = g_steal_pointer(&path);
            self->work = g_cancellable_new();
            task = g_task_new(self, self->work, on_export_done, NULL);
            g_task_set_name(task, "[rescue] export");
            g_task_set_task_data(task, job, export_job_free);
            g_task_run_in_thread(task, export_thread);
            _rescue_window_update_actions(self);
        }
    }
    gtk_native_dialog_destroy(native);
    g_object_unref(native);
    g_object_unref(self);
}

static void action_export(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);
    RescueExportKind kind;
    GtkFileChooserNative *native;
    g_autofree char *suggested = NULL;

    (void)name;
    if (self->data == NULL || !export_kind(g_variant_get_string(param, NULL), &kind))
        return;
    native = gtk_file_chooser_native_new(_("Export"), GTK_WINDOW(self),
                                         GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(native), TRUE);
    suggested = rescue_export_suggest_name(self->data, kind);
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(native), suggested);
    g_object_set_data(G_OBJECT(native), "kind", GINT_TO_POINTER(kind));
    g_signal_connect(native, "response", G_CALLBACK(on_export_response), g_object_ref(self));
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(native));
}

/* ---- views ------------------------------------------------------------------------- */

static void action_search(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);

    (void)name;
    (void)param;
    adw_view_stack_set_visible_child_name(self->view_stack, "files");
    rescue_files_view_start_search(self->files_view);
}

static void action_view(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);

    (void)name;
    adw_view_stack_set_visible_child_name(self->view_stack, g_variant_get_string(param, NULL));
}

static void action_reveal_entry(GtkWidget *widget, const char *name, GVariant *param)
{
    (void)name;
    _rescue_window_reveal_entry(RESCUE_WINDOW(widget), g_variant_get_uint32(param));
}

static void action_reveal_block(GtkWidget *widget, const char *name, GVariant *param)
{
    (void)name;
    _rescue_window_reveal_block(RESCUE_WINDOW(widget), g_variant_get_uint64(param));
}

static void action_zoom(GtkWidget *widget, const char *name, GVariant *param)
{
    RescueWindow *self = RESCUE_WINDOW(widget);

    (void)param;
    adw_view_stack_set_visible_child_name(self->view_stack, "map");
    rescue_block_map_zoom_step(rescue_map_view_get_map(self->map_view),
                               g_str_equal(name, "win.zoom-in") ? 1 : -1);
}

void _rescue_window_class_actions_init(GtkWidgetClass *widget_class)
{
    gtk_widget_class_install_action(widget_class, "win.open", NULL, action_open);
    gtk_widget_class_install_action(widget_class, "win.open-device", NULL, action_open_device);
    gtk_widget_class_install_action(widget_class, "win.open-recent", "s", action_open_recent);
    gtk_widget_class_install_action(widget_class, "win.rescan", NULL, action_rescan);
    gtk_widget_class_install_action(widget_class, "win.read-earlier", NULL, action_read_earlier);
    gtk_widget_class_install_action(widget_class, "win.read-current", NULL, action_read_current);
    gtk_widget_class_install_action(widget_class, "win.read-geometry", NULL, action_read_geometry);
    gtk_widget_class_install_action(widget_class, "win.cancel-scan", NULL, action_cancel_scan);
    gtk_widget_class_install_action(widget_class, "win.salvage", NULL, action_salvage);
    gtk_widget_class_install_action(widget_class, "win.salvage-all", NULL, action_salvage_all);
    gtk_widget_class_install_action(widget_class, "win.repair", NULL, action_repair);
    gtk_widget_class_install_action(widget_class, "win.export", "s", action_export);
    gtk_widget_class_install_action(widget_class, "win.search", NULL, action_search);
    gtk_widget_class_install_action(widget_class, "win.view", "s", action_view);
    gtk_widget_class_install_action(widget_class, "win.reveal-entry", "u", action_reveal_entry);
    gtk_widget_class_install_action(widget_class, "win.reveal-block", "t", action_reveal_block);
    gtk_widget_class_install_action(widget_class, "win.zoom-in", NULL, action_zoom);
    gtk_widget_class_install_action(widget_class, "win.zoom-out", NULL, action_zoom);
    gtk_widget_class_add_binding_action(widget_class, GDK_KEY_Escape, 0, "win.cancel-scan", NULL);
}

void _rescue_window_actions_init(RescueWindow *self)
{
    static const char *const keys[] = {"show-deleted", "show-orphans", "block-map-wear"};

    for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
        g_autoptr(GAction) action = g_settings_create_action(self->settings, keys[i]);
        g_action_map_add_action(G_ACTION_MAP(self), action);
    }
}
