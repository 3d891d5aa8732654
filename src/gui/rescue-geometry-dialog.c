/*
 * rescue-geometry-dialog.c -- the block size and address length to read an
 * image with (contract in rescue-geometry-dialog.h).
 *
 * Two combo rows in a boxed list under the message: the block sizes of
 * the format (512..4096, row i is 2^(9+i) bytes) and "Automatic" then the
 * address lengths 1..8 (row i is i bytes).  The rows are kept on the
 * dialog ("size-row", "addrlen-row").
 */
#include "config.h"

#include <glib/gi18n.h>

#include "lanyfs.h"
#include "rescue-geometry-dialog.h"

static AdwComboRow *row_of(AdwMessageDialog *dialog, const char *key)
{
    return ADW_COMBO_ROW(g_object_get_data(G_OBJECT(dialog), key));
}

void rescue_geometry_dialog_set(AdwMessageDialog *dialog, unsigned blockbits, unsigned addrlen)
{
    g_return_if_fail(ADW_IS_MESSAGE_DIALOG(dialog));
    if (blockbits < LANYFS_BLOCKBITS_MIN || blockbits > LANYFS_BLOCKBITS_MAX)
        blockbits = LANYFS_BLOCKBITS_MAX;
    if (addrlen > LANYFS_ADDRLEN_MAX)
        addrlen = 0;
    adw_combo_row_set_selected(row_of(dialog, "size-row"), blockbits - LANYFS_BLOCKBITS_MIN);
    adw_combo_row_set_selected(row_of(dialog, "addrlen-row"), addrlen);
}

void rescue_geometry_dialog_get(AdwMessageDialog *dialog, unsigned *blockbits, unsigned *addrlen)
{
    guint s, a;

    g_return_if_fail(ADW_IS_MESSAGE_DIALOG(dialog));
    s = adw_combo_row_get_selected(row_of(dialog, "size-row"));
    a = adw_combo_row_get_selected(row_of(dialog, "addrlen-row"));
    /* GTK_INVALID_LIST_POSITION when nothing is selected: the defaults. */
    *blockbits = s <= LANYFS_BLOCKBITS_MAX - LANYFS_BLOCKBITS_MIN ? LANYFS_BLOCKBITS_MIN + s
                                                                 : LANYFS_BLOCKBITS_MAX;
    *addrlen = a <= LANYFS_ADDRLEN_MAX ? a : 0;
}

static GtkWidget *combo_row(const char *title, const char *subtitle, GtkStringList *choices)
{
    GtkWidget *row = adw_combo_row_new();

    adw_preferences_row_set_title(ADW_PREFERENCES_ROW(row), title);
    adw_action_row_set_subtitle(ADW_ACTION_ROW(row), subtitle);
    adw_combo_row_set_model(ADW_COMBO_ROW(row), G_LIST_MODEL(choices));
    g_object_unref(choices);
    return row;
}

AdwMessageDialog *rescue_geometry_dialog_new(GtkWindow *parent, unsigned blockbits,
                                             unsigned addrlen)
{
    GtkWidget *dialog, *list, *size_row, *addr_row;
    GtkStringList *sizes = gtk_string_list_new(NULL);
    GtkStringList *lengths = gtk_string_list_new(NULL);

    for (unsigned b = LANYFS_BLOCKBITS_MIN; b <= LANYFS_BLOCKBITS_MAX; b++) {
        g_autofree char *s = g_strdup_printf(_("%u bytes"), 1u << b);
        gtk_string_list_append(sizes, s);
    }
    gtk_string_list_append(lengths, _("Automatic"));
    for (unsigned a = LANYFS_ADDRLEN_MIN; a <= LANYFS_ADDRLEN_MAX; a++) {
        g_autofree char *s = g_strdup_printf(ngettext("%u byte", "%u bytes", a), a);
        gtk_string_list_append(lengths, s);
    }

    dialog = adw_message_dialog_new(
        parent, _("Read With Another Geometry"),
        _("The image is read with this block size and address length, whatever its block 0 "
          "says: the way to the files of an earlier format on a stick that was formatted "
          "again. Nothing is written, and repair stays off for such a scan."));
    list = gtk_list_box_new();
    gtk_list_box_set_selection_mode(GTK_LIST_BOX(list), GTK_SELECTION_NONE);
    gtk_widget_add_css_class(list, "boxed-list");
    size_row = combo_row(_("Block Size"), _("Bytes in each block"), sizes);
    addr_row = combo_row(_("Address Length"),
                         _("Bytes in each block address; Automatic reads it from the files"),
                         lengths);
    gtk_list_box_append(GTK_LIST_BOX(list), size_row);
    gtk_list_box_append(GTK_LIST_BOX(list), addr_row);
    adw_message_dialog_set_extra_child(ADW_MESSAGE_DIALOG(dialog), list);
    g_object_set_data(G_OBJECT(dialog), "size-row", size_row);
    g_object_set_data(G_OBJECT(dialog), "addrlen-row", addr_row);

    adw_message_dialog_add_responses(ADW_MESSAGE_DIALOG(dialog), "cancel", _("_Cancel"), "read",
                                     _("_Read"), NULL);
    adw_message_dialog_set_response_appearance(ADW_MESSAGE_DIALOG(dialog), "read",
                                               ADW_RESPONSE_SUGGESTED);
    adw_message_dialog_set_default_response(ADW_MESSAGE_DIALOG(dialog), "read");
    adw_message_dialog_set_close_response(ADW_MESSAGE_DIALOG(dialog), "cancel");
    rescue_geometry_dialog_set(ADW_MESSAGE_DIALOG(dialog), blockbits, addrlen);
    return ADW_MESSAGE_DIALOG(dialog);
}
