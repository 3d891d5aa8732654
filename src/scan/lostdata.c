/*
 * lostdata.c -- extender trees that no file links but that still map data
 * (SPEC-§8, §10): the writes an unplug cut off before their entry landed.
 *
 * Extender writes are direct, and a file's data pages go out at writepage,
 * but the file block's `data` pointer and `size` reach the disk only at
 * the inode's writeback.  A stick pulled out in between holds the whole
 * write, its tree and its data, and an entry that does not point at it:
 * size 0 and no data pointer for a file just created (its counter 0), the
 * old values for one written again.  The sweep calls such a tree's blocks
 * orphan extenders and leaked blocks; this file finds each tree in them:
 *
 *  - its top: an orphan extender that nobody holds, no driver mark
 *    explains (an empty tree of SPEC-9.4 and 9.7 is one), and no other
 *    such extender one level up maps; one above level 0 that a child it
 *    names names back is no extender at all, but that child's write's
 *    data, holding what an older tree left there (named_back);
 *  - its blocks: a descent from the top, iterative over at most
 *    SC_LEVEL_MAX + 1 levels, each child one level below its parent and
 *    one of those orphan extenders, each data block a leaked block nobody
 *    holds; a block is taken by one tree only (a visited bitmap), so
 *    shared or looping slots cannot repeat it;
 *  - no tree at all when at least as many of its slots name blocks the
 *    live structures hold, or (when its file is not known) data blocks a
 *    tree taken before it took, as name blocks it takes: that is an old
 *    extender in a block handed out again before its new contents landed
 *    (a write's allocations come from the free list, never from another
 *    file's blocks), and its slots still name the blocks of the file it
 *    mapped then; it and what it took are leaked blocks, as an empty tree,
 *    and another tree may take those (correct:579 state 8666, block 127
 *    zeroed: the live file there became lost tree 328, and its old copy
 *    341, whose slots named 328's blocks and five of /readme-0098's
 *    write, took those five);
 *  - the order: tops whose slots name no block the live structures hold
 *    and no other candidate extender first, and among those alike the
 *    ones whose file is known (below); then the others, by the same
 *    rule, those that name no held block before those that do, and by
 *    how many candidate extenders they name (top_holds); a top that a
 *    deleted file's data pointer names counts as naming a held block: it
 *    is that file's extender, freed with it, whose slots still name the
 *    blocks handed out since (correct:644 state 6874, chain block 620
 *    zeroed: the deleted /x0052.jpg's), and within its round it goes
 *    after the others that name held blocks (correct:691 state 6498,
 *    chain block 179 zeroed: the deleted /notes-0015.jpg's extender 275
 *    went before the write at 596, which named a stale orphan entry, and
 *    took 11 of its blocks); a block two
 *    candidates' data slots name, met at a slot with no data slot beside
 *    it, last (a flipped slot stands alone, a write's blocks come in
 *    runs), to the tree that maps it lowest in its file, a tree that
 *    names another file's entry and top coming after the others
 *    (yielding); so is every
 *    such block of a tree whose file is not known and that names another
 *    candidate extender: an old extender, whose file's block went to
 *    that other write's extender, keeps its run of slots; and a tree
 *    whose file is not known and whose slots name a held block (an old
 *    extender, or a damaged one) does not take a block such a tree left
 *    waiting before it, but waits as well (names_held); a block a live
 *    file maps only past its size is a leftover or a damaged slot, which
 *    a tree may take;
 *  - the file it belongs to, when the disk tells: the file entry in the
 *    block just before the top, whose data pointer is 0 and whose counter
 *    is 0.  Create writes the entry, and the file's first write allocates
 *    its top extender next, from the same free list; the counter says that
 *    no writeback of the entry landed since (SPEC-§10).  An entry written
 *    back with no data pointer may be a file emptied since, its old tree
 *    freed by writes that did not land: pairing would give it back data
 *    it dropped, so such a tree stays a lost one;
 *  - its size: the blocks it maps, the last one's trailing zero bytes left
 *    out (a partial page goes out zero-filled past the end of the file).
 *    Data blocks at its end that hold only zeros are no part of it: a
 *    write whose data never landed, they hold nothing to save, and a tree
 *    kept for them alone would become a file of holes.  They stay leaked,
 *    and a tree left with no data block maps nothing, unless it is a
 *    deleted file's own extender that claims contested blocks: that file
 *    was whole once, and a blank block of its own is damage.
 *
 * When the free list could not be walked to its end, a block nothing reached
 * may be a free one its lost part lists (unknown, not leaked): a tree's data
 * blocks are then taken from those too.  A write's blocks come off the free
 * list, and a slot that names another's block makes no tree (above), so a
 * broken list does not cost the lost writes their data: fsck would rebuild
 * the list over them otherwise.  On media the 2012 driver wrote, which
 * frees no extender and empties the slots of a deleted file's (SPEC-9.4,
 * 9.5), such a tree cannot be a deleted file's.  The correct writer frees
 * a deleted file's extenders with their slots, so on its media a tree
 * whose file is not known may be a deleted file that the list's lost part
 * listed: it is taken all the same, since keeping a deleted file's blocks
 * out of the free list costs space, where freeing a lost write's costs its
 * data.
 *
 * A block the free list lists is a tree's data only where the tree maps it
 * in a run whose neighbour no list names, or where only a slot its chain
 * block's counter rules out lists it (listed_alone): a pop that did not
 * land, or a flipped chain slot; FREE_SLOT_IN_USE takes it off the list.
 * It is a tree's top where one flipped bit in an empty chain slot lists it
 * and the tree's data is listed nowhere (unlist_flipped_tops).
 *
 * A tree that maps data is UNLINKED_FILE_DATA when its file is known,
 * LOST_DATA_TREE when not; its blocks are kept for the salvage and for
 * fsck, which links the tree to its file or keeps its blocks out of the
 * free list.  A tree that maps nothing is left to the extender leak of
 * marks.c, as before.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

/* Cells of the trees' data lists, all trees together, per block of the device. */
#define LOST_CELLS_PER_BLOCK 2

struct lframe {
    uint64_t blk;   /* the extender */
    uint64_t base;  /* first file block it maps (UINT64_MAX: past the cap) */
    uint64_t span;  /* file blocks one slot maps */
    uint32_t next;  /* next slot */
    unsigned level; /* its level */
};

struct lpair {
    uint64_t fblk; /* file block */
    uint64_t dblk; /* disk block */
    uint64_t from; /* 0, or the block the slot names, one bit from dblk (flipped_slot) */
    uint64_t ext;  /* with from: the extender and its slot */
    uint32_t slot;
};

/* A block a lost tree may take: the sweep left it to nobody, and no mark explains it. */
static bool free_for_tree(const struct scan_block *c, enum scan_class cls)
{
    return c != NULL && c->cls == cls && c->owner == 0 &&
           !(c->flags & (SCAN_BF_DRIVER | SC_BF_LINKED));
}

/* The superblock names a free list, but its walk broke off, or its head is
 * out of range: blocks nothing reached are unknown.  (Without a list, as
 * after a format cut short, they are an earlier format's, not writes of
 * this one.) */
static bool list_broken(const struct scan_result *r)
{
    return !r->free_complete && (r->freehead != 0 || r->sb.freehead != 0) &&
           !r->format_interrupted;
}

static bool bit(const uint64_t *set, uint64_t b)
{
    return (set[b / 64] >> (b % 64)) & 1;
}

static void set_bit(uint64_t *set, uint64_t b)
{
    set[b / 64] |= (uint64_t)1 << (b % 64);
}

/* A block a live structure or an orphaned file holds: a slot naming it
 * cannot be a lost write's.  (An orphan lost its link, not its blocks: no
 * write took them since, whatever damage cut the link.)  So does a live
 * file's data pointer, whatever its block now reads as (live_tops): a top
 * extender damaged into junk is still no block a later write got
 * (correct:631 state 6292, block 250 junked: the old extender at 278,
 * whose slots named it with blocks no one holds, stopped being an old
 * extender and took blocks of the lost write at 412).  Not where a level-0
 * slot names it in a run of its neighbours (live_top): a write's blocks
 * come in runs, and a pointer one flipped bit moved onto a block that is
 * no extender names some block at random (2012:653 state 2269, bit 7 of
 * byte 24 of block 48: /Backup5/DCIM88/report 0065.txt's pointer went
 * from 6 to 134, the second of the blocks 133-134 that the lost write of
 * /report 0130 maps, and the write lost it).  So is a block a live link
 * names as an entry or extender that reads as zeros (sc_named_blank): a live
 * structure's, a sector that read back blank (correct:770 state 10997,
 * directory block 986 zeroed: the driver's old extender 985, whose first
 * slot named it, stopped naming a held block, went before the cut-off
 * write of /IMG_0133.txt, and took 13 of its blocks).  Not one that holds
 * bytes: the driver's stale links name blocks that later writes took; and
 * not one a live file maps past its size, a leftover a tree may take,
 * blank or not (correct:865 state 467, block 33 zeroed: the blocks after
 * that top count as its file's, and IMG_0018's blank leftover 36 among
 * them made the cut-off write of /Data.0057 go late, and lose its block
 * 13 to an old extender). */
static bool held(struct scan_result *r, uint64_t blk, const uint64_t *live_tops)
{
    const struct scan_block *c = &r->map[blk];
    if (live_tops != NULL && bit(live_tops, blk))
        return true;
    if (sc_past_size_data(r, c))
        return false;
    if (sc_named_blank(r, blk))
        return true;
    if (sc_class_live((enum scan_class)c->cls))
        return true;
    switch ((enum scan_class)c->cls) {
    case SCAN_BLK_ORPHAN:
        return true;
    case SCAN_BLK_LEAKED:
    case SCAN_BLK_ORPHAN_EXT: {
        const struct scan_entry *x = sc_entry(r, c->owner);
        return x != NULL && x->state == SCAN_ENTRY_ORPHAN;
    }
    default:
        return false;
    }
}

/*
 * Does slot k of the level-0 extender b, naming s, lie in a run whose
 * neighbour at k - 1 or k + 1 names a block no live structure holds?  A
 * run of an old extender, whose blocks went to other files since, is no
 * sure claim on a block one of their slots names (correct:697 state 9864,
 * block 449 zeroed: the old 456's run 457-505 named the live entry 468,
 * its data 469 and its extender 470, and 471 came free; the lone rule
 * moved readme-0104.txt's slot from 469 to 471).
 */
static bool run_of_own(struct scan_result *r, const uint8_t *b, uint32_t k, uint64_t s)
{
    const struct lanyfs_geom *g = &r->g;
    if (!sc_slot_in_run(g, b, k, s))
        return false;
    uint64_t before = k > 0 ? lanyfs_ext_slot(g, b, k - 1) : 0;
    uint64_t after = k + 1 < g->extmax ? lanyfs_ext_slot(g, b, k + 1) : 0;
    return (before != 0 && (before + 1 == s || before == s + 1) && before < r->nblocks &&
            !held(r, before, NULL)) ||
           (after != 0 && (after == s + 1 || after + 1 == s) && after < r->nblocks &&
            !held(r, after, NULL));
}

/*
 * Does slot k of the level-0 extender b, naming s, which a file maps at
 * file block i, have a neighbour slot that names the file's block beside
 * i, on the same side?  Then the tree and the file hold the two blocks in
 * one order: the file took them as an older tree left them (freed
 * together, handed out together), and the tree's claim on s is that
 * history, not a slot of the file's that one flipped bit moved onto s
 * (correct:959 state 2562, block 59 zeroed: the old extender 182, the
 * unwritten data block of /Data.0200.jpg's write, named 17 and 50 as
 * /m104/a0035 maps them at file blocks 15 and 16, and 17 moved to 49,
 * which continued the file's run and was the write's).
 */
static bool shares_pair(struct scan_result *r, const uint8_t *b, uint32_t k, uint64_t s)
{
    const struct lanyfs_geom *g = &r->g;
    const struct scan_block *c = &r->map[s];
    const struct scan_entry *x = c->owner != 0 ? sc_entry(r, c->owner) : NULL;
    uint64_t i = c->index;
    if (x == NULL || x->data == NULL || i >= x->ndata || x->data[i] != s)
        return false;
    if (k + 1 < g->extmax && i + 1 < x->ndata && x->data[i + 1] != 0 &&
        lanyfs_ext_slot(g, b, k + 1) == x->data[i + 1])
        return true;
    return k > 0 && i > 0 && x->data[i - 1] != 0 && lanyfs_ext_slot(g, b, k - 1) == x->data[i - 1];
}

/* The live file tops that slot k of extender b, naming s, counts as held:
 * none when it is a data slot in a run of its neighbours (held). */
static const uint64_t *live_top(const struct lanyfs_geom *g, const uint8_t *b, bool leaf,
                                uint32_t k, uint64_t s, const uint64_t *live_tops)
{
    return leaf && sc_slot_in_run(g, b, k, s) ? NULL : live_tops;
}

/* A data block a tree took and gives back: leaked, and free for the next tree. */
static void give_back(struct scan_result *r, uint64_t *seen, uint64_t blk)
{
    r->map[blk].flags &= (uint8_t)~SC_BF_LINKED;
    seen[blk / 64] &= ~((uint64_t)1 << (blk % 64));
}

void sc_lost_free(struct scan_result *r)
{
    for (size_t i = 0; i < r->nlost; i++) {
        free(r->lost[i].data);
        free(r->lost[i].exts);
    }
    free(r->lost);
    r->lost = NULL;
    r->nlost = r->lost_cap = 0;
}

/* The file whose write the tree at top holds, when the disk tells (see above). */
static uint32_t tree_file(struct scan_result *r, uint64_t top)
{
    const struct scan_block *c = top > 1 ? sc_cell(r, top - 1) : NULL;
    if (c == NULL || (c->cls != SCAN_BLK_FILE && c->cls != SCAN_BLK_ORPHAN))
        return 0;
    const struct scan_entry *x = sc_entry(r, c->owner);
    if (x == NULL || x->block != top - 1 || !scan_entry_is_file(x) || x->e.subtree != 0 ||
        x->e.wrcnt != 0)
        return 0;
    return x->id;
}

/*
 * The slots of the extender at top that name blocks the live structures
 * hold (*held), and, at level 0, the data slots that name another
 * candidate extender (*named): such a block was handed out to this tree's
 * file and later held an extender, or this tree's data write to it never
 * landed; either way its data is no part of this tree, and the other tree
 * that maps data there goes first.  A candidate counts whether or not a
 * tree walked before this one took it (cand, the candidates as they were
 * collected): the order of the tops in the disk must not change a round
 * (correct:603 state 464, block 28 zeroed: the shell at block 6 was
 * walked first, and the old extender at 29 that names it then went early
 * and took the block 6 maps).
 */
static void top_holds(struct scan_result *r, uint64_t top, uint8_t *b, const uint64_t *cand,
                      const uint64_t *live_tops, uint64_t *held_n, uint64_t *named_n)
{
    *held_n = *named_n = 0;
    if (sc_read(r, top, b, NULL) != LANYFS_OK)
        return;
    bool leaf = r->map[top].index == 0;
    for (uint32_t k = 0; k < r->g.extmax; k++) {
        uint64_t s = lanyfs_ext_slot(&r->g, b, k);
        const struct scan_block *c = s != 0 && s != top ? sc_cell(r, s) : NULL;
        if (c == NULL)
            continue;
        /* A live or orphaned file's slot one bit off its run, onto a
         * block this top names in a run of its own: the walk gives it back
         * (flipped.c), no held block (correct:770 state 10997, bit 3 of
         * byte 7 of block 950 flipped: /m10/report 0084.jpg's slot went
         * from 952 to 944, inside the lost write at 934, which then went
         * after the tree of /IMG_0133.txt that names its blocks too, and
         * lost all 14; correct:953 state 6283, bit 4 of byte 14 of block
         * 30: the orphaned /IMG_0013.odt's slot 3 went from 34 to 50,
         * inside the lost tree at 42, which yielded its 9 blocks). */
        if (leaf && sc_slot_in_run(&r->g, b, k, s) && sc_flip_run_breaks(r, s))
            continue;
        if (held(r, s, live_top(&r->g, b, leaf, k, s, live_tops)))
            (*held_n)++;
        else if (leaf && bit(cand, s))
            (*named_n)++;
    }
}

/* Block blk reads as zeros only (an unreadable block is not: it may hold data). */
static bool zero_block(struct scan_result *r, uint64_t blk, uint8_t *b)
{
    if (sc_read(r, blk, b, NULL) != LANYFS_OK)
        return false;
    for (uint32_t i = 0; i < r->g.blocksize; i++)
        if (b[i] != 0)
            return false;
    return true;
}

/* Its size in bytes: the blocks mapped, the last one's zero tail left out. */
static uint64_t tree_size(struct scan_result *r, const struct scan_lost_tree *t, uint8_t *b)
{
    uint64_t bs = r->g.blocksize, last = t->data[t->ndata - 1];
    uint64_t size = (t->ndata - 1) * bs;
    if (sc_read(r, last, b, NULL) != LANYFS_OK)
        return size + bs;
    size_t n = r->g.blocksize;
    while (n > 0 && b[n - 1] == 0)
        n--;
    return size + n;
}

/*
 * A data slot with no data slot beside it, whose block another candidate's
 * slot names too: one of the two is likely a flipped slot, and a flipped
 * slot stands alone, where a write's blocks come in runs.  Such a block is
 * taken only after every tree took its other blocks (resolve_deferred).
 */
struct ldefer {
    uint64_t top; /* the tree */
    uint64_t fb;  /* file block */
    uint64_t blk; /* the block */
    bool yields;  /* the tree names another file's entry and top (yielding) */
};

struct ldefers {
    struct ldefer *v;
    size_t n, cap;
    const uint64_t *twice; /* blocks two candidates' data slots name */
    const uint64_t *named; /* blocks a candidate's data slot names */
    const uint64_t *in_run; /* blocks a candidate's data slot names in a run of its slots */
    uint64_t *taken;       /* data blocks the trees added so far took */
    const uint64_t *yielding; /* tops whose claims come after the others' (yielding) */
    const uint64_t *live_tops; /* blocks a live file's data pointer names (held) */
    bool count_taken;      /* the tree walked has no known file: a slot naming
                            * one of those counts as held (walk_tree) */
    bool all_twice;        /* the tree walked names another candidate extender:
                            * every block another candidate names waits */
    bool names_held;       /* the tree walked, a late one whose file is not
                            * known, names a held block with its slots (not
                            * just as a deleted file's own extender, whose
                            * slots name blocks handed out since): a block a
                            * tree naming none deferred waits */
    uint64_t *waiting;     /* blocks a tree naming no held block deferred */
};

/* A tree whose data slots name only deferred blocks: it takes those the
 * other trees leave, once they took theirs (sc_lost_trees). */
struct lshell {
    uint64_t top;
    uint64_t *exts;
    uint64_t nexts;
    size_t from, to; /* its deferred blocks in ldefers.v */
};

/* sc_names_fn: does a candidate's data slot name blk (ctx: the bitmap)? */
static bool names_data(const void *ctx, uint64_t blk)
{
    return bit(ctx, blk);
}

static bool lonely(const struct lanyfs_geom *g, const uint8_t *b, uint32_t k)
{
    return (k == 0 || lanyfs_ext_slot(g, b, k - 1) == 0) &&
           (k + 1 >= g->extmax || lanyfs_ext_slot(g, b, k + 1) == 0);
}

/*
 * Is slot k of the extender ext, naming s, the first block of a paired
 * write: a level-0 top whose file the disk tells, its slot 0 naming the
 * block right after it?  The write took the entry, its top and its first
 * data block one after the other from the free list: that is no flipped
 * slot, whatever else names the block (correct:578 state 6188, chain
 * block 486 zeroed: a deleted file's old tree named 794 in a run, and
 * took the one data block of /readme-0111.jpg's write at 793).
 */
static bool first_of_write(struct scan_result *r, uint64_t top, uint64_t ext, uint32_t k,
                           uint64_t s)
{
    return k == 0 && ext == top && top < UINT64_MAX && s == top + 1 && r->map[top].index == 0 &&
           tree_file(r, top) != 0;
}

static bool defer_push(struct ldefers *d, uint64_t top, uint64_t fb, uint64_t blk)
{
    if (d->n == d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : 8;
        struct ldefer *nv = realloc(d->v, ncap * sizeof(*nv));
        if (nv == NULL)
            return false;
        d->v = nv;
        d->cap = ncap;
    }
    d->v[d->n++] = (struct ldefer){top, fb, blk, d->yielding != NULL && bit(d->yielding, top)};
    if (!d->names_held)
        set_bit(d->waiting, blk);
    return true;
}

/* A data block a tree may take: leaked, past a live file's size, or unknown
 * where the tree may take those (unknown_ok). */
static bool data_free(struct scan_result *r, const struct scan_block *c, bool unknown_ok)
{
    return free_for_tree(c, SCAN_BLK_LEAKED) || sc_past_size_data(r, c) ||
           (unknown_ok && free_for_tree(c, SCAN_BLK_UNKNOWN));
}

/* Does the free list list blk, though a live file may have taken it since
 * (FREE_SLOT_IN_USE)?  Such a neighbour is no sign that the write's pop
 * landed (correct:763 state 6073, bit 2 of byte 120 of block 307 flipped:
 * a hole past /zz0007.odt's size went to 1024, and the lost tree at 1017
 * took the listed 1023 and 1025 beside it). */
static bool listed(const struct scan_result *r, uint64_t blk)
{
    return r->map[blk].cls == SCAN_BLK_FREE || sc_cellbits_get(&r->listed_taken, blk);
}

/*
 * Block s, which slot k of the level-0 extender b maps, is one the free list
 * lists, while the tree maps it in a run of its own slots whose neighbour
 * block no list names: the write's allocation popped it, and that pop did
 * not land while the write did, or one flipped bit in an empty chain slot
 * names it.  Either way it holds the write's bytes.  (A truncate cut off
 * lists a run's blocks side by side, and a tree whose every block is listed
 * maps nothing.)  So does a block that only a slot its chain block's
 * counter rules out lists (sc_free_doubted), alone or not: 2012:632 state
 * 328, bit 3 of byte 2372 of chain block 2 flipped, slot 1178 of a block
 * written 92 times, far past its last filled slot (508), listed block 8,
 * the one data block of a lost write.  And so does one a chain slot one
 * bit off the run of the slots beside it lists (run_flipped, freelist.c:
 * correct:717 state 8544, bit 2 of byte 230 of chain block 247 flipped,
 * slot 107 went from 356, between 355 and 357, to 352, a lost write's
 * block that no slot of its tree names beside others).
 */
static bool listed_alone(const struct scan_result *r, const uint8_t *b, uint32_t k, uint64_t s)
{
    const struct lanyfs_geom *g = &r->g;
    const struct scan_block *c = &r->map[s];
    /* A deleted file's data found listed (its owner) is what a write
     * pops next: no claim against the write's (correct:782 state 7732,
     * bit 1 of byte 527 of chain block 504 flipped: an empty slot listed
     * 512, in the run of /readme-0172.tar.gz's cut-off write, and the
     * deleted /readme-0129.txt's old map named it). */
    const struct scan_entry *o =
        c->owner != 0 && c->owner <= r->nentries ? &r->entries[c->owner - 1] : NULL;
    if (c->cls != SCAN_BLK_FREE || (c->owner != 0 && (o == NULL || o->state != SCAN_ENTRY_DELETED)) ||
        (c->flags & (SCAN_BF_SHARED | SCAN_BF_DRIVER | SC_BF_LINKED)))
        return false;
    if (sc_free_doubted(r, s) || sc_cellbits_get(&r->run_flipped, s))
        return true;
    bool left = k > 0 && s > 1 && lanyfs_ext_slot(g, b, k - 1) == s - 1 && !listed(r, s - 1);
    bool right = k + 1 < g->extmax && s + 1 < r->nblocks &&
                 lanyfs_ext_slot(g, b, k + 1) == s + 1 && !listed(r, s + 1);
    return left || right;
}

struct tree_fits {
    struct scan_result *r;
    const struct ldefers *d;
    const uint64_t *seen;
    bool unknown_ok;
};

/* sc_names_fn: may the tree walked take blk, which no candidate names? */
static bool tree_fits(const void *ctx, uint64_t blk)
{
    const struct tree_fits *t = ctx;
    return !bit(t->seen, blk) && !bit(t->d->named, blk) &&
           data_free(t->r, &t->r->map[blk], t->unknown_ok);
}

/*
 * Slot k of the level-0 extender b names s, which another candidate's data
 * slot names too, in a run of its slots, and s breaks the run its
 * neighbour slots make here: the block that would continue the run (the
 * same from both sides when both have one), one bit away from s, that no
 * candidate names and no tree took, that the tree may take and that reads
 * as data.  That is one flipped bit in the slot, which moved it onto the
 * other write's block: the tree takes the run's block (EXT_SLOT_FLIPPED,
 * add_tree) and leaves s to the tree whose block it is.  0 when there is
 * no such block.  scratch is a block buffer.
 */
static uint64_t flipped_slot(struct scan_result *r, const struct ldefers *d,
                             const uint64_t *seen, const uint8_t *b, uint32_t k, uint64_t s,
                             bool unknown_ok, uint8_t *scratch)
{
    if (!bit(d->twice, s) || !bit(d->in_run, s))
        return 0;
    struct tree_fits t = {r, d, seen, unknown_ok};
    return sc_flip_slot_alt(r, b, k, s, tree_fits, &t, scratch);
}

/* Take data block blk at file block fb: marked, and appended to *pairs. */
static bool take_data(struct scan_result *r, uint64_t *seen, struct lpair **pairs,
                      size_t *npairs, size_t *cap, uint64_t fb, uint64_t blk)
{
    if (*npairs == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        struct lpair *np = realloc(*pairs, ncap * sizeof(*np));
        if (np == NULL)
            return false;
        *pairs = np;
        *cap = ncap;
    }
    set_bit(seen, blk);
    r->map[blk].flags |= SC_BF_LINKED;
    (*pairs)[(*npairs)++] = (struct lpair){.fblk = fb, .dblk = blk};
    return true;
}

/*
 * Walk the tree at top, taking its blocks (SC_BF_LINKED); its data blocks
 * into *pairs in file order; *held_slots counts the slots naming blocks
 * the live structures hold, and with d->count_taken the data slots naming
 * blocks that the trees before it took.  bufs holds SC_LEVEL_MAX + 2
 * blocks: one a level, and a scratch one.  Returns false when memory runs
 * out.
 */
static bool walk_tree(struct scan_result *r, uint64_t top, bool unknown_ok, uint64_t *seen,
                      struct ldefers *d, uint8_t *bufs, struct lpair **pairs, size_t *npairs,
                      size_t *cap, uint64_t **exts, uint64_t *nexts, uint64_t *held_slots)
{
    const struct lanyfs_geom *g = &r->g;
    struct lframe st[SC_LEVEL_MAX + 1];
    uint8_t *scratch = bufs + (size_t)(SC_LEVEL_MAX + 1) * g->blocksize;
    size_t n = 0;
    uint64_t ext_cap = 0;
    *npairs = 0;
    *nexts = 0;
    *exts = NULL;
    *held_slots = 0;
    unsigned level = r->map[top].index;
    if (level > SC_LEVEL_MAX || sc_read(r, top, bufs, NULL) != LANYFS_OK)
        return true;
    st[n++] = (struct lframe){top, 0, lanyfs_geom_pow(g, level), 0, level};
    set_bit(seen, top);
    while (n > 0) {
        struct lframe *f = &st[n - 1];
        uint8_t *b = bufs + (size_t)(n - 1) * g->blocksize;
        if (f->next == 0) {
            if (*nexts == ext_cap) {
                uint64_t ncap = ext_cap ? ext_cap * 2 : 8;
                uint64_t *ne = realloc(*exts, ncap * sizeof(*ne));
                if (ne == NULL)
                    return false;
                *exts = ne;
                ext_cap = ncap;
            }
            (*exts)[(*nexts)++] = f->blk;
            r->map[f->blk].flags |= SC_BF_LINKED;
        }
        if (f->next >= g->extmax) {
            n--;
            continue;
        }
        uint32_t k = f->next++;
        uint64_t s = lanyfs_ext_slot(g, b, k);
        if (s == 0 || s >= r->nblocks)
            continue;
        /* The file block the slot starts; past nblocks no file of this device reaches. */
        uint64_t fb = f->base == UINT64_MAX || f->span == UINT64_MAX ||
                              k > (r->nblocks - f->base) / f->span
                          ? UINT64_MAX
                          : f->base + (uint64_t)k * f->span;
        if (fb != UINT64_MAX && fb >= r->nblocks)
            fb = UINT64_MAX;
        if (f->level == 0 && fb != UINT64_MAX) {
            uint64_t alt = flipped_slot(r, d, seen, b, k, s, unknown_ok, scratch);
            if (alt != 0) {
                if (!take_data(r, seen, pairs, npairs, cap, fb, alt))
                    return false;
                struct lpair *p = &(*pairs)[*npairs - 1];
                p->from = s;
                p->ext = f->blk;
                p->slot = k;
                continue;
            }
        }
        if (bit(seen, s)) {
            /* A data slot naming a block a tree before this one took
             * counts as one naming a held block (an old extender), in a
             * tree whose file is not known: a known file's write keeps
             * the blocks it names that no one else took. */
            if (d->count_taken && f->level == 0 && fb != UINT64_MAX && bit(d->taken, s))
                (*held_slots)++;
            continue;
        }
        struct scan_block *c = &r->map[s];
        if (f->level == 0 && fb != UINT64_MAX &&
            (c->cls == SCAN_BLK_DATA || (c->cls == SCAN_BLK_LEAKED && c->owner != 0)) &&
            !shares_pair(r, b, k, s)) {
            /* A live or orphaned file's slot one flipped bit moved onto the
             * tree's block. */
            char what[64];
            snprintf(what, sizeof(what), "the lost extender tree at block %" PRIu64, top);
            sc_flip_release(r, s, what, run_of_own(r, b, k, s), names_data, d->named);
        }
        const uint64_t *lt = live_top(g, b, f->level == 0, k, s, d->live_tops);
        bool is_held = held(r, s, lt);
        if (is_held)
            (*held_slots)++;
        if (f->level == 0) {
            /* A held block is no data of the tree's, even one the sweep
             * left leaked: a blank block a live link names as an entry
             * (correct:818 state 702, directory block 5 zeroed: the old
             * extender 6 named it, the live directory 41 and 9 and 8 of
             * the cut-off write at 55; it counted 5 as held and took it
             * too, three blocks against two held, and took 9 and 8). */
            if (is_held || fb == UINT64_MAX ||
                (!data_free(r, c, unknown_ok) && !listed_alone(r, b, k, s)))
                continue;
            /* A tree that names a held block is an old extender, or a
             * damaged one: it does not take a block that a tree naming
             * none left to the others (correct:818 state 702, directory
             * block 5 junked: the old 6 named the live directory 41, 9
             * and 8; the cut-off write at 55, which named the old
             * extender 57 that its data never reached, deferred 9 and 8,
             * and 6 took them). */
            if (bit(d->twice, s) &&
                (d->all_twice || lonely(g, b, k) || (d->names_held && bit(d->waiting, s))) &&
                !first_of_write(r, top, f->blk, k, s)) {
                if (!defer_push(d, top, fb, s))
                    return false;
                continue;
            }
            if (!take_data(r, seen, pairs, npairs, cap, fb, s))
                return false;
            continue;
        }
        if (!free_for_tree(c, SCAN_BLK_ORPHAN_EXT) || c->index + 1u != f->level ||
            n > SC_LEVEL_MAX)
            continue;
        uint8_t *cb = bufs + (size_t)n * g->blocksize;
        set_bit(seen, s);
        if (sc_read(r, s, cb, NULL) != LANYFS_OK)
            continue;
        st[n] = (struct lframe){s, fb, lanyfs_geom_pow(g, f->level - 1u), 0, f->level - 1u};
        n++;
    }
    return true;
}

/* Is s a candidate extender one level below level? */
static bool is_child(const struct scan_result *r, uint64_t s, unsigned level)
{
    const struct scan_block *t = &r->map[s];
    return free_for_tree(t, SCAN_BLK_ORPHAN_EXT) && t->index + 1u == level;
}

/*
 * Does a candidate one level below the candidate extender blk (read into
 * b, of a level above 0) that a slot of blk names name blk back (s, its
 * buffer)?  No extender of a tree names one above it: blk's block went to
 * that child's write since, as its data, and holds what an older tree
 * left there (correct:691 state 6498: the level-1 595 named 596 at slot 1,
 * and 596, the top of the write of /old17/m19/Data.0039.odt, named 595 as
 * its first data block; 595 then hid the write behind 255 holes).
 */
/* The children named_back reads at most, so that a crafted image of many
 * upper extenders costs a few reads each, not a pass over their slots. */
#define NAMED_BACK_READS 4

static bool named_back(struct scan_result *r, uint64_t blk, const uint8_t *b, uint8_t *s)
{
    const struct lanyfs_geom *g = &r->g;
    unsigned level = r->map[blk].index, reads = 0;
    for (uint32_t k = 0; k < g->extmax && reads < NAMED_BACK_READS; k++) {
        uint64_t c = lanyfs_ext_slot(g, b, k);
        if (c == 0 || c == blk || c >= r->nblocks || !is_child(r, c, level))
            continue;
        if (reads++, sc_read(r, c, s, NULL) != LANYFS_OK)
            continue;
        for (uint32_t j = 0; j < g->extmax; j++)
            if (lanyfs_ext_slot(g, s, j) == blk)
                return true;
    }
    return false;
}

/*
 * Do at least as many of the slots of the candidate extender blk (read
 * into b), of a level above 0, name candidates one level down as name
 * anything else?
 * A level-L extender's slots name level L-1 extenders; one whose slots
 * name data blocks is a level-0 extender whose level byte went wrong, and
 * the write it maps would be hidden behind it, and the tops it names with
 * it (a lost write of an older file whose blocks it took again).
 */
static bool names_children(const struct scan_result *r, uint64_t blk, const uint8_t *b)
{
    uint64_t yes = 0, no = 0;
    unsigned level = r->map[blk].index;
    for (uint32_t k = 0; k < r->g.extmax; k++) {
        uint64_t s = lanyfs_ext_slot(&r->g, b, k);
        if (s == 0 || s == blk)
            continue;
        if (s < r->nblocks && is_child(r, s, level))
            yes++;
        else
            no++;
    }
    return yes >= no;
}

/* Record the tree (reported by report_tree, once its deferred blocks are in). */
static bool add_tree(struct scan_result *r, uint64_t top, const struct lpair *pairs,
                     size_t npairs, uint64_t *exts, uint64_t nexts, uint8_t *b)
{
    struct scan_lost_tree t = {.top = top, .exts = exts, .nexts = nexts};
    /* The data lists of all trees together hold at most LOST_CELLS_PER_BLOCK
     * cells a block: a sparse tree's blocks past that stay leaked. */
    uint64_t budget = r->nblocks * LOST_CELLS_PER_BLOCK + 1024;
    budget = budget > r->lost_cells ? budget - r->lost_cells : 0;
    while (npairs > 0 && pairs[npairs - 1].fblk >= budget)
        r->map[pairs[--npairs].dblk].flags &= (uint8_t)~SC_BF_LINKED;
    if (npairs == 0) {
        free(exts);
        return true;
    }
    t.ndata = pairs[npairs - 1].fblk + 1; /* file order: the last pair is the highest */
    r->lost_cells += t.ndata;
    t.data = calloc((size_t)t.ndata, sizeof(*t.data));
    if (t.data == NULL) {
        free(exts);
        return sc_oom(r);
    }
    t.entry = tree_file(r, top);
    const struct scan_entry *x = sc_entry(r, t.entry);
    for (size_t i = 0; i < npairs; i++) {
        t.data[pairs[i].fblk] = pairs[i].dblk;
        struct scan_block *pc = &r->map[pairs[i].dblk];
        if (pairs[i].from != 0) {
            /* flipped_slot: fsck sets the slot before it links the tree. */
            char what[64];
            snprintf(what, sizeof(what), "the extender tree at block %" PRIu64, top);
            if (!sc_report(r,
                           &(struct scan_finding){.code = SCAN_PR_EXT_SLOT_FLIPPED,
                                                  .entry = t.entry, .block = pairs[i].ext,
                                                  .count = pairs[i].slot,
                                                  .block2 = pairs[i].from,
                                                  .value = pairs[i].dblk},
                           x != NULL ? x->path : what, "%s",
                           "another extender tree nothing links")) {
                free(t.data);
                free(exts);
                return false;
            }
        }
        if (pc->cls == SCAN_BLK_FREE) {
            /* A flipped chain slot (listed_alone): the block leaves the list. */
            if (!sc_report(r,
                           &(struct scan_finding){.code = SCAN_PR_FREE_SLOT_IN_USE,
                                                  .block = pc->index,
                                                  .block2 = pairs[i].dblk},
                           NULL, "the lost extender tree at block %" PRIu64, top)) {
                free(t.data);
                free(exts);
                return false;
            }
        }
        /* Out of a free list walked only in part: the write took it, so it is
         * no free block the list's lost part could list. */
        r->map[pairs[i].dblk].cls = SCAN_BLK_LEAKED;
        /* Nor a live file's past its size (sc_past_size_data): the tree's now. */
        r->map[pairs[i].dblk].owner = 0;
        r->map[pairs[i].dblk].index = 0;
    }
    t.mapped = npairs;
    t.size = tree_size(r, &t, b);
    if (r->nlost == r->lost_cap) {
        size_t ncap = r->lost_cap ? r->lost_cap * 2 : 4;
        struct scan_lost_tree *nl = realloc(r->lost, ncap * sizeof(*nl));
        if (nl == NULL) {
            free(t.data);
            free(exts);
            return sc_oom(r);
        }
        r->lost = nl;
        r->lost_cap = ncap;
    }
    r->lost[r->nlost++] = t;
    if (x != NULL)
        sc_aux(r, x->id)->lost = (uint32_t)r->nlost;
    return true;
}

static bool report_tree(struct scan_result *r, const struct scan_lost_tree *t)
{
    const struct scan_entry *x = sc_entry(r, t->entry);
    if (x != NULL)
        return sc_report(r,
                         &(struct scan_finding){.code = SCAN_PR_UNLINKED_FILE_DATA,
                                                .entry = x->id, .block = t->top,
                                                .block2 = x->block, .count = t->mapped,
                                                .value = t->size},
                         x->path, NULL);
    return sc_report(r,
                     &(struct scan_finding){.code = SCAN_PR_LOST_DATA_TREE, .block = t->top,
                                            .count = t->mapped, .count2 = t->nexts,
                                            .value = t->size},
                     NULL, NULL);
}

/*
 * The four passes over the candidate tops: which ones each takes.  As a
 * rule, the tops that name nothing held and no other candidate first
 * (paired ones, whose file the disk tells, before the others), then the
 * late ones, in rounds (paired first again).  Where the free list's walk
 * broke off, every paired top goes before every unpaired one: an unpaired
 * tree may then be a deleted file's, which the list's lost part listed,
 * and its blocks, handed out again since, the paired write's
 * (correct:572 state 7787, chain block 496 zeroed: a deleted file's old
 * tree took 255 of /readme-0074.jpg's 348 blocks, because that write's
 * extender names blocks the live structures hold and went late).  But a
 * top that a paired level-0 top's data slot names goes with the paired
 * ones, in its round, when it is a level-0 top whose data blocks the
 * paired top names too, before it (takes_whole): the paired write's data
 * never landed in that block, which still holds the extender of a file
 * deleted before the write, so that file's blocks, which the write took
 * with it, hold that file's data, not the write's (correct:786 state
 * 9808, chain block 277 zeroed: the cut-off write of
 * /old12/readme-0186.tar.gz took the deleted /IMG_0034.bin's extender 911
 * and its four data blocks, and mapped their bytes as its own).
 */
static bool pass_late(bool broken, int pass)
{
    return broken ? (pass & 1) != 0 : pass >= 2;
}

static bool pass_paired(bool broken, int pass)
{
    return broken ? pass < 2 : pass % 2 == 0;
}

/* A slot of an extender: the block it names and its place. */
struct lslot {
    uint64_t blk;
    uint32_t k;
};

static int cmp_lslot(const void *a, const void *b)
{
    const struct lslot *x = a, *y = b;
    return x->blk < y->blk ? -1 : x->blk > y->blk;
}

/* The slots of the extender b, by the block they name, into slots (extmax
 * of them). */
static size_t sorted_slots(const struct scan_result *r, const uint8_t *b, struct lslot *slots)
{
    for (uint32_t k = 0; k < r->g.extmax; k++)
        slots[k] = (struct lslot){lanyfs_ext_slot(&r->g, b, k), k};
    qsort(slots, r->g.extmax, sizeof(*slots), cmp_lslot);
    return r->g.extmax;
}

/* Do the slots of one extender (sorted in slots, n of them) name every
 * block the level-0 candidate s (read into cb) maps, all before s itself
 * (at slot ks)?  A write that took a deleted or truncated file's blocks
 * off the free list took them in the order they were freed: the data,
 * then the extender.  An old tree whose blocks a later write took names
 * that write's top before the data after it (the write took its top
 * first), and is no write of those blocks. */
static bool takes_whole(const struct scan_result *r, const struct lslot *slots, size_t n,
                        uint64_t s, uint32_t ks, const uint8_t *cb)
{
    uint32_t mapped = 0;
    for (uint32_t j = 0; j < r->g.extmax; j++) {
        struct lslot key = {lanyfs_ext_slot(&r->g, cb, j), 0};
        if (key.blk == 0)
            continue;
        const struct lslot *at = key.blk == s ? NULL
                                              : bsearch(&key, slots, n, sizeof(*slots), cmp_lslot);
        if (at == NULL || at->k > ks)
            return false;
        mapped++;
    }
    return mapped > 0;
}

/* Is s, named by data slot ks of the extender ext, a level-0 candidate top
 * (no candidate one level up maps it: notop) whose blocks ext's slots
 * (sorted in slots) all name before it (takes_whole)?  cb: a buffer. */
static bool named_whole(struct scan_result *r, uint64_t ext, uint64_t s, uint32_t ks,
                        const uint64_t *cand, const uint64_t *notop, const struct lslot *slots,
                        size_t n, uint8_t *cb)
{
    return s != 0 && s != ext && s < r->nblocks && bit(cand, s) && !bit(notop, s) &&
           r->map[s].index == 0 && sc_read(r, s, cb, NULL) == LANYFS_OK &&
           takes_whole(r, slots, n, s, ks, cb);
}

/* The level-0 candidates that a data slot of a paired level-0 top names,
 * with every data block they map named by that top's slots too (above). */
static void mark_named_by_paired(struct scan_result *r, const uint64_t *cands, size_t ncands,
                                 const uint64_t *cand, const uint64_t *notop,
                                 uint64_t *by_paired, uint8_t *b, uint8_t *cb,
                                 struct lslot *slots)
{
    const struct lanyfs_geom *g = &r->g;
    for (size_t ci = 0; ci < ncands; ci++) {
        uint64_t top = cands[ci];
        if (r->map[top].index != 0 || tree_file(r, top) == 0 ||
            sc_read(r, top, b, NULL) != LANYFS_OK)
            continue;
        size_t n = sorted_slots(r, b, slots);
        for (uint32_t k = 0; k < g->extmax; k++) {
            uint64_t s = lanyfs_ext_slot(g, b, k);
            if (s < r->nblocks && !bit(by_paired, s) &&
                named_whole(r, top, s, k, cand, notop, slots, n, cb))
                set_bit(by_paired, s);
        }
    }
}

/* A deferred block no tree took yet, that its tree may take. */
static bool deferred_free(struct scan_result *r, const struct ldefer *e, const uint64_t *seen)
{
    bool unknown_ok = list_broken(r);
    return !bit(seen, e->blk) && data_free(r, &r->map[e->blk], unknown_ok);
}

struct ltop {
    uint64_t top;
    size_t k; /* index in r->lost */
};

static int cmp_ltop(const void *a, const void *b)
{
    uint64_t x = ((const struct ltop *)a)->top, y = ((const struct ltop *)b)->top;
    return x < y ? -1 : x > y;
}

/* Deferred claims by block, then by file block, then in the order made. */
static int cmp_defer(const void *a, const void *b)
{
    const struct ldefer *x = *(const struct ldefer *const *)a, *y = *(const struct ldefer *const *)b;
    if (x->blk != y->blk)
        return x->blk < y->blk ? -1 : 1;
    if (x->yields != y->yields)
        return x->yields ? 1 : -1;
    if (x->fb != y->fb)
        return x->fb < y->fb ? -1 : 1;
    return x < y ? -1 : x > y;
}

/*
 * The deferred blocks: each goes to a tree that claims it when no other
 * tree took it and it holds something.  Among the trees that claim one
 * block, the yielding ones go last (yielding); then the one that maps it
 * at the lowest file block goes first: a
 * lost write begins at its file's first blocks, while one flipped bit in
 * an empty slot (a hole, or an extender the 2012 driver emptied and left,
 * SPEC-9.4) names a block wherever the slot lies.  When that one is a
 * shell (a tree of deferred blocks only, shell_tops), the block is left
 * to the shells (shell_winners).
 */
static bool resolve_deferred(struct scan_result *r, const struct ldefers *d, uint64_t *seen,
                             const uint64_t *shell_tops, size_t first_tree, uint8_t *b)
{
    if (d->n == 0 || r->nlost <= first_tree)
        return true;
    /* The trees by top, so that a disk full of deferred slots costs a
     * search each, not a pass over every tree. */
    size_t nt = r->nlost - first_tree;
    struct ltop *tops = malloc(nt * sizeof(*tops));
    const struct ldefer **order = malloc(d->n * sizeof(*order));
    if (tops == NULL || order == NULL) {
        free(tops);
        free(order);
        return sc_oom(r);
    }
    for (size_t k = 0; k < nt; k++)
        tops[k] = (struct ltop){r->lost[first_tree + k].top, first_tree + k};
    qsort(tops, nt, sizeof(*tops), cmp_ltop);
    for (size_t i = 0; i < d->n; i++)
        order[i] = &d->v[i];
    qsort(order, d->n, sizeof(*order), cmp_defer);
    uint64_t shells_blk = 0; /* a block whose first claim is a shell's */
    for (size_t i = 0; i < d->n; i++) {
        const struct ldefer *e = order[i];
        struct scan_block *c = &r->map[e->blk];
        if (e->blk == shells_blk || !deferred_free(r, e, seen))
            continue;
        struct ltop key = {e->top, 0};
        const struct ltop *hit = bsearch(&key, tops, nt, sizeof(*tops), cmp_ltop);
        struct scan_lost_tree *t = hit ? &r->lost[hit->k] : NULL;
        if (t == NULL && bit(shell_tops, e->top)) {
            /* A shell's: the shells take it, or leave it (shell_winners). */
            shells_blk = e->blk;
            continue;
        }
        if (t == NULL || zero_block(r, e->blk, b))
            continue;
        if (e->fb >= t->ndata) {
            uint64_t budget = r->nblocks * LOST_CELLS_PER_BLOCK + 1024;
            uint64_t more = e->fb + 1 - t->ndata;
            if (r->lost_cells > budget || more > budget - r->lost_cells)
                continue;
            uint64_t *nd = realloc(t->data, (size_t)(e->fb + 1) * sizeof(*nd));
            if (nd == NULL) {
                free(tops);
                free(order);
                return sc_oom(r);
            }
            memset(nd + t->ndata, 0, (size_t)more * sizeof(*nd));
            t->data = nd;
            t->ndata = e->fb + 1;
            r->lost_cells += more;
        }
        if (t->data[e->fb] != 0)
            continue;
        t->data[e->fb] = e->blk;
        t->mapped++;
        set_bit(seen, e->blk);
        c->flags |= SC_BF_LINKED;
        c->cls = SCAN_BLK_LEAKED;
        c->owner = 0;
        c->index = 0;
        t->size = tree_size(r, t, b);
    }
    free(tops);
    free(order);
    return true;
}

/*
 * For the trees that map only contested blocks (shells), which of their
 * claims may take a block: of the claims on one block that the trees
 * before left free, the one at the lowest file block, as resolve_deferred
 * orders them.  An array of d->n flags, NULL when memory runs out.
 */
static bool *shell_winners(struct scan_result *r, const struct ldefers *d,
                           const struct lshell *shells, size_t nshells, const uint64_t *seen)
{
    bool *win = calloc(d->n ? d->n : 1, sizeof(*win));
    const struct ldefer **order = malloc((d->n ? d->n : 1) * sizeof(*order));
    if (win == NULL || order == NULL) {
        free(win);
        free(order);
        return NULL;
    }
    size_t m = 0;
    for (size_t k = 0; k < nshells; k++)
        for (size_t i = shells[k].from; i < shells[k].to && i < d->n; i++)
            order[m++] = &d->v[i];
    qsort(order, m, sizeof(*order), cmp_defer);
    bool taken = false; /* the block of order[j - 1] has its claim */
    for (size_t j = 0; j < m; j++) {
        if (j == 0 || order[j]->blk != order[j - 1]->blk)
            taken = false;
        if (!taken && deferred_free(r, order[j], seen))
            win[order[j] - d->v] = taken = true;
    }
    free(order);
    return win;
}

/*
 * The level-0 candidates whose data slots name both an entry block nothing
 * reaches (a deleted or orphaned entry's, its bytes whole) and the
 * candidate top that entry's data pointer names: the blocks of that file
 * were handed to this tree's file after that file got them, and its data
 * never landed there.  Either the tree is an old extender whose blocks
 * went to that file since, or a write cut short that took the file's
 * freed blocks and whose data writes had not landed (the correct writer
 * fills a new file's extender slot by slot before any of its data,
 * correct:615 state 327: x0025.txt's extender at 9 named the deleted
 * zz0010.odt's entry 16, its extender 18 and its data).  Either way a
 * block that tree and another claim holds the other's bytes, not this
 * one's: its claims on contested blocks go after the others'
 * (resolve_deferred, shell_winners).  Before, the claim lowest in its
 * file won, and with block 6 zeroed zz0010.odt's tree lost its nine
 * blocks to x0025.txt's, whose first slots named them.
 * A bitmap of the tops, NULL when memory runs out.
 */
static uint64_t *yielding(struct scan_result *r, const uint64_t *cands, size_t ncands,
                          const uint64_t *cand, uint8_t *b)
{
    uint64_t words = r->nblocks / 64 + 1;
    uint64_t *y = calloc((size_t)words, sizeof(*y));
    uint64_t *mine = calloc((size_t)words, sizeof(*mine)); /* the top's slots */
    if (y == NULL || mine == NULL) {
        free(y);
        free(mine);
        return NULL;
    }
    for (size_t ci = 0; ci < ncands && !sc_stopped(r); ci++) {
        uint64_t top = cands[ci];
        if (r->map[top].index != 0 || sc_read(r, top, b, NULL) != LANYFS_OK)
            continue;
        for (uint32_t k = 0; k < r->g.extmax; k++) {
            uint64_t s = lanyfs_ext_slot(&r->g, b, k);
            if (s != 0 && s < r->nblocks)
                set_bit(mine, s);
        }
        for (uint32_t k = 0; k < r->g.extmax && !bit(y, top); k++) {
            uint64_t s = lanyfs_ext_slot(&r->g, b, k);
            const struct scan_block *c = s != 0 && s != top ? sc_cell(r, s) : NULL;
            if (c == NULL || (c->cls != SCAN_BLK_DELETED && c->cls != SCAN_BLK_ORPHAN))
                continue;
            const struct scan_entry *x = sc_entry(r, c->owner);
            uint64_t t = x != NULL && x->block == s ? x->e.subtree : 0;
            if (t != 0 && t != top && t < r->nblocks && bit(cand, t) && bit(mine, t))
                set_bit(y, top);
        }
        for (uint32_t k = 0; k < r->g.extmax; k++) {
            uint64_t s = lanyfs_ext_slot(&r->g, b, k);
            if (s != 0 && s < r->nblocks)
                mine[s / 64] = 0;
        }
    }
    free(mine);
    return y;
}

/*
 * A level-0 extender the free list lists at a block whose number has a
 * single bit set, as one bit flipped in an empty chain slot lists
 * (sc_free_one_bit), or by a slot one bit off the run of the slots beside
 * it (run_flipped, freelist.c: 2012:684 state 933, bit 7 of byte 16 of
 * chain block 167 flipped, slot 0 went from 168, before 169, to 40, the
 * top of a lost write), is a lost tree's top when its slots name only
 * blocks a lost tree may take, at least one, or other candidate extenders:
 * a write takes an old extender's block as data, and its bytes land later
 * (correct:964 state 835, bit 5 of byte 32 of chain block 2 flipped: an
 * empty slot listed 32, the top of /a0070.jpg's write, which named the old
 * extender 30; 30 took 32's data blocks, and the file came out empty).
 * No free leaves that: the 2012 driver frees no extender and empties a
 * deleted file's (SPEC-9.4, 9.5), and the correct writer frees a file's
 * data before its extenders, so their blocks are listed too, or handed
 * out again.  The block leaves the list (FREE_SLOT_IN_USE) and joins the
 * candidates.
 */
/* Judge listed block blk as above: false only when the scan must stop. */
static bool unlist_top(struct scan_result *r, uint64_t blk, uint8_t *b)
{
    const struct lanyfs_geom *g = &r->g;
    if (blk >= r->nblocks || r->map[blk].cls != SCAN_BLK_FREE ||
        sc_read(r, blk, b, NULL) != LANYFS_OK || !sc_probe_extender(g, r->dev_blocks, b) ||
        b[LANYFS_EXT_LEVEL] != 0)
        return true;
    uint32_t takes = 0, others = 0;
    for (uint32_t k = 0; k < g->extmax; k++) {
        uint64_t s = lanyfs_ext_slot(g, b, k);
        const struct scan_block *d = s != 0 && s < r->nblocks ? &r->map[s] : NULL;
        if (s == 0 || free_for_tree(d, SCAN_BLK_ORPHAN_EXT))
            continue;
        if (free_for_tree(d, SCAN_BLK_LEAKED) ||
            (!r->free_complete && free_for_tree(d, SCAN_BLK_UNKNOWN)))
            takes++;
        else
            others++;
    }
    if (takes == 0 || others > 0)
        return true;
    struct scan_block *c = &r->map[blk];
    if (!sc_report(r,
                   &(struct scan_finding){.code = SCAN_PR_FREE_SLOT_IN_USE, .block = c->index,
                                          .block2 = blk},
                   NULL, "the lost extender tree at block %" PRIu64, blk))
        return false;
    c->cls = SCAN_BLK_ORPHAN_EXT;
    c->flags &= (uint8_t)~SC_BF_CHECKED;
    c->owner = 0;
    c->index = 0;
    sc_map_meta(r, blk, lanyfs_get16(b + LANYFS_HDR_WRCNT));
    if (!sc_ext_name_slots(r, b))
        return sc_oom(r);
    if (r->free_listed > 0)
        r->free_listed--; /* not a free block the list counts */
    return true;
}

static bool unlist_flipped_tops(struct scan_result *r, uint8_t *b)
{
    for (uint64_t blk = 1; blk < r->nblocks && blk <= UINT64_MAX / 2; blk <<= 1)
        if (sc_free_one_bit(r, blk) && !unlist_top(r, blk, b))
            return false;
    const struct sc_cellbits *f = &r->run_flipped;
    for (uint64_t w = 0; f->bits != NULL && w < (f->n + 63) / 64; w++)
        for (uint64_t v = f->bits[w]; v != 0; v &= v - 1) {
            uint64_t blk = w * 64 + (uint64_t)__builtin_ctzll(v);
            if (!sc_one_bit(blk) && !unlist_top(r, blk, b))
                return false;
        }
    return true;
}

bool sc_lost_trees(struct scan_result *r, uint8_t *b, uint64_t *empty, uint64_t *empty_first)
{
    const struct lanyfs_geom *g = &r->g;
    uint64_t words = r->nblocks / 64 + 1;
    uint64_t *notop = calloc((size_t)words, sizeof(*notop)); /* no top (below) */
    uint64_t *seen = calloc((size_t)words, sizeof(*seen));
    uint64_t *named = calloc((size_t)words, sizeof(*named));  /* a data slot names it */
    uint64_t *twice = calloc((size_t)words, sizeof(*twice));  /* two data slots do */
    uint64_t *shell_tops = calloc((size_t)words, sizeof(*shell_tops)); /* the shells' tops */
    uint64_t *in_run = calloc((size_t)words, sizeof(*in_run)); /* named in a run of slots */
    uint64_t *taken = calloc((size_t)words, sizeof(*taken)); /* the trees' data so far */
    uint64_t *cand = calloc((size_t)words, sizeof(*cand));   /* the candidates (cands) */
    uint64_t *live_tops = calloc((size_t)words, sizeof(*live_tops)); /* held */
    uint64_t *deleted_tops = calloc((size_t)words, sizeof(*deleted_tops)); /* named deleted */
    uint64_t *by_paired = calloc((size_t)words, sizeof(*by_paired)); /* mark_named_by_paired */
    uint64_t *waiting = calloc((size_t)words, sizeof(*waiting));     /* ldefers.waiting */
    uint64_t *holds = calloc((size_t)words, sizeof(*holds)); /* tops whose slots name held blocks */
    uint8_t *bufs = malloc((size_t)(SC_LEVEL_MAX + 2) * g->blocksize); /* + walk_tree's scratch */
    struct lslot *slots = malloc((size_t)g->extmax * sizeof(*slots)); /* sorted_slots */
    struct lpair *pairs = NULL;
    struct ldefers d = {.twice = twice, .named = named, .in_run = in_run, .taken = taken,
                        .waiting = waiting};
    uint64_t *cands = NULL; /* the candidate extenders, in block order */
    size_t ncands = 0, cands_cap = 0;
    /* Each candidate's round (pass 0 sets it): 0 early; else 1 + how many
     * candidate extenders it names (0..3, 3: more), + 4 when it names a
     * held block. */
    uint8_t *round_of = NULL;
    uint64_t *yields = NULL; /* yielding */
    bool *win = NULL; /* shell_winners */
    struct lshell *shells = NULL;
    size_t nshells = 0, shells_cap = 0;
    size_t cap = 0, first_tree = r->nlost;
    bool ok = false;
    if (notop == NULL || seen == NULL || named == NULL || twice == NULL || shell_tops == NULL ||
        in_run == NULL || taken == NULL || cand == NULL || live_tops == NULL ||
        deleted_tops == NULL || by_paired == NULL || waiting == NULL || holds == NULL ||
        bufs == NULL || slots == NULL) {
        ok = sc_oom(r);
        goto out;
    }
    if (!unlist_flipped_tops(r, b))
        goto out;
    /* Extenders another candidate one level up maps are no tops; blocks
     * two candidates' data slots name are contested. */
    for (uint64_t blk = 1; blk < r->nblocks; blk++) {
        const struct scan_block *c = &r->map[blk];
        if (!free_for_tree(c, SCAN_BLK_ORPHAN_EXT))
            continue;
        if (sc_stopped(r))
            goto out;
        bool readable = sc_read(r, blk, b, NULL) == LANYFS_OK;
        if (readable && c->index != 0 && named_back(r, blk, b, bufs)) {
            /* Data of the child's write: not an extender of any tree. */
            struct scan_block *m = &r->map[blk];
            m->cls = SCAN_BLK_LEAKED;
            m->index = 0;
            continue;
        }
        if (ncands == cands_cap) {
            size_t ncap = cands_cap ? cands_cap * 2 : 64;
            uint64_t *nc = realloc(cands, ncap * sizeof(*nc));
            if (nc == NULL) {
                ok = sc_oom(r);
                goto out;
            }
            cands = nc;
            cands_cap = ncap;
        }
        cands[ncands++] = blk;
        set_bit(cand, blk);
        if (!readable)
            continue;
        if (c->index != 0 && !names_children(r, blk, b)) {
            /* No parent: its level is wrong (a flipped bit, a torn
             * write), and no tree can be walked from it. */
            set_bit(notop, blk);
            continue;
        }
        for (uint32_t k = 0; k < g->extmax; k++) {
            uint64_t s = lanyfs_ext_slot(g, b, k);
            if (s == 0 || s == blk || s >= r->nblocks)
                continue;
            if (c->index == 0) {
                if (bit(named, s))
                    set_bit(twice, s);
                set_bit(named, s);
                /* A write's first data block right after its extender
                 * is as sure a claim as a run (files.c's after_top):
                 * 2012:888 state 712, bit 4 of byte 15 of block 105: the
                 * old tree at 105's slot 5 went from 111 to 127, the
                 * only block of the write at 126, and took it. */
                if (sc_slot_in_run(g, b, k, s) || (k == 0 && s == blk + 1))
                    set_bit(in_run, s);
            } else if (is_child(r, s, c->index)) {
                set_bit(notop, s);
            }
        }
    }
    if ((yields = yielding(r, cands, ncands, cand, b)) == NULL) {
        ok = sc_oom(r);
        goto out;
    }
    d.yielding = yields;
    for (size_t i = 0; i < r->nentries; i++) {
        const struct scan_entry *x = &r->entries[i];
        if (!scan_entry_is_file(x) || x->e.subtree == 0 || x->e.subtree >= r->nblocks)
            continue;
        if (x->state == SCAN_ENTRY_LIVE)
            set_bit(live_tops, sc_walked_top(r, x));
        else if (x->state == SCAN_ENTRY_DELETED)
            set_bit(deleted_tops, x->e.subtree);
    }
    d.live_tops = live_tops;
    /* Tops whose own slots name no block a live structure holds and no
     * other candidate extender first, so that an old extender cannot take
     * the blocks of a real write; among those alike, the trees whose file
     * the disk tells first, so that a flipped slot of an old extender
     * cannot take a block of theirs.  The later ones go in rounds: those
     * that name no block the live structures hold before those that do,
     * and among those alike by how many candidate extenders they name (0,
     * 1, 2, more): a tree goes after the trees it names, which a chain of
     * them needs. */
    round_of = calloc(ncands ? ncands : 1, sizeof(*round_of));
    if (round_of == NULL) {
        ok = sc_oom(r);
        goto out;
    }
    bool broken = list_broken(r);
    if (broken)
        mark_named_by_paired(r, cands, ncands, cand, notop, by_paired, b, bufs, slots);
    for (int pass = 0; pass < 4; pass++)
    for (int round = 0; round < (pass_late(broken, pass) ? 16 : 1); round++)
    for (size_t ci = 0; ci < ncands; ci++) {
        uint64_t blk = cands[ci];
        const struct scan_block *c = &r->map[blk];
        if (!free_for_tree(c, SCAN_BLK_ORPHAN_EXT) || bit(notop, blk) || bit(seen, blk))
            continue;
        if (sc_stopped(r))
            goto out;
        if (pass == 0) {
            uint64_t held_n, named_n;
            top_holds(r, blk, b, cand, live_tops, &held_n, &named_n);
            if (held_n != 0)
                set_bit(holds, blk);
            if (bit(deleted_tops, blk))
                held_n++; /* a deleted file's own extender (above) */
            if (held_n + named_n != 0)
                round_of[ci] = (uint8_t)(1 + (named_n < 3 ? named_n : 3) + (held_n != 0 ? 4 : 0));
        }
        bool late = round_of[ci] != 0;
        bool paired = tree_file(r, blk) != 0;
        /* Within a round, a deleted file's own extender after the others. */
        int slot = late ? (round_of[ci] - 1) * 2 + bit(deleted_tops, blk) : 0;
        if (late != pass_late(broken, pass) ||
            (paired || bit(by_paired, blk)) != pass_paired(broken, pass) ||
            (late && slot != round))
            continue;
        size_t npairs;
        uint64_t *exts, nexts, held_slots;
        bool unknown_ok = list_broken(r);
        size_t deferred = d.n;
        d.all_twice = late && ((round_of[ci] - 1) & 3) != 0 && !paired;
        d.names_held = late && bit(holds, blk) && !paired;
        d.count_taken = !paired;
        if (!walk_tree(r, blk, unknown_ok, seen, &d, bufs, &pairs, &npairs, &cap, &exts, &nexts,
                       &held_slots)) {
            free(exts);
            ok = sc_oom(r);
            goto out;
        }
        deferred = d.n - deferred;
        if (npairs + deferred > 0 && held_slots >= npairs + deferred) {
            /* An old extender, not a write: what it took stays leaked, for a
             * later tree to take (a write of its blocks may have landed). */
            for (size_t i = 0; i < npairs; i++)
                give_back(r, seen, pairs[i].dblk);
            npairs = 0;
            d.n -= deferred;
            deferred = 0;
        }
        /* Zero blocks at its end hold nothing to keep: no write of them
         * landed, and a tree left with nothing but contested blocks then
         * is such a write: the bytes it contests are others'.  Not a
         * deleted file's own extender, which mapped a file that was whole:
         * a blank block of its own is damage, and its claims stand
         * (correct:858 state 1298: block 23, once its block and now the
         * entry of the write that took its blocks, zeroed). */
        bool blank = false;
        while (npairs > 0 && zero_block(r, pairs[npairs - 1].dblk, b)) {
            give_back(r, seen, pairs[--npairs].dblk);
            blank = true;
        }
        if (npairs == 0 && deferred > 0 && (!blank || bit(deleted_tops, blk))) {
            /* Nothing but contested blocks: those the other trees leave. */
            if (nshells == shells_cap) {
                size_t ncap = shells_cap ? shells_cap * 2 : 4;
                struct lshell *ns = realloc(shells, ncap * sizeof(*ns));
                if (ns == NULL) {
                    free(exts);
                    ok = sc_oom(r);
                    goto out;
                }
                shells = ns;
                shells_cap = ncap;
            }
            shells[nshells++] = (struct lshell){blk, exts, nexts, d.n - deferred, d.n};
            set_bit(shell_tops, blk);
            r->map[blk].flags |= SC_BF_LINKED;
            continue;
        }
        if (npairs == 0) {
            /* Maps nothing any more: an extender leak (marks.c). */
            r->map[blk].flags |= SC_BF_LINKED;
            if (*empty == 0)
                *empty_first = blk;
            *empty += nexts ? nexts : 1;
            free(exts);
            continue;
        }
        if (!add_tree(r, blk, pairs, npairs, exts, nexts, b))
            goto out;
        for (size_t i = 0; i < npairs; i++)
            set_bit(taken, pairs[i].dblk);
    }
    if (!resolve_deferred(r, &d, seen, shell_tops, first_tree, b))
        goto out;
    if (nshells > 0 && (win = shell_winners(r, &d, shells, nshells, seen)) == NULL) {
        ok = sc_oom(r);
        goto out;
    }
    for (size_t k = 0; k < nshells; k++) {
        struct lshell *sh = &shells[k];
        size_t npairs = 0;
        for (size_t i = sh->from; i < sh->to; i++) {
            const struct ldefer *e = &d.v[i];
            if (!win[i] || !deferred_free(r, e, seen) || zero_block(r, e->blk, b))
                continue;
            if (!take_data(r, seen, &pairs, &npairs, &cap, e->fb, e->blk)) {
                ok = sc_oom(r);
                goto out;
            }
        }
        uint64_t *exts = sh->exts;
        sh->exts = NULL;
        if (npairs == 0) {
            if (*empty == 0 || sh->top < *empty_first)
                *empty_first = sh->top;
            *empty += sh->nexts ? sh->nexts : 1;
            free(exts);
        } else if (!add_tree(r, sh->top, pairs, npairs, exts, sh->nexts, b)) {
            goto out;
        }
    }
    for (size_t k = first_tree; k < r->nlost; k++)
        if (!report_tree(r, &r->lost[k]))
            goto out;
    /* Candidates no top reached (a level the walk could not enter) count as leaked extenders. */
    for (uint64_t blk = 1; blk < r->nblocks; blk++) {
        struct scan_block *c = &r->map[blk];
        if (!free_for_tree(c, SCAN_BLK_ORPHAN_EXT))
            continue;
        c->flags |= SC_BF_LINKED;
        if ((*empty)++ == 0 || blk < *empty_first)
            *empty_first = blk;
    }
    ok = true;
out:
    free(yields);
    free(live_tops);
    free(deleted_tops);
    free(by_paired);
    free(waiting);
    free(holds);
    free(slots);
    free(notop);
    free(seen);
    free(named);
    free(twice);
    free(shell_tops);
    free(in_run);
    free(taken);
    free(cand);
    free(cands);
    free(round_of);
    free(win);
    free(d.v);
    for (size_t k = 0; k < nshells; k++)
        free(shells[k].exts);
    free(shells);
    free(bufs);
    free(pairs);
    return ok;
}

size_t scan_lost_trees(const struct scan_result *r, const struct scan_lost_tree **out)
{
    *out = r->lost;
    return r->nlost;
}

const struct scan_lost_tree *scan_lost_tree_of(const struct scan_result *r, uint32_t entry)
{
    if (entry == 0 || entry > r->nentries)
        return NULL;
    uint32_t k = r->aux[entry - 1].lost;
    return k != 0 && k <= r->nlost ? &r->lost[k - 1] : NULL;
}
