/*
 * rescue-block-map.c -- the block map widget (rescue-block-map.h).
 *
 * Drawing: the rows in view are painted by rescue_block_paint() into a
 * buffer of the widget's size in device pixels, which becomes one
 * GdkMemoryTexture; the texture is kept until the view, the zoom, the
 * overlay or the data change, so a redraw for a moving tooltip costs
 * nothing.  The selection is an outline drawn over the texture.
 *
 * Scrolling: the vertical adjustment spans rows * zoom pixels; the
 * horizontal one is pinned to the width (the map wraps instead).
 */
#define G_LOG_DOMAIN "rescue-block-map"

#include "config.h"

#include <glib/gi18n.h>
#include <math.h>

#include "rescue-block-map.h"
#include "rescue-block-paint.h"
#include "rescue-format.h"

struct _RescueBlockMap {
    GtkWidget parent_instance;

    /* Owned References */
    RescueData *data;             /* the scan shown, NULL for none */
    GtkAdjustment *hadjustment;   /* GtkScrollable */
    GtkAdjustment *vadjustment;   /* GtkScrollable */
    GdkTexture *texture;          /* the rows in view, painted; NULL when stale */

    guint scroll_policy_h : 1;    /* GtkScrollablePolicy */
    guint scroll_policy_v : 1;
    gboolean wear;                /* colour by write counter */
    double zoom;                  /* pixels per block as set */
    guint cell;                   /* pixels per block in use */
    RescueMapLayout layout;       /* for the current width */
    guint64 selected;             /* RESCUE_NO_BLOCK for none */
    double pointer_y;             /* last pointer position, -1 when outside */
    gboolean scroll_pending;      /* scroll the selection into view once allocated */

    /* What the texture shows */
    double tex_value;             /* adjustment value */
    int tex_width;                /* widget size */
    int tex_height;
    int tex_scale;                /* scale factor */
};

enum {
    PROP_0,
    PROP_ZOOM,
    PROP_WEAR,
    PROP_SELECTED,
    N_PROPS,
    /* GtkScrollable */
    PROP_HADJUSTMENT = N_PROPS,
    PROP_VADJUSTMENT,
    PROP_HSCROLL_POLICY,
    PROP_VSCROLL_POLICY,
};

enum {
    SIGNAL_BLOCK_ACTIVATED,
    N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE_WITH_CODE(RescueBlockMap, rescue_block_map, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(GTK_TYPE_SCROLLABLE, NULL))

static guint64 n_blocks(RescueBlockMap *self)
{
    return self->data != NULL ? rescue_data_get_n_blocks(self->data) : 0;
}

static void invalidate(RescueBlockMap *self)
{
    g_clear_object(&self->texture);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void relayout(RescueBlockMap *self, int width)
{
    rescue_map_layout(n_blocks(self), (guint)MAX(width, 1), self->cell, &self->layout);
}

/* Set the adjustments for the current size; keep value when it still fits. */
static void configure_adjustments(RescueBlockMap *self, double value)
{
    int width = gtk_widget_get_width(GTK_WIDGET(self));
    int height = gtk_widget_get_height(GTK_WIDGET(self));
    double upper = (double)self->layout.rows * self->layout.cell;

    if (self->vadjustment != NULL) {
        upper = MAX(upper, (double)height);
        value = CLAMP(value, 0, MAX(upper - height, 0));
        gtk_adjustment_configure(self->vadjustment, value, 0, upper, self->layout.cell,
                                 MAX(height * 0.9, 1), height);
    }
    if (self->hadjustment != NULL)
        gtk_adjustment_configure(self->hadjustment, 0, 0, width, 1, width, width);
}

static double vvalue(RescueBlockMap *self)
{
    return self->vadjustment != NULL ? gtk_adjustment_get_value(self->vadjustment) : 0;
}

static void update_description(RescueBlockMap *self)
{
    g_autofree char *text = NULL;

    if (self->data == NULL) {
        text = g_strdup(_("No scan is open"));
    } else if (self->selected != RESCUE_NO_BLOCK) {
        g_autofree char *owner = rescue_format_block_owner(self->data, self->selected);
        const struct scan_block *cell = rescue_data_get_block(self->data, self->selected);
        text = g_strdup_printf(_("Block %llu of %llu selected: %s, owned by %s"),
                               (unsigned long long)self->selected,
                               (unsigned long long)n_blocks(self),
                               rescue_format_class(cell != NULL ? cell->cls : 0), owner);
    } else {
        text = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%llu block, none selected",
                                           "%llu blocks, none selected", n_blocks(self)),
                               (unsigned long long)n_blocks(self));
    }
    gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text,
                                   -1);
}

/* ---- geometry ---------------------------------------------------------- */

guint64 rescue_block_map_block_at(RescueBlockMap *self, double x, double y)
{
    double row;
    guint col;
    guint64 blk;

    g_return_val_if_fail(RESCUE_IS_BLOCK_MAP(self), RESCUE_NO_BLOCK);

    if (self->data == NULL || x < 0 || y < 0)
        return RESCUE_NO_BLOCK;
    col = (guint)(x / self->layout.cell);
    if (col >= self->layout.columns)
        return RESCUE_NO_BLOCK;
    row = floor((y + vvalue(self)) / self->layout.cell);
    blk = (guint64)row * self->layout.columns + col;
    return blk < n_blocks(self) ? blk : RESCUE_NO_BLOCK;
}

static void scroll_to_block(RescueBlockMap *self, guint64 blk)
{
    double top, bottom, value, height;

    if (self->vadjustment == NULL || blk == RESCUE_NO_BLOCK || self->layout.columns == 0)
        return;
    top = (double)(blk / self->layout.columns) * self->layout.cell;
    bottom = top + self->layout.cell;
    value = gtk_adjustment_get_value(self->vadjustment);
    height = gtk_adjustment_get_page_size(self->vadjustment);
    if (height <= 0 || gtk_widget_get_width(GTK_WIDGET(self)) <= 1) {
        self->scroll_pending = TRUE;
        return;
    }
    self->scroll_pending = FALSE;
    if (top < value)
        gtk_adjustment_set_value(self->vadjustment, top);
    else if (bottom > value + height)
        gtk_adjustment_set_value(self->vadjustment, bottom - height);
}

/* ---- GtkWidget --------------------------------------------------------- */

static void rescue_block_map_measure(GtkWidget *widget, GtkOrientation orientation, int for_size,
                                     int *minimum, int *natural, int *minimum_baseline,
                                     int *natural_baseline)
{
    (void)widget;
    (void)for_size;
    *minimum = 64;
    *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 512 : 256;
    *minimum_baseline = -1;
    *natural_baseline = -1;
}

static void rescue_block_map_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
    RescueBlockMap *self = RESCUE_BLOCK_MAP(widget);
    guint64 first = RESCUE_NO_BLOCK;
    double value = vvalue(self);

    (void)height;
    (void)baseline;
    /* Keep the first block in view at the top when the width changes the wrapping. */
    if (self->layout.columns > 0)
        first = (guint64)(value / self->layout.cell) * self->layout.columns;
    relayout(self, width);
    if (first != RESCUE_NO_BLOCK && self->layout.columns > 0)
        value = (double)(first / self->layout.columns) * self->layout.cell;
    configure_adjustments(self, value);
    if (self->scroll_pending)
        scroll_to_block(self, self->selected);
    invalidate(self);
}

static GdkTexture *paint_texture(RescueBlockMap *self, int width, int height, int scale)
{
    RescueMapLayout dev;
    double value = vvalue(self);
    int w = width * scale;
    int h = height * scale;
    guint64 first_row;
    int y_offset;
    guint32 *pixels;
    GBytes *bytes;
    GdkTexture *texture;

    /* The same wrapping in device pixels: cells scale, columns stay. */
    dev = self->layout;
    dev.cell = self->layout.cell * (guint)scale;
    dev.gap = self->layout.gap * (guint)scale;
    first_row = (guint64)(value / self->layout.cell);
    y_offset = -(int)lround((value - (double)first_row * self->layout.cell) * scale);

    pixels = g_malloc((gsize)w * (gsize)h * sizeof(guint32));
    rescue_block_paint(self->data, &dev, first_row, y_offset, pixels, w, h, w, self->wear);
    bytes = g_bytes_new_take(pixels, (gsize)w * (gsize)h * sizeof(guint32));
    texture = gdk_memory_texture_new(w, h, GDK_MEMORY_DEFAULT, bytes, (gsize)w * sizeof(guint32));
    g_bytes_unref(bytes);
    return texture;
}

static void rescue_block_map_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
    RescueBlockMap *self = RESCUE_BLOCK_MAP(widget);
    int width = gtk_widget_get_width(widget);
    int height = gtk_widget_get_height(widget);
    int scale = gtk_widget_get_scale_factor(widget);
    double value = vvalue(self);

    if (self->data == NULL || width <= 0 || height <= 0 || n_blocks(self) == 0)
        return;
    if (self->texture == NULL || self->tex_value != value || self->tex_width != width ||
        self->tex_height != height || self->tex_scale != scale) {
        g_clear_object(&self->texture);
        self->texture = paint_texture(self, width, height, scale);
        self->tex_value = value;
        self->tex_width = width;
        self->tex_height = height;
        self->tex_scale = scale;
    }
    gtk_snapshot_append_texture(snapshot, self->texture, &GRAPHENE_RECT_INIT(0, 0, width, height));

    if (self->selected != RESCUE_NO_BLOCK && self->layout.columns > 0) {
        double x = (double)(self->selected % self->layout.columns) * self->layout.cell;
        double y = (double)(self->selected / self->layout.columns) * self->layout.cell - value;
        double size = MAX(self->layout.cell, 6);
        double pad = (size - self->layout.cell) / 2 + 2;
        GskRoundedRect outer;
        GskRoundedRect inner;
        const GdkRGBA dark[4] = {{0, 0, 0, 0.85}, {0, 0, 0, 0.85}, {0, 0, 0, 0.85},
                                 {0, 0, 0, 0.85}};
        const GdkRGBA light[4] = {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}};
        const float w2[4] = {2, 2, 2, 2};
        const float w1[4] = {1, 1, 1, 1};

        if (y + size + pad >= 0 && y - pad <= height) {
            gsk_rounded_rect_init_from_rect(
                &outer, &GRAPHENE_RECT_INIT(x - pad, y - pad, size + 2 * pad, size + 2 * pad), 2);
            gsk_rounded_rect_init_from_rect(
                &inner,
                &GRAPHENE_RECT_INIT(x - pad + 2, y - pad + 2, size + 2 * pad - 4,
                                    size + 2 * pad - 4),
                1);
            gtk_snapshot_append_border(snapshot, &outer, w2, dark);
            gtk_snapshot_append_border(snapshot, &inner, w1, light);
        }
    }
}

/* ---- input ---------------------------------------------------------------- */

static void set_selected(RescueBlockMap *self, guint64 blk, gboolean activate)
{
    if (blk >= n_blocks(self))
        blk = RESCUE_NO_BLOCK;
    if (self->selected != blk) {
        self->selected = blk;
        scroll_to_block(self, blk);
        update_description(self);
        gtk_widget_queue_draw(GTK_WIDGET(self));
        g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SELECTED]);
    }
    if (activate && blk != RESCUE_NO_BLOCK)
        g_signal_emit(self, signals[SIGNAL_BLOCK_ACTIVATED], 0, blk);
}

static void on_click_released(GtkGestureClick *gesture, int n_press, double x, double y,
                              gpointer user_data)
{
    RescueBlockMap *self = user_data;
    guint64 blk = rescue_block_map_block_at(self, x, y);

    (void)gesture;
    (void)n_press;
    gtk_widget_grab_focus(GTK_WIDGET(self));
    if (blk != RESCUE_NO_BLOCK)
        set_selected(self, blk, TRUE);
}

/* Zoom to zoom, keeping the block at widget height anchor_y where it is. */
static void zoom_at(RescueBlockMap *self, double zoom, double anchor_y)
{
    guint64 anchor_row_block;
    double offset;
    double value;

    zoom = CLAMP(round(zoom), RESCUE_ZOOM_MIN, RESCUE_ZOOM_MAX);
    if (zoom == self->zoom)
        return;
    if (anchor_y < 0)
        anchor_y = 0;
    value = vvalue(self);
    anchor_row_block = self->layout.columns > 0 ? (guint64)((value + anchor_y) / self->layout.cell) *
                                                      self->layout.columns
                                                : 0;
    offset = self->layout.cell > 0 ? fmod(value + anchor_y, self->layout.cell) / self->layout.cell
                                   : 0;

    self->zoom = zoom;
    self->cell = (guint)zoom;
    relayout(self, gtk_widget_get_width(GTK_WIDGET(self)));
    value = (double)(anchor_row_block / MAX(self->layout.columns, 1)) * self->layout.cell +
            offset * self->layout.cell - anchor_y;
    configure_adjustments(self, value);
    invalidate(self);
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_ZOOM]);
}

static double selection_anchor(RescueBlockMap *self)
{
    if (self->selected != RESCUE_NO_BLOCK && self->layout.columns > 0) {
        double y = (double)(self->selected / self->layout.columns) * self->layout.cell -
                   vvalue(self);
        if (y >= 0 && y <= gtk_widget_get_height(GTK_WIDGET(self)))
            return y;
    }
    return self->pointer_y >= 0 ? self->pointer_y : 0;
}

void rescue_block_map_zoom_step(RescueBlockMap *self, int direction)
{
    g_return_if_fail(RESCUE_IS_BLOCK_MAP(self));

    zoom_at(self, rescue_zoom_step(self->cell, direction), selection_anchor(self));
}

static gboolean on_scroll(GtkEventControllerScroll *controller, double dx, double dy,
                          gpointer user_data)
{
    RescueBlockMap *self = user_data;
    GdkModifierType mods;

    (void)dx;
    mods = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(controller));
    if (!(mods & GDK_CONTROL_MASK) || dy == 0)
        return FALSE;
    zoom_at(self, rescue_zoom_step(self->cell, dy < 0 ? 1 : -1),
            self->pointer_y >= 0 ? self->pointer_y : 0);
    return TRUE;
}

static void on_motion(GtkEventControllerMotion *controller, double x, double y, gpointer user_data)
{
    RescueBlockMap *self = user_data;

    (void)controller;
    (void)x;
    self->pointer_y = y;
}

static void on_leave(GtkEventControllerMotion *controller, gpointer user_data)
{
    RescueBlockMap *self = user_data;

    (void)controller;
    self->pointer_y = -1;
}

static gboolean on_key_pressed(GtkEventControllerKey *controller, guint keyval, guint keycode,
                               GdkModifierType state, gpointer user_data)
{
    RescueBlockMap *self = user_data;
    guint64 n = n_blocks(self);
    guint64 cur = self->selected;
    guint64 cols = MAX(self->layout.columns, 1);
    guint64 page;
    guint64 next;

    (void)controller;
    (void)keycode;
    if (n == 0)
        return FALSE;
    if (state & GDK_CONTROL_MASK) {
        if (keyval == GDK_KEY_plus || keyval == GDK_KEY_equal || keyval == GDK_KEY_KP_Add) {
            rescue_block_map_zoom_step(self, 1);
            return TRUE;
        }
        if (keyval == GDK_KEY_minus || keyval == GDK_KEY_KP_Subtract) {
            rescue_block_map_zoom_step(self, -1);
            return TRUE;
        }
        return FALSE;
    }
    page = cols * MAX((guint64)(gtk_widget_get_height(GTK_WIDGET(self)) / self->layout.cell), 1);
    if (cur == RESCUE_NO_BLOCK)
        cur = self->layout.columns > 0 ? (guint64)(vvalue(self) / self->layout.cell) * cols : 0;
    switch (keyval) {
    case GDK_KEY_Left:
    case GDK_KEY_KP_Left:
        next = cur > 0 ? cur - 1 : 0;
        break;
    case GDK_KEY_Right:
    case GDK_KEY_KP_Right:
        next = MIN(cur + 1, n - 1);
        break;
    case GDK_KEY_Up:
    case GDK_KEY_KP_Up:
        next = cur >= cols ? cur - cols : cur;
        break;
    case GDK_KEY_Down:
    case GDK_KEY_KP_Down:
        next = cur + cols < n ? cur + cols : cur;
        break;
    case GDK_KEY_Page_Up:
    case GDK_KEY_KP_Page_Up:
        next = cur >= page ? cur - page : cur % cols;
        break;
    case GDK_KEY_Page_Down:
    case GDK_KEY_KP_Page_Down:
        next = cur + page < n ? cur + page : n - 1;
        break;
    case GDK_KEY_Home:
    case GDK_KEY_KP_Home:
        next = 0;
        break;
    case GDK_KEY_End:
    case GDK_KEY_KP_End:
        next = n - 1;
        break;
    case GDK_KEY_Return:
    case GDK_KEY_KP_Enter:
    case GDK_KEY_space:
        set_selected(self, cur, TRUE);
        return TRUE;
    default:
        return FALSE;
    }
    set_selected(self, next, FALSE);
    return TRUE;
}

static gboolean on_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard,
                                 GtkTooltip *tooltip, gpointer user_data)
{
    RescueBlockMap *self = RESCUE_BLOCK_MAP(widget);
    guint64 blk;
    g_autofree char *text = NULL;
    GdkRectangle area;

    (void)user_data;
    blk = keyboard ? self->selected : rescue_block_map_block_at(self, x, y);
    if (blk == RESCUE_NO_BLOCK)
        return FALSE;
    text = rescue_format_block_tooltip(self->data, blk);
    if (text == NULL)
        return FALSE;
    gtk_tooltip_set_text(tooltip, text);
    area.x = (int)((blk % self->layout.columns) * self->layout.cell);
    area.y = (int)((double)(blk / self->layout.columns) * self->layout.cell - vvalue(self));
    area.width = (int)self->layout.cell;
    area.height = (int)self->layout.cell;
    gtk_tooltip_set_tip_area(tooltip, &area);
    return TRUE;
}

/* ---- GtkScrollable and properties ------------------------------------------ */

static void on_vadjustment_changed(GtkAdjustment *adjustment, gpointer user_data)
{
    (void)adjustment;
    gtk_widget_queue_draw(GTK_WIDGET(user_data));
}

static void set_adjustment(RescueBlockMap *self, GtkAdjustment **slot, GtkAdjustment *adj,
                           gboolean vertical)
{
    if (*slot == adj && adj != NULL)
        return;
    if (*slot != NULL) {
        g_signal_handlers_disconnect_by_data(*slot, self);
        g_clear_object(slot);
    }
    if (adj == NULL)
        adj = gtk_adjustment_new(0, 0, 0, 0, 0, 0);
    *slot = g_object_ref_sink(adj);
    if (vertical)
        g_signal_connect(adj, "value-changed", G_CALLBACK(on_vadjustment_changed), self);
    configure_adjustments(self, vertical ? gtk_adjustment_get_value(adj) : 0);
}

static void rescue_block_map_get_property(GObject *object, guint prop_id, GValue *value,
                                          GParamSpec *pspec)
{
    RescueBlockMap *self = RESCUE_BLOCK_MAP(object);

    switch (prop_id) {
    case PROP_ZOOM:
        g_value_set_double(value, self->zoom);
        break;
    case PROP_WEAR:
        g_value_set_boolean(value, self->wear);
        break;
    case PROP_SELECTED:
        g_value_set_uint64(value, self->selected);
        break;
    case PROP_HADJUSTMENT:
        g_value_set_object(value, self->hadjustment);
        break;
    case PROP_VADJUSTMENT:
        g_value_set_object(value, self->vadjustment);
        break;
    case PROP_HSCROLL_POLICY:
        g_value_set_enum(value, self->scroll_policy_h);
        break;
    case PROP_VSCROLL_POLICY:
        g_value_set_enum(value, self->scroll_policy_v);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    }
}

static void rescue_block_map_set_property(GObject *object, guint prop_id, const GValue *value,
                                          GParamSpec *pspec)
{
    RescueBlockMap *self = RESCUE_BLOCK_MAP(object);

    switch (prop_id) {
    case PROP_ZOOM:
        rescue_block_map_set_zoom(self, g_value_get_double(value));
        break;
    case PROP_WEAR:
        rescue_block_map_set_wear(self, g_value_get_boolean(value));
        break;
    case PROP_SELECTED:
        rescue_block_map_select(self, g_value_get_uint64(value));
        break;
    case PROP_HADJUSTMENT:
        set_adjustment(self, &self->hadjustment, g_value_get_object(value), FALSE);
        break;
    case PROP_VADJUSTMENT:
        set_adjustment(self, &self->vadjustment, g_value_get_object(value), TRUE);
        break;
    case PROP_HSCROLL_POLICY:
        self->scroll_policy_h = g_value_get_enum(value);
        break;
    case PROP_VSCROLL_POLICY:
        self->scroll_policy_v = g_value_get_enum(value);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    }
}

static void rescue_block_map_dispose(GObject *object)
{
    RescueBlockMap *self = RESCUE_BLOCK_MAP(object);

    if (self->vadjustment != NULL)
        g_signal_handlers_disconnect_by_data(self->vadjustment, self);
    g_clear_object(&self->hadjustment);
    g_clear_object(&self->vadjustment);
    g_clear_object(&self->texture);
    g_clear_pointer(&self->data, rescue_data_unref);
    G_OBJECT_CLASS(rescue_block_map_parent_class)->dispose(object);
}

static void rescue_block_map_class_init(RescueBlockMapClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);

    object_class->dispose = rescue_block_map_dispose;
    object_class->get_property = rescue_block_map_get_property;
    object_class->set_property = rescue_block_map_set_property;
    widget_class->measure = rescue_block_map_measure;
    widget_class->size_allocate = rescue_block_map_size_allocate;
    widget_class->snapshot = rescue_block_map_snapshot;

    properties[PROP_ZOOM] =
        g_param_spec_double("zoom", NULL, NULL, RESCUE_ZOOM_MIN, RESCUE_ZOOM_MAX, 4,
                            G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
    properties[PROP_WEAR] =
        g_param_spec_boolean("wear", NULL, NULL, FALSE,
                             G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
    properties[PROP_SELECTED] =
        g_param_spec_uint64("selected", NULL, NULL, 0, G_MAXUINT64, RESCUE_NO_BLOCK,
                            G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
    g_object_class_install_properties(object_class, N_PROPS, properties);
    g_object_class_override_property(object_class, PROP_HADJUSTMENT, "hadjustment");
    g_object_class_override_property(object_class, PROP_VADJUSTMENT, "vadjustment");
    g_object_class_override_property(object_class, PROP_HSCROLL_POLICY, "hscroll-policy");
    g_object_class_override_property(object_class, PROP_VSCROLL_POLICY, "vscroll-policy");

    signals[SIGNAL_BLOCK_ACTIVATED] =
        g_signal_new("block-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                     NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT64);

    gtk_widget_class_set_css_name(widget_class, "blockmap");
    gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void rescue_block_map_init(RescueBlockMap *self)
{
    GtkGesture *click;
    GtkEventController *scroll;
    GtkEventController *motion;
    GtkEventController *key;

    self->zoom = 4;
    self->cell = 4;
    self->selected = RESCUE_NO_BLOCK;
    self->pointer_y = -1;
    relayout(self, 1);

    gtk_widget_set_focusable(GTK_WIDGET(self), TRUE);
    gtk_widget_set_has_tooltip(GTK_WIDGET(self), TRUE);
    gtk_widget_set_overflow(GTK_WIDGET(self), GTK_OVERFLOW_HIDDEN);
    g_signal_connect(self, "query-tooltip", G_CALLBACK(on_query_tooltip), NULL);

    click = gtk_gesture_click_new();
    gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(click), GDK_BUTTON_PRIMARY);
    g_signal_connect(click, "released", G_CALLBACK(on_click_released), self);
    gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(click));

    scroll = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL |
                                             GTK_EVENT_CONTROLLER_SCROLL_DISCRETE);
    g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), self);
    gtk_widget_add_controller(GTK_WIDGET(self), scroll);

    motion = gtk_event_controller_motion_new();
    g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
    g_signal_connect(motion, "leave", G_CALLBACK(on_leave), self);
    gtk_widget_add_controller(GTK_WIDGET(self), motion);

    key = gtk_event_controller_key_new();
    g_signal_connect(key, "key-pressed", G_CALLBACK(on_key_pressed), self);
    gtk_widget_add_controller(GTK_WIDGET(self), key);

    gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                   _("Block map"), -1);
    update_description(self);
}

/* ---- public ---------------------------------------------------------------- */

GtkWidget *rescue_block_map_new(void)
{
    return g_object_new(RESCUE_TYPE_BLOCK_MAP, NULL);
}

void rescue_block_map_set_data(RescueBlockMap *self, RescueData *data)
{
    g_return_if_fail(RESCUE_IS_BLOCK_MAP(self));

    if (self->data == data)
        return;
    g_clear_pointer(&self->data, rescue_data_unref);
    if (data != NULL)
        self->data = rescue_data_ref(data);
    self->selected = RESCUE_NO_BLOCK;
    relayout(self, gtk_widget_get_width(GTK_WIDGET(self)));
    configure_adjustments(self, 0);
    update_description(self);
    invalidate(self);
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SELECTED]);
}

RescueData *rescue_block_map_get_data(RescueBlockMap *self)
{
    g_return_val_if_fail(RESCUE_IS_BLOCK_MAP(self), NULL);
    return self->data;
}

void rescue_block_map_set_zoom(RescueBlockMap *self, double zoom)
{
    g_return_if_fail(RESCUE_IS_BLOCK_MAP(self));

    zoom_at(self, zoom, selection_anchor(self));
}

double rescue_block_map_get_zoom(RescueBlockMap *self)
{
    g_return_val_if_fail(RESCUE_IS_BLOCK_MAP(self), 4);
    return self->zoom;
}

void rescue_block_map_set_wear(RescueBlockMap *self, gboolean wear)
{
    g_return_if_fail(RESCUE_IS_BLOCK_MAP(self));

    wear = !!wear;
    if (self->wear == wear)
        return;
    self->wear = wear;
    invalidate(self);
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_WEAR]);
}

gboolean rescue_block_map_get_wear(RescueBlockMap *self)
{
    g_return_val_if_fail(RESCUE_IS_BLOCK_MAP(self), FALSE);
    return self->wear;
}

void rescue_block_map_select(RescueBlockMap *self, guint64 block)
{
    g_return_if_fail(RESCUE_IS_BLOCK_MAP(self));

    set_selected(self, block, FALSE);
    scroll_to_block(self, self->selected);
}

guint64 rescue_block_map_get_selected(RescueBlockMap *self)
{
    g_return_val_if_fail(RESCUE_IS_BLOCK_MAP(self), RESCUE_NO_BLOCK);
    return self->selected;
}
