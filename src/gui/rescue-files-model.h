/*
 * rescue-files-model.h -- the list models behind the files view.
 *
 * Two GtkTreeListModels over one RescueData: the tree (the top level, and
 * each directory's children when its row is expanded) and, while a search
 * runs, a flat list of every entry whose name holds the search text.  Both
 * are filtered by state (live, deleted, orphaned) through one GtkCustomFilter
 * shared by every level, so changing the states refilters what is already
 * expanded.  In the tree, a directory stays when any entry below it has a
 * state shown.  Filtering of big lists is incremental, so the view stays
 * responsive on 100,000 entries.
 *
 * The model works without a display: the tests drive it without
 * initialising GTK.
 */
#pragma once

#include <gtk/gtk.h>

#include "rescue-data.h"

G_BEGIN_DECLS

#define RESCUE_TYPE_FILES_MODEL (rescue_files_model_get_type())
G_DECLARE_FINAL_TYPE(RescueFilesModel, rescue_files_model, RESCUE, FILES_MODEL, GObject)

/* sorter (may be NULL) sorts every level; the model keeps a reference. */
RescueFilesModel *rescue_files_model_new(RescueData *data, GtkSorter *sorter);
RescueData *rescue_files_model_get_data(RescueFilesModel *self);

/* The tree, or the search results while searching ("model" notifies the switch). */
GtkTreeListModel *rescue_files_model_get_model(RescueFilesModel *self);

/* RESCUE_STATE_BIT mask of the states shown (all by default). */
void rescue_files_model_set_states(RescueFilesModel *self, guint mask);
guint rescue_files_model_get_states(RescueFilesModel *self);

/* Search for text in names (case-insensitive); NULL or "" ends the search. */
void rescue_files_model_set_search(RescueFilesModel *self, const char *text);
gboolean rescue_files_model_get_searching(RescueFilesModel *self);
/* Whether the incremental filter is still working. */
gboolean rescue_files_model_get_pending(RescueFilesModel *self);

/*
 * Show entry id: end a search that hides it, expand its ancestors, and
 * return its position in the model; G_MAXUINT when the state filter hides it.
 */
guint rescue_files_model_reveal(RescueFilesModel *self, guint32 id);

/* The filters' test, for the tests: whether entry id passes with mask and folded needle. */
gboolean rescue_files_model_entry_visible(RescueData *data, guint32 id, guint mask,
                                          const char *needle, gboolean tree);

G_END_DECLS
