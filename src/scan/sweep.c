/*
 * sweep.c -- pass 4 of the scan: every block of the device.
 *
 * Reads the device in runs of SWEEP_RUN blocks and accounts for every
 * block the walks did not reach, by its contents (probe.c):
 *  - past the device end, or past a 'blocks' too small (SB_BLOCKS_SMALL):
 *    beyond; past the image end of a truncated image: unreadable;
 *  - a block that cannot be read: unreadable, BLOCK_UNREADABLE (one
 *    finding a block up to SC_UNREADABLE_MAX, then one for the rest);
 *  - a free block holding an entry: a deleted entry (SPEC-§11);
 *  - an unreached entry: an orphan candidate;
 *  - an unreached chain block: leaked, remembered as a former chain block
 *    (a cut-off free list, SPEC-§9.3, judged by marks.c);
 *  - an unreached extender: an orphan extender (empty ones remembered for
 *    SPEC-§9.4 and §9.7);
 *  - anything else unreached: leaked when the free list was walked to its
 *    end, unknown when it was not (a block the list's lost part may list).
 * Blocks the walks claimed get the torn-sector check (counters.c).
 * Then:
 *  1. entries listed by a cut-off chain block are deleted, not orphaned
 *     (their free-list record is what was cut off);
 *  2. each deleted file's data: read from its extenders when they were
 *     freed with their slots intact (the correct writer); otherwise, as
 *     SPEC-§11 says of the driver, the non-zero slots just before its own
 *     slot in the chain block listing it, in file order, then the previous
 *     chain block's (freed extenders skipped); those still free and held by
 *     nobody else are intact; its leftover extenders (SPEC-§9.4) are
 *     adopted;
 *  3. orphans are linked: an orphan that another orphan's link reaches is
 *     that one's child (subtree) or sibling (left, right); the others are
 *     roots, named "/<name>", their children "/<orphan-dir>/<child>"
 *     (marks.c reports the roots); orphaned files' extender trees are walked.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scan_priv.h"

#define SWEEP_RUN_BYTES ((size_t)1 << 17)

static bool unreadable(struct scan_result *r, uint64_t blk, const char *msg, uint64_t *rest,
                       uint64_t *rest_first)
{
    r->map[blk].cls = SCAN_BLK_UNREADABLE;
    if (r->unreadable_reported >= SC_UNREADABLE_MAX) {
        if ((*rest)++ == 0)
            *rest_first = blk;
        return true;
    }
    r->unreadable_reported++;
    return sc_report(r, &(struct scan_finding){.code = SCAN_PR_BLOCK_UNREADABLE, .block = blk},
                     NULL, "%s", msg);
}

/* classify needs the block's bytes to judge it (else b may be NULL). */
static bool needs_bytes(const struct scan_result *r, uint64_t blk, const struct scan_block *c)
{
    bool entry;
    switch ((enum scan_class)c->cls) {
    case SCAN_BLK_FREE:
        /* The helper read it (freeread.c): only an entry needs the bytes. */
        return !sc_freeread_known(r, blk, &entry) || entry;
    case SCAN_BLK_UNKNOWN:
        return c->owner == 0 && blk < r->dev_blocks && blk < r->fs_blocks;
    default:
        return sc_counter_torn_needs(r, c);
    }
}

/* A read has shown blk can be read: a window of the walks, or the helper's
 * read of the free space. */
static bool read_before(const struct scan_result *r, uint64_t blk)
{
    bool entry;
    return sc_read_before(r, blk) || sc_freeread_known(r, blk, &entry);
}

bool sc_ext_name_slots(struct scan_result *r, const uint8_t *b)
{
    for (uint32_t k = 0; k < r->g.extmax; k++) {
        uint64_t s = lanyfs_ext_slot(&r->g, b, k);
        if (s != 0 && s < r->nblocks && !sc_cellbits_set(r, &r->ext_named, s))
            return false;
    }
    return true;
}

/*
 * An entry no walk reached, in block blk: deleted (the free list lists
 * it) or orphaned.  A link it read past the device (wild) and mended
 * (sc_probe_entry_tolerant) is noted for report_wild_links (correct:904
 * state 1128, bit 7 of byte 10 of block 6: the left link of the deleted
 * /zz0054.bin went past the device, the block read as no entry, and the
 * extender tree of its file lost its blocks to a cut-off write's).
 */
static bool add_unreached(struct scan_result *r, uint64_t blk, const struct lanyfs_entry *e,
                          enum scan_entry_state state, uint64_t wild)
{
    uint32_t id = sc_entry_add(r, blk, e, state, 0, NULL);
    if (id == 0)
        return false;
    struct scan_block *c = &r->map[blk];
    c->cls = state == SCAN_ENTRY_DELETED ? SCAN_BLK_DELETED : SCAN_BLK_ORPHAN;
    c->owner = id;
    sc_map_meta(r, blk, e->wrcnt);
    if (wild == 0)
        return true;
    if (r->nwild == r->wild_cap) {
        struct sc_wild_link *n = sc_grow(r->wild, &r->wild_cap, sizeof(*n), 8);
        if (n == NULL)
            return sc_oom(r);
        r->wild = n;
    }
    r->wild[r->nwild++] = (struct sc_wild_link){blk, wild};
    return true;
}

/* The mended links of the entries that stayed orphans, once their paths
 * are known: fsck writes the link so when it relinks the entry.  A
 * deleted entry's is only read so (a free block: nothing to repair). */
static bool report_wild_links(struct scan_result *r)
{
    for (size_t i = 0; i < r->nwild; i++) {
        uint64_t blk = r->wild[i].blk;
        const struct scan_block *c = sc_cell(r, blk);
        const struct scan_entry *x = c != NULL && c->cls == SCAN_BLK_ORPHAN ? sc_entry(r, c->owner)
                                                                             : NULL;
        if (x == NULL || x->block != blk)
            continue;
        uint64_t was = r->wild[i].was;
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_ORPHAN_LINK_FLIPPED,
                                              .entry = x->id, .block = blk, .block2 = was,
                                              .value = sc_link_unflipped(was, r->dev_blocks)},
                       x->path, NULL))
            return false;
    }
    return true;
}

/* Classify one block; b holds its bytes when needs_bytes says so. */
static bool classify(struct scan_result *r, uint64_t blk, const uint8_t *b)
{
    const struct lanyfs_geom *g = &r->g;
    struct scan_block *c = &r->map[blk];
    struct lanyfs_entry e;
    uint64_t wild;
    switch ((enum scan_class)c->cls) {
    case SCAN_BLK_DIR:
    case SCAN_BLK_FILE:
    case SCAN_BLK_EXTENDER:
    case SCAN_BLK_CHAIN:
        return sc_counter_torn(r, blk, b);
    case SCAN_BLK_FREE:
        if (b == NULL)
            return true;
        if (sc_probe_entry_tolerant(g, r->dev_blocks, b, &e, &wild))
            return add_unreached(r, blk, &e, SCAN_ENTRY_DELETED, wild);
        sc_subprobe_block(&r->sub, blk, b, false);
        return true;
    case SCAN_BLK_UNKNOWN:
        break;
    default:
        return true;
    }
    if (c->owner != 0)
        return true;
    if (blk >= r->dev_blocks || blk >= r->fs_blocks) {
        c->cls = SCAN_BLK_BEYOND;
        return true;
    }
    if (sc_probe_entry_tolerant(g, r->dev_blocks, b, &e, &wild))
        return add_unreached(r, blk, &e, SCAN_ENTRY_ORPHAN, wild);
    bool chain = sc_probe_chain(g, r->dev_blocks, b);
    bool ext = sc_probe_extender_tolerant(g, r->dev_blocks, b);
    /* Only the formatter writes chain blocks of type 0x80: one is no chain
     * block when its counter is too low for the writes that would have
     * changed the formatter's full block into it (an extender with one
     * flipped bit that puts a slot past the device, so that it reads as
     * no extender), nor when it reads as an extender too and its slots
     * are not the formatter's pattern. */
    if (chain && b[0] == LANYFS_TYPE_EXT &&
        (!sc_chain_counter_formatter(r, blk, b) || (ext && !sc_chain_formatter_like(g, blk, b, NULL))))
        chain = false;
    if (chain) {
        c->cls = SCAN_BLK_LEAKED;
        c->flags |= SC_BF_AUX;
        sc_map_meta(r, blk, lanyfs_get16(b + LANYFS_HDR_WRCNT));
    } else if (ext) {
        c->cls = SCAN_BLK_ORPHAN_EXT;
        c->index = b[LANYFS_EXT_LEVEL];
        if (b[LANYFS_EXT_LEVEL] == 0 && sc_extender_empty(g, b))
            c->flags |= SC_BF_AUX;
        sc_map_meta(r, blk, lanyfs_get16(b + LANYFS_HDR_WRCNT));
        if (b[LANYFS_EXT_LEVEL] == 0 && !sc_ext_name_slots(r, b))
            return sc_oom(r);
    } else {
        c->cls = r->free_complete ? SCAN_BLK_LEAKED : SCAN_BLK_UNKNOWN;
        sc_subprobe_block(&r->sub, blk, b, false);
    }
    return true;
}

/*
 * Every block is read unless earlier reads did both things a read is for:
 * a read has shown it can be read (a window of the walks, or the helper's
 * read of the free space), and its class needs no bytes (a data block, a
 * block whose torn check the walk made, a free block the helper found no
 * entry in).  So no block is read twice, but the rare ones a finding needs
 * whole.  Each run of SWEEP_RUN_BYTES reads one span, from its first block
 * that needs a read to its last.
 */
static bool read_pass(struct scan_result *r)
{
    uint32_t bs = r->g.blocksize;
    uint64_t run = SWEEP_RUN_BYTES / bs, rest = 0, rest_first = 0;
    uint8_t *buf = malloc((size_t)run * bs);
    struct lanyfs_error err;
    bool ok = false;
    if (buf == NULL)
        return sc_oom(r);
    sc_subprobe_init(&r->sub, r);
    for (uint64_t start = 0; start < r->nblocks; start += run) {
        if (sc_stopped(r))
            goto out;
        sc_progress(r, SCAN_PHASE_SWEEP, start, r->nblocks);
        uint64_t n = r->nblocks - start < run ? r->nblocks - start : run;
        uint64_t readable = start < r->image_blocks ? r->image_blocks - start : 0;
        if (readable > n)
            readable = n;
        uint64_t lo = readable, hi = 0; /* the span read: [lo, hi) */
        for (uint64_t k = 0; k < readable; k++) {
            uint64_t blk = start + k;
            /* Block 0 is judged by the superblock pass, but read here too
             * when no window held it, so that a bad sector in it is found. */
            if ((blk != 0 && needs_bytes(r, blk, &r->map[blk])) || !read_before(r, blk)) {
                if (lo == readable)
                    lo = k;
                hi = k + 1;
            }
        }
        bool whole = lo < hi && sc_read_run(r, start + lo, hi - lo, buf + (size_t)lo * bs,
                                            &err) == LANYFS_OK;
        for (uint64_t k = 0; k < n; k++) {
            uint64_t blk = start + k;
            struct scan_block *c = &r->map[blk];
            if (k >= readable) {
                if (c->cls == SCAN_BLK_UNKNOWN && c->owner == 0)
                    c->cls = SCAN_BLK_UNREADABLE;
                continue;
            }
            const uint8_t *b = NULL;
            if (k >= lo && k < hi) {
                b = buf + (size_t)k * bs;
                if (!whole && sc_read(r, blk, buf + (size_t)k * bs, &err) != LANYFS_OK) {
                    if (!unreadable(r, blk, err.msg, &rest, &rest_first))
                        goto out;
                    continue;
                }
            }
            if (blk == 0)
                continue;
            if (!classify(r, blk, b))
                goto out;
        }
    }
    if (rest > 0 &&
        !sc_report(r, &(struct scan_finding){.code = SCAN_PR_BLOCK_UNREADABLE, .block = rest_first},
                   NULL, "%" PRIu64 " more blocks cannot be read either", rest))
        goto out;
    ok = true;
out:
    free(buf);
    sc_torn_free(r);
    return ok;
}

/* Step 1: orphans listed by a cut-off chain block are deleted entries; the
 * blocks such a block lists are noted (cut_listed): marks.c judges them. */
static bool cut_lists(struct scan_result *r, uint8_t *b)
{
    const struct lanyfs_geom *g = &r->g;
    for (uint64_t blk = 1; blk < r->nblocks; blk++) {
        struct scan_block *c = &r->map[blk];
        if (c->cls != SCAN_BLK_LEAKED || !(c->flags & SC_BF_AUX))
            continue;
        if (sc_stopped(r))
            return false;
        if (sc_read(r, blk, b, NULL) != LANYFS_OK)
            continue;
        for (uint32_t i = 0; i < g->chainmax; i++) {
            uint64_t s = lanyfs_chain_slot(g, b, i);
            struct scan_block *t = s != 0 ? sc_cell(r, s) : NULL;
            if (t != NULL && !sc_cellbits_set(r, &r->cut_listed, s))
                return sc_oom(r);
            if (t == NULL || t->cls != SCAN_BLK_ORPHAN)
                continue;
            struct scan_entry *x = sc_entry(r, t->owner);
            if (x == NULL)
                continue;
            x->state = SCAN_ENTRY_DELETED;
            t->cls = SCAN_BLK_DELETED;
            t->index = blk;
        }
    }
    return true;
}

/* A chain slot that lists a freed extender, not data (the correct writer frees both). */
static bool lists_extender(struct scan_result *r, uint64_t s, uint8_t *tmp)
{
    return sc_read(r, s, tmp, NULL) == LANYFS_OK && tmp[0] == LANYFS_TYPE_EXT &&
           sc_probe_extender(&r->g, r->dev_blocks, tmp);
}

static bool collect(struct scan_result *r, uint64_t *got, uint64_t *n, uint64_t need, uint64_t s,
                    uint8_t *tmp)
{
    if (s != 0 && s < r->dev_blocks && *n < need && !lists_extender(r, s, tmp))
        got[(*n)++] = s;
    return *n < need;
}

/* Count the intact blocks of a deleted entry's data list, and mark them its own. */
static void count_intact(struct scan_result *r, struct scan_entry *x)
{
    x->blocks_intact = 0;
    for (uint64_t i = 0; i < x->ndata; i++) {
        struct scan_block *d = sc_cell(r, x->data[i]);
        if (x->data[i] != 0 && d != NULL && d->cls == SCAN_BLK_FREE &&
            !(d->flags & SCAN_BF_SHARED) && (d->owner == 0 || d->owner == x->id)) {
            x->blocks_intact++;
            d->owner = x->id;
        }
    }
}

/* Step 2: a deleted file's probable data (SPEC-§11). */
static bool deleted_data(struct scan_result *r, uint32_t id, uint8_t *b)
{
    const struct lanyfs_geom *g = &r->g;
    struct scan_entry *x = sc_entry(r, id);
    if (!scan_entry_is_file(x) || x->blocks_needed == 0)
        return true;
    /* Its map survives when the extenders were freed whole: read it. */
    if (x->e.subtree != 0 && x->e.subtree < r->dev_blocks) {
        if (!sc_file_walk(r, id, SC_FILE_RECOVER))
            return false;
        x = sc_entry(r, id);
        if (x->blocks_mapped > 0) {
            count_intact(r, x);
            return true;
        }
    }
    struct scan_block *c = sc_cell(r, x->block);
    if (c == NULL)
        return true;
    uint64_t chain = c->index;
    struct scan_block *cc = sc_cell(r, chain);
    if (cc == NULL || chain == 0 || (cc->cls != SCAN_BLK_CHAIN && cc->cls != SCAN_BLK_LEAKED))
        return true;
    uint64_t need = x->blocks_needed;
    if (need > (uint64_t)g->chainmax * 2)
        need = (uint64_t)g->chainmax * 2;
    uint64_t *got = malloc((size_t)need * sizeof(*got)), n = 0;
    uint8_t *tmp = malloc(g->blocksize);
    if (got == NULL || tmp == NULL) {
        free(got);
        free(tmp);
        return sc_oom(r);
    }
    if (sc_read(r, chain, b, NULL) == LANYFS_OK) {
        uint32_t k = g->chainmax;
        for (uint32_t i = 0; i < g->chainmax; i++)
            if (lanyfs_chain_slot(g, b, i) == x->block) {
                k = i;
                break;
            }
        bool more = k < g->chainmax;
        for (uint32_t i = k; more && i-- > 0;)
            more = collect(r, got, &n, need, lanyfs_chain_slot(g, b, i), tmp);
        uint64_t prev = more && cc->cls == SCAN_BLK_CHAIN ? sc_free_prev(r, chain) : 0;
        if (prev != 0 && sc_read(r, prev, b, NULL) == LANYFS_OK)
            for (uint32_t i = g->chainmax; more && i-- > 0;)
                more = collect(r, got, &n, need, lanyfs_chain_slot(g, b, i), tmp);
    }
    sc_data_free(r, id);
    x = sc_entry(r, id);
    x->blocks_mapped = n;
    x->blocks_intact = 0;
    if (n > 0) {
        uint64_t *d = sc_data_new(r, id, n);
        if (d == NULL) {
            free(got);
            free(tmp);
            return sc_oom(r);
        }
        /* Collected backwards from the entry's slot: file order is the reverse. */
        for (uint64_t i = 0; i < n; i++)
            d[i] = got[n - 1 - i];
        x = sc_entry(r, id);
        count_intact(r, x);
    }
    free(got);
    free(tmp);
    if (x->e.subtree != 0)
        return sc_file_walk(r, id, SC_FILE_DELETED);
    return true;
}

/*
 * A link from an orphan to a live leaf: the leaf sits in a dropped tree as
 * well, as the driver's failed rename leaves it (marks.c decides).
 */
static bool twice_from_orphan(struct scan_result *r, uint32_t id)
{
    struct scan_entry *x = sc_entry(r, id);
    uint64_t links[3] = {x->e.left, x->e.right, scan_entry_is_dir(x) ? x->e.subtree : 0};
    for (int j = 0; j < 3; j++) {
        struct scan_block *t = links[j] ? sc_cell(r, links[j]) : NULL;
        if (t == NULL || (t->cls != SCAN_BLK_DIR && t->cls != SCAN_BLK_FILE))
            continue;
        struct scan_entry *te = sc_entry(r, t->owner);
        if (te == NULL || te->state != SCAN_ENTRY_LIVE || te->e.left != 0 || te->e.right != 0)
            continue;
        if (!sc_mark_orphan_leaf(r, te->id))
            return false;
    }
    return true;
}

/* Step 3: link orphans into trees, give them paths, walk orphaned files. */
static bool link_orphans(struct scan_result *r)
{
    size_t n = r->nentries;
    for (size_t i = 0; i < n; i++) {
        struct scan_entry *x = &r->entries[i];
        if (x->state != SCAN_ENTRY_ORPHAN)
            continue;
        uint64_t links[3] = {x->e.left, x->e.right, scan_entry_is_dir(x) ? x->e.subtree : 0};
        for (int j = 0; j < 3; j++) {
            struct scan_block *t = links[j] ? sc_cell(r, links[j]) : NULL;
            if (t == NULL || t->cls != SCAN_BLK_ORPHAN || t->owner == x->id ||
                (t->flags & SC_BF_LINKED))
                continue;
            struct sc_aux *ta = sc_aux(r, t->owner);
            if (ta == NULL)
                continue;
            t->flags |= SC_BF_LINKED;
            ta->from = x->block;
            ta->link = j == 2 ? SC_LINK_SUBTREE : j == 1 ? SC_LINK_RIGHT : SC_LINK_LEFT;
        }
    }
    bool ok = false;
    uint32_t *stack = malloc((n + 1) * sizeof(*stack));
    size_t sp = 0;
    if (stack == NULL) {
        sc_oom(r);
        goto out;
    }
    /* Roots first (nothing links to them), then whatever a cycle left over. */
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < n; i++) {
            struct scan_entry *x = &r->entries[i];
            if (x->state != SCAN_ENTRY_ORPHAN || r->aux[i].path_set)
                continue;
            if (round == 0 && (r->map[x->block].flags & SC_BF_LINKED))
                continue;
            r->aux[i].path_set = true;
            x->parent = 0;
            stack[sp++] = x->id;
            while (sp > 0) {
                if (sc_stopped(r))
                    goto out;
                struct scan_entry *p = sc_entry(r, stack[--sp]);
                uint64_t links[3] = {p->e.left, p->e.right,
                                     scan_entry_is_dir(p) ? p->e.subtree : 0};
                for (int j = 0; j < 3; j++) {
                    struct scan_block *t = links[j] ? sc_cell(r, links[j]) : NULL;
                    if (t == NULL || t->cls != SCAN_BLK_ORPHAN)
                        continue;
                    struct sc_aux *ta = sc_aux(r, t->owner);
                    struct scan_entry *te = sc_entry(r, t->owner);
                    if (ta == NULL || ta->path_set || ta->from != p->block ||
                        te->state != SCAN_ENTRY_ORPHAN)
                        continue;
                    uint32_t parent = j == 2 ? p->id : p->parent;
                    struct scan_entry *pe = sc_entry(r, parent);
                    te->parent = parent;
                    ta->path_set = true;
                    if (!sc_entry_set_path(r, te->id, pe ? pe->path : NULL))
                        goto out;
                    stack[sp++] = te->id;
                }
            }
        }
    }
    for (size_t i = 0; i < r->nentries; i++) {
        struct scan_entry *x = &r->entries[i];
        if (x->state != SCAN_ENTRY_ORPHAN)
            continue;
        uint32_t id = x->id;
        if (!twice_from_orphan(r, id))
            goto out;
        if (scan_entry_is_file(&r->entries[i]) && !sc_file_walk(r, id, SC_FILE_ORPHAN))
            goto out;
    }
    ok = true;
out:
    free(stack);
    return ok;
}

/*
 * When this filesystem was made: the earlier of the superblock's creation
 * time (when its magic is right and the geometry is its own, not given)
 * and its root directory's, which the formatter stamps alike; false when
 * neither is known.  An entry created before it is a leftover of an
 * earlier format (a stick formatted again keeps the earlier tree wherever
 * the new one has not written yet).
 */
static bool format_time(struct scan_result *r, time_t *t)
{
    time_t s, d;
    bool have_s =
        r->sb.magic == LANYFS_MAGIC && !r->geom_given && sc_ts_seconds(&r->sb.created, &s);
    struct scan_block *c = r->rootdir ? sc_cell(r, r->rootdir) : NULL;
    struct scan_entry *root = c != NULL && c->cls == SCAN_BLK_DIR ? sc_entry(r, c->owner) : NULL;
    bool have_d = root != NULL && root->block == r->rootdir && sc_ts_seconds(&root->e.created, &d);
    if (!have_s && !have_d)
        return false;
    *t = !have_d || (have_s && s < d) ? s : d;
    return true;
}

bool sc_sweep_pass(struct scan_result *r)
{
    uint8_t *b = NULL;
    bool ok = false;
    if (!read_pass(r))
        goto out;
    b = malloc(r->g.blocksize);
    if (b == NULL) {
        sc_oom(r);
        goto out;
    }
    if (!cut_lists(r, b) || !sc_orphans_deleted(r))
        goto out;
    time_t made = 0, born;
    bool made_known = format_time(r, &made);
    for (size_t i = 0; i < r->nentries; i++) {
        if (r->entries[i].state != SCAN_ENTRY_DELETED)
            continue;
        if (!deleted_data(r, r->entries[i].id, b))
            goto out;
        struct scan_entry *x = &r->entries[i];
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_DELETED_ENTRY, .entry = x->id,
                                              .block = x->block, .count = x->blocks_intact,
                                              .count2 = x->blocks_needed},
                       x->path, "%s", sc_kind_name(x)))
            goto out;
        if (made_known && sc_ts_seconds(&x->e.created, &born) && born < made &&
            !sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_DELETED_BEFORE_FORMAT,
                                              .entry = x->id, .block = x->block},
                       x->path, "%s", sc_kind_name(x)))
            goto out;
    }
    if (!sc_orphan_data_entries(r) || !link_orphans(r) || !report_wild_links(r) ||
        !sc_earlier_formats(r, made_known ? &made : NULL) ||
        !sc_earlier_smaller(r, sc_freeread_subprobe(r)))
        goto out;
    sc_progress(r, SCAN_PHASE_SWEEP, r->nblocks, r->nblocks);
    ok = true;
out:
    sc_subprobe_free(&r->sub);
    free(b);
    return ok;
}
