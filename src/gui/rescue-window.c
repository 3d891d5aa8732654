/*
 * rescue-window.c -- the main window (rescue-window.h).
 *
 * Pages of main_stack: "welcome" until something is opened, "scanning"
 * while a scan runs, "results" once one has finished (a failed or
 * cancelled scan goes back to what was shown before).  The scan runs in a
 * worker (rescue-scan-task.c); its progress arrives here coalesced.  A
 * stall meter runs from the start of the scan until its results are on
 * screen, and the longest stall is kept for the smoke test.
 *
 * Selections route to the details pane: an entry from the files view, a
 * block from the block map; a finding shows its entry (selected in the
 * files view too) or else its block (selected in the map).
 *
 * Actions and their dialogs live in rescue-window-actions.c.
 */
#define G_LOG_DOMAIN "rescue-window"

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "rescue-block-map.h"
#include "rescue-scan-task.h"
#include "rescue-window-private.h"

#define RECENT_MAX 8

enum {
    SIGNAL_SCAN_FINISHED,
    N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(RescueWindow, rescue_window, ADW_TYPE_APPLICATION_WINDOW)

/* ---- messages ---------------------------------------------------------------- */

void _rescue_window_show_error(RescueWindow *self, const char *heading, const char *message)
{
    GtkWidget *dialog;

    g_return_if_fail(RESCUE_IS_WINDOW(self));

    if (self->smoke) {
        g_printerr("%s: %s\n", heading, message);
        return;
    }
    dialog = adw_message_dialog_new(GTK_WINDOW(self), heading, message);
    adw_message_dialog_add_response(ADW_MESSAGE_DIALOG(dialog), "close", _("_Close"));
    gtk_window_present(GTK_WINDOW(dialog));
}

void _rescue_window_toast(RescueWindow *self, const char *text)
{
    AdwToast *toast;

    g_return_if_fail(RESCUE_IS_WINDOW(self));

    toast = adw_toast_new(text);
    adw_toast_set_timeout(toast, 5);
    adw_toast_overlay_add_toast(self->toast_overlay, toast);
}

/* ---- recent items -------------------------------------------------------------- */

static void on_recent_activated(AdwActionRow *row, RescueWindow *self)
{
    const char *path = g_object_get_data(G_OBJECT(row), "path");

    if (path != NULL)
        rescue_window_open_path(self, path);
}

static void fill_recent(RescueWindow *self)
{
    g_auto(GStrv) recent = g_settings_get_strv(self->settings, "recent-files");
    GtkWidget *child;
    guint shown = 0;

    while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->recent_list))) != NULL)
        gtk_list_box_remove(self->recent_list, child);
    g_menu_remove_all(self->recent_section);

    for (guint i = 0; recent[i] != NULL && shown < RECENT_MAX; i++) {
        g_autofree char *name = g_filename_display_basename(recent[i]);
        g_autofree char *dir = g_path_get_dirname(recent[i]);
        g_autofree char *dir_display = g_filename_display_name(dir);
        GtkWidget *row = adw_action_row_new();
        GMenuItem *item;

        adw_preferences_row_set_title(ADW_PREFERENCES_ROW(row), name);
        adw_preferences_row_set_use_markup(ADW_PREFERENCES_ROW(row), FALSE);
        adw_action_row_set_subtitle(ADW_ACTION_ROW(row), dir_display);
        adw_action_row_add_suffix(ADW_ACTION_ROW(row), gtk_image_new_from_icon_name("go-next-symbolic"));
        gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), TRUE);
        g_object_set_data_full(G_OBJECT(row), "path", g_strdup(recent[i]), g_free);
        g_signal_connect(row, "activated", G_CALLBACK(on_recent_activated), self);
        gtk_list_box_append(self->recent_list, row);

        item = g_menu_item_new(name, NULL);
        g_menu_item_set_action_and_target(item, "win.open-recent", "s", recent[i]);
        g_menu_append_item(self->recent_section, item);
        g_object_unref(item);
        shown++;
    }
    gtk_widget_set_visible(self->recent_group, shown > 0);
}

static void add_recent(RescueWindow *self, const char *path)
{
    g_auto(GStrv) recent = g_settings_get_strv(self->settings, "recent-files");
    g_autoptr(GStrvBuilder) b = g_strv_builder_new();
    g_auto(GStrv) next = NULL;
    guint n = 1;

    g_strv_builder_add(b, path);
    for (guint i = 0; recent[i] != NULL && n < RECENT_MAX; i++) {
        if (g_strcmp0(recent[i], path) != 0) {
            g_strv_builder_add(b, recent[i]);
            n++;
        }
    }
    next = g_strv_builder_end(b);
    g_settings_set_strv(self->settings, "recent-files", (const char *const *)next);
}

/* ---- scanning ---------------------------------------------------------------- */

void _rescue_window_update_actions(RescueWindow *self)
{
    gboolean have = self->data != NULL;
    gboolean scanning = self->scan != NULL;
    gboolean working = self->work != NULL;
    gboolean scanned;
    unsigned bits, addrlen;
    guint n = 0;
    g_autofree guint32 *sel = NULL;

    g_return_if_fail(RESCUE_IS_WINDOW(self));

    if (have)
        sel = rescue_files_view_get_selected(self->files_view, &n);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.rescan", self->path != NULL && !scanning);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.cancel-scan", scanning);
    /* An image scanned (not a database read): it can be read again in another geometry. */
    scanned = have && !scanning && !working &&
              rescue_data_get_kind(self->data) != RESCUE_SOURCE_DATABASE;
    gtk_widget_action_set_enabled(
        GTK_WIDGET(self), "win.read-earlier",
        scanned && !self->geom_used &&
            rescue_data_get_earlier_geometry(self->data, &bits, &addrlen));
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.read-current",
                                  scanned && self->geom_used);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.read-geometry", scanned);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.salvage",
                                  have && !scanning && !working && n > 0);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.salvage-all",
                                  have && !scanning && !working);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.repair",
                                  have && !scanning && !working && !self->geom_used);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.export", have && !scanning && !working);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.search", have && !scanning);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.zoom-in", have);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.zoom-out", have);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.reveal-entry", have);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.reveal-block", have);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.view", have && !scanning);
    gtk_widget_set_visible(GTK_WIDGET(self->search_button), have && !scanning);
}

static void on_scan_progress(double fraction, const char *phase, gpointer user_data)
{
    RescueWindow *self = user_data;

    gtk_progress_bar_set_fraction(self->progress_bar, fraction);
    if (phase != NULL)
        gtk_label_set_text(self->phase_label, phase);
}

static void show_data(RescueWindow *self, RescueData *data)
{
    const guint *sev = rescue_data_get_findings_by_severity(data);
    AdwViewStackPage *page;
    g_autofree char *name = g_filename_display_basename(rescue_data_get_source_path(data));
    const RescueGeometry *g = rescue_data_get_geometry(data);

    g_clear_pointer(&self->data, rescue_data_unref);
    self->data = rescue_data_ref(data);
    rescue_files_view_set_data(self->files_view, data);
    rescue_findings_view_set_data(self->findings_view, data);
    rescue_map_view_set_data(self->map_view, data);
    rescue_details_pane_show_summary(self->details_pane, data);

    page = adw_view_stack_get_page(self->view_stack, GTK_WIDGET(self->findings_view));
    adw_view_stack_page_set_badge_number(page, sev[SCAN_SEV_ERROR] + sev[SCAN_SEV_CRITICAL]);
    adw_view_stack_page_set_needs_attention(page, sev[SCAN_SEV_ERROR] + sev[SCAN_SEV_CRITICAL] > 0);

    adw_view_switcher_title_set_subtitle(self->switcher_title,
                                         g->label != NULL && g->label[0] ? g->label : name);
    gtk_window_set_title(GTK_WINDOW(self), name);
    gtk_stack_set_visible_child_name(self->main_stack, "results");
}

static void finish_metering(RescueWindow *self)
{
    if (self->stall != NULL)
        self->scan_stall_us = rescue_stall_meter_get_max(self->stall);
    g_clear_pointer(&self->stall, rescue_stall_meter_free);
    g_signal_emit(self, signals[SIGNAL_SCAN_FINISHED], 0, self->scan_ok);
}

static gboolean after_results_drawn(GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
    RescueWindow *self = RESCUE_WINDOW(widget);

    (void)clock;
    (void)user_data;
    if (self->scan != NULL)
        return G_SOURCE_REMOVE; /* a new scan began: its own end will meter */
    /* A few frames after the scan ended: the results have been laid out and painted. */
    if (++self->frames_after_scan < 3)
        return G_SOURCE_CONTINUE;
    finish_metering(self);
    return G_SOURCE_REMOVE;
}

static void on_scan_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
    RescueWindow *self = user_data;
    g_autoptr(GError) error = NULL;
    g_autoptr(RescueData) data = NULL;

    (void)source;
    data = rescue_scan_finish(result, &error);
    g_clear_object(&self->scan);
    self->scan_seconds_us = g_get_monotonic_time() - self->scan_started;

    if (data != NULL) {
        show_data(self, data);
        add_recent(self, rescue_data_get_source_path(data));
        if (rescue_data_get_depth(data) == RESCUE_SCAN_QUICK)
            _rescue_window_toast(self, _("Quick scan: only the live tree was walked"));
    } else {
        if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
            g_autofree char *name = g_filename_display_basename(self->path);
            g_autofree char *heading = g_strdup_printf(_("Cannot Open “%s”"), name);
            _rescue_window_show_error(self, heading, error->message);
        } else {
            _rescue_window_toast(self, _("Scan cancelled"));
        }
        gtk_stack_set_visible_child_name(self->main_stack, self->data != NULL ? "results"
                                                                              : "welcome");
    }
    _rescue_window_update_actions(self);
    /* The stall meter runs on until the results have been drawn. */
    self->scan_ok = data != NULL;
    if (gtk_widget_get_mapped(GTK_WIDGET(self))) {
        self->frames_after_scan = 0;
        gtk_widget_add_tick_callback(GTK_WIDGET(self), after_results_drawn, NULL, NULL);
    } else {
        finish_metering(self);
    }
    g_object_unref(self);
}

void rescue_window_open_path(RescueWindow *self, const char *path)
{
    g_autofree char *name = NULL;

    g_return_if_fail(RESCUE_IS_WINDOW(self));
    g_return_if_fail(path != NULL);

    if (self->scan != NULL)
        g_cancellable_cancel(self->scan);
    g_clear_object(&self->scan);
    if (self->path != path) {
        g_free(self->path);
        self->path = g_strdup(path);
    }
    name = g_filename_display_basename(path);
    adw_status_page_set_description(self->scan_page, name);
    gtk_progress_bar_set_fraction(self->progress_bar, 0);
    gtk_label_set_text(self->phase_label, "");
    gtk_stack_set_visible_child_name(self->main_stack, "scanning");

    self->scan = g_cancellable_new();
    self->scan_started = g_get_monotonic_time();
    g_clear_pointer(&self->stall, rescue_stall_meter_free);
    self->stall = rescue_stall_meter_new(5);
    self->geom_used = self->geom_path != NULL && strcmp(self->geom_path, self->path) == 0;
    rescue_scan_geometry_async(self->path, self->geom_used ? self->geom_bits : 0,
                               self->geom_used ? self->geom_addrlen : 0, self->scan,
                               on_scan_progress, self, on_scan_done, g_object_ref(self));
    _rescue_window_update_actions(self);
}

void rescue_window_open_path_with_geometry(RescueWindow *self, const char *path,
                                           unsigned blockbits, unsigned addrlen)
{
    g_return_if_fail(RESCUE_IS_WINDOW(self));
    g_return_if_fail(path != NULL);
    g_return_if_fail(blockbits >= LANYFS_BLOCKBITS_MIN && blockbits <= LANYFS_BLOCKBITS_MAX);
    g_return_if_fail(addrlen <= LANYFS_ADDRLEN_MAX); /* 0: the scan infers it */

    g_free(self->geom_path);
    self->geom_path = g_strdup(path);
    self->geom_bits = blockbits;
    self->geom_addrlen = addrlen;
    rescue_window_open_path(self, path);
}

RescueData *rescue_window_get_data(RescueWindow *self)
{
    g_return_val_if_fail(RESCUE_IS_WINDOW(self), NULL);
    return self->data;
}

/* ---- selections ---------------------------------------------------------------- */

static void on_entry_selected(RescueFilesView *view, guint id, RescueWindow *self)
{
    (void)view;
    if (self->data == NULL)
        return;
    if (id != 0)
        rescue_details_pane_show_entry(self->details_pane, self->data, id);
    _rescue_window_update_actions(self);
}

static void on_finding_selected(RescueFindingsView *view, guint index, RescueWindow *self)
{
    const RescueFindingInfo *f;

    (void)view;
    if (self->data == NULL || (f = rescue_data_get_finding(self->data, index)) == NULL)
        return;
    if (f->entry != 0 && rescue_data_get_entry(self->data, f->entry) != NULL) {
        rescue_files_view_select_entry(self->files_view, f->entry);
        rescue_details_pane_show_entry(self->details_pane, self->data, f->entry);
    } else if (f->has_block && rescue_data_get_block(self->data, f->block) != NULL) {
        rescue_block_map_select(rescue_map_view_get_map(self->map_view), f->block);
        rescue_details_pane_show_block(self->details_pane, self->data, f->block);
    }
}

static void on_block_selected(GObject *map, GParamSpec *pspec, RescueWindow *self)
{
    guint64 blk = rescue_block_map_get_selected(RESCUE_BLOCK_MAP(map));

    (void)pspec;
    if (self->data != NULL && blk != RESCUE_NO_BLOCK)
        rescue_details_pane_show_block(self->details_pane, self->data, blk);
}

static void on_block_activated(RescueBlockMap *map, guint64 blk, RescueWindow *self)
{
    (void)map;
    if (self->data != NULL)
        rescue_details_pane_show_block(self->details_pane, self->data, blk);
}

void _rescue_window_reveal_entry(RescueWindow *self, guint32 id)
{
    g_return_if_fail(RESCUE_IS_WINDOW(self));

    if (self->data == NULL)
        return;
    adw_view_stack_set_visible_child_name(self->view_stack, "files");
    if (!rescue_files_view_select_entry(self->files_view, id))
        _rescue_window_toast(self, _("The filters hide this entry"));
    rescue_details_pane_show_entry(self->details_pane, self->data, id);
}

void _rescue_window_reveal_block(RescueWindow *self, guint64 block)
{
    g_return_if_fail(RESCUE_IS_WINDOW(self));

    if (self->data == NULL)
        return;
    adw_view_stack_set_visible_child_name(self->view_stack, "map");
    rescue_block_map_select(rescue_map_view_get_map(self->map_view), block);
    rescue_details_pane_show_block(self->details_pane, self->data, block);
}

static void on_search_toggled(GtkToggleButton *button, RescueWindow *self)
{
    gboolean on = gtk_toggle_button_get_active(button);

    if (on) {
        adw_view_stack_set_visible_child_name(self->view_stack, "files");
        rescue_files_view_start_search(self->files_view);
    } else {
        rescue_files_view_set_search_mode(self->files_view, FALSE);
    }
}

static void on_files_search_mode(GObject *object, GParamSpec *pspec, RescueWindow *self)
{
    (void)object;
    (void)pspec;
    gtk_toggle_button_set_active(self->search_button,
                                 rescue_files_view_get_search_mode(self->files_view));
}

/* ---- window state -------------------------------------------------------------- */

static gboolean rescue_window_close_request(GtkWindow *window)
{
    RescueWindow *self = RESCUE_WINDOW(window);
    int width = 0;
    int height = 0;

    gtk_window_get_default_size(window, &width, &height);
    g_settings_delay(self->settings);
    if (!gtk_window_is_maximized(window) && width > 0 && height > 0) {
        g_settings_set_int(self->settings, "window-width", width);
        g_settings_set_int(self->settings, "window-height", height);
    }
    g_settings_set_boolean(self->settings, "window-maximized", gtk_window_is_maximized(window));
    g_settings_apply(self->settings);
    if (self->scan != NULL)
        g_cancellable_cancel(self->scan);
    if (self->work != NULL)
        g_cancellable_cancel(self->work);
    return GTK_WINDOW_CLASS(rescue_window_parent_class)->close_request(window);
}

static void rescue_window_dispose(GObject *object)
{
    RescueWindow *self = RESCUE_WINDOW(object);

    if (self->scan != NULL)
        g_cancellable_cancel(self->scan);
    if (self->work != NULL)
        g_cancellable_cancel(self->work);
    gtk_widget_dispose_template(GTK_WIDGET(self), RESCUE_TYPE_WINDOW);
    g_clear_object(&self->scan);
    g_clear_object(&self->work);
    g_clear_pointer(&self->stall, rescue_stall_meter_free);
    g_clear_pointer(&self->data, rescue_data_unref);
    g_clear_object(&self->settings);
    g_clear_pointer(&self->path, g_free);
    g_clear_pointer(&self->geom_path, g_free);
    G_OBJECT_CLASS(rescue_window_parent_class)->dispose(object);
}

static void rescue_window_class_init(RescueWindowClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    GtkWindowClass *window_class = GTK_WINDOW_CLASS(klass);

    object_class->dispose = rescue_window_dispose;
    window_class->close_request = rescue_window_close_request;

    /* Emitted once a scan has ended and its results (if any) have been drawn. */
    signals[SIGNAL_SCAN_FINISHED] =
        g_signal_new("scan-finished", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);

    g_type_ensure(RESCUE_TYPE_FILES_VIEW);
    g_type_ensure(RESCUE_TYPE_FINDINGS_VIEW);
    g_type_ensure(RESCUE_TYPE_MAP_VIEW);
    g_type_ensure(RESCUE_TYPE_DETAILS_PANE);
    gtk_widget_class_set_template_from_resource(widget_class,
                                                "/org/lanyfs/Rescue/ui/rescue-window.ui");
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, toast_overlay);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, header_bar);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, switcher_title);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, repair_button);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, search_button);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, main_stack);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, welcome_page);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, recent_list);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, recent_group);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, scan_page);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, progress_bar);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, phase_label);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, results_paned);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, view_stack);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, files_view);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, findings_view);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, map_view);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, details_pane);
    gtk_widget_class_bind_template_child(widget_class, RescueWindow, recent_section);
    gtk_widget_class_bind_template_callback(widget_class, on_entry_selected);
    gtk_widget_class_bind_template_callback(widget_class, on_finding_selected);
    gtk_widget_class_bind_template_callback(widget_class, on_search_toggled);

    _rescue_window_class_actions_init(widget_class);
}

static void rescue_window_init(RescueWindow *self)
{
    RescueBlockMap *map;

    gtk_widget_init_template(GTK_WIDGET(self));
    self->settings = g_settings_new("org.lanyfs.Rescue");

    gtk_window_set_default_size(GTK_WINDOW(self), g_settings_get_int(self->settings, "window-width"),
                                g_settings_get_int(self->settings, "window-height"));
    if (g_settings_get_boolean(self->settings, "window-maximized"))
        gtk_window_maximize(GTK_WINDOW(self));

    map = rescue_map_view_get_map(self->map_view);
    g_settings_bind(self->settings, "block-map-zoom", map, "zoom", G_SETTINGS_BIND_DEFAULT);
    g_settings_bind(self->settings, "block-map-wear", map, "wear", G_SETTINGS_BIND_DEFAULT);
    g_signal_connect(map, "notify::selected", G_CALLBACK(on_block_selected), self);
    g_signal_connect(map, "block-activated", G_CALLBACK(on_block_activated), self);
    g_signal_connect(self->files_view, "notify::search-mode",
                     G_CALLBACK(on_files_search_mode), self);

    _rescue_window_actions_init(self);
    gtk_paned_set_position(self->results_paned,
                           MAX(g_settings_get_int(self->settings, "window-width") - 380, 360));
    fill_recent(self);
    g_signal_connect_swapped(self->settings, "changed::recent-files", G_CALLBACK(fill_recent),
                             self);
    _rescue_window_update_actions(self);
}

RescueWindow *rescue_window_new(AdwApplication *application)
{
    return g_object_new(RESCUE_TYPE_WINDOW, "application", application, NULL);
}
