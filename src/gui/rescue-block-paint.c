/*
 * rescue-block-paint.c -- colours and pixels of the block map (rescue-block-paint.h).
 *
 * Colours come from the GNOME palette, picked so that what matters to a
 * rescue stands out: data and entries in blues and greens, free space pale,
 * leaks orange, deleted and orphaned entries purple and yellow, unreadable
 * blocks and cross-links red.  The wear overlay paints metadata blocks on
 * a yellow-orange-red ramp by write counter (on a square-root scale, since
 * a few hot blocks take most writes) and fades everything else.
 */
#define G_LOG_DOMAIN "rescue-block-paint"

#include "config.h"

#include <math.h>
#include <string.h>

#include "rescue-block-paint.h"

static const guint zoom_steps[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};

void rescue_map_layout(guint64 n, guint width, guint zoom, RescueMapLayout *out)
{
    g_return_if_fail(out != NULL);

    zoom = CLAMP(zoom, RESCUE_ZOOM_MIN, RESCUE_ZOOM_MAX);
    out->cell = zoom;
    out->gap = zoom >= 4 ? 1 : 0;
    out->columns = MAX(1, width / zoom);
    out->rows = n == 0 ? 0 : (n - 1) / out->columns + 1;
}

guint rescue_zoom_step(guint zoom, int direction)
{
    guint n = G_N_ELEMENTS(zoom_steps);

    if (direction > 0) {
        for (guint i = 0; i < n; i++)
            if (zoom_steps[i] > zoom)
                return zoom_steps[i];
        return zoom_steps[n - 1];
    }
    for (guint i = n; i > 0; i--)
        if (zoom_steps[i - 1] < zoom)
            return zoom_steps[i - 1];
    return zoom_steps[0];
}

guint32 rescue_class_colour(guint8 cls)
{
    switch (cls) {
    case SCAN_BLK_SUPER:
        return 0xff613583;      /* purple 5 */
    case SCAN_BLK_DIR:
        return 0xff1a5fb4;      /* blue 5 */
    case SCAN_BLK_FILE:
        return 0xff3584e4;      /* blue 3 */
    case SCAN_BLK_EXTENDER:
        return 0xff26a269;      /* green 5 */
    case SCAN_BLK_DATA:
        return 0xff57e389;      /* green 2 */
    case SCAN_BLK_CHAIN:
        return 0xff986a44;      /* brown 3 */
    case SCAN_BLK_FREE:
        return 0xffdeddda;      /* light 3 */
    case SCAN_BLK_LEAKED:
        return 0xffff7800;      /* orange 3 */
    case SCAN_BLK_ORPHAN:
        return 0xfff5c211;      /* yellow 4 */
    case SCAN_BLK_DELETED:
        return 0xffc061cb;      /* purple 2 */
    case SCAN_BLK_UNREADABLE:
        return 0xffa51d2d;      /* red 5 */
    case SCAN_BLK_BEYOND:
        return 0xff5e5c64;      /* dark 2 */
    case SCAN_BLK_ORPHAN_EXT:
        return 0xffcdab8f;      /* brown 1 */
    case SCAN_BLK_UNKNOWN:
    default:
        return 0xff9a9996;      /* light 5 */
    }
}

static guint32 mix(guint32 a, guint32 b, double t)
{
    guint32 out = 0xff000000;

    t = CLAMP(t, 0.0, 1.0);
    for (int shift = 0; shift <= 16; shift += 8) {
        double ca = (a >> shift) & 0xff;
        double cb = (b >> shift) & 0xff;
        out |= (guint32)lround(ca + (cb - ca) * t) << shift;
    }
    return out;
}

guint32 rescue_block_colour(const struct scan_block *cell, gboolean wear, guint16 wear_max)
{
    g_return_val_if_fail(cell != NULL, 0);

    if (wear) {
        double t;
        if (!(cell->flags & SCAN_BF_METADATA))
            return mix(rescue_class_colour(cell->cls), 0xfff6f5f4, 0.8);
        t = sqrt((double)cell->wrcnt / (double)MAX(wear_max, 1));
        if (t < 0.5)
            return mix(0xfff9f06b, 0xffff7800, t * 2);      /* yellow 1 to orange 3 */
        return mix(0xffff7800, 0xffa51d2d, (t - 0.5) * 2);  /* orange 3 to red 5 */
    }
    if (cell->flags & SCAN_BF_SHARED)
        return 0xffe01b24;                                   /* red 3 */
    return rescue_class_colour(cell->cls);
}

void rescue_block_paint(const RescueData *data, const RescueMapLayout *layout, guint64 first_row,
                        int y_offset, guint32 *pixels, int width, int height, int stride,
                        gboolean wear)
{
    const struct scan_block *cells;
    guint64 n;
    guint16 wear_max;
    int fill;

    g_return_if_fail(data != NULL);
    g_return_if_fail(layout != NULL && layout->cell > 0);
    g_return_if_fail(pixels != NULL);
    g_return_if_fail(stride >= width);

    for (int y = 0; y < height; y++)
        memset(pixels + (gsize)y * stride, 0, (gsize)width * sizeof(guint32));

    cells = rescue_data_get_blocks(data);
    n = rescue_data_get_n_blocks(data);
    wear_max = rescue_data_get_wear_max(data);
    fill = (int)(layout->cell - layout->gap);

    for (guint64 row = first_row; row < layout->rows; row++) {
        int y0 = y_offset + (int)((row - first_row) * layout->cell);
        int ya = MAX(y0, 0);
        int yb = MIN(y0 + fill, height);

        if (y0 >= height)
            break;
        if (yb <= ya)
            continue;
        for (guint col = 0; col < layout->columns; col++) {
            guint64 blk = row * layout->columns + col;
            int x0 = (int)(col * layout->cell);
            int xb = MIN(x0 + fill, width);
            guint32 colour;

            if (blk >= n || x0 >= width)
                break;
            colour = rescue_block_colour(&cells[blk], wear, wear_max);
            for (int y = ya; y < yb; y++) {
                guint32 *p = pixels + (gsize)y * stride;
                for (int x = x0; x < xb; x++)
                    p[x] = colour;
            }
        }
    }
}
