/*
 * flipped.c -- a live file's data slot that one flipped bit moved off its
 * run, found when an orphan's tree names the block it moved to.
 *
 * A live file is walked before any orphan, so a block its slot names is
 * its data, whoever else names it later.  One flipped bit in a slot, which
 * the slot's extender keeps without any sign of it, then hands the file a
 * block of another structure: on a stick where an orphan's tree lies
 * among the file's blocks, the orphan loses its extender or its data to
 * the live file, and the block the slot named before the flip is left
 * leaked.  Nothing but that flip is needed to tell this apart from a file
 * whose blocks are simply scattered, and all of it is on the disk:
 *  - the slot's neighbours in the file (file blocks k - 1 and k + 1) make a
 *    run that the slot breaks: prev + 1 and next - 1 agree, or only one of
 *    them is mapped;
 *  - the block that would complete the run differs from the slot's block
 *    in exactly one bit, lies inside the device, and the sweep left it to
 *    nobody (leaked or unknown, in no list, linked from no candidate);
 *  - it reads as data: neither an entry nor an extender;
 *  - the slot's block is what an orphan's tree names (the caller).
 * Then the file maps that block instead (EXT_SLOT_FLIPPED, which names the
 * extender and slot for fsck to set), and the slot's block goes back to
 * the orphan.  A hole is a slot of zero, so one flipped bit in it names a
 * block whose number is a power of two: such a slot with holes on both
 * sides inside the size (a sparse file, as the 2012 driver's holes or a
 * failed delete leave, SPEC-9.8, 9.9) is taken for the hole it was
 * (EXT_HOLE_FLIPPED) under the same condition, an orphan naming its block.  A file whose slot names a block no orphan wants keeps it:
 * that alone is no flip the disk can show.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "scan_priv.h"

/* The block that would complete the run of file blocks k - 1 and k + 1
 * around file block k of x; 0 when the neighbours make no run. */
static uint64_t run_block(const struct scan_entry *x, uint64_t k)
{
    uint64_t prev = k > 0 && k - 1 < x->ndata ? x->data[k - 1] : 0;
    uint64_t next = k + 1 < x->ndata ? x->data[k + 1] : 0;
    if (prev != 0 && prev < UINT64_MAX && next > 1)
        return prev + 1 == next - 1 ? prev + 1 : 0;
    if (prev != 0 && prev < UINT64_MAX)
        return prev + 1;
    if (next > 1)
        return next - 1;
    return 0;
}

/* Is blk one the sweep left to nobody, which no mark or candidate explains? */
static bool left_over(struct scan_result *r, uint64_t blk)
{
    const struct scan_block *c = sc_cell(r, blk);
    return c != NULL && blk < r->image_blocks && c->owner == 0 &&
           (c->cls == SCAN_BLK_LEAKED || c->cls == SCAN_BLK_UNKNOWN) &&
           !(c->flags & (SCAN_BF_DRIVER | SCAN_BF_SHARED | SC_BF_LINKED | SC_BF_AUX));
}

static bool one_bit(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* Is file block j of x inside its size and a hole? */
static bool hole_at(const struct scan_entry *x, uint64_t j)
{
    return j < x->blocks_needed && (j >= x->ndata || x->data[j] == 0);
}

bool sc_flip_release(struct scan_result *r, uint64_t blk, uint32_t claimant)
{
    struct scan_block *c = sc_cell(r, blk);
    if (c == NULL || c->cls != SCAN_BLK_DATA || c->owner == 0)
        return false;
    struct scan_entry *x = sc_entry(r, c->owner);
    struct sc_aux *a = sc_aux(r, c->owner);
    const struct scan_entry *o = sc_entry(r, claimant);
    uint64_t k = c->index;
    if (x == NULL || a == NULL || o == NULL || x->state != SCAN_ENTRY_LIVE ||
        !scan_entry_is_file(x) || k >= x->ndata || k >= x->blocks_needed || x->data[k] != blk)
        return false;
    uint64_t alt = run_block(x, k);
    bool to_hole = false;
    if (alt == 0 || alt >= r->dev_blocks || !one_bit(alt ^ blk) || !left_over(r, alt)) {
        /* A hole whose one bit flipped, among holes of a sparse file. */
        if (!one_bit(blk) || k == 0 || !hole_at(x, k - 1) || !hole_at(x, k + 1))
            return false;
        to_hole = true;
        alt = 0;
    }
    uint8_t *b = malloc(r->g.blocksize);
    uint8_t *eb = malloc(r->g.blocksize);
    bool moved = false;
    uint64_t ext;
    uint32_t slot;
    struct lanyfs_entry e;
    if (b == NULL || eb == NULL) {
        sc_oom(r);
        goto out;
    }
    if ((!to_hole && (sc_read(r, alt, b, NULL) != LANYFS_OK ||
                      sc_probe_entry(&r->g, r->dev_blocks, b, &e) ||
                      sc_probe_extender(&r->g, r->dev_blocks, b))) ||
        !sc_file_slot_of(r, x, a->top_level, k, blk, eb, &ext, &slot))
        goto out;
    if (to_hole) {
        x->blocks_mapped -= x->blocks_mapped > 0;
        x->blocks_intact -= x->blocks_intact > 0;
        a->holes++;
    } else {
        struct scan_block *ac = sc_cell(r, alt);
        ac->cls = SCAN_BLK_DATA;
        ac->flags &= (uint8_t)~SC_BF_CHECKED;
        ac->owner = x->id;
        ac->index = k;
    }
    c->cls = SCAN_BLK_UNKNOWN;
    c->flags &= (uint8_t)~(SCAN_BF_SHARED | SC_BF_CHECKED);
    c->owner = 0;
    c->index = 0;
    x->data[k] = alt;
    moved = true;
    char what[SC_PATH_MAX + 64];
    snprintf(what, sizeof(what), "the tree of orphaned %s '%s'", sc_kind_name(o), o->path);
    sc_report(r,
              &(struct scan_finding){.code = to_hole ? SCAN_PR_EXT_HOLE_FLIPPED
                                                     : SCAN_PR_EXT_SLOT_FLIPPED,
                                     .entry = x->id, .block = ext, .count = slot, .block2 = blk,
                                     .value = alt},
              x->path, "%s", what);
out:
    free(b);
    free(eb);
    return moved;
}
