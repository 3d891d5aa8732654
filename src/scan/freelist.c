/*
 * freelist.c -- pass 3 of the scan: the chained free list (SPEC-§6).
 *
 * Runs before the tree walk, so that tree and file claims meet the free
 * list's claims and the conflict is judged where it is found.  Two steps:
 *
 * 1. Chain blocks, from the head along next.  Each is claimed as a chain
 *    block (index: its position in the list); the claim is the visited set,
 *    so the walk ends.  Checks:
 *     - FREE_PTR_RANGE: next beyond the device end;
 *     - FREE_PTR_ENTRY: next at a block that reads as an entry (a flipped
 *       or stale next: the walk ends there, the list whole when
 *       'freetail' names the block before it);
 *     - FREE_NEXT_FLIPPED: next past the device, or at a block whose type
 *       is no chain type, one bit from the chain block that continues the
 *       list to exactly 'freeblocks' (super.c): the walk goes on there;
 *     - FREE_CYCLE: next names a chain block already in the list;
 *     - BLOCK_UNREADABLE: a chain block that cannot be read;
 *     - FREE_CHAIN_TYPE: a type other than 0x70 or 0x80 (the walk goes on
 *       when the block still looks like a chain block, and stops
 *       otherwise); 0x80 is counted for MARK_FORMATTER_CHAIN_TYPE;
 *     - a head whose type is no chain type is not walked: the list is
 *       walked from the one chain block one bit away when that heads a
 *       list of exactly 'freeblocks' (SB_FREEHEAD_FLIPPED, super.c), and
 *       otherwise counters.c decides later whether the head was handed out
 *       (SB_STALE_FREEHEAD);
 *     - each chain block's counter against its slots (counters.c);
 *     - the last slot filled (MARK_LAST_SLOT_FILLED, marks.c).
 *    A walk that ends at a break leaves the list incomplete: blocks
 *    nothing reaches are then unknown rather than leaked.
 * 2. Slots of every chain block reached, in list order.  Each non-zero
 *    slot is claimed as free (index: the chain block listing it):
 *     - FREE_SLOT_RANGE: a slot beyond the device end;
 *     - FREE_SLOT_METADATA: a slot listing a chain block of the list;
 *     - FREE_LISTED_TWICE: a block listed by two slots.
 *    A slot that its chain block's counter rules out (counters.c: a bit
 *    flipped in an empty slot) still lists its block, but is noted
 *    (sc_free_doubted): a live link to an entry there keeps the entry
 *    live (tree.c), where a trusted slot makes it a deleted one.  One
 *    flipped bit in an empty slot lists a block whose number has a single
 *    bit set (sc_free_one_bit): an entry a live link reaches there, or an
 *    orphan's top extender, whose own tree no free left whole, keeps it
 *    (tree.c, files.c).
 *    Slots listing blocks in use are found when the trees claim them
 *    (FREE_SLOT_IN_USE, tree.c and files.c).
 * free_listed counts chain blocks and listed blocks, each once: the real
 * free count that marks.c holds 'freeblocks' against.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "scan_priv.h"

static uint64_t next_of(const uint8_t *b)
{
    return lanyfs_get64(b + LANYFS_CH_NEXT);
}

static bool unreadable(struct scan_result *r, uint64_t blk, const struct lanyfs_error *err)
{
    return sc_report(r, &(struct scan_finding){.code = SCAN_PR_BLOCK_UNREADABLE, .block = blk},
                     NULL, "%s", err->msg);
}

/* The next links the walk read as flipped (FREE_NEXT_FLIPPED): chain
 * block from links to, for step 2. */
struct next_fixes {
    struct next_fix {
        uint64_t from, to;
    } *v;
    size_t n, cap;
};

/*
 * Chain block prev links to bad, past the device or a block whose type is
 * no chain type: the chain block one bit away that continues the list
 * (FREE_NEXT_FLIPPED, super.c), reported and kept in fx for step 2, in
 * *alt; 0 when there is none.  False when the scan must stop.
 */
static bool next_flip(struct scan_result *r, uint64_t prev, uint64_t bad,
                      struct next_fixes *fx, uint64_t *alt)
{
    *alt = sc_next_flipped(r, prev, bad);
    if (*alt == 0)
        return true;
    if (!sc_report(r,
                   &(struct scan_finding){.code = SCAN_PR_FREE_NEXT_FLIPPED, .block = prev,
                                          .block2 = bad, .value = *alt,
                                          .count = r->sb.freeblocks},
                   NULL, NULL))
        return false;
    if (fx->n == fx->cap) {
        struct next_fix *nv = sc_grow(fx->v, &fx->cap, sizeof(*nv), 4);
        if (nv == NULL)
            return sc_oom(r);
        fx->v = nv;
    }
    fx->v[fx->n++] = (struct next_fix){prev, *alt};
    return true;
}

/* Step 1: the chain blocks. */
static bool walk_chains(struct scan_result *r, uint8_t *b, struct next_fixes *fx)
{
    const struct lanyfs_geom *g = &r->g;
    uint64_t prev = 0, cur = r->freehead, pos = 0;
    struct lanyfs_error err;
    while (cur != 0) {
        if (sc_stopped(r))
            return false;
        uint64_t alt = 0;
        if (cur >= r->dev_blocks) {
            if (prev != 0 && !next_flip(r, prev, cur, fx, &alt))
                return false;
            if (alt != 0) {
                cur = alt;
                continue;
            }
            r->free_complete = false;
            if (!sc_report(r,
                           &(struct scan_finding){.code = SCAN_PR_FREE_PTR_RANGE, .block = prev,
                                                  .block2 = cur},
                           NULL, NULL))
                return false;
            break;
        }
        struct scan_block *c = sc_cell(r, cur);
        if (c != NULL && c->cls == SCAN_BLK_CHAIN) {
            r->free_complete = false;
            if (!sc_report(r,
                           &(struct scan_finding){.code = SCAN_PR_FREE_CYCLE, .block = prev,
                                                  .block2 = cur},
                           NULL, NULL))
                return false;
            break;
        }
        if (c == NULL || sc_read_one(r, cur, b, &err) != LANYFS_OK) {
            r->free_complete = false;
            if (c == NULL)
                lanyfs_fail(&err, LANYFS_E_TRUNCATED, cur, "block %" PRIu64 " lies beyond the "
                            "end of the image", cur);
            if (!unreadable(r, cur, &err))
                return false;
            break;
        }
        struct lanyfs_chain_hdr h;
        lanyfs_chain_decode(&h, b);
        if (h.type != LANYFS_TYPE_CHAIN && h.type != LANYFS_TYPE_EXT) {
            uint64_t flipped = cur == r->freehead ? sc_freehead_flipped_inside(r) : 0;
            if (flipped != 0) {
                if (!sc_report(r,
                               &(struct scan_finding){.code = SCAN_PR_SB_FREEHEAD_FLIPPED,
                                                      .value = cur, .value2 = flipped,
                                                      .count = r->sb.freeblocks},
                               NULL, NULL))
                    return false;
                r->freehead = cur = flipped;
                continue;
            }
            if (cur == r->freehead) {
                r->head_rejected = true;
                r->free_complete = false;
                break;
            }
            if (!next_flip(r, prev, cur, fx, &alt))
                return false;
            if (alt != 0) {
                cur = alt;
                continue;
            }
            /* An entry passes for a chain block on its header alone (its
             * reserved bytes are zero too, its left pointer in range): one
             * that reads as a whole entry is one, reached through a flipped
             * or stale next, and its links are no slots.  The list ends
             * before it; it ends whole when 'freetail' says so (a writer
             * that keeps it: the next was 0 with a bit flipped). */
            struct lanyfs_entry e;
            if (sc_probe_entry(g, r->dev_blocks, b, &e)) {
                r->free_complete =
                    r->free_complete && r->sb_usable && prev != 0 && r->sb.freetail == prev;
                if (!sc_report(r,
                               &(struct scan_finding){.code = SCAN_PR_FREE_PTR_ENTRY,
                                                      .block = prev, .block2 = cur,
                                                      .value = h.type},
                               NULL, NULL))
                    return false;
                break;
            }
            bool plausible = sc_zero_from(b, LANYFS_CH_RES4, LANYFS_CH_NEXT) &&
                             h.next < r->dev_blocks;
            if (!sc_report(r,
                           &(struct scan_finding){.code = SCAN_PR_FREE_CHAIN_TYPE, .block = cur,
                                                  .value = h.type},
                           NULL, NULL))
                return false;
            /* Junk breaks the list; a block of zeros ends it like an
             * empty chain block cut off from the rest (SPEC-9.3), but it
             * is a sector that read back blank.  Either way what the
             * block listed is gone (orphandata.c). */
            if (!plausible || (h.next == 0 && sc_zero_from(b, 0, g->blocksize)))
                r->chain_lost = true;
            if (!plausible) {
                r->free_complete = false;
                break;
            }
        } else if (h.type == LANYFS_TYPE_EXT) {
            if (r->chains_formatter++ == 0)
                r->first_formatter_chain = cur;
        }
        if (sc_claim(r, cur, SCAN_BLK_CHAIN, 0, pos) == SC_CLAIM_OK)
            sc_counter_torn_early(r, cur, b);
        sc_map_meta(r, cur, h.wrcnt);
        if (lanyfs_chain_slot(g, b, g->chainmax - 1) != 0 && r->chains_last_filled++ == 0)
            r->first_last_filled = cur;
        if (!sc_counter_chain(r, cur, b))
            return false;
        r->free_chains++;
        pos++;
        prev = cur;
        cur = h.next;
        if ((pos & 1023) == 0)
            sc_progress(r, SCAN_PHASE_FREE, pos, 0);
    }
    r->free_end = prev;
    return true;
}

bool sc_free_doubted(const struct scan_result *r, uint64_t blk)
{
    return sc_cellbits_get(&r->free_doubted, blk);
}

bool sc_free_one_bit(const struct scan_result *r, uint64_t blk)
{
    return blk != 0 && (blk & (blk - 1)) == 0 && blk < r->nblocks &&
           r->map[blk].cls == SCAN_BLK_FREE;
}

/* Does slot i (naming s, after prev, 0 when none) break a run of the
 * slots beside it by one bit: between two slots two blocks apart, or
 * before or after two slots of a run, one bit away from the block that
 * would continue it?  Chain slots list runs (the formatter fills them in
 * order, a delete frees in file order), so that may be one flipped bit:
 * unlist_flipped_tops (lostdata.c) judges the block. */
static bool off_run(const struct lanyfs_geom *g, const uint8_t *b, uint32_t i, uint64_t prev,
                    uint64_t s)
{
    if (prev != 0 && (s == prev + 1 || prev >= UINT64_MAX - 2))
        return false; /* the run goes on, as nearly every slot does */
    uint64_t next = i + 1 < g->chainmax ? lanyfs_chain_slot(g, b, i + 1) : 0, want = 0;
    if (prev != 0 && next == prev + 2)
        want = prev + 1;
    else if (prev == 0 && next > 1 && i + 2 < g->chainmax &&
             lanyfs_chain_slot(g, b, i + 2) == next + 1)
        want = next - 1;
    else if (next == 0 && prev != 0 && i >= 2 && lanyfs_chain_slot(g, b, i - 2) + 1 == prev)
        want = prev + 1;
    return want != 0 && s != want && sc_one_bit(s ^ want);
}

/* Step 2: the slots of the chain blocks reached, in list order. */
static bool walk_slots(struct scan_result *r, uint8_t *b, const struct next_fixes *fx)
{
    const struct lanyfs_geom *g = &r->g;
    uint64_t cur = r->freehead, pos = 0, listed = 0;
    while (cur != 0 && cur < r->nblocks && r->map[cur].cls == SCAN_BLK_CHAIN &&
           r->map[cur].index == pos) {
        if (sc_stopped(r))
            return false;
        if (sc_read_one(r, cur, b, NULL) != LANYFS_OK)
            break;
        uint32_t doubted = sc_chain_doubted_slot(r, cur, b);
        uint64_t prev_s = 0;
        for (uint32_t i = 0; i < g->chainmax; i++) {
            uint64_t s = lanyfs_chain_slot(g, b, i);
            uint64_t before = prev_s;
            prev_s = s;
            if (s == 0)
                continue;
            if (i == doubted && !sc_cellbits_set(r, &r->free_doubted, s))
                return sc_oom(r);
            if (off_run(g, b, i, before, s) && !sc_cellbits_set(r, &r->run_flipped, s))
                return sc_oom(r);
            if (s >= r->dev_blocks) {
                if (!sc_report(r,
                               &(struct scan_finding){.code = SCAN_PR_FREE_SLOT_RANGE,
                                                      .block = cur, .count = i, .block2 = s},
                               NULL, NULL))
                    return false;
                continue;
            }
            struct scan_block *c = sc_cell(r, s);
            if (c == NULL) {
                listed++;
                continue;
            }
            switch ((enum scan_class)c->cls) {
            case SCAN_BLK_UNKNOWN:
                sc_claim(r, s, SCAN_BLK_FREE, 0, cur);
                listed++;
                break;
            case SCAN_BLK_CHAIN:
                c->flags |= SCAN_BF_SHARED;
                if (!sc_report(r,
                               &(struct scan_finding){.code = SCAN_PR_FREE_SLOT_METADATA,
                                                      .block = cur, .count = i, .block2 = s},
                               NULL, "a chain block of the free list"))
                    return false;
                break;
            case SCAN_BLK_FREE: {
                /* On driver media a double free through a stale inode (SPEC-§9.12). */
                c->flags |= SCAN_BF_SHARED;
                struct scan_finding m = {.code = SCAN_PR_MARK_STALE_TREE, .block = cur,
                                         .block2 = s};
                struct scan_finding f = {.code = SCAN_PR_FREE_LISTED_TWICE, .block = c->index,
                                         .value = cur, .block2 = s};
                if (!sc_report_alt(r, &m, "free list", NULL, &f, NULL, NULL))
                    return false;
                break;
            }
            default:
                c->flags |= SCAN_BF_SHARED;
                if (!sc_report(r,
                               &(struct scan_finding){.code = SCAN_PR_FREE_SLOT_METADATA,
                                                      .block = cur, .count = i, .block2 = s},
                               NULL, "the superblock"))
                    return false;
                break;
            }
        }
        uint64_t from = cur;
        cur = next_of(b);
        for (size_t k = 0; k < fx->n; k++)
            if (fx->v[k].from == from)
                cur = fx->v[k].to;
        pos++;
    }
    r->free_listed = r->free_chains + listed;
    return true;
}

bool sc_free_pass(struct scan_result *r)
{
    uint8_t *b = malloc(r->g.blocksize);
    bool ok = false;
    if (b == NULL)
        return sc_oom(r);
    sc_progress(r, SCAN_PHASE_FREE, 0, 0);
    if (r->freehead == 0)
        goto out_done;
    struct next_fixes fx = {0};
    bool walked = walk_chains(r, b, &fx) && walk_slots(r, b, &fx);
    free(fx.v);
    if (!walked)
        goto out;
out_done:
    ok = true;
out:
    free(b);
    return ok;
}

uint64_t sc_free_prev(struct scan_result *r, uint64_t chain)
{
    struct scan_block *c = sc_cell(r, chain);
    if (c == NULL || c->cls != SCAN_BLK_CHAIN || c->index == 0)
        return 0;
    uint8_t *b = malloc(r->g.blocksize);
    uint64_t cur = r->freehead, found = 0;
    if (b == NULL)
        return 0;
    for (uint64_t pos = 0; pos < c->index && cur != 0 && cur < r->nblocks; pos++) {
        if (r->map[cur].cls != SCAN_BLK_CHAIN || r->map[cur].index != pos ||
            sc_read_one(r, cur, b, NULL) != LANYFS_OK)
            break;
        uint64_t next = next_of(b);
        if (next == chain) {
            found = cur;
            break;
        }
        cur = next;
    }
    free(b);
    return found;
}
