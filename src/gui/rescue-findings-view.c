/*
 * rescue-findings-view.c -- the findings view (rescue-findings-view.h).
 *
 *   RescueFindingsModel (filtered by severity)
 *     -> GtkSortListModel (the column view's sorter) -> GtkSingleSelection
 *
 * Rows of error and critical findings carry the style class "error",
 * warnings "warning", so the severity reads at a glance beside its icon.
 */
#define G_LOG_DOMAIN "rescue-findings-view"

#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "rescue-finding.h"
#include "rescue-findings-model.h"
#include "rescue-findings-view.h"
#include "rescue-format.h"

struct _RescueFindingsView {
    GtkWidget parent_instance;

    /* Template Widgets */
    GtkDropDown *severity_dropdown;
    GtkLabel *count_label;
    GtkStack *stack;
    GtkColumnView *column_view;
    AdwStatusPage *empty_page;

    /* Owned References */
    RescueData *data;                /* the scan shown, NULL for none */
    RescueFindingsModel *model;      /* filtered findings */
    GtkSortListModel *sorted;        /* sorted by the column view */
    GtkSingleSelection *selection;   /* what the column view shows */
};

enum {
    SIGNAL_FINDING_SELECTED,
    N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(RescueFindingsView, rescue_findings_view, GTK_TYPE_WIDGET)

typedef enum {
    COL_SEVERITY,
    COL_CODE,
    COL_MESSAGE,
    COL_WHERE,
    COL_REPAIR,
} Column;

static const RescueFindingInfo *item_info(GtkListItem *item)
{
    gpointer finding = gtk_list_item_get_item(item);

    return finding != NULL ? rescue_finding_get_info(RESCUE_FINDING(finding)) : NULL;
}

static void setup_cell(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
    Column col = GPOINTER_TO_INT(user_data);
    GtkWidget *label = gtk_inscription_new(NULL);

    (void)factory;
    gtk_inscription_set_text_overflow(GTK_INSCRIPTION(label),
                                      GTK_INSCRIPTION_OVERFLOW_ELLIPSIZE_END);
    gtk_inscription_set_min_chars(GTK_INSCRIPTION(label), col == COL_MESSAGE ? 24 : 8);
    gtk_inscription_set_nat_chars(GTK_INSCRIPTION(label),
                                  col == COL_MESSAGE ? 80 : (col == COL_CODE ? 30 : 20));
    if (col == COL_CODE)
        gtk_widget_add_css_class(label, "monospace");
    if (col == COL_SEVERITY) {
        GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
        gtk_box_append(GTK_BOX(box), gtk_image_new());
        gtk_box_append(GTK_BOX(box), label);
        gtk_list_item_set_child(item, box);
        return;
    }
    gtk_list_item_set_child(item, label);
}

static void bind_cell(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
    Column col = GPOINTER_TO_INT(user_data);
    const RescueFindingInfo *f = item_info(item);
    GtkWidget *child = gtk_list_item_get_child(item);
    g_autofree char *text = NULL;

    (void)factory;
    if (f == NULL)
        return;
    switch (col) {
    case COL_SEVERITY: {
        GtkWidget *icon = gtk_widget_get_first_child(child);
        GtkWidget *label = gtk_widget_get_next_sibling(icon);
        gtk_image_set_from_icon_name(GTK_IMAGE(icon), rescue_format_severity_icon(f->severity));
        gtk_inscription_set_text(GTK_INSCRIPTION(label), rescue_format_severity(f->severity));
        gtk_widget_remove_css_class(child, "error");
        gtk_widget_remove_css_class(child, "warning");
        if (f->severity >= SCAN_SEV_ERROR)
            gtk_widget_add_css_class(child, "error");
        else if (f->severity == SCAN_SEV_WARNING)
            gtk_widget_add_css_class(child, "warning");
        return;
    }
    case COL_CODE:
        text = rescue_format_code(f->code);
        break;
    case COL_MESSAGE:
        text = g_strdup(f->message);
        break;
    case COL_WHERE:
        text = rescue_format_finding_where(f);
        break;
    case COL_REPAIR:
        text = g_strdup(rescue_format_repair(f->code));
        break;
    }
    gtk_inscription_set_text(GTK_INSCRIPTION(child), text);
    gtk_widget_set_tooltip_text(child, text);
}

static const RescueFindingInfo *sort_info(gconstpointer item)
{
    return rescue_finding_get_info(RESCUE_FINDING((gpointer)item));
}

static int by_index(gconstpointer a, gconstpointer b)
{
    guint x = rescue_finding_get_index(RESCUE_FINDING((gpointer)a));
    guint y = rescue_finding_get_index(RESCUE_FINDING((gpointer)b));

    return x < y ? GTK_ORDERING_SMALLER : (x > y ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL);
}

static int sort_cell(gconstpointer a, gconstpointer b, gpointer user_data)
{
    Column col = GPOINTER_TO_INT(user_data);
    const RescueFindingInfo *x = sort_info(a);
    const RescueFindingInfo *y = sort_info(b);
    int c = 0;

    switch (col) {
    case COL_SEVERITY:
        /* Worst first when sorted ascending: that is what one looks for. */
        c = (int)y->severity - (int)x->severity;
        break;
    case COL_CODE:
        c = x->code < y->code ? -1 : (x->code > y->code);
        break;
    case COL_MESSAGE:
        c = g_utf8_collate(x->message, y->message);
        break;
    case COL_WHERE: {
        g_autofree char *wx = rescue_format_finding_where(x);
        g_autofree char *wy = rescue_format_finding_where(y);
        c = g_utf8_collate(wx, wy);
        break;
    }
    case COL_REPAIR:
        c = g_utf8_collate(rescue_format_repair(x->code), rescue_format_repair(y->code));
        break;
    }
    if (c != 0)
        return c < 0 ? GTK_ORDERING_SMALLER : GTK_ORDERING_LARGER;
    return by_index(a, b);
}

static void add_column(RescueFindingsView *self, const char *title, Column col, int width)
{
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    GtkColumnViewColumn *column;
    GtkSorter *sorter = GTK_SORTER(gtk_custom_sorter_new(sort_cell, GINT_TO_POINTER(col), NULL));

    g_signal_connect(factory, "setup", G_CALLBACK(setup_cell), GINT_TO_POINTER(col));
    g_signal_connect(factory, "bind", G_CALLBACK(bind_cell), GINT_TO_POINTER(col));
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
}

static void update_state(RescueFindingsView *self)
{
    guint shown = self->sorted != NULL ? g_list_model_get_n_items(G_LIST_MODEL(self->sorted)) : 0;
    guint total = self->data != NULL ? rescue_data_get_n_findings(self->data) : 0;
    g_autofree char *text = NULL;

    if (self->data == NULL) {
        gtk_label_set_text(self->count_label, "");
        return;
    }
    if (shown == total)
        text = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%u finding", "%u findings", total),
                               total);
    else
        /* TRANSLATORS: "12 of 40 findings shown" */
        text = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%u of %u finding shown",
                                           "%u of %u findings shown", total),
                               shown, total);
    gtk_label_set_text(self->count_label, text);
    if (shown == 0 && total > 0)
        adw_status_page_set_title(self->empty_page, _("Nothing at This Severity"));
    else
        adw_status_page_set_title(self->empty_page, _("No Problems Found"));
    gtk_stack_set_visible_child_name(self->stack, shown == 0 ? "empty" : "list");
}

static void on_items_changed(GListModel *model, guint position, guint removed, guint added,
                             gpointer user_data)
{
    (void)model;
    (void)position;
    (void)removed;
    (void)added;
    update_state(user_data);
}

static void on_selected(GObject *object, GParamSpec *pspec, gpointer user_data)
{
    RescueFindingsView *self = user_data;
    gpointer item = gtk_single_selection_get_selected_item(GTK_SINGLE_SELECTION(object));

    (void)pspec;
    if (item != NULL)
        g_signal_emit(self, signals[SIGNAL_FINDING_SELECTED], 0,
                      rescue_finding_get_index(RESCUE_FINDING(item)));
}

static void on_severity_changed(GtkDropDown *dropdown, GParamSpec *pspec, RescueFindingsView *self)
{
    (void)pspec;
    if (self->model != NULL)
        rescue_findings_model_set_min_severity(self->model,
                                               (guint8)gtk_drop_down_get_selected(dropdown));
}

static void clear(RescueFindingsView *self)
{
    gtk_column_view_set_model(self->column_view, NULL);
    if (self->sorted != NULL)
        g_signal_handlers_disconnect_by_data(self->sorted, self);
    if (self->selection != NULL)
        g_signal_handlers_disconnect_by_data(self->selection, self);
    g_clear_object(&self->selection);
    g_clear_object(&self->sorted);
    g_clear_object(&self->model);
    g_clear_pointer(&self->data, rescue_data_unref);
}

static void rescue_findings_view_dispose(GObject *object)
{
    RescueFindingsView *self = RESCUE_FINDINGS_VIEW(object);

    if (self->sorted != NULL)
        g_signal_handlers_disconnect_by_data(self->sorted, self);
    if (self->selection != NULL)
        g_signal_handlers_disconnect_by_data(self->selection, self);
    gtk_widget_dispose_template(GTK_WIDGET(self), RESCUE_TYPE_FINDINGS_VIEW);
    /* Children the template made but nothing binds are ours to unparent. */
    for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self))) != NULL;)
        gtk_widget_unparent(child);
    g_clear_object(&self->selection);
    g_clear_object(&self->sorted);
    g_clear_object(&self->model);
    g_clear_pointer(&self->data, rescue_data_unref);
    G_OBJECT_CLASS(rescue_findings_view_parent_class)->dispose(object);
}

static void rescue_findings_view_class_init(RescueFindingsViewClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);

    object_class->dispose = rescue_findings_view_dispose;

    signals[SIGNAL_FINDING_SELECTED] =
        g_signal_new("finding-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                     NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);

    gtk_widget_class_set_template_from_resource(widget_class,
                                                "/org/lanyfs/Rescue/ui/rescue-findings-view.ui");
    gtk_widget_class_bind_template_child(widget_class, RescueFindingsView, severity_dropdown);
    gtk_widget_class_bind_template_child(widget_class, RescueFindingsView, count_label);
    gtk_widget_class_bind_template_child(widget_class, RescueFindingsView, stack);
    gtk_widget_class_bind_template_child(widget_class, RescueFindingsView, column_view);
    gtk_widget_class_bind_template_child(widget_class, RescueFindingsView, empty_page);
    gtk_widget_class_bind_template_callback(widget_class, on_severity_changed);
    gtk_widget_class_set_css_name(widget_class, "findingsview");
}

static void rescue_findings_view_init(RescueFindingsView *self)
{
    gtk_widget_init_template(GTK_WIDGET(self));

    add_column(self, _("Severity"), COL_SEVERITY, 110);
    add_column(self, _("Code"), COL_CODE, 250);
    add_column(self, _("Message"), COL_MESSAGE, 0);
    add_column(self, _("Where"), COL_WHERE, 150);
    add_column(self, _("Proposed Repair"), COL_REPAIR, 260);
}

GtkWidget *rescue_findings_view_new(void)
{
    return g_object_new(RESCUE_TYPE_FINDINGS_VIEW, NULL);
}

void rescue_findings_view_set_data(RescueFindingsView *self, RescueData *data)
{
    g_return_if_fail(RESCUE_IS_FINDINGS_VIEW(self));

    clear(self);
    if (data != NULL) {
        self->data = rescue_data_ref(data);
        self->model = rescue_findings_model_new(data);
        rescue_findings_model_set_min_severity(
            self->model, (guint8)gtk_drop_down_get_selected(self->severity_dropdown));
        self->sorted = gtk_sort_list_model_new(
            g_object_ref(rescue_findings_model_get_model(self->model)),
            g_object_ref(gtk_column_view_get_sorter(self->column_view)));
        self->selection = gtk_single_selection_new(g_object_ref(G_LIST_MODEL(self->sorted)));
        gtk_single_selection_set_autoselect(self->selection, FALSE);
        gtk_single_selection_set_can_unselect(self->selection, TRUE);
        gtk_single_selection_set_selected(self->selection, GTK_INVALID_LIST_POSITION);
        g_signal_connect(self->sorted, "items-changed", G_CALLBACK(on_items_changed), self);
        g_signal_connect(self->selection, "notify::selected-item", G_CALLBACK(on_selected), self);
        gtk_column_view_set_model(self->column_view, GTK_SELECTION_MODEL(self->selection));
    }
    update_state(self);
}

void rescue_findings_view_select(RescueFindingsView *self, guint index)
{
    guint n;

    g_return_if_fail(RESCUE_IS_FINDINGS_VIEW(self));

    if (self->sorted == NULL)
        return;
    n = g_list_model_get_n_items(G_LIST_MODEL(self->sorted));
    for (guint i = 0; i < n; i++) {
        g_autoptr(RescueFinding) f = g_list_model_get_item(G_LIST_MODEL(self->sorted), i);
        if (rescue_finding_get_index(f) == index) {
            gtk_single_selection_set_selected(self->selection, i);
            return;
        }
    }
}

guint rescue_findings_view_get_n_rows(RescueFindingsView *self)
{
    g_return_val_if_fail(RESCUE_IS_FINDINGS_VIEW(self), 0);

    return self->sorted != NULL ? g_list_model_get_n_items(G_LIST_MODEL(self->sorted)) : 0;
}
