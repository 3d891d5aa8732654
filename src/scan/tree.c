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
 *  - TREE_PTR_TYPE: a link to a block that is no directory or file, by its
 *    type byte or by most of its other fields (sc_entry_junk: 2012:778
 *    state 3599, bit 4 of byte 24 of block 67 flipped: a directory's
 *    subtree pointer went from 146 to 130, a data block of
 *    /docs69/readme-0085.txt whose first byte is 0x20, and the walk took
 *    its bytes for a file with wild pointers and no name);
 *  - TREE_CYCLE: a link back to a node on the current path;
 *  - a second link to a node already reached: marks.c decides between
 *    TREE_REACHED_TWICE and a rename left in two trees (MARK_RENAME_TWO_TREES
 *    for the driver's failed one, TREE_RENAME_HALFWAY for one cut off);
 *  - a link to a chain block or a freed block of the free list: marks.c
 *    decides between a frozen parent (MARK_FROZEN_PARENT), an entry that
 *    became a chain block (MARK_ENTRY_BECAME_CHAIN) and a block listed free
 *    while in use (FREE_SLOT_IN_USE); a freed entry reached that way is
 *    recorded as deleted and walked through to the live siblings below it,
 *    and what lies below it is exempt from the order and twice-reached
 *    checks (the driver rewrote those links around it); a block listed by
 *    a slot that its chain block's counter rules out (sc_free_doubted) is
 *    FREE_SLOT_IN_USE, and the entry stays live; so is an entry that one
 *    bit flipped in an empty slot would list and that no delete left
 *    (flip_listed), and a file whose level-0 map no delete emptied or
 *    freed (map_kept);
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
        struct tframe *nv = sc_grow(s->v, &s->cap, sizeof(*nv), 64);
        if (nv == NULL)
            return sc_oom(r);
        s->v = nv;
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

/* Does x's name lie within the bounds its ancestors in frame f set (the
 * reversed order: greater names left)?  When not, *bound names the block of
 * the ancestor it crosses. */
static bool in_bounds(struct scan_result *r, const struct scan_entry *x, const struct tframe *f,
                      uint64_t *bound)
{
    const struct scan_entry *lo = sc_entry(r, f->lo), *hi = sc_entry(r, f->hi);
    bool ok = true;
    if (lo != NULL && lanyfs_name_cmp(lo->e.name, x->e.name, x->e.name_len) > 0) {
        ok = false;
        *bound = lo->block;
    }
    if (hi != NULL && lanyfs_name_cmp(hi->e.name, x->e.name, x->e.name_len) < 0) {
        ok = false;
        *bound = hi->block;
    }
    return ok;
}

/* The order check of a node just reached (none through a freed node). */
static bool check_order(struct scan_result *r, uint32_t id, const struct tframe *child)
{
    struct scan_entry *x = sc_entry(r, id);
    struct scan_finding f = {.entry = id, .block = x->block};
    if (child->stale || in_bounds(r, x, child, &f.block2))
        return true;
    sc_aux(r, id)->tw |= SC_TW_ORDER_BAD;
    f.code = SCAN_PR_TREE_ORDER;
    return sc_mark_tree_anomaly(r, &f, x->path, NULL);
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
    return check_order(r, id, child);
}

static const char *dir_path(struct scan_result *r, uint32_t dir)
{
    struct scan_entry *d = sc_entry(r, dir);
    return d && d->path ? d->path : "/";
}

/* ---- a rename caught halfway: which tree keeps the entry -------------------- */

/* Parent links followed by all cycle checks of one scan, at most. */
#define MOVE_STEPS_MAX ((uint64_t)1 << 22)

/*
 * Move entry first into the tree of directory child->dir, reached there
 * from block src_blk by a link of this kind; its path and what lies below
 * it are redone after the walk (repath_moved).  Not when that would put a
 * directory below itself (child->dir's ancestors include it), nor once
 * the scan has followed MOVE_STEPS_MAX parent links: then false.
 */
static bool move_entry(struct scan_result *r, uint32_t first, const struct tframe *child,
                       uint64_t src_blk, enum sc_link kind)
{
    struct scan_entry *x = sc_entry(r, first);
    struct sc_aux *xa = sc_aux(r, first);
    uint32_t up = child->dir;
    for (size_t steps = 0; up != 0; steps++) {
        if (up == first || steps > r->nentries || r->tree_move_steps >= MOVE_STEPS_MAX)
            return false;
        r->tree_move_steps++;
        const struct scan_entry *u = sc_entry(r, up);
        up = u != NULL ? u->parent : 0;
    }
    x->parent = child->dir;
    xa->from = src_blk;
    xa->link = (uint8_t)kind;
    xa->depth = child->depth;
    xa->tw = (uint8_t)((xa->tw & ~SC_TW_ORDER_BAD) | SC_TW_MOVED);
    r->tree_moves++;
    return true;
}

/*
 * Was entry x last changed before directory d was created?  Then x was
 * never put into d's tree: creating an entry and renaming it both set its
 * modified time (SPEC-§8), and the driver's clock errors only ever move a
 * modified time later (SPEC-9.15).  A clock set back between the two
 * (another computer) defeats this; invalid times tell nothing.
 */
static bool predates(const struct scan_entry *x, const struct scan_entry *d)
{
    return sc_ts_ok(&x->e.modified) && sc_ts_ok(&d->e.created) &&
           lanyfs_ts_cmp(&x->e.modified, &d->e.created) < 0;
}

/*
 * Entry first, first reached in the tree of one directory, is reached again
 * in the tree of another (frame child): a rename that an unplug caught
 * between its tree writes, or one whose delete from the old tree failed
 * (SPEC-9.9).  The walk keeps the first reach unless the disk shows the
 * entry belongs in the other tree:
 *  - the entry's name broke the order where it was first reached, and fits
 *    here (the entry's own block holds the new name, and only the new tree
 *    was built around it); or
 *  - its modified time is exactly this directory's, and the first one's
 *    is older (a rename touches the entry and both directories with one
 *    time, and the first directory's write had not landed; a first
 *    directory written since is the target of a later rename whose
 *    entry write did not land, the time being an earlier rename's); or
 *  - the node that reached it first links the first directory's own block
 *    (SC_TW_LINKS_UP), and this directory holds that one: that node was
 *    renamed from here into the first directory, and its links, which its
 *    own block still holds, are this tree's; or
 *  - its modified time is older than the first directory's creation and
 *    not older than this one's (predates): a create or a rename into a
 *    directory sets the entry's time then, so the first directory is a
 *    rename's target whose write of the entry itself had not landed, and
 *    this directory still holds it as it was (SPEC-§8 Rename).
 * Moving it here must not make a directory its own ancestor.  The paths of
 * what lies below are redone after the walk (repath_moved).  Sets *moved;
 * returns false only when the scan must stop.
 */
static bool rename_target(struct scan_result *r, uint32_t first, const struct tframe *child,
                          uint64_t src_blk, enum sc_link kind, bool *moved)
{
    *moved = false;
    struct scan_entry *x = sc_entry(r, first);
    struct sc_aux *xa = sc_aux(r, first);
    if (x == NULL || xa == NULL || x->state != SCAN_ENTRY_LIVE || child->stale ||
        x->parent == 0 || x->parent == child->dir)
        return true;
    const struct scan_entry *d1 = sc_entry(r, x->parent), *d2 = sc_entry(r, child->dir);
    if (d1 == NULL || d2 == NULL || d2->state != SCAN_ENTRY_LIVE || !scan_entry_is_dir(d2))
        return true;
    uint64_t bound;
    if (!in_bounds(r, x, child, &bound))
        return true;
    bool by_name = (xa->tw & SC_TW_ORDER_BAD) != 0;
    bool by_time = lanyfs_ts_same(&x->e.modified, &d2->e.modified) &&
                   lanyfs_ts_cmp(&d1->e.modified, &x->e.modified) < 0;
    const struct scan_block *via = sc_cell(r, xa->from);
    const struct sc_aux *va =
        via != NULL && (via->cls == SCAN_BLK_DIR || via->cls == SCAN_BLK_FILE)
            ? sc_aux(r, via->owner)
            : NULL;
    bool by_links = va != NULL && (va->tw & SC_TW_LINKS_UP) && d1->parent == child->dir;
    bool by_age = predates(x, d1) && !predates(x, d2);
    if (!by_name && !by_time && !by_links && !by_age)
        return true;
    *moved = move_entry(r, first, child, src_blk, kind);
    return true;
}

/* A node below the entry a rename left in two trees, with the bounds the
 * other tree sets for it. */
struct lnode {
    uint32_t id;
    uint32_t lo, hi;
};

/*
 * The nodes below entry first by its left and right links, which the walk
 * claimed for directory d1 when it first reached first there, now that
 * first is reached again in the tree of directory child->dir, d2.  An
 * entry's links are its own block's: a rename clears them and an insert
 * never sets them, so they are the tree's whose order they keep.  They go
 * to d2 when fewer of them break d2's order below first than broke d1's
 * where the walk first met them, or as few when first moved to d2 too (its
 * block was written at the rename, so links it has now were made in d2).
 * A node last changed before a directory was created (predates) counts as
 * breaking that directory's order: it was never put into its tree.
 * A repair cut short leaves such a tree half rebuilt, so the order is
 * counted, not required.  Returns false only when the scan must stop.
 */
static bool rehome_links(struct scan_result *r, uint32_t first, uint32_t d1,
                         const struct tframe *child, bool moved)
{
    const struct scan_entry *x = sc_entry(r, first), *d2 = sc_entry(r, child->dir);
    const struct scan_entry *d1e = sc_entry(r, d1);
    if (x == NULL || d2 == NULL || d1e == NULL || x->state != SCAN_ENTRY_LIVE || child->stale ||
        (x->e.left == 0 && x->e.right == 0) || d1 == 0 || d1 == child->dir ||
        d2->state != SCAN_ENTRY_LIVE || !scan_entry_is_dir(d2))
        return true;
    /* The nodes found, in the order found; a node's place in nodes is also
     * its stack slot until it is taken up (nodes[next..n) wait). */
    struct lnode *nodes = NULL;
    size_t n = 0, cap = 0, next = 0;
    uint64_t bad1 = 0, bad2 = 0; /* nodes out of d1's order (as walked), of d2's */
    bool capped = false;
    struct lnode at = {first, child->lo, child->hi};
    for (;;) {
        const struct scan_entry *p = sc_entry(r, at.id);
        uint64_t links[2] = {p->e.left, p->e.right};
        for (int j = 0; j < 2 && !capped; j++) {
            const struct scan_block *c = links[j] ? sc_cell(r, links[j]) : NULL;
            if (c == NULL || (c->cls != SCAN_BLK_DIR && c->cls != SCAN_BLK_FILE))
                continue;
            const struct scan_entry *e = sc_entry(r, c->owner);
            const struct sc_aux *ea = sc_aux(r, c->owner);
            if (e == NULL || ea == NULL || e->parent != d1 || e->state != SCAN_ENTRY_LIVE ||
                ea->from != p->block || ea->link != (j == 0 ? SC_LINK_LEFT : SC_LINK_RIGHT))
                continue;
            if (r->tree_move_steps >= MOVE_STEPS_MAX) {
                capped = true;
                break;
            }
            r->tree_move_steps++;
            /* Greater names left: a left child is bounded below by its node. */
            struct lnode kid = {e->id, j == 0 ? at.id : at.lo, j == 0 ? at.hi : at.id};
            struct tframe bounds = {.lo = kid.lo, .hi = kid.hi};
            uint64_t bound;
            bad2 += !in_bounds(r, e, &bounds, &bound) || predates(e, d2);
            bad1 += (ea->tw & SC_TW_ORDER_BAD) != 0 || predates(e, d1e);
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                struct lnode *nv = realloc(nodes, ncap * sizeof(*nv));
                if (nv == NULL) {
                    free(nodes);
                    return sc_oom(r);
                }
                nodes = nv;
                cap = ncap;
            }
            nodes[n++] = kid;
        }
        if (capped || next == n)
            break;
        at = nodes[next++];
    }
    if (!capped && n > 0 && (bad2 < bad1 || (moved && bad2 == bad1))) {
        for (size_t i = 0; i < n; i++) {
            struct scan_entry *e = sc_entry(r, nodes[i].id);
            struct sc_aux *ea = sc_aux(r, nodes[i].id);
            e->parent = child->dir;
            ea->depth = child->depth;
            ea->tw = (uint8_t)((ea->tw & ~SC_TW_ORDER_BAD) | SC_TW_REHOMED);
        }
        r->tree_moves += (uint32_t)n;
    }
    free(nodes);
    return true;
}

/* Give a finding that named an entry by its old path the new one; an
 * order finding of a moved entry itself stays with the tree it was made in. */
static bool repath_finding(struct scan_result *r, struct scan_finding *f, char **old)
{
    if (f->entry == 0 || f->entry > r->nentries || old[f->entry] == NULL || f->path == NULL ||
        strcmp(f->path, old[f->entry]) != 0)
        return true;
    if ((f->code == SCAN_PR_TREE_ORDER || f->code == SCAN_PR_MARK_STALE_TREE) &&
        (r->aux[f->entry - 1].tw & SC_TW_MOVED))
        return true;
    char *p = strdup(r->entries[f->entry - 1].path);
    if (p == NULL)
        return sc_oom(r);
    free(f->path);
    f->path = p;
    return true;
}

/*
 * After the walk moved entries (rename_target): give each moved entry and
 * everything below it the path and depth of its new place, in one walk of
 * the parent links from the root, and name them so in the findings already
 * made and in the keys of the duplicate-name check.
 */
static bool repath_moved(struct scan_result *r, uint32_t root_id)
{
    size_t n = r->nentries;
    uint32_t *start = calloc(n + 2, sizeof(*start));
    uint32_t *kids = malloc((n + 1) * sizeof(*kids));
    uint32_t *stack = malloc((n + 1) * sizeof(*stack));
    uint8_t *dirty = calloc(n + 1, 1);
    char **old = calloc(n + 1, sizeof(*old));
    bool ok = false;
    if (start == NULL || kids == NULL || stack == NULL || dirty == NULL || old == NULL) {
        sc_oom(r);
        goto out;
    }
    /* Children by parent, in id order. */
    for (size_t i = 0; i < n; i++) {
        uint32_t p = r->entries[i].parent;
        if (p != 0 && p <= n && r->entries[i].id != root_id)
            start[p + 1]++;
    }
    for (size_t p = 1; p <= n + 1; p++)
        start[p] += start[p - 1];
    for (size_t i = 0; i < n; i++) {
        uint32_t p = r->entries[i].parent;
        if (p != 0 && p <= n && r->entries[i].id != root_id)
            kids[start[p]++] = r->entries[i].id;
    }
    for (size_t p = n + 1; p > 0; p--)
        start[p] = start[p - 1];
    start[0] = 0;
    size_t sp = 0;
    if (root_id != 0 && root_id <= n)
        stack[sp++] = root_id;
    while (sp > 0) {
        uint32_t p = stack[--sp];
        struct scan_entry *pe = sc_entry(r, p);
        struct sc_aux *pa = sc_aux(r, p);
        for (uint32_t k = start[p]; k < start[p + 1]; k++) {
            uint32_t id = kids[k];
            struct sc_aux *ka = sc_aux(r, id);
            if (!dirty[p] && !(ka->tw & (SC_TW_MOVED | SC_TW_REHOMED))) {
                stack[sp++] = id;
                continue;
            }
            dirty[id] = 1;
            old[id] = r->entries[id - 1].path;
            if (!sc_entry_set_path(r, id, pe->path))
                goto out;
            ka->depth = pa->depth + 1;
            stack[sp++] = id;
        }
    }
    for (size_t i = 0; i < r->nfindings; i++)
        if (!repath_finding(r, &r->findings[i], old) || !repath_finding(r, &r->alt[i], old))
            goto out;
    for (size_t i = 0; i < r->ndupkeys; i++) {
        const struct scan_entry *x = sc_entry(r, r->dupkeys[i].id);
        if (x != NULL)
            r->dupkeys[i].parent = x->parent;
    }
    ok = true;
out:
    free(start);
    free(kids);
    free(stack);
    free(dirty);
    free(old);
    return ok;
}

/*
 * Entry first was reached through a block the driver had freed (a frozen
 * parent's stale tree, SPEC-9.12: the leftover links of a node that left
 * the tree), and a live tree of another directory reaches it now: the
 * live tree outranks the freed node's links.  It takes the entry, and the
 * walk goes on below it in this tree, so that what else the stale walk
 * reached through it is taken back by the same rule.  A directory's own
 * tree was walked already and is not walked again.  In the same
 * directory, or for an entry that is not live, or where the move would
 * put a directory below itself, the first reach stays.  Returns false only
 * when the scan must stop.
 */
static bool take_from_stale(struct scan_result *r, struct tstack *s, uint32_t first,
                            struct tframe *child, uint64_t src_blk, enum sc_link kind)
{
    struct scan_entry *x = sc_entry(r, first);
    struct sc_aux *xa = sc_aux(r, first);
    if (x == NULL || xa == NULL || x->state != SCAN_ENTRY_LIVE || child->stale ||
        x->parent == child->dir)
        return true;
    if (!move_entry(r, first, child, src_blk, kind))
        return true;
    xa->via_stale = false;
    child->id = first;
    child->next = 1; /* its own tree, if a directory, was walked */
    if (!check_order(r, first, child))
        return false;
    return push(r, s, child);
}

/* The bytes of the block e's subtree names (not blk, its own), when nothing
 * lists, holds or reached that block yet; NULL otherwise. */
static const uint8_t *unreached_subtree(struct scan_result *r, uint64_t blk,
                                        const struct lanyfs_entry *e)
{
    if (e->subtree == 0 || e->subtree == blk || e->subtree >= r->dev_blocks)
        return NULL;
    const struct scan_block *t = sc_cell(r, e->subtree);
    if (t == NULL || t->cls != SCAN_BLK_UNKNOWN || t->owner != 0)
        return NULL;
    return sc_window(r, e->subtree);
}

/*
 * An entry at blk that a live link reaches and a free-list slot lists,
 * where the slot is more likely one flipped bit than a delete: blk has a
 * single bit set (what a bit flipped in an empty slot lists), and the
 * entry's own tree is whole and reached by nothing yet, which no delete
 * leaves.  The correct writer writes the unlink back before it frees the
 * entry, and frees a file's extenders with it; the 2012 driver zeroes a
 * deleted file's extender slots (SPEC-9.4, 9.5) and removes only an empty
 * directory.
 */
static bool flip_listed(struct scan_result *r, uint64_t blk, const struct lanyfs_entry *e)
{
    struct lanyfs_entry sub;
    if (!sc_free_one_bit(r, blk))
        return false;
    const uint8_t *p = unreached_subtree(r, blk, e);
    if (p == NULL)
        return false;
    if (lanyfs_entry_is_file(e))
        return sc_extender_maps(&r->g, r->dev_blocks, p);
    return sc_probe_entry(&r->g, r->dev_blocks, p, &sub);
}

/*
 * A file entry at blk that a live link reaches and a chain slot of block
 * listing lists, where the slot reads as one flipped bit of the block the
 * formatter listed there (listing + slot + 1) and the entry's own map no
 * delete touched: its top extender, a level-0 one, is listed nowhere and
 * reached by nothing yet, and its slots name blocks that no slot lists, at
 * least one.  A delete empties or frees the map before the entry's block
 * is listed: the 2012 driver zeroes every level-0 slot and frees each data
 * block, in direct writes, before it frees the entry (SPEC-§8, and it
 * frees no extender, 9.4), and the correct writer frees a file's data and
 * extenders with it.  So the slot is damaged (2012:602 state 2799, block
 * 73: slot 23, the formatter's 97, read 33, the entry of a live file,
 * which became a frozen parent's deleted file and lost its data).  A
 * formatter slot that reads whole is a free block handed out, freed and
 * listed again nowhere else, whatever its entry says.  A tree of more
 * levels is not judged: its upper slots stay.
 */
static bool map_kept(struct scan_result *r, uint64_t blk, const struct lanyfs_entry *e,
                     uint64_t listing)
{
    uint64_t top = e->subtree;
    const uint8_t *p = lanyfs_entry_is_file(e) ? unreached_subtree(r, blk, e) : NULL;
    if (p == NULL || !sc_extender_maps(&r->g, r->dev_blocks, p) || p[LANYFS_EXT_LEVEL] != 0)
        return false;
    for (uint32_t k = 0; k < r->g.extmax; k++) {
        uint64_t d = lanyfs_ext_slot(&r->g, p, k);
        if (d == 0)
            continue;
        const struct scan_block *c = sc_cell(r, d);
        if (d == blk || d == top || c == NULL || c->cls != SCAN_BLK_UNKNOWN || c->owner != 0)
            return false;
    }
    /* The slot: one bit away from what the formatter put there. */
    const uint8_t *ch = sc_window(r, listing);
    if (ch == NULL)
        return false;
    for (uint32_t i = 0; i < r->g.chainmax; i++) {
        uint64_t want, x;
        if (lanyfs_chain_slot(&r->g, ch, i) != blk ||
            __builtin_add_overflow(listing, (uint64_t)i + 1, &want))
            continue;
        x = want ^ blk;
        if (want < r->dev_blocks && x != 0 && (x & (x - 1)) == 0)
            return true;
    }
    return false;
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
    if (c->flags & SC_BF_ACTIVE) {
        /* A node of a directory's tree linking that directory's own block
         * has links made in the tree that holds the directory. */
        const struct scan_entry *d = sc_entry(r, f->dir);
        if (kind != SC_LINK_SUBTREE && d != NULL && d->block == L)
            sc_aux(r, f->id)->tw |= SC_TW_LINKS_UP;
        return sc_mark_tree_anomaly(r,
                                    &(struct scan_finding){.code = SCAN_PR_TREE_CYCLE,
                                                           .entry = f->id, .block = src_blk,
                                                           .block2 = L},
                                    src->path, NULL);
    }
    switch ((enum scan_class)c->cls) {
    case SCAN_BLK_DIR:
    case SCAN_BLK_FILE:
    case SCAN_BLK_DELETED: {
        uint32_t first = c->owner;
        struct sc_aux *fa = sc_aux(r, first);
        struct scan_entry *fe = sc_entry(r, first);
        if (fe == NULL || f->stale)
            return true; /* links the driver rewrote around a freed node */
        if (fa != NULL && fa->via_stale)
            return take_from_stale(r, s, first, child, src_blk, kind);
        uint32_t other = child->dir, was = fe->parent;
        bool moved;
        if (!rename_target(r, first, child, src_blk, kind, &moved) ||
            !rehome_links(r, first, was, child, moved))
            return false;
        if (moved)
            other = was; /* the tree that no longer keeps it */
        char *p2 = sc_path_join(dir_path(r, other), fe->e.name, fe->e.name_len);
        if (p2 == NULL)
            return sc_oom(r);
        bool ok = sc_mark_reached_twice(r, first, other, p2, src_blk);
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
    bool is_entry = (e.type == LANYFS_TYPE_DIR || e.type == LANYFS_TYPE_FILE) &&
                    !sc_entry_junk(&r->g, r->dev_blocks, b, &e);
    if (freed && is_entry && !child->stale &&
        (sc_free_doubted(r, L) || flip_listed(r, L, &e) || map_kept(r, L, &e, listing))) {
        /* Listed by a slot its chain block's counter rules out, one bit
         * away from an empty slot, or while its file keeps its map: the
         * link outranks it, and the block leaves the free list. */
        char *p = sc_path_join(dir_path(r, child->dir), e.name, e.name_len);
        if (p == NULL)
            return sc_oom(r);
        bool ok = sc_report(r,
                            &(struct scan_finding){.code = SCAN_PR_FREE_SLOT_IN_USE,
                                                   .entry = f->id, .block = listing, .block2 = L},
                            src->path, "%s", p);
        free(p);
        if (!ok)
            return false;
        c->cls = SCAN_BLK_UNKNOWN;
        c->owner = 0;
        c->index = 0;
        c->flags |= SCAN_BF_SHARED;
        if (r->free_listed > 0)
            r->free_listed--; /* not a free block the list counts */
        freed = false;
    }
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
    if (r->tree_moves > 0 && !repath_moved(r, root_id))
        goto out;
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
 * the name was at hand (and only the keys keep_colliding keeps): 100,000
 * entries compared or even visited through their 400-byte records cost
 * more than the walk that found them.
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
