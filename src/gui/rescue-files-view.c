/*
 * rescue-files-view.c -- the files view (rescue-files-view.h).
 *
 * Model chain, from the data to the rows:
 *
 *   RescueFilesModel (tree, or search results; each level sorted by the
 *   column view's sorter) -> GtkMultiSelection -> GtkColumnView
 *
 * Cells are GtkInscriptions (cheap to make and to bind, so scrolling
 * through 100,000 rows stays smooth); the name cell is a GtkTreeExpander
 * around an icon and the name.  Deleted and orphaned rows carry the style
 * classes "deleted" and "orphaned".
 */
#define G_LOG_DOMAIN "rescue-files-view"

#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <string.h>

#include "lanyfs.h"
#include "rescue-entry.h"
#include "rescue-files-model.h"
#include "rescue-files-view.h"
#include "rescue-format.h"

struct _RescueFilesView {
    GtkWidget parent_instance;

    /* Template Widgets */
    GtkSearchBar *search_bar;
    GtkSearchEntry *search_entry;
    GtkToggleButton *live_toggle;
    GtkToggleButton *deleted_toggle;
    GtkToggleButton *orphans_toggle;
    GtkLabel *count_label;
    GtkStack *stack;
    GtkColumnView *column_view;
    AdwStatusPage *empty_page;

    /* Owned References */
    RescueData *data;               /* the scan shown, NULL for none */
    RescueFilesModel *model;        /* its list models */
    GtkMultiSelection *selection;   /* what the column view shows */

    guint32 selected_id;            /* first selected entry, 0 for none */
};

enum {
    SIGNAL_ENTRY_SELECTED,
    N_SIGNALS
};

enum {
    PROP_0,
    PROP_SEARCH_MODE,
    N_PROPS
};

static guint signals[N_SIGNALS];
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(RescueFilesView, rescue_files_view, GTK_TYPE_WIDGET)

/*
 * The entry of a list item (a GtkTreeListRow holding a RescueEntry), NULL
 * when none.  Items are made afresh for each request, so the entry object
 * goes at once; its fields live in the RescueData, which the view holds.
 */
static const RescueEntryInfo *item_info(GtkListItem *item)
{
    GtkTreeListRow *row = gtk_list_item_get_item(item);
    g_autoptr(GObject) entry = NULL;

    if (row == NULL)
        return NULL;
    entry = gtk_tree_list_row_get_item(row);
    return RESCUE_IS_ENTRY(entry) ? rescue_entry_get_info(RESCUE_ENTRY(entry)) : NULL;
}

static void set_state_classes(GtkWidget *w, const RescueEntryInfo *e)
{
    if (e != NULL && e->state == SCAN_ENTRY_DELETED)
        gtk_widget_add_css_class(w, "deleted");
    else
        gtk_widget_remove_css_class(w, "deleted");
    if (e != NULL && e->state == SCAN_ENTRY_ORPHAN)
        gtk_widget_add_css_class(w, "orphaned");
    else
        gtk_widget_remove_css_class(w, "orphaned");
}

/* ---- cells ----------------------------------------------------------------- */

static void setup_name(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
    GtkWidget *expander = gtk_tree_expander_new();
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *icon = gtk_image_new();
    GtkWidget *label = gtk_inscription_new(NULL);

    (void)factory;
    (void)user_data;
    gtk_inscription_set_text_overflow(GTK_INSCRIPTION(label),
                                      GTK_INSCRIPTION_OVERFLOW_ELLIPSIZE_END);
    gtk_inscription_set_min_chars(GTK_INSCRIPTION(label), 12);
    gtk_inscription_set_nat_chars(GTK_INSCRIPTION(label), 30);
    gtk_widget_set_hexpand(label, TRUE);
    gtk_box_append(GTK_BOX(box), icon);
    gtk_box_append(GTK_BOX(box), label);
    gtk_tree_expander_set_child(GTK_TREE_EXPANDER(expander), box);
    gtk_list_item_set_child(item, expander);
}

static void bind_name(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
    GtkWidget *expander = gtk_list_item_get_child(item);
    GtkWidget *box = gtk_tree_expander_get_child(GTK_TREE_EXPANDER(expander));
    GtkWidget *icon = gtk_widget_get_first_child(box);
    GtkWidget *label = gtk_widget_get_next_sibling(icon);
    const RescueEntryInfo *e = item_info(item);
    const char *icon_name;

    (void)factory;
    (void)user_data;
    gtk_tree_expander_set_list_row(GTK_TREE_EXPANDER(expander), gtk_list_item_get_item(item));
    if (e == NULL)
        return;
    if (e->type == LANYFS_TYPE_DIR)
        icon_name = "folder-symbolic";
    else if (e->state == SCAN_ENTRY_DELETED)
        icon_name = "user-trash-symbolic";
    else
        icon_name = "text-x-generic-symbolic";
    gtk_image_set_from_icon_name(GTK_IMAGE(icon), icon_name);
    gtk_inscription_set_text(GTK_INSCRIPTION(label), e->name[0] ? e->name : _("(no name)"));
    gtk_widget_set_tooltip_text(label, e->path);
    set_state_classes(box, e);
}

static void unbind_name(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
    GtkWidget *expander = gtk_list_item_get_child(item);

    (void)factory;
    (void)user_data;
    gtk_tree_expander_set_list_row(GTK_TREE_EXPANDER(expander), NULL);
}

static void setup_text(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
    GtkWidget *label = gtk_inscription_new(NULL);
    float xalign = GPOINTER_TO_INT(user_data) ? 1.0f : 0.0f;

    (void)factory;
    gtk_inscription_set_xalign(GTK_INSCRIPTION(label), xalign);
    gtk_inscription_set_text_overflow(GTK_INSCRIPTION(label),
                                      GTK_INSCRIPTION_OVERFLOW_ELLIPSIZE_END);
    gtk_inscription_set_min_chars(GTK_INSCRIPTION(label), 6);
    gtk_inscription_set_nat_chars(GTK_INSCRIPTION(label), 10);
    gtk_widget_add_css_class(label, "numeric");
    gtk_list_item_set_child(item, label);
}

typedef char *(*CellText)(const RescueEntryInfo *e);

static char *text_size(const RescueEntryInfo *e)
{
    return rescue_format_size(e);
}

static char *text_modified(const RescueEntryInfo *e)
{
    return rescue_format_time(e->modified);
}

static char *text_state(const RescueEntryInfo *e)
{
    return g_strdup(rescue_format_entry_state(e));
}

static char *text_recoverable(const RescueEntryInfo *e)
{
    return rescue_format_recoverable(e);
}

static void bind_text(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
    CellText fn = g_object_get_data(G_OBJECT(factory), "cell-text");
    const RescueEntryInfo *e = item_info(item);
    g_autofree char *text = NULL;

    (void)user_data;
    if (e == NULL || fn == NULL)
        return;
    text = fn(e);
    gtk_inscription_set_text(GTK_INSCRIPTION(gtk_list_item_get_child(item)), text);
    set_state_classes(gtk_list_item_get_child(item), e);
}

/* ---- sorters ---------------------------------------------------------------- */

static const RescueEntryInfo *sort_info(gconstpointer item)
{
    return rescue_entry_get_info(RESCUE_ENTRY((gpointer)item));
}

static int order(gint64 a, gint64 b)
{
    return a < b ? GTK_ORDERING_SMALLER : (a > b ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL);
}

static int sort_name(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const RescueEntryInfo *x = sort_info(a);
    const RescueEntryInfo *y = sort_info(b);
    gboolean xd = x->type == LANYFS_TYPE_DIR;
    gboolean yd = y->type == LANYFS_TYPE_DIR;
    int c;

    (void)user_data;
    if (xd != yd)
        return xd ? GTK_ORDERING_SMALLER : GTK_ORDERING_LARGER;
    c = g_utf8_collate(x->name, y->name);
    return c != 0 ? (c < 0 ? GTK_ORDERING_SMALLER : GTK_ORDERING_LARGER) : order(x->id, y->id);
}

static int sort_size(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const RescueEntryInfo *x = sort_info(a);
    const RescueEntryInfo *y = sort_info(b);

    (void)user_data;
    if (x->size != y->size)
        return x->size < y->size ? GTK_ORDERING_SMALLER : GTK_ORDERING_LARGER;
    return order(x->id, y->id);
}

static int sort_modified(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const RescueEntryInfo *x = sort_info(a);
    const RescueEntryInfo *y = sort_info(b);

    (void)user_data;
    return x->modified != y->modified ? order(x->modified, y->modified) : order(x->id, y->id);
}

static int sort_state(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const RescueEntryInfo *x = sort_info(a);
    const RescueEntryInfo *y = sort_info(b);

    (void)user_data;
    return x->state != y->state ? order(x->state, y->state) : order(x->id, y->id);
}

static int sort_recoverable(gconstpointer a, gconstpointer b, gpointer user_data)
{
    double x = rescue_recoverable_fraction(sort_info(a));
    double y = rescue_recoverable_fraction(sort_info(b));

    (void)user_data;
    if (x != y)
        return x < y ? GTK_ORDERING_SMALLER : GTK_ORDERING_LARGER;
    return order(sort_info(a)->id, sort_info(b)->id);
}

static GtkColumnViewColumn *add_column(RescueFilesView *self, const char *title, CellText fn,
                                       gboolean right, GCompareDataFunc compare, int width)
{
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    GtkColumnViewColumn *column;
    GtkSorter *sorter = GTK_SORTER(gtk_custom_sorter_new(compare, NULL, NULL));

    if (fn == NULL) {
        g_signal_connect(factory, "setup", G_CALLBACK(setup_name), NULL);
        g_signal_connect(factory, "bind", G_CALLBACK(bind_name), NULL);
        g_signal_connect(factory, "unbind", G_CALLBACK(unbind_name), NULL);
    } else {
        g_object_set_data(G_OBJECT(factory), "cell-text", (gpointer)fn);
        g_signal_connect(factory, "setup", G_CALLBACK(setup_text), GINT_TO_POINTER(right));
        g_signal_connect(factory, "bind", G_CALLBACK(bind_text), NULL);
    }
    column = gtk_column_view_column_new(title, factory);
    gtk_column_view_column_set_sorter(column, sorter);
    /* A width of 0 takes the room left; the others keep theirs and can be resized. */
    gtk_column_view_column_set_expand(column, width == 0);
    if (width > 0)
        gtk_column_view_column_set_fixed_width(column, width);
    gtk_column_view_column_set_resizable(column, TRUE);
    gtk_column_view_append_column(self->column_view, column);
    g_object_unref(sorter);
    g_object_unref(column);
    return column;
}

/* ---- state ------------------------------------------------------------------- */

static void update_count(RescueFilesView *self)
{
    guint counts[3] = {0};
    g_autofree char *text = NULL;

    if (self->data == NULL) {
        gtk_label_set_text(self->count_label, "");
        return;
    }
    for (guint32 id = 1; id <= rescue_data_get_n_entries(self->data); id++) {
        const RescueEntryInfo *e = rescue_data_get_entry(self->data, id);
        if (e->state <= SCAN_ENTRY_ORPHAN && id != rescue_data_get_root(self->data))
            counts[e->state]++;
    }
    /* TRANSLATORS: counts of entries in the files view's toolbar */
    text = g_strdup_printf(_("%u live, %u deleted, %u orphaned"), counts[0], counts[1], counts[2]);
    gtk_label_set_text(self->count_label, text);
}

static void update_stack(RescueFilesView *self)
{
    gboolean empty = self->selection != NULL &&
                     g_list_model_get_n_items(G_LIST_MODEL(self->selection)) == 0 &&
                     !rescue_files_model_get_pending(self->model);

    if (empty && rescue_files_model_get_searching(self->model))
        adw_status_page_set_title(self->empty_page, _("No Matching Entries"));
    else if (empty)
        adw_status_page_set_title(self->empty_page, _("No Entries Shown"));
    gtk_stack_set_visible_child_name(self->stack, empty ? "empty" : "list");
}

static void on_items_changed(GListModel *model, guint position, guint removed, guint added,
                             gpointer user_data)
{
    (void)model;
    (void)position;
    (void)removed;
    (void)added;
    update_stack(user_data);
}

static void on_pending_changed(GObject *object, GParamSpec *pspec, gpointer user_data)
{
    (void)object;
    (void)pspec;
    update_stack(user_data);
}

static void on_model_changed(GObject *object, GParamSpec *pspec, gpointer user_data)
{
    RescueFilesView *self = user_data;

    (void)object;
    (void)pspec;
    gtk_multi_selection_set_model(self->selection,
                                  G_LIST_MODEL(rescue_files_model_get_model(self->model)));
    update_stack(self);
}

static void on_selection_changed(GtkSelectionModel *model, guint position, guint n_items,
                                 gpointer user_data)
{
    RescueFilesView *self = user_data;
    g_autoptr(GtkBitset) set = gtk_selection_model_get_selection(model);
    guint32 id = 0;

    (void)position;
    (void)n_items;
    if (!gtk_bitset_is_empty(set)) {
        g_autoptr(GtkTreeListRow) row = g_list_model_get_item(G_LIST_MODEL(model),
                                                              gtk_bitset_get_minimum(set));
        if (row != NULL) {
            g_autoptr(GObject) entry = gtk_tree_list_row_get_item(row);
            if (RESCUE_IS_ENTRY(entry))
                id = rescue_entry_get_id(RESCUE_ENTRY(entry));
        }
    }
    if (id != self->selected_id) {
        self->selected_id = id;
        g_signal_emit(self, signals[SIGNAL_ENTRY_SELECTED], 0, id);
    }
}

static guint states_mask(RescueFilesView *self)
{
    guint mask = 0;

    if (gtk_toggle_button_get_active(self->live_toggle))
        mask |= RESCUE_STATE_BIT(SCAN_ENTRY_LIVE);
    if (gtk_toggle_button_get_active(self->deleted_toggle))
        mask |= RESCUE_STATE_BIT(SCAN_ENTRY_DELETED);
    if (gtk_toggle_button_get_active(self->orphans_toggle))
        mask |= RESCUE_STATE_BIT(SCAN_ENTRY_ORPHAN);
    return mask;
}

static void on_state_toggled(GtkToggleButton *button, RescueFilesView *self)
{
    (void)button;
    if (self->model != NULL)
        rescue_files_model_set_states(self->model, states_mask(self));
}

static void on_search_changed(GtkSearchEntry *entry, RescueFilesView *self)
{
    if (self->model != NULL)
        rescue_files_model_set_search(self->model, gtk_editable_get_text(GTK_EDITABLE(entry)));
}

static void on_stop_search(GtkSearchEntry *entry, RescueFilesView *self)
{
    gtk_editable_set_text(GTK_EDITABLE(entry), "");
    gtk_search_bar_set_search_mode(self->search_bar, FALSE);
}

static void on_row_activated(GtkColumnView *view, guint position, RescueFilesView *self)
{
    g_autoptr(GtkTreeListRow) row = NULL;

    (void)view;
    row = g_list_model_get_item(G_LIST_MODEL(self->selection), position);
    if (row != NULL && gtk_tree_list_row_is_expandable(row))
        gtk_tree_list_row_set_expanded(row, !gtk_tree_list_row_get_expanded(row));
}

static void on_search_mode(GObject *bar, GParamSpec *pspec, RescueFilesView *self)
{
    (void)bar;
    (void)pspec;
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SEARCH_MODE]);
}

/* ---- GObject ----------------------------------------------------------------- */

static void rescue_files_view_get_property(GObject *object, guint prop_id, GValue *value,
                                           GParamSpec *pspec)
{
    RescueFilesView *self = RESCUE_FILES_VIEW(object);

    switch (prop_id) {
    case PROP_SEARCH_MODE:
        g_value_set_boolean(value, gtk_search_bar_get_search_mode(self->search_bar));
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    }
}

static void rescue_files_view_set_property(GObject *object, guint prop_id, const GValue *value,
                                           GParamSpec *pspec)
{
    RescueFilesView *self = RESCUE_FILES_VIEW(object);

    switch (prop_id) {
    case PROP_SEARCH_MODE:
        gtk_search_bar_set_search_mode(self->search_bar, g_value_get_boolean(value));
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    }
}

static void rescue_files_view_dispose(GObject *object)
{
    RescueFilesView *self = RESCUE_FILES_VIEW(object);

    if (self->model != NULL)
        g_signal_handlers_disconnect_by_data(self->model, self);
    if (self->selection != NULL)
        g_signal_handlers_disconnect_by_data(self->selection, self);
    if (self->search_bar != NULL)
        g_signal_handlers_disconnect_by_data(self->search_bar, self);
    gtk_widget_dispose_template(GTK_WIDGET(self), RESCUE_TYPE_FILES_VIEW);
    /* Children the template made but nothing binds are ours to unparent. */
    for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self))) != NULL;)
        gtk_widget_unparent(child);
    g_clear_object(&self->selection);
    g_clear_object(&self->model);
    g_clear_pointer(&self->data, rescue_data_unref);
    G_OBJECT_CLASS(rescue_files_view_parent_class)->dispose(object);
}

static void rescue_files_view_class_init(RescueFilesViewClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);

    object_class->dispose = rescue_files_view_dispose;
    object_class->get_property = rescue_files_view_get_property;
    object_class->set_property = rescue_files_view_set_property;

    properties[PROP_SEARCH_MODE] =
        g_param_spec_boolean("search-mode", NULL, NULL, FALSE,
                             G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
    g_object_class_install_properties(object_class, N_PROPS, properties);

    signals[SIGNAL_ENTRY_SELECTED] =
        g_signal_new("entry-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 1, G_TYPE_UINT);

    gtk_widget_class_set_template_from_resource(widget_class,
                                                "/org/lanyfs/Rescue/ui/rescue-files-view.ui");
    gtk_widget_class_bind_template_child(widget_class, RescueFilesView, search_bar);
    gtk_widget_class_bind_template_child(widget_class, RescueFilesView, search_entry);
    gtk_widget_class_bind_template_child(widget_class, RescueFilesView, live_toggle);
    gtk_widget_class_bind_template_child(widget_class, RescueFilesView, deleted_toggle);
    gtk_widget_class_bind_template_child(widget_class, RescueFilesView, orphans_toggle);
    gtk_widget_class_bind_template_child(widget_class, RescueFilesView, count_label);
    gtk_widget_class_bind_template_child(widget_class, RescueFilesView, stack);
    gtk_widget_class_bind_template_child(widget_class, RescueFilesView, column_view);
    gtk_widget_class_bind_template_child(widget_class, RescueFilesView, empty_page);
    gtk_widget_class_bind_template_callback(widget_class, on_state_toggled);
    gtk_widget_class_bind_template_callback(widget_class, on_search_changed);
    gtk_widget_class_bind_template_callback(widget_class, on_stop_search);
    gtk_widget_class_bind_template_callback(widget_class, on_row_activated);
    gtk_widget_class_set_css_name(widget_class, "filesview");
}

static void rescue_files_view_init(RescueFilesView *self)
{
    gtk_widget_init_template(GTK_WIDGET(self));

    gtk_search_bar_connect_entry(self->search_bar, GTK_EDITABLE(self->search_entry));
    g_signal_connect(self->search_bar, "notify::search-mode-enabled", G_CALLBACK(on_search_mode),
                     self);
    add_column(self, _("Name"), NULL, FALSE, sort_name, 0);
    add_column(self, _("Size"), text_size, TRUE, sort_size, 90);
    add_column(self, _("Modified"), text_modified, FALSE, sort_modified, 170);
    add_column(self, _("State"), text_state, FALSE, sort_state, 90);
    add_column(self, _("Recoverable"), text_recoverable, TRUE, sort_recoverable, 110);
}

/* ---- public ------------------------------------------------------------------ */

GtkWidget *rescue_files_view_new(void)
{
    return g_object_new(RESCUE_TYPE_FILES_VIEW, NULL);
}

void rescue_files_view_set_data(RescueFilesView *self, RescueData *data)
{
    g_return_if_fail(RESCUE_IS_FILES_VIEW(self));

    gtk_column_view_set_model(self->column_view, NULL);
    if (self->model != NULL)
        g_signal_handlers_disconnect_by_data(self->model, self);
    if (self->selection != NULL)
        g_signal_handlers_disconnect_by_data(self->selection, self);
    g_clear_object(&self->selection);
    g_clear_object(&self->model);
    g_clear_pointer(&self->data, rescue_data_unref);
    self->selected_id = 0;

    if (data != NULL) {
        const char *text = gtk_editable_get_text(GTK_EDITABLE(self->search_entry));

        self->data = rescue_data_ref(data);
        self->model = rescue_files_model_new(data, gtk_column_view_get_sorter(self->column_view));
        rescue_files_model_set_states(self->model, states_mask(self));
        rescue_files_model_set_search(self->model, text);
        self->selection = gtk_multi_selection_new(
            g_object_ref(G_LIST_MODEL(rescue_files_model_get_model(self->model))));
        g_signal_connect(self->model, "notify::model", G_CALLBACK(on_model_changed), self);
        g_signal_connect(self->model, "notify::pending", G_CALLBACK(on_pending_changed), self);
        g_signal_connect(self->selection, "items-changed", G_CALLBACK(on_items_changed), self);
        g_signal_connect(self->selection, "selection-changed", G_CALLBACK(on_selection_changed),
                         self);
        gtk_column_view_set_model(self->column_view, GTK_SELECTION_MODEL(self->selection));
    }
    update_count(self);
    if (self->model != NULL)
        update_stack(self);
}

/* The list view inside the column view, for its scroll action. */
static GtkWidget *inner_list_view(RescueFilesView *self)
{
    for (GtkWidget *child = gtk_widget_get_first_child(GTK_WIDGET(self->column_view));
         child != NULL; child = gtk_widget_get_next_sibling(child))
        if (GTK_IS_LIST_VIEW(child))
            return child;
    return NULL;
}

gboolean rescue_files_view_select_entry(RescueFilesView *self, guint32 id)
{
    guint pos;
    GtkWidget *list;

    g_return_val_if_fail(RESCUE_IS_FILES_VIEW(self), FALSE);

    if (self->model == NULL)
        return FALSE;
    if (rescue_files_model_get_searching(self->model)) {
        gtk_editable_set_text(GTK_EDITABLE(self->search_entry), "");
        gtk_search_bar_set_search_mode(self->search_bar, FALSE);
    }
    pos = rescue_files_model_reveal(self->model, id);
    if (pos == G_MAXUINT)
        return FALSE;
    gtk_selection_model_select_item(GTK_SELECTION_MODEL(self->selection), pos, TRUE);
    list = inner_list_view(self);
    if (list != NULL)
        gtk_widget_activate_action(list, "list.scroll-to-item", "u", pos);
    return TRUE;
}

guint32 *rescue_files_view_get_selected(RescueFilesView *self, guint *n)
{
    g_autoptr(GtkBitset) set = NULL;
    GtkBitsetIter iter;
    guint pos;
    GArray *ids;

    g_return_val_if_fail(RESCUE_IS_FILES_VIEW(self), NULL);
    g_return_val_if_fail(n != NULL, NULL);

    ids = g_array_new(FALSE, FALSE, sizeof(guint32));
    if (self->selection != NULL) {
        set = gtk_selection_model_get_selection(GTK_SELECTION_MODEL(self->selection));
        for (gboolean ok = gtk_bitset_iter_init_first(&iter, set, &pos); ok;
             ok = gtk_bitset_iter_next(&iter, &pos)) {
            g_autoptr(GtkTreeListRow) row = g_list_model_get_item(G_LIST_MODEL(self->selection),
                                                                  pos);
            g_autoptr(GObject) entry = row != NULL ? gtk_tree_list_row_get_item(row) : NULL;
            if (RESCUE_IS_ENTRY(entry)) {
                guint32 id = rescue_entry_get_id(RESCUE_ENTRY(entry));
                g_array_append_val(ids, id);
            }
        }
    }
    *n = ids->len;
    return (guint32 *)g_array_free(ids, FALSE);
}

void rescue_files_view_start_search(RescueFilesView *self)
{
    g_return_if_fail(RESCUE_IS_FILES_VIEW(self));

    gtk_search_bar_set_search_mode(self->search_bar, TRUE);
    gtk_widget_grab_focus(GTK_WIDGET(self->search_entry));
}

gboolean rescue_files_view_get_search_mode(RescueFilesView *self)
{
    g_return_val_if_fail(RESCUE_IS_FILES_VIEW(self), FALSE);
    return gtk_search_bar_get_search_mode(self->search_bar);
}

void rescue_files_view_set_search_mode(RescueFilesView *self, gboolean mode)
{
    g_return_if_fail(RESCUE_IS_FILES_VIEW(self));
    gtk_search_bar_set_search_mode(self->search_bar, mode);
}

guint rescue_files_view_get_n_rows(RescueFilesView *self)
{
    g_return_val_if_fail(RESCUE_IS_FILES_VIEW(self), 0);

    return self->selection != NULL ? g_list_model_get_n_items(G_LIST_MODEL(self->selection)) : 0;
}

void rescue_files_view_search(RescueFilesView *self, const char *text)
{
    g_return_if_fail(RESCUE_IS_FILES_VIEW(self));

    rescue_files_view_start_search(self);
    gtk_editable_set_text(GTK_EDITABLE(self->search_entry), text != NULL ? text : "");
    /* The entry waits a moment before it says the text changed: do not wait. */
    if (self->model != NULL)
        rescue_files_model_set_search(self->model, text);
}

gboolean rescue_files_view_get_pending(RescueFilesView *self)
{
    g_return_val_if_fail(RESCUE_IS_FILES_VIEW(self), FALSE);

    if (self->model == NULL)
        return FALSE;
    return rescue_files_model_get_pending(self->model);
}
