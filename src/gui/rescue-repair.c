/*
 * rescue-repair.c -- the Repair confirmation (rescue-repair.h).
 */
#define G_LOG_DOMAIN "rescue-repair"

#include "config.h"

#include <glib/gi18n.h>

#include "rescue-repair.h"

/* Lines of the plan shown before "and n more". */
#define PLAN_LINES_SHOWN 10

gboolean rescue_repair_available(void)
{
    return FALSE;
}

const char *rescue_repair_unavailable_reason(void)
{
    return _("Repair needs the repair engine, which is not part of this version yet. "
             "Salvage what you need first: it never writes to the stick.");
}

char *rescue_repair_undo_path(RescueData *data)
{
    g_autofree char *base = NULL;
    g_autoptr(GDateTime) now = g_date_time_new_now_local();
    g_autofree char *stamp = g_date_time_format(now, "%Y%m%d-%H%M%S");
    g_autofree char *name = NULL;

    g_return_val_if_fail(data != NULL, NULL);

    base = g_path_get_basename(rescue_data_get_image_path(data));
    name = g_strdup_printf("%s-%s.lanyfs-undo", base, stamp);
    return g_build_filename(g_get_user_data_dir(), "lanyfs-tools", "undo", name, NULL);
}

char **rescue_repair_plan(RescueData *data, guint *n_findings)
{
    g_autoptr(GHashTable) counts = g_hash_table_new(g_str_hash, g_str_equal);
    g_autoptr(GPtrArray) order = g_ptr_array_new();
    GPtrArray *lines = g_ptr_array_new();
    guint n = 0;

    g_return_val_if_fail(data != NULL, NULL);

    for (guint i = 0; i < rescue_data_get_n_findings(data); i++) {
        const RescueFindingInfo *f = rescue_data_get_finding(data, i);
        const struct scan_problem_info *row = scan_problem_lookup(f->code);
        gpointer old;

        if (row == NULL || (row->flags & (SCAN_PF_NO_REPAIR | SCAN_PF_RETIRED)))
            continue;
        n++;
        old = g_hash_table_lookup(counts, row->repair);
        if (old == NULL)
            g_ptr_array_add(order, (gpointer)row->repair);
        g_hash_table_insert(counts, (gpointer)row->repair,
                            GUINT_TO_POINTER(GPOINTER_TO_UINT(old) + 1));
    }
    for (guint i = 0; i < order->len; i++) {
        const char *repair = g_ptr_array_index(order, i);
        guint c = GPOINTER_TO_UINT(g_hash_table_lookup(counts, repair));
        if (c == 1)
            g_ptr_array_add(lines, g_strdup(repair));
        else
            /* TRANSLATORS: a repair and how many findings ask for it */
            g_ptr_array_add(lines, g_strdup_printf(_("%s (%u times)"), repair, c));
    }
    g_ptr_array_add(lines, NULL);
    if (n_findings != NULL)
        *n_findings = n;
    return (char **)g_ptr_array_free(lines, FALSE);
}

AdwMessageDialog *rescue_repair_dialog_new(GtkWindow *parent, RescueData *data)
{
    g_auto(GStrv) plan = NULL;
    g_autofree char *undo = NULL;
    g_autofree char *name = NULL;
    g_autofree char *heading = NULL;
    GString *body = g_string_new(NULL);
    guint n = 0;
    guint lines;
    AdwMessageDialog *dialog;

    g_return_val_if_fail(data != NULL, NULL);

    plan = rescue_repair_plan(data, &n);
    lines = g_strv_length(plan);
    name = g_filename_display_basename(rescue_data_get_image_path(data));
    undo = rescue_repair_undo_path(data);

    if (n == 0) {
        heading = g_strdup(_("Nothing to Repair"));
        g_string_append(body, _("No finding of this scan proposes a repair."));
        dialog = ADW_MESSAGE_DIALOG(adw_message_dialog_new(parent, heading, body->str));
        adw_message_dialog_add_response(dialog, "close", _("_Close"));
        g_string_free(body, TRUE);
        return dialog;
    }

    heading = g_strdup_printf(_("Repair “%s”?"), name);
    g_string_append_printf(body,
                           g_dngettext(GETTEXT_PACKAGE,
                                       "%u finding will be repaired. What will change:",
                                       "%u findings will be repaired. What will change:", n),
                           n);
    g_string_append_c(body, '\n');
    for (guint i = 0; i < lines && i < PLAN_LINES_SHOWN; i++)
        g_string_append_printf(body, "\n• %s", plan[i]);
    if (lines > PLAN_LINES_SHOWN) {
        g_string_append_c(body, '\n');
        g_string_append_printf(body,
                               g_dngettext(GETTEXT_PACKAGE, "• and %u more change",
                                           "• and %u more changes", lines - PLAN_LINES_SHOWN),
                               lines - PLAN_LINES_SHOWN);
    }
    g_string_append(body, "\n\n");
    g_string_append_printf(body, _("Every block is saved before it is written, to the undo file "
                                   "%s, so the repair can be taken back."),
                           undo);

    dialog = ADW_MESSAGE_DIALOG(adw_message_dialog_new(parent, heading, body->str));
    adw_message_dialog_add_responses(dialog, "cancel", _("_Cancel"), "repair", _("_Repair"), NULL);
    adw_message_dialog_set_response_appearance(dialog, "repair", ADW_RESPONSE_DESTRUCTIVE);
    adw_message_dialog_set_default_response(dialog, "cancel");
    adw_message_dialog_set_close_response(dialog, "cancel");
    adw_message_dialog_set_response_enabled(dialog, "repair", rescue_repair_available());
    g_string_free(body, TRUE);
    return dialog;
}
