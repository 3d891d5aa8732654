/*
 * wear_format.c -- the wear report as text, CSV and JSON (wear.h).
 *
 * Text is for a terminal: aligned tables, bars of block characters (a
 * full block and its eighths, U+2588..U+258F) for the histogram and the
 * spread.  CSV is one table per call (RFC 4180: a field holding a comma, a
 * quote or a line break is quoted, quotes doubled), for spreadsheets.
 * JSON is one object, the shape docs/wear.md gives.  Paths from the disk
 * are escaped (wear_escape) in all three, and JSON strings are escaped
 * again for JSON.  Numbers are the report's, so the three agree: text
 * and JSON show means and medians with two and six decimals.  The text
 * lists the first TEXT_FLAGGED_MAX flagged counters and counts the rest.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wear.h"

/* ---- shared ---------------------------------------------------------------------- */

static int finish(FILE *out)
{
    if (fflush(out) != 0 || ferror(out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

/* The flagged counters of block b, starting the search at *at (flags are sorted by block). */
static size_t flags_of(const struct wear_report *w, uint64_t b, size_t *at)
{
    while (*at < w->nflagged && w->flagged[*at].block < b)
        (*at)++;
    size_t n = 0;
    while (*at + n < w->nflagged && w->flagged[*at + n].block == b)
        n++;
    return n;
}

/* ---- text ------------------------------------------------------------------------ */

/* A kind's name for one block, in the lists of blocks. */
static const char *kind_one(enum wear_kind k)
{
    static const char *const names[WEAR_KINDS] = {
        "superblock", "directory", "file", "extender", "chain block", "freed",
    };
    return (unsigned)k < WEAR_KINDS ? names[k] : "invalid";
}

#define HIST_BAR 32
#define TEXT_FLAGGED_MAX 20 /* flagged counters listed in the text; CSV and JSON list all */
#define SPREAD_BAR 20

/* A bar of v / max * width cells in eighths, padded with spaces to width. */
static void put_bar(FILE *out, uint64_t v, uint64_t max, unsigned width)
{
    static const char *const eighth[8] = {
        "", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589",
    };
    uint64_t e = max ? (uint64_t)((double)v / (double)max * width * 8 + 0.5) : 0;
    if (v > 0 && e == 0)
        e = 1;
    unsigned cells = 0;
    for (; e >= 8 && cells < width; e -= 8, cells++)
        fputs("\u2588", out);
    if (cells < width && e > 0) {
        fputs(eighth[e], out);
        cells++;
    }
    for (; cells < width; cells++)
        fputc(' ', out);
}

static void text_stats_row(FILE *out, const char *name, const struct wear_stats *s)
{
    if (s->blocks == 0) {
        fprintf(out, "  %-12s %8" PRIu64 " %10s %5s %5s %8s %7s %5s %5s\n", name, s->blocks, "-",
                "-", "-", "-", "-", "-", "-");
        return;
    }
    fprintf(out, "  %-12s %8" PRIu64 " %10" PRIu64 " %5u %5u %8.2f %7.1f %5u %5u\n", name,
            s->blocks, s->total, s->min, s->max, s->mean, s->median, s->p90, s->p99);
}

static void text_hist(FILE *out, const struct wear_report *w)
{
    int lo = -1, hi = -1;
    uint64_t max = 0;
    for (unsigned i = 0; i < WEAR_HIST_BUCKETS; i++) {
        if (w->hist[i] == 0)
            continue;
        if (lo < 0)
            lo = (int)i;
        hi = (int)i;
        if (w->hist[i] > max)
            max = w->hist[i];
    }
    if (lo < 0)
        return;
    fputs("\nCounters (metadata blocks per range of counter values)\n", out);
    for (int i = lo; i <= hi; i++) {
        char label[24];
        uint32_t a = wear_hist_low((unsigned)i);
        uint32_t b = i == 0 ? 0 : 2 * a - 1;
        if (a == b)
            snprintf(label, sizeof(label), "%" PRIu32, a);
        else
            snprintf(label, sizeof(label), "%" PRIu32 "-%" PRIu32, a, b);
        fprintf(out, "  %11s  ", label);
        put_bar(out, w->hist[i], max, HIST_BAR);
        fprintf(out, " %" PRIu64 "\n", w->hist[i]);
    }
}

static int text_hot(FILE *out, const struct wear_report *w)
{
    if (w->nhot == 0)
        return 0;
    fprintf(out, "\nHottest blocks\n  %12s  %-13s %-16s %7s  %s\n", "Block", "Kind", "Class",
            "Counter", "Owner");
    for (size_t i = 0; i < w->nhot; i++) {
        const struct wear_hot *h = &w->hot[i];
        char *owner = wear_owner_text(w, h->cls, h->owner);
        if (owner == NULL)
            return -1;
        fprintf(out, "  %12" PRIu64 "  %-13s %-16s %7u  %s\n", h->block, kind_one(h->kind),
                scan_class_name(h->cls), h->wrcnt, owner);
        free(owner);
    }
    return 0;
}

static int text_flagged(FILE *out, const struct wear_report *w)
{
    fprintf(out, "\nFlagged counters: %zu", w->nflagged);
    if (w->nflagged == 0) {
        fputs(" (none looks wrapped or restarted)\n", out);
        return 0;
    }
    const char *sep = " (";
    for (unsigned r = 0; r < WEAR_REASONS; r++) {
        if (w->by_reason[r] == 0)
            continue;
        fprintf(out, "%s%" PRIu64 " %s", sep, w->by_reason[r], wear_reason_key(r));
        sep = ", ";
    }
    fprintf(out, ")\n  %12s  %-13s %7s  %s\n", "Block", "Kind", "Counter", "Reason");
    size_t shown = w->nflagged < TEXT_FLAGGED_MAX ? w->nflagged : TEXT_FLAGGED_MAX;
    for (size_t i = 0; i < shown; i++) {
        const struct wear_flagged *f = &w->flagged[i];
        char *owner = wear_owner_text(w, f->cls, f->owner);
        if (owner == NULL)
            return -1;
        fprintf(out, "  %12" PRIu64 "  %-13s %7u  %s", f->block, kind_one(f->kind),
                f->wrcnt, wear_reason_text(f->reason));
        switch (f->reason) {
        case WEAR_WRAPPED_SUPER:
        case WEAR_WRAPPED_CHAIN:
            fprintf(out, " (at least %" PRIu64 " writes, %" PRIu64 " wrap%s)", f->bound, f->wraps,
                    f->wraps == 1 ? "" : "s");
            break;
        case WEAR_RESTARTED_REUSED:
            fprintf(out, " (at least %" PRIu64 " earlier writes)", f->bound);
            break;
        case WEAR_RESTARTED_CHAIN:
        case WEAR_NEVER_WRITTEN:
        case WEAR_REASONS:
            break;
        }
        fprintf(out, "; %s\n", owner);
        free(owner);
    }
    if (shown < w->nflagged)
        fprintf(out, "  ... and %zu more (--format csv or json lists them all)\n",
                w->nflagged - shown);
    return 0;
}

static void text_spread(FILE *out, const struct wear_report *w)
{
    if (w->nregions == 0)
        return;
    fprintf(out, "\nSpread over the device (blocks in use per tenth)\n  %-17s %-*s %7s %7s %6s %8s "
                 "%6s\n",
            "Blocks", SPREAD_BAR, "In use", "Used", "Free", "Other", "Writes", "Max");
    for (unsigned i = 0; i < w->nregions; i++) {
        const struct wear_region *g = &w->region[i];
        char range[48];
        snprintf(range, sizeof(range), "%" PRIu64 "-%" PRIu64, g->first, g->first + g->count - 1);
        fprintf(out, "  %-17s ", range);
        put_bar(out, g->used, g->count, SPREAD_BAR);
        fprintf(out, " %7" PRIu64 " %7" PRIu64 " %6" PRIu64 " %8" PRIu64 " %6u\n", g->used, g->free,
                g->other, g->writes, g->max);
    }
    if (w->used == 0) {
        fputs("  nothing in use\n", out);
        return;
    }
    fprintf(out, "  %" PRIu64 " blocks in use, from block %" PRIu64 " to %" PRIu64 "\n", w->used,
            w->used_lowest, w->used_highest);
    fprintf(out, "  spread %.3f (coefficient of variation: 0 = even, %.3f = all in one tenth)\n",
            w->spread_cv, w->nregions > 1 ? sqrt((double)(w->nregions - 1)) : 0.0);
}

int wear_write_text(FILE *out, const struct wear_report *w, const char *image)
{
    errno = 0;
    if (image != NULL) {
        char *img = wear_escape(image);
        if (img == NULL)
            return -1;
        fprintf(out, "%-15s %s\n", "Image", img);
        free(img);
    }
    if (w->blocksize != 0)
        fprintf(out, "%-15s %" PRIu64 " of %" PRIu32 " bytes\n", "Blocks", w->blocks,
                w->blocksize);
    else
        fprintf(out, "%-15s %" PRIu64 " (geometry unknown)\n", "Blocks", w->blocks);
    fprintf(out, "%-15s %" PRIu64 " %s with a counter, %" PRIu64 " data %s without\n", "Metadata",
            w->metadata_blocks, w->metadata_blocks == 1 ? "block" : "blocks", w->data_blocks,
            w->data_blocks == 1 ? "block" : "blocks");
    fprintf(out, "%-15s %" PRIu64 " counted in all counters\n", "Writes", w->total_writes);

    fprintf(out, "\n  %-12s %8s %10s %5s %5s %8s %7s %5s %5s\n", "Kind", "Blocks", "Total", "Min",
            "Max", "Mean", "Median", "p90", "p99");
    for (unsigned k = 0; k < WEAR_KINDS; k++)
        text_stats_row(out, wear_kind_name(k), &w->kind[k]);
    text_stats_row(out, "all", &w->all);
    text_hist(out, w);
    if (text_hot(out, w) != 0 || text_flagged(out, w) != 0)
        return -1;
    text_spread(out, w);
    return finish(out);
}

/* ---- CSV ---------------------------------------------------------------------------- */

static void csv_field(FILE *out, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static int csv_blocks(FILE *out, const struct wear_report *w)
{
    fputs("block,kind,class,wrcnt,owner,path,flags\n", out);
    const struct scan_block *map = scan_blocks(w->scan);
    size_t at = 0;
    for (uint64_t b = 0; b < w->blocks; b++) {
        const struct scan_block *c = &map[b];
        enum wear_kind k;
        if (!(c->flags & SCAN_BF_METADATA) || !wear_kind_of((enum scan_class)c->cls, &k))
            continue;
        char *owner = wear_owner_text(w, (enum scan_class)c->cls, c->owner);
        if (owner == NULL)
            return -1;
        fprintf(out, "%" PRIu64 ",%s,%s,%u,", b, wear_kind_key(k),
                scan_class_name((enum scan_class)c->cls), c->wrcnt);
        if (c->owner != 0)
            fprintf(out, "%" PRIu32, c->owner);
        fputc(',', out);
        csv_field(out, owner);
        free(owner);
        fputc(',', out);
        size_t n = flags_of(w, b, &at);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%s", i ? ";" : "", wear_reason_key(w->flagged[at + i].reason));
        fputc('\n', out);
    }
    return 0;
}

static void csv_stats_row(FILE *out, const char *key, const struct wear_stats *s)
{
    fprintf(out, "%s,%" PRIu64 ",%" PRIu64 ",%u,%u,%.6f,%.6f,%u,%u\n", key, s->blocks, s->total,
            s->min, s->max, s->mean, s->median, s->p90, s->p99);
}

int wear_write_csv(FILE *out, const struct wear_report *w, enum wear_csv_table table)
{
    errno = 0;
    switch (table) {
    case WEAR_CSV_BLOCKS:
        if (csv_blocks(out, w) != 0)
            return -1;
        break;
    case WEAR_CSV_KINDS:
        fputs("kind,blocks,total,min,max,mean,median,p90,p99\n", out);
        for (unsigned k = 0; k < WEAR_KINDS; k++)
            csv_stats_row(out, wear_kind_key(k), &w->kind[k]);
        csv_stats_row(out, "all", &w->all);
        break;
    case WEAR_CSV_REGIONS:
        fputs("region,first,count,used,free,other,metadata,writes,max\n", out);
        for (unsigned i = 0; i < w->nregions; i++) {
            const struct wear_region *g = &w->region[i];
            fprintf(out, "%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                         ",%" PRIu64 ",%u\n",
                    i, g->first, g->count, g->used, g->free, g->other, g->metadata, g->writes,
                    g->max);
        }
        break;
    default:
        errno = EINVAL;
        return -1;
    }
    return finish(out);
}

/* ---- JSON ---------------------------------------------------------------------------- */

/* A JSON string of text that is already valid UTF-8 without control characters. */
static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static void json_stats(FILE *out, const struct wear_stats *s)
{
    fprintf(out,
            "{\"blocks\": %" PRIu64 ", \"total\": %" PRIu64 ", \"min\": %u, \"max\": %u, "
            "\"mean\": %.6f, \"median\": %.6f, \"p90\": %u, \"p99\": %u}",
            s->blocks, s->total, s->min, s->max, s->mean, s->median, s->p90, s->p99);
}

/* "owner": id or null, "path": the owner text. */
static int json_owner(FILE *out, const struct wear_report *w, enum scan_class cls, uint32_t owner)
{
    char *text = wear_owner_text(w, cls, owner);
    if (text == NULL)
        return -1;
    if (owner != 0)
        fprintf(out, "\"owner\": %" PRIu32 ", \"owner_text\": ", owner);
    else
        fputs("\"owner\": null, \"owner_text\": ", out);
    json_str(out, text);
    free(text);
    return 0;
}

int wear_write_json(FILE *out, const struct wear_report *w, const char *image)
{
    errno = 0;
    fputs("{\n  \"format\": \"lanyfs-tools/1\",\n  \"command\": \"wear\",\n  \"image\": ", out);
    if (image != NULL) {
        char *img = wear_escape(image);
        if (img == NULL)
            return -1;
        json_str(out, img);
        free(img);
    } else {
        fputs("null", out);
    }
    fprintf(out, ",\n  \"blocks\": %" PRIu64 ",\n  \"blocksize\": ", w->blocks);
    if (w->blocksize != 0)
        fprintf(out, "%" PRIu32, w->blocksize);
    else
        fputs("null", out);
    fprintf(out,
            ",\n  \"metadata_blocks\": %" PRIu64 ",\n  \"data_blocks\": %" PRIu64
            ",\n  \"total_writes\": %" PRIu64 ",\n  \"blocks_by_class\": {",
            w->metadata_blocks, w->data_blocks, w->total_writes);
    for (int c = 0; c < SCAN_BLK_CLASSES; c++)
        fprintf(out, "%s\"%s\": %" PRIu64, c ? ", " : "", scan_class_name((enum scan_class)c),
                w->by_class[c]);
    fputs("},\n  \"kinds\": {", out);
    for (unsigned k = 0; k < WEAR_KINDS; k++) {
        fprintf(out, "%s\n    \"%s\": ", k ? "," : "", wear_kind_key(k));
        json_stats(out, &w->kind[k]);
    }
    fputs("\n  },\n  \"all\": ", out);
    json_stats(out, &w->all);
    fputs(",\n  \"histogram\": [", out);
    for (unsigned i = 0; i < WEAR_HIST_BUCKETS; i++) {
        uint32_t a = wear_hist_low(i), b = i == 0 ? 0 : 2 * a - 1;
        fprintf(out, "%s\n    {\"low\": %" PRIu32 ", \"high\": %" PRIu32 ", \"count\": %" PRIu64 "}",
                i ? "," : "", a, b, w->hist[i]);
    }
    fputs("\n  ],\n  \"hottest\": [", out);
    for (size_t i = 0; i < w->nhot; i++) {
        const struct wear_hot *h = &w->hot[i];
        fprintf(out,
                "%s\n    {\"block\": %" PRIu64 ", \"kind\": \"%s\", \"class\": \"%s\", "
                "\"wrcnt\": %u, ",
                i ? "," : "", h->block, wear_kind_key(h->kind), scan_class_name(h->cls), h->wrcnt);
        if (json_owner(out, w, h->cls, h->owner) != 0)
            return -1;
        fputc('}', out);
    }
    fputs(w->nhot ? "\n  ],\n  \"flagged\": [" : "],\n  \"flagged\": [", out);
    for (size_t i = 0; i < w->nflagged; i++) {
        const struct wear_flagged *f = &w->flagged[i];
        fprintf(out,
                "%s\n    {\"block\": %" PRIu64 ", \"kind\": \"%s\", \"class\": \"%s\", "
                "\"wrcnt\": %u, \"reason\": \"%s\", \"text\": ",
                i ? "," : "", f->block, wear_kind_key(f->kind), scan_class_name(f->cls), f->wrcnt,
                wear_reason_key(f->reason));
        json_str(out, wear_reason_text(f->reason));
        fprintf(out, ", \"bound\": %" PRIu64 ", \"wraps\": %" PRIu64 ", ", f->bound, f->wraps);
        if (json_owner(out, w, f->cls, f->owner) != 0)
            return -1;
        fputc('}', out);
    }
    fputs(w->nflagged ? "\n  ],\n  \"flagged_by_reason\": {" : "],\n  \"flagged_by_reason\": {",
          out);
    for (unsigned r = 0; r < WEAR_REASONS; r++)
        fprintf(out, "%s\"%s\": %" PRIu64, r ? ", " : "", wear_reason_key(r), w->by_reason[r]);
    fprintf(out, "},\n  \"chain_stride\": %" PRIu64 ",\n  \"regions\": [", w->chain_stride);
    for (unsigned i = 0; i < w->nregions; i++) {
        const struct wear_region *g = &w->region[i];
        fprintf(out,
                "%s\n    {\"first\": %" PRIu64 ", \"count\": %" PRIu64 ", \"used\": %" PRIu64
                ", \"free\": %" PRIu64 ", \"other\": %" PRIu64 ", \"metadata\": %" PRIu64
                ", \"writes\": %" PRIu64 ", \"max\": %u}",
                i ? "," : "", g->first, g->count, g->used, g->free, g->other, g->metadata,
                g->writes, g->max);
    }
    fprintf(out,
            "%s],\n  \"spread\": {\"used\": %" PRIu64 ", \"used_lowest\": %" PRIu64
            ", \"used_highest\": %" PRIu64 ", \"cv\": %.6f}\n}\n",
            w->nregions ? "\n  " : "", w->used, w->used_lowest, w->used_highest, w->spread_cv);
    return finish(out);
}
