/*
 * fake_scan.c -- scan.h over results built by hand (contract in fake_scan.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_scan.h"

struct scan_result {
    struct lanyfs_geom geom;       /* the geometry */
    bool have_geom;                /* scan_geom gives geom */
    struct lanyfs_super sb;        /* the superblock */
    bool have_sb;                  /* scan_super gives sb */
    bool inferred;                 /* scan_geom_inferred */
    uint64_t image_bytes;          /* scan_image_bytes */
    struct scan_finding *findings; /* owned, with their strings */
    size_t nfind;
    size_t capfind;
    struct scan_entry *ents;       /* owned, with path and data */
    size_t nent;
    size_t capent;
    struct scan_block *map;        /* one cell per block */
    uint64_t nmap;
    struct scan_lost_tree *lost;   /* owned, with data and exts */
    size_t nlost;
    size_t caplost;
};

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (q == NULL) {
        fputs("fake_scan: out of memory\n", stderr);
        abort();
    }
    return q;
}

static char *xstrdup(const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

struct scan_result *fake_new(unsigned blockbits, unsigned addrlen, uint64_t blocks)
{
    struct scan_result *r = xrealloc(NULL, sizeof(*r));
    memset(r, 0, sizeof(*r));
    if (lanyfs_geom_init(&r->geom, blockbits, addrlen, blocks, NULL) != LANYFS_OK) {
        free(r);
        return NULL;
    }
    r->have_geom = true;
    r->have_sb = true;
    r->sb.type = LANYFS_TYPE_SUPER;
    r->sb.wrcnt = 2;
    r->sb.magic = LANYFS_MAGIC;
    r->sb.major = 1;
    r->sb.minor = 4;
    r->sb.blockbits = (uint8_t)blockbits;
    r->sb.addrlen = (uint8_t)addrlen;
    r->sb.rootdir = 1;
    r->sb.blocks = blocks;
    r->image_bytes = blocks << blockbits;
    r->nmap = blocks;
    r->map = xrealloc(NULL, (size_t)blocks * sizeof(*r->map) + 1);
    memset(r->map, 0, (size_t)blocks * sizeof(*r->map));
    return r;
}

void fake_no_super(struct scan_result *r)
{
    r->have_sb = false;
}

void fake_no_geom(struct scan_result *r)
{
    r->have_geom = false;
}

void fake_set_inferred(struct scan_result *r, bool inferred)
{
    r->inferred = inferred;
}

struct lanyfs_super *fake_super(struct scan_result *r)
{
    return &r->sb;
}

uint32_t fake_entry(struct scan_result *r, uint64_t block, uint32_t parent,
                    enum scan_entry_state state, uint8_t type, const void *name,
                    size_t name_len, const char *path, uint64_t size, const uint64_t *data,
                    uint64_t ndata)
{
    if (r->nent == r->capent) {
        r->capent = r->capent ? r->capent * 2 : 16;
        r->ents = xrealloc(r->ents, r->capent * sizeof(*r->ents));
    }
    struct scan_entry *e = &r->ents[r->nent++];
    memset(e, 0, sizeof(*e));
    e->id = (uint32_t)r->nent;
    e->block = block;
    e->parent = parent;
    e->state = state;
    e->e.type = type;
    e->e.size = size;
    e->e.wrcnt = 1;
    if (name_len > LANYFS_NAME_FIELD)
        name_len = LANYFS_NAME_FIELD;
    uint8_t *nm = xrealloc(NULL, name_len + 1);
    memcpy(nm, name, name_len);
    nm[name_len] = 0;
    e->e.name = nm;
    e->e.name_len = name_len;
    e->path = xstrdup(path);
    if (type == LANYFS_TYPE_FILE && r->have_geom)
        e->blocks_needed = lanyfs_geom_blocks_for_size(&r->geom, size);
    if (ndata != 0) {
        e->data = xrealloc(NULL, (size_t)ndata * sizeof(*e->data));
        memcpy(e->data, data, (size_t)ndata * sizeof(*e->data));
        e->ndata = ndata;
        for (uint64_t i = 0; i < ndata; i++)
            e->blocks_mapped += data[i] != 0;
        e->blocks_intact = e->blocks_mapped;
    }
    return e->id;
}

struct scan_entry *fake_last_entry(struct scan_result *r)
{
    return r->nent ? &r->ents[r->nent - 1] : NULL;
}

void fake_finding(struct scan_result *r, uint32_t code, uint32_t entry, uint64_t block,
                  uint64_t block2, uint64_t value, uint64_t value2, uint64_t count,
                  uint64_t count2, const char *path, const char *text)
{
    if (r->nfind == r->capfind) {
        r->capfind = r->capfind ? r->capfind * 2 : 16;
        r->findings = xrealloc(r->findings, r->capfind * sizeof(*r->findings));
    }
    r->findings[r->nfind++] = (struct scan_finding){
        .code = code, .entry = entry, .block = block, .block2 = block2, .value = value,
        .value2 = value2, .count = count, .count2 = count2, .path = xstrdup(path),
        .text = xstrdup(text),
    };
}

/* A copy of n values (NULL when n is 0). */
static uint64_t *dup_u64(const uint64_t *v, uint64_t n)
{
    if (n == 0)
        return NULL;
    uint64_t *d = xrealloc(NULL, (size_t)n * sizeof(*d));
    return memcpy(d, v, (size_t)n * sizeof(*d));
}

void fake_lost_tree(struct scan_result *r, uint64_t top, uint32_t entry, uint64_t size,
                    const uint64_t *data, uint64_t ndata, const uint64_t *exts, uint64_t nexts)
{
    if (r->nlost == r->caplost) {
        r->caplost = r->caplost ? r->caplost * 2 : 4;
        r->lost = xrealloc(r->lost, r->caplost * sizeof(*r->lost));
    }
    struct scan_lost_tree *t = &r->lost[r->nlost++];
    *t = (struct scan_lost_tree){.top = top, .entry = entry, .size = size,
                                 .data = dup_u64(data, ndata), .ndata = ndata,
                                 .exts = dup_u64(exts, nexts), .nexts = nexts};
    for (uint64_t i = 0; i < ndata; i++)
        t->mapped += data[i] != 0;
}

void fake_block(struct scan_result *r, uint64_t blk, enum scan_class cls, uint8_t flags,
                uint16_t wrcnt, uint32_t owner, uint64_t index)
{
    if (blk >= r->nmap)
        abort();
    r->map[blk] = (struct scan_block){.cls = (uint8_t)cls, .flags = flags, .wrcnt = wrcnt,
                                      .owner = owner, .index = index};
}

/* ---- scan.h ---------------------------------------------------------------- */

void scan_result_free(struct scan_result *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->nfind; i++) {
        free(r->findings[i].path);
        free(r->findings[i].text);
    }
    for (size_t i = 0; i < r->nent; i++) {
        free(r->ents[i].path);
        free((void *)r->ents[i].e.name);
        free(r->ents[i].data);
    }
    for (size_t i = 0; i < r->nlost; i++) {
        free(r->lost[i].data);
        free(r->lost[i].exts);
    }
    free(r->findings);
    free(r->ents);
    free(r->map);
    free(r->lost);
    free(r);
}

const struct lanyfs_geom *scan_geom(const struct scan_result *r)
{
    return r->have_geom ? &r->geom : NULL;
}

const struct lanyfs_super *scan_super(const struct scan_result *r)
{
    return r->have_sb ? &r->sb : NULL;
}

bool scan_geom_inferred(const struct scan_result *r)
{
    return r->inferred;
}

uint64_t scan_image_bytes(const struct scan_result *r)
{
    return r->image_bytes;
}

size_t scan_findings(const struct scan_result *r, const struct scan_finding **out)
{
    *out = r->findings;
    return r->nfind;
}

size_t scan_entries(const struct scan_result *r, const struct scan_entry **out)
{
    *out = r->ents;
    return r->nent;
}

const struct scan_entry *scan_entry_by_id(const struct scan_result *r, uint32_t id)
{
    for (size_t i = 0; i < r->nent; i++)
        if (r->ents[i].id == id)
            return &r->ents[i];
    return NULL;
}

size_t scan_lost_trees(const struct scan_result *r, const struct scan_lost_tree **out)
{
    *out = r->lost;
    return r->nlost;
}

const struct scan_lost_tree *scan_lost_tree_of(const struct scan_result *r, uint32_t entry)
{
    for (size_t i = 0; entry != 0 && i < r->nlost; i++)
        if (r->lost[i].entry == entry)
            return &r->lost[i];
    return NULL;
}

uint64_t scan_block_count(const struct scan_result *r)
{
    return r->nmap;
}

const struct scan_block *scan_blocks(const struct scan_result *r)
{
    return r->map;
}

void scan_summarize(const struct scan_result *r, struct scan_summary *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < r->nent; i++) {
        const struct scan_entry *e = &r->ents[i];
        if (e->state == SCAN_ENTRY_DELETED) {
            out->deleted++;
        } else if (e->state == SCAN_ENTRY_ORPHAN) {
            out->orphans++;
        } else if (e->e.type == LANYFS_TYPE_DIR) {
            out->dirs++;
        } else {
            out->files++;
            out->bytes += e->e.size;
        }
    }
    for (uint64_t b = 0; b < r->nmap; b++) {
        if (r->map[b].cls < SCAN_BLK_CLASSES)
            out->by_class[r->map[b].cls]++;
        if (r->map[b].cls == SCAN_BLK_FREE || r->map[b].cls == SCAN_BLK_CHAIN)
            out->free_listed++;
    }
    out->worst = SCAN_SEV_INFO;
    for (size_t i = 0; i < r->nfind; i++) {
        const struct scan_problem_info *p = scan_problem_lookup(r->findings[i].code);
        enum scan_severity s = p != NULL ? p->severity : SCAN_SEV_ERROR;
        out->findings_by_severity[s]++;
        if (s > out->worst)
            out->worst = s;
    }
}

const char *scan_class_name(enum scan_class c)
{
    static const char *const names[SCAN_BLK_CLASSES] = {
        "unknown", "super", "dir", "file", "extender", "data", "chain", "free", "leaked",
        "orphan", "deleted", "unreadable", "beyond", "orphan-extender",
    };
    return (unsigned)c < SCAN_BLK_CLASSES ? names[c] : "invalid";
}

const char *scan_entry_state_name(enum scan_entry_state s)
{
    switch (s) {
    case SCAN_ENTRY_LIVE:
        return "live";
    case SCAN_ENTRY_DELETED:
        return "deleted";
    case SCAN_ENTRY_ORPHAN:
        return "orphan";
    }
    return "invalid";
}

char *scan_finding_message(const struct scan_finding *f)
{
    const struct scan_problem_info *p = scan_problem_lookup(f->code);
    const char *t = p != NULL ? p->message : "unknown problem {value}";
    size_t cap = strlen(t) + 1, len = 0;
    char *out = xrealloc(NULL, cap);
    while (*t) {
        char buf[32];
        const char *add = NULL;
        size_t skip = 1;
        if (*t == '{') {
            static const char *const keys[] = {"{block}", "{block2}", "{value}", "{value2}",
                                               "{count}", "{count2}", "{path}", "{text}"};
            const uint64_t vals[] = {f->block, f->block2, f->value, f->value2, f->count,
                                     f->count2};
            for (size_t k = 0; k < 8 && add == NULL; k++) {
                if (strncmp(t, keys[k], strlen(keys[k])) != 0)
                    continue;
                skip = strlen(keys[k]);
                if (k < 6) {
                    snprintf(buf, sizeof(buf), "%" PRIu64, vals[k]);
                    add = buf;
                } else {
                    add = k == 6 ? f->path : f->text;
                    if (add == NULL)
                        add = "?";
                }
            }
        }
        if (add == NULL) {
            buf[0] = *t;
            buf[1] = '\0';
            add = buf;
            skip = 1;
        }
        size_t n = strlen(add);
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            out = xrealloc(out, cap);
        }
        memcpy(out + len, add, n);
        len += n;
        t += skip;
    }
    out[len] = '\0';
    return out;
}

/* The fake has no catalogue of its own: the translated message is the English one. */
char *scan_finding_message_translated(const struct scan_finding *f)
{
    return scan_finding_message(f);
}
