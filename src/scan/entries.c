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
#include <sys/mman.h>
#include <unistd.h>

#include "scan_priv.h"

char *sc_path_join(const char *dirpath, const uint8_t *name, size_t name_len)
{
    size_t dl = dirpath ? strlen(dirpath) : 0;
    if (dl == 1 && dirpath[0] == '/')
        dl = 0;
    if (name_len > LANYFS_NAME_FIELD)
        name_len = LANYFS_NAME_FIELD;
    const char *prefix = dirpath;
    if (dl + 1 + name_len > SC_PATH_MAX) {
        prefix = "/...";
        dl = 4;
    }
    char *p = malloc(dl + 1 + name_len + 1);
    if (p == NULL)
        return NULL;
    if (dl > 0)
        memcpy(p, prefix, dl);
    p[dl] = '/';
    memcpy(p + dl + 1, name, name_len);
    p[dl + 1 + name_len] = '\0';
    return p;
}

/*
 * Fault in the next POPULATE_STEP bytes of a large array at once, when
 * entry n is the first to reach them.  A scan of 100,000 small files fills
 * about 40 MiB of entries; touched page by page that was 10,000 page
 * faults, two thirds of all the scan's.  One MADV_POPULATE_WRITE per step
 * does them in the kernel (Linux 5.14 and later; elsewhere the call fails
 * and the pages fault in as before), and fills no more than a step ahead
 * of the entries, so the array's capacity stays untouched until used.
 */
#define POPULATE_STEP ((size_t)1 << 20)

static void populate_ahead(void *base, size_t n, size_t size, size_t cap)
{
#ifdef MADV_POPULATE_WRITE
    size_t step = (n * size) / POPULATE_STEP;
    if (n > 0 && ((n - 1) * size) / POPULATE_STEP == step)
        return; /* entry n lies in a step populated already */
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096;
    size_t to = (step + 1) * POPULATE_STEP < cap * size ? (step + 1) * POPULATE_STEP : cap * size;
    uintptr_t a = ((uintptr_t)base + n * size + page - 1) & ~(page - 1);
    uintptr_t e = ((uintptr_t)base + to) & ~(page - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE); /* advice; failure is harmless */
#else
    (void)base;
    (void)n;
    (void)size;
    (void)cap;
#endif
}

uint32_t sc_entry_add(struct scan_result *r, uint64_t blk, const struct lanyfs_entry *e,
                      enum scan_entry_state state, uint32_t parent, const char *dirpath)
{
    if (r->nentries >= UINT32_MAX - 1) {
        sc_oom(r);
        return 0;
    }
    if (r->nentries == r->entries_cap) {
        size_t ncap = r->entries_cap ? r->entries_cap * 2 : 64;
        struct scan_entry *ne = realloc(r->entries, ncap * sizeof(*ne));
        if (ne == NULL) {
            sc_oom(r);
            return 0;
        }
        r->entries = ne;
        struct sc_aux *na = realloc(r->aux, ncap * sizeof(*na));
        if (na == NULL) {
            sc_oom(r);
            return 0;
        }
        r->aux = na;
        r->entries_cap = ncap;
    }
    char *path = sc_path_join(dirpath, e->name, e->name_len);
    if (path == NULL) {
        sc_oom(r);
        return 0;
    }
    populate_ahead(r->entries, r->nentries, sizeof(r->entries[0]), r->entries_cap);
    populate_ahead(r->aux, r->nentries, sizeof(r->aux[0]), r->entries_cap);
    struct scan_entry *x = &r->entries[r->nentries];
    memset(x, 0, sizeof(*x));
    memset(&r->aux[r->nentries], 0, sizeof(r->aux[0]));
    x->id = (uint32_t)(r->nentries + 1);
    x->block = blk;
    x->parent = parent;
    x->state = state;
    x->e = *e;
    x->path = path;
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
    char *p = sc_path_join(dirpath, x->e.name, x->e.name_len);
    if (p == NULL)
        return sc_oom(r);
    free(x->path);
    x->path = p;
    return true;
}

const char *sc_kind_name(const struct lanyfs_entry *e)
{
    return lanyfs_entry_is_dir(e) ? "directory" : "file";
}

void sc_entries_free(struct scan_result *r)
{
    for (size_t i = 0; i < r->nentries; i++) {
        free(r->entries[i].path);
        free(r->entries[i].data);
    }
    free(r->entries);
    free(r->aux);
    r->entries = NULL;
    r->aux = NULL;
    r->nentries = r->entries_cap = 0;
}
