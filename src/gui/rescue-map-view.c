/*
 * rescue-map-view.c -- the block map page (rescue-map-view.h).
 */
#define G_LOG_DOMAIN "rescue-map-view"

#include "config.h"

#include <glib/gi18n.h>

#include "rescue-block-paint.h"
#include "rescue-format.h"
#include "rescue-map-view.h"

struct _RescueMapView {
    GtkWidget parent_instance;

    /* Template Widgets */
    GtkLabel *zoom_label;
    GtkLabel *summary_label;
    GtkScrolledWindow *scrolled;
    RescueBlockMap *block_map;
    GtkFlowBox *legend;
};

G_DEFINE_FINAL_TYPE(RescueMapView, rescue_map_view, GTK_TYPE_WIDGET)

static void on_zoom_changed(RescueBlockMap *map, GParamSpec *pspec, RescueMapView *self)
{
    g_autofree char *text = NULL;
    guint zoom = (guint)rescue_block_map_get_zoom(map);

    (void)pspec;
    /* TRANSLATORS: the block map's zoom, in pixels per block */
    text = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%u pixel a block", "%u pixels a block",
                                       zoom),
                           zoom);
    gtk_label_set_text(self->zoom_label, text);
}

static GtkWidget *legend_item(guint8 cls, guint64 count)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *swatch = gtk_label_new(NULL);
    GtkWidget *label;
    guint32 colour = rescue_class_colour(cls);
    g_autofree char *markup = g_strdup_printf("<span foreground=\"#%06x\">■</span>",
                                              colour & 0xffffff);
    g_autofree char *text = g_strdup_printf("%s %" G_GUINT64_FORMAT, rescue_format_class(cls),
                                            count);

    gtk_label_set_markup(GTK_LABEL(swatch), markup);
    gtk_accessible_update_state(GTK_ACCESSIBLE(swatch), GTK_ACCESSIBLE_STATE_HIDDEN, TRUE, -1);
    label = gtk_label_new(text);
    gtk_widget_add_css_class(label, "caption");
    gtk_widget_add_css_class(label, "numeric");
    gtk_box_append(GTK_BOX(box), swatch);
    gtk_box_append(GTK_BOX(box), label);
    return box;
}

static void rescue_map_view_dispose(GObject *object)
{
    gtk_widget_dispose_template(GTK_WIDGET(object), RESCUE_TYPE_MAP_VIEW);
    /* Children the template made but nothing binds are ours to unparent. */
    for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(object))) != NULL;)
        gtk_widget_unparent(child);
    G_OBJECT_CLASS(rescue_map_view_parent_class)->dispose(object);
}

static void rescue_map_view_class_init(RescueMapViewClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);

    object_class->dispose = rescue_map_view_dispose;

    g_type_ensure(RESCUE_TYPE_BLOCK_MAP);
    gtk_widget_class_set_template_from_resource(widget_class,
                                                "/org/lanyfs/Rescue/ui/rescue-map-view.ui");
    gtk_widget_class_bind_template_child(widget_class, RescueMapView, zoom_label);
    gtk_widget_class_bind_template_child(widget_class, RescueMapView, summary_label);
    gtk_widget_class_bind_template_child(widget_class, RescueMapView, scrolled);
    gtk_widget_class_bind_template_child(widget_class, RescueMapView, block_map);
    gtk_widget_class_bind_template_child(widget_class, RescueMapView, legend);
    gtk_widget_class_bind_template_callback(widget_class, on_zoom_changed);
    gtk_widget_class_set_css_name(widget_class, "mapview");
}

static void rescue_map_view_init(RescueMapView *self)
{
    gtk_widget_init_template(GTK_WIDGET(self));
    on_zoom_changed(self->block_map, NULL, self);
}

GtkWidget *rescue_map_view_new(void)
{
    return g_object_new(RESCUE_TYPE_MAP_VIEW, NULL);
}

void rescue_map_view_set_data(RescueMapView *self, RescueData *data)
{
    guint64 counts[SCAN_BLK_CLASSES] = {0};
    GtkWidget *child;
    guint64 n;

    g_return_if_fail(RESCUE_IS_MAP_VIEW(self));

    rescue_block_map_set_data(self->block_map, data);
    while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->legend))) != NULL)
        gtk_flow_box_remove(self->legend, child);
    if (data == NULL) {
        gtk_label_set_text(self->summary_label, "");
        return;
    }
    n = rescue_data_get_n_blocks(data);
    for (guint64 b = 0; b < n; b++)
        counts[MIN(rescue_data_get_blocks(data)[b].cls, SCAN_BLK_CLASSES - 1)]++;
    for (guint c = 0; c < SCAN_BLK_CLASSES; c++)
        if (counts[c] > 0)
            gtk_flow_box_append(self->legend, legend_item((guint8)c, counts[c]));
    {
        const RescueGeometry *g = rescue_data_get_geometry(data);
        g_autofree char *size = g_format_size((guint64)g->blocksize);
        g_autofree char *text = NULL;
        /* TRANSLATORS: "1,000,000 blocks of 512 bytes" */
        text = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%llu block of %s",
                                           "%llu blocks of %s", n),
                               (unsigned long long)n, size);
        gtk_label_set_text(self->summary_label, text);
    }
}

RescueBlockMap *rescue_map_view_get_map(RescueMapView *self)
{
    g_return_val_if_fail(RESCUE_IS_MAP_VIEW(self), NULL);
    return self->block_map;
}
