/*
 * fuzz_wear.c -- fuzz target: an image's bytes scanned and reported on for wear.
 *
 * The input is written to an in-memory file (memfd) and scanned; the wear
 * report is built from the scan (with a number of hottest blocks taken
 * from the input's first byte) and written as text, as each CSV table and
 * as JSON into memory, and as the PNG heat image to a file of a
 * per-process temporary folder (fuzz_tmp_root).  The title and image name
 * are the input's last bytes, so they are hostile too.  Besides the
 * sanitizers, it checks what wear.h promises:
 *  - the report adds up: the kinds' blocks to every metadata block, the
 *    histogram to the same, the regions to the map; at most top hottest
 *    blocks, hottest first; flagged counters sorted by block;
 *  - text, CSV and JSON are printable (valid UTF-8, no control or bidi
 *    character: disk strings are escaped);
 *  - every CSV table is RFC 4180 with the same fields in every row, and
 *    as many rows as the report has blocks with a counter, kinds and
 *    regions;
 *  - the JSON parses (json-glib) and carries the report's figures;
 *  - the PNG is written, reads back, and has the layout's size, within
 *    584 x 692 pixels.
 */
#include <cairo.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "scan.h"
#include "wear.h"

#define FUZZ_IMAGE_MAX ((size_t)256 << 10)
#define TITLE_MAX 300

static char png_path[512];

static void check_report(const struct wear_report *w, size_t top)
{
    uint64_t kb = 0, kt = 0, hb = 0, cls = 0, rb = 0, rm = 0;
    for (unsigned k = 0; k < WEAR_KINDS; k++) {
        const struct wear_stats *s = &w->kind[k];
        kb += s->blocks;
        kt += s->total;
        if (s->blocks > 0)
            FUZZ_CHECK(s->min <= s->p90 && s->p90 <= s->p99 && s->p99 <= s->max &&
                           s->median >= s->min && s->median <= s->max && s->mean >= s->min &&
                           s->mean <= s->max,
                       "kind %s: min %u p90 %u p99 %u max %u median %f mean %f", wear_kind_key(k),
                       s->min, s->p90, s->p99, s->max, s->median, s->mean);
    }
    FUZZ_CHECK(kb == w->all.blocks && kt == w->all.total && w->all.blocks == w->metadata_blocks,
               "kinds add up to %ju blocks, %ju writes; all %ju, %ju", (uintmax_t)kb,
               (uintmax_t)kt, (uintmax_t)w->all.blocks, (uintmax_t)w->all.total);
    for (unsigned i = 0; i < WEAR_HIST_BUCKETS; i++)
        hb += w->hist[i];
    FUZZ_CHECK(hb == w->metadata_blocks, "histogram holds %ju of %ju", (uintmax_t)hb,
               (uintmax_t)w->metadata_blocks);
    for (int c = 0; c < SCAN_BLK_CLASSES; c++)
        cls += w->by_class[c];
    FUZZ_CHECK(cls == w->blocks, "classes add up to %ju of %ju", (uintmax_t)cls,
               (uintmax_t)w->blocks);
    FUZZ_CHECK(w->nregions <= WEAR_REGIONS, "%u regions", w->nregions);
    uint64_t next = 0;
    for (unsigned i = 0; i < w->nregions; i++) {
        const struct wear_region *g = &w->region[i];
        FUZZ_CHECK(g->first == next && g->used + g->free + g->other == g->count &&
                       g->metadata <= g->count,
                   "region %u: first %ju count %ju used %ju free %ju other %ju", i,
                   (uintmax_t)g->first, (uintmax_t)g->count, (uintmax_t)g->used,
                   (uintmax_t)g->free, (uintmax_t)g->other);
        next += g->count;
        rb += g->used;
        rm += g->metadata;
    }
    FUZZ_CHECK(next == w->blocks && rb == w->used && rm == w->metadata_blocks,
               "regions cover %ju blocks of %ju", (uintmax_t)next, (uintmax_t)w->blocks);
    FUZZ_CHECK(w->nhot <= top && w->nhot <= w->metadata_blocks, "%zu hottest blocks, top %zu",
               w->nhot, top);
    for (size_t i = 0; i < w->nhot; i++) {
        FUZZ_CHECK(w->hot[i].block < w->blocks, "hot block %ju past the map",
                   (uintmax_t)w->hot[i].block);
        if (i > 0)
            FUZZ_CHECK(w->hot[i - 1].wrcnt > w->hot[i].wrcnt ||
                           (w->hot[i - 1].wrcnt == w->hot[i].wrcnt &&
                            w->hot[i - 1].block < w->hot[i].block),
                       "hottest blocks out of order at %zu", i);
    }
    uint64_t reasons = 0;
    for (unsigned r = 0; r < WEAR_REASONS; r++)
        reasons += w->by_reason[r];
    FUZZ_CHECK(reasons == w->nflagged, "reasons add up to %ju of %zu", (uintmax_t)reasons,
               w->nflagged);
    for (size_t i = 0; i < w->nflagged; i++) {
        FUZZ_CHECK(w->flagged[i].block < w->blocks && w->flagged[i].reason < WEAR_REASONS,
                   "flag %zu: block %ju reason %d", i, (uintmax_t)w->flagged[i].block,
                   (int)w->flagged[i].reason);
        if (i > 0)
            FUZZ_CHECK(w->flagged[i - 1].block <= w->flagged[i].block,
                       "flagged counters out of order at %zu", i);
    }
}

/* What a writer printed, NUL-terminated (free()). */
struct mem {
    char *p;
    size_t n;
    FILE *f;
};

static void mem_open(struct mem *m)
{
    m->p = NULL;
    m->n = 0;
    m->f = open_memstream(&m->p, &m->n);
    if (m->f == NULL)
        abort();
}

static void mem_close(struct mem *m)
{
    if (fclose(m->f) != 0)
        abort();
}

static void check_csv(const struct wear_report *w)
{
    static const struct {
        enum wear_csv_table t;
        const char *name;
        size_t cols;
    } tables[] = {
        {WEAR_CSV_BLOCKS, "blocks.csv", 7},
        {WEAR_CSV_KINDS, "kinds.csv", 9},
        {WEAR_CSV_REGIONS, "regions.csv", 9},
    };
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        struct mem m;
        mem_open(&m);
        FUZZ_CHECK(wear_write_csv(m.f, w, tables[i].t) == 0, "%s failed", tables[i].name);
        mem_close(&m);
        fuzz_check_printable(tables[i].name, m.p, m.n);
        struct fuzz_csv c;
        fuzz_csv_read(tables[i].name, m.p, m.n, &c);
        FUZZ_CHECK(c.ncols == tables[i].cols, "%s has %zu fields", tables[i].name, c.ncols);
        uint64_t want = tables[i].t == WEAR_CSV_BLOCKS ? w->metadata_blocks
                        : tables[i].t == WEAR_CSV_KINDS ? WEAR_KINDS + 1
                                                        : w->nregions;
        FUZZ_CHECK(c.nrows == want + 1, "%s has %zu rows, want %ju and a header",
                   tables[i].name, c.nrows, (uintmax_t)want);
        fuzz_csv_free(&c);
        free(m.p);
    }
}

static void check_json(const struct wear_report *w, const char *image)
{
    struct mem m;
    mem_open(&m);
    FUZZ_CHECK(wear_write_json(m.f, w, image) == 0, "wear_write_json failed");
    mem_close(&m);
    fuzz_check_printable("json", m.p, m.n);
    JsonParser *p = json_parser_new();
    GError *e = NULL;
    FUZZ_CHECK(json_parser_load_from_data(p, m.p, (gssize)m.n, &e), "json: %s",
               e != NULL ? e->message : "?");
    JsonNode *root = json_parser_get_root(p);
    FUZZ_CHECK(root != NULL && JSON_NODE_HOLDS_OBJECT(root), "json: no object");
    JsonObject *o = json_node_get_object(root);
    FUZZ_CHECK(json_object_get_int_member_with_default(o, "blocks", -1) == (gint64)w->blocks &&
                   json_object_get_int_member_with_default(o, "total_writes", -1) ==
                       (gint64)w->total_writes,
               "json: blocks or total_writes differ from the report");
    static const char *const arrays[] = {"hottest", "flagged", "regions", "histogram"};
    size_t want[] = {w->nhot, w->nflagged, w->nregions, WEAR_HIST_BUCKETS};
    for (size_t i = 0; i < 4; i++) {
        JsonNode *a = json_object_get_member(o, arrays[i]);
        FUZZ_CHECK(a != NULL && JSON_NODE_HOLDS_ARRAY(a) &&
                       json_array_get_length(json_node_get_array(a)) == want[i],
                   "json: %s does not list %zu", arrays[i], want[i]);
    }
    g_object_unref(p);
    free(m.p);
}

static void check_png(const struct wear_report *w, const char *title)
{
    if (png_path[0] == '\0')
        snprintf(png_path, sizeof(png_path), "%s/map.png", fuzz_tmp_root("lanyfs-fuzz-wear"));
    struct wear_png_layout l;
    wear_png_layout(w, &l);
    FUZZ_CHECK(l.width <= 584 && l.height <= 692 && l.cells <= WEAR_PNG_MAX_CELLS &&
                   (uint64_t)l.cols * l.rows >= l.cells && l.map_x + l.cols * l.cell <= l.width &&
                   l.legend_y + l.legend_h <= l.height,
               "layout %ux%u: %ju cells in %u x %u of %u px", l.width, l.height,
               (uintmax_t)l.cells, l.cols, l.rows, l.cell);
    FUZZ_CHECK(l.blocks_per_cell > 0 && (l.blocks_per_cell & (l.blocks_per_cell - 1)) == 0 &&
                   l.cells * l.blocks_per_cell >= w->blocks,
               "layout: %ju cells of %ju blocks for %ju blocks", (uintmax_t)l.cells,
               (uintmax_t)l.blocks_per_cell, (uintmax_t)w->blocks);
    struct lanyfs_error err;
    FUZZ_CHECK(wear_write_png(png_path, w, title, &err) == LANYFS_OK, "png: %s", err.msg);
    cairo_surface_t *s = cairo_image_surface_create_from_png(png_path);
    FUZZ_CHECK(cairo_surface_status(s) == CAIRO_STATUS_SUCCESS, "png reads back: %s",
               cairo_status_to_string(cairo_surface_status(s)));
    FUZZ_CHECK(cairo_image_surface_get_width(s) == (int)l.width &&
                   cairo_image_surface_get_height(s) == (int)l.height,
               "png is %dx%d, the layout %ux%u", cairo_image_surface_get_width(s),
               cairo_image_surface_get_height(s), l.width, l.height);
    cairo_surface_destroy(s);
    unlink(png_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_IMAGE_MAX)
        return 0;
    struct scan_result *r = NULL;
    struct lanyfs_error err;
    if (scan_image(fuzz_memfd_image(data, size, NULL), NULL, &r, &err) != LANYFS_OK)
        return 0;
    /* The input's last bytes as the image's name, up to its first NUL. */
    char title[TITLE_MAX + 1];
    size_t tn = size < TITLE_MAX ? size : TITLE_MAX;
    memcpy(title, data + size - tn, tn);
    title[tn] = '\0';
    size_t top = size > 0 ? data[0] % 64 : 0;
    struct wear_report *w = NULL;
    FUZZ_CHECK(wear_report_build(r, &(struct wear_opts){.top = top}, &w, &err) == LANYFS_OK,
               "wear_report_build: %s", err.msg);
    check_report(w, top != 0 ? top : WEAR_TOP_DEFAULT);

    struct mem m;
    mem_open(&m);
    FUZZ_CHECK(wear_write_text(m.f, w, title) == 0, "wear_write_text failed");
    mem_close(&m);
    fuzz_check_printable("text", m.p, m.n);
    free(m.p);
    check_csv(w);
    check_json(w, title);
    check_png(w, title);
    wear_report_free(w);
    scan_result_free(r);
    return 0;
}
