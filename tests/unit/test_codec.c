/*
 * test_codec.c -- the on-disk codec: every field of every block kind.
 *
 * For each of the 32 geometries (block sizes 512..4096, address lengths
 * 1..8): random values are encoded, checked byte by byte against the
 * offsets of the format reference (read here with an independent
 * little-endian reader), decoded and compared field by field; random blocks
 * are decoded and re-encoded over a different block, which must reproduce
 * exactly the bytes the decoded fields cover and leave all others alone.
 * Slot streams are checked at the address-length boundary, and the derived
 * sizes (chainmax, extmax, tree capacity, blocks for a size) against naive
 * arithmetic in 128 bits.
 */
#include <string.h>

#include "unit.h"

#define ITER 200

/* Little-endian value of n bytes, independent of the core's readers. */
static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

static void rand_ts(struct u_rng *r, struct lanyfs_ts *ts)
{
    ts->year = (uint16_t)u_rand(r);
    ts->month = (uint8_t)u_rand(r);
    ts->day = (uint8_t)u_rand(r);
    ts->hour = (uint8_t)u_rand(r);
    ts->minute = (uint8_t)u_rand(r);
    ts->second = (uint8_t)u_rand(r);
    ts->res7 = (uint8_t)u_rand(r);
    ts->nsec = (uint32_t)u_rand(r);
    ts->offset = (int16_t)u_rand(r);
    ts->res14 = (uint16_t)u_rand(r);
}

static void ts_eq(const struct lanyfs_ts *a, const struct lanyfs_ts *b)
{
    U_EQ(a->year, b->year);
    U_EQ(a->month, b->month);
    U_EQ(a->day, b->day);
    U_EQ(a->hour, b->hour);
    U_EQ(a->minute, b->minute);
    U_EQ(a->second, b->second);
    U_EQ(a->res7, b->res7);
    U_EQ(a->nsec, b->nsec);
    ck_assert_int_eq(a->offset, b->offset);
    U_EQ(a->res14, b->res14);
}

/* The 16 raw bytes at p hold ts (SPEC-§4 offsets). */
static void ts_raw_eq(const uint8_t *p, const struct lanyfs_ts *ts)
{
    U_EQ(le(p + 0, 2), ts->year);
    U_EQ(p[2], ts->month);
    U_EQ(p[3], ts->day);
    U_EQ(p[4], ts->hour);
    U_EQ(p[5], ts->minute);
    U_EQ(p[6], ts->second);
    U_EQ(p[7], ts->res7);
    U_EQ(le(p + 8, 4), ts->nsec);
    U_EQ(le(p + 12, 2), (uint16_t)ts->offset);
    U_EQ(le(p + 14, 2), ts->res14);
}

/* ---- endian ----------------------------------------------------------- */

START_TEST(test_endian_known_bytes)
{
    uint8_t b[8];
    lanyfs_put16(b, 0x1122);
    ck_assert(b[0] == 0x22 && b[1] == 0x11);
    lanyfs_put32(b, 0x11223344);
    ck_assert(b[0] == 0x44 && b[1] == 0x33 && b[2] == 0x22 && b[3] == 0x11);
    lanyfs_put64(b, 0x0102030405060708ull);
    for (int i = 0; i < 8; i++)
        U_EQ(b[i], 8 - i);
    U_EQ(lanyfs_get64(b), 0x0102030405060708ull);
    U_EQ(lanyfs_get32(b), 0x05060708u);
    U_EQ(lanyfs_get16(b), 0x0708u);
    memset(b, 0xFF, sizeof(b));
    U_EQ(lanyfs_get64(b), UINT64_MAX);
    U_EQ(lanyfs_get32(b), UINT32_MAX);
    U_EQ(lanyfs_get16(b), UINT16_MAX);

    struct u_rng r = {1};
    for (int i = 0; i < 1000; i++) {
        uint64_t v = u_rand(&r);
        lanyfs_put64(b, v);
        U_EQ(le(b, 8), v);
        U_EQ(lanyfs_get64(b), v);
        lanyfs_put32(b, (uint32_t)v);
        U_EQ(le(b, 4), (uint32_t)v);
        lanyfs_put16(b, (uint16_t)v);
        U_EQ(le(b, 2), (uint16_t)v);
    }
}
END_TEST

START_TEST(test_addr_max)
{
    U_EQ(lanyfs_addr_max(1), 0xFF);
    U_EQ(lanyfs_addr_max(2), 0xFFFF);
    U_EQ(lanyfs_addr_max(3), 0xFFFFFF);
    U_EQ(lanyfs_addr_max(4), 0xFFFFFFFFull);
    U_EQ(lanyfs_addr_max(7), 0x00FFFFFFFFFFFFFFull);
    U_EQ(lanyfs_addr_max(8), UINT64_MAX);
    for (unsigned al = 1; al <= 8; al++) {
        uint8_t b[16];
        memset(b, 0xFF, sizeof(b));
        /* Zero extension: only al bytes are read, whatever follows. */
        U_EQ(lanyfs_get_addr(b, al), lanyfs_addr_max(al));
        memset(b, 0, sizeof(b));
        lanyfs_put_addr(b, al, UINT64_MAX);
        for (unsigned i = 0; i < sizeof(b); i++)
            U_EQ(b[i], i < al ? 0xFF : 0x00);
    }
}
END_TEST

/* ---- superblock --------------------------------------------------------- */

static void rand_super(struct u_rng *r, struct lanyfs_super *sb, unsigned bits, unsigned al)
{
    memset(sb, 0, sizeof(*sb));
    sb->type = (uint8_t)u_rand(r);
    sb->res1 = (uint8_t)u_rand(r);
    sb->wrcnt = (uint16_t)u_rand(r);
    sb->magic = (uint32_t)u_rand(r);
    sb->major = (uint8_t)u_rand(r);
    sb->minor = (uint8_t)u_rand(r);
    sb->blockbits = (uint8_t)bits;
    sb->addrlen = (uint8_t)al;
    for (int i = 0; i < 4; i++)
        sb->res_odd[i] = (uint8_t)u_rand(r);
    sb->rootdir = u_rand(r);
    sb->blocks = u_rand(r);
    sb->freehead = u_rand(r);
    sb->freetail = u_rand(r);
    sb->freeblocks = u_rand(r);
    rand_ts(r, &sb->created);
    rand_ts(r, &sb->updated);
    rand_ts(r, &sb->checked);
    sb->badblocks = u_rand(r);
    u_fill(r, sb->res112, sizeof(sb->res112));
    u_fill(r, sb->label, sizeof(sb->label));
}

static void super_eq(const struct lanyfs_super *a, const struct lanyfs_super *b)
{
    U_EQ(a->type, b->type);
    U_EQ(a->res1, b->res1);
    U_EQ(a->wrcnt, b->wrcnt);
    U_EQ(a->magic, b->magic);
    U_EQ(a->major, b->major);
    U_EQ(a->minor, b->minor);
    U_EQ(a->blockbits, b->blockbits);
    U_EQ(a->addrlen, b->addrlen);
    for (int i = 0; i < 4; i++)
        U_EQ(a->res_odd[i], b->res_odd[i]);
    U_EQ(a->rootdir, b->rootdir);
    U_EQ(a->blocks, b->blocks);
    U_EQ(a->freehead, b->freehead);
    U_EQ(a->freetail, b->freetail);
    U_EQ(a->freeblocks, b->freeblocks);
    ts_eq(&a->created, &b->created);
    ts_eq(&a->updated, &b->updated);
    ts_eq(&a->checked, &b->checked);
    U_EQ(a->badblocks, b->badblocks);
    U_MEMEQ(a->res112, b->res112, sizeof(a->res112));
    U_MEMEQ(a->label, b->label, sizeof(a->label));
}

START_TEST(test_super_roundtrip)
{
    struct u_rng r = {0x5B};
    uint8_t blk[LANYFS_BLOCKSIZE_MAX], sentinel[LANYFS_BLOCKSIZE_MAX];
    U_FOR_GEOMETRIES(bits, al)
    {
        uint32_t bs = 1u << bits;
        for (int it = 0; it < ITER; it++) {
            struct lanyfs_super sb, back;
            rand_super(&r, &sb, bits, al);
            u_fill(&r, sentinel, bs);
            memcpy(blk, sentinel, bs);
            lanyfs_super_encode(&sb, blk);
            /* Every field at its SPEC-§3 offset. */
            U_EQ(blk[0], sb.type);
            U_EQ(blk[1], sb.res1);
            U_EQ(le(blk + 2, 2), sb.wrcnt);
            U_EQ(le(blk + 4, 4), sb.magic);
            U_EQ(blk[8], sb.major);
            U_EQ(blk[9], sb.res_odd[0]);
            U_EQ(blk[10], sb.minor);
            U_EQ(blk[11], sb.res_odd[1]);
            U_EQ(blk[12], bits);
            U_EQ(blk[13], sb.res_odd[2]);
            U_EQ(blk[14], al);
            U_EQ(blk[15], sb.res_odd[3]);
            U_EQ(le(blk + 16, 8), sb.rootdir);
            U_EQ(le(blk + 24, 8), sb.blocks);
            U_EQ(le(blk + 32, 8), sb.freehead);
            U_EQ(le(blk + 40, 8), sb.freetail);
            U_EQ(le(blk + 48, 8), sb.freeblocks);
            ts_raw_eq(blk + 56, &sb.created);
            ts_raw_eq(blk + 72, &sb.updated);
            ts_raw_eq(blk + 88, &sb.checked);
            U_EQ(le(blk + 104, 8), sb.badblocks);
            U_MEMEQ(blk + 112, sb.res112, 8);
            U_MEMEQ(blk + 120, sb.label, 256);
            /* Bytes past the 376 used ones are untouched. */
            U_MEMEQ(blk + LANYFS_SB_USED, sentinel + LANYFS_SB_USED,
                             bs - LANYFS_SB_USED);
            lanyfs_super_decode(&back, blk);
            super_eq(&sb, &back);
        }
    }
}
END_TEST

START_TEST(test_super_reencode_random)
{
    struct u_rng r = {0x5C};
    uint8_t orig[LANYFS_BLOCKSIZE_MAX], copy[LANYFS_BLOCKSIZE_MAX], other[LANYFS_BLOCKSIZE_MAX];
    U_FOR_GEOMETRIES(bits, al)
    {
        (void)al;
        uint32_t bs = 1u << bits;
        for (int it = 0; it < ITER; it++) {
            u_fill(&r, orig, bs);
            u_fill(&r, other, bs);
            memcpy(copy, other, bs);
            struct lanyfs_super sb;
            lanyfs_super_decode(&sb, orig);
            lanyfs_super_encode(&sb, copy);
            /* The decoded fields cover all 376 bytes, reserved ones included. */
            U_MEMEQ(copy, orig, LANYFS_SB_USED);
            U_MEMEQ(copy + LANYFS_SB_USED, other + LANYFS_SB_USED,
                             bs - LANYFS_SB_USED);
        }
    }
}
END_TEST

START_TEST(test_super_label)
{
    struct lanyfs_super sb;
    char buf[300];
    memset(&sb, 0, sizeof(sb));
    memcpy(sb.label, "tiny8", 5);
    lanyfs_super_label(&sb, buf, sizeof(buf));
    ck_assert_str_eq(buf, "tiny8");
    /* A 256-byte label has no NUL (SPEC-§9.16): all 256 bytes, then ours. */
    memset(sb.label, 'x', sizeof(sb.label));
    lanyfs_super_label(&sb, buf, 257);
    U_EQ(strlen(buf), 256);
    lanyfs_super_label(&sb, buf, 10);
    ck_assert_str_eq(buf, "xxxxxxxxx");
}
END_TEST

/* ---- timestamps --------------------------------------------------------- */

START_TEST(test_ts_roundtrip_raw)
{
    struct u_rng r = {0x75};
    for (int it = 0; it < 5000; it++) {
        uint8_t raw[16], out[16];
        struct lanyfs_ts ts, back;
        u_fill(&r, raw, sizeof(raw));
        lanyfs_ts_decode(&ts, raw);
        ts_raw_eq(raw, &ts);
        memset(out, 0xA5, sizeof(out));
        lanyfs_ts_encode(&ts, out);
        U_MEMEQ(out, raw, 16);
        rand_ts(&r, &ts);
        lanyfs_ts_encode(&ts, out);
        ts_raw_eq(out, &ts);
        lanyfs_ts_decode(&back, out);
        ts_eq(&ts, &back);
    }
}
END_TEST

/* ---- entries ------------------------------------------------------------ */

static void rand_entry(struct u_rng *r, struct lanyfs_entry *e)
{
    memset(e, 0, sizeof(*e));
    e->type = u_below(r, 2) ? LANYFS_TYPE_DIR : LANYFS_TYPE_FILE;
    e->res1 = (uint8_t)u_rand(r);
    e->wrcnt = (uint16_t)u_rand(r);
    e->left = u_rand(r);
    e->right = u_rand(r);
    e->subtree = u_rand(r);
    e->size = u_rand(r);
    rand_ts(r, &e->created);
    rand_ts(r, &e->modified);
    e->attr = (uint16_t)u_rand(r);
    /* A name of random length with random bytes, or a full field without NUL. */
    size_t len = u_below(r, 257);
    for (size_t i = 0; i < len; i++)
        e->name[i] = (uint8_t)(1 + u_below(r, 255));
    e->name_len = len;
}

/* The byte ranges of an entry block that no decoded field covers. */
static bool entry_reserved(size_t i)
{
    return (i >= 4 && i < 8) || (i >= 40 && i < 56) || (i >= 88 && i < 102) ||
           i >= LANYFS_EN_USED;
}

START_TEST(test_entry_roundtrip)
{
    struct u_rng r = {0xE7};
    uint8_t blk[LANYFS_BLOCKSIZE_MAX], sentinel[LANYFS_BLOCKSIZE_MAX];
    U_FOR_GEOMETRIES(bits, al)
    {
        (void)al;
        uint32_t bs = 1u << bits;
        for (int it = 0; it < ITER; it++) {
            struct lanyfs_entry e, back;
            rand_entry(&r, &e);
            u_fill(&r, sentinel, bs);
            memcpy(blk, sentinel, bs);
            lanyfs_entry_encode(&e, blk);
            U_EQ(blk[0], e.type);
            U_EQ(blk[1], e.res1);
            U_EQ(le(blk + 2, 2), e.wrcnt);
            U_EQ(le(blk + 8, 8), e.left);
            U_EQ(le(blk + 16, 8), e.right);
            U_EQ(le(blk + 24, 8), e.subtree);
            U_EQ(le(blk + 32, 8), e.size);
            ts_raw_eq(blk + 56, &e.created);
            ts_raw_eq(blk + 72, &e.modified);
            U_EQ(le(blk + 102, 2), e.attr);
            U_MEMEQ(blk + 104, e.name, 256);
            for (size_t i = 0; i < bs; i++)
                if (entry_reserved(i))
                    U_ASSERT(blk[i] == sentinel[i], "byte %zu of a %u-byte block changed",
                                  i, bs);
            lanyfs_entry_decode(&back, blk);
            U_EQ(back.type, e.type);
            U_EQ(back.res1, e.res1);
            U_EQ(back.wrcnt, e.wrcnt);
            U_EQ(back.left, e.left);
            U_EQ(back.right, e.right);
            U_EQ(back.subtree, e.subtree);
            U_EQ(back.size, e.size);
            ts_eq(&back.created, &e.created);
            ts_eq(&back.modified, &e.modified);
            U_EQ(back.attr, e.attr);
            U_MEMEQ(back.name, e.name, 256);
            U_EQ(back.name_len, e.name_len);
            ck_assert(lanyfs_entry_is_dir(&back) == (e.type == LANYFS_TYPE_DIR));
            ck_assert(lanyfs_entry_is_file(&back) == (e.type == LANYFS_TYPE_FILE));
        }
    }
}
END_TEST

START_TEST(test_entry_reencode_random)
{
    struct u_rng r = {0xE8};
    uint8_t orig[LANYFS_BLOCKSIZE_MAX], copy[LANYFS_BLOCKSIZE_MAX], other[LANYFS_BLOCKSIZE_MAX];
    for (unsigned bits = 9; bits <= 12; bits++) {
        uint32_t bs = 1u << bits;
        for (int it = 0; it < 4 * ITER; it++) {
            u_fill(&r, orig, bs);
            u_fill(&r, other, bs);
            memcpy(copy, other, bs);
            struct lanyfs_entry e;
            lanyfs_entry_decode(&e, orig);
            lanyfs_entry_encode(&e, copy);
            for (size_t i = 0; i < bs; i++)
                U_ASSERT(copy[i] == (entry_reserved(i) ? other[i] : orig[i]),
                              "byte %zu of a %u-byte entry block", i, bs);
        }
    }
}
END_TEST

START_TEST(test_entry_names)
{
    struct lanyfs_entry e;
    memset(&e, 0, sizeof(e));
    char name[300];
    memset(name, 'n', sizeof(name));
    lanyfs_entry_set_name(&e, name, 300);
    U_EQ(e.name_len, 255);
    U_EQ(e.name[254], 'n');
    U_EQ(e.name[255], 0);
    ck_assert(lanyfs_entry_name_ok(&e));
    lanyfs_entry_set_name(&e, "abc", 3);
    U_EQ(e.name_len, 3);
    U_EQ(e.name[3], 0);
    U_EQ(e.name[4], 0);
    ck_assert(lanyfs_entry_name_ok(&e));
    lanyfs_entry_set_name(&e, "a/b", 3);
    ck_assert(!lanyfs_entry_name_ok(&e));
    lanyfs_entry_set_name(&e, "", 0);
    ck_assert(!lanyfs_entry_name_ok(&e));
    /* A name field without NUL (256 bytes) is not a valid name. */
    uint8_t blk[512] = {0};
    memset(blk + LANYFS_EN_NAME, 'z', 256);
    lanyfs_entry_decode(&e, blk);
    U_EQ(e.name_len, 256);
    ck_assert(!lanyfs_entry_name_ok(&e));
    /* Bytes >= 0x80 are fine in a name. */
    lanyfs_entry_set_name(&e, "\xc3\xa9t\xe9", 4);
    ck_assert(lanyfs_entry_name_ok(&e));
}
END_TEST

START_TEST(test_name_cmp)
{
    uint8_t node[256] = "m";
    /* SPEC-§5: < 0 means x is greater and goes LEFT. */
    ck_assert_int_lt(lanyfs_name_cmp(node, (const uint8_t *)"z", 1), 0);
    ck_assert_int_gt(lanyfs_name_cmp(node, (const uint8_t *)"a", 1), 0);
    ck_assert_int_eq(lanyfs_name_cmp(node, (const uint8_t *)"m", 1), 0);
    ck_assert_int_lt(lanyfs_name_cmp(node, (const uint8_t *)"mm", 2), 0);
    /* xlen ends x: "mz" cut to 1 byte is "m". */
    ck_assert_int_eq(lanyfs_name_cmp(node, (const uint8_t *)"mz", 1), 0);
    /* Unsigned bytes: 0x80 is greater than 0x7f. */
    uint8_t n7f[256] = {0x7f};
    const uint8_t x80[] = {0x80};
    ck_assert_int_lt(lanyfs_name_cmp(n7f, x80, 1), 0);
    uint8_t nff[256] = {0xff};
    ck_assert_int_gt(lanyfs_name_cmp(nff, x80, 1), 0);
    /* Prefixes: "ab" < "abc", so "abc" goes left of "ab". */
    uint8_t nab[256] = "ab";
    ck_assert_int_lt(lanyfs_name_cmp(nab, (const uint8_t *)"abc", 3), 0);
    uint8_t nabc[256] = "abc";
    ck_assert_int_gt(lanyfs_name_cmp(nabc, (const uint8_t *)"ab", 2), 0);
    /* Random names against memcmp semantics. */
    struct u_rng r = {0xC0};
    for (int it = 0; it < 20000; it++) {
        uint8_t a[256] = {0}, b[256] = {0};
        size_t la = 1 + u_below(&r, 6), lb = 1 + u_below(&r, 6);
        for (size_t i = 0; i < la; i++)
            a[i] = (uint8_t)(u_below(&r, 4) ? 0x61 + u_below(&r, 3) : 1 + u_below(&r, 255));
        for (size_t i = 0; i < lb; i++)
            b[i] = (uint8_t)(u_below(&r, 4) ? 0x61 + u_below(&r, 3) : 1 + u_below(&r, 255));
        int want = memcmp(a, b, 256);
        int got = lanyfs_name_cmp(a, b, lb);
        U_ASSERT((want < 0) == (got < 0) && (want > 0) == (got > 0),
                      "name_cmp disagrees with memcmp");
    }
}
END_TEST

/* ---- chain and extender blocks ----------------------------------------- */

START_TEST(test_chain_roundtrip)
{
    struct u_rng r = {0xC4};
    uint8_t blk[LANYFS_BLOCKSIZE_MAX], sentinel[LANYFS_BLOCKSIZE_MAX];
    static uint64_t vals[LANYFS_BLOCKSIZE_MAX];
    U_FOR_GEOMETRIES(bits, al)
    {
        struct lanyfs_geom g;
        ck_assert_int_eq(lanyfs_geom_init(&g, bits, al, 1000, NULL), LANYFS_OK);
        uint32_t bs = g.blocksize;
        for (int it = 0; it < ITER; it++) {
            struct lanyfs_chain_hdr h = {(uint8_t)u_rand(&r), (uint16_t)u_rand(&r), u_rand(&r)},
                                    back;
            u_fill(&r, sentinel, bs);
            memcpy(blk, sentinel, bs);
            lanyfs_chain_encode(&h, blk);
            U_EQ(blk[0], h.type);
            U_EQ(le(blk + 2, 2), h.wrcnt);
            U_EQ(le(blk + 8, 8), h.next);
            U_EQ(blk[1], sentinel[1]);
            U_MEMEQ(blk + 4, sentinel + 4, 4);
            U_MEMEQ(blk + 16, sentinel + 16, bs - 16);
            lanyfs_chain_decode(&back, blk);
            U_EQ(back.type, h.type);
            U_EQ(back.wrcnt, h.wrcnt);
            U_EQ(back.next, h.next);

            for (uint32_t i = 0; i < g.chainmax; i++) {
                vals[i] = u_rand(&r) & lanyfs_addr_max(al);
                lanyfs_chain_set_slot(&g, blk, i, vals[i]);
            }
            for (uint32_t i = 0; i < g.chainmax; i++) {
                U_EQ(lanyfs_chain_slot(&g, blk, i), vals[i]);
                U_EQ(le(blk + 16 + (size_t)i * al, al), vals[i]);
            }
            /* The header and the bytes after the last slot are untouched. */
            U_EQ(le(blk + 8, 8), h.next);
            size_t end = 16 + (size_t)g.chainmax * al;
            U_MEMEQ(blk + end, sentinel + end, bs - end);
            /* An index past chainmax reads 0 and writes nothing. */
            memcpy(sentinel, blk, bs);
            lanyfs_chain_set_slot(&g, blk, g.chainmax, UINT64_MAX);
            lanyfs_chain_set_slot(&g, blk, UINT32_MAX, UINT64_MAX);
            U_MEMEQ(blk, sentinel, bs);
            U_EQ(lanyfs_chain_slot(&g, blk, g.chainmax), 0);
            U_EQ(lanyfs_chain_slot(&g, blk, UINT32_MAX), 0);
        }
    }
}
END_TEST

START_TEST(test_ext_roundtrip)
{
    struct u_rng r = {0xE4};
    uint8_t blk[LANYFS_BLOCKSIZE_MAX], sentinel[LANYFS_BLOCKSIZE_MAX];
    static uint64_t vals[LANYFS_BLOCKSIZE_MAX];
    U_FOR_GEOMETRIES(bits, al)
    {
        struct lanyfs_geom g;
        ck_assert_int_eq(lanyfs_geom_init(&g, bits, al, 1000, NULL), LANYFS_OK);
        uint32_t bs = g.blocksize;
        for (int it = 0; it < ITER; it++) {
            struct lanyfs_ext_hdr h = {(uint8_t)u_rand(&r), (uint16_t)u_rand(&r),
                                       (uint8_t)u_rand(&r)},
                                  back;
            u_fill(&r, sentinel, bs);
            memcpy(blk, sentinel, bs);
            lanyfs_ext_encode(&h, blk);
            U_EQ(blk[0], h.type);
            U_EQ(le(blk + 2, 2), h.wrcnt);
            U_EQ(blk[4], h.level);
            U_EQ(blk[1], sentinel[1]);
            U_MEMEQ(blk + 5, sentinel + 5, bs - 5);
            lanyfs_ext_decode(&back, blk);
            U_EQ(back.type, h.type);
            U_EQ(back.wrcnt, h.wrcnt);
            U_EQ(back.level, h.level);

            for (uint32_t i = 0; i < g.extmax; i++) {
                vals[i] = u_rand(&r) & lanyfs_addr_max(al);
                lanyfs_ext_set_slot(&g, blk, i, vals[i]);
            }
            for (uint32_t i = 0; i < g.extmax; i++) {
                U_EQ(lanyfs_ext_slot(&g, blk, i), vals[i]);
                U_EQ(le(blk + 5 + (size_t)i * al, al), vals[i]);
            }
            U_EQ(blk[4], h.level);
            size_t end = 5 + (size_t)g.extmax * al;
            U_MEMEQ(blk + end, sentinel + end, bs - end);
            memcpy(sentinel, blk, bs);
            lanyfs_ext_set_slot(&g, blk, g.extmax, UINT64_MAX);
            lanyfs_ext_set_slot(&g, blk, UINT32_MAX, UINT64_MAX);
            U_MEMEQ(blk, sentinel, bs);
            U_EQ(lanyfs_ext_slot(&g, blk, g.extmax), 0);
        }
    }
}
END_TEST

START_TEST(test_chain_ext_reencode_random)
{
    struct u_rng r = {0xCE};
    uint8_t orig[LANYFS_BLOCKSIZE_MAX], copy[LANYFS_BLOCKSIZE_MAX], other[LANYFS_BLOCKSIZE_MAX];
    U_FOR_GEOMETRIES(bits, al)
    {
        struct lanyfs_geom g;
        ck_assert_int_eq(lanyfs_geom_init(&g, bits, al, 1000, NULL), LANYFS_OK);
        uint32_t bs = g.blocksize;
        for (int it = 0; it < ITER / 2; it++) {
            /* Chain: header fields and every slot copied; nothing else. */
            u_fill(&r, orig, bs);
            u_fill(&r, other, bs);
            memcpy(copy, other, bs);
            struct lanyfs_chain_hdr ch;
            lanyfs_chain_decode(&ch, orig);
            lanyfs_chain_encode(&ch, copy);
            for (uint32_t i = 0; i < g.chainmax; i++)
                lanyfs_chain_set_slot(&g, copy, i, lanyfs_chain_slot(&g, orig, i));
            size_t end = 16 + (size_t)g.chainmax * al;
            for (size_t i = 0; i < bs; i++) {
                bool covered = i == 0 || i == 2 || i == 3 || (i >= 8 && i < end);
                U_ASSERT(copy[i] == (covered ? orig[i] : other[i]),
                              "chain byte %zu (block %u, addrlen %u)", i, bs, al);
            }
            /* Extender likewise. */
            memcpy(copy, other, bs);
            struct lanyfs_ext_hdr eh;
            lanyfs_ext_decode(&eh, orig);
            lanyfs_ext_encode(&eh, copy);
            for (uint32_t i = 0; i < g.extmax; i++)
                lanyfs_ext_set_slot(&g, copy, i, lanyfs_ext_slot(&g, orig, i));
            end = 5 + (size_t)g.extmax * al;
            for (size_t i = 0; i < bs; i++) {
                bool covered = i == 0 || (i >= 2 && i < end);
                U_ASSERT(copy[i] == (covered ? orig[i] : other[i]),
                              "extender byte %zu (block %u, addrlen %u)", i, bs, al);
            }
        }
    }
}
END_TEST

/* Slot i set to the largest address, or to 0 among full neighbours. */
START_TEST(test_slot_boundaries)
{
    uint8_t blk[LANYFS_BLOCKSIZE_MAX];
    U_FOR_GEOMETRIES(bits, al)
    {
        struct lanyfs_geom g;
        ck_assert_int_eq(lanyfs_geom_init(&g, bits, al, 1000, NULL), LANYFS_OK);
        uint64_t max = lanyfs_addr_max(al);
        const uint32_t picks[] = {0, 1, g.chainmax / 2, g.chainmax - 2, g.chainmax - 1};
        for (size_t p = 0; p < sizeof(picks) / sizeof(picks[0]); p++) {
            uint32_t i = picks[p];
            size_t off = 16 + (size_t)i * al;
            memset(blk, 0, g.blocksize);
            lanyfs_chain_set_slot(&g, blk, i, max);
            for (size_t k = 0; k < g.blocksize; k++)
                U_EQ(blk[k], k >= off && k < off + al ? 0xFF : 0);
            U_EQ(lanyfs_chain_slot(&g, blk, i), max);
            if (i > 0)
                U_EQ(lanyfs_chain_slot(&g, blk, i - 1), 0);
            if (i + 1 < g.chainmax)
                U_EQ(lanyfs_chain_slot(&g, blk, i + 1), 0);
            /* A value wider than addrlen: low bytes only, no bleeding. */
            memset(blk, 0, g.blocksize);
            lanyfs_chain_set_slot(&g, blk, i, UINT64_MAX);
            for (size_t k = 0; k < g.blocksize; k++)
                U_EQ(blk[k], k >= off && k < off + al ? 0xFF : 0);
            /* 0 among all-ones neighbours, which still read as max (zero-extended). */
            memset(blk, 0xFF, g.blocksize);
            lanyfs_chain_set_slot(&g, blk, i, 0);
            U_EQ(lanyfs_chain_slot(&g, blk, i), 0);
            if (i > 0)
                U_EQ(lanyfs_chain_slot(&g, blk, i - 1), max);
            if (i + 1 < g.chainmax)
                U_EQ(lanyfs_chain_slot(&g, blk, i + 1), max);
            for (size_t k = 0; k < g.blocksize; k++)
                U_EQ(blk[k], k >= off && k < off + al ? 0 : 0xFF);
        }
        const uint32_t epicks[] = {0, 1, g.extmax / 2, g.extmax - 2, g.extmax - 1};
        for (size_t p = 0; p < sizeof(epicks) / sizeof(epicks[0]); p++) {
            uint32_t i = epicks[p];
            size_t off = 5 + (size_t)i * al;
            memset(blk, 0, g.blocksize);
            lanyfs_ext_set_slot(&g, blk, i, UINT64_MAX);
            for (size_t k = 0; k < g.blocksize; k++)
                U_EQ(blk[k], k >= off && k < off + al ? 0xFF : 0);
            U_EQ(lanyfs_ext_slot(&g, blk, i), max);
            memset(blk, 0xFF, g.blocksize);
            lanyfs_ext_set_slot(&g, blk, i, 0);
            U_EQ(lanyfs_ext_slot(&g, blk, i), 0);
            if (i > 0)
                U_EQ(lanyfs_ext_slot(&g, blk, i - 1), max);
            if (i + 1 < g.extmax)
                U_EQ(lanyfs_ext_slot(&g, blk, i + 1), max);
        }
    }
}
END_TEST

/* ---- geometry ------------------------------------------------------------ */

/* --geometry's value: BS:AL everywhere, BS alone only where asked for. */
START_TEST(test_geom_parse)
{
    unsigned bits = 99, al = 99;
    ck_assert(lanyfs_geom_parse("2048:2", &bits, &al));
    U_EQ(bits, 11);
    U_EQ(al, 2);
    ck_assert(lanyfs_geom_parse_bs("4096:8", &bits, &al));
    U_EQ(bits, 12);
    U_EQ(al, 8);
    ck_assert(lanyfs_geom_parse_bs("512", &bits, &al));
    U_EQ(bits, 9);
    U_EQ(al, 0);
    bits = al = 99;
    static const char *const strict_bad[] = {"512", "512:", ":4", "512:0", "512:9", "1000:4",
                                             "8192:4", "256:4", "512:4x", "+512:4", "",
                                             "99999999999999999999:4"};
    for (size_t i = 0; i < sizeof(strict_bad) / sizeof(*strict_bad); i++)
        ck_assert_msg(!lanyfs_geom_parse(strict_bad[i], &bits, &al), "%s", strict_bad[i]);
    static const char *const loose_bad[] = {"512:", ":4", "512:0", "1000", "8192", "4096 ", "",
                                            "0"};
    for (size_t i = 0; i < sizeof(loose_bad) / sizeof(*loose_bad); i++)
        ck_assert_msg(!lanyfs_geom_parse_bs(loose_bad[i], &bits, &al), "%s", loose_bad[i]);
    ck_assert(!lanyfs_geom_parse(NULL, &bits, &al));
    ck_assert(!lanyfs_geom_parse_bs(NULL, &bits, &al));
    /* Nothing written on a failure. */
    U_EQ(bits, 99);
    U_EQ(al, 99);
}
END_TEST

START_TEST(test_geom_maxima)
{
    U_FOR_GEOMETRIES(bits, al)
    {
        struct lanyfs_geom g;
        struct lanyfs_error err;
        ck_assert_int_eq(lanyfs_geom_init(&g, bits, al, 12345, &err), LANYFS_OK);
        uint32_t bs = 1u << bits;
        U_EQ(g.blockbits, bits);
        U_EQ(g.blocksize, bs);
        U_EQ(g.addrlen, al);
        U_EQ(g.blocks, 12345);
        U_EQ(g.chainmax, (bs - 16) / al);
        U_EQ(g.extmax, (bs - 5) / al);
        /* The slots fit and one more would not. */
        ck_assert_uint_le(16 + (uint64_t)g.chainmax * al, bs);
        ck_assert_uint_gt(16 + (uint64_t)(g.chainmax + 1) * al, bs);
        ck_assert_uint_le(5 + (uint64_t)g.extmax * al, bs);
        ck_assert_uint_gt(5 + (uint64_t)(g.extmax + 1) * al, bs);
    }
    struct lanyfs_geom g;
    lanyfs_geom_init(&g, 9, 8, 0, NULL);
    U_EQ(g.chainmax, 62);
    U_EQ(g.extmax, 63);
    lanyfs_geom_init(&g, 12, 1, 0, NULL);
    U_EQ(g.chainmax, 4080);
    U_EQ(g.extmax, 4091);
    lanyfs_geom_init(&g, 10, 3, 0, NULL);
    U_EQ(g.chainmax, 336);
    U_EQ(g.extmax, 339);
    lanyfs_geom_init(&g, 11, 7, 0, NULL);
    U_EQ(g.chainmax, 290);
    U_EQ(g.extmax, 291);
}
END_TEST

START_TEST(test_geom_init_rejects)
{
    struct lanyfs_geom g;
    struct lanyfs_error err;
    const unsigned bad_bits[] = {0, 8, 13, 255};
    for (size_t i = 0; i < 4; i++) {
        lanyfs_error_clear(&err);
        ck_assert_int_eq(lanyfs_geom_init(&g, bad_bits[i], 4, 100, &err), LANYFS_E_GEOMETRY);
        ck_assert_int_eq(err.code, LANYFS_E_GEOMETRY);
        ck_assert(err.msg[0] != '\0');
    }
    const unsigned bad_al[] = {0, 9, 16, 255};
    for (size_t i = 0; i < 4; i++) {
        lanyfs_error_clear(&err);
        ck_assert_int_eq(lanyfs_geom_init(&g, 9, bad_al[i], 100, &err), LANYFS_E_GEOMETRY);
        ck_assert_int_eq(err.code, LANYFS_E_GEOMETRY);
    }
    ck_assert_int_eq(lanyfs_geom_init(&g, 13, 1, 100, NULL), LANYFS_E_GEOMETRY);
}
END_TEST

typedef unsigned __int128 u128;

static uint64_t sat(u128 v)
{
    return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

/* extmax^n by naive multiplication in 128 bits, saturated. */
static uint64_t naive_pow(uint64_t b, unsigned n)
{
    u128 v = 1;
    for (unsigned i = 0; i < n; i++) {
        v *= b;
        if (v > UINT64_MAX)
            return UINT64_MAX;
    }
    return (uint64_t)v;
}

START_TEST(test_geom_capacity)
{
    U_FOR_GEOMETRIES(bits, al)
    {
        struct lanyfs_geom g;
        lanyfs_geom_init(&g, bits, al, 0, NULL);
        uint64_t prev = 0;
        bool saturated = false;
        for (unsigned level = 0; level <= 70; level++) {
            uint64_t cap = lanyfs_geom_tree_capacity(&g, level);
            U_EQ(cap, naive_pow(g.extmax, level + 1));
            U_EQ(lanyfs_geom_pow(&g, level), naive_pow(g.extmax, level));
            ck_assert_uint_ge(cap, prev);
            prev = cap;
            if (cap == UINT64_MAX)
                saturated = true;
        }
        U_ASSERT(saturated, "capacity never saturates for %u/%u", g.blocksize, al);
        U_EQ(lanyfs_geom_tree_capacity(&g, 0), g.extmax);
        U_EQ(lanyfs_geom_tree_capacity(&g, 1), (uint64_t)g.extmax * g.extmax);
        U_EQ(lanyfs_geom_pow(&g, 0), 1);
        U_EQ(lanyfs_geom_tree_capacity(&g, UINT32_MAX), UINT64_MAX);

        /* Smallest level that maps n blocks. */
        struct u_rng r = {bits * 16 + al};
        uint64_t e = g.extmax;
        uint64_t ns[12] = {0, 1, e - 1, e, e + 1, e * e, e * e + 1, UINT64_MAX, 0, 0, 0, 0};
        for (int i = 8; i < 12; i++)
            ns[i] = u_rand(&r) >> u_below(&r, 60);
        for (int i = 0; i < 12; i++) {
            unsigned l = lanyfs_geom_level_for(&g, ns[i]);
            ck_assert_uint_ge(naive_pow(e, l + 1), ns[i]);
            if (l > 0)
                ck_assert_uint_lt(naive_pow(e, l), ns[i]);
        }
        U_EQ(lanyfs_geom_level_for(&g, e), 0);
        U_EQ(lanyfs_geom_level_for(&g, e + 1), 1);
        U_EQ(lanyfs_geom_level_for(&g, e * e), 1);
        U_EQ(lanyfs_geom_level_for(&g, e * e + 1), 2);
    }
}
END_TEST

START_TEST(test_geom_blocks_for_size)
{
    struct u_rng r = {0xB5};
    for (unsigned bits = 9; bits <= 12; bits++) {
        struct lanyfs_geom g;
        lanyfs_geom_init(&g, bits, 4, 0, NULL);
        uint64_t bs = g.blocksize;
        U_EQ(lanyfs_geom_blocks_for_size(&g, 0), 0);
        U_EQ(lanyfs_geom_blocks_for_size(&g, 1), 1);
        U_EQ(lanyfs_geom_blocks_for_size(&g, bs - 1), 1);
        U_EQ(lanyfs_geom_blocks_for_size(&g, bs), 1);
        U_EQ(lanyfs_geom_blocks_for_size(&g, bs + 1), 2);
        U_EQ(lanyfs_geom_blocks_for_size(&g, 2 * bs), 2);
        U_EQ(lanyfs_geom_blocks_for_size(&g, 0xffffffffull),
                          (0xffffffffull + bs - 1) / bs);
        /* No overflow at the top: ceil((2^64 - 1) / bs) = 2^64 / bs. */
        U_EQ(lanyfs_geom_blocks_for_size(&g, UINT64_MAX), (uint64_t)1 << (64 - bits));
        U_EQ(lanyfs_geom_blocks_for_size(&g, UINT64_MAX - bs + 1),
                          ((uint64_t)1 << (64 - bits)) - 1);
        for (int i = 0; i < 10000; i++) {
            uint64_t s = u_rand(&r) >> u_below(&r, 64);
            u128 want = ((u128)s + bs - 1) / bs;
            U_EQ(lanyfs_geom_blocks_for_size(&g, s), sat(want));
        }
    }
}
END_TEST

/* ---- errors ------------------------------------------------------------- */

START_TEST(test_errors)
{
    for (int c = 0; c < LANYFS_E_COUNT; c++) {
        const char *s = lanyfs_strerror((enum lanyfs_err)c);
        ck_assert_ptr_nonnull(s);
        ck_assert(s[0] != '\0');
        for (int d = 0; d < c; d++)
            ck_assert_str_ne(s, lanyfs_strerror((enum lanyfs_err)d));
    }
    ck_assert_int_eq(LANYFS_OK, 0);
    ck_assert_str_eq(lanyfs_strerror(LANYFS_E_COUNT), "unknown error");
    ck_assert_str_eq(lanyfs_strerror((enum lanyfs_err)-1), "unknown error");
    ck_assert_int_eq(lanyfs_fail(NULL, LANYFS_E_RANGE, 5, "x %d", 1), LANYFS_E_RANGE);

    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    ck_assert_int_eq(err.code, LANYFS_OK);
    U_EQ(err.block, LANYFS_NO_BLOCK);
    ck_assert_int_eq(lanyfs_fail(&err, LANYFS_E_CORRUPT, 42, "block %d is bad", 42),
                     LANYFS_E_CORRUPT);
    ck_assert_int_eq(err.code, LANYFS_E_CORRUPT);
    U_EQ(err.block, 42);
    ck_assert_str_eq(err.msg, "block 42 is bad");
    lanyfs_error_prefix(&err, "while reading %s", "/a/b");
    ck_assert_str_eq(err.msg, "while reading /a/b: block 42 is bad");
    ck_assert_int_eq(err.code, LANYFS_E_CORRUPT);
    /* Long prefixes are cut, never overflow, and stay terminated. */
    char longs[400];
    memset(longs, 'p', sizeof(longs) - 1);
    longs[sizeof(longs) - 1] = '\0';
    for (int i = 0; i < 5; i++)
        lanyfs_error_prefix(&err, "%s", longs);
    ck_assert_uint_le(strlen(err.msg), sizeof(err.msg) - 1);
    lanyfs_error_prefix(NULL, "nothing");
}
END_TEST

static Suite *codec_suite(void)
{
    Suite *s = suite_create("codec");
    TCase *tc = tcase_create("codec");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_endian_known_bytes);
    tcase_add_test(tc, test_addr_max);
    tcase_add_test(tc, test_super_roundtrip);
    tcase_add_test(tc, test_super_reencode_random);
    tcase_add_test(tc, test_super_label);
    tcase_add_test(tc, test_ts_roundtrip_raw);
    tcase_add_test(tc, test_entry_roundtrip);
    tcase_add_test(tc, test_entry_reencode_random);
    tcase_add_test(tc, test_entry_names);
    tcase_add_test(tc, test_name_cmp);
    tcase_add_test(tc, test_chain_roundtrip);
    tcase_add_test(tc, test_ext_roundtrip);
    tcase_add_test(tc, test_chain_ext_reencode_random);
    tcase_add_test(tc, test_slot_boundaries);
    tcase_add_test(tc, test_geom_parse);
    tcase_add_test(tc, test_geom_maxima);
    tcase_add_test(tc, test_geom_init_rejects);
    tcase_add_test(tc, test_geom_capacity);
    tcase_add_test(tc, test_geom_blocks_for_size);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(codec_suite)
