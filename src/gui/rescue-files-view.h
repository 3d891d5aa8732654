/*
 * rescue-files-view.h -- the files view: every entry the scan found, as a tree.
 *
 * A GtkColumnView over the RescueFilesModel of a scan (name with an
 * expander, size, modified, state, how much is recoverable), sortable by
 * every column, with a search bar (names, case-insensitive) and toggles for
 * live, deleted and orphaned entries.  Rows can be selected several at a
 * time (for Salvage); "entry-selected" names the first selected entry.
 */
#pragma once

#include <gtk/gtk.h>

#include "rescue-data.h"

G_BEGIN_DECLS

#define RESCUE_TYPE_FILES_VIEW (rescue_files_view_get_type())
G_DECLARE_FINAL_TYPE(RescueFilesView, rescue_files_view, RESCUE, FILES_VIEW, GtkWidget)

GtkWidget *rescue_files_view_new(void);
void rescue_files_view_set_data(RescueFilesView *self, RescueData *data);

/* Show and select entry id (ending a search that hides it); FALSE when the filters hide it. */
gboolean rescue_files_view_select_entry(RescueFilesView *self, guint32 id);
/* Ids of the selected entries; g_free the array.  *n receives the count. */
guint32 *rescue_files_view_get_selected(RescueFilesView *self, guint *n);

/* Open the search bar and search for text. */
void rescue_files_view_search(RescueFilesView *self, const char *text);
/* Whether filtering or sorting is still running in idle time. */
gboolean rescue_files_view_get_pending(RescueFilesView *self);
/* Open the search bar and focus its entry. */
void rescue_files_view_start_search(RescueFilesView *self);
gboolean rescue_files_view_get_search_mode(RescueFilesView *self);
void rescue_files_view_set_search_mode(RescueFilesView *self, gboolean mode);

/* Rows the view shows now (for the smoke test). */
guint rescue_files_view_get_n_rows(RescueFilesView *self);

G_END_DECLS
