/*
 * probe.c -- what a block's bytes look like, judged without context.
 *
 * The sweep, the geometry inference and the marks need to tell, from the
 * bytes alone, an entry block from a chain block from an extender from
 * anything else.  Each probe is strict where a writer of the format is
 * strict, so that data that merely starts with a type byte is not taken
 * for metadata:
 *  - an entry (SPEC-§5) has its type, a name of 1..255 bytes, reserved
 *    bytes 4..7 zero, timestamps unset or in range, links below the device
 *    end, attributes among the four defined bits, and zeros after the 360
 *    bytes it uses (writers clear a block when they create an entry);
 *  - a chain block (SPEC-§6) has type 0x70 or 0x80, reserved bytes 4..7
 *    zero, and next and every slot below the device end; an all-zero 0x80
 *    block reads as an empty extender instead;
 *  - an extender (SPEC-§7) has type 0x80, a level no device needs more
 *    than SC_LEVEL_MAX, and every slot below the device end.
 */
#include <string.h>

#include "scan_priv.h"
#include "slots.h"

bool sc_zero_from(const uint8_t *b, size_t off, size_t len)
{
    size_t i = off;
    for (; i + 32 <= len; i += 32) {
        uint64_t w[4];
        memcpy(w, b + i, sizeof(w));
        if ((w[0] | w[1] | w[2] | w[3]) != 0)
            return false;
    }
    for (; i < len; i++)
        if (b[i] != 0)
            return false;
    return true;
}

bool sc_ts_ok(const struct lanyfs_ts *ts)
{
    return lanyfs_ts_is_unset(ts) || lanyfs_ts_is_valid(ts);
}

bool sc_ts_seconds(const struct lanyfs_ts *ts, time_t *t)
{
    return !lanyfs_ts_is_unset(ts) && lanyfs_ts_is_valid(ts) && lanyfs_ts_to_time(ts, t);
}

/* The checks of an entry but its links and the bytes past its end: its
 * type, a name of 1..255 bytes, reserved bytes 4..7 zero, acceptable
 * times, known attributes. */
static bool entry_fields_ok(const struct lanyfs_entry *e, const uint8_t *b)
{
    return (e->type == LANYFS_TYPE_DIR || e->type == LANYFS_TYPE_FILE) && e->name_len != 0 &&
           e->name_len <= LANYFS_NAME_MAX && sc_zero_from(b, LANYFS_EN_RES4, LANYFS_EN_LEFT) &&
           sc_ts_ok(&e->created) && sc_ts_ok(&e->modified) && !(e->attr & ~(uint16_t)0x000f);
}

bool sc_probe_entry(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b,
                    struct lanyfs_entry *e)
{
    lanyfs_entry_decode(e, b);
    return entry_fields_ok(e, b) && e->left < dev_blocks && e->right < dev_blocks &&
           e->subtree < dev_blocks && sc_zero_from(b, LANYFS_EN_USED, g->blocksize);
}

/* v with its highest set bit cleared (v not 0). */
static uint64_t top_bit_cleared(uint64_t v)
{
    return v & ~((uint64_t)1 << (63 - __builtin_clzll(v)));
}

uint64_t sc_link_unflipped(uint64_t v, uint64_t dev_blocks)
{
    if (v == 0)
        return 0;
    v = top_bit_cleared(v);
    return v < dev_blocks ? v : 0;
}

bool sc_probe_entry_tolerant(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b,
                             struct lanyfs_entry *e, uint64_t *wild_link)
{
    *wild_link = 0;
    if (sc_probe_entry(g, dev_blocks, b, e))
        return true;
    if (!entry_fields_ok(e, b))
        return false;
    uint64_t *link[3] = {&e->left, &e->right, &e->subtree};
    unsigned wild = 0;
    for (uint32_t i = LANYFS_EN_USED; i < g->blocksize && wild < 2; i++)
        if (b[i] != 0)
            wild += sc_one_bit(b[i]) ? 1 : 2;
    for (unsigned i = 0; i < 3; i++)
        wild += *link[i] >= dev_blocks;
    if (wild != 1)
        return false;
    for (unsigned i = 0; i < 3; i++) {
        if (*link[i] < dev_blocks)
            continue;
        *wild_link = *link[i];
        *link[i] = sc_link_unflipped(*link[i], dev_blocks);
    }
    return true;
}

/* The checks of sc_probe_entry past the type byte that a block whose type
 * byte says entry may fail and still be one: a flipped bit or a torn
 * write spoils one or two; data or junk that a damaged link names, most. */
#define ENTRY_JUNK_FAILS 3

bool sc_entry_junk(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b,
                   const struct lanyfs_entry *e)
{
    unsigned fails = 0;
    fails += e->name_len == 0 || e->name_len > LANYFS_NAME_MAX;
    fails += !sc_zero_from(b, LANYFS_EN_RES4, LANYFS_EN_LEFT);
    fails += !sc_ts_ok(&e->created) || !sc_ts_ok(&e->modified);
    fails += e->left >= dev_blocks || e->right >= dev_blocks || e->subtree >= dev_blocks;
    fails += (e->attr & ~(uint16_t)0x000f) != 0;
    /* The bytes past the entry last, and only when they decide: a whole
     * entry's tail is read once more by the torn-write check, not here. */
    if (fails + 1 == ENTRY_JUNK_FAILS)
        fails += !sc_zero_from(b, LANYFS_EN_USED, g->blocksize);
    return fails >= ENTRY_JUNK_FAILS;
}

bool sc_probe_chain(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b)
{
    struct lanyfs_chain_hdr h;
    lanyfs_chain_decode(&h, b);
    if (h.type != LANYFS_TYPE_CHAIN && h.type != LANYFS_TYPE_EXT)
        return false;
    if (!sc_zero_from(b, LANYFS_CH_RES4, LANYFS_CH_NEXT))
        return false;
    if (h.next >= dev_blocks)
        return false;
    const uint8_t *p = b + LANYFS_CH_SLOTS;
    uint32_t end = dev_blocks == 0 ? g->chainmax : sc_slots_end(p, g->addrlen, g->chainmax);
    if (end > 0 && (dev_blocks == 0 || sc_slots_max(p, g->addrlen, 0, end) >= dev_blocks))
        return false;
    return h.type == LANYFS_TYPE_CHAIN || h.next != 0 || end > 0;
}

bool sc_probe_extender(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b)
{
    struct lanyfs_ext_hdr h;
    lanyfs_ext_decode(&h, b);
    if (h.type != LANYFS_TYPE_EXT || h.level > SC_LEVEL_MAX)
        return false;
    const uint8_t *p = b + LANYFS_EXT_SLOTS;
    uint32_t end = dev_blocks == 0 ? g->extmax : sc_slots_end(p, g->addrlen, g->extmax);
    return end == 0 || (dev_blocks != 0 && sc_slots_max(p, g->addrlen, 0, end) < dev_blocks);
}

bool sc_extender_empty(const struct lanyfs_geom *g, const uint8_t *b)
{
    return sc_slots_end(b + LANYFS_EXT_SLOTS, g->addrlen, g->extmax) == 0;
}

bool sc_probe_extender_tolerant(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b)
{
    if (sc_probe_extender(g, dev_blocks, b))
        return true;
    if (b[0] != LANYFS_TYPE_EXT || b[LANYFS_EXT_LEVEL] > SC_LEVEL_MAX || dev_blocks == 0)
        return false;
    unsigned wild = 0;
    for (uint32_t k = 0; k < g->extmax; k++) {
        uint64_t s = lanyfs_ext_slot(g, b, k);
        if (s >= dev_blocks && (++wild > 1 || top_bit_cleared(s) >= dev_blocks))
            return false;
    }
    return wild == 1;
}

bool sc_extender_maps(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b)
{
    return sc_probe_extender(g, dev_blocks, b) && !sc_extender_empty(g, b);
}

bool sc_chain_formatter_like(const struct lanyfs_geom *g, uint64_t blk, const uint8_t *b,
                             uint32_t *matches)
{
    uint32_t filled = 0, match = 0;
    for (uint32_t i = 0; i < g->chainmax; i++) {
        uint64_t s = lanyfs_chain_slot(g, b, i);
        if (s == 0)
            continue;
        filled++;
        uint64_t want;
        if (!__builtin_add_overflow(blk, (uint64_t)i + 1, &want) && s == want)
            match++;
    }
    if (matches != NULL)
        *matches = match;
    return filled > 0 && match == filled;
}

bool scan_foreign_metadata(const uint8_t *b, uint32_t bs, size_t len, uint64_t image_bytes)
{
    uint64_t n = image_bytes >> LANYFS_BLOCKBITS_MIN; /* blocks of the smallest size */
    struct lanyfs_geom g[LANYFS_ADDRLEN_MAX + 1];
    for (unsigned a = LANYFS_ADDRLEN_MIN; a <= LANYFS_ADDRLEN_MAX; a++)
        if (lanyfs_geom_init(&g[a], LANYFS_BLOCKBITS_MIN, a, n, NULL) != LANYFS_OK)
            return false;
    struct lanyfs_entry e;
    for (uint32_t o = 0; o < len && o + (1u << LANYFS_BLOCKBITS_MIN) <= bs;
         o += 1u << LANYFS_BLOCKBITS_MIN) {
        const uint8_t *p = b + o;
        if ((p[0] == LANYFS_TYPE_DIR || p[0] == LANYFS_TYPE_FILE) &&
            sc_probe_entry(&g[LANYFS_ADDRLEN_MAX], n, p, &e))
            return true;
        if ((p[0] != LANYFS_TYPE_CHAIN && p[0] != LANYFS_TYPE_EXT) ||
            !sc_zero_from(p, LANYFS_CH_RES4, LANYFS_CH_NEXT))
            continue;
        for (unsigned a = LANYFS_ADDRLEN_MIN; a <= LANYFS_ADDRLEN_MAX; a++)
            if (sc_probe_chain(&g[a], n, p) || sc_probe_extender(&g[a], n, p))
                return true;
    }
    return false;
}
