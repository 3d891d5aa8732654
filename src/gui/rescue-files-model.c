/*
 * rescue-files-model.c -- tree and search models of the files view (rescue-files-model.h).
 *
 * Shape of the tree:
 *
 *   GtkTreeListModel (rows)
 *     └ GtkFilterListModel (tree filter)      -- the top level
 *         └ RescueIndexList (top-level ids)
 *   and for an expanded directory, made by create_children():
 *     GtkFilterListModel (the same tree filter)
 *       └ RescueIndexList (its children's ids, borrowed from the data)
 *
 * Each level may be sorted as well (a GtkSortListModel over its filter,
 * with the one sorter the view gives, usually its column view's): sorting
 * by level keeps every directory's children under it, and the tree list
 * model never needs a row sorter.
 *
 * The search results are a GtkTreeListModel whose rows never expand, over a
 * GtkFilterListModel (search filter) of every id, sorted the same way.  Each filter reads its
 * settings from a FilterState it owns; the model changes a FilterState and
 * then tells its filter how the change narrows or widens what passes.
 */
#define G_LOG_DOMAIN "rescue-files-model"

#include "config.h"

#include <string.h>

#include "lanyfs.h"
#include "rescue-entry.h"
#include "rescue-files-model.h"
#include "rescue-index-list.h"

/* Lists longer than this are filtered in steps, in idle time. */
#define INCREMENTAL_MIN 2000

typedef struct {
    RescueData *data;  /* owned reference */
    guint mask;        /* RESCUE_STATE_BIT of the states shown */
    char *needle;      /* folded search text, NULL for none (owned) */
    gboolean tree;     /* the tree's test (else the search's) */
} FilterState;

struct _RescueFilesModel {
    GObject parent_instance;

    /* Owned References */
    RescueData *data;                /* the scan */
    GtkCustomFilter *tree_filter;    /* shared by every level of the tree */
    GtkCustomFilter *search_filter;  /* the search results' filter */
    GtkSorter *sorter;               /* sorts every level, NULL for the data's order */
    GtkFilterListModel *tree_top;    /* the filtered top level */
    GtkFilterListModel *search_top;  /* the filtered list of every entry */
    GtkSortListModel *tree_sorted;   /* tree_top sorted, NULL without a sorter */
    GtkSortListModel *search_sorted; /* search_top sorted, NULL without a sorter */
    GtkTreeListModel *tree;          /* the tree */
    GtkTreeListModel *search;        /* the search results, NULL until the first search */

    /* Borrowed References */
    FilterState *tree_state;         /* owned by tree_filter */
    FilterState *search_state;       /* owned by search_filter */

    gboolean searching;              /* the search results are the model */
};

enum {
    PROP_0,
    PROP_MODEL,
    PROP_SEARCHING,
    PROP_PENDING,
    N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(RescueFilesModel, rescue_files_model, G_TYPE_OBJECT)

static void filter_state_free(gpointer p)
{
    FilterState *st = p;

    rescue_data_unref(st->data);
    g_free(st->needle);
    g_free(st);
}

gboolean rescue_files_model_entry_visible(RescueData *data, guint32 id, guint mask,
                                          const char *needle, gboolean tree)
{
    const RescueEntryInfo *e;

    g_return_val_if_fail(data != NULL, FALSE);

    e = rescue_data_get_entry(data, id);
    if (e == NULL)
        return FALSE;
    if (tree)
        return (RESCUE_STATE_BIT(e->state) & mask) != 0 || (e->subtree_states & mask) != 0;
    if ((RESCUE_STATE_BIT(e->state) & mask) == 0)
        return FALSE;
    if (needle == NULL || needle[0] == '\0')
        return TRUE;
    return strstr(rescue_data_get_folded_name(data, id), needle) != NULL;
}

static gboolean filter_match(gpointer item, gpointer user_data)
{
    FilterState *st = user_data;

    return rescue_files_model_entry_visible(st->data, rescue_entry_get_id(RESCUE_ENTRY(item)),
                                            st->mask, st->needle, st->tree);
}

/* What a level's filter and the sorter make of list (both taken over). */
static GListModel *level(GListModel *list, GtkFilter *filter, GtkSorter *sorter, guint n,
                         GtkFilterListModel **filtered_out, GtkSortListModel **sorted_out)
{
    GtkFilterListModel *filtered = gtk_filter_list_model_new(list, filter);
    GtkSortListModel *sorted;

    gtk_filter_list_model_set_incremental(filtered, n >= INCREMENTAL_MIN);
    if (filtered_out != NULL)
        *filtered_out = g_object_ref(filtered);
    if (sorter == NULL)
        return G_LIST_MODEL(filtered);
    sorted = gtk_sort_list_model_new(G_LIST_MODEL(filtered), sorter);
    gtk_sort_list_model_set_incremental(sorted, n >= INCREMENTAL_MIN);
    if (sorted_out != NULL)
        *sorted_out = g_object_ref(sorted);
    return G_LIST_MODEL(sorted);
}

typedef struct {
    GtkFilter *filter;  /* owned reference */
    GtkSorter *sorter;  /* owned reference, may be NULL */
} LevelMaker;

static void level_maker_free(gpointer p)
{
    LevelMaker *lm = p;

    g_object_unref(lm->filter);
    g_clear_object(&lm->sorter);
    g_free(lm);
}

static GListModel *create_children(gpointer item, gpointer user_data)
{
    LevelMaker *lm = user_data;
    RescueEntry *entry = RESCUE_ENTRY(item);
    RescueData *data = rescue_entry_get_data(entry);
    const RescueEntryInfo *e = rescue_entry_get_info(entry);
    const guint32 *ids;
    guint32 n = 0;
    RescueIndexList *list;

    if (e == NULL || e->type != LANYFS_TYPE_DIR || e->nchildren == 0)
        return NULL;
    ids = rescue_data_get_children(data, e->id, &n);
    list = rescue_index_list_new(data, RESCUE_TYPE_ENTRY, rescue_entry_make, ids, n, TRUE);
    return level(G_LIST_MODEL(list), g_object_ref(lm->filter),
                 lm->sorter != NULL ? g_object_ref(lm->sorter) : NULL, n, NULL, NULL);
}

/* Search results never expand. */
static GListModel *no_children(gpointer item, gpointer user_data)
{
    (void)item;
    (void)user_data;
    return NULL;
}

static GtkCustomFilter *new_filter(RescueData *data, gboolean tree, FilterState **state_out)
{
    FilterState *st = g_new0(FilterState, 1);

    st->data = rescue_data_ref(data);
    st->mask = RESCUE_STATE_ALL;
    st->tree = tree;
    *state_out = st;
    return gtk_custom_filter_new(filter_match, st, filter_state_free);
}

static void on_pending_changed(GObject *object, GParamSpec *pspec, gpointer user_data)
{
    RescueFilesModel *self = user_data;

    (void)object;
    (void)pspec;
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_PENDING]);
}

static void rescue_files_model_dispose(GObject *object)
{
    RescueFilesModel *self = RESCUE_FILES_MODEL(object);

    if (self->tree_top != NULL)
        g_signal_handlers_disconnect_by_data(self->tree_top, self);
    if (self->search_top != NULL)
        g_signal_handlers_disconnect_by_data(self->search_top, self);
    if (self->tree_sorted != NULL)
        g_signal_handlers_disconnect_by_data(self->tree_sorted, self);
    if (self->search_sorted != NULL)
        g_signal_handlers_disconnect_by_data(self->search_sorted, self);
    g_clear_object(&self->tree_sorted);
    g_clear_object(&self->search_sorted);
    g_clear_object(&self->sorter);
    g_clear_object(&self->tree);
    g_clear_object(&self->search);
    g_clear_object(&self->tree_top);
    g_clear_object(&self->search_top);
    g_clear_object(&self->tree_filter);
    g_clear_object(&self->search_filter);
    G_OBJECT_CLASS(rescue_files_model_parent_class)->dispose(object);
}

static void rescue_files_model_finalize(GObject *object)
{
    RescueFilesModel *self = RESCUE_FILES_MODEL(object);

    g_clear_pointer(&self->data, rescue_data_unref);
    G_OBJECT_CLASS(rescue_files_model_parent_class)->finalize(object);
}

static void rescue_files_model_get_property(GObject *object, guint prop_id, GValue *value,
                                            GParamSpec *pspec)
{
    RescueFilesModel *self = RESCUE_FILES_MODEL(object);

    switch (prop_id) {
    case PROP_MODEL:
        g_value_set_object(value, rescue_files_model_get_model(self));
        break;
    case PROP_SEARCHING:
        g_value_set_boolean(value, self->searching);
        break;
    case PROP_PENDING:
        g_value_set_boolean(value, rescue_files_model_get_pending(self));
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    }
}

static void rescue_files_model_class_init(RescueFilesModelClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);

    object_class->dispose = rescue_files_model_dispose;
    object_class->finalize = rescue_files_model_finalize;
    object_class->get_property = rescue_files_model_get_property;

    properties[PROP_MODEL] =
        g_param_spec_object("model", NULL, NULL, GTK_TYPE_TREE_LIST_MODEL,
                            G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
    properties[PROP_SEARCHING] =
        g_param_spec_boolean("searching", NULL, NULL, FALSE,
                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
    properties[PROP_PENDING] =
        g_param_spec_boolean("pending", NULL, NULL, FALSE,
                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
    g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void rescue_files_model_init(RescueFilesModel *self)
{
    (void)self;
}

RescueFilesModel *rescue_files_model_new(RescueData *data, GtkSorter *sorter)
{
    RescueFilesModel *self;
    const guint32 *top;
    guint32 ntop = 0;
    RescueIndexList *list;
    LevelMaker *lm;
    GListModel *root;

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(sorter == NULL || GTK_IS_SORTER(sorter), NULL);

    self = g_object_new(RESCUE_TYPE_FILES_MODEL, NULL);
    self->data = rescue_data_ref(data);
    self->sorter = sorter != NULL ? g_object_ref(sorter) : NULL;
    self->tree_filter = new_filter(data, TRUE, &self->tree_state);
    self->search_filter = new_filter(data, FALSE, &self->search_state);

    top = rescue_data_get_top_level(data, &ntop);
    list = rescue_index_list_new(data, RESCUE_TYPE_ENTRY, rescue_entry_make, top, ntop, TRUE);
    root = level(G_LIST_MODEL(list), g_object_ref(GTK_FILTER(self->tree_filter)),
                 sorter != NULL ? g_object_ref(sorter) : NULL, ntop, &self->tree_top,
                 &self->tree_sorted);
    g_signal_connect(self->tree_top, "notify::pending", G_CALLBACK(on_pending_changed), self);
    if (self->tree_sorted != NULL)
        g_signal_connect(self->tree_sorted, "notify::pending", G_CALLBACK(on_pending_changed),
                         self);
    lm = g_new0(LevelMaker, 1);
    lm->filter = g_object_ref(GTK_FILTER(self->tree_filter));
    lm->sorter = sorter != NULL ? g_object_ref(sorter) : NULL;
    self->tree = gtk_tree_list_model_new(root, FALSE, FALSE, create_children, lm,
                                         level_maker_free);
    return self;
}

RescueData *rescue_files_model_get_data(RescueFilesModel *self)
{
    g_return_val_if_fail(RESCUE_IS_FILES_MODEL(self), NULL);
    return self->data;
}

GtkTreeListModel *rescue_files_model_get_model(RescueFilesModel *self)
{
    g_return_val_if_fail(RESCUE_IS_FILES_MODEL(self), NULL);
    return self->searching ? self->search : self->tree;
}

void rescue_files_model_set_states(RescueFilesModel *self, guint mask)
{
    guint old;
    GtkFilterChange change;

    g_return_if_fail(RESCUE_IS_FILES_MODEL(self));

    mask &= RESCUE_STATE_ALL;
    old = self->tree_state->mask;
    if (mask == old)
        return;
    if ((mask & old) == mask)
        change = GTK_FILTER_CHANGE_MORE_STRICT;
    else if ((mask & old) == old)
        change = GTK_FILTER_CHANGE_LESS_STRICT;
    else
        change = GTK_FILTER_CHANGE_DIFFERENT;
    self->tree_state->mask = mask;
    self->search_state->mask = mask;
    gtk_filter_changed(GTK_FILTER(self->tree_filter), change);
    gtk_filter_changed(GTK_FILTER(self->search_filter), change);
}

guint rescue_files_model_get_states(RescueFilesModel *self)
{
    g_return_val_if_fail(RESCUE_IS_FILES_MODEL(self), 0);
    return self->tree_state->mask;
}

static void ensure_search(RescueFilesModel *self)
{
    RescueIndexList *all;
    guint32 n;

    if (self->search != NULL)
        return;
    GListModel *root;

    n = rescue_data_get_n_entries(self->data);
    all = rescue_index_list_new_range(self->data, RESCUE_TYPE_ENTRY, rescue_entry_make, 1, n);
    root = level(G_LIST_MODEL(all), g_object_ref(GTK_FILTER(self->search_filter)),
                 self->sorter != NULL ? g_object_ref(self->sorter) : NULL, n, &self->search_top,
                 &self->search_sorted);
    g_signal_connect(self->search_top, "notify::pending", G_CALLBACK(on_pending_changed), self);
    if (self->search_sorted != NULL)
        g_signal_connect(self->search_sorted, "notify::pending", G_CALLBACK(on_pending_changed),
                         self);
    self->search = gtk_tree_list_model_new(root, FALSE, FALSE, no_children, NULL, NULL);
}

void rescue_files_model_set_search(RescueFilesModel *self, const char *text)
{
    g_autofree char *needle = NULL;
    gboolean searching;
    GtkFilterChange change = GTK_FILTER_CHANGE_DIFFERENT;
    const char *old;

    g_return_if_fail(RESCUE_IS_FILES_MODEL(self));

    if (text != NULL && text[0] != '\0')
        needle = g_utf8_casefold(text, -1);
    searching = needle != NULL;
    old = self->search_state->needle;

    if (searching) {
        ensure_search(self);
        if (old != NULL && strstr(needle, old) != NULL)
            change = GTK_FILTER_CHANGE_MORE_STRICT;
        else if (old != NULL && strstr(old, needle) != NULL)
            change = GTK_FILTER_CHANGE_LESS_STRICT;
        if (g_strcmp0(old, needle) != 0) {
            g_free(self->search_state->needle);
            self->search_state->needle = g_steal_pointer(&needle);
            gtk_filter_changed(GTK_FILTER(self->search_filter), change);
        }
    }
    if (searching != self->searching) {
        self->searching = searching;
        g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SEARCHING]);
        g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_MODEL]);
        g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_PENDING]);
    }
}

gboolean rescue_files_model_get_searching(RescueFilesModel *self)
{
    g_return_val_if_fail(RESCUE_IS_FILES_MODEL(self), FALSE);
    return self->searching;
}

gboolean rescue_files_model_get_pending(RescueFilesModel *self)
{
    GtkFilterListModel *top;

    g_return_val_if_fail(RESCUE_IS_FILES_MODEL(self), FALSE);

    GtkSortListModel *sorted;

    top = self->searching ? self->search_top : self->tree_top;
    sorted = self->searching ? self->search_sorted : self->tree_sorted;
    return (top != NULL && gtk_filter_list_model_get_pending(top) > 0) ||
           (sorted != NULL && gtk_sort_list_model_get_pending(sorted) > 0);
}

/* Position of the row of entry id at depth, searching from start while rows stay deeper. */
static guint find_row(GtkTreeListModel *tree, guint start, guint depth, guint32 id)
{
    guint n = g_list_model_get_n_items(G_LIST_MODEL(tree));

    for (guint pos = start; pos < n; pos++) {
        g_autoptr(GtkTreeListRow) row = gtk_tree_list_model_get_row(tree, pos);
        guint d = gtk_tree_list_row_get_depth(row);
        g_autoptr(GObject) item = NULL;

        if (d < depth)
            break;
        if (d != depth)
            continue;
        item = gtk_tree_list_row_get_item(row);
        if (RESCUE_IS_ENTRY(item) && rescue_entry_get_id(RESCUE_ENTRY(item)) == id)
            return pos;
    }
    return G_MAXUINT;
}

guint rescue_files_model_reveal(RescueFilesModel *self, guint32 id)
{
    g_autofree guint32 *chain = NULL;
    guint n = 0;
    guint pos = 0;

    g_return_val_if_fail(RESCUE_IS_FILES_MODEL(self), G_MAXUINT);

    if (rescue_data_get_entry(self->data, id) == NULL)
        return G_MAXUINT;
    rescue_files_model_set_search(self, NULL);
    chain = rescue_data_get_ancestry(self->data, id, &n);
    for (guint i = 0; i < n; i++) {
        if (!rescue_files_model_entry_visible(self->data, chain[i], self->tree_state->mask, NULL,
                                              TRUE))
            return G_MAXUINT;
    }
    for (guint i = 0; i < n; i++) {
        pos = find_row(self->tree, i == 0 ? 0 : pos + 1, i, chain[i]);
        if (pos == G_MAXUINT)
            return G_MAXUINT;
        if (i + 1 < n) {
            g_autoptr(GtkTreeListRow) row = gtk_tree_list_model_get_row(self->tree, pos);
            gtk_tree_list_row_set_expanded(row, TRUE);
        }
    }
    return n > 0 ? pos : G_MAXUINT;
}
