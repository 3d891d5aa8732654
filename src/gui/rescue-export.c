/*
 * rescue-export.c -- findings and the block map to CSV, JSON and PNG (rescue-export.h).
 *
 * The CSV and JSON fields carry stable names (the catalogue's code names,
 * the scanner's class names) beside the translated words, so that a script
 * can read an export made in any language.
 */
#define G_LOG_DOMAIN "rescue-export"

#include "config.h"

#include <cairo.h>
#include <math.h>
#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "rescue-block-paint.h"
#include "rescue-export.h"
#include "rescue-format.h"

void rescue_csv_append_field(GString *out, const char *field)
{
    g_return_if_fail(out != NULL);

    if (field == NULL)
        return;
    if (strpbrk(field, ",\"\r\n") == NULL) {
        g_string_append(out, field);
        return;
    }
    g_string_append_c(out, '"');
    for (const char *p = field; *p; p++) {
        if (*p == '"')
            g_string_append_c(out, '"');
        g_string_append_c(out, *p);
    }
    g_string_append_c(out, '"');
}

static void csv_row(GString *out, const char *const *fields, guint n)
{
    for (guint i = 0; i < n; i++) {
        if (i > 0)
            g_string_append_c(out, ',');
        rescue_csv_append_field(out, fields[i]);
    }
    g_string_append(out, "\r\n");
}

static char *base_name(RescueData *data)
{
    g_autofree char *base = g_path_get_basename(rescue_data_get_source_path(data));
    char *dot = strrchr(base, '.');

    if (dot != NULL && dot != base)
        *dot = '\0';
    return g_steal_pointer(&base);
}

char *rescue_export_suggest_name(RescueData *data, RescueExportKind kind)
{
    g_autofree char *base = NULL;

    g_return_val_if_fail(data != NULL, NULL);

    base = base_name(data);
    switch (kind) {
    case RESCUE_EXPORT_FINDINGS_CSV:
        return g_strdup_printf("%s-findings.csv", base);
    case RESCUE_EXPORT_FINDINGS_JSON:
        return g_strdup_printf("%s-findings.json", base);
    case RESCUE_EXPORT_MAP_PNG:
        return g_strdup_printf("%s-block-map.png", base);
    case RESCUE_EXPORT_MAP_CSV:
        return g_strdup_printf("%s-block-map.csv", base);
    case RESCUE_EXPORT_WEAR_PNG:
        return g_strdup_printf("%s-wear.png", base);
    case RESCUE_EXPORT_WEAR_CSV:
        return g_strdup_printf("%s-wear.csv", base);
    }
    return g_strdup(base);
}

static GBytes *findings_csv(RescueData *data)
{
    GString *out = g_string_new(NULL);
    const char *header[] = {"severity", "code", "name", "message", "path", "block", "entry",
                            "repair"};

    csv_row(out, header, G_N_ELEMENTS(header));
    for (guint i = 0; i < rescue_data_get_n_findings(data); i++) {
        const RescueFindingInfo *f = rescue_data_get_finding(data, i);
        const struct scan_problem_info *row = scan_problem_lookup(f->code);
        g_autofree char *code = g_strdup_printf("0x%06x", f->code);
        g_autofree char *block = f->has_block ? g_strdup_printf("%" G_GUINT64_FORMAT, f->block)
                                              : g_strdup("");
        g_autofree char *entry = f->entry ? g_strdup_printf("%u", f->entry) : g_strdup("");
        const char *fields[] = {scan_severity_name(f->severity), code,
                                row != NULL ? row->name : "UNKNOWN", f->message,
                                f->path != NULL ? f->path : "", block, entry,
                                rescue_format_repair(f->code)};
        csv_row(out, fields, G_N_ELEMENTS(fields));
    }
    return g_string_free_to_bytes(out);
}

static GBytes *findings_json(RescueData *data)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    g_autoptr(JsonGenerator) gen = json_generator_new();
    g_autoptr(JsonNode) root = NULL;
    gsize len = 0;
    char *text;

    json_builder_begin_object(b);
    json_builder_set_member_name(b, "source");
    json_builder_add_string_value(b, rescue_data_get_source_path(data));
    json_builder_set_member_name(b, "findings");
    json_builder_begin_array(b);
    for (guint i = 0; i < rescue_data_get_n_findings(data); i++) {
        const RescueFindingInfo *f = rescue_data_get_finding(data, i);
        const struct scan_problem_info *row = scan_problem_lookup(f->code);
        g_autofree char *code = g_strdup_printf("0x%06x", f->code);

        json_builder_begin_object(b);
        json_builder_set_member_name(b, "severity");
        json_builder_add_string_value(b, scan_severity_name(f->severity));
        json_builder_set_member_name(b, "code");
        json_builder_add_string_value(b, code);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, row != NULL ? row->name : "UNKNOWN");
        json_builder_set_member_name(b, "message");
        json_builder_add_string_value(b, f->message);
        json_builder_set_member_name(b, "path");
        if (f->path != NULL)
            json_builder_add_string_value(b, f->path);
        else
            json_builder_add_null_value(b);
        json_builder_set_member_name(b, "block");
        if (f->has_block)
            json_builder_add_int_value(b, (gint64)f->block);
        else
            json_builder_add_null_value(b);
        json_builder_set_member_name(b, "entry");
        if (f->entry != 0)
            json_builder_add_int_value(b, f->entry);
        else
            json_builder_add_null_value(b);
        json_builder_set_member_name(b, "repair");
        json_builder_add_string_value(b, rescue_format_repair(f->code));
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);

    root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    json_generator_set_pretty(gen, TRUE);
    text = json_generator_to_data(gen, &len);
    return g_bytes_new_take(text, len);
}

static GBytes *map_csv(RescueData *data)
{
    GString *out = g_string_new(NULL);
    const struct scan_block *cells = rescue_data_get_blocks(data);
    guint64 n = rescue_data_get_n_blocks(data);
    const char *header[] = {"first", "count", "class", "owner", "owner_path", "flags"};

    csv_row(out, header, G_N_ELEMENTS(header));
    for (guint64 b = 0; b < n;) {
        guint64 e = b + 1;
        while (e < n && cells[e].cls == cells[b].cls && cells[e].owner == cells[b].owner &&
               cells[e].flags == cells[b].flags)
            e++;
        {
            const RescueEntryInfo *owner = rescue_data_get_entry(data, cells[b].owner);
            g_autofree char *first = g_strdup_printf("%" G_GUINT64_FORMAT, b);
            g_autofree char *count = g_strdup_printf("%" G_GUINT64_FORMAT, e - b);
            g_autofree char *oid = g_strdup_printf("%u", cells[b].owner);
            g_autofree char *flags = g_strdup_printf("0x%02x", cells[b].flags);
            const char *fields[] = {first, count, scan_class_name(cells[b].cls),
                                    cells[b].owner ? oid : "", owner != NULL ? owner->path : "",
                                    flags};
            csv_row(out, fields, G_N_ELEMENTS(fields));
        }
        b = e;
    }
    return g_string_free_to_bytes(out);
}

static cairo_status_t append_png(void *closure, const unsigned char *bytes, unsigned int len)
{
    g_byte_array_append(closure, bytes, len);
    return CAIRO_STATUS_SUCCESS;
}

#define LEGEND_LINE 22

static GBytes *map_png(RescueData *data, GError **error)
{
    guint64 n = rescue_data_get_n_blocks(data);
    guint columns;
    guint cell;
    RescueMapLayout layout;
    guint legend_lines;
    int width;
    int map_height;
    int height;
    cairo_surface_t *surface;
    cairo_t *cr;
    GByteArray *png;
    cairo_status_t status;
    guint64 present[SCAN_BLK_CLASSES] = {0};

    if (n == 0) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                            _("The scan holds no block map"));
        return NULL;
    }
    /* About twice as wide as high, at most 2048 blocks a row, cells of 1 to 8 pixels. */
    columns = (guint)CLAMP(sqrt((double)n * 2.0), 64.0, 2048.0);
    columns = (columns + 63) / 64 * 64;
    cell = CLAMP(1024 / columns, 1, 8);
    rescue_map_layout(n, columns * cell, cell, &layout);
    width = (int)(layout.columns * layout.cell);
    width = MAX(width, 480);
    if (layout.rows > (guint64)(G_MAXINT / 4) / layout.cell) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                            _("The block map is too large for an image"));
        return NULL;
    }
    map_height = (int)(layout.rows * layout.cell);

    for (guint64 b = 0; b < n; b++)
        present[MIN(rescue_data_get_blocks(data)[b].cls, SCAN_BLK_CLASSES - 1)]++;
    legend_lines = 0;
    for (guint c = 0; c < SCAN_BLK_CLASSES; c++)
        if (present[c])
            legend_lines++;
    height = map_height + 12 + (int)legend_lines * LEGEND_LINE + 8;

    surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(surface);
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                            _("Not enough memory for the image"));
        return NULL;
    }
    cr = cairo_create(surface);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_surface_flush(surface);
    {
        int stride = cairo_image_surface_get_stride(surface) / 4;
        guint32 *pixels = (guint32 *)(void *)cairo_image_surface_get_data(surface);
        rescue_block_paint(data, &layout, 0, 0, pixels, width, map_height, stride, FALSE);
        /* The painter leaves gaps transparent: lay the map over white again. */
        for (int y = 0; y < map_height; y++)
            for (int x = 0; x < width; x++)
                if ((pixels[(gsize)y * stride + x] >> 24) == 0)
                    pixels[(gsize)y * stride + x] = 0xffffffff;
    }
    cairo_surface_mark_dirty(surface);

    /* The legend. */
    cairo_select_font_face(cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 13);
    {
        double y = map_height + 12;
        for (guint c = 0; c < SCAN_BLK_CLASSES; c++) {
            guint32 colour;
            g_autofree char *text = NULL;
            if (!present[c])
                continue;
            colour = rescue_class_colour((guint8)c);
            cairo_set_source_rgb(cr, ((colour >> 16) & 0xff) / 255.0,
                                 ((colour >> 8) & 0xff) / 255.0, (colour & 0xff) / 255.0);
            cairo_rectangle(cr, 8, y, 14, 14);
            cairo_fill(cr);
            text = g_strdup_printf("%s: %" G_GUINT64_FORMAT, rescue_format_class((guint8)c),
                                   present[c]);
            cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
            cairo_move_to(cr, 30, y + 12);
            cairo_show_text(cr, text);
            y += LEGEND_LINE;
        }
    }
    cairo_destroy(cr);

    png = g_byte_array_new();
    status = cairo_surface_write_to_png_stream(surface, append_png, png);
    cairo_surface_destroy(surface);
    if (status != CAIRO_STATUS_SUCCESS) {
        g_byte_array_unref(png);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot make the image: %s"),
                    cairo_status_to_string(status));
        return NULL;
    }
    return g_byte_array_free_to_bytes(png);
}

GBytes *rescue_export_to_bytes(RescueData *data, RescueExportKind kind, GError **error)
{
    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(error == NULL || *error == NULL, NULL);

    switch (kind) {
    case RESCUE_EXPORT_FINDINGS_CSV:
        return findings_csv(data);
    case RESCUE_EXPORT_FINDINGS_JSON:
        return findings_json(data);
    case RESCUE_EXPORT_MAP_PNG:
        return map_png(data, error);
    case RESCUE_EXPORT_MAP_CSV:
        return map_csv(data);
    case RESCUE_EXPORT_WEAR_PNG:
    case RESCUE_EXPORT_WEAR_CSV:
        /* The wear report's own writers (rescue-wear-export.h). */
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                            "the wear exports are written by the wear report");
        return NULL;
    }
    g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "unknown export");
    return NULL;
}

gboolean rescue_export_to_file(RescueData *data, RescueExportKind kind, const char *path,
                               GError **error)
{
    g_autoptr(GBytes) bytes = NULL;
    gsize len = 0;
    const char *p;

    g_return_val_if_fail(data != NULL, FALSE);
    g_return_val_if_fail(path != NULL, FALSE);

    bytes = rescue_export_to_bytes(data, kind, error);
    if (bytes == NULL)
        return FALSE;
    p = g_bytes_get_data(bytes, &len);
    return g_file_set_contents_full(path, p != NULL ? p : "", (gssize)len,
                                    G_FILE_SET_CONTENTS_CONSISTENT, 0644, error);
}
