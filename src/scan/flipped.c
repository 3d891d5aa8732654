/*
 * flipped.c -- a live file's data slot that one flipped bit moved, found
 * when an orphan's tree or a lost tree names the block it moved to; and
 * an orphaned file's, found when a lost tree names it.
 *
 * A live file is walked before any orphan or lost tree, and an orphan
 * before any lost tree, so a block its slot names is its data, whoever
 * else names it later.  One flipped bit in
 * a slot, which the slot's extender keeps without any sign of it, then
 * hands the file another structure's block: the orphan or lost write loses
 * its extender or its data to the live file, and the block the slot named
 * before the flip is left leaked.  What tells this from a file whose
 * blocks are simply scattered is all on the disk:
 *  - a neighbour of the slot in the file (file block k - 1 or k + 1) makes
 *    a run that the slot breaks: prev + 1 or next - 1 (the same block when
 *    both qualify), and the slot makes no run with the other neighbour;
 *  - the block that would continue the run differs from the slot's block
 *    in exactly one bit, lies inside the device, and the sweep left it to
 *    nobody (leaked or unknown, in no list, linked from no candidate, and
 *    no live link names it as an entry or extender it does not read as);
 *  - it reads as data: neither an entry nor an extender;
 *  - the slot's block is what an orphan's tree or a lost tree names (the
 *    callers, files.c and lostdata.c).
 * Then the file maps that block instead (EXT_SLOT_FLIPPED, which names the
 * extender and slot for fsck to set), and the slot's block goes to the
 * claimant.  A hole is a slot of zero, so one flipped bit in it names a
 * block whose number is a power of two: such a slot with holes on both
 * sides inside the size, or on its one side at the file's first or last
 * block (a sparse file, as the 2012 driver's holes or a failed delete
 * leave, SPEC-9.8, 9.9) is taken for the hole it was
 * (EXT_HOLE_FLIPPED), but only when the claim on its block is sure by the
 * claimant's own shape: the block is its extender, lies in a run of its
 * slots, or is an orphan's first data block right after its top extender
 * (files.c, after_top).  Against such a claim (a lost tree's), a slot in no run maps the
 * only block one bit away that is left to nobody (leaked: not on a list
 * whose walk broke off), that the claimant does not name itself, and that
 * lies nearer the file's blocks beside the slot than the slot's block does
 * (for file block 0, right after its top extender), when there is just one
 * (lone_block, gap): a file's block right after its extender, or near its
 * others, is no flip.  The blocks a relink cut off the free list (SPEC-9.3), which
 * marks.c explains later, are no leftovers (cut_listed, sweep.c), so the
 * rule holds on the 2012 driver's media too, which it once left out.  A
 * file whose slot names a block no one else wants keeps it: that alone is
 * no flip the disk can show.
 *
 * An orphaned file's own slot that breaks its run by one bit onto a lost
 * write's top extender, which nothing else holds yet, maps the block of
 * its run instead while the orphan is walked (sc_flip_orphan_slot): the
 * lost tree, walked after, would otherwise find its top taken.  The block
 * of its run must be named by no slot of an unowned level-0 extender: the
 * lost trees have not taken theirs yet, and one that maps it in a run of
 * its own would lose it (correct:595 state 6547, the root's child
 * zeroed: orphaned zz0087's slot moved onto the last block of a lost
 * write's run, which the write kept when zz0087 was still live).
 *
 * The free list is a claimant too: a live file's slot that breaks its run
 * by one bit onto a block the list lists gives the block back to the list
 * once every other claim is in (sc_flip_free_claims).  So is a live file
 * walked later, whose own link names the block (files.c, take): the
 * earlier file's slot gives it back before the later claim is made.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "scan_priv.h"

/* Is file block j of x inside its size and a hole? */
static bool hole_at(const struct scan_entry *x, uint64_t j)
{
    return j < x->blocks_needed && (j >= x->ndata || x->data[j] == 0);
}

/* Is file block k of x among holes: is each neighbour inside the size
 * (k - 1, k + 1) a hole, and is there one?  File block 0 and the last
 * have a neighbour on one side only (2012:600 state 695: a failed
 * delete's extender, all holes, whose slot 0 flipped onto a lost write's
 * top extender). */
static bool among_holes(const struct scan_entry *x, uint64_t k)
{
    bool before = k > 0, after = k + 1 < x->blocks_needed;
    return (before || after) && (!before || hole_at(x, k - 1)) && (!after || hole_at(x, k + 1));
}

/* Is a neighbour of file block k of x inside its size a hole?  Against a
 * sure claim, a one-bit slot there that makes no run with the other one
 * is a hole whose bit flipped as well (2012:706 state 3523, bit 4 of byte
 * 8 of block 171: slot 1 of readme-0083.txt, 209 then two holes, went to
 * 16, the first of the orphaned IMG_0038.bin's run 16-25). */
static bool beside_hole(const struct scan_entry *x, uint64_t k)
{
    return (k > 0 && hole_at(x, k - 1)) || hole_at(x, k + 1);
}

/* Is blk one the sweep left to nobody, which no mark, candidate or live
 * link explains? */
static bool left_over(const struct scan_result *r, uint64_t blk)
{
    const struct scan_block *c = blk < r->nblocks ? &r->map[blk] : NULL;
    return c != NULL && blk < r->image_blocks && c->owner == 0 &&
           (c->cls == SCAN_BLK_LEAKED || c->cls == SCAN_BLK_UNKNOWN) &&
           !(c->flags & (SCAN_BF_DRIVER | SCAN_BF_SHARED | SC_BF_LINKED | SC_BF_AUX)) &&
           !sc_named_bad(r, blk) && !sc_cellbits_get(&r->cut_listed, blk);
}

/* sc_names_fn: is blk left to nobody (ctx: the scan)? */
static bool left_over_fn(const void *ctx, uint64_t blk)
{
    return left_over(ctx, blk);
}

/* sc_names_fn: is blk left to nobody, and named by no slot of an unowned
 * level-0 extender (ext_named: a lost tree, walked later, may map it)? */
static bool left_unnamed_fn(const void *ctx, uint64_t blk)
{
    const struct scan_result *r = ctx;
    return left_over(r, blk) && !sc_cellbits_get(&r->ext_named, blk);
}

/* Does s continue the run of prev (the block before it) or of next (the
 * block after it), upwards or downwards?  0 stands for no neighbour.  A
 * free list hands out the blocks a chain block lists from its last filled
 * slot down, so a write on blocks freed in order maps them downwards
 * (correct:707 state 6906: zz0112.txt's file blocks 120-122 on 21, 20,
 * 19; with block 22 junked, a lost tree's claim on 20 moved the slot to
 * 22 as if it broke the run 21, 22). */
static bool continues(uint64_t prev, uint64_t next, uint64_t s)
{
    bool has_prev = prev != 0 && prev < UINT64_MAX, has_next = next != 0 && next < UINT64_MAX;
    return (has_prev && (s == prev + 1 || s + 1 == prev)) ||
           (has_next && (s + 1 == next || s == next + 1));
}

/* Does s continue a run with a neighbour, as continues() says, where the
 * neighbours do not leave one block between them for it?  Neighbours two
 * apart make one run with the block between them; a slot next to one of
 * them but not that block is a flip onto the run's far side (2012:780
 * state 3685, bit 1 of byte 9 of block 377 flipped: slot 2 of the write
 * at 377 went from 380, between 379 and 381, to 382, the first block of
 * the lost write at 3, and took it, since 382 and 381 make a run). */
static bool continues_run(uint64_t prev, uint64_t next, uint64_t s)
{
    bool both = prev != 0 && prev < UINT64_MAX && next != 0 && next < UINT64_MAX;
    uint64_t gap = !both                  ? 0
                   : prev <= UINT64_MAX - 2 && prev + 2 == next ? prev + 1
                   : next <= UINT64_MAX - 2 && next + 2 == prev ? next + 1
                                                                : 0;
    return continues(prev, next, s) && (gap == 0 || gap == s);
}

/* A slot's neighbours: the blocks one and two places before and after
 * it, 0 for none (or a hole). */
struct nbrs {
    uint64_t prev2, prev, next, next2;
};

/* The blocks at s's place that would continue the run of a neighbour
 * (0: none): upwards from prev or next as ever, downwards only where the
 * run goes down beyond that neighbour, or where both neighbours agree on
 * the block between them (a single block does not tell a direction).
 * None between neighbours that lie next to each other: their run needs
 * no block between them, and one that continued it from one side would
 * break it on the other (correct:751 state 12584, block 36 zeroed:
 * /zz0186.tar.gz's slots 42, 296, 41 had 296 moved to 40, the freed
 * data of the file block 36 held, because 40 comes before 41). */
static void run_cands(const struct nbrs *n, uint64_t cand[4])
{
    bool has_prev = n->prev != 0 && n->prev < UINT64_MAX;
    bool has_next = n->next != 0 && n->next < UINT64_MAX;
    bool between = has_prev && has_next && n->prev == n->next + 2;
    if (has_prev && has_next && (n->prev == n->next + 1 || n->next == n->prev + 1)) {
        cand[0] = cand[1] = cand[2] = cand[3] = 0;
        return;
    }
    cand[0] = has_prev ? n->prev + 1 : 0;
    cand[1] = has_next ? n->next - 1 : 0;
    cand[2] = has_prev && (between || n->prev2 == n->prev + 1) ? n->prev - 1 : 0;
    cand[3] = has_next && (between || (n->next2 != 0 && n->next2 + 1 == n->next)) ? n->next + 1 : 0;
}

/* The block at s's place that would continue a neighbour's run
 * (run_cands), one bit away from s and that fits accepts; 0 when there is
 * none.  All the candidates must agree. */
static uint64_t run_alt(const struct scan_result *r, const struct nbrs *n, uint64_t s,
                        sc_names_fn fits, const void *ctx)
{
    uint64_t cand[4], alt = 0;
    run_cands(n, cand);
    for (int i = 0; i < 4; i++) {
        uint64_t a = cand[i];
        if (a == 0 || a >= r->nblocks || a >= r->dev_blocks || !sc_one_bit(a ^ s) || !fits(ctx, a))
            continue;
        if (alt != 0 && alt != a)
            return 0; /* the candidates disagree */
        alt = a;
    }
    return alt;
}

/* x's block at file block j, 0 for a hole or past its map. */
static uint64_t data_at(const struct scan_entry *x, uint64_t j)
{
    return j < x->ndata ? x->data[j] : 0;
}

/* Does blk, at x's file block k, continue a run with either neighbour? */
static bool in_run(const struct scan_entry *x, uint64_t k, uint64_t blk)
{
    return continues(k > 0 ? data_at(x, k - 1) : 0, data_at(x, k + 1), blk);
}

/* The neighbours of x's file block k. */
static struct nbrs file_nbrs(const struct scan_entry *x, uint64_t k)
{
    return (struct nbrs){k > 1 ? data_at(x, k - 2) : 0, k > 0 ? data_at(x, k - 1) : 0,
                         data_at(x, k + 1), data_at(x, k + 2)};
}

bool sc_breaks_run(const uint64_t *d, uint64_t n, uint64_t k)
{
    uint64_t blk = k < n ? d[k] : 0;
    struct nbrs nb = {k > 1 && k - 2 < n ? d[k - 2] : 0, k > 0 && k - 1 < n ? d[k - 1] : 0,
                      k + 1 < n ? d[k + 1] : 0, k + 2 < n ? d[k + 2] : 0};
    if (blk == 0 || continues_run(nb.prev, nb.next, blk))
        return false;
    uint64_t cand[4];
    run_cands(&nb, cand);
    for (int i = 0; i < 4; i++)
        if (cand[i] != 0 && sc_one_bit(cand[i] ^ blk))
            return true;
    return false;
}

/* The block that would continue the run of file block k - 1 (from) or
 * k + 1 (to) of x at file block k, one bit away from blk and left to
 * nobody; 0 when there is none. */
static uint64_t run_block(struct scan_result *r, const struct scan_entry *x, uint64_t k,
                          uint64_t blk)
{
    /* A slot that already continues a run with either neighbour breaks
     * none: the run the other side would make is no sign of a flip. */
    if (continues_run(k > 0 ? data_at(x, k - 1) : 0, data_at(x, k + 1), blk))
        return 0;
    struct nbrs nb = file_nbrs(x, k);
    return run_alt(r, &nb, blk, left_over_fn, r);
}

/* Does x, in state holder, map blk at file block k, inside its size? */
static bool maps_at(const struct scan_entry *x, enum scan_entry_state holder, uint64_t k,
                    uint64_t blk)
{
    return x != NULL && x->state == holder && scan_entry_is_file(x) && k < x->ndata &&
           k < x->blocks_needed && x->data[k] == blk;
}

/*
 * May alt (0: a hole) take blk's place at x's file block k?  A block must
 * read as data, and not as zeros where blk holds bytes: a blank block is a
 * write that never landed or a sector that read back blank, and trades
 * the bytes blk holds for none (correct:996 state 1429, the old extender
 * 35 zeroed: the orphaned /a0065.txt's slot 33, which an orphan's tree
 * names too, moved there).  *ext and *slot receive the extender slot that
 * maps k.  b and eb are block buffers.
 */
static bool alt_fits(struct scan_result *r, const struct scan_entry *x, const struct sc_aux *a,
                     uint64_t k, uint64_t blk, uint64_t alt, uint8_t *b, uint8_t *eb,
                     uint64_t *ext, uint32_t *slot)
{
    struct lanyfs_entry e;
    if (alt != 0 && (sc_read(r, alt, b, NULL) != LANYFS_OK ||
                     sc_probe_entry(&r->g, r->dev_blocks, b, &e) ||
                     sc_probe_extender(&r->g, r->dev_blocks, b)))
        return false;
    if (alt != 0 && sc_zero_from(b, 0, r->g.blocksize) &&
        sc_read(r, blk, eb, NULL) == LANYFS_OK && !sc_zero_from(eb, 0, r->g.blocksize))
        return false;
    return sc_file_slot_of(r, x, a->top_level, k, blk, eb, ext, slot);
}

/* x maps alt (0: a hole) at file block k from now on, as a cell of class cls. */
static void remap(struct scan_result *r, struct scan_entry *x, uint64_t k, uint64_t alt,
                  enum scan_class cls)
{
    struct scan_block *ac = alt != 0 ? sc_cell(r, alt) : NULL;
    if (ac != NULL) {
        ac->cls = (uint8_t)cls;
        ac->flags &= (uint8_t)~SC_BF_CHECKED;
        ac->owner = x->id;
        ac->index = k;
    }
    x->data[k] = alt;
}

/* x maps alt at file block k from now on instead of the block of cell c
 * (alt 0: a hole, one block fewer mapped), and c is nobody's again, of
 * class left_as. */
static void move_off(struct scan_result *r, struct scan_entry *x, struct sc_aux *a, uint64_t k,
                     uint64_t alt, struct scan_block *c, enum scan_class left_as)
{
    if (alt == 0) {
        x->blocks_mapped -= x->blocks_mapped > 0;
        x->blocks_intact -= x->blocks_intact > 0;
        a->holes++;
    }
    remap(r, x, k, alt, (enum scan_class)c->cls);
    c->cls = (uint8_t)left_as;
    c->flags &= (uint8_t)~SC_BF_CHECKED;
    c->owner = 0;
    c->index = 0;
}

/* How far v lies from the nearer of x's blocks beside file block k
 * (UINT64_MAX when neither is mapped).  Before file block 0 lies the
 * file's top extender, which a write allocates just before its first
 * data block: v right after it lies 1 away (2012:622 state 732, bit 6 of
 * byte 5 of block 13 flipped: the one data slot of an orphaned file of
 * one block, extender 13, went from block 14 to 78, in a lost write's
 * run).  Any other v is not measured against it: a first block far from
 * its extender says nothing, and one a few blocks nearer than the slot's
 * block is no flip (correct:585 state 8256, block 338 zeroed: a live
 * file's slot 0, 762, in a lost write's run, was moved to 730, which lies
 * 487 blocks after its extender 243 where 762 lies 519). */
static uint64_t gap(const struct scan_entry *x, uint64_t k, uint64_t v)
{
    uint64_t best = UINT64_MAX;
    for (int side = 0; side < 2; side++) {
        uint64_t j = side == 0 ? k - 1 : k + 1, n;
        if (side == 0 && k == 0) {
            if (x->e.subtree != 0 && v == x->e.subtree + 1)
                best = 1;
            continue;
        }
        n = j < x->ndata ? x->data[j] : 0;
        if (n == 0)
            continue;
        uint64_t d = n > v ? n - v : v - n;
        if (d < best)
            best = d;
    }
    return best;
}

/* How far v lies from x's top extender. */
static uint64_t top_gap(const struct scan_entry *x, uint64_t v)
{
    return x->e.subtree > v ? x->e.subtree - v : v - x->e.subtree;
}

/* The one block one bit away from blk that is left to nobody, that skip
 * does not name, and that lies nearer x's blocks beside file block k than
 * blk does (gap); 0 when there is none, or more than one.  A block one bit
 * away that lies farther is no rival: a flip takes a slot away from its
 * file's blocks, not nearer (correct:818 state 2808, bit 6 of byte 5 of
 * block 13 flipped: slot 0 of /DCIM67/docs5/Backup68/readme-0065.jpg went
 * from 59 to 123, inside the lost write of /a0160.txt, and the leaked 251,
 * one bit from 123 and farther from the file's 15, made 59 no lone block).
 * No block
 * an orphan extender's slot names counts: it may be a lost write's data,
 * which the lost trees take only after every file and orphan took theirs
 * (correct:584 state 4846, block 238 zeroed: the lone rule took blocks
 * 336 and 337 of /IMG_0104.tar.gz's write for two live files, and gave
 * their own blocks to a stale orphan).  Only a leaked block counts: where
 * the free list's walk broke off, every block no walk reached is unknown,
 * most of them free blocks the list's lost part listed, and one of those
 * lies one bit away from a block by chance (correct:567 state 9902, chain
 * block 741 zeroed: an orphan's slot onto a deleted file's block, taken
 * for a flip onto a free one).  But for file block 0, the block right
 * after the file's top extender (first) counts even so, and whatever
 * skip says: the write took it next, and old extenders that name it name
 * blocks everywhere (correct:668 state 11046, bit 7 of byte 5 of block 79
 * flipped: the only slot of a live file's extender 79 went from 80 to
 * 208, inside the lost write at 385, and the old extenders 70 and 74
 * named 80).  A file of one block has no blocks beside its slot: there
 * the rival must lie less than half as far from the file's top extender
 * as the slot's block (2012:931 state 468, bit 5 of byte 5 of block 50:
 * the one slot of /zz0028 went from 42 to 10, inside the run of the
 * orphaned /Backup13/zz0017.tar.gz, 40 blocks from the extender where 42
 * lies 8; a flip that moves a slot a little farther says nothing, as
 * correct:585's shows). */
static uint64_t lone_block(struct scan_result *r, const struct scan_entry *x, uint64_t k,
                           uint64_t blk, uint64_t first, sc_names_fn skip, const void *ctx)
{
    uint64_t found = 0, far = gap(x, k, blk);
    bool by_top = far == UINT64_MAX && k == 0 && x->e.subtree != 0;
    for (unsigned j = 0; j < 64; j++) {
        uint64_t a = blk ^ ((uint64_t)1 << j);
        if (a == 0 || a >= r->dev_blocks || !left_over(r, a) ||
            r->map[a].cls != SCAN_BLK_LEAKED ||
            (a != first && (sc_cellbits_get(&r->ext_named, a) || skip(ctx, a))) ||
            !(by_top ? top_gap(x, a) < top_gap(x, blk) / 2 : gap(x, k, a) < far))
            continue;
        if (found != 0)
            return 0;
        found = a;
    }
    return found;
}

bool sc_flip_run_breaks(struct scan_result *r, uint64_t blk)
{
    const struct scan_block *c = sc_cell(r, blk);
    if (c == NULL || (c->cls != SCAN_BLK_DATA && c->cls != SCAN_BLK_LEAKED) || c->owner == 0 ||
        (c->flags & SCAN_BF_SHARED))
        return false;
    const struct scan_entry *x = sc_entry(r, c->owner);
    return maps_at(x, c->cls == SCAN_BLK_DATA ? SCAN_ENTRY_LIVE : SCAN_ENTRY_ORPHAN, c->index,
                   blk) &&
           run_block(r, x, c->index, blk) != 0;
}

bool sc_flip_release(struct scan_result *r, uint64_t blk, const char *claimant, bool claim_sure,
                     sc_names_fn lone_skip, const void *ctx)
{
    struct scan_block *c = sc_cell(r, blk);
    /* A block two live files map is a cross-link fsck copies: not moved.
     * An orphaned file's data is leaked with the file as owner. */
    if (c == NULL || (c->cls != SCAN_BLK_DATA && c->cls != SCAN_BLK_LEAKED) || c->owner == 0 ||
        (c->flags & SCAN_BF_SHARED))
        return false;
    struct scan_entry *x = sc_entry(r, c->owner);
    struct sc_aux *a = sc_aux(r, c->owner);
    uint64_t k = c->index;
    if (a == NULL ||
        !maps_at(x, c->cls == SCAN_BLK_DATA ? SCAN_ENTRY_LIVE : SCAN_ENTRY_ORPHAN, k, blk))
        return false;
    uint64_t alt = run_block(r, x, k, blk);
    bool to_hole = false;
    if (alt == 0 && claim_sure && sc_one_bit(blk) &&
        (among_holes(x, k) || (beside_hole(x, k) && !in_run(x, k, blk)))) {
        /* A hole whose one bit flipped, among holes of a sparse file: a
         * lone block there may be the file's, so only against a claim that
         * its own shape bears out. */
        to_hole = true;
    } else if (alt == 0 && claim_sure && lone_skip != NULL && !in_run(x, k, blk) &&
               !r->map_lost) {
        /* A slot in no run: the only block one bit away that nobody holds,
         * when it lies nearer the file's blocks beside it than the slot's
         * block does (a block taken right after the extender, or near
         * the file's others, is no flip).  Not while a live file's
         * extender reads as none: the blocks it mapped are held by
         * nothing now, wherever they lie (correct:822 state 10864, the
         * top 185 of /src2/docs18/docs51/IMG_0068.jpg zeroed: its 541-543
         * were left to no one, and /src2/Data.0056's slot 4, 670, which a
         * lost tree names too, moved to 542). */
        alt = lone_block(r, x, k, blk, k == 0 && x->e.subtree != 0 ? x->e.subtree + 1 : 0,
                         lone_skip, ctx);
    }
    if (alt == 0 && !to_hole)
        return false;
    uint8_t *b = malloc(r->g.blocksize);
    uint8_t *eb = malloc(r->g.blocksize);
    bool moved = false;
    uint64_t ext;
    uint32_t slot;
    if (b == NULL || eb == NULL) {
        sc_oom(r);
        goto out;
    }
    if (!alt_fits(r, x, a, k, blk, alt, b, eb, &ext, &slot))
        goto out;
    /* as the sweep left it */
    move_off(r, x, a, k, alt, c, r->free_complete ? SCAN_BLK_LEAKED : SCAN_BLK_UNKNOWN);
    moved = true;
    sc_report(r,
              &(struct scan_finding){.code = to_hole ? SCAN_PR_EXT_HOLE_FLIPPED
                                                     : SCAN_PR_EXT_SLOT_FLIPPED,
                                     .entry = x->id, .block = ext, .count = slot, .block2 = blk,
                                     .value = alt},
              x->path, "%s", claimant);
out:
    free(b);
    free(eb);
    return moved;
}

/*
 * A block a live file maps as data, which another live file's walk
 * reaches as an extender (it read as one, of the level its parent needs):
 * the extender's claim stands.  No writer hands an extender's block out
 * as data while its tree maps it: the 2012 driver frees no extender
 * (SPEC-9.4), and a block the correct writer freed and handed out again
 * holds the new owner's bytes once its write lands; so the data slot is a
 * flipped bit, or a write over a freed extender that never landed, and
 * either way the block holds none of the file's bytes.  The slot becomes
 * a hole (EXT_SLOT_METADATA); before, the first walk kept the block, and
 * the other file lost the whole subtree below it (correct:753 state
 * 5577, bit 4 of byte 9 of block 663 flipped: a slot of /IMG_0063.jpg
 * went from 697 to 681, the top extender of /old23/Zz74/a0079.bin).
 */
bool sc_data_slot_gives(struct scan_result *r, uint64_t blk, const char *claimant)
{
    struct scan_block *c = sc_cell(r, blk);
    if (c == NULL || c->cls != SCAN_BLK_DATA || c->owner == 0 || (c->flags & SCAN_BF_SHARED))
        return false;
    struct scan_entry *x = sc_entry(r, c->owner);
    struct sc_aux *a = sc_aux(r, c->owner);
    uint64_t k = c->index;
    if (a == NULL || !maps_at(x, SCAN_ENTRY_LIVE, k, blk))
        return false;
    uint8_t *eb = malloc(r->g.blocksize);
    uint64_t ext;
    uint32_t slot;
    if (eb == NULL)
        return sc_oom(r);
    bool found = sc_file_slot_of(r, x, a->top_level, k, blk, eb, &ext, &slot);
    free(eb);
    if (!found)
        return false;
    move_off(r, x, a, k, 0, c, SCAN_BLK_UNKNOWN); /* as no walk reached it */
    sc_report(r,
              &(struct scan_finding){.code = SCAN_PR_EXT_SLOT_METADATA, .entry = x->id,
                                     .block = ext, .count = slot, .block2 = blk},
              x->path, "%s", claimant);
    return !sc_stopped(r);
}

/* Slot k's neighbour slots in the level-0 extender eb (0: none). */
static uint64_t slot_before(const struct lanyfs_geom *g, const uint8_t *eb, uint32_t k)
{
    return k > 0 ? lanyfs_ext_slot(g, eb, k - 1) : 0;
}

static uint64_t slot_after(const struct lanyfs_geom *g, const uint8_t *eb, uint32_t k)
{
    return k + 1 < g->extmax ? lanyfs_ext_slot(g, eb, k + 1) : 0;
}

bool sc_slot_in_run(const struct lanyfs_geom *g, const uint8_t *eb, uint32_t k, uint64_t s)
{
    return continues(slot_before(g, eb, k), slot_after(g, eb, k), s);
}

/* Does another slot than k of the level-0 extender eb name blk? */
static bool names_elsewhere(const struct lanyfs_geom *g, const uint8_t *eb, uint32_t k,
                            uint64_t blk)
{
    for (uint32_t j = 0; j < g->extmax; j++)
        if (j != k && lanyfs_ext_slot(g, eb, j) == blk)
            return true;
    return false;
}

uint64_t sc_flip_slot_alt(struct scan_result *r, const uint8_t *eb, uint32_t k, uint64_t s,
                          sc_names_fn fits, const void *ctx, uint8_t *b)
{
    const struct lanyfs_geom *g = &r->g;
    uint64_t prev = slot_before(g, eb, k), next = slot_after(g, eb, k);
    if (continues_run(prev, next, s))
        return 0;
    /* Neighbours two apart leave the block between them for the slot, but
     * not one the extender maps at another slot: s continues the run on
     * its one side, the allocation order of a list that handed the blocks
     * out so (correct:987 state 2156, block 58 zeroed: the lost tree at 22
     * maps 54, 51, 52, 53; 51 moved to 55, the one block of the live
     * /Backup8/notes-0104.odt, whose zeroed top left it unheld). */
    if (continues(prev, next, s) && prev != 0 && next != 0 &&
        (prev + 2 == next || next + 2 == prev) &&
        names_elsewhere(g, eb, k, prev < next ? prev + 1 : next + 1))
        return 0;
    struct nbrs nb = {k > 1 ? lanyfs_ext_slot(g, eb, k - 2) : 0, slot_before(g, eb, k),
                      slot_after(g, eb, k), k + 2 < g->extmax ? lanyfs_ext_slot(g, eb, k + 2) : 0};
    uint64_t alt = run_alt(r, &nb, s, fits, ctx);
    /* A run of the tree's own on the side it continues, two blocks at
     * least (or neighbours that leave it between them): one neighbour
     * alone, among slots that make no run, is a write on blocks a list
     * handed out in no order, and a block beside it one bit away is
     * chance (correct:996 state 476, block 43 zeroed: the lost tree at
     * 17 maps 18, 3, 12, 35, and 3 moved to 19, the write at 43's). */
    bool between = nb.prev != 0 && nb.next != 0 &&
                   (nb.prev + 2 == nb.next || nb.next + 2 == nb.prev);
    if (alt != 0 && !between &&
        !(alt == nb.prev + 1 && nb.prev2 != 0 && nb.prev2 + 1 == nb.prev) &&
        !(alt + 1 == nb.next && nb.next2 == nb.next + 1) &&
        !(alt + 1 == nb.prev && nb.prev2 == nb.prev + 1) &&
        !(alt == nb.next + 1 && nb.next2 != 0 && nb.next2 + 1 == nb.next))
        return 0;
    struct lanyfs_entry e;
    if (alt == 0 || sc_read(r, alt, b, NULL) != LANYFS_OK ||
        sc_probe_entry(g, r->dev_blocks, b, &e) || sc_probe_extender(g, r->dev_blocks, b))
        return 0;
    return alt;
}

uint64_t sc_flip_orphan_slot(struct scan_result *r, const uint8_t *eb, uint32_t k, uint64_t s,
                             uint8_t *b)
{
    const struct scan_block *c = sc_cell(r, s);
    if (c == NULL || c->cls != SCAN_BLK_ORPHAN_EXT || c->owner != 0 ||
        (c->flags & (SCAN_BF_DRIVER | SC_BF_LINKED)))
        return 0;
    return sc_flip_slot_alt(r, eb, k, s, left_unnamed_fn, r, b);
}

/* Does the file id map s, whose cell is c, at slot *kj of its level-0
 * extender eb (first file block base), another slot than k? */
static bool own_other_slot(const struct scan_result *r, const struct scan_block *c,
                           const uint8_t *eb, uint64_t base, uint32_t k, uint64_t s, uint32_t id,
                           uint32_t *kj)
{
    if (c->owner != id || base == UINT64_MAX || c->index < base ||
        c->index - base >= r->g.extmax || c->index - base == k)
        return false;
    *kj = (uint32_t)(c->index - base);
    return lanyfs_ext_slot(&r->g, eb, *kj) == s;
}

uint64_t sc_flip_live_slot(struct scan_result *r, const uint8_t *eb, uint64_t base, uint32_t k,
                           uint64_t s, uint32_t id, uint8_t *b)
{
    const struct scan_block *c = sc_cell(r, s);
    uint32_t kj;
    if (c == NULL || c->cls != SCAN_BLK_DATA || c->owner == 0 || (c->flags & SCAN_BF_SHARED))
        return 0;
    if (c->owner == id) {
        /* Its own block, at another slot of the same extender, in a run there. */
        if (!own_other_slot(r, c, eb, base, k, s, id, &kj) || !sc_slot_in_run(&r->g, eb, kj, s))
            return 0;
    } else {
        const struct scan_entry *x = sc_entry(r, c->owner);
        if (!maps_at(x, SCAN_ENTRY_LIVE, c->index, s) || !in_run(x, c->index, s))
            return 0;
    }
    return sc_flip_slot_alt(r, eb, k, s, left_unnamed_fn, r, b);
}

uint64_t sc_flip_own_earlier(struct scan_result *r, const uint8_t *eb, uint64_t base, uint32_t k,
                             uint64_t s, uint32_t id, uint8_t *b)
{
    const struct scan_block *c = sc_cell(r, s);
    uint32_t kj;
    if (c == NULL || c->cls != SCAN_BLK_DATA || (c->flags & SCAN_BF_SHARED) ||
        !own_other_slot(r, c, eb, base, k, s, id, &kj) || !sc_slot_in_run(&r->g, eb, k, s))
        return 0;
    return sc_flip_slot_alt(r, eb, kj, s, left_unnamed_fn, r, b);
}

uint64_t sc_flip_data_pointer(struct scan_result *r, const struct scan_entry *x)
{
    uint64_t p = x->e.subtree, own = x->block;
    if (p < 2 || p >= r->dev_blocks || own >= r->dev_blocks - 1)
        return 0;
    uint64_t q = own + 1;
    if (q == p || !sc_one_bit(p ^ q))
        return 0;
    const struct scan_block *qc = sc_cell(r, q), *pc = sc_cell(r, p), *ec = sc_cell(r, p - 1);
    if (qc == NULL || pc == NULL || ec == NULL || qc->cls != SCAN_BLK_UNKNOWN || qc->owner != 0)
        return 0;
    uint8_t *b = malloc(r->g.blocksize);
    if (b == NULL) {
        sc_oom(r);
        return 0;
    }
    struct lanyfs_entry e;
    struct scan_finding f = {.entry = x->id, .block = own, .block2 = p};
    bool ok = sc_read(r, q, b, NULL) == LANYFS_OK && b[0] == LANYFS_TYPE_EXT &&
              sc_extender_maps(&r->g, r->dev_blocks, b) && sc_read(r, p, b, NULL) == LANYFS_OK;
    if (ok && b[0] != LANYFS_TYPE_EXT) {
        /* No tree at all where it points, and not a blank one whose bytes
         * a damage took: the pointer is wrong whatever the extender at
         * q is, and q is the one a file's first write puts there. */
        f.code = SCAN_PR_FILE_DATA_TYPE_FLIPPED;
        f.value = b[0];
        f.value2 = q;
        ok = !sc_zero_from(b, 0, r->g.blocksize);
    } else {
        f.code = SCAN_PR_FILE_DATA_FLIPPED;
        f.value = q;
        f.count = p - 1;
        ok = ok && pc->cls == SCAN_BLK_UNKNOWN && p - 1 != own &&
             (ec->cls == SCAN_BLK_UNKNOWN || ec->cls == SCAN_BLK_FILE) &&
             sc_read(r, p - 1, b, NULL) == LANYFS_OK &&
             sc_probe_entry(&r->g, r->dev_blocks, b, &e) && lanyfs_entry_is_file(&e) &&
             e.wrcnt == 0 && e.subtree == 0;
    }
    free(b);
    if (!ok || !sc_report(r, &f, x->path, NULL))
        return 0;
    return q;
}

uint64_t sc_walked_top(const struct scan_result *r, const struct scan_entry *x)
{
    uint64_t p = x->e.subtree, q = x->block + 1;
    if (p == 0 || p >= r->nblocks || q >= r->nblocks || !sc_one_bit(p ^ q) ||
        r->map[p].owner == x->id)
        return p;
    const struct scan_block *c = &r->map[q];
    return c->cls == SCAN_BLK_EXTENDER && c->owner == x->id ? q : p;
}

/* Does a slot of the extender in b name a block x holds?  Then b is x's
 * own data holding an old extender of blocks x took after it, not a lost
 * write's top (correct:764 state 7524, chain block 487 zeroed: block 776
 * of /docs22/src16/DCIM42/photos 201244/zz0125.txt read as an extender of
 * 777-779, the file's blocks before it, and its slot moved to 780, which
 * the lost list no longer listed). */
static bool names_own(const struct scan_result *r, const struct scan_entry *x, const uint8_t *b)
{
    for (uint32_t k = 0; k < r->g.extmax; k++) {
        uint64_t s = lanyfs_ext_slot(&r->g, b, k);
        if (s != 0 && s < r->nblocks && r->map[s].owner == x->id)
            return true;
    }
    return false;
}

/*
 * Live files' slots that one flipped bit moved from a hole onto a block
 * that reads as an extender mapping data, after the live walks and before
 * the sweep: a slot whose number has a single bit set, among holes
 * (among_holes), naming such a block (2012:600 state 695, bit 5 of slot 0
 * flipped in the emptied extender of a failed delete, SPEC-9.9: the file
 * took the top extender of /report 0066.odt's lost write as its data,
 * and the sweep, which reads no block a walk holds, never found the
 * tree).  No claimant has spoken yet, but the block's own bytes bear the
 * claim out as an extender's: no file's data reads as one, unless a
 * write over a freed extender never landed, and then its bytes are none
 * of the file's either.  The slot is taken for the hole it was
 * (EXT_HOLE_FLIPPED) and the block is left for the sweep.  So is a data
 * slot that breaks its file's run by one bit onto such a block, when the
 * block that would continue the run is left to nobody and reads as data
 * (run_block): the file maps that block (EXT_SLOT_FLIPPED).  2012:671
 * state 2289, bit 4 of byte 17 of block 21 flipped: slot 4 of a live
 * file's extender went from 43, between 25 and 44, to 59, the top of
 * /a0164's lost write, which came out empty.
 */
bool sc_flip_hole_tops(struct scan_result *r)
{
    uint8_t *b = NULL, *eb = NULL;
    bool ok = true;
    for (size_t i = 0; i < r->nentries && ok; i++) {
        struct scan_entry *x = &r->entries[i];
        struct sc_aux *a = &r->aux[i];
        if (x->state != SCAN_ENTRY_LIVE || !scan_entry_is_file(x) || !a->walked ||
            (a->holes == 0 && !a->run_broken))
            continue;
        for (uint64_t k = 0; k < x->ndata && k < x->blocks_needed && ok; k++) {
            uint64_t blk = x->data[k], ext, alt = 0;
            uint32_t slot;
            struct scan_block *c = blk != 0 ? sc_cell(r, blk) : NULL;
            if (c == NULL || c->cls != SCAN_BLK_DATA || c->owner != x->id ||
                (c->flags & SCAN_BF_SHARED))
                continue;
            if (!(a->holes > 0 && sc_one_bit(blk) && among_holes(x, k)) &&
                (!a->run_broken || (alt = run_block(r, x, k, blk)) == 0))
                continue;
            if (b == NULL && ((b = malloc(r->g.blocksize)) == NULL ||
                              (eb = malloc(r->g.blocksize)) == NULL)) {
                ok = sc_oom(r);
                break;
            }
            if (sc_read(r, blk, b, NULL) != LANYFS_OK || b[0] != LANYFS_TYPE_EXT ||
                !sc_extender_maps(&r->g, r->dev_blocks, b) || names_own(r, x, b) ||
                (alt != 0 ? !alt_fits(r, x, a, k, blk, alt, b, eb, &ext, &slot)
                          : !sc_file_slot_of(r, x, a->top_level, k, blk, eb, &ext, &slot)))
                continue;
            move_off(r, x, a, k, alt, c, SCAN_BLK_UNKNOWN); /* no sweep yet: as no walk reached it */
            char what[64];
            snprintf(what, sizeof(what), "the extender tree at block %" PRIu64, blk);
            ok = sc_report(r,
                           &(struct scan_finding){.code = alt != 0 ? SCAN_PR_EXT_SLOT_FLIPPED
                                                                   : SCAN_PR_EXT_HOLE_FLIPPED,
                                                  .entry = x->id, .block = ext, .count = slot,
                                                  .block2 = blk, .value = alt},
                           x->path, "%s", what);
        }
    }
    free(b);
    free(eb);
    return ok;
}

/*
 * The FREE_SLOT_IN_USE claims of live files, once every other claim is in:
 * a data slot that breaks its file's run by one flipped bit, onto a block
 * the free list lists, while the block that would continue the run is left
 * to nobody and reads as data (run_block).  The file maps that block
 * (EXT_SLOT_FLIPPED), the listed block stays free, and the claim's finding
 * is withdrawn: the free list was right.
 */
static int cmp_listed(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Finding i if it says FREE_SLOT_IN_USE, as itself or its alternative;
 * NULL when not. */
static const struct scan_finding *free_in_use(const struct scan_result *r, size_t i)
{
    const struct scan_finding *f = &r->findings[i], *a = &r->alt[i];
    return f->code == SCAN_PR_FREE_SLOT_IN_USE   ? f
           : a->code == SCAN_PR_FREE_SLOT_IN_USE ? a
                                                 : NULL;
}

/* The blocks live files map that the free list lists (FREE_SLOT_IN_USE,
 * as the finding or its alternative), sorted, in *out (NULL for none);
 * false without the memory. */
static bool listed_mapped(struct scan_result *r, uint64_t **out, size_t *n)
{
    uint64_t *v = NULL;
    size_t cap = 0;
    *n = 0;
    for (size_t i = 0; i < r->nfindings; i++) {
        const struct scan_finding *u = free_in_use(r, i);
        if (u == NULL)
            continue;
        if (*n == cap) {
            uint64_t *nv = sc_grow(v, &cap, sizeof(*nv), 16);
            if (nv == NULL) {
                free(v);
                *n = 0;
                return sc_oom(r);
            }
            v = nv;
        }
        v[(*n)++] = u->block2;
    }
    if (*n > 1)
        qsort(v, *n, sizeof(*v), cmp_listed);
    *out = v;
    return true;
}

static bool is_listed(const uint64_t *v, size_t n, uint64_t blk)
{
    return blk != 0 && n > 0 && bsearch(&blk, v, n, sizeof(*v), cmp_listed) != NULL;
}

/* No block is the claimant's own: the free list names none. */
static bool names_none(const void *ctx, uint64_t blk)
{
    (void)ctx;
    (void)blk;
    return false;
}

bool sc_flip_free_claims(struct scan_result *r)
{
    size_t n = r->nfindings, nlisted;
    uint8_t *b = NULL, *eb = NULL;
    bool ok = false;
    uint64_t *listed = NULL;
    if (!listed_mapped(r, &listed, &nlisted))
        return false;
    for (size_t i = 0; i < n; i++) {
        const struct scan_finding *u = free_in_use(r, i);
        if (u == NULL)
            continue;
        uint64_t blk = u->block2, chain = u->block;
        struct scan_block *c = sc_cell(r, blk);
        if (c == NULL || c->cls != SCAN_BLK_DATA || c->owner == 0 || c->owner != u->entry)
            continue;
        struct scan_entry *x = sc_entry(r, c->owner);
        struct sc_aux *xa = sc_aux(r, c->owner);
        uint64_t k = c->index;
        if (xa == NULL || !maps_at(x, SCAN_ENTRY_LIVE, k, blk))
            continue;
        /* Its blocks beside it listed too: a map the driver went on using
         * after it freed it (MARK_STALE_TREE), not a flipped slot
         * (2012:732 state 2311, block 32 zeroed: IMG_0017.tar.gz maps 28-31
         * and 34, all listed; 32 came free, and its slot moved there). */
        if ((k > 0 && is_listed(listed, nlisted, data_at(x, k - 1))) ||
            is_listed(listed, nlisted, data_at(x, k + 1)))
            continue;
        uint64_t alt = run_block(r, x, k, blk);
        /* A slot in no run: the lone rule, as against an orphan's claim
         * (correct:949 state 1042, bit 4 of byte 31 of block 28: the last
         * slot of /m19/old22/Zz44/Data.0054.odt went from 49 to 33, which
         * the list lists and the orphaned /a0057.odt's repair took). */
        if (alt == 0 && !in_run(x, k, blk) && !r->map_lost)
            alt = lone_block(r, x, k, blk, k == 0 && x->e.subtree != 0 ? x->e.subtree + 1 : 0,
                             names_none, NULL);
        if (alt == 0)
            continue;
        if (b == NULL) {
            b = malloc(r->g.blocksize);
            eb = malloc(r->g.blocksize);
            if (b == NULL || eb == NULL) {
                sc_oom(r);
                goto out;
            }
        }
        uint64_t ext;
        uint32_t slot;
        if (!alt_fits(r, x, xa, k, blk, alt, b, eb, &ext, &slot))
            continue;
        remap(r, x, k, alt, SCAN_BLK_DATA);
        c->cls = SCAN_BLK_FREE;
        c->flags &= (uint8_t)~(SC_BF_CHECKED | SCAN_BF_SHARED);
        c->owner = 0;
        c->index = chain;
        r->findings[i].code = r->alt[i].code = 0;
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_EXT_SLOT_FLIPPED, .entry = x->id,
                                              .block = ext, .count = slot, .block2 = blk,
                                              .value = alt},
                       x->path, "%s", "the free list"))
            goto out;
    }
    ok = true;
out:
    free(b);
    free(eb);
    free(listed);
    return ok;
}
