/*
 * store_seeds.c -- the tables fuzz_store edits, and its seed programs.
 *
 * A seed is a program of edits (fuzz.h, enum fuzz_store_op) written here
 * with a small assembler that names tables and columns: the database as
 * written, an edit of each kind on each table a reader reads (counts,
 * classes, states, ids past 32 bits, NULLs where the schema forbids them,
 * text where numbers belong), the schema's objects dropped or replaced by
 * views, the version and application id changed, and bytes of the file
 * itself changed.  They start libFuzzer's corpus (fuzz_mkseeds --store) and
 * run in the smoke test (fuzz_main --store-seeds), where those that found
 * a reader's broken promise stay as its regression: entries-id-wide,
 * entries-id-0, entries-parent-wide, entries-state(-text), entries-type,
 * findings-entry-wide, findings-null, findings-severity-text, runs-*,
 * scans-geometry, scans-label-nul, scans-null-path, view-plain and
 * view-endless-* (which hung the readers), and the regress-* programs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* ---- the tables ------------------------------------------------------------- */

#define NCOLS(a) ((unsigned)(sizeof(a) / sizeof((a)[0])))

static const char *const scans_cols[] = {
    "id", "started", "seconds", "tool_version", "image_path", "image_size", "image_sha256",
    "block_size", "address_length", "blocks", "map_blocks", "geometry_inferred", "sb_read",
    "sb_type", "sb_wrcnt", "sb_magic", "sb_major", "sb_minor", "sb_blockbits", "sb_addrlen",
    "sb_rootdir", "sb_blocks", "sb_freehead", "sb_freetail", "sb_freeblocks", "sb_created",
    "sb_updated", "sb_checked", "sb_badblocks", "sb_label", "dirs", "files", "deleted",
    "orphans", "bytes", "free_listed", "worst_severity", "n_info", "n_warning", "n_error",
    "n_critical",
};
static const char *const findings_cols[] = {
    "scan", "seq", "code", "code_name", "severity", "entry", "block", "block2",
    "value", "value2", "count", "count2", "path", "text", "message",
};
static const char *const entries_cols[] = {
    "scan", "id", "block", "parent", "state", "type", "name", "path", "size", "created",
    "created_offset", "modified", "modified_offset", "attr", "wrcnt", "blocks_needed",
    "blocks_mapped", "blocks_intact",
};
static const char *const extent_cols[] = {"scan", "entry", "file_block", "block", "count"};
static const char *const runs_cols[] = {"scan", "first", "count", "class", "owner", "flags",
                                        "wrcnt"};
static const char *const lost_cols[] = {"scan", "top", "entry", "size", "blocks_mapped",
                                        "extenders"};
static const char *const lost_blocks_cols[] = {"scan", "top", "file_block", "block", "count"};
static const char *const catalogue_cols[] = {"code", "name", "severity", "flags", "message",
                                             "repair"};
static const char *const lookup_cols[] = {"id", "name"};
static const char *const stat1_cols[] = {"tbl", "idx", "stat"};

const struct fuzz_store_table fuzz_store_tables[] = {
    {"scans", "rowid", scans_cols, NCOLS(scans_cols)},
    {"findings", "scan, seq", findings_cols, NCOLS(findings_cols)},
    {"entries", "scan, id", entries_cols, NCOLS(entries_cols)},
    {"entry_blocks", "scan, entry, file_block", extent_cols, NCOLS(extent_cols)},
    {"block_runs", "scan, first", runs_cols, NCOLS(runs_cols)},
    {"lost_trees", "scan, top", lost_cols, NCOLS(lost_cols)},
    {"lost_tree_blocks", "scan, top, file_block", lost_blocks_cols, NCOLS(lost_blocks_cols)},
    {"catalogue", "rowid", catalogue_cols, NCOLS(catalogue_cols)},
    {"severities", "rowid", lookup_cols, NCOLS(lookup_cols)},
    {"classes", "rowid", lookup_cols, NCOLS(lookup_cols)},
    {"states", "rowid", lookup_cols, NCOLS(lookup_cols)},
    {"sqlite_stat1", "rowid", stat1_cols, NCOLS(stat1_cols)},
};
const unsigned fuzz_store_ntables = NCOLS(fuzz_store_tables);

const char *const fuzz_store_indexes[] = {
    "scans_image",  "findings_code",  "findings_severity",  "findings_block",
    "entries_path", "entries_parent", "entry_blocks_block",
};
const unsigned fuzz_store_nindexes = NCOLS(fuzz_store_indexes);

/* ---- the assembler ------------------------------------------------------------ */

struct prog {
    uint8_t b[512];
    size_t n;
};

static void put(struct prog *p, unsigned v)
{
    if (p->n >= sizeof(p->b))
        abort(); /* a seed longer than the buffer: make it bigger */
    p->b[p->n++] = (uint8_t)v;
}

static unsigned table_of(const char *name)
{
    for (unsigned t = 0; t < fuzz_store_ntables; t++)
        if (strcmp(fuzz_store_tables[t].name, name) == 0)
            return t;
    fprintf(stderr, "store_seeds: no table %s\n", name);
    abort();
}

static unsigned col_of(unsigned t, const char *name)
{
    for (unsigned c = 0; c < fuzz_store_tables[t].ncols; c++)
        if (strcmp(fuzz_store_tables[t].cols[c], name) == 0)
            return c;
    fprintf(stderr, "store_seeds: no column %s.%s\n", fuzz_store_tables[t].name, name);
    abort();
}

/* Operands T [R] C of an edit. */
static void target(struct prog *p, const char *table, int row, const char *col)
{
    unsigned t = table_of(table);
    put(p, t);
    if (row >= 0) {
        put(p, (unsigned)row & 0xff);
        put(p, (unsigned)row >> 8);
    }
    if (col != NULL)
        put(p, col_of(t, col));
}

static void v_int(struct prog *p, int64_t v)
{
    if (v >= -128 && v <= 127) {
        put(p, FZS_V_I8);
        put(p, (uint8_t)(int8_t)v);
        return;
    }
    put(p, FZS_V_I64);
    for (int i = 0; i < 8; i++)
        put(p, (unsigned)(((uint64_t)v >> (8 * i)) & 0xff));
}

static void v_bytes(struct prog *p, enum fuzz_store_value kind, const void *s, size_t n)
{
    put(p, kind);
    put(p, (unsigned)n);
    for (size_t i = 0; i < n; i++)
        put(p, ((const uint8_t *)s)[i]);
}

/* op table row col, its value to follow */
static void op(struct prog *p, enum fuzz_store_op o, const char *table, int row, const char *col)
{
    put(p, o);
    target(p, table, row, col);
}

static void set_int(struct prog *p, const char *table, int row, const char *col, int64_t v)
{
    op(p, FZS_SET, table, row, col);
    v_int(p, v);
}

static void set_all_int(struct prog *p, const char *table, const char *col, int64_t v)
{
    op(p, FZS_SET_ALL, table, -1, col);
    v_int(p, v);
}

static void set_all_null(struct prog *p, const char *table, const char *col)
{
    op(p, FZS_SET_ALL, table, -1, col);
    put(p, FZS_V_NULL);
}

static void set_all_text(struct prog *p, const char *table, const char *col, const char *s,
                         size_t n)
{
    op(p, FZS_SET_ALL, table, -1, col);
    v_bytes(p, FZS_V_TEXT, s, n);
}

static void set_all_blob(struct prog *p, const char *table, const char *col, const void *s,
                         size_t n)
{
    op(p, FZS_SET_ALL, table, -1, col);
    v_bytes(p, FZS_V_BLOB, s, n);
}

static void add_int(struct prog *p, const char *table, int row, const char *col, int64_t v)
{
    op(p, FZS_ADD, table, row, col);
    v_int(p, v);
}

static void dup_int(struct prog *p, const char *table, int row, const char *col, int64_t v)
{
    op(p, FZS_DUP, table, row, col);
    v_int(p, v);
}

static void del(struct prog *p, const char *table, int row)
{
    op(p, FZS_DEL, table, row, NULL);
}

static void pragma(struct prog *p, unsigned which, int64_t v)
{
    put(p, FZS_PRAGMA);
    put(p, which);
    v_int(p, v);
}

/* Drop a table, an index, or (NULL) the counters view. */
static void drop(struct prog *p, const char *name)
{
    put(p, FZS_DROP);
    if (name == NULL) {
        put(p, fuzz_store_ntables + fuzz_store_nindexes);
        return;
    }
    for (unsigned i = 0; i < fuzz_store_nindexes; i++)
        if (strcmp(fuzz_store_indexes[i], name) == 0) {
            put(p, fuzz_store_ntables + i);
            return;
        }
    put(p, table_of(name));
}

static void loosen(struct prog *p, const char *table)
{
    op(p, FZS_LOOSEN, table, -1, NULL);
}

/* A table (NULL: the counters view) replaced by a view, an endless one or not. */
static void view(struct prog *p, const char *table, int endless)
{
    put(p, FZS_VIEW);
    put(p, table != NULL ? table_of(table) : fuzz_store_ntables);
    put(p, (unsigned)endless);
}

static void poke(struct prog *p, uint32_t off, uint8_t v)
{
    put(p, FZS_POKE);
    put(p, off & 0xff);
    put(p, (off >> 8) & 0xff);
    put(p, (off >> 16) & 0xff);
    put(p, v);
}

/* ---- the seeds ------------------------------------------------------------------- */

struct emit {
    fuzz_seed_cb cb;
    void *ctx;
    int n;
};

static void emit(struct emit *em, const char *name, const struct prog *p)
{
    em->cb(em->ctx, name, p->b, p->n);
    em->n++;
}

/* An edit program as libFuzzer found it, byte for byte. */
static void raw(struct prog *p, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put(p, b[i]);
}

#define SEED(name, ...)                   \
    do {                                  \
        struct prog p_ = {.n = 0};        \
        struct prog *p = &p_;             \
        __VA_ARGS__;                      \
        emit(&em, name, p);               \
    } while (0)

int fuzz_store_seeds(fuzz_seed_cb cb, void *ctx)
{
    struct emit em = {cb, ctx, 0};
    const int64_t wide = (int64_t)1 << 32;

    SEED("as-written", (void)p);
    /* scans */
    SEED("scans-map-huge", set_all_int(p, "scans", "map_blocks", (int64_t)1 << 62));
    SEED("scans-map-negative", set_all_int(p, "scans", "map_blocks", -1));
    SEED("scans-geometry", set_all_int(p, "scans", "block_size", 3);
         set_int(p, "scans", 1, "address_length", 99));
    SEED("scans-label-nul", set_all_blob(p, "scans", "sb_label", "ab\0cd", 5));
    SEED("scans-null-path", loosen(p, "scans"); set_all_null(p, "scans", "image_path"));
    SEED("scans-text-id", loosen(p, "scans"); set_all_text(p, "scans", "id", "x", 1));
    SEED("scans-worst", set_all_int(p, "scans", "worst_severity", 77));
    SEED("scans-dup", dup_int(p, "scans", 0, "image_size", 5));
    /* entries */
    SEED("entries-state", set_all_int(p, "entries", "state", 7));
    SEED("entries-state-text", set_int(p, "entries", 3, "state", 0);
         op(p, FZS_SET, "entries", 4, "state"); v_bytes(p, FZS_V_TEXT, "1x", 2));
    SEED("entries-type", set_int(p, "entries", 3, "type", 9));
    SEED("entries-id-wide", set_int(p, "entries", 2, "id", wide + 1));
    SEED("entries-id-0", set_int(p, "entries", 2, "id", 0));
    SEED("entries-parent-wide", set_all_int(p, "entries", "parent", wide + 2));
    SEED("entries-path-null", loosen(p, "entries"); set_all_null(p, "entries", "path"));
    SEED("entries-path-blob", set_all_blob(p, "entries", "path", "", 0));
    SEED("entries-name-null", loosen(p, "entries"); set_all_null(p, "entries", "name"));
    SEED("entries-deleted", del(p, "entries", 1); del(p, "entries", 5));
    /* extents */
    SEED("extents-count-0", set_all_int(p, "entry_blocks", "count", 0));
    SEED("extents-count-big", set_int(p, "entry_blocks", 2, "count", 5000));
    SEED("extents-overlap", add_int(p, "entry_blocks", 1, "file_block", -1));
    SEED("extents-block-0", set_int(p, "entry_blocks", 0, "block", 0));
    SEED("extents-entry-wide", set_int(p, "entry_blocks", 0, "entry", wide + 3));
    SEED("extents-file-block-top", set_all_int(p, "entry_blocks", "file_block", INT64_MAX - 2));
    SEED("extents-real", op(p, FZS_SET, "entry_blocks", 3, "block"); put(p, FZS_V_REAL);
         put(p, 10));
    /* lost trees */
    SEED("lost-top-0", set_int(p, "lost_trees", 0, "top", 0));
    SEED("lost-entry-wide", set_all_int(p, "lost_trees", "entry", wide));
    SEED("lost-size-huge", set_all_int(p, "lost_trees", "size", -1));
    SEED("lost-blocks-overlap", set_all_int(p, "lost_tree_blocks", "count", 1024));
    /* findings */
    SEED("findings-severity-text", set_all_text(p, "findings", "severity", "x", 1));
    SEED("findings-severity-big", set_all_int(p, "findings", "severity", 9));
    SEED("findings-null", loosen(p, "findings"); set_all_null(p, "findings", "message");
         set_all_null(p, "findings", "code_name"));
    SEED("findings-entry-wide", set_all_int(p, "findings", "entry", wide + 1));
    SEED("findings-code-wide", set_all_int(p, "findings", "code", wide + 0x101));
    /* the block map */
    SEED("runs-class", set_all_int(p, "block_runs", "class", 99));
    SEED("runs-class-negative", set_int(p, "block_runs", 3, "class", -1));
    SEED("runs-count-0", set_int(p, "block_runs", 5, "count", 0));
    SEED("runs-count-big", set_all_int(p, "block_runs", "count", 100000));
    SEED("runs-owner-wide", set_all_int(p, "block_runs", "owner", wide + 1));
    SEED("runs-first-negative", set_int(p, "block_runs", 0, "first", -5));
    SEED("runs-wrcnt-wide", set_all_int(p, "block_runs", "wrcnt", 70000));
    SEED("runs-loose-dup", loosen(p, "block_runs"); dup_int(p, "block_runs", 4, "owner", 1));
    /* the schema */
    SEED("drop-counters", drop(p, NULL));
    SEED("drop-entries", drop(p, "entries"));
    SEED("drop-lost-trees", drop(p, "lost_trees"));
    SEED("drop-indexes", drop(p, "entries_path"); drop(p, "entry_blocks_block");
         drop(p, "findings_code"));
    SEED("view-plain", view(p, "entries", 0); view(p, NULL, 0));
    SEED("view-endless-entries", view(p, "entries", 1));
    SEED("view-endless-counters", view(p, NULL, 1));
    SEED("stat1", set_all_text(p, "sqlite_stat1", "stat", "1 1 1 1", 7));
    SEED("catalogue", set_all_null(p, "severities", "name"); del(p, "catalogue", 3));
    /* the header */
    SEED("version-newer", pragma(p, 0, 4));
    SEED("version-2", pragma(p, 0, 2));
    SEED("version-1", pragma(p, 0, 1));
    SEED("version-0", pragma(p, 0, 0));
    SEED("appid-foreign", pragma(p, 1, 1234));
    SEED("appid-0", pragma(p, 1, 0));
    SEED("journal-delete", pragma(p, 2, 0));
    /* the file's bytes */
    SEED("poke-page-size", poke(p, 16, 0x03));
    SEED("poke-page", poke(p, 4096 + 3, 0xff); poke(p, 8192 + 100, 0x00));
    SEED("poke-schema", poke(p, 100 + 8, 0x7f));
    /* Regressions: what fuzz_store found, as it found it. */
    /* A run at block 2^64 - 5 (-5 in SQL, sorted first): counted by
     * store_counters, first, though store_block_runs never gives it. */
    SEED("regress-counters-negative-first", set_int(p, "block_runs", 6, "first", -5));
    /* Scans whose ids read back 0, 2, 0: ORDER BY id puts a text or blob id
     * after the integers, and it reads as 0 (store_list_scans sorts now). */
    static const uint8_t scans_text_id[] = {
        0x04, 0x02, 0x07, 0x02, 0x00, 0x00, 0x02, 0x00, 0x00, 0x01, 0x00, 0x07, 0x00,
        0x02, 0x01, 0x90, 0x00, 0xd2, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x04, 0x02,
    };
    SEED("regress-scans-id-order", raw(p, scans_text_id, sizeof(scans_text_id)));
    /* The scans of one image listed a scan of another: the row an id gives
     * back need not be the one the query by image matched (store_list_scans
     * checks it now). */
    static const uint8_t scans_other_image[] = {
        0x07, 0x00, 0x00, 0x02, 0x02, 0x00, 0x01, 0x01, 0x00, 0x5d, 0x00, 0xfe, 0x00, 0x00,
        0xf9, 0x00, 0x00, 0x00, 0x00, 0x11, 0x00, 0x01,
    };
    SEED("regress-scans-other-image", raw(p, scans_other_image, sizeof(scans_other_image)));
    return em.n;
}
