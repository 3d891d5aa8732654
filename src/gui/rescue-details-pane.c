/*
 * rescue-details-pane.c -- the details pane (rescue-details-pane.h).
 *
 * Showing an entry or a block fills the properties the RescueData holds at
 * once, then starts a Load in a worker: it opens its own RescueImage, reads
 * the block for the hex view and, for a file, the first 64 KiB (all of it,
 * up to 32 MiB, when libmagic says PNG or JPEG, decoded there into a
 * GdkTexture), and asks libmagic what it is.  The result is applied when
 * the load is still the current one.
 */
#define G_LOG_DOMAIN "rescue-details-pane"

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "lanyfs.h"
#include "rescue-details-pane.h"
#include "rescue-format.h"
#include "rescue-image.h"
#include "rescue-magic.h"

#define HEAD_BYTES (64u * 1024u)
#define TEXT_PREVIEW_BYTES (16u * 1024u)
#define IMAGE_MAX_BYTES (32u * 1024u * 1024u)

struct _RescueDetailsPane {
    GtkWidget parent_instance;

    /* Template Widgets */
    GtkLabel *title_label;
    GtkLabel *subtitle_label;
    GtkGrid *properties_grid;
    GtkWidget *buttons_box;
    GtkButton *show_entry_button;
    GtkButton *show_block_button;
    GtkWidget *preview_heading;
    GtkStack *preview_stack;
    GtkLabel *preview_none_label;
    GtkTextView *preview_text;
    GtkPicture *preview_picture;
    GtkLabel *hex_heading;
    GtkWidget *hex_frame;
    GtkTextView *hex_text;

    /* Owned References */
    GCancellable *load;          /* the running load, NULL when none */

    int rows;                    /* rows in properties_grid */
    GtkLabel *type_value;        /* the "Content type" value label, NULL when not shown */
};

G_DEFINE_FINAL_TYPE(RescueDetailsPane, rescue_details_pane, GTK_TYPE_WIDGET)

/* ---- the worker's load --------------------------------------------------------- */

typedef struct {
    RescueData *data;        /* owned reference */
    guint32 entry;           /* entry to read, 0 for a block */
    guint64 block;           /* block for the hex view */
    gboolean is_file;        /* read the entry's contents */
} LoadRequest;

typedef struct {
    GBytes *block;           /* the block's bytes, NULL when unreadable */
    char *block_error;       /* why not (owned) */
    GBytes *head;            /* the file's first bytes, NULL when none */
    char *head_error;        /* why not (owned) */
    guint64 lost;            /* blocks of the head given as zeros */
    char *description;       /* libmagic (owned) */
    char *mime;              /* libmagic MIME type (owned) */
    GdkTexture *texture;     /* the decoded picture (owned) */
} LoadResult;

static void load_request_free(gpointer p)
{
    LoadRequest *rq = p;

    rescue_data_unref(rq->data);
    g_free(rq);
}

static void load_result_free(gpointer p)
{
    LoadResult *r = p;

    g_clear_pointer(&r->block, g_bytes_unref);
    g_clear_pointer(&r->head, g_bytes_unref);
    g_free(r->block_error);
    g_free(r->head_error);
    g_free(r->description);
    g_free(r->mime);
    g_clear_object(&r->texture);
    g_free(r);
}

static void load_thread(GTask *task, gpointer source_object, gpointer task_data,
                        GCancellable *cancellable)
{
    LoadRequest *rq = task_data;
    LoadResult *r = g_new0(LoadResult, 1);
    g_autoptr(GError) error = NULL;
    g_autoptr(RescueImage) img = NULL;

    (void)source_object;
    img = rescue_image_open(rq->data, &error);
    if (img == NULL) {
        r->block_error = g_strdup(error->message);
        r->head_error = g_strdup(error->message);
        g_task_return_pointer(task, r, load_result_free);
        return;
    }
    {
        guint32 bs = rescue_image_get_block_size(img);
        guint8 *buf = g_malloc(bs);
        g_clear_error(&error);
        if (rescue_image_read_block(img, rq->block, buf, &error)) {
            r->block = g_bytes_new_take(buf, bs);
        } else {
            r->block_error = g_strdup(error->message);
            g_free(buf);
        }
    }
    if (rq->is_file && !g_cancellable_is_cancelled(cancellable)) {
        const RescueEntryInfo *e = rescue_data_get_entry(rq->data, rq->entry);
        guint64 size = rescue_entry_content_size(e);
        gsize want = (gsize)MIN(size, (guint64)HEAD_BYTES);
        guint8 *buf = g_malloc(MAX(want, 1));
        gssize got;

        g_clear_error(&error);
        got = rescue_image_read_entry(img, rq->entry, 0, buf, want, &r->lost, &error);
        if (got < 0) {
            r->head_error = g_strdup(error->message);
            g_free(buf);
        } else {
            r->head = g_bytes_new_take(buf, (gsize)got);
        }
        if (r->head != NULL) {
            gsize n = 0;
            const guint8 *p = g_bytes_get_data(r->head, &n);
            rescue_magic_describe(p, n, &r->description, &r->mime);
        }
        if (r->mime != NULL &&
            (strcmp(r->mime, "image/png") == 0 || strcmp(r->mime, "image/jpeg") == 0) &&
            size <= IMAGE_MAX_BYTES && !g_cancellable_is_cancelled(cancellable)) {
            guint8 *whole = g_malloc(MAX(size, 1));
            guint64 lost = 0;
            g_clear_error(&error);
            got = rescue_image_read_entry(img, rq->entry, 0, whole, (gsize)size, &lost, &error);
            if (got > 0) {
                g_autoptr(GBytes) bytes = g_bytes_new_take(whole, (gsize)got);
                r->texture = gdk_texture_new_from_bytes(bytes, NULL);
            } else {
                g_free(whole);
            }
        }
    } else if (r->block != NULL) {
        gsize n = 0;
        const guint8 *p = g_bytes_get_data(r->block, &n);
        rescue_magic_describe(p, n, &r->description, &r->mime);
    }
    g_task_return_pointer(task, r, load_result_free);
}

/* ---- building the pane ------------------------------------------------------- */

static void clear_properties(RescueDetailsPane *self)
{
    GtkWidget *child;

    while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->properties_grid))) != NULL)
        gtk_grid_remove(self->properties_grid, child);
    self->rows = 0;
    self->type_value = NULL;
}

static GtkLabel *add_property(RescueDetailsPane *self, const char *key, const char *value)
{
    GtkWidget *k = gtk_label_new(key);
    GtkWidget *v = gtk_label_new(value != NULL && value[0] ? value : "—");

    gtk_label_set_xalign(GTK_LABEL(k), 1);
    gtk_label_set_yalign(GTK_LABEL(k), 0);
    gtk_widget_set_valign(k, GTK_ALIGN_START);
    gtk_widget_add_css_class(k, "dim-label");
    gtk_label_set_xalign(GTK_LABEL(v), 0);
    gtk_label_set_wrap(GTK_LABEL(v), TRUE);
    gtk_label_set_wrap_mode(GTK_LABEL(v), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_selectable(GTK_LABEL(v), TRUE);
    gtk_widget_set_hexpand(v, TRUE);
    gtk_accessible_update_relation(GTK_ACCESSIBLE(v), GTK_ACCESSIBLE_RELATION_LABELLED_BY, k, NULL,
                                   -1);
    gtk_grid_attach(self->properties_grid, k, 0, self->rows, 1, 1);
    gtk_grid_attach(self->properties_grid, v, 1, self->rows, 1, 1);
    self->rows++;
    return GTK_LABEL(v);
}

static void add_property_u64(RescueDetailsPane *self, const char *key, guint64 value)
{
    g_autofree char *text = g_strdup_printf("%" G_GUINT64_FORMAT, value);
    add_property(self, key, text);
}

static void set_text(GtkTextView *view, const char *text)
{
    gtk_text_buffer_set_text(gtk_text_view_get_buffer(view), text != NULL ? text : "", -1);
}

static void show_preview_message(RescueDetailsPane *self, const char *message)
{
    gtk_label_set_text(self->preview_none_label, message);
    gtk_stack_set_visible_child_name(self->preview_stack, "none");
}

static void set_sections(RescueDetailsPane *self, gboolean preview, gboolean hex)
{
    gtk_widget_set_visible(self->preview_heading, preview);
    gtk_widget_set_visible(GTK_WIDGET(self->preview_stack), preview);
    gtk_widget_set_visible(GTK_WIDGET(self->hex_heading), hex);
    gtk_widget_set_visible(self->hex_frame, hex);
}

static void cancel_load(RescueDetailsPane *self)
{
    if (self->load != NULL) {
        g_cancellable_cancel(self->load);
        g_clear_object(&self->load);
    }
}

static void on_loaded(GObject *source, GAsyncResult *result, gpointer user_data)
{
    RescueDetailsPane *self = user_data;
    LoadRequest *rq = g_task_get_task_data(G_TASK(result));
    GCancellable *cancellable = g_task_get_cancellable(G_TASK(result));
    LoadResult *r;

    (void)source;
    r = g_task_propagate_pointer(G_TASK(result), NULL);
    if (r == NULL || g_cancellable_is_cancelled(cancellable) || self->load != cancellable) {
        if (r != NULL)
            load_result_free(r);
        g_object_unref(self);
        return;
    }
    g_clear_object(&self->load);

    if (r->block != NULL) {
        gsize n = 0;
        const guint8 *p = g_bytes_get_data(r->block, &n);
        g_autofree char *hex = rescue_format_hex(p, n, 0, 8);
        set_text(self->hex_text, hex);
    } else {
        set_text(self->hex_text, r->block_error);
    }
    if (self->type_value != NULL)
        gtk_label_set_text(self->type_value, r->description != NULL ? r->description : "—");

    if (rq->is_file) {
        if (r->texture != NULL) {
            gtk_picture_set_paintable(self->preview_picture, GDK_PAINTABLE(r->texture));
            gtk_stack_set_visible_child_name(self->preview_stack, "image");
        } else if (r->head != NULL) {
            gsize n = 0;
            const guint8 *p = g_bytes_get_data(r->head, &n);
            gsize shown = MIN(n, (gsize)TEXT_PREVIEW_BYTES);
            if (n == 0) {
                show_preview_message(self, _("The file is empty."));
            } else if (rescue_looks_like_text(p, shown)) {
                g_autofree char *text = g_utf8_make_valid((const char *)p, (gssize)shown);
                set_text(self->preview_text, text);
                gtk_stack_set_visible_child_name(self->preview_stack, "text");
            } else {
                show_preview_message(self, _("No preview for this kind of file."));
            }
        } else {
            show_preview_message(self, r->head_error != NULL ? r->head_error
                                                             : _("The file cannot be read."));
        }
    }
    load_result_free(r);
    g_object_unref(self);
}

static void start_load(RescueDetailsPane *self, RescueData *data, guint32 entry, guint64 block,
                       gboolean is_file)
{
    LoadRequest *rq = g_new0(LoadRequest, 1);
    g_autoptr(GTask) task = NULL;

    cancel_load(self);
    self->load = g_cancellable_new();
    rq->data = rescue_data_ref(data);
    rq->entry = entry;
    rq->block = block;
    rq->is_file = is_file;
    task = g_task_new(NULL, self->load, on_loaded, g_object_ref(self));
    g_task_set_name(task, "[rescue] details");
    g_task_set_task_data(task, rq, load_request_free);
    g_task_run_in_thread(task, load_thread);
}

static void set_reveal_buttons(RescueDetailsPane *self, guint32 entry, guint64 block)
{
    /* The target first: an action with a parameter refuses a button without one. */
    gtk_widget_set_visible(GTK_WIDGET(self->show_entry_button), entry != 0);
    if (entry != 0) {
        gtk_actionable_set_action_target(GTK_ACTIONABLE(self->show_entry_button), "u", entry);
        gtk_actionable_set_action_name(GTK_ACTIONABLE(self->show_entry_button),
                                       "win.reveal-entry");
    }
    gtk_widget_set_visible(GTK_WIDGET(self->show_block_button), block != G_MAXUINT64);
    if (block != G_MAXUINT64) {
        gtk_actionable_set_action_target(GTK_ACTIONABLE(self->show_block_button), "t", block);
        gtk_actionable_set_action_name(GTK_ACTIONABLE(self->show_block_button),
                                       "win.reveal-block");
    }
    gtk_widget_set_visible(self->buttons_box, entry != 0 || block != G_MAXUINT64);
}

static char *attributes_text(guint16 attr)
{
    GPtrArray *words = g_ptr_array_new();
    char *out;

    if (attr & LANYFS_ATTR_NOWRITE)
        g_ptr_array_add(words, (gpointer)_("read-only"));
    if (attr & LANYFS_ATTR_NOEXEC)
        g_ptr_array_add(words, (gpointer)_("not executable"));
    if (attr & LANYFS_ATTR_HIDDEN)
        g_ptr_array_add(words, (gpointer)_("hidden"));
    if (attr & LANYFS_ATTR_ARCHIVE)
        g_ptr_array_add(words, (gpointer)_("archive"));
    g_ptr_array_add(words, NULL);
    out = words->len > 1 ? g_strjoinv(_(", "), (char **)words->pdata) : g_strdup(_("none"));
    g_ptr_array_unref(words);
    return out;
}

/* ---- public ------------------------------------------------------------------ */

void rescue_details_pane_show_summary(RescueDetailsPane *self, RescueData *data)
{
    const RescueGeometry *g;
    const struct scan_summary *s;
    const guint *sev;
    g_autofree char *name = NULL;
    g_autofree char *text = NULL;

    g_return_if_fail(RESCUE_IS_DETAILS_PANE(self));
    g_return_if_fail(data != NULL);

    cancel_load(self);
    clear_properties(self);
    g = rescue_data_get_geometry(data);
    s = rescue_data_get_summary(data);
    sev = rescue_data_get_findings_by_severity(data);
    name = g_filename_display_basename(rescue_data_get_source_path(data));
    gtk_label_set_text(self->title_label, g->label != NULL && g->label[0] ? g->label : name);
    gtk_label_set_text(self->subtitle_label, _("Select an entry, a finding or a block to see "
                                               "its details."));
    add_property(self, _("Opened"), name);
    if (rescue_data_get_kind(data) == RESCUE_SOURCE_DATABASE) {
        g_autofree char *image = g_filename_display_name(rescue_data_get_image_path(data));
        add_property(self, _("Image"), image);
    }
    text = g_format_size_full(g->image_bytes, G_FORMAT_SIZE_LONG_FORMAT);
    add_property(self, _("Image size"), text);
    if (g->have_geometry) {
        g_free(text);
        text = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%u byte", "%u bytes", g->blocksize),
                               g->blocksize);
        add_property(self, _("Block size"), text);
        g_free(text);
        text = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%u byte", "%u bytes", g->addrlen),
                               g->addrlen);
        add_property(self, _("Address length"), text);
        add_property_u64(self, _("Blocks"), g->fs_blocks);
    }
    add_property(self, _("Geometry"),
                 !g->have_geometry ? _("unknown")
                                   : (g->inferred ? _("inferred from the blocks")
                                                  : _("read from the superblock")));
    add_property_u64(self, _("Directories"), s->dirs);
    add_property_u64(self, _("Files"), s->files);
    g_free(text);
    text = g_format_size(s->bytes);
    add_property(self, _("Bytes in files"), text);
    add_property_u64(self, _("Deleted entries"), s->deleted);
    add_property_u64(self, _("Orphaned entries"), s->orphans);
    g_free(text);
    /* TRANSLATORS: finding counts by severity */
    text = g_strdup_printf(_("%u critical, %u errors, %u warnings, %u notes"), sev[3], sev[2],
                           sev[1], sev[0]);
    add_property(self, _("Findings"), text);
    if (rescue_data_get_depth(data) == RESCUE_SCAN_QUICK)
        add_property(self, _("Scan"), _("a quick walk of the live tree only"));
    set_reveal_buttons(self, 0, G_MAXUINT64);
    set_sections(self, FALSE, FALSE);
}

void rescue_details_pane_show_entry(RescueDetailsPane *self, RescueData *data, guint32 id)
{
    const RescueEntryInfo *e;
    g_autofree char *text = NULL;
    gboolean is_file;

    g_return_if_fail(RESCUE_IS_DETAILS_PANE(self));
    g_return_if_fail(data != NULL);

    e = rescue_data_get_entry(data, id);
    if (e == NULL) {
        rescue_details_pane_show_summary(self, data);
        return;
    }
    cancel_load(self);
    clear_properties(self);
    is_file = e->type == LANYFS_TYPE_FILE;
    gtk_label_set_text(self->title_label, e->name[0] ? e->name : _("(no name)"));
    gtk_label_set_text(self->subtitle_label, e->path);

    add_property(self, _("State"), rescue_format_entry_state(e));
    add_property(self, _("Type"), rescue_format_type(e->type));
    if (is_file) {
        g_autofree char *human = g_format_size_full(e->size, G_FORMAT_SIZE_LONG_FORMAT);
        add_property(self, _("Size"), human);
    }
    text = rescue_format_time(e->created);
    add_property(self, _("Created"), text);
    g_free(text);
    text = rescue_format_time(e->modified);
    add_property(self, _("Modified"), text);
    g_free(text);
    text = attributes_text(e->attr);
    add_property(self, _("Attributes"), text);
    if (e->lost_only) {
        add_property_u64(self, _("Top extender"), e->block);
    } else {
        add_property_u64(self, _("Entry block"), e->block);
        add_property_u64(self, _("Write counter"), e->wrcnt);
    }
    if (e->lost_top != 0) {
        g_autofree char *human = g_format_size_full(e->lost_size, G_FORMAT_SIZE_LONG_FORMAT);
        g_autofree char *lost =
            e->lost_only
                /* TRANSLATORS: %s is a size; the data of a file written just before an
                 * unplug, whose entry is not known */
                ? g_strdup_printf(_("%s that no entry links; the size is read off the data"),
                                  human)
                /* TRANSLATORS: %s is a size, %llu a block number; the entry's data
                 * pointer and size never reached the disk */
                : g_strdup_printf(_("%s in the extender tree at block %llu, which the entry "
                                    "never linked; the size is read off the data"),
                                  human, (unsigned long long)e->lost_top);
        add_property(self, _("Data found"), lost);
    }
    if (is_file) {
        g_free(text);
        /* TRANSLATORS: data blocks of a file: needed by its size, found, still intact */
        text = g_strdup_printf(_("%llu needed, %llu found, %llu intact"),
                               (unsigned long long)e->blocks_needed,
                               (unsigned long long)e->blocks_mapped,
                               (unsigned long long)e->blocks_intact);
        add_property(self, _("Data blocks"), text);
        g_free(text);
        text = rescue_format_recoverable(e);
        add_property(self, _("Recoverable"), text);
        self->type_value = add_property(self, _("Content type"), _("Reading…"));
    } else {
        guint32 n = 0;
        rescue_data_get_children(data, id, &n);
        add_property_u64(self, _("Entries"), n);
    }

    set_reveal_buttons(self, 0, e->block);
    set_sections(self, is_file, TRUE);
    {
        g_autofree char *heading = g_strdup_printf(_("Entry Block %llu"),
                                                   (unsigned long long)e->block);
        gtk_label_set_text(self->hex_heading, heading);
    }
    set_text(self->hex_text, _("Reading…"));
    show_preview_message(self, _("Reading…"));
    start_load(self, data, id, e->block, is_file);
}

void rescue_details_pane_show_block(RescueDetailsPane *self, RescueData *data, guint64 block)
{
    const struct scan_block *cell;
    g_autofree char *text = NULL;
    g_autofree char *heading = NULL;

    g_return_if_fail(RESCUE_IS_DETAILS_PANE(self));
    g_return_if_fail(data != NULL);

    cell = rescue_data_get_block(data, block);
    if (cell == NULL) {
        rescue_details_pane_show_summary(self, data);
        return;
    }
    cancel_load(self);
    clear_properties(self);
    heading = g_strdup_printf(_("Block %llu"), (unsigned long long)block);
    gtk_label_set_text(self->title_label, heading);
    gtk_label_set_text(self->subtitle_label, rescue_format_class(cell->cls));

    add_property(self, _("Kind"), rescue_format_class(cell->cls));
    text = rescue_format_block_owner(data, block);
    add_property(self, _("Owner"), text);
    if (cell->cls == SCAN_BLK_DATA)
        add_property_u64(self, _("File block"), cell->index);
    else if (cell->cls == SCAN_BLK_EXTENDER)
        add_property_u64(self, _("Extender level"), cell->index);
    else if (cell->cls == SCAN_BLK_FREE && cell->index != 0)
        add_property_u64(self, _("Listed by chain block"), cell->index);
    if (cell->flags & SCAN_BF_METADATA)
        add_property_u64(self, _("Write counter"), cell->wrcnt);
    else
        add_property(self, _("Write counter"), _("none (no header)"));
    g_free(text);
    text = rescue_format_block_flags(cell->flags);
    add_property(self, _("Flags"), text[0] ? text : _("none"));
    self->type_value = add_property(self, _("Content type"), _("Reading…"));

    set_reveal_buttons(self, cell->owner, block);
    set_sections(self, FALSE, TRUE);
    gtk_label_set_text(self->hex_heading, _("Contents"));
    set_text(self->hex_text, _("Reading…"));
    start_load(self, data, 0, block, FALSE);
}

void rescue_details_pane_clear(RescueDetailsPane *self)
{
    g_return_if_fail(RESCUE_IS_DETAILS_PANE(self));

    cancel_load(self);
    clear_properties(self);
    gtk_label_set_text(self->title_label, "");
    gtk_label_set_text(self->subtitle_label, "");
    set_reveal_buttons(self, 0, G_MAXUINT64);
    set_sections(self, FALSE, FALSE);
}

gboolean rescue_details_pane_get_loading(RescueDetailsPane *self)
{
    g_return_val_if_fail(RESCUE_IS_DETAILS_PANE(self), FALSE);
    return self->load != NULL;
}

/* ---- GObject ----------------------------------------------------------------- */

static void rescue_details_pane_dispose(GObject *object)
{
    RescueDetailsPane *self = RESCUE_DETAILS_PANE(object);

    cancel_load(self);
    gtk_widget_dispose_template(GTK_WIDGET(self), RESCUE_TYPE_DETAILS_PANE);
    /* Children the template made but nothing binds are ours to unparent. */
    for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self))) != NULL;)
        gtk_widget_unparent(child);
    G_OBJECT_CLASS(rescue_details_pane_parent_class)->dispose(object);
}

static void rescue_details_pane_class_init(RescueDetailsPaneClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);

    object_class->dispose = rescue_details_pane_dispose;

    gtk_widget_class_set_template_from_resource(widget_class,
                                                "/org/lanyfs/Rescue/ui/rescue-details-pane.ui");
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, title_label);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, subtitle_label);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, properties_grid);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, buttons_box);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, show_entry_button);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, show_block_button);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, preview_heading);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, preview_stack);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, preview_none_label);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, preview_text);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, preview_picture);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, hex_heading);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, hex_frame);
    gtk_widget_class_bind_template_child(widget_class, RescueDetailsPane, hex_text);
    gtk_widget_class_set_css_name(widget_class, "detailspane");
}

static void rescue_details_pane_init(RescueDetailsPane *self)
{
    gtk_widget_init_template(GTK_WIDGET(self));
    rescue_details_pane_clear(self);
}

GtkWidget *rescue_details_pane_new(void)
{
    return g_object_new(RESCUE_TYPE_DETAILS_PANE, NULL);
}
