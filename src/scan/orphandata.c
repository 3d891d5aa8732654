/*
 * orphandata.c -- an orphaned file's data block that still reads as an
 * old entry is the file's data, as it is for a live file.
 *
 * A block handed out as a file's data keeps what it held until the data
 * write lands: when that write is lost, or the file's map was written
 * before it, the block still reads as the entry it was before that entry
 * was deleted.  A live file claims such a block in its walk and the sweep
 * never reads it as an entry.  When damage cuts the links above the file
 * it becomes an orphan, and the sweep, which meets every unowned block
 * before any orphan is walked, read the old entry as one more orphan: the
 * repair then put a phantom of a deleted entry in /lost+found and left a
 * hole in the file, where the undamaged stick kept the file as it was.
 *
 * So before the orphans are linked, each orphaned file's map is read
 * (without any claim), and an orphaned entry at one of its data blocks
 * inside the size is taken back (sc_entries_remove) when all of this holds:
 *  - the file's tree is its own: its top is an extender nothing holds;
 *  - the entry was created no later than the file was last changed (both
 *    times readable): the block was free when the file took it, so the
 *    entry was deleted by then (one created later is the file's stale map
 *    naming a block handed out again: the entry wins, as release_entries
 *    in files.c decides for a live file);
 *  - nothing links the entry, and its subtree (a directory's entries, a
 *    file's data) links no other orphaned entry or orphan extender than
 *    the file and the file's top (a deleted file's blocks are handed out
 *    again together): an entry with a tree of its own below it is kept.
 *    Its left and right links, to siblings, do not count, nor do stale
 *    links: a file's data pointer that names an entry, a link to an
 *    entry another orphan links too, and links among such old entries or
 *    into the orphaned files' trees (a deleted tree's entries and blocks
 *    are handed out together, so several of them end up in one file).
 * The block then goes to the file in its own walk (link_orphans).
 *
 * The other way round, an orphaned file whose data block inside the size
 * holds an orphaned or live entry created after the file last changed is
 * a deleted file (sc_orphans_deleted): the block was handed out again
 * after the file's last change, which only a delete allows.  As an orphan
 * its stale map took the blocks of the writes made since, a lost write's
 * tree among them (correct:570 state 3927, chain block 198 zeroed:
 * /IMG_0077.tar.gz's old map named the entry and the top extender of
 * /readme-0105's write, which lost its data).  Its entry is listed
 * nowhere when the list's lost part listed it, or when the list is whole
 * but the write cut off had taken the entry's block off it too and not
 * yet written it (correct:599 state 499: /a0059.bin's write had taken the
 * blocks of /report 0035.bin, deleted before it, and written its own entry
 * over the deleted file's data).  A live entry there counts as well: on
 * correct:506 state 871 the unlinked /zz0036.jpg was an orphan, but a
 * deleted file once a zeroed directory orphaned the entry its map names.
 * So does a block a live link names as an entry and that reads as zeros
 * (sc_named_blank): an entry's sector that read back blank, whose time is
 * gone, but a live tree holds it, so it was handed out after the file's
 * map was last written (correct:822 state 10864, directory block 621
 * zeroed: the deleted /Data.0038.jpg, whose map named it, read as an
 * orphan and took 19 blocks of the lost write at 992).  Not where that
 * link reads as no entry and lies one bit from an orphaned directory
 * whose tree reaches the file: the link flipped, orphaned the directory,
 * and names the file's own block (named_by_flipped_link).
 *
 * So is an orphaned file whose top extender and one of the blocks it maps
 * the free list lists (top_listed): the correct writer's delete frees the
 * file's own block last, and a write cut off since took it off the list.
 *
 * So is an orphaned file whose data block inside the size the free list
 * lists, when a chain block of the list read as zeros or junk
 * (chain_lost): a delete frees the data before the file's own block, and
 * that chain block took the listing of the file's block with it
 * (correct:644 state 6874, chain block 620 zeroed: the deleted
 * /x0052.jpg, its entry listed only by 620, read as an orphan and took
 * back the 12 blocks that the cut-off write at 541 had been handed since;
 * 7 of its blocks were listed by the head).
 * A list read whole says nothing of the kind: a truncate frees the data of
 * a file that stays (2012:525 state 1181, /x0039.txt replaced).
 */
#include <stdlib.h>
#include <time.h>

#include "scan_priv.h"

/* Was e created after x was last changed?  False when either time cannot
 * be read. */
static bool newer_than_change(const struct scan_entry *e, const struct scan_entry *x)
{
    time_t made, changed;
    return sc_ts_seconds(&e->e.created, &made) && sc_ts_seconds(&x->e.modified, &changed) &&
           made > changed;
}

/* Was e created no later than x was last changed?  False when either time
 * cannot be read. */
static bool older_than_change(const struct scan_entry *e, const struct scan_entry *x)
{
    time_t made, changed;
    return sc_ts_seconds(&e->e.created, &made) && sc_ts_seconds(&x->e.modified, &changed) &&
           made <= changed;
}

static bool bit(const uint64_t *m, uint64_t b)
{
    return (m[b / 64] >> (b % 64)) & 1;
}

static void set_bit(uint64_t *m, uint64_t b)
{
    m[b / 64] |= (uint64_t)1 << (b % 64);
}

/* Does e's subtree (a directory's entries, a file's data pointer) link an
 * orphaned entry or an orphan extender other than file x, x's top, the
 * blocks of the orphaned files' trees (in_tree: which they took over with
 * e's block, when e was a file whose blocks were handed out to them) and
 * the old entries in files' data (in_data)?  Its left and right links are
 * its siblings in a parent's tree: taking e for data leaves them orphans
 * of their own, which lose nothing, and an old entry's sibling links are
 * stale (correct:485 state 9622 and correct:497 state 6547, where the
 * damaged parent was the only other link to that sibling). */
static bool links_orphans(struct scan_result *r, const struct scan_entry *e,
                          const struct scan_entry *x, const uint64_t *linked,
                          const uint64_t *in_data, const uint64_t *in_tree)
{
    uint64_t own[3] = {e->e.left, e->e.right, e->e.subtree};
    for (int j = 2; j < 3; j++) {
        if (own[j] == x->block || own[j] == x->e.subtree ||
            (own[j] < r->nblocks && (bit(in_data, own[j]) || bit(in_tree, own[j]))))
            continue;
        const struct scan_block *t = own[j] ? sc_cell(r, own[j]) : NULL;
        /* A file's data pointer is its tree only where it names an
         * extender: one naming an entry is a stale link of an old entry. */
        bool tree = j == 2 && scan_entry_is_file(e);
        if (t == NULL || (tree ? t->cls != SCAN_BLK_ORPHAN_EXT
                               : t->cls != SCAN_BLK_ORPHAN && t->cls != SCAN_BLK_ORPHAN_EXT))
            continue;
        /* An entry another orphan links (linked: the links of the orphans
         * but the old entries) keeps that parent: the old entry's link to
         * it is stale. */
        if (t->cls == SCAN_BLK_ORPHAN && bit(linked, own[j]))
            continue;
        return true;
    }
    return false;
}

/*
 * A leaked block that reads as an extender but for one slot naming a block
 * past the device's end, with at least one slot in range: one flipped bit
 * in a slot's upper bytes, which the sweep's test of an extender refuses
 * (correct:619 state 1508, bit 3 of byte 1281 of block 16: an empty slot
 * of the old extender at 16 named block 2048 of 512).  Junk that happens
 * to begin with the extender's type names the device's end at nearly
 * every slot.
 */
static bool extender_but_one_slot(struct scan_result *r, uint64_t blk)
{
    const uint8_t *b = sc_window(r, blk);
    if (b == NULL || b[0] != LANYFS_TYPE_EXT || b[LANYFS_EXT_LEVEL] > SC_LEVEL_MAX)
        return false;
    uint32_t wild = 0, good = 0;
    for (uint32_t k = 0; k < r->g.extmax && wild < 2; k++) {
        uint64_t s = lanyfs_ext_slot(&r->g, b, k);
        if (s >= r->dev_blocks)
            wild++;
        else if (s != 0)
            good++;
    }
    return wild == 1 && good > 0;
}

/* An orphaned file with data to map whose top is an extender nothing
 * holds: its tree is its own, so its map can be read before any claim.
 * A top with one slot past the device's end is such an extender too,
 * left among the leaked (or, with the free list broken, unknown) blocks
 * by the sweep: without it the orphan kept an old tree whose blocks later
 * writes had since been handed, and took lost trees' data with it. */
static bool own_tree_orphan(struct scan_result *r, const struct scan_entry *x)
{
    if (x->state != SCAN_ENTRY_ORPHAN || !scan_entry_is_file(x) || x->blocks_needed == 0)
        return false;
    struct scan_block *top = x->e.subtree ? sc_cell(r, x->e.subtree) : NULL;
    if (top == NULL)
        return false;
    if (top->owner == 0 && top->cls == SCAN_BLK_ORPHAN_EXT)
        return true;
    /* A block a live file maps only past its size holds none of its bytes
     * (correct:761 state 1890, bit 6 of byte 57 of block 83 flipped: the
     * deleted /Data.0101.jpg's old extender, which /docs3/old24/
     * notes-0052.jpg maps past its size, came back as an orphan's, and
     * took the cut-off write of /report 0128 at 86). */
    bool loose = (top->owner == 0 && (top->cls == SCAN_BLK_LEAKED || top->cls == SCAN_BLK_UNKNOWN)) ||
                 sc_past_size_data(r, top);
    return loose && extender_but_one_slot(r, x->e.subtree);
}

/* The orphaned entry (not x) whose own block is blk, NULL when none. */
static const struct scan_entry *entry_at(struct scan_result *r, const struct scan_entry *x,
                                         uint64_t blk)
{
    const struct scan_block *c = blk ? sc_cell(r, blk) : NULL;
    if (c == NULL || c->cls != SCAN_BLK_ORPHAN || c->owner == x->id)
        return NULL;
    const struct scan_entry *e = sc_entry(r, c->owner);
    return e != NULL && e->state == SCAN_ENTRY_ORPHAN && e->block == blk ? e : NULL;
}

/* The live or orphaned entry (not x) whose own block is blk, NULL when none. */
static const struct scan_entry *any_entry_at(struct scan_result *r, const struct scan_entry *x,
                                             uint64_t blk)
{
    const struct scan_block *c = blk ? sc_cell(r, blk) : NULL;
    if (c == NULL || c->owner == x->id ||
        (c->cls != SCAN_BLK_ORPHAN && c->cls != SCAN_BLK_DIR && c->cls != SCAN_BLK_FILE))
        return NULL;
    const struct scan_entry *e = sc_entry(r, c->owner);
    return e != NULL && e->block == blk &&
                   (e->state == SCAN_ENTRY_ORPHAN || e->state == SCAN_ENTRY_LIVE)
               ? e
               : NULL;
}

struct pairing {
    uint32_t entry; /* the orphaned entry at the file's data block */
    uint32_t file;  /* the orphaned file */
};

bool sc_orphan_data_entries(struct scan_result *r)
{
    struct pairing *cand = NULL;
    uint32_t *drop = NULL;
    size_t ncand = 0, cap = 0, ndrop = 0;
    uint64_t *in_data = NULL, *in_tree = NULL, *linked = NULL;
    uint32_t *walked_by = NULL; /* by top: the file whose walk read it, 0 = none yet */
    uint64_t budget = 2 * r->nblocks;
    bool ok = false;
    size_t words = (size_t)(r->nblocks / 64 + 1);
    /* 1. The orphaned entries at orphaned files' data blocks, older than
     *    the file's last change. */
    for (size_t i = 0; i < r->nentries && budget > 0; i++) {
        struct scan_entry *x = &r->entries[i];
        if (!own_tree_orphan(r, x))
            continue;
        if (walked_by == NULL &&
            ((walked_by = calloc((size_t)r->nblocks, sizeof(*walked_by))) == NULL ||
             (in_data = calloc(words, sizeof(*in_data))) == NULL ||
             (in_tree = calloc(words, sizeof(*in_tree))) == NULL)) {
            sc_oom(r);
            goto out;
        }
        /* Files sharing a top read it once (a damaged stick may have
         * many), but each is checked against the data it maps: a deleted
         * file's old entry and the write that took its blocks both name
         * the top, and the entry lies in the write's data (correct:609
         * state 8267, block 890 zeroed: /x0068.tar.gz at 348 and the
         * orphaned directory's report 0088.odt, whose data block 348 is). */
        uint32_t xid = x->id;
        uint64_t top = x->e.subtree;
        const struct scan_entry *w = walked_by[top] != 0 ? sc_entry(r, walked_by[top]) : NULL;
        if (w == NULL) {
            walked_by[top] = xid;
            if (!sc_file_walk_marks(r, xid, SC_FILE_RECOVER, in_tree))
                goto out;
            w = x = sc_entry(r, xid);
            budget -= x->ndata < budget ? x->ndata : budget;
            for (uint64_t k = 0; k < x->ndata; k++)
                if (x->data[k] != 0 && x->data[k] < r->nblocks)
                    set_bit(in_tree, x->data[k]);
        } else {
            uint64_t n = w->ndata < x->blocks_needed ? w->ndata : x->blocks_needed;
            budget -= n < budget ? n : budget;
        }
        for (uint64_t k = 0; k < w->ndata && k < x->blocks_needed; k++) {
            uint64_t blk = w->data[k];
            const struct scan_entry *e = entry_at(r, x, blk);
            if (e == NULL || bit(in_data, blk) || !older_than_change(e, x))
                continue;
            if (ncand == cap) {
                size_t ncap = cap ? cap * 2 : 8;
                struct pairing *nc = realloc(cand, ncap * sizeof(*nc));
                if (nc == NULL) {
                    sc_oom(r);
                    goto out;
                }
                cand = nc;
                cap = ncap;
            }
            cand[ncand++] = (struct pairing){e->id, xid};
            set_bit(in_data, blk);
        }
    }
    if (ncand == 0) {
        ok = true;
        goto out;
    }
    /* 2. Every block an orphaned entry links (its tree links), but for the
     *    links of the entries found in 1: old entries in a file's data,
     *    often several of one deleted tree, do not keep one another. */
    linked = calloc(words, sizeof(*linked));
    drop = malloc(ncand * sizeof(*drop));
    if (linked == NULL || drop == NULL) {
        sc_oom(r);
        goto out;
    }
    for (size_t j = 0; j < r->nentries; j++) {
        const struct scan_entry *o = &r->entries[j];
        if (o->state != SCAN_ENTRY_ORPHAN || (o->block < r->nblocks && bit(in_data, o->block)))
            continue;
        uint64_t l[3] = {o->e.left, o->e.right, scan_entry_is_dir(o) ? o->e.subtree : 0};
        for (int t = 0; t < 3; t++)
            if (l[t] != 0 && l[t] < r->nblocks)
                set_bit(linked, l[t]);
    }
    /* 3. Those nothing else links and that link nothing else. */
    for (size_t j = 0; j < ncand; j++) {
        const struct scan_entry *e = sc_entry(r, cand[j].entry);
        const struct scan_entry *x = sc_entry(r, cand[j].file);
        if (e != NULL && x != NULL && !bit(linked, e->block) &&
            !links_orphans(r, e, x, linked, in_data, in_tree))
            drop[ndrop++] = e->id;
    }
    if (!sc_entries_remove(r, drop, ndrop))
        goto out;
    ok = true;
out:
    free(cand);
    free(drop);
    free(walked_by);
    free(in_data);
    free(in_tree);
    free(linked);
    return ok;
}

/* Does a chain block the scan read list blk, on a slot nothing doubts? */
static bool listed(const struct scan_result *r, uint64_t blk)
{
    return blk < r->nblocks && r->map[blk].cls == SCAN_BLK_FREE && !sc_free_doubted(r, blk);
}

/* Push e's links (its siblings unless top, its subtree when a directory). */
static bool push_links(uint64_t **stack, size_t *n, size_t *cap, const struct scan_entry *e,
                       bool top)
{
    return sc_push_link_set(stack, n, cap, top ? 0 : e->e.left, top ? 0 : e->e.right,
                            scan_entry_is_dir(e) ? e->e.subtree : 0);
}

/* Does the orphaned directory at block d reach the entry at block blk
 * through its tree (explicit stack, each block once, orphaned entries
 * only)?  *ok goes false when memory runs out; each node read spends one
 * of *steps, and none left answers no. */
static bool dir_reaches(struct scan_result *r, uint64_t d, uint64_t blk, bool *ok,
                        uint64_t *steps)
{
    const struct scan_block *c = sc_cell(r, d);
    const struct scan_entry *e = c != NULL && c->cls == SCAN_BLK_ORPHAN ? sc_entry(r, c->owner) : NULL;
    if (e == NULL || e->block != d || !scan_entry_is_dir(e))
        return false;
    uint64_t *stack = NULL;
    size_t n = 0, cap = 0;
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    bool hit = false;
    if (seen == NULL || !push_links(&stack, &n, &cap, e, true)) {
        *ok = false;
        goto out;
    }
    while (n > 0 && !hit && *steps > 0) {
        uint64_t b = stack[--n];
        (*steps)--;
        int added = lanyfs_blockset_add(seen, b);
        if (added < 0) {
            *ok = false;
            break;
        }
        if (added == 0)
            continue;
        if (b == blk) {
            hit = true;
            break;
        }
        const struct scan_block *bc = sc_cell(r, b);
        const struct scan_entry *be =
            bc != NULL && bc->cls == SCAN_BLK_ORPHAN ? sc_entry(r, bc->owner) : NULL;
        if (be != NULL && be->block == b && !push_links(&stack, &n, &cap, be, false)) {
            *ok = false;
            break;
        }
    }
out:
    free(stack);
    lanyfs_blockset_free(seen);
    return hit;
}

/* Is blank block blk, which orphaned file x maps, named by a directory link
 * that reads as no entry (TREE_PTR_TYPE) and lies one bit from an
 * orphaned directory whose tree reaches x?  That link flipped, and
 * orphaned the directory: blk is x's own, no block handed out since
 * (correct:884 state 2724, bit 0 of byte 9 of directory block 17: its left
 * link went from 91, /old76, to 347, a blank data block of
 * /old76/readme-0139.bin, which then read as a deleted file).  So is a
 * link of one set bit: no link, 0, with that bit flipped (2012:918 state
 * 3408, bit 7 of byte 16 of block 199: the right link of the leaf
 * readme-0109.odt went from 0 to 128, a blank data block of the orphaned
 * /Data.0017, which then read as a deleted file), and a child slot of an
 * extender that reads as no extender (EXT_TYPE) of one set bit (correct:924
 * state 5779, bit 2 of byte 15 of block 885: an empty slot of the level-1
 * top of /old5/m13/IMG_0051.odt went to 1024, a blank data block of the
 * orphaned /IMG_0051.odt). */
static bool named_by_flipped_link(struct scan_result *r, const struct scan_entry *x, uint64_t blk,
                                  bool *ok, uint64_t *steps)
{
    for (size_t i = 0; i < r->nfindings && *ok && *steps > 0; i++, (*steps)--) {
        const struct scan_finding *f = &r->findings[i];
        const struct scan_finding *a = r->alt != NULL ? &r->alt[i] : NULL;
        bool dir = (f->code == SCAN_PR_TREE_PTR_TYPE && f->block2 == blk) ||
                   (a != NULL && a->code == SCAN_PR_TREE_PTR_TYPE && a->block2 == blk);
        bool ext = (f->code == SCAN_PR_EXT_TYPE && f->block2 == blk) ||
                   (a != NULL && a->code == SCAN_PR_EXT_TYPE && a->block2 == blk);
        if (!dir && !ext)
            continue;
        if (sc_one_bit(blk))
            return true; /* no link, 0, with one bit flipped */
        for (unsigned k = 0; k < 64 && dir && *ok; k++) {
            uint64_t d = blk ^ ((uint64_t)1 << k);
            if (d != 0 && d < r->nblocks && dir_reaches(r, d, x->block, ok, steps))
                return true;
        }
    }
    return false;
}

/*
 * The blocks a child slot of an orphaned extender of level 1 or more
 * names: a bit a block, and the (named, extender) pairs sorted by the
 * block named (built on first use; false when out of memory).
 */
struct cpair {
    uint64_t named, upper;
};

struct child_names {
    uint64_t *bits;
    struct cpair *pairs;
    size_t n, cap;
    uint64_t steps; /* entries read matching extenders to files, all checks together */
};

static void child_names_free(struct child_names *cn)
{
    free(cn->bits);
    free(cn->pairs);
}

static int cmp_cpair(const void *a, const void *b)
{
    const struct cpair *x = a, *y = b;
    if (x->named != y->named)
        return x->named < y->named ? -1 : 1;
    return x->upper < y->upper ? -1 : x->upper > y->upper;
}

static bool child_named_bits(struct scan_result *r, struct child_names *cn)
{
    if (cn->bits != NULL)
        return true;
    cn->bits = calloc((size_t)(r->nblocks / 64 + 1), sizeof(uint64_t));
    if (cn->bits == NULL)
        return sc_oom(r);
    for (uint64_t blk = 1; blk < r->nblocks; blk++) {
        const struct scan_block *c = &r->map[blk];
        const uint8_t *b = c->cls == SCAN_BLK_ORPHAN_EXT && c->index >= 1 ? sc_window(r, blk)
                                                                          : NULL;
        if (b == NULL || b[0] != LANYFS_TYPE_EXT || b[LANYFS_EXT_LEVEL] == 0)
            continue;
        for (uint32_t k = 0; k < r->g.extmax; k++) {
            uint64_t s = lanyfs_ext_slot(&r->g, b, k);
            if (s == 0 || s >= r->nblocks)
                continue;
            cn->bits[s / 64] |= (uint64_t)1 << (s % 64);
            if (cn->n == cn->cap) {
                struct cpair *np = sc_grow(cn->pairs, &cn->cap, sizeof(*np), 64);
                if (np == NULL)
                    return sc_oom(r);
                cn->pairs = np;
            }
            cn->pairs[cn->n++] = (struct cpair){s, blk};
        }
    }
    if (cn->n > 1)
        qsort(cn->pairs, cn->n, sizeof(*cn->pairs), cmp_cpair);
    cn->steps = 2 * (uint64_t)r->nentries + r->nblocks + 1024;
    return true;
}

/* Was e last changed no later than x was made?  False when either time
 * cannot be read. */
static bool changed_before_made(const struct scan_entry *e, const struct scan_entry *x)
{
    time_t changed, made;
    return sc_ts_seconds(&e->e.modified, &changed) && sc_ts_seconds(&x->e.created, &made) &&
           changed <= made;
}

/* Is upper the top extender of a file last changed no later than x was
 * made (an older file's tree)?  Entries are read within cn->steps. */
static bool older_files_top(struct scan_result *r, const struct scan_entry *x, uint64_t upper,
                            struct child_names *cn)
{
    for (size_t i = 0; i < r->nentries && cn->steps > 0; i++, cn->steps--) {
        const struct scan_entry *e = &r->entries[i];
        if (e != x && scan_entry_is_file(e) && e->e.subtree == upper)
            return changed_before_made(e, x);
    }
    return false;
}

/* Does x map upper as a data block inside its size?  Slots are read
 * within cn->steps. */
static bool maps_as_data(const struct scan_entry *x, uint64_t upper, struct child_names *cn)
{
    for (uint64_t k = 0; k < x->ndata && k < x->blocks_needed && cn->steps > 0; k++, cn->steps--)
        if (x->data[k] == upper)
            return true;
    return false;
}

/* Does orphaned file x's data block blk read as an extender that maps
 * data, which a child slot of an orphaned tree names?  No file's bytes
 * read so: a later write made it the tree's (correct:948 state 6357,
 * block 67 zeroed: the orphaned /notes-0109.odt in the deleted /report
 * 0019.odt's data had shown that file's blocks handed out; without it,
 * the child extender 68 of the lost tree at 174 and its ten data blocks
 * went to report 0019.odt, and the tree lost 311 of its 369 blocks).
 * Not when every extender that names it is one x maps as data too, or
 * the top of a file last changed before x was made: x's write took the
 * old tree's blocks, and its data writes there had not landed (correct:977
 * state 10640, directory block 60 zeroed: /DCIM15/.../a0111.odt, orphaned
 * with its directory, mapped 410 and 871, the old level-1 top and child
 * extender of /x0065.jpg's write, and read as deleted; its 64 blocks were
 * freed). */
static bool later_child(struct scan_result *r, const struct scan_entry *x, uint64_t blk,
                        struct child_names *cn, bool *ok)
{
    if (blk == 0 || blk >= r->nblocks)
        return false;
    const uint8_t *b = sc_window(r, blk);
    if (b == NULL || b[0] != LANYFS_TYPE_EXT || !sc_extender_maps(&r->g, r->dev_blocks, b))
        return false;
    if (!child_named_bits(r, cn)) {
        *ok = false;
        return false;
    }
    if (!((cn->bits[blk / 64] >> (blk % 64)) & 1))
        return false;
    size_t lo = 0, hi = cn->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cn->pairs[mid].named < blk)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < cn->n && cn->pairs[i].named == blk; i++)
        if (!maps_as_data(x, cn->pairs[i].upper, cn) &&
            !older_files_top(r, x, cn->pairs[i].upper, cn))
            return true;
    return false;
}

/* Is x an orphaned file whose top extender the free list lists, on a
 * slot nothing doubts, with a data block its top maps?  The correct
 * writer's delete frees a file's data, then its extenders, and its own
 * block last: a write cut off since took the entry's block off the list
 * and had not written it yet (correct:871 state 439: the deleted
 * /notes-0017.jpg came back as an orphan whose map named the entry and
 * extender of /IMG_0047.odt's write).  Not a top of one set bit, which
 * one flipped bit in an empty chain slot lists (files.c keeps the
 * orphan's tree then), nor one listed without its data.  The 2012 driver
 * frees no extender (SPEC-9.4). */
static bool top_listed(struct scan_result *r, const struct scan_entry *x)
{
    uint64_t top = x->e.subtree;
    if (x->state != SCAN_ENTRY_ORPHAN || !scan_entry_is_file(x) || top == 0 || !listed(r, top) ||
        sc_free_one_bit(r, top))
        return false;
    const uint8_t *b = sc_window(r, top);
    if (b == NULL || b[0] != LANYFS_TYPE_EXT || b[LANYFS_EXT_LEVEL] != 0)
        return false;
    for (uint32_t k = 0; k < r->g.extmax; k++) {
        uint64_t s = lanyfs_ext_slot(&r->g, b, k);
        if (s != 0 && s != top && listed(r, s))
            return true;
    }
    return false;
}

/*
 * Do live structures hold most of the blocks x's map names inside its
 * size, two at least, or one that a live file's walk holds as an
 * extender?  No writer hands out an orphan's blocks while its entry
 * stands: a delete whose unlink landed freed them, and later writes took
 * them, so the orphan is a deleted file whose free list entry the scan
 * cannot read (correct:969 state 1752, chain block 2, the only one,
 * zeroed: the deleted /x0072.tar.gz came back as an orphan whose 11 blocks
 * live files held 6 of, and its claim on the other 5 hid the lost write
 * at 118).  A live walk takes a block as an extender only where it reads
 * as one, of the level its parent needs, so one such block is enough
 * (correct:999 state 12812: the deleted /a0111.jpg at 859 read as an
 * orphan whose map named 869, the top of the live x0183.odt, made 52
 * operations after the delete).
 */
static bool reused_by_live(const struct scan_result *r, const struct scan_entry *x)
{
    uint64_t held = 0, mapped = 0;
    for (uint64_t k = 0; k < x->ndata && k < x->blocks_needed; k++) {
        uint64_t b = x->data[k];
        if (b == 0 || b >= r->nblocks)
            continue;
        mapped++;
        enum scan_class cls = (enum scan_class)r->map[b].cls;
        if (cls == SCAN_BLK_EXTENDER)
            return true;
        if (sc_class_live(cls))
            held++;
    }
    return held >= 2 && held > mapped - held;
}

bool sc_orphans_deleted(struct scan_result *r)
{
    uint64_t budget = 2 * r->nblocks;
    /* named_by_flipped_link's findings and nodes, all files together: a
     * disk of many blank named blocks costs no more than a pass or two. */
    uint64_t flip_steps = 2 * (r->nblocks + r->nfindings) + 1024;
    struct child_names cn = {0};
    bool lost_part = r->chain_lost;
    for (size_t i = 0; i < r->nentries && budget > 0; i++) {
        struct scan_entry *x = &r->entries[i];
        if (top_listed(r, x)) {
            struct scan_block *own = sc_cell(r, x->block);
            if (own != NULL && own->cls == SCAN_BLK_ORPHAN && own->owner == x->id) {
                x->state = SCAN_ENTRY_DELETED;
                own->cls = SCAN_BLK_DELETED;
                own->index = 0;
            }
            continue;
        }
        if (!own_tree_orphan(r, x))
            continue;
        uint32_t xid = x->id;
        if (!sc_file_walk(r, xid, SC_FILE_RECOVER)) {
            child_names_free(&cn);
            return false;
        }
        x = sc_entry(r, xid);
        budget -= x->ndata < budget ? x->ndata : budget;
        bool stale = false, ok = true;
        for (uint64_t k = 0; k < x->ndata && k < x->blocks_needed && !stale; k++) {
            const struct scan_entry *e = any_entry_at(r, x, x->data[k]);
            stale = (e != NULL && newer_than_change(e, x)) || (lost_part && listed(r, x->data[k])) ||
                    (x->data[k] < r->nblocks && sc_named_blank(r, x->data[k]) &&
                     !named_by_flipped_link(r, x, x->data[k], &ok, &flip_steps)) ||
                    (ok && later_child(r, x, x->data[k], &cn, &ok));
            if (!ok) {
                child_names_free(&cn);
                return sc_oom(r);
            }
        }
        stale = stale || reused_by_live(r, x);
        struct scan_block *own = stale ? sc_cell(r, x->block) : NULL;
        if (own == NULL || own->cls != SCAN_BLK_ORPHAN || own->owner != xid)
            continue;
        x->state = SCAN_ENTRY_DELETED;
        own->cls = SCAN_BLK_DELETED;
        own->index = 0; /* listed by no chain block the scan read */
    }
    child_names_free(&cn);
    return true;
}
