/*
 * rescue-repair.c -- the Repair dialogs (rescue-repair.h).
 */
#define G_LOG_DOMAIN "rescue-repair"

#include "config.h"

#include <glib/gi18n.h>

#include "problem.h"
#include "rescue-repair.h"

/* Height of the list before it scrolls, in pixels. */
#define PLAN_LIST_HEIGHT 260
/* Rows made at most; the rest is counted in a last row (a row is a few widgets). */
#define PLAN_ROWS_MAX 200

static GtkWidget *plan_list(RescueData *data, const guint *plan, guint n)
{
    GtkWidget *list = gtk_list_box_new();
    GtkWidget *scrolled = gtk_scrolled_window_new();

    gtk_list_box_set_selection_mode(GTK_LIST_BOX(list), GTK_SELECTION_NONE);
    gtk_widget_add_css_class(list, "boxed-list");
    gtk_accessible_update_property(GTK_ACCESSIBLE(list), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                   _("What the repair will change"), -1);
    for (guint i = 0; i < n && i < PLAN_ROWS_MAX; i++) {
        const RescueFindingInfo *f = rescue_data_get_finding(data, plan[i]);
        const struct scan_problem_info *row = scan_problem_lookup(f->code);
        GtkWidget *r = adw_action_row_new();
        g_autofree char *repair = NULL;

        adw_preferences_row_set_use_markup(ADW_PREFERENCES_ROW(r), FALSE);
        adw_preferences_row_set_title(ADW_PREFERENCES_ROW(r), f->message);
        /* TRANSLATORS: the repair the catalogue proposes for a finding */
        repair = g_strdup_printf(_("Repair: %s"), row != NULL ? scan_problem_repair_text(row) : "");
        adw_action_row_set_subtitle(ADW_ACTION_ROW(r), repair);
        adw_action_row_set_title_lines(ADW_ACTION_ROW(r), 3);
        gtk_list_box_append(GTK_LIST_BOX(list), r);
    }
    if (n > PLAN_ROWS_MAX) {
        GtkWidget *r = adw_action_row_new();
        g_autofree char *more = g_strdup_printf(
            g_dngettext(GETTEXT_PACKAGE, "and %u more", "and %u more", n - PLAN_ROWS_MAX),
            n - PLAN_ROWS_MAX);
        adw_preferences_row_set_title(ADW_PREFERENCES_ROW(r), more);
        gtk_list_box_append(GTK_LIST_BOX(list), r);
    }
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scrolled), GTK_POLICY_NEVER,
                                   GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_max_content_height(GTK_SCROLLED_WINDOW(scrolled), PLAN_LIST_HEIGHT);
    gtk_scrolled_window_set_propagate_natural_height(GTK_SCROLLED_WINDOW(scrolled), TRUE);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), list);
    return scrolled;
}

AdwMessageDialog *rescue_repair_dialog_new(GtkWindow *parent, RescueData *data)
{
    g_autofree guint *plan = NULL;
    g_autofree char *undo = NULL;
    g_autofree char *undo_shown = NULL;
    g_autofree char *name = NULL;
    g_autofree char *heading = NULL;
    const char *image;
    GString *body;
    guint n = 0;
    AdwMessageDialog *dialog;

    g_return_val_if_fail(data != NULL, NULL);

    plan = rescue_repair_plan(data, &n);
    image = rescue_data_get_image_path(data);
    name = g_filename_display_basename(image);

    if (n == 0) {
        dialog = ADW_MESSAGE_DIALOG(adw_message_dialog_new(
            parent, _("Nothing to Repair"), _("No finding of this scan proposes a repair.")));
        adw_message_dialog_add_response(dialog, "close", _("_Close"));
        return dialog;
    }

    undo = rescue_repair_undo_path_for(image);
    undo_shown = g_filename_display_name(undo);
    body = g_string_new(NULL);
    heading = g_strdup_printf(_("Repair “%s”?"), name);
    g_string_append_printf(body,
                           g_dngettext(GETTEXT_PACKAGE,
                                       "%u finding will be repaired, as listed below.",
                                       "%u findings will be repaired, as listed below.", n),
                           n);
    dialog = ADW_MESSAGE_DIALOG(adw_message_dialog_new(parent, heading, NULL));
    g_string_append(body, "\n\n");
    g_string_append_printf(body,
                           _("Every block is saved before it is written, to the undo file %s, "
                             "so the repair can be taken back with lanyfs-undo."),
                           undo_shown);
    if (rescue_data_get_kind(data) == RESCUE_SOURCE_DEVICE) {
        g_string_append_c(body, ' ');
        g_string_append(body, _("The device is opened for writing only while the repair runs; "
                                "it must not be mounted."));
    }
    adw_message_dialog_set_body(dialog, body->str);
    adw_message_dialog_set_extra_child(dialog, plan_list(data, plan, n));
    adw_message_dialog_add_responses(dialog, "cancel", _("_Cancel"), "repair", _("_Repair"), NULL);
    adw_message_dialog_set_response_appearance(dialog, "repair", ADW_RESPONSE_DESTRUCTIVE);
    adw_message_dialog_set_default_response(dialog, "cancel");
    adw_message_dialog_set_close_response(dialog, "cancel");
    g_object_set_data_full(G_OBJECT(dialog), "undo-path", g_steal_pointer(&undo), g_free);
    g_string_free(body, TRUE);
    return dialog;
}

const char *rescue_repair_dialog_get_undo_path(AdwMessageDialog *dialog)
{
    g_return_val_if_fail(ADW_IS_MESSAGE_DIALOG(dialog), NULL);
    return g_object_get_data(G_OBJECT(dialog), "undo-path");
}

static GtkWidget *report_view(const RescueRepairReport *report)
{
    GtkWidget *expander = gtk_expander_new_with_mnemonic(_("_Full Report"));
    GtkWidget *scrolled = gtk_scrolled_window_new();
    GtkWidget *view = gtk_text_view_new();
    GtkTextBuffer *buffer = gtk_text_view_get_buffer(GTK_TEXT_VIEW(view));
    g_autofree char *text = NULL;

    text = report->errors[0] != '\0' ? g_strconcat(report->errors, "\n", report->report, NULL)
                                     : g_strdup(report->report);
    gtk_text_buffer_set_text(buffer, text, -1);
    gtk_text_view_set_editable(GTK_TEXT_VIEW(view), FALSE);
    gtk_text_view_set_monospace(GTK_TEXT_VIEW(view), TRUE);
    gtk_text_view_set_wrap_mode(GTK_TEXT_VIEW(view), GTK_WRAP_WORD_CHAR);
    gtk_accessible_update_property(GTK_ACCESSIBLE(view), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                   _("The repair engine’s report"), -1);
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scrolled), GTK_POLICY_NEVER,
                                   GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_min_content_height(GTK_SCROLLED_WINDOW(scrolled), 200);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), view);
    gtk_expander_set_child(GTK_EXPANDER(expander), scrolled);
    gtk_expander_set_expanded(GTK_EXPANDER(expander), report->errors[0] != '\0');
    return expander;
}

AdwMessageDialog *rescue_repair_outcome_dialog_new(GtkWindow *parent,
                                                   const RescueRepairReport *report)
{
    g_autofree char *heading = NULL;
    g_autofree char *explanation = NULL;
    g_autofree char *summary = NULL;
    GString *body;
    AdwMessageDialog *dialog;

    g_return_val_if_fail(report != NULL, NULL);

    rescue_repair_status_text(report->status, &heading, &explanation);
    summary = rescue_repair_report_summary(report);
    body = g_string_new(explanation);
    if (summary[0] != '\0') {
        g_string_append(body, "\n\n");
        g_string_append(body, summary);
    }
    if (report->undo_path != NULL) {
        g_autofree char *undo = g_filename_display_name(report->undo_path);
        g_autofree char *device = g_filename_display_name(report->device);
        g_string_append(body, "\n\n");
        g_string_append_printf(body, _("To take the repair back: lanyfs-undo %s %s"), undo,
                               device);
    }
    dialog = ADW_MESSAGE_DIALOG(adw_message_dialog_new(parent, heading, body->str));
    adw_message_dialog_set_extra_child(dialog, report_view(report));
    adw_message_dialog_add_response(dialog, "close", _("_Close"));
    g_string_free(body, TRUE);
    return dialog;
}
