/*
 * entries.c -- the table of entries the scan found, and their paths.
 *
 * Entries are numbered 1.. in the order found and never move in the
 * numbering (the array may be reallocated, so passes keep ids, not
 * pointers).  Each has a public struct scan_entry and a private struct
 * sc_aux at the same index.  Paths:
 *  - the root is "/", a child is its directory's path + "/" + name;
 *  - names are kept as the disk has them (any byte but NUL; a name without
 *    NUL keeps all 256 bytes);
 *  - a path longer than SC_PATH_MAX keeps "/..." and its last component,
 *    so the memory a hostile nesting can take stays bounded.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

/* Where a path of dirpath and a name starts, and its length without the NUL. */
static const char *path_prefix(const char *dirpath, size_t name_len, size_t *dl)
{
    *dl = dirpath ? strlen(dirpath) : 0;
    if (*dl == 1 && dirpath[0] == '/')
        *dl = 0;
    if (*dl + 1 + name_len > SC_PATH_MAX) {
        *dl = 4;
        return "/...";
    }
    return dirpath;
}

static void path_write(char *p, const char *prefix, size_t dl, const uint8_t *name,
                       size_t name_len)
{
    if (dl > 0)
        memcpy(p, prefix, dl);
    p[dl] = '/';
    memcpy(p + dl + 1, name, name_len);
    p[dl + 1 + name_len] = '\0';
}

char *sc_path_join(const char *dirpath, const uint8_t *name, size_t name_len)
{
    size_t dl;
    if (name_len > LANYFS_NAME_FIELD)
        name_len = LANYFS_NAME_FIELD;
    const char *prefix = path_prefix(dirpath, name_len, &dl);
    char *p = malloc(dl + 1 + name_len + 1);
    if (p != NULL)
        path_write(p, prefix, dl, name, name_len);
    return p;
}

/*
 * Entry paths live in a pool (bigmem.c) that is freed together with the
 * entries: 100,000 paths were 100,000 mallocs.  A path replaced
 * (sc_entry_set_path) keeps its bytes until then; a path is at most
 * SC_PATH_MAX + 1 bytes, far below the pool's limit.
 */
/* bytes from pool, whose next chunk, once it is due, is handed to the
 * helper thread to fault in (track). */
static void *pool_take(struct scan_result *r, struct sc_pool *pool, enum sc_pf_track track,
                       size_t bytes, size_t align)
{
    void *p = sc_pool_alloc(pool, bytes, align);
    void *spare = sc_pool_spare(pool);
    if (spare != NULL)
        sc_prefault_all(r, track, spare, SC_POOL_CHUNK);
    return p;
}

/* Images of at least this many blocks have the first chunks of the pools
 * and the stash mapped before the walk (sc_entries_ready). */
#define READY_BLOCKS ((uint64_t)1 << 16)

void sc_entries_ready(struct scan_result *r)
{
    if (r->nblocks < READY_BLOCKS)
        return;
    void *spare = sc_pool_spare(&r->paths);
    if (spare != NULL)
        sc_prefault_all(r, SC_PF_PATHS, spare, SC_POOL_CHUNK);
    spare = sc_pool_spare(&r->lists);
    if (spare != NULL)
        sc_prefault_all(r, SC_PF_LISTS, spare, SC_POOL_CHUNK);
    if (r->stash == NULL && sc_stash_grow(r))
        sc_prefault_need(r, SC_PF_STASH, r->stash, 0, &r->stash_populated, r->stash_bytes);
}

static char *pool_path(struct scan_result *r, const char *dirpath, const uint8_t *name,
                       size_t name_len)
{
    size_t dl;
    if (name_len > LANYFS_NAME_FIELD)
        name_len = LANYFS_NAME_FIELD;
    const char *prefix = path_prefix(dirpath, name_len, &dl);
    char *p = pool_take(r, &r->paths, SC_PF_PATHS, dl + 1 + name_len + 1, 1);
    if (p != NULL)
        path_write(p, prefix, dl, name, name_len);
    return p;
}

/* Entries the first mapping of the entries can hold (sc_entry_add). */
#define ENTRIES_FIRST ((size_t)1 << 18)

/* Data lists up to this many blocks come from the pool; longer ones are
 * few (one a large file) and use malloc. */
#define LIST_POOLED 64

uint64_t *sc_data_new(struct scan_result *r, uint32_t id, uint64_t n)
{
    struct scan_entry *x = sc_entry(r, id);
    struct sc_aux *a = sc_aux(r, id);
    if (x == NULL || a == NULL)
        return NULL;
    sc_data_free(r, id);
    if (n == 0 || n > SIZE_MAX / sizeof(uint64_t))
        return NULL;
    uint64_t *d;
    if (n <= LIST_POOLED)
        d = pool_take(r, &r->lists, SC_PF_LISTS, (size_t)n * sizeof(uint64_t), sizeof(uint64_t));
    else
        d = calloc((size_t)n, sizeof(uint64_t));
    if (d == NULL)
        return NULL;
    x = sc_entry(r, id);
    x->data = d;
    x->ndata = n;
    sc_aux(r, id)->data_pooled = n <= LIST_POOLED;
    return d;
}

void sc_data_free(struct scan_result *r, uint32_t id)
{
    struct scan_entry *x = sc_entry(r, id);
    struct sc_aux *a = sc_aux(r, id);
    if (x == NULL || a == NULL)
        return;
    if (!a->data_pooled)
        free(x->data);
    x->data = NULL;
    x->ndata = 0;
    a->data_pooled = false;
}

/* The key sc_tree_dups sorts by, for each live entry of the tree walk. */
static bool add_dupkey(struct scan_result *r, const struct scan_entry *x)
{
    if (r->ndupkeys == r->dupkeys_cap) {
        struct sc_dupkey *nk = sc_grow(r->dupkeys, &r->dupkeys_cap, sizeof(*nk), 256);
        if (nk == NULL)
            return sc_oom(r);
        r->dupkeys = nk;
    }
    uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
    for (size_t i = 0; i < x->e.name_len && i < LANYFS_NAME_FIELD; i++)
        h = (h ^ x->e.name[i]) * 0x100000001b3u;
    r->dupkeys[r->ndupkeys++] =
        (struct sc_dupkey){.parent = x->parent, .id = x->id, .hash = h ^ x->e.name_len};
    return true;
}

/* Grow the entries and their records to ncap; false when refused. */
static bool grow_entries(struct scan_result *r, size_t ncap)
{
    size_t eb = ncap * sizeof(struct scan_entry), ab = ncap * sizeof(struct sc_aux);
    struct scan_entry *ne = sc_mem_grow(r->entries, r->entries_bytes, eb);
    if (ne == NULL)
        return false;
    r->entries = ne;
    r->entries_bytes = eb;
    struct sc_aux *na = sc_mem_grow(r->aux, r->aux_bytes, ab);
    if (na == NULL) {
        if (r->entries_cap == 0) { /* a first try: start again from nothing */
            sc_mem_release(r->entries, r->entries_bytes);
            r->entries = NULL;
            r->entries_bytes = 0;
        }
        return false; /* else the entries keep their larger mapping, harmlessly */
    }
    r->aux = na;
    r->aux_bytes = ab;
    r->entries_cap = ncap;
    return true;
}

/*
 * A file's block is cleared when it is created and its first writeback
 * raises the counter (SPEC-10), so a file entry with counter 0 holds no
 * data pointer and size 0.  One whose size is 0 but whose data pointer has
 * a single bit set is that 0 with a bit flipped: followed, it names
 * another write's tree (2012:642 state 459, bit 6 of byte 24 of block 69:
 * /a0023.tar.gz, never written back, then named 64, the top of
 * /zz0022.txt's cut-off write, and took its 13,290 bytes).  The entry
 * keeps 0 as its data pointer, and the pointer as read is noted for
 * FILE_DATA_UNWRITTEN.  (Were the counter the flipped field, the file
 * would still hold no byte: its size is 0.)  A deleted entry, a free block
 * with nothing to repair, gets the pointer back with no finding once the
 * analysis is done (sc_counters_pass).
 */
static bool unwritten_pointer(struct scan_result *r, uint64_t blk, struct scan_entry_fields *f)
{
    if (f->type != LANYFS_TYPE_FILE || f->wrcnt != 0 || f->size != 0 || !sc_one_bit(f->subtree))
        return true;
    if (r->nunwritten == r->unwritten_cap) {
        struct sc_unwritten_ptr *n = sc_grow(r->unwritten, &r->unwritten_cap, sizeof(*n), 8);
        if (n == NULL)
            return sc_oom(r);
        r->unwritten = n;
    }
    r->unwritten[r->nunwritten++] = (struct sc_unwritten_ptr){blk, f->subtree};
    f->subtree = 0;
    return true;
}

uint32_t sc_entry_add(struct scan_result *r, uint64_t blk, const struct lanyfs_entry *e,
                      enum scan_entry_state state, uint32_t parent, const char *dirpath)
{
    if (r->nentries >= UINT32_MAX - 1) {
        sc_oom(r);
        return 0;
    }
    if (r->nentries == r->entries_cap) {
        /* Where sc_mem_grow maps lazily, the first mappings are sized for
         * an entry in every block (up to ENTRIES_FIRST): address space
         * only, faulted in as they fill, and not moved while the helper
         * fills them ahead (prefault.c).  When that much address space is
         * refused, they start small and double. */
        size_t ncap = r->entries_cap ? r->entries_cap * 2 : 64;
        size_t big = r->nblocks + 1 < ENTRIES_FIRST ? (size_t)r->nblocks + 1 : ENTRIES_FIRST;
        bool grown = r->entries_cap == 0 && big > ncap && sc_mem_lazy() && grow_entries(r, big);
        if (!grown && (ncap > SIZE_MAX / sizeof(struct scan_entry) || !grow_entries(r, ncap))) {
            sc_oom(r);
            return 0;
        }
    }
    char *path = pool_path(r, dirpath, e->name, e->name_len);
    size_t nl = e->name_len < LANYFS_NAME_FIELD ? e->name_len : LANYFS_NAME_FIELD;
    uint8_t *name = pool_take(r, &r->paths, SC_PF_PATHS, nl + 1, 1);
    if (path == NULL || name == NULL) {
        sc_oom(r);
        return 0;
    }
    memcpy(name, e->name, nl);
    name[nl] = 0;
    sc_prefault_need(r, SC_PF_ENTRIES, r->entries, (r->nentries + 1) * sizeof(r->entries[0]),
                     &r->entries_populated, r->entries_bytes);
    sc_prefault_need(r, SC_PF_AUX, r->aux, (r->nentries + 1) * sizeof(r->aux[0]),
                     &r->aux_populated, r->aux_bytes);
    struct scan_entry *x = &r->entries[r->nentries];
    /* Both arrays come zeroed (sc_mem_grow) and no slot is used twice. */
    x->id = (uint32_t)(r->nentries + 1);
    x->block = blk;
    x->parent = parent;
    x->state = state;
    x->e = (struct scan_entry_fields){
        .type = e->type, .res1 = e->res1, .wrcnt = e->wrcnt, .left = e->left, .right = e->right,
        .subtree = e->subtree, .size = e->size, .created = e->created, .modified = e->modified,
        .attr = e->attr, .name = name, .name_len = nl};
    x->path = path;
    if (x->e.wrcnt == 0 && !unwritten_pointer(r, blk, &x->e))
        return 0;
    if (!r->dupkeys_off && state == SCAN_ENTRY_LIVE && parent != 0 && !add_dupkey(r, x))
        return 0;
    if (lanyfs_entry_is_file(e))
        x->blocks_needed = lanyfs_geom_blocks_for_size(&r->g, e->size);
    r->nentries++;
    return x->id;
}

bool sc_entry_set_path(struct scan_result *r, uint32_t id, const char *dirpath)
{
    struct scan_entry *x = sc_entry(r, id);
    if (x == NULL)
        return true;
    char *p = pool_path(r, dirpath, x->e.name, x->e.name_len);
    if (p == NULL)
        return sc_oom(r);
    x->path = p;
    return true;
}

bool sc_entry_set_root_path(struct scan_result *r, uint32_t id)
{
    struct scan_entry *x = sc_entry(r, id);
    if (x == NULL)
        return true;
    char *p = pool_path(r, NULL, (const uint8_t *)"", 0);
    if (p == NULL)
        return sc_oom(r);
    x->path = p;
    return true;
}

const char *sc_kind_name(const struct scan_entry *x)
{
    return scan_entry_is_dir(x) ? "directory" : "file";
}

bool scan_entry_is_formatter_root(const struct scan_entry *x)
{
    struct lanyfs_entry e;
    scan_entry_fields(x, &e);
    return lanyfs_entry_is_formatter_root(&e);
}

void scan_entry_fields(const struct scan_entry *x, struct lanyfs_entry *out)
{
    const struct scan_entry_fields *e = &x->e;
    *out = (struct lanyfs_entry){
        .type = e->type, .res1 = e->res1, .wrcnt = e->wrcnt, .left = e->left, .right = e->right,
        .subtree = e->subtree, .size = e->size, .created = e->created, .modified = e->modified,
        .attr = e->attr};
    out->name_len = e->name_len < LANYFS_NAME_FIELD ? e->name_len : LANYFS_NAME_FIELD;
    if (e->name != NULL)
        memcpy(out->name, e->name, out->name_len);
}

bool sc_entries_remove(struct scan_result *r, const uint32_t *ids, size_t n)
{
    size_t total = r->nentries;
    if (n == 0 || total == 0)
        return true;
    uint32_t *to = calloc(total + 1, sizeof(*to)); /* old id -> new id, 0 = removed */
    if (to == NULL)
        return sc_oom(r);
    for (size_t i = 0; i < total; i++)
        to[i + 1] = 1;
    for (size_t j = 0; j < n; j++)
        if (ids[j] >= 1 && ids[j] <= total && r->entries[ids[j] - 1].state == SCAN_ENTRY_ORPHAN)
            to[ids[j]] = 0;
    uint32_t next = 0;
    for (size_t i = 1; i <= total; i++)
        if (to[i] != 0)
            to[i] = ++next;
    if (next == total) {
        free(to);
        return true;
    }
    for (uint64_t b = 0; b < r->nblocks; b++) {
        struct scan_block *c = &r->map[b];
        if (c->owner == 0 || c->owner > total)
            continue;
        if (to[c->owner] == 0) {
            c->cls = r->free_complete ? SCAN_BLK_LEAKED : SCAN_BLK_UNKNOWN;
            c->flags &= (uint8_t)~(SCAN_BF_METADATA | SC_BF_SCRATCH);
            c->owner = 0;
            c->index = 0;
            c->wrcnt = 0;
        } else {
            c->owner = to[c->owner];
        }
    }
    for (size_t i = 0; i < r->nfindings; i++)
        if (r->findings[i].entry != 0 && r->findings[i].entry <= total)
            r->findings[i].entry = to[r->findings[i].entry];
    size_t k = 0;
    for (size_t i = 0; i < total; i++) {
        uint32_t id = (uint32_t)(i + 1);
        if (to[id] == 0) {
            sc_data_free(r, id);
            continue;
        }
        if (k != i) {
            r->entries[k] = r->entries[i];
            r->aux[k] = r->aux[i];
        }
        r->entries[k].id = to[id];
        uint32_t p = r->entries[k].parent;
        r->entries[k].parent = p != 0 && p <= total ? to[p] : p;
        k++;
    }
    /* sc_entry_add takes zeroed slots. */
    memset(&r->entries[k], 0, (total - k) * sizeof(r->entries[0]));
    memset(&r->aux[k], 0, (total - k) * sizeof(r->aux[0]));
    r->nentries = k;
    free(to);
    return true;
}

bool sc_driver_files(const struct scan_result *r)
{
    for (size_t i = 0; i < r->nentries; i++)
        if (scan_entry_is_file(&r->entries[i]) &&
            (r->entries[i].e.attr & LANYFS_ATTR_NOEXEC) != 0)
            return true;
    return false;
}

void sc_entries_free(struct scan_result *r)
{
    for (size_t i = 0; i < r->nentries; i++)
        sc_data_free(r, r->entries[i].id);
    sc_pool_free(&r->paths);
    sc_pool_free(&r->lists);
    sc_stash_drop(r);
    free(r->dupkeys);
    r->dupkeys = NULL;
    r->ndupkeys = r->dupkeys_cap = 0;
    free(r->unwritten);
    r->unwritten = NULL;
    r->nunwritten = r->unwritten_cap = 0;
    free(r->wild);
    r->wild = NULL;
    r->nwild = r->wild_cap = 0;
    sc_mem_release(r->entries, r->entries_bytes);
    sc_mem_release(r->aux, r->aux_bytes);
    r->entries = NULL;
    r->aux = NULL;
    r->entries_bytes = r->aux_bytes = 0;
    r->entries_populated = r->aux_populated = 0;
    r->nentries = r->entries_cap = 0;
}
