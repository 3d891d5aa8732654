/*
 * fuzz_codec.c -- fuzz target: arbitrary bytes through every decoder, for
 * every geometry.
 *
 * For each of the 32 geometries (under libFuzzer: the one the input's last
 * byte picks) the first two blocks of the input (zero padded) are decoded
 * as a superblock, a directory or file entry, a chain block and an
 * extender, and each decoded form is encoded again over a block of
 * different bytes: the bytes the decoder covers must come back exactly.
 * The superblock is judged (lanyfs_super_check) against an image size
 * taken from the input, timestamps are formatted and converted, and the
 * geometry helpers get sizes and levels from the input; results are
 * checked against the format's arithmetic.
 */
#include <string.h>
#include <time.h>

#include "fuzz.h"
#include "lanyfs.h"

static uint8_t inv(uint8_t x)
{
    return (uint8_t)(x ^ 0xFFu);
}

static uint64_t take64(const uint8_t *data, size_t size, size_t at)
{
    uint8_t b[8] = {0};
    for (size_t i = 0; i < 8 && at + i < size; i++)
        b[i] = data[at + i];
    return lanyfs_get64(b);
}

static void timestamp(const struct lanyfs_ts *ts)
{
    char buf[64];
    lanyfs_ts_format(ts, buf, sizeof(buf));
    FUZZ_CHECK(strlen(buf) < sizeof(buf), "format overflow");
    char small[12];
    lanyfs_ts_format(ts, small, sizeof(small));
    FUZZ_CHECK(strlen(small) < sizeof(small), "format overflow");
    time_t t;
    if (lanyfs_ts_to_time(ts, &t)) {
        FUZZ_CHECK(lanyfs_ts_is_valid(ts), "to_time accepted an invalid time");
        struct lanyfs_ts back;
        lanyfs_ts_from_time(&back, t, ts->nsec, ts->offset);
        /* A leap second comes back as the next minute's :00. */
        if (ts->second < 60)
            FUZZ_CHECK(back.year == ts->year && back.month == ts->month && back.day == ts->day &&
                           back.hour == ts->hour && back.minute == ts->minute &&
                           back.second == ts->second,
                       "time round trip");
    }
    if (lanyfs_ts_is_unset(ts))
        FUZZ_CHECK(!lanyfs_ts_is_valid(ts), "unset but valid");
}

static void one_block(const struct lanyfs_geom *g, const uint8_t *blk, uint64_t image_bytes)
{
    uint8_t copy[LANYFS_BLOCKSIZE_MAX];
    uint32_t bs = g->blocksize;
    size_t i;

    /* Superblock: all 376 bytes are fields. */
    struct lanyfs_super sb;
    lanyfs_super_decode(&sb, blk);
    for (i = 0; i < bs; i++)
        copy[i] = inv(blk[i]);
    lanyfs_super_encode(&sb, copy);
    FUZZ_CHECK(memcmp(copy, blk, LANYFS_SB_USED) == 0, "superblock round trip");
    for (i = LANYFS_SB_USED; i < bs; i++)
        FUZZ_CHECK(copy[i] == inv(blk[i]), "superblock encode wrote byte %zu", i);
    struct lanyfs_sb_problem pr[LANYFS_SB_PROBLEMS_MAX];
    size_t np = lanyfs_super_check(&sb, image_bytes, pr, LANYFS_SB_PROBLEMS_MAX);
    for (i = 0; i < np && i < LANYFS_SB_PROBLEMS_MAX; i++)
        FUZZ_CHECK(pr[i].field != NULL && memchr(pr[i].msg, 0, sizeof(pr[i].msg)) != NULL,
                   "problem %zu", i);
    if (sb.magic != LANYFS_MAGIC)
        FUZZ_CHECK(np == 1 && pr[0].code == LANYFS_E_BADMAGIC, "bad magic not alone");
    char label[LANYFS_NAME_FIELD + 1];
    lanyfs_super_label(&sb, label, sizeof(label));
    FUZZ_CHECK(strlen(label) <= LANYFS_NAME_FIELD, "label");
    timestamp(&sb.created);
    timestamp(&sb.updated);
    timestamp(&sb.checked);

    /* Entry: every byte but the reserved ones. */
    struct lanyfs_entry e;
    lanyfs_entry_decode(&e, blk);
    FUZZ_CHECK(e.name_len <= LANYFS_NAME_FIELD, "name_len %zu", e.name_len);
    FUZZ_CHECK(e.name_len == strnlen((const char *)blk + LANYFS_EN_NAME, LANYFS_NAME_FIELD),
               "name_len");
    for (i = 0; i < bs; i++)
        copy[i] = inv(blk[i]);
    lanyfs_entry_encode(&e, copy);
    for (i = 0; i < bs; i++) {
        bool reserved = (i >= 4 && i < 8) || (i >= 40 && i < 56) || (i >= 88 && i < 102) ||
                        i >= LANYFS_EN_USED;
        FUZZ_CHECK(copy[i] == (reserved ? inv(blk[i]) : blk[i]), "entry byte %zu", i);
    }
    FUZZ_CHECK(lanyfs_name_cmp(e.name, e.name, e.name_len) == 0, "name unequal to itself");
    if (lanyfs_entry_name_ok(&e))
        FUZZ_CHECK(e.name_len > 0 && e.name_len <= LANYFS_NAME_MAX &&
                       memchr(e.name, '/', e.name_len) == NULL,
                   "name_ok");
    timestamp(&e.created);
    timestamp(&e.modified);

    /* Chain and extender: header fields and every slot. */
    struct lanyfs_chain_hdr ch;
    lanyfs_chain_decode(&ch, blk);
    memset(copy, 0, bs);
    lanyfs_chain_encode(&ch, copy);
    for (uint32_t s = 0; s < g->chainmax; s++) {
        uint64_t v = lanyfs_chain_slot(g, blk, s);
        FUZZ_CHECK(v <= lanyfs_addr_max(g->addrlen), "chain slot wider than addrlen");
        lanyfs_chain_set_slot(g, copy, s, v);
    }
    size_t end = LANYFS_CH_SLOTS + (size_t)g->chainmax * g->addrlen;
    FUZZ_CHECK(copy[0] == blk[0] && memcmp(copy + 2, blk + 2, 2) == 0 &&
                   memcmp(copy + 8, blk + 8, end - 8) == 0,
               "chain round trip");
    FUZZ_CHECK(lanyfs_chain_slot(g, blk, g->chainmax) == 0, "chain slot past the end");

    struct lanyfs_ext_hdr eh;
    lanyfs_ext_decode(&eh, blk);
    memset(copy, 0, bs);
    lanyfs_ext_encode(&eh, copy);
    for (uint32_t s = 0; s < g->extmax; s++)
        lanyfs_ext_set_slot(g, copy, s, lanyfs_ext_slot(g, blk, s));
    end = LANYFS_EXT_SLOTS + (size_t)g->extmax * g->addrlen;
    FUZZ_CHECK(copy[0] == blk[0] && memcmp(copy + 2, blk + 2, end - 2) == 0,
               "extender round trip");
    FUZZ_CHECK(lanyfs_ext_slot(g, blk, g->extmax) == 0, "extender slot past the end");
}

static void geometry(const struct lanyfs_geom *g, uint64_t a, uint64_t b)
{
    uint64_t n = lanyfs_geom_blocks_for_size(g, a);
    unsigned __int128 want = ((unsigned __int128)a + g->blocksize - 1) / g->blocksize;
    FUZZ_CHECK(n == (uint64_t)want, "blocks_for_size");
    unsigned level = lanyfs_geom_level_for(g, b);
    FUZZ_CHECK(lanyfs_geom_tree_capacity(g, level) >= b, "level_for too low");
    if (level > 0)
        FUZZ_CHECK(lanyfs_geom_tree_capacity(g, level - 1) < b, "level_for too high");
    unsigned l = (unsigned)(a % 80);
    unsigned __int128 p = 1;
    for (unsigned i = 0; i <= l && p <= UINT64_MAX; i++)
        p *= g->extmax;
    uint64_t cap = lanyfs_geom_tree_capacity(g, l);
    FUZZ_CHECK(cap == (p > UINT64_MAX ? UINT64_MAX : (uint64_t)p), "tree_capacity");
}

/* Decode the first two blocks of data (after a selector byte) with one geometry. */
static void one_geometry(const uint8_t *data, size_t size, unsigned bits, unsigned al)
{
    static uint8_t blk[LANYFS_BLOCKSIZE_MAX];
    uint64_t image_bytes = take64(data, size, 0) >> (size > 0 ? data[0] & 31 : 0);
    struct lanyfs_geom g;
    if (lanyfs_geom_init(&g, bits, al, take64(data, size, 24), NULL) != LANYFS_OK)
        fuzz_fail("geometry %u/%u refused", bits, al);
    for (size_t off = 0; off < 2 * (size_t)g.blocksize; off += g.blocksize) {
        if (off >= size && off > 0)
            break;
        memset(blk, 0, g.blocksize);
        if (off < size)
            memcpy(blk, data + off, size - off < g.blocksize ? size - off : g.blocksize);
        one_block(&g, blk, image_bytes);
    }
    geometry(&g, take64(data, size, 8), take64(data, size, 16));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef LANYFS_LIBFUZZER
    /* Under libFuzzer the last byte picks the geometry: 32 times faster per input. */
    if (size == 0)
        return 0;
    unsigned sel = data[size - 1] % 32;
    one_geometry(data, size - 1, LANYFS_BLOCKBITS_MIN + sel / 8, LANYFS_ADDRLEN_MIN + sel % 8);
#else
    /* The standalone driver runs every input through every geometry. */
    for (unsigned bits = LANYFS_BLOCKBITS_MIN; bits <= LANYFS_BLOCKBITS_MAX; bits++)
        for (unsigned al = LANYFS_ADDRLEN_MIN; al <= LANYFS_ADDRLEN_MAX; al++)
            one_geometry(data, size, bits, al);
#endif
    return 0;
}
