/*
 * wear_png.c -- the block map as a heat image (wear.h), drawn with cairo.
 *
 * One cell per block, row by row from block 0 at the top left.  A device
 * of more than WEAR_PNG_MAX_CELLS blocks is aggregated: a cell stands for
 * the smallest power of two of blocks that keeps the cells within that
 * limit, takes the colour of its hottest metadata block (or, without one,
 * of the most telling other block: unreadable, data, other, free, beyond),
 * and the legend says how many blocks a cell holds.
 *
 * Colour: each kind of metadata block has a hue, from dark (counter 0) to
 * bright (the highest counter of the device), on a log scale, since a few
 * chain blocks and the superblock are far hotter than the rest.  Blocks
 * without a counter have fixed colours.  The map has about as many
 * columns as rows (the square root of the cell count, at most 256), cells
 * of 16 pixels shrinking to 2 as the columns grow, so the map is at most
 * 512 pixels square and the image at most 584 by 692 pixels whatever the
 * device.  Below the map lies the
 * legend: what a cell stands for, a swatch and name per colour, and the
 * counter scale.  wear_png_layout gives every position, for tests and for
 * a viewer that wants to tell which block a pixel shows.
 *
 * cairo is loaded (dlopen) when the first image is drawn, not when the
 * program starts: `lanyfs` needs it only for `wear --png`, and the 17
 * libraries it brings made every other command start 3.7 ms later (a
 * tenth of a scan of 10,000 files).  Only the functions named in
 * CAIRO_FUNCS are used; each is looked up once, and a cairo that lacks one
 * is reported like one that cannot be loaded.
 */
#include <cairo.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lazylib.h"
#include "utf8.h"
#include "wear.h"

/* The library's name as installed (Debian: libcairo2). */
#define CAIRO_SONAME "libcairo.so.2"

#define CAIRO_FUNCS(X)                                                                     \
    X(cairo_create) X(cairo_destroy) X(cairo_status) X(cairo_status_to_string)             \
    X(cairo_image_surface_create) X(cairo_surface_flush) X(cairo_surface_write_to_png)     \
    X(cairo_surface_destroy) X(cairo_set_antialias) X(cairo_set_source_rgb)                \
    X(cairo_set_source) X(cairo_paint) X(cairo_rectangle) X(cairo_fill)                    \
    X(cairo_fill_preserve) X(cairo_stroke) X(cairo_set_line_width) X(cairo_move_to)        \
    X(cairo_show_text) X(cairo_select_font_face) X(cairo_set_font_size)                    \
    X(cairo_pattern_create_linear) X(cairo_pattern_add_color_stop_rgb)                     \
    X(cairo_pattern_destroy) X(cairo_debug_reset_static_data)

static struct {
#define MEMBER(f) __typeof__(f) *f;
    CAIRO_FUNCS(MEMBER)
#undef MEMBER
} cairo;
static pthread_once_t cairo_once = PTHREAD_ONCE_INIT;
static struct lazylib cairo_lib;
static bool cairo_ok; /* loaded with every function */

static void cairo_load(void)
{
    if (!lazylib_open(&cairo_lib, CAIRO_SONAME))
        return;
#define LOOKUP(f)                                                                          \
    if (!lazylib_sym(&cairo_lib, CAIRO_SONAME, #f, (void **)&cairo.f))                     \
        return;
    CAIRO_FUNCS(LOOKUP)
#undef LOOKUP
    cairo_ok = true;
}

/* From here on, each cairo call goes through the table. */
#define cairo_create (*cairo.cairo_create)
#define cairo_destroy (*cairo.cairo_destroy)
#define cairo_status (*cairo.cairo_status)
#define cairo_status_to_string (*cairo.cairo_status_to_string)
#define cairo_image_surface_create (*cairo.cairo_image_surface_create)
#define cairo_surface_flush (*cairo.cairo_surface_flush)
#define cairo_surface_write_to_png (*cairo.cairo_surface_write_to_png)
#define cairo_surface_destroy (*cairo.cairo_surface_destroy)
#define cairo_set_antialias (*cairo.cairo_set_antialias)
#define cairo_set_source_rgb (*cairo.cairo_set_source_rgb)
#define cairo_set_source (*cairo.cairo_set_source)
#define cairo_paint (*cairo.cairo_paint)
#define cairo_rectangle (*cairo.cairo_rectangle)
#define cairo_fill (*cairo.cairo_fill)
#define cairo_fill_preserve (*cairo.cairo_fill_preserve)
#define cairo_stroke (*cairo.cairo_stroke)
#define cairo_set_line_width (*cairo.cairo_set_line_width)
#define cairo_move_to (*cairo.cairo_move_to)
#define cairo_show_text (*cairo.cairo_show_text)
#define cairo_select_font_face (*cairo.cairo_select_font_face)
#define cairo_set_font_size (*cairo.cairo_set_font_size)
#define cairo_pattern_create_linear (*cairo.cairo_pattern_create_linear)
#define cairo_pattern_add_color_stop_rgb (*cairo.cairo_pattern_add_color_stop_rgb)
#define cairo_pattern_destroy (*cairo.cairo_pattern_destroy)
#define cairo_debug_reset_static_data (*cairo.cairo_debug_reset_static_data)

#define MARGIN 12
#define TITLE_H 20
#define LEGEND_W 560
#define LEGEND_H 124
#define CELL_MAX 16
#define CELL_MIN 2
#define MAP_TARGET 512

/* What a cell shows. */
enum cat {
    CAT_SUPER,
    CAT_DIR,
    CAT_FILE,
    CAT_EXTENDER,
    CAT_CHAIN,
    CAT_FREED,
    CAT_DATA,
    CAT_FREE,
    CAT_OTHER,
    CAT_UNREADABLE,
    CAT_BEYOND,
    CATS
};

static const struct {
    const char *name;  /* legend label */
    double rgb[3];     /* bright colour (metadata) or the colour */
    bool heat;         /* brightness follows the counter */
} cats[CATS] = {
    [CAT_SUPER] = {"superblock", {1.00, 0.25, 0.85}, true},
    [CAT_DIR] = {"directory", {1.00, 0.80, 0.10}, true},
    [CAT_FILE] = {"file", {0.25, 0.95, 0.30}, true},
    [CAT_EXTENDER] = {"extender", {0.15, 0.85, 1.00}, true},
    [CAT_CHAIN] = {"chain block", {1.00, 0.35, 0.10}, true},
    [CAT_FREED] = {"freed metadata", {0.65, 0.50, 1.00}, true},
    [CAT_DATA] = {"file data", {0.55, 0.60, 0.70}, false},
    [CAT_FREE] = {"free", {0.16, 0.16, 0.19}, false},
    [CAT_OTHER] = {"leaked, unknown", {0.42, 0.32, 0.22}, false},
    [CAT_UNREADABLE] = {"unreadable", {1.00, 1.00, 1.00}, false},
    [CAT_BEYOND] = {"beyond the end", {0.05, 0.05, 0.05}, false},
};

/* Brightness floor of a heat colour at counter 0. */
#define HEAT_DARK 0.28

static enum cat cat_of(const struct scan_block *c)
{
    enum wear_kind k;
    if ((c->flags & SCAN_BF_METADATA) && wear_kind_of((enum scan_class)c->cls, &k))
        return (enum cat)((int)CAT_SUPER + (int)k);
    switch ((enum scan_class)c->cls) {
    case SCAN_BLK_DATA:
        return CAT_DATA;
    case SCAN_BLK_FREE:
    case SCAN_BLK_CHAIN:
    case SCAN_BLK_DELETED:
        return CAT_FREE;
    case SCAN_BLK_UNREADABLE:
        return CAT_UNREADABLE;
    case SCAN_BLK_BEYOND:
        return CAT_BEYOND;
    default:
        return CAT_OTHER;
    }
}

/* Which of two non-metadata categories a cell shows. */
static int rank_of(enum cat c)
{
    switch (c) {
    case CAT_UNREADABLE:
        return 5;
    case CAT_DATA:
        return 4;
    case CAT_OTHER:
        return 3;
    case CAT_FREE:
        return 2;
    case CAT_BEYOND:
        return 1;
    default:
        return 6;
    }
}

void wear_png_layout(const struct wear_report *w, struct wear_png_layout *l)
{
    memset(l, 0, sizeof(*l));
    uint64_t n = w->blocks;
    uint64_t bpc = 1;
    while (n / bpc + (n % bpc != 0) > WEAR_PNG_MAX_CELLS)
        bpc *= 2;
    l->blocks_per_cell = bpc;
    l->cells = n / bpc + (n % bpc != 0);
    unsigned cols = 1;
    while ((uint64_t)cols * cols < l->cells)
        cols++;
    l->cols = cols;
    l->rows = (unsigned)((l->cells + cols - 1) / cols);
    unsigned cell = MAP_TARGET / cols;
    l->cell = cell > CELL_MAX ? CELL_MAX : cell < CELL_MIN ? CELL_MIN : cell;
    unsigned mapw = l->cols * l->cell;
    unsigned inner = mapw > LEGEND_W ? mapw : LEGEND_W;
    l->map_x = MARGIN;
    l->map_y = MARGIN + TITLE_H;
    l->legend_y = l->map_y + l->rows * l->cell + MARGIN;
    l->legend_h = LEGEND_H;
    l->width = inner + 2 * MARGIN;
    l->height = l->legend_y + l->legend_h + MARGIN;
}

static void heat_rgb(enum cat c, uint16_t wrcnt, uint16_t max, double rgb[3])
{
    double t = 1.0;
    if (cats[c].heat)
        t = max == 0 ? 0.0 : log1p((double)wrcnt) / log1p((double)max);
    double f = cats[c].heat ? HEAT_DARK + (1.0 - HEAT_DARK) * t : 1.0;
    for (int i = 0; i < 3; i++)
        rgb[i] = cats[c].rgb[i] * f;
}

static void draw_map(cairo_t *cr, const struct wear_report *w, const struct wear_png_layout *l)
{
    const struct scan_block *map = scan_blocks(w->scan);
    uint16_t max = w->all.max;
    for (uint64_t i = 0; i < l->cells; i++) {
        uint64_t first = i * l->blocks_per_cell;
        uint64_t end = w->blocks - first > l->blocks_per_cell ? first + l->blocks_per_cell
                                                              : w->blocks;
        enum cat best = CAT_BEYOND;
        bool meta = false;
        uint16_t hot = 0;
        for (uint64_t b = first; b < end; b++) {
            enum cat c = cat_of(&map[b]);
            if (cats[c].heat) {
                if (!meta || map[b].wrcnt > hot) {
                    best = c;
                    hot = map[b].wrcnt;
                }
                meta = true;
            } else if (!meta && (b == first || rank_of(c) > rank_of(best))) {
                best = c;
            }
        }
        double rgb[3];
        heat_rgb(best, hot, max, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        unsigned col = (unsigned)(i % l->cols), row = (unsigned)(i / l->cols);
        cairo_rectangle(cr, l->map_x + (double)col * l->cell, l->map_y + (double)row * l->cell,
                        l->cell, l->cell);
        cairo_fill(cr);
    }
}

static void text_at(cairo_t *cr, double x, double y, const char *s)
{
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, s);
}

/* Cut s before a character its buffer's end split: cairo draws nothing of invalid UTF-8. */
static void cut_whole(char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = lanyfs_utf8_decode((const uint8_t *)s + i, n - i, &cp);
        if (len == 0) {
            s[i] = '\0';
            return;
        }
        i += len;
    }
}

static void draw_legend(cairo_t *cr, const struct wear_report *w, const struct wear_png_layout *l,
                        const char *title)
{
    char buf[256];
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 11);
    snprintf(buf, sizeof(buf), "lanyfs wear%s%s", title ? ": " : "", title ? title : "");
    cut_whole(buf);
    text_at(cr, MARGIN, MARGIN + 12, buf);

    double x0 = MARGIN, y = l->legend_y + 12;
    if (l->blocks_per_cell == 1)
        snprintf(buf, sizeof(buf), "%" PRIu64 " blocks, 1 cell = 1 block, block 0 top left",
                 w->blocks);
    else
        snprintf(buf, sizeof(buf),
                 "%" PRIu64 " blocks, 1 cell = %" PRIu64
                 " blocks, coloured by the hottest metadata block in it",
                 w->blocks, l->blocks_per_cell);
    text_at(cr, x0, y, buf);

    /* Swatches: four columns. */
    for (int c = 0; c < CATS; c++) {
        double sx = x0 + (c % 4) * 140.0, sy = l->legend_y + 24 + (c / 4) * 18.0;
        double rgb[3];
        heat_rgb((enum cat)c, 1, 1, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle(cr, sx, sy, 12, 12);
        cairo_fill_preserve(cr);
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
        cairo_set_line_width(cr, 1);
        cairo_stroke(cr);
        text_at(cr, sx + 17, sy + 10, cats[c].name);
    }

    /* The counter scale, in the chain blocks' hue. */
    double by = l->legend_y + 84, bw = 256;
    cairo_pattern_t *p = cairo_pattern_create_linear(x0, 0, x0 + bw, 0);
    for (int i = 0; i <= 8; i++) {
        double t = i / 8.0, f = HEAT_DARK + (1.0 - HEAT_DARK) * t;
        cairo_pattern_add_color_stop_rgb(p, t, cats[CAT_CHAIN].rgb[0] * f,
                                         cats[CAT_CHAIN].rgb[1] * f, cats[CAT_CHAIN].rgb[2] * f);
    }
    cairo_set_source(cr, p);
    cairo_rectangle(cr, x0, by, bw, 12);
    cairo_fill(cr);
    cairo_pattern_destroy(p);
    snprintf(buf, sizeof(buf), "counter 0 .. %u (brightness, log scale)", w->all.max);
    text_at(cr, x0 + bw + 8, by + 10, buf);
    snprintf(buf, sizeof(buf), "%" PRIu64 " blocks with a counter, %" PRIu64 " writes counted",
             w->metadata_blocks, w->total_writes);
    text_at(cr, x0, by + 30, buf);
}

enum lanyfs_err wear_write_png(const char *path, const struct wear_report *w, const char *title,
                               struct lanyfs_error *err)
{
    struct wear_png_layout l;
    wear_png_layout(w, &l);
    char *shown = title != NULL ? wear_escape(title) : NULL;
    if (title != NULL && shown == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory for the PNG");
    enum lanyfs_err rc = LANYFS_OK;
    pthread_once(&cairo_once, cairo_load);
    if (!cairo_ok) {
        free(shown);
        return lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "cannot draw the PNG: %s",
                           cairo_lib.why);
    }
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)l.width,
                                                    (int)l.height);
    cairo_t *cr = cairo_create(s);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
    cairo_set_source_rgb(cr, 0.97, 0.97, 0.96);
    cairo_paint(cr);
    draw_map(cr, w, &l);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
    draw_legend(cr, w, &l, shown);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS) {
        cairo_surface_flush(s);
        st = cairo_surface_write_to_png(s, path);
        if (st != CAIRO_STATUS_SUCCESS)
            rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "%s: cannot write the PNG: %s",
                             path, cairo_status_to_string(st));
    } else {
        rc = lanyfs_fail(err, st == CAIRO_STATUS_NO_MEMORY ? LANYFS_E_NOMEM : LANYFS_E_IO,
                         LANYFS_NO_BLOCK, "cannot draw the PNG: %s", cairo_status_to_string(st));
    }
    cairo_surface_destroy(s);
    free(shown);
    return rc;
}

void wear_png_release(void)
{
    if (cairo_ok)
        cairo_debug_reset_static_data();
}
