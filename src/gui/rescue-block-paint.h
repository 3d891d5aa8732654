/*
 * rescue-block-paint.h -- the block map's colours and its pixels.
 *
 * The block map widget, the PNG export and the tests paint through these
 * functions, so what is exported is what is shown.  Blocks are laid out in
 * rows of `columns` cells of `cell` pixels, the last `gap` pixels of each
 * cell left transparent.  Pixels are 32-bit premultiplied ARGB in native
 * byte order (cairo's CAIRO_FORMAT_ARGB32 and GDK_MEMORY_DEFAULT).
 * Nothing here uses GTK.
 */
#pragma once

#include <glib.h>

#include "rescue-data.h"

G_BEGIN_DECLS

/* Zoom steps, in pixels per block; the block-map-zoom setting is clamped to 1..32. */
#define RESCUE_ZOOM_MIN 1
#define RESCUE_ZOOM_MAX 32

typedef struct {
    guint cell;     /* pixels per block, gap included */
    guint gap;      /* transparent pixels at the right and bottom of each cell */
    guint columns;  /* blocks per row */
    guint64 rows;   /* rows the map needs */
} RescueMapLayout;

/* The layout of n blocks at zoom pixels per block in a width of width pixels. */
void rescue_map_layout(guint64 n, guint width, guint zoom, RescueMapLayout *out);
/* The next zoom step above or below zoom. */
guint rescue_zoom_step(guint zoom, int direction);

/* The colour of a class, 0xAARRGGBB, opaque. */
guint32 rescue_class_colour(guint8 cls);
/* The colour of a cell: its class; red when shared; by write counter when wear is on. */
guint32 rescue_block_colour(const struct scan_block *cell, gboolean wear, guint16 wear_max);

/*
 * Paint the rows first_row.. of data's map into pixels (width x height,
 * stride in pixels), the top of first_row at y_offset (<= 0) in the buffer.
 * Pixels outside cells are cleared to transparent.
 */
void rescue_block_paint(const RescueData *data, const RescueMapLayout *layout, guint64 first_row,
                        int y_offset, guint32 *pixels, int width, int height, int stride,
                        gboolean wear);

G_END_DECLS
