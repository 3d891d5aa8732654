/*
 * files.c -- pass 2 of the scan: every file's extender tree (SPEC-§7).
 *
 * An iterative descent with one frame per level (at most SC_LEVEL_MAX + 1):
 * every slot of every extender is visited, so blocks mapped past the size
 * are found too.  Levels must fall by one at each step and every extender
 * and data block is claimed before it is used, so the walk cannot loop and
 * a block two files map is reported instead of followed twice.  Checks of a
 * live file, each naming the block:
 *  - FILE_DATA_RANGE, FILE_DATA_TYPE: the data pointer beyond the device
 *    end, or at a block that is no extender;
 *  - EXT_SLOT_RANGE: a slot beyond the device end;
 *  - EXT_TYPE, EXT_LEVEL_WRONG: a child that is no extender, or not one
 *    level below its parent (also a top level no device needs);
 *  - EXT_SLOT_METADATA: a slot mapping the superblock, an entry or a chain
 *    block;
 *  - FREE_SLOT_IN_USE: a block the file maps and the free list lists (the
 *    file keeps it in the map);
 *  - BLOCK_SHARED: a block another file (or this one) already maps;
 *  - TREE_UNREADABLE: an extender that cannot be read.
 * Data slots past a live file's size are claimed only after every file's
 * own blocks (claim_excess), and an entry block made after the file was
 * last changed that such a slot, or a map with a conflict, names is left to
 * the sweep as the orphan it is (claim_excess, release_entries): the order
 * of the walks no longer decides between a right map and a stale one.
 * It records the blocks mapped, the holes (below the size; those in level-0
 * extenders apart), the blocks mapped past the size, the extenders and
 * their highest counter.  sc_files_judge then weighs mapped blocks against
 * the size, once marks.c can tell a driver mark from damage:
 * FILE_SIZE_UNMAPPED (a broken map that loses blocks the size needs),
 * FILE_SIZE_EXCESS (blocks past the size) and FILE_HOLES (empty slots and
 * a tree too small for the size: a sparse file, which every writer makes
 * when a file grows by truncation).
 *
 * Orphaned files (SC_FILE_ORPHAN) and the leftover extenders of deleted
 * files (SC_FILE_DELETED) are walked quietly: they only adopt blocks the
 * sweep left unowned (those past the size only after the lost trees,
 * sc_orphan_excess), and stop where anything else holds a block.  A deleted file's freed extenders, when their slots
 * survive (the correct writer frees a file's extenders with its data), are
 * read without any claim to recover its data list (SC_FILE_RECOVER).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scan_priv.h"
#include "slots.h"

struct xframe {
    uint64_t blk;   /* this extender */
    uint64_t base;  /* first file block it maps (UINT64_MAX: past any size) */
    uint64_t span;  /* file blocks one slot maps: extmax^level */
    uint32_t next;  /* next slot to visit */
    uint32_t end;   /* one past its last non-zero slot (sc_slots_end) */
    unsigned level; /* its level */
    uint8_t *buf;   /* its contents */
};

struct pair {
    uint64_t fblk; /* file block */
    uint64_t dblk; /* its disk block */
};

struct fwalk {
    struct scan_result *r;
    uint32_t id;            /* the file */
    enum sc_file_mode mode; /* how to claim */
    uint64_t needed;        /* file blocks its size needs */
    struct pair *pairs;     /* mapped blocks below the size, in file order */
    size_t npairs;          /* used */
    size_t cap;             /* allocated */
    struct pair first[8];   /* pairs, until a file has more (most have fewer) */
    uint64_t mapped;        /* data blocks below the size */
    uint64_t intact;        /* of those, held by this file alone */
    uint64_t visits;        /* extenders visited (SC_FILE_RECOVER) */
    uint64_t *ext_marks;    /* SC_FILE_RECOVER: a bit set for each extender met, or NULL */
    bool in_run;            /* the data slot being taken has a neighbour one block off */
    const uint8_t *slots;   /* the slots of the level-0 extender being walked */
    struct sc_aux st;       /* statistics, copied into the entry's aux */
};

static const char *fpath(struct fwalk *w)
{
    return sc_entry(w->r, w->id)->path;
}

static uint64_t fblock(const struct fwalk *w)
{
    return sc_entry(w->r, w->id)->block;
}

bool sc_past_size_data(struct scan_result *r, const struct scan_block *c)
{
    if (c->cls != SCAN_BLK_DATA || c->owner == 0)
        return false;
    const struct scan_entry *x = sc_entry(r, c->owner);
    return x != NULL && x->state == SCAN_ENTRY_LIVE && c->index >= x->blocks_needed &&
           !(c->flags & (SCAN_BF_SHARED | SC_BF_LINKED));
}

/* sc_names_fn: does a slot of the level-0 extender being walked name blk? */
static bool walk_names(const void *ctx, uint64_t blk)
{
    const struct fwalk *w = ctx;
    const struct lanyfs_geom *g = &w->r->g;
    for (uint32_t i = 0; w->slots != NULL && i < g->extmax; i++)
        if (sc_slot(w->slots, g->addrlen, i) == blk)
            return true;
    return false;
}

/*
 * An orphaned file's top extender blk, which the free list lists, more
 * likely by one flipped bit in an empty chain slot than by a free: its
 * number has a single bit set (sc_free_one_bit), and it reads as an
 * extender whose slots still map data.  The 2012 driver frees no
 * extender and empties a deleted file's (SPEC-9.4, 9.5); on the correct
 * writer's media a delete cut off between the extender and the entry
 * leaves such a top too, and the orphan then keeps a tree whose data
 * stays listed.
 */
static bool listed_top(struct scan_result *r, uint64_t blk)
{
    if (!sc_free_one_bit(r, blk))
        return false;
    const uint8_t *p = sc_window(r, blk);
    return p != NULL && sc_extender_maps(&r->g, r->dev_blocks, p);
}

/* The orphan takes its listed top off the free list (FREE_SLOT_IN_USE). */
static bool take_listed(struct fwalk *w, uint64_t blk, enum scan_class cls, uint64_t index)
{
    struct scan_result *r = w->r;
    const struct scan_entry *o = sc_entry(r, w->id);
    if (o == NULL ||
        !sc_report(r,
                   &(struct scan_finding){.code = SCAN_PR_FREE_SLOT_IN_USE, .entry = w->id,
                                          .block = r->map[blk].index, .block2 = blk},
                   NULL, "orphaned %s '%s'", sc_kind_name(o), o->path))
        return false;
    sc_claim_over(r, blk, cls, w->id, index);
    if (r->free_listed > 0)
        r->free_listed--; /* not a free block the list counts */
    return true;
}

/*
 * An orphan's tree names blk, which a live file holds: the orphan takes it
 * when the file maps it only past its size (its bytes are none of the
 * file's, so the file loses nothing; FILE_SIZE_EXCESS still clears the
 * slot), or when the file's slot is a flipped bit off its run, or in no
 * run at all (flipped.c: a block the orphan's extender names is none the
 * file's slot can have come from).
 */
static bool orphan_takes(const struct fwalk *w, uint64_t blk, bool sure)
{
    struct scan_result *r = w->r;
    uint32_t orphan = w->id;
    struct scan_block *c = sc_cell(r, blk);
    if (c != NULL && sc_past_size_data(r, c)) {
        c->cls = SCAN_BLK_UNKNOWN;
        c->owner = 0;
        c->index = 0;
        return true;
    }
    const struct scan_entry *o = sc_entry(r, orphan);
    if (o == NULL)
        return false;
    char what[SC_PATH_MAX + 64];
    snprintf(what, sizeof(what), "the tree of orphaned %s '%s'", sc_kind_name(o), o->path);
    return sc_flip_release(r, blk, what, sure, walk_names, w);
}

/*
 * Is blk the file's first data block, right after its top extender?  A
 * write allocates its top extender and then its first data block from the
 * same list, so the orphan's claim is as sure as one a run of its slots
 * makes (2012:693 state 1963, bit 3 of byte 63 of block 159 flipped: a
 * hole at slot 29 of the sparse, live a0132 went to 8, the first block of
 * the orphaned /report 0062, whose extender is 7).
 */
static bool after_top(const struct fwalk *w, uint64_t blk, bool ext, uint64_t index)
{
    const struct scan_entry *o = sc_entry(w->r, w->id);
    return !ext && index == 0 && o != NULL && o->e.subtree != 0 && blk == o->e.subtree + 1;
}

/*
 * Claim blk (an extender at level, or a data block at file block fb) for
 * the file; parent/slot say where it is mapped (parent 0: the data pointer).
 * Returns true when the block is the file's now (for an extender: descend).
 * *held receives whether the block is also held by another owner.
 */
static bool take(struct fwalk *w, uint64_t blk, bool ext, uint64_t index, uint64_t parent,
                 uint32_t slot, bool *held)
{
    struct scan_result *r = w->r;
    *held = false;
    if (w->mode == SC_FILE_RECOVER) {
        /* Reads only; the visits are bounded so that shared subtrees cannot multiply. */
        if (ext && ++w->visits > w->r->nblocks)
            return false;
        if (ext && w->ext_marks != NULL && blk < r->nblocks)
            w->ext_marks[blk / 64] |= (uint64_t)1 << (blk % 64);
        return true;
    }
    if (w->mode != SC_FILE_LIVE) {
        enum scan_class cls = ext ? SCAN_BLK_ORPHAN_EXT : SCAN_BLK_LEAKED;
        if (sc_adopt(r, blk, cls, w->id, index))
            return true;
        if (w->mode == SC_FILE_ORPHAN && ext && parent == 0 && listed_top(r, blk))
            return take_listed(w, blk, cls, index);
        bool sure = ext || w->in_run || after_top(w, blk, ext, index);
        return w->mode == SC_FILE_ORPHAN && orphan_takes(w, blk, sure) &&
               sc_adopt(r, blk, cls, w->id, index);
    }
    enum scan_class cls = ext ? SCAN_BLK_EXTENDER : SCAN_BLK_DATA;
    const struct scan_block *h = sc_cell(r, blk);
    if (h != NULL && h->cls == SCAN_BLK_DATA && h->owner != w->id && (ext || index < w->needed)) {
        /* Another live file's data slot, one flipped bit off its run
         * (flipped.c), names this file's block: it gives the block back.
         * Not to a data slot past this file's size, whose bytes are none
         * of its own (correct:946 state 1705, bit 7 of byte 29 of block
         * 75: an empty slot past the size of /m6/.../Data.0106.txt went to
         * 128, and /zz0097.txt's slot 2, 128, moved to 129). */
        char claim[SC_PATH_MAX + 64];
        snprintf(claim, sizeof(claim), "the tree of %s", fpath(w));
        if (sc_flip_release(r, blk, claim, ext || w->in_run, NULL, NULL))
            r->map[blk].cls = SCAN_BLK_UNKNOWN; /* no sweep yet: as no walk reached it */
        else if (ext) {
            /* It read as an extender: the data slot gives it up (flipped.c). */
            snprintf(claim, sizeof(claim), "an extender of %s", fpath(w));
            if (!sc_data_slot_gives(r, blk, claim) && sc_stopped(r))
                return false;
        }
    }
    enum sc_claim got = sc_claim(r, blk, cls, w->id, index);
    if (got == SC_CLAIM_OK)
        return true;
    if (got == SC_CLAIM_OUTSIDE)
        return false;
    struct scan_block *c = sc_cell(r, blk);
    char what[SC_PATH_MAX + 64];
    sc_owner_phrase(r, c, what, sizeof(what));
    w->st.tree_conflict = true;
    *held = true;
    /* On driver media each of these is a map the driver went on using after freeing it. */
    struct scan_finding m = {.code = SCAN_PR_MARK_STALE_TREE, .entry = w->id,
                             .block = parent ? parent : fblock(w), .block2 = blk};
    struct scan_finding f = {.entry = w->id, .block = parent, .count = slot, .block2 = blk};
    bool take_it = false;
    switch ((enum scan_class)c->cls) {
    case SCAN_BLK_FREE:
        f = (struct scan_finding){.code = SCAN_PR_FREE_SLOT_IN_USE, .entry = w->id,
                                  .block = c->index, .block2 = blk};
        snprintf(what, sizeof(what), "%s", fpath(w));
        sc_claim_over(r, blk, cls, w->id, index);
        if (!sc_cellbits_set(r, &r->listed_taken, blk))
            return sc_oom(r);
        *held = false;
        take_it = true;
        break;
    case SCAN_BLK_EXTENDER:
        if (ext || parent == 0 || c->owner == w->id) {
            f = (struct scan_finding){.code = SCAN_PR_BLOCK_SHARED, .entry = w->id, .block = blk};
            break;
        }
        /* A data slot onto another file's extender holds none of this
         * file's bytes (sc_data_slot_gives): a hole. */
        *held = false;
        f.code = SCAN_PR_EXT_SLOT_METADATA;
        sc_report(r, &f, fpath(w), "%s", what); /* a failure stops the scan */
        return false;
    case SCAN_BLK_SUPER:
    case SCAN_BLK_CHAIN:
    case SCAN_BLK_DIR:
    case SCAN_BLK_FILE:
    case SCAN_BLK_DELETED:
        *held = false;
        if (parent == 0) {
            f = (struct scan_finding){.code = SCAN_PR_FILE_DATA_TYPE, .entry = w->id,
                                      .block = fblock(w), .block2 = blk,
                                      .value = c->cls == SCAN_BLK_DIR ? LANYFS_TYPE_DIR
                                               : c->cls == SCAN_BLK_CHAIN ? LANYFS_TYPE_CHAIN
                                                                          : LANYFS_TYPE_FILE};
            what[0] = '\0';
        } else {
            f.code = SCAN_PR_EXT_SLOT_METADATA;
        }
        break;
    default:
        f = (struct scan_finding){.code = SCAN_PR_BLOCK_SHARED, .entry = w->id, .block = blk};
        break;
    }
    if (!sc_report_alt(r, &m, fpath(w), NULL, &f, fpath(w), what[0] ? what : NULL))
        return false;
    return take_it;
}

/*
 * Slot i of the live file's level-0 extender x names blk in a run, and an
 * earlier slot of x, walked already, names blk too and breaks its own run
 * (sc_flip_own_earlier): that earlier slot's bit flipped.  It maps the
 * block that continues its run instead (EXT_SLOT_FLIPPED), and blk is left
 * for slot i (correct:803 state 8688, bit 0 of byte 47 of block 656
 * flipped: slot 21 of /readme-0063.odt went from 678 to 679, slot 22's
 * block, and the file shared a block with itself on a full stick).  False
 * only when the scan must stop.
 */
static bool give_back_earlier(struct fwalk *w, const struct xframe *x, uint32_t i, uint64_t blk,
                              uint8_t *b)
{
    struct scan_result *r = w->r;
    uint64_t alt = sc_flip_own_earlier(r, x->buf, x->base, i, blk, w->id, b);
    if (alt == 0)
        return true;
    uint64_t j = r->map[blk].index;
    size_t p = w->npairs;
    while (p > 0 && !(w->pairs[p - 1].fblk == j && w->pairs[p - 1].dblk == blk))
        p--;
    if (p == 0 || sc_claim(r, alt, SCAN_BLK_DATA, w->id, j) != SC_CLAIM_OK)
        return !sc_stopped(r);
    w->pairs[p - 1].dblk = alt;
    struct scan_block *c = &r->map[blk];
    c->cls = SCAN_BLK_UNKNOWN; /* no sweep yet: as no walk reached it */
    c->owner = 0;
    c->index = 0;
    return sc_report(r,
                     &(struct scan_finding){.code = SCAN_PR_EXT_SLOT_FLIPPED, .entry = w->id,
                                            .block = x->blk, .count = (uint32_t)(j - x->base),
                                            .block2 = blk, .value = alt},
                     fpath(w), "another slot of %s", fpath(w));
}

static bool record(struct fwalk *w, uint64_t fb, uint64_t dblk, bool held)
{
    if (fb >= w->needed) {
        w->st.excess++;
        return true;
    }
    w->mapped++;
    w->intact += !held;
    if (w->cap == 0) {
        w->pairs = w->first;
        w->cap = sizeof(w->first) / sizeof(w->first[0]);
    }
    if (w->npairs == w->cap) {
        size_t ncap = w->pairs == w->first ? 64 : w->cap * 2;
        struct pair *np = w->pairs == w->first ? malloc(ncap * sizeof(*np))
                                               : realloc(w->pairs, ncap * sizeof(*np));
        if (np == NULL)
            return sc_oom(w->r);
        if (w->pairs == w->first)
            memcpy(np, w->first, sizeof(w->first));
        w->pairs = np;
        w->cap = ncap;
    }
    w->pairs[w->npairs++] = (struct pair){fb, dblk};
    return true;
}

static void add_holes(struct fwalk *w, uint64_t fb, uint64_t span, unsigned level)
{
    if (fb >= w->needed)
        return;
    uint64_t n = w->needed - fb < span ? w->needed - fb : span;
    w->st.holes += n;
    if (level == 0)
        w->st.holes0 += n;
}

/*
 * A live file's data slot past its size is claimed only once every file has
 * claimed the blocks its size needs and its extenders: such a slot is the
 * driver's leftover from a rewrite (SPEC-9.13) or a damaged slot, and the
 * block it names is more likely another file's than the other way round.
 * Claimed first, it made that file's extender or data look taken: its tree
 * then read as a stale map and the repair cut the file that was right.
 */
static bool defer_excess(struct fwalk *w, uint64_t blk, uint64_t parent, uint64_t fb,
                         uint32_t slot)
{
    struct scan_result *r = w->r;
    bool orphan = w->mode == SC_FILE_ORPHAN;
    struct sc_excess **list = orphan ? &r->oexcess : &r->excess;
    size_t *n = orphan ? &r->noexcess : &r->nexcess;
    size_t *cap = orphan ? &r->oexcess_cap : &r->excess_cap;
    w->st.excess++;
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        struct sc_excess *nl = realloc(*list, ncap * sizeof(*nl));
        if (nl == NULL)
            return sc_oom(r);
        *list = nl;
        *cap = ncap;
    }
    (*list)[(*n)++] =
        (struct sc_excess){.blk = blk, .parent = parent, .fb = fb, .id = w->id, .slot = slot};
    return true;
}

/*
 * An orphan's data slots past its size adopt their blocks only after the
 * lost trees took theirs (lostdata.c): such a slot is the driver's leftover
 * (SPEC-9.13), whose block no one else holds, or a damaged one, whose block
 * is more likely a lost write's.  Only blocks still leaked and in no tree
 * are adopted.
 */
void sc_orphan_excess(struct scan_result *r)
{
    for (size_t i = 0; i < r->noexcess; i++) {
        const struct sc_excess *e = &r->oexcess[i];
        const struct scan_block *c = sc_cell(r, e->blk);
        if (c != NULL && !(c->flags & (SC_BF_LINKED | SCAN_BF_DRIVER)))
            sc_adopt(r, e->blk, SCAN_BLK_LEAKED, e->id, e->fb);
    }
    free(r->oexcess);
    r->oexcess = NULL;
    r->noexcess = r->oexcess_cap = 0;
}

/*
 * An entry block e, made after file x was last changed, cannot be x's data:
 * x's map named the block before it was handed out again for e.  A block
 * the driver put into a map but never wrote (SPEC-9.13) keeps what it held
 * before, such as a deleted entry, older than the map.  The driver's clock
 * errors only ever move a modified time later (SPEC-9.15), which keeps the
 * block the file's.
 */
static bool made_after(const struct lanyfs_entry *e, const struct scan_entry *x)
{
    time_t made, changed;
    return sc_ts_seconds(&e->created, &made) && sc_ts_seconds(&x->e.modified, &changed) &&
           made > changed;
}

/*
 * The deferred slots past the sizes, in the order the walks met them.  A
 * block no walk reached that reads as an entry block made after the file
 * was last changed is left to the sweep: the slot is a leftover of a
 * rewrite, and the block was handed out again to an entry whose link was
 * lost (an orphan), whose data it would hide.  So is one that reads as an
 * extender: the top of a lost write's tree (lostdata.c) more likely than
 * data the file no longer needs.  And so is an entry, however old, whose
 * own tree no walk reached and reads as one (own_tree), on media no 2012
 * driver wrote: one flipped bit in an empty slot past the size names an
 * orphan's block as readily as any other, where the correct writer frees
 * a deleted file's extenders with it, so an old entry the block held
 * before the file took it has no such tree.  (The 2012 driver never frees
 * extenders, SPEC-9.4: a deleted entry's tree is left unreached; there it
 * takes a slot that reads as a flipped empty one, flipped_empty.)
 */
static bool own_tree(struct scan_result *r, const struct lanyfs_entry *en, uint64_t blk,
                     uint8_t *b)
{
    struct lanyfs_entry sub;
    const struct scan_block *t = en->subtree != blk ? sc_cell(r, en->subtree) : NULL;
    if (t == NULL || t->cls != SCAN_BLK_UNKNOWN || t->owner != 0 ||
        en->subtree >= r->dev_blocks || sc_read(r, en->subtree, b, NULL) != LANYFS_OK)
        return false;
    if (lanyfs_entry_is_file(en))
        return sc_extender_maps(&r->g, r->dev_blocks, b);
    return sc_probe_entry(&r->g, r->dev_blocks, b, &sub);
}

/*
 * Is the excess slot e one bit set in an empty slot: a power of two with
 * empty slots on both sides (b: a block buffer)?  A rewrite's leftover
 * names a block of the file's old map, at random; one flipped bit past the
 * size names a power of two among zeros.  Then an entry there with its own
 * tree is an orphan on the 2012 driver's media too (2012:732 state 2311,
 * bit 4 of byte 63 of block 164: slot 29 of a0082.odt's extender went from
 * 0 to 16, the orphaned Data.0016.odt's entry).
 */
static bool flipped_empty(struct scan_result *r, const struct sc_excess *e, uint8_t *b)
{
    const struct lanyfs_geom *g = &r->g;
    if (!sc_one_bit(e->blk) || sc_read(r, e->parent, b, NULL) != LANYFS_OK)
        return false;
    return (e->slot == 0 || lanyfs_ext_slot(g, b, e->slot - 1) == 0) &&
           (e->slot + 1 >= g->extmax || lanyfs_ext_slot(g, b, e->slot + 1) == 0);
}

static bool claim_excess(struct scan_result *r)
{
    bool ok = true;
    uint8_t *b = r->nexcess > 0 ? malloc(r->g.blocksize) : NULL;
    uint8_t *b2 = r->nexcess > 0 ? malloc(r->g.blocksize) : NULL;
    if (r->nexcess > 0 && (b == NULL || b2 == NULL))
        ok = sc_oom(r);
    bool driver = r->nexcess > 0 && sc_driver_files(r);
    for (size_t i = 0; i < r->nexcess && ok; i++) {
        const struct sc_excess *e = &r->excess[i];
        const struct scan_block *c = sc_cell(r, e->blk);
        const struct scan_entry *x = sc_entry(r, e->id);
        struct lanyfs_entry en;
        /* A block the file's map names again past its size (one bit
         * flipped in an empty slot onto one of its excess blocks, as in
         * correct:603 state 464 at block 29) adds nothing: claimed again,
         * it read as shared with the file itself, and a lost write that
         * may take an excess block could no longer. */
        if (x != NULL && c != NULL && c->cls == SCAN_BLK_DATA && c->owner == e->id)
            continue;
        if (x == NULL || (c != NULL && c->cls == SCAN_BLK_UNKNOWN && c->owner == 0 &&
                          sc_read(r, e->blk, b, NULL) == LANYFS_OK &&
                          ((sc_probe_entry(&r->g, r->dev_blocks, b, &en) &&
                            (made_after(&en, x) || ((!driver || flipped_empty(r, e, b2)) &&
                                                    own_tree(r, &en, e->blk, b)))) ||
                           sc_probe_extender(&r->g, r->dev_blocks, b))))
            continue;
        struct fwalk w = {.r = r, .id = e->id, .mode = SC_FILE_LIVE, .needed = x->blocks_needed};
        bool held;
        take(&w, e->blk, false, e->fb, e->parent, e->slot, &held);
        ok = !sc_stopped(r);
    }
    free(b);
    free(b2);
    free(r->excess);
    r->excess = NULL;
    r->nexcess = r->excess_cap = 0;
    return ok;
}

/* The level-0 extender and slot that map file block fb to blk; false when
 * the path down from the top does not read as the walk read it. */
bool sc_file_slot_of(struct scan_result *r, const struct scan_entry *x, unsigned top_level,
                     uint64_t fb, uint64_t blk, uint8_t *b, uint64_t *ext, uint32_t *slot)
{
    const struct lanyfs_geom *g = &r->g;
    uint64_t cur = x->e.subtree;
    for (unsigned level = top_level;; level--) {
        if (cur == 0 || sc_read(r, cur, b, NULL) != LANYFS_OK || b[0] != LANYFS_TYPE_EXT ||
            b[LANYFS_EXT_LEVEL] != level)
            return false;
        uint64_t span = lanyfs_geom_pow(g, level);
        uint32_t i = (uint32_t)((span == UINT64_MAX ? 0 : fb / span) % g->extmax);
        uint64_t s = lanyfs_ext_slot(g, b, i);
        if (level == 0) {
            *ext = cur;
            *slot = i;
            return s == blk;
        }
        cur = s;
    }
}

/*
 * A file whose map names a block another holds has a stale map (SPEC-9.12)
 * or a damaged one: its other blocks were read as its data only because no
 * walk had reached them first.  One of them that reads as an entry block
 * made after the file was last changed is an entry whose link was lost (an
 * orphan), not the file's data: the map's claim is dropped (a hole in the
 * file) so that the sweep finds the entry, and the slot is reported as the
 * stale link it is.
 */
static bool release_entries(struct scan_result *r)
{
    uint8_t *b = NULL, *eb = NULL;
    bool ok = true;
    for (size_t i = 0; i < r->nentries && ok; i++) {
        struct scan_entry *x = &r->entries[i];
        struct sc_aux *a = &r->aux[i];
        if (x->state != SCAN_ENTRY_LIVE || !a->walked || !a->tree_conflict)
            continue;
        for (uint64_t k = 0; k < x->ndata && ok; k++) {
            struct scan_block *c = sc_cell(r, x->data[k]);
            struct lanyfs_entry e;
            if (c == NULL || c->cls != SCAN_BLK_DATA || c->owner != x->id)
                continue;
            if (b == NULL && ((b = malloc(r->g.blocksize)) == NULL ||
                              (eb = malloc(r->g.blocksize)) == NULL)) {
                free(b);
                return sc_oom(r);
            }
            uint64_t blk = x->data[k], ext;
            uint32_t slot;
            if (sc_read(r, blk, b, NULL) != LANYFS_OK ||
                !sc_probe_entry(&r->g, r->dev_blocks, b, &e) || !made_after(&e, x) ||
                !sc_file_slot_of(r, x, a->top_level, k, blk, eb, &ext, &slot))
                continue;
            c->cls = SCAN_BLK_UNKNOWN;
            c->owner = 0;
            c->index = 0;
            x->data[k] = 0;
            x->blocks_mapped--;
            x->blocks_intact -= x->blocks_intact > 0;
            a->holes++;
            char what[SC_PATH_MAX + 64];
            snprintf(what, sizeof(what), "an entry named '%.*s'", (int)e.name_len, e.name);
            ok = sc_report_alt(
                r,
                &(struct scan_finding){.code = SCAN_PR_MARK_STALE_TREE, .entry = x->id,
                                       .block = ext, .block2 = blk},
                x->path, NULL,
                &(struct scan_finding){.code = SCAN_PR_EXT_SLOT_METADATA, .entry = x->id,
                                       .block = ext, .count = slot, .block2 = blk},
                x->path, what);
        }
    }
    free(b);
    free(eb);
    return ok;
}

/* Report a structural problem (live files only), with an optional text. */
static bool problem(struct fwalk *w, const struct scan_finding *f, const char *text)
{
    w->st.tree_broken = true;
    if (w->mode != SC_FILE_LIVE)
        return true;
    return text ? sc_report(w->r, f, fpath(w), "%s", text) : sc_report(w->r, f, fpath(w), NULL);
}

/* Build the entry's data list from the pairs (file order, holes as 0). */
static bool publish(struct fwalk *w)
{
    struct scan_result *r = w->r;
    struct scan_entry *x = sc_entry(r, w->id);
    uint64_t n = 0;
    if (w->npairs > 0)
        n = w->pairs[w->npairs - 1].fblk + 1;
    uint64_t cap = w->mapped * 16 + 65536;
    if (n > cap)
        n = cap;
    sc_data_free(r, w->id);
    if (n > 0) {
        uint64_t *d = sc_data_new(r, w->id, n);
        if (d == NULL)
            return sc_oom(r);
        for (size_t i = 0; i < w->npairs; i++)
            if (w->pairs[i].fblk < n)
                d[w->pairs[i].fblk] = w->pairs[i].dblk;
        /* While the list is hot: a slot one flipped bit may have moved
         * (sc_flip_hole_tops reads only the files this marks). */
        for (uint64_t k = 0; k < n && k < w->needed && w->mode == SC_FILE_LIVE; k++)
            if (sc_breaks_run(d, n, k)) {
                w->st.run_broken = true;
                break;
            }
    }
    x = sc_entry(r, w->id);
    x->blocks_mapped = w->mapped;
    x->blocks_intact = w->intact;
    return true;
}

static bool walk(struct fwalk *w)
{
    struct scan_result *r = w->r;
    const struct lanyfs_geom *g = &r->g;
    struct xframe fr[SC_LEVEL_MAX + 1];
    uint8_t small[3 * LANYFS_BLOCKSIZE_MAX];
    uint8_t *mem = NULL;
    struct lanyfs_error err;
    bool ok = false, held;
    uint64_t top = sc_entry(r, w->id)->e.subtree;
    uint64_t fb0 = fblock(w);
    if (w->mode == SC_FILE_LIVE && top != 0) {
        uint64_t was = sc_flip_data_pointer(r, sc_entry(r, w->id));
        if (sc_stopped(r))
            goto out;
        if (was != 0)
            top = was;
    }

    if (top == 0) {
        w->st.holes = w->needed;
        goto out_ok;
    }
    w->st.top_level = 0;
    if (top >= r->dev_blocks) {
        if (!problem(w,
                     &(struct scan_finding){.code = SCAN_PR_FILE_DATA_RANGE, .entry = w->id,
                                            .block = fb0, .block2 = top},
                     NULL))
            goto out;
        w->st.holes = w->needed;
        goto out_ok;
    }
    uint8_t *tb = small; /* the top's block; mem's first when it fits in small */
    enum lanyfs_err rc = sc_read_top(r, w->id, top, tb, &err);
    unsigned level = tb[LANYFS_EXT_LEVEL];
    struct scan_finding f = {.entry = w->id, .block = fb0, .block2 = top};
    bool bad = true;
    if (rc != LANYFS_OK) {
        f.code = SCAN_PR_TREE_UNREADABLE;
        f.block = top;
        ok = problem(w, &f, err.msg);
    } else if (tb[0] != LANYFS_TYPE_EXT) {
        f.code = SCAN_PR_FILE_DATA_TYPE;
        f.value = tb[0];
        ok = problem(w, &f, NULL);
    } else if (level > SC_LEVEL_MAX) {
        f.code = SCAN_PR_EXT_LEVEL_WRONG;
        f.value = level;
        f.value2 = SC_LEVEL_MAX;
        ok = problem(w, &f, NULL);
    } else {
        bad = false;
    }
    if (bad) {
        if (!ok)
            goto out;
        w->st.holes = w->needed;
        goto out_ok;
    }
    if (!take(w, top, true, level, 0, 0, &held)) {
        if (sc_stopped(r))
            goto out;
        w->st.holes = w->needed;
        goto out_ok;
    }
    /* A block a level, and a scratch one: on the stack for the small trees
     * nearly every file has, saving two allocations a file. */
    size_t mem_bytes = (size_t)(level + 2) * g->blocksize;
    if (mem_bytes <= sizeof(small)) {
        mem = small;
    } else {
        mem = malloc(mem_bytes);
        if (mem == NULL) {
            sc_oom(r);
            goto out;
        }
        memcpy(mem, tb, g->blocksize);
    }
    if (w->mode == SC_FILE_LIVE)
        sc_counter_torn_early(r, top, mem);
    w->st.top_level = (uint8_t)level;
    w->st.extenders = 1;
    w->st.ext_wrcnt_max = lanyfs_get16(mem + LANYFS_HDR_WRCNT);
    if (w->mode == SC_FILE_LIVE)
        sc_map_meta(r, top, w->st.ext_wrcnt_max);
    uint64_t capacity = lanyfs_geom_tree_capacity(g, level);
    if (capacity < w->needed)
        w->st.holes += w->needed - capacity;

    int depth = 0;
    fr[0] = (struct xframe){top, 0, lanyfs_geom_pow(g, level), 0,
                            sc_slots_end(mem + LANYFS_EXT_SLOTS, g->addrlen, g->extmax), level,
                            mem};
    while (depth >= 0) {
        struct xframe *x = &fr[depth];
        uint32_t i = x->next++;
        uint64_t span = x->span, fb;
        if (x->base == UINT64_MAX || __builtin_mul_overflow((uint64_t)i, span, &fb) ||
            __builtin_add_overflow(fb, x->base, &fb))
            fb = UINT64_MAX;
        if (i >= x->end) {
            /* The empty tail, slots i .. extmax-1, as one run of holes. */
            uint64_t tail;
            if (i < g->extmax) {
                if (__builtin_mul_overflow((uint64_t)(g->extmax - i), span, &tail))
                    tail = UINT64_MAX;
                add_holes(w, fb, tail, x->level);
            }
            depth--;
            continue;
        }
        uint64_t slot = sc_slot(x->buf + LANYFS_EXT_SLOTS, g->addrlen, i);
        if (slot == 0) {
            add_holes(w, fb, span, x->level);
            continue;
        }
        if (slot >= r->dev_blocks) {
            if (!problem(w,
                         &(struct scan_finding){.code = SCAN_PR_EXT_SLOT_RANGE, .entry = w->id,
                                                .block = x->blk, .count = i, .block2 = slot},
                         NULL))
                goto out;
            add_holes(w, fb, span, x->level);
            continue;
        }
        if (x->level == 0) {
            if (w->mode == SC_FILE_DELETED)
                continue;
            if (w->mode == SC_FILE_LIVE && fb >= w->needed) {
                if (!defer_excess(w, slot, x->blk, fb, i))
                    goto out;
                continue;
            }
            if (w->mode == SC_FILE_ORPHAN && fb >= w->needed) {
                if (!defer_excess(w, slot, x->blk, fb, i))
                    goto out;
                continue;
            }
            w->slots = x->buf + LANYFS_EXT_SLOTS;
            if (w->mode == SC_FILE_ORPHAN || w->mode == SC_FILE_LIVE) {
                /* Its slot flipped onto a lost write's top, or onto a
                 * block a live file walked before it maps in a run: the
                 * run's block (correct:803 state 8688, bit 6 of byte 11
                 * of block 544 flipped: the last slot of
                 * /src42/m116/zz0135 went from 548 to 612, inside the run
                 * of /Backup4/photos 201275/report 0168, walked first, and
                 * the two shared the block on a full stick; bit 0 of byte
                 * 47 of block 656, the same for a slot of /readme-0063.odt
                 * onto the file's own block 679). */
                uint8_t *sb = mem + (size_t)(level + 1) * g->blocksize;
                bool orphan = w->mode == SC_FILE_ORPHAN;
                uint64_t alt = orphan ? sc_flip_orphan_slot(r, x->buf, i, slot, sb)
                                      : sc_flip_live_slot(r, x->buf, x->base, i, slot, w->id, sb);
                if (alt != 0) {
                    const struct scan_entry *o = sc_entry(r, r->map[slot].owner);
                    if (!sc_report(r,
                                   &(struct scan_finding){.code = SCAN_PR_EXT_SLOT_FLIPPED,
                                                          .entry = w->id, .block = x->blk,
                                                          .count = i, .block2 = slot,
                                                          .value = alt},
                                   fpath(w), "%s%s",
                                   orphan           ? "an extender tree nothing links, as its top,"
                                   : o == NULL      ? "another file"
                                   : o->id == w->id ? "another slot of "
                                                    : "the tree of ",
                                   orphan || o == NULL ? "" : o->path))
                        goto out;
                    slot = alt;
                } else if (!orphan && !give_back_earlier(w, x, i, slot, sb)) {
                    goto out;
                }
            }
            w->in_run = (i > 0 && sc_slot(x->buf + LANYFS_EXT_SLOTS, g->addrlen, i - 1) + 1 == slot) ||
                        (i + 1 < g->extmax &&
                         sc_slot(x->buf + LANYFS_EXT_SLOTS, g->addrlen, i + 1) == slot + 1);
            if (take(w, slot, false, fb, x->blk, i, &held)) {
                if (!record(w, fb, slot, held))
                    goto out;
            } else if (sc_stopped(r)) {
                goto out;
            } else if (w->mode == SC_FILE_LIVE && held) {
                if (!record(w, fb, slot, true))
                    goto out;
            }
            continue;
        }
        struct xframe *c = &fr[depth + 1];
        c->buf = mem + (size_t)(depth + 1) * g->blocksize;
        if (sc_read(r, slot, c->buf, &err) != LANYFS_OK) {
            if (!problem(w,
                         &(struct scan_finding){.code = SCAN_PR_TREE_UNREADABLE, .entry = w->id,
                                                .block = slot},
                         err.msg))
                goto out;
            add_holes(w, fb, span, x->level);
            continue;
        }
        unsigned cl = c->buf[LANYFS_EXT_LEVEL];
        if (c->buf[0] != LANYFS_TYPE_EXT) {
            if (!problem(w,
                         &(struct scan_finding){.code = SCAN_PR_EXT_TYPE, .entry = w->id,
                                                .block = x->blk, .block2 = slot,
                                                .value = c->buf[0]},
                         NULL))
                goto out;
            add_holes(w, fb, span, x->level);
            continue;
        }
        if (cl + 1 != x->level) {
            if (!problem(w,
                         &(struct scan_finding){.code = SCAN_PR_EXT_LEVEL_WRONG, .entry = w->id,
                                                .block = x->blk, .block2 = slot, .value = cl,
                                                .value2 = x->level},
                         NULL))
                goto out;
            add_holes(w, fb, span, x->level);
            continue;
        }
        w->slots = x->buf + LANYFS_EXT_SLOTS; /* its children are no lone blocks either */
        if (!take(w, slot, true, cl, x->blk, i, &held)) {
            if (sc_stopped(r))
                goto out;
            add_holes(w, fb, span, x->level);
            continue;
        }
        uint16_t wc = lanyfs_get16(c->buf + LANYFS_HDR_WRCNT);
        if (w->mode == SC_FILE_LIVE) {
            sc_map_meta(r, slot, wc);
            sc_counter_torn_early(r, slot, c->buf);
        }
        w->st.extenders++;
        if (wc > w->st.ext_wrcnt_max)
            w->st.ext_wrcnt_max = wc;
        c->blk = slot;
        c->base = fb;
        c->span = lanyfs_geom_pow(g, cl);
        c->next = 0;
        c->end = sc_slots_end(c->buf + LANYFS_EXT_SLOTS, g->addrlen, g->extmax);
        c->level = cl;
        depth++;
    }
out_ok:
    ok = !sc_stopped(r);
out:
    if (mem != small)
        free(mem);
    return ok;
}

bool sc_file_walk(struct scan_result *r, uint32_t id, enum sc_file_mode mode)
{
    return sc_file_walk_marks(r, id, mode, NULL);
}

bool sc_file_walk_marks(struct scan_result *r, uint32_t id, enum sc_file_mode mode,
                        uint64_t *ext_marks)
{
    struct scan_entry *x = sc_entry(r, id);
    if (x == NULL || !scan_entry_is_file(x))
        return true;
    struct fwalk w = {.r = r, .id = id, .mode = mode, .needed = x->blocks_needed,
                      .ext_marks = mode == SC_FILE_RECOVER ? ext_marks : NULL};
    bool ok = walk(&w);
    if (ok && mode != SC_FILE_DELETED)
        ok = publish(&w);
    if (w.pairs == w.first)
        w.pairs = NULL;
    if (mode == SC_FILE_RECOVER) {
        free(w.pairs);
        return ok;
    }
    struct sc_aux *a = sc_aux(r, id);
    bool via_stale = a->via_stale;
    uint64_t from = a->from;
    uint8_t link = a->link;
    uint32_t depth = a->depth;
    bool path_set = a->path_set, data_pooled = a->data_pooled;
    *a = w.st;
    a->data_pooled = data_pooled;
    a->walked = true;
    a->via_stale = via_stale;
    a->from = from;
    a->link = link;
    a->depth = depth;
    a->path_set = path_set;
    free(w.pairs);
    return ok;
}

bool sc_files_pass(struct scan_result *r)
{
    for (size_t i = 0; i < r->nentries; i++) {
        if (r->entries[i].state != SCAN_ENTRY_LIVE || !scan_entry_is_file(&r->entries[i]))
            continue;
        if (!sc_file_walk(r, r->entries[i].id, SC_FILE_LIVE))
            return false;
        if ((i & 255) == 0)
            sc_progress(r, SCAN_PHASE_TREE, i, r->nentries);
    }
    sc_stash_drop(r);
    return claim_excess(r) && release_entries(r) && sc_flip_hole_tops(r);
}

bool sc_files_judge(struct scan_result *r)
{
    for (size_t i = 0; i < r->nentries; i++) {
        struct scan_entry *x = &r->entries[i];
        struct sc_aux *a = &r->aux[i];
        if (x->state != SCAN_ENTRY_LIVE || !scan_entry_is_file(x) || !a->walked)
            continue;
        uint32_t id = x->id;
        struct sc_file_marks m;
        if (!sc_mark_file(r, id, &m))
            return false;
        x = sc_entry(r, id);
        a = sc_aux(r, id);
        struct scan_finding f = {.entry = id, .block = x->block, .value = x->e.size,
                                 .count = x->blocks_needed, .count2 = x->blocks_mapped};
        /* Holes are legal (a sparse file); blocks a broken map lost are not. */
        bool unmapped = a->tree_broken && x->blocks_mapped < x->blocks_needed;
        if (unmapped) {
            f.code = SCAN_PR_FILE_SIZE_UNMAPPED;
            if (!sc_report(r, &f, x->path, NULL))
                return false;
        }
        if (a->excess > 0 && !m.extra_mapped) {
            f.code = SCAN_PR_FILE_SIZE_EXCESS;
            f.count2 = a->excess;
            if (!sc_report(r, &f, x->path, NULL))
                return false;
        }
        if (a->holes > 0 && !unmapped && !m.first_overwritten && !a->tree_broken) {
            f.code = SCAN_PR_FILE_HOLES;
            f.count = a->holes;
            if (!sc_report(r, &f, x->path, NULL))
                return false;
        }
    }
    return true;
}
