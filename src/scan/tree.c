/*
 * tree.c -- pass 1 of the scan: every directory tree from the root (SPEC-§5).
 *
 * One iterative depth-first walk over every link the disk has: a
 * directory's subtree pointer and every node's left and right links.  The
 * explicit stack holds one frame per node on the current path; a node's
 * cell carries SC_BF_ACTIVE while it is on that path, and its claim (as a
 * live directory or file) is the visited set, so the walk reaches every
 * block at most once, whatever the disk links.  Checks, each naming the
 * block:
 *  - SB_ROOT_NOT_DIR: the root block is no directory (another root is then
 *    searched for, infer.c); TREE_UNREADABLE for a block that cannot be read;
 *  - TREE_PTR_RANGE: a link beyond the device end;
 *  - TREE_PTR_TYPE: a link to a block that is no directory or file;
 *  - TREE_CYCLE: a link back to a node on the current path;
 *  - a second link to a node already reached: marks.c decides between
 *    TREE_REACHED_TWICE and a failed rename (MARK_RENAME_TWO_TREES);
 *  - a link to a chain block or a freed block of the free list: marks.c
 *    decides between a frozen parent (MARK_FROZEN_PARENT), an entry that
 *    became a chain block (MARK_ENTRY_BECAME_CHAIN) and a block listed free
 *    while in use (FREE_SLOT_IN_USE); a freed entry reached that way is
 *    recorded as deleted and walked through to the live siblings below it,
 *    and what lies below it is exempt from the order and twice-reached
 *    checks (the driver rewrote those links around it);
 *  - TREE_ORDER: a name outside the bounds its ancestors set (the reversed
 *    order: greater names left);
 *  - TREE_NAME_EMPTY, TREE_NAME_NO_NUL, TREE_NAME_SLASH, TREE_TIME_INVALID;
 *  - TREE_TOO_DEEP: directories nested deeper than SC_DEPTH_MAX are not
 *    entered (their entries are then found by the sweep as orphans);
 *  - TREE_DUP_NAME (sc_tree_dups): two live entries of one directory with
 *    one name, found by sorting, so a disordered tree cannot hide them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

struct tframe {
    uint32_t id;    /* the node's entry */
    uint32_t dir;   /* the directory whose tree holds it, 0 for the root */
    uint32_t lo;    /* its name must be greater than this entry's, 0 = no bound */
    uint32_t hi;    /* its name must be smaller than this entry's, 0 = no bound */
    uint32_t depth; /* nesting of dir: 0 for the root itself, 1 for its entries */
    uint8_t next;   /* next link to follow: 0 subtree, 1 right, 2 left, 3 done */
    bool stale;     /* reached through a freed node */
};

struct tstack {
    struct tframe *v; /* frames */
    size_t n;         /* used */
    size_t cap;       /* allocated */
};

static bool push(struct scan_result *r, struct tstack *s, const struct tframe *f)
{
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        struct tframe *nv = realloc(s->v, ncap * sizeof(*nv));
        if (nv == NULL)
            return sc_oom(r);
        s->v = nv;
        s->cap = ncap;
    }
    s->v[s->n++] = *f;
    struct scan_entry *e = sc_entry(r, f->id);
    if (e != NULL && e->block < r->nblocks)
        r->map[e->block].flags |= SC_BF_ACTIVE;
    return true;
}

static bool check_time(struct scan_result *r, uint32_t id, const char *field,
                       const struct lanyfs_ts *ts)
{
    if (sc_ts_ok(ts))
        return true;
    struct scan_entry *x = sc_entry(r, id);
    char buf[80];
    lanyfs_ts_format(ts, buf, sizeof(buf));
    return sc_report(r,
                     &(struct scan_finding){.code = SCAN_PR_TREE_TIME_INVALID, .entry = id,
                                            .block = x->block},
                     x->path, "%s %s", field, buf);
}

/* Name, time and order checks of a node just reached. */
static bool check_node(struct scan_result *r, uint32_t id, const struct tframe *child)
{
    struct scan_entry *x = sc_entry(r, id);
    struct scan_finding f = {.entry = id, .block = x->block};
    const struct scan_entry_fields *e = &x->e;
    if (e->name_len == 0) {
        f.code = SCAN_PR_TREE_NAME_EMPTY;
        if (!sc_report(r, &f, x->path, NULL))
            return false;
    } else if (e->name_len > LANYFS_NAME_MAX) {
        f.code = SCAN_PR_TREE_NAME_NO_NUL;
        if (!sc_report(r, &f, x->path, NULL))
            return false;
    }
    if (memchr(e->name, '/', e->name_len) != NULL) {
        f.code = SCAN_PR_TREE_NAME_SLASH;
        if (!sc_report(r, &f, x->path, NULL))
            return false;
    }
    if (!check_time(r, id, "created", &e->created) ||
        !check_time(r, id, "modified", &e->modified))
        return false;
    if (child->stale)
        return true;
    x = sc_entry(r, id);
    const struct scan_entry *lo = sc_entry(r, child->lo), *hi = sc_entry(r, child->hi);
    bool bad = false;
    if (lo != NULL && lanyfs_name_cmp(lo->e.name, x->e.name, x->e.name_len) > 0) {
        bad = true;
        f.block2 = lo->block;
    }
    if (hi != NULL && lanyfs_name_cmp(hi->e.name, x->e.name, x->e.name_len) < 0) {
        bad = true;
        f.block2 = hi->block;
    }
    if (bad) {
        f.code = SCAN_PR_TREE_ORDER;
        return sc_mark_tree_anomaly(r, &f, x->path, NULL);
    }
    return true;
}

static const char *dir_path(struct scan_result *r, uint32_t dir)
{
    struct scan_entry *d = sc_entry(r, dir);
    return d && d->path ? d->path : "/";
}

/* Follow one link of the node in frame f (a copy: the stack may move). */
static bool follow(struct scan_result *r, struct tstack *s, const struct tframe *f,
                   enum sc_link kind, uint64_t L, struct tframe *child, uint8_t *b)
{
    struct scan_entry *src = sc_entry(r, f->id);
    uint64_t src_blk = src->block;
    struct lanyfs_error err;
    struct lanyfs_entry e;

    if (L >= r->dev_blocks)
        return sc_report(r,
                         &(struct scan_finding){.code = SCAN_PR_TREE_PTR_RANGE, .entry = f->id,
                                                .block = src_blk, .block2 = L},
                         src->path, NULL);
    struct scan_block *c = sc_cell(r, L);
    if (c == NULL)
        return sc_report(r,
                         &(struct scan_finding){.code = SCAN_PR_TREE_UNREADABLE, .entry = f->id,
                                                .block = L},
                         src->path, "block %" PRIu64 " lies beyond the end of the image", L);
    if (c->flags & SC_BF_ACTIVE)
        return sc_mark_tree_anomaly(r,
                                    &(struct scan_finding){.code = SCAN_PR_TREE_CYCLE,
                                                           .entry = f->id, .block = src_blk,
                                                           .block2 = L},
                                    src->path, NULL);
    switch ((enum scan_class)c->cls) {
    case SCAN_BLK_DIR:
    case SCAN_BLK_FILE:
    case SCAN_BLK_DELETED: {
        uint32_t first = c->owner;
        struct sc_aux *fa = sc_aux(r, first);
        struct scan_entry *fe = sc_entry(r, first);
        if (fe == NULL || f->stale || (fa != NULL && fa->via_stale))
            return true; /* links the driver rewrote around a freed node */
        char *p2 = sc_path_join(dir_path(r, child->dir), fe->e.name, fe->e.name_len);
        if (p2 == NULL)
            return sc_oom(r);
        bool ok = sc_mark_reached_twice(r, first, child->dir, p2, src_blk);
        free(p2);
        return ok;
    }
    case SCAN_BLK_CHAIN:
        if (sc_read(r, L, b, &err) != LANYFS_OK)
            b[0] = 0;
        return sc_mark_stale_link(r, f->id, kind, L, true, b[0]);
    case SCAN_BLK_UNKNOWN:
    case SCAN_BLK_FREE:
        break;
    default:
        return true;
    }

    bool freed = c->cls == SCAN_BLK_FREE;
    uint64_t listing = c->index;
    if (sc_read(r, L, b, &err) != LANYFS_OK)
        return sc_report(r,
                         &(struct scan_finding){.code = SCAN_PR_TREE_UNREADABLE, .entry = f->id,
                                                .block = L},
                         src->path, "%s", err.msg);
    lanyfs_entry_decode(&e, b);
    bool is_entry = e.type == LANYFS_TYPE_DIR || e.type == LANYFS_TYPE_FILE;
    if (freed) {
        if (!sc_mark_stale_link(r, f->id, kind, L, false, e.type))
            return false;
        if (!is_entry)
            return true;
    } else if (!is_entry && sc_probe_chain(&r->g, r->dev_blocks, b)) {
        /* A chain block the free list no longer reaches (it was cut off). */
        return sc_mark_stale_link(r, f->id, kind, L, true, e.type);
    } else if (!is_entry) {
        return sc_mark_tree_anomaly(r,
                                    &(struct scan_finding){.code = SCAN_PR_TREE_PTR_TYPE,
                                                           .entry = f->id, .block = src_blk,
                                                           .block2 = L, .value = e.type},
                                    src->path, NULL);
    }
    uint32_t id = sc_entry_add(r, L, &e, freed ? SCAN_ENTRY_DELETED : SCAN_ENTRY_LIVE, child->dir,
                               dir_path(r, child->dir));
    if (id == 0)
        return false;
    if (freed) {
        c->cls = SCAN_BLK_DELETED;
        c->flags &= (uint8_t)~SC_BF_CHECKED;
        c->owner = id;
        c->index = listing;
    } else {
        if (sc_claim(r, L, lanyfs_entry_is_dir(&e) ? SCAN_BLK_DIR : SCAN_BLK_FILE, id, 0) ==
            SC_CLAIM_OK)
            sc_counter_torn_early(r, L, b);
        if (lanyfs_entry_is_file(&e))
            sc_stash_top(r, id);
    }
    sc_map_meta(r, L, e.wrcnt);
    struct sc_aux *a = sc_aux(r, id);
    a->from = src_blk;
    a->link = (uint8_t)kind;
    a->depth = child->depth;
    a->via_stale = child->stale || freed;
    child->id = id;
    child->stale = child->stale || freed;
    child->next = freed ? 1 : 0; /* a freed node's own subtree is not followed */
    if (!check_node(r, id, child))
        return false;
    return push(r, s, child);
}

/*
 * The root the scan took by searching the blocks (SB_ROOT_SEARCHED): the
 * formatter's LANYFSROOT, or, when none is left, the unlinked directory
 * with the most entries below it, which may well be a former subdirectory
 * whose files now show at '/'.
 */
static bool report_searched_root(struct scan_result *r, uint64_t root,
                                 const struct lanyfs_entry *e)
{
    char path[2 + sizeof(e->name)];
    size_t len = e->name_len < sizeof(e->name) ? e->name_len : sizeof(e->name);
    path[0] = '/';
    memcpy(path + 1, e->name, len);
    path[1 + len] = '\0';
    return sc_report(r, &(struct scan_finding){.code = SCAN_PR_SB_ROOT_SEARCHED, .block = root},
                     path, "%s",
                     lanyfs_entry_is_formatter_root(e)
                         ? "the formatter's root directory"
                           : "no LANYFSROOT is left; the unlinked directory with the most entries "
                             "below it, perhaps a former subdirectory");
}

static bool start_root(struct scan_result *r, struct tstack *s, uint8_t *b)
{
    struct lanyfs_error err;
    struct lanyfs_entry e;
    uint64_t root = r->rootdir;
    bool searched = root == 0;
    if (root == 0)
        root = sc_find_root(r, 0);
    if (root == 0 || sc_stopped(r))
        return !sc_stopped(r);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (root >= r->nblocks || sc_read(r, root, b, &err) != LANYFS_OK) {
            if (root >= r->nblocks)
                lanyfs_fail(&err, LANYFS_E_TRUNCATED, root,
                            "block %" PRIu64 " lies beyond the end of the image", root);
            return sc_report(r,
                             &(struct scan_finding){.code = SCAN_PR_TREE_UNREADABLE,
                                                    .block = root},
                             "/", "%s", err.msg);
        }
        lanyfs_entry_decode(&e, b);
        if (e.type == LANYFS_TYPE_DIR)
            break;
        if (attempt == 0 &&
            !sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_SB_ROOT_NOT_DIR, .block = root,
                                              .value = e.type},
                       NULL, NULL))
            return false;
        uint64_t alt = attempt == 0 ? sc_find_root(r, root) : 0;
        if (alt == 0)
            return !sc_stopped(r);
        root = alt;
        searched = true;
    }
    if (searched && !report_searched_root(r, root, &e))
        return false;
    r->rootdir = root;
    uint32_t id = sc_entry_add(r, root, &e, SCAN_ENTRY_LIVE, 0, NULL);
    if (id == 0)
        return false;
    if (!sc_entry_set_root_path(r, id))
        return false;
    struct scan_block *c = sc_cell(r, root);
    if (c->cls == SCAN_BLK_FREE || c->cls == SCAN_BLK_CHAIN) {
        char what[96];
        sc_owner_phrase(r, c, what, sizeof(what));
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_FREE_SLOT_IN_USE, .entry = id,
                                              .block = c->cls == SCAN_BLK_FREE ? c->index : root,
                                              .block2 = root},
                       "/", "the root directory"))
            return false;
    }
    sc_claim_over(r, root, SCAN_BLK_DIR, id, 0);
    sc_counter_torn_early(r, root, b);
    sc_map_meta(r, root, e.wrcnt);
    if (!check_time(r, id, "created", &e.created) || !check_time(r, id, "modified", &e.modified))
        return false;
    struct tframe f = {.id = id, .dir = 0, .depth = 0, .next = 0};
    return push(r, s, &f);
}

bool sc_tree_pass(struct scan_result *r)
{
    struct tstack s = {0};
    uint8_t *b = malloc(r->g.blocksize);
    bool ok = false;
    uint64_t steps = 0;
    if (b == NULL)
        return sc_oom(r);
    sc_progress(r, SCAN_PHASE_TREE, 0, 0);
    if (!start_root(r, &s, b))
        goto out;
    uint32_t root_id = s.n ? s.v[0].id : 0;
    while (s.n > 0) {
        if ((++steps & 1023) == 0) {
            if (sc_stopped(r))
                goto out;
            sc_progress(r, SCAN_PHASE_TREE, r->nentries, 0);
        }
        struct tframe f = s.v[s.n - 1];
        if (f.next > 2) {
            struct scan_entry *x = sc_entry(r, f.id);
            if (x->block < r->nblocks)
                r->map[x->block].flags &= (uint8_t)~SC_BF_ACTIVE;
            s.n--;
            continue;
        }
        uint8_t which = s.v[s.n - 1].next++;
        const struct scan_entry *x = sc_entry(r, f.id);
        struct tframe child = f;
        enum sc_link kind;
        uint64_t L;
        if (which == 0) {
            if (!scan_entry_is_dir(x) || x->state != SCAN_ENTRY_LIVE)
                continue;
            L = x->e.subtree;
            kind = SC_LINK_SUBTREE;
            child.dir = f.id;
            child.lo = child.hi = 0;
            child.depth = f.depth + 1;
            child.stale = false; /* a directory's own tree is its own */
            if (L != 0 && child.depth > SC_DEPTH_MAX) {
                if (!r->too_deep_reported) {
                    r->too_deep_reported = true;
                    if (!sc_report(r,
                                   &(struct scan_finding){.code = SCAN_PR_TREE_TOO_DEEP,
                                                          .entry = f.id, .block = x->block,
                                                          .count = SC_DEPTH_MAX},
                                   x->path, NULL))
                        goto out;
                }
                continue;
            }
        } else {
            if (f.id == root_id)
                continue; /* the root is in no tree: its own links mean nothing */
            L = which == 1 ? x->e.right : x->e.left;
            kind = which == 1 ? SC_LINK_RIGHT : SC_LINK_LEFT;
            if (which == 1)
                child.hi = f.id;
            else
                child.lo = f.id;
        }
        if (L == 0)
            continue;
        if (!follow(r, &s, &f, kind, L, &child, b))
            goto out;
    }
    ok = sc_tree_dups(r);
out:
    /* Leave no ACTIVE flag behind after a stop. */
    for (size_t i = 0; i < s.n; i++) {
        struct scan_entry *x = sc_entry(r, s.v[i].id);
        if (x != NULL && x->block < r->nblocks)
            r->map[x->block].flags &= (uint8_t)~SC_BF_ACTIVE;
    }
    free(s.v);
    free(b);
    return ok;
}

static int by_dir_name(const void *a, const void *b, void *ctx)
{
    const struct scan_result *r = ctx;
    const struct scan_entry *x = &r->entries[*(const uint32_t *)a - 1];
    const struct scan_entry *y = &r->entries[*(const uint32_t *)b - 1];
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    size_t n = x->e.name_len < y->e.name_len ? x->e.name_len : y->e.name_len;
    int c = memcmp(x->e.name, y->e.name, n);
    if (c != 0)
        return c;
    if (x->e.name_len != y->e.name_len)
        return x->e.name_len < y->e.name_len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Duplicate names are found by sorting small keys (directory, a hash of the
 * name, id), made by sc_entry_add for each live entry the walk found, while
 * the name was at hand (and only the keys keep_colliding keeps): 100,000 entries compared or even visited through
 * their 400-byte records cost more than the walk that found them.
 * Only a run of equal keys is sorted again by the names, so colliding
 * hashes, however many, cost a sort and not a comparison of every pair.
 * The pairs found are reported in the order of (directory, name, id).
 */
static int by_key(const void *a, const void *b)
{
    const struct sc_dupkey *x = a, *y = b;
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Only keys whose (directory, hash) another key shares can make a pair, and
 * among 100,000 names there are next to none: a table of the keys seen
 * (open addressing, twice as many slots as keys) finds them in one pass,
 * and only they are sorted.  They keep their order (by id), so what the
 * sort and the pairs make of them is what they made of all the keys.
 * Returns how many are kept at the front of keys; all of them when the
 * table cannot be had (the sort then does the whole work, as before).
 */
static size_t keep_colliding(struct sc_dupkey *keys, size_t n)
{
    size_t cap = 64;
    while (cap < 2 * n && cap <= SIZE_MAX / 4)
        cap *= 2;
    uint32_t *slot = n < UINT32_MAX ? calloc(cap, sizeof(*slot)) : NULL; /* key + 1 */
    uint8_t *hit = calloc(n ? n : 1, 1);
    size_t m = n;
    if (slot == NULL || hit == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = keys[i].hash ^ (keys[i].parent * 0x9e3779b97f4a7c15u);
        size_t at = (size_t)(h ^ (h >> 29)) & (cap - 1);
        for (; slot[at] != 0; at = (at + 1) & (cap - 1)) {
            const struct sc_dupkey *k = &keys[slot[at] - 1];
            if (k->parent == keys[i].parent && k->hash == keys[i].hash) {
                hit[slot[at] - 1] = hit[i] = 1;
                break;
            }
        }
        if (slot[at] == 0)
            slot[at] = (uint32_t)(i + 1);
    }
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (hit[i])
            keys[m++] = keys[i];
out:
    free(slot);
    free(hit);
    return m;
}

static bool same_name(const struct scan_entry *x, const struct scan_entry *y)
{
    return x->parent == y->parent && x->e.name_len == y->e.name_len &&
           memcmp(x->e.name, y->e.name, x->e.name_len) == 0;
}

bool sc_tree_dups(struct scan_result *r)
{
    size_t n = r->ndupkeys, npairs = 0;
    struct sc_dupkey *keys = r->dupkeys;
    uint32_t *run = malloc((n + 1) * sizeof(*run));
    uint32_t *pairs = NULL; /* (first, second) ids, twice npairs */
    size_t pairs_cap = 0;
    bool ok = true;
    r->dupkeys = NULL;
    r->ndupkeys = r->dupkeys_cap = 0;
    r->dupkeys_off = true;
    if (run == NULL) {
        free(keys);
        return sc_oom(r);
    }
    n = keep_colliding(keys, n);
    if (n > 0)
        qsort(keys, n, sizeof(*keys), by_key);
    for (size_t i = 0; i < n && ok;) {
        size_t j = i + 1;
        while (j < n && keys[j].parent == keys[i].parent && keys[j].hash == keys[i].hash)
            j++;
        if (j - i > 1) {
            size_t k = 0;
            for (size_t m = i; m < j; m++)
                run[k++] = keys[m].id;
            qsort_r(run, k, sizeof(*run), by_dir_name, r);
            for (size_t m = 1; m < k && ok; m++) {
                if (!same_name(&r->entries[run[m - 1] - 1], &r->entries[run[m] - 1]))
                    continue;
                if (npairs == pairs_cap) {
                    size_t ncap = pairs_cap ? pairs_cap * 2 : 16;
                    uint32_t *np = realloc(pairs, ncap * 2 * sizeof(*np));
                    if (np == NULL) {
                        ok = sc_oom(r);
                        break;
                    }
                    pairs = np;
                    pairs_cap = ncap;
                }
                pairs[2 * npairs] = run[m];
                pairs[2 * npairs + 1] = run[m - 1];
                npairs++;
            }
        }
        i = j;
    }
    /* Each pair leads with its second entry, the one reported: sorting the
     * pairs by it gives the order of (directory, name, id). */
    if (ok && npairs > 1)
        qsort_r(pairs, npairs, 2 * sizeof(*pairs), by_dir_name, r);
    for (size_t i = 0; i < npairs && ok; i++) {
        const struct scan_entry *y = &r->entries[pairs[2 * i] - 1];
        const struct scan_entry *x = &r->entries[pairs[2 * i + 1] - 1];
        ok = sc_mark_tree_anomaly(r,
                                  &(struct scan_finding){.code = SCAN_PR_TREE_DUP_NAME,
                                                         .entry = y->id, .block = x->block,
                                                         .block2 = y->block},
                                  y->path, NULL);
    }
    free(pairs);
    free(run);
    free(keys);
    return ok;
}
