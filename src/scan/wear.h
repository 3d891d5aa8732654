/*
 * wear.h -- how worn a stick is: its write counters, read from a scan.
 *
 * Every metadata block carries a 16-bit write counter (SPEC-§2, §10): the
 * superblock counts its rewrites, directory and file blocks their
 * writebacks, chain blocks their pops, pushes and set-nexts, extenders the
 * truncates that visited them.  Data blocks carry none.  A wear report
 * sums those counters up from a finished scan (scan.h), without reading
 * the image again:
 *
 *  - per kind of block (superblock, directories, files, extenders, chain
 *    blocks, and "freed": metadata nothing live holds any more -- deleted
 *    and orphaned entries, orphan extenders, leaked chain-like blocks):
 *    how many, the sum of their counters, min, max, mean, median, p90, p99;
 *  - a histogram of every counter in powers of two;
 *  - the hottest blocks with the entry that owns them;
 *  - counters that look wrapped (mod 65536) or restarted at creation
 *    (SPEC-§9.6), each with the reason and the bound behind it;
 *  - how the blocks in use spread over the device, by tenths.
 *
 * The report borrows the scan result: the result must outlive it.  The
 * writers print it as text (a terminal table), CSV or JSON to a FILE *,
 * or render the block map as a PNG heat image (cairo).  Every string from
 * the disk (paths) is escaped before it is printed: valid UTF-8 without
 * control or bidi characters, other bytes as \xNN.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lanyfs.h"
#include "scan.h"

/* The kinds of metadata block the report tells apart. */
enum wear_kind {
    WEAR_KIND_SUPER = 0,    /* block 0 */
    WEAR_KIND_DIR = 1,      /* live directories */
    WEAR_KIND_FILE = 2,     /* live files */
    WEAR_KIND_EXTENDER = 3, /* extenders of live files */
    WEAR_KIND_CHAIN = 4,    /* chain blocks of the free list */
    WEAR_KIND_FREED = 5,    /* deleted, orphaned, orphan extenders, leaked chain-like */
    WEAR_KINDS
};

/* The distribution of one kind's counters. */
struct wear_stats {
    uint64_t blocks;  /* metadata blocks of the kind */
    uint64_t total;   /* the sum of their counters */
    uint16_t min;     /* smallest counter (0 when blocks is 0) */
    uint16_t max;     /* largest counter */
    double mean;      /* total / blocks */
    double median;    /* the middle counter, or the mean of the two middle ones */
    uint16_t p90;     /* 90th percentile, nearest rank */
    uint16_t p99;     /* 99th percentile, nearest rank */
};

/* Histogram buckets: 0, 1, 2-3, 4-7, ..., 32768-65535. */
#define WEAR_HIST_BUCKETS 17

/* One of the hottest blocks. */
struct wear_hot {
    uint64_t block;       /* the block */
    enum wear_kind kind;  /* its kind */
    enum scan_class cls;  /* the scan's class */
    uint16_t wrcnt;       /* its counter */
    uint32_t owner;       /* the owning entry's id, 0 = none */
};

/* Why a counter is flagged. */
enum wear_reason {
    /* The superblock's counter is below the allocations it must have counted
     * (each one rewrites it, SPEC-§8): it wrapped past 65535. */
    WEAR_WRAPPED_SUPER = 0,
    /* A chain block's counter is below the slot changes its contents need
     * (SPEC-§10, TORN_CHAIN_COUNTER): it wrapped, or the block is torn. */
    WEAR_WRAPPED_CHAIN = 1,
    /* A chain block away from the formatter's places: made from a freed
     * block, its counter began again at 0 (SPEC-§8 Free, §9.6). */
    WEAR_RESTARTED_CHAIN = 2,
    /* Metadata in a block that the formatter made a chain block: that chain
     * block was handed out after its pops, and the counter began again at
     * creation (SPEC-§9.6); its earlier writes are not counted. */
    WEAR_RESTARTED_REUSED = 3,
    /* A live entry with counter 0: created, its first writeback never
     * landed (SPEC-§10). */
    WEAR_NEVER_WRITTEN = 4,
    WEAR_REASONS
};

struct wear_flagged {
    uint64_t block;          /* the block */
    enum wear_kind kind;     /* its kind */
    enum scan_class cls;     /* the scan's class */
    uint16_t wrcnt;          /* its counter */
    uint32_t owner;          /* the owning entry's id, 0 = none */
    enum wear_reason reason; /* why */
    uint64_t bound;          /* wrapped: the fewest writes the block must have had;
                              * restarted-reused: the fewest writes of its earlier life;
                              * otherwise 0 */
    uint64_t wraps;          /* wrapped: the fewest wraps that explain it; otherwise 0 */
};

/* Regions of the device the spread is measured over. */
#define WEAR_REGIONS 10

/* One tenth of the device (fewer regions when it has fewer than 10 blocks). */
struct wear_region {
    uint64_t first;     /* first block */
    uint64_t count;     /* blocks */
    uint64_t used;      /* in use: superblock, live entries, extenders, data */
    uint64_t free;      /* in the free list: chain blocks, listed blocks, deleted entries */
    uint64_t other;     /* leaked, orphaned, unknown, unreadable, beyond */
    uint64_t metadata;  /* blocks with a counter */
    uint64_t writes;    /* the sum of their counters */
    uint16_t max;       /* the largest counter */
};

/* What to build. */
struct wear_opts {
    size_t top; /* hottest blocks to keep; 0 means WEAR_TOP_DEFAULT */
};

#define WEAR_TOP_DEFAULT 10
#define WEAR_TOP_MAX 100000

struct wear_report {
    const struct scan_result *scan;    /* borrowed */
    uint64_t blocks;                   /* cells of the block map */
    uint32_t blocksize;                /* bytes a block (0 when the geometry is unknown) */
    uint64_t by_class[SCAN_BLK_CLASSES]; /* blocks per scan class */

    /* Totals */
    uint64_t metadata_blocks;          /* blocks with a counter */
    uint64_t data_blocks;              /* data blocks of live files (no counter) */
    uint64_t total_writes;             /* the sum of every counter */

    /* Distribution */
    struct wear_stats kind[WEAR_KINDS];/* per kind */
    struct wear_stats all;             /* every metadata block */
    uint64_t hist[WEAR_HIST_BUCKETS];  /* every counter, in powers of two */

    /* The hottest blocks, hottest first (equal counters: lower block first) */
    struct wear_hot *hot;              /* owned */
    size_t nhot;

    /* Flagged counters, by block, then reason */
    struct wear_flagged *flagged;      /* owned */
    size_t nflagged;
    uint64_t by_reason[WEAR_REASONS];  /* flagged counters per reason */
    uint64_t chain_stride;             /* the formatter's chain spacing assumed, 0 = none */

    /* Spread over the device */
    struct wear_region region[WEAR_REGIONS];
    unsigned nregions;                 /* regions used (<= WEAR_REGIONS) */
    uint64_t used;                     /* blocks in use */
    uint64_t used_lowest;              /* lowest block in use past the superblock, 0 = none */
    uint64_t used_highest;             /* highest block in use, 0 = none */
    double spread_cv;                  /* coefficient of variation of the regions' used
                                        * shares: 0 = even, sqrt(n - 1) = all in one */
};

/*
 * Build the report of a scan.  opts may be NULL.  LANYFS_E_NOMEM when
 * memory runs out (nothing is returned then).  The result r is borrowed and
 * must outlive the report.
 */
enum lanyfs_err wear_report_build(const struct scan_result *r, const struct wear_opts *opts,
                                  struct wear_report **out, struct lanyfs_error *err);
void wear_report_free(struct wear_report *w);

/* The kind of a scan class when its cell carries a counter; false for no kind. */
bool wear_kind_of(enum scan_class cls, enum wear_kind *out);
/* "superblock", "directories", ... for tables; wear_kind_key: "super", "dir", ... for CSV/JSON. */
const char *wear_kind_name(enum wear_kind k);
const char *wear_kind_key(enum wear_kind k);
/* "wrapped-super", "restarted-chain", ... stable keys; wear_reason_text: a phrase. */
const char *wear_reason_key(enum wear_reason r);
const char *wear_reason_text(enum wear_reason r);
/* The lower bound of histogram bucket i (0, 1, 2, 4, ...). */
uint32_t wear_hist_low(unsigned i);
/* s (NUL-terminated bytes from the disk) escaped for printing, newly allocated; free() it. */
char *wear_escape(const char *s);
/* What owns a block, escaped for printing ("/a/b", "the free list", ...); free() it. */
char *wear_owner_text(const struct wear_report *w, enum scan_class cls, uint32_t owner);

/* ---- wear_format.c: text, CSV, JSON ------------------------------------- */

/* The report as a terminal table; image (may be NULL) names the image. */
int wear_write_text(FILE *out, const struct wear_report *w, const char *image);

/* Which table a CSV holds. */
enum wear_csv_table {
    WEAR_CSV_BLOCKS = 0,  /* one row per metadata block: block,kind,class,wrcnt,owner,path,flags */
    WEAR_CSV_KINDS = 1,   /* one row per kind, then "all": the distribution */
    WEAR_CSV_REGIONS = 2, /* one row per region */
};
int wear_write_csv(FILE *out, const struct wear_report *w, enum wear_csv_table table);

/* One JSON object (docs/wear.md); image (may be NULL) names the image. */
int wear_write_json(FILE *out, const struct wear_report *w, const char *image);
/* The writers return 0, or -1 when a write failed (errno set). */

/* ---- wear_png.c: the heat image ---------------------------------------------- */

/* Where things lie in the image; all in pixels. */
struct wear_png_layout {
    uint64_t blocks_per_cell; /* blocks a cell stands for (a power of two) */
    uint64_t cells;           /* cells drawn */
    unsigned cols;            /* cells a row */
    unsigned rows;            /* rows of cells */
    unsigned cell;            /* a cell's side */
    unsigned map_x;           /* the map's top left corner */
    unsigned map_y;
    unsigned legend_y;        /* the legend's top; it spans the whole width */
    unsigned legend_h;        /* the legend's height */
    unsigned width;           /* the whole image */
    unsigned height;
};

/* Largest cells drawn: beyond it blocks are aggregated, a power of two per cell. */
#define WEAR_PNG_MAX_CELLS 65536

void wear_png_layout(const struct wear_report *w, struct wear_png_layout *out);
/*
 * Render the block map as a PNG at path: one cell per block (or per
 * blocks_per_cell blocks, as the legend says), coloured by kind with the
 * counter as brightness, and a legend below.  title (may be NULL) is
 * printed in the legend, escaped.  LANYFS_E_IO (with cairo's message) when
 * the file cannot be written, LANYFS_E_NOMEM when memory runs out.
 */
enum lanyfs_err wear_write_png(const char *path, const struct wear_report *w, const char *title,
                               struct lanyfs_error *err);
/* Free cairo's caches after the last image (for leak checkers); harmless when none was drawn. */
void wear_png_release(void);
