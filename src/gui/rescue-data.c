/*
 * rescue-data.c -- the in-memory scan every view reads (rescue-data.h).
 *
 * Filling appends to plain arrays; rescue_data_finish() then builds:
 *  - the children index: every entry whose parent is a known directory,
 *    grouped by parent (a counting sort) and sorted within the group,
 *    directories first and then by name bytes;
 *  - the top level: the root's children, then every entry that no known
 *    parent holds, and last every entry a parent cycle would hide (found
 *    by a breadth-first walk from the top), so that nothing is unreachable;
 *  - subtree_states, for filters that must keep a directory whose
 *    descendants match;
 *  - the findings per severity and the highest write counter.
 * Reading takes no lock but for lazily loaded data maps and folded names.
 */
#define G_LOG_DOMAIN "rescue-data"

#include "config.h"

#include <string.h>

#include "lanyfs.h"
#include "rescue-data.h"

struct _RescueData {
    gatomicrefcount ref;               /* references */
    RescueSourceKind kind;             /* where it came from */
    RescueScanDepth depth;             /* full scan or stand-in walk */
    char *source_path;                 /* the file opened (owned) */
    char *image_path;                  /* the image the blocks are on (owned), NULL: source */
    RescueGeometry geom;               /* geometry and label */
    struct scan_summary summary;       /* the scan's figures */
    gboolean finished;                 /* sealed by rescue_data_finish */

    /* Entries */
    GArray *entries;                   /* RescueEntryInfo, entries[id - 1] */
    guint32 *children;                 /* the children index (owned) */
    guint32 *top;                      /* the top level (owned) */
    guint32 ntop;                      /* ids in top */
    guint8 *is_top;                    /* is_top[id]: the id is in top (owned) */
    guint32 root;                      /* the live root, 0 = none */
    GPtrArray *owned_data;             /* data maps copied in (owned) */
    char **folded;                     /* folded names by id - 1, built lazily (owned) */

    /* Findings */
    GArray *findings;                  /* RescueFindingInfo */
    guint by_severity[4];              /* findings per severity */

    /* Block map */
    const struct scan_block *blocks;   /* cells, owned by blocks_owner or by us */
    guint64 nblocks;                   /* cells */
    gpointer blocks_owner;             /* owner of blocks (owned) */
    GDestroyNotify blocks_owner_free;  /* frees blocks_owner */
    guint16 wear_max;                  /* highest write counter of a metadata block */

    /* Lazy loading */
    GMutex lock;                       /* guards data maps and folded names */
    RescueDataLoader loader;           /* loads one data map, may be NULL */
    gpointer loader_data;              /* passed to loader (owned through loader_free) */
    GDestroyNotify loader_free;        /* frees loader_data */

    /* The scanner's result behind it, NULL for a database (borrowed from kept) */
    const struct scan_result *scan;

    /* Things kept alive with the data */
    GPtrArray *kept;                   /* pointers (owned) */
    GArray *kept_free;                 /* their GDestroyNotify */
};

static void entry_clear(gpointer p)
{
    RescueEntryInfo *e = p;

    g_free(e->name);
    g_free(e->path);
    g_free(e->raw_name);
}

static void finding_clear(gpointer p)
{
    RescueFindingInfo *f = p;

    g_free(f->message);
    g_free(f->path);
}

RescueData *rescue_data_new(RescueSourceKind kind, const char *source_path)
{
    RescueData *data = g_new0(RescueData, 1);

    g_atomic_ref_count_init(&data->ref);
    data->kind = kind;
    data->source_path = g_strdup(source_path);
    data->entries = g_array_new(FALSE, TRUE, sizeof(RescueEntryInfo));
    g_array_set_clear_func(data->entries, entry_clear);
    data->findings = g_array_new(FALSE, TRUE, sizeof(RescueFindingInfo));
    g_array_set_clear_func(data->findings, finding_clear);
    data->owned_data = g_ptr_array_new_with_free_func(g_free);
    data->kept = g_ptr_array_new();
    data->kept_free = g_array_new(FALSE, FALSE, sizeof(GDestroyNotify));
    g_mutex_init(&data->lock);
    return data;
}

RescueData *rescue_data_ref(RescueData *data)
{
    g_return_val_if_fail(data != NULL, NULL);

    g_atomic_ref_count_inc(&data->ref);
    return data;
}

static void rescue_data_free(RescueData *data)
{
    if (data->folded != NULL) {
        for (guint i = 0; i < data->entries->len; i++)
            g_free(data->folded[i]);
        g_free(data->folded);
    }
    g_array_unref(data->entries);
    g_array_unref(data->findings);
    g_ptr_array_unref(data->owned_data);
    g_free(data->children);
    g_free(data->top);
    g_free(data->is_top);
    if (data->blocks_owner_free != NULL)
        data->blocks_owner_free(data->blocks_owner);
    if (data->loader_free != NULL)
        data->loader_free(data->loader_data);
    /* Kept things go last and in reverse: a scan result may own what entries borrow. */
    for (guint i = data->kept->len; i > 0; i--) {
        GDestroyNotify fn = g_array_index(data->kept_free, GDestroyNotify, i - 1);
        fn(g_ptr_array_index(data->kept, i - 1));
    }
    g_ptr_array_unref(data->kept);
    g_array_unref(data->kept_free);
    g_mutex_clear(&data->lock);
    g_free(data->geom.label);
    g_free(data->source_path);
    g_free(data->image_path);
    g_free(data);
}

void rescue_data_unref(RescueData *data)
{
    g_return_if_fail(data != NULL);

    if (g_atomic_ref_count_dec(&data->ref))
        rescue_data_free(data);
}

/* ---- text ------------------------------------------------------------- */

char *rescue_escape_bytes(const void *bytes, gsize len)
{
    const guint8 *p = bytes;
    GString *s = g_string_sized_new(len + 8);
    gsize i = 0;

    while (i < len) {
        const char *rest = (const char *)p + i;
        gunichar c = g_utf8_get_char_validated(rest, (gssize)(len - i));

        if (c == (gunichar)-1 || c == (gunichar)-2 || c == 0 || !g_unichar_isprint(c) ||
            c == 0xfeff) {
            g_string_append_printf(s, "\\x%02x", p[i]);
            i++;
            continue;
        }
        const char *next = g_utf8_next_char(rest);
        if (c == '\\')
            g_string_append(s, "\\\\");
        else
            g_string_append_len(s, rest, next - rest);
        i += (gsize)(next - rest);
    }
    return g_string_free(s, FALSE);
}

gint64 rescue_time_from_ts(const struct lanyfs_ts *ts)
{
    time_t t;

    if (ts == NULL || lanyfs_ts_is_unset(ts) || !lanyfs_ts_is_valid(ts))
        return RESCUE_TIME_UNSET;
    if (!lanyfs_ts_to_time(ts, &t))
        return RESCUE_TIME_UNSET;
    return (gint64)t;
}

gint64 rescue_time_from_iso8601(const char *text)
{
    g_autoptr(GDateTime) dt = NULL;
    g_autoptr(GTimeZone) utc = NULL;

    if (text == NULL || *text == '\0')
        return RESCUE_TIME_UNSET;
    utc = g_time_zone_new_utc();
    dt = g_date_time_new_from_iso8601(text, utc);
    if (dt == NULL)
        return RESCUE_TIME_UNSET;
    return g_date_time_to_unix(dt);
}

/* ---- filling ---------------------------------------------------------- */

RescueEntryInfo *rescue_data_append_entry(RescueData *data, const guint8 *name, gsize name_len,
                                          const char *path)
{
    RescueEntryInfo e = {0};

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(!data->finished, NULL);
    g_return_val_if_fail(data->entries->len < G_MAXUINT32 - 1, NULL);

    e.id = data->entries->len + 1;
    e.created = RESCUE_TIME_UNSET;
    e.modified = RESCUE_TIME_UNSET;
    e.raw_name = g_malloc(name_len + 1);
    if (name_len > 0)
        memcpy(e.raw_name, name, name_len);
    e.raw_name[name_len] = 0;
    e.raw_name_len = name_len;
    e.name = rescue_escape_bytes(name, name_len);
    e.path = path != NULL ? rescue_escape_bytes(path, strlen(path)) : g_strdup("");
    g_array_append_val(data->entries, e);
    return &g_array_index(data->entries, RescueEntryInfo, data->entries->len - 1);
}

RescueFindingInfo *rescue_data_append_finding(RescueData *data, guint32 code, guint8 severity,
                                              guint32 entry, guint64 block, guint64 block2,
                                              const char *message, const char *path)
{
    RescueFindingInfo f = {0};
    const struct scan_problem_info *row;

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(!data->finished, NULL);

    row = scan_problem_lookup(code);
    f.code = code;
    f.severity = MIN(severity, SCAN_SEV_CRITICAL);
    f.entry = entry;
    f.block = block;
    f.block2 = block2;
    f.has_block = row != NULL && strstr(row->message, "{block}") != NULL;
    f.message = message != NULL ? rescue_escape_bytes(message, strlen(message))
                                : g_strdup(row != NULL ? row->message : "");
    f.path = path != NULL ? rescue_escape_bytes(path, strlen(path)) : NULL;
    g_array_append_val(data->findings, f);
    return &g_array_index(data->findings, RescueFindingInfo, data->findings->len - 1);
}

void rescue_data_set_blocks(RescueData *data, const struct scan_block *blocks, guint64 n,
                            gpointer owner, GDestroyNotify owner_free)
{
    g_return_if_fail(data != NULL);
    g_return_if_fail(!data->finished);
    g_return_if_fail(data->blocks == NULL);

    if (owner == NULL) {
        struct scan_block *copy = rescue_data_alloc_blocks(data, n);
        if (n > 0)
            memcpy(copy, blocks, n * sizeof(*copy));
        return;
    }
    data->blocks = blocks;
    data->nblocks = n;
    data->blocks_owner = owner;
    data->blocks_owner_free = owner_free;
}

struct scan_block *rescue_data_alloc_blocks(RescueData *data, guint64 n)
{
    struct scan_block *cells;

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(data->blocks == NULL, NULL);

    cells = g_new0(struct scan_block, MAX(n, 1));
    data->blocks = cells;
    data->nblocks = n;
    data->blocks_owner = cells;
    data->blocks_owner_free = g_free;
    return cells;
}

void rescue_data_set_entry_data(RescueData *data, guint32 id, const guint64 *blocks, guint64 n,
                                gboolean borrowed)
{
    RescueEntryInfo *e;

    g_return_if_fail(data != NULL);
    g_return_if_fail(id >= 1 && id <= data->entries->len);

    e = &g_array_index(data->entries, RescueEntryInfo, id - 1);
    if (n == 0) {
        e->data = NULL;
    } else if (borrowed) {
        e->data = blocks;
    } else {
        guint64 *copy = g_new(guint64, n);
        memcpy(copy, blocks, n * sizeof(guint64));
        g_ptr_array_add(data->owned_data, copy);
        e->data = copy;
    }
    e->ndata = n;
    e->data_known = TRUE;
}

RescueEntryInfo *rescue_data_append_lost(RescueData *data, guint64 top, guint32 entry,
                                         guint64 size, guint64 mapped, const guint64 *blocks,
                                         guint64 nblocks, gboolean borrowed)
{
    RescueEntryInfo *e = NULL;

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(!data->finished, NULL);
    g_return_val_if_fail(top != 0, NULL);

    /* Only a file takes a tree's data, and only one tree's (a database is as
     * hostile as the disk): any other tree stands for itself. */
    if (entry != 0 && entry <= data->entries->len) {
        e = &g_array_index(data->entries, RescueEntryInfo, entry - 1);
        if (e->type != LANYFS_TYPE_FILE || e->lost_top != 0 || e->lost_only)
            e = NULL;
    }
    if (e == NULL) {
        /* Named as fsck-lanyfs names the file it makes of the tree in /lost+found. */
        g_autofree char *name = g_strdup_printf("#%" G_GUINT64_FORMAT, top);
        g_autofree char *path = g_strconcat("/", name, NULL);
        e = rescue_data_append_entry(data, (const guint8 *)name, strlen(name), path);
        if (e == NULL)
            return NULL;
        e->block = top;
        e->state = SCAN_ENTRY_ORPHAN;
        e->type = LANYFS_TYPE_FILE;
        e->size = size;
        e->lost_only = TRUE;
    }
    /* The entry's own map is empty (its pointer never landed): the tree's is its. */
    e->lost_top = top;
    e->lost_size = size;
    e->blocks_needed = nblocks;
    e->blocks_mapped = mapped;
    e->blocks_intact = mapped;
    if (blocks != NULL)
        rescue_data_set_entry_data(data, e->id, blocks, nblocks, borrowed);
    return e;
}

RescueGeometry *rescue_data_geometry_mut(RescueData *data)
{
    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(!data->finished, NULL);

    return &data->geom;
}

void rescue_data_set_summary(RescueData *data, const struct scan_summary *summary)
{
    g_return_if_fail(data != NULL);
    g_return_if_fail(summary != NULL);

    data->summary = *summary;
}

void rescue_data_set_depth(RescueData *data, RescueScanDepth depth)
{
    g_return_if_fail(data != NULL);

    data->depth = depth;
}

void rescue_data_set_loader(RescueData *data, RescueDataLoader loader, gpointer user_data,
                            GDestroyNotify user_data_free)
{
    g_return_if_fail(data != NULL);
    g_return_if_fail(data->loader == NULL);

    data->loader = loader;
    data->loader_data = user_data;
    data->loader_free = user_data_free;
}

void rescue_data_keep(RescueData *data, gpointer owned, GDestroyNotify owned_free)
{
    g_return_if_fail(data != NULL);
    g_return_if_fail(owned_free != NULL);

    g_ptr_array_add(data->kept, owned);
    g_array_append_val(data->kept_free, owned_free);
}

void rescue_data_set_scan_result(RescueData *data, const struct scan_result *result)
{
    g_return_if_fail(data != NULL);
    g_return_if_fail(!data->finished);

    data->scan = result;
}

const struct scan_result *rescue_data_get_scan_result(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, NULL);
    return data->scan;
}

void rescue_data_set_image_path(RescueData *data, const char *image_path)
{
    g_return_if_fail(data != NULL);

    g_free(data->image_path);
    data->image_path = g_strdup(image_path);
}

/* ---- sealing ---------------------------------------------------------- */

static int compare_siblings(const void *a, const void *b, void *user_data)
{
    GArray *entries = user_data;
    const RescueEntryInfo *x = &g_array_index(entries, RescueEntryInfo, *(const guint32 *)a - 1);
    const RescueEntryInfo *y = &g_array_index(entries, RescueEntryInfo, *(const guint32 *)b - 1);
    gboolean xd = x->type == LANYFS_TYPE_DIR;
    gboolean yd = y->type == LANYFS_TYPE_DIR;
    gsize n;
    int c;

    if (xd != yd)
        return xd ? -1 : 1;
    n = MIN(x->raw_name_len, y->raw_name_len);
    c = n > 0 ? memcmp(x->raw_name, y->raw_name, n) : 0;
    if (c != 0)
        return c;
    if (x->raw_name_len != y->raw_name_len)
        return x->raw_name_len < y->raw_name_len ? -1 : 1;
    if (x->state != y->state)
        return x->state < y->state ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id);
}

static gboolean has_parent(const RescueData *data, const RescueEntryInfo *e)
{
    const RescueEntryInfo *p;

    if (e->parent == 0 || e->parent > data->entries->len || e->parent == e->id)
        return FALSE;
    p = &g_array_index(data->entries, RescueEntryInfo, e->parent - 1);
    return p->type == LANYFS_TYPE_DIR;
}

static void build_index(RescueData *data)
{
    guint32 n = data->entries->len;
    guint32 *count = g_new0(guint32, (gsize)n + 1);
    guint32 *fill;
    guint8 *seen;
    GArray *top = g_array_new(FALSE, FALSE, sizeof(guint32));
    GArray *queue;

    /* The root: the first live directory that no parent holds. */
    for (guint32 i = 0; i < n && data->root == 0; i++) {
        const RescueEntryInfo *e = &g_array_index(data->entries, RescueEntryInfo, i);
        if (e->state == SCAN_ENTRY_LIVE && e->type == LANYFS_TYPE_DIR && !has_parent(data, e))
            data->root = e->id;
    }

    /* Counting sort by parent. */
    for (guint32 i = 0; i < n; i++) {
        const RescueEntryInfo *e = &g_array_index(data->entries, RescueEntryInfo, i);
        if (has_parent(data, e))
            count[e->parent]++;
    }
    fill = g_new0(guint32, (gsize)n + 1);
    {
        guint32 at = 0;
        for (guint32 id = 1; id <= n; id++) {
            RescueEntryInfo *p = &g_array_index(data->entries, RescueEntryInfo, id - 1);
            p->child_first = at;
            p->nchildren = count[id];
            fill[id] = at;
            at += count[id];
        }
    }
    data->children = g_new(guint32, MAX(n, 1));
    for (guint32 i = 0; i < n; i++) {
        const RescueEntryInfo *e = &g_array_index(data->entries, RescueEntryInfo, i);
        if (has_parent(data, e))
            data->children[fill[e->parent]++] = e->id;
    }
    for (guint32 id = 1; id <= n; id++) {
        RescueEntryInfo *p = &g_array_index(data->entries, RescueEntryInfo, id - 1);
        if (p->nchildren > 1)
            g_qsort_with_data(data->children + p->child_first, (gint)p->nchildren,
                              sizeof(guint32), compare_siblings, data->entries);
    }

    /* The top level. */
    if (data->root != 0) {
        const RescueEntryInfo *r = &g_array_index(data->entries, RescueEntryInfo, data->root - 1);
        g_array_append_vals(top, data->children + r->child_first, r->nchildren);
    }
    {
        guint32 first_loose = top->len;
        for (guint32 i = 0; i < n; i++) {
            const RescueEntryInfo *e = &g_array_index(data->entries, RescueEntryInfo, i);
            if (e->id != data->root && !has_parent(data, e))
                g_array_append_val(top, e->id);
        }
        if (top->len - first_loose > 1)
            g_qsort_with_data(&g_array_index(top, guint32, first_loose),
                              (gint)(top->len - first_loose), sizeof(guint32), compare_siblings,
                              data->entries);
    }

    /* Whatever a parent cycle hides joins the top level. */
    seen = g_new0(guint8, (gsize)n + 1);
    queue = g_array_new(FALSE, FALSE, sizeof(guint32));
    if (data->root != 0)
        seen[data->root] = 1;
    for (guint i = 0; i < top->len; i++) {
        guint32 id = g_array_index(top, guint32, i);
        seen[id] = 1;
        g_array_append_val(queue, id);
    }
    for (guint q = 0; q < queue->len; q++) {
        guint32 id = g_array_index(queue, guint32, q);
        const RescueEntryInfo *e = &g_array_index(data->entries, RescueEntryInfo, id - 1);
        for (guint32 c = 0; c < e->nchildren; c++) {
            guint32 cid = data->children[e->child_first + c];
            if (!seen[cid]) {
                seen[cid] = 1;
                g_array_append_val(queue, cid);
            }
        }
    }
    for (guint32 id = 1; id <= n; id++) {
        if (!seen[id]) {
            /* A cycle: put its member in the top level and everything below it is reached. */
            seen[id] = 1;
            g_array_append_val(top, id);
            g_array_set_size(queue, 0);
            g_array_append_val(queue, id);
            for (guint q = 0; q < queue->len; q++) {
                guint32 qid = g_array_index(queue, guint32, q);
                const RescueEntryInfo *e = &g_array_index(data->entries, RescueEntryInfo, qid - 1);
                for (guint32 c = 0; c < e->nchildren; c++) {
                    guint32 cid = data->children[e->child_first + c];
                    if (!seen[cid]) {
                        seen[cid] = 1;
                        g_array_append_val(queue, cid);
                    }
                }
            }
        }
    }

    /* subtree_states: children are visited before parents in reverse BFS order. */
    g_array_set_size(queue, 0);
    memset(seen, 0, (gsize)n + 1);
    for (guint i = 0; i < top->len; i++) {
        guint32 id = g_array_index(top, guint32, i);
        if (!seen[id]) {
            seen[id] = 1;
            g_array_append_val(queue, id);
        }
    }
    if (data->root != 0 && !seen[data->root]) {
        seen[data->root] = 1;
        g_array_append_val(queue, data->root);
    }
    for (guint q = 0; q < queue->len; q++) {
        guint32 id = g_array_index(queue, guint32, q);
        const RescueEntryInfo *e = &g_array_index(data->entries, RescueEntryInfo, id - 1);
        for (guint32 c = 0; c < e->nchildren; c++) {
            guint32 cid = data->children[e->child_first + c];
            if (!seen[cid]) {
                seen[cid] = 1;
                g_array_append_val(queue, cid);
            }
        }
    }
    for (guint q = queue->len; q > 0; q--) {
        guint32 id = g_array_index(queue, guint32, q - 1);
        RescueEntryInfo *e = &g_array_index(data->entries, RescueEntryInfo, id - 1);
        for (guint32 c = 0; c < e->nchildren; c++) {
            const RescueEntryInfo *ch =
                &g_array_index(data->entries, RescueEntryInfo, data->children[e->child_first + c] - 1);
            e->subtree_states |= ch->subtree_states | RESCUE_STATE_BIT(ch->state);
        }
    }

    data->ntop = top->len;
    data->is_top = g_new0(guint8, (gsize)n + 1);
    for (guint i = 0; i < top->len; i++)
        data->is_top[g_array_index(top, guint32, i)] = 1;
    data->top = (guint32 *)g_array_free(top, FALSE);
    g_array_unref(queue);
    g_free(seen);
    g_free(count);
    g_free(fill);
}

void rescue_data_finish(RescueData *data)
{
    g_return_if_fail(data != NULL);
    g_return_if_fail(!data->finished);

    build_index(data);
    for (guint i = 0; i < data->findings->len; i++) {
        const RescueFindingInfo *f = &g_array_index(data->findings, RescueFindingInfo, i);
        data->by_severity[MIN(f->severity, 3)]++;
    }
    data->wear_max = 1;
    for (guint64 b = 0; b < data->nblocks; b++)
        if ((data->blocks[b].flags & SCAN_BF_METADATA) && data->blocks[b].wrcnt > data->wear_max)
            data->wear_max = data->blocks[b].wrcnt;
    data->finished = TRUE;
}

/* ---- reading ---------------------------------------------------------- */

RescueSourceKind rescue_data_get_kind(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, RESCUE_SOURCE_NONE);
    return data->kind;
}

RescueScanDepth rescue_data_get_depth(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, RESCUE_SCAN_FULL);
    return data->depth;
}

const char *rescue_data_get_source_path(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, NULL);
    return data->source_path;
}

const char *rescue_data_get_image_path(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, NULL);
    return data->image_path != NULL ? data->image_path : data->source_path;
}

const RescueGeometry *rescue_data_get_geometry(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, NULL);
    return &data->geom;
}

const struct scan_summary *rescue_data_get_summary(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, NULL);
    return &data->summary;
}

guint32 rescue_data_get_n_entries(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, 0);
    return data->entries->len;
}

const RescueEntryInfo *rescue_data_get_entry(const RescueData *data, guint32 id)
{
    g_return_val_if_fail(data != NULL, NULL);

    if (id == 0 || id > data->entries->len)
        return NULL;
    return &g_array_index(data->entries, RescueEntryInfo, id - 1);
}

guint32 rescue_data_get_root(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, 0);
    return data->root;
}

const guint32 *rescue_data_get_top_level(const RescueData *data, guint32 *n)
{
    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(data->finished, NULL);

    *n = data->ntop;
    return data->top;
}

const guint32 *rescue_data_get_children(const RescueData *data, guint32 id, guint32 *n)
{
    const RescueEntryInfo *e;

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(data->finished, NULL);

    e = rescue_data_get_entry(data, id);
    if (e == NULL || e->nchildren == 0) {
        *n = 0;
        return NULL;
    }
    *n = e->nchildren;
    return data->children + e->child_first;
}

guint32 *rescue_data_get_ancestry(const RescueData *data, guint32 id, guint *n)
{
    GArray *chain;
    guint32 cur = id;

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(data->finished, NULL);
    g_return_val_if_fail(n != NULL, NULL);

    chain = g_array_new(FALSE, FALSE, sizeof(guint32));
    /*
     * Up the parents until the top level: every entry off the top level was
     * reached from its parent, so the chain ends there (capped all the same).
     */
    while (cur != 0 && cur <= data->entries->len && cur != data->root &&
           chain->len <= data->entries->len) {
        const RescueEntryInfo *e = &g_array_index(data->entries, RescueEntryInfo, cur - 1);
        g_array_prepend_val(chain, cur);
        if (data->is_top[cur])
            break;
        cur = e->parent;
    }
    *n = chain->len;
    return (guint32 *)g_array_free(chain, FALSE);
}

gboolean rescue_data_get_entry_data(RescueData *data, guint32 id, const guint64 **blocks,
                                    guint64 *n)
{
    RescueEntryInfo *e;
    gboolean ok;

    g_return_val_if_fail(data != NULL, FALSE);

    if (id == 0 || id > data->entries->len)
        return FALSE;
    g_mutex_lock(&data->lock);
    e = &g_array_index(data->entries, RescueEntryInfo, id - 1);
    if (!e->data_known && data->loader != NULL)
        data->loader(data, id, data->loader_data);
    ok = e->data_known;
    if (blocks != NULL)
        *blocks = e->data;
    if (n != NULL)
        *n = e->ndata;
    g_mutex_unlock(&data->lock);
    return ok;
}

const char *rescue_data_get_folded_name(RescueData *data, guint32 id)
{
    const char *folded;

    g_return_val_if_fail(data != NULL, NULL);

    if (id == 0 || id > data->entries->len)
        return "";
    g_mutex_lock(&data->lock);
    if (data->folded == NULL)
        data->folded = g_new0(char *, MAX(data->entries->len, 1));
    if (data->folded[id - 1] == NULL) {
        const RescueEntryInfo *e = &g_array_index(data->entries, RescueEntryInfo, id - 1);
        data->folded[id - 1] = g_utf8_casefold(e->name, -1);
    }
    folded = data->folded[id - 1];
    g_mutex_unlock(&data->lock);
    return folded;
}

guint rescue_data_get_n_findings(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, 0);
    return data->findings->len;
}

const RescueFindingInfo *rescue_data_get_finding(const RescueData *data, guint i)
{
    g_return_val_if_fail(data != NULL, NULL);

    if (i >= data->findings->len)
        return NULL;
    return &g_array_index(data->findings, RescueFindingInfo, i);
}

const guint *rescue_data_get_findings_by_severity(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, NULL);
    return data->by_severity;
}

gboolean rescue_data_get_earlier_geometry(const RescueData *data, unsigned *blockbits,
                                          unsigned *addrlen)
{
    const RescueFindingInfo *best = NULL;

    g_return_val_if_fail(data != NULL, FALSE);
    for (guint i = 0; i < data->findings->len; i++) {
        const RescueFindingInfo *f = &g_array_index(data->findings, RescueFindingInfo, i);
        /* The values as the scanner makes them; a database may hold others. */
        if ((f->code != SCAN_PR_EARLIER_FORMAT && f->code != SCAN_PR_EARLIER_FORMAT_ENTRIES) ||
            f->value < LANYFS_BLOCKSIZE_MIN ||
            f->value > LANYFS_BLOCKSIZE_MAX || (f->value & (f->value - 1)) != 0 ||
            f->value2 > LANYFS_ADDRLEN_MAX)
            continue;
        /* A root found first, one whose address length was told before it. */
        if (best == NULL ||
            (best->code == SCAN_PR_EARLIER_FORMAT_ENTRIES && f->code == SCAN_PR_EARLIER_FORMAT) ||
            (best->code == f->code && best->value2 == 0 && f->value2 != 0))
            best = f;
    }
    if (best == NULL)
        return FALSE;
    *blockbits = (unsigned)g_bit_nth_lsf(best->value, -1);
    *addrlen = (unsigned)best->value2;
    return TRUE;
}

guint64 rescue_data_get_n_blocks(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, 0);
    return data->nblocks;
}

const struct scan_block *rescue_data_get_blocks(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, NULL);
    return data->blocks;
}

const struct scan_block *rescue_data_get_block(const RescueData *data, guint64 blk)
{
    g_return_val_if_fail(data != NULL, NULL);

    if (blk >= data->nblocks)
        return NULL;
    return &data->blocks[blk];
}

guint16 rescue_data_get_wear_max(const RescueData *data)
{
    g_return_val_if_fail(data != NULL, 1);
    return data->wear_max;
}
