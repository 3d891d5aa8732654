/*
 * rescue-data-store.c -- a RescueData read back from a scan database (store.h).
 *
 * One scan of the database becomes one RescueData: the scans row gives the
 * geometry, label and summary; entries come in path order and are placed
 * by their id (so that a finding's entry id still names its entry); the
 * block map is rebuilt cell by cell from its runs and the write counters of
 * the metadata blocks.  The lost extender trees follow the entries, as
 * rescue-data-scan.c places them: on their file's entry, or as entries of
 * their own.  Text in the database is in its escaped form; it is
 * unescaped to the disk's bytes and escaped again the way every view shows
 * names (the two forms agree on printable UTF-8).  An entry's data map is
 * read when first asked for, through the read-only handle kept with the
 * data, under the data's lock.
 */
#define G_LOG_DOMAIN "rescue-data"

#include "config.h"

#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

#include "rescue-data-store.h"
#include "store.h"

/* An entry row, copied out of the callback. */
typedef struct {
    guint32 id;          /* the database's entry id */
    guint32 parent;      /* the database's parent id */
    guint64 block;
    guint8 state;
    guint8 type;
    guint16 attr;
    guint16 wrcnt;
    guint64 size;
    gint64 created;
    gint64 modified;
    guint64 needed;
    guint64 mapped;
    guint64 intact;
    guint8 *name;        /* exact bytes (owned) */
    gsize name_len;
    char *path;          /* unescaped bytes, NUL-terminated (owned) */
} Row;

typedef struct {
    GArray *rows;              /* Row */
    GCancellable *cancellable; /* borrowed */
} EntriesCtx;

typedef struct {
    RescueData *data;          /* borrowed */
    GCancellable *cancellable; /* borrowed */
    const guint32 *ids;        /* database ids by our id - 1 */
    guint32 nids;
} FindingsCtx;

typedef struct {
    struct scan_block *cells;  /* borrowed */
    guint64 ncells;
    const guint32 *ids;        /* database ids by our id - 1, for the owners */
    guint32 nids;
} MapCtx;

/* What the lazy loader needs, owned by the RescueData. */
typedef struct {
    struct store_db *db;       /* read-only handle (owned) */
    gint64 scan_id;
    guint32 *ids;              /* database entry id by our id - 1 (owned) */
    guint32 nids;              /* entries in ids; ids past them are lost trees' */
} Loader;

typedef struct {
    GArray *blocks;            /* guint64, by file block */
    guint64 mapped;            /* data blocks in the extents so far */
    guint64 nblocks;           /* cells of the block map */
} BlocksCtx;

typedef struct {
    GArray *trees;             /* struct store_lost_tree */
    GCancellable *cancellable; /* borrowed */
} LostCtx;

static void row_clear(gpointer p)
{
    Row *r = p;

    g_free(r->name);
    g_free(r->path);
}

static void set_store_error(GError **error, const char *path, const struct lanyfs_error *err)
{
    g_autofree char *name = g_filename_display_basename(path);

    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot read the scan database “%s”: %s"),
                name, err->msg[0] ? err->msg : lanyfs_strerror(err->code));
}

static char *unescape_dup(const char *text)
{
    uint8_t *raw;

    if (text == NULL)
        return NULL;
    raw = store_unescape(text, NULL);
    if (raw == NULL)
        return g_strdup(text);
    {
        char *copy = g_strdup((const char *)raw);
        free(raw);
        return copy;
    }
}

static int on_entry(void *ctx, const struct store_entry *se)
{
    EntriesCtx *ec = ctx;
    Row r = {0};

    if (g_cancellable_is_cancelled(ec->cancellable))
        return 1;
    r.id = se->id;
    r.parent = se->parent;
    r.block = se->block;
    r.state = se->state <= SCAN_ENTRY_ORPHAN ? se->state : SCAN_ENTRY_ORPHAN;
    r.type = se->type;
    r.attr = se->attr;
    r.wrcnt = se->wrcnt;
    r.size = se->size;
    r.created = rescue_time_from_iso8601(se->created);
    r.modified = rescue_time_from_iso8601(se->modified);
    r.needed = se->blocks_needed;
    r.mapped = se->blocks_mapped;
    r.intact = se->blocks_intact;
    r.name_len = MIN(se->name_len, LANYFS_NAME_FIELD);
    r.name = g_malloc(r.name_len + 1);
    if (r.name_len > 0)
        memcpy(r.name, se->name, r.name_len);
    r.name[r.name_len] = 0;
    r.path = unescape_dup(se->path);
    g_array_append_val(ec->rows, r);
    return 0;
}

static int compare_rows(gconstpointer a, gconstpointer b)
{
    const Row *x = a;
    const Row *y = b;

    return x->id < y->id ? -1 : (x->id > y->id);
}

static int compare_ids(const void *key, const void *elem)
{
    guint32 k = *(const guint32 *)key;
    guint32 e = *(const guint32 *)elem;

    return k < e ? -1 : (k > e);
}

/* Our id (1-based) of a database id, 0 when absent; ids is sorted. */
static guint32 our_id(const guint32 *ids, guint32 n, guint32 db_id)
{
    const guint32 *hit;

    if (db_id == 0 || n == 0)
        return 0;
    hit = bsearch(&db_id, ids, n, sizeof(guint32), compare_ids);
    return hit != NULL ? (guint32)(hit - ids) + 1 : 0;
}

static int on_finding(void *ctx, const struct store_finding *sf)
{
    FindingsCtx *fc = ctx;
    g_autofree char *msg = NULL;
    g_autofree char *path = NULL;

    if (g_cancellable_is_cancelled(fc->cancellable))
        return 1;
    msg = unescape_dup(sf->message);
    path = unescape_dup(sf->path);
    RescueFindingInfo *fi =
        rescue_data_append_finding(fc->data, sf->code, (guint8)sf->severity,
                                   our_id(fc->ids, fc->nids, sf->entry), sf->block, sf->block2,
                                   msg, path);
    if (fi != NULL) {
        fi->value = sf->value;
        fi->value2 = sf->value2;
    }
    return 0;
}

static int on_run(void *ctx, const struct store_block_run *run)
{
    MapCtx *mc = ctx;
    /* Owners are entry ids like parents and findings': ours, not the database's. */
    guint32 owner = our_id(mc->ids, mc->nids, run->owner);

    for (guint64 b = run->first; b < run->first + run->count && b < mc->ncells; b++) {
        mc->cells[b].cls = (guint8)run->cls;
        mc->cells[b].owner = owner;
        mc->cells[b].flags = run->flags;
    }
    return 0;
}

static int on_counter(void *ctx, uint64_t block, enum scan_class cls, uint16_t wrcnt)
{
    MapCtx *mc = ctx;

    (void)cls;
    if (block < mc->ncells) {
        mc->cells[block].wrcnt = wrcnt;
        mc->cells[block].flags |= SCAN_BF_METADATA;
    }
    return 0;
}

/*
 * The longest data list a scan makes: a file's holds at most 16 cells a
 * block it maps and 65536 more (files.c), the lost trees' all together two
 * a block of the map and 1024 more (lostdata.c).
 */
static guint64 data_cells_max(guint64 mapped, guint64 nblocks)
{
    return MIN(mapped, G_MAXUINT32) * 16 + 65536 + MIN(nblocks, G_MAXUINT32) * 2 + 1024;
}

static int on_entry_extent(void *ctx, uint64_t file_block, uint64_t block, uint64_t count)
{
    BlocksCtx *bc = ctx;

    /* A hostile file block number must not make us allocate the universe
     * (g_array_set_size aborts when it cannot): past what a scan makes, an
     * extent is left out like one past 2^32. */
    bc->mapped += count;
    if (count == 0 || file_block >= (guint64)G_MAXUINT32 ||
        count > (guint64)G_MAXUINT32 - file_block ||
        file_block + count > data_cells_max(bc->mapped, bc->nblocks))
        return 0;
    if (file_block + count > bc->blocks->len)
        g_array_set_size(bc->blocks, (guint)(file_block + count));
    for (guint64 i = 0; i < count; i++)
        g_array_index(bc->blocks, guint64, file_block + i) = block + i;
    return 0;
}

static int on_lost_tree(void *ctx, const struct store_lost_tree *t)
{
    LostCtx *lc = ctx;

    if (g_cancellable_is_cancelled(lc->cancellable))
        return 1;
    g_array_append_val(lc->trees, *t);
    return 0;
}

static gboolean load_entry_data(RescueData *data, guint32 id, gpointer user_data)
{
    Loader *l = user_data;
    const RescueEntryInfo *e = rescue_data_get_entry(data, id);
    BlocksCtx bc;
    struct lanyfs_error err = {0};
    enum lanyfs_err rc;

    if (e == NULL || (e->lost_top == 0 && id > l->nids))
        return FALSE;
    bc.blocks = g_array_new(FALSE, TRUE, sizeof(guint64));
    bc.mapped = 0;
    bc.nblocks = rescue_data_get_n_blocks(data);
    /* A file's own map is empty when a lost tree holds its data. */
    if (e->lost_top != 0)
        rc = store_lost_tree_blocks(l->db, l->scan_id, e->lost_top, on_entry_extent, &bc, &err);
    else
        rc = store_entry_blocks(l->db, l->scan_id, l->ids[id - 1], on_entry_extent, &bc, &err);
    if (rc != LANYFS_OK) {
        g_warning("%s", err.msg);
        g_array_unref(bc.blocks);
        return FALSE;
    }
    rescue_data_set_entry_data(data, id, (const guint64 *)(void *)bc.blocks->data,
                               bc.blocks->len, FALSE);
    g_array_unref(bc.blocks);
    return TRUE;
}

static void loader_free(gpointer p)
{
    Loader *l = p;

    store_close(l->db, NULL);
    g_free(l->ids);
    g_free(l);
}

RescueData *rescue_data_new_from_store(const char *path, gint64 scan_id,
                                       void (*progress)(gpointer ctx, double fraction),
                                       gpointer progress_ctx, GCancellable *cancellable,
                                       GError **error)
{
    struct lanyfs_error err = {0};
    struct store_db *db = NULL;
    struct store_scan *scans = NULL;
    size_t nscans = 0;
    struct store_scan *s = NULL;
    RescueData *data = NULL;
    RescueGeometry *geom;
    EntriesCtx ec = {0};
    FindingsCtx fc = {0};
    MapCtx mc = {0};
    LostCtx lc = {0};
    Loader *loader;
    guint32 *ids = NULL;
    guint32 nids;

    g_return_val_if_fail(path != NULL, NULL);
    g_return_val_if_fail(error == NULL || *error == NULL, NULL);

    if (store_open(path, STORE_OPEN_READONLY, &db, &err) != LANYFS_OK) {
        set_store_error(error, path, &err);
        return NULL;
    }
    if (store_list_scans(db, NULL, &scans, &nscans, &err) != LANYFS_OK) {
        set_store_error(error, path, &err);
        goto out_close;
    }
    for (size_t i = 0; i < nscans; i++)
        if (scan_id == 0 || scans[i].id == scan_id)
            s = &scans[i];
    if (s == NULL) {
        g_autofree char *name = g_filename_display_basename(path);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    _("The scan database “%s” holds no scan"), name);
        goto out_close;
    }

    data = rescue_data_new(RESCUE_SOURCE_DATABASE, path);
    {
        g_autofree char *image = unescape_dup(s->image_path);
        rescue_data_set_image_path(data, image);
    }
    geom = rescue_data_geometry_mut(data);
    geom->have_geometry = s->have_geometry;
    geom->inferred = s->geometry_inferred;
    geom->blocksize = s->block_size;
    geom->addrlen = s->address_length;
    geom->fs_blocks = s->blocks;
    geom->image_bytes = s->image_size;
    if (s->have_super)
        geom->label = rescue_escape_bytes(s->sb.label, MIN(s->sb.label_len, sizeof(s->sb.label)));
    rescue_data_set_summary(data, &s->summary);
    if (progress != NULL)
        progress(progress_ctx, 0.05);

    /* Entries, placed by id. */
    ec.rows = g_array_new(FALSE, TRUE, sizeof(Row));
    g_array_set_clear_func(ec.rows, row_clear);
    ec.cancellable = cancellable;
    if (store_entries(db, s->id, NULL, STORE_ANY_STATE, on_entry, &ec, &err) != LANYFS_OK) {
        set_store_error(error, path, &err);
        goto out_fail;
    }
    if (g_cancellable_set_error_if_cancelled(cancellable, error))
        goto out_fail;
    g_array_sort(ec.rows, compare_rows);
    nids = ec.rows->len;
    ids = g_new(guint32, MAX(nids, 1));
    for (guint32 i = 0; i < nids; i++)
        ids[i] = g_array_index(ec.rows, Row, i).id;
    for (guint32 i = 0; i < nids; i++) {
        const Row *r = &g_array_index(ec.rows, Row, i);
        RescueEntryInfo *e = rescue_data_append_entry(data, r->name, r->name_len, r->path);
        e->parent = our_id(ids, nids, r->parent);
        e->block = r->block;
        e->state = r->state;
        e->type = r->type;
        e->attr = r->attr;
        e->wrcnt = r->wrcnt;
        e->size = r->size;
        e->created = r->created;
        e->modified = r->modified;
        e->blocks_needed = r->needed;
        e->blocks_mapped = r->mapped;
        e->blocks_intact = r->intact;
    }
    /* The lost trees; their data maps are read when asked for. */
    lc.trees = g_array_new(FALSE, FALSE, sizeof(struct store_lost_tree));
    lc.cancellable = cancellable;
    if (store_lost_trees(db, s->id, on_lost_tree, &lc, &err) != LANYFS_OK) {
        set_store_error(error, path, &err);
        goto out_fail;
    }
    if (g_cancellable_set_error_if_cancelled(cancellable, error))
        goto out_fail;
    for (guint i = 0; i < lc.trees->len; i++) {
        const struct store_lost_tree *t = &g_array_index(lc.trees, struct store_lost_tree, i);
        guint64 bs = s->block_size;
        guint64 needed = bs != 0 ? t->size / bs + (t->size % bs != 0) : t->blocks_mapped;
        rescue_data_append_lost(data, t->top, our_id(ids, nids, t->entry), t->size,
                                t->blocks_mapped, NULL, needed, FALSE);
    }
    if (progress != NULL)
        progress(progress_ctx, 0.4);

    fc.data = data;
    fc.cancellable = cancellable;
    fc.ids = ids;
    fc.nids = nids;
    if (store_findings(db, s->id, 0, SCAN_SEV_INFO, on_finding, &fc, &err) != LANYFS_OK) {
        set_store_error(error, path, &err);
        goto out_fail;
    }
    if (g_cancellable_set_error_if_cancelled(cancellable, error))
        goto out_fail;
    if (progress != NULL)
        progress(progress_ctx, 0.6);

    /* The block map: runs, then the counters.  Its size is the database's
     * word: a hand-edited one too big for memory is an error, not an abort. */
    mc.ncells = s->map_blocks;
    mc.cells = g_try_new0(struct scan_block, MAX(mc.ncells, 1));
    if (mc.cells == NULL) {
        lanyfs_fail(&err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK,
                    "%s: scan %" G_GINT64_FORMAT ": a block map of %" G_GUINT64_FORMAT
                    " blocks does not fit in memory",
                    path, s->id, mc.ncells);
        set_store_error(error, path, &err);
        goto out_fail;
    }
    rescue_data_set_blocks(data, mc.cells, mc.ncells, mc.cells, g_free);
    mc.ids = ids;
    mc.nids = nids;
    if (mc.ncells > 0) {
        if (store_block_runs(db, s->id, 0, mc.ncells - 1, on_run, &mc, &err) != LANYFS_OK ||
            store_counters(db, s->id, STORE_ANY_CLASS, on_counter, &mc, &err) != LANYFS_OK) {
            set_store_error(error, path, &err);
            goto out_fail;
        }
    }
    if (progress != NULL)
        progress(progress_ctx, 0.9);

    loader = g_new0(Loader, 1);
    loader->db = db;
    loader->scan_id = s->id;
    loader->ids = ids;
    loader->nids = nids;
    rescue_data_set_loader(data, load_entry_data, loader, loader_free);
    db = NULL;
    ids = NULL;
    rescue_data_finish(data);
    if (progress != NULL)
        progress(progress_ctx, 1.0);
    goto out_close;

out_fail:
    g_clear_pointer(&data, rescue_data_unref);
out_close:
    if (ec.rows != NULL)
        g_array_unref(ec.rows);
    if (lc.trees != NULL)
        g_array_unref(lc.trees);
    g_free(ids);
    store_scans_free(scans, nscans);
    store_close(db, NULL);
    return data;
}
