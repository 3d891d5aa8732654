/*
 * counters.c -- pass 5 of the scan: write counters and torn writes (SPEC-§10).
 *
 * A block's counter and contents must tell one story, but only as bounds,
 * and these checks are written so that no clean image trips them:
 *  - TORN_CHAIN_COUNTER: a chain block's counter is lower than every
 *    origin it may have allows.  Freshly made from a freed block it started
 *    empty at 0, so each filled slot needs a push (count <= counter).  Made
 *    by a formatter it started full (the formatter's pattern: slot i lists
 *    block + 1 + i), so each slot that differs from the pattern needs a pop
 *    or push.  Slots that still rise the formatter's way with only popped
 *    holes need one write a hole.  Only a counter below all three bounds is
 *    reported (a counter that wrapped past 65535 cannot be told apart, and
 *    is the one way a clean block could trip it: 65536 writes to one chain
 *    block, which the bounds accept as torn).
 *  - TORN_SECTORS (blocks larger than a sector only): a block the walks
 *    claimed whose first sector and later sectors disagree in kind: an
 *    entry header over non-zero later sectors (writers clear an entry
 *    block when they create it), a chain or extender header whose later
 *    sectors hold slots beyond the device while the first sector's are in
 *    range, a full formatter chain header (every first-sector slot in the
 *    formatter's pattern, a next block) over cleared later sectors.
 *  - ENTRY_NEVER_WRITTEN: a live entry with counter 0: created, its first
 *    writeback never landed (the root is exempt: the formatter writes it).
 *  - SB_STALE_FREEHEAD: 'freehead' names a block that is no chain block
 *    and that a live entry or file now holds: the allocation that handed it
 *    out landed, the superblock rewrite after it did not.  A head that is
 *    no chain block and that nobody holds is FREE_CHAIN_TYPE instead.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "scan_priv.h"
#include "slots.h"

/* What a chain block's slots say of the writes since each origin. */
struct chain_bounds {
    uint32_t filled;  /* filled slots: pushes since made empty from a freed block */
    uint32_t holes;   /* empty slots before filled ones: pops, when they rise the formatter's way */
    uint32_t differ;  /* slots off the formatter's pattern: pops and pushes since it */
    bool rising;      /* the filled slots rise */
};

/* The slots a formatter would have filled in the chain block at blk. */
static uint32_t formatter_fill(const struct scan_result *r, uint64_t blk, const uint8_t *b)
{
    const struct lanyfs_geom *g = &r->g;
    uint32_t fill = (b[0] == LANYFS_TYPE_EXT || lanyfs_chain_slot(g, b, g->chainmax - 1) != 0)
                        ? g->chainmax
                        : g->chainmax - 1;
    if (blk + 1 >= r->dev_blocks)
        fill = 0;
    else if (r->dev_blocks - blk - 1 < fill)
        fill = (uint32_t)(r->dev_blocks - blk - 1);
    return fill;
}

static void chain_bounds(const struct scan_result *r, uint64_t blk, const uint8_t *b,
                         struct chain_bounds *cb)
{
    const struct lanyfs_geom *g = &r->g;
    uint32_t pending = 0;
    uint64_t prev = 0;
    *cb = (struct chain_bounds){.rising = true};
    uint32_t fill = formatter_fill(r, blk, b);
    for (uint32_t i = 0; i < g->chainmax; i++) {
        uint64_t s = lanyfs_chain_slot(g, b, i);
        bool formatter_value = i < fill && s == blk + 1 + i;
        if (i < fill ? !formatter_value : s != 0)
            cb->differ++;
        if (s == 0) {
            pending++;
            continue;
        }
        cb->filled++;
        cb->holes += pending;
        pending = 0;
        if (prev != 0 && s <= prev)
            cb->rising = false;
        prev = s;
    }
}

/* Can the formatter's full block have come to these slots in w writes? */
static bool formatter_origin_ok(const struct chain_bounds *cb, uint16_t w)
{
    return (cb->rising && cb->holes <= w) || cb->differ <= w;
}

bool sc_chain_counter_formatter(const struct scan_result *r, uint64_t blk, const uint8_t *b)
{
    struct chain_bounds cb;
    chain_bounds(r, blk, b, &cb);
    return formatter_origin_ok(&cb, lanyfs_get16(b + LANYFS_HDR_WRCNT));
}

bool sc_counter_chain(struct scan_result *r, uint64_t blk, const uint8_t *b)
{
    uint16_t w = lanyfs_get16(b + LANYFS_HDR_WRCNT);
    struct chain_bounds cb;
    chain_bounds(r, blk, b, &cb);
    if (cb.filled <= w || formatter_origin_ok(&cb, w))
        return true;
    uint32_t least = cb.filled < cb.differ ? cb.filled : cb.differ;
    if (cb.rising && cb.holes < least)
        least = cb.holes;
    r->map[blk].flags |= SCAN_BF_TORN;
    return sc_report(r,
                     &(struct scan_finding){.code = SCAN_PR_TORN_CHAIN_COUNTER, .block = blk,
                                            .value = w, .count = least},
                     NULL, NULL);
}

/*
 * The least writes that slots 0..k of a chain block need, the filled slots
 * above k left out, over both origins.  A push takes the first empty slot
 * (SPEC-8), so slot k, filled by a push, had every slot below it filled
 * then:
 *  - made empty at 0: a push for each slot up to k, and a pop too for
 *    each of them empty now;
 *  - made full at 1 by a formatter (slot i listing blk + 1 + i below
 *    fill): below fill, a slot off that pattern needed a pop, and a push
 *    too when it is filled; from fill on, as made empty.
 */
static uint64_t chain_need(const struct scan_result *r, uint64_t blk, const uint8_t *b,
                           uint32_t k, uint32_t fill)
{
    const struct lanyfs_geom *g = &r->g;
    uint64_t fresh = 0, form = 1;
    for (uint32_t i = 0; i <= k; i++) {
        uint64_t s = lanyfs_chain_slot(g, b, i);
        fresh += s != 0 ? 1 : 2;
        if (i < fill)
            form += s == blk + 1 + i ? 0 : s == 0 ? 1 : 2;
        else
            form += s != 0 ? 1 : 2;
    }
    return fresh < form ? fresh : form;
}

uint32_t sc_chain_doubted_slot(const struct scan_result *r, uint64_t blk, const uint8_t *b)
{
    const struct lanyfs_geom *g = &r->g;
    uint16_t w = lanyfs_get16(b + LANYFS_HDR_WRCNT);
    struct chain_bounds cb;
    chain_bounds(r, blk, b, &cb);
    /* Slots that rise from the start with few holes are also what a
     * checker writes when it rebuilds the list (at any counter). */
    if (cb.rising && cb.holes <= w)
        return UINT32_MAX;
    uint32_t fill = formatter_fill(r, blk, b);
    uint32_t top = UINT32_MAX, below = UINT32_MAX;
    /* Pushes never fill the last slot: only the top one below it is weighed. */
    for (uint32_t i = g->chainmax > 0 ? g->chainmax - 1 : 0; i-- > 0;) {
        if (lanyfs_chain_slot(g, b, i) == 0)
            continue;
        if (top != UINT32_MAX) {
            below = i;
            break;
        }
        top = i;
    }
    if (top == UINT32_MAX || (top < fill && lanyfs_chain_slot(g, b, top) == blk + 1 + top) ||
        chain_need(r, blk, b, top, fill) <= w)
        return UINT32_MAX;
    /* Only a slot without which the rest fit the counter. */
    if (below != UINT32_MAX && chain_need(r, blk, b, below, fill) > w)
        return UINT32_MAX;
    return top;
}

/* Slots of a slot array at off whose bytes start in a later sector: any beyond dev? */
static bool later_slots_wild(const struct scan_result *r, const uint8_t *b, size_t off,
                             uint32_t count, bool *first_ok)
{
    unsigned a = r->g.addrlen;
    const uint8_t *p = b + off;
    /* Slots wholly in the first sector, and the first slot wholly past it. */
    uint32_t in_first = off < LANYFS_SECTOR_SIZE ? (uint32_t)((LANYFS_SECTOR_SIZE - off) / a) : 0;
    uint32_t later = off < LANYFS_SECTOR_SIZE
                         ? (uint32_t)((LANYFS_SECTOR_SIZE - off + a - 1) / a)
                         : 0;
    if (in_first > count)
        in_first = count;
    /* Zero slots are below any device end; only the non-zero part is decoded. */
    uint32_t end = r->dev_blocks == 0 ? count : sc_slots_end(p, a, count);
    if (in_first > end)
        in_first = end;
    *first_ok = r->dev_blocks != 0 ? sc_slots_max(p, a, 0, in_first) < r->dev_blocks
                                   : in_first == 0;
    return later < end && (r->dev_blocks == 0 || sc_slots_max(p, a, later, end) >= r->dev_blocks);
}

/* The stories a torn block tells (sc_torn_note.what), 0 = none. */
static const char *const torn_what[] = {
    NULL,
    "an entry header over bytes of another block",
    "an extender header over bytes of another block",
    "a chain header over bytes of another block",
    "a full formatter chain header over a cleared tail",
};

/* The first sector of blk that disagrees with its header, judged as class
 * cls; 0 when they agree.  *what receives the story (torn_what). */
static uint32_t torn_verdict(const struct scan_result *r, enum scan_class cls, uint64_t blk,
                             const uint8_t *b, uint8_t *what)
{
    const struct lanyfs_geom *g = &r->g;
    bool first_ok;
    *what = 0;
    if (g->blocksize <= LANYFS_SECTOR_SIZE)
        return 0;
    switch (cls) {
    case SCAN_BLK_DIR:
    case SCAN_BLK_FILE:
        if (sc_zero_from(b, LANYFS_SECTOR_SIZE, g->blocksize))
            return 0;
        for (size_t i = LANYFS_SECTOR_SIZE; i < g->blocksize; i++)
            if (b[i] != 0) {
                *what = 1;
                return (uint32_t)(i / LANYFS_SECTOR_SIZE);
            }
        return 0;
    case SCAN_BLK_EXTENDER:
        if (later_slots_wild(r, b, LANYFS_EXT_SLOTS, g->extmax, &first_ok) && first_ok) {
            *what = 2;
            return 1;
        }
        return 0;
    case SCAN_BLK_CHAIN: {
        if (later_slots_wild(r, b, LANYFS_CH_SLOTS, g->chainmax, &first_ok) && first_ok) {
            *what = 3;
            return 1;
        }
        uint32_t in_first = (LANYFS_SECTOR_SIZE - LANYFS_CH_SLOTS) / g->addrlen;
        if (in_first == 0 || in_first >= g->chainmax ||
            lanyfs_get64(b + LANYFS_CH_NEXT) == 0)
            return 0;
        const uint8_t *p = b + LANYFS_CH_SLOTS;
        for (uint32_t i = 0; i < in_first; i++)
            if (sc_slot(p, g->addrlen, i) != blk + 1 + i)
                return 0;
        if (sc_slots_end(p, g->addrlen, g->chainmax) > in_first)
            return 0;
        *what = 4;
        return 1;
    }
    default:
        return 0;
    }
}

static bool torn(struct scan_result *r, uint64_t blk, uint64_t sector, uint8_t what)
{
    r->map[blk].flags |= SCAN_BF_TORN;
    return sc_report(r,
                     &(struct scan_finding){.code = SCAN_PR_TORN_SECTORS, .block = blk,
                                            .count = sector},
                     NULL, "%s", torn_what[what]);
}

void sc_counter_torn_early(struct scan_result *r, uint64_t blk, const uint8_t *b)
{
    struct scan_block *c = sc_cell(r, blk);
    if (c == NULL || (c->flags & SC_BF_CHECKED) || r->torn_sorted)
        return;
    uint8_t what;
    uint32_t sector = torn_verdict(r, (enum scan_class)c->cls, blk, b, &what);
    if (sector != 0) {
        if (r->ntorn == r->torn_cap) {
            size_t ncap = r->torn_cap ? r->torn_cap * 2 : 16;
            struct sc_torn_note *n = realloc(r->torn, ncap * sizeof(*n));
            if (n == NULL)
                return; /* unchecked: the sweep reads and judges it */
            r->torn = n;
            r->torn_cap = ncap;
        }
        r->torn[r->ntorn++] = (struct sc_torn_note){blk, sector, c->cls, what};
    }
    c->flags |= SC_BF_CHECKED;
}

static int by_block(const void *a, const void *b)
{
    const struct sc_torn_note *x = a, *y = b;
    if (x->blk != y->blk)
        return x->blk < y->blk ? -1 : 1;
    return x->cls < y->cls ? -1 : x->cls > y->cls;
}

bool sc_counter_torn_needs(const struct scan_result *r, const struct scan_block *c)
{
    switch ((enum scan_class)c->cls) {
    case SCAN_BLK_DIR:
    case SCAN_BLK_FILE:
    case SCAN_BLK_EXTENDER:
    case SCAN_BLK_CHAIN:
        return r->g.blocksize > LANYFS_SECTOR_SIZE && !(c->flags & SC_BF_CHECKED);
    default:
        return false;
    }
}

bool sc_counter_torn(struct scan_result *r, uint64_t blk, const uint8_t *b)
{
    struct scan_block *c = &r->map[blk];
    if (c->flags & SC_BF_CHECKED) {
        /* Sorted when the sweep first asks; the sweep asks in block order. */
        if (!r->torn_sorted && r->ntorn > 1)
            qsort(r->torn, r->ntorn, sizeof(*r->torn), by_block);
        r->torn_sorted = true;
        while (r->torn_next < r->ntorn && r->torn[r->torn_next].blk < blk)
            r->torn_next++;
        for (size_t i = r->torn_next; i < r->ntorn && r->torn[i].blk == blk; i++)
            if (r->torn[i].cls == c->cls)
                return torn(r, blk, r->torn[i].sector, r->torn[i].what);
        return true;
    }
    if (b == NULL)
        return true;
    uint8_t what;
    uint32_t sector = torn_verdict(r, (enum scan_class)c->cls, blk, b, &what);
    return sector == 0 || torn(r, blk, sector, what);
}

void sc_torn_free(struct scan_result *r)
{
    free(r->torn);
    r->torn = NULL;
    r->ntorn = r->torn_cap = r->torn_next = 0;
    r->torn_sorted = false;
}

static int cmp_unwritten(const void *a, const void *b)
{
    uint64_t x = ((const struct sc_unwritten_ptr *)a)->blk;
    uint64_t y = ((const struct sc_unwritten_ptr *)b)->blk;
    return (x > y) - (x < y);
}

bool sc_counters_pass(struct scan_result *r)
{
    if (r->nunwritten > 0)
        qsort(r->unwritten, r->nunwritten, sizeof(r->unwritten[0]), cmp_unwritten);
    for (size_t i = 0; i < r->nentries && r->nunwritten > 0; i++) {
        struct scan_entry *x = &r->entries[i];
        const struct sc_unwritten_ptr key = {.blk = x->block}, *u =
            bsearch(&key, r->unwritten, r->nunwritten, sizeof(key), cmp_unwritten);
        if (u != NULL && x->state == SCAN_ENTRY_DELETED) {
            /* A free block: nothing to repair, and the analysis is done. */
            x->e.subtree = u->was;
            continue;
        }
        if (u != NULL &&
            !sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_FILE_DATA_UNWRITTEN, .entry = x->id,
                                              .block = x->block, .block2 = u->was},
                       x->path, NULL))
            return false;
    }
    for (size_t i = 0; i < r->nentries; i++) {
        const struct scan_entry *x = &r->entries[i];
        if (x->state != SCAN_ENTRY_LIVE || x->e.wrcnt != 0 || x->block == r->rootdir)
            continue;
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_ENTRY_NEVER_WRITTEN, .entry = x->id,
                                              .block = x->block},
                       x->path, NULL))
            return false;
    }
    if (r->head_rejected) {
        uint64_t h = r->freehead;
        struct scan_block *c = sc_cell(r, h);
        bool held = c != NULL && (c->cls == SCAN_BLK_DIR || c->cls == SCAN_BLK_FILE ||
                                  c->cls == SCAN_BLK_EXTENDER || c->cls == SCAN_BLK_DATA);
        if (held)
            return sc_report(r,
                             &(struct scan_finding){.code = SCAN_PR_SB_STALE_FREEHEAD,
                                                    .block = h},
                             NULL, NULL);
        uint8_t *b = malloc(r->g.blocksize);
        if (b == NULL)
            return sc_oom(r);
        uint8_t type = sc_read(r, h, b, NULL) == LANYFS_OK ? b[0] : 0;
        free(b);
        return sc_report(r,
                         &(struct scan_finding){.code = SCAN_PR_FREE_CHAIN_TYPE, .block = h,
                                                .value = type},
                         NULL, NULL);
    }
    return true;
}
