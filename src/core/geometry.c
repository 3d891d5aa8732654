/*
 * geometry.c -- sizes that follow from block size and address length.
 *
 * SPEC-§6: a chain block holds (blocksize - 16) / addrlen slots; SPEC-§7: an
 * extender holds (blocksize - 5) / addrlen ("extmax"), and a level-L tree
 * maps extmax^(L+1) file blocks.  All products saturate instead of wrapping.
 */
#include <string.h>

#include "lanyfs.h"

enum lanyfs_err lanyfs_geom_init(struct lanyfs_geom *g, unsigned blockbits, unsigned addrlen,
                                 uint64_t blocks, struct lanyfs_error *err)
{
    if (blockbits < LANYFS_BLOCKBITS_MIN || blockbits > LANYFS_BLOCKBITS_MAX)
        return lanyfs_fail(err, LANYFS_E_GEOMETRY, 0,
                           "block size exponent %u is outside 9..12 (512..4096 bytes)", blockbits);
    if (addrlen < LANYFS_ADDRLEN_MIN || addrlen > LANYFS_ADDRLEN_MAX)
        return lanyfs_fail(err, LANYFS_E_GEOMETRY, 0,
                           "address length %u bytes is outside 1..8", addrlen);
    g->blockbits = blockbits;
    g->blocksize = 1u << blockbits;
    g->addrlen = addrlen;
    g->chainmax = (g->blocksize - LANYFS_CH_SLOTS) / addrlen;
    g->extmax = (g->blocksize - LANYFS_EXT_SLOTS) / addrlen;
    g->blocks = blocks;
    return LANYFS_OK;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return UINT64_MAX;
    return r;
}

uint64_t lanyfs_geom_pow(const struct lanyfs_geom *g, unsigned level)
{
    uint64_t r = 1;
    for (unsigned i = 0; i < level && r != UINT64_MAX; i++)
        r = mul_sat(r, g->extmax);
    return r;
}

uint64_t lanyfs_geom_tree_capacity(const struct lanyfs_geom *g, unsigned level)
{
    return mul_sat(lanyfs_geom_pow(g, level), g->extmax);
}

unsigned lanyfs_geom_level_for(const struct lanyfs_geom *g, uint64_t nblocks)
{
    unsigned level = 0;
    while (lanyfs_geom_tree_capacity(g, level) < nblocks && level < 64)
        level++;
    return level;
}

uint64_t lanyfs_geom_blocks_for_size(const struct lanyfs_geom *g, uint64_t size)
{
    return (size >> g->blockbits) + ((size & (g->blocksize - 1)) != 0);
}

/* A decimal number of at most 19 digits, nothing else. */
static bool parse_decimal(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 19)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* "BS:AL", or "BS" alone when bs_alone (*addrlen 0). */
static bool geom_parse(const char *s, bool bs_alone, unsigned *blockbits, unsigned *addrlen)
{
    const char *colon = s != NULL ? strchr(s, ':') : NULL;
    uint64_t bs, al = 0;
    if (s == NULL || (colon == NULL && !bs_alone))
        return false;
    if (colon == NULL ? !parse_decimal(s, strlen(s), &bs)
                      : !parse_decimal(s, (size_t)(colon - s), &bs) ||
                            !parse_decimal(colon + 1, strlen(colon + 1), &al))
        return false;
    if (colon != NULL && (al < LANYFS_ADDRLEN_MIN || al > LANYFS_ADDRLEN_MAX))
        return false;
    for (unsigned b = LANYFS_BLOCKBITS_MIN; b <= LANYFS_BLOCKBITS_MAX; b++) {
        if (bs == (1u << b)) {
            *blockbits = b;
            *addrlen = (unsigned)al;
            return true;
        }
    }
    return false;
}

bool lanyfs_geom_parse(const char *s, unsigned *blockbits, unsigned *addrlen)
{
    return geom_parse(s, false, blockbits, addrlen);
}

bool lanyfs_geom_parse_bs(const char *s, unsigned *blockbits, unsigned *addrlen)
{
    return geom_parse(s, true, blockbits, addrlen);
}
