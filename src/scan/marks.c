/*
 * marks.c -- pass 6 of the scan: the marks of the 2012 driver and formatter.
 *
 * Media written by the 2012 driver carry the marks of its behaviour
 * (SPEC-§9).  Each mark resembles a kind of damage; this file decides, from
 * what the other passes found, which one a block or entry shows, and
 * reports the mark under its MARK_* code instead of the damage's code, so
 * that a driver-written stick reads as driver-written and a damaged one as
 * damaged.  Recognised, by their marks:
 *  - 9.10 chain blocks of type 0x80 (MARK_FORMATTER_CHAIN_TYPE) and 9.1 the
 *    last slot filled (MARK_LAST_SLOT_FILLED);
 *  - 9.1 leaks through the last slot: a leaked block in the last slot
 *    position of a 2012 formatter chain block that is no longer in the list
 *    (MARK_LAST_SLOT_LEAK);
 *  - 9.2 'freeblocks' below the free list: uncounted pushes
 *    (MARK_UNCOUNTED_PUSH); above it by more than the leaks the driver
 *    still counts (last-slot leaks, a cut list) is SB_FREEBLOCKS_WRONG;
 *  - 9.3 'freetail' naming the head (MARK_FREETAIL_STALE), otherwise a
 *    wrong tail is FREE_END_WRONG; a cut-off list: leaked blocks that look
 *    like chain blocks, and the leaked blocks they list (MARK_FREELIST_CUT);
 *  - 9.4 extenders of deleted files: orphan extender trees that map nothing
 *    (MARK_EXTENDER_LEAK, provisional: an unplug between a correct
 *    delete's writes leaves them too, and elsewhere they are
 *    BLOCKS_LEAKED; the trees that still map data are lostdata.c's);
 *  - 9.7 the growth loop: a file past extmax blocks
 *    whose top's last slot names an empty level-0 extender, and the empty,
 *    never-written (counter 0) level-0 extenders orphaned around it
 *    (MARK_EXTENDER_FLOOD), the file's first blocks written over
 *    (MARK_FIRST_BLOCK_OVERWRITTEN: level-1 top, slot 0 a full level-0
 *    extender, slot 1 an empty one, nothing after);
 *  - 9.8 holes in level-0 extenders of a file the driver wrote (it sets
 *    no-exec on the files it creates): MARK_HOLE_TO_BLOCK0;
 *  - 9.9 a failed delete: a file the driver made (no-exec) whose tree maps
 *    only holes under a non-zero size, its extenders visited by a truncate
 *    (MARK_FAILED_DELETE; elsewhere that is a sparse file); a failed
 *    rename: an entry reached from two directories, or a leaf reached twice
 *    (MARK_RENAME_TWO_TREES; without the driver's marks elsewhere, a rename
 *    an unplug cut off between its writes: TREE_RENAME_HALFWAY), anything
 *    else reached twice is TREE_REACHED_TWICE;
 *  - 9.12 a frozen parent: a directory whose links name a freed or chain
 *    block (MARK_FROZEN_PARENT); 9.14 an entry that became a chain block
 *    while linked from a sibling (MARK_ENTRY_BECAME_CHAIN); a non-directory
 *    linking to a freed block is FREE_SLOT_IN_USE;
 *  - 9.13 blocks mapped past the size by a file the driver wrote
 *    (MARK_EXTRA_MAPPED), otherwise FILE_SIZE_EXCESS; 9.14 a size-0 file
 *    that still has an extender (MARK_ZERO_SIZE_EXTENDER);
 *  - 9.15 a modified time with a non-zero offset later than the last
 *    superblock update (MARK_TIME_DRIFT);
 *  - orphaned entries on media the driver wrote (MARK_DRIVER_ORPHAN): its
 *    failed renames, frozen parents and ignored inserts drop entries from
 *    their trees (9.9, 9.12, 9.14); elsewhere ORPHAN_ENTRY;
 *  - the leaked blocks left over are BLOCKS_LEAKED.
 * Marks that resemble damage closely (stale links, orphans) are provisional
 * (sc_report_alt): they stand when the image shows the driver's hand by a
 * mark only the driver makes, or by the no-exec attribute it gives every
 * file it creates; otherwise they are reported as the damage.
 * Blocks a mark explains carry SCAN_BF_DRIVER in the map.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

bool sc_mark_tree_anomaly(struct scan_result *r, const struct scan_finding *f, const char *path,
                          const char *text)
{
    struct scan_finding m = {.code = SCAN_PR_MARK_STALE_TREE, .entry = f->entry,
                             .block = f->block, .block2 = f->block2 ? f->block2 : f->block};
    return sc_report_alt(r, &m, path, NULL, f, path, text);
}

bool sc_mark_reached_twice(struct scan_result *r, uint32_t first, uint32_t dir, const char *path,
                           uint64_t from)
{
    struct scan_entry *fe = sc_entry(r, first);
    if (fe == NULL)
        return true;
    bool leaf = fe->e.left == 0 && fe->e.right == 0;
    if (fe->state == SCAN_ENTRY_LIVE && (leaf || fe->parent != dir)) {
        /* The driver's failed rename, or a rename an unplug cut off
         * between its writes: the mark stands where the driver wrote. */
        struct scan_finding m = {.code = SCAN_PR_MARK_RENAME_TWO_TREES, .entry = first,
                                 .block = fe->block};
        struct scan_finding alt = m;
        alt.code = SCAN_PR_TREE_RENAME_HALFWAY;
        return sc_report_alt(r, &m, fe->path, NULL, &alt, fe->path, NULL);
    }
    struct scan_finding m = {.code = SCAN_PR_MARK_STALE_TREE, .entry = first, .block = from,
                             .block2 = fe->block};
    struct scan_finding alt = {.code = SCAN_PR_TREE_REACHED_TWICE, .entry = first,
                               .block = fe->block};
    return sc_report_alt(r, &m, path, NULL, &alt, fe->path, path);
}

bool sc_mark_orphan_leaf(struct scan_result *r, uint32_t leaf)
{
    struct scan_entry *fe = sc_entry(r, leaf);
    if (fe == NULL)
        return true;
    /* The driver's failed rename drops the old directory's tree, whose
     * entries still link the renamed leaf (SPEC-9.9): the mark stands
     * where the driver wrote.  Elsewhere the orphan is an entry an unlink
     * or an insert cut off left with its old sibling links, no rename: of
     * 25 such links on the correct writer's kept states whose write logs
     * tell, 24 were cut in an unlink or a put, 1 in a rename.  Moving the
     * orphan to /lost+found rewrites those links; nothing else is to be
     * done. */
    struct scan_finding m = {.code = SCAN_PR_MARK_RENAME_TWO_TREES, .entry = leaf,
                             .block = fe->block};
    struct scan_finding drop = {.code = SC_ALT_DROP};
    return sc_report_alt(r, &m, fe->path, NULL, &drop, NULL, NULL);
}

bool sc_mark_stale_link(struct scan_result *r, uint32_t src, enum sc_link link, uint64_t blk,
                        bool chain, uint8_t type)
{
    struct scan_entry *se = sc_entry(r, src);
    struct scan_block *c = sc_cell(r, blk);
    bool dir = scan_entry_is_dir(se);
    bool listed = c != NULL && (c->cls == SCAN_BLK_CHAIN || c->cls == SCAN_BLK_FREE);
    char *text = NULL;
    struct scan_finding alt = {.code = SCAN_PR_TREE_PTR_TYPE, .entry = src, .block = se->block,
                               .block2 = blk, .value = type};
    if (!chain && listed) {
        alt = (struct scan_finding){.code = SCAN_PR_FREE_SLOT_IN_USE, .entry = src,
                                    .block = c->index, .block2 = blk};
        if (asprintf(&text, "%s (its tree links to it)", se->path) < 0)
            return sc_oom(r);
    }
    struct scan_finding m = {.entry = src, .block = se->block, .block2 = blk};
    if (dir && (!chain || link == SC_LINK_SUBTREE))
        m.code = SCAN_PR_MARK_FROZEN_PARENT;
    else if (chain)
        m = (struct scan_finding){.code = SCAN_PR_MARK_ENTRY_BECAME_CHAIN, .entry = src,
                                  .block = blk};
    else
        m = (struct scan_finding){.code = SCAN_PR_MARK_STALE_TREE, .entry = src,
                                  .block = se->block, .block2 = blk};
    bool ok = sc_report_alt(r, &m, se->path, NULL, &alt, se->path, text);
    free(text);
    return ok;
}

/* Is the chain block b (at blk) a head the list consumed: every slot
 * empty, a `next` set?  A pop that finds the head empty hands the head
 * itself out and moves `freehead` to its next; until the new owner's
 * bytes land, it still reads as a chain block, but nothing was cut
 * (correct:822 state 10864: 446, whose next is the head 925, read as the
 * driver's cut, and the image as one the driver wrote; correct:830 state
 * 9937: 1652, whose next 1817 was consumed the same way).  The chain
 * blocks a relink cuts off lie past the head, where no pop empties them;
 * only the formatter's last one may list nothing, and its next is 0. */
static bool consumed_head(const struct scan_result *r, uint64_t blk, const uint8_t *b)
{
    struct lanyfs_chain_hdr h;
    lanyfs_chain_decode(&h, b);
    uint64_t next = h.next;
    if (next == 0 || next == blk || next >= r->nblocks)
        return false;
    for (uint32_t i = 0; i < r->g.chainmax; i++)
        if (lanyfs_chain_slot(&r->g, b, i) != 0)
            return false;
    return true;
}

/* 9.3: leaked chain-like blocks and the leaked blocks they list. */
static bool cut_list(struct scan_result *r, uint8_t *b, uint64_t *count, uint64_t *first)
{
    const struct lanyfs_geom *g = &r->g;
    for (uint64_t blk = 1; blk < r->nblocks; blk++) {
        struct scan_block *c = &r->map[blk];
        if (c->cls != SCAN_BLK_LEAKED || !(c->flags & SC_BF_AUX) || c->owner != 0)
            continue;
        if (sc_stopped(r))
            return false;
        bool readable = sc_read(r, blk, b, NULL) == LANYFS_OK;
        if (readable && consumed_head(r, blk, b))
            continue;
        if (!(c->flags & SCAN_BF_DRIVER)) {
            c->flags |= SCAN_BF_DRIVER;
            if ((*count)++ == 0)
                *first = blk;
        }
        if (!readable)
            continue;
        for (uint32_t i = 0; i < g->chainmax; i++) {
            struct scan_block *t = sc_cell(r, lanyfs_chain_slot(g, b, i));
            uint64_t s = lanyfs_chain_slot(g, b, i);
            if (s == 0 || t == NULL || t->cls != SCAN_BLK_LEAKED || t->owner != 0 ||
                (t->flags & SCAN_BF_DRIVER))
                continue;
            t->flags |= SCAN_BF_DRIVER;
            if (!(t->flags & SC_BF_AUX))
                t->index = blk;
            (*count)++;
        }
    }
    return true;
}

/* 9.1: a leaked block in the last slot of a consumed 2012 formatter chain
 * block.  Not one an orphan extender's slot names: the driver never hands
 * such a block out, and a write's allocation did (correct:822 state
 * 10864: 1018, in the data runs of the lost writes at 984 and 993, read
 * as the driver's leak, and the image as one the driver wrote). */
static uint64_t last_slot_leaks(struct scan_result *r)
{
    uint64_t n = 0, span = (uint64_t)r->g.chainmax + 1;
    for (uint64_t blk = 1; blk < r->nblocks; blk++) {
        struct scan_block *c = &r->map[blk];
        if (c->cls != SCAN_BLK_LEAKED || c->owner != 0 || (c->flags & SCAN_BF_DRIVER) ||
            blk < (uint64_t)r->g.chainmax + 2 || sc_cellbits_get(&r->ext_named, blk))
            continue;
        uint64_t chain = blk - r->g.chainmax;
        /* Not consumed: still in the list, or a chain block left out of
         * it (leaked, but it looks like one: SC_BF_AUX). */
        const struct scan_block *cc = &r->map[chain];
        if ((chain - 2) % span != 0 || cc->cls == SCAN_BLK_CHAIN ||
            (cc->cls == SCAN_BLK_LEAKED && (cc->flags & SC_BF_AUX)))
            continue;
        c->flags |= SCAN_BF_DRIVER;
        c->index = chain;
        n++;
    }
    return n;
}

/* Extender at blk is the empty level-0 extender the growth loop leaves linked. */
static bool empty_leaf(struct scan_result *r, uint64_t blk, uint8_t *b)
{
    return blk != 0 && sc_read(r, blk, b, NULL) == LANYFS_OK && b[0] == LANYFS_TYPE_EXT &&
           b[LANYFS_EXT_LEVEL] == 0 && sc_extender_empty(&r->g, b);
}

/* 9.7: the live file whose top's last used slot names an empty level-0 extender. */
static uint32_t flood_file(struct scan_result *r, uint8_t *b)
{
    const struct lanyfs_geom *g = &r->g;
    for (size_t i = 0; i < r->nentries; i++) {
        const struct scan_entry *x = &r->entries[i];
        const struct sc_aux *a = &r->aux[i];
        if (x->state != SCAN_ENTRY_LIVE || !a->walked || a->top_level < 1 ||
            x->blocks_needed <= g->extmax || sc_read(r, x->e.subtree, b, NULL) != LANYFS_OK)
            continue;
        uint64_t last = 0;
        for (uint32_t k = 0; k < g->extmax; k++)
            if (lanyfs_ext_slot(g, b, k) != 0)
                last = lanyfs_ext_slot(g, b, k);
        if (a->top_level == 1 && empty_leaf(r, last, b))
            return x->id;
    }
    return 0;
}

/* 9.4, 9.7: orphan extender trees that map nothing (marked SC_BF_AUX level by level). */
static bool empty_trees(struct scan_result *r, uint8_t *b)
{
    const struct lanyfs_geom *g = &r->g;
    for (unsigned level = 1; level <= SC_LEVEL_MAX; level++) {
        bool any = false;
        for (uint64_t blk = 1; blk < r->nblocks; blk++) {
            struct scan_block *c = &r->map[blk];
            if (c->cls != SCAN_BLK_ORPHAN_EXT || c->index != level || (c->flags & SC_BF_AUX))
                continue;
            if (sc_stopped(r))
                return false;
            if (sc_read(r, blk, b, NULL) != LANYFS_OK)
                continue;
            bool empty = true;
            for (uint32_t k = 0; k < g->extmax && empty; k++) {
                struct scan_block *t = sc_cell(r, lanyfs_ext_slot(g, b, k));
                if (lanyfs_ext_slot(g, b, k) == 0)
                    continue;
                empty = t != NULL && t->cls == SCAN_BLK_ORPHAN_EXT && t->index + 1 == level &&
                        (t->flags & SC_BF_AUX);
            }
            if (empty) {
                c->flags |= SC_BF_AUX;
                any = true;
            }
        }
        if (!any)
            break;
    }
    return true;
}

bool sc_marks_leaks(struct scan_result *r)
{
    uint8_t *b = malloc(r->g.blocksize);
    bool ok = false;
    uint64_t cut = 0, cut_first = 0, leak = 0, leak_first = 0, flood = 0;
    if (b == NULL)
        return sc_oom(r);
    if (!r->free_complete && r->sb_usable) {
        /* Unknown blocks cannot be told apart from lost free ones: no leak
         * is judged, but the lost writes are still found (lostdata.c). */
        uint64_t empty = 0, empty_first = 0;
        ok = sc_lost_trees(r, b, &empty, &empty_first) && sc_flip_free_claims(r);
        sc_orphan_excess(r);
        goto out;
    }
    /* Without a free list (an inferred geometry found no head, or the
     * superblock names none: a format cut before its second superblock
     * write, once its root is set), leaked chain blocks are that list's
     * own, not blocks a relink of the head cut off it (SPEC-9.3). */
    if (r->free_complete && r->freehead != 0 && !cut_list(r, b, &cut, &cut_first))
        goto out;
    r->leak_cut = cut;
    r->leak_last_slot = last_slot_leaks(r);
    r->flood_file = flood_file(r, b);
    if (!empty_trees(r, b))
        goto out;
    for (uint64_t blk = 1; blk < r->nblocks; blk++) {
        struct scan_block *c = &r->map[blk];
        if (c->cls != SCAN_BLK_ORPHAN_EXT || !(c->flags & SC_BF_AUX))
            continue;
        const struct scan_entry *o = sc_entry(r, c->owner);
        if (o != NULL && o->state == SCAN_ENTRY_ORPHAN)
            continue; /* an orphaned file's own tree */
        if (r->flood_file != 0 && c->index == 0 && c->wrcnt == 0 && c->owner == 0) {
            c->flags |= SCAN_BF_DRIVER;
            flood++;
        } else {
            /* Provisional, as the empty trees of sc_lost_trees below: an
             * unplug between a correct delete's writes leaves them too. */
            c->flags |= SC_BF_LINKED;
            if (leak++ == 0)
                leak_first = blk;
        }
    }
    if (r->leak_last_slot > 0 &&
        !sc_report(r,
                   &(struct scan_finding){.code = SCAN_PR_MARK_LAST_SLOT_LEAK,
                                          .count = r->leak_last_slot},
                   NULL, NULL))
        goto out;
    if (cut > 0 && !sc_report(r,
                              &(struct scan_finding){.code = SCAN_PR_MARK_FREELIST_CUT,
                                                     .block = r->freehead, .block2 = cut_first,
                                                     .count = cut},
                              NULL, NULL))
        goto out;
    if (r->flood_file != 0) {
        const struct scan_entry *x = sc_entry(r, r->flood_file);
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_MARK_EXTENDER_FLOOD,
                                              .entry = x->id, .block = x->block, .count = flood},
                       x->path, NULL))
            goto out;
    }
    /* Orphan extender trees that still map data are the lost writes of
     * lostdata.c; those that map nothing any more are extender leaks. */
    uint64_t full = 0, full_first = 0;
    if (!sc_lost_trees(r, b, &full, &full_first) || !sc_flip_free_claims(r))
        goto out;
    sc_orphan_excess(r);
    if (leak > 0 && (full == 0 || leak_first < full_first))
        full_first = leak_first;
    full += leak;
    uint64_t rest = 0, first = 0;
    for (uint64_t blk = 1; blk < r->nblocks; blk++) {
        const struct scan_block *c = &r->map[blk];
        bool leaked = (c->cls == SCAN_BLK_LEAKED || c->cls == SCAN_BLK_ORPHAN_EXT) &&
                      c->owner == 0 && !(c->flags & (SCAN_BF_DRIVER | SC_BF_LINKED));
        if (leaked && rest++ == 0)
            first = blk;
    }
    /*
     * On driver media: the extender leak and the rest; elsewhere one
     * BLOCKS_LEAKED for both (the second finding is then dropped).
     */
    struct scan_finding rest_f = {.code = SCAN_PR_BLOCKS_LEAKED, .block = first, .count = rest};
    if (full > 0) {
        struct scan_finding m = {.code = SCAN_PR_MARK_EXTENDER_LEAK, .block = full_first,
                                 .count = full};
        struct scan_finding alt = {.code = SCAN_PR_BLOCKS_LEAKED,
                                   .block = rest && first < full_first ? first : full_first,
                                   .count = full + rest};
        struct scan_finding drop = {.code = SC_ALT_DROP};
        if (!sc_report_alt(r, &m, NULL, NULL, &alt, NULL, NULL) ||
            (rest > 0 && !sc_report_alt(r, &rest_f, NULL, NULL, &drop, NULL, NULL)))
            goto out;
    } else if (rest > 0 && !sc_report(r, &rest_f, NULL, NULL)) {
        goto out;
    }
    ok = true;
out:
    free(b);
    return ok;
}

bool sc_marks_free(struct scan_result *r)
{
    const struct lanyfs_super *sb = &r->sb;
    if (r->chains_formatter > 0 &&
        !sc_report(r,
                   &(struct scan_finding){.code = SCAN_PR_MARK_FORMATTER_CHAIN_TYPE,
                                          .block = r->first_formatter_chain,
                                          .count = r->chains_formatter},
                   NULL, NULL))
        return false;
    if (r->chains_last_filled > 0 &&
        !sc_report(r,
                   &(struct scan_finding){.code = SCAN_PR_MARK_LAST_SLOT_FILLED,
                                          .block = r->first_last_filled,
                                          .count = r->chains_last_filled},
                   NULL, NULL))
        return false;
    if (!r->sb_usable || !r->free_complete)
        return true;
    uint64_t end = r->freehead ? r->free_end : 0;
    if (sb->freetail != end && sb->freetail < r->dev_blocks) {
        bool stale = r->freehead != 0 && sb->freetail == sb->freehead;
        struct scan_finding f = {.code = stale ? SCAN_PR_MARK_FREETAIL_STALE
                                               : SCAN_PR_FREE_END_WRONG,
                                 .block = stale ? r->freehead : end, .block2 = sb->freetail};
        if (!sc_report(r, &f, NULL, NULL))
            return false;
    }
    uint64_t real = r->free_listed, fb = sb->freeblocks;
    uint64_t explained = r->leak_last_slot + r->leak_cut;
    if (fb < real)
        return sc_report(r,
                         &(struct scan_finding){.code = SCAN_PR_MARK_UNCOUNTED_PUSH,
                                                .value = fb, .count = real - fb},
                         NULL, NULL);
    if (fb - real > explained)
        return sc_report(r,
                         &(struct scan_finding){.code = SCAN_PR_SB_FREEBLOCKS_WRONG, .value = fb,
                                                .count = real},
                         NULL, NULL);
    return true;
}

bool sc_mark_file(struct scan_result *r, uint32_t id, struct sc_file_marks *m)
{
    const struct lanyfs_geom *g = &r->g;
    memset(m, 0, sizeof(*m));
    struct scan_entry *x = sc_entry(r, id);
    struct sc_aux *a = sc_aux(r, id);
    bool driver_file = (x->e.attr & LANYFS_ATTR_NOEXEC) != 0;
    struct scan_finding f = {.entry = id, .block = x->block, .block2 = x->e.subtree};
    const char *path = x->path;

    if (x->e.subtree == 0)
        return true;
    if (a->excess > 0 && driver_file) {
        m->extra_mapped = true;
        f.code = SCAN_PR_MARK_EXTRA_MAPPED;
        f.count = a->excess;
        if (!sc_report(r, &f, path, NULL))
            return false;
    }
    if (a->holes0 > 0 && driver_file && a->ext_wrcnt_max == 0) {
        /* Holes no truncate made: the driver's writes to them went to block 0. */
        m->holes_to_block0 = true;
        f.code = SCAN_PR_MARK_HOLE_TO_BLOCK0;
        f.count = a->holes0;
        if (!sc_report(r, &f, path, NULL))
            return false;
    }
    if (a->tree_broken)
        return true;
    if (x->e.size == 0) {
        f.code = SCAN_PR_MARK_ZERO_SIZE_EXTENDER;
        if (!sc_report(r, &f, path, NULL))
            return false;
    }
    if (driver_file && x->e.size > 0 && x->blocks_mapped == 0 && a->ext_wrcnt_max >= 1) {
        m->failed_delete = true;
        f.code = SCAN_PR_MARK_FAILED_DELETE;
        if (!sc_report(r, &f, path, NULL))
            return false;
    }
    if (x->blocks_needed > g->extmax && a->top_level == 1) {
        uint8_t *b = malloc(g->blocksize);
        if (b == NULL)
            return sc_oom(r);
        bool mark = false;
        if (sc_read(r, x->e.subtree, b, NULL) == LANYFS_OK) {
            uint64_t s0 = lanyfs_ext_slot(g, b, 0), s1 = lanyfs_ext_slot(g, b, 1);
            bool rest_zero = true;
            for (uint32_t k = 2; k < g->extmax; k++)
                rest_zero = rest_zero && lanyfs_ext_slot(g, b, k) == 0;
            if (rest_zero && s0 != 0 && s1 != 0 && empty_leaf(r, s1, b) &&
                sc_read(r, s0, b, NULL) == LANYFS_OK && b[0] == LANYFS_TYPE_EXT &&
                b[LANYFS_EXT_LEVEL] == 0) {
                mark = true;
                for (uint32_t k = 0; k < g->extmax && mark; k++)
                    mark = lanyfs_ext_slot(g, b, k) != 0;
            }
        }
        free(b);
        if (mark) {
            m->first_overwritten = true;
            f.code = SCAN_PR_MARK_FIRST_BLOCK_OVERWRITTEN;
            f.count = g->extmax;
            if (!sc_report(r, &f, path, NULL))
                return false;
        }
    }
    if (a->holes0 > 0 && driver_file && !m->holes_to_block0 && !m->first_overwritten &&
        !m->failed_delete) {
        m->holes_to_block0 = true;
        f.code = SCAN_PR_MARK_HOLE_TO_BLOCK0;
        f.count = a->holes0;
        if (!sc_report(r, &f, path, NULL))
            return false;
    }
    return true;
}

bool sc_marks_times(struct scan_result *r)
{
    time_t upd;
    if (!r->sb_usable || !lanyfs_ts_is_valid(&r->sb.updated) ||
        !lanyfs_ts_to_time(&r->sb.updated, &upd))
        return true;
    for (size_t i = 0; i < r->nentries; i++) {
        const struct scan_entry *x = &r->entries[i];
        time_t mod;
        if (x->state != SCAN_ENTRY_LIVE || x->e.modified.offset == 0 ||
            !lanyfs_ts_is_valid(&x->e.modified) || !lanyfs_ts_to_time(&x->e.modified, &mod) ||
            mod <= upd + 60)
            continue;
        long long mins = (long long)((mod - upd) / 60);
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_MARK_TIME_DRIFT, .entry = x->id,
                                              .block = x->block},
                       x->path, "%lld minutes", mins))
            return false;
    }
    return true;
}

bool sc_marks_orphans(struct scan_result *r)
{
    for (size_t i = 0; i < r->nentries; i++) {
        const struct scan_entry *x = &r->entries[i];
        if (x->state != SCAN_ENTRY_ORPHAN || x->parent != 0)
            continue;
        struct scan_finding f = {.code = SCAN_PR_MARK_DRIVER_ORPHAN, .entry = x->id,
                                 .block = x->block};
        struct scan_finding alt = f;
        alt.code = SCAN_PR_ORPHAN_ENTRY;
        const char *kind = sc_kind_name(x);
        if (!sc_report_alt(r, &f, x->path, kind, &alt, x->path, kind))
            return false;
    }
    return true;
}

/* Marks only the 2012 driver makes (the formatter's own are no evidence of a mount). */
static bool driver_only(uint32_t code)
{
    switch (code) {
    case SCAN_PR_MARK_LAST_SLOT_LEAK:
    case SCAN_PR_MARK_UNCOUNTED_PUSH:
    case SCAN_PR_MARK_FREETAIL_STALE:
    case SCAN_PR_MARK_FREELIST_CUT:
    case SCAN_PR_MARK_EXTENDER_LEAK:
    case SCAN_PR_MARK_EXTENDER_FLOOD:
    case SCAN_PR_MARK_FIRST_BLOCK_OVERWRITTEN:
    case SCAN_PR_MARK_HOLE_TO_BLOCK0:
    case SCAN_PR_MARK_FAILED_DELETE:
    case SCAN_PR_MARK_EXTRA_MAPPED:
    case SCAN_PR_MARK_TIME_DRIFT:
    case SCAN_PR_MARK_ZERO_SIZE_EXTENDER:
        return true;
    default:
        return false;
    }
}

void sc_marks_settle(struct scan_result *r)
{
    /* A failed rename's entry breaks the order where it sits twice: the mark says it all. */
    for (size_t i = 0; i < r->nfindings; i++) {
        if (r->findings[i].code != SCAN_PR_MARK_RENAME_TWO_TREES)
            continue;
        for (size_t j = 0; j < r->nfindings; j++) {
            uint32_t code = r->alt[j].code ? r->alt[j].code : r->findings[j].code;
            if (code == SCAN_PR_TREE_ORDER && r->findings[j].entry == r->findings[i].entry)
                r->findings[j].code = r->alt[j].code = 0;
        }
    }
    /* A count one below the list is no evidence: a push whose superblock
     * write an unplug cut off leaves it so on any writer's media (65 of
     * the kept states of the correct writer read as the driver's for it
     * alone, their orphans as MARK_DRIVER_ORPHAN). */
    bool driver = false;
    for (size_t i = 0; i < r->nfindings && !driver; i++)
        driver = r->alt[i].code == 0 && driver_only(r->findings[i].code) &&
                 !(r->findings[i].code == SCAN_PR_MARK_UNCOUNTED_PUSH && r->findings[i].count == 1);
    if (!driver)
        driver = sc_driver_files(r);
    sc_settle(r, driver);
    /* The blocks of the provisional extender leak (sc_marks_leaks). */
    for (uint64_t blk = 1; blk < r->nblocks; blk++) {
        struct scan_block *c = &r->map[blk];
        bool empty_tree = c->cls == SCAN_BLK_ORPHAN_EXT && (c->flags & SC_BF_AUX);
        if ((c->cls == SCAN_BLK_LEAKED || c->cls == SCAN_BLK_ORPHAN_EXT) &&
            (c->owner == 0 || empty_tree) && (c->flags & SC_BF_LINKED) && driver)
            c->flags |= SCAN_BF_DRIVER;
    }
}
